//! The context store: chain state as a Merkle tree of paths to bytes whose hashes are exactly the
//! Tezos context hashes, persisted in one append-only pack file with an index of commits only.
//!
//! - [`hash`]: the Tezos context hash encodings (tezos-context-hash-SPEC.md).
//! - [`Tree`]: immutable trees with structural sharing (`find`, `add`, `remove`, `copy`, ...).
//! - [`Store`]: the pack file, commit index and control file, and the prefix and mapping files
//!   a GC moves the live objects below its kept commit into (docs/formats/*.md); the only
//!   library code in Kestrel that does file I/O.
//! - [`leb128`]: the unsigned LEB128 integers of the pack format (also Irmin's trace format's,
//!   read by the replay crate, `kestrel-context-replay`).
//!
//! The replay workload and Irmin's trace format live in `kestrel-context-replay`.

#![forbid(unsafe_code)]

pub mod cache;
mod census;
mod compact;
mod control;
pub mod error;
mod gc;
pub mod hash;
pub mod leb128;
mod node;
pub mod ocaml_hash;
pub mod pack;
mod prefix;
mod runs;
mod store;
/// The store's file names and the index and mapping formats' constants
/// (docs/formats/control-file.md).
pub mod store_constants {
    pub use crate::prefix::{
        MAPPING_CHECKSUM_BYTES, MAPPING_CHECKSUM_PIECE_RUNS, MAPPING_FILE_STEM,
        MAPPING_HEADER_BYTES, MAPPING_MAGIC, MAPPING_RUN_BYTES, MAPPING_VERSION, PREFIX_FILE_STEM,
    };
    pub use crate::store::{
        CHECKPOINT_INTERVAL_COMMITS, CONTROL_FILE_NAME, INDEX_FILE_NAME, INDEX_HEADER_BYTES,
        INDEX_MAGIC, INDEX_RECORD_BYTES, INDEX_VERSION, PACK_FILE_NAME,
    };
}
mod tree;
mod verify;
mod walk;
mod writer;

pub use census::{Census, RecordCost};
pub use control::{
    ControlRecord, CONTROL_BYTES, CONTROL_FLAG_PREFIX, CONTROL_MAGIC, CONTROL_V1_BYTES,
    CONTROL_VERSION,
};
pub use error::{ContextError, CorruptionKind, StoreFile};
pub use gc::{GcPolicy, GcReport, GcStep, GC_PAGE_BYTES};
pub use hash::{CommitInfo, ContextHash, Kind};
pub use node::{
    InMemory, NodeObject, ObjectSource, FLAT_SPLIT_MIN_ENTRIES, INLINE_CONTENTS_MAX_BYTES,
    INODE_DEPTH_MAX,
};
pub use store::*;
pub use tree::Tree;
pub use verify::{VerifyReport, VerifyScope};
