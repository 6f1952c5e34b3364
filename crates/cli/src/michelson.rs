//! `kestrel michelson ...`: the TZT runner, `run-script` (octez-client's `run script`),
//! `typecheck` and typed `pack`.

use crate::client as engine;
use crate::output::{print_json, CommandResult};
use clap::Subcommand;
use kestrel_michelson::ExecutionError;
use kestrel_michelson_conformance::run_script::{self, RunScriptError, RunScriptOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The verbs of `kestrel michelson`.
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum MichelsonCommand {
    /// Run TZT unit tests (files or directories); prints one line per file and a summary.
    Tzt {
        /// TZT files or directories holding them (`-`: one test on standard input).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Run every test in legacy mode, accepting the deprecated instructions and types that
        /// contracts originated under earlier protocols may use (the suite's `legacy/` tests).
        #[arg(long)]
        legacy: bool,
        /// Print a JSON report.
        #[arg(long)]
        json: bool,
    },
    /// Run a script on a storage and an input, printing what `octez-client run script` prints;
    /// takes octez-client's flags with their units (amounts in tez, gas in gas units).
    RunScript {
        /// The script file.
        script: PathBuf,
        /// The initial storage (Micheline).
        #[arg(long, allow_hyphen_values = true)]
        storage: String,
        /// The parameter (Micheline).
        #[arg(long, allow_hyphen_values = true)]
        input: String,
        /// Amount transferred, in tez (octez-client's default: 0.05).
        #[arg(long, allow_hyphen_values = true, value_parser = parse_tez_mutez)]
        amount: Option<i64>,
        /// Balance of the contract, in tez (default: 4,000,000).
        #[arg(long, allow_hyphen_values = true, value_parser = parse_tez_mutez)]
        balance: Option<i64>,
        /// Block level (default: 1).
        #[arg(long)]
        level: Option<u64>,
        /// Block timestamp (RFC 3339 or seconds since the epoch).
        #[arg(long, allow_hyphen_values = true)]
        now: Option<String>,
        /// `SENDER`: the contract or account making the call (octez-client's `--source`).
        #[arg(long)]
        source: Option<String>,
        /// `SOURCE`: the implicit account paying for the operation (octez-client's `--payer`).
        #[arg(long)]
        payer: Option<String>,
        /// `SELF_ADDRESS`.
        #[arg(long)]
        self_address: Option<String>,
        /// Gas available to typechecking and execution, in gas units (default: 1,040,000).
        #[arg(long)]
        gas: Option<String>,
        /// Entrypoint to call.
        #[arg(long)]
        entrypoint: Option<String>,
        /// Print the stack and gas after every step.
        #[arg(long)]
        trace_stack: bool,
        /// Print a JSON report.
        #[arg(long)]
        json: bool,
    },
    /// Typecheck a script.
    Typecheck {
        /// The script file (`-` for standard input).
        script: PathBuf,
        /// Legacy mode, as for a contract originated under an earlier protocol: accept the
        /// deprecated instructions and types (octez-client's `--legacy`).
        #[arg(long)]
        legacy: bool,
        /// Print a JSON report.
        #[arg(long)]
        json: bool,
    },
    /// PACK a value of a type (optimized forms of addresses, keys, timestamps, ...).
    Pack {
        /// The type (Micheline).
        #[arg(long = "type")]
        ty: String,
        /// The value (Micheline).
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// Print as JSON (`{"packed": "0x..."}`).
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `kestrel michelson` command.
pub fn run(command: MichelsonCommand) -> CommandResult {
    match command {
        MichelsonCommand::Tzt {
            paths,
            legacy,
            json,
        } => tzt(&paths, legacy, json),
        MichelsonCommand::RunScript {
            script,
            storage,
            input,
            amount,
            balance,
            level,
            now,
            source,
            payer,
            self_address,
            gas,
            entrypoint,
            trace_stack,
            json,
        } => {
            let now = match now {
                None => None,
                Some(text) => Some(parse_now(&text)?),
            };
            let gas_limit_milli = match gas {
                None => None,
                Some(text) => {
                    Some(parse_gas_milli(&text).ok_or_else(|| format!("invalid --gas {text}"))?)
                }
            };
            let options = RunScriptOptions {
                storage,
                input,
                amount_mutez: amount,
                balance_mutez: balance,
                level,
                now,
                sender: source,
                source: payer,
                self_address,
                entrypoint,
                trace_stack,
                gas_limit_milli,
            };
            run_script_command(&script, &options, json)
        }
        MichelsonCommand::Typecheck {
            script,
            legacy,
            json,
        } => typecheck(&script, legacy, json),
        MichelsonCommand::Pack { ty, value, json } => pack(&ty, &value, json),
    }
}

/// Gas in gas units as octez-client takes it (`1040000`, `12.5`), in milligas.
fn parse_gas_milli(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || fraction.len() > 3 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let fraction_milli: u64 = format!("{fraction:0<3}").parse().ok()?;
    whole.checked_mul(1000)?.checked_add(fraction_milli)
}

fn parse_now(text: &str) -> Result<i64, String> {
    if let Ok(seconds) = text.parse::<i64>() {
        return Ok(seconds);
    }
    kestrel_michelson::timestamp_from_rfc3339(text)
        .and_then(|t| t.to_i64())
        .ok_or_else(|| format!("invalid timestamp {text}"))
}

fn collect_tzt(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                pending.extend(entries.flatten().map(|e| e.path()));
            }
        } else if path.extension().is_some_and(|e| e == "tzt") || paths.contains(&path) {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn tzt(paths: &[PathBuf], legacy: bool, json: bool) -> CommandResult {
    let files = collect_tzt(paths);
    if files.is_empty() {
        return Err("no .tzt file found in the paths given".to_string());
    }
    let mut passed = 0;
    let mut reports = Vec::new();
    for file in &files {
        let result = read(file).and_then(|source| {
            kestrel_michelson_conformance::tzt::run_tzt_with(&source, legacy)
                .map_err(|e| e.to_string())
        });
        if result.is_ok() {
            passed += 1;
        }
        if !json {
            match &result {
                Ok(()) => println!("PASS {}", file.display()),
                Err(why) => println!("FAIL {}: {why}", file.display()),
            }
        }
        reports.push(serde_json::json!({
            "file": file.display().to_string(),
            "passed": result.is_ok(),
            "reason": result.err(),
        }));
    }
    let failed = files.len() - passed;
    if json {
        print_json(&serde_json::json!({ "passed": passed, "failed": failed, "files": reports }));
    } else {
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn read(path: &Path) -> Result<String, String> {
    crate::input::read_text(&path.display().to_string()).map_err(|e| e.to_string())
}

fn run_script_command(script: &Path, options: &RunScriptOptions, json: bool) -> CommandResult {
    let source = read(script)?;
    match run_script::run_script(&source, options) {
        Ok(output) => {
            if json {
                let print =
                    |n: &kestrel_micheline::Node| kestrel_micheline::print::to_text_single_line(n);
                print_json(&serde_json::json!({
                    "storage": print(&output.storage),
                    "operations": output.operations,
                    "big_map_diff": output.big_map_diff,
                    "trace": output.trace.iter().map(|s| serde_json::json!({
                        "location": s.location,
                        "gas_milli": s.gas_milli,
                        "stack": s.stack.iter().map(print).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                }));
            } else {
                print!("{}", run_script::print_output(&output));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            if let RunScriptError::Execution { trace, .. } = &error {
                if options.trace_stack && !json {
                    let mut out = String::from("trace\n");
                    run_script::print_trace(&mut out, trace);
                    eprint!("{out}");
                }
            }
            Err(match &error {
                RunScriptError::Typecheck(e) => format!(
                    "ill-typed script or data: {}",
                    crate::client::describe_typecheck_error(&e.kind)
                ),
                // The storage or the input does not have its type: say which, at its line and
                // column.
                RunScriptError::Execution {
                    error: ExecutionError::IllTypedData(e),
                    ..
                } => {
                    let (name, text) = match engine::ill_typed_text(&source, &options.storage) {
                        engine::Part::Storage => ("storage", &options.storage),
                        _ => ("input", &options.input),
                    };
                    let (line, column) = e.span.line_column(text);
                    format!(
                        "ill-typed {name} at line {line}, column {column}: {}",
                        crate::client::describe_typecheck_error(&e.kind)
                    )
                }
                // A failure while running: where the failing instruction is in the script.
                RunScriptError::Execution {
                    error,
                    location: Some(location),
                    ..
                } => match engine::failure_span(&source, *location) {
                    Some(span) => format!("{}, {error}", span.location_text(&source)),
                    None => error.to_string(),
                },
                _ => error.to_string(),
            })
        }
    }
}

fn typecheck(script: &Path, legacy: bool, json: bool) -> CommandResult {
    let source = read(script)?;
    let node = kestrel_micheline::parse_toplevel(&source).map_err(|e| e.describe(&source))?;
    let config = kestrel_michelson::Config {
        legacy,
        ..kestrel_michelson::Config::default()
    };
    match kestrel_michelson::Script::typecheck(&node, &config) {
        Ok(_) => {
            if json {
                print_json(&serde_json::json!({ "well_typed": true }));
            } else {
                println!("Well typed");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let (line, column) = e.span.line_column(&source);
            if json {
                print_json(
                    &serde_json::json!({ "well_typed": false, "line": line, "column": column, "error": crate::client::describe_typecheck_error(&e.kind) }),
                );
                Ok(ExitCode::from(1))
            } else {
                Err(format!(
                    "ill-typed script at line {line}, column {column}: {}",
                    crate::client::describe_typecheck_error(&e.kind)
                ))
            }
        }
    }
}

/// A tez amount as octez-client writes it (`1`, `0.05`, `1_000`), in mutez; a negative or
/// malformed amount is a usage error.
fn parse_tez_mutez(text: &str) -> Result<i64, String> {
    run_script::parse_tez(text).ok_or_else(|| format!("{text} is not a non-negative tez amount"))
}

fn pack(ty: &str, value: &str, json: bool) -> CommandResult {
    let ill_typed = |e: kestrel_michelson::TypecheckError| {
        let (line, column) = e.span.line_column(value);
        format!(
            "ill-typed data at line {line}, column {column}: {}",
            crate::client::describe_typecheck_error(&e.kind)
        )
    };
    let ty_node = kestrel_micheline::parse_expression(ty).map_err(|e| e.describe(ty))?;
    let value_node = kestrel_micheline::parse_expression(value).map_err(|e| e.describe(value))?;
    let value_node = kestrel_michelson::expand_macros(&value_node).map_err(ill_typed)?;
    let ty = kestrel_michelson::parse_type(&ty_node).map_err(|e| e.to_string())?;
    if !ty.is_packable() {
        return Err(format!("type {ty} is not packable"));
    }
    let environment = kestrel_michelson::Environment::default();
    let self_parameter = kestrel_micheline::Node::prim(kestrel_micheline::Prim::T_unit, vec![]);
    let mut host = kestrel_michelson::EmptyHost::default();
    let context = kestrel_michelson::CodeContext {
        environment: &environment,
        self_parameter: &self_parameter,
        host: &mut host,
        legacy: false,
    };
    let value = kestrel_michelson::typecheck_data(&value_node, &ty, &context).map_err(ill_typed)?;
    let bytes = kestrel_michelson::pack(&value, &ty).map_err(|e| e.to_string())?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if json {
        crate::output::print_json(&serde_json::json!({ "packed": format!("0x{hex}") }));
    } else {
        println!("0x{hex}");
    }
    Ok(ExitCode::SUCCESS)
}
