//! The loops that run one implementation of one benchmark in one mode (`specs/serialization-
//! benchmarks.md`, "Modes"), and the server role of the pipe modes.
//!
//! Every implementation provides the same steps ([`Contender`]); the harness owns the loops, the
//! clock, the pipes and the server process, so the implementations are timed by identical code.
//! In the pipe modes the client is this process and the server is a child process started from
//! the current executable through a [`ServerCommand`]; the child answers on its stdout what it
//! reads on its stdin, so the two processes are joined by two pipes.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::os::fd::AsFd;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cpu::{CpuClock, CpuSpan};
use super::error::BenchError;
use super::rng::Xorshift128;
use super::{Benchmark, Implementation};

/// Words in each scratch buffer: 1 MiB, more than the largest catrank message (about 450 KiB).
pub const SCRATCH_WORDS: usize = 128 * 1024;

/// Capacity of the buffered pipe ends: the default pipe capacity on Linux (`pipe(7)`).
const PIPE_BUFFER_BYTES: usize = 64 * 1024;

/// The byte a server writes once it is ready, so process start-up stays outside the clock.
const READY_BYTE: u8 = b'!';

/// Word-aligned buffers an implementation may borrow for the whole of a timed run when buffer
/// reuse is on (Cap'n Proto builds and reads messages in place in aligned memory).
pub struct Scratch {
    buffers: [Vec<capnp::Word>; 4],
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// Four zeroed buffers of [`SCRATCH_WORDS`] words.
    pub fn new() -> Self {
        Self {
            buffers: std::array::from_fn(|_| capnp::Word::allocate_zeroed_vec(SCRATCH_WORDS)),
        }
    }

    /// The four buffers as disjoint byte slices: request build, response build, request read,
    /// response read.
    pub fn parts(&mut self) -> [&mut [u8]; 4] {
        let [a, b, c, d] = &mut self.buffers;
        [
            capnp::Word::words_to_bytes_mut(a),
            capnp::Word::words_to_bytes_mut(b),
            capnp::Word::words_to_bytes_mut(c),
            capnp::Word::words_to_bytes_mut(d),
        ]
    }
}

/// How one implementation is configured for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Whether buffers and builders are reused from one iteration to the next.
    pub reuse: bool,
    /// Whether messages go through a packing step (Cap'n Proto's packed encoding).
    pub packed: bool,
}

/// Serialized sizes observed in bytes mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageSizes {
    /// Bytes of the request, framing included.
    pub request_bytes: u64,
    /// Bytes of the response, framing included.
    pub response_bytes: u64,
}

/// What one request/response exchange produced, reduced to numbers two implementations can
/// compare (used by the agreement test, outside any timed loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeSummary {
    /// What the client expects, computed while building the request.
    pub expected: i64,
    /// A digest of the whole response as read back by the client.
    pub response_digest: u64,
}

/// One implementation of one benchmark: the steps the harness times.
///
/// `'s` is the lifetime of the [`Scratch`] the harness lends for a run.
pub trait Contender<'s>: Sized {
    /// What the client remembers about a request to check its response.
    type Expectation: Send + 'static;

    /// A fresh implementation for one run, with the scratch space it may use.
    fn new(setup: Setup, scratch: &'s mut Scratch) -> Result<Self, BenchError>;

    /// Object mode: build a request, handle it and check the response, all in memory.
    fn run_object(&mut self, rng: &mut Xorshift128) -> Result<(), BenchError>;

    /// Bytes mode: as object mode, with both messages serialized to bytes and read back.
    fn run_bytes(&mut self, rng: &mut Xorshift128) -> Result<MessageSizes, BenchError>;

    /// Client side of the pipe modes: builds a request and writes it to `output`.
    fn write_request<W: Write>(
        &mut self,
        rng: &mut Xorshift128,
        output: &mut W,
    ) -> Result<Self::Expectation, BenchError>;

    /// Server side: reads one request, handles it and writes the response; `false` on a clean
    /// end of input before any byte of a request.
    fn serve_request<R: BufRead, W: Write>(
        &mut self,
        input: &mut R,
        output: &mut W,
    ) -> Result<bool, BenchError>;

    /// Client side: reads one response and checks it.
    fn read_response<R: BufRead>(
        &mut self,
        input: &mut R,
        expected: Self::Expectation,
    ) -> Result<(), BenchError>;

    /// One exchange in bytes mode, summarised for comparison with another implementation.
    fn exchange_summary(&mut self, rng: &mut Xorshift128) -> Result<ExchangeSummary, BenchError>;
}

/// CPU time (user + system) of the two processes of a pipe run, beside its wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeCpu {
    /// This process over the timed loop (in pipe-async, both its threads).
    pub client: Duration,
    /// The server process over its whole life, start-up included (`RUSAGE_CHILDREN` once it
    /// has been waited for).
    pub server: Duration,
}

/// The wall time of a pipe run and, where `getrusage` answered, its CPU times.
#[derive(Clone, Copy, Debug)]
pub struct PipeTiming {
    /// Wall-clock time of all iterations.
    pub elapsed: Duration,
    /// CPU time of client and server.
    pub cpu: Option<PipeCpu>,
}

/// How to start the server role of the current executable: the program and the arguments that
/// come before `BENCH IMPLEMENTATION REUSE`.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    /// The executable to start (normally `std::env::current_exe()`).
    pub program: std::path::PathBuf,
    /// Arguments selecting the hidden server role, e.g. `["bench", "serialization-server"]`.
    pub leading_args: Vec<String>,
}

/// Times `iterations` of object mode.
pub fn time_object<'s, C: Contender<'s>>(
    setup: Setup,
    scratch: &'s mut Scratch,
    iterations: u64,
) -> Result<Duration, BenchError> {
    let mut contender = C::new(setup, scratch)?;
    let mut rng = Xorshift128::new();
    let start = Instant::now();
    for _ in 0..iterations {
        contender.run_object(&mut rng)?;
    }
    Ok(start.elapsed())
}

/// Times `iterations` of bytes mode and adds up the message sizes.
pub fn time_bytes<'s, C: Contender<'s>>(
    setup: Setup,
    scratch: &'s mut Scratch,
    iterations: u64,
) -> Result<(Duration, MessageSizes), BenchError> {
    let mut contender = C::new(setup, scratch)?;
    let mut rng = Xorshift128::new();
    let mut total = MessageSizes::default();
    let start = Instant::now();
    for _ in 0..iterations {
        let sizes = contender.run_bytes(&mut rng)?;
        total.request_bytes += sizes.request_bytes;
        total.response_bytes += sizes.response_bytes;
    }
    Ok((start.elapsed(), total))
}

/// A started server process with its two pipe ends.
struct ServerProcess {
    child: Child,
    to_server: BufWriter<std::process::ChildStdin>,
    from_server: BufReader<std::process::ChildStdout>,
}

fn start_server(
    command: &ServerCommand,
    benchmark: Benchmark,
    implementation: Implementation,
    setup: Setup,
) -> Result<ServerProcess, BenchError> {
    let mut child = Command::new(&command.program)
        .args(&command.leading_args)
        .arg(benchmark.name())
        .arg(implementation.name())
        .arg(if setup.reuse { "reuse" } else { "no-reuse" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err(BenchError::ServerFailed("the child has no pipes".into()));
    };
    let mut from_server = BufReader::with_capacity(PIPE_BUFFER_BYTES, stdout);
    let mut ready = [0_u8; 1];
    from_server.read_exact(&mut ready)?;
    if ready[0] != READY_BYTE {
        let _ = child.kill();
        return Err(BenchError::BadHandshake(ready[0]));
    }
    Ok(ServerProcess {
        child,
        to_server: BufWriter::with_capacity(PIPE_BUFFER_BYTES, stdin),
        from_server,
    })
}

/// Closes the server's input and waits for it to exit cleanly.
fn finish_server(
    mut child: Child,
    to_server: BufWriter<std::process::ChildStdin>,
) -> Result<(), BenchError> {
    drop(to_server);
    let status = child.wait()?;
    if status.success() {
        Ok(())
    } else {
        Err(BenchError::ServerFailed(status.to_string()))
    }
}

/// Turns a read that hit the end of the pipe into [`BenchError::ServerClosedEarly`].
fn closed_early(error: BenchError, answered_count: u64, expected_count: u64) -> BenchError {
    let eof = match &error {
        BenchError::Io(io_error) => io_error.kind() == io::ErrorKind::UnexpectedEof,
        BenchError::Capnp(capnp_error) => {
            matches!(capnp_error.kind, capnp::ErrorKind::PrematureEndOfFile)
        }
        _ => false,
    };
    if eof {
        BenchError::ServerClosedEarly {
            answered_count,
            expected_count,
        }
    } else {
        error
    }
}

/// Times `iterations` of pipe mode: one request at a time, waiting for each response.
pub fn time_pipe<'s, C: Contender<'s>>(
    command: &ServerCommand,
    benchmark: Benchmark,
    implementation: Implementation,
    setup: Setup,
    scratch: &'s mut Scratch,
    iterations: u64,
) -> Result<PipeTiming, BenchError> {
    let mut contender = C::new(setup, scratch)?;
    let server_cpu = CpuSpan::start(CpuClock::Children);
    let ServerProcess {
        child,
        mut to_server,
        mut from_server,
    } = start_server(command, benchmark, implementation, setup)?;
    let mut rng = Xorshift128::new();
    let client_cpu = CpuSpan::start(CpuClock::SelfProcess);
    let start = Instant::now();
    for iteration in 0..iterations {
        let expected = contender.write_request(&mut rng, &mut to_server)?;
        to_server.flush()?;
        contender
            .read_response(&mut from_server, expected)
            .map_err(|error| closed_early(error, iteration, iterations))?;
    }
    let elapsed = start.elapsed();
    let client = client_cpu.elapsed();
    finish_server(child, to_server)?;
    Ok(PipeTiming {
        elapsed,
        cpu: pipe_cpu(client, server_cpu.elapsed()),
    })
}

/// Both CPU times, if both clocks answered.
fn pipe_cpu(client: Option<Duration>, server: Option<Duration>) -> Option<PipeCpu> {
    Some(PipeCpu {
        client: client?,
        server: server?,
    })
}

/// Times `iterations` of pipe-async mode: a sender thread writes every request without waiting,
/// while this thread reads and checks the responses, so many requests are in flight at once
/// (as many as the pipes hold).
pub fn time_pipe_async<'s, C: Contender<'s>>(
    command: &ServerCommand,
    benchmark: Benchmark,
    implementation: Implementation,
    setup: Setup,
    scratches: [&'s mut Scratch; 2],
    iterations: u64,
) -> Result<PipeTiming, BenchError> {
    let [sender_scratch, receiver_scratch] = scratches;
    let mut receiver_contender = C::new(setup, receiver_scratch)?;
    let server_cpu = CpuSpan::start(CpuClock::Children);
    let ServerProcess {
        child,
        mut to_server,
        mut from_server,
    } = start_server(command, benchmark, implementation, setup)?;
    let (expectations_sender, expectations) = mpsc::channel::<C::Expectation>();
    let client_cpu = CpuSpan::start(CpuClock::SelfProcess);
    let start = Instant::now();
    let (sent, received) = std::thread::scope(|scope| {
        let sender = scope.spawn(move || -> Result<_, BenchError> {
            // Built on its own thread, so a contender need not be `Send`.
            let mut sender_contender = C::new(setup, sender_scratch)?;
            let mut rng = Xorshift128::new();
            for _ in 0..iterations {
                let expected = sender_contender.write_request(&mut rng, &mut to_server)?;
                to_server.flush()?;
                // The receiver only stops early on an error, which the join below reports.
                if expectations_sender.send(expected).is_err() {
                    break;
                }
            }
            Ok(to_server)
        });
        let mut received = Ok(());
        for iteration in 0..iterations {
            let Ok(expected) = expectations.recv() else {
                break;
            };
            if let Err(error) = receiver_contender.read_response(&mut from_server, expected) {
                received = Err(closed_early(error, iteration, iterations));
                break;
            }
        }
        let elapsed = start.elapsed();
        drop(expectations);
        // The sender has written every request by now (the last response is in), so the
        // process's CPU time covers both threads' work.
        let sent = sender.join().unwrap_or_else(|_| {
            Err(BenchError::ServerFailed(
                "the sender thread panicked".into(),
            ))
        });
        (sent, received.map(|()| elapsed))
    });
    let client = client_cpu.elapsed();
    let to_server = sent?;
    let elapsed = received?;
    finish_server(child, to_server)?;
    Ok(PipeTiming {
        elapsed,
        cpu: pipe_cpu(client, server_cpu.elapsed()),
    })
}

/// The server role: answers requests on stdin with responses on stdout until stdin closes.
/// Flushes whenever no further request is already buffered, so a pipelining client gets its
/// responses in batches and a waiting client gets each one at once.
pub fn serve<'s, C: Contender<'s>>(
    setup: Setup,
    scratch: &'s mut Scratch,
) -> Result<(), BenchError> {
    let mut contender = C::new(setup, scratch)?;
    // Own duplicates of the standard descriptors: std's stdout is line-buffered, which would
    // split binary messages at every newline byte.
    let input = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let output = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let mut input = BufReader::with_capacity(PIPE_BUFFER_BYTES, input);
    let mut output = BufWriter::with_capacity(PIPE_BUFFER_BYTES, output);
    output.write_all(&[READY_BYTE])?;
    output.flush()?;
    while contender.serve_request(&mut input, &mut output)? {
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(())
}
