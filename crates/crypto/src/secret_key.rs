//! Ed25519 secret keys in Octez's `edsk…` forms (the 32-byte seed, and the 64-byte seed ‖ public
//! key form), and signing as Octez signs: ed25519 over the blake2b-256 digest of the message
//! (`Ed25519.sign`, `src/lib_crypto/ed25519.ml`). Clients sign operations with it (the
//! bootstrap accounts of the sandbox and the mockup are ed25519); checking stays in [`keys`].
//!
//! [`keys`]: crate::keys

use crate::base58::{self, ED25519_SECRET_KEY, ED25519_SEED};
use crate::hash::blake2b_256;
use crate::{CryptoError, PublicKey, Signature, SignatureScheme};

/// An ed25519 secret key.
#[derive(Clone)]
pub struct SecretKey {
    signing: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for SecretKey {
    /// Shows the public key only, so a secret never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public_key().to_b58check())
    }
}

impl SecretKey {
    const WHAT: &'static str = "secret key";

    /// Reads `edsk…` text: the 54-character seed form or the 98-character seed ‖ public key
    /// form (whose public half must match the seed).
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let error = |error| CryptoError::Base58 {
            what: Self::WHAT,
            error,
        };
        let decoded = base58::decode_check_raw(text).map_err(error)?;
        let (index, payload) =
            base58::split_prefix(&decoded, &[ED25519_SEED, ED25519_SECRET_KEY]).map_err(error)?;
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&payload[..32]);
        let key = SecretKey {
            signing: ed25519_dalek::SigningKey::from_bytes(&seed),
        };
        if index == 1 && payload[32..] != key.signing.verifying_key().to_bytes() {
            return Err(CryptoError::InvalidPoint { what: Self::WHAT });
        }
        Ok(key)
    }

    /// The seed form, `edsk…` (54 characters).
    pub fn to_b58check(&self) -> String {
        base58::encode_check(ED25519_SEED, &self.signing.to_bytes())
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        let bytes = self.signing.verifying_key().to_bytes();
        // A key derived from a seed is always a valid, canonical point.
        PublicKey::try_new(SignatureScheme::Ed25519, &bytes)
            .expect("an ed25519 public key derived from a seed is valid")
    }

    /// Signs `message` as Octez does: ed25519 of its blake2b-256 digest.
    pub fn sign(&self, message: &[u8]) -> Signature {
        use ed25519_dalek::Signer;
        let bytes = self.signing.sign(&blake2b_256(message)).to_bytes();
        Signature::try_new(Some(SignatureScheme::Ed25519), &bytes)
            .expect("an ed25519 signature is 64 bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bootstrap1 of Octez's sandbox (`../shared/specs/tezos-node.md`, section 1).
    const BOOTSTRAP1_SECRET: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
    const BOOTSTRAP1_PUBLIC: &str = "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav";

    #[test]
    fn seed_gives_the_published_key_and_round_trips() {
        let key = SecretKey::from_b58check(BOOTSTRAP1_SECRET).expect("valid");
        assert_eq!(key.public_key().to_b58check(), BOOTSTRAP1_PUBLIC);
        assert_eq!(key.to_b58check(), BOOTSTRAP1_SECRET);
    }

    #[test]
    fn signatures_verify_and_bad_text_is_rejected() {
        let key = SecretKey::from_b58check(BOOTSTRAP1_SECRET).expect("valid");
        let signature = key.sign(b"\x03message");
        assert!(key.public_key().check(&signature, b"\x03message"));
        assert!(!key.public_key().check(&signature, b"\x03other"));
        assert!(SecretKey::from_b58check(BOOTSTRAP1_PUBLIC).is_err());
        assert!(SecretKey::from_b58check("edsk").is_err());
    }
}
