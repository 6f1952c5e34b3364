//! Block headers as operations carry them (double baking evidence) and as Octez's
//! `block_header*` encodings write them (`Block_header_repr`): the shell header (level, proto,
//! predecessor, timestamp, validation pass, operations hash, fitness, context), the protocol
//! data's contents (payload hash and round, proof-of-work nonce, seed nonce hash, the liquidity
//! baking vote), and the signature.
//!
//! Timestamps are `int64` seconds in binary and RFC 3339 (`2020-04-20T16:20:00Z`) in JSON, as
//! Octez's `Time.Protocol.encoding` writes them (a decimal string outside years 0-9999).

use kestrel_crypto::{BlockHash, ContextHash, Signature};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::crypto_fields::{BlockPayloadHash, NonceHash, OperationListListHash};
use crate::error::{DecodeError, JsonError};
use crate::field::{Field, FixedHex, HexBytes, RemainingHex};
use crate::json;
use crate::record::record;

/// The size of a block's proof-of-work nonce (`Constants_repr.proof_of_work_nonce_size`).
pub const PROOF_OF_WORK_NONCE_SIZE_BYTES: usize = 8;

/// A protocol timestamp: seconds since the Unix epoch (`Time.Protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

const SECONDS_PER_DAY: i64 = 86_400;

/// The civil date of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The day count since 1970-01-01 of a civil date (`days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

impl Timestamp {
    /// The RFC 3339 form, when the year has four digits.
    pub fn to_rfc3339(self) -> Option<String> {
        let days = self.0.div_euclid(SECONDS_PER_DAY);
        let seconds = self.0.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        if !(0..=9999).contains(&year) {
            return None;
        }
        Some(format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
            seconds / 3600,
            seconds % 3600 / 60,
            seconds % 60
        ))
    }

    /// Reads `YYYY-MM-DDTHH:MM:SSZ` (or with a `+00:00` offset).
    pub fn from_rfc3339(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let body = text
            .strip_suffix('Z')
            .or_else(|| text.strip_suffix("+00:00"))?;
        if body.len() != 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
            return None;
        }
        if bytes[13] != b':' || bytes[16] != b':' {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<u32> {
            let digits = &body[range];
            digits
                .bytes()
                .all(|byte| byte.is_ascii_digit())
                .then(|| digits.parse().ok())
                .flatten()
        };
        let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
        let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
        if !(1..=12).contains(&month) || day == 0 || hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let days = days_from_civil(i64::from(year), month, day);
        if civil_from_days(days) != (i64::from(year), month, day) {
            return None;
        }
        Some(Timestamp(
            days * SECONDS_PER_DAY + i64::from(hour * 3600 + minute * 60 + second),
        ))
    }
}

impl<'a> Field<'a> for Timestamp {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Timestamp(i64::from_be_bytes(reader.take_array::<8>()?)))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_be_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        match self.to_rfc3339() {
            Some(text) => json::write_string(out, &text),
            None => json::write_string(out, &self.0.to_string()),
        }
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        if let Some(seconds) = value.as_i64() {
            return Ok(Timestamp(seconds));
        }
        let text = json::as_str(value, path)?;
        Timestamp::from_rfc3339(text)
            .or_else(|| text.parse().ok().map(Timestamp))
            .ok_or_else(|| JsonError::new(path, format!("not a timestamp: {text}")))
    }
}

/// A baker's per-block vote (`Per_block_votes_repr`: one byte in binary, a name in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerBlockVote {
    /// On (0).
    On,
    /// Off (1).
    Off,
    /// Pass (2).
    Pass,
}

impl PerBlockVote {
    const ALL: [PerBlockVote; 3] = [PerBlockVote::On, PerBlockVote::Off, PerBlockVote::Pass];
    const NAMES: [&'static str; 3] = ["on", "off", "pass"];
}

impl<'a> Field<'a> for PerBlockVote {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let byte = reader.take_u8()?;
        Self::ALL.get(usize::from(byte)).copied().ok_or_else(|| {
            DecodeError::new(
                crate::DecodeErrorKind::UnknownTag {
                    what: "per-block vote",
                    tag: u16::from(byte),
                },
                offset,
            )
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        json::write_string(out, Self::NAMES[*self as usize]);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let name = json::as_str(value, path)?;
        Self::NAMES
            .iter()
            .position(|known| *known == name)
            .map(|index| Self::ALL[index])
            .ok_or_else(|| JsonError::new(path, format!("unknown vote {name}")))
    }
}

record! {
    /// The shell header (`Block_header.shell_header_encoding`).
    pub struct ShellHeader<'a> {
        /// The block's level.
        level: i32 => "level",
        /// The number of protocol changes so far.
        proto: u8 => "proto",
        /// The previous block.
        predecessor: BlockHash => "predecessor",
        /// The block's time.
        timestamp: Timestamp => "timestamp",
        /// The number of validation passes.
        validation_pass: u8 => "validation_pass",
        /// The hash of the operation lists.
        operations_hash: OperationListListHash => "operations_hash",
        /// The fitness, a list of byte strings.
        fitness: Vec<HexBytes<'a>> => "fitness",
        /// The resulting context.
        context: ContextHash => "context",
    }
}

record! {
    /// The protocol data of a block header before its signature (`contents_encoding`).
    pub struct BlockHeaderContents {
        /// The payload's hash.
        payload_hash: BlockPayloadHash => "payload_hash",
        /// The round the payload was proposed at.
        payload_round: i32 => "payload_round",
        /// The proof-of-work nonce.
        proof_of_work_nonce: FixedHex<PROOF_OF_WORK_NONCE_SIZE_BYTES> => "proof_of_work_nonce",
        /// The hash of the baker's seed nonce, at commitment levels.
        seed_nonce_hash: Option<NonceHash> => "seed_nonce_hash",
        /// The baker's liquidity baking vote.
        liquidity_baking_toggle_vote: PerBlockVote => "liquidity_baking_toggle_vote",
    }
}

record! {
    /// A signed block header (`Block_header_repr.encoding`).
    pub struct BlockHeader<'a> {
        /// The shell header.
        shell: ShellHeader<'a> => _,
        /// The protocol data.
        contents: BlockHeaderContents => _,
        /// The baker's signature (the rest of the header's bytes).
        signature: Signature => "signature",
    }
}

record! {
    /// A block header without its signature (`Block_header_repr.unsigned_encoding`).
    pub struct UnsignedBlockHeader<'a> {
        /// The shell header.
        shell: ShellHeader<'a> => _,
        /// The protocol data.
        contents: BlockHeaderContents => _,
    }
}

record! {
    /// A block header whose protocol data is left as bytes (`Block_header.encoding`, the shell's
    /// view).
    pub struct RawBlockHeader<'a> {
        /// The shell header.
        shell: ShellHeader<'a> => _,
        /// The protocol data (the rest of the bytes).
        protocol_data: RemainingHex<'a> => "protocol_data",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_edges() {
        for (seconds, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (1_587_399_600, "2020-04-20T16:20:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(Timestamp(seconds).to_rfc3339().as_deref(), Some(text));
            assert_eq!(Timestamp::from_rfc3339(text), Some(Timestamp(seconds)));
        }
        assert_eq!(Timestamp(253_402_300_800).to_rfc3339(), None);
        assert_eq!(Timestamp::from_rfc3339("2021-02-29T00:00:00Z"), None);
        assert_eq!(Timestamp::from_rfc3339("2021-02-28T24:00:00Z"), None);
    }
}
