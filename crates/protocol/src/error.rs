//! The crate's errors: binary decode failures (one variant per rule, each with the byte offset
//! where it was broken, named after data-encoding's `read_error` constructors where one exists)
//! and JSON failures (with the path of the offending field).
//!
//! Octez reports a protocol-data parse failure of an injected operation as the shell error
//! [`PARSE_ERROR_ID`], whose payload is data-encoding's read error; [`DecodeError::read_error_name`]
//! gives that name.

use std::fmt;

use kestrel_encoding::{DecodeError as EncodingDecodeError, DecodeErrorKind as EncodingKind};

/// Octez's error id for bytes that do not parse as an operation
/// (`src/lib_shell/prevalidation.ml`, `Parse_error`).
pub const PARSE_ERROR_ID: &str = "node.prevalidation.parse_error";

/// Why a binary decode failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ended before the value did (`Not_enough_data`).
    Truncated,
    /// Bytes remained after the value (`Extra_bytes`).
    TrailingBytes,
    /// A tag named no case of a union (`Unexpected_tag`).
    UnknownTag {
        /// What the tag selects (e.g. "operation contents").
        what: &'static str,
        /// The tag read.
        tag: u16,
    },
    /// A Zarith number ended with a zero byte (`Trailing_zero`).
    TrailingZero,
    /// A size or `check_size` limit was exceeded (`Size_limit_exceeded`).
    SizeLimitExceeded,
    /// A list had more elements than allowed (`List_too_long`).
    ListTooLong,
    /// A value broke a rule of its type (a data-encoding guard or `conv` failure, `Invalid`).
    Invalid {
        /// What was being read.
        what: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// A value broke an invariant its encoding guards (`conv_with_guard`: data-encoding's
    /// `User_invariant_guard`).
    InvariantGuard {
        /// What was being read.
        what: &'static str,
        /// The guard's message.
        message: &'static str,
    },
    /// An operation kind whose encoding this crate does not implement (smart rollup refutations
    /// and zk rollup operations); the bytes are valid Octez tags but cannot be sized here.
    UnsupportedKind {
        /// The kind's name in Octez.
        name: &'static str,
        /// Its tag.
        tag: u8,
    },
}

/// A binary decode failure and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The rule broken.
    pub kind: DecodeErrorKind,
    /// The offset in bytes, from the start of the input, where it was detected.
    pub offset: usize,
}

impl DecodeError {
    /// A new error of `kind` at `offset`.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// An `Invalid` error: `what` broke a rule, saying `reason`.
    #[cold]
    pub fn invalid(what: &'static str, reason: impl Into<String>, offset: usize) -> Self {
        Self::new(
            DecodeErrorKind::Invalid {
                what,
                reason: reason.into(),
            },
            offset,
        )
    }

    /// The name of data-encoding's `read_error` for this failure (the payload of Octez's
    /// [`PARSE_ERROR_ID`]).
    pub fn read_error_name(&self) -> &'static str {
        match self.kind {
            DecodeErrorKind::Truncated => "Not_enough_data",
            DecodeErrorKind::TrailingBytes => "Extra_bytes",
            DecodeErrorKind::UnknownTag { .. } | DecodeErrorKind::UnsupportedKind { .. } => {
                "Unexpected_tag"
            }
            DecodeErrorKind::TrailingZero => "Trailing_zero",
            DecodeErrorKind::SizeLimitExceeded => "Size_limit_exceeded",
            DecodeErrorKind::ListTooLong => "List_too_long",
            DecodeErrorKind::Invalid { .. } => "Invalid_argument",
            DecodeErrorKind::InvariantGuard { .. } => "User_invariant_guard",
        }
    }
}

impl From<EncodingDecodeError> for DecodeError {
    fn from(error: EncodingDecodeError) -> Self {
        let kind = match &error.kind {
            EncodingKind::NotEnoughData => DecodeErrorKind::Truncated,
            EncodingKind::ExtraBytes => DecodeErrorKind::TrailingBytes,
            EncodingKind::TrailingZero => DecodeErrorKind::TrailingZero,
            EncodingKind::SizeLimitExceeded => DecodeErrorKind::SizeLimitExceeded,
            EncodingKind::ListTooLong => DecodeErrorKind::ListTooLong,
            EncodingKind::UnexpectedTag(tag) => DecodeErrorKind::UnknownTag {
                what: "union",
                tag: u16::try_from(*tag).unwrap_or(u16::MAX),
            },
            other => DecodeErrorKind::Invalid {
                what: "value",
                reason: format!("{other:?}"),
            },
        };
        Self::new(kind, error.offset)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DecodeErrorKind::UnknownTag { what, tag } => {
                write!(f, "unknown {what} tag {tag} at byte {}", self.offset)
            }
            DecodeErrorKind::Invalid { what, reason } => {
                write!(f, "invalid {what} at byte {}: {reason}", self.offset)
            }
            DecodeErrorKind::InvariantGuard { what, message } => write!(
                f,
                "invalid {what} at byte {}: User-specified invariant not respected in encoded \
                 data: {message}",
                self.offset
            ),
            DecodeErrorKind::UnsupportedKind { name, tag } => write!(
                f,
                "operation kind {name} (tag {tag}) at byte {} is not supported",
                self.offset
            ),
            _ => write!(f, "{} at byte {}", self.read_error_name(), self.offset),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A JSON value that is not an operation (or a part of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Where, as a JSON path (`contents/0/fee`).
    pub path: String,
    /// What was wrong.
    pub message: String,
}

impl JsonError {
    /// A new error at `path`.
    #[cold]
    pub fn new(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.path, self.message)
    }
}

impl std::error::Error for JsonError {}
