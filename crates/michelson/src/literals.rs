//! The domain values behind Michelson's string and bytes literals: key hashes, public keys,
//! signatures, addresses, chain ids and timestamps, each in its readable (base58check / RFC 3339)
//! and optimized (binary / integer) form (`specs/michelson.rst`, "Domain specific data types").
//!
//! Base58check prefixes are Octez's (`base58.ml`).

use crate::int::Int;
use kestrel_crypto::base58::{decode_check, encode_check, Prefix};

const fn prefix(bytes: &'static [u8], payload_size: usize) -> Prefix {
    Prefix {
        bytes,
        payload_size,
    }
}

/// `tz1`, `tz2`, `tz3`, `tz4` public-key hashes, indexed by key kind.
const KEY_HASH_PREFIXES: [Prefix; 4] = [
    prefix(&[6, 161, 159], 20),
    prefix(&[6, 161, 161], 20),
    prefix(&[6, 161, 164], 20),
    prefix(&[6, 161, 166], 20),
];
const KT1: Prefix = prefix(&[2, 90, 121], 20);
const SR1: Prefix = prefix(&[6, 124, 117], 20);
/// `edpk`, `sppk`, `p2pk`, `BLpk` public keys, indexed by key kind.
const KEY_PREFIXES: [Prefix; 4] = [
    prefix(&[13, 15, 37, 217], 32),
    prefix(&[3, 254, 226, 86], 33),
    prefix(&[3, 178, 139, 127], 33),
    prefix(&[6, 149, 135, 204], 48),
];
/// `edsig`, `spsig1`, `p2sig`, `BLsig` signatures, indexed by key kind.
const SIGNATURE_PREFIXES: [Prefix; 4] = [
    prefix(&[9, 245, 205, 134, 18], 64),
    prefix(&[13, 115, 101, 19, 63], 64),
    prefix(&[54, 240, 44, 52], 64),
    prefix(&[40, 171, 64, 207], 96),
];
const GENERIC_SIGNATURE: Prefix = prefix(&[4, 130, 43], 64);
const CHAIN_ID: Prefix = prefix(&[87, 82, 0], 4);

/// A public-key hash: the key kind (0 ed25519, 1 secp256k1, 2 p256, 3 bls) and 20 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyHash {
    /// The key kind, which is also the binary tag.
    pub kind: u8,
    /// The BLAKE2b-160 hash of the key.
    pub hash: [u8; 20],
}

impl KeyHash {
    /// Parses `tz1...`/`tz2...`/`tz3...`/`tz4...`.
    pub fn from_base58(text: &str) -> Option<KeyHash> {
        for (kind, prefix) in KEY_HASH_PREFIXES.iter().enumerate() {
            if let Ok(payload) = decode_check(*prefix, text) {
                return Some(KeyHash {
                    kind: kind as u8,
                    hash: payload.try_into().ok()?,
                });
            }
        }
        None
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        encode_check(KEY_HASH_PREFIXES[usize::from(self.kind)], &self.hash)
    }

    /// The binary form: tag byte then hash (21 bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.kind];
        out.extend_from_slice(&self.hash);
        out
    }

    /// Reads the 21-byte binary form.
    pub fn from_bytes(bytes: &[u8]) -> Option<KeyHash> {
        let (&kind, hash) = bytes.split_first()?;
        if kind > 3 {
            return None;
        }
        Some(KeyHash {
            kind,
            hash: hash.try_into().ok()?,
        })
    }
}

/// A public key: its kind (as for [`KeyHash`]) and its bytes in Octez's binary form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The key kind and binary tag.
    pub kind: u8,
    /// The key bytes (32, 33, 33 or 48).
    pub bytes: Vec<u8>,
}

impl Key {
    /// Parses `edpk...`/`sppk...`/`p2pk...`/`BLpk...`.
    pub fn from_base58(text: &str) -> Option<Key> {
        for (kind, prefix) in KEY_PREFIXES.iter().enumerate() {
            if let Ok(payload) = decode_check(*prefix, text) {
                return Some(Key {
                    kind: kind as u8,
                    bytes: payload,
                });
            }
        }
        None
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        encode_check(KEY_PREFIXES[usize::from(self.kind)], &self.bytes)
    }

    /// The binary form: tag byte then key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.kind];
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Reads the binary form (exactly one key).
    pub fn from_bytes(bytes: &[u8]) -> Option<Key> {
        let (&kind, rest) = bytes.split_first()?;
        let prefix = KEY_PREFIXES.get(usize::from(kind))?;
        if rest.len() != prefix.payload_size {
            return None;
        }
        Some(Key {
            kind,
            bytes: rest.to_vec(),
        })
    }

    /// The key's hash.
    pub fn hash(&self) -> KeyHash {
        KeyHash {
            kind: self.kind,
            hash: kestrel_crypto::hash::blake2b_160(&self.bytes),
        }
    }
}

/// A signature: its bytes (64, or 96 for BLS) and the kind it was written with, if known.
/// Equality and order look at the bytes only (the readable prefix is presentation).
#[derive(Debug, Clone)]
pub struct Signature {
    /// The signature bytes.
    pub bytes: Vec<u8>,
    /// The curve named by its readable prefix (`None` for the generic `sig` form).
    pub kind: Option<u8>,
}

impl PartialEq for Signature {
    fn eq(&self, other: &Signature) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Signature {}

impl PartialOrd for Signature {
    fn partial_cmp(&self, other: &Signature) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Signature {
    fn cmp(&self, other: &Signature) -> std::cmp::Ordering {
        self.bytes.cmp(&other.bytes)
    }
}

/// Whether the crypto crate accepts `bytes` as a signature of `kind`.
fn signature_valid(kind: Option<u8>, bytes: &[u8]) -> bool {
    use kestrel_crypto::keys::{Signature as CryptoSignature, SignatureScheme};
    let scheme = kind.and_then(SignatureScheme::from_tag);
    CryptoSignature::try_new(scheme, bytes).is_ok()
}

impl Signature {
    /// Parses `edsig`/`spsig1`/`p2sig`/`BLsig`/`sig` forms.
    pub fn from_base58(text: &str) -> Option<Signature> {
        for (kind, prefix) in SIGNATURE_PREFIXES.iter().enumerate() {
            if let Ok(payload) = decode_check(*prefix, text) {
                if !signature_valid(Some(kind as u8), &payload) {
                    return None;
                }
                return Some(Signature {
                    bytes: payload,
                    kind: Some(kind as u8),
                });
            }
        }
        decode_check(GENERIC_SIGNATURE, text)
            .ok()
            .map(|bytes| Signature { bytes, kind: None })
    }

    /// Reads the binary form (64 or 96 bytes).
    pub fn from_bytes(bytes: &[u8]) -> Option<Signature> {
        match bytes.len() {
            64 => Some(Signature {
                bytes: bytes.to_vec(),
                kind: None,
            }),
            96 if signature_valid(Some(3), bytes) => Some(Signature {
                bytes: bytes.to_vec(),
                kind: Some(3),
            }),
            _ => None,
        }
    }

    /// The readable form (Octez prints 64-byte signatures in the generic `sig` form unless the
    /// curve is known).
    pub fn to_base58(&self) -> String {
        match self.kind {
            Some(kind) => encode_check(SIGNATURE_PREFIXES[usize::from(kind)], &self.bytes),
            None => encode_check(GENERIC_SIGNATURE, &self.bytes),
        }
    }
}

/// What an address designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Destination {
    /// An implicit account (`tz1`...).
    Implicit(KeyHash),
    /// An originated contract (`KT1`...).
    Originated([u8; 20]),
    /// A smart rollup (`sr1`...).
    SmartRollup([u8; 20]),
}

/// An address with an optional entrypoint (`""` for the default entrypoint).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address {
    /// The account or contract.
    pub destination: Destination,
    /// The entrypoint, empty for `default`.
    pub entrypoint: String,
}

/// Octez's limit on entrypoint names (`Entrypoint_repr`): 31 bytes.
pub const MAX_ENTRYPOINT_LENGTH: usize = 31;

impl Destination {
    /// Parses `tz1...`, `KT1...` or `sr1...`.
    pub fn from_base58(text: &str) -> Option<Destination> {
        if let Some(key_hash) = KeyHash::from_base58(text) {
            return Some(Destination::Implicit(key_hash));
        }
        if let Ok(payload) = decode_check(KT1, text) {
            return Some(Destination::Originated(payload.try_into().ok()?));
        }
        if let Ok(payload) = decode_check(SR1, text) {
            return Some(Destination::SmartRollup(payload.try_into().ok()?));
        }
        None
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        match self {
            Destination::Implicit(key_hash) => key_hash.to_base58(),
            Destination::Originated(hash) => encode_check(KT1, hash),
            Destination::SmartRollup(hash) => encode_check(SR1, hash),
        }
    }

    /// The 22-byte binary form.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Destination::Implicit(key_hash) => {
                let mut out = vec![0];
                out.extend(key_hash.to_bytes());
                out
            }
            Destination::Originated(hash) => {
                let mut out = vec![1];
                out.extend_from_slice(hash);
                out.push(0);
                out
            }
            Destination::SmartRollup(hash) => {
                let mut out = vec![3];
                out.extend_from_slice(hash);
                out.push(0);
                out
            }
        }
    }

    /// Reads the 22-byte binary form.
    pub fn from_bytes(bytes: &[u8]) -> Option<Destination> {
        if bytes.len() != 22 {
            return None;
        }
        match bytes[0] {
            0 => KeyHash::from_bytes(&bytes[1..]).map(Destination::Implicit),
            1 if bytes[21] == 0 => Some(Destination::Originated(bytes[1..21].try_into().ok()?)),
            3 if bytes[21] == 0 => Some(Destination::SmartRollup(bytes[1..21].try_into().ok()?)),
            _ => None,
        }
    }

    /// Whether this is an implicit account.
    pub fn is_implicit(&self) -> bool {
        matches!(self, Destination::Implicit(_))
    }
}

/// Whether `name` is a valid entrypoint name (Octez `Entrypoint_repr`): at most 31 bytes of
/// `[a-zA-Z0-9_.%@]`.
pub fn valid_entrypoint(name: &str) -> bool {
    name.len() <= MAX_ENTRYPOINT_LENGTH
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%' | b'@'))
}

impl Address {
    /// An address without entrypoint.
    pub fn new(destination: Destination) -> Address {
        Address {
            destination,
            entrypoint: String::new(),
        }
    }

    /// Parses `tz1...%entrypoint` forms; `default` is normalized to empty.
    pub fn from_string(text: &str) -> Option<Address> {
        let (base, entrypoint) = match text.find('%') {
            Some(index) => (&text[..index], &text[index + 1..]),
            None => (text, ""),
        };
        if text.contains('%') && (entrypoint.is_empty() || entrypoint == "default") {
            return None;
        }
        if !valid_entrypoint(entrypoint) {
            return None;
        }
        Some(Address {
            destination: Destination::from_base58(base)?,
            entrypoint: entrypoint.to_string(),
        })
    }

    /// The readable form, with `%entrypoint` when not default.
    pub fn to_readable(&self) -> String {
        let mut out = self.destination.to_base58();
        if !self.entrypoint.is_empty() {
            out.push('%');
            out.push_str(&self.entrypoint);
        }
        out
    }

    /// The binary form: 22 bytes then the entrypoint's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.destination.to_bytes();
        out.extend_from_slice(self.entrypoint.as_bytes());
        out
    }

    /// Reads the binary form.
    pub fn from_bytes(bytes: &[u8]) -> Option<Address> {
        if bytes.len() < 22 {
            return None;
        }
        let destination = Destination::from_bytes(&bytes[..22])?;
        // Octez reads binary entrypoints laxly: any bytes up to the length limit.
        let entrypoint = String::from_utf8_lossy(&bytes[22..]).into_owned();
        if entrypoint == "default" || bytes.len() - 22 > MAX_ENTRYPOINT_LENGTH {
            return None;
        }
        Some(Address {
            destination,
            entrypoint,
        })
    }
}

/// Parses a chain id `Net...`.
pub fn chain_id_from_base58(text: &str) -> Option<[u8; 4]> {
    decode_check(CHAIN_ID, text).ok()?.try_into().ok()
}

/// Prints a chain id.
pub fn chain_id_to_base58(bytes: &[u8; 4]) -> String {
    encode_check(CHAIN_ID, bytes)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146097 + day_of_era - 719468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let day_of_era = z - era * 146097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Parses an RFC 3339 timestamp (`2019-09-26T10:59:51Z`, `...+01:00`, fractional seconds
/// dropped) to seconds since the epoch.
pub fn timestamp_from_rfc3339(text: &str) -> Option<Int> {
    let bytes = text.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if bytes.len() < 19
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let year = number(0..4)?;
    let month = number(5..7)?;
    let day = number(8..10)?;
    let hour = number(11..13)?;
    let minute = number(14..16)?;
    let second = number(17..19)?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // Byte 19 may fall inside a multi-byte character of hostile input: `get` never panics.
    let mut rest = text.get(19..)?;
    if let Some(stripped) = rest.strip_prefix('.') {
        let digits = stripped.bytes().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = stripped.get(digits..)?;
    }
    let offset_seconds = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let hours: i64 = rest.get(1..3)?.parse().ok()?;
            let minutes: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(Int::from(
        days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds,
    ))
}

/// Prints a timestamp as RFC 3339 when its year is within 0000..=9999, else as `None`
/// (callers then print the integer).
pub fn timestamp_to_rfc3339(seconds: &Int) -> Option<String> {
    let seconds = seconds.to_i64()?;
    // Octez prints years 0000 to 9999 as RFC 3339.
    const MIN: i64 = -62_167_219_200;
    const MAX: i64 = 253_402_300_799;
    if !(MIN..=MAX).contains(&seconds) {
        return None;
    }
    let days = seconds.div_euclid(86400);
    let time = seconds.rem_euclid(86400);
    let (year, month, day) = civil_from_days(days);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3600,
        (time / 60) % 60,
        time % 60
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_timestamp(text: &str, expected: Option<i64>) {
        assert_eq!(
            timestamp_from_rfc3339(text).and_then(|t| t.to_i64()),
            expected,
            "{text}"
        );
    }

    #[test]
    fn timestamps_parse_and_refuse() {
        check_timestamp("1970-01-01T00:00:00Z", Some(0));
        check_timestamp("2019-09-26T10:59:51Z", Some(1_569_495_591));
        check_timestamp("2019-09-26T12:59:51+02:00", Some(1_569_495_591));
        check_timestamp("2019-09-26T10:59:51.123Z", Some(1_569_495_591));
        check_timestamp("2019-09-26T10:59:5é", None);
        check_timestamp("2019-09-26T10:59:51é", None);
        check_timestamp("2019-13-26T10:59:51Z", None);
        check_timestamp("", None);
    }

    #[test]
    fn timestamps_print_in_range_only() {
        assert_eq!(
            timestamp_to_rfc3339(&Int::from(0)).as_deref(),
            Some("1970-01-01T00:00:00Z")
        );
        assert_eq!(timestamp_to_rfc3339(&Int::from(-62_167_219_201)), None);
    }

    #[test]
    fn addresses_round_trip() {
        for text in [
            "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx",
            "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi%do",
        ] {
            let address = Address::from_string(text).expect("valid address");
            assert_eq!(address.to_readable(), text);
            assert_eq!(Address::from_bytes(&address.to_bytes()), Some(address));
        }
        assert_eq!(
            Address::from_string("KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi%default"),
            None
        );
    }
}
