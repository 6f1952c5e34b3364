//! Kestrel's implementation of the Tezos data-encoding format (`specs/data-encoding-tutorial.md`):
//! typed binary and JSON codecs whose bytes are those of data-encoding v1.
//!
//! This crate knows nothing of Michelson, Micheline or any file: it turns values into bytes and
//! bytes into values, and reports every malformed input as a [`DecodeError`] with its byte offset.

#![forbid(unsafe_code)]

pub mod error;
pub mod zarith;

pub use error::{DecodeError, DecodeErrorKind};
