//! Irmin's replayable trace format (`Replayable_trace` V0 of irmin's trace definitions, magic
//! `IrmRepBT`), a writer, a reader, and a replayer, so a trace recorded by a Tezos node can be
//! replayed against this store unchanged. Normative description: docs/formats/trace-format.md
//! (and ../shared/specs/context-replay-workload.md).
//!
//! Layout: magic (8 bytes), version (int32 big-endian, 0), `[varint length][header]` (the header
//! is `unit`: length 0), then rows `[varint length][row]` until the end of the file. Rows are in
//! Repr's binary encoding: a variant is its case index as a varint then its payload; strings and
//! lists are varint-length-prefixed; `int64` is 8 bytes big-endian; `bool` is one byte.
//! The reader bounds every length (rows, keys, strings) and reports errors with the byte offset.

use crate::workload::{Generator, Operation};
use kestrel_context::leb128;
use kestrel_context::Store;
use kestrel_context::Tree;
use kestrel_context::{CommitInfo, ContextHash};
use kestrel_context::{ContextError, CorruptionKind, StoreFile};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

/// The trace's magic bytes ("Irmin's Replayable Bootstrap Trace").
pub const TRACE_MAGIC: [u8; 8] = *b"IrmRepBT";
/// The only version defined (V0).
pub const TRACE_VERSION: i32 = 0;
/// Largest row accepted: bounds what a corrupted length can make the reader allocate.
pub const TRACE_ROW_MAX_BYTES: u64 = 64 << 20;
/// Most components in a key (Tezos keys have under ten).
pub const TRACE_KEY_MAX_COMPONENTS: u64 = 1024;
/// Most parents in a commit row.
pub const TRACE_PARENTS_MAX: u64 = 256;

/// Row tags, the case indices of V0's `row` variant in declaration order.
pub const ROW_CHECKOUT: u64 = 0;
/// `Add of add`.
pub const ROW_ADD: u64 = 1;
/// `Remove of key * context_id scope * context_id scope`.
pub const ROW_REMOVE: u64 = 2;
/// `Copy of copy`.
pub const ROW_COPY: u64 = 3;
/// `Find of key * bool * context_id scope`.
pub const ROW_FIND: u64 = 4;
/// `Mem of key * bool * context_id scope`.
pub const ROW_MEM: u64 = 5;
/// `Mem_tree of key * bool * context_id scope`.
pub const ROW_MEM_TREE: u64 = 6;
/// `Commit of commit`.
pub const ROW_COMMIT: u64 = 7;

/// `'a scope = Forget of 'a | Keep of 'a`: whether this is the value's last use in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scoped<T> {
    /// The value.
    pub value: T,
    /// `true` for `Keep` (used again later), `false` for `Forget` (last use).
    pub keep: bool,
}

/// A context id of the trace.
pub type ContextId = i64;

/// One row of a replayable trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceRow {
    /// Checkout of a commit (by its hash in the trace) into a new context.
    Checkout {
        /// The trace's commit hash.
        hash: Scoped<Vec<u8>>,
        /// The new context.
        context: Scoped<ContextId>,
    },
    /// `add`.
    Add {
        /// Key.
        key: Vec<Vec<u8>>,
        /// Value.
        value: Vec<u8>,
        /// Input context.
        input: Scoped<ContextId>,
        /// Output context.
        output: Scoped<ContextId>,
    },
    /// `remove`.
    Remove {
        /// Key.
        key: Vec<Vec<u8>>,
        /// Input context.
        input: Scoped<ContextId>,
        /// Output context.
        output: Scoped<ContextId>,
    },
    /// `copy`.
    Copy {
        /// Source key.
        from: Vec<Vec<u8>>,
        /// Destination key.
        to: Vec<Vec<u8>>,
        /// Input context.
        input: Scoped<ContextId>,
        /// Output context.
        output: Scoped<ContextId>,
    },
    /// `find`, `mem` or `mem_tree`, with the recorded result.
    Read {
        /// Which read.
        kind: ReadKind,
        /// Key.
        key: Vec<Vec<u8>>,
        /// Recorded result (for `find`, whether it found contents).
        found: bool,
        /// Context.
        context: Scoped<ContextId>,
    },
    /// `commit`.
    Commit {
        /// The trace's commit hash.
        hash: Scoped<Vec<u8>>,
        /// Date in seconds.
        date_seconds: i64,
        /// Message.
        message: Vec<u8>,
        /// Parents (trace hashes).
        parents: Vec<Scoped<Vec<u8>>>,
        /// The committed context.
        input: Scoped<ContextId>,
    },
}

/// The three reads of a trace, rows of the same payload (`key * bool * context_id scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// `find`: whether the key holds contents (read in full).
    Find,
    /// `mem`: whether the key holds contents.
    Mem,
    /// `mem_tree`: whether the key holds anything.
    MemTree,
}

impl ReadKind {
    /// The row tag.
    fn tag(self) -> u64 {
        match self {
            ReadKind::Find => ROW_FIND,
            ReadKind::Mem => ROW_MEM,
            ReadKind::MemTree => ROW_MEM_TREE,
        }
    }

    /// The read of row tag `tag`, if it is one.
    fn of_tag(tag: u64) -> Option<ReadKind> {
        match tag {
            ROW_FIND => Some(ReadKind::Find),
            ROW_MEM => Some(ReadKind::Mem),
            ROW_MEM_TREE => Some(ReadKind::MemTree),
            _ => None,
        }
    }

    /// Performs the read of `key` on `tree`.
    fn perform<K: AsRef<[u8]>>(
        self,
        tree: &Tree,
        source: &dyn kestrel_context::ObjectSource,
        key: &[K],
    ) -> Result<bool, ContextError> {
        match self {
            ReadKind::Find => Ok(tree.find(source, key)?.is_some()),
            ReadKind::Mem => tree.mem(source, key),
            ReadKind::MemTree => tree.mem_tree(source, key),
        }
    }
}

/// Writes a trace.
pub struct TraceWriter<W: Write> {
    output: W,
    row: Vec<u8>,
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    leb128::write_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_key(out: &mut Vec<u8>, key: &[Vec<u8>]) {
    leb128::write_u64(out, key.len() as u64);
    for name in key {
        put_string(out, name);
    }
}

fn put_scope_tag(out: &mut Vec<u8>, keep: bool) {
    // Case indices: Forget = 0, Keep = 1.
    out.push(u8::from(keep));
}

fn put_context(out: &mut Vec<u8>, context: &Scoped<ContextId>) {
    put_scope_tag(out, context.keep);
    out.extend_from_slice(&context.value.to_be_bytes());
}

fn put_hash(out: &mut Vec<u8>, hash: &Scoped<Vec<u8>>) {
    put_scope_tag(out, hash.keep);
    put_string(out, &hash.value);
}

/// Appends the Repr encoding of `row`.
pub fn encode_row(out: &mut Vec<u8>, row: &TraceRow) {
    match row {
        TraceRow::Checkout { hash, context } => {
            leb128::write_u64(out, ROW_CHECKOUT);
            put_hash(out, hash);
            put_context(out, context);
        }
        TraceRow::Add {
            key,
            value,
            input,
            output,
        } => {
            leb128::write_u64(out, ROW_ADD);
            put_key(out, key);
            put_string(out, value);
            put_context(out, input);
            put_context(out, output);
        }
        TraceRow::Remove { key, input, output } => {
            leb128::write_u64(out, ROW_REMOVE);
            put_key(out, key);
            put_context(out, input);
            put_context(out, output);
        }
        TraceRow::Copy {
            from,
            to,
            input,
            output,
        } => {
            leb128::write_u64(out, ROW_COPY);
            put_key(out, from);
            put_key(out, to);
            put_context(out, input);
            put_context(out, output);
        }
        TraceRow::Read {
            kind,
            key,
            found,
            context,
        } => {
            leb128::write_u64(out, kind.tag());
            put_key(out, key);
            out.push(u8::from(*found));
            put_context(out, context);
        }
        TraceRow::Commit {
            hash,
            date_seconds,
            message,
            parents,
            input,
        } => {
            leb128::write_u64(out, ROW_COMMIT);
            put_hash(out, hash);
            out.extend_from_slice(&date_seconds.to_be_bytes());
            put_string(out, message);
            leb128::write_u64(out, parents.len() as u64);
            for parent in parents {
                put_hash(out, parent);
            }
            put_context(out, input);
        }
    }
}

impl<W: Write> TraceWriter<W> {
    /// Writes the magic, version and (empty) header.
    pub fn try_new(mut output: W) -> std::io::Result<TraceWriter<W>> {
        output.write_all(&TRACE_MAGIC)?;
        output.write_all(&TRACE_VERSION.to_be_bytes())?;
        output.write_all(&[0])?;
        Ok(TraceWriter {
            output,
            row: Vec::new(),
        })
    }

    /// Writes one row.
    pub fn write_row(&mut self, row: &TraceRow) -> std::io::Result<()> {
        self.row.clear();
        encode_row(&mut self.row, row);
        let mut length = Vec::with_capacity(leb128::LEB128_U64_MAX_BYTES);
        leb128::write_u64(&mut length, self.row.len() as u64);
        self.output.write_all(&length)?;
        self.output.write_all(&self.row)
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.output.flush()?;
        Ok(self.output)
    }
}

/// Reads a trace row by row.
pub struct TraceReader<R: Read> {
    input: R,
    path: PathBuf,
    offset_bytes: u64,
    row: Vec<u8>,
}

struct RowCursor<'a> {
    bytes: &'a [u8],
    offset: usize,
    base: u64,
}

impl RowCursor<'_> {
    fn fail<T>(&self, kind: CorruptionKind, path: &std::path::Path) -> Result<T, ContextError> {
        Err(ContextError::Corrupt {
            file: StoreFile::Trace,
            path: path.to_path_buf(),
            offset_bytes: self.base + self.offset as u64,
            kind,
        })
    }
}

macro_rules! cursor_try {
    ($cursor:expr, $path:expr, $value:expr, $kind:expr) => {
        match $value {
            Some(value) => value,
            None => return $cursor.fail($kind, $path),
        }
    };
}

impl<'a> RowCursor<'a> {
    fn integer(&mut self, path: &std::path::Path) -> Result<u64, ContextError> {
        let value = leb128::read_u64(self.bytes, &mut self.offset);
        Ok(cursor_try!(self, path, value, CorruptionKind::BadInteger))
    }

    fn take(&mut self, length: u64, path: &std::path::Path) -> Result<&'a [u8], ContextError> {
        let end = (self.offset as u64).checked_add(length);
        match end {
            Some(end) if end <= self.bytes.len() as u64 => {
                let slice = &self.bytes[self.offset..end as usize];
                self.offset = end as usize;
                Ok(slice)
            }
            _ => self.fail(CorruptionKind::Truncated, path),
        }
    }

    fn string(&mut self, path: &std::path::Path) -> Result<Vec<u8>, ContextError> {
        let length = self.integer(path)?;
        Ok(self.take(length, path)?.to_vec())
    }

    fn key(&mut self, path: &std::path::Path) -> Result<Vec<Vec<u8>>, ContextError> {
        let count = self.integer(path)?;
        if count > TRACE_KEY_MAX_COMPONENTS {
            return self.fail(
                CorruptionKind::LimitExceeded("TRACE_KEY_MAX_COMPONENTS"),
                path,
            );
        }
        (0..count).map(|_| self.string(path)).collect()
    }

    fn boolean(&mut self, path: &std::path::Path) -> Result<bool, ContextError> {
        match self.take(1, path)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => self.fail(CorruptionKind::UnknownTag(other), path),
        }
    }

    fn scope(&mut self, path: &std::path::Path) -> Result<bool, ContextError> {
        let tag = self.integer(path)?;
        match tag {
            0 => Ok(false),
            1 => Ok(true),
            other => self.fail(CorruptionKind::UnknownTag(other.min(255) as u8), path),
        }
    }

    fn int64(&mut self, path: &std::path::Path) -> Result<i64, ContextError> {
        let bytes = self.take(8, path)?;
        let mut value = [0u8; 8];
        value.copy_from_slice(bytes);
        Ok(i64::from_be_bytes(value))
    }

    fn context(&mut self, path: &std::path::Path) -> Result<Scoped<ContextId>, ContextError> {
        let keep = self.scope(path)?;
        Ok(Scoped {
            value: self.int64(path)?,
            keep,
        })
    }

    fn hash(&mut self, path: &std::path::Path) -> Result<Scoped<Vec<u8>>, ContextError> {
        let keep = self.scope(path)?;
        Ok(Scoped {
            value: self.string(path)?,
            keep,
        })
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the magic, version and header; `path` names the trace in errors.
    pub fn try_new(mut input: R, path: PathBuf) -> Result<TraceReader<R>, ContextError> {
        let fail = |offset_bytes, kind| ContextError::Corrupt {
            file: StoreFile::Trace,
            path: path.clone(),
            offset_bytes,
            kind,
        };
        let mut prefix = [0u8; 12];
        read_fully(&mut input, &mut prefix, &path)?
            .then_some(())
            .ok_or_else(|| fail(0, CorruptionKind::Truncated))?;
        if prefix[..8] != TRACE_MAGIC {
            return Err(fail(0, CorruptionKind::BadMagic));
        }
        let version = i32::from_be_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]);
        if version != TRACE_VERSION {
            return Err(fail(
                8,
                CorruptionKind::UnsupportedVersion(version as u32 as u64),
            ));
        }
        let mut reader = TraceReader {
            input,
            path: path.clone(),
            offset_bytes: 12,
            row: Vec::new(),
        };
        // The header is `unit`; accept (and skip) any bytes a later writer might put there.
        match reader.read_frame()? {
            Some(_) => Ok(reader),
            None => Err(fail(12, CorruptionKind::Truncated)),
        }
    }

    /// Reads one `[varint length][bytes]` frame into `self.row`; `None` at a clean end of file.
    fn read_frame(&mut self) -> Result<Option<u64>, ContextError> {
        let start = self.offset_bytes;
        let mut length = 0u64;
        for index in 0..leb128::LEB128_U64_MAX_BYTES {
            let mut byte = [0u8; 1];
            if !read_fully(&mut self.input, &mut byte, &self.path)? {
                if index == 0 {
                    return Ok(None);
                }
                return Err(self.corrupt(start, CorruptionKind::Truncated));
            }
            self.offset_bytes += 1;
            length |= u64::from(byte[0] & 0x7f) << (7 * index);
            if byte[0] & 0x80 == 0 {
                break;
            }
            if index + 1 == leb128::LEB128_U64_MAX_BYTES {
                return Err(self.corrupt(start, CorruptionKind::BadInteger));
            }
        }
        if length > TRACE_ROW_MAX_BYTES {
            return Err(self.corrupt(start, CorruptionKind::LimitExceeded("TRACE_ROW_MAX_BYTES")));
        }
        self.row.clear();
        self.row.resize(length as usize, 0);
        if !read_fully(&mut self.input, &mut self.row, &self.path)? {
            return Err(self.corrupt(self.offset_bytes, CorruptionKind::Truncated));
        }
        self.offset_bytes += length;
        Ok(Some(start))
    }

    fn corrupt(&self, offset_bytes: u64, kind: CorruptionKind) -> ContextError {
        ContextError::Corrupt {
            file: StoreFile::Trace,
            path: self.path.clone(),
            offset_bytes,
            kind,
        }
    }

    /// The next row, or `None` at the end of the trace.
    pub fn next_row(&mut self) -> Result<Option<TraceRow>, ContextError> {
        let Some(_) = self.read_frame()? else {
            return Ok(None);
        };
        let path = self.path.clone();
        let mut cursor = RowCursor {
            bytes: &self.row,
            offset: 0,
            base: self.offset_bytes - self.row.len() as u64,
        };
        let path = &path;
        let tag = cursor.integer(path)?;
        let row = match tag {
            ROW_CHECKOUT => TraceRow::Checkout {
                hash: cursor.hash(path)?,
                context: cursor.context(path)?,
            },
            ROW_ADD => TraceRow::Add {
                key: cursor.key(path)?,
                value: cursor.string(path)?,
                input: cursor.context(path)?,
                output: cursor.context(path)?,
            },
            ROW_REMOVE => TraceRow::Remove {
                key: cursor.key(path)?,
                input: cursor.context(path)?,
                output: cursor.context(path)?,
            },
            ROW_COPY => TraceRow::Copy {
                from: cursor.key(path)?,
                to: cursor.key(path)?,
                input: cursor.context(path)?,
                output: cursor.context(path)?,
            },
            ROW_COMMIT => {
                let hash = cursor.hash(path)?;
                let date_seconds = cursor.int64(path)?;
                let message = cursor.string(path)?;
                let count = cursor.integer(path)?;
                if count > TRACE_PARENTS_MAX {
                    return cursor.fail(CorruptionKind::LimitExceeded("TRACE_PARENTS_MAX"), path);
                }
                let parents = (0..count)
                    .map(|_| cursor.hash(path))
                    .collect::<Result<Vec<_>, _>>()?;
                TraceRow::Commit {
                    hash,
                    date_seconds,
                    message,
                    parents,
                    input: cursor.context(path)?,
                }
            }
            other => match ReadKind::of_tag(other) {
                Some(kind) => TraceRow::Read {
                    kind,
                    key: cursor.key(path)?,
                    found: cursor.boolean(path)?,
                    context: cursor.context(path)?,
                },
                None => {
                    cursor.offset = 0;
                    return cursor.fail(CorruptionKind::UnknownTag(other.min(255) as u8), path);
                }
            },
        };
        if cursor.offset != cursor.bytes.len() {
            return cursor.fail(CorruptionKind::Inconsistent("bytes after the row"), path);
        }
        Ok(Some(row))
    }
}

/// Fills `buffer`; `false` if the input ended before the first byte, an error if it ended later.
fn read_fully(
    input: &mut impl Read,
    buffer: &mut [u8],
    path: &std::path::Path,
) -> Result<bool, ContextError> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(ContextError::Io {
                    path: path.to_path_buf(),
                    action: "read",
                    source,
                })
            }
        }
    }
    if filled == 0 && !buffer.is_empty() {
        return Ok(false);
    }
    if filled < buffer.len() {
        return Err(ContextError::Corrupt {
            file: StoreFile::Trace,
            path: path.to_path_buf(),
            offset_bytes: 0,
            kind: CorruptionKind::Truncated,
        });
    }
    Ok(true)
}

fn key_bytes(key: &[String]) -> Vec<Vec<u8>> {
    key.iter().map(|name| name.as_bytes().to_vec()).collect()
}

/// Writes the synthetic workload (genesis, then `blocks` blocks) as a replayable trace. Reads
/// record `found = true`/`false` as the generator's model predicts is unknown to it, so they are
/// recorded from a replay of the operations on an in-memory tree.
pub fn write_synthetic_trace<W: Write>(
    writer: &mut TraceWriter<W>,
    seed: u64,
    initial_contracts: u64,
    blocks: u64,
    operations_per_block: u32,
) -> Result<(), ContextError> {
    let io = |source| ContextError::Io {
        path: PathBuf::from("<trace output>"),
        action: "write",
        source,
    };
    let mut generator = Generator::new(seed, initial_contracts);
    let mut tree = Tree::empty();
    let mut next_context: ContextId = 0;
    let emit = |writer: &mut TraceWriter<W>,
                tree: &mut Tree,
                context: &mut ContextId,
                operations: &[Operation]|
     -> Result<(), ContextError> {
        for operation in operations {
            let input = *context;
            let row = match operation {
                Operation::Find(key) | Operation::Mem(key) | Operation::MemTree(key) => {
                    let kind = match operation {
                        Operation::Find(_) => ReadKind::Find,
                        Operation::Mem(_) => ReadKind::Mem,
                        _ => ReadKind::MemTree,
                    };
                    TraceRow::Read {
                        kind,
                        found: kind.perform(tree, &kestrel_context::InMemory, key)?,
                        key: key_bytes(key),
                        context: Scoped {
                            value: input,
                            keep: true,
                        },
                    }
                }
                Operation::Add(key, value) => {
                    *tree = tree.add(&kestrel_context::InMemory, key, value)?;
                    *context += 1;
                    TraceRow::Add {
                        key: key_bytes(key),
                        value: value.clone(),
                        input: Scoped {
                            value: input,
                            keep: false,
                        },
                        output: Scoped {
                            value: *context,
                            keep: true,
                        },
                    }
                }
                Operation::Remove(key) => {
                    *tree = tree.remove(&kestrel_context::InMemory, key)?;
                    *context += 1;
                    TraceRow::Remove {
                        key: key_bytes(key),
                        input: Scoped {
                            value: input,
                            keep: false,
                        },
                        output: Scoped {
                            value: *context,
                            keep: true,
                        },
                    }
                }
                Operation::Copy(from, to) => {
                    if let Some(copied) = tree.copy(&kestrel_context::InMemory, from, to)? {
                        *tree = copied;
                    }
                    *context += 1;
                    TraceRow::Copy {
                        from: key_bytes(from),
                        to: key_bytes(to),
                        input: Scoped {
                            value: input,
                            keep: false,
                        },
                        output: Scoped {
                            value: *context,
                            keep: true,
                        },
                    }
                }
            };
            writer.write_row(&row).map_err(io)?;
        }
        Ok(())
    };
    let genesis = generator.genesis();
    emit(writer, &mut tree, &mut next_context, &genesis)?;
    drop(genesis);
    let commit_row = |level: u64, context: ContextId, count: u32| {
        let info = Generator::commit_info(level, count);
        TraceRow::Commit {
            hash: Scoped {
                value: format!("synthetic-{level}").into_bytes(),
                keep: true,
            },
            date_seconds: info.date_seconds,
            message: info.message.into_bytes(),
            parents: if level == 0 {
                Vec::new()
            } else {
                vec![Scoped {
                    value: format!("synthetic-{}", level - 1).into_bytes(),
                    keep: false,
                }]
            },
            input: Scoped {
                value: context,
                keep: false,
            },
        }
    };
    writer
        .write_row(&commit_row(0, next_context, 0))
        .map_err(io)?;
    for level in 1..=blocks {
        next_context += 1;
        writer
            .write_row(&TraceRow::Checkout {
                hash: Scoped {
                    value: format!("synthetic-{}", level - 1).into_bytes(),
                    keep: true,
                },
                context: Scoped {
                    value: next_context,
                    keep: true,
                },
            })
            .map_err(io)?;
        let operations = generator.block(operations_per_block);
        emit(writer, &mut tree, &mut next_context, &operations)?;
        writer
            .write_row(&commit_row(level, next_context, operations_per_block))
            .map_err(io)?;
    }
    Ok(())
}

/// What replaying a trace measured.
#[derive(Clone, Debug, Default)]
pub struct TraceReplayReport {
    /// Commits replayed.
    pub commits: u64,
    /// Rows replayed.
    pub rows: u64,
    /// Per-block times (from a checkout, or the previous commit, to the commit) in nanoseconds.
    pub block_nanoseconds: Vec<u64>,
    /// Reads whose result differs from the recorded one (0 for a faithful store).
    pub read_mismatches: u64,
    /// The last commit made.
    pub head: Option<ContextHash>,
}

/// Replays every row of `reader` against `store` (commits with author "Tezos", as Octez does).
/// Contexts and commit hashes are mapped from the trace's ids to this store's trees and hashes;
/// a context id never created (the genesis context) starts as the empty tree.
pub fn replay_trace<R: Read>(
    store: &mut Store,
    reader: &mut TraceReader<R>,
    mut progress: impl FnMut(u64),
) -> Result<TraceReplayReport, ContextError> {
    let mut contexts: HashMap<ContextId, Tree> = HashMap::new();
    let mut commits: HashMap<Vec<u8>, ContextHash> = HashMap::new();
    let mut report = TraceReplayReport::default();
    let mut block_start = Instant::now();
    let missing_commit = |hash: &[u8]| {
        ContextError::InvalidArgument(format!(
            "trace refers to commit {:?} before committing it",
            String::from_utf8_lossy(hash)
        ))
    };
    fn context_of(contexts: &mut HashMap<ContextId, Tree>, id: &Scoped<ContextId>) -> Tree {
        if id.keep {
            contexts.get(&id.value).cloned().unwrap_or_default()
        } else {
            contexts.remove(&id.value).unwrap_or_default()
        }
    }
    while let Some(row) = reader.next_row()? {
        report.rows += 1;
        match row {
            TraceRow::Checkout { hash, context } => {
                block_start = Instant::now();
                let commit = *commits
                    .get(&hash.value)
                    .ok_or_else(|| missing_commit(&hash.value))?;
                if !hash.keep {
                    commits.remove(&hash.value);
                }
                let tree = store
                    .checkout(&commit)?
                    .ok_or(ContextError::UnknownCommit(commit))?;
                contexts.insert(context.value, tree);
            }
            TraceRow::Add {
                key,
                value,
                input,
                output,
            } => {
                let tree = context_of(&mut contexts, &input).add(store, &key, &value)?;
                contexts.insert(output.value, tree);
            }
            TraceRow::Remove { key, input, output } => {
                let tree = context_of(&mut contexts, &input).remove(store, &key)?;
                contexts.insert(output.value, tree);
            }
            TraceRow::Copy {
                from,
                to,
                input,
                output,
            } => {
                let tree = context_of(&mut contexts, &input);
                let copied = tree.copy(store, &from, &to)?.unwrap_or(tree);
                contexts.insert(output.value, copied);
            }
            TraceRow::Read {
                kind,
                key,
                found,
                context,
            } => {
                let tree = context_of(&mut contexts, &context);
                report.read_mismatches += u64::from(kind.perform(&tree, store, &key)? != found);
            }
            TraceRow::Commit {
                hash,
                date_seconds,
                message,
                parents,
                input,
            } => {
                let tree = context_of(&mut contexts, &input);
                let mut parent_hashes = Vec::with_capacity(parents.len());
                for parent in &parents {
                    parent_hashes.push(
                        *commits
                            .get(&parent.value)
                            .ok_or_else(|| missing_commit(&parent.value))?,
                    );
                    if !parent.keep {
                        commits.remove(&parent.value);
                    }
                }
                let info = CommitInfo {
                    date_seconds,
                    author: "Tezos".into(),
                    message: String::from_utf8_lossy(&message).into_owned(),
                };
                let commit = store.commit(&tree, &parent_hashes, &info)?;
                if hash.keep {
                    commits.insert(hash.value, commit);
                }
                report
                    .block_nanoseconds
                    .push(block_start.elapsed().as_nanos() as u64);
                report.commits += 1;
                report.head = Some(commit);
                progress(report.commits);
                block_start = Instant::now();
            }
        }
    }
    Ok(report)
}
