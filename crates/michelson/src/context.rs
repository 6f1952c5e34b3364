//! The state of one run inside the VM: the [`crate::Environment`]'s values as the instructions read
//! them (a view call swaps `SELF`, `SENDER`, `BALANCE` and `AMOUNT` for its duration), the running
//! contract's parameter type, the [`Host`], and the counters the run advances (operation nonces).
//!
//! [`Lookup`] is the read-only part the typechecker needs (for `SELF`, `contract` literals and big
//! map ids), borrowed from a [`Context`] or built over a host alone.

use crate::host::{Environment, Host};
use crate::int::Int;
use crate::literals::Address;
use kestrel_micheline::Node;

/// One run's context.
pub(crate) struct Context<'h> {
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
    pub self_param: &'h Node,
    /// The world.
    pub host: &'h mut dyn Host,
    /// The next operation nonce.
    pub next_nonce: u64,
}

impl<'h> Context<'h> {
    /// The context of a call in `environment` of a contract whose parameter type is `self_param`.
    pub fn new(
        environment: &Environment,
        self_param: &'h Node,
        host: &'h mut dyn Host,
    ) -> Context<'h> {
        Context {
            amount: environment.amount_mutez,
            balance: environment.balance_mutez,
            now: Int::from(environment.now_seconds),
            level: environment.level,
            min_block_time: environment.min_block_time_seconds,
            sender: environment.sender.clone(),
            source: environment.source.clone(),
            self_address: environment.self_address.clone(),
            chain_id: environment.chain_id,
            self_param,
            host,
            next_nonce: 0,
        }
    }

    /// What the typechecker may read.
    pub fn lookup(&self) -> Lookup<'_> {
        Lookup {
            self_address: &self.self_address,
            self_param: self.self_param,
            host: &*self.host,
        }
    }
}

/// What the typechecker reads of the world: the running contract's address and parameter type,
/// and the host (other contracts' types, stored big maps).
#[derive(Clone, Copy)]
pub(crate) struct Lookup<'a> {
    /// `SELF_ADDRESS`.
    pub self_address: &'a Address,
    /// The running contract's parameter type, annotated.
    pub self_param: &'a Node,
    /// The world.
    pub host: &'a dyn Host,
}

/// Calls `f` with a lookup over an [`crate::host::EmptyHost`]: no contracts, no big maps, `SELF`
/// of type `unit` at TZT's default address (for data that names no stored state).
pub(crate) fn with_empty_lookup<R>(f: impl FnOnce(Lookup<'_>) -> R) -> R {
    let host = crate::host::EmptyHost::default();
    let self_param = Node::prim(kestrel_micheline::Prim::T_unit, vec![]);
    with_default_self_address(|self_address| {
        f(Lookup {
            self_address,
            self_param: &self_param,
            host: &host,
        })
    })
}

/// Calls `f` with TZT's default `SELF` address ([`Environment::default`]).
pub(crate) fn with_default_self_address<R>(f: impl FnOnce(&Address) -> R) -> R {
    thread_local! {
        // Decoded once per thread: unparsing lambdas and typechecking scripts ask for it every
        // time, and a base58check decode (SHA-256 twice) was a noticeable part of that work.
        static DEFAULT_SELF_ADDRESS: Address = Environment::default().self_address;
    }
    DEFAULT_SELF_ADDRESS.with(|self_address| f(self_address))
}
