//! The one place `kestrel client` calls the Michelson crate: typechecking types, data and
//! scripts, unparsing in octez-client's three modes, typed `PACK` with its gas, macro expansion
//! and `run script`. Keeping every call here lets the command grammar and the printing stay the
//! same when the Michelson crate's API changes.

use kestrel_micheline::{Node, NodeKind, Prim, Span};
use kestrel_michelson::{
    normalize, Config, ExecutionError, Script, Type, TypecheckError as TcError,
    TypecheckErrorKind as TcErrorKind, Value, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use kestrel_michelson_conformance::run_script::{self, RunScriptError, RunScriptOptions};

pub use kestrel_michelson_conformance::run_script::{RunScriptOutput, TraceStep};

/// octez-client's `--unparsing-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnparsingMode {
    /// Strings for domain values, flat `Pair a b c` combs (the default).
    Readable,
    /// Bytes and integers; right combs of four or more as sequences.
    Optimized,
    /// Bytes and integers; binary pairs (what `PACK` writes).
    OptimizedLegacy,
}

/// A typechecking failure: where and why, in octez-client's words.
#[derive(Debug)]
pub struct Failure {
    /// The offending node's bytes in the text it was read from.
    pub span: Span,
    /// octez-client's message.
    pub message: String,
    /// For a value of the wrong type (Octez's `Invalid_constant`): the value and the type, which
    /// octez-client lays out after the location on the same line when they fit.
    pub invalid_value: Option<(String, String)>,
}

impl Failure {
    fn of(error: &TcError) -> Failure {
        let invalid_value = match &error.kind {
            TcErrorKind::InvalidData { expected, found } => Some((found.clone(), expected.clone())),
            _ => None,
        };
        Failure {
            span: error.span,
            message: describe(&error.kind),
            invalid_value,
        }
    }
}

/// octez-client's sentence for a typechecking error.
pub fn describe(kind: &TcErrorKind) -> String {
    match kind {
        TcErrorKind::Type(kestrel_michelson::TypeError::NotAType(what)) => {
            format!("unexpected {}, only a primitive can be used here.", node_kind(what))
        }
        TcErrorKind::Type(error) => format!("ill-formed type: {error}."),
        TcErrorKind::BadStack { instr, stack } => {
            format!("wrong stack type for instruction {instr}:\n{stack}.")
        }
        TcErrorKind::UnknownInstruction(name) => format!("unknown primitive {name}."),
        TcErrorKind::BadArguments(instr) => format!("wrong arguments for instruction {instr}."),
        TcErrorKind::InvalidData { expected, found } => {
            format!("value {found} is invalid for type {expected}.")
        }
        TcErrorKind::UnorderedSet => "Values in a set literal must be in strictly ascending order, but they were unordered in literal.".into(),
        TcErrorKind::UnorderedMap => "Keys in a map literal must be in strictly ascending order, but they were unordered in literal.".into(),
        TcErrorKind::UnmatchedBranches { first, second } => {
            format!("two branches don't end with the same stack type:\n{first}\nand\n{second}.")
        }
        TcErrorKind::BadLoopBody => "the body of a loop changes the stack type.".into(),
        TcErrorKind::BadReturn { expected, found } => {
            format!("wrong return type: expected {expected}, got {found}.")
        }
        TcErrorKind::UnreachableCode => "unreachable code after a failing instruction.".into(),
        TcErrorKind::ForbiddenType { property, ty } => {
            format!("type {ty} is not {property}.")
        }
        TcErrorKind::Macro(name) => format!("unexpected arity for macro {name}."),
        TcErrorKind::Unsupported(what) => format!("unsupported feature: {what}."),
        TcErrorKind::BadEntrypoint(what) => format!("invalid entrypoint: {what}."),
        // Octez names no annotation: `unexpected annotation.`
        TcErrorKind::BadAnnotation(_) => "unexpected annotation.".into(),
        TcErrorKind::BadScript(what) => format!("ill-formed script: {what}."),
        TcErrorKind::GasExhaustion => {
            "Gas limit exceeded during typechecking or execution.".into()
        }
        TcErrorKind::FailNotInTail => "FAILWITH must be at tail position.".into(),
        TcErrorKind::TooDeep => "code or data nested too deeply.".into(),
    }
}

/// Octez's name for the kind of node `text` (a node printed on one line) is.
fn node_kind(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'"') => "string",
        Some(b'{') => "sequence",
        Some(b'0') if text.starts_with("0x") => "bytes",
        Some(b'-' | b'0'..=b'9') => "int",
        _ => "primitive",
    }
}

/// A typechecker over octez-client's mockup context, counting gas from the operation limit.
pub struct Checker {
    legacy: bool,
}

/// A value that typechecked.
pub struct Typed {
    value: Value,
}

impl Checker {
    /// The mockup context; `legacy` allows the deprecated instructions and types.
    pub fn new(legacy: bool) -> Checker {
        Checker { legacy }
    }

    /// Expands the macros of `node`.
    pub fn expand(node: &Node) -> Result<Node, Failure> {
        kestrel_michelson::expand_macros(node).map_err(|e| Failure::of(&e))
    }

    /// Parses `node` as a type; returns it with the gas charged.
    pub fn parse_type(&self, node: &Node) -> Result<(Type, i64), Failure> {
        let (ty, gas) =
            kestrel_michelson::typecheck_type(node, self.legacy).map_err(|e| Failure::of(&e))?;
        Ok((ty, milligas(gas)))
    }

    /// Parses `node` (macros expanded) as data of `ty`; returns it with the gas charged.
    pub fn parse_data(&self, node: &Node, ty: &Type) -> Result<(Typed, i64), Failure> {
        let node = Checker::expand(node)?;
        let (value, gas) = kestrel_michelson::typecheck_data_standalone(&node, ty, self.legacy)
            .map_err(|e| Failure::of(&e))?;
        let typed = Typed { value };
        Ok((typed, milligas(gas)))
    }

    /// Typechecks a script (macros expanded here).
    pub fn typecheck_script(&self, node: &Node) -> Result<i64, Failure> {
        let script = Script::typecheck(node, &self.config()).map_err(|e| Failure::of(&e))?;
        Ok(milligas(script.typecheck_gas_milli()))
    }

    fn config(&self) -> Config {
        Config {
            legacy: self.legacy,
            gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        }
    }
}

fn milligas(gas: u64) -> i64 {
    i64::try_from(gas).unwrap_or(i64::MAX)
}

/// Whether values of `ty` can be packed.
pub fn is_packable(ty: &Type) -> bool {
    ty.is_packable()
}

/// The type as octez-client's `normalize type` prints it: right combs as nested binary pairs.
pub fn type_node(ty: &Type) -> Node {
    unfold_pairs(&ty.to_node())
}

/// The type with right combs folded (`pair a b c`), as stacks are printed.
pub fn type_node_folded(ty: &Type) -> Node {
    ty.to_node()
}

fn unfold_pairs(node: &Node) -> Node {
    match &node.kind {
        NodeKind::Prim { name, args, annots } => {
            let args: Vec<Node> = if name.known() == Some(Prim::T_pair) && args.len() > 2 {
                vec![
                    unfold_pairs(&args[0]),
                    unfold_pairs(&Node::prim(Prim::T_pair, args[1..].to_vec())),
                ]
            } else {
                args.iter().map(unfold_pairs).collect()
            };
            Node {
                kind: NodeKind::Prim {
                    name: name.clone(),
                    args,
                    annots: annots.clone(),
                },
                span: node.span,
            }
        }
        _ => node.clone(),
    }
}

/// `value` back to Micheline in `mode`.
pub fn unparse_typed(typed: &Typed, mode: UnparsingMode) -> Node {
    use kestrel_michelson::UnparsingMode as Mode;
    match mode {
        UnparsingMode::Readable => normalize(&typed.value, Mode::Readable),
        UnparsingMode::OptimizedLegacy => normalize(&typed.value, Mode::OptimizedLegacy),
        UnparsingMode::Optimized => normalize(&typed.value, Mode::Optimized),
    }
}

/// The typed `PACK` of a value and what Octez charges for it, in milligas.
pub fn pack(typed: &Typed) -> Result<(Vec<u8>, i64), String> {
    let (bytes, cost) = kestrel_michelson::pack_metered(&typed.value).map_err(|e| e.to_string())?;
    Ok((bytes, milligas(cost)))
}

/// The gas of one operation, in milligas: what `hash data` and `typecheck` start from.
pub const OPERATION_GAS_MILLI: i64 = HARD_GAS_LIMIT_PER_OPERATION_MILLI as i64;

/// What `run script` takes, in the Michelson crate's units (mutez, milligas, seconds).
pub struct RunRequest {
    /// The script's text.
    pub source: String,
    /// The storage's text.
    pub storage: String,
    /// The parameter's text.
    pub input: String,
    /// `AMOUNT`, mutez.
    pub amount_mutez: i64,
    /// `BALANCE`, mutez.
    pub balance_mutez: Option<i64>,
    /// `SENDER`.
    pub sender: Option<String>,
    /// `SOURCE`.
    pub source_address: Option<String>,
    /// `SELF_ADDRESS`.
    pub self_address: Option<String>,
    /// `NOW`, seconds.
    pub now: Option<i64>,
    /// `LEVEL`.
    pub level: Option<u64>,
    /// The gas limit, milligas.
    pub gas_milli: Option<i64>,
    /// The entrypoint.
    pub entrypoint: Option<String>,
    /// Whether to collect a trace.
    pub trace_stack: bool,
}

/// The texts `run script` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The script.
    Script,
    /// The storage.
    Storage,
    /// The parameter.
    Input,
}

/// Which text of a run that did not typecheck is ill-typed (the script, else the storage, else
/// the parameter, as `run script` checks them), so an error's position is read in that text.
fn ill_typed_part(request: &RunRequest) -> Part {
    ill_typed_text(&request.source, &request.storage)
}

/// [`ill_typed_part`] of a run of the script `source` on `storage`.
pub fn ill_typed_text(source: &str, storage: &str) -> Part {
    let checker = Checker::new(false);
    let script = kestrel_micheline::parse_toplevel(source)
        .ok()
        .and_then(|node| Script::typecheck(&node, &checker.config()).ok());
    let Some(script) = script else {
        return Part::Script;
    };
    let storage_ok = kestrel_micheline::parse_expression(storage)
        .ok()
        .is_some_and(|node| checker.parse_data(&node, script.storage_type()).is_ok());
    if storage_ok {
        Part::Input
    } else {
        Part::Storage
    }
}

/// Why `run script` failed.
pub enum RunFailure {
    /// The text of the script, storage or input is not Micheline (message with its position).
    Parse(String),
    /// Ill-typed script, storage or input: which, and why.
    Typecheck(Part, Failure),
    /// The script failed while running.
    Runtime {
        /// octez-client's sentence (`script reached FAILWITH instruction\nwith Unit`).
        message: String,
        /// Where in the script's text the failing instruction is, when known.
        span: Option<Span>,
        /// The trace up to the failure.
        trace: Vec<TraceStep>,
    },
    /// An option octez-client would reject.
    BadOption(String),
}

impl RunRequest {
    fn options(&self, trace_stack: bool) -> RunScriptOptions {
        RunScriptOptions {
            storage: self.storage.clone(),
            input: self.input.clone(),
            amount_mutez: Some(self.amount_mutez),
            balance_mutez: self.balance_mutez,
            level: self.level,
            now: self.now,
            source: self.source_address.clone(),
            sender: self.sender.clone(),
            self_address: self.self_address.clone(),
            entrypoint: self.entrypoint.clone(),
            trace_stack,
            gas_limit_milli: self.gas_milli.map(|gas| u64::try_from(gas).unwrap_or(0)),
        }
    }
}

/// Runs a script as `octez-client run script` does.
pub fn run(request: &RunRequest) -> Result<RunScriptOutput, RunFailure> {
    match run_script::run_script(&request.source, &request.options(request.trace_stack)) {
        Ok(output) => Ok(output),
        Err(RunScriptError::Parse(message)) => Err(RunFailure::Parse(message)),
        Err(RunScriptError::Typecheck(error)) => Err(RunFailure::Typecheck(
            ill_typed_part(request),
            Failure::of(&error),
        )),
        Err(RunScriptError::BadOption(message)) => Err(RunFailure::BadOption(message)),
        // The storage or the parameter does not have its type: a typing error in that text,
        // not a failure of the running script.
        Err(RunScriptError::Execution {
            error: ExecutionError::IllTypedData(error),
            ..
        }) => Err(RunFailure::Typecheck(
            ill_typed_part(request),
            Failure::of(&error),
        )),
        Err(RunScriptError::Execution {
            error,
            trace,
            location,
        }) => {
            let message = match &error {
                ExecutionError::GasExhaustion => {
                    "Gas limit exceeded during typechecking or execution.\nTry again with a higher gas limit."
                        .to_string()
                }
                ExecutionError::Runtime(text) => text.clone(),
                // octez-client names the failing instruction by line and characters (from
                // `span` below), not by location.
                ExecutionError::Failed { value, .. } => format!(
                    "script reached FAILWITH instruction\nwith {}",
                    kestrel_micheline::print::to_text_single_line(&normalize(
                        value,
                        kestrel_michelson::UnparsingMode::Readable
                    ))
                ),
                other => other.to_string(),
            };
            let span = location.and_then(|location| failure_span(&request.source, location));
            Err(RunFailure::Runtime {
                message,
                span,
                trace,
            })
        }
    }
}

/// The storage type of the script `source` on one line, as Octez prints it in errors (empty
/// when the script has no `storage` field: then it did not typecheck either).
pub fn storage_type_text(source: &str) -> String {
    let Ok(script) = kestrel_micheline::parse_toplevel(source) else {
        return String::new();
    };
    script
        .children()
        .iter()
        .find_map(|field| match &field.kind {
            NodeKind::Prim { name, args, .. } if name.known() == Some(Prim::K_storage) => args
                .first()
                .map(kestrel_micheline::print::to_text_single_line),
            _ => None,
        })
        .unwrap_or_default()
}

/// Where the failing instruction is in the script's text `source`: its location mapped to the
/// macro-expanded script's node, whose span is the text it came from.
pub fn failure_span(source: &str, location: u32) -> Option<Span> {
    let parsed = kestrel_micheline::parse_toplevel(source).ok()?;
    let expanded = kestrel_michelson::expand_macros(&parsed).ok()?;
    let node = kestrel_micheline::location::node_at(&expanded, location as usize)?;
    Some(node.span)
}
