//! The binary reader: a cursor over a borrowed input with the two limits data-encoding's reader
//! keeps (`binary_reader.ml`): the end of the current size-delimited region (`remaining_bytes`,
//! set by `dynamic_size` and by the top level) and the end allowed by `check_size`
//! (`allowed_bytes`). Every read is one comparison against the nearer of the two; which limit
//! was hit is worked out only on the error path.
//!
//! Callers (combinators) must pair each `enter_region`/`enter_allowed`/`enter_recursion` with
//! its `leave_*` on the success path; on an error the reader is abandoned, so no unwinding is
//! needed.

use crate::error::{DecodeError, DecodeErrorKind};

/// A cursor over the input of one decode. It is `Copy` so that a combinator can run its hot
/// path on a local copy the optimiser keeps in registers (see `product.rs`).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    input: &'a [u8],
    offset: usize,
    /// End of the current size-delimited region (data-encoding's `remaining_bytes`).
    end: usize,
    /// End allowed by the innermost `check_size` (data-encoding's `allowed_bytes`).
    allowed_end: usize,
    /// `min(end, allowed_end)`, cached so the hot path is one comparison.
    limit: usize,
    /// Current nesting of recursive (`mu`) encodings.
    depth: usize,
}

/// The error of a `take` of `size_bytes` at `offset` that hit a limit, the region ending at `end`.
#[cold]
#[inline(never)]
fn take_failed(offset: usize, end: usize, size_bytes: usize) -> DecodeError {
    // data-encoding checks the region (`Not_enough_data`) before `check_size`.
    let kind = if size_bytes > end - offset {
        DecodeErrorKind::NotEnoughData
    } else {
        DecodeErrorKind::SizeLimitExceeded
    };
    DecodeError::new(kind, offset)
}

/// What `enter_region` or `enter_allowed` replaced, for the matching `leave_*`.
#[derive(Debug, Clone, Copy)]
pub struct SavedLimit(usize);

impl<'a> Reader<'a> {
    /// A reader over all of `input`.
    pub fn new(input: &'a [u8]) -> Self {
        Reader {
            input,
            offset: 0,
            end: input.len(),
            allowed_end: usize::MAX,
            limit: input.len(),
            depth: 0,
        }
    }

    /// The offset of the next byte to read, from the start of the input.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The bytes left in the current size-delimited region.
    #[inline]
    pub fn remaining_bytes(&self) -> usize {
        self.end - self.offset
    }

    /// An error of `kind` at the current offset.
    #[inline]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.offset)
    }

    /// The error of a failed `take`, worked out from the two limits. The fields are passed by
    /// value so that the reader's address does not escape into this out-of-line function (which
    /// would keep the reader in memory rather than in registers on the hot path).
    #[inline(always)]
    fn take_failed(&self, size_bytes: usize) -> DecodeError {
        take_failed(self.offset, self.end, size_bytes)
    }

    /// The next `size_bytes` bytes, borrowed from the input: one bounds check for the whole run.
    #[inline]
    pub fn take(&mut self, size_bytes: usize) -> Result<&'a [u8], DecodeError> {
        if size_bytes > self.limit - self.offset {
            return Err(self.take_failed(size_bytes));
        }
        let start = self.offset;
        self.offset += size_bytes;
        Ok(&self.input[start..self.offset])
    }

    /// The next `N` bytes as an array: one bounds check for the whole run.
    #[inline]
    pub fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        if N > self.limit - self.offset {
            return Err(self.take_failed(N));
        }
        let start = self.offset;
        self.offset += N;
        let mut array = [0u8; N];
        array.copy_from_slice(&self.input[start..start + N]);
        Ok(array)
    }

    /// The next `N` bytes as a borrowed array: one bounds check for the whole run.
    #[inline]
    pub fn take_array_ref<const N: usize>(&mut self) -> Result<&'a [u8; N], DecodeError> {
        if N > self.limit - self.offset {
            return Err(self.take_failed(N));
        }
        let input: &'a [u8] = self.input;
        // Within the limit, so within the input: the `None` arm is never taken.
        match input[self.offset..].first_chunk::<N>() {
            Some(array) => {
                self.offset += N;
                Ok(array)
            }
            None => Err(self.take_failed(N)),
        }
    }

    /// The next byte.
    #[inline]
    pub fn take_u8(&mut self) -> Result<u8, DecodeError> {
        if self.offset >= self.limit {
            return Err(self.take_failed(1));
        }
        let byte = self.input[self.offset];
        self.offset += 1;
        Ok(byte)
    }

    /// The `length_bytes` bytes just read (which must have been read).
    #[inline]
    pub(crate) fn last_bytes(&self, length_bytes: usize) -> &'a [u8] {
        &self.input[self.offset - length_bytes..self.offset]
    }

    /// Checks that `size_bytes` more bytes can be read, without reading them (the single check
    /// before a fixed-size run, as data-encoding's `Objs {kind = Fixed}` does).
    #[inline]
    pub fn ensure(&self, size_bytes: usize) -> Result<(), DecodeError> {
        if size_bytes > self.limit - self.offset {
            return Err(self.take_failed(size_bytes));
        }
        Ok(())
    }

    // Inline: it runs twice per `dynamic_size` field read (on entering and on leaving the
    // region), and as an out-of-line call from another crate's instantiation of a reader it
    // cost more than its one comparison.
    #[inline]
    fn refresh_limit(&mut self) {
        self.limit = self.end.min(self.allowed_end);
    }

    /// Starts a region of `size_bytes` bytes (a `dynamic_size` payload): fails with
    /// `Not_enough_data` if the current region is shorter, `Size_limit_exceeded` if
    /// `check_size` forbids it.
    #[inline]
    pub fn enter_region(&mut self, size_bytes: usize) -> Result<SavedLimit, DecodeError> {
        if size_bytes > self.end - self.offset {
            return Err(self.error(DecodeErrorKind::NotEnoughData));
        }
        if size_bytes > self.allowed_end.saturating_sub(self.offset) {
            return Err(self.error(DecodeErrorKind::SizeLimitExceeded));
        }
        let saved = SavedLimit(self.end);
        self.end = self.offset + size_bytes;
        self.refresh_limit();
        Ok(saved)
    }

    /// Ends the region started by `enter_region`: fails with `Extra_bytes` if it was not all read.
    #[inline]
    pub fn leave_region(&mut self, saved: SavedLimit) -> Result<(), DecodeError> {
        if self.offset != self.end {
            return Err(self.error(DecodeErrorKind::ExtraBytes));
        }
        self.end = saved.0;
        self.refresh_limit();
        Ok(())
    }

    /// Shortens the current region by `suffix_bytes` (the fixed-size elements that follow a
    /// variable-size one, data-encoding's `read_variable_pair`).
    #[inline]
    pub fn enter_prefix(&mut self, suffix_bytes: usize) -> Result<SavedLimit, DecodeError> {
        if suffix_bytes > self.end - self.offset {
            return Err(self.error(DecodeErrorKind::NotEnoughData));
        }
        let saved = SavedLimit(self.end);
        self.end -= suffix_bytes;
        self.refresh_limit();
        Ok(saved)
    }

    /// Restores the region shortened by `enter_prefix`.
    #[inline]
    pub fn leave_prefix(&mut self, saved: SavedLimit) {
        self.end = saved.0;
        self.refresh_limit();
    }

    /// Allows at most `limit_bytes` more bytes (`check_size`), nested limits keeping the smaller.
    #[inline]
    pub fn enter_allowed(&mut self, limit_bytes: usize) -> SavedLimit {
        let saved = SavedLimit(self.allowed_end);
        self.allowed_end = self
            .allowed_end
            .min(self.offset.saturating_add(limit_bytes));
        self.refresh_limit();
        saved
    }

    /// Restores the limit replaced by `enter_allowed`.
    #[inline]
    pub fn leave_allowed(&mut self, saved: SavedLimit) {
        self.allowed_end = saved.0;
        self.refresh_limit();
    }

    /// Enters one level of a recursive encoding, failing beyond `max_depth` levels.
    #[inline]
    pub fn enter_recursion(&mut self, max_depth: usize) -> Result<(), DecodeError> {
        if self.depth >= max_depth {
            return Err(self.error(DecodeErrorKind::DepthLimitExceeded { max_depth }));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves the level entered by `enter_recursion`.
    #[inline]
    pub fn leave_recursion(&mut self) {
        self.depth -= 1;
    }

    /// Fails with `Extra_bytes` unless the whole input was read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.offset != self.input.len() {
            return Err(self.error(DecodeErrorKind::ExtraBytes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_edges() {
        let input = [1u8, 2, 3];
        let mut reader = Reader::new(&input);
        assert_eq!(reader.take(0).unwrap(), &[] as &[u8]);
        assert_eq!(reader.take(2).unwrap(), &[1, 2]);
        let error = reader.take(2).unwrap_err();
        assert_eq!(
            (error.kind.clone(), error.offset),
            (DecodeErrorKind::NotEnoughData, 2)
        );
        assert_eq!(reader.take(1).unwrap(), &[3]);
        assert!(reader.finish().is_ok());
    }

    #[test]
    fn take_array_ref_edges() {
        let input = [1u8, 2, 3];
        let mut reader = Reader::new(&input);
        assert_eq!(reader.take_array_ref::<2>().unwrap(), &[1, 2]);
        // At a non-zero offset, one byte short.
        let error = reader.take_array_ref::<2>().unwrap_err();
        assert_eq!(
            (error.kind.clone(), error.offset),
            (DecodeErrorKind::NotEnoughData, 2)
        );
        assert_eq!(reader.take_array_ref::<1>().unwrap(), &[3]);
        assert!(reader.finish().is_ok());
        // A `check_size` limit inside the input reports the limit, not the end.
        let mut reader = Reader::new(&input);
        let saved = reader.enter_allowed(2);
        let error = reader.take_array_ref::<3>().unwrap_err();
        assert_eq!(error.kind, DecodeErrorKind::SizeLimitExceeded);
        reader.leave_allowed(saved);
        assert_eq!(reader.take_array_ref::<3>().unwrap(), &input);
    }

    #[test]
    fn allowed_limit_reports_size_limit() {
        let input = [0u8; 8];
        let mut reader = Reader::new(&input);
        let saved = reader.enter_allowed(2);
        assert_eq!(
            reader.take(3).unwrap_err().kind,
            DecodeErrorKind::SizeLimitExceeded
        );
        assert_eq!(reader.take(2).unwrap().len(), 2);
        reader.leave_allowed(saved);
        assert_eq!(reader.take(6).unwrap().len(), 6);
    }

    #[test]
    fn region_must_be_consumed() {
        let input = [0u8; 4];
        let mut reader = Reader::new(&input);
        let saved = reader.enter_region(3).unwrap();
        reader.take(2).unwrap();
        assert_eq!(
            reader.leave_region(saved).unwrap_err().kind,
            DecodeErrorKind::ExtraBytes
        );
    }
}
