//! Hash functions, each returning a fixed-size array.

use blake2::digest::consts::{U20, U32};
use blake2::{Blake2b, Digest};

/// BLAKE2b with a 32-byte digest (script-expression hashes, context hashes, `BLAKE2B`).
pub fn blake2b_256(data: &[u8]) -> [u8; 32] {
    Blake2b::<U32>::digest(data).into()
}

/// BLAKE2b with a 20-byte digest (public-key hashes, contract hashes).
pub fn blake2b_160(data: &[u8]) -> [u8; 20] {
    Blake2b::<U20>::digest(data).into()
}

/// SHA-256.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(data).into()
}

/// SHA-512.
pub fn sha512(data: &[u8]) -> [u8; 64] {
    sha2::Sha512::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blake2b_256_of_empty_input() {
        let digest = blake2b_256(b"");
        assert_eq!(digest[..4], [0x0e, 0x57, 0x51, 0xc0]);
    }
}
