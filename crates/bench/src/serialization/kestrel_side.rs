//! The three benchmarks written with Kestrel's `encoding` crate. UNFINISHED: waiting for the
//! crate's combinator API (branch `encoding`).

use std::io::{BufRead, Write};

use super::error::BenchError;
use super::harness::{Contender, ExchangeSummary, MessageSizes, Scratch, Setup};
use super::rng::Xorshift128;

/// Marker for carsales.
pub struct Carsales;
/// Marker for catrank.
pub struct Catrank;
/// Marker for eval.
pub struct Eval;

/// Any Kestrel case as a [`Contender`].
pub struct KestrelContender<T>(std::marker::PhantomData<T>);

fn unfinished() -> BenchError {
    BenchError::Unsupported {
        implementation: "kestrel",
        what: "codec yet (waiting for crates/encoding)",
    }
}

impl<'s, T> Contender<'s> for KestrelContender<T> {
    type Expectation = i64;
    fn new(_setup: Setup, _scratch: &'s mut Scratch) -> Result<Self, BenchError> {
        Err(unfinished())
    }
    fn run_object(&mut self, _rng: &mut Xorshift128) -> Result<(), BenchError> {
        Err(unfinished())
    }
    fn run_bytes(&mut self, _rng: &mut Xorshift128) -> Result<MessageSizes, BenchError> {
        Err(unfinished())
    }
    fn write_request<W: Write>(
        &mut self,
        _rng: &mut Xorshift128,
        _output: &mut W,
    ) -> Result<i64, BenchError> {
        Err(unfinished())
    }
    fn serve_request<R: BufRead, W: Write>(
        &mut self,
        _input: &mut R,
        _output: &mut W,
    ) -> Result<bool, BenchError> {
        Err(unfinished())
    }
    fn read_response<R: BufRead>(
        &mut self,
        _input: &mut R,
        _expected: i64,
    ) -> Result<(), BenchError> {
        Err(unfinished())
    }
    fn exchange_summary(&mut self, _rng: &mut Xorshift128) -> Result<ExchangeSummary, BenchError> {
        Err(unfinished())
    }
}
