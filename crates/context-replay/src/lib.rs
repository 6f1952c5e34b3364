//! The context store's replay workload, kept out of the store's library: what measures the store,
//! not what the store is.
//!
//! - [`workload`]: the synthetic Tezos-like workload (specs/context-replay-workload.md) and
//!   [`workload::replay`], which runs it against a [`kestrel_context::Store`] and times each block.
//! - [`trace`]: Irmin's recorded trace format (docs/formats/trace-format.md): reading, writing a
//!   synthetic one, and replaying one against a store.
//!
//! Only the store's public API is used, so anything here could run against another store.

#![forbid(unsafe_code)]

pub mod trace;
pub mod workload;
