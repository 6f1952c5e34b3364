//! OCaml's seeded string hash (`Hashtbl.seeded_hash` on a string), which Irmin uses to pick the
//! inode child of a name: `index(depth, name) = ocaml_hash(depth, name) mod 32`.
//!
//! Spec: tezos-context-hash-SPEC.md, "Index function" (MurmurHash3-based `caml_hash_mix_string`
//! followed by `FINAL_MIX` and a 30-bit mask, exactly as OCaml's `runtime/hash.c`). Pure function,
//! no preconditions.

/// OCaml's hash keeps 30 bits so the result fits an OCaml `int` on every platform (runtime/hash.c).
const OCAML_HASH_MASK: u32 = 0x3FFF_FFFF;

#[inline(always)]
fn mix(mut h: u32, mut w: u32) -> u32 {
    w = w.wrapping_mul(0xcc9e_2d51);
    w = w.rotate_left(15);
    w = w.wrapping_mul(0x1b87_3593);
    h ^= w;
    h = h.rotate_left(13);
    h.wrapping_mul(5).wrapping_add(0xe654_6b64)
}

/// `Hashtbl.seeded_hash seed s` for an OCaml string `s`.
pub fn ocaml_hash(seed: u32, s: &[u8]) -> u32 {
    let mut h = seed;
    let mut chunks = s.chunks_exact(4);
    for chunk in &mut chunks {
        // OCaml reads each 4-byte word little-endian (it byte-swaps on big-endian machines).
        h = mix(
            h,
            u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]),
        );
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut w = 0u32;
        for (shift, byte) in tail.iter().enumerate() {
            w |= u32::from(*byte) << (8 * shift);
        }
        h = mix(h, w);
    }
    // OCaml mixes in the length as a 32-bit value (strings longer than 4 GiB wrap, as in C).
    h ^= s.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h & OCAML_HASH_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(seed: u32, s: &str, expected: u32) {
        assert_eq!(
            ocaml_hash(seed, s.as_bytes()),
            expected,
            "seed {seed} {s:?}"
        );
    }

    #[test]
    fn empty_string_and_tails() {
        // The first vectors of ../shared/testdata/context/ocaml_hash.json (all 100 run in tests/).
        check(542_334_128, "1", 390_276_175);
        check(274_865_836, "#", 62_205_292);
        check(136_155_357, "$O%Pxr$", 416_353_320);
    }
}
