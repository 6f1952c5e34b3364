//! Limits and unit costs of Solana block production, each citing its source. Derived values are
//! computed from the ones they follow from.
//!
//! Sources: `solana-cost-model` 4.0.0 `block_cost_limits.rs` (costs, block limits),
//! `solana-compute-budget` 4.0.0 `compute_budget_limits.rs` (compute-budget defaults and bounds),
//! `solana-fee-structure` (memory cost pages), Agave's banking stage (batch size, look-ahead
//! window, container size, account lock limit), `solana-block-production-ingest.md`.

/// Compute units per microsecond of execution time the cost model assumes.
pub const COMPUTE_UNIT_TO_US_RATIO: u64 = 30;
/// Cost of one transaction signature (`SIGNATURE_COST`).
pub const SIGNATURE_COST: u64 = COMPUTE_UNIT_TO_US_RATIO * 24;
/// Cost of one signature checked by the secp256k1 precompile (`SECP256K1_VERIFY_COST`).
pub const SECP256K1_VERIFY_COST: u64 = COMPUTE_UNIT_TO_US_RATIO * 223;
/// Cost of one signature checked by the ed25519 precompile (`ED25519_VERIFY_STRICT_COST`).
pub const ED25519_VERIFY_STRICT_COST: u64 = COMPUTE_UNIT_TO_US_RATIO * 80;
/// Cost of one signature checked by the secp256r1 precompile (`SECP256R1_VERIFY_COST`).
pub const SECP256R1_VERIFY_COST: u64 = COMPUTE_UNIT_TO_US_RATIO * 160;
/// Cost of one write lock (`WRITE_LOCK_UNITS`).
pub const WRITE_LOCK_UNITS: u64 = COMPUTE_UNIT_TO_US_RATIO * 10;
/// Instruction data bytes per compute unit (`INSTRUCTION_DATA_BYTES_COST`: 140 bytes per µs).
pub const INSTRUCTION_DATA_BYTES_COST: u64 = 140 / COMPUTE_UNIT_TO_US_RATIO;

/// Compute units per block (`MAX_BLOCK_UNITS_SIMD_0256`).
pub const MAX_BLOCK_UNITS: u64 = 60_000_000;
/// Compute units per writable account per block in current Agave (`solana-block-production-
/// ingest.md` §1; the cost-model crate's constant is 12 M, which the bank raises by feature).
pub const MAX_WRITABLE_ACCOUNT_UNITS: u64 = 24_000_000;
/// Account data growth per block, in bytes (`MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA`).
pub const MAX_BLOCK_ACCOUNTS_DATA_SIZE_DELTA: u64 = 100_000_000;
/// Largest account data one instruction may allocate (`solana-system-interface`
/// `MAX_PERMITTED_DATA_LENGTH`, 10 MiB).
pub const MAX_PERMITTED_DATA_LENGTH: u64 = 10 * 1024 * 1024;
/// Largest account data one transaction may allocate
/// (`MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION`, twice the per-instruction limit).
pub const MAX_PERMITTED_ACCOUNTS_DATA_ALLOCATIONS_PER_TRANSACTION: u64 =
    2 * MAX_PERMITTED_DATA_LENGTH;
/// Most bytes the cost model reads when it decodes a System instruction (`limited_deserialize`
/// with `PACKET_DATA_SIZE`).
pub const PACKET_DATA_SIZE: usize = kestrel_txview::limits::PACKET_DATA_SIZE;
/// Compute units of the vote program's instruction (`DEFAULT_COMPUTE_UNITS` of the vote program).
pub const VOTE_PROGRAM_COMPUTE_UNITS: u64 = 2_100;
/// Fixed cost of a simple vote transaction (`solana-cost-model` `SIMPLE_VOTE_USAGE_COST`): one
/// signature, two write locks, the vote instruction and one page of loaded account data.
pub const SIMPLE_VOTE_USAGE_COST: u64 =
    SIGNATURE_COST + 2 * WRITE_LOCK_UNITS + VOTE_PROGRAM_COMPUTE_UNITS + DEFAULT_HEAP_COST;

/// Largest compute-unit limit a transaction may have (`MAX_COMPUTE_UNIT_LIMIT`).
pub const MAX_COMPUTE_UNIT_LIMIT: u32 = 1_400_000;
/// Default compute units of a non-builtin instruction (`DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT`).
pub const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT: u32 = 200_000;
/// Default compute units of a builtin instruction (`MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT`).
pub const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT: u32 = 3_000;
/// Smallest and default heap frame (`MIN_HEAP_FRAME_BYTES`).
pub const MIN_HEAP_FRAME_BYTES: u32 = 32 * 1024;
/// Largest heap frame (`MAX_HEAP_FRAME_BYTES`).
pub const MAX_HEAP_FRAME_BYTES: u32 = 256 * 1024;
/// Heap frames are requested in multiples of this (`sanitize_requested_heap_size`).
pub const HEAP_FRAME_GRANULARITY_BYTES: u32 = 1024;
/// Default and largest loaded-accounts data size (`MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES`, 64 MiB).
pub const MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES: u32 = 64 * 1024 * 1024;
/// Bytes per page of loaded account data (`ACCOUNT_DATA_COST_PAGE_SIZE`).
pub const ACCOUNT_DATA_COST_PAGE_SIZE: u64 = 32 * 1024;
/// Compute units per page of loaded account data (`DEFAULT_HEAP_COST`).
pub const DEFAULT_HEAP_COST: u64 = 8;

/// Lamports per signature (`DEFAULT_TARGET_LAMPORTS_PER_SIGNATURE` / 2, the mainnet fee rate).
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;
/// Percent of the signature fee burned (`DEFAULT_BURN_PERCENT`); the leader keeps the rest.
pub const BURN_PERCENT: u64 = 50;
/// Micro-lamports per lamport: compute-unit prices are in micro-lamports.
pub const MICRO_LAMPORTS_PER_LAMPORT: u64 = 1_000_000;
/// Multiplier of Agave's priority `reward × 1,000,000 / (cost + 1)`.
pub const PRIORITY_MULTIPLIER: u64 = 1_000_000;

/// Most accounts a transaction may lock (`MAX_TX_ACCOUNT_LOCKS`; Agave's `validate_account_locks`).
pub const MAX_TX_ACCOUNT_LOCKS: usize = 64;
/// Most transactions in one batch handed to a worker (Agave's `TARGET_NUM_TRANSACTIONS_PER_BATCH`).
pub const MAX_BATCH_TRANSACTIONS: usize = 64;
/// Transactions the container holds by default (Agave's `TOTAL_BUFFERED_PACKETS`).
pub const DEFAULT_CONTAINER_CAPACITY: usize = 100_000;
/// Slots a blockhash stays valid (`MAX_PROCESSING_AGE`).
pub const MAX_PROCESSING_AGE_SLOTS: u64 = 150;

const _: () = assert!(SIGNATURE_COST == 720);
const _: () = assert!(WRITE_LOCK_UNITS == 300);
const _: () = assert!(SIMPLE_VOTE_USAGE_COST == 3_428);
const _: () = assert!(PACKET_DATA_SIZE == 1_232);
const _: () = assert!(INSTRUCTION_DATA_BYTES_COST == 4);
const _: () = assert!(MAX_WRITABLE_ACCOUNT_UNITS <= MAX_BLOCK_UNITS);
const _: () = assert!(MAX_COMPUTE_UNIT_LIMIT as u64 <= MAX_WRITABLE_ACCOUNT_UNITS);
