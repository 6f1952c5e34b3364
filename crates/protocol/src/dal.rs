//! The data-availability layer's operations (`dal_operations_repr.ml`, `dal_slot_repr.ml`, the
//! cryptobox's encodings): publishing a slot commitment, and the evidence that an attester
//! attested a slot holding a trap shard.
//!
//! Points (commitments, proofs) and scalars are kept as bytes: the binary decode does not check
//! that they are on their curve or below the field order, which Octez's decode does (its
//! `of_bytes_exn`); such operations fail later in Octez's validation, here at the first use.

use crate::consensus::InlinedConsensusOperation;
use crate::crypto_fields::DalCommitment;
use crate::field::{FixedHex, Int31, Pair, SizePrefixed};
use crate::record::record;

/// The size of a BLS12-381 scalar (`Scalar.encoding`).
pub const SCALAR_SIZE_BYTES: usize = 32;

/// The size of a compressed G2 point, the commitment's degree proof (`Degree_check.Proof`).
pub const COMMITMENT_PROOF_SIZE_BYTES: usize = 96;

record! {
    /// A DAL slot header published by `dal_publish_commitment`.
    pub struct DalSlotHeader {
        /// The slot's index.
        slot_index: u8 => "slot_index",
        /// The slot's commitment.
        commitment: DalCommitment => "commitment",
        /// The proof that the committed polynomial's degree is bounded.
        commitment_proof: FixedHex<COMMITMENT_PROOF_SIZE_BYTES> => "commitment_proof",
    }
}

record! {
    /// Publishes a DAL slot commitment (tag 230).
    pub struct DalPublishCommitment {
        /// The slot header.
        slot_header: DalSlotHeader => "slot_header",
    }
}

/// A shard (`shard_encoding`: its index and its share, a list of scalars; a JSON pair).
pub type Shard = Pair<Int31, Vec<FixedHex<SCALAR_SIZE_BYTES>>>;

record! {
    /// A shard and its proof (`Shard_with_proof.encoding`).
    pub struct ShardWithProof {
        /// The shard.
        shard: Shard => "shard",
        /// Its proof (a G1 point, base58 like commitments).
        proof: DalCommitment => "proof",
    }
}

record! {
    /// Evidence that a delegate attested a DAL slot whose shard it was given is a trap (tag 24).
    pub struct DalEntrapmentEvidence {
        /// The attestation (or aggregate) that attested the slot.
        attestation: SizePrefixed<InlinedConsensusOperation> => "attestation",
        /// The delegate's consensus slot.
        consensus_slot: u16 => "consensus_slot",
        /// The DAL slot's index.
        slot_index: u8 => "slot_index",
        /// The attestation lag's index, if not the default.
        lag_index: Option<u8> => "lag_index",
        /// The trap shard and its proof.
        shard_with_proof: ShardWithProof => "shard_with_proof",
    }
}
