//! `octez-client run script`: typecheck a script, run it on a storage and a parameter, and print
//! what octez-client prints — `storage`, `emitted operations`, `big_map diff` and, with
//! `--trace-stack`, the `trace` of every step with its location, the gas it consumed and the
//! stack after it (`specs/michelson.rst`; layout from the recorded outputs in
//! `testdata/michelson-regression`).
//!
//! The context is octez-client's mockup defaults unless options say otherwise; big maps in the
//! final storage that are not yet stored get fresh ids from [`FIRST_FRESH_BIG_MAP_ID`].

use crate::context::Context;
use crate::interpret::{Interpreter, RunError, Tracer};
use crate::literals::Address;
use crate::typecheck::{TcError, Typechecker};
use crate::types::Type;
use crate::unparse::{unparse, Mode};
use crate::value::{BigMap, Operation, Value};
use kestrel_micheline::print::{write_indented, Wrapping};
use kestrel_micheline::Node;
use std::fmt::Write;
use std::rc::Rc;

/// The first big map id octez-client's mockup mode hands out (ids 0 to 3 are taken by its
/// bootstrap contracts, as the recorded outputs show).
pub const FIRST_FRESH_BIG_MAP_ID: i64 = 4;
/// The chain id of octez-client's mockup mode.
pub const MOCKUP_CHAIN_ID: &str = "NetXynUjJNZm7wi";
/// The address `SELF` has in `run script` (octez-client's default).
pub const DEFAULT_SELF_ADDRESS: &str = "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi";
/// The default `SOURCE`/`SENDER` of `run script` in mockup mode (the first bootstrap account).
pub const DEFAULT_SOURCE: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
/// octez-client's default `--balance` for `run script`: 4,000,000 tez.
pub const DEFAULT_BALANCE_MUTEZ: i64 = 4_000_000_000_000;

/// What `run script` takes besides the script.
#[derive(Debug, Clone, Default)]
pub struct RunScriptOptions {
    /// The initial storage, Micheline text.
    pub storage: String,
    /// The parameter, Micheline text.
    pub input: String,
    /// `--amount`, mutez.
    pub amount_mutez: Option<i64>,
    /// `--balance`, mutez.
    pub balance_mutez: Option<i64>,
    /// `--level`.
    pub level: Option<u64>,
    /// `--now`, seconds since the epoch.
    pub now: Option<i64>,
    /// `--source`.
    pub source: Option<String>,
    /// `--sender` (`--payer`).
    pub sender: Option<String>,
    /// `--self-address`.
    pub self_address: Option<String>,
    /// `--entrypoint`.
    pub entrypoint: Option<String>,
    /// `--trace-stack`.
    pub trace_stack: bool,
    /// Gas limit in milligas (default: the operation limit).
    pub gas_limit_milli: Option<i64>,
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
    /// The script, storage or parameter is ill-typed.
    Typecheck(TcError),
    /// The run failed.
    Runtime {
        /// The error.
        error: RunError,
        /// The trace up to the failure.
        trace: Vec<TraceStep>,
        /// The location of the failing instruction (known when the run was traced).
        location: Option<u32>,
    },
    /// An option is invalid.
    BadOption(String),
}

impl std::fmt::Display for RunScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunScriptError::Parse(e) => write!(f, "{e}"),
            RunScriptError::Typecheck(e) => write!(f, "ill-typed script or data: {e}"),
            RunScriptError::Runtime { error, .. } => match error {
                RunError::Failed(v) => write!(
                    f,
                    "script reached FAILWITH instruction\nwith {}",
                    print_one_line(&unparse(v, Mode::Readable))
                ),
                RunError::Overflow => write!(f, "unexpected arithmetic overflow"),
                RunError::MutezUnderflow => write!(f, "unexpected arithmetic underflow"),
                RunError::GasExhaustion => {
                    write!(f, "Gas limit exceeded during typechecking or execution.")
                }
                RunError::Other(e) => write!(f, "runtime error: {e}"),
            },
            RunScriptError::BadOption(e) => write!(f, "invalid option: {e}"),
        }
    }
}

fn print_one_line(node: &Node) -> String {
    let mut out = String::new();
    kestrel_micheline::print::write_single_line(&mut out, node, Wrapping::Wrapped);
    out
}

/// Collects trace steps.
struct Collector {
    steps: Vec<TraceStep>,
    last_gas: i64,
    /// The location of the step running (where a failure happened).
    entered: Option<u32>,
}

impl Tracer for Collector {
    const ENABLED: bool = true;
    fn log(&mut self, location: u32, gas_milli_remaining: i64, stack: &[Value]) {
        self.steps.push(TraceStep {
            location,
            gas_milli: self.last_gas - gas_milli_remaining,
            stack: stack
                .iter()
                .rev()
                .map(|v| unparse(v, Mode::Readable))
                .collect(),
        });
        self.last_gas = gas_milli_remaining;
    }
    fn enter(&mut self, location: u32) {
        self.entered = Some(location);
    }
}

/// Parses a tez amount as octez-client writes it (`1`, `0.5`, `1_000`) into mutez.
pub fn parse_tez(text: &str) -> Option<i64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (whole, fraction) = match clean.split_once('.') {
        Some((w, f)) => (w, f),
        None => (clean.as_str(), ""),
    };
    if fraction.len() > 6 || whole.is_empty() && fraction.is_empty() {
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

/// Runs `script` (its text) with `options`.
pub fn run_script(
    script: &str,
    options: &RunScriptOptions,
) -> Result<RunScriptOutput, RunScriptError> {
    let parsed = kestrel_micheline::parse_toplevel(script)
        .map_err(|e| RunScriptError::Parse(e.describe(script)))?;
    let expanded =
        crate::macros::expand_all(&parsed).map_err(|e| RunScriptError::Typecheck(e.into()))?;

    let mut context = Context {
        balance: options.balance_mutez.unwrap_or(DEFAULT_BALANCE_MUTEZ),
        amount: options.amount_mutez.unwrap_or(0),
        level: options.level.unwrap_or(1),
        ..Context::default()
    };
    context.chain_id = crate::literals::chain_id_from_base58(MOCKUP_CHAIN_ID)
        .ok_or_else(|| RunScriptError::BadOption("chain id".into()))?;
    let address = |text: &str| {
        Address::from_string(text)
            .ok_or_else(|| RunScriptError::BadOption(format!("invalid address {text}")))
    };
    context.self_address = address(
        options
            .self_address
            .as_deref()
            .unwrap_or(DEFAULT_SELF_ADDRESS),
    )?;
    context.source = address(options.source.as_deref().unwrap_or(DEFAULT_SOURCE))?;
    context.sender = match &options.sender {
        Some(sender) => address(sender)?,
        None => context.source.clone(),
    };
    if let Some(now) = options.now {
        context.now = crate::int::Int::from(now);
    }
    if let Some(gas) = options.gas_limit_milli {
        context.gas_limit_milli = gas;
    }
    if let Some(param_node) = script_field(&expanded, kestrel_micheline::Prim::K_parameter) {
        context.self_param = param_node.clone();
    }

    let (script_typed, storage, param, typecheck_gas) = {
        let mut tc = Typechecker::new(&context);
        tc.record_locations = true;
        let script_typed = tc
            .typecheck_script(&expanded)
            .map_err(RunScriptError::Typecheck)?;
        let storage_node = parse_data_text(&options.storage)?;
        let storage = tc
            .parse_data(&storage_node, &script_typed.storage_type)
            .map_err(RunScriptError::Typecheck)?;
        let input_node = parse_data_text(&options.input)?;
        let entrypoint = options.entrypoint.as_deref().unwrap_or("default");
        let (entry_type, path) =
            crate::typecheck::entrypoints::find_with_path(&script_typed.param_node, entrypoint)
                .ok_or_else(|| RunScriptError::BadOption(format!("no entrypoint {entrypoint}")))?;
        // `Script_interpreter.execute`: the entrypoint search, the argument, then
        // `collect_lazy_storage` of the argument and of the storage.
        tc.charge_gas(
            crate::typecheck::entrypoints::search_steps(&script_typed.param_node, entrypoint)
                .saturating_mul(crate::gas::typecheck::COST_FIND_ENTRYPOINT_CYCLE),
        );
        let mut param = tc
            .parse_data(&input_node, &entry_type)
            .map_err(RunScriptError::Typecheck)?;

        for left in path.iter().rev() {
            param = if *left {
                Value::Left(Rc::new(param))
            } else {
                Value::Right(Rc::new(param))
            };
        }
        tc.charge_gas(
            crate::typecheck::charges::collect_lazy_storage(&script_typed.param_type, &param)
                .saturating_add(crate::typecheck::charges::collect_lazy_storage(
                    &script_typed.storage_type,
                    &storage,
                )),
        );
        (script_typed, storage, param, tc.gas_consumed_milli)
    };

    // Typechecking and running share one gas counter, as in Octez: what the parsing and
    // typechecking consumed is no longer available to the code.
    let gas = context.gas_limit_milli.saturating_sub(typecheck_gas);
    if gas < 0 {
        return Err(RunScriptError::Runtime {
            error: RunError::GasExhaustion,
            trace: Vec::new(),
            location: None,
        });
    }
    let initial = vec![Value::pair(param, storage)];
    let mut collector = Collector {
        steps: Vec::new(),
        last_gas: gas,
        entered: None,
    };
    // The first step octez-client logs is the initial stack, charged with everything consumed
    // before the first instruction.
    let first_location = script_typed.code.locations.first().copied().unwrap_or(0);
    if options.trace_stack {
        collector.steps.push(TraceStep {
            location: first_location,
            gas_milli: typecheck_gas,
            stack: initial.iter().map(|v| unparse(v, Mode::Readable)).collect(),
        });
    }
    let mut interpreter = Interpreter::new(&mut context, gas);
    let result = if options.trace_stack {
        interpreter.run_traced(&script_typed.code, initial, &mut collector)
    } else {
        interpreter.run(&script_typed.code, initial)
    };
    let (trace, location) = (collector.steps, collector.entered);
    let mut stack = match result {
        Ok(stack) => stack,
        Err(error) => {
            return Err(RunScriptError::Runtime {
                error,
                trace,
                location,
            })
        }
    };
    let Some(Value::Pair(result)) = stack.pop() else {
        return Err(RunScriptError::Runtime {
            error: RunError::Other("the script did not return a pair".into()),
            trace,
            location: None,
        });
    };
    let (operations, storage) = (&result.0, &result.1);
    let mut next_id = FIRST_FRESH_BIG_MAP_ID;
    let mut diff = Vec::new();
    let storage = allocate_big_maps(storage, &script_typed.storage_type, &mut next_id, &mut diff);
    let mut operation_lines = Vec::new();
    if let Value::List(list) = operations {
        for op in list.iter().rev() {
            if let Value::Operation(op) = op {
                operation_lines.extend(describe_operation(op));
            }
        }
    }
    Ok(RunScriptOutput {
        storage: unparse(&storage, Mode::Readable),
        operations: operation_lines,
        big_map_diff: diff,
        trace,
    })
}

fn script_field(script: &Node, field: kestrel_micheline::Prim) -> Option<&Node> {
    script.children().iter().find_map(|item| match &item.kind {
        kestrel_micheline::NodeKind::Prim { name, args, .. }
            if name.known() == Some(field) && args.len() == 1 =>
        {
            Some(&args[0])
        }
        _ => None,
    })
}

fn parse_data_text(text: &str) -> Result<Node, RunScriptError> {
    let node = kestrel_micheline::parse_expression(text)
        .map_err(|e| RunScriptError::Parse(e.describe(text)))?;
    crate::macros::expand_all(&node).map_err(|e| RunScriptError::Typecheck(e.into()))
}

/// Gives every big map of `value` without an id a fresh id, recording the diff lines octez-client
/// prints (`New map(4) of type (big_map nat nat)`, `Set map(4)[1] to 4`).
fn allocate_big_maps(value: &Value, ty: &Type, next_id: &mut i64, diff: &mut Vec<String>) -> Value {
    match (value, ty) {
        (Value::BigMap(map), Type::BigMap(..)) => {
            let id = match &map.id {
                Some(id) => id.clone(),
                None => {
                    let id = crate::int::Int::from(*next_id);
                    *next_id += 1;
                    diff.push(format!(
                        "New map({id}) of type {}",
                        print_one_line(&ty.to_node())
                    ));
                    id
                }
            };
            for (key, entry) in &map.overlay {
                let key_text = print_one_line(&unparse(key, Mode::Readable));
                match entry {
                    Some(v) => diff.push(format!(
                        "Set map({id})[{key_text}] to {}",
                        print_one_line(&unparse(v, Mode::Readable))
                    )),
                    None => diff.push(format!("Unset map({id})[{key_text}]")),
                }
            }
            Value::BigMap(Rc::new(BigMap {
                id: Some(id),
                key_type: map.key_type.clone(),
                value_type: map.value_type.clone(),
                overlay: Default::default(),
            }))
        }
        (Value::Pair(pair), Type::Pair(left, right)) => {
            let a = allocate_big_maps(&pair.0, left, next_id, diff);
            let b = allocate_big_maps(&pair.1, right, next_id, diff);
            Value::pair(a, b)
        }
        (Value::Left(inner), Type::Or(left, _)) => {
            Value::Left(Rc::new(allocate_big_maps(inner, left, next_id, diff)))
        }
        (Value::Right(inner), Type::Or(_, right)) => {
            Value::Right(Rc::new(allocate_big_maps(inner, right, next_id, diff)))
        }
        (Value::Some(inner), Type::Option(t)) => {
            Value::some(allocate_big_maps(inner, t, next_id, diff))
        }
        _ => value.clone(),
    }
}

fn describe_operation(op: &Operation) -> Vec<String> {
    let one = |node: Node| print_one_line(&node);
    match op {
        Operation::Transfer {
            param,
            amount,
            destination,
            ..
        } => vec![
            "Internal Transaction:".to_string(),
            format!("  Amount: {}", format_tez(*amount)),
            format!("  From: {DEFAULT_SELF_ADDRESS}"),
            format!("  To: {}", destination.to_readable()),
            format!("  Parameter: {}", one(unparse(param, Mode::Readable))),
        ],
        Operation::SetDelegate { delegate, .. } => vec![
            "Internal Delegation:".to_string(),
            format!(
                "  Delegate: {}",
                delegate
                    .map(|k| k.to_base58())
                    .unwrap_or_else(|| "none".into())
            ),
        ],
        Operation::CreateContract {
            amount,
            address,
            storage,
            ..
        } => vec![
            "Internal origination:".to_string(),
            format!("  Credit: {}", format_tez(*amount)),
            format!("  Originated contract: {}", address.to_readable()),
            format!(
                "  Initial storage: {}",
                one(unparse(storage, Mode::Readable))
            ),
        ],
        Operation::Emit { tag, payload, .. } => vec![
            "Internal Event:".to_string(),
            format!("  Tag: {tag}"),
            format!("  Payload: {}", one(unparse(payload, Mode::Readable))),
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
