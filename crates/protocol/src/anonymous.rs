//! Anonymous operations (`operation_repr.ml`): seed nonce revelations, account activations,
//! delegate draining and failing no-ops — kinds signed by no manager, or not signed at all.

use kestrel_crypto::PublicKeyHash;

use crate::crypto_fields::Ed25519PublicKeyHash;
use crate::field::{FixedHex, HexBytes};
use crate::record::record;

/// The size of a seed nonce (`Constants_repr.nonce_length`).
pub const NONCE_SIZE_BYTES: usize = 32;

/// The size of an activation code (`Blinded_public_key_hash.activation_code_size`).
pub const ACTIVATION_CODE_SIZE_BYTES: usize = 20;

record! {
    /// Reveals a committed seed nonce (tag 1).
    pub struct SeedNonceRevelation {
        /// The level of the block that committed to the nonce.
        level: i32 => "level",
        /// The nonce.
        nonce: FixedHex<NONCE_SIZE_BYTES> => "nonce",
    }
}

record! {
    /// Activates a fundraiser account (tag 4).
    pub struct ActivateAccount {
        /// The account (an ed25519 key hash).
        pkh: Ed25519PublicKeyHash => "pkh",
        /// The activation code.
        secret: FixedHex<ACTIVATION_CODE_SIZE_BYTES> => "secret",
    }
}

record! {
    /// Moves a delegate's spendable balance to a destination, signed by its consensus key (tag 9).
    pub struct DrainDelegate {
        /// The delegate's consensus key.
        consensus_key: PublicKeyHash => "consensus_key",
        /// The delegate.
        delegate: PublicKeyHash => "delegate",
        /// Who receives the balance.
        destination: PublicKeyHash => "destination",
    }
}

record! {
    /// An operation that always fails, to sign arbitrary bytes safely (tag 17).
    pub struct FailingNoop<'a> {
        /// The bytes.
        arbitrary: HexBytes<'a> => "arbitrary",
    }
}
