//! A local Tezos node for testing contracts and dapps: the chain state in Kestrel's context store
//! (one commit per block, the header's `context` the commit's Tezos context hash), a block per
//! injected operation (validated and applied by `kestrel-protocol` before the injection answers),
//! and Octez's RPC, as a transport-free router and over HTTP/1.1, so that Taquito, pytezos and
//! octez-client drive it unmodified (`shared/specs/tezos-node.md`).
//!
//! Map: [`accounts`] (sandbox and generated accounts), [`block`] (headers, hashes, block JSON),
//! [`block_log`] (the blocks file, recent blocks in memory),
//! [`chain`] (state, history, block production, snapshots, time), [`mempool`] (operations
//! waiting for a timed block), [`rpc`] (the router; `rpc::kestrel` the `kestrel_*` methods),
//! [`server`] (HTTP), [`state_file`] (state documents), [`views`] (on-chain views run
//! off-chain).

#![forbid(unsafe_code)]

pub mod accounts;
pub mod block;
pub mod block_log;
pub mod chain;
pub mod mempool;
pub mod rpc;
pub mod server;
pub mod state_file;
pub mod views;

pub use accounts::{accounts, Account};
pub use chain::{Chain, ChainConfig, ChainError, DEFAULT_KEEP_BLOCKS};
pub use rpc::{route, Request, Response};
