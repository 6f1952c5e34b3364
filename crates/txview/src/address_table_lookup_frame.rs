//! The address table lookups of a v0 transaction: a count, then per lookup a 32-byte table
//! address, a compact-u16 count and that many writable indexes, a compact-u16 count and that many
//! readonly indexes.
//!
//! Spec: `solana-transaction-format.md`, "Legacy and v0 layout" and "Parse-time limits". At most 31
//! lookups fit a packet (so the count fits one byte); the writable and readonly totals are summed
//! in u32 and must fit u16, which Agave reports as a sanitize error during parsing.

use crate::bytes::{
    advance, has_remaining, read_byte, read_compact_u16, read_validated_compact_u16,
};
use crate::error::{count_out_of_range, truncated, Field, ParseError};
use crate::limits::{
    ADDRESS_BYTES, MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET, MIN_ADDRESS_TABLE_LOOKUP_BYTES,
};

/// Where the lookups are, their index totals, and the first empty lookup (a sanitization failure).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct AddressTableLookupFrame {
    /// Number of lookups.
    pub(crate) num_address_table_lookups: u8,
    /// Offset of the first lookup.
    pub(crate) offset: u16,
    /// Writable indexes across all lookups.
    pub(crate) total_writable_lookup_accounts: u16,
    /// Readonly indexes across all lookups.
    pub(crate) total_readonly_lookup_accounts: u16,
    /// The first lookup with no index at all, if any.
    pub(crate) first_empty_lookup: Option<u8>,
}

impl AddressTableLookupFrame {
    /// The frame of a transaction without lookups (legacy, v1).
    pub(crate) const NONE: Self = Self {
        num_address_table_lookups: 0,
        offset: 0,
        total_writable_lookup_accounts: 0,
        total_readonly_lookup_accounts: 0,
        first_empty_lookup: None,
    };

    /// Frames the count and lookups at `offset`, advancing it past them.
    #[inline(always)]
    pub(crate) fn try_new(bytes: &[u8], offset: &mut usize) -> Result<Self, ParseError> {
        let count_offset = *offset;
        let num_address_table_lookups = read_byte(bytes, offset, Field::AddressTableLookupCount)?;
        if num_address_table_lookups > MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET {
            return Err(count_out_of_range(
                Field::AddressTableLookupCount,
                count_offset,
                u16::from(num_address_table_lookups),
            ));
        }
        if !has_remaining(
            bytes,
            *offset,
            usize::from(num_address_table_lookups) * MIN_ADDRESS_TABLE_LOOKUP_BYTES,
        ) {
            return Err(truncated(Field::AddressTableLookupCount, count_offset));
        }
        let lookups_offset = *offset;
        // Totals: at most 31 lookups (checked above) of at most 127 + 127 indexes on the fast
        // path, 16383 + 16383 on the slow one, so neither u32 sum can overflow; whether they fit
        // u16 is checked at the end, as Agave does.
        let mut totals = LookupTotals {
            writable: 0,
            readonly: 0,
            empty_lookups: 0,
        };
        let length_bytes = bytes.len();
        let mut position = lookups_offset;
        for index in 0..num_address_table_lookups {
            // Fast path: both counts are single-byte compact-u16s (every count below 128, which
            // is nearly every lookup on mainnet), checked with two `get`s and one end check.
            // No addition here can overflow usize: `position <= length_bytes` on entry, a
            // successful `get` bounds its index by `length_bytes`, and each step adds at most
            // `ADDRESS_BYTES + 1 + 127`. Anything else (a two-byte count, a truncation, an
            // invalid encoding) hands this and the remaining lookups to the checked slow path,
            // so errors and their offsets are exactly those of the checked reads.
            let writable_count_position = position + ADDRESS_BYTES;
            let Some(&num_writable) = bytes.get(writable_count_position) else {
                return Self::try_new_checked_from(
                    bytes,
                    offset,
                    num_address_table_lookups,
                    index,
                    position,
                    totals,
                );
            };
            let readonly_count_position = writable_count_position + 1 + usize::from(num_writable);
            let Some(&num_readonly) = bytes.get(readonly_count_position) else {
                return Self::try_new_checked_from(
                    bytes,
                    offset,
                    num_address_table_lookups,
                    index,
                    position,
                    totals,
                );
            };
            let end = readonly_count_position + 1 + usize::from(num_readonly);
            if (num_writable | num_readonly) >= 0x80 || end > length_bytes {
                return Self::try_new_checked_from(
                    bytes,
                    offset,
                    num_address_table_lookups,
                    index,
                    position,
                    totals,
                );
            }
            totals.add(index, u16::from(num_writable), u16::from(num_readonly));
            position = end;
        }
        *offset = position;
        totals.finish(num_address_table_lookups, lookups_offset)
    }

    /// The slow path of [`Self::try_new`]: frames lookups `first_index..num_address_table_lookups`
    /// from `position` with every read checked (two-byte counts, and every error).
    #[cold]
    #[inline(never)]
    fn try_new_checked_from(
        bytes: &[u8],
        offset: &mut usize,
        num_address_table_lookups: u8,
        first_index: u8,
        mut position: usize,
        mut totals: LookupTotals,
    ) -> Result<Self, ParseError> {
        let lookups_offset = *offset;
        for index in first_index..num_address_table_lookups {
            let field = Field::AddressTableLookup { index };
            advance(bytes, &mut position, ADDRESS_BYTES, field)?;
            let num_writable = read_compact_u16(bytes, &mut position, field)?;
            advance(bytes, &mut position, usize::from(num_writable), field)?;
            let num_readonly = read_compact_u16(bytes, &mut position, field)?;
            advance(bytes, &mut position, usize::from(num_readonly), field)?;
            totals.add(index, num_writable, num_readonly);
        }
        *offset = position;
        totals.finish(num_address_table_lookups, lookups_offset)
    }

    /// An iterator over the lookups in `bytes`, which must be the bytes this frame was parsed from.
    #[cfg(test)]
    pub(crate) fn iter<'a>(&self, bytes: &'a [u8]) -> AddressTableLookupIterator<'a> {
        AddressTableLookupIterator::new(
            bytes,
            usize::from(self.offset),
            self.num_address_table_lookups,
        )
    }

    /// The first lookup without any index in the `num_address_table_lookups` lookups framed at
    /// `offset` of `bytes` (sanitizing a view first parsed unsanitized, which did not record it).
    pub(crate) fn first_empty_lookup_of(
        bytes: &[u8],
        offset: usize,
        num_address_table_lookups: u8,
    ) -> Option<u8> {
        AddressTableLookupIterator::new(bytes, offset, num_address_table_lookups)
            .position(|lookup| {
                lookup.writable_indexes.is_empty() && lookup.readonly_indexes.is_empty()
            })
            .map(|index| index as u8)
    }
}

/// Index totals accumulated while framing lookups.
#[derive(Copy, Clone)]
struct LookupTotals {
    writable: u32,
    readonly: u32,
    /// Bit `index` is set when lookup `index` has no index at all; `index < 31` (the count is
    /// checked against `MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET` first), so every shift fits a u32.
    empty_lookups: u32,
}

impl LookupTotals {
    /// Counts lookup `index` with its writable and readonly index counts.
    #[inline(always)]
    fn add(&mut self, index: u8, num_writable: u16, num_readonly: u16) {
        self.writable += u32::from(num_writable);
        self.readonly += u32::from(num_readonly);
        self.empty_lookups |= u32::from((num_writable | num_readonly) == 0) << index;
    }

    /// The frame of `num_address_table_lookups` lookups at `lookups_offset`, or the overflow
    /// error Agave reports when a total exceeds u16.
    #[inline(always)]
    fn finish(
        self,
        num_address_table_lookups: u8,
        lookups_offset: usize,
    ) -> Result<AddressTableLookupFrame, ParseError> {
        let (Ok(total_writable_lookup_accounts), Ok(total_readonly_lookup_accounts)) =
            (u16::try_from(self.writable), u16::try_from(self.readonly))
        else {
            return Err(lookup_totals_overflow(lookups_offset));
        };
        // The lowest set bit is the first empty lookup (`trailing_zeros` is below 32: fits u8).
        let first_empty_lookup =
            (self.empty_lookups != 0).then(|| self.empty_lookups.trailing_zeros() as u8);
        Ok(AddressTableLookupFrame {
            num_address_table_lookups,
            offset: lookups_offset as u16,
            total_writable_lookup_accounts,
            total_readonly_lookup_accounts,
            first_empty_lookup,
        })
    }
}

#[cold]
#[inline(never)]
fn lookup_totals_overflow(offset_bytes: usize) -> ParseError {
    ParseError::LookupTotalsOverflow { offset_bytes }
}

/// One address table lookup: the table's address and the indexes loaded from it. All borrow from
/// the packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AddressTableLookup<'a> {
    /// The lookup table's address.
    pub account_key: &'a [u8; ADDRESS_BYTES],
    /// Indexes into the table of accounts loaded writable.
    pub writable_indexes: &'a [u8],
    /// Indexes into the table of accounts loaded readonly.
    pub readonly_indexes: &'a [u8],
}

/// Iterates a transaction's address table lookups without allocating; knows its exact length.
#[derive(Clone, Debug)]
pub struct AddressTableLookupIterator<'a> {
    bytes: &'a [u8],
    offset: usize,
    remaining: u8,
}

impl<'a> AddressTableLookupIterator<'a> {
    /// Iterates the `remaining` lookups framed at `offset` of `bytes` (the frame checked them).
    #[inline(always)]
    pub(crate) fn new(bytes: &'a [u8], offset: usize, remaining: u8) -> Self {
        Self {
            bytes,
            offset,
            remaining,
        }
    }
}

impl<'a> Iterator for AddressTableLookupIterator<'a> {
    type Item = AddressTableLookup<'a>;

    #[inline]
    fn next(&mut self) -> Option<AddressTableLookup<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let bytes = self.bytes;
        // The frame checked every range below; slicing failure would be a bug in this crate.
        let (account_key, _) = bytes[self.offset..].split_first_chunk::<ADDRESS_BYTES>()?;
        let mut cursor = self.offset + ADDRESS_BYTES;
        let num_writable = read_validated_compact_u16(bytes, &mut cursor);
        let writable_indexes = &bytes[cursor..cursor + num_writable];
        cursor += num_writable;
        let num_readonly = read_validated_compact_u16(bytes, &mut cursor);
        let readonly_indexes = &bytes[cursor..cursor + num_readonly];
        self.offset = cursor + num_readonly;
        Some(AddressTableLookup {
            account_key,
            writable_indexes,
            readonly_indexes,
        })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = usize::from(self.remaining);
        (remaining, Some(remaining))
    }
}

impl ExactSizeIterator for AddressTableLookupIterator<'_> {}

impl core::iter::FusedIterator for AddressTableLookupIterator<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::write_compact_u16;

    fn encode(lookups: &[(u8, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = vec![lookups.len() as u8];
        for (key, writable, readonly) in lookups {
            bytes.extend([*key; ADDRESS_BYTES]);
            write_compact_u16(&mut bytes, writable.len() as u16);
            bytes.extend(writable);
            write_compact_u16(&mut bytes, readonly.len() as u16);
            bytes.extend(readonly);
        }
        bytes
    }

    fn check_round_trip(
        lookups: &[(u8, Vec<u8>, Vec<u8>)],
        start: usize,
    ) -> AddressTableLookupFrame {
        let mut bytes = vec![0xEE; start];
        bytes.extend(encode(lookups));
        let mut offset = start;
        let frame = AddressTableLookupFrame::try_new(&bytes, &mut offset).unwrap();
        assert_eq!(offset, bytes.len());
        let iterator = frame.iter(&bytes);
        assert_eq!(iterator.len(), lookups.len());
        let decoded: Vec<_> = iterator
            .map(|lookup| {
                (
                    lookup.account_key[0],
                    lookup.writable_indexes.to_vec(),
                    lookup.readonly_indexes.to_vec(),
                )
            })
            .collect();
        assert_eq!(decoded, lookups);
        frame
    }

    #[test]
    fn zero_one_max_and_max_plus_one() {
        let frame = check_round_trip(&[], 0);
        assert_eq!(frame.num_address_table_lookups, 0);
        let frame = check_round_trip(&[(1, vec![0, 1], vec![2])], 0);
        assert_eq!(
            (
                frame.total_writable_lookup_accounts,
                frame.total_readonly_lookup_accounts
            ),
            (2, 1)
        );
        let max: Vec<_> = (0..31)
            .map(|index| (index as u8, vec![index as u8], vec![]))
            .collect();
        let frame = check_round_trip(&max, 3);
        assert_eq!(frame.total_writable_lookup_accounts, 31);
        assert_eq!(frame.first_empty_lookup, None);
        let too_many: Vec<_> = (0..32)
            .map(|index| (index as u8, vec![0], vec![]))
            .collect();
        assert_eq!(
            AddressTableLookupFrame::try_new(&encode(&too_many), &mut 0),
            Err(ParseError::CountOutOfRange {
                field: Field::AddressTableLookupCount,
                offset_bytes: 0,
                count: 32
            })
        );
    }

    #[test]
    fn empty_lookup_is_recorded_not_rejected() {
        // Empty lookups take 34 bytes, below the 35 the up-front size check assumes per lookup,
        // so they frame only when enough bytes follow (as in Agave).
        let mut bytes = encode(&[
            (1, vec![0], vec![]),
            (2, vec![], vec![]),
            (3, vec![], vec![]),
        ]);
        assert!(AddressTableLookupFrame::try_new(&bytes, &mut 0).is_err());
        bytes.extend([0, 0]);
        let frame = AddressTableLookupFrame::try_new(&bytes, &mut 0).unwrap();
        assert_eq!(frame.first_empty_lookup, Some(1));
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        // Single-byte counts take the fast path; a two-byte count (128 and up) hands that lookup
        // and the rest to the checked path, which must carry the totals and empty lookups on.
        type Lookups<'a> = &'a [(u8, Vec<u8>, Vec<u8>)];
        let cases: [(Lookups, (u16, u16), Option<u8>); 4] = [
            (&[(1, vec![7; 127], vec![8; 127])], (127, 127), None),
            (
                &[
                    (1, vec![0; 2], vec![]),
                    (2, vec![], vec![]),
                    (3, vec![9; 128], vec![1]),
                ],
                (130, 1),
                Some(1),
            ),
            (
                &[
                    (1, vec![9; 200], vec![]),
                    (2, vec![1], vec![]),
                    (3, vec![], vec![]),
                ],
                (201, 0),
                Some(2),
            ),
            (
                &[
                    (1, vec![], vec![]),
                    (2, vec![], vec![5; 300]),
                    (3, vec![], vec![]),
                ],
                (0, 300),
                Some(0),
            ),
        ];
        for (lookups, totals, first_empty_lookup) in cases {
            let mut bytes = encode(lookups);
            // Empty lookups are shorter than the up-front size check assumes.
            bytes.extend([0; 4]);
            let mut offset = 0;
            let frame = AddressTableLookupFrame::try_new(&bytes, &mut offset).unwrap();
            assert_eq!(offset, bytes.len() - 4);
            assert_eq!(
                (
                    frame.total_writable_lookup_accounts,
                    frame.total_readonly_lookup_accounts
                ),
                totals
            );
            assert_eq!(frame.first_empty_lookup, first_empty_lookup);
            let decoded: Vec<_> = frame
                .iter(&bytes)
                .map(|lookup| {
                    (
                        lookup.account_key[0],
                        lookup.writable_indexes.to_vec(),
                        lookup.readonly_indexes.to_vec(),
                    )
                })
                .collect();
            assert_eq!(decoded, lookups);
        }
    }

    #[test]
    fn truncated() {
        let bytes = encode(&[(1, vec![0, 1], vec![2])]);
        for length in 0..bytes.len() {
            assert!(
                AddressTableLookupFrame::try_new(&bytes[..length], &mut 0).is_err(),
                "length {length}"
            );
        }
    }

    #[test]
    fn totals_overflow() {
        // Five lookups of 16383 writable indexes exceed u16.
        let lookups: Vec<_> = (0..5)
            .map(|index| (index as u8, vec![0u8; 16383], vec![]))
            .collect();
        assert_eq!(
            AddressTableLookupFrame::try_new(&encode(&lookups), &mut 0),
            Err(ParseError::LookupTotalsOverflow { offset_bytes: 1 })
        );
        let lookups: Vec<_> = (0..4)
            .map(|index| (index as u8, vec![0u8; 16383], vec![]))
            .collect();
        assert_eq!(
            AddressTableLookupFrame::try_new(&encode(&lookups), &mut 0)
                .map(|frame| frame.total_writable_lookup_accounts),
            Ok(65532)
        );
    }
}
