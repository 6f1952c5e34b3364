//! The binary writer: appends to a caller-owned `Vec<u8>` (reused across values, so steady-state
//! encoding allocates nothing), and counts recursion depth so that a deep value built by a
//! program fails with a typed error instead of overflowing the stack.
//!
//! **The writer holds the buffer itself while it writes.** `Writer::new` moves the caller's
//! vector into the writer (leaving it empty) and `Drop` moves it back, so the caller sees every
//! byte written, on success, error or unwind alike. Holding the vector by value rather than
//! behind a `&mut Vec<u8>` makes its pointer, length and capacity fields of the writer: a
//! function given `&mut Writer` knows no byte it stores can overwrite them, so the compiler keeps
//! them (and the depth) in registers across a run of writes instead of reloading them through a
//! second pointer after every byte. On the tree benchmark (`crates/bench`, BENCHMARKS.md
//! `## encoding`) this is one load and one store fewer per node, and the encode walk is bound by
//! how many node loads it can keep in flight, which every extra load and store reduces.

use crate::error::{EncodeError, EncodeErrorKind};

/// An output buffer for one encode; bytes are appended after whatever the buffer already held.
#[derive(Debug)]
pub struct Writer<'b> {
    /// The caller's buffer, moved here for the writer's lifetime.
    out: Vec<u8>,
    /// Where the buffer goes back to when the writer is dropped.
    owner: &'b mut Vec<u8>,
    depth: usize,
}

impl<'b> Writer<'b> {
    /// A writer appending to `out`, which receives every byte written when the writer is dropped
    /// (its allocation is reused, not copied).
    pub fn new(owner: &'b mut Vec<u8>) -> Self {
        Writer {
            out: std::mem::take(owner),
            owner,
            depth: 0,
        }
    }

    /// The number of bytes in the buffer (including those it held before this writer).
    #[inline]
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether the buffer is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Appends `bytes`.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// Appends one byte.
    #[inline]
    pub fn put_u8(&mut self, byte: u8) {
        self.out.push(byte);
    }

    /// Appends `count` zero bytes.
    #[inline]
    pub fn put_zeros(&mut self, count: usize) {
        self.out.resize(self.out.len() + count, 0);
    }

    /// Overwrites bytes already written at `offset` (a size header filled in after its payload).
    #[inline]
    pub fn patch(&mut self, offset: usize, bytes: &[u8]) {
        self.out[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    /// Inserts `bytes` at `offset`, shifting what follows (a variable-width size header).
    pub fn insert(&mut self, offset: usize, bytes: &[u8]) {
        self.out.splice(offset..offset, bytes.iter().copied());
    }

    /// Drops the bytes written after `length` (backtracking between JSON union cases).
    pub(crate) fn truncate(&mut self, length: usize) {
        self.out.truncate(length);
    }

    /// The bytes written from `offset` on.
    pub(crate) fn written_since(&self, offset: usize) -> &[u8] {
        &self.out[offset..]
    }

    /// The underlying buffer, for the Zarith writers.
    #[inline]
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// An error of `kind` at the current output offset.
    pub fn error(&self, kind: EncodeErrorKind) -> EncodeError {
        EncodeError::new(kind, self.out.len())
    }

    /// Enters one level of a recursive encoding, failing beyond `max_depth` levels.
    #[inline]
    pub fn enter_recursion(&mut self, max_depth: usize) -> Result<(), EncodeError> {
        if self.depth >= max_depth {
            return Err(self.depth_limit_exceeded(max_depth));
        }
        self.depth += 1;
        Ok(())
    }

    /// The error of `enter_recursion`, kept out of line so the inlined check stays small.
    #[cold]
    #[inline(never)]
    pub(crate) fn depth_limit_exceeded(&self, max_depth: usize) -> EncodeError {
        self.error(EncodeErrorKind::DepthLimitExceeded { max_depth })
    }

    /// Leaves the level entered by `enter_recursion`.
    #[inline]
    pub fn leave_recursion(&mut self) {
        self.depth -= 1;
    }

    /// The number of recursion levels entered.
    #[inline]
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Sets the depth back to `depth`, a value `depth()` returned (or, inside a recursive body,
    /// the number of levels its context counts).
    #[inline]
    pub fn restore_depth(&mut self, depth: usize) {
        self.depth = depth;
    }
}

impl Drop for Writer<'_> {
    /// Gives the buffer back to its owner (its allocation moves, its bytes are not copied).
    fn drop(&mut self) {
        std::mem::swap(self.owner, &mut self.out);
    }
}
