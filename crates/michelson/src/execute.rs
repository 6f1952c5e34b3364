//! Running code: [`execute`] calls a [`Script`]'s entrypoint as Octez's `Script_interpreter.execute`
//! does (parse the storage and the parameter, find the entrypoint, run, extract the big-map diff),
//! [`run_view`] runs one of its views, and [`typecheck_code`] / [`run_code`] run a code block on an
//! arbitrary stack (the TZT runner's need).
//!
//! Gas: typechecking and running share one counter, as in Octez — what parsing the script and
//! the data consumed is no longer available to the code.

use crate::big_map_diff::{extract_big_map_diff, BigMapDiff};
use crate::context::{Context, Lookup};
use crate::error::ExecutionError;
use crate::host::{Environment, Host};
use crate::interpret::{Interpreter, NoTrace, Tracer};
use crate::ir::Code;
use crate::literals::{Address, Destination, KeyHash};
use crate::script::Script;
use crate::typecheck::{TcError, Typechecker};
use crate::types::Type;
use crate::value::{Operation, Value};
use kestrel_micheline::Node;
use std::rc::Rc;

/// What a call passes to a script.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The entrypoint (`"default"` for the whole parameter).
    pub entrypoint: &'a str,
    /// The argument, Micheline of the entrypoint's type.
    pub parameter: &'a Node,
    /// The storage before the call, Micheline of the storage type.
    pub storage: &'a Node,
}

/// An operation a script emitted.
#[derive(Debug, Clone)]
pub enum InternalOperation {
    /// A transfer to a contract or an account (`TRANSFER_TOKENS`).
    Transaction {
        /// The destination and its entrypoint.
        destination: Address,
        /// Mutez transferred.
        amount_mutez: i64,
        /// The argument.
        parameter: Value,
        /// Its type.
        parameter_type: Type,
        /// Octez's internal operation nonce (the order the instructions ran in).
        nonce: u64,
    },
    /// A new contract (`CREATE_CONTRACT`).
    Origination {
        /// Its address, from the host's origination nonce.
        address: Destination,
        /// Its delegate.
        delegate: Option<KeyHash>,
        /// Mutez credited to it.
        credit_mutez: i64,
        /// Its script (parameter, storage, code), Micheline.
        script: Node,
        /// Its initial storage.
        storage: Value,
        /// The storage type.
        storage_type: Type,
        /// Octez's internal operation nonce.
        nonce: u64,
    },
    /// A delegate change (`SET_DELEGATE`).
    Delegation {
        /// The new delegate; `None` withdraws the delegation.
        delegate: Option<KeyHash>,
        /// Octez's internal operation nonce.
        nonce: u64,
    },
    /// An event (`EMIT`).
    Event {
        /// The tag (may be empty).
        tag: String,
        /// The payload's type as written (annotations kept).
        payload_type: Node,
        /// The payload.
        payload: Value,
        /// Octez's internal operation nonce.
        nonce: u64,
    },
}

impl InternalOperation {
    fn from_operation(operation: &Operation) -> InternalOperation {
        match operation {
            Operation::Transfer {
                param,
                param_type,
                amount,
                destination,
                nonce,
                ..
            } => InternalOperation::Transaction {
                destination: destination.clone(),
                amount_mutez: *amount,
                parameter: param.clone(),
                parameter_type: param_type.clone(),
                nonce: *nonce,
            },
            Operation::SetDelegate { delegate, nonce } => InternalOperation::Delegation {
                delegate: *delegate,
                nonce: *nonce,
            },
            Operation::CreateContract {
                script,
                delegate,
                amount,
                storage,
                storage_type,
                address,
                nonce,
                ..
            } => InternalOperation::Origination {
                address: address.destination,
                delegate: *delegate,
                credit_mutez: *amount,
                script: script.clone(),
                storage: storage.clone(),
                storage_type: storage_type.clone(),
                nonce: *nonce,
            },
            Operation::Emit {
                tag,
                type_node,
                payload,
                nonce,
                ..
            } => InternalOperation::Event {
                tag: tag.clone(),
                payload_type: type_node.clone(),
                payload: payload.clone(),
                nonce: *nonce,
            },
        }
    }
}

/// What a successful call produced.
#[derive(Debug, Clone)]
pub struct Execution {
    /// The storage after the call; its big maps are stored ones (ids) with no pending changes.
    pub storage: Value,
    /// The emitted operations, in the order the script returned them.
    pub operations: Vec<InternalOperation>,
    /// The big-map changes, in Octez's `lazy_storage_diff` shape.
    pub big_map_diff: Vec<BigMapDiff>,
    /// Milligas consumed: parsing the script and the data, and running the code.
    pub consumed_milligas: u64,
}

/// What a successful view call produced.
#[derive(Debug, Clone)]
pub struct ViewExecution {
    /// The view's result.
    pub result: Value,
    /// Milligas consumed.
    pub consumed_milligas: u64,
}

/// Calls `entrypoint` of `script` with `parameter` on `storage`, in `environment`, reading the
/// world through `host`, with `gas_limit_milli` milligas.
pub fn execute(
    script: &Script,
    entrypoint: &str,
    parameter: &Node,
    storage: &Node,
    environment: &Environment,
    host: &mut impl Host,
    gas_limit_milli: u64,
) -> Result<Execution, ExecutionError> {
    let call = Call {
        entrypoint,
        parameter,
        storage,
    };
    execute_traced(
        script,
        &call,
        environment,
        host,
        gas_limit_milli,
        &mut NoTrace,
    )
}

/// [`execute`], reporting every step to `tracer` (octez-client's `--trace-stack`): first the
/// initial stack, at the code's first location, with the gas left after parsing; then the stack
/// after each step.
pub fn execute_traced<T: Tracer>(
    script: &Script,
    call: &Call<'_>,
    environment: &Environment,
    host: &mut impl Host,
    gas_limit_milli: u64,
    tracer: &mut T,
) -> Result<Execution, ExecutionError> {
    check_environment(environment)?;
    let gas_limit = i64::try_from(gas_limit_milli).unwrap_or(i64::MAX);
    let mut context = Context::new(environment, script.parameter_node(), host);
    let (initial, storage_before, parse_gas) = {
        let mut tc = Typechecker::new(context.lookup());
        tc.legacy = script.legacy();
        parse_call(&mut tc, script, call)?
    };
    let consumed_before = i64::try_from(script.typecheck_gas_milli())
        .unwrap_or(i64::MAX)
        .saturating_add(parse_gas);
    let gas = gas_limit.saturating_sub(consumed_before);
    if gas < 0 {
        return Err(ExecutionError::GasExhaustion);
    }
    let initial = vec![initial];
    if T::ENABLED {
        tracer.log(script.first_location(), gas, &initial);
    }
    let mut interpreter = Interpreter::new(&mut context, gas);
    let mut stack = interpreter.run_traced(script.code(), initial, tracer)?;
    // The empty continuation that ends the execution (`KNil`), after the code's last step.
    let remaining = interpreter
        .gas_milli_remaining
        .saturating_sub(crate::gas::interpreter::COST_NIL_CONTINUATION as i64);
    if remaining < 0 {
        return Err(ExecutionError::GasExhaustion);
    }
    // The code's type is `pair (list operation) storage` on an otherwise empty stack.
    let Some(Value::Pair(result)) = stack.pop() else {
        unreachable!("a typechecked script returns a pair");
    };
    let Value::List(list) = &result.0 else {
        unreachable!("a typechecked script returns a list of operations");
    };
    // The operations' big-map moves to temporary ids come first, in the operations' order,
    // then the storage's diff (`Script_interpreter.execute`, `lazy_storage_diff_all`).
    let mut operations = Vec::with_capacity(list.len());
    let mut big_map_diff = Vec::new();
    for operation in list.iter() {
        let Value::Operation(operation) = operation else {
            unreachable!("a list of operations holds operations");
        };
        operations.push(InternalOperation::from_operation(operation));
        if let Operation::Transfer {
            big_map_diff: diff, ..
        }
        | Operation::CreateContract {
            big_map_diff: diff, ..
        } = &**operation
        {
            big_map_diff.extend(diff.iter().cloned());
        }
    }
    let (storage, storage_diff) = extract_big_map_diff(
        &storage_before,
        &result.1,
        script.storage_type(),
        &mut *context.host,
    );
    // Describing the storage's big maps (`extract_lazy_storage_diff`) is part of the call.
    let remaining = remaining.saturating_sub(
        i64::try_from(crate::big_map_diff::big_map_diff_cost_milli(&storage_diff))
            .unwrap_or(i64::MAX),
    );
    if remaining < 0 {
        return Err(ExecutionError::GasExhaustion);
    }
    big_map_diff.extend(storage_diff);
    Ok(Execution {
        storage,
        operations,
        big_map_diff,
        consumed_milligas: u64::try_from(gas_limit.saturating_sub(remaining)).unwrap_or(0),
    })
}

/// Amounts are mutez, which are never negative.
fn check_environment(environment: &Environment) -> Result<(), ExecutionError> {
    if environment.amount_mutez < 0 {
        return Err(ExecutionError::InvalidEnvironment("negative amount"));
    }
    if environment.balance_mutez < 0 {
        return Err(ExecutionError::InvalidEnvironment("negative balance"));
    }
    Ok(())
}

/// Octez's `Script_interpreter.execute` before the code runs: the storage, the entrypoint
/// search, the argument, then `collect_lazy_storage` of both. Returns the initial stack's
/// element, the storage and the milligas consumed.
fn parse_call(
    tc: &mut Typechecker<'_>,
    script: &Script,
    call: &Call<'_>,
) -> Result<(Value, Value, i64), ExecutionError> {
    let storage = tc
        .parse_data(call.storage, script.storage_type())
        .map_err(ExecutionError::IllTypedData)?;
    let (entry_type, path) = script
        .entrypoint(call.entrypoint)
        .ok_or_else(|| ExecutionError::NoSuchEntrypoint(call.entrypoint.to_string()))?;
    tc.charge_gas(
        crate::typecheck::entrypoints::search_steps(script.parameter_node(), call.entrypoint)
            .saturating_mul(crate::gas::typecheck::COST_FIND_ENTRYPOINT_CYCLE),
    );
    let mut parameter = tc
        .parse_data(call.parameter, &entry_type)
        .map_err(ExecutionError::IllTypedData)?;
    for left in path.iter().rev() {
        parameter = if *left {
            Value::Left(Rc::new(parameter))
        } else {
            Value::Right(Rc::new(parameter))
        };
    }
    tc.charge_gas(
        crate::typecheck::charges::collect_lazy_storage(script.parameter_type(), &parameter)
            .saturating_add(crate::typecheck::charges::collect_lazy_storage(
                script.storage_type(),
                &storage,
            )),
    );
    Ok((
        Value::pair(parameter, storage.clone()),
        storage,
        tc.gas_consumed_milli,
    ))
}

/// Runs view `name` of `script` on `input` with the contract's `storage`.
pub fn run_view(
    script: &Script,
    name: &str,
    input: &Node,
    storage: &Node,
    environment: &Environment,
    host: &mut impl Host,
    gas_limit_milli: u64,
) -> Result<ViewExecution, ExecutionError> {
    let (input_type, output_type, code) = script
        .view(name)
        .ok_or_else(|| ExecutionError::NoSuchView(name.to_string()))?;
    check_environment(environment)?;
    let gas_limit = i64::try_from(gas_limit_milli).unwrap_or(i64::MAX);
    let mut context = Context::new(environment, script.parameter_node(), host);
    let (typed_code, initial, consumed_before) = {
        let mut tc = Typechecker::new(context.lookup());
        tc.legacy = script.legacy();
        tc.allow_self = false;
        let storage = tc
            .parse_data(storage, script.storage_type())
            .map_err(ExecutionError::IllTypedData)?;
        let input = tc
            .parse_data(input, input_type)
            .map_err(ExecutionError::IllTypedData)?;
        let stack = vec![Type::pair(
            input_type.clone(),
            script.storage_type().clone(),
        )];
        let (typed_code, out) = tc
            .typecheck_code(code, stack)
            .map_err(ExecutionError::IllTypedView)?;
        debug_assert!(out.is_none_or(|out| out.len() == 1 && &out[0] == output_type));
        (
            typed_code,
            Value::pair(input, storage),
            tc.gas_consumed_milli,
        )
    };
    let gas = gas_limit
        .saturating_sub(i64::try_from(script.typecheck_gas_milli()).unwrap_or(i64::MAX))
        .saturating_sub(consumed_before);
    if gas < 0 {
        return Err(ExecutionError::GasExhaustion);
    }
    let mut interpreter = Interpreter::new(&mut context, gas);
    let mut stack = interpreter.run(&Rc::new(typed_code), vec![initial])?;
    let remaining = interpreter.gas_milli_remaining;
    let Some(result) = stack.pop() else {
        unreachable!("a typechecked view returns one value");
    };
    Ok(ViewExecution {
        result,
        consumed_milligas: u64::try_from(gas_limit.saturating_sub(remaining)).unwrap_or(0),
    })
}

/// A code block typechecked against an input stack.
pub struct TypedCode {
    code: Rc<Code>,
    output: Option<Vec<Type>>,
}

impl TypedCode {
    /// The output stack's types, top last; `None` when the code always fails.
    pub fn output_types(&self) -> Option<&[Type]> {
        self.output.as_deref()
    }
}

/// Where a code block runs: the environment, the running contract's parameter type (for `SELF`)
/// and the host.
pub struct CodeContext<'a, H: Host> {
    /// The environment.
    pub environment: &'a Environment,
    /// The running contract's parameter type, annotated.
    pub self_parameter: &'a Node,
    /// The world.
    pub host: &'a mut H,
    /// Whether deprecated instructions are accepted.
    pub legacy: bool,
}

impl<H: Host> CodeContext<'_, H> {
    pub(crate) fn lookup(&self) -> Lookup<'_> {
        Lookup {
            self_address: &self.environment.self_address,
            self_param: self.self_parameter,
            host: &*self.host,
        }
    }
}

/// Typechecks `code` (macros expanded here) against `input` (top last).
pub fn typecheck_code<H: Host>(
    code: &Node,
    input: Vec<Type>,
    context: &CodeContext<'_, H>,
) -> Result<TypedCode, TcError> {
    let expanded = crate::macros::expand_all(code)?;
    let mut tc = Typechecker::new(context.lookup());
    tc.legacy = context.legacy;
    let (code, output) = tc.typecheck_code(&expanded, input)?;
    Ok(TypedCode {
        code: Rc::new(code),
        output,
    })
}

/// Runs `code` on `stack` (top last), which must have the types `code` was checked against, with
/// `gas_limit_milli` milligas. Returns the output stack, top last.
pub fn run_code<H: Host>(
    code: &TypedCode,
    stack: Vec<Value>,
    context: &mut CodeContext<'_, H>,
    gas_limit_milli: u64,
) -> Result<Vec<Value>, ExecutionError> {
    let mut run_context = Context::new(
        context.environment,
        context.self_parameter,
        &mut *context.host,
    );
    let gas = i64::try_from(gas_limit_milli).unwrap_or(i64::MAX);
    let mut interpreter = Interpreter::new(&mut run_context, gas);
    Ok(interpreter.run(&code.code, stack)?)
}

/// Typechecks `node` as a value of type `ty` (macros in lambdas expanded), in `context`.
pub fn typecheck_data<H: Host>(
    node: &Node,
    ty: &Type,
    context: &CodeContext<'_, H>,
) -> Result<Value, TcError> {
    typecheck_data_metered(node, ty, context).map(|(value, _)| value)
}

/// [`typecheck_data`], also returning the milligas Octez's `parse_data` charges for it (what
/// `octez-client typecheck data` and `hash data` report).
pub fn typecheck_data_metered<H: Host>(
    node: &Node,
    ty: &Type,
    context: &CodeContext<'_, H>,
) -> Result<(Value, u64), TcError> {
    parse_data_metered(context.lookup(), node, ty, context.legacy)
}

/// [`typecheck_data_metered`] for data that names no stored state: no other contract or big
/// map, `SELF` of type `unit` at TZT's default address (what octez-client's `typecheck data`
/// and `hash data` and the node's `typecheck_data`, `pack_data` and `normalize_data` RPCs see).
pub fn typecheck_data_standalone(
    node: &Node,
    ty: &Type,
    legacy: bool,
) -> Result<(Value, u64), TcError> {
    crate::context::with_empty_lookup(|lookup| parse_data_metered(lookup, node, ty, legacy))
}

fn parse_data_metered(
    lookup: crate::context::Lookup<'_>,
    node: &Node,
    ty: &Type,
    legacy: bool,
) -> Result<(Value, u64), TcError> {
    let mut tc = Typechecker::new(lookup);
    tc.legacy = legacy;
    let value = if ty.has_lambda() {
        let expanded = crate::macros::expand_all(node)?;
        tc.parse_data(&expanded, ty)?
    } else {
        tc.parse_data(node, ty)?
    };
    Ok((value, consumed_milligas(&tc)))
}

/// Parses `node` as a type, with the milligas Octez's `parse_ty` charges for it; `legacy`
/// accepts the deprecated types.
pub fn typecheck_type(node: &Node, legacy: bool) -> Result<(Type, u64), TcError> {
    crate::context::with_empty_lookup(|lookup| {
        let mut tc = Typechecker::new(lookup);
        tc.legacy = legacy;
        let ty = tc.parse_type(node)?;
        Ok((ty, consumed_milligas(&tc)))
    })
}

fn consumed_milligas(tc: &Typechecker<'_>) -> u64 {
    u64::try_from(tc.gas_consumed_milli).unwrap_or(0)
}

/// Expands the macros of code or data (`CMPEQ`, `IF_SOME`, `DUUP`, ...) into plain instructions.
pub fn expand_macros(node: &Node) -> Result<Node, TcError> {
    Ok(crate::macros::expand_all(node)?.into_owned())
}
