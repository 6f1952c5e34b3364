//! Whole operations (`operation_repr.ml`, `operation_encoding` and
//! `unsigned_operation_encoding`): the branch, the contents, and the signature.
//!
//! Binary, signed: `branch (32) ‖ content₁ ‖ … ‖ contentₙ ‖ [ff ‖ tag ‖ signature prefix] ‖
//! suffix (64)`. The contents list has no length: it ends 64 bytes before the end. A BLS (tag 3,
//! 96-byte) or ML-DSA-44 (tag 4) signature puts all but its last 64 bytes in a last
//! pseudo-content with tag `ff`; other signatures are the 64-byte suffix alone, and an all-zero
//! suffix without prefix means "no signature". Several contents are only allowed if all are
//! manager operations. Binary, unsigned: the branch and the contents. JSON: `{branch, contents,
//! signature?}`.
//!
//! The signer signs `0x03 ‖ unsigned bytes` ([`SignedOperation::signing_message`]); the
//! operation hash (`o…`) is the blake2b-256 of the signed bytes.

use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::{BlockHash, OperationHash, Signature, SignatureScheme};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::consensus::{AggregateContent, ConsensusContent, ConsensusOperation};
use crate::contents::Contents;
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, RemainingHex};
use crate::json::{self, ObjectWriter};
use crate::record::record;

/// The watermark byte prefixed to an operation's bytes before signing (`Signature.Generic_operation`).
pub const GENERIC_OPERATION_WATERMARK: u8 = 0x03;

/// The size of the signature suffix that ends every signed operation.
pub const SIGNATURE_SUFFIX_SIZE_BYTES: usize = 64;

/// The tag of the signature-prefix pseudo-content (`signature_prefix_tag`).
pub const SIGNATURE_PREFIX_TAG: u8 = 0xff;

/// The smallest tag of a signature prefix (`Signature.prefix_encoding`: 3 `Bls_prefix`, 4
/// `Mldsa44_prefix`); the 64-byte schemes have none.
const BLS_PREFIX_TAG: u8 = 3;

/// The BLS-mode tag of a preattestation (`Bls_mode.preattestation_case`).
const BLS_MODE_PREATTESTATION_TAG: u8 = 40;

/// The BLS-mode tag of an attestation (`Bls_mode.attestation_case`).
const BLS_MODE_ATTESTATION_TAG: u8 = 41;

/// An operation: branch, contents and signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation<'a> {
    /// The block the operation was forged on.
    pub branch: BlockHash,
    /// The contents: one operation, or a batch of manager operations.
    pub contents: Vec<Contents<'a>>,
    /// The signature, absent for unsigned operations.
    pub signature: Option<Signature>,
}

record! {
    /// An operation as the shell sees it (`Operation.encoding`): the branch, then the protocol
    /// data as bytes.
    pub struct RawOperation<'a> {
        /// The block the operation was forged on.
        branch: BlockHash => "branch",
        /// The protocol data: contents and signature, undecoded.
        data: RemainingHex<'a> => "data",
    }
}

/// A signed operation decoded from bytes it borrows: the operation, and where its unsigned part
/// ends (the signature prefix, or the suffix, starts there), so signatures are checked on the
/// bytes as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedOperation<'a> {
    /// The decoded operation.
    pub operation: Operation<'a>,
    /// The signed bytes.
    pub bytes: &'a [u8],
    /// The length of the unsigned part (branch and contents) of `bytes`.
    pub unsigned_size_bytes: usize,
}

impl<'a> SignedOperation<'a> {
    /// Decodes a signed operation.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(bytes);
        let branch = BlockHash::read(&mut reader)?;
        let saved = reader.enter_prefix(SIGNATURE_SUFFIX_SIZE_BYTES)?;
        let mut contents = Vec::new();
        let mut prefix: Option<(usize, &'a [u8])> = None;
        while reader.remaining_bytes() > 0 {
            let offset = reader.offset();
            let tag = reader.take_u8()?;
            if prefix.is_some() {
                return Err(DecodeError::invalid(
                    "operation",
                    "Signature prefix must appear last",
                    offset,
                ));
            }
            if tag == SIGNATURE_PREFIX_TAG {
                let prefix_offset = reader.offset();
                let scheme_tag = reader.take_u8()?;
                let size = match SignatureScheme::from_tag(scheme_tag) {
                    Some(scheme) if scheme_tag >= BLS_PREFIX_TAG => {
                        scheme.signature_size_bytes() - SIGNATURE_SUFFIX_SIZE_BYTES
                    }
                    _ => {
                        return Err(DecodeError::new(
                            DecodeErrorKind::UnknownTag {
                                what: "signature prefix",
                                tag: u16::from(scheme_tag),
                            },
                            prefix_offset,
                        ))
                    }
                };
                prefix = Some((offset, reader.take(size)?));
                continue;
            }
            contents.push(Contents::read_body(tag, offset, &mut reader)?);
        }
        reader.leave_prefix(saved);
        let suffix_offset = reader.offset();
        let suffix = reader.take_array_ref::<SIGNATURE_SUFFIX_SIZE_BYTES>()?;
        reader.finish()?;
        check_contents(&contents, branch_end())?;
        let (unsigned_size_bytes, signature) = match prefix {
            Some((offset, prefix_bytes)) => {
                let mut joined =
                    Vec::with_capacity(prefix_bytes.len() + SIGNATURE_SUFFIX_SIZE_BYTES);
                joined.extend_from_slice(prefix_bytes);
                joined.extend_from_slice(suffix);
                let signature = Signature::try_from_bytes(&joined).map_err(|error| {
                    DecodeError::invalid("signature", error.to_string(), offset)
                })?;
                (offset, Some(signature))
            }
            None if suffix.iter().all(|byte| *byte == 0) => (suffix_offset, None),
            None => (
                suffix_offset,
                Some(Signature::try_from_bytes(suffix).map_err(|error| {
                    DecodeError::invalid("signature", error.to_string(), suffix_offset)
                })?),
            ),
        };
        Ok(Self {
            operation: Operation {
                branch,
                contents,
                signature,
            },
            bytes,
            unsigned_size_bytes,
        })
    }

    /// The unsigned bytes: branch and contents.
    pub fn unsigned_bytes(&self) -> &'a [u8] {
        &self.bytes[..self.unsigned_size_bytes]
    }

    /// What the signer signs: the watermark `0x03` then the unsigned bytes.
    pub fn signing_message(&self) -> Vec<u8> {
        signing_message(self.unsigned_bytes())
    }

    /// The operation hash: blake2b-256 of the signed bytes.
    pub fn hash(&self) -> OperationHash {
        OperationHash::new(blake2b_256(self.bytes))
    }
}

/// The offset where the contents start (after the branch), for error positions.
const fn branch_end() -> usize {
    BlockHash::SIZE_BYTES
}

/// Octez's rules on the contents list (`of_list_internal`, `of_contents_and_signature_prefix`).
fn check_contents(contents: &[Contents<'_>], offset: usize) -> Result<(), DecodeError> {
    if contents.is_empty() {
        return Err(DecodeError::invalid(
            "operation",
            "Operation lists should not be empty.",
            offset,
        ));
    }
    if contents.len() > 1 && !contents.iter().all(Contents::is_manager) {
        return Err(DecodeError::invalid(
            "operation",
            "Operation list of length > 1 should only contain manager operations.",
            offset,
        ));
    }
    Ok(())
}

/// `0x03 ‖ unsigned`.
pub fn signing_message(unsigned: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(1 + unsigned.len());
    message.push(GENERIC_OPERATION_WATERMARK);
    message.extend_from_slice(unsigned);
    message
}

impl<'a> Operation<'a> {
    /// Decodes a signed operation (see [`SignedOperation::decode`] to keep its bytes).
    pub fn decode(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        SignedOperation::decode(bytes).map(|signed| signed.operation)
    }

    /// Decodes an unsigned operation (`unsigned_operation_encoding`: branch and contents).
    pub fn decode_unsigned(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(bytes);
        let branch = BlockHash::read(&mut reader)?;
        let mut contents = Vec::new();
        while reader.remaining_bytes() > 0 {
            contents.push(Contents::read(&mut reader)?);
        }
        check_contents(&contents, branch_end())?;
        Ok(Self {
            branch,
            contents,
            signature: None,
        })
    }

    /// Appends the unsigned bytes (branch and contents).
    pub fn encode_unsigned_into(&self, out: &mut Vec<u8>) {
        self.branch.write(out);
        for content in &self.contents {
            content.write(out);
        }
    }

    /// The unsigned bytes.
    pub fn encode_unsigned(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_unsigned_into(&mut out);
        out
    }

    /// The unsigned bytes in the BLS mode (`Bls_mode.encoding`), which tz4 attesters sign:
    /// preattestations (tag 40) and attestations (tag 41, with or without DAL content) leave out
    /// their slot and DAL attestation, so that all attesters of a block sign the same bytes.
    pub fn encode_bls_mode_unsigned(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.branch.write(&mut out);
        for content in &self.contents {
            let (tag, level, round, payload) = match content {
                Contents::Consensus(ConsensusOperation::Preattestation(c)) => (
                    BLS_MODE_PREATTESTATION_TAG,
                    c.level,
                    c.round,
                    c.block_payload_hash,
                ),
                Contents::Consensus(ConsensusOperation::Attestation(c)) => (
                    BLS_MODE_ATTESTATION_TAG,
                    c.level,
                    c.round,
                    c.block_payload_hash,
                ),
                Contents::Consensus(ConsensusOperation::AttestationWithDal(c)) => (
                    BLS_MODE_ATTESTATION_TAG,
                    c.level,
                    c.round,
                    c.block_payload_hash,
                ),
                other => {
                    other.write(&mut out);
                    continue;
                }
            };
            out.push(tag);
            AggregateContent {
                level,
                round,
                block_payload_hash: payload,
            }
            .write(&mut out);
        }
        out
    }

    /// Decodes BLS-mode unsigned bytes: tags 40 and 41 give a preattestation and an attestation
    /// at slot 0 (the slot is not signed), the slot-carrying tags 20, 21 and 23 are refused.
    pub fn decode_bls_mode_unsigned(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(bytes);
        let branch = BlockHash::read(&mut reader)?;
        let mut contents = Vec::new();
        while reader.remaining_bytes() > 0 {
            let offset = reader.offset();
            let tag = reader.take_u8()?;
            let content = match tag {
                BLS_MODE_PREATTESTATION_TAG | BLS_MODE_ATTESTATION_TAG => {
                    let aggregate = AggregateContent::read(&mut reader)?;
                    let content = ConsensusContent {
                        slot: 0,
                        level: aggregate.level,
                        round: aggregate.round,
                        block_payload_hash: aggregate.block_payload_hash,
                    };
                    Contents::Consensus(if tag == BLS_MODE_PREATTESTATION_TAG {
                        ConsensusOperation::Preattestation(content)
                    } else {
                        ConsensusOperation::Attestation(content)
                    })
                }
                20 | 21 | 23 => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnknownTag {
                            what: "BLS-mode operation contents",
                            tag: u16::from(tag),
                        },
                        offset,
                    ))
                }
                _ => Contents::read_body(tag, offset, &mut reader)?,
            };
            contents.push(content);
        }
        check_contents(&contents, branch_end())?;
        Ok(Self {
            branch,
            contents,
            signature: None,
        })
    }

    /// Appends the signed bytes: the unsigned bytes, the signature prefix if the signature has
    /// one, and the 64-byte suffix (zeros when unsigned).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        self.encode_unsigned_into(out);
        match &self.signature {
            None => out.extend_from_slice(&[0; SIGNATURE_SUFFIX_SIZE_BYTES]),
            Some(signature) => {
                let bytes = signature.as_bytes();
                let split = bytes.len() - SIGNATURE_SUFFIX_SIZE_BYTES;
                if split > 0 {
                    out.push(SIGNATURE_PREFIX_TAG);
                    out.push(signature.scheme().map_or(0, SignatureScheme::tag));
                }
                out.extend_from_slice(bytes);
            }
        }
    }

    /// The signed bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// The operation hash of the signed bytes.
    pub fn hash(&self) -> OperationHash {
        OperationHash::new(blake2b_256(&self.encode()))
    }

    /// What the signer signs: `0x03 ‖ unsigned bytes`.
    pub fn signing_message(&self) -> Vec<u8> {
        signing_message(&self.encode_unsigned())
    }

    /// Appends the RPC JSON form (see [`Operation::to_json`]).
    pub fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        self.branch.write_json(object.key("branch"))?;
        self.contents.write_json(object.key("contents"))?;
        if let Some(signature) = &self.signature {
            signature.write_json(object.key("signature"))?;
        }
        object.end();
        Ok(())
    }

    /// The RPC JSON form. Fails where Octez's fails: on a Micheline field whose bytes are not
    /// Micheline (the binary form keeps them lazy, the JSON form must decode them).
    pub fn to_json(&self) -> Result<String, JsonError> {
        let mut out = String::new();
        self.write_json(&mut out)?;
        Ok(out)
    }

    /// Reads the RPC JSON form (`signature` optional; other fields, such as `protocol` or
    /// `hash`, are ignored as Octez's RPCs ignore them).
    pub fn from_json(value: &Value) -> Result<Operation<'static>, JsonError> {
        let object = json::as_object(value, "")?;
        let field = |name: &str| {
            object
                .get(name)
                .ok_or_else(|| JsonError::new("", format!("missing field \"{name}\"")))
        };
        let branch = BlockHash::read_json(field("branch")?, "branch")?;
        let contents = Vec::<Contents<'static>>::read_json(field("contents")?, "contents")?;
        if contents.is_empty() {
            return Err(JsonError::new(
                "contents",
                "Operation lists should not be empty.",
            ));
        }
        if contents.len() > 1 && !contents.iter().all(Contents::is_manager) {
            return Err(JsonError::new(
                "contents",
                "Operation list of length > 1 should only contain manager operations.",
            ));
        }
        let signature = match object.get("signature") {
            Some(value) => Some(Signature::read_json(value, "signature")?),
            None => None,
        };
        Ok(Operation {
            branch,
            contents,
            signature,
        })
    }

    /// Reads the RPC JSON form from text.
    pub fn from_json_str(text: &str) -> Result<Operation<'static>, JsonError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|error| JsonError::new("", format!("not JSON: {error}")))?;
        Self::from_json(&value)
    }
}
