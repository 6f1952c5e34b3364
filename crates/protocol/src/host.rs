//! The Michelson VM's [`Host`] over the [`Ledger`]: a running contract reads big-map values one
//! key at a time, other contracts' parameter types (for `CONTRACT`) and views, and gets fresh
//! big-map ids (`big_maps/next`) and origination addresses (the operation's origination nonce).
//!
//! `Host`'s methods cannot fail, so a ledger error is kept ([`LedgerHost::take_error`]) and
//! answered as "absent"; the caller checks for it after the run and fails the operation. Reads
//! Octez pays gas for outside the interpreter (another contract's code, for `CONTRACT` and
//! `contract` values) are added up in [`LedgerHost::charged_milli`] for the caller to charge.

use kestrel_micheline::{Node, NodeKind, Prim};
use kestrel_michelson::{BigMapTypes, Destination, Host, HostView, Int, KeyHash, StoredRead};

use std::cell::Cell;
use std::sync::Arc;

use crate::apply::{
    cached_parameter_type, read_access_milli, stored_code_read_milli, OriginationNonce,
};
use crate::ledger::{Ledger, LedgerError};

/// The length of a big-map binding's path in the context, which Octez's storage accesses are
/// charged by: `big_maps/index/<id>/contents/<hex key hash>/data` (or `len`), six names
/// (`Storage.Big_map.Contents`, both indexes one name long: `Lazy_storage_kind.Big_map.Id`,
/// `Script_expr_hash` by `Path_encoding.Make_hex`).
pub const BIG_MAP_BINDING_PATH_LENGTH: u64 = 6;

/// What `Big_map.exists` charges before reading a big map's types: `read_bytes_cost 0`, the
/// base weight of a read (100 gas, `Gas_limit_repr.read_base_weight`).
pub const BIG_MAP_EXISTS_MILLI: u64 = 100_000;

/// The ledger as a running contract sees it.
pub struct LedgerHost<'a> {
    ledger: &'a mut Ledger,
    nonce: &'a mut OriginationNonce,
    error: Cell<Option<LedgerError>>,
    charged_milli: Cell<u64>,
}

impl<'a> LedgerHost<'a> {
    /// A host over `ledger`, originating contracts from `nonce`.
    pub fn new(ledger: &'a mut Ledger, nonce: &'a mut OriginationNonce) -> LedgerHost<'a> {
        LedgerHost {
            ledger,
            nonce,
            error: Cell::new(None),
            charged_milli: Cell::new(0),
        }
    }

    /// Milligas of the reads the run made that Octez charges to the operation.
    pub fn charged_milli(&self) -> u64 {
        self.charged_milli.get()
    }

    /// The first ledger error met during the run, if any.
    pub fn take_error(&mut self) -> Option<LedgerError> {
        self.error.take()
    }

    fn keep<T>(&mut self, result: Result<Option<T>, LedgerError>) -> Option<T> {
        result.unwrap_or_else(|error| {
            self.keep_error(error);
            None
        })
    }

    /// Keeps `error` unless an earlier one is kept.
    fn keep_error(&self, error: LedgerError) {
        let first = self.error.take().unwrap_or(error);
        self.error.set(Some(first));
    }

    fn code_bytes_of(&self, contract: &Destination) -> Result<Option<Arc<[u8]>>, LedgerError> {
        match contract.to_crypto() {
            kestrel_crypto::Destination::Originated(hash) => self.ledger.script_bytes(&hash),
            _ => Ok(None),
        }
    }
}

impl Host for LedgerHost<'_> {
    /// `Big_map.exists`: `Gas_limit_repr.read_bytes_cost 0` (100 gas), then the types read
    /// uncarbonated.
    fn big_map_types(&self, id: &Int) -> StoredRead<Option<BigMapTypes>> {
        let types = id.to_i64().and_then(|id| {
            let (key, value) = self.ledger.big_map_types(id).ok()??;
            Some(BigMapTypes {
                key_type: kestrel_michelson::parse_type(&key).ok()?,
                value_type: kestrel_michelson::parse_type(&value).ok()?,
            })
        });
        StoredRead {
            value: types,
            cost_milli: BIG_MAP_EXISTS_MILLI,
        }
    }

    /// `Big_map.get_opt` = `Storage.Big_map.Contents.find`, carbonated: the lookup
    /// (`read_access` of the binding's path, nothing read), then, when bound, the read of its
    /// length and bytes (`read_access` of the `len` path, same length, the value's bytes).
    fn big_map_value(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<Option<Node>> {
        let Some(id) = id.to_i64() else {
            return StoredRead::free(None);
        };
        let path_length = BIG_MAP_BINDING_PATH_LENGTH;
        let lookup = read_access_milli(path_length, 0);
        match self.ledger.big_map_binding(id, key_hash) {
            Ok(Some((value, stored_bytes))) => StoredRead {
                value: Some(value),
                cost_milli: lookup
                    .saturating_add(read_access_milli(path_length, stored_bytes as u64)),
            },
            Ok(None) => StoredRead {
                value: None,
                cost_milli: lookup,
            },
            Err(error) => {
                self.keep_error(error);
                StoredRead::free(None)
            }
        }
    }

    /// `Big_map.mem` = `Storage.Big_map.Contents.mem`: the lookup only.
    fn big_map_mem(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<bool> {
        let Some(id) = id.to_i64() else {
            return StoredRead::free(false);
        };
        let cost_milli = read_access_milli(BIG_MAP_BINDING_PATH_LENGTH, 0);
        match self.ledger.big_map_value_size(id, key_hash) {
            Ok(size) => StoredRead {
                value: size.is_some(),
                cost_milli,
            },
            Err(error) => {
                self.keep_error(error);
                StoredRead::free(false)
            }
        }
    }

    fn contract_parameter(&self, contract: &Destination) -> Option<Node> {
        let bytes = self.code_bytes_of(contract).ok()??;
        // A code that does not decode is a failed read: nothing is charged, as before the cache.
        let parameter = cached_parameter_type(&bytes, || {
            let code = kestrel_micheline::binary::decode(&bytes).ok()?;
            Some(
                section(&code, Prim::K_parameter).and_then(|node| node.children().first().cloned()),
            )
        })?;
        let read = stored_code_read_milli(bytes.len());
        self.charged_milli
            .set(self.charged_milli.get().saturating_add(read));
        parameter
    }

    fn view(&self, contract: &Destination, name: &str) -> Option<HostView> {
        let crypto = contract.to_crypto();
        let kestrel_crypto::Destination::Originated(hash) = crypto else {
            return None;
        };
        let code = self.ledger.script(&hash).ok()??;
        let view = find_view(&code, name)?;
        let [_, input, output, body] = view else {
            return None;
        };
        let storage_type = section(&code, Prim::K_storage)?.children().first()?;
        Some(HostView {
            input_type: kestrel_michelson::parse_type(input).ok()?,
            output_type: kestrel_michelson::parse_type(output).ok()?,
            code: kestrel_michelson::expand_macros(body).ok()?,
            storage_type: kestrel_michelson::parse_type(storage_type).ok()?,
            storage: self.ledger.storage(&hash).ok()??,
            balance_mutez: i64::try_from(self.ledger.balance(&crypto).ok()?).ok()?,
        })
    }

    /// `Vote.get_voting_power`: the delegate's power in the listings (a read error reads as 0
    /// and is reported by the run's other reads).
    fn voting_power(&self, delegate: &KeyHash) -> u64 {
        let power = self.ledger.voting_power(&delegate.to_crypto());
        u64::try_from(power.unwrap_or_default()).unwrap_or(u64::MAX)
    }

    /// `Vote.get_total_voting_power`: the listings' total.
    fn total_voting_power(&self) -> u64 {
        let total = self.ledger.total_voting_power();
        u64::try_from(total.unwrap_or_default()).unwrap_or(u64::MAX)
    }

    fn address_index(&self, address: &Destination) -> Option<u64> {
        // A read error is reported by the run's other reads; here it reads as unregistered.
        let index = self.ledger.address_index(&address.to_crypto()).ok()??;
        u64::try_from(index).ok()
    }

    fn index_address(&mut self, address: &Destination) -> u64 {
        let registered = self.ledger.register_address(&address.to_crypto());
        let index = self.keep(registered.map(Some)).unwrap_or_default();
        u64::try_from(index).unwrap_or(u64::MAX)
    }

    fn fresh_big_map_id(&mut self) -> Int {
        let next = self.ledger.next_big_map_id();
        let id = self.keep(next.map(Some)).unwrap_or_default();
        let stored = self.ledger.set_next_big_map_id(id + 1);
        self.keep(stored.map(Some));
        Int::from(id)
    }

    fn fresh_temporary_big_map_id(&mut self) -> Int {
        Int::from(self.ledger.fresh_temporary_big_map_id())
    }

    fn fresh_contract_address(&mut self) -> Destination {
        vm_destination(&kestrel_crypto::Destination::Originated(
            self.nonce.next_contract(),
        ))
    }
}

/// A contract as the VM names it.
pub fn vm_destination(destination: &kestrel_crypto::Destination) -> Destination {
    Destination::from_bytes(&destination.to_bytes())
        .expect("an account's or a contract's 22 bytes are a VM destination")
}

/// The toplevel section `field` (`parameter`, `storage`, `code`) of a script.
fn section(script: &Node, field: Prim) -> Option<&Node> {
    script
        .children()
        .iter()
        .find(|item| item.known_prim() == Some(field))
}

/// The arguments (name, input, output, code) of view `name` of a script.
fn find_view<'n>(script: &'n Node, name: &str) -> Option<&'n [Node]> {
    script.children().iter().find_map(|item| {
        if item.known_prim() != Some(Prim::K_view) {
            return None;
        }
        let args = item.children();
        match args.first().map(|node| &node.kind) {
            Some(NodeKind::String(view_name)) if view_name == name => Some(args),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{paths, Genesis};

    /// What Octez charges a contract for reading a stored big map (protocol 025): `Big_map.mem`
    /// and `Big_map.get_opt` are `Storage.Big_map.Contents.mem` / `find`
    /// (`storage_functors.ml`, `Make_indexed_carbonated_data_storage`): a lookup
    /// (`consume_mem_gas`: `read_access ~path_length ~read_bytes:0`), then for a bound key the
    /// read of its `len` (`consume_read_gas`: `read_access ~path_length ~read_bytes:len`), where
    /// `Storage_costs.read_access = 200_000 + 5000 · path_length + 2 · read_bytes` milligas.
    #[test]
    fn stored_big_map_reads_cost_what_octez_charges() {
        let mut ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let nat = kestrel_micheline::parse_expression("nat").unwrap();
        let bytes = kestrel_micheline::parse_expression("bytes").unwrap();
        let value = kestrel_micheline::parse_expression("0x0102").unwrap();
        ledger.create_big_map(7, &nat, &bytes).unwrap();
        ledger.big_map_set(7, &[1; 32], Some(&value)).unwrap();
        assert_eq!(
            paths::big_map_value(7, &[1; 32]).len() as u64,
            BIG_MAP_BINDING_PATH_LENGTH
        );
        let mut nonce = OriginationNonce::new([0; 32]);
        let host = LedgerHost::new(&mut ledger, &mut nonce);
        let id = Int::from(7);
        // Lookup: 200_000 + 5000 · 6. Read: the same plus 2 · 7 bytes (`0x0a`, a 4-byte
        // length, 2 bytes).
        let hit = host.big_map_value(&id, &[1; 32]);
        assert!(hit.value.is_some());
        assert_eq!(hit.cost_milli, 230_000 + 230_014);
        let miss = host.big_map_value(&id, &[2; 32]);
        assert_eq!((miss.value, miss.cost_milli), (None, 230_000));
        assert_eq!(
            host.big_map_mem(&id, &[1; 32]),
            StoredRead {
                value: true,
                cost_milli: 230_000
            }
        );
        assert_eq!(
            host.big_map_mem(&id, &[2; 32]),
            StoredRead {
                value: false,
                cost_milli: 230_000
            }
        );
    }
}

#[cfg(test)]
mod voting_tests {
    use super::*;
    use crate::ledger::Genesis;

    /// The figure the recorded `rpc get /chains/main/blocks/head/votes/<what>` answered on
    /// Octez's sandbox genesis (`octez-protocol/rpc/rpc-votes.out`): the first listing's
    /// `voting_power`, and `total_voting_power`.
    fn recorded(text: &str, command: &str, field: &str) -> u64 {
        let after = text
            .split_once(command)
            .unwrap_or_else(|| panic!("{command} recorded"))
            .1;
        let at = after.find(field).expect("field recorded") + field.len();
        after[at..]
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|digits| digits.parse().ok())
            .expect("a number")
    }

    #[test]
    fn voting_powers_are_the_genesis_listings() {
        let Some(path) = kestrel_testdata::require(
            "octez-protocol/rpc/rpc-votes.out",
            "voting_powers_are_the_genesis_listings",
        ) else {
            return;
        };
        let text = std::fs::read_to_string(path).expect("recording reads");
        let each = recorded(&text, "votes/listings\n", "\"voting_power\"");
        let total = recorded(&text, "votes/total_voting_power\n", "\"");
        let mut ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let accounts = Genesis::mockup().accounts;
        let mut nonce = OriginationNonce::new([0; 32]);
        let host = LedgerHost::new(&mut ledger, &mut nonce);
        for account in &accounts {
            let delegate = KeyHash::from_base58(&account.public_key.hash().to_b58check()).unwrap();
            assert_eq!(host.voting_power(&delegate), each);
        }
        assert_eq!(host.total_voting_power(), total);
        // Not a delegate: no power.
        let stranger = KeyHash::from_base58("tz1burnburnburnburnburnburnburjAYjjX").unwrap();
        assert_eq!(host.voting_power(&stranger), 0);
    }
}
