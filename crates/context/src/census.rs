//! What each kind of record costs in the pack, set beside what irmin-pack's V2 encoding of the same
//! objects would cost (the yardstick of `kestrel context info --census`).
//!
//! The census scans every object the store holds, frame by frame: on a collected store the live
//! objects below the last GC's boundary (each run of its prefix's mapping, read at its pack
//! offsets) and everything the pack holds above the boundary, live or not; on a store no GC has
//! collected, the whole pack (so run it there to count every block's bytes). The irmin-pack sizes are
//! computed from irmin-pack's encoding (irmin 3.x, `src/irmin-pack/inode.ml`, `Compress`, and
//! `pack_value.ml`), for a store with Octez's configuration (minimal indexing: children addressed
//! by pack offset; contents length header: LEB128; inodes of 32 entries):
//!
//! - every object is preceded by its 32-byte hash and a 1-byte kind; inodes and commits (V2) also
//!   by their length as an LEB128 integer, contents by their length (LEB128);
//! - every value is an object of its own: an entry of ours holding contents inline costs irmin an
//!   entry in the directory and a contents object;
//! - a directory entry is a 1-byte tag (node or contents, name inline or from the dictionary,
//!   address by offset or hash), the name (LEB128 length and bytes when inline), and the child's
//!   offset (an `int63`, 8 bytes);
//! - an inode tree pointer is its index (LEB128) and an address (a 1-byte tag and 8 bytes); the
//!   tree adds its depth, entry count and pointer count (LEB128 each) and a 1-byte tag;
//! - a commit is its tree's address (1 + 8), its parents' count (LEB128) and addresses (1 + 8
//!   each), the date (8), author and message (LEB128 length and bytes).
//!
//! Names are counted inline (irmin's dictionary stores up to 100,000 short names once and refers
//! to them by a small integer; [`Census::irmin_names_bytes`] says how much of irmin's total
//! names are, the most the dictionary could save).

use crate::error::ContextError;
use crate::leb128;
use crate::pack::{self, EntryList, ValueView, PACK_HEADER_BYTES};
use crate::prefix::PackReader;
use crate::walk::{corrupt_pack, read_frame};

/// Bytes of an irmin-pack object header: the hash and the kind.
const IRMIN_HEADER_BYTES: u64 = 32 + 1;
/// Bytes of an irmin-pack address by offset: the variant tag and an `int63` (8 bytes).
const IRMIN_ADDRESS_BYTES: u64 = 1 + 8;
/// Bytes of an irmin-pack directory entry besides its name: the tag and the child's offset.
const IRMIN_ENTRY_BYTES: u64 = 1 + 8;

/// Counts and bytes of one kind of record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordCost {
    /// Records of this kind.
    pub count: u64,
    /// Their bytes in this pack.
    pub bytes: u64,
    /// The bytes irmin-pack V2 would write for the same objects.
    pub irmin_bytes: u64,
}

/// The pack's records by kind (index = pack tag, docs/formats/pack-file.md; 0: inline contents,
/// which are records of their own in irmin-pack only: here their hash, length and bytes, taken
/// out of their directories' bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// By tag; index 0 counts inline contents (bytes here: their entries' share).
    pub by_tag: [RecordCost; 8],
    /// Of `irmin_bytes`, the names' bytes (length and bytes).
    pub irmin_names_bytes: u64,
    /// Of this pack's bytes, the 32-byte child hashes entries hold (inode tree pointers hold
    /// none since pack version 3).
    pub child_hash_bytes: u64,
    /// Of `child_hash_bytes`, those of inline contents: the hash of bytes the entry holds beside
    /// it, which a reader could recompute (a BLAKE2b-256 of the value) instead of reading.
    pub inline_child_hash_bytes: u64,
}

impl Census {
    /// The totals over every kind.
    pub fn total(&self) -> RecordCost {
        self.by_tag
            .iter()
            .fold(RecordCost::default(), |sum, cost| RecordCost {
                count: sum.count + cost.count,
                bytes: sum.bytes + cost.bytes,
                irmin_bytes: sum.irmin_bytes + cost.irmin_bytes,
            })
    }
}

fn leb128_bytes(value: u64) -> u64 {
    let mut buffer = Vec::with_capacity(leb128::LEB128_U64_MAX_BYTES);
    leb128::write_u64(&mut buffer, value);
    buffer.len() as u64
}

/// Scans the objects `file` holds up to `pack_length`: the runs of its prefix's mapping below
/// the prefix's boundary (if it has a prefix), then the pack from the boundary (or its header).
pub(crate) fn census(file: &PackReader, pack_length: u64) -> Result<Census, ContextError> {
    let mut census = Census::default();
    let mut buffer = Vec::new();
    let boundary = match file.prefix() {
        Some(prefix) => {
            for (start, end) in prefix.runs() {
                scan(file, start, end, &mut census, &mut buffer)?;
            }
            prefix.boundary()
        }
        None => PACK_HEADER_BYTES,
    };
    scan(file, boundary, pack_length, &mut census, &mut buffer)?;
    Ok(census)
}

/// Adds the objects of `file` from `start` (an object's offset) up to `end` (an object's end) to
/// `census`.
fn scan(
    file: &PackReader,
    start: u64,
    end: u64,
    census: &mut Census,
    buffer: &mut Vec<u8>,
) -> Result<(), ContextError> {
    let path = file.path();
    let mut offset = start.max(PACK_HEADER_BYTES);
    while offset < end {
        let frame = read_frame(file, end, offset, buffer)?;
        let body = &buffer[frame.body.clone()];
        let position = |error: pack::PackError| {
            corrupt_pack(
                path,
                frame.body_position(offset, error.body_offset_bytes),
                error.kind,
            )
        };
        let tag = frame.tag;
        let mut irmin = 0u64;
        // Inline contents' bytes are counted at index 0, not in their directory's frame.
        let inline_before = census.by_tag[0].bytes;
        let entries = |start: usize, limit: usize, census: &mut Census| {
            let mut list = EntryList::try_new(body, start, offset, limit, "entries")?;
            let mut irmin = 0u64;
            let mut count = 0u64;
            while let Some((_, entry)) = list.next_entry()? {
                count += 1;
                let name = leb128_bytes(entry.name.len() as u64) + entry.name.len() as u64;
                census.irmin_names_bytes += name;
                irmin += IRMIN_ENTRY_BYTES + name;
                match entry.value {
                    ValueView::Node { .. } | ValueView::Large { .. } => {
                        census.child_hash_bytes += 32;
                    }
                    ValueView::Inline { bytes, .. } => {
                        census.child_hash_bytes += 32;
                        census.inline_child_hash_bytes += 32;
                        // A contents object of its own in irmin.
                        let length = bytes.len() as u64;
                        let inline = &mut census.by_tag[0];
                        inline.count += 1;
                        inline.bytes += 32 + leb128_bytes(length) + length;
                        inline.irmin_bytes += IRMIN_HEADER_BYTES + leb128_bytes(length) + length;
                    }
                }
            }
            // The variant tag (values) and the entry count.
            Ok::<u64, pack::PackError>(irmin + 1 + leb128_bytes(count))
        };
        match tag {
            pack::TAG_FLAT_NODE => {
                irmin += entries(0, crate::hash::FLAT_NODE_MAX_ENTRIES, census).map_err(position)?
            }
            pack::TAG_INODE_VALUES | pack::TAG_FLAT_PART => {
                // An inode value starts with its own hash; a part with its index.
                let start = if tag == pack::TAG_FLAT_PART {
                    1
                } else {
                    crate::hash::HASH_BYTES
                };
                irmin +=
                    entries(start, crate::hash::FLAT_NODE_MAX_ENTRIES, census).map_err(position)?
            }
            pack::TAG_INODE_TREE => {
                let record = pack::read_tree(body, offset).map_err(position)?;
                irmin += 1
                    + leb128_bytes(u64::from(record.depth))
                    + leb128_bytes(record.length)
                    + leb128_bytes(record.pointers.len() as u64)
                    + record
                        .pointers
                        .iter()
                        .map(|(index, _)| leb128_bytes(u64::from(*index)) + IRMIN_ADDRESS_BYTES)
                        .sum::<u64>();
            }
            pack::TAG_FLAT_SPLIT => {
                let (count, parts) = pack::read_flat_split(body, offset).map_err(position)?;
                // Irmin's root inode of a directory of more than 32 entries: a tree at depth 0.
                irmin += 1
                    + leb128_bytes(0)
                    + leb128_bytes(count as u64)
                    + leb128_bytes(parts.len() as u64)
                    + parts
                        .iter()
                        .map(|(index, _)| leb128_bytes(u64::from(*index)) + IRMIN_ADDRESS_BYTES)
                        .sum::<u64>();
            }
            pack::TAG_CONTENTS => {}
            pack::TAG_COMMIT => {
                let record = pack::read_commit(body, offset).map_err(position)?;
                irmin += IRMIN_ADDRESS_BYTES
                    + leb128_bytes(record.parents.len() as u64)
                    + IRMIN_ADDRESS_BYTES * record.parents.len() as u64
                    + 8
                    + leb128_bytes(record.info.author.len() as u64)
                    + record.info.author.len() as u64
                    + leb128_bytes(record.info.message.len() as u64)
                    + record.info.message.len() as u64;
            }
            _ => {}
        }
        // The header: hash and kind, then the length (LEB128) of the body (contents, V2 inodes
        // and commits all carry one).
        let irmin_body = if tag == pack::TAG_CONTENTS {
            body.len() as u64
        } else {
            irmin
        };
        let inline_here = census.by_tag[0].bytes - inline_before;
        let cost = &mut census.by_tag[usize::from(tag) % 8];
        cost.count += 1;
        cost.bytes += frame.length_bytes() - inline_here;
        cost.irmin_bytes += IRMIN_HEADER_BYTES + leb128_bytes(irmin_body) + irmin_body;
        offset += frame.length_bytes();
    }
    Ok(())
}
