//! Reading object frames from a pack file, and walking every object reachable from a set of roots
//! once each, in decreasing offset order.
//!
//! Every child offset is strictly smaller than its parent's (docs/formats/pack-file.md), so a
//! max-heap of pending offsets pops each object after every object that points to it: all copies
//! of one offset are pushed before the first is popped and come out together, which makes the
//! heap its own visited set. Memory is the frontier (offsets pushed, not yet popped), not the set
//! of objects visited, and the file is read from its end towards its start. The GC's mark
//! ([`crate::gc`]) and `verify` ([`crate::verify`]) are walks; a store reads single objects
//! through [`read_frame`].

use crate::error::{ContextError, CorruptionKind, StoreFile};
use crate::hash::ContextHash;
use crate::pack::{read_frame_header, OWN_HASH_PREFIX_MAX_BYTES, PACK_HEADER_BYTES};
use crate::prefix::PackReader;
use std::collections::{BTreeMap, BinaryHeap};
use std::path::Path;

/// The page size the first read of an object is bounded by: the page cache works in 4 KiB pages,
/// so a read that stops at the end of the object's first page costs at most one page from disk
/// when the object fits in it (a fixed 4 KiB read at an unaligned offset touched two).
pub(crate) const PAGE_BYTES: u64 = 4096;
/// Bytes the first read fetches at least, even across a page boundary: the frame header (tag and
/// LEB128 length) must be whole to know how much more to read.
const FIRST_READ_MIN_BYTES: u64 = 64;
// The tag byte and a LEB128 length of at most `LEB128_U64_MAX_BYTES` must fit.
const _: () = assert!(FIRST_READ_MIN_BYTES > crate::leb128::LEB128_U64_MAX_BYTES as u64);

/// The error for a bad object of the pack at `path`.
pub(crate) fn corrupt_pack(path: &Path, offset_bytes: u64, kind: CorruptionKind) -> ContextError {
    ContextError::Corrupt {
        file: StoreFile::Pack,
        path: path.to_path_buf(),
        offset_bytes,
        kind,
    }
}

/// A frame read by [`read_frame`]: its tag, where its body lies in the buffer, its length in the
/// pack and the bytes read.
pub(crate) struct Frame {
    pub(crate) tag: u8,
    pub(crate) body: std::ops::Range<usize>,
    /// The header's length: the body starts this far after the frame's offset.
    pub(crate) header_bytes: usize,
    length: u64,
    pub(crate) bytes_read: u64,
}

impl Frame {
    /// The frame's length in the pack (header and body).
    pub(crate) fn length_bytes(&self) -> u64 {
        self.length
    }

    /// The pack offset of a position inside the body of the frame at `offset`.
    pub(crate) fn body_position(&self, offset: u64, in_body: usize) -> u64 {
        offset + (self.header_bytes + in_body) as u64
    }
}

/// Reads the object frame at `offset` of the pack `file` (valid up to `pack_length`) into
/// `buffer`. The buffer is only grown, never cleared, so a read does not zero it first.
pub(crate) fn read_frame(
    file: &PackReader,
    pack_length: u64,
    offset: u64,
    buffer: &mut Vec<u8>,
) -> Result<Frame, ContextError> {
    let path = file.path();
    if offset < PACK_HEADER_BYTES || offset >= pack_length {
        return Err(corrupt_pack(
            path,
            offset,
            CorruptionKind::BadChildOffset(offset),
        ));
    }
    let available = pack_length - offset;
    let to_page_end = PAGE_BYTES - offset % PAGE_BYTES;
    let first = available.min(to_page_end.max(FIRST_READ_MIN_BYTES)) as usize;
    if buffer.len() < first {
        buffer.resize(first.max(PAGE_BYTES as usize), 0);
    }
    let first = file.read_some_at(&mut buffer[..first], offset)?;
    let (tag, header_length, body_length) = read_frame_header(&buffer[..first])
        .map_err(|error| corrupt_pack(path, offset + error.body_offset_bytes as u64, error.kind))?;
    let total = header_length as u64 + body_length;
    if total > available {
        return Err(corrupt_pack(path, offset, CorruptionKind::Truncated));
    }
    let total = total as usize;
    if total > first {
        if buffer.len() < total {
            buffer.resize(total, 0);
        }
        file.read_exact_at(&mut buffer[first..total], offset + first as u64)?;
    }
    Ok(Frame {
        tag,
        body: header_length..total,
        header_bytes: header_length,
        length: total as u64,
        bytes_read: first.max(total) as u64,
    })
}

/// Reads the hash that the inode value or inode tree at `offset` of the pack `file` (valid up to
/// `pack_length`) records of itself ([`crate::pack::read_own_hash`]): how a reader
/// learns the hashes of an inode tree's children, which the tree names by offset alone.
pub(crate) fn read_own_hash(
    file: &PackReader,
    pack_length: u64,
    offset: u64,
) -> Result<ContextHash, ContextError> {
    let path = file.path();
    if offset < PACK_HEADER_BYTES || offset >= pack_length {
        return Err(corrupt_pack(
            path,
            offset,
            CorruptionKind::BadChildOffset(offset),
        ));
    }
    let available = pack_length - offset;
    let mut prefix = [0u8; OWN_HASH_PREFIX_MAX_BYTES];
    let length = (OWN_HASH_PREFIX_MAX_BYTES as u64).min(available) as usize;
    file.read_exact_at(&mut prefix[..length], offset)?;
    crate::pack::read_own_hash(&prefix[..length], available)
        .map_err(|error| corrupt_pack(path, offset + error.body_offset_bytes as u64, error.kind))
}

/// Bytes a walk reads at once: it visits objects in decreasing offset order, and live objects
/// sit close together (several to a page), so one read of the pages below an object serves the
/// next ones without a system call each.
const WINDOW_BYTES: u64 = 32 << 10;

/// The pack bytes last read by a walk, from `start`.
#[derive(Default)]
struct Window {
    start: u64,
    bytes: Vec<u8>,
}

impl Window {
    /// The frame at `offset` from the window, reading the window that ends with the page after
    /// `offset`'s when it does not hold it; `None` when the frame is longer than a window holds
    /// (read it on its own).
    fn frame(
        &mut self,
        file: &PackReader,
        pack_length: u64,
        offset: u64,
    ) -> Result<Option<Frame>, ContextError> {
        let path = file.path();
        if offset < PACK_HEADER_BYTES || offset >= pack_length {
            return Err(corrupt_pack(
                path,
                offset,
                CorruptionKind::BadChildOffset(offset),
            ));
        }
        let header_end = (offset + FIRST_READ_MIN_BYTES).min(pack_length);
        if offset < self.start || header_end > self.start + self.bytes.len() as u64 {
            let end = (offset / PAGE_BYTES + 2) * PAGE_BYTES;
            let end = end.min(pack_length).max(header_end);
            let start = end.saturating_sub(WINDOW_BYTES).max(PACK_HEADER_BYTES);
            self.bytes.resize((end - start) as usize, 0);
            file.read_exact_at(&mut self.bytes, start)?;
            self.start = start;
        }
        let at = (offset - self.start) as usize;
        let (tag, header_length, body_length) =
            read_frame_header(&self.bytes[at..]).map_err(|error| {
                corrupt_pack(path, offset + error.body_offset_bytes as u64, error.kind)
            })?;
        let total = header_length as u64 + body_length;
        if total > pack_length - offset {
            return Err(corrupt_pack(path, offset, CorruptionKind::Truncated));
        }
        if at as u64 + total > self.bytes.len() as u64 {
            return Ok(None);
        }
        Ok(Some(Frame {
            tag,
            body: at + header_length..at + total as usize,
            header_bytes: header_length,
            length: total,
            bytes_read: total,
        }))
    }
}

/// One object of a walk, as [`walk`] hands it to its visitor.
pub(crate) struct Visit<'a, T> {
    /// The object's pack offset.
    pub(crate) offset: u64,
    /// What the first referrer to pop attached to the offset.
    pub(crate) label: &'a T,
    /// Its frame.
    pub(crate) frame: &'a Frame,
    /// The buffer holding the frame (its body at `frame.body`).
    pub(crate) bytes: &'a [u8],
}

/// Pending entries below which a walk never folds duplicates (a fold sorts the whole frontier).
const FOLD_MIN_ENTRIES: usize = 1 << 16;

/// The offsets a walk has pending, with their labels: a max-heap per 4 GiB of the pack holding
/// the offsets' low 32 bits, so that an entry of the GC's mark takes 4 bytes, not 8 (its
/// frontier reaches two million entries on a 150,000-block store, BENCHMARKS.md). A pack of
/// 32 GB has 8 such heaps; the walk only pops from the highest.
struct Frontier<T> {
    heaps: BTreeMap<u32, BinaryHeap<(u32, T)>>,
    len: usize,
}

impl<T: Ord> Frontier<T> {
    fn new() -> Self {
        Frontier {
            heaps: BTreeMap::new(),
            len: 0,
        }
    }

    fn push(&mut self, offset: u64, label: T) {
        self.heaps
            .entry((offset >> 32) as u32)
            .or_default()
            .push((offset as u32, label));
        self.len += 1;
    }

    /// The highest offset pending, and its label.
    fn pop(&mut self) -> Option<(u64, T)> {
        let mut highest = self.heaps.last_entry()?;
        let high = u64::from(*highest.key()) << 32;
        let popped = highest.get_mut().pop();
        if highest.get().is_empty() {
            // Its capacity goes with it.
            highest.remove();
        }
        let (low, label) = popped?;
        self.len -= 1;
        Some((high | u64::from(low), label))
    }

    /// Folds equal entries into one, keeping capacity for as many again.
    fn fold(&mut self) {
        self.len = 0;
        for heap in self.heaps.values_mut() {
            let mut pending = std::mem::take(heap).into_vec();
            pending.sort_unstable();
            pending.dedup();
            pending.shrink_to(pending.len() * 2);
            self.len += pending.len();
            *heap = BinaryHeap::from(pending);
        }
    }
}

/// Visits every object reachable from `roots` once, in decreasing offset order. `visit` is given
/// each object and pushes the objects it points to (with a label each, e.g. the hash the
/// referrer expects); a later copy of an offset already visited is handed to `duplicate` with
/// the first copy's label. `should_stop` is polled between objects (a cancelled GC). Returns the
/// most entries pending at once, or `None` when stopped.
///
/// An object shared by many referrers is pushed once per referrer, long before it is popped, so
/// copies can make up most of the frontier. Whenever the frontier has doubled since the last
/// fold, equal copies (same offset and label) are folded into one: its memory stays within about
/// twice the distinct entries pending. Copies with different labels stay, so `duplicate` still
/// sees every disagreement.
pub(crate) fn walk<T: Ord>(
    file: &PackReader,
    pack_length: u64,
    roots: Vec<(u64, T)>,
    mut visit: impl FnMut(Visit<'_, T>, &mut dyn FnMut(u64, T)) -> Result<(), ContextError>,
    mut duplicate: impl FnMut(u64, &T, &T) -> Result<(), ContextError>,
    should_stop: impl Fn() -> bool,
) -> Result<Option<usize>, ContextError> {
    let mut frontier = Frontier::new();
    for (root, label) in roots {
        frontier.push(root, label);
    }
    let mut peak = frontier.len;
    let mut fold_at = FOLD_MIN_ENTRIES.max(frontier.len * 2);
    let mut buffer = Vec::new();
    let mut window = Window::default();
    let mut last: Option<(u64, T)> = None;
    let mut pushed: Vec<(u64, T)> = Vec::new();
    while let Some((offset, label)) = frontier.pop() {
        if let Some((last_offset, last_label)) = &last {
            if *last_offset == offset {
                duplicate(offset, last_label, &label)?;
                continue;
            }
        }
        if should_stop() {
            return Ok(None);
        }
        let (frame, bytes) = match window.frame(file, pack_length, offset)? {
            Some(frame) => (frame, &window.bytes[..]),
            None => (
                read_frame(file, pack_length, offset, &mut buffer)?,
                &buffer[..],
            ),
        };
        visit(
            Visit {
                offset,
                label: &label,
                frame: &frame,
                bytes,
            },
            &mut |child, child_label| pushed.push((child, child_label)),
        )?;
        for (child, child_label) in pushed.drain(..) {
            if child >= offset {
                return Err(corrupt_pack(
                    file.path(),
                    offset,
                    CorruptionKind::BadChildOffset(child),
                ));
            }
            frontier.push(child, child_label);
        }
        peak = peak.max(frontier.len);
        if frontier.len >= fold_at {
            frontier.fold();
            fold_at = FOLD_MIN_ENTRIES.max(frontier.len * 2);
        }
        last = Some((offset, label));
    }
    Ok(Some(peak))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets on both sides of several 4 GiB lines come out highest first, labels ordered
    /// within one offset, equal copies folded into one and unequal ones kept.
    #[test]
    fn the_frontier_pops_in_decreasing_order_across_heaps() {
        let lines = [0u64, 1 << 32, 3 << 32, 9 << 32];
        let mut entries = Vec::new();
        for line in lines {
            for low in [0u64, 1, 77, (1 << 32) - 1] {
                let offset = line + low;
                entries.push((offset, 2u8));
                entries.push((offset, 1u8));
                entries.push((offset, 2u8));
            }
        }
        let mut frontier = Frontier::new();
        for &(offset, label) in &entries {
            frontier.push(offset, label);
        }
        assert_eq!(frontier.len, entries.len());
        frontier.fold();
        entries.sort_unstable();
        entries.dedup();
        assert_eq!(frontier.len, entries.len());
        let mut popped = Vec::new();
        while let Some(entry) = frontier.pop() {
            popped.push(entry);
        }
        entries.reverse();
        assert_eq!(popped, entries);
        assert_eq!(frontier.len, 0);
        assert!(frontier.heaps.is_empty());
    }
}
