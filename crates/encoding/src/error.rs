//! Decoding errors: one kind per rule of the format, each carrying the byte offset where the rule
//! was broken, so callers (and differential tests) can compare reasons, not just failure.

use std::fmt;

/// Why a decode failed. The names follow data-encoding's `read_error` constructors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ended before the value did (`Not_enough_data`).
    NotEnoughData,
    /// Bytes remained after the value, inside a size-delimited region or at the end (`Extra_bytes`).
    ExtraBytes,
    /// A Zarith number ended with a zero byte, which no canonical encoder writes (`Trailing_zero`).
    TrailingZero,
    /// A list had more elements than its encoding allows (`List_too_long`).
    ListTooLong,
    /// A size prefix or size check exceeded its limit (`Size_limit_exceeded`).
    SizeLimitExceeded,
    /// A union or enum tag named no case (`Unexpected_tag`).
    UnexpectedTag(u32),
    /// An integer was outside its encoding's range (`Invalid_int`).
    InvalidInt {
        /// The smallest accepted value.
        min: i64,
        /// The decoded value.
        value: i64,
        /// The largest accepted value.
        max: i64,
    },
    /// A boolean byte was neither 0x00 nor 0xff.
    InvalidBool(u8),
    /// Bytes meant as a string were not UTF-8.
    InvalidUtf8,
    /// A value failed a user-supplied check (`conv_with_guard`), with its message.
    Invalid(String),
}

/// A decode failure at a byte offset of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// What rule the input broke.
    pub kind: DecodeErrorKind,
    /// The offset, in bytes from the start of the input, where it was detected.
    pub offset: usize,
}

impl DecodeError {
    /// A new error of `kind` at `offset`.
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError { kind, offset }
    }

    /// The data-encoding name of the error kind, e.g. `Not_enough_data`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            DecodeErrorKind::NotEnoughData => "Not_enough_data",
            DecodeErrorKind::ExtraBytes => "Extra_bytes",
            DecodeErrorKind::TrailingZero => "Trailing_zero",
            DecodeErrorKind::ListTooLong => "List_too_long",
            DecodeErrorKind::SizeLimitExceeded => "Size_limit_exceeded",
            DecodeErrorKind::UnexpectedTag(_) => "Unexpected_tag",
            DecodeErrorKind::InvalidInt { .. } => "Invalid_int",
            DecodeErrorKind::InvalidBool(_) => "Invalid_bool",
            DecodeErrorKind::InvalidUtf8 => "Invalid_string",
            DecodeErrorKind::Invalid(_) => "Invalid",
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DecodeErrorKind::UnexpectedTag(tag) => {
                write!(f, "unexpected tag {tag} at byte {}", self.offset)
            }
            DecodeErrorKind::InvalidInt { min, value, max } => write!(
                f,
                "integer {value} outside [{min}, {max}] at byte {}",
                self.offset
            ),
            DecodeErrorKind::InvalidBool(byte) => {
                write!(
                    f,
                    "invalid boolean byte 0x{byte:02x} at byte {}",
                    self.offset
                )
            }
            DecodeErrorKind::Invalid(message) => {
                write!(f, "invalid value at byte {}: {message}", self.offset)
            }
            _ => write!(f, "{} at byte {}", self.kind_name(), self.offset),
        }
    }
}

impl std::error::Error for DecodeError {}
