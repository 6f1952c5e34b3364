//! Cap'n Proto's "suite of silly benchmarks" — carsales, catrank and eval — run side by side by
//! Kestrel's `encoding` crate and by the `capnp` crate (`specs/serialization-benchmarks.md`).
//!
//! Both implementations draw identical data from the spec's generator, do the same server work
//! and run the same client checks, in the modes object, bytes, pipe and pipe-async, each with and
//! without buffer reuse; Cap'n Proto also runs packed. [`run_suite`] measures every selected cell
//! alternately, implementation after implementation within each round, so their ratios come from
//! the same minutes of a shared machine. The pipe modes start the server role of the current
//! executable as a child process (see [`ServerCommand`]); that executable must route its hidden
//! server argument to [`run_server_role`].

pub mod capnp_side;
pub mod cpu;
pub mod error;
pub mod harness;
pub mod kestrel_side;
pub mod report;
pub mod rng;
pub mod svg;

/// The Rust code `capnpc` generates from `schema/*.capnp` (see `build.rs`).
#[allow(
    missing_docs,
    unused_qualifications,
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used
)]
pub mod schema {
    pub mod carsales_capnp {
        include!(concat!(env!("OUT_DIR"), "/carsales_capnp.rs"));
    }
    pub mod catrank_capnp {
        include!(concat!(env!("OUT_DIR"), "/catrank_capnp.rs"));
    }
    pub mod eval_capnp {
        include!(concat!(env!("OUT_DIR"), "/eval_capnp.rs"));
    }
}

use std::time::Duration;

pub use error::BenchError;
pub use harness::{
    ExchangeSummary, MessageSizes, PipeCpu, PipeTiming, Scratch, ServerCommand, Setup,
};
pub use report::{Measurement, Report};

use harness::Contender;

/// One of the three benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Benchmark {
    /// Total value of a parking lot of random cars.
    Carsales,
    /// Re-ranking search results that mention cats or dogs.
    Catrank,
    /// Evaluating a random arithmetic expression tree.
    Eval,
}

impl Benchmark {
    /// Every benchmark, in the spec's order.
    pub const ALL: [Benchmark; 3] = [Benchmark::Carsales, Benchmark::Catrank, Benchmark::Eval];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Carsales => "carsales",
            Benchmark::Catrank => "catrank",
            Benchmark::Eval => "eval",
        }
    }

    /// The iteration count capnproto-rust uses (spec, "Modes"): 10000, 1000, 200000.
    pub fn default_iterations(self) -> u64 {
        match self {
            Benchmark::Carsales => 10_000,
            Benchmark::Catrank => 1_000,
            Benchmark::Eval => 200_000,
        }
    }

    /// Parses a name from [`Benchmark::name`].
    pub fn parse(name: &str) -> Result<Self, BenchError> {
        Self::ALL
            .into_iter()
            .find(|benchmark| benchmark.name() == name)
            .ok_or_else(|| BenchError::UnknownName {
                kind: "benchmark",
                name: name.to_string(),
                expected: "carsales, catrank, eval",
            })
    }
}

/// How messages travel between client and server (spec, "Modes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Build, handle and check in memory, with no serialization.
    Object,
    /// Serialize to a flat buffer and read it back, both ways, in one thread.
    Bytes,
    /// Client and server processes joined by two pipes, one request at a time.
    Pipe,
    /// As pipe, with a sender and a receiver thread keeping many requests in flight.
    PipeAsync,
}

impl Mode {
    /// Every mode, in the spec's order.
    pub const ALL: [Mode; 4] = [Mode::Object, Mode::Bytes, Mode::Pipe, Mode::PipeAsync];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Object => "object",
            Mode::Bytes => "bytes",
            Mode::Pipe => "pipe",
            Mode::PipeAsync => "pipe-async",
        }
    }

    /// Parses a name from [`Mode::name`].
    pub fn parse(name: &str) -> Result<Self, BenchError> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
            .ok_or_else(|| BenchError::UnknownName {
                kind: "mode",
                name: name.to_string(),
                expected: "object, bytes, pipe, pipe-async",
            })
    }
}

/// An implementation under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Implementation {
    /// Kestrel's `encoding` crate.
    Kestrel,
    /// The `capnp` crate, standard (unpacked) serialization.
    Capnp,
    /// The `capnp` crate with its packing step.
    CapnpPacked,
}

impl Implementation {
    /// Every implementation, Kestrel first.
    pub const ALL: [Implementation; 3] = [
        Implementation::Kestrel,
        Implementation::Capnp,
        Implementation::CapnpPacked,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Implementation::Kestrel => "kestrel",
            Implementation::Capnp => "capnp",
            Implementation::CapnpPacked => "capnp-packed",
        }
    }

    /// Parses a name from [`Implementation::name`].
    pub fn parse(name: &str) -> Result<Self, BenchError> {
        Self::ALL
            .into_iter()
            .find(|implementation| implementation.name() == name)
            .ok_or_else(|| BenchError::UnknownName {
                kind: "implementation",
                name: name.to_string(),
                expected: "kestrel, capnp, capnp-packed",
            })
    }

    /// Whether this implementation runs `mode`: packing changes nothing in object mode, so the
    /// packed variant only runs the modes that serialize.
    pub fn runs(self, mode: Mode) -> bool {
        !(self == Implementation::CapnpPacked && mode == Mode::Object)
    }

    /// The harness setup for this implementation.
    pub fn setup(self, reuse: bool) -> Setup {
        Setup {
            reuse,
            packed: self == Implementation::CapnpPacked,
        }
    }
}

/// Parses `reuse` / `no-reuse`.
pub fn parse_reuse(name: &str) -> Result<bool, BenchError> {
    match name {
        "reuse" => Ok(true),
        "no-reuse" => Ok(false),
        _ => Err(BenchError::UnknownName {
            kind: "reuse setting",
            name: name.to_string(),
            expected: "reuse, no-reuse",
        }),
    }
}

/// Calls the generic function `$function::<C>($($argument),*)` with `C` the contender type for
/// `($benchmark, $implementation)`.
macro_rules! dispatch {
    ($benchmark:expr, $implementation:expr, $function:ident ( $($argument:expr),* $(,)? )) => {
        match ($benchmark, $implementation) {
            (Benchmark::Carsales, Implementation::Kestrel) => {
                $function::<kestrel_side::KestrelContender<kestrel_side::Carsales>>($($argument),*)
            }
            (Benchmark::Catrank, Implementation::Kestrel) => {
                $function::<kestrel_side::KestrelContender<kestrel_side::Catrank>>($($argument),*)
            }
            (Benchmark::Eval, Implementation::Kestrel) => {
                $function::<kestrel_side::KestrelContender<kestrel_side::Eval>>($($argument),*)
            }
            (Benchmark::Carsales, Implementation::Capnp | Implementation::CapnpPacked) => {
                $function::<capnp_side::CapnpContender<'_, capnp_side::Carsales>>($($argument),*)
            }
            (Benchmark::Catrank, Implementation::Capnp | Implementation::CapnpPacked) => {
                $function::<capnp_side::CapnpContender<'_, capnp_side::Catrank>>($($argument),*)
            }
            (Benchmark::Eval, Implementation::Capnp | Implementation::CapnpPacked) => {
                $function::<capnp_side::CapnpContender<'_, capnp_side::Eval>>($($argument),*)
            }
        }
    };
}

/// One cell of the suite: a benchmark, an implementation, a mode and a reuse setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The benchmark.
    pub benchmark: Benchmark,
    /// The implementation.
    pub implementation: Implementation,
    /// The mode.
    pub mode: Mode,
    /// Whether buffers are reused.
    pub reuse: bool,
}

/// The outcome of one timed run of a cell.
#[derive(Clone, Copy, Debug)]
pub struct RunOutcome {
    /// Wall-clock time of all iterations.
    pub elapsed: Duration,
    /// Message sizes added up over all iterations (bytes mode only).
    pub sizes: Option<MessageSizes>,
    /// CPU time of client and server over all iterations (pipe modes only).
    pub cpu: Option<PipeCpu>,
}

fn run_cell_with<'s, C: Contender<'s>>(
    cell: Cell,
    command: &ServerCommand,
    scratches: &'s mut [Scratch; 2],
    iterations: u64,
) -> Result<RunOutcome, BenchError> {
    let setup = cell.implementation.setup(cell.reuse);
    let [first, second] = scratches;
    match cell.mode {
        Mode::Object => Ok(RunOutcome {
            elapsed: harness::time_object::<C>(setup, first, iterations)?,
            sizes: None,
            cpu: None,
        }),
        Mode::Bytes => {
            let (elapsed, sizes) = harness::time_bytes::<C>(setup, first, iterations)?;
            Ok(RunOutcome {
                elapsed,
                sizes: Some(sizes),
                cpu: None,
            })
        }
        Mode::Pipe => {
            let timing = harness::time_pipe::<C>(
                command,
                cell.benchmark,
                cell.implementation,
                setup,
                first,
                iterations,
            )?;
            Ok(RunOutcome {
                elapsed: timing.elapsed,
                sizes: None,
                cpu: timing.cpu,
            })
        }
        Mode::PipeAsync => {
            let timing = harness::time_pipe_async::<C>(
                command,
                cell.benchmark,
                cell.implementation,
                setup,
                [first, second],
                iterations,
            )?;
            Ok(RunOutcome {
                elapsed: timing.elapsed,
                sizes: None,
                cpu: timing.cpu,
            })
        }
    }
}

/// Runs one cell once, `iterations` times over, and returns its time.
pub fn run_cell(
    cell: Cell,
    command: &ServerCommand,
    iterations: u64,
) -> Result<RunOutcome, BenchError> {
    if !cell.implementation.runs(cell.mode) {
        return Err(BenchError::Unsupported {
            implementation: cell.implementation.name(),
            what: "object mode (packing only applies to serialized messages)",
        });
    }
    let mut scratches = [Scratch::new(), Scratch::new()];
    dispatch!(
        cell.benchmark,
        cell.implementation,
        run_cell_with(cell, command, &mut scratches, iterations)
    )
}

fn serve_with<'s, C: Contender<'s>>(
    setup: Setup,
    scratch: &'s mut Scratch,
) -> Result<(), BenchError> {
    harness::serve::<C>(setup, scratch)
}

/// The server role of the pipe modes: `args` are `BENCH IMPLEMENTATION REUSE` as a
/// [`ServerCommand`] appends them. Serves stdin to stdout until stdin closes.
pub fn run_server_role(args: &[String]) -> Result<(), BenchError> {
    let [benchmark, implementation, reuse] = args else {
        return Err(BenchError::UnknownName {
            kind: "server arguments",
            name: args.join(" "),
            expected: "BENCH IMPLEMENTATION REUSE",
        });
    };
    let benchmark = Benchmark::parse(benchmark)?;
    let implementation = Implementation::parse(implementation)?;
    let setup = implementation.setup(parse_reuse(reuse)?);
    let mut scratch = Scratch::new();
    dispatch!(benchmark, implementation, serve_with(setup, &mut scratch))
}

fn summaries_with<'s, C: Contender<'s>>(
    setup: Setup,
    scratch: &'s mut Scratch,
    iterations: u64,
) -> Result<Vec<ExchangeSummary>, BenchError> {
    let mut contender = C::new(setup, scratch)?;
    let mut rng = rng::Xorshift128::new();
    (0..iterations)
        .map(|_| contender.exchange_summary(&mut rng))
        .collect()
}

/// The first `iterations` exchanges of `benchmark` through `implementation` in bytes mode,
/// each checked by the client and summarised (expectation and response digest), for comparing
/// implementations with each other.
pub fn exchange_summaries(
    benchmark: Benchmark,
    implementation: Implementation,
    reuse: bool,
    iterations: u64,
) -> Result<Vec<ExchangeSummary>, BenchError> {
    let setup = implementation.setup(reuse);
    let mut scratch = Scratch::new();
    dispatch!(
        benchmark,
        implementation,
        summaries_with(setup, &mut scratch, iterations)
    )
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Benchmarks to run.
    pub benchmarks: Vec<Benchmark>,
    /// Modes to run.
    pub modes: Vec<Mode>,
    /// Implementations to run.
    pub implementations: Vec<Implementation>,
    /// Multiplier on the default iteration counts (at least one iteration always runs).
    pub scale: f64,
    /// Timed runs of each cell; the report keeps the median.
    pub rounds: u32,
    /// Reuse settings to run (`false`: fresh buffers, `true`: reused), in this order.
    pub reuse: Vec<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            benchmarks: Benchmark::ALL.to_vec(),
            modes: Mode::ALL.to_vec(),
            implementations: Implementation::ALL.to_vec(),
            scale: 1.0,
            rounds: 3,
            reuse: vec![false, true],
        }
    }
}

impl Options {
    /// The iteration count for `benchmark` at this scale.
    pub fn iterations(&self, benchmark: Benchmark) -> u64 {
        let scaled = (benchmark.default_iterations() as f64 * self.scale).round();
        if scaled.is_finite() && scaled >= 1.0 {
            scaled as u64
        } else {
            1
        }
    }
}

/// Runs every selected cell `options.rounds` times. Within a round the implementations of a
/// (benchmark, mode, reuse) row run one after the other, in alternating order from round to
/// round, so each ratio compares runs that were minutes — not hours — apart. `progress` is
/// called after every timed run.
pub fn run_suite(
    options: &Options,
    command: &ServerCommand,
    progress: &mut dyn FnMut(&Cell, u32, &RunOutcome),
) -> Result<Report, BenchError> {
    let mut report = Report::new(options);
    for &benchmark in &options.benchmarks {
        let iterations = options.iterations(benchmark);
        for &mode in &options.modes {
            for &reuse in &options.reuse {
                let mut implementations: Vec<Implementation> = options
                    .implementations
                    .iter()
                    .copied()
                    .filter(|implementation| implementation.runs(mode))
                    .collect();
                for round in 0..options.rounds {
                    for &implementation in &implementations {
                        let cell = Cell {
                            benchmark,
                            implementation,
                            mode,
                            reuse,
                        };
                        let outcome = run_cell(cell, command, iterations)?;
                        progress(&cell, round, &outcome);
                        report.record(cell, iterations, &outcome);
                    }
                    implementations.reverse();
                }
            }
        }
    }
    Ok(report)
}
