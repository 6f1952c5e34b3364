//! The fast path: legacy and v0 transactions in their common shape, framed (and, when asked,
//! sanitized) in one pass with as few checks as give the same answer.
//!
//! Spec: `solana-transaction-format.md` ("Legacy and v0 layout", "Parse-time limits",
//! "Sanitization"), the same rules as the section frames and `sanitize`. This path decides only
//! acceptance: it returns `None` for anything it does not handle — v1, an instruction count,
//! account count or lookup count of two compact-u16 bytes, and every broken rule — and the caller
//! then runs the checked path (`TransactionFrame::try_new_checked`), which frames the packet again
//! and names the exact error. So errors cost a second parse; accepted transactions cost one.
//!
//! What callers must guarantee: nothing beyond the bytes. What this module guarantees, and the
//! debug build asserts on every call (so every test, the differential test and the fuzzer check
//! it): whenever it returns a frame, the checked path accepts the same bytes with the same frame;
//! with `SANITIZE`, the checked path's sanitization accepts them too.
//!
//! Why it is faster: the checked path keeps each section's frame, offset and error field live
//! until the end, which the compiler cannot keep in registers; here the state is a cursor and a
//! few counts, the header's four bytes are taken from one word, reads past the end are caught by
//! the next read's bounds check instead of one check per field, the sanitization rules are folded
//! into checks the framing makes anyway (count limits) or checked where their values are loaded
//! (header, program ids, empty lookups), and only the account indexes are gathered (a 16-lane
//! maximum) and compared once at the end. A transaction is one chain of dependent loads
//! (signature count, header, key count, each instruction's account count and data length), so
//! the one-signature case has its own copy with constant offsets, one load shorter.

use crate::limits::{
    ADDRESS_BYTES, HASH_BYTES, MAX_ACCOUNTS_LEGACY_AND_V0, MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET,
    MAX_SIGNATURES_PER_PACKET, MAX_STATIC_ACCOUNTS_PER_PACKET, MESSAGE_VERSION_PREFIX,
    MIN_ADDRESS_TABLE_LOOKUP_BYTES, PACKET_DATA_SIZE, SIGNATURE_BYTES,
};
use crate::sanitize::SanitizeConfig;
use crate::transaction_frame::TransactionFrame;
use crate::TransactionVersion;

/// Largest count held in one compact-u16 byte; larger ones leave the fast path.
const MAX_SINGLE_BYTE_COUNT: u8 = 0x7F;

/// Largest end offset of a frame: its offsets are `u16` (`transaction_frame`), and the checked
/// path rejects a transaction ending beyond.
const MAX_FRAME_BYTES: usize = u16::MAX as usize;

/// Bytes of the message header of a legacy transaction (three counts) plus the static key
/// count; v0 has the version byte before them.
const HEADER_AND_KEY_COUNT_BYTES: usize = 3 + 1;

/// Bytes of the window [`fold_max_account_index`] reads at once: one SSE2 register.
const ACCOUNT_WINDOW_BYTES: usize = 16;

/// Row `n` keeps the last `n` lanes of an account window.
const ACCOUNT_WINDOW_MASKS: [[u8; ACCOUNT_WINDOW_BYTES]; ACCOUNT_WINDOW_BYTES + 1] = {
    let mut masks = [[0u8; ACCOUNT_WINDOW_BYTES]; ACCOUNT_WINDOW_BYTES + 1];
    let mut count = 0;
    while count <= ACCOUNT_WINDOW_BYTES {
        let mut lane = ACCOUNT_WINDOW_BYTES - count;
        while lane < ACCOUNT_WINDOW_BYTES {
            masks[count][lane] = 0xFF;
            lane += 1;
        }
        count += 1;
    }
    masks
};

/// Folds the account indexes `accounts`, which end at `accounts_end` of `bytes`, into the running
/// per-lane maxima `max_account_indexes`. Mainnet instructions have a handful of accounts, too
/// few for a vectorized loop to pay for its set-up; instead the 16 bytes that end where the
/// accounts end are read whole (they are in the buffer: the signatures alone are longer, and the
/// accounts were bounds-checked), lanes before the accounts are zeroed, and the lanes are folded
/// in with one byte-wise maximum (a load, an and and a `pmaxub`). More than 16 accounts are
/// folded 16 at a time from their start, and the window then takes the rest. Every fold keeps
/// the lanes in order: when an earlier version folded a scalar into one lane, the compiler kept
/// the vector in reversed lane order and reversed every window to match (ten shuffles per
/// instruction). `None` (16 bytes not in the buffer before `accounts_end`, which no transaction
/// layout allows) sends the packet to the checked path.
#[inline(always)]
fn fold_max_account_index(
    max_account_indexes: &mut [u8; ACCOUNT_WINDOW_BYTES],
    bytes: &[u8],
    accounts_end: usize,
    accounts: &[u8],
) -> Option<()> {
    let window: &[u8; ACCOUNT_WINDOW_BYTES] = bytes
        .get(accounts_end.wrapping_sub(ACCOUNT_WINDOW_BYTES)..accounts_end)?
        .try_into()
        .ok()?;
    let mut window_count = accounts.len();
    if window_count > ACCOUNT_WINDOW_BYTES {
        let (whole_windows, rest) = accounts.as_chunks::<ACCOUNT_WINDOW_BYTES>();
        for whole_window in whole_windows {
            for lane in 0..ACCOUNT_WINDOW_BYTES {
                max_account_indexes[lane] = max_account_indexes[lane].max(whole_window[lane]);
            }
        }
        window_count = rest.len();
    }
    let mask = &ACCOUNT_WINDOW_MASKS[window_count];
    for lane in 0..ACCOUNT_WINDOW_BYTES {
        max_account_indexes[lane] = max_account_indexes[lane].max(window[lane] & mask[lane]);
    }
    Some(())
}

/// Frames the legacy or v0 transaction at the start of `bytes` (with `EXACT`, filling them), and
/// with `SANITIZE` also checks it against `config`. `None` means "not decided here": the caller
/// runs the checked path.
#[inline(always)]
pub(crate) fn try_new<const SANITIZE: bool, const EXACT: bool>(
    bytes: &[u8],
    config: &SanitizeConfig,
) -> Option<TransactionFrame> {
    let length_bytes = bytes.len();
    // A whole packet must end within both limits of the checked path: its offsets fit u16, and
    // a sanitized one fits a packet. Checked on the length now, so not on the cursor at the end.
    if EXACT
        && length_bytes
            > if SANITIZE {
                PACKET_DATA_SIZE
            } else {
                MAX_FRAME_BYTES
            }
    {
        return None;
    }
    let num_signatures = *bytes.first()?;
    // One signature is the common case (a single fee payer signing): a separate copy of the
    // parser with that count known makes every later address a constant distance from the
    // start, so the header and key count are loaded without waiting for the signature count (the
    // branch is predicted), which shortens the chain of dependent loads by one.
    if num_signatures == 1 {
        try_new_after_signatures::<SANITIZE, EXACT>(bytes, config, 1)
    } else if num_signatures.wrapping_sub(1) < MAX_SIGNATURES_PER_PACKET {
        try_new_after_signatures::<SANITIZE, EXACT>(bytes, config, num_signatures)
    } else {
        // 0, too many, and a v1 first byte (top bit set) leave.
        None
    }
}

/// [`try_new`] once the signature count is read and within 1..=12.
#[inline(always)]
fn try_new_after_signatures<const SANITIZE: bool, const EXACT: bool>(
    bytes: &[u8],
    config: &SanitizeConfig,
    num_signatures: u8,
) -> Option<TransactionFrame> {
    let length_bytes = bytes.len();
    let message_offset = 1 + usize::from(num_signatures) * SIGNATURE_BYTES;
    // The version byte (if any), the three header bytes and the key count are within the first
    // five message bytes, and any valid message has more than eight (a key follows): read eight
    // as one word, and take the header from it as it is or shifted by the v0 version byte, so
    // that the header waits for one load, not for the version byte and then a second load.
    let message_start: [u8; 8] = *bytes
        .get(message_offset..message_offset + 8)?
        .first_chunk()?;
    let message_word = u64::from_le_bytes(message_start);
    let prefix = message_start[0];
    if prefix > MESSAGE_VERSION_PREFIX {
        // A version other than 0.
        return None;
    }
    let is_v0 = prefix == MESSAGE_VERSION_PREFIX;
    let version_bytes = usize::from(is_v0);
    let header_word = if is_v0 {
        (message_word >> 8) as u32
    } else {
        message_word as u32
    };
    let header = header_word.to_le_bytes();
    let [num_required_signatures, num_readonly_signed_accounts, num_readonly_unsigned_accounts, num_static_accounts] =
        header;
    if num_static_accounts.wrapping_sub(1) >= MAX_STATIC_ACCOUNTS_PER_PACKET {
        return None;
    }
    // The header rules of `sanitize::sanitize`, in a shorter equivalent form (only acceptance is
    // decided here): `num_signatures` is 1..=12, so equal counts imply a required signature;
    // with `num_static_accounts >= num_required_signatures`, the readonly-unsigned rule is
    // `num_required_signatures + num_readonly_unsigned_accounts <= num_static_accounts`, and
    // that sum rejects too when there are fewer static keys than signatures. Combined with `|`
    // into one branch.
    if SANITIZE
        && ((num_signatures != num_required_signatures)
            | (num_readonly_signed_accounts >= num_required_signatures)
            | (u16::from(num_required_signatures) + u16::from(num_readonly_unsigned_accounts)
                > u16::from(num_static_accounts)))
    {
        return None;
    }
    // The largest instruction count and account count per instruction decided here: single-byte
    // counts, and when sanitizing, within the config's limits (a larger count goes to the
    // checked path, which rejects it or, for a config above 127, accepts it there).
    let (max_num_instructions, max_num_accounts) = if SANITIZE {
        (
            config.max_instructions.min(MAX_SINGLE_BYTE_COUNT.into()) as u8,
            config
                .max_accounts_per_instruction
                .min(MAX_SINGLE_BYTE_COUNT.into()) as u8,
        )
    } else {
        (MAX_SINGLE_BYTE_COUNT, MAX_SINGLE_BYTE_COUNT)
    };
    let instruction_count_offset = message_offset
        + version_bytes
        + HEADER_AND_KEY_COUNT_BYTES
        + usize::from(num_static_accounts) * ADDRESS_BYTES
        + HASH_BYTES;
    // This read also bounds-checks the keys and the blockhash before it.
    let num_instructions = *bytes.get(instruction_count_offset)?;
    if num_instructions > max_num_instructions {
        return None;
    }
    let instructions_offset = instruction_count_offset + 1;
    // Every program id index must be in 1..num_static_accounts (num_static_accounts >= 1):
    // `program_id_index - 1`, wrapping so that 0 becomes 255, below this.
    let num_static_accounts_less_one = num_static_accounts - 1;

    // No addition below can overflow: every offset read is below `length_bytes`, and each step
    // adds at most 2 + 127 + 2 + 16383 to one.
    let mut cursor = instructions_offset;
    // Sanitization summary: the largest account index in each window lane.
    let mut max_account_indexes = [0u8; ACCOUNT_WINDOW_BYTES];
    // Account counts above 127 leave the loop and data lengths above 127 never become the
    // previous shape, so no instruction has this one.
    let mut previous_shape = u16::MAX;
    let mut previous_instruction_bytes = 0;
    for _ in 0..num_instructions {
        let &[program_id_index, num_accounts] = bytes.get(cursor..cursor + 2)?.first_chunk()?;
        if num_accounts > max_num_accounts
            || (SANITIZE && program_id_index.wrapping_sub(1) >= num_static_accounts_less_one)
        {
            return None;
        }
        let accounts_offset = cursor + 2;
        // The accounts and the first byte of the data length, with one bounds check.
        let accounts_and_length =
            bytes.get(accounts_offset..accounts_offset + usize::from(num_accounts) + 1)?;
        let (accounts, data_length_first) = accounts_and_length.split_at(usize::from(num_accounts));
        let data_length_first = data_length_first[0];
        let data_offset = accounts_offset + usize::from(num_accounts) + 1;
        // As for lookups below: an instruction with the same account count and one-byte data
        // length as the previous one advances by that one's size, already known, which lets the
        // processor start on the next instruction before this one's loads finish.
        let shape = u16::from_le_bytes([num_accounts, data_length_first]);
        cursor = if shape == previous_shape {
            cursor + previous_instruction_bytes
        } else if data_length_first <= MAX_SINGLE_BYTE_COUNT {
            previous_shape = shape;
            previous_instruction_bytes =
                3 + usize::from(num_accounts) + usize::from(data_length_first);
            data_offset + usize::from(data_length_first)
        } else {
            // A two-byte data length (128..=16383): the second byte must be 1..=127, as in
            // `bytes::read_compact_u16`.
            let second = *bytes.get(data_offset)?;
            if second.wrapping_sub(1) >= MAX_SINGLE_BYTE_COUNT {
                return None;
            }
            data_offset
                + 1
                + (usize::from(data_length_first & MAX_SINGLE_BYTE_COUNT)
                    | usize::from(second) << 7)
        };
        // The data's end is checked by the next read, or after the loop.
        if SANITIZE {
            fold_max_account_index(
                &mut max_account_indexes,
                bytes,
                accounts_offset + usize::from(num_accounts),
                accounts,
            )?;
        }
    }
    if cursor > length_bytes {
        return None;
    }

    let mut num_address_table_lookups = 0;
    let mut address_table_lookups_offset = 0;
    let mut total_writable_lookup_accounts = 0u16;
    let mut total_readonly_lookup_accounts = 0u16;
    if is_v0 {
        num_address_table_lookups = *bytes.get(cursor)?;
        cursor += 1;
        // The checked path rejects a count whose lookups cannot all be minimum-sized before it
        // reads them (an empty lookup is a byte shorter), so this path must too.
        if num_address_table_lookups > MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET
            || usize::from(num_address_table_lookups) * MIN_ADDRESS_TABLE_LOOKUP_BYTES
                > length_bytes - cursor
        {
            return None;
        }
        address_table_lookups_offset = cursor as u16;
        // Counts above 127 leave the loop, so no lookup has this shape.
        let mut previous_shape = u16::MAX;
        let mut previous_lookup_bytes = 0;
        for _ in 0..num_address_table_lookups {
            let num_writable = *bytes.get(cursor + ADDRESS_BYTES)?;
            let readonly_count_offset = cursor + ADDRESS_BYTES + 1 + usize::from(num_writable);
            let num_readonly = *bytes.get(readonly_count_offset)?;
            // Sanitization rejects a lookup without any index.
            if (num_writable | num_readonly) > MAX_SINGLE_BYTE_COUNT
                || (SANITIZE && (num_writable | num_readonly) == 0)
            {
                return None;
            }
            // At most 31 lookups of 127 + 127 indexes: the totals fit u16.
            total_writable_lookup_accounts += u16::from(num_writable);
            total_readonly_lookup_accounts += u16::from(num_readonly);
            // The next lookup's position depends on two loads from this one's; when this lookup
            // has the same counts as the previous one, advance by that one's size instead, a
            // value already known, so the processor (predicting the branch) can start on the
            // next lookup before this one's loads finish. Packed lookups often repeat a shape.
            let shape = u16::from_le_bytes([num_writable, num_readonly]);
            if shape == previous_shape {
                cursor += previous_lookup_bytes;
            } else {
                previous_shape = shape;
                previous_lookup_bytes =
                    ADDRESS_BYTES + 2 + usize::from(num_writable) + usize::from(num_readonly);
                cursor = readonly_count_offset + 1 + usize::from(num_readonly);
            }
        }
        if cursor > length_bytes
            || (SANITIZE
                && u16::from(num_static_accounts)
                    + total_writable_lookup_accounts
                    + total_readonly_lookup_accounts
                    > MAX_ACCOUNTS_LEGACY_AND_V0)
        {
            return None;
        }
    }
    // With `EXACT`, the length was checked against both limits above.
    if EXACT {
        if cursor != length_bytes {
            return None;
        }
    } else if cursor
        > if SANITIZE {
            PACKET_DATA_SIZE
        } else {
            MAX_FRAME_BYTES
        }
    {
        return None;
    }

    if SANITIZE {
        // 1 <= total_accounts <= 256 (checked with the lookups above; a legacy transaction has at
        // most 38 keys), so the largest valid index fits a u8; comparing every lane with it is
        // cheaper than reducing the lanes to their maximum first.
        let total_accounts = u16::from(num_static_accounts)
            + total_writable_lookup_accounts
            + total_readonly_lookup_accounts;
        let max_valid_account_index = total_accounts.wrapping_sub(1) as u8;
        let account_index_out_of_range = max_account_indexes
            .iter()
            .fold(false, |out_of_range, &index| {
                out_of_range | (index > max_valid_account_index)
            });
        if account_index_out_of_range {
            return None;
        }
    }

    Some(TransactionFrame {
        version: if is_v0 {
            TransactionVersion::V0
        } else {
            TransactionVersion::Legacy
        },
        num_signatures,
        header,
        num_address_table_lookups,
        num_instructions: u16::from(num_instructions),
        instructions_offset: instructions_offset as u16,
        address_table_lookups_offset,
        total_writable_lookup_accounts,
        total_readonly_lookup_accounts,
        data_length: cursor as u16,
        config_mask: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AddressTableLookupSpec, InstructionSpec, MessageHeader, Transaction};
    use crate::error::TransactionViewError;

    const CONFIG: SanitizeConfig = SanitizeConfig::MAINNET;

    /// A transaction of `version` with `num_instructions` instructions of `num_accounts` accounts
    /// and `data_length` data bytes, and `lookups` lookups of (writable, readonly) index counts.
    fn build(
        version: TransactionVersion,
        num_instructions: usize,
        num_accounts: usize,
        data_length: usize,
        lookups: &[(usize, usize)],
    ) -> Vec<u8> {
        let mut transaction = Transaction::new(
            version,
            MessageHeader {
                num_required_signatures: 2,
                num_readonly_signed_accounts: 1,
                num_readonly_unsigned_accounts: 1,
            },
            vec![[1; 32], [2; 32], [3; 32], [4; 32]],
            [9; 32],
            (0..num_instructions)
                .map(|index| InstructionSpec {
                    program_id_index: 3,
                    accounts: (0..num_accounts)
                        .map(|account| (account % 4) as u8)
                        .collect(),
                    data: vec![index as u8; data_length],
                })
                .collect(),
        );
        transaction.address_table_lookups = lookups
            .iter()
            .map(|&(writable, readonly)| AddressTableLookupSpec {
                account_key: [7; 32],
                writable_indexes: vec![0; writable],
                readonly_indexes: vec![1; readonly],
            })
            .collect();
        transaction.serialize()
    }

    /// Runs the fast path in all four modes and checks each answer it gives against the checked
    /// path; returns whether the fast path decided (unsanitized, sanitized).
    fn check_agreement(bytes: &[u8]) -> (bool, bool) {
        let exact_unsanitized = TransactionFrame::try_new_checked::<false, true, _>(
            bytes,
            crate::transaction_frame::NoCheck,
        );
        let exact_sanitized =
            TransactionFrame::try_new_checked::<true, true, TransactionViewError>(bytes, &CONFIG);
        let fast_unsanitized = try_new::<false, true>(bytes, &CONFIG);
        let fast_sanitized = try_new::<true, true>(bytes, &CONFIG);
        if let Some(frame) = fast_unsanitized {
            assert_eq!(exact_unsanitized, Ok(frame), "{bytes:02x?}");
        }
        if let Some(frame) = fast_sanitized {
            assert_eq!(exact_sanitized, Ok(frame), "{bytes:02x?}");
        }
        for length in [0, bytes.len() / 2, bytes.len().saturating_sub(1)] {
            let prefix = &bytes[..length];
            if let Some(frame) = try_new::<false, false>(prefix, &CONFIG) {
                assert_eq!(
                    TransactionFrame::try_new_checked::<false, false, _>(
                        prefix,
                        crate::transaction_frame::NoCheck
                    ),
                    Ok(frame)
                );
            }
        }
        (fast_unsanitized.is_some(), fast_sanitized.is_some())
    }

    /// Version, instructions, accounts per instruction, data length, lookups, and whether the
    /// transaction sanitizes.
    type Shape = (
        TransactionVersion,
        usize,
        usize,
        usize,
        &'static [(usize, usize)],
        bool,
    );

    #[test]
    fn common_shapes_are_decided_here() {
        let cases: &[Shape] = &[
            (TransactionVersion::Legacy, 0, 0, 0, &[], true),
            (TransactionVersion::Legacy, 1, 4, 40, &[], true),
            (TransactionVersion::Legacy, 5, 17, 127, &[], true),
            (TransactionVersion::Legacy, 2, 127, 128, &[], true),
            (TransactionVersion::Legacy, 1, 3, 700, &[], true),
            (TransactionVersion::Legacy, 64, 0, 0, &[], true),
            // Over the instruction limit: framed here, rejected by sanitization.
            (TransactionVersion::Legacy, 65, 0, 0, &[], false),
            (TransactionVersion::V0, 1, 4, 40, &[], true),
            (
                TransactionVersion::V0,
                2,
                4,
                40,
                &[(1, 0), (0, 3), (127, 100)],
                true,
            ),
            // 4 + 128 + 130 accounts: more than 256.
            (
                TransactionVersion::V0,
                1,
                4,
                40,
                &[(1, 0), (0, 3), (127, 127)],
                false,
            ),
            // An empty lookup frames but does not sanitize.
            (TransactionVersion::V0, 1, 4, 40, &[(1, 0), (0, 0)], false),
        ];
        for &(version, instructions, accounts, data, lookups, sanitizes) in cases {
            let mut bytes = build(version, instructions, accounts, data, lookups);
            if lookups.contains(&(0, 0)) {
                // Agave wants room for a minimum-sized lookup per count; pad as the checked path
                // requires, then only the prefix constructor applies.
                bytes.push(0);
                assert_eq!(try_new::<false, true>(&bytes, &CONFIG), None);
                let frame = try_new::<false, false>(&bytes, &CONFIG).unwrap();
                assert_eq!(usize::from(frame.data_length), bytes.len() - 1);
                assert_eq!(try_new::<true, false>(&bytes, &CONFIG), None);
                continue;
            }
            assert_eq!(
                check_agreement(&bytes),
                (true, sanitizes),
                "{version:?} {instructions} {accounts} {data} {lookups:?}"
            );
        }
    }

    #[test]
    fn max_account_index_with_and_without_a_window() {
        // Accounts after `leading` bytes, so that the 16-byte window ending at them fits or not,
        // with 0 to 127 accounts (whole windows and rests), ascending, descending and mixed, so
        // that the largest index is in the first window, the last one or between; the bytes
        // before and after the accounts are larger than any account index and must not count.
        let patterns: [fn(usize) -> u8; 3] = [
            |index| (index * 7 % 100) as u8,
            |index| index as u8,
            |index| 200 - index as u8,
        ];
        for num_accounts in [0usize, 1, 2, 15, 16, 17, 31, 32, 33, 127] {
            for leading in [0usize, 1, 15, 16, 40] {
                for pattern in patterns {
                    let accounts: Vec<u8> = (0..num_accounts).map(pattern).collect();
                    let mut bytes = vec![0xEE; leading];
                    bytes.extend(&accounts);
                    bytes.extend([0xF0; 3]);
                    let mut maxima = [0u8; ACCOUNT_WINDOW_BYTES];
                    maxima[3] = 2;
                    let folded = fold_max_account_index(
                        &mut maxima,
                        &bytes,
                        leading + num_accounts,
                        &bytes[leading..leading + num_accounts],
                    );
                    if leading + num_accounts < ACCOUNT_WINDOW_BYTES {
                        assert_eq!(folded, None);
                        continue;
                    }
                    let expected = accounts.iter().fold(2, |max, &index| max.max(index));
                    assert_eq!(
                        (folded, maxima.iter().max().copied()),
                        (Some(()), Some(expected)),
                        "{num_accounts} accounts, {leading} bytes before"
                    );
                }
            }
        }
    }

    #[test]
    fn left_to_the_checked_path() {
        // Two-byte counts and v1 are not decided here, nor is any error.
        let cases = [
            build(TransactionVersion::Legacy, 1, 128, 1, &[]),
            build(TransactionVersion::Legacy, 128, 0, 0, &[]),
            build(TransactionVersion::V0, 1, 1, 1, &[(128, 0)]),
            build(TransactionVersion::V1, 1, 1, 1, &[]),
            build(TransactionVersion::Legacy, 1, 1, 1, &[])[..100].to_vec(),
        ];
        for bytes in cases {
            assert_eq!(check_agreement(&bytes), (false, false));
        }
    }

    #[test]
    fn mutations_agree_with_the_checked_path() {
        // Every single-byte change to a few bytes of interest, over several shapes: whatever the
        // fast path decides, the checked path decides the same with the same frame.
        let shapes = [
            build(TransactionVersion::Legacy, 2, 3, 5, &[]),
            build(TransactionVersion::Legacy, 1, 2, 130, &[]),
            build(TransactionVersion::V0, 2, 3, 5, &[(2, 1), (0, 1)]),
            // Repeated shapes take the predicted advance.
            build(TransactionVersion::V0, 3, 1, 2, &[(2, 1), (2, 1), (2, 1)]),
        ];
        let mut decided = 0;
        for base in shapes {
            for position in 0..base.len() {
                for value in [0u8, 1, 2, 3, 4, 0x7F, 0x80, 0x81, 0xFF] {
                    let mut bytes = base.clone();
                    bytes[position] = value;
                    let (unsanitized, _) = check_agreement(&bytes);
                    decided += usize::from(unsanitized);
                }
            }
        }
        assert!(
            decided > 1000,
            "the fast path decided only {decided} mutations"
        );
    }
}
