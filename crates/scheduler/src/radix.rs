//! The once-per-pass sort of a scheduling pass's arrivals: their 128-bit heap keys, highest
//! first, by a least-significant-digit radix sort over the bytes that differ between the keys.
//!
//! Why not `sort_unstable`: a comparison sort of n keys costs about log2 n compare-and-move
//! steps per key (11 for a 2,048-transaction window, 17 for 100,000), and it was the largest
//! single item of a pass's profile. Priorities and insertion numbers differ only in their low
//! bytes, so a radix sort that skips the bytes every key shares needs one counting pass for all
//! bytes and one scatter pass per byte that differs, whatever n. When the keys come in insertion
//! order (the usual case: arrivals since the last pass), the sort being stable, only the priority
//! bytes need sorting: equal priorities keep insertion order, which is what the insertion numbers
//! would give. Short inputs keep the comparison sort.

/// Keys sorted by comparison below this length.
const COMPARISON_SORT_BELOW: usize = 256;

/// The bits a key's order is decided by: the top 96 (priority, then insertion number). The low
/// 32 bits are the transaction id, which two keys share only if their top bits are equal too.
const ORDER_SHIFT: u32 = 32;
/// The priority's bits: the top 64.
const PRIORITY_SHIFT: u32 = 64;
/// Bytes in the ordering bits.
const ORDER_BYTES: usize = ((128 - ORDER_SHIFT) / 8) as usize;

/// Sorts `keys` highest first by their top 96 bits (keys equal there, which the scheduler never
/// has, in no particular order); `scratch` is working space, reused across calls. With
/// `in_insertion_order`, the caller promises that the keys' insertion numbers ascend through
/// `keys` (their middle 32 bits, `u32::MAX - sequence`, descend).
pub(crate) fn sort_descending(
    keys: &mut Vec<u128>,
    scratch: &mut Vec<u128>,
    in_insertion_order: bool,
) {
    if keys.len() < COMPARISON_SORT_BELOW {
        keys.sort_unstable_by(|a, b| b.cmp(a));
        return;
    }
    let shift = if in_insertion_order {
        PRIORITY_SHIFT
    } else {
        ORDER_SHIFT
    };
    let (mut all, mut any) = (u128::MAX, 0u128);
    for &key in keys.iter() {
        all &= key;
        any |= key;
    }
    let varying = (all ^ any) >> shift;
    let mut shifts = [0u32; ORDER_BYTES];
    let mut digits = 0;
    for byte in 0..(128 - shift) / 8 {
        if (varying >> (8 * byte)) as u8 != 0 {
            shifts[digits] = shift + 8 * byte;
            digits += 1;
        }
    }
    let shifts = &shifts[..digits];
    // Keys fit in u32 counts: a scheduler's container holds fewer.
    let mut starts = [[0u32; 256]; ORDER_BYTES];
    for &key in keys.iter() {
        let (low, high) = (key as u64, (key >> 64) as u64);
        for (counts, &shift) in starts.iter_mut().zip(shifts) {
            counts[bucket(if shift >= 64 { high } else { low }, shift)] += 1;
        }
    }
    scratch.clear();
    scratch.resize(keys.len(), 0);
    for (starts, &shift) in starts.iter_mut().zip(shifts) {
        let mut next = 0;
        for start in starts.iter_mut() {
            let count = *start;
            *start = next;
            next += count;
        }
        // One loop per half, so that each reads its byte with a 64-bit shift.
        if shift >= 64 {
            scatter(keys, scratch, starts, |key| {
                bucket((key >> 64) as u64, shift)
            });
        } else {
            scatter(keys, scratch, starts, |key| bucket(key as u64, shift));
        }
        core::mem::swap(keys, scratch);
    }
}

/// The bucket of the key whose 64-bit half holding the byte at bit `shift` (of the key) is
/// `half`: the byte's complement, so that ascending buckets are descending keys. A shift of a
/// `u128` by a variable amount takes five instructions, of a `u64` one.
#[inline(always)]
fn bucket(half: u64, shift: u32) -> usize {
    usize::from(!((half >> (shift % 64)) as u8))
}

/// Moves each key of `keys` to the next place of its bucket (`bucket_of`) in `to`.
#[inline(always)]
fn scatter(
    keys: &[u128],
    to: &mut [u128],
    starts: &mut [u32; 256],
    bucket_of: impl Fn(u128) -> usize,
) {
    for &key in keys {
        let slot = &mut starts[bucket_of(key)];
        to[*slot as usize] = key;
        *slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::sort_descending;

    #[test]
    fn sorts_highest_first_by_the_top_96_bits() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut scratch = Vec::new();
        let cases = [
            (0, 8),
            (5, 8),
            (255, 40),
            (300, 1),
            (1_000, 40),
            (5_000, 64),
            (4_096, 0),
        ];
        for (length, priority_bits) in cases {
            let keys: Vec<u128> = (0..length)
                .map(|index: u32| {
                    let priority = if priority_bits == 0 {
                        7
                    } else {
                        next() >> (64 - priority_bits)
                    };
                    // Few distinct sequences: many keys tie on priority or on both.
                    let sequence = u32::MAX - (next() % 600) as u32;
                    (u128::from(priority) << 64) | (u128::from(sequence) << 32) | u128::from(index)
                })
                .collect();
            let mut sorted = keys.clone();
            sort_descending(&mut sorted, &mut scratch, false);
            let order: Vec<u128> = sorted.iter().map(|key| key >> 32).collect();
            let mut expected: Vec<u128> = keys.iter().map(|key| key >> 32).collect();
            expected.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(
                order, expected,
                "{length} keys, {priority_bits} priority bits"
            );
            let (mut same, mut original) = (sorted.clone(), keys.clone());
            same.sort_unstable();
            original.sort_unstable();
            assert_eq!(same, original, "a permutation of the keys");
            // The same priorities in insertion order: the priority bytes alone give the order
            // of all 96 bits.
            let in_order: Vec<u128> = keys
                .iter()
                .enumerate()
                .map(|(index, key)| {
                    let sequence = u32::MAX - index as u32;
                    (key >> 64 << 64) | (u128::from(sequence) << 32) | (key & 0xFFFF_FFFF)
                })
                .collect();
            let mut sorted = in_order.clone();
            sort_descending(&mut sorted, &mut scratch, true);
            let mut expected = in_order;
            expected.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(sorted, expected, "{length} keys in insertion order");
        }
    }
}
