//! The world a script runs in: amounts, time, addresses, the contracts and big maps assumed to
//! exist, views, and the counters the run advances (operation nonces, fresh big map ids).
//!
//! TZT's optional toplevel primitives and `run script`'s options fill it (`specs/michelson.rst`,
//! "TZT ... Optional primitives").

use crate::int::Int;
use crate::literals::{Address, Destination};
use crate::types::Type;
use crate::value::Value;
use kestrel_micheline::Node;
use std::collections::BTreeMap;

/// A big map stored in the context.
pub struct StoredBigMap {
    /// Key type.
    pub key_type: Type,
    /// Value type.
    pub value_type: Type,
    /// Contents.
    pub contents: BTreeMap<Value, Value>,
}

/// A view of another contract (TZT `views`).
pub struct StoredView {
    /// The view's name.
    pub name: String,
    /// Input type.
    pub input_type: Type,
    /// Output type.
    pub output_type: Type,
    /// The code node.
    pub code: Node,
}

/// Another contract assumed to exist.
pub struct OtherContract {
    /// Its parameter type, with field annotations (entrypoints).
    pub param: Node,
    /// Its storage type and value, if known (for views).
    pub storage: Option<(Type, Value)>,
    /// Its views.
    pub views: Vec<StoredView>,
    /// Its balance in mutez.
    pub balance: i64,
}

/// The execution context.
pub struct Context {
    /// `AMOUNT`, mutez.
    pub amount: i64,
    /// `BALANCE`, mutez.
    pub balance: i64,
    /// `NOW`, seconds since the epoch.
    pub now: Int,
    /// `LEVEL`.
    pub level: u64,
    /// `MIN_BLOCK_TIME`, seconds.
    pub min_block_time: u64,
    /// `SENDER`.
    pub sender: Address,
    /// `SOURCE`.
    pub source: Address,
    /// `SELF_ADDRESS`.
    pub self_address: Address,
    /// `CHAIN_ID`.
    pub chain_id: [u8; 4],
    /// The parameter type of the running contract, annotated (for `SELF` and entrypoints).
    pub self_param: Node,
    /// Other contracts assumed to exist.
    pub contracts: BTreeMap<Destination, OtherContract>,
    /// Big maps stored in the context, by id.
    pub big_maps: BTreeMap<Int, StoredBigMap>,
    /// The next fresh big map id.
    pub next_big_map_id: i64,
    /// The next operation nonce.
    pub next_nonce: u64,
    /// `VOTING_POWER` per key hash, and the total.
    pub voting_powers: BTreeMap<crate::literals::KeyHash, u64>,
    /// `TOTAL_VOTING_POWER`.
    pub total_voting_power: u64,
    /// The counter origination addresses are derived from.
    pub origination_index: u32,
    /// The address registry of `INDEX_ADDRESS` (index by address, entrypoints ignored).
    pub address_registry: BTreeMap<Destination, u64>,
    /// Whether deprecated instructions are accepted (Octez's legacy mode).
    pub legacy: bool,
    /// Gas available, milligas.
    pub gas_limit_milli: i64,
}

/// TZT's default `sender`/`source`.
pub const DEFAULT_SENDER: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
/// TZT's default `self`.
pub const DEFAULT_SELF: &str = "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi";
/// The address the TZT environment's registry holds at index 0.
pub const REGISTERED_ADDRESS: &str = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";
/// TZT's default `chain_id`.
pub const DEFAULT_CHAIN_ID: &str = "NetXdQprcVkpaWU";
/// Octez's `hard_gas_limit_per_operation`: 1,040,000 gas.
pub const HARD_GAS_LIMIT_PER_OPERATION: i64 = 1_040_000;

impl Default for Context {
    fn default() -> Context {
        let parse = |text: &str| Address::from_string(text).expect("constant address is valid");
        Context {
            amount: 0,
            balance: 0,
            now: Int::ZERO,
            level: 0,
            min_block_time: 0,
            sender: parse(DEFAULT_SENDER),
            source: parse(DEFAULT_SENDER),
            self_address: parse(DEFAULT_SELF),
            chain_id: crate::literals::chain_id_from_base58(DEFAULT_CHAIN_ID)
                .expect("constant chain id is valid"),
            self_param: Node::prim(kestrel_micheline::Prim::T_unit, vec![]),
            contracts: BTreeMap::new(),
            big_maps: BTreeMap::new(),
            next_big_map_id: 0,
            next_nonce: 0,
            voting_powers: BTreeMap::new(),
            total_voting_power: 0,
            origination_index: 0,
            gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION * 1000,
            legacy: false,
            address_registry: BTreeMap::from([(parse(REGISTERED_ADDRESS).destination, 0)]),
        }
    }
}
