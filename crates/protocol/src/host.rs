//! The Michelson VM's [`Host`] over the [`Ledger`]: a running contract reads big-map values one
//! key at a time, other contracts' parameter types (for `CONTRACT`) and views, and gets fresh
//! big-map ids (`big_maps/next`) and origination addresses (the operation's origination nonce).
//!
//! `Host`'s methods cannot fail, so a ledger error is kept ([`LedgerHost::take_error`]) and
//! answered as "absent"; the caller checks for it after the run and fails the operation. Reads
//! Octez pays gas for outside the interpreter (another contract's code, for `CONTRACT` and
//! `contract` values) are added up in [`LedgerHost::charged_milli`] for the caller to charge.

use kestrel_micheline::{Node, NodeKind, Prim};
use kestrel_michelson::{BigMapTypes, Destination, Host, HostView, Int, KeyHash};

use std::cell::Cell;
use std::sync::Arc;

use crate::apply::{cached_parameter_type, stored_code_read_milli, OriginationNonce};
use crate::ledger::{Ledger, LedgerError};

/// The ledger as a running contract sees it.
pub struct LedgerHost<'a> {
    ledger: &'a mut Ledger,
    nonce: &'a mut OriginationNonce,
    error: Option<LedgerError>,
    charged_milli: Cell<u64>,
}

impl<'a> LedgerHost<'a> {
    /// A host over `ledger`, originating contracts from `nonce`.
    pub fn new(ledger: &'a mut Ledger, nonce: &'a mut OriginationNonce) -> LedgerHost<'a> {
        LedgerHost {
            ledger,
            nonce,
            error: None,
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
            self.error.get_or_insert(error);
            None
        })
    }

    fn code_bytes_of(&self, contract: &Destination) -> Result<Option<Arc<[u8]>>, LedgerError> {
        match contract.to_crypto() {
            kestrel_crypto::Destination::Originated(hash) => self.ledger.script_bytes(&hash),
            _ => Ok(None),
        }
    }
}

impl Host for LedgerHost<'_> {
    fn big_map_types(&self, id: &Int) -> Option<BigMapTypes> {
        let (key, value) = self.ledger.big_map_types(id.to_i64()?).ok()??;
        Some(BigMapTypes {
            key_type: kestrel_michelson::parse_type(&key).ok()?,
            value_type: kestrel_michelson::parse_type(&value).ok()?,
        })
    }

    fn big_map_value(&self, id: &Int, key_hash: &[u8; 32]) -> Option<Node> {
        self.ledger.big_map_get(id.to_i64()?, key_hash).ok()?
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

    fn voting_power(&self, _: &KeyHash) -> u64 {
        0
    }

    fn total_voting_power(&self) -> u64 {
        0
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
