//! The pack file format: a header, then objects appended one after another, each pointing to its
//! children by their (earlier) offsets. Normative spec: docs/formats/pack-file.md (the constants
//! here are checked against it by `tests/format_docs.rs`).
//!
//! Encoding needs every child to have an offset already (children are written first); decoding
//! validates everything the bytes control (tags, integer encodings, counts against their limits,
//! names strictly increasing, child offsets strictly before the parent) and returns a typed
//! [`PackError`] with the offset inside the object, never panicking. Entry lists (flat nodes,
//! inode values, flat parts) have one parser, [`EntryList`]; a flat node or inode value is built
//! from it in the compact read-only form (`compact.rs`) for lookups, or in the `Vec<Entry>` form
//! for an update ([`DirectoryForm`]).

use crate::compact::CompactEntries;
use crate::hash::{ContextHash, FLAT_NODE_MAX_ENTRIES, HASH_BYTES, INODE_ENTRIES_MAX};
use crate::leb128;
use crate::node::{
    inode_index, Contents, ContentsBody, Entry, LargeContents, NodeBody, NodeObject, NodeRef,
    Value, FLAT_SPLIT_MIN_ENTRIES, INODE_DEPTH_MAX,
};
use std::sync::{Arc, OnceLock};

/// The first 8 bytes of every pack file.
pub const PACK_MAGIC: [u8; 8] = *b"KSTRLPCK";
/// The pack format version this code writes and reads.
pub const PACK_VERSION: u32 = 3;
/// Magic (8) + version (4) + reserved (4).
pub const PACK_HEADER_BYTES: u64 = 16;

/// Object tag: a directory of at most 256 entries.
pub const TAG_FLAT_NODE: u8 = 1;
/// Object tag: an inode value (at most 32 entries).
pub const TAG_INODE_VALUES: u8 = 2;
/// Object tag: an inode tree (at most 32 pointers).
pub const TAG_INODE_TREE: u8 = 3;
/// Object tag: large contents (raw bytes).
pub const TAG_CONTENTS: u8 = 4;
/// Object tag: a commit.
pub const TAG_COMMIT: u8 = 5;
/// Object tag: a flat directory of more than 32 entries, stored as pointers to its parts.
pub const TAG_FLAT_SPLIT: u8 = 6;
/// Object tag: one part of a split flat directory (its entries of one inode index at depth 0).
pub const TAG_FLAT_PART: u8 = 7;

/// Entry kind: a node child (hash, offset).
pub const ENTRY_NODE: u8 = 0;
/// Entry kind: contents stored inline (hash, length, bytes).
pub const ENTRY_INLINE_CONTENTS: u8 = 1;
/// Entry kind: contents stored as their own object (hash, length, offset).
pub const ENTRY_LARGE_CONTENTS: u8 = 2;

/// Longest name the store writes. Irmin has no limit; Tezos paths use names of at most a few
/// dozen bytes (hex contract ids, 64-digit script hashes), so 4 KiB only rejects garbage.
pub const NAME_MAX_BYTES: usize = 4096;
/// Largest object body: bounds what a corrupted length can make the reader allocate. Contract code,
/// the largest Tezos value, is tens of kilobytes.
pub const OBJECT_BODY_MAX_BYTES: u64 = 1 << 30;
/// Longest commit author or message accepted.
pub const COMMIT_TEXT_MAX_BYTES: usize = 1 << 20;
/// Most parents a commit may have (Tezos commits have one; merges would have a few).
pub const COMMIT_PARENTS_MAX: usize = 256;
/// Bytes of the region checksum at the end of a commit object.
pub const CHECKSUM_BYTES: usize = 8;

/// Why an object's bytes were rejected, with the offset inside the object body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackError {
    /// Offset from the start of the object body.
    pub body_offset_bytes: usize,
    /// The rule that failed.
    pub kind: crate::CorruptionKind,
}

fn fail<T>(offset: usize, kind: crate::CorruptionKind) -> Result<T, PackError> {
    Err(PackError {
        body_offset_bytes: offset,
        kind,
    })
}

/// A decoded commit object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitRecord {
    /// The root tree's hash.
    pub tree_hash: ContextHash,
    /// The root tree's offset.
    pub tree_offset: u64,
    /// The parents' hashes (each with its offset when it is in this store).
    pub parents: Vec<(ContextHash, Option<u64>)>,
    /// Date, author, message.
    pub info: crate::CommitInfo,
    /// Checksum of the bytes from the end of the previous commit to the start of this one.
    pub region_checksum: u64,
}

/// The checksum sealing the bytes a commit made durable: XXH3-64 with seed 0. It only has to
/// catch torn and partial writes (every object is also checked when decoded, and node hashes are
/// BLAKE2b), so it need not be cryptographic; BLAKE2b here cost as much as hashing the objects.
pub fn region_checksum(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// Appends an object frame (`tag`, LEB128 body length, body) whose body `write_body` produces.
pub fn write_object(out: &mut Vec<u8>, tag: u8, write_body: impl FnOnce(&mut Vec<u8>)) {
    out.push(tag);
    // Write the body after a 2-byte gap (the length of any body under 16 KiB, almost all of
    // them), then write the length into the gap, moving the body only when it needs more or
    // fewer bytes.
    const GAP_BYTES: usize = 2;
    let length_position = out.len();
    out.extend_from_slice(&[0; GAP_BYTES]);
    let body_start = out.len();
    write_body(out);
    let body_length = (out.len() - body_start) as u64;
    let mut length = [0u8; leb128::LEB128_U64_MAX_BYTES];
    let mut length_bytes = Vec::with_capacity(0);
    let size = if body_length < 1 << 14 {
        let mut value = body_length;
        let mut size = 0;
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                length[size] = byte;
                break size + 1;
            }
            length[size] = byte | 0x80;
            size += 1;
        }
    } else {
        leb128::write_u64(&mut length_bytes, body_length);
        0
    };
    if size == GAP_BYTES {
        out[length_position..body_start].copy_from_slice(&length[..GAP_BYTES]);
    } else if size > 0 {
        out.splice(length_position..body_start, length[..size].iter().copied());
    } else {
        out.splice(length_position..body_start, length_bytes);
    }
}

fn write_entry(out: &mut Vec<u8>, entry: &Entry) {
    leb128::write_u64(out, entry.name.len() as u64);
    out.extend_from_slice(&entry.name);
    match &entry.value {
        Value::Node(node) => {
            out.push(ENTRY_NODE);
            let (offset, hash) = stored_location(node);
            out.extend_from_slice(&hash.0);
            leb128::write_u64(out, offset);
        }
        Value::Contents(contents) => match &contents.body {
            ContentsBody::Inline(bytes) => {
                out.push(ENTRY_INLINE_CONTENTS);
                out.extend_from_slice(&contents.hash.0);
                leb128::write_u64(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
            ContentsBody::Large(large) => {
                out.push(ENTRY_LARGE_CONTENTS);
                out.extend_from_slice(&contents.hash.0);
                leb128::write_u64(out, large.length_bytes);
                leb128::write_u64(
                    out,
                    *large
                        .offset
                        .get()
                        .expect("large contents are written first"),
                );
            }
        },
    }
}

/// The offset and hash of a node that has been written (a bug otherwise).
pub(crate) fn stored_location(node: &NodeRef) -> (u64, ContextHash) {
    match node {
        NodeRef::Stored { offset, hash } => (*offset, *hash),
        NodeRef::Memory(object) => (
            *object.offset.get().expect("children are written first"),
            *object.hash.get().expect("children are hashed first"),
        ),
    }
}

/// Appends the object for `object` (whose children are all written) and returns its tag.
pub(crate) fn write_node(out: &mut Vec<u8>, object: &NodeObject) {
    match &object.body {
        NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {
            unreachable!("compact objects are in the pack already")
        }
        NodeBody::Flat(entries) => write_object(out, TAG_FLAT_NODE, |body| {
            leb128::write_u64(body, entries.len() as u64);
            for entry in entries {
                write_entry(body, entry);
            }
        }),
        NodeBody::Values(entries) => write_object(out, TAG_INODE_VALUES, |body| {
            body.extend_from_slice(&own_hash(object).0);
            leb128::write_u64(body, entries.len() as u64);
            for entry in entries {
                write_entry(body, entry);
            }
        }),
        NodeBody::Tree {
            depth,
            length,
            pointers,
        } => write_object(out, TAG_INODE_TREE, |body| {
            body.extend_from_slice(&own_hash(object).0);
            leb128::write_u64(body, u64::from(*depth));
            leb128::write_u64(body, *length);
            body.push(pointers.len() as u8);
            for (index, pointer) in pointers {
                body.push(*index);
                let (offset, _) = stored_location(pointer);
                leb128::write_u64(body, offset);
            }
        }),
    }
}

/// The hash an inode value or inode tree record starts with: its own (the children of an inode
/// tree are named by offset alone; a reader takes each child's hash from the child's record).
fn own_hash(object: &NodeObject) -> &ContextHash {
    object
        .hash
        .get()
        .expect("inode objects are hashed before they are written")
}

/// A decoded inode tree record (tag 3): its own hash, depth, entry count and pointers (inode
/// index, child offset) by strictly increasing index. The children's hashes are in their own
/// records ([`read_own_hash`]).
pub(crate) struct TreeRecord {
    pub(crate) hash: ContextHash,
    pub(crate) depth: u32,
    pub(crate) length: u64,
    pub(crate) pointers: Vec<(u8, u64)>,
}

/// Decodes the body of an inode tree record stored at `object_offset`.
pub(crate) fn read_tree(body: &[u8], object_offset: u64) -> Result<TreeRecord, PackError> {
    let mut reader = Reader {
        bytes: body,
        offset: 0,
    };
    let hash = reader.hash()?;
    let depth_start = reader.offset;
    let depth = reader.integer()?;
    if depth >= u64::from(INODE_DEPTH_MAX) {
        return fail(
            depth_start,
            crate::CorruptionKind::LimitExceeded("INODE_DEPTH_MAX"),
        );
    }
    let length_start = reader.offset;
    let length = reader.integer()?;
    if length <= INODE_ENTRIES_MAX as u64 {
        return fail(
            length_start,
            crate::CorruptionKind::NotCanonical("an inode tree holds more than 32 entries"),
        );
    }
    let count_start = reader.offset;
    let count = usize::from(reader.byte()?);
    if count == 0 || count > INODE_ENTRIES_MAX {
        return fail(
            count_start,
            crate::CorruptionKind::LimitExceeded("INODE_ENTRIES_MAX"),
        );
    }
    let mut pointers: Vec<(u8, u64)> = Vec::with_capacity(count);
    for _ in 0..count {
        let index_start = reader.offset;
        let index = reader.byte()?;
        if usize::from(index) >= INODE_ENTRIES_MAX
            || pointers
                .last()
                .is_some_and(|(previous, _)| *previous >= index)
        {
            return fail(
                index_start,
                crate::CorruptionKind::NotCanonical("pointer indices increasing, below 32"),
            );
        }
        pointers.push((index, reader.child_offset(object_offset)?));
    }
    reader.finish()?;
    Ok(TreeRecord {
        hash,
        depth: depth as u32,
        length,
        pointers,
    })
}

/// Bytes that always hold the frame header and own hash of an inode value or inode tree: the tag,
/// a LEB128 body length of at most 5 bytes (`OBJECT_BODY_MAX_BYTES` is 2^30) and the hash.
pub const OWN_HASH_PREFIX_MAX_BYTES: usize = 1 + 5 + HASH_BYTES;
const _: () = assert!(OBJECT_BODY_MAX_BYTES < 1 << 35);

/// The own hash of the inode value or inode tree whose record starts `prefix` (at least the
/// record's first [`OWN_HASH_PREFIX_MAX_BYTES`] bytes, or the whole record if shorter), with
/// `available` bytes of pack from the record's start; errors at offsets from the record's start.
pub(crate) fn read_own_hash(prefix: &[u8], available: u64) -> Result<ContextHash, PackError> {
    let (tag, header_length, body_length) = read_frame_header(prefix)?;
    if tag != TAG_INODE_VALUES && tag != TAG_INODE_TREE {
        return fail(
            0,
            crate::CorruptionKind::UnexpectedObject("an inode value or inode tree"),
        );
    }
    if header_length as u64 + body_length > available
        || body_length < HASH_BYTES as u64
        || prefix.len() < header_length + HASH_BYTES
    {
        return fail(0, crate::CorruptionKind::Truncated);
    }
    let mut hash = [0u8; HASH_BYTES];
    hash.copy_from_slice(&prefix[header_length..header_length + HASH_BYTES]);
    Ok(ContextHash(hash))
}

/// Appends one part of a split flat directory: the `entries` (sorted, all of inode index
/// `index` at depth 0).
pub(crate) fn write_flat_part<'a>(
    out: &mut Vec<u8>,
    index: u8,
    entries: impl ExactSizeIterator<Item = &'a Entry>,
) {
    write_object(out, TAG_FLAT_PART, |body| {
        body.push(index);
        leb128::write_u64(body, entries.len() as u64);
        for entry in entries {
            write_entry(body, entry);
        }
    })
}

/// Appends the root of a split flat directory of `count` entries whose parts are at `parts`
/// (by increasing index).
pub(crate) fn write_flat_split(out: &mut Vec<u8>, count: usize, parts: &[(u8, u64)]) {
    write_object(out, TAG_FLAT_SPLIT, |body| {
        leb128::write_u64(body, count as u64);
        body.push(parts.len() as u8);
        for (index, offset) in parts {
            body.push(*index);
            leb128::write_u64(body, *offset);
        }
    })
}

/// Decodes the root of a split flat directory stored at `object_offset`: its entry count and its
/// parts (index, offset) by strictly increasing index.
pub(crate) fn read_flat_split(
    body: &[u8],
    object_offset: u64,
) -> Result<(usize, Vec<(u8, u64)>), PackError> {
    let mut reader = Reader {
        bytes: body,
        offset: 0,
    };
    let count_start = reader.offset;
    let count = reader.count(FLAT_NODE_MAX_ENTRIES, "FLAT_NODE_MAX_ENTRIES")?;
    if count <= FLAT_SPLIT_MIN_ENTRIES {
        return fail(
            count_start,
            crate::CorruptionKind::NotCanonical("a split flat node holds more than 32 entries"),
        );
    }
    let part_count_start = reader.offset;
    let part_count = usize::from(reader.byte()?);
    if part_count == 0 || part_count > INODE_ENTRIES_MAX {
        return fail(
            part_count_start,
            crate::CorruptionKind::LimitExceeded("INODE_ENTRIES_MAX"),
        );
    }
    let mut parts: Vec<(u8, u64)> = Vec::with_capacity(part_count);
    for _ in 0..part_count {
        let index_start = reader.offset;
        let index = reader.byte()?;
        if usize::from(index) >= INODE_ENTRIES_MAX
            || parts.last().is_some_and(|(previous, _)| *previous >= index)
        {
            return fail(
                index_start,
                crate::CorruptionKind::NotCanonical("part indices increasing, below 32"),
            );
        }
        let offset = reader.child_offset(object_offset)?;
        parts.push((index, offset));
    }
    reader.finish()?;
    Ok((count, parts))
}

/// Decodes one part of a split flat directory, stored at `object_offset`, which its root names
/// with index `index`: its entries, sorted, each of inode index `index` at depth 0.
pub(crate) fn read_flat_part(
    body: &[u8],
    object_offset: u64,
    index: u8,
    interner: &mut NameInterner,
) -> Result<Vec<Entry>, PackError> {
    let mut reader = Reader {
        bytes: body,
        offset: 0,
    };
    if reader.byte()? != index {
        return fail(
            0,
            crate::CorruptionKind::Inconsistent("a part's index differs from its root's"),
        );
    }
    let entries_start = reader.offset;
    let entries = read_entries(
        &mut reader,
        interner,
        object_offset,
        FLAT_NODE_MAX_ENTRIES,
        "FLAT_NODE_MAX_ENTRIES",
    )?;
    if entries.is_empty() {
        return fail(
            entries_start,
            crate::CorruptionKind::NotCanonical("a part is not empty"),
        );
    }
    if entries
        .iter()
        .any(|entry| inode_index(0, &entry.name) != index)
    {
        return fail(
            entries_start,
            crate::CorruptionKind::NotCanonical("a part's names have its inode index"),
        );
    }
    reader.finish()?;
    Ok(entries)
}

/// Appends a commit object.
pub fn write_commit(out: &mut Vec<u8>, record: &CommitRecord) {
    write_object(out, TAG_COMMIT, |body| {
        body.extend_from_slice(&record.tree_hash.0);
        leb128::write_u64(body, record.tree_offset);
        leb128::write_u64(body, record.parents.len() as u64);
        for (hash, offset) in &record.parents {
            body.extend_from_slice(&hash.0);
            leb128::write_u64(body, offset.map_or(0, |offset| offset + 1));
        }
        body.extend_from_slice(&record.info.date_seconds.to_be_bytes());
        leb128::write_u64(body, record.info.author.len() as u64);
        body.extend_from_slice(record.info.author.as_bytes());
        leb128::write_u64(body, record.info.message.len() as u64);
        body.extend_from_slice(record.info.message.as_bytes());
        body.extend_from_slice(&record.region_checksum.to_be_bytes());
    });
}

/// Reads an object frame header at the start of `bytes`: `(tag, header length, body length)`.
pub fn read_frame_header(bytes: &[u8]) -> Result<(u8, usize, u64), PackError> {
    let Some(&tag) = bytes.first() else {
        return fail(0, crate::CorruptionKind::Truncated);
    };
    if !(TAG_FLAT_NODE..=TAG_FLAT_PART).contains(&tag) {
        return fail(0, crate::CorruptionKind::UnknownTag(tag));
    }
    let mut offset = 1;
    let Some(body_length) = leb128::read_u64(bytes, &mut offset) else {
        return if bytes.len() < 1 + leb128::LEB128_U64_MAX_BYTES {
            fail(1, crate::CorruptionKind::Truncated)
        } else {
            fail(1, crate::CorruptionKind::BadInteger)
        };
    };
    if body_length > OBJECT_BODY_MAX_BYTES {
        return fail(
            1,
            crate::CorruptionKind::LimitExceeded("OBJECT_BODY_MAX_BYTES"),
        );
    }
    Ok((tag, offset, body_length))
}

/// Names up to this length are shared between decoded objects through a [`NameInterner`]: the
/// names that recur across many directories are short (a contract's `balance` and `counter`, a
/// big-map entry's `data`, index segments), while long ones (44-byte contract ids, 64-byte
/// big-map keys) are unique and would only churn the table.
pub(crate) const INTERNED_NAME_MAX_BYTES: usize = 16;

/// Slots of a [`NameInterner`] (a power of two): a few hundred distinct short names recur.
const INTERNER_SLOTS: usize = 512;

/// A bounded, direct-mapped table of recently decoded short names. Decoding a name found here
/// clones its `Arc` instead of allocating: for a contract directory (two short names, two small
/// values) that is two allocations and about 64 bytes of heap fewer per decoded object, so more
/// objects fit the cache budget. A colliding name replaces the slot's; memory stays bounded by
/// `INTERNER_SLOTS` names of at most [`INTERNED_NAME_MAX_BYTES`] bytes.
pub(crate) struct NameInterner {
    slots: Vec<Option<Arc<[u8]>>>,
}

impl Default for NameInterner {
    fn default() -> Self {
        NameInterner {
            slots: vec![None; INTERNER_SLOTS],
        }
    }
}

impl NameInterner {
    /// A shared copy of `name` (from the table when a short name is there).
    pub(crate) fn name(&mut self, name: &[u8]) -> Arc<[u8]> {
        if name.len() > INTERNED_NAME_MAX_BYTES {
            return Arc::from(name);
        }
        // FNV-1a over at most 16 bytes: cheap, and mixes short decimal and word names well.
        let mut hash: u32 = 0x811c_9dc5;
        for byte in name {
            hash = (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193);
        }
        let slot = &mut self.slots[(hash as usize) & (INTERNER_SLOTS - 1)];
        match slot {
            Some(interned) if **interned == *name => interned.clone(),
            _ => {
                let interned: Arc<[u8]> = Arc::from(name);
                *slot = Some(interned.clone());
                interned
            }
        }
    }
}

/// A cursor over an object body that turns every shortfall into a positioned [`PackError`].
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    fn integer(&mut self) -> Result<u64, PackError> {
        // One byte (below 128: name lengths, counts, inline lengths, small offsets) is the
        // common case, and needs no loop.
        if let Some(&byte) = self.bytes.get(self.offset) {
            if byte < 0x80 {
                self.offset += 1;
                return Ok(u64::from(byte));
            }
        }
        let start = self.offset;
        match leb128::read_u64(self.bytes, &mut self.offset) {
            Some(value) => Ok(value),
            None if self.bytes.len() - start < leb128::LEB128_U64_MAX_BYTES
                && self.bytes[start..].iter().all(|byte| byte & 0x80 != 0) =>
            {
                fail(start, crate::CorruptionKind::Truncated)
            }
            None => fail(start, crate::CorruptionKind::BadInteger),
        }
    }

    #[inline]
    fn take(&mut self, length: usize) -> Result<&'a [u8], PackError> {
        let end = self.offset.checked_add(length);
        match end {
            Some(end) if end <= self.bytes.len() => {
                let slice = &self.bytes[self.offset..end];
                self.offset = end;
                Ok(slice)
            }
            _ => fail(self.offset, crate::CorruptionKind::Truncated),
        }
    }

    #[inline]
    fn byte(&mut self) -> Result<u8, PackError> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    fn hash(&mut self) -> Result<ContextHash, PackError> {
        let mut hash = [0u8; HASH_BYTES];
        hash.copy_from_slice(self.take(HASH_BYTES)?);
        Ok(ContextHash(hash))
    }

    /// A child offset, which must be strictly before the object that names it.
    #[inline]
    fn child_offset(&mut self, object_offset: u64) -> Result<u64, PackError> {
        let start = self.offset;
        let child = self.integer()?;
        if child >= object_offset || child < PACK_HEADER_BYTES {
            return fail(start, crate::CorruptionKind::BadChildOffset(child));
        }
        Ok(child)
    }

    #[inline]
    fn count(&mut self, limit: usize, limit_name: &'static str) -> Result<usize, PackError> {
        let start = self.offset;
        let count = self.integer()?;
        if count > limit as u64 {
            return fail(start, crate::CorruptionKind::LimitExceeded(limit_name));
        }
        Ok(count as usize)
    }

    /// One entry (see [`read_entry`]).
    #[inline]
    fn entry(&mut self, object_offset: u64) -> Result<EntryView<'a>, PackError> {
        let name_length = self.count(NAME_MAX_BYTES, "NAME_MAX_BYTES")?;
        let name = self.take(name_length)?;
        let value = self.value(object_offset)?;
        Ok(EntryView { name, value })
    }

    /// The value of an entry, after its name (see [`read_entry`]).
    #[inline]
    fn value(&mut self, object_offset: u64) -> Result<ValueView<'a>, PackError> {
        let kind_offset = self.offset;
        let value = match self.byte()? {
            ENTRY_NODE => {
                let hash = self.hash()?;
                let offset = self.child_offset(object_offset)?;
                ValueView::Node { hash, offset }
            }
            ENTRY_INLINE_CONTENTS => {
                let hash = self.hash()?;
                let length = self.count(
                    crate::node::INLINE_CONTENTS_MAX_BYTES,
                    "INLINE_CONTENTS_MAX_BYTES",
                )?;
                let bytes = self.take(length)?;
                ValueView::Inline { hash, bytes }
            }
            ENTRY_LARGE_CONTENTS => {
                let hash = self.hash()?;
                let length_start = self.offset;
                let length_bytes = self.integer()?;
                if length_bytes > OBJECT_BODY_MAX_BYTES {
                    return fail(
                        length_start,
                        crate::CorruptionKind::LimitExceeded("OBJECT_BODY_MAX_BYTES"),
                    );
                }
                let offset = self.child_offset(object_offset)?;
                ValueView::Large {
                    hash,
                    length_bytes,
                    offset,
                }
            }
            other => return fail(kind_offset, crate::CorruptionKind::UnknownTag(other)),
        };
        Ok(value)
    }

    fn finish(&self) -> Result<(), PackError> {
        if self.offset != self.bytes.len() {
            return fail(
                self.offset,
                crate::CorruptionKind::Inconsistent("bytes after the end of the object"),
            );
        }
        Ok(())
    }
}

/// One entry of a flat node, inode value or flat part as stored, borrowing from the object body:
/// what both in-memory forms (the [`Entry`] vector and [`CompactEntries`]) are built from, so the
/// two share one parser.
pub(crate) struct EntryView<'a> {
    /// The entry's name.
    pub(crate) name: &'a [u8],
    /// What the entry binds.
    pub(crate) value: ValueView<'a>,
}

/// The value of an [`EntryView`].
pub(crate) enum ValueView<'a> {
    /// A node child (`ENTRY_NODE`).
    Node { hash: ContextHash, offset: u64 },
    /// Contents stored inline (`ENTRY_INLINE_CONTENTS`).
    Inline { hash: ContextHash, bytes: &'a [u8] },
    /// Contents stored as their own object (`ENTRY_LARGE_CONTENTS`).
    Large {
        hash: ContextHash,
        length_bytes: u64,
        offset: u64,
    },
}

impl ValueView<'_> {
    /// Whether the entry binds a directory or contents.
    pub(crate) fn kind(&self) -> crate::hash::Kind {
        match self {
            ValueView::Node { .. } => crate::hash::Kind::Node,
            ValueView::Inline { .. } | ValueView::Large { .. } => crate::hash::Kind::Contents,
        }
    }

    /// The in-memory value (allocates for contents: their bytes, or the large-contents handle).
    pub(crate) fn to_value(&self) -> Value {
        match *self {
            ValueView::Node { hash, offset } => Value::Node(NodeRef::Stored { offset, hash }),
            ValueView::Inline { hash, bytes } => Value::Contents(Contents {
                hash,
                body: ContentsBody::Inline(Arc::from(bytes)),
            }),
            ValueView::Large {
                hash,
                length_bytes,
                offset,
            } => Value::Contents(Contents {
                hash,
                body: ContentsBody::Large(Arc::new(LargeContents {
                    length_bytes,
                    bytes: OnceLock::new(),
                    offset: OnceLock::from(offset),
                })),
            }),
        }
    }
}

/// Parses the entry at `*offset` of `bytes` (an object body, or a copy of its entries that keeps
/// their offsets' meaning), advancing `*offset` past it. Checks everything one entry controls:
/// the integer encodings, the name against [`NAME_MAX_BYTES`], the kind, inline lengths against
/// `INLINE_CONTENTS_MAX_BYTES`, large lengths against [`OBJECT_BODY_MAX_BYTES`] and child offsets
/// strictly before `object_offset`. The order of names is the caller's (see [`read_entry_list`]).
pub(crate) fn read_entry<'a>(
    bytes: &'a [u8],
    offset: &mut usize,
    object_offset: u64,
) -> Result<EntryView<'a>, PackError> {
    parse_at(bytes, offset, |reader| reader.entry(object_offset))
}

/// The value of the entry whose name ends at `*offset` of `bytes`, checked as [`read_entry`]
/// checks it; advances `*offset` past it.
#[inline]
pub(crate) fn read_entry_value<'a>(
    bytes: &'a [u8],
    offset: &mut usize,
    object_offset: u64,
) -> Result<ValueView<'a>, PackError> {
    parse_at(bytes, offset, |reader| reader.value(object_offset))
}

/// Runs `parse` on a reader of `bytes` at `*offset` and advances `*offset` past what it read.
#[inline]
fn parse_at<'a, T>(
    bytes: &'a [u8],
    offset: &mut usize,
    parse: impl FnOnce(&mut Reader<'a>) -> Result<T, PackError>,
) -> Result<T, PackError> {
    let mut reader = Reader {
        bytes,
        offset: *offset,
    };
    let parsed = parse(&mut reader)?;
    *offset = reader.offset;
    Ok(parsed)
}

/// The name of the entry at `offset` of `bytes` and the offset where its value starts, without
/// parsing the value: the binary search of [`CompactEntries`] compares names only. `None` if
/// the bytes there are not a whole name.
#[inline]
pub(crate) fn entry_name(bytes: &[u8], offset: usize) -> Option<(&[u8], usize)> {
    let mut position = offset;
    // Names under 128 bytes (nearly all) have a one-byte length.
    let length = match bytes.get(position) {
        Some(&byte) if byte < 0x80 => {
            position += 1;
            usize::from(byte)
        }
        _ => usize::try_from(leb128::read_u64(bytes, &mut position)?).ok()?,
    };
    let end = position.checked_add(length)?;
    Some((bytes.get(position..end)?, end))
}

/// A cursor over the entry list of a flat node, inode value or flat part: an entry count (at
/// most a limit) and then the entries, each checked as [`read_entry`] does, with names strictly
/// increasing. The one parser of entry lists: both in-memory forms are built through it.
pub(crate) struct EntryList<'a> {
    reader: Reader<'a>,
    object_offset: u64,
    count: usize,
    remaining: usize,
    previous: Option<&'a [u8]>,
}

impl<'a> EntryList<'a> {
    /// Reads the entry count at `offset` of `bytes` (at most `limit`, named `limit_name` in the
    /// error) for the object stored at `object_offset`.
    pub(crate) fn try_new(
        bytes: &'a [u8],
        offset: usize,
        object_offset: u64,
        limit: usize,
        limit_name: &'static str,
    ) -> Result<EntryList<'a>, PackError> {
        let mut reader = Reader { bytes, offset };
        let count = reader.count(limit, limit_name)?;
        Ok(EntryList {
            reader,
            object_offset,
            count,
            remaining: count,
            previous: None,
        })
    }

    /// The number of entries the list declares.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The offset after the count and the entries read so far (after the last: the list's end).
    pub(crate) fn offset(&self) -> usize {
        self.reader.offset
    }

    /// The next entry and the offset where it starts, `None` after the last.
    #[inline]
    pub(crate) fn next_entry(&mut self) -> Result<Option<(usize, EntryView<'a>)>, PackError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let entry_start = self.reader.offset;
        let entry = self.reader.entry(self.object_offset)?;
        if self.previous.is_some_and(|previous| previous >= entry.name) {
            return fail(
                entry_start,
                crate::CorruptionKind::NotCanonical("names strictly increasing"),
            );
        }
        self.previous = Some(entry.name);
        Ok(Some((entry_start, entry)))
    }
}

fn read_entries(
    reader: &mut Reader<'_>,
    interner: &mut NameInterner,
    object_offset: u64,
    limit: usize,
    limit_name: &'static str,
) -> Result<Vec<Entry>, PackError> {
    let mut list = EntryList::try_new(
        reader.bytes,
        reader.offset,
        object_offset,
        limit,
        limit_name,
    )?;
    let mut entries: Vec<Entry> = Vec::with_capacity(list.count());
    while let Some((_, entry)) = list.next_entry()? {
        entries.push(Entry {
            name: interner.name(entry.name),
            value: entry.value.to_value(),
        });
    }
    reader.offset = list.offset();
    Ok(entries)
}

/// Which in-memory form [`read_node`] builds for a flat node or an inode value (both run the
/// same entry-list parser, [`EntryList`], with the same checks and errors).
pub(crate) enum DirectoryForm<'a> {
    /// Read-only, the entries as stored in one allocation ([`CompactEntries`]): for objects
    /// that are looked up (and cached).
    Compact,
    /// The `Vec<Entry>` form, short names shared through the interner: for objects about to be
    /// changed, which would otherwise be converted right after decoding.
    Entries(&'a mut NameInterner),
}

/// Decodes the node object with tag `tag` and body `body` stored at `object_offset`: flat nodes
/// and inode values in the form `form` asks for, inode trees with their pointers.
pub(crate) fn read_node(
    tag: u8,
    body: &[u8],
    object_offset: u64,
    form: DirectoryForm<'_>,
) -> Result<NodeObject, PackError> {
    let mut reader = Reader {
        bytes: body,
        offset: 0,
    };
    let mut own = None;
    let node_body = match (tag, form) {
        (TAG_FLAT_NODE | TAG_INODE_VALUES, form) => {
            let flat = tag == TAG_FLAT_NODE;
            if !flat {
                own = Some(reader.hash()?);
            }
            let (limit, limit_name) = if flat {
                (FLAT_NODE_MAX_ENTRIES, "FLAT_NODE_MAX_ENTRIES")
            } else {
                (INODE_ENTRIES_MAX, "INODE_ENTRIES_MAX")
            };
            let (node_body, empty) = match form {
                DirectoryForm::Compact => {
                    let entries = CompactEntries::try_new(
                        body,
                        &mut reader.offset,
                        object_offset,
                        limit,
                        limit_name,
                    )?;
                    let empty = entries.is_empty();
                    let node_body = if flat {
                        NodeBody::CompactFlat(entries)
                    } else {
                        NodeBody::CompactValues(entries)
                    };
                    (node_body, empty)
                }
                DirectoryForm::Entries(interner) => {
                    let entries =
                        read_entries(&mut reader, interner, object_offset, limit, limit_name)?;
                    let empty = entries.is_empty();
                    let node_body = if flat {
                        NodeBody::Flat(entries)
                    } else {
                        NodeBody::Values(entries)
                    };
                    (node_body, empty)
                }
            };
            // An empty flat node is the empty directory; an inode value is never empty.
            if empty && !flat {
                return fail(
                    0,
                    crate::CorruptionKind::NotCanonical("inode value is empty"),
                );
            }
            node_body
        }
        (other, _) => {
            return fail(
                0,
                crate::CorruptionKind::UnexpectedObject(match other {
                    TAG_CONTENTS => "a node object, found contents",
                    TAG_INODE_TREE => "a directory object, found an inode tree",
                    TAG_FLAT_PART => "a node object, found a part of one",
                    _ => "a node object, found a commit",
                }),
            )
        }
    };
    reader.finish()?;
    let object = NodeObject::new(node_body);
    if let Some(hash) = own {
        let _ = object.hash.set(hash);
    }
    Ok(object)
}

/// Appends to `children` the offset of every object that the object with tag `tag`, body `body`,
/// stored at `object_offset`, points to: node children and large contents of an entry list,
/// inode-tree pointers, split parts, a commit's tree (not its parents, which are commits of
/// their own). Validates what it reads as the decoders do. For walks over the pack that need no
/// decoded object: the GC's mark ([`crate::gc`]).
pub(crate) fn child_offsets(
    tag: u8,
    body: &[u8],
    object_offset: u64,
    children: &mut Vec<u64>,
) -> Result<(), PackError> {
    let entry_list = |start: usize, limit: usize, limit_name, children: &mut Vec<u64>| {
        let mut list = EntryList::try_new(body, start, object_offset, limit, limit_name)?;
        while let Some((_, entry)) = list.next_entry()? {
            match entry.value {
                ValueView::Node { offset, .. } | ValueView::Large { offset, .. } => {
                    children.push(offset)
                }
                ValueView::Inline { .. } => {}
            }
        }
        if list.offset() != body.len() {
            return fail(
                list.offset(),
                crate::CorruptionKind::Inconsistent("bytes after the end of the object"),
            );
        }
        Ok(())
    };
    match tag {
        TAG_FLAT_NODE => entry_list(0, FLAT_NODE_MAX_ENTRIES, "FLAT_NODE_MAX_ENTRIES", children),
        TAG_INODE_VALUES => {
            entry_list(HASH_BYTES, INODE_ENTRIES_MAX, "INODE_ENTRIES_MAX", children)
        }
        TAG_FLAT_PART => entry_list(1, FLAT_NODE_MAX_ENTRIES, "FLAT_NODE_MAX_ENTRIES", children),
        TAG_INODE_TREE => {
            let record = read_tree(body, object_offset)?;
            children.extend(record.pointers.iter().map(|(_, offset)| *offset));
            Ok(())
        }
        TAG_FLAT_SPLIT => {
            let (_, parts) = read_flat_split(body, object_offset)?;
            children.extend(parts.iter().map(|(_, offset)| *offset));
            Ok(())
        }
        TAG_COMMIT => {
            children.push(read_commit(body, object_offset)?.tree_offset);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Decodes a commit object body stored at `object_offset`.
pub fn read_commit(body: &[u8], object_offset: u64) -> Result<CommitRecord, PackError> {
    let mut reader = Reader {
        bytes: body,
        offset: 0,
    };
    let tree_hash = reader.hash()?;
    let tree_offset = reader.child_offset(object_offset)?;
    let parent_count = reader.count(COMMIT_PARENTS_MAX, "COMMIT_PARENTS_MAX")?;
    let mut parents = Vec::with_capacity(parent_count);
    for _ in 0..parent_count {
        let hash = reader.hash()?;
        let start = reader.offset;
        let offset_plus_one = reader.integer()?;
        let offset = match offset_plus_one {
            0 => None,
            value if value - 1 < object_offset && value > PACK_HEADER_BYTES => Some(value - 1),
            value => return fail(start, crate::CorruptionKind::BadChildOffset(value - 1)),
        };
        parents.push((hash, offset));
    }
    let mut date = [0u8; 8];
    date.copy_from_slice(reader.take(8)?);
    let text = |reader: &mut Reader<'_>| -> Result<String, PackError> {
        let length = reader.count(COMMIT_TEXT_MAX_BYTES, "COMMIT_TEXT_MAX_BYTES")?;
        let start = reader.offset;
        let bytes = reader.take(length)?;
        String::from_utf8(bytes.to_vec()).or_else(|_| {
            fail(
                start,
                crate::CorruptionKind::NotCanonical("commit text is UTF-8"),
            )
        })
    };
    let author = text(&mut reader)?;
    let message = text(&mut reader)?;
    let mut checksum = [0u8; CHECKSUM_BYTES];
    checksum.copy_from_slice(reader.take(CHECKSUM_BYTES)?);
    reader.finish()?;
    Ok(CommitRecord {
        tree_hash,
        tree_offset,
        parents,
        info: crate::CommitInfo {
            date_seconds: i64::from_be_bytes(date),
            author,
            message,
        },
        region_checksum: u64::from_be_bytes(checksum),
    })
}

/// The bytes of the pack header.
pub fn header_bytes() -> [u8; PACK_HEADER_BYTES as usize] {
    let mut header = [0u8; PACK_HEADER_BYTES as usize];
    header[..8].copy_from_slice(&PACK_MAGIC);
    header[8..12].copy_from_slice(&PACK_VERSION.to_be_bytes());
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body_length: usize) {
        let mut out = vec![9u8; 3];
        let body: Vec<u8> = (0..body_length).map(|index| index as u8).collect();
        write_object(&mut out, TAG_CONTENTS, |buffer| {
            buffer.extend_from_slice(&body)
        });
        let (tag, header_length, length) = read_frame_header(&out[3..]).unwrap();
        assert_eq!(
            (tag, length),
            (TAG_CONTENTS, body_length as u64),
            "{body_length}"
        );
        assert_eq!(&out[3 + header_length..], &body[..], "{body_length}");
        assert_eq!(out[..3], [9, 9, 9]);
    }

    #[test]
    fn interned_names_are_shared_and_always_equal_to_the_input() {
        let mut interner = NameInterner::default();
        // (name, whether a second decode shares the first's allocation). 0, 1, the maximum and
        // one past it; then enough distinct short names to force collisions in the table.
        let mut cases: Vec<(Vec<u8>, bool)> = vec![
            (Vec::new(), true),
            (b"b".to_vec(), true),
            (b"balance".to_vec(), true),
            (vec![b'x'; INTERNED_NAME_MAX_BYTES], true),
            (vec![b'x'; INTERNED_NAME_MAX_BYTES + 1], false),
        ];
        for (name, shared) in &cases {
            let first = interner.name(name);
            let second = interner.name(name);
            assert_eq!(&*first, &name[..]);
            assert_eq!(&*second, &name[..]);
            assert_eq!(Arc::ptr_eq(&first, &second), *shared, "{name:?}");
        }
        cases = (0..4 * INTERNER_SLOTS)
            .map(|index| (index.to_string().into_bytes(), true))
            .collect();
        for _ in 0..2 {
            for (name, _) in &cases {
                assert_eq!(&*interner.name(name), &name[..]);
            }
        }
    }

    #[test]
    fn frames_of_every_length_class() {
        // 0, 1 and 127 take a 1-byte length; 128 and 16383 two bytes; above, three or more.
        for length in [0, 1, 127, 128, 129, 16_383, 16_384, 100_000, 2_097_152] {
            check(length);
        }
    }
}
