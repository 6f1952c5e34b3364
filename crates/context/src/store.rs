//! The store: one append-only pack file (`store.pack`), an index of commit hashes only
//! (`store.index`) and a control file replaced atomically (`store.control`). Formats:
//! docs/formats/pack-file.md and docs/formats/control-file.md.
//!
//! A commit writes the new objects of its tree (children before parents, each pointing to its
//! children by offset, by height level: each level is handed to a writer thread once hashed,
//! [`crate::writer`]), then the commit object sealed with a checksum of everything written since
//! the previous commit, and waits for the writer; with [`SyncMode::EveryCommit`] one `fdatasync`
//! follows. Only
//! then does `commit` return: the commit survives the process being killed (and, with
//! `EveryCommit`, a power loss). Every [`CHECKPOINT_INTERVAL_COMMITS`] commits (on a thread of
//! its own, while the next blocks run) and on [`Store::close`], the pack and index are synced and
//! the control file replaced. Opening reads the
//! control file, trusts the pack and index up to its lengths, and scans the pack beyond that,
//! keeping every commit whose checksum holds and cutting off the rest: a crash at any point loses
//! no commit that `commit` returned.
//!
//! Stored objects are loaded on demand through a bounded object cache keyed by offset
//! ([`crate::cache`]; two generations by default). The last commit's tree is kept in memory until
//! [`StoreOptions::retained_written_bytes_max`] bytes were written since it began to be kept.
//! An update takes the stored directories on its path out of the cache
//! ([`ObjectSource::load_node_for_update`]): the versions it replaces are not read again by the
//! next block, and an object nobody else holds is changed in place rather than copied.
//! A `Store` is used from one thread (its cache sits in a `RefCell`); its checkpoints and its
//! garbage collection ([`crate::gc`]) run on threads of their own, which it joins.
//!
//! A writer holds an exclusive `flock` on the store directory while open (a second writer gets
//! [`ContextError::InUse`] before touching anything); [`Store::open_read_only`] takes none and
//! never writes. A directory whose pack or index holds data is never created afresh.

use crate::cache::{encode_trace_record, CachePolicy, MixMap, ObjectCache, TraceEvent};
use crate::control::{ControlRecord, CONTROL_BYTES};
use crate::error::{ContextError, CorruptionKind, StoreFile};
use crate::gc::{GcJob, GcPolicy, GcReport, GcStep, Marked, Punched};
use crate::hash::INODE_ENTRIES_MAX;
use crate::hash::{commit_hash, ContextHash, HASH_BYTES};
use crate::node::{
    ensure_hash, ensure_hash_by_level, flat_parts_empty, for_each_memory_child, inode_index,
    ContentsBody, Entry, NodeBody, NodeObject, NodeRef, ObjectSource, Value,
    FLAT_SPLIT_MIN_ENTRIES,
};
use crate::pack::{
    self, read_frame_header, CommitRecord, PACK_HEADER_BYTES, TAG_COMMIT, TAG_CONTENTS,
    TAG_FLAT_PART, TAG_FLAT_SPLIT, TAG_INODE_TREE,
};
use crate::prefix::{PackReader, Prefix};
use crate::tree::Tree;
use crate::verify::{CommitToCheck, VerifyReport, VerifyScope};
use crate::walk::{read_frame, read_own_hash};
use crate::writer::{PackWriter, RESERVE_CHUNK_BYTES};
use crate::CommitInfo;
use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The pack file's name inside the store directory.
pub const PACK_FILE_NAME: &str = "store.pack";
/// The index file's name inside the store directory.
pub const INDEX_FILE_NAME: &str = "store.index";
/// The control file's name inside the store directory.
pub const CONTROL_FILE_NAME: &str = "store.control";
/// The temporary name the control file is written under before the rename.
pub const CONTROL_TEMPORARY_NAME: &str = "store.control.tmp";
/// The first 8 bytes of the index file.
pub const INDEX_MAGIC: [u8; 8] = *b"KSTRLIDX";
/// The index format version.
pub const INDEX_VERSION: u32 = 1;
/// Index header: magic 8, version 4, reserved 4.
pub const INDEX_HEADER_BYTES: u64 = 16;
/// Index record: commit hash 32, pack offset 8 (big-endian).
pub const INDEX_RECORD_BYTES: u64 = HASH_BYTES as u64 + 8;
/// Commits between control-file checkpoints: bounds the pack tail a reopen must scan.
pub const CHECKPOINT_INTERVAL_COMMITS: u32 = 256;
/// Default memory budget of the object cache (estimated bytes of decoded objects). 104 MiB since
/// session 7: mimalloc's version 2 and copies of the objects a hit moves back to the young
/// generation ([`crate::cache::CachedValue::relocated`]) left the 150,000-block replay's peak
/// resident memory at 179.7 MB with 100 MiB, where 92 MiB had reached 197.9-199.2 MB before
/// (BENCHMARKS.md, "Session 7"). 92 MiB from session 5 (compact directories) to session 6.
pub const CACHE_BUDGET_BYTES_DEFAULT: usize = 104 << 20;
/// The released retained tree's leaves go to the cache only when the releasing commit wrote at
/// most this fraction of the cache budget (see [`Store::commit`]).
const RELEASED_LEAVES_COMMIT_FRACTION: usize = 4;
/// Estimated bytes of the retained tree per 100 pack bytes written since it began to be kept:
/// measured on the synthetic replay (28.5 MB estimated at the 48 MiB release point, session 5);
/// directories rewritten by several blocks are written each time but held once, so it is an
/// upper bound late in a retention period and about right at its end.
pub const RETAINED_ESTIMATED_PERCENT_OF_WRITTEN: u64 = 60;
/// Default replacement policy of the object cache.
pub const CACHE_POLICY_DEFAULT: CachePolicy = CachePolicy::TwoGenerations;
/// Bytes encoded before they are handed to the writer thread ([`crate::writer`]).
const WRITER_PART_MIN_BYTES: usize = 64 << 10;
/// A commit hands at most about this many bytes to the writer thread (copies); the rest is
/// written by the commit itself.
const WRITER_HANDED_MAX_BYTES: usize = 4 << 20;
/// After a GC, the in-memory commit index gives back its capacity when that is more than this
/// many times its commits (a steady window of commits keeps its capacity; only a large drop
/// shrinks it).
const COMMIT_INDEX_SLACK: usize = 4;

/// Capacity of the write buffer kept between commits: a block writes a few hundred kilobytes.
const WRITE_BUFFER_KEPT_BYTES: usize = 4 << 20;
/// How far ahead of the pack's end zeros are kept written ([`Store::reserve_ahead`]): a few chunks,
/// so that a block larger than the replay's (about 210 KB) still writes into reserved folios.
const RESERVE_AHEAD_BYTES: u64 = 4 * RESERVE_CHUNK_BYTES;
/// When the pack file is synced to disk. Every mode writes a commit's bytes to the OS (one
/// `pwrite`) before `commit` returns, so no mode loses a returned commit when the process is
/// killed (`kill -9`, panic, OOM): the kernel holds the bytes. The modes differ on power loss or a
/// kernel crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// `fdatasync` after every commit: a commit survives a power loss once `commit` returns.
    EveryCommit,
    /// `fdatasync` of the pack and index, and the control file replaced, every
    /// [`CHECKPOINT_INTERVAL_COMMITS`] commits (in the background) and on close; a power loss may
    /// lose the commits since the last completed checkpoint (reopening then finds its state or any later
    /// commit whose bytes reached the disk whole). The default: it is Octez's, whose store
    /// (irmin-pack) has `use_fsync` off by default and syncs only on GC and close.
    Checkpoints,
    /// Never: for tests and fuzzing only. A process crash still loses nothing (the control file
    /// is still replaced by rename); a power loss may lose anything.
    Never,
}

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// When the pack is synced.
    pub sync_mode: SyncMode,
    /// Memory budget of the object cache, in estimated bytes. It also covers the GC's memory: a
    /// collected store's cache gets the budget less the prefix's mapping and, while a GC runs,
    /// less an estimate of the GC's own memory (its new mapping, the mark's runs and frontier:
    /// [`Store`]'s `gc_memory_bytes`), never less than a quarter of it.
    pub cache_budget_bytes: usize,
    /// The object cache's replacement policy.
    pub cache_policy: CachePolicy,
    /// The last commit's tree is kept in memory until this many pack bytes were written since it
    /// began to be kept (then dropped, and kept afresh from the next commit); `None`: half the
    /// cache budget. 0 keeps no tree: every block starts from the pack (through the cache).
    pub retained_written_bytes_max: Option<u64>,
    /// When the retained tree is released, move its leaves (the directories the recent blocks
    /// wrote) into the object cache instead of freeing them. Off by default: it cuts the objects
    /// read by a fifth, but written objects take more memory than their estimate (BENCHMARKS.md,
    /// "Session 5 (cache policy and RSS)").
    pub cache_released_leaves: bool,
    /// Count the retained tree against the cache budget: after each commit the cache's budget is
    /// the budget less an estimate of the retained tree ([`RETAINED_ESTIMATED_PERCENT_OF_WRITTEN`]
    /// of the pack bytes written since it began to be kept, but never below a quarter of the
    /// budget), so that the two together stay near the budget instead of peaking above it when a
    /// large retained tree meets a full cache. Off by default (see BENCHMARKS.md, session 5).
    pub cache_budget_includes_retained: bool,
    /// Diagnostics only: record every object-cache access to this file (format: [`crate::cache`],
    /// 16 bytes per access), for the offline policy simulator. Off by default.
    pub cache_trace: Option<PathBuf>,
    /// Collect garbage by this policy as commits go ([`crate::gc`]); `None` (the default): only
    /// when [`Store::gc`] is called.
    pub gc: Option<GcPolicy>,
    /// Crash tests only: abort the process when a GC reaches this step ([`crate::gc`]), as a
    /// kill there would. `None` (the default) in every other use.
    pub gc_abort_at: Option<GcStep>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sync_mode: SyncMode::Checkpoints,
            cache_budget_bytes: CACHE_BUDGET_BYTES_DEFAULT,
            cache_policy: CACHE_POLICY_DEFAULT,
            retained_written_bytes_max: None,
            cache_released_leaves: false,
            cache_budget_includes_retained: false,
            cache_trace: None,
            gc: None,
            gc_abort_at: None,
        }
    }
}

/// The object cache of a store: the replacement policy ([`crate::cache`]) and, when asked for,
/// the recorded access stream.
struct Cache {
    objects: ObjectCache<Arc<NodeObject>>,
    /// Where the access stream goes (see [`StoreOptions::cache_trace`]); `None` once a write
    /// failed (counted in [`StoreStatistics::cache_trace_failed`]).
    trace: Option<std::io::BufWriter<File>>,
    trace_failed: bool,
}

impl Cache {
    fn record(&mut self, offset: u64, size_bytes: usize, event: TraceEvent) {
        if let Some(trace) = &mut self.trace {
            if trace
                .write_all(&encode_trace_record(offset, size_bytes, event))
                .is_err()
            {
                self.trace = None;
                self.trace_failed = true;
            }
        }
    }

    fn get(&mut self, offset: u64) -> Option<Arc<NodeObject>> {
        let (object, size) = self.objects.get(offset)?;
        self.record(offset, size, TraceEvent::Hit);
        Some(object)
    }

    /// Takes the object at `offset` out of the cache (for an update that replaces it).
    fn remove(&mut self, offset: u64) -> Option<Arc<NodeObject>> {
        match self.objects.take(offset) {
            Some((object, size)) => {
                self.record(offset, size, TraceEvent::TakeHit);
                Some(object)
            }
            None => {
                self.record(offset, 0, TraceEvent::TakeMiss);
                None
            }
        }
    }

    fn insert(&mut self, offset: u64, object: Arc<NodeObject>, size: usize) {
        self.record(offset, size, TraceEvent::MissInserted);
        self.objects.insert(offset, object, size);
    }

    fn contains(&self, offset: u64) -> bool {
        self.objects.contains(offset)
    }

    /// The hash of the inode value or inode tree cached at `offset`, if one is (not a use: the
    /// caller wants the hash, not the object). Any other object there is not answered, so the
    /// record is read and the mismatch reported as it would be without the cache.
    fn peek_inode_hash(&self, offset: u64) -> Option<ContextHash> {
        let object = self.objects.peek(offset)?;
        match object.body {
            NodeBody::Values(_) | NodeBody::CompactValues(_) | NodeBody::Tree { .. } => {
                object.hash.get().copied()
            }
            NodeBody::Flat(_) | NodeBody::CompactFlat(_) => None,
        }
    }

    /// Inserts a written object of the released retained tree (traced as such).
    fn insert_written(&mut self, offset: u64, object: Arc<NodeObject>, size: usize) {
        self.record(offset, size, TraceEvent::InsertWritten);
        self.objects.insert(offset, object, size);
    }

    /// Marks the end of a block in the trace.
    fn commit(&mut self) {
        self.record(0, 0, TraceEvent::Commit);
    }
}

/// Estimated memory of a decoded object, for the cache budget.
fn estimated_size(object: &NodeObject) -> usize {
    // The object, a fixed 64 bytes of overhead (its `Arc` counters, allocator rounding), and
    // the flat-directory extras it holds (most objects hold none).
    let base = std::mem::size_of::<NodeObject>()
        + 64
        + object.extras().map_or(0, |extras| extras.heap_bytes());
    match &object.body {
        NodeBody::Flat(entries) | NodeBody::Values(entries) => {
            base + entries
                .iter()
                .map(|entry| {
                    std::mem::size_of::<Entry>()
                        // Short names are shared through the decoder's interner.
                        + if entry.name.len() > pack::INTERNED_NAME_MAX_BYTES {
                            32 + entry.name.len()
                        } else {
                            0
                        }
                        + match &entry.value {
                            Value::Contents(contents) => match &contents.body {
                                ContentsBody::Inline(bytes) => bytes.len() + 16,
                                ContentsBody::Large(_) => 64,
                            },
                            Value::Node(_) => 0,
                        }
                })
                .sum::<usize>()
        }
        // The one buffer, as allocated (no per-entry allocation to add).
        NodeBody::CompactFlat(compact) | NodeBody::CompactValues(compact) => {
            base + compact.heap_bytes()
        }
        NodeBody::Tree { pointers, .. } => base + pointers.len() * 56,
    }
}

/// Counters of what the store did, for the replay report.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreStatistics {
    /// Objects read from the pack file (cache misses).
    pub objects_read: u64,
    /// Objects found in the cache.
    pub cache_hits: u64,
    /// Node objects written.
    pub objects_written: u64,
    /// `fdatasync` calls on the pack.
    pub pack_syncs: u64,
    /// Objects read from the pack by tag (index = tag, docs/formats/pack-file.md; 0 unused):
    /// tells which shapes the misses are (flat nodes, inode values, inode trees, contents,
    /// commits, split roots, split parts).
    pub objects_read_by_tag: [u64; 8],
    /// Children's own hashes read to decode inode trees (which name their children by offset
    /// alone: docs/formats/pack-file.md, tag 3), one small `pread` each.
    pub child_hashes_read: u64,
    /// Children's hashes an inode tree's decoding took from the cached child instead of reading
    /// its record.
    pub child_hashes_cached: u64,
    /// Bytes read from the pack file (`pread` lengths, page cache or disk).
    pub bytes_read: u64,
    /// Estimated bytes of the decoded objects inserted into the object cache.
    pub cache_inserted_bytes: u64,
    /// Written objects moved into the cache when the retained tree was released.
    pub released_leaves_cached: u64,
    /// Whether writing the cache access trace failed (the trace then stops).
    pub cache_trace_failed: bool,
}

/// What a store holds in memory, by its own estimates ([`Store::memory_statistics`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryStatistics {
    /// What the object cache holds (estimated bytes of decoded objects).
    pub cache: crate::cache::CacheOccupancy,
    /// Objects of the retained tree of the last commit that are in memory (not in the cache).
    pub retained_objects: usize,
    /// Their estimated bytes (the cache's estimate).
    pub retained_estimated_bytes: usize,
    /// Capacity of the read buffer.
    pub read_buffer_bytes: usize,
    /// Capacity of the write buffer.
    pub write_buffer_bytes: usize,
    /// Capacity of the hash-encoding buffer.
    pub hash_buffer_bytes: usize,
    /// The GC's prefix mapping (its runs).
    pub prefix_mapping_bytes: usize,
}

/// A context store on disk.
pub struct Store {
    directory: PathBuf,
    pack_path: PathBuf,
    index_path: PathBuf,
    pack: File,
    /// Reads objects by pack offset: from the last GC's prefix below its boundary, from the pack
    /// elsewhere ([`crate::prefix`]).
    reader: PackReader,
    index: File,
    /// Bytes of the pack file written so far (everything before is on the file).
    pack_length_bytes: u64,
    /// Bytes of the index, including the records not written yet (`index_pending`).
    index_length_bytes: u64,
    /// Index records of the commits since the last checkpoint, written by the next one.
    index_pending: Vec<u8>,
    /// The records the last checkpoint job took, with the index offset they go to: read from
    /// here while that job may still be writing them ([`Store::index_record`]).
    index_in_flight: (u64, Vec<u8>),
    commits: MixMap<ContextHash, u64>,
    head: Option<(u64, ContextHash)>,
    cache: RefCell<Cache>,
    statistics: RefCell<StoreStatistics>,
    read_buffer: RefCell<Vec<u8>>,
    /// Short names shared between decoded objects (see [`pack::NameInterner`]).
    interner: RefCell<pack::NameInterner>,
    write_buffer: Vec<u8>,
    hash_buffer: Vec<u8>,
    options: StoreOptions,
    commits_since_checkpoint: u32,
    /// The tree of the last commit, kept in memory so the next block starts from it without
    /// reloading; dropped when the bytes written since it was started exceed half the cache budget
    /// (its memory objects keep everything they reach alive).
    last_commit: Option<(ContextHash, Tree)>,
    /// Pack bytes written since `last_commit` began to be retained.
    retained_bytes: u64,
    /// Set when a write failed half-way (offsets handed to memory objects may point at bytes
    /// that never reached the file) or a checkpoint failed (a sync error leaves the files' state
    /// on disk unknown, and the index records it was writing are lost): the store refuses
    /// further commits.
    poisoned: bool,
    /// Writes the levels of a commit already encoded while the commit hashes the next ones
    /// ([`crate::writer`]); `None` if its thread could not be started (commits then write once).
    writer: Option<PackWriter>,
    /// Bytes at the start of `write_buffer` already handed to `writer` (or written).
    write_buffer_in_file: usize,
    /// Where the zeros written ahead of the pack's end ([`PackWriter::reserve`]) end: a multiple
    /// of [`RESERVE_CHUNK_BYTES`], or less than `pack_length_bytes` before the first reserve.
    pack_reserved_end: u64,
    /// The checkpoint running on its own thread ([`Store::checkpoint_in_background`]).
    background_checkpoint: Option<std::thread::JoinHandle<Result<(), ContextError>>>,
    /// The store directory opened with an exclusive `flock` held for as long as the store is
    /// open; `None` when the store is open read-only (which takes no lock and writes nothing).
    lock: Option<File>,
    /// What the open found beyond the last checkpoint, if anything ([`Store::recovery`]).
    recovery: Option<Recovery>,
    /// Where the kept commits' records start in the index (records before were dropped by a GC).
    index_start_bytes: u64,
    /// The last GC's boundary, count and time, as the control file records them.
    gc_boundary_bytes: u64,
    gc_count: u64,
    gc_time_seconds: u64,
    /// The GC running on its thread, if any ([`crate::gc`]).
    gc_run: Option<GcRun>,
    /// The pack is known punched from its header's page up to here (by the GCs since the store
    /// was opened; the next one punches from here).
    gc_punched_below_bytes: u64,
    /// What the last GC since the store was opened did, and how many completed.
    gc_last: Option<GcReport>,
    gc_completed: u64,
    /// The error of the last GC, if it failed (returned by [`Store::wait_for_gc`]); no GC starts
    /// by policy after one failed.
    gc_error: Option<ContextError>,
    /// Commits since the last GC started (for [`StoreOptions::gc`]).
    commits_since_gc: u64,
    /// Checkpoints completed since the store was opened: a GC punches only once the checkpoint
    /// that published it is.
    checkpoints_completed: u64,
}

/// A GC in progress: its thread, and where the store is in publishing it.
struct GcRun {
    kept: ContextHash,
    kept_offset: u64,
    /// The index start once the GC is published: the kept commit's record.
    index_start_bytes: u64,
    started: std::time::Instant,
    marked: std::sync::mpsc::Receiver<Result<Marked, ContextError>>,
    go: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<Punched, ContextError>>>,
    cancel: Arc<std::sync::atomic::AtomicBool>,
    phase: GcPhase,
}

enum GcPhase {
    /// The thread marks.
    Marking,
    /// The mark is done; the store publishes it once no checkpoint is syncing.
    Marked(Marked),
    /// The store dropped the older commits and started the checkpoint recording it; the thread
    /// punches once `checkpoints_completed` reaches this.
    Publishing {
        checkpoints_needed: u64,
        report: GcReport,
    },
    /// The thread punches.
    Punching { report: GcReport },
}

/// What opening a store found beyond its last checkpoint (the crash recovery of
/// docs/formats/pack-file.md, "Durability"): which commits it adopted and what it cut, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// Pack bytes the control file vouched for (the last checkpoint).
    pub checkpoint_pack_length_bytes: u64,
    /// Commits found whole beyond the checkpoint and adopted.
    pub commits_adopted: u64,
    /// The pack's length after recovery: the end of the last commit.
    pub pack_length_bytes: u64,
    /// The pack file's length as found; the bytes from `pack_length_bytes` to here are cut.
    pub pack_file_length_bytes: u64,
    /// Bytes of the index file past the length the control file vouched for, cut off.
    pub index_cut_bytes: u64,
    /// Why the scan stopped before the file's end, if it did.
    pub stop: Option<TailStop>,
}

/// Why the crash recovery's scan of the pack tail stopped before the file's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TailStop {
    /// A zero byte where an object would start: zeros written ahead of the pack
    /// ([`crate::writer`]), or a write that had not landed.
    Zeros {
        /// Pack offset of the first zero byte.
        offset_bytes: u64,
    },
    /// An object frame that does not parse, or that runs past the file's end (a torn write).
    TornObject {
        /// Pack offset of the object.
        offset_bytes: u64,
        /// What was wrong with it.
        kind: CorruptionKind,
    },
    /// A commit object whose region checksum does not match the bytes before it.
    ChecksumMismatch {
        /// Pack offset of the commit object.
        offset_bytes: u64,
    },
    /// Whole objects up to the file's end, but no commit after them (a commit cut short).
    NoCommit {
        /// Pack offset of the first of them.
        offset_bytes: u64,
    },
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "recovered: the last checkpoint covered {} pack bytes; adopted {} commit(s) beyond it \
             (pack now {} bytes)",
            self.checkpoint_pack_length_bytes, self.commits_adopted, self.pack_length_bytes
        )?;
        let cut = self.pack_file_length_bytes - self.pack_length_bytes;
        if cut > 0 {
            write!(
                f,
                "; cut {cut} byte(s) of the pack from offset {}",
                self.pack_length_bytes
            )?;
        }
        match &self.stop {
            Some(TailStop::Zeros { offset_bytes }) => write!(
                f,
                " (zeros at offset {offset_bytes}: space written ahead, or a write that never landed)"
            )?,
            Some(TailStop::TornObject { offset_bytes, kind }) => {
                write!(f, " (torn object at offset {offset_bytes}: {kind})")?
            }
            Some(TailStop::ChecksumMismatch { offset_bytes }) => write!(
                f,
                " (commit at offset {offset_bytes} does not match the bytes before it)"
            )?,
            Some(TailStop::NoCommit { offset_bytes }) => write!(
                f,
                " (objects from offset {offset_bytes} on with no commit after them)"
            )?,
            None => {}
        }
        if self.index_cut_bytes > 0 {
            write!(
                f,
                "; cut {} byte(s) of the index past its checkpoint",
                self.index_cut_bytes
            )?;
        }
        Ok(())
    }
}

/// A checkpoint's work, independent of the store so that it can run on another thread: write
/// the pending index records, sync the pack and index (unless `sync` is off), then replace the
/// control file with `record`.
struct CheckpointJob {
    pack: (File, PathBuf),
    index: (File, PathBuf),
    index_pending: Vec<u8>,
    index_pending_offset: u64,
    sync: bool,
    directory: PathBuf,
    record: ControlRecord,
}

impl CheckpointJob {
    fn run(self) -> Result<(), ContextError> {
        let (index, index_path) = &self.index;
        index
            .write_all_at(&self.index_pending, self.index_pending_offset)
            .map_err(io_error(index_path, "write"))?;
        if self.sync {
            for (file, path) in [&self.pack, &self.index] {
                file.sync_data().map_err(io_error(path, "sync"))?;
            }
        }
        write_control(self.sync, &self.directory, &self.record)
    }
}

fn io_error<'a>(
    path: &'a Path,
    action: &'static str,
) -> impl FnOnce(std::io::Error) -> ContextError + 'a {
    move |source| ContextError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// The commit hash and pack offset of an index record.
fn decode_index_record(record: &[u8]) -> (ContextHash, u64) {
    let mut hash = [0u8; HASH_BYTES];
    hash.copy_from_slice(&record[..HASH_BYTES]);
    let mut offset = [0u8; 8];
    offset.copy_from_slice(&record[HASH_BYTES..INDEX_RECORD_BYTES as usize]);
    (ContextHash(hash), u64::from_be_bytes(offset))
}

/// How long [`lock_directory`] retries a lock held elsewhere before answering
/// [`ContextError::InUse`]. A `flock` belongs to the open file, which a child process forked
/// while the store was open shares until its `exec` closes it: a store closed and reopened in a
/// process that spawns children can find its own lock still held for that moment.
const LOCK_RETRY_MILLIS: u64 = 1_000;

/// Opens `directory` and takes an exclusive `flock` on it, held until the returned handle is
/// closed (the kernel drops it when the process dies, so a killed writer leaves no stale lock).
/// Another holder, still there after [`LOCK_RETRY_MILLIS`]: [`ContextError::InUse`].
fn lock_directory(directory: &Path) -> Result<File, ContextError> {
    const PAUSE_MILLIS: u64 = 10;
    let handle = File::open(directory).map_err(io_error(directory, "open directory"))?;
    let mut waited_millis = 0;
    loop {
        match rustix::fs::flock(
            &handle,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => return Ok(handle),
            Err(rustix::io::Errno::WOULDBLOCK) if waited_millis < LOCK_RETRY_MILLIS => {
                std::thread::sleep(std::time::Duration::from_millis(PAUSE_MILLIS));
                waited_millis += PAUSE_MILLIS;
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(ContextError::InUse {
                    path: directory.to_path_buf(),
                })
            }
            Err(errno) => return Err(io_error(directory, "lock")(errno.into())),
        }
    }
}

/// A directory without a control file is a new store only if its pack and index hold nothing
/// beyond their headers (creation writes them first and the control file last, so a crash during
/// creation leaves exactly that). Anything more is a store whose control file was lost: a typed
/// error, never a new store over it.
fn refuse_files_without_control(directory: &Path) -> Result<(), ContextError> {
    for (name, header_bytes) in [
        (PACK_FILE_NAME, PACK_HEADER_BYTES),
        (INDEX_FILE_NAME, INDEX_HEADER_BYTES),
    ] {
        let path = directory.join(name);
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.len() > header_bytes => {
                let control_path = directory.join(CONTROL_FILE_NAME);
                return Err(ContextError::Corrupt {
                    file: StoreFile::Control,
                    path: control_path,
                    offset_bytes: 0,
                    kind: CorruptionKind::Missing,
                });
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_error(&path, "stat")(error)),
        }
    }
    Ok(())
}

fn sync_directory(directory: &Path) -> Result<(), ContextError> {
    File::open(directory)
        .and_then(|handle| handle.sync_all())
        .map_err(io_error(directory, "sync directory"))
}

impl Store {
    /// Opens the store in `directory` for writing, creating it (and the directory) if the
    /// directory holds no store. Takes an exclusive lock on the directory for as long as the store
    /// is open: while another `Store` has it open for writing, this returns
    /// [`ContextError::InUse`] and touches nothing. A directory whose pack or index holds data is
    /// never taken for a new store: without its control file it is a typed error.
    pub fn open(directory: &Path, options: StoreOptions) -> Result<Store, ContextError> {
        std::fs::create_dir_all(directory).map_err(io_error(directory, "create directory"))?;
        let lock = lock_directory(directory)?;
        let control_path = directory.join(CONTROL_FILE_NAME);
        if !control_path.exists() {
            refuse_files_without_control(directory)?;
            Self::create(directory, options.sync_mode != SyncMode::Never)?;
        }
        Self::open_existing(directory, options, Some(lock))
    }

    /// Opens the store in `directory` to read it only (`kestrel context verify` and `info`, even
    /// while a writer has it open): takes no lock, adopts the commits a crash recovery would
    /// adopt in memory only, and never writes. [`Store::commit`] and [`Store::checkpoint`] return
    /// [`ContextError::ReadOnly`].
    pub fn open_read_only(directory: &Path, options: StoreOptions) -> Result<Store, ContextError> {
        Self::open_existing(directory, options, None)
    }

    fn open_existing(
        directory: &Path,
        options: StoreOptions,
        lock: Option<File>,
    ) -> Result<Store, ContextError> {
        let writable = lock.is_some();
        let control_path = directory.join(CONTROL_FILE_NAME);
        let pack_path = directory.join(PACK_FILE_NAME);
        let index_path = directory.join(INDEX_FILE_NAME);
        let control_bytes =
            std::fs::read(&control_path).map_err(io_error(&control_path, "read"))?;
        let corrupt = |file, path: &Path, offset_bytes, kind| ContextError::Corrupt {
            file,
            path: path.to_path_buf(),
            offset_bytes,
            kind,
        };
        let control = ControlRecord::decode(&control_bytes)
            .map_err(|(offset, kind)| corrupt(StoreFile::Control, &control_path, offset, kind))?;
        let open_file = |path: &Path| {
            OpenOptions::new()
                .read(true)
                .write(writable)
                .open(path)
                .map_err(io_error(path, "open"))
        };
        let pack = open_file(&pack_path)?;
        let index = open_file(&index_path)?;
        // The last GC's prefix, if it made one; a writer removes any other generation's files
        // (a GC that never published, or the one it replaced).
        let prefix = if control.gc_prefix {
            Some(Arc::new(Prefix::open(
                directory,
                control.gc_count,
                control.gc_boundary_bytes,
            )?))
        } else {
            None
        };
        if writable {
            crate::prefix::remove_other_generations(
                directory,
                prefix.as_ref().map(|prefix| prefix.generation()),
            )?;
        }
        let reader = PackReader::new(
            pack.try_clone().map_err(io_error(&pack_path, "open"))?,
            pack_path.clone(),
            prefix,
        );
        let pack_file_length = pack.metadata().map_err(io_error(&pack_path, "stat"))?.len();
        let index_file_length = index
            .metadata()
            .map_err(io_error(&index_path, "stat"))?
            .len();

        // The pack header.
        let mut header = [0u8; PACK_HEADER_BYTES as usize];
        if pack_file_length < PACK_HEADER_BYTES {
            return Err(corrupt(
                StoreFile::Pack,
                &pack_path,
                pack_file_length,
                CorruptionKind::Truncated,
            ));
        }
        pack.read_exact_at(&mut header, 0)
            .map_err(io_error(&pack_path, "read"))?;
        if header[..8] != pack::PACK_MAGIC {
            return Err(corrupt(
                StoreFile::Pack,
                &pack_path,
                0,
                CorruptionKind::BadMagic,
            ));
        }
        let version = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        if version != pack::PACK_VERSION {
            return Err(corrupt(
                StoreFile::Pack,
                &pack_path,
                8,
                CorruptionKind::UnsupportedVersion(u64::from(version)),
            ));
        }
        if header[12..16] != [0; 4] {
            return Err(corrupt(
                StoreFile::Pack,
                &pack_path,
                12,
                CorruptionKind::Inconsistent("reserved header bytes are zero"),
            ));
        }
        if control.pack_length_bytes < PACK_HEADER_BYTES
            || control.pack_length_bytes > pack_file_length
        {
            return Err(corrupt(
                StoreFile::Pack,
                &pack_path,
                pack_file_length,
                CorruptionKind::Inconsistent("the pack is shorter than the control file records"),
            ));
        }

        // The index, trusted up to the checkpointed length, from the first kept commit's record.
        let index_length = control.index_length_bytes;
        let index_start = control.index_start_bytes;
        if index_length < INDEX_HEADER_BYTES
            || index_length > index_file_length
            || !(index_start - INDEX_HEADER_BYTES).is_multiple_of(INDEX_RECORD_BYTES)
            || !(index_length - index_start).is_multiple_of(INDEX_RECORD_BYTES)
            || (index_length - index_start) / INDEX_RECORD_BYTES != control.commit_count
        {
            return Err(corrupt(
                StoreFile::Index,
                &index_path,
                index_file_length.min(index_length),
                CorruptionKind::Inconsistent("index length disagrees with the control file"),
            ));
        }
        let mut index_header = [0u8; INDEX_HEADER_BYTES as usize];
        index
            .read_exact_at(&mut index_header, 0)
            .map_err(io_error(&index_path, "read"))?;
        if index_header[..8] != INDEX_MAGIC {
            return Err(corrupt(
                StoreFile::Index,
                &index_path,
                0,
                CorruptionKind::BadMagic,
            ));
        }
        let index_version = u32::from_be_bytes([
            index_header[8],
            index_header[9],
            index_header[10],
            index_header[11],
        ]);
        if index_version != INDEX_VERSION {
            return Err(corrupt(
                StoreFile::Index,
                &index_path,
                8,
                CorruptionKind::UnsupportedVersion(u64::from(index_version)),
            ));
        }
        if index_header[12..16] != [0; 4] {
            return Err(corrupt(
                StoreFile::Index,
                &index_path,
                12,
                CorruptionKind::Inconsistent("reserved header bytes are zero"),
            ));
        }
        let mut index_bytes = vec![0u8; (index_length - index_start) as usize];
        index
            .read_exact_at(&mut index_bytes, index_start)
            .map_err(io_error(&index_path, "read"))?;
        let mut commits: MixMap<ContextHash, u64> = MixMap::default();
        commits.reserve(control.commit_count as usize);
        let mut previous_offset = 0;
        for (position, record) in index_bytes
            .chunks_exact(INDEX_RECORD_BYTES as usize)
            .enumerate()
        {
            let (hash, offset) = decode_index_record(record);
            // Records are in commit order, which is pack order (the GC relies on it).
            if offset < PACK_HEADER_BYTES
                || offset >= control.pack_length_bytes
                || offset <= previous_offset
            {
                return Err(corrupt(
                    StoreFile::Index,
                    &index_path,
                    index_start + position as u64 * INDEX_RECORD_BYTES + HASH_BYTES as u64,
                    CorruptionKind::BadChildOffset(offset),
                ));
            }
            previous_offset = offset;
            commits.insert(hash, offset);
        }
        if let Some((offset, hash)) = control.head {
            if commits.get(&hash) != Some(&offset) {
                return Err(corrupt(
                    StoreFile::Control,
                    &control_path,
                    40,
                    CorruptionKind::Inconsistent("the head commit is not in the index"),
                ));
            }
        }

        let trace = match &options.cache_trace {
            Some(path) => Some(std::io::BufWriter::new(
                File::create(path).map_err(io_error(path, "create"))?,
            )),
            None => None,
        };
        let mut store = Store {
            directory: directory.to_path_buf(),
            pack_path,
            index_path,
            pack,
            reader,
            index,
            pack_length_bytes: control.pack_length_bytes,
            index_length_bytes: index_length,
            index_pending: Vec::new(),
            index_in_flight: (0, Vec::new()),
            commits,
            head: control.head,
            cache: RefCell::new(Cache {
                objects: ObjectCache::new(options.cache_policy, options.cache_budget_bytes),
                trace,
                trace_failed: false,
            }),
            last_commit: None,
            retained_bytes: 0,
            statistics: RefCell::new(StoreStatistics::default()),
            interner: RefCell::new(pack::NameInterner::default()),
            read_buffer: RefCell::new(Vec::new()),
            write_buffer: Vec::new(),
            hash_buffer: Vec::new(),
            options,
            commits_since_checkpoint: 0,
            poisoned: false,
            background_checkpoint: None,
            writer: None,
            write_buffer_in_file: 0,
            pack_reserved_end: 0,
            lock,
            recovery: None,
            index_start_bytes: control.index_start_bytes,
            gc_boundary_bytes: control.gc_boundary_bytes,
            gc_count: control.gc_count,
            gc_time_seconds: control.gc_time_seconds,
            gc_run: None,
            gc_punched_below_bytes: 0,
            gc_last: None,
            gc_completed: 0,
            gc_error: None,
            commits_since_gc: 0,
            checkpoints_completed: 0,
        };
        let checkpoint_pack_length_bytes = store.pack_length_bytes;
        let (commits_adopted, stop) = store.recover_tail(pack_file_length)?;
        if commits_adopted > 0
            || pack_file_length != store.pack_length_bytes
            || index_file_length != store.index_length_bytes
        {
            store.recovery = Some(Recovery {
                checkpoint_pack_length_bytes,
                commits_adopted,
                pack_length_bytes: store.pack_length_bytes,
                pack_file_length_bytes: pack_file_length,
                index_cut_bytes: index_file_length.saturating_sub(index_length),
                stop,
            });
        }
        if !writable {
            return Ok(store);
        }
        // Objects are read at random offsets, one small frame at a time: without this the kernel
        // reads ahead around each miss (context readahead treats the cached neighbours of a
        // recently written region as a sequential stream), which on a pack larger than the page
        // cache reads from disk mostly bytes nobody asked for. Set after the sequential tail scan.
        rustix::fs::fadvise(&store.pack, 0, None, rustix::fs::Advice::Random)
            .map_err(|errno| io_error(&store.pack_path, "fadvise")(errno.into()))?;
        store.writer = PackWriter::start(&store.pack).ok();
        if store.recovery.is_some() {
            store
                .pack
                .set_len(store.pack_length_bytes)
                .map_err(io_error(&store.pack_path, "truncate"))?;
            store
                .index
                .set_len(store.index_length_bytes)
                .map_err(io_error(&store.index_path, "truncate"))?;
            store.checkpoint()?;
        }
        Ok(store)
    }

    /// Creates empty pack and index files, then the control file that makes them a store.
    fn create(directory: &Path, sync: bool) -> Result<(), ContextError> {
        let write_new = |name: &str, bytes: &[u8]| -> Result<(), ContextError> {
            let path = directory.join(name);
            let mut file = File::create(&path).map_err(io_error(&path, "create"))?;
            file.write_all(bytes).map_err(io_error(&path, "write"))?;
            if sync {
                file.sync_all().map_err(io_error(&path, "sync"))?;
            }
            Ok(())
        };
        write_new(PACK_FILE_NAME, &pack::header_bytes())?;
        let mut index_header = [0u8; INDEX_HEADER_BYTES as usize];
        index_header[..8].copy_from_slice(&INDEX_MAGIC);
        index_header[8..12].copy_from_slice(&INDEX_VERSION.to_be_bytes());
        write_new(INDEX_FILE_NAME, &index_header)?;
        write_control(
            sync,
            directory,
            &ControlRecord {
                pack_length_bytes: PACK_HEADER_BYTES,
                index_length_bytes: INDEX_HEADER_BYTES,
                commit_count: 0,
                head: None,
                index_start_bytes: INDEX_HEADER_BYTES,
                gc_boundary_bytes: 0,
                gc_count: 0,
                gc_time_seconds: 0,
                gc_prefix: false,
            },
        )
    }

    /// Scans the pack beyond the checkpointed length, adopting every commit whose region checksum
    /// holds. Returns the number of commits adopted and why the scan stopped before the file's
    /// end, if it did: what follows is a torn write (or zeros written ahead).
    fn recover_tail(
        &mut self,
        pack_file_length: u64,
    ) -> Result<(u64, Option<TailStop>), ContextError> {
        let mut adopted = 0;
        let mut offset = self.pack_length_bytes;
        let mut region = Vec::new();
        let mut object = Vec::new();
        while offset < pack_file_length {
            let available =
                (pack_file_length - offset).min(1 + crate::leb128::LEB128_U64_MAX_BYTES as u64);
            let mut frame = vec![0u8; available as usize];
            self.pack
                .read_exact_at(&mut frame, offset)
                .map_err(io_error(&self.pack_path, "read"))?;
            let (tag, header_length, body_length) = match read_frame_header(&frame) {
                Ok(header) => header,
                Err(_) if frame[0] == 0 => {
                    return Ok((
                        adopted,
                        Some(TailStop::Zeros {
                            offset_bytes: offset,
                        }),
                    ))
                }
                Err(error) => {
                    return Ok((
                        adopted,
                        Some(TailStop::TornObject {
                            offset_bytes: offset,
                            kind: error.kind,
                        }),
                    ))
                }
            };
            let object_length = header_length as u64 + body_length;
            if object_length > pack_file_length - offset {
                return Ok((
                    adopted,
                    Some(TailStop::TornObject {
                        offset_bytes: offset,
                        kind: CorruptionKind::Truncated,
                    }),
                ));
            }
            object.clear();
            object.resize(object_length as usize, 0);
            self.pack
                .read_exact_at(&mut object, offset)
                .map_err(io_error(&self.pack_path, "read"))?;
            if tag == TAG_COMMIT {
                let record = match pack::read_commit(&object[header_length..], offset) {
                    Ok(record) => record,
                    Err(error) => {
                        return Ok((
                            adopted,
                            Some(TailStop::TornObject {
                                offset_bytes: offset,
                                kind: error.kind,
                            }),
                        ))
                    }
                };
                if pack::region_checksum(&region) != record.region_checksum {
                    return Ok((
                        adopted,
                        Some(TailStop::ChecksumMismatch {
                            offset_bytes: offset,
                        }),
                    ));
                }
                let parents: Vec<ContextHash> =
                    record.parents.iter().map(|(hash, _)| *hash).collect();
                let hash = commit_hash(&record.tree_hash, &parents, &record.info);
                self.pack_length_bytes = offset + object_length;
                self.append_index_record(&hash, offset);
                self.head = Some((offset, hash));
                region.clear();
                adopted += 1;
            } else {
                region.extend_from_slice(&object);
            }
            offset += object_length;
        }
        // The file ends inside the region of a commit not written yet: those bytes are cut.
        let stop = (offset > self.pack_length_bytes).then_some(TailStop::NoCommit {
            offset_bytes: self.pack_length_bytes,
        });
        Ok((adopted, stop))
    }

    /// Records commit `hash` at pack `offset` in the index. The record reaches the index file at
    /// the next checkpoint: the index is trusted only up to the checkpointed length anyway (a
    /// reopen rebuilds the records of later commits from the pack), so writing each record at
    /// its commit would only cost a system call per commit.
    fn append_index_record(&mut self, hash: &ContextHash, offset: u64) {
        self.index_pending.extend_from_slice(&hash.0);
        self.index_pending.extend_from_slice(&offset.to_be_bytes());
        self.index_length_bytes += INDEX_RECORD_BYTES;
        self.commits.insert(*hash, offset);
    }

    /// Makes everything written so far durable and records it in the control file.
    pub fn checkpoint(&mut self) -> Result<(), ContextError> {
        if self.lock.is_none() {
            return Err(ContextError::ReadOnly);
        }
        self.wait_for_checkpoint()?;
        let result = self.checkpoint_job()?.run();
        match result {
            Ok(()) => self.checkpoints_completed += 1,
            // The pending index records are gone with the job and the files' state on disk is
            // unknown: like a failed write, this ends the store's commits.
            Err(_) => self.poisoned = true,
        }
        result
    }

    /// [`Store::checkpoint`] on a thread of its own, so the commit that reaches the interval does
    /// not wait for the `fdatasync` calls (tens of milliseconds: a checkpoint syncs about 55 MB of
    /// the replay's pack). It records the pack as it is now; the commits written while it runs
    /// are covered by the next one. Its error, if any, is returned by the call that waits for it
    /// (the next checkpoint, `close` or drop) and the store then refuses further commits.
    fn checkpoint_in_background(&mut self) -> Result<(), ContextError> {
        self.wait_for_checkpoint()?;
        let job = self.checkpoint_job()?;
        let directory = self.directory.clone();
        let thread = std::thread::Builder::new()
            .name("checkpoint".into())
            .spawn(move || job.run())
            .map_err(io_error(&directory, "start the checkpoint thread"))?;
        self.background_checkpoint = Some(thread);
        Ok(())
    }

    /// Waits for the checkpoint running in the background, if any, and returns its result (an
    /// error poisons the store). A caller that needs to know that a power loss can no longer
    /// take a commit calls this after the commit that started the checkpoint.
    pub fn wait_for_checkpoint(&mut self) -> Result<(), ContextError> {
        let Some(thread) = self.background_checkpoint.take() else {
            return Ok(());
        };
        let result = thread.join().unwrap_or_else(|_| {
            Err(io_error(&self.directory, "checkpoint")(
                std::io::Error::other("the checkpoint thread panicked"),
            ))
        });
        match result {
            Ok(()) => self.checkpoints_completed += 1,
            Err(_) => self.poisoned = true,
        }
        result
    }

    /// What a checkpoint must do, with the pack and index as they are now.
    fn checkpoint_job(&mut self) -> Result<CheckpointJob, ContextError> {
        let cache = self.cache.get_mut();
        if let Some(trace) = &mut cache.trace {
            if trace.flush().is_err() {
                cache.trace = None;
                cache.trace_failed = true;
            }
        }
        let index_pending = std::mem::take(&mut self.index_pending);
        // Until the job has written them, the records are read from this copy (a GC picks its
        // kept commit by position, maybe while the checkpoint thread writes them).
        self.index_in_flight = (
            self.index_length_bytes - index_pending.len() as u64,
            index_pending.clone(),
        );
        let job = CheckpointJob {
            pack: (
                self.pack
                    .try_clone()
                    .map_err(io_error(&self.pack_path, "open"))?,
                self.pack_path.clone(),
            ),
            index: (
                self.index
                    .try_clone()
                    .map_err(io_error(&self.index_path, "open"))?,
                self.index_path.clone(),
            ),
            index_pending_offset: self.index_length_bytes - index_pending.len() as u64,
            index_pending,
            sync: self.options.sync_mode != SyncMode::Never,
            directory: self.directory.clone(),
            record: ControlRecord {
                pack_length_bytes: self.pack_length_bytes,
                index_length_bytes: self.index_length_bytes,
                commit_count: self.commits.len() as u64,
                head: self.head,
                index_start_bytes: self.index_start_bytes,
                gc_boundary_bytes: self.gc_boundary_bytes,
                gc_count: self.gc_count,
                gc_time_seconds: self.gc_time_seconds,
                gc_prefix: self.reader.prefix().is_some(),
            },
        };
        self.commits_since_checkpoint = 0;
        Ok(job)
    }

    /// Checkpoints and closes the store.
    pub fn close(mut self) -> Result<(), ContextError> {
        if self.lock.is_none() {
            return Ok(());
        }
        self.wait_for_gc()?;
        self.checkpoint()?;
        self.drop_reserved()
    }

    /// What this open's crash recovery adopted and cut, if it found anything beyond the last
    /// checkpoint (a store closed cleanly has nothing to recover).
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// The latest commit, if any.
    pub fn head(&self) -> Option<ContextHash> {
        self.head.map(|(_, hash)| hash)
    }

    /// Whether the store holds the commit `hash`.
    pub fn contains_commit(&self, hash: &ContextHash) -> bool {
        self.commits.contains_key(hash)
    }

    /// The number of commits in the store.
    pub fn commit_count(&self) -> usize {
        self.commits.len()
    }

    /// Bytes of the pack file.
    pub fn pack_length_bytes(&self) -> u64 {
        self.pack_length_bytes
    }

    /// Bytes on disk: the blocks the file system holds for the pack and index files (the holes a
    /// GC punched hold none; zeros written ahead of the pack count), and the control file.
    pub fn disk_bytes(&self) -> u64 {
        let allocated = |file: &File, length: u64| {
            file.metadata()
                .map_or(length, |metadata| metadata.blocks() * 512)
        };
        allocated(&self.pack, self.pack_length_bytes)
            + allocated(&self.index, self.index_length_bytes)
            + self.reader.prefix().map_or(0, |prefix| prefix.disk_bytes())
            + CONTROL_BYTES as u64
    }

    /// What the store has done since it was opened.
    pub fn statistics(&self) -> StoreStatistics {
        let mut statistics = *self.statistics.borrow();
        statistics.cache_trace_failed = self.cache.borrow().trace_failed;
        statistics
    }

    /// What the store holds in memory now, by its own estimates (the object cache, the retained
    /// tree of the last commit, the buffers), to compare with the process's resident memory.
    /// Walks the retained tree: for reports, not for every block.
    pub fn memory_statistics(&self) -> MemoryStatistics {
        let mut report = MemoryStatistics {
            cache: self.cache.borrow().objects.occupancy(),
            read_buffer_bytes: self.read_buffer.borrow().capacity(),
            write_buffer_bytes: self.write_buffer.capacity(),
            hash_buffer_bytes: self.hash_buffer.capacity(),
            prefix_mapping_bytes: self
                .reader
                .prefix()
                .map_or(0, |prefix| prefix.memory_bytes()),
            ..MemoryStatistics::default()
        };
        if let Some((
            _,
            Tree {
                root: Some(Value::Node(NodeRef::Memory(root))),
            },
        )) = &self.last_commit
        {
            let mut seen: std::collections::HashSet<*const NodeObject> =
                std::collections::HashSet::new();
            let mut stack = vec![root.clone()];
            while let Some(object) = stack.pop() {
                if !seen.insert(Arc::as_ptr(&object)) {
                    continue;
                }
                report.retained_objects += 1;
                report.retained_estimated_bytes += estimated_size(&object);
                for_each_memory_child(&object, |child| stack.push(child.clone()));
            }
        }
        report
    }

    fn corrupt(&self, offset_bytes: u64, kind: CorruptionKind) -> ContextError {
        ContextError::Corrupt {
            file: StoreFile::Pack,
            path: self.pack_path.clone(),
            offset_bytes,
            kind,
        }
    }

    /// Reads the object frame at `offset` into `buffer`: returns its tag and the range of its body
    /// in `buffer` ([`crate::walk::read_frame`]), counted in the statistics.
    fn read_object(
        &self,
        offset: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<(u8, std::ops::Range<usize>), ContextError> {
        let frame = read_frame(&self.reader, self.pack_length_bytes, offset, buffer)?;
        let mut statistics = self.statistics.borrow_mut();
        statistics.objects_read += 1;
        statistics.objects_read_by_tag[usize::from(frame.tag) % 8] += 1;
        statistics.bytes_read += frame.bytes_read;
        Ok((frame.tag, frame.body))
    }

    fn read_commit_record(&self, offset: u64) -> Result<CommitRecord, ContextError> {
        let mut buffer = self.read_buffer.borrow_mut();
        let (tag, body) = self.read_object(offset, &mut buffer)?;
        let body_start = body.start;
        if tag != TAG_COMMIT {
            return Err(self.corrupt(offset, CorruptionKind::UnexpectedObject("a commit")));
        }
        pack::read_commit(&buffer[body], offset).map_err(|error| {
            self.corrupt(
                offset + (body_start + error.body_offset_bytes) as u64,
                error.kind,
            )
        })
    }

    /// The tree of commit `hash`, or `None` if the store does not have it.
    pub fn checkout(&self, hash: &ContextHash) -> Result<Option<Tree>, ContextError> {
        if let Some((last, tree)) = &self.last_commit {
            if last == hash {
                return Ok(Some(tree.clone()));
            }
        }
        let Some(&offset) = self.commits.get(hash) else {
            return Ok(None);
        };
        let record = self.read_commit_record(offset)?;
        Ok(Some(Tree {
            root: Some(Value::Node(NodeRef::Stored {
                offset: record.tree_offset,
                hash: record.tree_hash,
            })),
        }))
    }

    /// [`Store::checkout`] for building the next commit on top of `hash`: when `hash` is the last
    /// commit, its tree is handed over instead of shared, so the caller's updates change the
    /// directories written by that commit in place rather than copying them (and freeing the
    /// old copies at the next commit). A later checkout of `hash` reads it from the pack.
    pub fn checkout_for_update(
        &mut self,
        hash: &ContextHash,
    ) -> Result<Option<Tree>, ContextError> {
        if matches!(&self.last_commit, Some((last, _)) if last == hash) {
            if let Some((_, tree)) = self.last_commit.take() {
                return Ok(Some(tree));
            }
        }
        self.checkout(hash)
    }

    /// The metadata, parents and tree hash of commit `hash`.
    pub fn commit_record(&self, hash: &ContextHash) -> Result<Option<CommitRecord>, ContextError> {
        match self.commits.get(hash) {
            None => Ok(None),
            Some(&offset) => Ok(Some(self.read_commit_record(offset)?)),
        }
    }

    /// Writes `tree` and a commit of it with `parents` and `info`; returns the commit hash once the
    /// commit is durable (see [`SyncMode`]). Committing a state that is already stored writes
    /// nothing.
    pub fn commit(
        &mut self,
        tree: &Tree,
        parents: &[ContextHash],
        info: &CommitInfo,
    ) -> Result<ContextHash, ContextError> {
        if self.lock.is_none() {
            return Err(ContextError::ReadOnly);
        }
        if self.poisoned {
            return Err(ContextError::InvalidArgument(
                "an earlier write failed; reopen the store".into(),
            ));
        }
        let root = match &tree.root {
            Some(Value::Node(node)) => node.clone(),
            Some(Value::Contents(_)) => {
                return Err(ContextError::InvalidArgument(
                    "a commit's tree must be a directory".into(),
                ))
            }
            None => NodeRef::Memory(Arc::new(NodeObject::new(NodeBody::Flat(Vec::new())))),
        };
        if info.author.len() > pack::COMMIT_TEXT_MAX_BYTES
            || info.message.len() > pack::COMMIT_TEXT_MAX_BYTES
        {
            return Err(ContextError::TooLarge("COMMIT_TEXT_MAX_BYTES"));
        }
        if parents.len() > pack::COMMIT_PARENTS_MAX {
            return Err(ContextError::TooLarge("COMMIT_PARENTS_MAX"));
        }
        let mut parent_locations = Vec::with_capacity(parents.len());
        for parent in parents {
            match self.commits.get(parent) {
                Some(&offset) => parent_locations.push((*parent, Some(offset))),
                None => return Err(ContextError::UnknownParent(*parent)),
            }
        }
        let overlapped = matches!(&root, NodeRef::Memory(object)
            if object.hash.get().is_none() && self.writer.is_some());
        // Names are checked before anything is encoded (levels may be written while hashing):
        // by the walk that sorts the new objects into levels when there is one, else here.
        if let NodeRef::Memory(object) = &root {
            if !overlapped {
                check_names(object)?;
            }
        }
        let tree_hash = match &root {
            NodeRef::Memory(object) if overlapped => {
                // Each level is encoded and handed to the writer thread just after it is
                // hashed: the writer copies it while the next level is hashed.
                let object = object.clone();
                let mut hash_buffer = std::mem::take(&mut self.hash_buffer);
                let hashed =
                    ensure_hash_by_level(&object, &mut hash_buffer, check_names_in_walk, |level| {
                        // From the first level on, bytes are handed over: a failure leaves the
                        // store to be reopened. A name refused by the walk before it wrote nothing.
                        self.poisoned = true;
                        for written in level {
                            self.write_tree(&NodeRef::Memory(written.clone()))?;
                        }
                        self.hand_over_written_bytes()
                    });
                self.hash_buffer = hash_buffer;
                hashed?
            }
            _ => ensure_hash(&root, &mut self.hash_buffer),
        };
        let hash = commit_hash(&tree_hash, parents, info);
        if self.commits.contains_key(&hash) {
            // The state is stored already. Objects encoded above keep their bytes in the write
            // buffer, to be written with (and checksummed by) the next commit.
            self.wait_for_writer()?;
            self.poisoned = false;
            return Ok(hash);
        }
        self.poisoned = true;
        let tree_offset = self.write_tree(&root)?;
        let record = CommitRecord {
            tree_hash,
            tree_offset,
            parents: parent_locations,
            info: info.clone(),
            region_checksum: pack::region_checksum(&self.write_buffer),
        };
        let commit_offset = self.pack_length_bytes + self.write_buffer.len() as u64;
        pack::write_commit(&mut self.write_buffer, &record);
        // After the writer's parts: the zeros it may still be writing ahead must not land on
        // these bytes.
        self.wait_for_writer()?;
        self.pack
            .write_all_at(
                &self.write_buffer[self.write_buffer_in_file..],
                self.pack_length_bytes + self.write_buffer_in_file as u64,
            )
            .map_err(io_error(&self.pack_path, "write"))?;
        if self.options.sync_mode == SyncMode::EveryCommit {
            self.pack
                .sync_data()
                .map_err(io_error(&self.pack_path, "sync"))?;
            self.statistics.borrow_mut().pack_syncs += 1;
        }
        let written_bytes = self.write_buffer.len() as u64;
        self.pack_length_bytes += written_bytes;
        self.retained_bytes += written_bytes;
        self.cache.get_mut().commit();
        self.write_buffer.clear();
        self.write_buffer_in_file = 0;
        // A large commit (genesis writes tens of megabytes at once) would otherwise leave its
        // buffer resident for the life of the store.
        self.write_buffer.shrink_to(WRITE_BUFFER_KEPT_BYTES);
        self.reserve_ahead()?;
        self.poisoned = false;
        let retained_limit_bytes = self
            .options
            .retained_written_bytes_max
            .unwrap_or((self.options.cache_budget_bytes / 2) as u64);
        if self.retained_bytes > retained_limit_bytes {
            self.last_commit = None;
            self.retained_bytes = 0;
            // A bulk load (genesis writes tens of megabytes in one commit) would flush the
            // cache with objects no block has asked for yet, at the moment its tree is still
            // alive (the peak of the process's memory).
            if self.options.cache_released_leaves
                && written_bytes
                    <= (self.options.cache_budget_bytes / RELEASED_LEAVES_COMMIT_FRACTION) as u64
            {
                self.cache_written_leaves(&root);
            }
        } else {
            self.last_commit = Some((
                hash,
                Tree {
                    root: Some(Value::Node(root.clone())),
                },
            ));
        }
        self.apply_cache_budget();
        self.append_index_record(&hash, commit_offset);
        self.head = Some((commit_offset, hash));
        self.commits_since_checkpoint += 1;
        self.commits_since_gc += 1;
        if self.commits_since_checkpoint >= CHECKPOINT_INTERVAL_COMMITS {
            self.checkpoint_in_background()?;
        }
        self.advance_gc(false)?;
        self.start_gc_by_policy()?;
        Ok(hash)
    }

    /// The commit hash and pack offset of the `position`-th kept commit (0: the oldest kept).
    fn index_record(&self, position: u64) -> Result<(ContextHash, u64), ContextError> {
        let start = self.index_start_bytes + position * INDEX_RECORD_BYTES;
        let pending_start = self.index_length_bytes - self.index_pending.len() as u64;
        let (in_flight_start, in_flight) = &self.index_in_flight;
        let in_flight_end = in_flight_start + in_flight.len() as u64;
        let mut record = [0u8; INDEX_RECORD_BYTES as usize];
        if start >= pending_start {
            let from = (start - pending_start) as usize;
            record.copy_from_slice(&self.index_pending[from..from + INDEX_RECORD_BYTES as usize]);
        } else if start >= *in_flight_start && start < in_flight_end {
            let from = (start - in_flight_start) as usize;
            record.copy_from_slice(&in_flight[from..from + INDEX_RECORD_BYTES as usize]);
        } else {
            self.index
                .read_exact_at(&mut record, start)
                .map_err(io_error(&self.index_path, "read"))?;
        }
        Ok(decode_index_record(&record))
    }

    /// Starts a garbage collection that keeps commit `keep` and every later commit, and frees
    /// the pack pages that only older commits reach ([`crate::gc`]). A GC still running is
    /// finished first. Returns once the GC's thread has started: commits go on beside it, and
    /// [`Store::wait_for_gc`] waits for its end.
    pub fn gc(&mut self, keep: &ContextHash) -> Result<(), ContextError> {
        if self.lock.is_none() {
            return Err(ContextError::ReadOnly);
        }
        self.wait_for_gc()?;
        let Some(&offset) = self.commits.get(keep) else {
            return Err(ContextError::UnknownCommit(*keep));
        };
        // Records are in pack order: the kept commit's position by binary search on offsets.
        let (mut low, mut high) = (0u64, self.commits.len() as u64);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.index_record(middle)?.1 < offset {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        self.start_gc(low)
    }

    /// [`Store::gc`] keeping the last `commits` commits (at least one); `false` if the store
    /// holds no more than that (nothing to collect).
    pub fn gc_keep_last(&mut self, commits: u64) -> Result<bool, ContextError> {
        if self.lock.is_none() {
            return Err(ContextError::ReadOnly);
        }
        self.wait_for_gc()?;
        let count = self.commits.len() as u64;
        if count <= commits.max(1) {
            return Ok(false);
        }
        self.start_gc(count - commits.max(1))?;
        Ok(true)
    }

    /// Sets the object cache's budget: the configured one less what the budget also covers
    /// beside the cache (the retained tree when asked, the GC's memory), never below a quarter
    /// of it.
    fn apply_cache_budget(&mut self) {
        let retained_estimated_bytes = if self.options.cache_budget_includes_retained {
            self.retained_bytes * RETAINED_ESTIMATED_PERCENT_OF_WRITTEN / 100
        } else {
            0
        };
        let beside = usize::try_from(retained_estimated_bytes)
            .unwrap_or(usize::MAX)
            .saturating_add(self.gc_memory_bytes());
        let budget = self.options.cache_budget_bytes;
        let cache_budget = budget.saturating_sub(beside).max(budget / 4);
        self.cache.get_mut().objects.set_budget_bytes(cache_budget);
    }

    /// The GC's memory as the cache budget counts it: the prefix's mapping and, while a GC runs,
    /// its new mapping and the mark's runs (each about the current mapping's size) and the mark's
    /// frontier (the last GC's peak, 4 bytes an entry, up to twice that in a heap's capacity).
    fn gc_memory_bytes(&self) -> usize {
        let mapping = self
            .reader
            .prefix()
            .map_or(0, |prefix| prefix.memory_bytes());
        if self.gc_run.is_none() {
            return mapping;
        }
        let frontier = self.gc_last.as_ref().map_or(0, |report| {
            usize::try_from(report.mark_frontier_peak)
                .unwrap_or(usize::MAX)
                .saturating_mul(8)
        });
        mapping.saturating_mul(3).saturating_add(frontier)
    }

    /// Starts a GC if the store's policy says one is due and none is running.
    fn start_gc_by_policy(&mut self) -> Result<(), ContextError> {
        let Some(policy) = self.options.gc else {
            return Ok(());
        };
        let count = self.commits.len() as u64;
        if self.gc_run.is_some()
            || self.gc_error.is_some()
            || self.commits_since_gc < policy.every_commits
            || count <= policy.keep_commits.max(1)
        {
            return Ok(());
        }
        self.start_gc(count - policy.keep_commits.max(1))
    }

    /// Starts a GC that keeps the `position`-th kept commit and every later one.
    fn start_gc(&mut self, position: u64) -> Result<(), ContextError> {
        let (kept, kept_offset) = self.index_record(position)?;
        self.commits_since_gc = 0;
        let mut roots = vec![kept_offset];
        if let Some((head_offset, _)) = self.head {
            if head_offset != kept_offset {
                roots.push(head_offset);
            }
        }
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let job = GcJob {
            reader: self.reader.try_clone()?,
            directory: self.directory.clone(),
            generation: self.gc_count + 1,
            sync: self.options.sync_mode != SyncMode::Never,
            pack: self
                .pack
                .try_clone()
                .map_err(io_error(&self.pack_path, "open"))?,
            pack_path: self.pack_path.clone(),
            index: self
                .index
                .try_clone()
                .map_err(io_error(&self.index_path, "open"))?,
            index_path: self.index_path.clone(),
            pack_length_bytes: self.pack_length_bytes,
            roots,
            index_start_bytes: self.index_start_bytes + position * INDEX_RECORD_BYTES,
            punched_below_bytes: self.gc_punched_below_bytes,
            cancel: cancel.clone(),
            abort_at: self.options.gc_abort_at,
        };
        let index_start_bytes = job.index_start_bytes;
        let (marked_sender, marked) = std::sync::mpsc::channel();
        let (go, go_received) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("gc".into())
            .spawn(move || crate::gc::run(job, marked_sender, go_received))
            .map_err(io_error(&self.directory, "start the GC thread"))?;
        self.gc_run = Some(GcRun {
            kept,
            kept_offset,
            index_start_bytes,
            started: std::time::Instant::now(),
            marked,
            go: Some(go),
            thread: Some(thread),
            cancel,
            phase: GcPhase::Marking,
        });
        Ok(())
    }

    /// Moves the running GC on as far as it can without waiting (`block`: to its end): publishes
    /// a finished mark (drops the older commits, starts the checkpoint that records it), lets
    /// the thread punch once that checkpoint is durable, and collects its result. A GC's own
    /// failure is kept for [`Store::wait_for_gc`]; a checkpoint's is returned.
    fn advance_gc(&mut self, block: bool) -> Result<(), ContextError> {
        loop {
            let Some(run) = &mut self.gc_run else {
                return Ok(());
            };
            match &mut run.phase {
                GcPhase::Marking => {
                    let received = if block {
                        run.marked
                            .recv()
                            .map_err(|_| std::sync::mpsc::TryRecvError::Disconnected)
                    } else {
                        run.marked.try_recv()
                    };
                    match received {
                        Err(std::sync::mpsc::TryRecvError::Empty) => return Ok(()),
                        Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                            self.end_gc(None);
                        }
                        Ok(Err(error)) => {
                            self.gc_error = Some(error);
                            self.end_gc(None);
                        }
                        Ok(Ok(marked)) => {
                            // Publishing waits for a checkpoint still syncing: not on a commit.
                            let checkpoint_running = self
                                .background_checkpoint
                                .as_ref()
                                .is_some_and(|thread| !thread.is_finished());
                            if checkpoint_running && !block {
                                run.phase = GcPhase::Marked(marked);
                                return Ok(());
                            }
                            self.publish_gc(marked)?
                        }
                    }
                }
                GcPhase::Marked(marked) => {
                    let checkpoint_running = self
                        .background_checkpoint
                        .as_ref()
                        .is_some_and(|thread| !thread.is_finished());
                    if checkpoint_running && !block {
                        return Ok(());
                    }
                    let marked = marked.clone();
                    self.publish_gc(marked)?
                }
                GcPhase::Publishing {
                    checkpoints_needed,
                    report,
                } => {
                    if self.poisoned {
                        // The publication may not be durable: punch nothing.
                        self.end_gc(None);
                        continue;
                    }
                    if self.checkpoints_completed >= *checkpoints_needed {
                        let report = std::mem::take(report);
                        if let Some(go) = run.go.take() {
                            let _ = go.send(());
                        }
                        run.phase = GcPhase::Punching { report };
                        continue;
                    }
                    let finished = self
                        .background_checkpoint
                        .as_ref()
                        .is_none_or(|thread| thread.is_finished());
                    if !block && !finished {
                        return Ok(());
                    }
                    let needed = *checkpoints_needed;
                    self.wait_for_checkpoint()?;
                    if self.checkpoints_completed < needed {
                        // No checkpoint was running: the publishing one was joined already.
                        self.checkpoint()?;
                    }
                }
                GcPhase::Punching { report } => {
                    let finished = run
                        .thread
                        .as_ref()
                        .is_none_or(|thread| thread.is_finished());
                    if !block && !finished {
                        return Ok(());
                    }
                    let report = std::mem::take(report);
                    self.end_gc(Some(report));
                }
            }
        }
    }

    /// Publishes a finished mark: drops the commits older than the kept one, records the new
    /// index start and GC boundary, and starts the checkpoint that makes them durable.
    fn publish_gc(&mut self, marked: Marked) -> Result<(), ContextError> {
        let Some(run) = &self.gc_run else {
            return Ok(());
        };
        let publish_start = std::time::Instant::now();
        let kept_offset = run.kept_offset;
        let index_start_bytes = run.index_start_bytes;
        let report = GcReport {
            kept_commit: run.kept,
            boundary_bytes: marked.boundary_bytes,
            commits_dropped: 0,
            live_objects: marked.live_objects,
            live_bytes: marked.live_bytes,
            prefix_bytes: marked.prefix.length_bytes(),
            prefix_runs: marked.prefix.run_count(),
            mark_frontier_peak: marked.frontier_peak,
            pack_bytes_punched: 0,
            index_bytes_punched: 0,
            mark_duration: marked.mark_duration,
            copy_duration: marked.copy_duration,
            publish_duration: std::time::Duration::ZERO,
            total_duration: std::time::Duration::ZERO,
        };
        self.wait_for_checkpoint()?;
        let before = self.commits.len();
        self.commits.retain(|_, offset| *offset >= kept_offset);
        // The index's capacity would otherwise stay at its peak (a store reopened with a long
        // history, then collected down to a window): give most of it back, with room to grow.
        if self.commits.capacity() > COMMIT_INDEX_SLACK * self.commits.len().max(1) {
            self.commits.shrink_to(2 * self.commits.len());
        }
        let commits_dropped = (before - self.commits.len()) as u64;
        self.index_start_bytes = index_start_bytes;
        self.gc_boundary_bytes = marked.boundary_bytes;
        self.gc_count += 1;
        debug_assert_eq!(marked.prefix.generation(), self.gc_count);
        debug_assert_eq!(marked.prefix.boundary(), self.gc_boundary_bytes);
        // Reads below the boundary come from the new prefix from now on: it holds every object
        // the kept commits reach there, at their offsets (the old files stay until the control
        // file naming the new ones is durable).
        self.reader.set_prefix(marked.prefix);
        self.gc_time_seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        self.checkpoint_in_background()?;
        if let Some(run) = &mut self.gc_run {
            run.phase = GcPhase::Publishing {
                checkpoints_needed: self.checkpoints_completed + 1,
                report: GcReport {
                    commits_dropped,
                    publish_duration: publish_start.elapsed(),
                    ..report
                },
            };
        }
        Ok(())
    }

    /// Joins the GC thread and forgets the run; with `report`, records what it did.
    fn end_gc(&mut self, report: Option<GcReport>) {
        let Some(mut run) = self.gc_run.take() else {
            return;
        };
        run.go = None;
        let joined = run.thread.take().map(|thread| {
            thread.join().unwrap_or_else(|_| {
                Err(io_error(&self.directory, "collect garbage")(
                    std::io::Error::other("the GC thread panicked"),
                ))
            })
        });
        match joined {
            Some(Ok(punched)) => {
                self.gc_punched_below_bytes = punched.punched_below_bytes;
                if let Some(report) = report {
                    self.gc_completed += 1;
                    self.gc_last = Some(GcReport {
                        pack_bytes_punched: punched.pack_bytes_punched,
                        index_bytes_punched: punched.index_bytes_punched,
                        total_duration: run.started.elapsed(),
                        ..report
                    });
                }
            }
            Some(Err(error)) => self.gc_error = Some(error),
            None => {}
        }
    }

    /// Waits for the running GC, if any, to end (its mark, publication and punching); returns
    /// what the last GC did, or its error.
    pub fn wait_for_gc(&mut self) -> Result<Option<GcReport>, ContextError> {
        self.advance_gc(true)?;
        match self.gc_error.take() {
            Some(error) => Err(error),
            None => Ok(self.gc_last.clone()),
        }
    }

    /// Re-hashes every object reachable from the head ([`VerifyScope::Head`]) or from every kept
    /// commit, checking each hash against the one its referrer records, each commit against its
    /// index record and the region checksums after the last GC ([`crate::verify`]). The first
    /// mismatch is a [`ContextError::Corrupt`] naming the file and offset.
    pub fn verify(&self, scope: VerifyScope) -> Result<VerifyReport, ContextError> {
        let count = self.commits.len() as u64;
        let positions = match scope {
            VerifyScope::Head => count.saturating_sub(1)..count,
            VerifyScope::AllCommits => 0..count,
        };
        let first_position = positions.start;
        let mut commits = Vec::with_capacity((positions.end - positions.start) as usize);
        for position in positions {
            let (indexed, offset) = self.index_record(position)?;
            commits.push(CommitToCheck {
                indexed,
                index_offset_bytes: self.index_start_bytes + position * INDEX_RECORD_BYTES,
                offset,
            });
        }
        crate::verify::verify(
            &crate::verify::Files {
                pack: &self.reader,
                pack_path: &self.pack_path,
                pack_length_bytes: self.pack_length_bytes,
                index_path: &self.index_path,
                gc_boundary_bytes: self.gc_boundary_bytes,
                head: self.head(),
                first_region_start: (first_position == 0
                    && self.index_start_bytes == INDEX_HEADER_BYTES
                    && self.gc_boundary_bytes == 0)
                    .then_some(PACK_HEADER_BYTES),
            },
            &commits,
        )
    }

    /// Every record of the pack by kind, with what irmin-pack V2 would write for the same
    /// objects ([`crate::census`]): a scan of every object stored (the prefix's live objects
    /// and the pack above the last GC's boundary).
    pub fn census(&self) -> Result<crate::Census, ContextError> {
        crate::census::census(&self.reader, self.pack_length_bytes)
    }

    /// Whether a GC is running.
    pub fn gc_running(&self) -> bool {
        self.gc_run.is_some()
    }

    /// GCs completed since the store was opened.
    pub fn gc_completed(&self) -> u64 {
        self.gc_completed
    }

    /// What the last GC since the store was opened did.
    pub fn last_gc(&self) -> Option<&GcReport> {
        self.gc_last.as_ref()
    }

    /// The GCs recorded in the control file: how many, the last one's boundary and time (seconds
    /// since the Unix epoch; 0 if none).
    pub fn gc_history(&self) -> (u64, u64, u64) {
        (self.gc_count, self.gc_boundary_bytes, self.gc_time_seconds)
    }

    /// Stops a running GC without waiting for its end: a mark is abandoned (nothing changes), a
    /// publication in progress is left to its checkpoint, punching stops between holes.
    fn cancel_gc(&mut self) {
        if let Some(run) = &self.gc_run {
            run.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.end_gc(None);
    }

    /// When the retained tree is released: moves its leaves (written objects that hold no memory
    /// children) into the object cache instead of letting them be freed with the tree. They are
    /// the directories the recent blocks changed, which the next blocks change again; dropped,
    /// each came back as a miss (a release showed as a few blocks of 800-2,100 misses). Inner
    /// objects are not kept: they hold their memory children, which the cache could then not free
    /// (cached objects hold only stored children, so evicting one frees it whole). The caller
    /// drops the rest of the tree. A leaf is shared with the cache from here on, so a later update
    /// of it copies it (or takes it out of the cache first, see `load_node_for_update`).
    fn cache_written_leaves(&self, root: &NodeRef) {
        let NodeRef::Memory(root) = root else {
            return;
        };
        let mut cache = self.cache.borrow_mut();
        let mut seen: std::collections::HashSet<*const NodeObject> =
            std::collections::HashSet::new();
        let mut stack = vec![root.clone()];
        let mut kept = 0u64;
        while let Some(object) = stack.pop() {
            if !seen.insert(Arc::as_ptr(&object)) {
                continue;
            }
            let height = stack.len();
            for_each_memory_child(&object, |child| stack.push(child.clone()));
            if stack.len() > height {
                continue;
            }
            let Some(&offset) = object.offset.get() else {
                continue;
            };
            // Large contents already loaded would be under-counted by the estimate.
            let holds_large_bytes = match &object.body {
                NodeBody::Flat(entries) | NodeBody::Values(entries) => {
                    entries.iter().any(|entry| {
                        matches!(&entry.value, Value::Contents(contents)
                            if matches!(&contents.body, ContentsBody::Large(large)
                                if large.bytes.get().is_some()))
                    })
                }
                // Compact directories never hold loaded large contents (they hold offsets).
                NodeBody::Tree { .. } | NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {
                    false
                }
            };
            if holds_large_bytes || object.hash.get().is_none() || cache.contains(offset) {
                continue;
            }
            let size = estimated_size(&object);
            cache.insert_written(offset, object, size);
            kept += 1;
        }
        drop(cache);
        self.statistics.borrow_mut().released_leaves_cached += kept;
    }

    /// Waits until the writer thread has written every part handed to it.
    fn wait_for_writer(&mut self) -> Result<(), ContextError> {
        match &mut self.writer {
            Some(writer) => writer.wait().map_err(io_error(&self.pack_path, "write")),
            None => Ok(()),
        }
    }

    /// Has the writer thread write zeros ahead of the pack's end, whole aligned
    /// [`RESERVE_CHUNK_BYTES`] chunks, until [`RESERVE_AHEAD_BYTES`] lie beyond it
    /// ([`crate::writer`] says why).
    /// Runs between commits, when no bytes are pending: the chunks lie beyond everything written
    /// or handed over, and the next commit's bytes are written after them.
    /// Not with [`SyncMode::EveryCommit`]: each `fdatasync` would write the zeros to the disk
    /// before the data that replaces them, twice the bytes (3,000 blocks of the replay: 1,010
    /// against 537 MB written; with checkpoints 517 against 505 MB).
    fn reserve_ahead(&mut self) -> Result<(), ContextError> {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        if self.options.sync_mode == SyncMode::EveryCommit {
            return Ok(());
        }
        debug_assert!(self.write_buffer.is_empty());
        if self.pack_reserved_end < self.pack_length_bytes {
            // The chunk the pack ends in holds bytes already: only the next one can be reserved.
            self.pack_reserved_end = self.pack_length_bytes.next_multiple_of(RESERVE_CHUNK_BYTES);
        }
        while self.pack_reserved_end < self.pack_length_bytes + RESERVE_AHEAD_BYTES {
            writer
                .reserve(self.pack_reserved_end)
                .map_err(io_error(&self.pack_path, "write"))?;
            self.pack_reserved_end += RESERVE_CHUNK_BYTES;
        }
        Ok(())
    }

    /// Cuts the zeros written ahead off the pack file, once the writer thread has stopped.
    fn drop_reserved(&mut self) -> Result<(), ContextError> {
        self.writer = None;
        if self.pack_reserved_end > self.pack_length_bytes {
            self.pack
                .set_len(self.pack_length_bytes)
                .map_err(io_error(&self.pack_path, "truncate"))?;
            self.pack_reserved_end = 0;
        }
        Ok(())
    }

    /// Hands the bytes encoded since the last hand-over to the writer thread, once there are
    /// enough to be worth a system call, and while the commit has handed over less than
    /// [`WRITER_HANDED_MAX_BYTES`] (a copy is handed: a bulk load must not double its memory).
    fn hand_over_written_bytes(&mut self) -> Result<(), ContextError> {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        let end = self.write_buffer.len();
        if end - self.write_buffer_in_file < WRITER_PART_MIN_BYTES
            || self.write_buffer_in_file >= WRITER_HANDED_MAX_BYTES
        {
            return Ok(());
        }
        let offset = self.pack_length_bytes + self.write_buffer_in_file as u64;
        writer
            .submit(offset, &self.write_buffer[self.write_buffer_in_file..end])
            .map_err(io_error(&self.pack_path, "write"))?;
        self.write_buffer_in_file = end;
        Ok(())
    }

    /// Appends every memory object below `root` that has no offset yet (children first, with an
    /// explicit stack) to the write buffer; returns the root's offset.
    fn write_tree(&mut self, root: &NodeRef) -> Result<u64, ContextError> {
        let root = match root {
            NodeRef::Stored { offset, .. } => return Ok(*offset),
            NodeRef::Memory(object) => object.clone(),
        };
        if let Some(offset) = root.offset.get() {
            return Ok(*offset);
        }
        let mut stack = vec![root.clone()];
        let mut written = 0u64;
        while let Some(top) = stack.last() {
            if top.offset.get().is_some() {
                stack.pop();
                continue;
            }
            let height = stack.len();
            let mut pending = Vec::new();
            for_each_memory_child(top, |child| {
                if child.offset.get().is_none() {
                    pending.push(child.clone());
                }
            });
            if !pending.is_empty() {
                stack.extend(pending);
                debug_assert!(stack.len() > height);
                continue;
            }
            let top = top.clone();
            stack.pop();
            // Large contents are objects of their own, written before the node naming them.
            if let NodeBody::Flat(entries) | NodeBody::Values(entries) = &top.body {
                for entry in entries {
                    if let Value::Contents(contents) = &entry.value {
                        if let ContentsBody::Large(large) = &contents.body {
                            if large.offset.get().is_none() {
                                let bytes = large.bytes.get().ok_or(ContextError::NoStore)?;
                                let offset =
                                    self.pack_length_bytes + self.write_buffer.len() as u64;
                                pack::write_object(&mut self.write_buffer, TAG_CONTENTS, |body| {
                                    body.extend_from_slice(bytes)
                                });
                                let _ = large.offset.set(offset);
                            }
                        }
                    }
                }
            }
            match &top.body {
                NodeBody::Flat(entries) if entries.len() > FLAT_SPLIT_MIN_ENTRIES => {
                    written += self.write_flat_split(&top, entries);
                }
                _ => {
                    let offset = self.pack_length_bytes + self.write_buffer.len() as u64;
                    pack::write_node(&mut self.write_buffer, &top);
                    let _ = top.offset.set(offset);
                    written += 1;
                }
            }
        }
        self.statistics.borrow_mut().objects_written += written;
        Ok(*root.offset.get().expect("written above"))
    }
}

impl Store {
    /// Appends the parts of the flat directory `object` (with `entries`) that are not in the
    /// pack yet, then its root; returns the number of objects written.
    fn write_flat_split(&mut self, object: &NodeObject, entries: &[Entry]) -> u64 {
        // Each entry's part, computed once per object and kept by in-place updates: hashing
        // every name of a 200-entry directory at each commit cost more than writing its part.
        let extras = object.extras_or_init();
        let indices = extras.part_indices.get_or_init(|| {
            entries
                .iter()
                .map(|entry| inode_index(0, &entry.name))
                .collect()
        });
        debug_assert_eq!(indices.len(), entries.len());
        debug_assert!(entries
            .iter()
            .zip(indices)
            .all(|(entry, index)| inode_index(0, &entry.name) == *index));
        let mut present = [false; INODE_ENTRIES_MAX];
        for index in indices {
            present[usize::from(*index)] = true;
        }
        let parts = extras.parts.get_or_init(flat_parts_empty);
        let mut pointers: Vec<(u8, u64)> = Vec::with_capacity(INODE_ENTRIES_MAX);
        let mut written = 0;
        for index in 0..INODE_ENTRIES_MAX as u8 {
            let slot = &parts[usize::from(index)];
            if !present[usize::from(index)] {
                slot.store(0, Ordering::Relaxed);
                continue;
            }
            let mut offset = slot.load(Ordering::Relaxed);
            if offset == 0 {
                offset = self.pack_length_bytes + self.write_buffer.len() as u64;
                let members = entries
                    .iter()
                    .zip(indices)
                    .filter(|(_, entry_index)| **entry_index == index)
                    .map(|(entry, _)| entry);
                let count = indices
                    .iter()
                    .filter(|entry_index| **entry_index == index)
                    .count();
                pack::write_flat_part(&mut self.write_buffer, index, ExactCount(members, count));
                slot.store(offset, Ordering::Relaxed);
                written += 1;
            }
            pointers.push((index, offset));
        }
        let offset = self.pack_length_bytes + self.write_buffer.len() as u64;
        pack::write_flat_split(&mut self.write_buffer, entries.len(), &pointers);
        let _ = object.offset.set(offset);
        written + 1
    }

    /// Loads the split flat directory whose root (at `offset`) has `count` entries in `parts`.
    fn load_flat_split(
        &self,
        offset: u64,
        count: usize,
        parts: &[(u8, u64)],
    ) -> Result<NodeObject, ContextError> {
        let mut entries: Vec<Entry> = Vec::with_capacity(count);
        let offsets = flat_parts_empty();
        let mut buffer = self.read_buffer.borrow_mut();
        let mut interner = self.interner.borrow_mut();
        for (index, part_offset) in parts {
            let (tag, body) = self.read_object(*part_offset, &mut buffer)?;
            if tag != TAG_FLAT_PART {
                return Err(self.corrupt(
                    *part_offset,
                    CorruptionKind::UnexpectedObject("a part of a split flat node"),
                ));
            }
            let body_start = body.start;
            let part = pack::read_flat_part(&buffer[body], *part_offset, *index, &mut interner)
                .map_err(|error| {
                    self.corrupt(
                        part_offset + (body_start + error.body_offset_bytes) as u64,
                        error.kind,
                    )
                })?;
            if entries.len() + part.len() > count {
                return Err(self.corrupt(
                    offset,
                    CorruptionKind::Inconsistent("a split flat node's count is its parts' sum"),
                ));
            }
            entries.extend(part);
            offsets[usize::from(*index)].store(*part_offset, Ordering::Relaxed);
        }
        if entries.len() != count {
            return Err(self.corrupt(
                offset,
                CorruptionKind::Inconsistent("a split flat node's count is its parts' sum"),
            ));
        }
        // Parts hold disjoint sets of names (each name has one index), so sorting restores the
        // flat order; the check below only guards against a bug.
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        if entries.windows(2).any(|pair| pair[0].name >= pair[1].name) {
            return Err(self.corrupt(
                offset,
                CorruptionKind::NotCanonical("names strictly increasing"),
            ));
        }
        let object = NodeObject::new(NodeBody::Flat(entries));
        let _ = object.extras_or_init().parts.set(offsets);
        Ok(object)
    }
}

/// An iterator with a length known in advance (a filtered iterator whose matches were counted).
struct ExactCount<I>(I, usize);

impl<I: Iterator> Iterator for ExactCount<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactCount<I> {}

/// Names longer than the pack format accepts are refused before anything is written: those of
/// `object` itself.
fn check_own_names(object: &NodeObject) -> Result<(), ContextError> {
    if let NodeBody::Flat(entries) | NodeBody::Values(entries) = &object.body {
        if entries
            .iter()
            .any(|entry| entry.name.len() > pack::NAME_MAX_BYTES)
        {
            return Err(ContextError::TooLarge("NAME_MAX_BYTES"));
        }
    }
    Ok(())
}

/// [`check_own_names`] of every memory object below `root` (included) not written yet.
fn check_names(root: &NodeObject) -> Result<(), ContextError> {
    // Borrowed objects (the root holds them all), so the walk does not touch reference counts.
    let mut stack: Vec<&NodeObject> = vec![root];
    while let Some(object) = stack.pop() {
        if object.offset.get().is_some() {
            continue;
        }
        check_own_names(object)?;
        for_each_memory_child(object, |child| stack.push(child));
    }
    Ok(())
}

/// The names check of a commit's level walk (`ensure_hash_by_level`'s `inspect`): the walk
/// reaches every unhashed object, so each checks its own names; it stops at a hashed one, so
/// what is not written yet below one it hands over (a subtree hashed before it was committed)
/// is walked here.
fn check_names_in_walk(object: &NodeObject) -> Result<(), ContextError> {
    if object.hash.get().is_none() {
        check_own_names(object)
    } else {
        check_names(object)
    }
}

/// Replaces the control file atomically: temporary file, fsync, rename, fsync of the directory.
fn write_control(sync: bool, directory: &Path, record: &ControlRecord) -> Result<(), ContextError> {
    let temporary = directory.join(CONTROL_TEMPORARY_NAME);
    let final_path = directory.join(CONTROL_FILE_NAME);
    let mut file = File::create(&temporary).map_err(io_error(&temporary, "create"))?;
    file.write_all(&record.encode())
        .map_err(io_error(&temporary, "write"))?;
    if sync {
        file.sync_all().map_err(io_error(&temporary, "sync"))?;
    }
    drop(file);
    std::fs::rename(&temporary, &final_path).map_err(io_error(&final_path, "rename"))?;
    if sync {
        sync_directory(directory)?;
    }
    Ok(())
}

impl Store {
    /// Reads and decodes the node object at `offset` (whose hash is `hash`) from the pack: a
    /// flat node or inode value in the compact form to be looked up, or (`for_update`) in the
    /// `Vec<Entry>` form an update changes.
    fn read_node(
        &self,
        offset: u64,
        hash: &ContextHash,
        for_update: bool,
    ) -> Result<NodeObject, ContextError> {
        let mut buffer = self.read_buffer.borrow_mut();
        let (tag, body) = self.read_object(offset, &mut buffer)?;
        let body_start = body.start;
        let position = |error: pack::PackError| {
            self.corrupt(
                offset + (body_start + error.body_offset_bytes) as u64,
                error.kind,
            )
        };
        let object = if tag == TAG_FLAT_SPLIT {
            let (count, parts) = pack::read_flat_split(&buffer[body], offset).map_err(position)?;
            drop(buffer);
            self.load_flat_split(offset, count, &parts)?
        } else if tag == TAG_INODE_TREE {
            let record = pack::read_tree(&buffer[body], offset).map_err(position)?;
            drop(buffer);
            let mut pointers = Vec::with_capacity(record.pointers.len());
            let mut hashes_read = 0;
            let cache = self.cache.borrow();
            for (index, child) in record.pointers {
                // A cached child knows its hash (checked against its record's when it was
                // loaded, or computed when it was written): no read of its record.
                let hash = match cache.peek_inode_hash(child) {
                    Some(hash) => hash,
                    None => {
                        hashes_read += 1;
                        read_own_hash(&self.reader, self.pack_length_bytes, child)?
                    }
                };
                pointers.push((
                    index,
                    NodeRef::Stored {
                        offset: child,
                        hash,
                    },
                ));
            }
            drop(cache);
            let mut statistics = self.statistics.borrow_mut();
            statistics.child_hashes_read += hashes_read;
            statistics.child_hashes_cached += pointers.len() as u64 - hashes_read;
            drop(statistics);
            let object = NodeObject::new(NodeBody::Tree {
                depth: record.depth,
                length: record.length,
                pointers,
            });
            let _ = object.hash.set(record.hash);
            object
        } else {
            let mut interner = self.interner.borrow_mut();
            let form = if for_update {
                pack::DirectoryForm::Entries(&mut interner)
            } else {
                pack::DirectoryForm::Compact
            };
            let object = pack::read_node(tag, &buffer[body], offset, form).map_err(position)?;
            drop(buffer);
            object
        };
        // Inode records hold their own hash: it must be the one their referrer holds.
        if object.hash.get_or_init(|| *hash) != hash {
            return Err(self.corrupt(
                offset,
                CorruptionKind::Inconsistent("an inode record's hash is the one its parent holds"),
            ));
        }
        let _ = object.offset.set(offset);
        Ok(object)
    }
}

impl ObjectSource for Store {
    fn load_node(&self, offset: u64, hash: &ContextHash) -> Result<Arc<NodeObject>, ContextError> {
        if let Some(object) = self.cache.borrow_mut().get(offset) {
            self.statistics.borrow_mut().cache_hits += 1;
            return Ok(object);
        }
        let object = self.read_node(offset, hash, false)?;
        let size = estimated_size(&object);
        self.statistics.borrow_mut().cache_inserted_bytes += size as u64;
        let object = Arc::new(object);
        self.cache.borrow_mut().insert(offset, object.clone(), size);
        Ok(object)
    }

    fn load_node_for_update(
        &self,
        offset: u64,
        hash: &ContextHash,
    ) -> Result<Arc<NodeObject>, ContextError> {
        // The version being replaced is not cached: the replay does not read it again (an
        // older checkout that does reads it back from the pack).
        if let Some(mut object) = self.cache.borrow_mut().remove(offset) {
            self.statistics.borrow_mut().cache_hits += 1;
            // Held by nobody else, a compact object is converted here to the form the update
            // changes, its short names shared through the interner (`take_for_update` would
            // allocate each).
            if let Some(owned) = Arc::get_mut(&mut object) {
                let mut interner = self.interner.borrow_mut();
                owned.make_mutable_with(|name| interner.name(name));
            }
            return Ok(object);
        }
        // Decoded straight into the form the update changes.
        Ok(Arc::new(self.read_node(offset, hash, true)?))
    }

    fn load_contents(&self, offset: u64, length_bytes: u64) -> Result<Arc<[u8]>, ContextError> {
        let mut buffer = self.read_buffer.borrow_mut();
        let (tag, body) = self.read_object(offset, &mut buffer)?;
        if tag != TAG_CONTENTS || body.len() as u64 != length_bytes {
            return Err(self.corrupt(
                offset,
                CorruptionKind::UnexpectedObject("contents of the recorded length"),
            ));
        }
        Ok(Arc::from(&buffer[body]))
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.lock.is_none() {
            return;
        }
        self.cancel_gc();
        // Best effort: a store dropped without `close` still records its progress; errors here
        // are not lost commits (those are durable already), only a longer scan on reopen.
        // A failed background checkpoint poisons the store.
        let _ = self.wait_for_checkpoint();
        if self.commits_since_checkpoint > 0 && !self.poisoned {
            let _ = self.checkpoint();
        }
        let _ = self.drop_reserved();
    }
}
