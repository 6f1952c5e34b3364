//! `kestrel bench`: side-by-side benchmarks against peer implementations.
//!
//! `kestrel bench serialization` runs Cap'n Proto's carsales / catrank / eval suite with
//! Kestrel's `encoding` crate and the `capnp` crate (`crates/bench/src/serialization`). The peer
//! is heavy and needs the `capnp` schema compiler, so this area is only built with the cargo
//! feature `peers`; without it, every verb explains how to enable it and exits with 2.

// Without `peers` the options are parsed (so `--help` still documents them) but never read.
#![cfg_attr(not(feature = "peers"), allow(dead_code))]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use crate::output::CommandResult;

/// The verbs of `kestrel bench`.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// carsales, catrank and eval: Kestrel's encoding vs Cap'n Proto, in object, bytes, pipe and
    /// pipe-async modes, with and without buffer reuse. Prints a table per benchmark and writes
    /// an SVG bar chart.
    Serialization(SerializationArgs),
    /// The server role of the pipe modes (started by `serialization` itself; reads requests on
    /// stdin, answers on stdout).
    #[command(hide = true, name = "serialization-server")]
    SerializationServer {
        /// BENCH IMPLEMENTATION REUSE.
        args: Vec<String>,
    },
}

/// A benchmark of the serialization suite.
#[derive(Clone, Copy, ValueEnum)]
pub enum BenchName {
    /// Total value of a parking lot of random cars.
    Carsales,
    /// Re-ranking search results mentioning cats and dogs.
    Catrank,
    /// Evaluating a random expression tree.
    Eval,
}

/// A mode of the serialization suite.
#[derive(Clone, Copy, ValueEnum)]
pub enum ModeName {
    /// In memory, no serialization.
    Object,
    /// Serialized to bytes and read back, one thread.
    Bytes,
    /// Client and server processes over two pipes, one request at a time.
    Pipe,
    /// As pipe, with many requests in flight.
    PipeAsync,
}

/// Options of `kestrel bench serialization`.
#[derive(Args)]
pub struct SerializationArgs {
    /// Benchmarks to run (default: all); repeat or separate with commas.
    #[arg(long, value_enum, value_delimiter = ',')]
    bench: Vec<BenchName>,
    /// Modes to run (default: all); repeat or separate with commas.
    #[arg(long, value_enum, value_delimiter = ',')]
    mode: Vec<ModeName>,
    /// Multiplier on the default iteration counts (carsales 10000, catrank 1000, eval 200000).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Timed runs of each cell; the table shows the median.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Print the results as JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Where to write the SVG bar chart.
    #[arg(long, default_value = "serialization-benchmarks.svg")]
    svg: PathBuf,
    /// Do not write the SVG chart.
    #[arg(long)]
    no_svg: bool,
}

/// How to build kestrel with the benchmarks.
#[cfg(not(feature = "peers"))]
const ENABLE_HINT: &str =
    "kestrel was built without the `peers` feature, which `kestrel bench` needs \
(the peers, such as the capnp crate, stay out of the default build). Build and run it with:\n  \
cargo run --release -p kestrel-cli --features peers -- bench serialization\n\
(the capnp peer needs the Cap'n Proto schema compiler: apt-get install -y capnproto)";

/// `kestrel bench ...` without the `peers` feature: explains how to enable it, exit 2.
#[cfg(not(feature = "peers"))]
pub fn run(_command: BenchCommand) -> CommandResult {
    eprintln!("{ENABLE_HINT}");
    Ok(ExitCode::from(2))
}

/// `kestrel bench ...`.
#[cfg(feature = "peers")]
pub fn run(command: BenchCommand) -> CommandResult {
    use kestrel_bench::serialization as suite;
    match command {
        BenchCommand::SerializationServer { args } => {
            suite::run_server_role(&args)
                .map_err(|error| format!("serialization server: {error}"))?;
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Serialization(args) => run_serialization(args),
    }
}

#[cfg(feature = "peers")]
fn run_serialization(args: SerializationArgs) -> CommandResult {
    use kestrel_bench::serialization as suite;
    if !(args.scale.is_finite() && args.scale > 0.0) {
        eprintln!("error: --scale must be a positive number");
        return Ok(ExitCode::from(2));
    }
    if args.rounds == 0 {
        eprintln!("error: --rounds must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let mut options = suite::Options {
        scale: args.scale,
        rounds: args.rounds,
        ..suite::Options::default()
    };
    if !args.bench.is_empty() {
        options.benchmarks = args
            .bench
            .iter()
            .map(|name| match name {
                BenchName::Carsales => suite::Benchmark::Carsales,
                BenchName::Catrank => suite::Benchmark::Catrank,
                BenchName::Eval => suite::Benchmark::Eval,
            })
            .collect();
    }
    if !args.mode.is_empty() {
        options.modes = args
            .mode
            .iter()
            .map(|name| match name {
                ModeName::Object => suite::Mode::Object,
                ModeName::Bytes => suite::Mode::Bytes,
                ModeName::Pipe => suite::Mode::Pipe,
                ModeName::PipeAsync => suite::Mode::PipeAsync,
            })
            .collect();
    }
    let program =
        std::env::current_exe().map_err(|error| format!("current executable: {error}"))?;
    let command = suite::ServerCommand {
        program,
        leading_args: vec!["bench".into(), "serialization-server".into()],
    };
    let rounds = options.rounds;
    let report = suite::run_suite(&options, &command, &mut |cell, round, outcome| {
        eprintln!(
            "{:<9} {:<10} {:<8} {:<13} round {}/{}  {:.3} s",
            cell.benchmark.name(),
            cell.mode.name(),
            if cell.reuse { "reuse" } else { "no-reuse" },
            cell.implementation.name(),
            round + 1,
            rounds,
            outcome.elapsed.as_secs_f64()
        );
    })
    .map_err(|error| error.to_string())?;
    if args.json {
        crate::output::print_json(&report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    if !args.no_svg {
        std::fs::write(&args.svg, suite::svg::render(&report))
            .map_err(|error| format!("writing {}: {error}", args.svg.display()))?;
        eprintln!("chart written to {}", args.svg.display());
    }
    Ok(ExitCode::SUCCESS)
}
