//! The boundary between the VM and the world it runs in (DESIGN.md, "michelson knows nothing of
//! the store"): the [`Environment`] of one call (what `AMOUNT`, `NOW`, `SENDER`... push), the
//! [`Config`] of a run (legacy mode, gas limit), and the [`Host`] trait through which the VM reads
//! the chain's state lazily — one big-map key at a time, one contract's type or view at a time —
//! and obtains fresh identifiers.
//!
//! The protocol layer implements [`Host`] over a context tree; the conformance runners
//! (`kestrel-michelson-conformance`) over their fixtures. A host must answer consistently for
//! the duration of one [`crate::execute`]: the VM may ask twice for the same key.

use crate::int::Int;
use crate::literals::{Address, Destination, KeyHash};
use crate::types::Type;
use kestrel_micheline::Node;

/// Octez's `hard_gas_limit_per_operation` (protocol 025 constants): 1,040,000 gas.
pub const HARD_GAS_LIMIT_PER_OPERATION: u64 = 1_040_000;
/// The same limit in milligas, the unit every gas figure of this crate is in.
pub const HARD_GAS_LIMIT_PER_OPERATION_MILLI: u64 = HARD_GAS_LIMIT_PER_OPERATION * 1000;

/// What the instructions that read the call's context push: `AMOUNT`, `BALANCE`, `NOW`, `LEVEL`,
/// `MIN_BLOCK_TIME`, `SOURCE`, `SENDER`, `SELF_ADDRESS`, `CHAIN_ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// `AMOUNT`: mutez transferred with the call.
    pub amount_mutez: i64,
    /// `BALANCE`: the running contract's balance, mutez, the amount included.
    pub balance_mutez: i64,
    /// `NOW`: the block's timestamp, seconds since the epoch.
    pub now_seconds: i64,
    /// `LEVEL`: the block's level.
    pub level: u64,
    /// `MIN_BLOCK_TIME`: seconds.
    pub min_block_time_seconds: u64,
    /// `SOURCE`: the implicit account that signed the operation.
    pub source: Address,
    /// `SENDER`: the account or contract that made this call.
    pub sender: Address,
    /// `SELF_ADDRESS`: the running contract.
    pub self_address: Address,
    /// `CHAIN_ID`: the chain's 4-byte id.
    pub chain_id: [u8; 4],
}

/// TZT's default `sender` and `source` (`specs/michelson.rst`, "TZT ... Optional primitives").
pub const DEFAULT_SENDER: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
/// TZT's default `self`.
pub const DEFAULT_SELF: &str = "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi";
/// TZT's default `chain_id` (Tezos mainnet's).
pub const DEFAULT_CHAIN_ID: &str = "NetXdQprcVkpaWU";

impl Default for Environment {
    /// TZT's defaults: zero amounts, time and level, the default addresses and mainnet's chain id.
    fn default() -> Environment {
        let parse = |text: &str| Address::from_string(text).expect("constant address is valid");
        Environment {
            amount_mutez: 0,
            balance_mutez: 0,
            now_seconds: 0,
            level: 0,
            min_block_time_seconds: 0,
            source: parse(DEFAULT_SENDER),
            sender: parse(DEFAULT_SENDER),
            self_address: parse(DEFAULT_SELF),
            chain_id: crate::literals::chain_id_from_base58(DEFAULT_CHAIN_ID)
                .expect("constant chain id is valid"),
        }
    }
}

/// How a script is typechecked and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Octez's legacy mode: accept deprecated instructions and types (contracts originated
    /// under earlier protocols run in it).
    pub legacy: bool,
    /// Milligas available to typechecking and, in [`crate::execute`], to parsing the data and
    /// running the code.
    pub gas_limit_milli: u64,
}

impl Default for Config {
    /// Current mode, the operation gas limit.
    fn default() -> Config {
        Config {
            legacy: false,
            gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        }
    }
}

/// A view of another contract, as `VIEW` needs it: its types, its code and the callee's state.
#[derive(Debug, Clone)]
pub struct HostView {
    /// The view's input type.
    pub input_type: Type,
    /// The view's output type.
    pub output_type: Type,
    /// The view's code, macros expanded.
    pub code: Node,
    /// The callee's storage type.
    pub storage_type: Type,
    /// The callee's storage (any Micheline form; the VM typechecks it).
    pub storage: Node,
    /// The callee's balance, mutez (`BALANCE` inside the view).
    pub balance_mutez: i64,
}

/// A stored big map's key and value types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigMapTypes {
    /// The key type.
    pub key_type: Type,
    /// The value type.
    pub value_type: Type,
}

/// What a read of the host's store gave, and the milligas the store charges for it (Octez's
/// carbonated storage accesses, `Storage_costs.read_access`, which depend on the store's
/// layout; a host without a carbonated store charges 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRead<T> {
    /// What was read.
    pub value: T,
    /// Milligas the store charges for the access.
    pub cost_milli: u64,
}

impl<T> StoredRead<T> {
    /// A read the store charges nothing for.
    pub fn free(value: T) -> StoredRead<T> {
        StoredRead {
            value,
            cost_milli: 0,
        }
    }
}

/// The chain's state as the VM reads it, and the identifiers it hands out. Reads are lazy: a
/// big map is read one key at a time, by the key's hash (`Script_expr_hash` of the packed key,
/// see [`crate::big_map_key_hash`]).
pub trait Host {
    /// The key and value types of stored big map `id`, if it exists, with what the store
    /// charges to find them (`Big_map.exists`).
    fn big_map_types(&self, id: &Int) -> StoredRead<Option<BigMapTypes>>;
    /// The value bound in stored big map `id` to the key whose hash is `key_hash`, as Micheline
    /// (the VM typechecks it against the map's value type and charges its deserialization,
    /// `Script_repr.deserialized_cost`), with what the store charges to look the key up and
    /// read the value (`Big_map.get_opt`'s carbonated `find`).
    fn big_map_value(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<Option<Node>>;
    /// Whether stored big map `id` binds the key whose hash is `key_hash` (`MEM` reads no
    /// value), with what the store charges to look it up (`Big_map.mem`).
    fn big_map_mem(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<bool>;
    /// The parameter type, with its entrypoint annotations, of contract `contract` (for
    /// `CONTRACT` and `contract` literals); `None` if no such contract exists. Implicit accounts
    /// need no answer.
    fn contract_parameter(&self, contract: &Destination) -> Option<Node>;
    /// View `name` of contract `contract`, with the callee's storage and balance.
    fn view(&self, contract: &Destination, name: &str) -> Option<HostView>;
    /// `VOTING_POWER` of a delegate.
    fn voting_power(&self, delegate: &KeyHash) -> u64;
    /// `TOTAL_VOTING_POWER`.
    fn total_voting_power(&self) -> u64;
    /// `GET_ADDRESS_INDEX`: the index of `address` in the address registry, if it has one.
    fn address_index(&self, address: &Destination) -> Option<u64>;
    /// `INDEX_ADDRESS`: the index of `address`, registering it if it has none.
    fn index_address(&mut self, address: &Destination) -> u64;
    /// A fresh big map id (for big maps the run leaves in its storage without one).
    fn fresh_big_map_id(&mut self) -> Int;
    /// A fresh temporary big map id, negative (Octez's `Lazy_storage_kind.Temp_ids`): the big
    /// maps an emitted transfer or origination carries live under one until the operation that
    /// emitted them ends.
    fn fresh_temporary_big_map_id(&mut self) -> Int;
    /// The address of the next contract `CREATE_CONTRACT` originates (Octez derives it from the
    /// operation hash and the origination nonce, which the host owns).
    fn fresh_contract_address(&mut self) -> Destination;
}

/// The identifiers a host hands out: fresh big map ids counted from a first one, temporary ones
/// from -1 down, and placeholder
/// origination addresses ([`placeholder_contract_address`]) counted from 0.
#[derive(Debug, Default, Clone)]
pub struct FreshIds {
    next_big_map_id: i64,
    temporary_big_maps: i64,
    origination_index: u32,
}

impl FreshIds {
    /// Big map ids from `first_big_map_id`.
    pub fn new(first_big_map_id: i64) -> FreshIds {
        FreshIds {
            next_big_map_id: first_big_map_id,
            temporary_big_maps: 0,
            origination_index: 0,
        }
    }

    /// The next temporary big map id: -1, -2, ...
    pub fn temporary_big_map_id(&mut self) -> Int {
        self.temporary_big_maps += 1;
        Int::from(-self.temporary_big_maps)
    }

    /// The next big map id.
    pub fn big_map_id(&mut self) -> Int {
        let id = Int::from(self.next_big_map_id);
        self.next_big_map_id += 1;
        id
    }

    /// The next origination address.
    pub fn contract_address(&mut self) -> Destination {
        let index = self.origination_index;
        self.origination_index += 1;
        placeholder_contract_address(index)
    }
}

/// A host with nothing in it: no contracts, big maps or votes; fresh ids count from 0. Enough to
/// typecheck a script or data that names no stored state.
#[derive(Debug, Default, Clone)]
pub struct EmptyHost {
    fresh: FreshIds,
    registry: Vec<Destination>,
}

impl Host for EmptyHost {
    fn big_map_types(&self, _: &Int) -> StoredRead<Option<BigMapTypes>> {
        StoredRead::free(None)
    }
    fn big_map_value(&self, _: &Int, _: &[u8; 32]) -> StoredRead<Option<Node>> {
        StoredRead::free(None)
    }
    fn big_map_mem(&self, _: &Int, _: &[u8; 32]) -> StoredRead<bool> {
        StoredRead::free(false)
    }
    fn contract_parameter(&self, _: &Destination) -> Option<Node> {
        None
    }
    fn view(&self, _: &Destination, _: &str) -> Option<HostView> {
        None
    }
    fn voting_power(&self, _: &KeyHash) -> u64 {
        0
    }
    fn total_voting_power(&self) -> u64 {
        0
    }
    fn address_index(&self, address: &Destination) -> Option<u64> {
        self.registry
            .iter()
            .position(|known| known == address)
            .map(|index| index as u64)
    }
    fn index_address(&mut self, address: &Destination) -> u64 {
        match self.address_index(address) {
            Some(index) => index,
            None => {
                self.registry.push(*address);
                self.registry.len() as u64 - 1
            }
        }
    }
    fn fresh_big_map_id(&mut self) -> Int {
        self.fresh.big_map_id()
    }
    fn fresh_temporary_big_map_id(&mut self) -> Int {
        self.fresh.temporary_big_map_id()
    }
    fn fresh_contract_address(&mut self) -> Destination {
        self.fresh.contract_address()
    }
}

/// A stand-in for Octez's originated addresses (which hash the operation's hash with the
/// origination index): a stable hash of the index alone, for hosts with no operation.
pub fn placeholder_contract_address(origination_index: u32) -> Destination {
    Destination::Originated(kestrel_crypto::hash::blake2b_160(
        &origination_index.to_be_bytes(),
    ))
}
