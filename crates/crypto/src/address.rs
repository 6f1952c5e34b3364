//! Michelson's `address` (and the binary form of `contract`): a destination — implicit account
//! (`tz1`..`tz4`), originated contract (`KT1`) or smart rollup (`sr1`) — and an entrypoint.
//!
//! Binary form (Octez `Destination_repr.encoding` followed by `Entrypoint_repr.value_encoding`):
//! 22 bytes of destination, then the entrypoint name's bytes to the end (none for `default`):
//!
//! ```text
//! 0x00 ‖ key hash tag ‖ hash(20)   implicit account
//! 0x01 ‖ contract hash(20) ‖ 0x00  originated contract
//! 0x03 ‖ rollup address(20) ‖ 0x00 smart rollup
//! ```
//!
//! Text form: the base58check destination, then `%name` unless the entrypoint is `default`.
//! Tag 2 (transaction rollups) was removed from the protocol and tag 4 (zk rollups, `epx1`) is
//! not supported here; both are rejected as unknown tags.

use std::fmt;
use std::str::FromStr;

use crate::base58;
use crate::error::CryptoError;
use crate::hashes::{ContractHash, SmartRollupAddress};
use crate::keys::PublicKeyHash;

/// The longest entrypoint name in bytes (Octez `Entrypoint_repr`: "length > 31" is `Too_long`).
pub const ENTRYPOINT_MAX_LENGTH: usize = 31;

/// An entrypoint name: at most [`ENTRYPOINT_MAX_LENGTH`] bytes; the empty name means `default`,
/// and is stored as `default`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Entrypoint(String);

impl Entrypoint {
    /// The name of the default entrypoint.
    pub const DEFAULT_NAME: &'static str = "default";

    /// The default entrypoint.
    pub fn default_entrypoint() -> Self {
        Self(Self::DEFAULT_NAME.to_owned())
    }

    /// Reads a name as Octez's `of_string_lax` does: the empty name and `default` are the default
    /// entrypoint; names longer than [`ENTRYPOINT_MAX_LENGTH`] are refused.
    pub fn try_new(name: &str) -> Result<Self, CryptoError> {
        if name.len() > ENTRYPOINT_MAX_LENGTH {
            return Err(CryptoError::EntrypointTooLong { length: name.len() });
        }
        if name.is_empty() {
            return Ok(Self::default_entrypoint());
        }
        Ok(Self(name.to_owned()))
    }

    /// Reads a name as Octez's `of_string_strict` does for address literals: like
    /// [`Entrypoint::try_new`], but naming `default` explicitly is an error.
    pub fn try_new_strict(name: &str) -> Result<Self, CryptoError> {
        if name == Self::DEFAULT_NAME {
            return Err(CryptoError::ExplicitDefaultEntrypoint);
        }
        Self::try_new(name)
    }

    /// Whether this is the default entrypoint.
    pub fn is_default(&self) -> bool {
        self.0 == Self::DEFAULT_NAME
    }

    /// The name (`default` for the default entrypoint).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Entrypoint {
    fn default() -> Self {
        Self::default_entrypoint()
    }
}

/// Where an address points. Ordered as Michelson compares addresses: implicit accounts before
/// originated contracts before smart rollups, then by hash (the order of the binary forms).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Destination {
    /// An implicit account (`tz1`..`tz4`), tag 0.
    Implicit(PublicKeyHash),
    /// An originated contract (`KT1`), tag 1.
    Originated(ContractHash),
    /// A smart rollup (`sr1`), tag 3.
    SmartRollup(SmartRollupAddress),
}

impl Destination {
    /// The size of the binary form in bytes.
    pub const SIZE_BYTES: usize = 22;
    const WHAT: &'static str = "address";
    const TAG_IMPLICIT: u8 = 0;
    const TAG_ORIGINATED: u8 = 1;
    const TAG_SMART_ROLLUP: u8 = 3;

    /// Reads the 22-byte binary form.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        let bytes: &[u8; 22] = bytes
            .try_into()
            .map_err(|_| CryptoError::length(Self::WHAT, Self::SIZE_BYTES, bytes.len()))?;
        let padded = |bytes: &[u8; 22]| -> Result<[u8; 20], CryptoError> {
            if bytes[21] != 0 {
                return Err(CryptoError::NonZeroPadding {
                    what: Self::WHAT,
                    offset: 21,
                });
            }
            let mut hash = [0u8; 20];
            hash.copy_from_slice(&bytes[1..21]);
            Ok(hash)
        };
        match bytes[0] {
            Self::TAG_IMPLICIT => Ok(Destination::Implicit(PublicKeyHash::try_from_bytes(
                &bytes[1..],
            )?)),
            Self::TAG_ORIGINATED => Ok(Destination::Originated(ContractHash::new(padded(bytes)?))),
            Self::TAG_SMART_ROLLUP => Ok(Destination::SmartRollup(SmartRollupAddress::new(
                padded(bytes)?,
            ))),
            tag => Err(CryptoError::UnknownTag {
                what: Self::WHAT,
                tag,
            }),
        }
    }

    /// The 22-byte binary form.
    pub fn to_bytes(&self) -> [u8; 22] {
        let mut bytes = [0u8; 22];
        match self {
            Destination::Implicit(hash) => {
                bytes[0] = Self::TAG_IMPLICIT;
                bytes[1..].copy_from_slice(&hash.to_bytes());
            }
            Destination::Originated(hash) => {
                bytes[0] = Self::TAG_ORIGINATED;
                bytes[1..21].copy_from_slice(hash.as_bytes());
            }
            Destination::SmartRollup(hash) => {
                bytes[0] = Self::TAG_SMART_ROLLUP;
                bytes[1..21].copy_from_slice(hash.as_bytes());
            }
        }
        bytes
    }

    /// Reads the base58check text form (no entrypoint).
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let decoded = base58::decode_check_raw(text)
            .map_err(|error| CryptoError::base58(Self::WHAT, error))?;
        let prefixes = [
            base58::ED25519_PUBLIC_KEY_HASH,
            base58::SECP256K1_PUBLIC_KEY_HASH,
            base58::P256_PUBLIC_KEY_HASH,
            base58::BLS12_381_PUBLIC_KEY_HASH,
            base58::ML_DSA_44_PUBLIC_KEY_HASH,
            base58::CONTRACT_HASH,
            base58::SMART_ROLLUP_ADDRESS,
        ];
        let (index, payload) = base58::split_prefix(&decoded, &prefixes)
            .map_err(|error| CryptoError::base58(Self::WHAT, error))?;
        let mut hash = [0u8; 20];
        hash.copy_from_slice(payload);
        Ok(match index {
            0..=4 => Destination::Implicit(PublicKeyHash::new(
                crate::keys::SignatureScheme::ALL[index],
                hash,
            )),
            5 => Destination::Originated(ContractHash::new(hash)),
            _ => Destination::SmartRollup(SmartRollupAddress::new(hash)),
        })
    }

    /// The base58check text form.
    pub fn to_b58check(&self) -> String {
        match self {
            Destination::Implicit(hash) => hash.to_b58check(),
            Destination::Originated(hash) => hash.to_b58check(),
            Destination::SmartRollup(hash) => hash.to_b58check(),
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_b58check())
    }
}

/// A Michelson `address`: destination and entrypoint. Ordered by destination, then entrypoint
/// name, as Michelson compares addresses.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Address {
    /// Where the address points.
    pub destination: Destination,
    /// The entrypoint (`default` when none is named).
    pub entrypoint: Entrypoint,
}

impl Address {
    const WHAT: &'static str = "address";

    /// An address to the default entrypoint of `destination`.
    pub fn new(destination: Destination) -> Self {
        Self {
            destination,
            entrypoint: Entrypoint::default_entrypoint(),
        }
    }

    /// Reads the binary form: 22 bytes of destination, then the entrypoint name (Octez reads it
    /// laxly: empty or `default` is the default entrypoint).
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        if bytes.len() < Destination::SIZE_BYTES {
            return Err(CryptoError::length(
                Self::WHAT,
                Destination::SIZE_BYTES,
                bytes.len(),
            ));
        }
        let (destination, name) = bytes.split_at(Destination::SIZE_BYTES);
        let destination = Destination::try_from_bytes(destination)?;
        if name.len() > ENTRYPOINT_MAX_LENGTH {
            return Err(CryptoError::EntrypointTooLong { length: name.len() });
        }
        let name = std::str::from_utf8(name).map_err(|_| CryptoError::EntrypointNotUtf8)?;
        Ok(Self {
            destination,
            entrypoint: Entrypoint::try_new(name)?,
        })
    }

    /// Appends the binary form to `out`.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.destination.to_bytes());
        if !self.entrypoint.is_default() {
            out.extend_from_slice(self.entrypoint.as_str().as_bytes());
        }
    }

    /// The binary form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Destination::SIZE_BYTES + ENTRYPOINT_MAX_LENGTH);
        self.write_bytes(&mut out);
        out
    }

    /// Reads the text form `DESTINATION` or `DESTINATION%name` as Michelson reads address
    /// literals: the text after the first `%` is the entrypoint, `%default` is refused and an
    /// empty name is the default entrypoint.
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let (destination, entrypoint) = match text.split_once('%') {
            None => (text, Entrypoint::default_entrypoint()),
            Some((destination, name)) => (destination, Entrypoint::try_new_strict(name)?),
        };
        Ok(Self {
            destination: Destination::from_b58check(destination)?,
            entrypoint,
        })
    }

    /// The text form (`%name` appended unless the entrypoint is `default`).
    pub fn to_b58check(&self) -> String {
        let mut text = self.destination.to_b58check();
        if !self.entrypoint.is_default() {
            text.push('%');
            text.push_str(self.entrypoint.as_str());
        }
        text
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_b58check())
    }
}

impl FromStr for Address {
    type Err = CryptoError;

    fn from_str(text: &str) -> Result<Self, CryptoError> {
        Self::from_b58check(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base58::Base58Error;
    use crate::testing::{hex_literals, packed_bytes, quoted, read};

    #[test]
    fn addresses_match_tzt_pack_vectors() {
        // pack_address_00..05: KT1, tz1, tz2, tz3, tz4 and sr1 addresses.
        for index in 0..=5 {
            let file = format!("tzt/pack_address_{index:02}.tzt");
            let Some(text) = read(&file, "addresses_match_tzt_pack_vectors") else {
                return;
            };
            let literal = quoted(&text)[0];
            let packed = hex_literals(&text).pop().unwrap();
            let bytes = packed_bytes(&packed);
            let address = Address::from_b58check(literal).unwrap();
            assert_eq!(address.to_bytes(), bytes, "{file}");
            assert_eq!(
                Address::try_from_bytes(bytes).as_ref(),
                Ok(&address),
                "{file}"
            );
            assert_eq!(address.to_b58check(), literal, "{file}");
            assert_eq!(address.to_string(), literal);
        }
    }

    #[test]
    fn address_literals_in_tzt_files_parse() {
        // Every address-looking string literal in the TZT suite that names a supported
        // destination, with or without entrypoint, parses and round-trips through both forms.
        let Some(dir) = kestrel_testdata::require("tzt", "address_literals_in_tzt_files_parse")
        else {
            return;
        };
        let mut count = 0;
        for path in kestrel_testdata::files_with_suffix(&dir, ".tzt") {
            let text = std::fs::read_to_string(&path).unwrap();
            for literal in quoted(&text) {
                let base = literal.split('%').next().unwrap_or("");
                let supported = ["tz1", "tz2", "tz3", "tz4", "KT1", "sr1"]
                    .iter()
                    .any(|prefix| base.starts_with(prefix));
                if !supported || base.len() != 36 || literal.ends_with("%default") {
                    continue;
                }
                let Ok(address) = Address::from_b58check(literal) else {
                    // Some TZT files hold deliberately invalid literals; they must fail on a rule.
                    continue;
                };
                assert_eq!(address.to_b58check(), literal, "{}", path.display());
                assert_eq!(
                    Address::try_from_bytes(&address.to_bytes()).as_ref(),
                    Ok(&address)
                );
                count += 1;
            }
        }
        assert!(count > 50, "only {count} address literals found");
    }

    #[test]
    fn entrypoints_in_text_and_binary_forms() {
        let Some(text) = read("tzt/pack_address_00.tzt", "entrypoints") else {
            return;
        };
        let contract = quoted(&text)[0];
        let with_entrypoint = Address::from_b58check(&format!("{contract}%transfer")).unwrap();
        assert_eq!(with_entrypoint.entrypoint.as_str(), "transfer");
        let bytes = with_entrypoint.to_bytes();
        assert_eq!(&bytes[22..], b"transfer");
        assert_eq!(Address::try_from_bytes(&bytes), Ok(with_entrypoint.clone()));
        // `%` alone is the default entrypoint; `%default` is refused in text, accepted in binary.
        let bare = Address::from_b58check(&format!("{contract}%")).unwrap();
        assert!(bare.entrypoint.is_default());
        assert_eq!(bare.to_b58check(), contract);
        assert_eq!(
            Address::from_b58check(&format!("{contract}%default")),
            Err(CryptoError::ExplicitDefaultEntrypoint)
        );
        let mut lax = bare.to_bytes();
        lax.extend_from_slice(b"default");
        assert_eq!(Address::try_from_bytes(&lax), Ok(bare.clone()));
        // Names longer than 31 bytes are refused in both forms.
        let long = "a".repeat(ENTRYPOINT_MAX_LENGTH + 1);
        assert_eq!(
            Address::from_b58check(&format!("{contract}%{long}")),
            Err(CryptoError::EntrypointTooLong { length: 32 })
        );
        let mut too_long = bare.to_bytes();
        too_long.extend_from_slice(long.as_bytes());
        assert_eq!(
            Address::try_from_bytes(&too_long),
            Err(CryptoError::EntrypointTooLong { length: 32 })
        );
        let exactly = "b".repeat(ENTRYPOINT_MAX_LENGTH);
        assert!(Address::from_b58check(&format!("{contract}%{exactly}")).is_ok());
        // Addresses order by destination kind, then hash, then entrypoint name.
        assert!(bare < with_entrypoint);
    }

    #[test]
    fn binary_rejections_carry_the_rule() {
        let check = |bytes: &[u8], expected: CryptoError| {
            assert_eq!(Address::try_from_bytes(bytes), Err(expected), "{bytes:?}");
        };
        check(
            &[],
            CryptoError::WrongLength {
                what: "address",
                expected: 22,
                found: 0,
            },
        );
        check(
            &[1; 21],
            CryptoError::WrongLength {
                what: "address",
                expected: 22,
                found: 21,
            },
        );
        let mut originated = [0u8; 22];
        originated[0] = 1;
        originated[21] = 7;
        check(
            &originated,
            CryptoError::NonZeroPadding {
                what: "address",
                offset: 21,
            },
        );
        for tag in [2u8, 4, 255] {
            let mut bytes = [0u8; 22];
            bytes[0] = tag;
            check(
                &bytes,
                CryptoError::UnknownTag {
                    what: "address",
                    tag,
                },
            );
        }
        let mut implicit = [0u8; 22];
        implicit[1] = 9;
        check(
            &implicit,
            CryptoError::UnknownTag {
                what: "public key hash",
                tag: 9,
            },
        );
        let mut not_utf8 = vec![0u8; 22];
        not_utf8.push(0xff);
        check(&not_utf8, CryptoError::EntrypointNotUtf8);
        assert_eq!(
            Address::from_b58check("edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav"),
            Err(CryptoError::Base58 {
                what: "address",
                error: Base58Error::WrongPrefix
            })
        );
    }

    proptest::proptest! {
        #[test]
        fn near_valid_bytes_never_panic_and_round_trip(
            tag in 0u8..5,
            scheme in 0u8..5,
            hash in proptest::array::uniform20(0u8..),
            padding in 0u8..2,
            name in proptest::collection::vec(0u8.., 0..35),
        ) {
            let mut bytes = vec![tag, scheme];
            bytes.extend_from_slice(&hash[1..]);
            bytes.push(padding);
            bytes.extend_from_slice(&name);
            if let Ok(address) = Address::try_from_bytes(&bytes) {
                let written = address.to_bytes();
                // Only the lax `default` spelling is not written back as read.
                if name != b"default" {
                    proptest::prop_assert_eq!(&written, &bytes);
                }
                proptest::prop_assert_eq!(Address::try_from_bytes(&written), Ok(address.clone()));
                proptest::prop_assert_eq!(Address::from_b58check(&address.to_b58check()), Ok(address));
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
            let _ = Address::from_b58check(&text);
        }
    }
}
