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
            base58::CONTRACT_HASH,
            base58::SMART_ROLLUP_ADDRESS,
        ];
        let (index, payload) = base58::split_prefix(&decoded, &prefixes)
            .map_err(|error| CryptoError::base58(Self::WHAT, error))?;
        let mut hash = [0u8; 20];
        hash.copy_from_slice(payload);
        Ok(match index {
            0..=3 => Destination::Implicit(PublicKeyHash::new(
                crate::keys::SignatureScheme::ALL[index],
                hash,
            )),
            4 => Destination::Originated(ContractHash::new(hash)),
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
