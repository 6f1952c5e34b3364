//! The binary writer: appends to a caller-owned `Vec<u8>` (reused across values, so steady-state
//! encoding allocates nothing), and counts recursion depth so that a deep value built by a
//! program fails with a typed error instead of overflowing the stack.

use crate::error::{EncodeError, EncodeErrorKind};

/// An output buffer for one encode; bytes are appended after whatever the buffer already held.
#[derive(Debug)]
pub struct Writer<'b> {
    out: &'b mut Vec<u8>,
    depth: usize,
}

impl<'b> Writer<'b> {
    /// A writer appending to `out`.
    pub fn new(out: &'b mut Vec<u8>) -> Self {
        Writer { out, depth: 0 }
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
        self.out
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
    fn depth_limit_exceeded(&self, max_depth: usize) -> EncodeError {
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

    /// Leaves every level entered since `depth()` returned `depth` (a recursion's tail loop).
    #[inline]
    pub fn restore_depth(&mut self, depth: usize) {
        self.depth = depth;
    }
}
