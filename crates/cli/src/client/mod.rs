//! `kestrel client ...`: octez-client's offline commands with octez-client's argument syntax,
//! options, units and defaults, printing what octez-client prints, so recorded octez-client
//! command lines run unchanged (`kestrel client --mode mockup hash data 1 of type int`).
//!
//! Map: [`grammar`] (the command line), [`engine`] (the only calls into the Michelson crate),
//! [`mockup`] (the mockup mode's stateful commands: base directory, operations, receipts),
//! [`stack`] (typed stacks of `normalize
//! stack`), [`report`] (errors in octez-client's words). `--json` prints one JSON object
//! instead, on success and on failure.

mod engine;
mod grammar;
pub(crate) mod mockup;
mod report;
mod stack;

use crate::input;
pub use engine::describe as describe_typecheck_error;
pub use engine::{failure_span, ill_typed_text, Part};
use engine::{Checker, RunFailure, RunRequest, UnparsingMode};
use kestrel_micheline::print::{write_indented, Wrapping};
use kestrel_micheline::Node;
use report::ClientError;
use std::process::ExitCode;

/// octez-client's default `--amount` for `run script`: 0.05 tez.
pub const DEFAULT_AMOUNT_MUTEZ: i64 = 50_000;

/// What a command prints on success: octez-client's text and the JSON object.
struct Success {
    text: String,
    json: serde_json::Value,
}

/// Runs `kestrel client ARGS`.
pub fn run(args: &[String]) -> ExitCode {
    // `--json` is kestrel's, not octez-client's: accepted anywhere, for every command.
    let json = args.iter().any(|a| a == "--json");
    let args: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
    if grammar::asks_for_usage(&args) {
        print!("{}", grammar::usage());
        return if args.is_empty() {
            ExitCode::from(report::EXIT_USAGE)
        } else {
            ExitCode::SUCCESS
        };
    }
    let invocation = grammar::parse(&args).map_err(ClientError::usage);
    if let Ok(invocation) = &invocation {
        if mockup::handles(invocation.command.name) {
            return run_mockup(invocation, json);
        }
    }
    let result = invocation.and_then(|invocation| dispatch(&invocation));
    match result {
        Ok(success) => {
            if json {
                crate::output::print_json(&success.json);
            } else {
                print!("{}", success.text);
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            if json {
                crate::output::print_json(&error.to_json());
            } else {
                eprint!("{}", error.render());
            }
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs one of the mockup mode's stateful commands; with `--json`, prints what it printed as
/// `{"stdout", "stderr", "exit_code"}`.
fn run_mockup(invocation: &grammar::Invocation, json: bool) -> ExitCode {
    let printed = mockup::run(invocation);
    if json {
        crate::output::print_json(&serde_json::json!({
            "stdout": printed.stdout,
            "stderr": printed.stderr,
            "exit_code": printed.exit_code,
        }));
    } else {
        print!("{}", printed.stdout);
        eprint!("{}", printed.stderr);
    }
    ExitCode::from(printed.exit_code)
}

fn dispatch(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    match invocation.command.name {
        "run script" => run_script(invocation),
        "typecheck script" => typecheck_script(invocation),
        "typecheck data" => typecheck_data(invocation),
        "hash data" => hash_data(invocation),
        "normalize data" => normalize_data(invocation),
        "normalize script" => normalize_script(invocation),
        "normalize type" => normalize_type(invocation),
        "normalize stack" => normalize_stack(invocation),
        "expand macros in" => expand_macros(invocation),
        "convert script" => convert(invocation, true),
        "convert data" => convert(invocation, false),
        "unpack michelson data" => unpack_data(invocation),
        other => Err(ClientError::usage(grammar::UsageError::UnknownCommand(
            other.to_string(),
        ))),
    }
}

/// Parses a command-line parameter as one Micheline expression (octez-client's
/// `Erroneous command line argument N (TEXT).` when it is not one).
fn expression_param(invocation: &grammar::Invocation, name: &str) -> Result<Node, ClientError> {
    let text = invocation.param(name);
    kestrel_micheline::parse_expression(text)
        .map_err(|error| ClientError::argument(invocation.position(name), text, &error))
}

/// A script parameter: a file when one has that name (`-` for standard input), else the text.
fn script_text(
    invocation: &grammar::Invocation,
    name: &str,
) -> Result<(String, String), ClientError> {
    let given = invocation.param(name);
    if given == "-" || std::path::Path::new(given).exists() {
        let text = input::read_text(given).map_err(ClientError::input)?;
        Ok((given.to_string(), text))
    } else {
        Ok(("command line".to_string(), given.to_string()))
    }
}

fn parse_script(origin: &str, text: &str) -> Result<Node, ClientError> {
    kestrel_micheline::parse_toplevel(text)
        .map_err(|error| ClientError::parse_in(origin, text, &error))
}

fn unparsing_mode(invocation: &grammar::Invocation) -> Result<UnparsingMode, ClientError> {
    match invocation.option("--unparsing-mode") {
        None | Some("Readable") => Ok(UnparsingMode::Readable),
        Some("Optimized") => Ok(UnparsingMode::Optimized),
        Some("Optimized_legacy") => Ok(UnparsingMode::OptimizedLegacy),
        Some(other) => Err(ClientError::option(
            "--unparsing-mode",
            &format!(
                "Unknown unparsing mode {other}; expected Readable, Optimized or Optimized_legacy."
            ),
        )),
    }
}

fn text_line(node: &Node) -> String {
    let mut text = kestrel_micheline::print::to_text_indented(node);
    text.push('\n');
    text
}

/// Parses a tez amount as octez-client does (`1`, `0.05`, `1_000.5`, at most 6 decimals, never
/// negative) into mutez.
fn parse_tez(option: &str, text: &str) -> Result<i64, ClientError> {
    let bad = || {
        ClientError::option(
            option,
            &format!(
                "Invalid \u{a729} notation in parameter {}: {text}",
                &option[2..]
            ),
        )
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if whole.is_empty() || !digits(whole) || !digits(fraction) || text.starts_with('_') {
        return Err(bad());
    }
    let fraction: String = fraction.chars().filter(|c| *c != '_').collect();
    if fraction.len() > 6 {
        return Err(bad());
    }
    let whole: String = whole.chars().filter(|c| *c != '_').collect();
    let whole: i64 = whole.parse().map_err(|_| bad())?;
    let fraction_mutez: i64 = format!("{fraction:0<6}").parse().map_err(|_| bad())?;
    whole
        .checked_mul(1_000_000)
        .and_then(|m| m.checked_add(fraction_mutez))
        .ok_or_else(bad)
}

fn parse_now(text: &str) -> Result<i64, ClientError> {
    if let Ok(seconds) = text.parse::<i64>() {
        return Ok(seconds);
    }
    kestrel_michelson::timestamp_from_rfc3339(text)
        .and_then(|t| t.to_i64())
        .ok_or_else(|| ClientError::option("--now", &format!("Invalid timestamp {text}.")))
}

fn run_request(invocation: &grammar::Invocation) -> Result<(String, RunRequest), ClientError> {
    let (origin, source) = script_text(invocation, "script")?;
    let amount_mutez = match invocation.option("--amount") {
        Some(text) => parse_tez("--amount", text)?,
        None => DEFAULT_AMOUNT_MUTEZ,
    };
    let balance_mutez = invocation
        .option("--balance")
        .map(|text| parse_tez("--balance", text))
        .transpose()?;
    let level = invocation
        .option("--level")
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| ClientError::option("--level", &format!("Invalid level {text}.")))
        })
        .transpose()?;
    let gas_milli = invocation
        .option("--gas")
        .map(|text| {
            text.parse::<i64>()
                .ok()
                .filter(|g| *g >= 0)
                .and_then(|g| g.checked_mul(1000))
                .ok_or_else(|| ClientError::option("--gas", &format!("Invalid gas {text}.")))
        })
        .transpose()?;
    let now = invocation.option("--now").map(parse_now).transpose()?;
    // octez-client's `--source` is `SENDER`, `--payer` is `SOURCE`; an implicit sender pays
    // when no payer is given.
    let sender = invocation.option("--source").map(str::to_string);
    let payer = invocation
        .option("--payer")
        .map(str::to_string)
        .or_else(|| sender.clone().filter(|s| s.starts_with("tz")));
    Ok((
        origin,
        RunRequest {
            source,
            storage: invocation.param("storage").to_string(),
            input: invocation.param("input").to_string(),
            amount_mutez,
            balance_mutez,
            sender,
            source_address: payer,
            self_address: invocation.option("--self-address").map(str::to_string),
            now,
            level,
            gas_milli,
            entrypoint: invocation.option("--entrypoint").map(str::to_string),
            trace_stack: invocation.switch("--trace-stack"),
        },
    ))
}

fn run_script(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let (origin, request) = run_request(invocation)?;
    match engine::run(&request) {
        Ok(output) => {
            let text = kestrel_michelson_conformance::run_script::print_output(&output);
            let one = |n: &Node| kestrel_micheline::print::to_text_single_line(n);
            let json = serde_json::json!({
                "storage": one(&output.storage),
                "operations": output.operations,
                "big_map_diff": output.big_map_diff,
                "trace": output.trace.iter().map(|s| serde_json::json!({
                    "location": s.location,
                    "gas": report::format_gas(s.gas_milli),
                    "stack": s.stack.iter().map(one).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            Ok(Success { text, json })
        }
        Err(failure) => Err(run_failure(invocation, &origin, &request, failure)),
    }
}

fn run_failure(
    invocation: &grammar::Invocation,
    origin: &str,
    request: &RunRequest,
    failure: RunFailure,
) -> ClientError {
    match failure {
        RunFailure::Parse(message) => ClientError::message("parse", &message),
        RunFailure::BadOption(message) => ClientError::message("option", &message),
        RunFailure::Typecheck(part, failure) => match part {
            engine::Part::Script => {
                ClientError::typecheck(origin, &request.source, &failure, "ill-typed script")
            }
            // octez-client ends these with `error running script`.
            engine::Part::Storage => ClientError::ill_typed_data(
                "storage",
                &request.storage,
                &engine::storage_type_text(&request.source),
                &failure,
                "error running script",
            ),
            engine::Part::Input => ClientError::bad_argument(
                &request.input,
                invocation
                    .option("--self-address")
                    .unwrap_or(kestrel_michelson_conformance::run_script::DEFAULT_SELF_ADDRESS),
                &failure,
            ),
        },
        RunFailure::Runtime {
            message,
            span,
            trace,
        } => {
            let self_address = invocation
                .option("--self-address")
                .unwrap_or(kestrel_michelson_conformance::run_script::DEFAULT_SELF_ADDRESS);
            ClientError::runtime(
                origin,
                &request.source,
                self_address,
                &message,
                !invocation.switch("--no-print-source"),
                span,
                &trace,
            )
        }
    }
}

fn typecheck_script(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let (origin, source) = script_text(invocation, "script")?;
    let script = parse_script(&origin, &source)?;
    let checker = Checker::new(invocation.switch("--legacy"));
    match checker.typecheck_script(&script) {
        Ok(gas) => {
            let remaining = report::format_gas(engine::OPERATION_GAS_MILLI - gas);
            let text = format!("Well typed\nGas remaining: {remaining} units remaining\n");
            Ok(Success {
                text,
                json: serde_json::json!({ "well_typed": true, "gas_remaining": remaining }),
            })
        }
        Err(failure) => Err(ClientError::typecheck(
            &origin,
            &source,
            &failure,
            "ill-typed script",
        )),
    }
}

/// Parses the type parameter `name`, reporting errors as octez-client does.
fn type_param(
    invocation: &grammar::Invocation,
    checker: &Checker,
    name: &str,
) -> Result<(kestrel_michelson::Type, i64), ClientError> {
    let node = expression_param(invocation, name)?;
    checker.parse_type(&node).map_err(|failure| {
        ClientError::typecheck(
            "command line",
            invocation.param(name),
            &failure,
            "ill-formed type",
        )
    })
}

/// Parses and typechecks the data parameter; an error ends with `what`, octez-client's last
/// words for the command (`ill-typed data`, `ill-formed data`, ...).
fn data_param(
    invocation: &grammar::Invocation,
    checker: &Checker,
    ty: &kestrel_michelson::Type,
    what: &str,
) -> Result<(engine::Typed, i64), ClientError> {
    let node = expression_param(invocation, "data")?;
    checker.parse_data(&node, ty).map_err(|failure| {
        ClientError::ill_typed_data(
            "command line",
            invocation.param("data"),
            &kestrel_micheline::print::to_text_single_line(&engine::type_node_folded(ty)),
            &failure,
            what,
        )
    })
}

fn typecheck_data(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let checker = Checker::new(invocation.switch("--legacy"));
    let (ty, type_gas) = type_param(invocation, &checker, "type")?;
    let (_, data_gas) = data_param(invocation, &checker, &ty, "ill-typed data")?;
    let remaining = report::format_gas(engine::OPERATION_GAS_MILLI - type_gas - data_gas);
    let text = format!("Well typed\nGas remaining: {remaining} units remaining\n");
    Ok(Success {
        text,
        json: serde_json::json!({ "well_typed": true, "gas_remaining": remaining }),
    })
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("0x");
    for byte in bytes {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Bytes written in hex, with or without `0x`, whitespace ignored.
fn decode_hex(text: &str) -> Result<Vec<u8>, ClientError> {
    let digits: String = text.split_whitespace().collect();
    let digits = digits.strip_prefix("0x").unwrap_or(&digits);
    hex::decode(digits).map_err(|error| {
        ClientError::message("parse", &format!("Invalid hexadecimal bytes: {error}."))
    })
}

fn hash_data(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let checker = Checker::new(true);
    let (ty, type_gas) = type_param(invocation, &checker, "type")?;
    if !engine::is_packable(&ty) {
        return Err(ClientError::message(
            "typecheck",
            &format!(
                "ill-typed data: type {} is not packable.",
                kestrel_micheline::print::to_text_single_line(&engine::type_node_folded(&ty))
            ),
        ));
    }
    let (typed, data_gas) = data_param(invocation, &checker, &ty, "ill-formed data")?;
    let (packed, pack_gas) =
        engine::pack(&typed).map_err(|message| ClientError::message("pack", &message))?;
    let digest = kestrel_crypto::hash::blake2b_256(&packed);
    let expression_hash = kestrel_micheline::pack::expression_hash_of_packed(&packed);
    let ledger = bs58::encode(digest).into_string();
    let remaining = report::format_gas(
        engine::OPERATION_GAS_MILLI
            .saturating_sub(type_gas)
            .saturating_sub(data_gas)
            .saturating_sub(pack_gas),
    );
    let sha256 = hex(&kestrel_crypto::hash::sha256(&packed));
    let sha512 = hex(&kestrel_crypto::hash::sha512(&packed));
    let text = format!(
        "Raw packed data: {}\nScript-expression-ID-Hash: {expression_hash}\nRaw Script-expression-ID-Hash: {}\nLedger Blake2b hash: {ledger}\nRaw Sha256 hash: {sha256}\nRaw Sha512 hash: {sha512}\nGas remaining: {remaining} units remaining\n",
        hex(&packed),
        hex(&digest),
    );
    Ok(Success {
        text,
        json: serde_json::json!({
            "packed": hex(&packed),
            "script_expression_hash": expression_hash,
            "raw_script_expression_hash": hex(&digest),
            "ledger_blake2b_hash": ledger,
            "sha256": sha256,
            "sha512": sha512,
            "gas_remaining": remaining,
        }),
    })
}

fn normalize_data(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let mode = unparsing_mode(invocation)?;
    let checker = Checker::new(invocation.switch("--legacy"));
    let (ty, _) = type_param(invocation, &checker, "type")?;
    let (typed, _) = data_param(invocation, &checker, &ty, "ill-typed data expression")?;
    let node = engine::unparse_typed(&typed, mode);
    Ok(Success {
        json: serde_json::json!({ "normalized": kestrel_micheline::print::to_text_single_line(&node) }),
        text: text_line(&node),
    })
}

fn normalize_type(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let checker = Checker::new(true);
    let (ty, _) = type_param(invocation, &checker, "type")?;
    let node = engine::type_node(&ty);
    Ok(Success {
        json: serde_json::json!({ "normalized": kestrel_micheline::print::to_text_single_line(&node) }),
        text: text_line(&node),
    })
}

fn normalize_script(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let (origin, source) = script_text(invocation, "script")?;
    let script = parse_script(&origin, &source)?;
    let expanded = Checker::expand(&script).map_err(|failure| {
        ClientError::typecheck(&origin, &source, &failure, "ill-typed script")
    })?;
    let node = kestrel_michelson::normalize_code(&expanded);
    Ok(Success {
        json: serde_json::json!({ "normalized": kestrel_micheline::print::to_text_single_line(&node) }),
        text: text_line(&node),
    })
}

fn normalize_stack(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let mode = unparsing_mode(invocation)?;
    let node = expression_param(invocation, "stack")?;
    let text = invocation.param("stack");
    let items = stack::stack_items(&node).map_err(|error| error.into_client_error(text))?;
    let checker = Checker::new(invocation.switch("--legacy"));
    let mut out = Vec::new();
    for (type_node, value_node) in items {
        let (ty, _) = checker
            .parse_type(type_node)
            .map_err(|failure| ClientError::ill_typed_stack(&failure))?;
        let (typed, _) = checker
            .parse_data(value_node, &ty)
            .map_err(|failure| ClientError::ill_typed_stack(&failure))?;
        out.push(Node::prim(
            kestrel_micheline::PrimName::new(stack::STACK_ELT),
            vec![
                engine::type_node_folded(&ty),
                engine::unparse_typed(&typed, mode),
            ],
        ));
    }
    let node = Node::seq(out);
    let mut text = String::new();
    write_indented(&mut text, &node, Wrapping::Unwrapped, 0);
    text.push('\n');
    Ok(Success {
        json: serde_json::json!({ "normalized": kestrel_micheline::print::to_text_single_line(&node) }),
        text,
    })
}

fn expand_macros(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let (origin, source) = script_text(invocation, "script")?;
    let script = parse_script(&origin, &source)?;
    let expanded = Checker::expand(&script).map_err(|failure| {
        ClientError::typecheck(&origin, &source, &failure, "ill-formed script")
    })?;
    let text = text_line(&expanded);
    Ok(Success {
        json: serde_json::json!({ "expanded": kestrel_micheline::print::to_text_single_line(&expanded) }),
        text,
    })
}

fn convert(invocation: &grammar::Invocation, script: bool) -> Result<Success, ClientError> {
    let name = if script { "script" } else { "data" };
    let from = invocation.param("input format");
    let to = invocation.param("output format");
    let (origin, source) = if script {
        script_text(invocation, name)?
    } else {
        (
            "command line".to_string(),
            invocation.param(name).to_string(),
        )
    };
    let node = match from {
        "michelson" => {
            let parsed = if script {
                parse_script(&origin, &source)?
            } else {
                expression_param(invocation, name)?
            };
            Checker::expand(&parsed).map_err(|failure| {
                ClientError::typecheck(&origin, &source, &failure, "ill-formed expression")
            })?
        }
        "json" => kestrel_micheline::json::from_json_str(source.trim_end())
            .map_err(|error| ClientError::message("parse", &format!("{error}")))?,
        "binary" => {
            let bytes = decode_hex(&source)?;
            kestrel_micheline::binary::decode(&bytes)
                .map_err(|error| ClientError::message("parse", &error.to_string()))?
        }
        other => {
            return Err(ClientError::option(
                "from",
                &format!("Unknown format {other}; expected michelson, json or binary."),
            ))
        }
    };
    if let Some(type_text) = invocation.option("--type") {
        let checker = Checker::new(true);
        let type_node = kestrel_micheline::parse_expression(type_text)
            .map_err(|error| ClientError::parse_in("--type", type_text, &error))?;
        let (ty, _) = checker.parse_type(&type_node).map_err(|failure| {
            ClientError::typecheck("--type", type_text, &failure, "ill-formed type")
        })?;
        checker.parse_data(&node, &ty).map_err(|failure| {
            ClientError::typecheck(&origin, &source, &failure, "ill-typed data")
        })?;
    }
    let text = match to {
        "michelson" if script => kestrel_micheline::print::to_script_text(&node),
        "michelson" => text_line(&node),
        "json" => format!("{}\n", kestrel_micheline::json::to_json_string(&node)),
        "binary" => {
            let bytes = kestrel_micheline::binary::encode(&node)
                .map_err(|error| ClientError::message("encode", &error.to_string()))?;
            format!("{}\n", hex(&bytes))
        }
        other => {
            return Err(ClientError::option(
                "to",
                &format!("Unknown format {other}; expected michelson, json or binary."),
            ))
        }
    };
    Ok(Success {
        json: serde_json::json!({ "converted": text.trim_end() }),
        text,
    })
}

fn unpack_data(invocation: &grammar::Invocation) -> Result<Success, ClientError> {
    let bytes = decode_hex(invocation.param("bytes"))?;
    let node = kestrel_micheline::pack::unpack(&bytes)
        .map_err(|error| ClientError::message("unpack", &error.to_string()))?;
    Ok(Success {
        json: serde_json::json!({ "data": kestrel_micheline::print::to_text_single_line(&node) }),
        text: text_line(&node),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tez_amounts_are_read_as_octez_client_reads_them() {
        assert_eq!(parse_tez("--amount", "0.05").ok(), Some(50_000));
        assert_eq!(parse_tez("--amount", "1_000").ok(), Some(1_000_000_000));
        assert_eq!(parse_tez("--amount", "0.000001").ok(), Some(1));
        for bad in [
            "-5",
            "-0.5",
            "0.0000001",
            "",
            ".5",
            "1e3",
            "99999999999999999",
        ] {
            assert!(parse_tez("--amount", bad).is_err(), "{bad}");
        }
    }
}
