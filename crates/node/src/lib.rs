//! A local Tezos node for testing contracts and dapps: the chain state in Kestrel's context store
//! (one commit per block, the header's `context` the commit's Tezos context hash), a block per
//! injected operation (validated and applied by `kestrel-protocol` before the injection answers),
//! and Octez's RPC, as a transport-free router and over HTTP/1.1, so that Taquito, pytezos and
//! octez-client drive it unmodified (`shared/specs/tezos-node.md`).
//!
//! Map: [`accounts`] (sandbox and generated accounts), [`block`] (headers, hashes, block JSON),
//! [`chain`] (state, history, block production), [`rpc`] (the router), [`server`] (HTTP), [`views`] (on-chain views run off-chain).

#![forbid(unsafe_code)]

pub mod accounts;
pub mod block;
pub mod chain;
pub mod rpc;
pub mod server;
pub mod views;

pub use accounts::{accounts, Account};
pub use chain::{Chain, ChainConfig, ChainError};
pub use rpc::{route, Request, Response};
