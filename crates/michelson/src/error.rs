//! The errors of the public API: [`ExecutionError`] for a call and the typechecker's
//! [`TcError`] (re-exported as `TypecheckError`), each with a `Display` worded as octez-client
//! words it, so a user recognises the failure.

use crate::interpret::RunError;
use crate::typecheck::{TcError, TcErrorKind};
use crate::unparse::{unparse, Mode};
use crate::value::Value;
use kestrel_micheline::print::{write_single_line, Wrapping};
use std::fmt;

/// Why a call ([`crate::execute`], [`crate::run_view`], [`crate::run_code`]) produced no result.
#[derive(Debug, Clone)]
pub enum ExecutionError {
    /// The parameter or storage is ill-typed (the span is in the data's own text).
    IllTypedData(TcError),
    /// The script has no entrypoint of this name.
    NoSuchEntrypoint(String),
    /// The script has no view of this name.
    NoSuchView(String),
    /// `FAILWITH` was reached.
    Failed {
        /// The value it failed with.
        value: Value,
        /// The instruction's Micheline location (prefix-order node number).
        location: u32,
    },
    /// An arithmetic operation overflowed (mutez addition or multiplication, shifts).
    Overflow,
    /// A mutez subtraction went below zero (legacy `SUB` on mutez).
    MutezUnderflow,
    /// The gas limit was reached.
    GasExhaustion,
    /// A value the host stored (a big map value, a view's storage) does not typecheck.
    IllTypedStoredValue,
    /// The code of a view the host gave does not typecheck.
    IllTypedView(TcError),
    /// A constant Octez typechecks again while running — the code of a lambda `APPLY`
    /// captures, with its `PUSH`ed constants — failed there, in practice by running out of gas
    /// (Octez reports it as `Invalid_constant`, a static error, not as a gas exhaustion).
    InvalidConstant(TcError),
    /// Another runtime error.
    Runtime(String),
    /// The environment is impossible (a negative amount or balance).
    InvalidEnvironment(&'static str),
}

impl From<RunError> for ExecutionError {
    fn from(error: RunError) -> ExecutionError {
        match error {
            RunError::Failed(value, location) => ExecutionError::Failed { value, location },
            RunError::Overflow => ExecutionError::Overflow,
            RunError::MutezUnderflow => ExecutionError::MutezUnderflow,
            RunError::GasExhaustion => ExecutionError::GasExhaustion,
            RunError::IllTypedStoredValue => ExecutionError::IllTypedStoredValue,
            RunError::IllTypedView(error) => ExecutionError::IllTypedView(*error),
            RunError::InvalidConstant(error) => ExecutionError::InvalidConstant(*error),
            RunError::Other(message) => ExecutionError::Runtime(message),
        }
    }
}

/// `value` in readable form on one line, as octez-client prints a failing value.
pub(crate) fn one_line(value: &Value) -> String {
    let mut out = String::new();
    write_single_line(&mut out, &unparse(value, Mode::Readable), Wrapping::Wrapped);
    out
}

impl fmt::Display for ExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecutionError::IllTypedData(error) => write!(f, "Ill typed data {error}"),
            ExecutionError::NoSuchEntrypoint(name) => {
                write!(f, "Contract has no entrypoint named {name}")
            }
            ExecutionError::NoSuchView(name) => write!(f, "Contract has no view named {name}"),
            ExecutionError::Failed { value, location } => write!(
                f,
                "At location {location}, script reached FAILWITH instruction\nwith {}",
                one_line(value)
            ),
            ExecutionError::Overflow => write!(f, "unexpected arithmetic overflow"),
            ExecutionError::MutezUnderflow => write!(f, "unexpected arithmetic underflow"),
            ExecutionError::GasExhaustion => {
                write!(f, "Gas limit exceeded during typechecking or execution.")
            }
            ExecutionError::IllTypedStoredValue => {
                write!(f, "a value read from the context is ill-typed")
            }
            ExecutionError::IllTypedView(error) => write!(f, "Ill typed view {error}"),
            ExecutionError::InvalidConstant(error) => write!(f, "Invalid constant {error}"),
            ExecutionError::Runtime(message) => write!(f, "runtime error: {message}"),
            ExecutionError::InvalidEnvironment(why) => write!(f, "invalid environment: {why}"),
        }
    }
}

impl std::error::Error for ExecutionError {}

impl std::error::Error for TcError {}

impl fmt::Display for TcErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcErrorKind::Type(error) => write!(f, "ill-formed type: {error}"),
            TcErrorKind::BadStack { instr, stack } => {
                write!(f, "ill-typed instruction {instr} on stack {stack}")
            }
            TcErrorKind::UnknownInstruction(name) => write!(f, "unknown primitive {name}"),
            TcErrorKind::BadArguments(instr) => {
                write!(f, "wrong arguments to instruction {instr}")
            }
            TcErrorKind::InvalidData { expected, found } => {
                write!(
                    f,
                    "invalid primitive or value {found}, expected a {expected}"
                )
            }
            TcErrorKind::UnorderedSet => write!(f, "set elements are not in increasing order"),
            TcErrorKind::UnorderedMap => write!(f, "map keys are not in increasing order"),
            TcErrorKind::UnmatchedBranches { first, second } => {
                write!(
                    f,
                    "two branches don't end with the same stack type: {first} and {second}"
                )
            }
            TcErrorKind::BadLoopBody => write!(f, "a loop body changes the stack type"),
            TcErrorKind::BadReturn { expected, found } => {
                write!(f, "wrong return type: expected {expected}, got {found}")
            }
            TcErrorKind::UnreachableCode => write!(f, "unreachable code after FAILWITH"),
            TcErrorKind::ForbiddenType { property, ty } => write!(f, "type {ty} is not {property}"),
            TcErrorKind::Macro(name) => write!(f, "ill-formed macro {name}"),
            TcErrorKind::Unsupported(feature) => write!(f, "unsupported: {feature}"),
            TcErrorKind::BadEntrypoint(name) => write!(f, "no entrypoint named {name}"),
            TcErrorKind::BadAnnotation(annot) => write!(f, "unexpected annotation {annot}"),
            TcErrorKind::BadScript(why) => write!(f, "ill-formed script: {why}"),
            TcErrorKind::GasExhaustion => {
                write!(f, "Gas limit exceeded during typechecking or execution.")
            }
            TcErrorKind::FailNotInTail => write!(f, "FAILWITH is not in tail position"),
            TcErrorKind::TooDeep => write!(f, "lambdas or scripts nested too deeply"),
        }
    }
}
