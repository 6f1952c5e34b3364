//! `kestrel-serialization-bench`: the serialization suite (carsales, catrank, eval; Kestrel vs
//! Cap'n Proto) as a standalone binary of the bench crate. `kestrel bench serialization` (the CLI
//! built with `--features peers`) runs the same suite with the same options; this binary exists so
//! the suite can be run and profiled without the CLI.
//!
//! Usage: `kestrel-serialization-bench [--bench B[,B]] [--mode M[,M]] [--implementation I[,I]]
//! [--reuse no-reuse|reuse[,..]] [--scale F]
//! [--rounds N] [--json] [--svg PATH]`; `kestrel-serialization-bench server BENCH IMPLEMENTATION REUSE` is the
//! hidden server role the pipe modes start.

use std::process::ExitCode;

use kestrel_bench::serialization::{self as suite, Benchmark, Mode};

const USAGE: &str = "usage: kestrel-serialization-bench [--bench carsales|catrank|eval[,..]] \
[--mode object|bytes|pipe|pipe-async[,..]] [--implementation kestrel|capnp|capnp-packed[,..]] [--reuse no-reuse|reuse[,..]] [--scale F] [--rounds N] [--json] [--svg PATH]";

struct Arguments {
    options: suite::Options,
    json: bool,
    svg: Option<String>,
}

fn parse_arguments(args: &[String]) -> Result<Arguments, String> {
    let mut parsed = Arguments {
        options: suite::Options::default(),
        json: false,
        svg: Some("serialization-benchmarks.svg".into()),
    };
    let mut benchmarks = Vec::new();
    let mut modes = Vec::new();
    let mut index = 0;
    while index < args.len() {
        let flag = args[index].as_str();
        let mut value = || {
            index += 1;
            args.get(index)
                .cloned()
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "--bench" => {
                for name in value()?.split(',') {
                    benchmarks.push(Benchmark::parse(name).map_err(|e| e.to_string())?);
                }
            }
            "--mode" => {
                for name in value()?.split(',') {
                    modes.push(Mode::parse(name).map_err(|e| e.to_string())?);
                }
            }
            "--scale" => {
                let scale: f64 = value()?.parse().map_err(|_| "--scale needs a number")?;
                if !(scale.is_finite() && scale > 0.0) {
                    return Err("--scale must be positive".into());
                }
                parsed.options.scale = scale;
            }
            "--rounds" => {
                let rounds: u32 = value()?.parse().map_err(|_| "--rounds needs a number")?;
                parsed.options.rounds = rounds.max(1);
            }
            "--implementation" => {
                let mut implementations = Vec::new();
                for name in value()?.split(',') {
                    implementations
                        .push(suite::Implementation::parse(name).map_err(|e| e.to_string())?);
                }
                parsed.options.implementations = implementations;
            }
            "--reuse" => {
                let mut settings = Vec::new();
                for name in value()?.split(',') {
                    settings.push(suite::parse_reuse(name).map_err(|e| e.to_string())?);
                }
                parsed.options.reuse = settings;
            }
            "--json" => parsed.json = true,
            "--svg" => parsed.svg = Some(value()?),
            "--no-svg" => parsed.svg = None,
            _ => return Err(format!("unknown argument `{flag}`")),
        }
        index += 1;
    }
    if !benchmarks.is_empty() {
        parsed.options.benchmarks = benchmarks;
    }
    if !modes.is_empty() {
        parsed.options.modes = modes;
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("server") {
        return match suite::run_server_role(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("serialization server: {error}");
                ExitCode::from(1)
            }
        };
    }
    let arguments = match parse_arguments(&args) {
        Ok(arguments) => arguments,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => {
            eprintln!("error: current executable: {error}");
            return ExitCode::from(1);
        }
    };
    let command = suite::ServerCommand {
        program,
        leading_args: vec!["server".into()],
    };
    let rounds = arguments.options.rounds;
    let result = suite::run_suite(&arguments.options, &command, &mut |cell, round, outcome| {
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
    });
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(1);
        }
    };
    if arguments.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        );
    } else {
        print!("{}", report.to_table());
    }
    if let Some(path) = arguments.svg {
        if let Err(error) = std::fs::write(&path, suite::svg::render(&report)) {
            eprintln!("error: writing {path}: {error}");
            return ExitCode::from(1);
        }
        eprintln!("chart written to {path}");
    }
    ExitCode::SUCCESS
}
