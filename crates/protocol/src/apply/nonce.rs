//! Origination addresses (`origination_nonce.ml`, `Contract_hash.of_nonce`): a contract's hash is
//! BLAKE2b-160 of the originating operation's hash and a 32-bit big-endian origination index
//! that counts the operation's originations, internal ones included, from 0.

use kestrel_crypto::hash::blake2b_160;
use kestrel_crypto::ContractHash;

/// The origination nonce of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OriginationNonce {
    operation_hash: [u8; 32],
    origination_index: u32,
}

impl OriginationNonce {
    /// The nonce at the start of the operation whose hash is `operation_hash`.
    pub fn new(operation_hash: [u8; 32]) -> OriginationNonce {
        OriginationNonce {
            operation_hash,
            origination_index: 0,
        }
    }

    /// The address of the next origination, counted.
    pub fn next_contract(&mut self) -> ContractHash {
        let mut bytes = [0; 36];
        bytes[..32].copy_from_slice(&self.operation_hash);
        bytes[32..].copy_from_slice(&self.origination_index.to_be_bytes());
        self.origination_index = self.origination_index.wrapping_add(1);
        ContractHash::new(blake2b_160(&bytes))
    }
}
