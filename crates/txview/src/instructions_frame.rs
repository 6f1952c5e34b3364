//! The instructions section, in both layouts:
//!
//! - legacy and v0: a compact-u16 count, then per instruction a program id index (u8), a
//!   compact-u16 account count and that many u8 account indexes, a compact-u16 data length and the
//!   data (`solana-transaction-format.md`, "Legacy and v0 layout");
//! - v1: fixed 4-byte headers `(u8 program, u8 account count, u16 LE data length)`, then all
//!   payloads (accounts then data) back to back (SIMD-0385 "InstructionHeaders",
//!   "InstructionPayloads").
//!
//! The frame keeps only the count and two offsets; iteration re-reads the lengths (one or two
//! bytes each) instead of storing per-instruction records, which is what keeps views free of heap
//! allocation. While walking the instructions to check their bounds, the frame also records the
//! few facts sanitization needs ([`InstructionsSummary`]), so sanitizing costs O(1) afterwards.

use crate::bytes::{
    advance, has_remaining, read_byte, read_compact_u16, read_validated_compact_u16,
};
use crate::error::{truncated, Field, ParseError};
use crate::limits::V1_INSTRUCTION_HEADER_BYTES;

/// The facts about all instructions that sanitization checks against its limits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct InstructionsSummary {
    /// Smallest program id index (`u8::MAX` when there are no instructions).
    pub(crate) min_program_id_index: u8,
    /// Largest program id index (0 when there are no instructions).
    pub(crate) max_program_id_index: u8,
    /// Largest account index in any instruction (0 when there are none).
    pub(crate) max_account_index: u8,
    /// Largest account count of any instruction.
    pub(crate) max_num_accounts: u16,
}

impl InstructionsSummary {
    /// The summary of no instructions, and what parsing returns when not asked to summarize.
    pub(crate) const EMPTY: Self = Self {
        min_program_id_index: u8::MAX,
        max_program_id_index: 0,
        max_account_index: 0,
        max_num_accounts: 0,
    };

    #[inline(always)]
    fn record(&mut self, program_id_index: u8, accounts: &[u8]) {
        self.min_program_id_index = self.min_program_id_index.min(program_id_index);
        self.max_program_id_index = self.max_program_id_index.max(program_id_index);
        // `accounts.len()` is at most 16383 (a two-byte compact-u16) or 255 (v1).
        self.max_num_accounts = self.max_num_accounts.max(accounts.len() as u16);
        self.max_account_index = accounts
            .iter()
            .fold(self.max_account_index, |max, &index| max.max(index));
    }

    /// Summarizes the instructions of a frame parsed without a summary (sanitizing a view that
    /// was first parsed unsanitized), by walking them once, as Agave's sanitize does.
    pub(crate) fn of(frame: &InstructionsFrame, bytes: &[u8]) -> Self {
        let mut summary = Self::EMPTY;
        for instruction in frame.iter(bytes) {
            summary.record(instruction.program_id_index, instruction.accounts);
        }
        summary
    }
}

/// How instructions are laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum InstructionLayout {
    /// Legacy and v0: variable-length records with compact-u16 lengths.
    Compact,
    /// v1: fixed 4-byte headers, then payloads starting at `payloads_offset`.
    FixedHeaders {
        /// Offset of the first instruction payload.
        payloads_offset: u16,
    },
}

/// Where the instructions are, how many, and what sanitization needs to know about them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct InstructionsFrame {
    /// Number of instructions.
    pub(crate) num_instructions: u16,
    /// Offset of the first instruction (legacy, v0) or the first header (v1).
    pub(crate) offset: u16,
    /// The layout.
    pub(crate) layout: InstructionLayout,
}

impl InstructionsFrame {
    /// Frames legacy or v0 instructions at `offset`, advancing it past them. With `SUMMARIZE`,
    /// also gathers the sanitization summary in the same pass (else it is `EMPTY`): unsanitized
    /// parsing does not pay for it.
    #[inline(always)]
    pub(crate) fn try_new_for_legacy_and_v0<const SUMMARIZE: bool>(
        bytes: &[u8],
        offset: &mut usize,
    ) -> Result<(Self, InstructionsSummary), ParseError> {
        let num_instructions = read_compact_u16(bytes, offset, Field::InstructionCount)?;
        // Each instruction takes at least 3 bytes; rejecting an impossible count up front bounds
        // the loop by the packet size rather than by the count.
        if !has_remaining(bytes, *offset, 3 * usize::from(num_instructions)) {
            return Err(truncated(Field::InstructionCount, *offset));
        }
        let instructions_offset = *offset;
        let mut cursor = *offset;
        let mut summary = InstructionsSummary::EMPTY;
        for index in 0..num_instructions {
            let program_id_index = read_byte(bytes, &mut cursor, Field::ProgramIdIndex { index })?;
            let num_accounts =
                read_compact_u16(bytes, &mut cursor, Field::InstructionAccountCount { index })?;
            // One bounds check yields the account slice the summary reads.
            let Some(accounts) = bytes.get(cursor..cursor + usize::from(num_accounts)) else {
                return Err(truncated(Field::InstructionAccounts { index }, cursor));
            };
            cursor += accounts.len();
            let data_length =
                read_compact_u16(bytes, &mut cursor, Field::InstructionDataLength { index })?;
            advance(
                bytes,
                &mut cursor,
                usize::from(data_length),
                Field::InstructionData { index },
            )?;
            if SUMMARIZE {
                summary.record(program_id_index, accounts);
            }
        }
        *offset = cursor;
        Ok((
            Self {
                num_instructions,
                offset: instructions_offset as u16,
                layout: InstructionLayout::Compact,
            },
            summary,
        ))
    }

    /// Frames `num_instructions` v1 instruction headers and payloads at `offset`, advancing it
    /// past them. Payload lengths are summed over the headers first, so the payload region is
    /// bounds-checked once.
    #[inline(always)]
    pub(crate) fn try_new_for_v1<const SUMMARIZE: bool>(
        bytes: &[u8],
        offset: &mut usize,
        num_instructions: u8,
    ) -> Result<(Self, InstructionsSummary), ParseError> {
        let headers_offset = *offset;
        let headers_length = usize::from(num_instructions) * V1_INSTRUCTION_HEADER_BYTES;
        if !has_remaining(bytes, headers_offset, headers_length) {
            return Err(truncated(Field::InstructionHeaders, headers_offset));
        }
        let headers = &bytes[headers_offset..headers_offset + headers_length];
        let payloads_offset = headers_offset + headers_length;
        // At most 255 * (255 + 65535) bytes: no overflow in usize.
        let payloads_length: usize = headers
            .chunks_exact(V1_INSTRUCTION_HEADER_BYTES)
            .map(|header| {
                usize::from(header[1]) + usize::from(u16::from_le_bytes([header[2], header[3]]))
            })
            .sum();
        if !has_remaining(bytes, payloads_offset, payloads_length) {
            return Err(truncated(Field::InstructionPayloads, payloads_offset));
        }
        let mut summary = InstructionsSummary::EMPTY;
        let mut payload_offset = payloads_offset;
        for header in headers
            .chunks_exact(V1_INSTRUCTION_HEADER_BYTES)
            .take(if SUMMARIZE { usize::MAX } else { 0 })
        {
            let num_accounts = usize::from(header[1]);
            let data_length = usize::from(u16::from_le_bytes([header[2], header[3]]));
            summary.record(
                header[0],
                &bytes[payload_offset..payload_offset + num_accounts],
            );
            payload_offset += num_accounts + data_length;
        }
        *offset = payloads_offset + payloads_length;
        Ok((
            Self {
                num_instructions: u16::from(num_instructions),
                offset: headers_offset as u16,
                layout: InstructionLayout::FixedHeaders {
                    payloads_offset: payloads_offset as u16,
                },
            },
            summary,
        ))
    }

    /// An iterator over the instructions in `bytes`, which must be the bytes this frame was
    /// parsed from.
    #[inline(always)]
    pub(crate) fn iter<'a>(&self, bytes: &'a [u8]) -> InstructionsIterator<'a> {
        let (offset, payload_offset) = match self.layout {
            InstructionLayout::Compact => (usize::from(self.offset), usize::MAX),
            InstructionLayout::FixedHeaders { payloads_offset } => {
                (usize::from(self.offset), usize::from(payloads_offset))
            }
        };
        InstructionsIterator {
            bytes,
            offset,
            payload_offset,
            remaining: self.num_instructions,
        }
    }
}

/// One instruction: the index of its program among the static keys, the indexes of the accounts it
/// is passed, and its data. Both slices borrow from the packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// Index of the program's address among the static account keys.
    pub program_id_index: u8,
    /// Indexes of the accounts passed to the program.
    pub accounts: &'a [u8],
    /// The instruction data.
    pub data: &'a [u8],
}

/// Iterates a transaction's instructions without allocating; knows its exact length.
#[derive(Clone, Debug)]
pub struct InstructionsIterator<'a> {
    bytes: &'a [u8],
    /// Next instruction (legacy, v0) or next header (v1).
    offset: usize,
    /// Next payload (v1); `usize::MAX` for the compact layout.
    payload_offset: usize,
    remaining: u16,
}

impl<'a> Iterator for InstructionsIterator<'a> {
    type Item = Instruction<'a>;

    #[inline]
    fn next(&mut self) -> Option<Instruction<'a>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let bytes = self.bytes;
        // The frame checked every range read below, so the slicing cannot fail; a failure would
        // be a bug in this crate and stops the program.
        if self.payload_offset == usize::MAX {
            let mut cursor = self.offset;
            let program_id_index = bytes[cursor];
            cursor += 1;
            let num_accounts = read_validated_compact_u16(bytes, &mut cursor);
            let accounts = &bytes[cursor..cursor + num_accounts];
            cursor += num_accounts;
            let data_length = read_validated_compact_u16(bytes, &mut cursor);
            let data = &bytes[cursor..cursor + data_length];
            self.offset = cursor + data_length;
            Some(Instruction {
                program_id_index,
                accounts,
                data,
            })
        } else {
            let header = &bytes[self.offset..self.offset + V1_INSTRUCTION_HEADER_BYTES];
            self.offset += V1_INSTRUCTION_HEADER_BYTES;
            let num_accounts = usize::from(header[1]);
            let data_length = usize::from(u16::from_le_bytes([header[2], header[3]]));
            let accounts_end = self.payload_offset + num_accounts;
            let accounts = &bytes[self.payload_offset..accounts_end];
            let data = &bytes[accounts_end..accounts_end + data_length];
            self.payload_offset = accounts_end + data_length;
            Some(Instruction {
                program_id_index: header[0],
                accounts,
                data,
            })
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = usize::from(self.remaining);
        (remaining, Some(remaining))
    }
}

impl ExactSizeIterator for InstructionsIterator<'_> {}

impl core::iter::FusedIterator for InstructionsIterator<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::write_compact_u16;

    /// Encodes instructions in the legacy layout.
    fn legacy(instructions: &[(u8, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_compact_u16(&mut bytes, instructions.len() as u16);
        for (program, accounts, data) in instructions {
            bytes.push(*program);
            write_compact_u16(&mut bytes, accounts.len() as u16);
            bytes.extend(accounts);
            write_compact_u16(&mut bytes, data.len() as u16);
            bytes.extend(data);
        }
        bytes
    }

    /// Encodes instructions in the v1 layout (without the count, which lives in the prefix).
    fn v1(instructions: &[(u8, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (program, accounts, data) in instructions {
            bytes.push(*program);
            bytes.push(accounts.len() as u8);
            bytes.extend((data.len() as u16).to_le_bytes());
        }
        for (_, accounts, data) in instructions {
            bytes.extend(accounts);
            bytes.extend(data);
        }
        bytes
    }

    fn collect(frame: &InstructionsFrame, bytes: &[u8]) -> Vec<(u8, Vec<u8>, Vec<u8>)> {
        let iterator = frame.iter(bytes);
        assert_eq!(iterator.len(), usize::from(frame.num_instructions));
        iterator
            .map(|instruction| {
                (
                    instruction.program_id_index,
                    instruction.accounts.to_vec(),
                    instruction.data.to_vec(),
                )
            })
            .collect()
    }

    fn sample(count: usize) -> Vec<(u8, Vec<u8>, Vec<u8>)> {
        (0..count)
            .map(|index| {
                (
                    (index % 7 + 1) as u8,
                    (0..(index % 5) as u8).collect(),
                    vec![index as u8; index % 200],
                )
            })
            .collect()
    }

    #[test]
    fn legacy_zero_one_many_and_non_zero_offset() {
        for count in [0, 1, 2, 64, 200] {
            let instructions = sample(count);
            let mut bytes = vec![0xAB; 3];
            bytes.extend(legacy(&instructions));
            bytes.push(0xCD);
            let mut offset = 3;
            let (frame, summary) =
                InstructionsFrame::try_new_for_legacy_and_v0::<true>(&bytes, &mut offset).unwrap();
            assert_eq!(offset, bytes.len() - 1);
            assert_eq!(collect(&frame, &bytes), instructions);
            assert_eq!(InstructionsSummary::of(&frame, &bytes), summary);
            let mut offset = 3;
            assert_eq!(
                InstructionsFrame::try_new_for_legacy_and_v0::<false>(&bytes, &mut offset),
                Ok((frame, InstructionsSummary::EMPTY))
            );
            if count > 0 {
                assert_eq!(summary.min_program_id_index, 1);
                assert_eq!(summary.max_num_accounts, (count.min(5) - 1) as u16);
            }
        }
    }

    #[test]
    fn legacy_account_count_max_and_data_max() {
        // The largest counts a two-byte compact-u16 can hold, and one past.
        let instructions = vec![(1u8, vec![9u8; 16383], vec![1u8; 16383])];
        let bytes = legacy(&instructions);
        let (frame, summary) =
            InstructionsFrame::try_new_for_legacy_and_v0::<true>(&bytes, &mut 0).unwrap();
        assert_eq!(summary.max_num_accounts, 16383);
        assert_eq!(summary.max_account_index, 9);
        assert_eq!(InstructionsSummary::of(&frame, &bytes), summary);
        assert_eq!(collect(&frame, &bytes), instructions);
        let mut bytes = vec![1, 1];
        write_compact_u16(&mut bytes, 16384);
        assert_eq!(
            InstructionsFrame::try_new_for_legacy_and_v0::<true>(&bytes, &mut 0),
            Err(ParseError::InvalidCompactU16 {
                field: Field::InstructionAccountCount { index: 0 },
                offset_bytes: 2
            })
        );
    }

    #[test]
    fn legacy_truncations_name_the_field() {
        let bytes = legacy(&[(1, vec![0, 1], vec![5, 6, 7])]);
        let expected = [
            (1, Field::InstructionCount, 1),
            (2, Field::InstructionCount, 1),
            (3, Field::InstructionCount, 1),
            (4, Field::InstructionAccounts { index: 0 }, 3),
            (5, Field::InstructionDataLength { index: 0 }, 5),
            (6, Field::InstructionData { index: 0 }, 6),
            (7, Field::InstructionData { index: 0 }, 6),
            (8, Field::InstructionData { index: 0 }, 6),
        ];
        for (length, field, offset_bytes) in expected {
            assert_eq!(
                InstructionsFrame::try_new_for_legacy_and_v0::<true>(&bytes[..length], &mut 0),
                Err(ParseError::Truncated {
                    field,
                    offset_bytes
                }),
                "length {length}"
            );
        }
        assert!(InstructionsFrame::try_new_for_legacy_and_v0::<true>(&bytes, &mut 0).is_ok());
    }

    #[test]
    fn v1_zero_one_max_and_truncated() {
        for count in [0usize, 1, 64, 255] {
            let instructions = sample(count);
            let mut bytes = vec![0; 5];
            bytes.extend(v1(&instructions));
            let mut offset = 5;
            let (frame, summary) =
                InstructionsFrame::try_new_for_v1::<true>(&bytes, &mut offset, count as u8)
                    .unwrap();
            assert_eq!(offset, bytes.len());
            assert_eq!(collect(&frame, &bytes), instructions);
            assert_eq!(InstructionsSummary::of(&frame, &bytes), summary);
            let mut offset = 5;
            assert_eq!(
                InstructionsFrame::try_new_for_v1::<false>(&bytes, &mut offset, count as u8),
                Ok((frame, InstructionsSummary::EMPTY))
            );
            if count > 0 {
                assert_eq!(
                    InstructionsFrame::try_new_for_v1::<true>(
                        &bytes[..4 + 4 * count],
                        &mut 5,
                        count as u8
                    ),
                    Err(ParseError::Truncated {
                        field: Field::InstructionHeaders,
                        offset_bytes: 5
                    })
                );
            }
        }
        let bytes = v1(&[(1, vec![1, 2], vec![3])]);
        assert_eq!(
            InstructionsFrame::try_new_for_v1::<true>(&bytes[..6], &mut 0, 1),
            Err(ParseError::Truncated {
                field: Field::InstructionPayloads,
                offset_bytes: 4
            })
        );
    }
}
