//! The one error type of the serialization suite: a failed client check, a codec or I/O failure,
//! or a server process that went wrong. Every variant says which benchmark and side it came from
//! where that is known, so a disagreement between implementations is easy to place.

use std::io;

/// What can go wrong while running the serialization suite.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A client's built-in check rejected a response.
    #[error("{benchmark}: iteration check failed: expected {expected}, response says {actual}")]
    CheckFailed {
        /// The benchmark whose check failed.
        benchmark: &'static str,
        /// What the client computed while building the request.
        expected: String,
        /// What the response held.
        actual: String,
    },
    /// Cap'n Proto reported an error while building or reading a message.
    #[error("capnp: {0}")]
    Capnp(#[from] capnp::Error),
    /// Kestrel's encoding rejected a message it read.
    #[error("kestrel encoding, decoding: {0}")]
    KestrelDecode(#[from] kestrel_encoding::DecodeError),
    /// Kestrel's encoding could not write a value.
    #[error("kestrel encoding, encoding: {0}")]
    KestrelEncode(#[from] kestrel_encoding::EncodeError),
    /// Kestrel's arena could not write a value (a node's child missing from the arena).
    #[error("kestrel encoding, encoding from an arena: {0}")]
    KestrelArenaEncode(#[from] kestrel_encoding::ArenaEncodeError),
    /// An arena the client built or the server read does not hold one whole value (a bug in
    /// the builder or the codec, since a successful decode guarantees the shape).
    #[error("{0}: the arena does not hold one whole expression")]
    MalformedArena(&'static str),
    /// One of the benchmark's encodings could not be built (a bug in its definition).
    #[error("kestrel encoding, building the benchmark's encodings: {0}")]
    KestrelBuild(#[from] kestrel_encoding::BuildError),
    /// A frame header announced more bytes than a reader accepts.
    #[error("a frame of {size_bytes} bytes is over the {limit_bytes}-byte limit")]
    FrameTooLarge {
        /// The announced size.
        size_bytes: usize,
        /// The limit.
        limit_bytes: usize,
    },
    /// A pipe or process operation failed.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The server closed its end before answering every request.
    #[error(
        "the server process closed the pipe after {answered_count} of {expected_count} responses"
    )]
    ServerClosedEarly {
        /// Responses received before the pipe closed.
        answered_count: u64,
        /// Responses the client was waiting for.
        expected_count: u64,
    },
    /// The server process did not send its ready byte first.
    #[error("the server process did not announce itself (got byte {0:#04x})")]
    BadHandshake(u8),
    /// The server process exited with a failure status.
    #[error("the server process failed: {0}")]
    ServerFailed(String),
    /// A name on the command line names no benchmark, mode or implementation.
    #[error("unknown {kind} `{name}` (expected one of: {expected})")]
    UnknownName {
        /// What the name was meant to be (benchmark, mode, implementation, reuse).
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names accepted.
        expected: &'static str,
    },
    /// A mode this implementation does not provide (Kestrel has no packed variant).
    #[error("{implementation} has no {what}")]
    Unsupported {
        /// The implementation asked.
        implementation: &'static str,
        /// What it lacks.
        what: &'static str,
    },
}

/// Builds a [`BenchError::CheckFailed`].
pub(crate) fn check_failed(
    benchmark: &'static str,
    expected: impl ToString,
    actual: impl ToString,
) -> BenchError {
    BenchError::CheckFailed {
        benchmark,
        expected: expected.to_string(),
        actual: actual.to_string(),
    }
}
