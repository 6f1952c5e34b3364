//! The one error type of the typed constructors in this crate: a variant per rule, each naming the
//! kind of value being read (`what`, e.g. `"public key"`) so callers can report it as is.

use std::fmt;

use crate::base58::Base58Error;

/// Why bytes or text were rejected as a typed cryptographic value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CryptoError {
    /// The base58check text did not decode (alphabet, checksum, length) or carried a prefix that
    /// is not one of this kind's.
    Base58 {
        /// The kind of value being read.
        what: &'static str,
        /// The base58check rule that failed.
        error: Base58Error,
    },
    /// The binary form had the wrong length.
    WrongLength {
        /// The kind of value being read.
        what: &'static str,
        /// The length (or minimum length) the form requires.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// The binary form started with a tag this kind does not have.
    UnknownTag {
        /// The kind of value being read.
        what: &'static str,
        /// The tag byte found.
        tag: u8,
    },
    /// A padding byte of the binary form was not zero.
    NonZeroPadding {
        /// The kind of value being read.
        what: &'static str,
        /// The offset of the padding byte in the binary form.
        offset: usize,
    },
    /// The bytes are not the encoding of a point of the expected curve group (not on the curve,
    /// not in the prime-order subgroup, or a malformed encoding).
    InvalidPoint {
        /// The kind of value being read.
        what: &'static str,
    },
    /// A scalar was not below the group order (secp256k1 signature components, BLS12-381 `Fr`).
    ScalarOutOfRange {
        /// The kind of value being read.
        what: &'static str,
    },
    /// An entrypoint name was longer than [`crate::address::ENTRYPOINT_MAX_LENGTH`].
    EntrypointTooLong {
        /// The name length in bytes.
        length: usize,
    },
    /// The text form of an address named the `default` entrypoint explicitly (`KT1...%default`),
    /// which Michelson rejects (Octez `Entrypoint_repr.of_string_strict`).
    ExplicitDefaultEntrypoint,
    /// An entrypoint name in a binary address was not valid UTF-8.
    EntrypointNotUtf8,
}

impl CryptoError {
    pub(crate) fn base58(what: &'static str, error: Base58Error) -> Self {
        CryptoError::Base58 { what, error }
    }

    pub(crate) fn length(what: &'static str, expected: usize, found: usize) -> Self {
        CryptoError::WrongLength {
            what,
            expected,
            found,
        }
    }
}

impl fmt::Display for CryptoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CryptoError::Base58 { what, error } => write!(f, "invalid {what}: {error}"),
            CryptoError::WrongLength {
                what,
                expected,
                found,
            } => write!(
                f,
                "invalid {what}: {found} bytes where {expected} are required"
            ),
            CryptoError::UnknownTag { what, tag } => write!(f, "invalid {what}: unknown tag {tag}"),
            CryptoError::NonZeroPadding { what, offset } => {
                write!(
                    f,
                    "invalid {what}: non-zero padding byte at offset {offset}"
                )
            }
            CryptoError::InvalidPoint { what } => {
                write!(f, "invalid {what}: not a point of the expected group")
            }
            CryptoError::ScalarOutOfRange { what } => {
                write!(f, "invalid {what}: scalar not below the group order")
            }
            CryptoError::EntrypointTooLong { length } => write!(
                f,
                "entrypoint name of {length} bytes is longer than {}",
                crate::address::ENTRYPOINT_MAX_LENGTH
            ),
            CryptoError::ExplicitDefaultEntrypoint => {
                f.write_str("the default entrypoint cannot be named in an address")
            }
            CryptoError::EntrypointNotUtf8 => f.write_str("entrypoint name is not valid UTF-8"),
        }
    }
}

impl std::error::Error for CryptoError {}
