//! `octez-client run script`: typecheck a script, run it on a storage and a parameter, and print
//! what octez-client prints — `storage`, `emitted operations`, `big_map diff` and, with
//! `--trace-stack`, the `trace` of every step with its location, the gas it consumed and the
//! stack after it (`specs/michelson.rst`; layout from the recorded outputs in
//! `testdata/michelson-regression`).
//!
//! The world is octez-client's mockup defaults unless options say otherwise: no other contracts,
//! and fresh big map ids from [`FIRST_FRESH_BIG_MAP_ID`].

use crate::fixtures::FixtureHost;
use kestrel_micheline::print::{write_indented, write_single_line, Wrapping};
use kestrel_micheline::Node;
use kestrel_michelson::{
    execute_traced, normalize, Address, BigMapDiff, BigMapDiffAction, BigMapInit, Call,
    Environment, ExecutionError, Int, InternalOperation, NoTrace, Script, ScriptError,
    TraceRecorder, Type, TypecheckError, UnparsingMode, Value,
};
use std::fmt::Write;
use std::rc::Rc;

/// The first big map id octez-client's mockup mode hands out (ids 0 to 3 are taken by its
/// bootstrap contracts, as the recorded outputs show).
pub const FIRST_FRESH_BIG_MAP_ID: i64 = 4;
/// The chain id of octez-client's mockup mode.
pub const MOCKUP_CHAIN_ID: &str = "NetXynUjJNZm7wi";
/// The address `SELF` has in `run script` (octez-client's default).
pub const DEFAULT_SELF_ADDRESS: &str = "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi";
/// The default `SOURCE` and `SENDER` of `run script` in mockup mode (the first bootstrap
/// account).
pub const DEFAULT_SOURCE: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
/// octez-client's default `--balance` for `run script`: 4,000,000 tez.
pub const DEFAULT_BALANCE_MUTEZ: i64 = 4_000_000_000_000;
/// octez-client's default `--amount` for `run script`: 0.05 tez.
pub const DEFAULT_AMOUNT_MUTEZ: i64 = 50_000;

/// What `run script` takes besides the script.
#[derive(Debug, Clone, Default)]
pub struct RunScriptOptions {
    /// The initial storage, Micheline text.
    pub storage: String,
    /// The parameter, Micheline text.
    pub input: String,
    /// `--amount`, mutez (default [`DEFAULT_AMOUNT_MUTEZ`]).
    pub amount_mutez: Option<i64>,
    /// `--balance`, mutez (default [`DEFAULT_BALANCE_MUTEZ`]).
    pub balance_mutez: Option<i64>,
    /// `--level` (default 1).
    pub level: Option<u64>,
    /// `--now`, seconds since the epoch.
    pub now: Option<i64>,
    /// `SENDER` (octez-client's `--source`); defaults to `SOURCE`.
    pub sender: Option<String>,
    /// `SOURCE` (octez-client's `--payer`); defaults to `SENDER`.
    pub source: Option<String>,
    /// `--self-address`.
    pub self_address: Option<String>,
    /// `--entrypoint`.
    pub entrypoint: Option<String>,
    /// `--trace-stack`.
    pub trace_stack: bool,
    /// Gas limit in milligas (default: the operation limit).
    pub gas_limit_milli: Option<u64>,
}

/// One step of a trace.
#[derive(Debug, Clone)]
pub struct TraceStep {
    /// The Micheline location of the step.
    pub location: u32,
    /// Milligas consumed since the previous step.
    pub gas_milli: i64,
    /// The stack after the step, top first, in readable form.
    pub stack: Vec<Node>,
}

/// What a successful run produced.
#[derive(Debug)]
pub struct RunScriptOutput {
    /// The final storage, readable.
    pub storage: Node,
    /// The emitted operations, as printed lines.
    pub operations: Vec<String>,
    /// The big map diff, as printed lines.
    pub big_map_diff: Vec<String>,
    /// The trace, when asked for.
    pub trace: Vec<TraceStep>,
}

/// Why `run script` failed.
#[derive(Debug)]
pub enum RunScriptError {
    /// The script, storage or parameter text is not valid Micheline.
    Parse(String),
    /// The script is ill-typed.
    Typecheck(TypecheckError),
    /// The call failed (ill-typed data, `FAILWITH`, gas, ...).
    Execution {
        /// The error.
        error: ExecutionError,
        /// The trace up to the failure.
        trace: Vec<TraceStep>,
        /// The location of the failing instruction, when the failure happened while running.
        location: Option<u32>,
    },
    /// An option is invalid.
    BadOption(String),
}

impl std::fmt::Display for RunScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunScriptError::Parse(e) => write!(f, "{e}"),
            RunScriptError::Typecheck(e) => write!(f, "Ill typed contract {e}"),
            RunScriptError::Execution { error, .. } => write!(f, "{error}"),
            RunScriptError::BadOption(e) => write!(f, "invalid option: {e}"),
        }
    }
}

impl std::error::Error for RunScriptError {}

fn print_one_line(node: &Node) -> String {
    let mut out = String::new();
    write_single_line(&mut out, node, Wrapping::Wrapped);
    out
}

fn readable(value: &Value) -> String {
    print_one_line(&normalize(value, UnparsingMode::Readable))
}

/// Parses a tez amount as octez-client writes it (`1`, `0.5`, `1_000`) into mutez; `None` for
/// anything else, negative amounts included.
pub fn parse_tez(text: &str) -> Option<i64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (whole, fraction) = match clean.split_once('.') {
        Some((w, f)) => (w, f),
        None => (clean.as_str(), ""),
    };
    if fraction.len() > 6 || whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if !whole
        .chars()
        .chain(fraction.chars())
        .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut fraction_mutez: i64 = 0;
    for (index, c) in fraction.chars().enumerate() {
        let digit = i64::from(c.to_digit(10)?);
        fraction_mutez += digit * 10_i64.pow(5 - index as u32);
    }
    whole.checked_mul(1_000_000)?.checked_add(fraction_mutez)
}

/// The environment `options` describe, octez-client's mockup defaults elsewhere.
fn environment(options: &RunScriptOptions) -> Result<Environment, RunScriptError> {
    let address = |text: &str| {
        Address::from_string(text)
            .ok_or_else(|| RunScriptError::BadOption(format!("invalid address {text}")))
    };
    let (sender, source) = match (&options.sender, &options.source) {
        (Some(sender), Some(source)) => (address(sender)?, address(source)?),
        (Some(one), None) | (None, Some(one)) => (address(one)?, address(one)?),
        (None, None) => (address(DEFAULT_SOURCE)?, address(DEFAULT_SOURCE)?),
    };
    let amount_mutez = options.amount_mutez.unwrap_or(DEFAULT_AMOUNT_MUTEZ);
    let balance_mutez = options.balance_mutez.unwrap_or(DEFAULT_BALANCE_MUTEZ);
    if amount_mutez < 0 || balance_mutez < 0 {
        return Err(RunScriptError::BadOption("negative amount".into()));
    }
    Ok(Environment {
        amount_mutez,
        balance_mutez,
        now_seconds: options.now.unwrap_or(0),
        level: options.level.unwrap_or(1),
        min_block_time_seconds: 0,
        source,
        sender,
        self_address: address(
            options
                .self_address
                .as_deref()
                .unwrap_or(DEFAULT_SELF_ADDRESS),
        )?,
        chain_id: kestrel_michelson::chain_id_from_base58(MOCKUP_CHAIN_ID)
            .ok_or_else(|| RunScriptError::BadOption("chain id".into()))?,
    })
}

/// Runs `script` (its text) with `options`.
pub fn run_script(
    script: &str,
    options: &RunScriptOptions,
) -> Result<RunScriptOutput, RunScriptError> {
    let config = kestrel_michelson::Config {
        legacy: false,
        gas_limit_milli: options
            .gas_limit_milli
            .unwrap_or(kestrel_michelson::HARD_GAS_LIMIT_PER_OPERATION_MILLI),
    };
    let typed = Script::parse(script, &config).map_err(|error| match error {
        ScriptError::Parse(message) => RunScriptError::Parse(message),
        ScriptError::IllTyped(error) => RunScriptError::Typecheck(error),
    })?;
    let environment = environment(options)?;
    let storage = parse_data_text(&options.storage)?;
    let parameter = parse_data_text(&options.input)?;
    let call = Call {
        entrypoint: options.entrypoint.as_deref().unwrap_or("default"),
        parameter: &parameter,
        storage: &storage,
    };
    let run_traced = || {
        let mut recorder = TraceRecorder::new(config.gas_limit_milli);
        let mut host = FixtureHost::new(FIRST_FRESH_BIG_MAP_ID);
        let result = execute_traced(
            &typed,
            &call,
            &environment,
            &mut host,
            config.gas_limit_milli,
            &mut recorder,
        );
        (result, Some(recorder))
    };
    // Without `--trace-stack` the run takes the interpreter's plain path; runs are
    // deterministic, so a failed one is run again instrumented to find the failing instruction.
    let (result, recorder) = if options.trace_stack {
        run_traced()
    } else {
        let mut host = FixtureHost::new(FIRST_FRESH_BIG_MAP_ID);
        let plain = execute_traced(
            &typed,
            &call,
            &environment,
            &mut host,
            config.gas_limit_milli,
            &mut NoTrace,
        );
        match plain {
            Ok(execution) => (Ok(execution), None),
            Err(_) => run_traced(),
        }
    };
    let location = recorder.as_ref().and_then(TraceRecorder::failing_location);
    let trace = match recorder {
        Some(recorder) if options.trace_stack => readable_trace(recorder),
        _ => Vec::new(),
    };
    let execution = match result {
        Ok(execution) => execution,
        Err(error) => {
            return Err(RunScriptError::Execution {
                error,
                trace,
                location,
            })
        }
    };
    let self_address = environment.self_address.to_readable();
    Ok(RunScriptOutput {
        storage: normalize(&execution.storage, UnparsingMode::Readable),
        operations: execution
            .operations
            .iter()
            .flat_map(|operation| describe_operation(operation, &self_address))
            .collect(),
        big_map_diff: execution
            .big_map_diff
            .iter()
            .flat_map(describe_diff)
            .collect(),
        trace,
    })
}

/// The recorded steps with their stacks in readable form.
fn readable_trace(recorder: TraceRecorder) -> Vec<TraceStep> {
    recorder
        .into_steps()
        .into_iter()
        .map(|step| TraceStep {
            location: step.location,
            gas_milli: step.gas_milli,
            stack: step
                .stack
                .iter()
                .map(|value| normalize(value, UnparsingMode::Readable))
                .collect(),
        })
        .collect()
}

fn parse_data_text(text: &str) -> Result<Node, RunScriptError> {
    let node = kestrel_micheline::parse_expression(text)
        .map_err(|e| RunScriptError::Parse(e.describe(text)))?;
    kestrel_michelson::expand_macros(&node).map_err(RunScriptError::Typecheck)
}

/// The lines octez-client prints for one big map's changes (`New map(4) of type (big_map nat
/// nat)`, `Set map(4)[1] to 4`, `Unset map(4)[2]`, `Copy map(1) to map(4)`, `Clear map(1)`;
/// a temporary big map is `temp(1)` for id -1).
fn describe_diff(diff: &BigMapDiff) -> Vec<String> {
    let name = |id: &Int| match id.to_i64() {
        Some(id) if id < 0 => format!("temp({})", id.unsigned_abs()),
        _ => format!("map({id})"),
    };
    let id = name(&diff.id);
    let BigMapDiffAction::Update { init, updates } = &diff.action else {
        return vec![format!("Clear {id}")];
    };
    let mut lines = Vec::new();
    match init {
        BigMapInit::Existing => {}
        BigMapInit::Copy { source } => lines.push(format!("Copy {} to {id}", name(source))),
        BigMapInit::Alloc {
            key_type,
            value_type,
        } => {
            let ty = Type::BigMap(Rc::new(key_type.clone()), Rc::new(value_type.clone()));
            lines.push(format!(
                "New {id} of type {}",
                print_one_line(&ty.to_node())
            ));
        }
    }
    // `Legacy_big_map_diff.of_lazy_storage_diff` lists an item's updates in reverse.
    for update in updates.iter().rev() {
        let key = readable(&update.key);
        lines.push(match &update.value {
            Some(value) => format!("Set {id}[{key}] to {}", readable(value)),
            None => format!("Unset {id}[{key}]"),
        });
    }
    lines
}

fn describe_operation(operation: &InternalOperation, self_address: &str) -> Vec<String> {
    match operation {
        InternalOperation::Transaction {
            destination,
            amount_mutez,
            parameter,
            ..
        } => vec![
            "Internal Transaction:".to_string(),
            format!("  Amount: {}", format_tez(*amount_mutez)),
            format!("  From: {self_address}"),
            format!("  To: {}", destination.to_readable()),
            format!("  Parameter: {}", readable(parameter)),
        ],
        InternalOperation::Delegation { delegate, .. } => vec![
            "Internal Delegation:".to_string(),
            format!(
                "  Delegate: {}",
                delegate
                    .map(|k| k.to_base58())
                    .unwrap_or_else(|| "none".into())
            ),
        ],
        InternalOperation::Origination {
            credit_mutez,
            address,
            storage,
            ..
        } => vec![
            "Internal origination:".to_string(),
            format!("  Credit: {}", format_tez(*credit_mutez)),
            format!("  Originated contract: {}", address.to_base58()),
            format!("  Initial storage: {}", readable(storage)),
        ],
        InternalOperation::Event { tag, payload, .. } => vec![
            "Internal Event:".to_string(),
            format!("  Tag: {tag}"),
            format!("  Payload: {}", readable(payload)),
        ],
    }
}

fn format_tez(mutez: i64) -> String {
    let whole = mutez / 1_000_000;
    let fraction = mutez % 1_000_000;
    if fraction == 0 {
        format!("ꜩ{whole}")
    } else {
        let digits = format!("{fraction:06}");
        format!("ꜩ{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// Formats milligas as octez-client does: `9.929`.
pub fn format_gas(milligas: i64) -> String {
    format!("{}.{:03}", milligas / 1000, milligas % 1000)
}

/// Prints the output exactly as `octez-client run script` does.
pub fn print_output(output: &RunScriptOutput) -> String {
    let mut out = String::from("storage\n  ");
    write_indented(&mut out, &output.storage, Wrapping::Wrapped, 2);
    out.push_str("\nemitted operations\n  ");
    out.push_str(&output.operations.join("\n  "));
    out.push_str("\nbig_map diff\n  ");
    out.push_str(&output.big_map_diff.join("\n  "));
    out.push('\n');
    if !output.trace.is_empty() {
        out.push_str("trace\n");
        print_trace(&mut out, &output.trace);
    }
    // octez-client ends its report with an empty line.
    out.push('\n');
    out
}

/// Prints trace steps in octez-client's layout.
pub fn print_trace(out: &mut String, trace: &[TraceStep]) {
    for step in trace {
        let _ = writeln!(
            out,
            "  - location: {} (just consumed gas: {})",
            step.location,
            format_gas(step.gas_milli)
        );
        out.push_str("    [ ");
        for (index, item) in step.stack.iter().enumerate() {
            if index > 0 {
                out.push_str("\n      ");
            }
            write_indented(out, item, Wrapping::Wrapped, 6);
        }
        out.push_str(" ]\n");
    }
}
