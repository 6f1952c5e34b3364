//! Signature checks of operations (`operation_repr.ml`, `check_signature`; `validate.ml` for the
//! proofs of possession), on the bytes as received: the signer signs its watermark then the
//! unsigned bytes (branch and contents). The watermark is `0x03` (`Generic_operation`) except
//! for a lone preattestation (`0x12 ‖ chain id`) or attestation (`0x13 ‖ chain id`).
//!
//! Keys are `kestrel-crypto`'s and checks are Octez's `Signature.V3.check` ([`PublicKey::check`]):
//! tz1 ed25519, tz2 secp256k1 (low s), tz3 p256 and tz5 ML-DSA-44 (pure, empty context) over the
//! blake2b-256 digest; tz4 BLS in the proof-of-possession scheme. [`check_all`] checks a set of operations with the ed25519 ones
//! batched. A reveal or key update of a tz4 key must carry the key's proof of possession
//! ([`check_proofs_of_possession`]).
//!
//! A lone (pre)attestation signed by a tz4 key signs its BLS-mode bytes (slot and DAL content
//! left out, `Operation::encode_bls_mode_unsigned`) instead of the bytes received.

use std::fmt;

use kestrel_crypto::{ChainId, PublicKey, Signature, SignatureScheme};

use crate::consensus::ConsensusOperation;
use crate::contents::{Contents, ManagerKind};
use crate::operation::{SignedOperation, GENERIC_OPERATION_WATERMARK};

/// The watermark byte of preattestations (`Preattestation` in `to_watermark`).
pub const PREATTESTATION_WATERMARK: u8 = 0x12;

/// The watermark byte of attestations (`Attestation` in `to_watermark`).
pub const ATTESTATION_WATERMARK: u8 = 0x13;

/// Why an operation's signature (or a key's proof of possession) is refused, with Octez's
/// error ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureError {
    /// The operation carries no signature (`operation.missing_signature`).
    Missing,
    /// The signature does not verify under the key (`operation.invalid_signature`).
    Invalid,
    /// A tz4 key is revealed or set without its proof of possession
    /// (`validate.operation.missing_bls_proof`).
    MissingBlsProof {
        /// The index of the content in the operation.
        index: usize,
    },
    /// A tz4 key's proof of possession does not verify (`validate.operation.incorrect_bls_proof`).
    IncorrectBlsProof {
        /// The index of the content in the operation.
        index: usize,
    },
    /// A proof of possession comes with a key that is not tz4
    /// (`validate.operation.unused_bls_proof`).
    UnusedBlsProof {
        /// The index of the content in the operation.
        index: usize,
    },
}

impl SignatureError {
    /// Octez's error id, without the `proto.025-PsUshuai.` prefix.
    pub fn octez_id(&self) -> &'static str {
        match self {
            Self::Missing => "operation.missing_signature",
            Self::Invalid => "operation.invalid_signature",
            Self::MissingBlsProof { .. } => "validate.operation.missing_bls_proof",
            Self::IncorrectBlsProof { .. } => "validate.operation.incorrect_bls_proof",
            Self::UnusedBlsProof { .. } => "validate.operation.unused_bls_proof",
        }
    }
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("the operation is not signed"),
            Self::Invalid => f.write_str("the operation's signature does not verify"),
            Self::MissingBlsProof { index } => {
                write!(
                    f,
                    "content {index}: a tz4 key needs its proof of possession"
                )
            }
            Self::IncorrectBlsProof { index } => {
                write!(f, "content {index}: incorrect proof of possession")
            }
            Self::UnusedBlsProof { index } => {
                write!(
                    f,
                    "content {index}: proof of possession for a key that is not tz4"
                )
            }
        }
    }
}

impl std::error::Error for SignatureError {}

impl SignedOperation<'_> {
    /// The bytes a signer of `scheme` signed: the watermark, then the unsigned bytes (their
    /// BLS-mode form for a tz4 attester). `chain_id` is only read for a lone preattestation or
    /// attestation.
    pub fn signed_message(&self, scheme: SignatureScheme, chain_id: ChainId) -> Vec<u8> {
        let consensus_watermark = match self.operation.contents.as_slice() {
            [Contents::Consensus(ConsensusOperation::Preattestation(_))] => {
                Some(PREATTESTATION_WATERMARK)
            }
            [Contents::Consensus(
                ConsensusOperation::Attestation(_) | ConsensusOperation::AttestationWithDal(_),
            )] => Some(ATTESTATION_WATERMARK),
            _ => None,
        };
        let bls_mode;
        let unsigned = if consensus_watermark.is_some() && scheme == SignatureScheme::Bls {
            bls_mode = self.operation.encode_bls_mode_unsigned();
            bls_mode.as_slice()
        } else {
            self.unsigned_bytes()
        };
        let mut message = Vec::with_capacity(1 + ChainId::SIZE_BYTES + unsigned.len());
        match consensus_watermark {
            Some(byte) => {
                message.push(byte);
                message.extend_from_slice(chain_id.as_bytes());
            }
            None => message.push(GENERIC_OPERATION_WATERMARK),
        }
        message.extend_from_slice(unsigned);
        message
    }

    /// Checks the signature under `key` (the signer's key, which the caller reads from the state
    /// or from the operation's reveal).
    pub fn check_signature(
        &self,
        key: &PublicKey,
        chain_id: ChainId,
    ) -> Result<(), SignatureError> {
        let signature = self
            .operation
            .signature
            .as_ref()
            .ok_or(SignatureError::Missing)?;
        if key.check(signature, &self.signed_message(key.scheme(), chain_id)) {
            Ok(())
        } else {
            Err(SignatureError::Invalid)
        }
    }

    /// Checks the proofs of possession of the keys this operation reveals or sets: a tz4 key
    /// needs one that verifies, other keys none.
    pub fn check_proofs_of_possession(&self) -> Result<(), SignatureError> {
        for (index, content) in self.operation.contents.iter().enumerate() {
            let Contents::Manager(manager) = content else {
                continue;
            };
            let (key, proof) = match &manager.operation {
                ManagerKind::Reveal(reveal) => (&reveal.public_key, &reveal.proof),
                ManagerKind::UpdateConsensusKey(update)
                | ManagerKind::UpdateCompanionKey(update) => (&update.pk, &update.proof),
                _ => continue,
            };
            match (key.scheme() == SignatureScheme::Bls, proof) {
                (true, None) => return Err(SignatureError::MissingBlsProof { index }),
                (true, Some(proof)) => {
                    if !key.verify_proof_of_possession(&proof.0 .0) {
                        return Err(SignatureError::IncorrectBlsProof { index });
                    }
                }
                (false, Some(_)) => return Err(SignatureError::UnusedBlsProof { index }),
                (false, None) => {}
            }
        }
        Ok(())
    }
}

/// Checks the signatures of a set of operations, each under its signer's key, with the ed25519
/// ones verified as one batch. On failure, names the first operation that fails alone.
pub fn check_all(
    operations: &[(&SignedOperation<'_>, &PublicKey)],
    chain_id: ChainId,
) -> Result<(), (usize, SignatureError)> {
    let mut messages = Vec::with_capacity(operations.len());
    for (index, (operation, key)) in operations.iter().enumerate() {
        if operation.operation.signature.is_none() {
            return Err((index, SignatureError::Missing));
        }
        messages.push(operation.signed_message(key.scheme(), chain_id));
    }
    let items: Vec<(&PublicKey, &Signature, &[u8])> = operations
        .iter()
        .zip(&messages)
        .filter_map(|((operation, key), message)| {
            let signature = operation.operation.signature.as_ref()?;
            Some((*key, signature, message.as_slice()))
        })
        .collect();
    if kestrel_crypto::check_batch(&items) {
        return Ok(());
    }
    for (index, (key, signature, message)) in items.iter().enumerate() {
        if !key.check(signature, message) {
            return Err((index, SignatureError::Invalid));
        }
    }
    // The batch equation failed where every single check passes: only possible for signatures
    // the single check accepts and the batch does not, which the batch's documentation rules out;
    // refuse rather than accept.
    Err((0, SignatureError::Invalid))
}
