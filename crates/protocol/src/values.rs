//! The small values of protocol 025 that block metadata and RPCs carry beside operations —
//! levels, fitness, gas, seeds and nonces, periods, voting periods, ballot tallies and listings —
//! with Octez's encodings (`level_repr.ml`, `fitness_repr.ml`, `gas_limit_repr.ml`,
//! `seed_repr.ml`, `period_repr.ml`, `voting_period_repr.ml`, `vote_storage.ml`). Cycles and raw
//! levels are plain `int32`s (`i32`); timestamps are [`Timestamp`](crate::block_header::Timestamp).

use kestrel_crypto::PublicKeyHash;
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::{Field, FixedHex, Nullable, Z64};
use crate::json::{self, write_string};
use crate::record::record;

record! {
    /// A level and where it sits in its cycle (`Level_repr.encoding`).
    pub struct Level {
        /// The level since genesis.
        level: i32 => "level",
        /// The level since the protocol's first level.
        level_position: i32 => "level_position",
        /// The cycle.
        cycle: i32 => "cycle",
        /// The position in the cycle.
        cycle_position: i32 => "cycle_position",
        /// Whether a seed nonce commitment is expected at this level.
        expected_commitment: bool => "expected_commitment",
    }
}

/// Declares a newtype over a signed integer field whose values must not be negative (Octez's
/// `conv_with_guard` / `with_decoding_guard`), refused with Octez's message.
macro_rules! non_negative {
    ($(#[$doc:meta])* $name:ident($inner:ty), $what:literal, $message:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl<'a> Field<'a> for $name {
            fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
                let offset = reader.offset();
                match <$inner>::read(reader)? {
                    value if value >= 0 => Ok($name(value)),
                    _ => Err(DecodeError::invalid($what, $message, offset)),
                }
            }
            fn write(&self, out: &mut Vec<u8>) {
                self.0.write(out);
            }
            fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
                self.0.write_json(out)
            }
            fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
                match <$inner>::read_json(value, path)? {
                    value if value >= 0 => Ok($name(value)),
                    _ => Err(JsonError::new(path, $message)),
                }
            }
        }
    };
}

non_negative!(
    /// A round (`Round_repr.encoding`): an `int32` that must not be negative.
    Round(i32), "round", "Round_repr.encoding: negative round"
);

/// A block's fitness (`Fitness_repr.encoding`); a locked round must be below the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fitness {
    /// The level.
    pub level: i32,
    /// The round a quorum of preattestations locked, if any.
    pub locked_round: Option<Round>,
    /// The predecessor's round.
    pub predecessor_round: Round,
    /// The round.
    pub round: Round,
}

impl Fitness {
    /// Octez's guard: `Locked round must be smaller than round.`
    fn check(self) -> Result<Self, &'static str> {
        match self.locked_round {
            Some(locked) if self.round <= locked => Err("Locked round must be smaller than round."),
            _ => Ok(self),
        }
    }
}

impl<'a> Field<'a> for Fitness {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let fitness = Fitness {
            level: i32::read(reader)?,
            locked_round: Nullable::read(reader)?.0,
            predecessor_round: Round::read(reader)?,
            round: Round::read(reader)?,
        };
        fitness
            .check()
            .map_err(|reason| DecodeError::invalid("fitness", reason, offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.level.write(out);
        Nullable(self.locked_round).write(out);
        self.predecessor_round.write(out);
        self.round.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = json::ObjectWriter::new(out);
        self.level.write_json(object.key("level"))?;
        Nullable(self.locked_round).write_json(object.key("locked_round"))?;
        self.predecessor_round
            .write_json(object.key("predecessor_round"))?;
        self.round.write_json(object.key("round"))?;
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let member = |name: &str| {
            object
                .get(name)
                .ok_or_else(|| JsonError::new(path, format!("missing field \"{name}\"")))
        };
        let fitness = Fitness {
            level: i32::read_json(member("level")?, &json::child(path, "level"))?,
            locked_round: Nullable::read_json(
                member("locked_round")?,
                &json::child(path, "locked_round"),
            )?
            .0,
            predecessor_round: Round::read_json(
                member("predecessor_round")?,
                &json::child(path, "predecessor_round"),
            )?,
            round: Round::read_json(member("round")?, &json::child(path, "round"))?,
        };
        fitness
            .check()
            .map_err(|reason| JsonError::new(path, reason))
    }
}

/// The gas left in an operation (`Gas_limit_repr.encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gas {
    /// Limited, with the milligas remaining (tag 0).
    Limited(Z64),
    /// Not accounted (tag 1, `"unaccounted"`).
    Unaccounted,
}

impl<'a> Field<'a> for Gas {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => Z64::read(reader).map(Gas::Limited),
            1 => Ok(Gas::Unaccounted),
            tag => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "gas",
                    tag: u16::from(tag),
                },
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Gas::Limited(remaining) => {
                out.push(0);
                remaining.write(out);
            }
            Gas::Unaccounted => out.push(1),
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        match self {
            Gas::Limited(remaining) => remaining.write_json(out),
            Gas::Unaccounted => {
                write_string(out, "unaccounted");
                Ok(())
            }
        }
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        if value.as_str() == Some("unaccounted") {
            return Ok(Gas::Unaccounted);
        }
        Z64::read_json(value, path).map(Gas::Limited)
    }
}

/// A gas cost in milligas (`Gas_limit_repr.cost_encoding`, a `z`).
pub type GasCost = Z64;
/// A seed nonce (`Seed_repr.nonce_encoding`, 32 bytes).
pub type Nonce = FixedHex<32>;
/// A random seed (`Seed_repr.seed_encoding`, 32 bytes).
pub type Seed = FixedHex<32>;

non_negative!(
    /// A duration in seconds (`Period_repr.encoding`: an `int64` that must not be negative).
    Period(i64), "period", "Positive int64 required"
);

/// The kind of a voting period (`Voting_period_repr.kind_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VotingPeriodKind {
    /// Proposals are submitted (0).
    Proposal,
    /// The first vote (1).
    Exploration,
    /// Waiting (2).
    Cooldown,
    /// The second vote (3).
    Promotion,
    /// Waiting for the activation (4).
    Adoption,
}

const VOTING_PERIOD_KINDS: [(VotingPeriodKind, &str); 5] = [
    (VotingPeriodKind::Proposal, "proposal"),
    (VotingPeriodKind::Exploration, "exploration"),
    (VotingPeriodKind::Cooldown, "cooldown"),
    (VotingPeriodKind::Promotion, "promotion"),
    (VotingPeriodKind::Adoption, "adoption"),
];

impl<'a> Field<'a> for VotingPeriodKind {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        VOTING_PERIOD_KINDS
            .get(usize::from(tag))
            .map(|(kind, _)| *kind)
            .ok_or_else(|| {
                DecodeError::new(
                    DecodeErrorKind::UnknownTag {
                        what: "voting period kind",
                        tag: u16::from(tag),
                    },
                    offset,
                )
            })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, VOTING_PERIOD_KINDS[*self as usize].1);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let name = json::as_str(value, path)?;
        VOTING_PERIOD_KINDS
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(kind, _)| *kind)
            .ok_or_else(|| JsonError::new(path, format!("unknown voting period kind {name}")))
    }
}

record! {
    /// A voting period (`Voting_period_repr.encoding`).
    pub struct VotingPeriod {
        /// Its index, from 0.
        index: i32 => "index",
        /// Its kind.
        kind: VotingPeriodKind => "kind",
        /// The level position it starts at.
        start_position: i32 => "start_position",
    }
}

record! {
    /// The ballots cast so far, by voting power (`Vote_storage.ballots_encoding`).
    pub struct BallotTally {
        /// For.
        yay: i64 => "yay",
        /// Against.
        nay: i64 => "nay",
        /// Abstentions.
        pass: i64 => "pass",
    }
}

record! {
    /// One delegate's voting power (an element of `Vote_storage.listings_encoding`).
    pub struct Listing {
        /// The delegate.
        pkh: PublicKeyHash => "pkh",
        /// Its voting power.
        voting_power: i64 => "voting_power",
    }
}
