//! Tickets as protocol 025 accounts for them: the ticket balance table (`ticket_storage.ml`,
//! keyed by `ticket_balance_key.ml`'s hash), what a contract call changes in it
//! (`ticket_accounting.ml`: the tickets in the argument, the old and new storage and the emitted
//! operations, `ticket_scanner.ml`, `ticket_operations_diff.ml`, `ticket_token_map.ml`), the
//! table's growth paid as a storage burn (`adjust_storage_space`), and the `ticket_updates`
//! receipts (`ticket_receipt.ml`).
//!
//! Nothing here runs for a contract whose parameter and storage types hold no ticket and whose
//! operations carry none (`Ticket_scanner.type_has_tickets`).
//!
//! Not modelled: tickets inside big maps (`ticket_lazy_storage_diff.ml`, and the stored
//! contents of a big map passed in an argument): only the values a run holds in memory are
//! scanned.

use std::collections::BTreeMap;

use kestrel_crypto::{Destination, ScriptExprHash};
use kestrel_micheline::Node;
use kestrel_michelson::{InternalOperation, UnparsingMode, Value};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::gas::{alloc_mbytes_milli, read_access_milli, write_access_milli, GasMeter};
use super::{ApplyError, Fault};
use crate::crypto_fields::Contract;
use crate::field::Zarith;
use crate::internal::{MichelineExpr, TransactionDestination};
use crate::ledger::{Ledger, TicketTableBytes};
use crate::receipt::ticket::{TicketReceiptItem, TicketToken, TicketUpdate};

/// The length of a ticket balance's path, which its carbonated accesses are charged by:
/// `ticket_balance/table/<hex key>/data` (the key one name, `Path_encoding.Make_hex`).
pub const TABLE_PATH_LENGTH: u64 = 4;

/// What a new entry's key takes in the ticket table, bytes (`Ticket_storage.set_balance`'s
/// `cost_of_key`).
pub const TABLE_KEY_BYTES: i64 = 65;

/// A ticket token: its ticketer, its contents' type without annotations and its contents
/// unparsed as `Optimized_legacy` (`Ticket_token.ex_token`, what the balance key hashes).
#[derive(Debug, Clone)]
pub struct Token {
    /// The contract that created the ticket.
    pub ticketer: Destination,
    /// The contents' type.
    pub content_type: Node,
    /// The contents.
    pub content: Node,
}

impl Token {
    /// The token and amount of a ticket value; `None` for any other value.
    pub fn of_ticket(value: &Value) -> Option<(Token, BigInt)> {
        let Value::Ticket(ticket) = value else {
            return None;
        };
        let token = Token {
            ticketer: ticket.ticketer.destination.to_crypto(),
            content_type: ticket.content_type.to_node(),
            content: kestrel_michelson::normalize(&ticket.content, UnparsingMode::OptimizedLegacy),
        };
        Some((token, ticket.amount.to_bigint()))
    }

    /// The key of `owner`'s balance of this token in the table ([`balance_key`]).
    pub fn balance_key(&self, owner: &Destination) -> [u8; 32] {
        balance_key(&self.ticketer, &self.content_type, &self.content, owner)
    }

    /// The receipt's form of the token.
    fn receipt(&self) -> TicketToken<'static> {
        let encode = |node: &Node| {
            MichelineExpr(std::borrow::Cow::Owned(
                kestrel_micheline::binary::encode(node).unwrap_or_default(),
            ))
        };
        TicketToken {
            ticketer: Contract(self.ticketer),
            content_type: encode(&self.content_type),
            content: encode(&self.content),
        }
    }
}

/// The key of `owner`'s balance of a ticket in the table (`Ticket_balance_key.make`): the
/// `expr…` hash of the binary Micheline `{ ticketer ; content_type ; content ; owner }`, both
/// addresses as their 22 bytes, the type without annotations, the contents unparsed as
/// `Optimized_legacy` (binary pairs, bytes for addresses and keys).
pub fn balance_key(
    ticketer: &Destination,
    content_type: &Node,
    content: &Node,
    owner: &Destination,
) -> [u8; 32] {
    let node = Node::seq(vec![
        Node::bytes(ticketer.to_bytes().to_vec()),
        content_type.clone(),
        content.clone(),
        Node::bytes(owner.to_bytes().to_vec()),
    ]);
    // A type and contents from typed values encode; an unencodable caller's node hashes as
    // nothing, which no stored balance has.
    let bytes = kestrel_micheline::binary::encode(&node).unwrap_or_default();
    kestrel_crypto::hash::blake2b_256(&bytes)
}

/// Amounts of tokens, by the key of the ticketer's own balance (Octez's `Ticket_token_map`
/// orders tokens that way).
#[derive(Debug, Default)]
pub struct TokenMap(BTreeMap<[u8; 32], (Token, BigInt)>);

impl TokenMap {
    /// Adds `amount` of `token`.
    pub fn add(&mut self, token: Token, amount: &BigInt) {
        let key = token.balance_key(&token.ticketer);
        self.0
            .entry(key)
            .and_modify(|(_, sum)| *sum += amount)
            .or_insert_with(|| (token, amount.clone()));
    }

    /// The tickets in `value` (`Ticket_scanner.tickets_of_value`), big maps' pending values
    /// too when `include_lazy`.
    pub fn of_value(value: &Value, include_lazy: bool) -> TokenMap {
        let mut map = TokenMap::default();
        map.add_value(value, include_lazy, 1);
        map
    }

    /// Adds (`sign` 1) or subtracts (-1) the tickets in `value`.
    fn add_value(&mut self, value: &Value, include_lazy: bool, sign: i8) {
        let mut pending = vec![value];
        while let Some(value) = pending.pop() {
            match value {
                Value::Ticket(_) => {
                    if let Some((token, amount)) = Token::of_ticket(value) {
                        let amount = if sign < 0 { -amount } else { amount };
                        self.add(token, &amount);
                    }
                }
                Value::Pair(pair) => {
                    pending.push(&pair.1);
                    pending.push(&pair.0);
                }
                Value::Left(inner) | Value::Right(inner) | Value::Some(inner) => {
                    pending.push(inner)
                }
                Value::List(items) => pending.extend(items.iter()),
                Value::Map(map) => pending.extend(map.values()),
                Value::BigMap(map) if include_lazy => {
                    pending.extend(map.overlay.values().flatten());
                }
                _ => {}
            }
        }
    }

    /// The tokens with a non-zero amount, in key order.
    fn non_zero(&self) -> impl DoubleEndedIterator<Item = &(Token, BigInt)> {
        self.0.values().filter(|(_, amount)| !amount.is_zero())
    }

    /// The amount of the token whose ticketer's key is `key`.
    fn amount(&self, key: &[u8; 32]) -> BigInt {
        self.0
            .get(key)
            .map(|(_, amount)| amount.clone())
            .unwrap_or_default()
    }
}

/// What a call changed of its own tickets (`Ticket_accounting.ticket_diffs`): the change of the
/// contract's balances (new storage − old storage − argument), and its receipt (new storage −
/// old storage, one update per token, Octez's order: by descending key).
pub fn call_diffs(
    self_contract: &Destination,
    argument: Option<&Value>,
    old_storage: Option<&Value>,
    new_storage: Option<&Value>,
) -> (TokenMap, Vec<TicketReceiptItem<'static>>) {
    let mut storage = TokenMap::default();
    if let Some(new_storage) = new_storage {
        storage.add_value(new_storage, false, 1);
    }
    if let Some(old_storage) = old_storage {
        storage.add_value(old_storage, false, -1);
    }
    let receipt = storage
        .non_zero()
        .rev()
        .map(|(token, amount)| receipt_item(token, vec![(*self_contract, amount.clone())]))
        .collect();
    if let Some(argument) = argument {
        storage.add_value(argument, true, -1);
    }
    (storage, receipt)
}

/// A receipt item: `token`'s changes for each account.
pub fn receipt_item(
    token: &Token,
    updates: Vec<(Destination, BigInt)>,
) -> TicketReceiptItem<'static> {
    TicketReceiptItem {
        ticket_token: token.receipt(),
        updates: updates
            .into_iter()
            .map(|(account, amount)| TicketUpdate {
                account: TransactionDestination(account),
                amount: Zarith(amount),
            })
            .collect(),
    }
}

/// Amounts of a token sent to each destination, in the order the operations send them.
type Destinations = Vec<(Destination, BigInt)>;

/// The tickets each emitted operation carries, by token then destination
/// (`Ticket_operations_diff.ticket_diffs_of_operations`): a transfer's argument (to a contract,
/// or a ticket to an implicit account), an origination's storage.
fn operation_tickets(operations: &[InternalOperation]) -> Vec<(Token, Destinations)> {
    let mut by_token: BTreeMap<[u8; 32], (Token, Destinations)> = BTreeMap::new();
    for operation in operations {
        let (destination, value) = match operation {
            InternalOperation::Transaction {
                destination,
                parameter,
                parameter_type,
                ..
            } if parameter_type.has_ticket() => (destination.destination.to_crypto(), parameter),
            InternalOperation::Origination {
                address,
                storage,
                storage_type,
                ..
            } if storage_type.has_ticket() => (address.to_crypto(), storage),
            _ => continue,
        };
        for (key, (token, amount)) in TokenMap::of_value(value, true).0 {
            let destinations = &mut by_token.entry(key).or_insert_with(|| (token, Vec::new())).1;
            match destinations.iter_mut().find(|(to, _)| *to == destination) {
                Some((_, sum)) => *sum += amount,
                None => destinations.push((destination, amount)),
            }
        }
    }
    by_token.into_values().collect()
}

/// Whether any emitted operation's type holds a ticket.
pub fn operations_carry_tickets(operations: &[InternalOperation]) -> bool {
    operations.iter().any(|operation| match operation {
        InternalOperation::Transaction { parameter_type, .. } => parameter_type.has_ticket(),
        InternalOperation::Origination { storage_type, .. } => storage_type.has_ticket(),
        _ => false,
    })
}

/// `Ticket_accounting.update_ticket_balances`: the call's own changes (an increase only of
/// tickets it created), then what its operations send (no more of a token than it gave up,
/// unless it created it): the table's size change, bytes.
pub fn update_balances(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    self_contract: &Destination,
    diffs: &TokenMap,
    operations: &[InternalOperation],
) -> Result<i64, Fault> {
    let mut size_diff = 0i64;
    // Every token the call saw, even unchanged (Octez adjusts those by 0, and pays for it).
    for (token, amount) in diffs.0.values() {
        if amount.is_positive() && token.ticketer != *self_contract {
            return Err(invalid_transfer(token, amount).into());
        }
        size_diff += adjust_balance(ledger, meter, &token.balance_key(self_contract), amount)?;
    }
    for (token, destinations) in operation_tickets(operations) {
        let total: BigInt = destinations.iter().map(|(_, amount)| amount).sum();
        if token.ticketer != *self_contract {
            let given_up = -diffs.amount(&token.balance_key(&token.ticketer));
            if total > given_up {
                return Err(invalid_transfer(&token, &total).into());
            }
        }
        for (owner, amount) in &destinations {
            size_diff += adjust_balance(ledger, meter, &token.balance_key(owner), amount)?;
        }
    }
    Ok(size_diff)
}

fn invalid_transfer(token: &Token, amount: &BigInt) -> ApplyError {
    ApplyError::InvalidTicketTransfer {
        ticketer: token.ticketer,
        amount: amount.clone(),
    }
}

/// `Ticket_balance.adjust_balance`: adds `delta` to the balance under `key`; the table's size
/// change, bytes (a new entry's key counts [`TABLE_KEY_BYTES`], a removed one frees it). The
/// table is carbonated storage: the lookup, the read of a present balance, and the write or
/// removal are charged (`Make_indexed_carbonated_data_storage`).
pub fn adjust_balance(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    key: &[u8; 32],
    delta: &BigInt,
) -> Result<i64, Fault> {
    let old = ledger.ticket_balance(key)?;
    meter.consume(read_access_milli(TABLE_PATH_LENGTH, 0))?;
    let (old_amount, old_bytes) = old.clone().unwrap_or_default();
    if old.is_some() {
        meter.consume(read_access_milli(TABLE_PATH_LENGTH, old_bytes as u64))?;
    }
    let balance = old_amount + delta;
    if balance.is_negative() {
        return Err(ApplyError::NegativeTicketBalance {
            key: ScriptExprHash::new(*key),
            balance,
        }
        .into());
    }
    let length = |bytes: usize| i64::try_from(bytes).unwrap_or(i64::MAX);
    if balance.is_zero() {
        meter.consume(write_access_milli(0))?;
        ledger.set_ticket_balance(key, None)?;
        return Ok(match old {
            Some(_) => -(TABLE_KEY_BYTES + length(old_bytes)),
            None => 0,
        });
    }
    let written = ledger.set_ticket_balance(key, Some(&balance))?;
    meter.consume(
        alloc_mbytes_milli(written as u64).saturating_add(write_access_milli(written as u64)),
    )?;
    let new_bytes = length(written);
    Ok(match old {
        Some(_) => new_bytes - length(old_bytes),
        None => TABLE_KEY_BYTES + new_bytes,
    })
}

/// `Ticket_balance.adjust_storage_space`: the table's used bytes changed by `size_diff`; the
/// bytes beyond what was ever paid for, now paid (to burn).
pub fn adjust_storage_space(ledger: &mut Ledger, size_diff: i64) -> Result<u64, Fault> {
    if size_diff == 0 {
        return Ok(0);
    }
    let used = ledger.ticket_table_bytes(TicketTableBytes::Used)? + size_diff;
    if used.is_negative() {
        return Err(ApplyError::TicketStorageUnderflow.into());
    }
    ledger.set_ticket_table_bytes(TicketTableBytes::Used, &used)?;
    let paid = ledger.ticket_table_bytes(TicketTableBytes::Paid)?;
    if used <= paid {
        return Ok(0);
    }
    ledger.set_ticket_table_bytes(TicketTableBytes::Paid, &used)?;
    Ok(u64::try_from(used - paid).unwrap_or(u64::MAX))
}

/// `Ticket_transfer.transfer_ticket`: `amount` of `token` moved from `sender` to `destination`;
/// the bytes newly paid for.
pub fn transfer(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    token: &Token,
    sender: &Destination,
    destination: &Destination,
    amount: &BigInt,
) -> Result<u64, Fault> {
    let taken = adjust_balance(ledger, meter, &token.balance_key(sender), &-amount)?;
    let given = adjust_balance(ledger, meter, &token.balance_key(destination), amount)?;
    adjust_storage_space(ledger, taken + given)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys Octez names in `Negative_ticket_balance` errors (tezt's
    /// `tickets.ml/U025-- Overdrafting ticket from implicit accounts must be rejected.out` and
    /// `… Sending ticket of wrong type from implicit accounts must be rejected.out`):
    /// bootstrap1's balance of the tickets of the contract whose bytes those sessions show
    /// (`0x01fca241…00`), `"Ticket"` of type `string`, and `0` of type `nat`.
    #[test]
    fn balance_keys_are_octez_hashes() {
        let ticketer_bytes =
            hex::decode("01fca241ad513615858a813a6019c5a5b3977c27dc00").expect("hex");
        let ticketer = Destination::try_from_bytes(&ticketer_bytes).expect("a contract");
        let owner =
            Destination::from_b58check("tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx").expect("bootstrap1");
        let prim = |prim| Node::prim(prim, Vec::new());
        let cases = [
            (
                prim(kestrel_micheline::Prim::T_string),
                Node::string("Ticket"),
                "exprubCTZXvJKqgSzwRfVHM3SJSU8MUFST8FnrYTxTLwn8F9oGyh8P",
            ),
            (
                prim(kestrel_micheline::Prim::T_nat),
                Node::int(0),
                "expru2shUeN2Ah7TLWrM937cMzrqkGL4LirEXUQYVZU4YvjdqGrkB2",
            ),
        ];
        for (ty, content, expected) in cases {
            let key = balance_key(&ticketer, &ty, &content, &owner);
            assert_eq!(ScriptExprHash::new(key).to_b58check(), expected);
        }
        // Another owner, another key.
        let other =
            Destination::from_b58check("tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN").expect("bootstrap2");
        let key = balance_key(
            &ticketer,
            &prim(kestrel_micheline::Prim::T_nat),
            &Node::int(0),
            &other,
        );
        assert_ne!(
            ScriptExprHash::new(key).to_b58check(),
            "expru2shUeN2Ah7TLWrM937cMzrqkGL4LirEXUQYVZU4YvjdqGrkB2"
        );
    }
}
