//! Voting operations (`operation_repr.ml`, `vote_repr.ml`): protocol proposals and ballots.

use kestrel_crypto::{ProtocolHash, PublicKeyHash};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::Field;
use crate::json;
use crate::record::record;

/// The most proposals one operation carries (`Constants_repr.max_proposals_per_delegate`).
pub const MAX_PROPOSALS_PER_DELEGATE: usize = 20;

/// A ballot (`Vote_repr.ballot_encoding`: an `int8` in binary, a name in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ballot {
    /// For (0).
    Yay,
    /// Against (1).
    Nay,
    /// Abstention (2).
    Pass,
}

impl Ballot {
    const ALL: [Ballot; 3] = [Ballot::Yay, Ballot::Nay, Ballot::Pass];
    const NAMES: [&'static str; 3] = ["yay", "nay", "pass"];

    /// The ballot's JSON name.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl<'a> Field<'a> for Ballot {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let byte = reader.take_u8()?;
        Self::ALL
            .get(usize::from(byte))
            .copied()
            .ok_or_else(|| DecodeError::invalid("ballot", format!("ballot_of_int8 {byte}"), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        json::write_string(out, self.name());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let name = json::as_str(value, path)?;
        Self::NAMES
            .iter()
            .position(|known| *known == name)
            .map(|index| Self::ALL[index])
            .ok_or_else(|| JsonError::new(path, format!("unknown ballot {name}")))
    }
}

/// At most [`MAX_PROPOSALS_PER_DELEGATE`] protocol hashes behind a 4-byte size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalList(pub Vec<ProtocolHash>);

impl<'a> Field<'a> for ProposalList {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let proposals = Vec::<ProtocolHash>::read(reader)?;
        if proposals.len() > MAX_PROPOSALS_PER_DELEGATE {
            return Err(DecodeError::new(DecodeErrorKind::ListTooLong, offset));
        }
        Ok(ProposalList(proposals))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.0.write_json(out)?;
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let proposals = Vec::<ProtocolHash>::read_json(value, path)?;
        if proposals.len() > MAX_PROPOSALS_PER_DELEGATE {
            return Err(JsonError::new(path, "too many proposals"));
        }
        Ok(ProposalList(proposals))
    }
}

record! {
    /// Proposes protocols during a proposal period (tag 5).
    pub struct Proposals {
        /// The delegate.
        source: PublicKeyHash => "source",
        /// The voting period's index.
        period: i32 => "period",
        /// The proposed protocols.
        proposals: ProposalList => "proposals",
    }
}

record! {
    /// Votes on the proposal of an exploration or promotion period (tag 6).
    pub struct BallotOperation {
        /// The delegate.
        source: PublicKeyHash => "source",
        /// The voting period's index.
        period: i32 => "period",
        /// The protocol voted on.
        proposal: ProtocolHash => "proposal",
        /// The vote.
        ballot: Ballot => "ballot",
    }
}
