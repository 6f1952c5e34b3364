//! `kestrel tx`: Solana wire transactions through `kestrel-txview`.
//!
//! - `kestrel tx decode <TEXT|@FILE|-> [--json]` shows one transaction given as hex (with or
//!   without `0x`), base58 (the Solana CLI's default) or base64, or in a file (`-` for standard
//!   input) holding one of those or the raw bytes: version, header, signatures, accounts with
//!   their static roles, instructions, lookups, v1 config, and whether it sanitizes (today's
//!   mainnet limits) and its signatures verify. Exit 1 when it does not parse.
//! - `kestrel tx check <FILE|-> [--verify-signatures] [--json]` reads one transaction per line (in
//!   any of those text encodings) and prints one verdict per input line, numbered as the input
//!   is: `N: ok`, `N: error: <kind> at <field>`, or `N: skipped` for a blank or `#` comment line,
//!   then `A accepted, R rejected`. Exit 1 when any line is rejected.

use crate::output::{print_json, CommandResult};
use base64::Engine;
use clap::Subcommand;
use kestrel_txview::{
    verify_signatures, SanitizeConfig, TransactionVersion, UnsanitizedTransactionView,
};
use serde_json::{json, Value};
use std::process::ExitCode;

/// `kestrel tx` verbs.
#[derive(Subcommand)]
pub enum TxCommand {
    /// Show one transaction given as hex, base58 or base64, or @FILE (- for standard input) holding
    /// one of those or the raw bytes.
    Decode {
        /// The transaction: hex (0x optional), base58, base64, @FILE, or - for standard input.
        #[arg(allow_hyphen_values = true)]
        input: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check a file of transactions (hex, base58 or base64), one per line: parse + sanitize, one
    /// numbered verdict per input line.
    Check {
        /// The file, or - for standard input.
        #[arg(allow_hyphen_values = true)]
        file: String,
        /// Also verify each transaction's ed25519 signatures.
        #[arg(long)]
        verify_signatures: bool,
        /// Print a JSON report.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `kestrel tx` verb.
pub fn run(command: TxCommand) -> CommandResult {
    match command {
        TxCommand::Decode { input, json } => decode(&input, json),
        TxCommand::Check {
            file,
            verify_signatures,
            json,
        } => check(&file, verify_signatures, json),
    }
}

/// The encodings a transaction is read from, in the order they are tried: a text that is valid
/// in several (a base58 text can also be base64) is read in the first whose bytes parse as a
/// transaction.
const ENCODINGS: [&str; 3] = ["hex", "base58", "base64"];

fn decode_as(encoding: &str, text: &str) -> Option<Vec<u8>> {
    match encoding {
        "hex" => hex::decode(text.strip_prefix("0x").unwrap_or(text)).ok(),
        "base58" => bs58::decode(text).into_vec().ok(),
        _ => base64::engine::general_purpose::STANDARD
            .decode(text)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(text))
            .ok(),
    }
}

/// Bytes from hex, base58 or base64 text: the first decoding that parses as a transaction, else
/// the first that decodes at all (so a truncated transaction is reported as such).
fn decode_text(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    let decoded: Vec<Vec<u8>> = ENCODINGS
        .iter()
        .filter_map(|encoding| decode_as(encoding, text))
        .filter(|bytes| !bytes.is_empty())
        .collect();
    decoded
        .iter()
        .position(|bytes| UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]).is_ok())
        .map(|index| decoded[index].clone())
        .or_else(|| decoded.into_iter().next())
}

fn read_input(input: &str) -> Result<Vec<u8>, String> {
    let path = match input {
        "-" => Some("-"),
        _ => input.strip_prefix('@'),
    };
    match path {
        Some(path) => {
            let raw = crate::input::read_bytes(path).map_err(|error| error.to_string())?;
            // A text file holding hex, base58 or base64, otherwise the raw wire bytes.
            Ok(std::str::from_utf8(&raw)
                .ok()
                .and_then(decode_text)
                .unwrap_or(raw))
        }
        None => {
            decode_text(input).ok_or_else(|| "input is neither hex, base58 nor base64".to_string())
        }
    }
}

fn base58(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

fn version_name(version: TransactionVersion) -> &'static str {
    match version {
        TransactionVersion::Legacy => "legacy",
        TransactionVersion::V0 => "v0",
        TransactionVersion::V1 => "v1",
    }
}

fn decode(input: &str, json_output: bool) -> CommandResult {
    let bytes = read_input(input)?;
    let view = UnsanitizedTransactionView::try_new_unsanitized(&bytes[..])
        .map_err(|error| format!("{}: {error}", error.kind()))?;
    let sanitized = view.check_sanitized(&SanitizeConfig::MAINNET);
    let signatures_verify = verify_signatures(&view);
    let num_required = usize::from(view.num_required_signatures());
    let num_readonly_signed = usize::from(view.num_readonly_signed_static_accounts());
    let keys = view.static_account_keys();
    let num_readonly_unsigned = usize::from(view.num_readonly_unsigned_static_accounts());
    let role = |index: usize| -> &'static str {
        let signer = index < num_required;
        let writable = if signer {
            index < num_required.saturating_sub(num_readonly_signed)
        } else {
            index < keys.len().saturating_sub(num_readonly_unsigned)
        };
        match (signer, writable) {
            (true, true) => "signer,writable",
            (true, false) => "signer,readonly",
            (false, true) => "writable",
            (false, false) => "readonly",
        }
    };
    let value = json!({
        "version": version_name(view.version()),
        "size_bytes": view.data().len(),
        "header": {
            "num_required_signatures": view.num_required_signatures(),
            "num_readonly_signed_accounts": view.num_readonly_signed_static_accounts(),
            "num_readonly_unsigned_accounts": view.num_readonly_unsigned_static_accounts(),
        },
        "signatures": view.signatures().iter().map(|s| base58(s)).collect::<Vec<_>>(),
        "account_keys": keys.iter().enumerate().map(|(index, key)| json!({
            "index": index, "address": base58(key), "role": role(index)
        })).collect::<Vec<_>>(),
        "recent_blockhash": base58(view.recent_blockhash()),
        "instructions": view.instructions_iter().map(|instruction| json!({
            "program_id_index": instruction.program_id_index,
            "program": keys.get(usize::from(instruction.program_id_index)).map(|key| base58(key)),
            "accounts": instruction.accounts,
            "data": hex::encode(instruction.data),
        })).collect::<Vec<_>>(),
        "address_table_lookups": view.address_table_lookup_iter().map(|lookup| json!({
            "account_key": base58(lookup.account_key),
            "writable_indexes": lookup.writable_indexes,
            "readonly_indexes": lookup.readonly_indexes,
        })).collect::<Vec<_>>(),
        "config": view.transaction_config().map(|config| json!({
            "mask": config.mask(),
            "priority_fee_lamports": config.priority_fee_lamports(),
            "compute_unit_limit": config.compute_unit_limit(),
            "loaded_accounts_data_size_limit": config.loaded_accounts_data_size_limit(),
            "requested_heap_size": config.requested_heap_size(),
        })),
        "sanitize": match &sanitized { Ok(()) => "ok".to_string(), Err(error) => format!("error: {error}") },
        "signatures_verify": match &signatures_verify { Ok(()) => "ok".to_string(), Err(error) => format!("error: {error}") },
    });
    if json_output {
        print_json(&value);
    } else {
        print_human(&value);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_human(value: &Value) {
    let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
    println!("version:          {}", text("version"));
    println!("size:             {} bytes", value["size_bytes"]);
    let header = &value["header"];
    println!(
        "header:           {} required signatures, {} readonly signed, {} readonly unsigned",
        header["num_required_signatures"],
        header["num_readonly_signed_accounts"],
        header["num_readonly_unsigned_accounts"]
    );
    println!("recent blockhash: {}", text("recent_blockhash"));
    for (index, signature) in value["signatures"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!(
            "signature {index}:      {}",
            signature.as_str().unwrap_or_default()
        );
    }
    println!("accounts:");
    for key in value["account_keys"].as_array().into_iter().flatten() {
        println!(
            "  {:>3} {:<44} {}",
            key["index"],
            key["address"].as_str().unwrap_or_default(),
            key["role"].as_str().unwrap_or_default()
        );
    }
    println!("instructions:");
    for (index, instruction) in value["instructions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!(
            "  {index:>3} program {} accounts {} data {}",
            instruction["program_id_index"],
            instruction["accounts"],
            instruction["data"].as_str().unwrap_or_default()
        );
    }
    for (index, lookup) in value["address_table_lookups"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!(
            "lookup {index}: table {} writable {} readonly {}",
            lookup["account_key"].as_str().unwrap_or_default(),
            lookup["writable_indexes"],
            lookup["readonly_indexes"]
        );
    }
    if !value["config"].is_null() {
        println!("config:           {}", value["config"]);
    }
    println!("sanitize:         {}", text("sanitize"));
    println!("signatures:       {}", text("signatures_verify"));
}

/// The verdict on one line of a `check` input: `None` for a line skipped (blank or comment).
fn check_line(line: &str, verify: bool) -> Option<Result<(), String>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    Some(match decode_text(line) {
        None => Err("invalid_encoding at line (neither hex, base58 nor base64)".to_string()),
        Some(bytes) => match UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]) {
            Err(error) => Err(format!("{} at {}", error.kind(), error.field())),
            Ok(view) => match view.check_sanitized(&SanitizeConfig::MAINNET) {
                Err(error) => Err(format!("{} at {}", error.kind(), error.field())),
                Ok(()) if verify => verify_signatures(&view)
                    .map_err(|error| format!("invalid_signature at signatures ({error})")),
                Ok(()) => Ok(()),
            },
        },
    })
}

fn check(path: &str, verify: bool, json_output: bool) -> CommandResult {
    let text = crate::input::read_text(path).map_err(|error| error.to_string())?;
    let (mut accepted, mut rejected) = (0usize, 0usize);
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let verdict = check_line(line, verify);
        match &verdict {
            Some(Ok(())) => accepted += 1,
            Some(Err(_)) => rejected += 1,
            None => {}
        }
        if json_output {
            lines.push(match verdict {
                None => json!({ "line": number, "verdict": "skipped" }),
                Some(Ok(())) => json!({ "line": number, "verdict": "ok" }),
                Some(Err(error)) => json!({ "line": number, "verdict": "error", "error": error }),
            });
        } else {
            match verdict {
                None => println!("{number}: skipped"),
                Some(Ok(())) => println!("{number}: ok"),
                Some(Err(error)) => println!("{number}: error: {error}"),
            }
        }
    }
    if json_output {
        print_json(&json!({ "accepted": accepted, "rejected": rejected, "lines": lines }));
    } else {
        println!("{accepted} accepted, {rejected} rejected");
    }
    Ok(if rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
