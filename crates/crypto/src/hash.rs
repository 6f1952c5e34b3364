//! Hash functions, each returning a fixed-size array: the BLAKE2b sizes Tezos uses (key hashes,
//! script-expression hashes, the `BLAKE2B` instruction), SHA-2 (`SHA256`, `SHA512`), SHA-3
//! (`SHA3`) and Keccak (`KECCAK`) as Michelson defines them (michelson.rst, "Cryptographic
//! primitives"). Pure functions of their input; nothing to guarantee.

use blake2::digest::consts::{U20, U32};
use blake2::digest::{Update, VariableOutput};
use blake2::{Blake2b, Blake2bVar, Digest};

/// The largest BLAKE2b output size in bytes (RFC 7693, section 2.1).
pub const BLAKE2B_MAX_OUTPUT_BYTES: usize = 64;

/// BLAKE2b with a 32-byte digest (script-expression hashes, context hashes, `BLAKE2B`).
pub fn blake2b_256(data: &[u8]) -> [u8; 32] {
    Blake2b::<U32>::digest(data).into()
}

/// BLAKE2b with a 20-byte digest (public-key hashes, contract hashes).
pub fn blake2b_160(data: &[u8]) -> [u8; 20] {
    Blake2b::<U20>::digest(data).into()
}

/// BLAKE2b with a 32-byte digest over the concatenation of `parts`, without copying them
/// together first (Octez's `Blake2B.hash_bytes [a; b]`).
pub fn blake2b_256_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Blake2b::<U32>::new();
    for part in parts {
        Digest::update(&mut hasher, part);
    }
    hasher.finalize().into()
}

/// BLAKE2b with an output of `output.len()` bytes (1 to [`BLAKE2B_MAX_OUTPUT_BYTES`]); the output
/// size is a parameter of the function, so this is not a truncation of the 64-byte digest.
/// Returns `false` (and leaves `output` untouched) when the size is out of range.
pub fn blake2b_into(data: &[u8], output: &mut [u8]) -> bool {
    if output.is_empty() || output.len() > BLAKE2B_MAX_OUTPUT_BYTES {
        return false;
    }
    let Ok(mut hasher) = Blake2bVar::new(output.len()) else {
        return false;
    };
    hasher.update(data);
    hasher.finalize_variable(output).is_ok()
}

/// SHA-256.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

/// SHA-512.
pub fn sha512(data: &[u8]) -> [u8; 64] {
    sha2::Sha512::digest(data).into()
}

/// SHA3-256 (FIPS 202), Michelson's `SHA3`.
pub fn sha3_256(data: &[u8]) -> [u8; 32] {
    sha3::Sha3_256::digest(data).into()
}

/// Keccak-256 (the pre-standard padding Ethereum uses), Michelson's `KECCAK`.
pub fn keccak_256(data: &[u8]) -> [u8; 32] {
    sha3::Keccak256::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(actual: &[u8], expected_hex: &str) {
        assert_eq!(hex::encode(actual), expected_hex);
    }

    #[test]
    fn digests_of_known_inputs() {
        // Empty-input digests from the algorithms' specifications.
        check(
            &blake2b_256(b""),
            "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8",
        );
        check(
            &sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        );
        check(
            &sha3_256(b""),
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
        );
        check(
            &keccak_256(b""),
            "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
        );
        check(&sha512(b"abc")[..8], "ddaf35a193617aba");
    }

    /// Every hash instruction's TZT test (`code HASH; input bytes; output bytes`), read in place.
    #[test]
    fn tzt_hash_instruction_vectors() {
        let Some(dir) = kestrel_testdata::require("tzt", "tzt_hash_instruction_vectors") else {
            return;
        };
        type HashFunction = fn(&[u8]) -> Vec<u8>;
        let hashes: [(&str, HashFunction); 5] = [
            ("BLAKE2B", |d| blake2b_256(d).to_vec()),
            ("KECCAK", |d| keccak_256(d).to_vec()),
            ("SHA256", |d| sha256(d).to_vec()),
            ("SHA3", |d| sha3_256(d).to_vec()),
            ("SHA512", |d| sha512(d).to_vec()),
        ];
        let mut checked = 0;
        for path in kestrel_testdata::files_with_suffix(&dir, ".tzt") {
            let text = std::fs::read_to_string(&path).unwrap();
            let Some((_, function)) = hashes
                .iter()
                .find(|(name, _)| text.starts_with(&format!("code {name};")))
            else {
                continue;
            };
            let hexes: Vec<&str> = text
                .split("0x")
                .skip(1)
                .map(|rest| rest.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap())
                .collect();
            let [input, output] = hexes[..] else {
                panic!("{}: expected one input and one output", path.display())
            };
            check(&function(&hex::decode(input).unwrap()), output);
            checked += 1;
        }
        assert_eq!(checked, 10, "two TZT vectors per hash instruction");
    }

    #[test]
    fn variable_blake2b_matches_fixed_sizes_and_rejects_bad_sizes() {
        let mut out32 = [0u8; 32];
        assert!(blake2b_into(b"abc", &mut out32));
        assert_eq!(out32, blake2b_256(b"abc"));
        let mut out20 = [0u8; 20];
        assert!(blake2b_into(b"abc", &mut out20));
        assert_eq!(out20, blake2b_160(b"abc"));
        assert_eq!(blake2b_256_parts(&[b"a", b"bc"]), blake2b_256(b"abc"));
        assert!(!blake2b_into(b"abc", &mut []));
        assert!(!blake2b_into(b"abc", &mut [0u8; 65]));
    }
}
