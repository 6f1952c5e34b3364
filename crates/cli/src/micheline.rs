//! `kestrel micheline <verb>`: pack, unpack, convert and hash Micheline expressions, as
//! `octez-client hash data` / `convert data` do for untyped data.
//!
//! Text errors give a line and column, binary errors a byte offset; both exit with code 1.

use crate::output::CommandResult;
use clap::{Subcommand, ValueEnum};
use kestrel_micheline::{binary, json, pack, parse, print, Node};
use std::process::ExitCode;

/// The Micheline verbs.
#[derive(Subcommand)]
pub enum MichelineCommand {
    /// Pack an expression: print `05` followed by its binary Micheline, in hex (untyped PACK of
    /// the expression as written).
    Pack {
        /// The expression in Micheline text, e.g. 'Pair 1 "foo"' or -1; - reads it from
        /// standard input.
        #[arg(allow_hyphen_values = true)]
        expression: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Unpack hex bytes starting with 05 and print the expression in text.
    Unpack {
        /// The packed bytes in hex (an optional 0x prefix is accepted); - reads them from
        /// standard input (for values beyond the system's limit on an argument's length).
        hex: String,
        /// Print as JSON (the expression in text and in Micheline JSON).
        #[arg(long)]
        json: bool,
    },
    /// Convert an expression or script between text, binary (as hex) and JSON.
    Convert {
        /// The input form.
        #[arg(long, value_enum)]
        from: Form,
        /// The output form.
        #[arg(long, value_enum)]
        to: Form,
        /// The file to read, or - (the default) for standard input.
        #[arg(default_value = "-", allow_hyphen_values = true)]
        input: String,
        /// Print as JSON: `{"output": ...}`, the converted form as a string.
        #[arg(long)]
        json: bool,
    },
    /// Print the script-expression hash (expr...) of an expression: base58check of blake2b-256
    /// of its untyped PACK.
    Hash {
        /// The expression in Micheline text, e.g. 'Pair 1 "foo"' or -1; - reads it from
        /// standard input.
        #[arg(allow_hyphen_values = true)]
        expression: String,
        /// Print as JSON (the hash and the packed bytes).
        #[arg(long)]
        json: bool,
    },
}

/// A Micheline form.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Form {
    /// Micheline text in octez-client's layout (an expression, or a script's toplevel).
    Text,
    /// Binary Micheline, written and read as hex.
    Binary,
    /// Micheline JSON, as Octez RPCs use it.
    Json,
}

/// Runs one `kestrel micheline` command.
pub fn run(command: MichelineCommand) -> CommandResult {
    match command {
        MichelineCommand::Pack { expression, json } => {
            let node = parse_text(&argument_or_input(expression)?)?;
            let packed = with_macros_expanded(&node, pack::pack)?;
            let hex = to_hex(&packed);
            if json {
                println!("{{\"packed\":\"{hex}\"}}");
            } else {
                println!("{hex}");
            }
        }
        MichelineCommand::Unpack { hex, json } => {
            let bytes = from_hex(&argument_or_input(hex)?)?;
            let node = pack::unpack(&bytes).map_err(|e| e.to_string())?;
            if json {
                let text = print::to_text_indented(&node);
                let mut out = String::from("{\"text\":");
                json::write_json_string(&mut out, &text);
                out.push_str(",\"expression\":");
                json::write_json(&mut out, &node);
                out.push('}');
                println!("{out}");
            } else {
                print_text(&node)?;
            }
        }
        MichelineCommand::Convert {
            from,
            to,
            input,
            json,
        } => {
            let source = read_input(&input)?;
            let node = match from {
                Form::Text => parse_text_or_script(&source)?,
                Form::Binary => binary::decode(&from_hex(&source)?).map_err(|e| e.to_string())?,
                Form::Json => json::from_json_str(source.trim_end()).map_err(|error| {
                    let (line, column) =
                        kestrel_micheline::node::position_of(&source, error.offset_bytes);
                    format!("{error} (line {line}, column {column})")
                })?,
            };
            match (to, json) {
                (Form::Text, false) => print_text(&node)?,
                (Form::Text, true) => print_output(&print::to_text_indented(&node), true),
                (Form::Binary, _) => {
                    print_output(&to_hex(&with_macros_expanded(&node, binary::encode)?), json)
                }
                (Form::Json, _) => print_output(&json::to_json_string(&node), json),
            }
        }
        MichelineCommand::Hash { expression, json } => {
            let node = parse_text(&argument_or_input(expression)?)?;
            let packed = with_macros_expanded(&node, pack::pack)?;
            let hash = pack::expression_hash_of_packed(&packed);
            if json {
                println!("{{\"hash\":\"{hash}\",\"packed\":\"{}\"}}", to_hex(&packed));
            } else {
                println!("{hash}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `encode` (binary or PACK) of `node`. Michelson's macros (`ASSERT_EQ`, `DUUP`, ...) have no
/// binary tag: a node holding them is encoded expanded, as octez-client's `convert` and `hash
/// data` do; a node whose unknown primitives are no macros keeps its encoding error.
fn with_macros_expanded<E: std::fmt::Display>(
    node: &Node,
    encode: impl Fn(&Node) -> Result<Vec<u8>, E>,
) -> Result<Vec<u8>, String> {
    encode(node).or_else(|error| {
        let expanded = kestrel_michelson::expand_macros(node).map_err(|_| error.to_string())?;
        encode(&expanded).map_err(|_| error.to_string())
    })
}

/// Prints a converted form: the text, or `{"output": text}` with `--json`.
fn print_output(text: &str, json: bool) {
    if json {
        crate::output::print_json(&serde_json::json!({ "output": text }));
    } else {
        println!("{text}");
    }
}

/// Streams `node` in octez-client's layout to standard output, never holding the whole text.
fn print_text(node: &Node) -> Result<(), String> {
    crate::output::written(print::write_indented_to(
        std::io::stdout().lock(),
        node,
        print::Wrapping::Unwrapped,
        0,
    ))
}

/// Parses one expression, reporting errors with line and column.
fn parse_text(source: &str) -> Result<Node, String> {
    parse::parse_expression(source).map_err(|error| error.describe(source))
}

/// Parses one expression or, failing that, a script toplevel (`parameter ..; storage ..; ..`).
fn parse_text_or_script(source: &str) -> Result<Node, String> {
    match parse::parse_expression(source) {
        Ok(node) => Ok(node),
        Err(error) => parse::parse_toplevel(source).map_err(|_| error.describe(source)),
    }
}

/// `argument` itself, or standard input's text when it is `-` (no expression or hex is `-`).
fn argument_or_input(argument: String) -> Result<String, String> {
    if argument == "-" {
        read_input("-")
    } else {
        Ok(argument)
    }
}

fn read_input(input: &str) -> Result<String, String> {
    crate::input::read_text(input).map_err(|error| error.to_string())
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Reads hex, ignoring whitespace and an optional `0x` prefix.
fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    let trimmed = text.trim();
    let digits: Vec<u8> = trimmed
        .strip_prefix("0x")
        .unwrap_or(trimmed)
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(index, pair)| {
            let high = (pair[0] as char).to_digit(16);
            let low = (pair[1] as char).to_digit(16);
            match (high, low) {
                (Some(high), Some(low)) => Ok((high * 16 + low) as u8),
                _ => Err(format!("invalid hex digit in byte {index}")),
            }
        })
        .collect()
}
