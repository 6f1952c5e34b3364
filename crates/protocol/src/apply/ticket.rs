//! Tickets as protocol 025 accounts for them: the ticket balance table (`ticket_storage.ml`,
//! keyed by `ticket_balance_key.ml`'s hash), what a contract call changes in it
//! (`ticket_accounting.ml`: the tickets in the argument, the old and new storage and the emitted
//! operations, `ticket_operations_diff.ml`, `ticket_token_map.ml`; the scans are
//! `ticket_scan`'s), the table's growth paid as a storage burn (`adjust_storage_space`), and the
//! `ticket_updates` receipts (`ticket_receipt.ml`), each step charged as Octez charges it: the
//! balance keys hashed, the tokens unparsed, the carbonated maps' lookups, updates and folds
//! (`carbonated_map.ml`), the amounts added and negated.
//!
//! Tickets in big maps count too: those a big map sent or received holds
//! (`Ticket_scanner.tickets_of_big_map`), and those the storage's big maps gain or lose
//! (`ticket_lazy_storage_diff.ml`), their listing and reading charged as Octez charges them
//! but for the deserialization of an updated binding's old value.

use std::collections::BTreeMap;
use std::rc::Rc;

use kestrel_crypto::{Destination, ScriptExprHash};
use kestrel_micheline::Node;
use kestrel_michelson::{
    Address, BigMapDiff, BigMapDiffAction, BigMapInit, InternalOperation, Type, UnparsingMode,
    Value,
};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::gas::{
    add_int_milli, alloc_mbytes_milli, carbonated_find_milli, carbonated_fold_milli,
    carbonated_update_milli, hash_bytes_milli, negate_milli, read_access_milli, strip_milli,
    unparse_type_milli, write_access_milli, GasExhausted, GasMeter, COLLECT_TICKETS_STEP_MILLI,
};
use super::ticket_scan::{scan, type_has_tickets_cost, Scan};
use super::{ApplyError, Fault};
use crate::crypto_fields::Contract;
use crate::field::Zarith;
use crate::host::{BIG_MAP_BINDING_PATH_LENGTH, BIG_MAP_EXISTS_MILLI};
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
    /// Unparsing the type (`unparse_ty`) and stripping its annotations, and unparsing the
    /// contents (`unparse_comparable_data`, its serialization accounted for), milligas: what
    /// each balance key and the receipt's token pay first.
    unparse_milli: u64,
    /// Nodes of the type.
    type_nodes: u64,
    /// Nodes of the contents.
    content_nodes: u64,
}

impl Token {
    /// The token and amount of a ticket value; `None` for any other value.
    pub fn of_ticket(value: &Value) -> Option<(Token, BigInt)> {
        let Value::Ticket(ticket) = value else {
            return None;
        };
        let content_type = ticket.content_type.to_node();
        let content = kestrel_michelson::normalize(&ticket.content, UnparsingMode::OptimizedLegacy);
        let type_nodes = kestrel_micheline::location::node_count(&content_type) as u64;
        let unparse_milli = unparse_type_milli(ticket.content_type.size() as u64)
            .saturating_add(strip_milli(type_nodes))
            .saturating_add(kestrel_michelson::unparse_data_cost_milli(&ticket.content));
        let token = Token {
            ticketer: ticket.ticketer.destination.to_crypto(),
            content_nodes: kestrel_micheline::location::node_count(&content) as u64,
            content_type,
            content,
            unparse_milli,
            type_nodes,
        };
        Some((token, ticket.amount.to_bigint()))
    }

    /// The key of `owner`'s balance of this token in the table ([`balance_key`]), as
    /// `Ticket_balance_key.of_ex_token` charges it: the token unparsed, both addresses
    /// unparsed, the expression's locations stripped, its bytes hashed.
    fn balance_key_metered(
        &self,
        owner: &Destination,
        meter: &mut GasMeter,
    ) -> Result<[u8; 32], GasExhausted> {
        let expression = self.key_expression(owner);
        let nodes = 3 + self.type_nodes + self.content_nodes;
        let cost = self
            .unparse_milli
            .saturating_add(address_unparse_milli(&self.ticketer))
            .saturating_add(address_unparse_milli(owner))
            .saturating_add(strip_milli(nodes))
            .saturating_add(hash_bytes_milli(expression.len() as u64));
        meter.consume(cost)?;
        Ok(kestrel_crypto::hash::blake2b_256(&expression))
    }

    fn key_expression(&self, owner: &Destination) -> Vec<u8> {
        key_expression(&self.ticketer, &self.content_type, &self.content, owner)
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

/// What unparsing an address costs (`unparse_data` of an `address` in `Optimized_legacy`, its
/// serialization accounted for), milligas.
fn address_unparse_milli(destination: &Destination) -> u64 {
    let address = Address::new(crate::host::vm_destination(destination));
    kestrel_michelson::unparse_data_cost_milli(&Value::Address(Rc::new(address)))
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
    kestrel_crypto::hash::blake2b_256(&key_expression(ticketer, content_type, content, owner))
}

/// The binary Micheline a balance key hashes.
fn key_expression(
    ticketer: &Destination,
    content_type: &Node,
    content: &Node,
    owner: &Destination,
) -> Vec<u8> {
    let node = Node::seq(vec![
        Node::bytes(ticketer.to_bytes().to_vec()),
        content_type.clone(),
        content.clone(),
        Node::bytes(owner.to_bytes().to_vec()),
    ]);
    // A type and contents from typed values encode; an unencodable caller's node hashes as
    // nothing, which no stored balance has.
    kestrel_micheline::binary::encode(&node).unwrap_or_default()
}

/// Amounts of tokens, by the key of the ticketer's own balance (Octez's `Ticket_token_map`, a
/// carbonated map ordered that way).
#[derive(Debug, Default, Clone)]
pub struct TokenMap(BTreeMap<[u8; 32], (Token, BigInt)>);

impl TokenMap {
    /// `Ticket_accounting.ticket_balances_of_value`: the scan's steps, each ticket collected,
    /// then the tokens listed in a map (`Ticket_token_map.of_list`, amounts of a token summed).
    fn of_scan(meter: &mut GasMeter, scan: &Scan) -> Result<TokenMap, GasExhausted> {
        meter.consume(scan.steps_milli())?;
        meter.consume(COLLECT_TICKETS_STEP_MILLI.saturating_mul(scan.tickets.len() as u64))?;
        let mut map = TokenMap::default();
        for (token, amount) in scan.tickets.iter().filter_map(Token::of_ticket) {
            let key = token.balance_key_metered(&token.ticketer, meter)?;
            map.add(meter, key, token, amount)?;
        }
        Ok(map)
    }

    /// Adds `amount` of `token` under `key` (`Carbonated_map.update` or `add`): a lookup, the
    /// amounts summed if the token is there, an update.
    fn add(
        &mut self,
        meter: &mut GasMeter,
        key: [u8; 32],
        token: Token,
        amount: BigInt,
    ) -> Result<(), GasExhausted> {
        let size = self.0.len();
        meter.consume(carbonated_find_milli(size).saturating_add(carbonated_update_milli(size)))?;
        match self.0.get_mut(&key) {
            Some((_, sum)) => {
                meter.consume(add_int_milli(sum, &amount))?;
                *sum += amount;
            }
            None => {
                self.0.insert(key, (token, amount));
            }
        }
        Ok(())
    }

    /// `Ticket_token_map.merge`: a fold over `other`, each of its tokens added.
    fn merge(&mut self, meter: &mut GasMeter, other: TokenMap) -> Result<(), GasExhausted> {
        meter.consume(carbonated_fold_milli(other.0.len()))?;
        for (key, (token, amount)) in other.0 {
            self.add(meter, key, token, amount)?;
        }
        Ok(())
    }

    /// `Ticket_accounting.Ticket_token_map.sub`: `other` negated (`map_e`: a fold, each amount
    /// negated and updated), then merged.
    fn subtract(&mut self, meter: &mut GasMeter, other: &TokenMap) -> Result<(), GasExhausted> {
        let size = other.0.len();
        meter.consume(carbonated_fold_milli(size))?;
        let mut negated = TokenMap::default();
        for (key, (token, amount)) in &other.0 {
            meter.consume(negate_milli(amount).saturating_add(carbonated_update_milli(size)))?;
            negated.0.insert(*key, (token.clone(), -amount));
        }
        self.merge(meter, negated)
    }

    /// `Ticket_token_map.to_ticket_receipt`: a fold, each token with a non-zero amount unparsed
    /// for `owner`'s update; the items from the greatest key down (the fold prepends).
    fn receipt(
        &self,
        meter: &mut GasMeter,
        owner: &Destination,
    ) -> Result<Vec<TicketReceiptItem<'static>>, GasExhausted> {
        meter.consume(carbonated_fold_milli(self.0.len()))?;
        let mut items = Vec::new();
        for (token, amount) in self.0.values().filter(|(_, amount)| !amount.is_zero()) {
            items.push(receipt_item(meter, token, vec![(*owner, amount.clone())])?);
        }
        items.reverse();
        Ok(items)
    }

    /// The amount of `token` (`Ticket_token_map.find`: its key, a lookup).
    fn find(&self, meter: &mut GasMeter, token: &Token) -> Result<BigInt, GasExhausted> {
        let key = token.balance_key_metered(&token.ticketer, meter)?;
        meter.consume(carbonated_find_milli(self.0.len()))?;
        Ok(self
            .0
            .get(&key)
            .map(|(_, amount)| amount.clone())
            .unwrap_or_default())
    }
}

/// What a call changed of its own tickets (`Ticket_accounting.ticket_diffs`).
#[derive(Debug, Default)]
pub struct CallDiffs {
    /// The change of the contract's balances: new storage − old storage − argument.
    pub diffs: TokenMap,
    /// The receipt: new storage − old storage, one update per token, from the greatest key
    /// down.
    pub receipt: Vec<TicketReceiptItem<'static>>,
}

/// The scans of what a call handled: its argument (big maps included), its old and new
/// storage (big maps not).
pub struct CallScans {
    /// The argument, of the parameter type.
    pub argument: Scan,
    /// The storage before the run.
    pub old_storage: Scan,
    /// The storage after it.
    pub new_storage: Scan,
    /// The tickets the storage's big maps gained or lost ([`lazy_storage_tickets`]).
    pub big_maps: Vec<(Value, bool)>,
}

/// `Ticket_accounting.ticket_diffs` of a call of `self_contract`, charged to `meter`.
pub fn call_diffs(
    meter: &mut GasMeter,
    self_contract: &Destination,
    scans: &CallScans,
) -> Result<CallDiffs, GasExhausted> {
    let arguments = TokenMap::of_scan(meter, &scans.argument)?;
    let mut big_maps = TokenMap::default();
    for (token, amount, negated) in scans
        .big_maps
        .iter()
        .filter_map(|(ticket, negated)| Some((Token::of_ticket(ticket)?, negated)))
        .map(|((token, amount), negated)| (token, amount, *negated))
    {
        let key = token.balance_key_metered(&token.ticketer, meter)?;
        let amount = if negated { -amount } else { amount };
        big_maps.add(meter, key, token, amount)?;
    }
    let old_storage = TokenMap::of_scan(meter, &scans.old_storage)?;
    let mut storage = TokenMap::of_scan(meter, &scans.new_storage)?;
    storage.merge(meter, big_maps)?;
    storage.subtract(meter, &old_storage)?;
    let mut diffs = storage.clone();
    diffs.subtract(meter, &arguments)?;
    let receipt = storage.receipt(meter, self_contract)?;
    Ok(CallDiffs { diffs, receipt })
}

/// `Ticket_token_unparser.unparse` of `token` (its contents and type unparsed, the type's
/// annotations and locations stripped) for a receipt item of its changes for each account.
pub fn receipt_item(
    meter: &mut GasMeter,
    token: &Token,
    updates: Vec<(Destination, BigInt)>,
) -> Result<TicketReceiptItem<'static>, GasExhausted> {
    meter.consume(
        token
            .unparse_milli
            .saturating_add(strip_milli(token.type_nodes)),
    )?;
    Ok(TicketReceiptItem {
        ticket_token: token.receipt(),
        updates: updates
            .into_iter()
            .map(|(account, amount)| TicketUpdate {
                account: TransactionDestination(account),
                amount: Zarith(amount),
            })
            .collect(),
    })
}

/// The values stored in big map `id`, of type `value_type`, listed (`Big_map.list_key_values`:
/// the traversal, then each binding's carbonated read) and parsed (`parse_data`), charged.
pub fn stored_values(
    ledger: &Ledger,
    meter: &mut GasMeter,
    id: i64,
    value_type: &Type,
) -> Result<Vec<Value>, Fault> {
    let bindings = list_stored(ledger, meter, id)?;
    let mut values = Vec::with_capacity(bindings.len());
    for node in &bindings {
        values.push(parse_stored(meter, node, value_type)?);
    }
    Ok(values)
}

/// The values stored in big map `id`, listed as `Big_map.list_key_values` charges it: the
/// traversal ([`octez_root_entries`]), then each binding's carbonated read, charged before the
/// next is read.
fn list_stored(ledger: &Ledger, meter: &mut GasMeter, id: i64) -> Result<Vec<Node>, Fault> {
    meter.consume(list_key_values_milli(octez_root_entries(ledger)?))?;
    let key_hashes = ledger.big_map_key_hashes(id)?;
    let mut values = Vec::new();
    for key_hash in &key_hashes {
        if let Some((node, stored_bytes)) = ledger.big_map_binding(id, key_hash)? {
            meter.consume(read_access_milli(
                BIG_MAP_BINDING_PATH_LENGTH,
                stored_bytes as u64,
            ))?;
            values.push(node);
        }
    }
    Ok(values)
}

/// `Storage_costs.list_key_values_traverse` (`cost_List_key_values`): `470 + 118 · size`.
fn list_key_values_milli(size: u64) -> u64 {
    size.saturating_mul(118).saturating_add(470)
}

/// Top-level directories of Octez's mockup context that the ledger does not hold (it holds
/// `big_maps`, `contracts`, `votes`, and `ticket_balance` once a ticket is held). Measured,
/// not enumerated: tezt's `Send tickets in bigmap` session pays for 24 entries before its
/// first ticket balance is written and 25 after, when the ledger holds 3 and then 4.
const UNMODELLED_ROOT_ENTRIES: u64 = 21;

/// The `size` Octez's `list_key_values` pays its traversal for: `C.length s []`, which in
/// protocol 025 is the number of top-level entries of the whole context, not the big map's
/// bindings (`storage_functors.ml`: `Make_subcontext.length` is `C.length` without the
/// subcontext's prefix, and `Make_indexed_subcontext`'s `length` drops the index).
fn octez_root_entries(ledger: &Ledger) -> Result<u64, Fault> {
    Ok(ledger
        .root_entries()?
        .saturating_add(UNMODELLED_ROOT_ENTRIES))
}

/// A stored value parsed as `ty` (forged tickets allowed, as `parse_data` is asked), charged.
fn parse_stored(meter: &mut GasMeter, node: &Node, ty: &Type) -> Result<Value, Fault> {
    let (value, milli) = kestrel_michelson::typecheck_data_standalone(node, ty, true)
        .map_err(|error| ApplyError::InvalidTicketContents(error.to_string()))?;
    meter.consume(milli)?;
    Ok(value)
}

/// The tickets the storage's big maps gained (`false`) or lost (`true`) by a call's big-map
/// changes (`Ticket_lazy_storage_diff.ticket_diffs_of_lazy_storage_diff`, read before they are
/// applied): a removed big map's values lost, a copied one's source values gained, each update's
/// old value lost and new value gained. The changes of temporary big maps (negative ids) are
/// the emitted operations', not the storage's. Charged as Octez charges them but for the
/// storage reads (`Big_map.exists`, `get_opt`, `list_key_values`).
pub fn lazy_storage_tickets(
    ledger: &Ledger,
    meter: &mut GasMeter,
    diffs: &[BigMapDiff],
) -> Result<Vec<(Value, bool)>, Fault> {
    let mut found = Vec::new();
    for diff in diffs {
        let Some(id) = diff.id.to_i64().filter(|id| *id >= 0) else {
            continue;
        };
        meter.consume(COLLECT_TICKETS_STEP_MILLI)?;
        match &diff.action {
            BigMapDiffAction::Remove => collect_stored(ledger, meter, id, true, &mut found)?,
            BigMapDiffAction::Update { init, updates } => {
                let (read_from, value_type) = match init {
                    BigMapInit::Existing => (id, None),
                    BigMapInit::Copy { source } => {
                        let source = source.to_i64().unwrap_or(id);
                        collect_stored(ledger, meter, source, false, &mut found)?;
                        (source, None)
                    }
                    BigMapInit::Alloc { value_type, .. } => (id, Some(value_type)),
                };
                let value_type = match value_type {
                    Some(value_type) => {
                        meter.consume(parse_type_milli(&value_type.to_node())?)?;
                        value_type.clone()
                    }
                    // `collect_token_diffs_of_big_map_and_updates`: a step, then the types.
                    None => {
                        meter.consume(
                            COLLECT_TICKETS_STEP_MILLI.saturating_add(BIG_MAP_EXISTS_MILLI),
                        )?;
                        stored_value_type(ledger, meter, read_from)?
                    }
                };
                meter.consume(type_has_tickets_cost(&value_type))?;
                let has_tickets = value_type.has_ticket();
                // `Key_hash_map`: each key looked up among those updated, then added.
                for (size, update) in updates.iter().enumerate() {
                    meter.consume(carbonated_find_milli(size))?;
                    // `Big_map.get_opt`: the lookup, the read (its deserialization is not
                    // charged here).
                    meter.consume(read_access_milli(BIG_MAP_BINDING_PATH_LENGTH, 0))?;
                    if let Some((old, stored_bytes)) =
                        ledger.big_map_binding(read_from, &update.key_hash)?
                    {
                        meter.consume(read_access_milli(
                            BIG_MAP_BINDING_PATH_LENGTH,
                            stored_bytes as u64,
                        ))?;
                        if has_tickets {
                            let old = parse_stored(meter, &old, &value_type)?;
                            collect_value(meter, &value_type, &old, true, &mut found)?;
                        }
                    }
                    meter.consume(
                        carbonated_find_milli(size).saturating_add(carbonated_update_milli(size)),
                    )?;
                    if let (true, Some(value)) = (has_tickets, &update.value) {
                        let node = kestrel_michelson::normalize(value, UnparsingMode::Optimized);
                        let value = parse_stored(meter, &node, &value_type)?;
                        collect_value(meter, &value_type, &value, false, &mut found)?;
                    }
                }
            }
        }
    }
    // Each collected diff was prepended to the list.
    found.reverse();
    Ok(found)
}

/// `collect_token_diffs_of_big_map`: a step, big map `id`'s value type, then each stored
/// value's tickets, gained or lost (`negated`).
fn collect_stored(
    ledger: &Ledger,
    meter: &mut GasMeter,
    id: i64,
    negated: bool,
    found: &mut Vec<(Value, bool)>,
) -> Result<(), Fault> {
    meter.consume(COLLECT_TICKETS_STEP_MILLI.saturating_add(BIG_MAP_EXISTS_MILLI))?;
    let value_type = stored_value_type(ledger, meter, id)?;
    meter.consume(type_has_tickets_cost(&value_type))?;
    // The values are listed whatever their type; `tickets_of_node` parses only those that may
    // hold tickets.
    let nodes = list_stored(ledger, meter, id)?;
    if !value_type.has_ticket() {
        return Ok(());
    }
    for node in &nodes {
        let value = parse_stored(meter, node, &value_type)?;
        collect_value(meter, &value_type, &value, negated, found)?;
    }
    Ok(())
}

/// Big map `id`'s value type, parsed (`parse_big_map_value_ty`, charged).
fn stored_value_type(ledger: &Ledger, meter: &mut GasMeter, id: i64) -> Result<Type, Fault> {
    let Some((_, value_type)) = ledger.big_map_types(id)? else {
        return Err(ApplyError::InvalidTicketContents(format!("no big map {id}")).into());
    };
    let (ty, milli) = kestrel_michelson::typecheck_type(&value_type, true)
        .map_err(|error| ApplyError::InvalidTicketContents(error.to_string()))?;
    meter.consume(milli)?;
    Ok(ty)
}

/// What parsing a type costs, milligas.
fn parse_type_milli(node: &Node) -> Result<u64, Fault> {
    kestrel_michelson::typecheck_type(node, true)
        .map(|(_, milli)| milli)
        .map_err(|error| ApplyError::InvalidTicketContents(error.to_string()).into())
}

/// A value's tickets (`tickets_of_node`'s scan), each collected (and negated: `negated`).
fn collect_value(
    meter: &mut GasMeter,
    ty: &Type,
    value: &Value,
    negated: bool,
    found: &mut Vec<(Value, bool)>,
) -> Result<(), Fault> {
    let scanned = scan(ty, true, Some(value), None)?;
    meter.consume(scanned.steps_milli())?;
    for ticket in scanned.tickets.into_iter().rev() {
        meter.consume(COLLECT_TICKETS_STEP_MILLI)?;
        if negated {
            if let Some((_, amount)) = Token::of_ticket(&ticket) {
                meter.consume(negate_milli(&amount))?;
            }
        }
        found.push((ticket, negated));
    }
    Ok(())
}

/// A token the emitted operations send (`Ticket_operations_diff.ticket_token_diff`).
struct Sent {
    token: Token,
    total: BigInt,
    /// The amounts by destination, in Michelson's order of addresses.
    destinations: BTreeMap<Destination, BigInt>,
}

/// The tickets the emitted operations carry
/// (`Ticket_operations_diff.ticket_diffs_of_operations`): a transfer's argument to a contract
/// or an origination's storage scanned (to an implicit account, its one ticket), each ticket
/// added to a map of tokens to maps of destinations; then each token's total. The tokens from
/// the greatest key down (the fold prepends).
fn sent_tickets(
    ledger: &Ledger,
    meter: &mut GasMeter,
    operations: &[InternalOperation],
) -> Result<Vec<Sent>, Fault> {
    let mut by_token: BTreeMap<[u8; 32], (Token, BTreeMap<Destination, BigInt>)> = BTreeMap::new();
    for operation in operations {
        let (destination, found) = match operation {
            InternalOperation::Transaction {
                destination,
                parameter,
                parameter_type,
                ..
            } => match destination.destination.to_crypto() {
                // `Transaction_to_implicit_with_ticket`: its ticket, not scanned.
                to @ Destination::Implicit(_) => {
                    if !matches!(parameter, Value::Ticket(_)) {
                        continue;
                    }
                    let found = Scan {
                        tickets: vec![parameter.clone()],
                        steps: 0,
                    };
                    (to, found)
                }
                to => {
                    meter.consume(type_has_tickets_cost(parameter_type))?;
                    let has_tickets = parameter_type.has_ticket();
                    let mut read = |id: i64, ty: &Type| stored_values(ledger, meter, id, ty);
                    let found = scan(
                        parameter_type,
                        has_tickets,
                        Some(parameter),
                        Some(&mut read),
                    )?;
                    (to, found)
                }
            },
            InternalOperation::Origination {
                address,
                storage,
                storage_type,
                ..
            } => {
                meter.consume(type_has_tickets_cost(storage_type))?;
                let has_tickets = storage_type.has_ticket();
                let mut read = |id: i64, ty: &Type| stored_values(ledger, meter, id, ty);
                let found = scan(storage_type, has_tickets, Some(storage), Some(&mut read))?;
                (address.to_crypto(), found)
            }
            _ => continue,
        };
        meter.consume(found.steps_milli())?;
        // `add_transfer_to_token_map` folds the scan's list, which holds the last ticket met
        // first.
        for ticket in found.tickets.iter().rev() {
            let Some((token, amount)) = Token::of_ticket(ticket) else {
                continue;
            };
            let key = token.balance_key_metered(&token.ticketer, meter)?;
            let size = by_token.len();
            meter.consume(carbonated_find_milli(size))?;
            match by_token.get_mut(&key) {
                None => {
                    by_token.insert(key, (token, BTreeMap::from([(destination, amount)])));
                }
                Some((_, destinations)) => {
                    let count = destinations.len();
                    meter.consume(carbonated_find_milli(count))?;
                    match destinations.get_mut(&destination) {
                        Some(sum) => {
                            meter.consume(add_int_milli(sum, &amount))?;
                            *sum += amount;
                        }
                        None => {
                            destinations.insert(destination, amount);
                        }
                    }
                    meter.consume(carbonated_update_milli(count))?;
                }
            }
            meter.consume(carbonated_update_milli(size))?;
        }
    }
    meter.consume(carbonated_fold_milli(by_token.len()))?;
    let mut sent = Vec::with_capacity(by_token.len());
    for (token, destinations) in by_token.into_values() {
        // A fold summing the amounts, then the destinations listed.
        meter.consume(carbonated_fold_milli(destinations.len()).saturating_mul(2))?;
        let mut total = BigInt::zero();
        for amount in destinations.values() {
            meter.consume(add_int_milli(&total, amount))?;
            total += amount;
        }
        sent.push(Sent {
            token,
            total,
            destinations,
        });
    }
    sent.reverse();
    Ok(sent)
}

/// `Ticket_accounting.update_ticket_balances`: the tickets the operations send found; the
/// call's own changes (an increase only of tickets it created); then what its operations send
/// (no more of a token than it gave up, unless it created it). The table's size change, bytes.
pub fn update_balances(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    self_contract: &Destination,
    diffs: &TokenMap,
    operations: &[InternalOperation],
) -> Result<i64, Fault> {
    let sent = sent_tickets(ledger, meter, operations)?;
    // `Ticket_token_map.to_list`: the map listed, then the list walked again.
    meter.consume(carbonated_fold_milli(diffs.0.len()).saturating_mul(2))?;
    let mut size_diff = 0i64;
    // Every token the call saw, even unchanged (Octez adjusts those by 0, and pays for it).
    for (token, amount) in diffs.0.values() {
        if amount.is_positive() && token.ticketer != *self_contract {
            return Err(invalid_transfer(token, amount).into());
        }
        let key = token.balance_key_metered(self_contract, meter)?;
        adjust_and_add(ledger, meter, &key, amount, &mut size_diff)?;
    }
    for Sent {
        token,
        total,
        destinations,
    } in sent
    {
        if token.ticketer != *self_contract {
            let given_up = -diffs.find(meter, &token)?;
            if total > given_up {
                return Err(invalid_transfer(&token, &total).into());
            }
        }
        meter.consume(COLLECT_TICKETS_STEP_MILLI.saturating_mul(destinations.len() as u64))?;
        // Listed, then folded into a list that prepends: the last destination first.
        for (owner, amount) in destinations.iter().rev() {
            let key = token.balance_key_metered(owner, meter)?;
            adjust_and_add(ledger, meter, &key, amount, &mut size_diff)?;
        }
    }
    Ok(size_diff)
}

/// [`adjust_balance`], its size change added to `size_diff` (`Ticket_costs.add_z_cost`).
fn adjust_and_add(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    key: &[u8; 32],
    delta: &BigInt,
    size_diff: &mut i64,
) -> Result<(), Fault> {
    let diff = adjust_balance(ledger, meter, key, delta)?;
    meter.consume(add_int_milli(
        &BigInt::from(*size_diff),
        &BigInt::from(diff),
    ))?;
    *size_diff = size_diff.saturating_add(diff);
    Ok(())
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

/// `Ticket_transfer.transfer_ticket`: `amount` of `token` moved from `sender` to `destination`
/// (both balance keys made, then both balances adjusted); the bytes newly paid for.
pub fn transfer(
    ledger: &mut Ledger,
    meter: &mut GasMeter,
    token: &Token,
    sender: &Destination,
    destination: &Destination,
    amount: &BigInt,
) -> Result<u64, Fault> {
    let sender_key = token.balance_key_metered(sender, meter)?;
    let destination_key = token.balance_key_metered(destination, meter)?;
    let taken = adjust_balance(ledger, meter, &sender_key, &-amount)?;
    let given = adjust_balance(ledger, meter, &destination_key, amount)?;
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
