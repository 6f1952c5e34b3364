//! The ingest stage of a Solana block producer: packets in, batches of the most valuable
//! non-conflicting transactions out, within the block's compute limits.
//!
//! Spec: `../shared/specs/solana-block-production-ingest.md`. Pipeline: a packet is copied once into
//! the packet arena and framed and sanitized there by `kestrel-txview` (no allocation per
//! transaction); a transaction whose first signature was already accepted is a duplicate; signatures
//! are checked in batches spread over the stage's verify pool; the compute budget is read with
//! Agave's rules; cost and priority follow Agave's cost model; the scheduler hands conflict-free
//! batches to workers.
//!
//! Module map: `limits` (constants), `program_id` (builtins, precompiles, reserved keys),
//! `compute_budget`, `cost`, `system_program` (durable-nonce marker, account allocations),
//! `packet_arena`, `dedup`, `verify_pool` (the stage's threads), `prefetch` (a cache hint) and
//! `huge_pages` (a page-size hint for the large tables), the crate's two `unsafe` blocks,
//! `accounts` (interned accounts and their locks), `scheduler` (container and batches), `stage`
//! (the pipeline that ties them).

// `unsafe` is denied (workspace lints) except in `prefetch` and `huge_pages`, hints to the
// processor and the kernel.

mod accounts;
mod compute_budget;
mod cost;
mod dedup;
mod huge_pages;
pub mod limits;
mod packet_arena;
mod prefetch;
pub mod program_id;
mod radix;
mod scheduler;
mod stage;
mod system_program;
mod verify_pool;

pub use compute_budget::{
    priority_fee_lamports, ComputeBudgetError, ComputeBudgetLimits, InstructionDetails,
    PrecompileSignatureCounts,
};
pub use cost::{is_simple_vote, priority, reward_lamports, TransactionCost};
pub use scheduler::{
    Batch, BlockLimits, DropReason, InsertError, Inserted, Scheduler, SchedulerConfig,
    SchedulerCounts, TransactionId, TransactionMeta,
};
pub use stage::{
    AddressTableSource, BlockhashSource, IngestSummary, LookupError, NoAddressTables, RejectReason,
    Stage, StageConfig,
};
