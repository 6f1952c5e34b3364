//! The domain values behind Michelson's string and bytes literals: key hashes, public keys,
//! signatures, addresses, chain ids and timestamps, each in its readable (base58check / RFC 3339)
//! and optimized (binary / integer) form (`specs/michelson.rst`, "Domain specific data types").
//!
//! Base58check prefixes are Octez's (`base58.ml`).

use crate::int::Int;
use kestrel_crypto::keys::{
    PublicKey, PublicKeyHash, Signature as CryptoSignature, SignatureScheme,
};
use kestrel_crypto::{ChainId, ContractHash, SmartRollupAddress};

/// A public-key hash: the key kind (0 ed25519, 1 secp256k1, 2 p256, 3 bls) and 20 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyHash {
    /// The key kind, which is also the binary tag.
    pub kind: u8,
    /// The BLAKE2b-160 hash of the key.
    pub hash: [u8; 20],
}

impl KeyHash {
    fn from_crypto(hash: &PublicKeyHash) -> KeyHash {
        KeyHash {
            kind: hash.scheme().tag(),
            hash: *hash.hash_bytes(),
        }
    }

    /// The crypto crate's form.
    pub fn to_crypto(self) -> PublicKeyHash {
        // `kind` is a valid tag by construction: every constructor reads it through the crypto
        // crate or from a hashed key.
        let scheme = SignatureScheme::from_tag(self.kind).unwrap_or(SignatureScheme::Ed25519);
        PublicKeyHash::new(scheme, self.hash)
    }

    /// Parses `tz1...`/`tz2...`/`tz3...`/`tz4...`.
    pub fn from_base58(text: &str) -> Option<KeyHash> {
        PublicKeyHash::from_b58check(text)
            .ok()
            .map(|hash| KeyHash::from_crypto(&hash))
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        self.to_crypto().to_b58check()
    }

    /// The binary form: tag byte then hash (21 bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_crypto().to_bytes().to_vec()
    }

    /// Reads the 21-byte binary form.
    pub fn from_bytes(bytes: &[u8]) -> Option<KeyHash> {
        PublicKeyHash::try_from_bytes(bytes)
            .ok()
            .map(|hash| KeyHash::from_crypto(&hash))
    }
}

/// A public key: its kind (as for [`KeyHash`]) and its bytes in Octez's binary form, checked as
/// Octez checks each scheme's keys (points on their curve).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The key kind and binary tag.
    pub kind: u8,
    /// The key bytes (32, 33, 33 or 48).
    pub bytes: Vec<u8>,
}

impl Key {
    fn from_crypto(key: &PublicKey) -> Key {
        Key {
            kind: key.scheme().tag(),
            bytes: key.key_bytes().to_vec(),
        }
    }

    /// Parses `edpk...`/`sppk...`/`p2pk...`/`BLpk...`.
    pub fn from_base58(text: &str) -> Option<Key> {
        PublicKey::from_b58check(text)
            .ok()
            .map(|key| Key::from_crypto(&key))
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        match self.to_crypto() {
            Some(key) => key.to_b58check(),
            None => String::new(),
        }
    }

    /// The crypto crate's form (`None` only if the bytes were not checked, which no constructor
    /// allows).
    pub fn to_crypto(&self) -> Option<PublicKey> {
        PublicKey::try_new(SignatureScheme::from_tag(self.kind)?, &self.bytes).ok()
    }

    /// The binary form: tag byte then key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.kind];
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Reads the binary form (exactly one key).
    pub fn from_bytes(bytes: &[u8]) -> Option<Key> {
        PublicKey::try_from_bytes(bytes)
            .ok()
            .map(|key| Key::from_crypto(&key))
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

impl Signature {
    fn from_crypto(signature: &CryptoSignature) -> Signature {
        Signature {
            bytes: signature.as_bytes().to_vec(),
            kind: signature.scheme().map(SignatureScheme::tag),
        }
    }

    /// Parses `edsig`/`spsig1`/`p2sig`/`BLsig`/`sig` forms.
    pub fn from_base58(text: &str) -> Option<Signature> {
        CryptoSignature::from_b58check(text)
            .ok()
            .map(|signature| Signature::from_crypto(&signature))
    }

    /// Reads the binary form (64 or 96 bytes).
    pub fn from_bytes(bytes: &[u8]) -> Option<Signature> {
        CryptoSignature::try_from_bytes(bytes)
            .ok()
            .map(|signature| Signature::from_crypto(&signature))
    }

    /// The crypto crate's form (`None` only if the bytes were not checked, which no constructor
    /// allows).
    pub fn to_crypto(&self) -> Option<CryptoSignature> {
        CryptoSignature::try_new(self.kind.and_then(SignatureScheme::from_tag), &self.bytes).ok()
    }

    /// The readable form (Octez prints 64-byte signatures in the generic `sig` form unless the
    /// curve is known).
    pub fn to_base58(&self) -> String {
        match self.to_crypto() {
            Some(signature) => signature.to_b58check(),
            None => String::new(),
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
    fn from_crypto(destination: &kestrel_crypto::Destination) -> Destination {
        match destination {
            kestrel_crypto::Destination::Implicit(hash) => {
                Destination::Implicit(KeyHash::from_crypto(hash))
            }
            kestrel_crypto::Destination::Originated(hash) => {
                Destination::Originated(*hash.as_bytes())
            }
            kestrel_crypto::Destination::SmartRollup(hash) => {
                Destination::SmartRollup(*hash.as_bytes())
            }
        }
    }

    /// The crypto crate's form.
    pub fn to_crypto(&self) -> kestrel_crypto::Destination {
        match self {
            Destination::Implicit(hash) => kestrel_crypto::Destination::Implicit(hash.to_crypto()),
            Destination::Originated(hash) => {
                kestrel_crypto::Destination::Originated(ContractHash::new(*hash))
            }
            Destination::SmartRollup(hash) => {
                kestrel_crypto::Destination::SmartRollup(SmartRollupAddress::new(*hash))
            }
        }
    }

    /// Parses `tz1...`, `KT1...` or `sr1...`.
    pub fn from_base58(text: &str) -> Option<Destination> {
        kestrel_crypto::Destination::from_b58check(text)
            .ok()
            .map(|destination| Destination::from_crypto(&destination))
    }

    /// The readable form.
    pub fn to_base58(&self) -> String {
        self.to_crypto().to_b58check()
    }

    /// The 22-byte binary form.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_crypto().to_bytes().to_vec()
    }

    /// Reads the 22-byte binary form.
    pub fn from_bytes(bytes: &[u8]) -> Option<Destination> {
        kestrel_crypto::Destination::try_from_bytes(bytes)
            .ok()
            .map(|destination| Destination::from_crypto(&destination))
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
    ChainId::from_b58check(text)
        .ok()
        .map(|chain_id| *chain_id.as_bytes())
}

/// Prints a chain id.
pub fn chain_id_to_base58(bytes: &[u8; 4]) -> String {
    ChainId::new(*bytes).to_b58check()
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
