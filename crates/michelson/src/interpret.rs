//! The interpreter: runs typed IR ([`crate::ir`]) in one flat loop (DESIGN.md, "Interpreter").
//!
//! - Control is explicit: jumps inside a code array, and four stacks owned by the loop — the
//!   call stack (lambdas and views return to their caller), the dip stack (values set aside by
//!   `DIP`), the iteration stack (`ITER`) and the map stack (`MAP`). No Michelson program grows
//!   the host stack.
//! - The gas counter is a local of the loop (milligas, Octez's cost functions from
//!   [`crate::gas`]), written back on exit.
//! - Tracing is a type parameter: the plain path is instantiated with [`NoTrace`], whose hooks
//!   are empty and inlined away, so it carries no test for it.
//! - Values are shared (`Rc`), so `DUP` of any value is O(1); integers take an `i64` fast path.
//!
//! Callers must pass a stack that matches the type the code was checked against.

use crate::call_stack::{CallStack, SavedContext};
use crate::context::Context;
use crate::gas::interpreter as cost;
use crate::int::Int;
use crate::ir::{Code, Instr, IterKind};
use crate::literals::{Address, Destination};
use crate::map::ValueMap;
use crate::set::ValueSet;
use crate::typecheck::unparse_code::UnparseExhausted;
use crate::types::Type;
use crate::value::{BigMap, Contract, Lambda, Operation, Ticket, Value};
use crate::value_stack::ValueStack;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Why a run stopped without a result.
#[derive(Debug, Clone)]
pub enum RunError {
    /// `FAILWITH` with this value, at this Micheline location.
    Failed(Value, u32),
    /// Arithmetic overflow (mutez, shifts, ...).
    Overflow,
    /// Negative mutez (legacy `SUB` on mutez).
    MutezUnderflow,
    /// The gas ran out.
    GasExhaustion,
    /// A runtime error Octez reports otherwise.
    Other(String),
    /// A value the host stored (a big map value, a view's storage) does not typecheck.
    IllTypedStoredValue,
    /// The code of a view the host gave does not typecheck.
    IllTypedView(Box<crate::typecheck::TcError>),
    /// A constant Octez typechecks again while unparsing a lambda (`APPLY`) failed there,
    /// in practice by running out of gas (Octez's `Invalid_constant`).
    InvalidConstant(Box<crate::typecheck::TcError>),
}

/// Observes a run step by step (for `--trace-stack`).
pub trait Tracer {
    /// Whether this tracer observes anything; the plain path's is `false`, so every hook call
    /// is compiled out.
    const ENABLED: bool;
    /// Called after each step with the step's location, the gas remaining and the stack (top
    /// last), as Octez logs them.
    fn log(&mut self, location: u32, gas_milli_remaining: i64, stack: &[Value]);
    /// Called before a logged step runs, with its location: where a failure of that step is.
    fn enter(&mut self, _location: u32) {}
}

/// The tracer of the plain path.
pub struct NoTrace;

impl Tracer for NoTrace {
    const ENABLED: bool = false;
    #[inline(always)]
    fn log(&mut self, _: u32, _: i64, _: &[Value]) {}
}

struct IterFrame {
    /// Remaining elements, next one last.
    remaining: Vec<Value>,
}

struct MapFrame {
    kind: IterKind,
    /// Remaining elements, next one last (for maps: `Pair key value`).
    remaining: Vec<Value>,
    /// Keys of the elements being mapped (maps only), in the order of `results`.
    current_key: Option<Value>,
    /// Results so far (lists: in order; maps: bindings).
    list_results: Vec<Value>,
    map_results: ValueMap,
}

/// A map's bindings as `Pair key value`s, the greatest key first (an iteration frame pops the
/// next one from the end).
fn bindings_last_first(map: &ValueMap) -> Vec<Value> {
    let mut bindings: Vec<Value> = map
        .iter()
        .map(|(key, value)| Value::pair(key.clone(), value.clone()))
        .collect();
    bindings.reverse();
    bindings
}

/// Bytes of the magnitude of an integer, rounded up (Octez's `int_bytes`, the size the
/// arithmetic cost functions take).
#[inline]
fn int_size(n: &Int) -> u64 {
    match n {
        Int::Small(v) => small_magnitude_size(v.unsigned_abs()),
        Int::Big(b) => b.bits().div_ceil(8),
    }
}

/// [`int_size`] of an `i64` of magnitude `magnitude`.
#[inline(always)]
fn small_magnitude_size(magnitude: u64) -> u64 {
    (64 - u64::from(magnitude.leading_zeros())).div_ceil(8)
}

/// The interpreter over one context.
pub(crate) struct Interpreter<'a, 'h> {
    /// The context (mutated: nonces, big map ids, ...).
    pub context: &'a mut Context<'h>,
    /// Milligas remaining.
    pub gas_milli_remaining: i64,
}

macro_rules! pop {
    ($stack:ident) => {
        match $stack.pop() {
            Some(v) => v,
            None => unreachable!("the typechecker guarantees the stack's depth"),
        }
    };
}

/// Pops the bool the typechecker guarantees on top of the stack. The popped `Value` owns nothing,
/// so it is forgotten rather than dropped: dropping it called `Value`'s out-of-line drop glue on
/// every `IF` and loop iteration.
#[inline(always)]
fn pop_bool(stack: &mut ValueStack) -> bool {
    let condition = match stack.last() {
        Some(Value::Bool(condition)) => *condition,
        _ => unreachable!("the typechecker guarantees the stack's types"),
    };
    stack.forget_top();
    condition
}

/// A value whose type is not the one the typechecker gave its stack slot: a bug, which stops the
/// program (callers write `return Err(bad())` where the typed IR rules the case out).
#[cold]
fn bad() -> RunError {
    unreachable!("the typechecker guarantees the stack's types")
}

impl<'a, 'h> Interpreter<'a, 'h> {
    /// An interpreter with `gas_milli_remaining` milligas.
    pub fn new(context: &'a mut Context<'h>, gas_milli_remaining: i64) -> Interpreter<'a, 'h> {
        Interpreter {
            context,
            gas_milli_remaining,
        }
    }

    /// Runs `code` on `stack`.
    pub fn run(&mut self, code: &Rc<Code>, stack: Vec<Value>) -> Result<Vec<Value>, RunError> {
        self.run_traced(code, stack, &mut NoTrace)
    }

    fn next_nonce(&mut self) -> u64 {
        let nonce = self.context.next_nonce;
        self.context.next_nonce += 1;
        nonce
    }

    /// Runs `code` on `stack`, reporting each step to `tracer`.
    #[allow(clippy::too_many_lines)]
    pub fn run_traced<T: Tracer>(
        &mut self,
        code: &Rc<Code>,
        stack: Vec<Value>,
        tracer: &mut T,
    ) -> Result<Vec<Value>, RunError> {
        let mut stack = ValueStack::from_vec(stack);
        let mut gas = self.gas_milli_remaining;
        let mut code: Rc<Code> = code.clone();
        let mut pc: usize = 0;
        let mut calls = CallStack::default();
        // Where the running code's part of `stack` starts (0 outside lambdas and views).
        let mut base: usize = 0;
        let mut dip = ValueStack::from_vec(Vec::new());
        let mut iters: Vec<IterFrame> = Vec::new();
        let mut maps: Vec<MapFrame> = Vec::new();

        macro_rules! charge {
            ($cost:expr) => {{
                let c = ($cost) as i64;
                gas -= c;
                if gas < 0 {
                    self.gas_milli_remaining = 0;
                    return Err(RunError::GasExhaustion);
                }
            }};
        }

        // `ADD` of two ints or nats, the result tagged by `$tag`: two `i64`s without overflow are
        // added in place, without the big-integer path and without drop glue (they own nothing).
        macro_rules! add_int {
            ($tag:path) => {{
                let y = stack.pop();
                let Some(top) = stack.last_mut() else {
                    return Err(bad());
                };
                let small = match (&*top, &y) {
                    (
                        Value::Int(Int::Small(a)) | Value::Nat(Int::Small(a)),
                        Value::Int(Int::Small(b)) | Value::Nat(Int::Small(b)),
                    ) => a.checked_add(*b).map(|sum| {
                        // The larger operand's size is that of the two magnitudes or-ed.
                        (
                            sum,
                            small_magnitude_size(a.unsigned_abs() | b.unsigned_abs()),
                        )
                    }),
                    _ => None,
                };
                if let Some((sum, size)) = small {
                    charge!(cost::cost_add_int(size, size));
                    std::mem::forget(std::mem::replace(top, $tag(Int::Small(sum))));
                    std::mem::forget(y);
                } else {
                    // `y` is bound by value, so only an `Int` (not a whole `Value`) is dropped.
                    let (Value::Nat(y) | Value::Int(y)) = y else {
                        return Err(bad());
                    };
                    let (Value::Nat(x) | Value::Int(x)) = top else {
                        return Err(bad());
                    };
                    charge!(cost::cost_add_int(int_size(x), int_size(&y)));
                    let sum = x.add(&y);
                    *top = $tag(sum);
                }
            }};
        }

        // `EQ`..`GE`: the int on top becomes a bool in place, an arm each so that the test is
        // not dispatched a second time.
        macro_rules! compare_zero {
            ($cost:expr, $holds:expr) => {{
                charge!($cost);
                let Some(top) = stack.last_mut() else {
                    return Err(bad());
                };
                let holds: fn(i32) -> bool = $holds;
                match top {
                    Value::Int(Int::Small(n)) => {
                        let condition = holds(n.signum() as i32);
                        // The `i64` owns nothing: no call to the drop glue.
                        std::mem::forget(std::mem::replace(top, Value::Bool(condition)));
                    }
                    Value::Int(n) => *top = Value::Bool(holds(n.signum())),
                    _ => return Err(bad()),
                }
            }};
        }

        // The location of the step to log once it has run (tracing only).
        let mut pending_log: Option<u32> = None;
        let result = 'run: loop {
            // `code` changes at calls and returns, which leave this inner loop; the running
            // code's instructions are borrowed from a handle of their own, so that each step
            // reads them from a local slice rather than through `code`.
            let running = code.clone();
            let instrs: &[Instr] = &running.instrs;
            loop {
                if T::ENABLED {
                    if let Some(location) = pending_log.take() {
                        tracer.log(location, gas, &stack[base..]);
                    }
                }
                let Some(instr) = instrs.get(pc) else {
                    // End of a code block: return from a lambda, or finish.
                    match calls.pop() {
                        Some((caller_code, caller_pc, caller_base, restore)) => {
                            // `IHalt`, `KReturn`, then the caller's continuation (`KCons`).
                            charge!(
                                cost::COST_HALT + cost::COST_RETURN + cost::COST_CONS_CONTINUATION
                            );
                            let result = stack.pop();
                            if let Some(saved) = restore {
                                self.context.self_address = saved.self_address;
                                self.context.sender = saved.sender;
                                self.context.balance = saved.balance;
                                self.context.amount = saved.amount;
                            }
                            // The callee's code leaves exactly its result (the typechecker's
                            // guarantee), so its part of the stack is now empty.
                            debug_assert_eq!(stack.len(), base);
                            stack.push(result);
                            code = caller_code;
                            pc = caller_pc;
                            base = caller_base;
                            if T::ENABLED {
                                pending_log = code.locations.get(pc.wrapping_sub(1)).copied();
                            }
                            continue 'run;
                        }
                        None => {
                            charge!(cost::COST_HALT);
                            break 'run stack;
                        }
                    }
                };
                // Octez logs `ITER` and `MAP` together with their first `KIter`/`KMap_enter_body`
                // (the element already pushed, or the exit), so their start logs nothing.
                if T::ENABLED
                    && !matches!(
                        instr,
                        Instr::Jump(_)
                        | Instr::IterStart(_)
                        | Instr::IterBack(_)
                        | Instr::MapStart(_)
                        | Instr::MapCollect
                        | Instr::LoopEnter
                        | Instr::LoopBack(_)
                        // `EXEC`'s cost is logged with the lambda's first instruction.
                        | Instr::Exec
                        // `CAST` and `RENAME` compile to nothing in Octez: no step.
                        | Instr::Nop
                    )
                {
                    pending_log = Some(match instr {
                        // A loop's entry, iterations and exit are logged where its continuation
                        // starts (Octez's `kinstr_location k`).
                        Instr::LoopHead(exit) | Instr::LoopLeftHead(exit) => code
                            .locations
                            .get(*exit)
                            .copied()
                            .unwrap_or(code.locations[pc]),
                        _ => code.locations[pc],
                    });
                    tracer.enter(code.locations[pc]);
                }
                pc += 1;
                match instr {
                    Instr::Drop => {
                        charge!(cost::COST_DROP);
                        stack.pop();
                    }
                    Instr::DropN(n) => {
                        charge!(cost::cost_drop_n(*n as u64));
                        let len = stack.len();
                        stack.truncate(len - n);
                    }
                    Instr::Dup => {
                        charge!(cost::COST_DUP);
                        let top = match stack.last() {
                            Some(value) => clone_fast(value),
                            None => return Err(bad()),
                        };
                        stack.push(top);
                    }
                    Instr::DupN(n) => {
                        charge!(cost::cost_dup_n(*n as u64));
                        let v = stack[stack.len() - n].clone();
                        stack.push(v);
                    }
                    Instr::Swap => {
                        charge!(cost::COST_SWAP);
                        let len = stack.len();
                        stack.swap(len - 1, len - 2);
                    }
                    Instr::Dig(n) => {
                        charge!(cost::cost_dig(*n as u64));
                        let at = stack.len() - 1 - n;
                        let v = stack.with_vec(|values| values.remove(at));
                        stack.push(v);
                    }
                    Instr::Dug(n) => {
                        charge!(cost::cost_dug(*n as u64));
                        let v = stack.pop();
                        let at = stack.len() - n;
                        stack.with_vec(|values| values.insert(at, v));
                    }
                    Instr::Push(v) => {
                        charge!(cost::COST_PUSH);
                        stack.push(clone_fast(v));
                    }
                    Instr::Unit => {
                        charge!(cost::COST_UNIT);
                        stack.push(Value::Unit);
                    }
                    Instr::Nop => {}
                    Instr::Jump(target) => {
                        pc = *target;
                    }
                    Instr::BranchEnd(target) => {
                        charge!(cost::COST_HALT + cost::COST_CONS_CONTINUATION);
                        pc = *target;
                    }
                    Instr::LoopEnter => {
                        charge!(cost::COST_LOOP);
                    }
                    Instr::LoopBack(target) => {
                        charge!(cost::COST_HALT);
                        pc = *target;
                    }
                    Instr::IterBack(target) => {
                        charge!(cost::COST_HALT);
                        pc = *target;
                    }
                    Instr::If(target) => {
                        charge!(cost::COST_IF);
                        if !pop_bool(&mut stack) {
                            pc = *target;
                        }
                    }
                    Instr::IfNone(target) => {
                        charge!(cost::COST_IF_NONE);
                        if let Value::Some(v) = stack.pop() {
                            stack.push(unwrap_rc(v));
                            pc = *target;
                        }
                    }
                    Instr::IfLeft(target) => {
                        charge!(cost::COST_IF_LEFT);
                        match stack.pop() {
                            Value::Left(v) => stack.push(unwrap_rc(v)),
                            Value::Right(v) => {
                                stack.push(unwrap_rc(v));
                                pc = *target;
                            }
                            _ => return Err(bad()),
                        }
                    }
                    Instr::IfCons(target) => {
                        charge!(cost::COST_IF_CONS);
                        let Value::List(mut list) = stack.pop() else {
                            return Err(bad());
                        };
                        match Rc::make_mut(&mut list).pop() {
                            Some(head) => {
                                stack.push(Value::List(list));
                                stack.push(head);
                            }
                            None => pc = *target,
                        }
                    }
                    Instr::LoopHead(exit) => {
                        charge!(cost::COST_LOOP_IN);
                        if !pop_bool(&mut stack) {
                            charge!(cost::COST_CONS_CONTINUATION);
                            pc = *exit;
                        }
                    }
                    Instr::LoopLeftHead(exit) => {
                        charge!(cost::COST_LOOP_IN_LEFT);
                        match stack.pop() {
                            Value::Left(v) => stack.push(unwrap_rc(v)),
                            Value::Right(v) => {
                                charge!(cost::COST_CONS_CONTINUATION);
                                stack.push(unwrap_rc(v));
                                pc = *exit;
                            }
                            _ => return Err(bad()),
                        }
                    }
                    Instr::DipStart(n) => {
                        if *n == 1 {
                            charge!(cost::COST_DIP);
                            let top = stack.pop();
                            dip.push(top);
                        } else {
                            charge!(cost::cost_dip_n(*n as u64));
                            let at = stack.len() - n;
                            stack.with_vec(|values| {
                                dip.with_vec(|saved| saved.extend(values.drain(at..)))
                            });
                        }
                    }
                    Instr::DipEnd(n) => {
                        charge!(
                            cost::COST_HALT
                                + cost::COST_UNDIP * (*n as u64)
                                + cost::COST_CONS_CONTINUATION
                        );
                        if *n == 1 {
                            let saved = dip.pop();
                            stack.push(saved);
                        } else {
                            let at = dip.len() - n;
                            dip.with_vec(|saved| {
                                stack.with_vec(|values| values.extend(saved.drain(at..)))
                            });
                        }
                    }
                    Instr::IterStart(kind) => {
                        let collection = stack.pop();
                        let remaining = match (kind, collection) {
                            (IterKind::List, Value::List(list)) => {
                                charge!(cost::COST_LIST_ITER);
                                Rc::unwrap_or_clone(list).into_reversed_vec()
                            }
                            (IterKind::Set, Value::Set(set)) => {
                                charge!(cost::cost_set_iter(set.len() as u64));
                                let mut elements: Vec<Value> = set.iter().cloned().collect();
                                elements.reverse();
                                elements
                            }
                            (IterKind::Map, Value::Map(map)) => {
                                charge!(cost::cost_map_iter(map.len() as u64));
                                bindings_last_first(&map)
                            }
                            _ => return Err(bad()),
                        };
                        iters.push(IterFrame { remaining });
                    }
                    Instr::IterNext(exit) => {
                        let frame = iters.last_mut().ok_or_else(bad)?;
                        match frame.remaining.pop() {
                            Some(v) => {
                                charge!(cost::COST_ITER);
                                stack.push(v);
                            }
                            None => {
                                // The last `KIter` hands over to the continuation (`KCons`).
                                charge!(cost::COST_ITER + cost::COST_CONS_CONTINUATION);
                                iters.pop();
                                pc = *exit;
                            }
                        }
                    }
                    Instr::MapStart(kind) => {
                        let collection = stack.pop();
                        let remaining = match (kind, collection) {
                            (IterKind::List, Value::List(list)) => {
                                charge!(cost::COST_LIST_MAP);
                                Rc::unwrap_or_clone(list).into_reversed_vec()
                            }
                            (IterKind::Set, Value::None) => {
                                charge!(cost::COST_OPT_MAP);
                                stack.push(Value::None);
                                if T::ENABLED {
                                    pending_log = Some(code.locations[pc - 1]);
                                }
                                // An option MAP on None skips the body: jump over it.
                                match instrs.get(pc) {
                                    Some(Instr::MapNext(exit)) => pc = *exit,
                                    _ => return Err(bad()),
                                }
                                continue;
                            }
                            (IterKind::Set, Value::Some(v)) => {
                                charge!(cost::COST_OPT_MAP);
                                vec![unwrap_rc(v)]
                            }
                            (IterKind::Map, Value::Map(map)) => {
                                charge!(cost::cost_map_map(map.len() as u64));
                                bindings_last_first(&map)
                            }
                            _ => return Err(bad()),
                        };
                        maps.push(MapFrame {
                            kind: *kind,
                            remaining,
                            current_key: None,
                            list_results: Vec::new(),
                            map_results: ValueMap::new(),
                        });
                    }
                    Instr::MapNext(exit) => {
                        let frame = maps.last_mut().ok_or_else(bad)?;
                        match frame.remaining.pop() {
                            Some(v) => {
                                charge!(match frame.kind {
                                    IterKind::Map =>
                                        cost::cost_map_enter_body(frame.map_results.len() as u64),
                                    _ => cost::cost_list_enter_body(
                                        false,
                                        frame.list_results.len() as u64
                                    ),
                                });
                                if frame.kind == IterKind::Map {
                                    if let Value::Pair(pair) = &v {
                                        frame.current_key = Some(pair.0.clone());
                                    }
                                }
                                stack.push(v);
                            }
                            None => {
                                let Some(frame) = maps.pop() else {
                                    return Err(bad());
                                };
                                let result = match frame.kind {
                                    IterKind::List => {
                                        charge!(
                                            cost::cost_list_enter_body(
                                                true,
                                                frame.list_results.len() as u64
                                            ) + cost::COST_CONS_CONTINUATION
                                        );
                                        Value::list_from(frame.list_results)
                                    }
                                    IterKind::Set => {
                                        let mut results = frame.list_results;
                                        match results.pop() {
                                            Some(v) => Value::some(v),
                                            None => Value::None,
                                        }
                                    }
                                    IterKind::Map => {
                                        charge!(
                                            cost::cost_map_enter_body(
                                                frame.map_results.len() as u64
                                            ) + cost::COST_CONS_CONTINUATION
                                        );
                                        Value::Map(Rc::new(frame.map_results))
                                    }
                                };
                                stack.push(result);
                                pc = *exit;
                            }
                        }
                    }
                    Instr::MapCollect => {
                        let result = stack.pop();
                        let frame = maps.last_mut().ok_or_else(bad)?;
                        match frame.kind {
                            IterKind::Map => {
                                // `KMap_exit_body` inserts the result into the map built so far
                                // (keys come in increasing order: the mapped map's).
                                let key = frame.current_key.take().ok_or_else(bad)?;
                                charge!(
                                    cost::COST_HALT
                                        + cost::cost_map_update(
                                            comparable_size(&key),
                                            frame.map_results.len() as u64
                                        )
                                );
                                frame.map_results.push_last(key, result);
                            }
                            _ => {
                                charge!(cost::COST_HALT + cost::COST_LIST_EXIT_BODY);
                                frame.list_results.push(result)
                            }
                        }
                    }
                    Instr::Failwith => {
                        let v = stack.pop();
                        break_failed(v, code.locations[pc - 1])?;
                    }
                    Instr::Never => return Err(bad()),
                    Instr::Exec => {
                        charge!(cost::COST_EXEC);
                        let len = stack.len();
                        // A recursive lambda sees itself under its argument: with nothing applied,
                        // the two top values are already the callee's stack, left in place.
                        if let Value::Lambda(lambda) = &stack[len - 2] {
                            if lambda.recursive && lambda.applied.is_empty() {
                                calls.call(&mut code, &lambda.code, pc, base)?;
                                base = len - 2;
                                pc = 0;
                                continue 'run;
                            }
                        }
                        let arg = stack.pop();
                        let Value::Lambda(lambda) = stack.pop() else {
                            return Err(bad());
                        };
                        // Each `APPLY` put `PUSH captured ; PAIR` in front of the code: run (and,
                        // when tracing, log) them, the last applied value first.
                        let mut arg = arg;
                        for (_, captured) in lambda.applied.iter().rev() {
                            charge!(cost::COST_PUSH);
                            if T::ENABLED {
                                let mut pushed = stack[base..].to_vec();
                                pushed.push(arg.clone());
                                pushed.push(captured.clone());
                                tracer.log(lambda.code.location, gas, &pushed);
                            }
                            charge!(cost::COST_PAIR);
                            arg = Value::pair(captured.clone(), arg);
                            if T::ENABLED {
                                let mut paired = stack[base..].to_vec();
                                paired.push(arg.clone());
                                tracer.log(lambda.code.location, gas, &paired);
                            }
                        }
                        calls.call(&mut code, &lambda.code, pc, base)?;
                        base = stack.len();
                        if lambda.recursive {
                            // The recursive lambda sees itself, without the values applied to it.
                            stack.push(Value::Lambda(Rc::new(Lambda {
                                node: lambda.node.clone(),
                                code: lambda.code.clone(),
                                recursive: true,
                                arg: lambda.arg.clone(),
                                ret: lambda.ret.clone(),
                                applied: Vec::new(),
                            })));
                        }
                        stack.push(arg);
                        pc = 0;
                        continue 'run;
                    }
                    Instr::Apply => {
                        let captured = stack.pop();
                        let Value::Lambda(lambda) = stack.pop() else {
                            return Err(bad());
                        };
                        let Type::Pair(captured_type, rest) = &lambda.arg else {
                            return Err(bad());
                        };
                        // Octez unparses the captured value and its type into the new code; a
                        // captured lambda's `PUSH`ed constants are typechecked again.
                        charge!(cost::cost_apply(lambda.recursive));
                        let unparse = match crate::pack::pack_cost_within(&captured, gas as u64) {
                            Ok(unparse) => unparse,
                            Err(UnparseExhausted::Plain) => crate::gas::arith::SATURATED,
                            Err(UnparseExhausted::InConstant(error)) => {
                                self.gas_milli_remaining = 0;
                                return Err(RunError::InvalidConstant(Box::new(error)));
                            }
                        };
                        charge!(crate::gas::arith::add(
                            unparse,
                            crate::gas::typecheck::cost_unparse_type(captured_type.size() as u64)
                        ));
                        let mut applied = lambda.applied.clone();
                        applied.push(((**captured_type).clone(), captured));
                        stack.push(Value::Lambda(Rc::new(Lambda {
                            node: lambda.node.clone(),
                            code: lambda.code.clone(),
                            recursive: lambda.recursive,
                            arg: (**rest).clone(),
                            ret: lambda.ret.clone(),
                            applied,
                        })));
                        // The argument type recorded is the remaining one; EXEC pairs captured values in.
                        fix_applied_arg(&mut stack);
                    }
                    Instr::Lambda(lambda) => {
                        charge!(cost::COST_LAMBDA);
                        stack.push(Value::Lambda(lambda.clone()));
                    }
                    // Arithmetic.
                    Instr::AddNatNat => add_int!(Value::Nat),
                    Instr::AddIntInt => add_int!(Value::Int),
                    Instr::AddTimestampInt | Instr::AddIntTimestamp => {
                        let a = stack.pop();
                        let b = stack.pop();
                        let (t, i) = if matches!(instr, Instr::AddTimestampInt) {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        let (Value::Timestamp(t), Value::Int(i)) = (t, i) else {
                            return Err(bad());
                        };
                        charge!(cost::cost_add_seconds_to_timestamp(
                            int_size(&i),
                            int_size(&t)
                        ));
                        stack.push(Value::Timestamp(t.add(&i)));
                    }
                    Instr::AddMutez => {
                        charge!(cost::COST_ADD_TEZ);
                        let (Value::Mutez(a), Value::Mutez(b)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        stack.push(Value::Mutez(a.checked_add(b).ok_or(RunError::Overflow)?));
                    }
                    Instr::SubInt => {
                        let a = stack.pop();
                        let b = stack.pop();
                        let (Value::Nat(x) | Value::Int(x), Value::Nat(y) | Value::Int(y)) =
                            (&a, &b)
                        else {
                            return Err(bad());
                        };
                        charge!(cost::cost_sub_int(int_size(x), int_size(y)));
                        stack.push(Value::Int(x.sub(y)));
                    }
                    Instr::SubTimestampInt => {
                        let (Value::Timestamp(t), Value::Int(i)) = (stack.pop(), stack.pop())
                        else {
                            return Err(bad());
                        };
                        charge!(cost::cost_sub_timestamp_seconds(int_size(&t), int_size(&i)));
                        stack.push(Value::Timestamp(t.sub(&i)));
                    }
                    Instr::SubTimestampTimestamp => {
                        let (Value::Timestamp(a), Value::Timestamp(b)) = (stack.pop(), stack.pop())
                        else {
                            return Err(bad());
                        };
                        charge!(cost::cost_diff_timestamps(int_size(&a), int_size(&b)));
                        stack.push(Value::Int(a.sub(&b)));
                    }
                    Instr::SubMutez => {
                        charge!(cost::COST_SUB_MUTEZ);
                        let (Value::Mutez(a), Value::Mutez(b)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        stack.push(if a >= b {
                            Value::some(Value::Mutez(a - b))
                        } else {
                            Value::None
                        });
                    }
                    Instr::SubMutezLegacy => {
                        charge!(cost::COST_SUB_TEZ_LEGACY);
                        let (Value::Mutez(a), Value::Mutez(b)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        if a < b {
                            return Err(RunError::MutezUnderflow);
                        }
                        stack.push(Value::Mutez(a - b));
                    }
                    Instr::MulNatNat | Instr::MulIntInt => {
                        let a = stack.pop();
                        let b = stack.pop();
                        let (Value::Nat(x) | Value::Int(x), Value::Nat(y) | Value::Int(y)) =
                            (&a, &b)
                        else {
                            return Err(bad());
                        };
                        charge!(cost::cost_mul_int(int_size(x), int_size(y)));
                        let product = x.mul(y);
                        stack.push(if matches!(instr, Instr::MulNatNat) {
                            Value::Nat(product)
                        } else {
                            Value::Int(product)
                        });
                    }
                    Instr::MulMutezNat | Instr::MulNatMutez => {
                        let a = stack.pop();
                        let b = stack.pop();
                        let (m, n) = if matches!(instr, Instr::MulMutezNat) {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        let (Value::Mutez(m), Value::Nat(n)) = (m, n) else {
                            return Err(bad());
                        };
                        charge!(cost::COST_MUL_TEZ_NAT);
                        let n = n.to_i64().ok_or(RunError::Overflow)?;
                        stack.push(Value::Mutez(m.checked_mul(n).ok_or(RunError::Overflow)?));
                    }
                    Instr::EdivNatNat | Instr::EdivIntInt => {
                        let a = stack.pop();
                        let b = stack.pop();
                        let (Value::Nat(x) | Value::Int(x), Value::Nat(y) | Value::Int(y)) =
                            (&a, &b)
                        else {
                            return Err(bad());
                        };
                        charge!(cost::cost_ediv_int(int_size(x), int_size(y)));
                        stack.push(match x.ediv(y) {
                            Some((q, r)) => {
                                let q = if matches!(instr, Instr::EdivNatNat) {
                                    Value::Nat(q)
                                } else {
                                    Value::Int(q)
                                };
                                Value::some(Value::pair(q, Value::Nat(r)))
                            }
                            None => Value::None,
                        });
                    }
                    Instr::EdivMutezNat => {
                        charge!(cost::COST_EDIV_TEZ_NAT);
                        let (Value::Mutez(m), Value::Nat(n)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        stack.push(if n.is_zero() {
                            Value::None
                        } else {
                            match n.to_i64() {
                                Some(n) => Value::some(Value::pair(
                                    Value::Mutez(m / n),
                                    Value::Mutez(m % n),
                                )),
                                None => Value::some(Value::pair(Value::Mutez(0), Value::Mutez(m))),
                            }
                        });
                    }
                    Instr::EdivMutezMutez => {
                        charge!(cost::COST_EDIV_TEZ);
                        let (Value::Mutez(a), Value::Mutez(b)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        stack.push(if b == 0 {
                            Value::None
                        } else {
                            Value::some(Value::pair(
                                Value::nat((a / b) as u64),
                                Value::Mutez(a % b),
                            ))
                        });
                    }
                    Instr::Abs => {
                        let Value::Int(x) = stack.pop() else {
                            return Err(bad());
                        };
                        charge!(cost::cost_abs(int_size(&x)));
                        stack.push(Value::Nat(x.abs()));
                    }
                    Instr::IsNat => {
                        charge!(cost::COST_IS_NAT);
                        let Value::Int(x) = stack.pop() else {
                            return Err(bad());
                        };
                        stack.push(if x.is_negative() {
                            Value::None
                        } else {
                            Value::some(Value::Nat(x))
                        });
                    }
                    Instr::Int => {
                        charge!(cost::COST_INT_NAT);
                        let Value::Nat(x) = stack.pop() else {
                            return Err(bad());
                        };
                        stack.push(Value::Int(x));
                    }
                    Instr::NegInt => {
                        let (Value::Int(x) | Value::Nat(x)) = stack.pop() else {
                            return Err(bad());
                        };
                        charge!(cost::cost_neg(int_size(&x)));
                        stack.push(Value::Int(x.neg()));
                    }
                    Instr::Compare => {
                        let a = stack.pop();
                        let b = stack.pop();
                        charge!(compare_cost(&a, &b));
                        stack.push(Value::Int(Int::Small(a.cmp(&b) as i64)));
                    }
                    Instr::Eq => compare_zero!(cost::COST_EQ, |sign| sign == 0),
                    Instr::Neq => compare_zero!(cost::COST_NEQ, |sign| sign != 0),
                    Instr::Lt => compare_zero!(cost::COST_LT, |sign| sign < 0),
                    Instr::Gt => compare_zero!(cost::COST_GT, |sign| sign > 0),
                    Instr::Le => compare_zero!(cost::COST_LE, |sign| sign <= 0),
                    Instr::Ge => compare_zero!(cost::COST_GE, |sign| sign >= 0),
                    Instr::OrBool | Instr::AndBool | Instr::XorBool => {
                        charge!(if matches!(instr, Instr::XorBool) {
                            cost::COST_XOR
                        } else {
                            cost::COST_OR
                        });
                        let (Value::Bool(a), Value::Bool(b)) = (stack.pop(), stack.pop()) else {
                            return Err(bad());
                        };
                        stack.push(Value::Bool(match instr {
                            Instr::OrBool => a | b,
                            Instr::AndBool => a & b,
                            _ => a ^ b,
                        }));
                    }
                    Instr::NotBool => {
                        charge!(cost::COST_NOT);
                        let Value::Bool(a) = stack.pop() else {
                            return Err(bad());
                        };
                        stack.push(Value::Bool(!a));
                    }
                    Instr::Car | Instr::Cdr => {
                        charge!(cost::COST_CAR);
                        let Value::Pair(pair) = stack.pop() else {
                            return Err(bad());
                        };
                        let (a, b) = unwrap_pair(pair);
                        stack.push(if matches!(instr, Instr::Car) { a } else { b });
                    }
                    Instr::Pair => {
                        charge!(cost::COST_PAIR);
                        let a = stack.pop();
                        let b = stack.pop();
                        stack.push(Value::pair(a, b));
                    }
                    Instr::Unpair => {
                        charge!(cost::COST_UNPAIR);
                        let Value::Pair(pair) = stack.pop() else {
                            return Err(bad());
                        };
                        let (a, b) = unwrap_pair(pair);
                        stack.push(b);
                        stack.push(a);
                    }
                    Instr::Some => {
                        charge!(cost::COST_SOME);
                        let v = stack.pop();
                        stack.push(Value::some(v));
                    }
                    Instr::None => {
                        charge!(cost::COST_NONE);
                        stack.push(Value::None);
                    }
                    Instr::Left => {
                        charge!(cost::COST_LEFT);
                        let v = stack.pop();
                        stack.push(Value::Left(Rc::new(v)));
                    }
                    Instr::Right => {
                        charge!(cost::COST_RIGHT);
                        let v = stack.pop();
                        stack.push(Value::Right(Rc::new(v)));
                    }
                    Instr::Nil => {
                        charge!(cost::COST_NIL);
                        stack.push(Value::List(Rc::default()));
                    }
                    Instr::Cons => {
                        charge!(cost::COST_CONS);
                        let head = stack.pop();
                        let Some(Value::List(list)) = stack.last_mut() else {
                            return Err(bad());
                        };
                        Rc::make_mut(list).push(head);
                    }
                    Instr::Amount => {
                        charge!(cost::COST_AMOUNT);
                        stack.push(Value::Mutez(self.context.amount));
                    }
                    Instr::Balance => {
                        charge!(cost::COST_BALANCE);
                        stack.push(Value::Mutez(self.context.balance));
                    }
                    Instr::Now => {
                        charge!(cost::COST_NOW);
                        stack.push(Value::Timestamp(self.context.now.clone()));
                    }
                    Instr::Level => {
                        charge!(cost::COST_LEVEL);
                        stack.push(Value::nat(self.context.level));
                    }
                    Instr::MinBlockTime => {
                        charge!(cost::COST_MIN_BLOCK_TIME);
                        stack.push(Value::nat(self.context.min_block_time));
                    }
                    Instr::Sender => {
                        charge!(cost::COST_SENDER);
                        stack.push(Value::Address(Rc::new(self.context.sender.clone())));
                    }
                    Instr::Source => {
                        charge!(cost::COST_SOURCE);
                        stack.push(Value::Address(Rc::new(self.context.source.clone())));
                    }
                    Instr::SelfAddress => {
                        charge!(cost::COST_SELF_ADDRESS);
                        stack.push(Value::Address(Rc::new(Address::new(
                            self.context.self_address.destination,
                        ))));
                    }
                    Instr::ChainId => {
                        charge!(cost::COST_CHAIN_ID);
                        stack.push(Value::ChainId(self.context.chain_id));
                    }
                    Instr::TotalVotingPower => {
                        charge!(cost::COST_TOTAL_VOTING_POWER);
                        stack.push(Value::nat(self.context.host.total_voting_power()));
                    }
                    Instr::VotingPower => {
                        charge!(cost::COST_VOTING_POWER);
                        let Value::KeyHash(k) = stack.pop() else {
                            return Err(bad());
                        };
                        stack.push(Value::nat(self.context.host.voting_power(&k)));
                    }
                    Instr::Self_(entrypoint, ty) => {
                        charge!(cost::COST_SELF);
                        stack.push(Value::Contract(Rc::new(Contract {
                            address: Address {
                                destination: self.context.self_address.destination,
                                entrypoint: entrypoint.to_string(),
                            },
                            param_type: ty.clone(),
                        })));
                    }
                    // Listed rather than matched by a wildcard: with every variant named, the dispatch
                    // needs no range check for a default.
                    other @ (Instr::AddFr
                    | Instr::AddG1
                    | Instr::AddG2
                    | Instr::MulG1Fr
                    | Instr::MulG2Fr
                    | Instr::MulFrFr
                    | Instr::MulIntFr
                    | Instr::MulFrInt
                    | Instr::IntFr
                    | Instr::IntBytes
                    | Instr::NatBytes
                    | Instr::BytesInt
                    | Instr::BytesNat
                    | Instr::NegFr
                    | Instr::NegG1
                    | Instr::NegG2
                    | Instr::LslNat
                    | Instr::LsrNat
                    | Instr::LslBytes
                    | Instr::LsrBytes
                    | Instr::OrNat
                    | Instr::OrBytes
                    | Instr::AndNat
                    | Instr::AndIntNat
                    | Instr::AndBytes
                    | Instr::XorNat
                    | Instr::XorBytes
                    | Instr::NotInt
                    | Instr::NotBytes
                    | Instr::ConcatString
                    | Instr::ConcatBytes
                    | Instr::ConcatListString
                    | Instr::ConcatListBytes
                    | Instr::SizeString
                    | Instr::SizeBytes
                    | Instr::SizeList
                    | Instr::SizeSet
                    | Instr::SizeMap
                    | Instr::SliceString
                    | Instr::SliceBytes
                    | Instr::Pack(..)
                    | Instr::Unpack(..)
                    | Instr::PairN(..)
                    | Instr::UnpairN(..)
                    | Instr::GetN(..)
                    | Instr::UpdateN(..)
                    | Instr::EmptySet
                    | Instr::EmptyMap
                    | Instr::EmptyBigMap(..)
                    | Instr::MemSet
                    | Instr::MemMap
                    | Instr::MemBigMap
                    | Instr::GetMap
                    | Instr::GetBigMap
                    | Instr::UpdateSet
                    | Instr::UpdateMap
                    | Instr::UpdateBigMap
                    | Instr::GetAndUpdateMap
                    | Instr::GetAndUpdateBigMap
                    | Instr::HashKey
                    | Instr::Blake2b
                    | Instr::Sha256
                    | Instr::Sha512
                    | Instr::Keccak
                    | Instr::Sha3
                    | Instr::CheckSignature
                    | Instr::PairingCheck
                    | Instr::Address
                    | Instr::Contract(..)
                    | Instr::ImplicitAccount
                    | Instr::TransferTokens
                    | Instr::SetDelegate
                    | Instr::CreateContract(..)
                    | Instr::Emit(..)
                    | Instr::View(..)
                    | Instr::Ticket(..)
                    | Instr::TicketDeprecated(..)
                    | Instr::ReadTicket
                    | Instr::SplitTicket
                    | Instr::JoinTickets
                    | Instr::IndexAddress
                    | Instr::GetAddressIndex
                    | Instr::IsImplicitAccount) => {
                        // The remaining instructions are less frequent; they live in a separate
                        // function to keep this loop's hot arms compact.
                        // A copy of the counter is lent, so that the loop's own stays in a register.
                        let mut gas_rare = gas;
                        let step = stack
                            .with_vec(|values| self.step_rare(other, values, &mut gas_rare))?;
                        gas = gas_rare;
                        if let Some(call) = step {
                            // VIEW: run the view's code as a call.
                            let (view_code, view_stack, saved) = call;
                            calls.push(
                                std::mem::replace(&mut code, view_code),
                                pc,
                                base,
                                Some(saved),
                            )?;
                            base = stack.len();
                            stack.with_vec(|values| values.extend(view_stack));
                            pc = 0;
                            continue 'run;
                        }
                    }
                }
            }
        };
        self.gas_milli_remaining = gas;
        Ok(result.into_vec())
    }

    /// Less frequent instructions. Returns a code and stack to call for `VIEW`.
    #[allow(clippy::too_many_lines)]
    fn step_rare(
        &mut self,
        instr: &Instr,
        stack: &mut Vec<Value>,
        gas: &mut i64,
    ) -> Result<Option<ViewCall>, RunError> {
        macro_rules! charge {
            ($cost:expr) => {{
                let c = ($cost) as i64;
                *gas -= c;
                if *gas < 0 {
                    return Err(RunError::GasExhaustion);
                }
            }};
        }
        match instr {
            Instr::AddFr | Instr::MulFrFr => {
                let (Value::Bls12381Fr(a), Value::Bls12381Fr(b)) = (pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let (a, b) = (crate::bls::fr(&a), crate::bls::fr(&b));
                let r = if matches!(instr, Instr::AddFr) {
                    charge!(cost::COST_ADD_BLS12_381_FR);
                    a + b
                } else {
                    charge!(cost::COST_MUL_BLS12_381_FR);
                    a * b
                };
                stack.push(Value::Bls12381Fr(Rc::new(r.to_bytes())));
            }
            Instr::AddG1 => {
                charge!(cost::COST_ADD_BLS12_381_G1);
                let (Value::Bls12381G1(a), Value::Bls12381G1(b)) = (pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let r = crate::bls::g1(&a) + crate::bls::g1(&b);
                stack.push(Value::Bls12381G1(Rc::from(r.to_bytes().as_slice())));
            }
            Instr::AddG2 => {
                charge!(cost::COST_ADD_BLS12_381_G2);
                let (Value::Bls12381G2(a), Value::Bls12381G2(b)) = (pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let r = crate::bls::g2(&a) + crate::bls::g2(&b);
                stack.push(Value::Bls12381G2(Rc::from(r.to_bytes().as_slice())));
            }
            Instr::MulG1Fr => {
                charge!(cost::COST_MUL_BLS12_381_G1);
                let (Value::Bls12381G1(a), Value::Bls12381Fr(b)) = (pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let r = crate::bls::g1(&a) * crate::bls::fr(&b);
                stack.push(Value::Bls12381G1(Rc::from(r.to_bytes().as_slice())));
            }
            Instr::MulG2Fr => {
                charge!(cost::COST_MUL_BLS12_381_G2);
                let (Value::Bls12381G2(a), Value::Bls12381Fr(b)) = (pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let r = crate::bls::g2(&a) * crate::bls::fr(&b);
                stack.push(Value::Bls12381G2(Rc::from(r.to_bytes().as_slice())));
            }
            Instr::MulIntFr | Instr::MulFrInt => {
                let a = pop!(stack);
                let b = pop!(stack);
                let (i, f) = if matches!(instr, Instr::MulIntFr) {
                    (a, b)
                } else {
                    (b, a)
                };
                let (Value::Int(i) | Value::Nat(i), Value::Bls12381Fr(f)) = (i, f) else {
                    return Err(bad());
                };
                charge!(cost::cost_mul_bls12_381_fr_z(int_size(&i)));
                let r = crate::bls::fr(&f) * kestrel_crypto::bls::Fr::from_bigint(&i.to_bigint());
                stack.push(Value::Bls12381Fr(Rc::new(r.to_bytes())));
            }
            Instr::NegFr => {
                charge!(cost::COST_NEG_BLS12_381_FR);
                let Value::Bls12381Fr(a) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Bls12381Fr(Rc::new((-crate::bls::fr(&a)).to_bytes())));
            }
            Instr::NegG1 => {
                charge!(cost::COST_NEG_BLS12_381_G1);
                let Value::Bls12381G1(a) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Bls12381G1(Rc::from(
                    (-crate::bls::g1(&a)).to_bytes().as_slice(),
                )));
            }
            Instr::NegG2 => {
                charge!(cost::COST_NEG_BLS12_381_G2);
                let Value::Bls12381G2(a) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Bls12381G2(Rc::from(
                    (-crate::bls::g2(&a)).to_bytes().as_slice(),
                )));
            }
            Instr::IntFr => {
                charge!(cost::COST_INT_BLS12_381_FR);
                let Value::Bls12381Fr(a) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Int(Int::from(crate::bls::fr(&a).to_bigint())));
            }
            Instr::PairingCheck => {
                let Value::List(list) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_pairing_check(list.len() as u64));
                let mut pairs = Vec::new();
                for item in list.iter() {
                    let Value::Pair(p) = item else {
                        return Err(bad());
                    };
                    let (Value::Bls12381G1(g1), Value::Bls12381G2(g2)) = (&p.0, &p.1) else {
                        return Err(bad());
                    };
                    pairs.push((crate::bls::g1(g1), crate::bls::g2(g2)));
                }
                stack.push(Value::Bool(kestrel_crypto::bls::pairing_check(&pairs)));
            }
            Instr::IntBytes | Instr::NatBytes => {
                let Value::Bytes(b) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(if matches!(instr, Instr::IntBytes) {
                    cost::cost_int_bytes(b.len() as u64)
                } else {
                    cost::cost_nat_bytes(b.len() as u64)
                });
                let v = if matches!(instr, Instr::IntBytes) {
                    Value::Int(Int::from(num_bigint::BigInt::from_signed_bytes_be(&b)))
                } else {
                    Value::Nat(Int::from(num_bigint::BigInt::from_bytes_be(
                        num_bigint::Sign::Plus,
                        &b,
                    )))
                };
                stack.push(v);
            }
            Instr::BytesInt | Instr::BytesNat => {
                let (Value::Int(i) | Value::Nat(i)) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(if matches!(instr, Instr::BytesNat) {
                    cost::cost_bytes_nat(int_size(&i))
                } else {
                    cost::cost_bytes_int(int_size(&i))
                });
                let big = i.to_bigint();
                let bytes = if big.sign() == num_bigint::Sign::NoSign {
                    Vec::new()
                } else if matches!(instr, Instr::BytesNat) {
                    big.to_bytes_be().1
                } else {
                    big.to_signed_bytes_be()
                };
                stack.push(Value::Bytes(Rc::from(bytes)));
            }
            Instr::LslNat | Instr::LsrNat => {
                let (Value::Nat(x), Value::Nat(s)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                let shift = s.to_u64().filter(|s| *s <= 256).ok_or(RunError::Overflow)?;
                let big = x.to_bigint();
                if matches!(instr, Instr::LslNat) {
                    charge!(cost::cost_lsl_nat(int_size(&x)));
                    stack.push(Value::Nat(Int::from(big << shift)));
                } else {
                    charge!(cost::cost_lsr_nat(int_size(&x)));
                    stack.push(Value::Nat(Int::from(big >> shift)));
                }
            }
            Instr::LslBytes | Instr::LsrBytes => {
                let (Value::Bytes(b), Value::Nat(s)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                let is_left = matches!(instr, Instr::LslBytes);
                // Only LSL is bounded (Octez: 64000 bits); LSR by a huge amount gives no bytes.
                let shift = match s.to_u64() {
                    Some(s) if !is_left || s <= 64000 => s,
                    _ if !is_left => u64::MAX,
                    _ => return Err(RunError::Overflow),
                };
                let out = if is_left {
                    charge!(cost::cost_lsl_bytes(b.len() as u64, shift));
                    lsl_bytes(&b, shift)
                } else {
                    charge!(cost::cost_lsr_bytes(b.len() as u64, shift));
                    lsr_bytes(&b, shift)
                };
                stack.push(Value::Bytes(Rc::from(out)));
            }
            Instr::OrNat | Instr::AndNat | Instr::XorNat | Instr::AndIntNat => {
                let a = pop!(stack);
                let b = pop!(stack);
                let (Value::Nat(x) | Value::Int(x), Value::Nat(y)) = (&a, &b) else {
                    return Err(bad());
                };
                charge!(cost::cost_or_nat(int_size(x), int_size(y)));
                let r = match (x, y) {
                    (Int::Small(p), Int::Small(q)) => Int::Small(match instr {
                        Instr::OrNat => p | q,
                        Instr::XorNat => p ^ q,
                        _ => p & q,
                    }),
                    _ => {
                        let (p, q) = (x.to_bigint(), y.to_bigint());
                        Int::from(match instr {
                            Instr::OrNat => p | q,
                            Instr::XorNat => p ^ q,
                            _ => p & q,
                        })
                    }
                };
                stack.push(Value::Nat(r));
            }
            Instr::OrBytes | Instr::AndBytes | Instr::XorBytes => {
                let (Value::Bytes(a), Value::Bytes(b)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                let (length_a, length_b) = (a.len() as u64, b.len() as u64);
                charge!(match instr {
                    Instr::AndBytes => cost::cost_and_bytes(length_a, length_b),
                    Instr::XorBytes => cost::cost_xor_bytes(length_a, length_b),
                    _ => cost::cost_or_bytes(length_a, length_b),
                });
                let out = bytes_bitwise(&a, &b, instr);
                stack.push(Value::Bytes(Rc::from(out)));
            }
            Instr::NotInt => {
                let (Value::Int(x) | Value::Nat(x)) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_not_int(int_size(&x)));
                stack.push(Value::Int(x.neg().sub(&Int::Small(1))));
            }
            Instr::NotBytes => {
                let Value::Bytes(a) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_not_bytes(a.len() as u64));
                stack.push(Value::Bytes(
                    a.iter().map(|b| !b).collect::<Vec<u8>>().into(),
                ));
            }
            Instr::ConcatString => {
                let (Value::String(a), Value::String(b)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                charge!(cost::cost_concat_string_pair(
                    a.len() as u64,
                    b.len() as u64
                ));
                // Sized once: a growing buffer copied multi-megabyte operands several times.
                let mut joined = String::with_capacity(a.len() + b.len());
                joined.push_str(&a);
                joined.push_str(&b);
                stack.push(Value::String(Rc::from(joined)));
            }
            Instr::ConcatBytes => {
                let (Value::Bytes(a), Value::Bytes(b)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                charge!(cost::cost_concat_bytes_pair(a.len() as u64, b.len() as u64));
                let mut joined = Vec::with_capacity(a.len() + b.len());
                joined.extend_from_slice(&a);
                joined.extend_from_slice(&b);
                stack.push(Value::Bytes(Rc::from(joined)));
            }
            Instr::ConcatListString | Instr::ConcatListBytes => {
                let Value::List(list) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_concat_precheck(list.len() as u64));
                // The total length is charged before the result is built, which is then sized
                // once.
                let total: usize = list
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => s.len(),
                        Value::Bytes(b) => b.len(),
                        _ => 0,
                    })
                    .sum();
                if matches!(instr, Instr::ConcatListString) {
                    charge!(cost::cost_concat_string(total as u64));
                    let mut out = String::with_capacity(total);
                    for item in list.iter() {
                        if let Value::String(s) = item {
                            out.push_str(s);
                        }
                    }
                    stack.push(Value::String(Rc::from(out)));
                } else {
                    charge!(cost::cost_concat_bytes(total as u64));
                    let mut out = Vec::with_capacity(total);
                    for item in list.iter() {
                        if let Value::Bytes(s) = item {
                            out.extend_from_slice(s);
                        }
                    }
                    stack.push(Value::Bytes(Rc::from(out)));
                }
            }
            Instr::SizeString
            | Instr::SizeBytes
            | Instr::SizeList
            | Instr::SizeSet
            | Instr::SizeMap => {
                let v = pop!(stack);
                let n = match &v {
                    Value::String(s) => {
                        charge!(cost::COST_STRING_SIZE);
                        s.len()
                    }
                    Value::Bytes(b) => {
                        charge!(cost::COST_BYTES_SIZE);
                        b.len()
                    }
                    Value::List(l) => {
                        charge!(cost::COST_LIST_SIZE);
                        l.len()
                    }
                    Value::Set(s) => {
                        charge!(cost::COST_SET_SIZE);
                        s.len()
                    }
                    Value::Map(m) => {
                        charge!(cost::COST_MAP_SIZE);
                        m.len()
                    }
                    _ => return Err(bad()),
                };
                stack.push(Value::nat(n as u64));
            }
            Instr::SliceString | Instr::SliceBytes => {
                let (Value::Nat(offset), Value::Nat(length)) = (pop!(stack), pop!(stack)) else {
                    return Err(bad());
                };
                let v = pop!(stack);
                let total = match &v {
                    Value::String(s) => s.len(),
                    Value::Bytes(b) => b.len(),
                    _ => return Err(bad()),
                };
                charge!(cost::cost_slice_string(total as u64));
                let range = match (offset.to_u64(), length.to_u64()) {
                    (Some(o), Some(l))
                        if o < total as u64
                            && o.checked_add(l).is_some_and(|end| end <= total as u64) =>
                    {
                        Some(o as usize..(o + l) as usize)
                    }
                    _ => None,
                };
                stack.push(match (range, v) {
                    (Some(r), Value::String(s)) => Value::some(Value::String(Rc::from(&s[r]))),
                    (Some(r), Value::Bytes(b)) => Value::some(Value::Bytes(Rc::from(&b[r]))),
                    _ => Value::None,
                });
            }
            Instr::Pack(ty) => {
                let v = pop!(stack);
                let _ = ty;
                let (bytes, pack_cost) =
                    crate::pack::pack_with_cost(&v).map_err(|e| RunError::Other(e.to_string()))?;
                charge!(pack_cost);
                stack.push(Value::Bytes(Rc::from(bytes)));
            }
            Instr::Unpack(ty) => {
                let Value::Bytes(b) = pop!(stack) else {
                    return Err(bad());
                };
                // Charge the decoding first: it does not depend on what the bytes hold.
                charge!(crate::gas::typecheck::cost_unpack_decoding(b.len() as u64));
                let (v, total) = crate::pack::unpack_with_cost(&b, ty, self.context.lookup());
                charge!(total
                    .saturating_sub(crate::gas::typecheck::cost_unpack_decoding(b.len() as u64)));
                stack.push(match v {
                    Some(v) => Value::some(v),
                    None => Value::None,
                });
            }
            Instr::PairN(n) => {
                charge!(cost::cost_pair_n(*n as u64));
                let mut value = pop!(stack);
                let at = stack.len() + 1 - n;
                let mut items: Vec<Value> = stack.drain(at..).collect();
                // `items` is bottom-to-top; the top of the stack is the first component.
                items.reverse();
                // After reversal items = [second-from-top .. nth]; rebuild the comb from the end.
                let mut all = vec![value];
                all.extend(items);
                value = all.pop().ok_or_else(bad)?;
                while let Some(left) = all.pop() {
                    value = Value::pair(left, value);
                }
                stack.push(value);
            }
            Instr::UnpairN(n) => {
                charge!(cost::cost_unpair_n(*n as u64));
                let mut value = pop!(stack);
                let mut parts = Vec::with_capacity(*n);
                for _ in 0..n - 1 {
                    let Value::Pair(pair) = value else {
                        return Err(bad());
                    };
                    let (a, b) = unwrap_pair(pair);
                    parts.push(a);
                    value = b;
                }
                parts.push(value);
                stack.extend(parts.into_iter().rev());
            }
            Instr::GetN(n) => {
                charge!(cost::cost_get_n(*n as u64));
                let mut value = pop!(stack);
                let mut i = *n;
                while i >= 2 {
                    let Value::Pair(pair) = value else {
                        return Err(bad());
                    };
                    value = unwrap_pair(pair).1;
                    i -= 2;
                }
                if i == 1 {
                    let Value::Pair(pair) = value else {
                        return Err(bad());
                    };
                    value = unwrap_pair(pair).0;
                }
                stack.push(value);
            }
            Instr::UpdateN(n) => {
                charge!(cost::cost_update_n(*n as u64));
                let new = pop!(stack);
                let target = pop!(stack);
                let mut lefts = Vec::new();
                let mut current = target;
                let mut i = *n;
                while i >= 2 {
                    let Value::Pair(pair) = current else {
                        return Err(bad());
                    };
                    let (a, b) = unwrap_pair(pair);
                    lefts.push(a);
                    current = b;
                    i -= 2;
                }
                let mut result = if i == 1 {
                    let Value::Pair(pair) = current else {
                        return Err(bad());
                    };
                    Value::pair(new, unwrap_pair(pair).1)
                } else {
                    new
                };
                while let Some(left) = lefts.pop() {
                    result = Value::pair(left, result);
                }
                stack.push(result);
            }
            Instr::EmptySet => {
                charge!(cost::COST_EMPTY_SET);
                stack.push(Value::Set(Rc::new(ValueSet::new())));
            }
            Instr::EmptyMap => {
                charge!(cost::COST_EMPTY_MAP);
                stack.push(Value::Map(Rc::new(ValueMap::new())));
            }
            Instr::EmptyBigMap(k, v) => {
                charge!(cost::COST_EMPTY_BIG_MAP);
                stack.push(Value::BigMap(Rc::new(BigMap {
                    id: None,
                    key_type: k.clone(),
                    value_type: v.clone(),
                    overlay: BTreeMap::new(),
                })));
            }
            Instr::MemSet => {
                let key = pop!(stack);
                let Value::Set(set) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_set_mem(comparable_size(&key), set.len() as u64));
                stack.push(Value::Bool(set.contains(&key)));
            }
            Instr::MemMap | Instr::GetMap => {
                let key = pop!(stack);
                let Value::Map(map) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(cost::cost_map_mem(comparable_size(&key), map.len() as u64));
                if matches!(instr, Instr::MemMap) {
                    stack.push(Value::Bool(map.contains_key(&key)));
                } else {
                    stack.push(match map.get(&key) {
                        Some(v) => Value::some(v.clone()),
                        None => Value::None,
                    });
                }
            }
            Instr::MemBigMap | Instr::GetBigMap => {
                let key = pop!(stack);
                let Value::BigMap(map) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(
                    cost::cost_big_map_mem(map.overlay.len() as u64)
                        + crate::pack::big_map_key_hash_cost(&key)
                );
                if matches!(instr, Instr::MemBigMap) {
                    let (found, read_cost) = self.big_map_mem(&map, &key);
                    charge!(read_cost);
                    stack.push(Value::Bool(found));
                } else {
                    let (found, read_cost) = self.big_map_get(&map, &key, *gas);
                    charge!(read_cost);
                    stack.push(match found? {
                        Some(v) => Value::some(v),
                        None => Value::None,
                    });
                }
            }
            Instr::UpdateSet => {
                let key = pop!(stack);
                let Value::Bool(add) = pop!(stack) else {
                    return Err(bad());
                };
                let Some(Value::Set(set)) = stack.last_mut() else {
                    return Err(bad());
                };
                charge!(cost::cost_set_update(
                    comparable_size(&key),
                    set.len() as u64
                ));
                if add {
                    Rc::make_mut(set).insert(key);
                } else if set.contains(&key) {
                    Rc::make_mut(set).remove(&key);
                }
            }
            Instr::UpdateMap | Instr::GetAndUpdateMap => {
                let key = pop!(stack);
                let value = pop!(stack);
                let Some(Value::Map(map)) = stack.last_mut() else {
                    return Err(bad());
                };
                charge!(if matches!(instr, Instr::UpdateMap) {
                    cost::cost_map_update(comparable_size(&key), map.len() as u64)
                } else {
                    cost::cost_map_get_and_update(comparable_size(&key), map.len() as u64)
                });
                let old = match value {
                    Value::Some(v) => Rc::make_mut(map).insert(key, unwrap_rc(v)),
                    _ => {
                        if map.contains_key(&key) {
                            Rc::make_mut(map).remove(&key)
                        } else {
                            None
                        }
                    }
                };
                if matches!(instr, Instr::GetAndUpdateMap) {
                    stack.push(match old {
                        Some(v) => Value::some(v),
                        None => Value::None,
                    });
                }
            }
            Instr::UpdateBigMap | Instr::GetAndUpdateBigMap => {
                let key = pop!(stack);
                let value = pop!(stack);
                let Value::BigMap(mut map) = pop!(stack) else {
                    return Err(bad());
                };
                let overlay_size = map.overlay.len() as u64;
                charge!(
                    if matches!(instr, Instr::GetAndUpdateBigMap) {
                        cost::cost_big_map_get_and_update(overlay_size)
                    } else {
                        cost::cost_big_map_update(overlay_size)
                    } + crate::pack::big_map_key_hash_cost(&key)
                );
                let old = if matches!(instr, Instr::GetAndUpdateBigMap) {
                    let (found, read_cost) = self.big_map_get(&map, &key, *gas);
                    charge!(read_cost);
                    found?
                } else {
                    None
                };
                let new = match value {
                    Value::Some(v) => Some(unwrap_rc(v)),
                    _ => None,
                };
                // Octez's overlay keeps a removal as a binding to nothing, in a fresh big map
                // too (`Script_big_map.update_by_hash`): it counts in the overlay's size, which
                // later accesses pay for, and it is in the big map's diff.
                Rc::make_mut(&mut map).overlay.insert(key, new);
                stack.push(Value::BigMap(map));
                if matches!(instr, Instr::GetAndUpdateBigMap) {
                    stack.push(match old {
                        Some(v) => Value::some(v),
                        None => Value::None,
                    });
                }
            }
            Instr::HashKey => {
                charge!(cost::COST_HASH_KEY);
                let Value::Key(k) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::KeyHash(k.hash()));
            }
            Instr::Blake2b | Instr::Sha256 | Instr::Sha512 | Instr::Keccak | Instr::Sha3 => {
                let Value::Bytes(b) = pop!(stack) else {
                    return Err(bad());
                };
                let n = b.len() as u64;
                use kestrel_crypto::hash;
                let out: Vec<u8> = match instr {
                    Instr::Blake2b => {
                        charge!(cost::cost_blake2b(n));
                        hash::blake2b_256(&b).to_vec()
                    }
                    Instr::Sha256 => {
                        charge!(cost::cost_sha256(n));
                        hash::sha256(&b).to_vec()
                    }
                    Instr::Sha512 => {
                        charge!(cost::cost_sha512(n));
                        hash::sha512(&b).to_vec()
                    }
                    Instr::Keccak => {
                        charge!(cost::cost_keccak(n));
                        hash::keccak_256(&b).to_vec()
                    }
                    _ => {
                        charge!(cost::cost_sha3(n));
                        hash::sha3_256(&b).to_vec()
                    }
                };
                stack.push(Value::Bytes(Rc::from(out)));
            }
            Instr::CheckSignature => {
                let (Value::Key(k), Value::Signature(s), Value::Bytes(m)) =
                    (pop!(stack), pop!(stack), pop!(stack))
                else {
                    return Err(bad());
                };
                let curve = match k.kind {
                    0 => crate::gas::size::Curve::Ed25519,
                    1 => crate::gas::size::Curve::Secp256k1,
                    2 => crate::gas::size::Curve::P256,
                    _ => crate::gas::size::Curve::Bls12_381,
                };
                charge!(cost::cost_check_signature(curve, m.len() as u64));
                stack.push(Value::Bool(crate::pack::check_signature(&k, &s, &m)));
            }
            Instr::Address => {
                charge!(cost::COST_ADDRESS);
                let Value::Contract(c) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Address(Rc::new(c.address.clone())));
            }
            Instr::Contract(entrypoint, ty) => {
                charge!(cost::COST_CONTRACT);
                let Value::Address(address) = pop!(stack) else {
                    return Err(bad());
                };
                charge!(crate::gas::typecheck::cost_parse_contract(
                    &address.destination,
                    ty
                ));
                let (contract, cost) = self.contract(&address, entrypoint, ty);
                charge!(cost);
                stack.push(contract);
            }
            Instr::ImplicitAccount => {
                charge!(cost::COST_IMPLICIT_ACCOUNT);
                let Value::KeyHash(k) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(Value::Contract(Rc::new(Contract {
                    address: Address::new(Destination::Implicit(k)),
                    param_type: Type::Unit,
                })));
            }
            Instr::TransferTokens => {
                charge!(cost::COST_TRANSFER_TOKENS);
                let param = pop!(stack);
                let Value::Mutez(amount) = pop!(stack) else {
                    return Err(bad());
                };
                let Value::Contract(contract) = pop!(stack) else {
                    return Err(bad());
                };
                // `transfer` to a contract or a rollup, or of a ticket to an account, unparses
                // the argument; to a contract it first walks it for big maps twice
                // (`collect_lazy_storage`, `extract_lazy_storage_diff`).
                let walks = match contract.address.destination {
                    Destination::Implicit(_) if matches!(contract.param_type, Type::Ticket(_)) => {
                        Some(0)
                    }
                    Destination::Implicit(_) => None,
                    Destination::Originated(_) => Some(
                        crate::typecheck::charges::collect_lazy_storage(
                            &contract.param_type,
                            &param,
                        ) + crate::typecheck::charges::extract_lazy_storage(
                            &contract.param_type,
                            &param,
                        ),
                    ),
                    Destination::SmartRollup(_) => Some(0),
                };
                // To a contract, the argument's big maps move to temporary ids.
                let (param, big_map_diff) = match contract.address.destination {
                    Destination::Originated(_) if contract.param_type.has_big_map() => {
                        self.temporary_big_maps(&param, &contract.param_type)
                    }
                    _ => (param, Vec::new()),
                };
                if let Some(walks) = walks {
                    charge!(walks
                        .saturating_add(crate::big_map_diff::big_map_diff_cost_milli(&big_map_diff))
                        .saturating_add(crate::pack::pack_cost(&param)));
                }
                let nonce = self.next_nonce();
                stack.push(Value::Operation(Rc::new(Operation::Transfer {
                    param,
                    param_type: contract.param_type.clone(),
                    amount,
                    destination: contract.address.clone(),
                    nonce,
                    big_map_diff,
                })));
            }
            Instr::SetDelegate => {
                charge!(cost::COST_SET_DELEGATE);
                let delegate = match pop!(stack) {
                    Value::Some(k) => match &*k {
                        Value::KeyHash(k) => Some(*k),
                        _ => return Err(bad()),
                    },
                    _ => None,
                };
                let nonce = self.next_nonce();
                stack.push(Value::Operation(Rc::new(Operation::SetDelegate {
                    delegate,
                    nonce,
                })));
            }
            Instr::CreateContract(script, storage_type) => {
                // The storage's lazy parts are collected and extracted to temporary ids (one
                // walk each), then the storage is unparsed (`unparse_data`, optimized) into
                // the origination.
                let Some(storage) = stack.get(stack.len().wrapping_sub(3)) else {
                    return Err(bad());
                };
                let walks = crate::typecheck::charges::collect_lazy_storage(storage_type, storage)
                    + crate::typecheck::charges::extract_lazy_storage(storage_type, storage);
                let (storage, big_map_diff) = if storage_type.has_big_map() {
                    self.temporary_big_maps(storage, storage_type)
                } else {
                    (storage.clone(), Vec::new())
                };
                charge!(
                    cost::COST_CREATE_CONTRACT
                        + walks
                        + crate::big_map_diff::big_map_diff_cost_milli(&big_map_diff)
                        + crate::pack::pack_cost(&storage)
                );
                let delegate = match pop!(stack) {
                    Value::Some(k) => match &*k {
                        Value::KeyHash(k) => Some(*k),
                        _ => return Err(bad()),
                    },
                    _ => None,
                };
                let Value::Mutez(amount) = pop!(stack) else {
                    return Err(bad());
                };
                pop!(stack);
                let nonce = self.next_nonce();
                let address = self.originated_address();
                stack.push(Value::Address(Rc::new(address.clone())));
                stack.push(Value::Operation(Rc::new(Operation::CreateContract {
                    script: script.node.clone(),
                    delegate,
                    amount,
                    storage,
                    storage_type: storage_type.clone(),
                    address,
                    nonce,
                    big_map_diff,
                })));
            }
            Instr::Emit(tag, type_node, ty) => {
                let payload = pop!(stack);
                // Octez unparses the payload into the event (`unparse_data`, optimized).
                charge!(cost::COST_EMIT + crate::pack::pack_cost(&payload));
                let nonce = self.next_nonce();
                stack.push(Value::Operation(Rc::new(Operation::Emit {
                    tag: tag.to_string(),
                    type_node: (**type_node).clone(),
                    payload_type: ty.clone(),
                    payload,
                    nonce,
                })));
            }
            Instr::View(name, ty) => {
                charge!(cost::COST_VIEW);
                let input = pop!(stack);
                let Value::Address(address) = pop!(stack) else {
                    return Err(bad());
                };
                match self.view_call(&address, name, ty, input)? {
                    Some(call) => return Ok(Some(call)),
                    None => stack.push(Value::None),
                }
            }
            Instr::Ticket(content_type) | Instr::TicketDeprecated(content_type) => {
                charge!(cost::COST_TICKET);
                let content = pop!(stack);
                let Value::Nat(amount) = pop!(stack) else {
                    return Err(bad());
                };
                let ticket = Value::Ticket(Rc::new(Ticket {
                    ticketer: Address::new(self.context.self_address.destination),
                    content_type: content_type.clone(),
                    content,
                    amount: amount.clone(),
                }));
                if matches!(instr, Instr::Ticket(_)) {
                    stack.push(if amount.is_zero() {
                        Value::None
                    } else {
                        Value::some(ticket)
                    });
                } else {
                    stack.push(ticket);
                }
            }
            Instr::ReadTicket => {
                charge!(cost::COST_READ_TICKET);
                let Some(Value::Ticket(t)) = stack.last() else {
                    return Err(bad());
                };
                let read = Value::pair(
                    Value::Address(Rc::new(t.ticketer.clone())),
                    Value::pair(t.content.clone(), Value::Nat(t.amount.clone())),
                );
                stack.push(read);
            }
            Instr::SplitTicket => {
                let Value::Ticket(t) = pop!(stack) else {
                    return Err(bad());
                };
                let Value::Pair(amounts) = pop!(stack) else {
                    return Err(bad());
                };
                let (Value::Nat(a), Value::Nat(b)) = &*amounts else {
                    return Err(bad());
                };
                charge!(cost::cost_split_ticket(int_size(a), int_size(b)));
                let ok = !a.is_zero() && !b.is_zero() && a.add(b) == t.amount;
                stack.push(if ok {
                    let make = |amount: &Int| {
                        Value::Ticket(Rc::new(Ticket {
                            ticketer: t.ticketer.clone(),
                            content_type: t.content_type.clone(),
                            content: t.content.clone(),
                            amount: amount.clone(),
                        }))
                    };
                    Value::some(Value::pair(make(a), make(b)))
                } else {
                    Value::None
                });
            }
            Instr::JoinTickets => {
                let Value::Pair(pair) = pop!(stack) else {
                    return Err(bad());
                };
                let (Value::Ticket(a), Value::Ticket(b)) = &*pair else {
                    return Err(bad());
                };
                charge!(cost::cost_join_tickets(
                    comparable_size(&a.content),
                    int_size(&a.amount),
                    int_size(&b.amount)
                ));
                stack.push(if a.ticketer == b.ticketer && a.content == b.content {
                    Value::some(Value::Ticket(Rc::new(Ticket {
                        ticketer: a.ticketer.clone(),
                        content_type: a.content_type.clone(),
                        content: a.content.clone(),
                        amount: a.amount.add(&b.amount),
                    })))
                } else {
                    Value::None
                });
            }
            Instr::IndexAddress | Instr::GetAddressIndex => {
                let Value::Address(address) = pop!(stack) else {
                    return Err(bad());
                };
                let host = &mut self.context.host;
                let found = host.address_index(&address.destination);
                if matches!(instr, Instr::IndexAddress) {
                    // Registering a new address costs the write of its index (Octez charges it
                    // before the write; a run out of gas discards the host's state anyway).
                    let index = match found {
                        Some(index) => index,
                        None => host.index_address(&address.destination),
                    };
                    let fresh_index = if found.is_some() { 0 } else { index };
                    charge!(cost::cost_index_address(found, fresh_index));
                    stack.push(Value::nat(index));
                } else {
                    charge!(cost::cost_get_address_index(found));
                    stack.push(match found {
                        Some(index) => Value::some(Value::nat(index)),
                        None => Value::None,
                    });
                }
            }
            Instr::IsImplicitAccount => {
                charge!(cost::COST_ADDRESS);
                let Value::Address(address) = pop!(stack) else {
                    return Err(bad());
                };
                stack.push(match address.destination {
                    Destination::Implicit(k) => Value::some(Value::KeyHash(k)),
                    _ => Value::None,
                });
            }
            _ => return Err(RunError::Other(format!("unhandled instruction {instr:?}"))),
        }
        Ok(None)
    }

    /// The value bound to `key` in `map`: its overlay, else the host's stored map, read by the
    /// key's hash and typechecked in legacy mode (`Script_big_map.get_by_hash`; a stored value
    /// that does not typecheck is the host's fault). Returns it with what the read costs beyond
    /// the instruction: the store's access, the value's deserialization and its typechecking,
    /// bounded by `gas_left_milli` (a typechecking stopped there costs more than is left).
    fn big_map_get(
        &self,
        map: &BigMap,
        key: &Value,
        gas_left_milli: i64,
    ) -> (Result<Option<Value>, RunError>, u64) {
        if let Some(entry) = map.overlay.get(key) {
            return (Ok(entry.clone()), 0);
        }
        let Some(id) = map.id.as_ref() else {
            return (Ok(None), 0);
        };
        let key_hash = crate::pack::big_map_key_hash(key, &map.key_type);
        let read = self.context.host.big_map_value(id, &key_hash);
        let Some(node) = read.value else {
            return (Ok(None), read.cost_milli);
        };
        let decode = crate::typecheck::charges::micheline_deserialization(&node);
        let mut tc = crate::typecheck::Typechecker::new(self.context.lookup());
        tc.legacy = true;
        tc.gas_limit_milli = gas_left_milli.saturating_sub(
            i64::try_from(read.cost_milli.saturating_add(decode)).unwrap_or(i64::MAX),
        );
        let value = tc.parse_data(&node, &map.value_type);
        let cost = read
            .cost_milli
            .saturating_add(decode)
            .saturating_add(u64::try_from(tc.gas_consumed_milli).unwrap_or(0));
        match value {
            Ok(value) => (Ok(Some(value)), cost),
            Err(error) if matches!(error.kind, crate::typecheck::TcErrorKind::GasExhaustion) => {
                (Err(RunError::GasExhaustion), cost)
            }
            Err(_) => (Err(RunError::IllTypedStoredValue), cost),
        }
    }

    /// Whether `map` binds `key`: its overlay, else the host's stored map (`Script_big_map.mem`,
    /// which reads no value), with what the store charges for the lookup.
    fn big_map_mem(&self, map: &BigMap, key: &Value) -> (bool, u64) {
        if let Some(entry) = map.overlay.get(key) {
            return (entry.is_some(), 0);
        }
        let Some(id) = map.id.as_ref() else {
            return (false, 0);
        };
        let key_hash = crate::pack::big_map_key_hash(key, &map.key_type);
        let read = self.context.host.big_map_mem(id, &key_hash);
        (read.value, read.cost_milli)
    }

    /// The `contract` value `CONTRACT` pushes, and what reading the contract's parameter type
    /// costs beyond the instruction's own charges.
    fn contract(&self, address: &Address, entrypoint: &str, ty: &Type) -> (Value, u64) {
        // CONTRACT %ep on an address that already has an entrypoint fails unless it is default.
        let entrypoint = match (address.entrypoint.as_str(), entrypoint) {
            ("", e) => e.to_string(),
            (e, "") => e.to_string(),
            _ => return (Value::None, 0),
        };
        let tc = crate::typecheck::Typechecker::new(self.context.lookup());
        let (found, cost) = tc.contract_entrypoint_type(address, &entrypoint, ty);
        let is_implicit = address.destination.is_implicit();
        let value = match found {
            Some(t) if &t == ty => Value::some(Value::Contract(Rc::new(Contract {
                address: Address {
                    destination: address.destination,
                    entrypoint: if entrypoint == "default" {
                        String::new()
                    } else {
                        entrypoint
                    },
                },
                param_type: t,
            }))),
            // Implicit accounts also accept tickets on their default entrypoint.
            None | Some(_)
                if is_implicit && entrypoint.is_empty() && matches!(ty, Type::Ticket(_)) =>
            {
                Value::some(Value::Contract(Rc::new(Contract {
                    address: address.clone(),
                    param_type: ty.clone(),
                })))
            }
            _ => Value::None,
        };
        (value, cost)
    }

    /// `value` (of type `ty`) with its big maps moved to temporary ids, and the diff that does
    /// it ([`crate::big_map_diff::extract_temporary_big_maps`]).
    fn temporary_big_maps(
        &mut self,
        value: &Value,
        ty: &Type,
    ) -> (Value, Vec<crate::big_map_diff::BigMapDiff>) {
        crate::big_map_diff::extract_temporary_big_maps(value, ty, &mut *self.context.host)
    }

    fn originated_address(&mut self) -> Address {
        Address::new(self.context.host.fresh_contract_address())
    }

    fn view_call(
        &mut self,
        address: &Address,
        name: &str,
        ty: &Type,
        input: Value,
    ) -> Result<Option<ViewCall>, RunError> {
        if !address.entrypoint.is_empty() {
            return Ok(None);
        }
        let Some(view) = self.context.host.view(&address.destination, name) else {
            return Ok(None);
        };
        if &view.output_type != ty {
            return Ok(None);
        }
        let callee_balance = view.balance_mutez;
        let mut tc = crate::typecheck::Typechecker::new(self.context.lookup());
        let storage = tc
            .parse_data(&view.storage, &view.storage_type)
            .map_err(|_| RunError::IllTypedStoredValue)?;
        let (code, out) = tc
            .typecheck_code(
                &view.code,
                vec![Type::pair(view.input_type, view.storage_type)],
            )
            .map_err(|e| RunError::IllTypedView(Box::new(e)))?;
        if let Some(out) = out {
            if out.len() != 1 || out[0] != view.output_type {
                return Ok(None);
            }
        }
        // Wrap the result in `Some` after the call: compile a code that runs the view then SOME.
        let mut wrapped = code;
        wrapped.instrs.push(Instr::Some);
        wrapped.locations.push(0);
        // While the view runs, SELF is the callee, SENDER the caller, BALANCE the callee's.
        let saved = SavedContext {
            self_address: std::mem::replace(
                &mut self.context.self_address,
                Address::new(address.destination),
            ),
            sender: self.context.sender.clone(),
            balance: std::mem::replace(&mut self.context.balance, callee_balance),
            amount: std::mem::replace(&mut self.context.amount, 0),
        };
        self.context.sender = Address::new(saved.self_address.destination);
        Ok(Some((
            Rc::new(wrapped),
            vec![Value::pair(input, storage)],
            saved,
        )))
    }
}

/// A view to run as a call: its code, its stack and the caller's context to restore.
type ViewCall = (Rc<Code>, Vec<Value>, SavedContext);

#[inline]
fn break_failed(v: Value, location: u32) -> Result<(), RunError> {
    Err(RunError::Failed(v, location))
}

/// After `APPLY`, the new lambda's `arg` is already the remaining type; nothing to fix.
#[inline]
fn fix_applied_arg(_stack: &mut [Value]) {}

/// `Value::clone` with the small scalars inlined (the general clone is a call with a large match).
#[inline(always)]
fn clone_fast(value: &Value) -> Value {
    match value {
        Value::Int(Int::Small(v)) => Value::Int(Int::Small(*v)),
        Value::Nat(Int::Small(v)) => Value::Nat(Int::Small(*v)),
        Value::Bool(b) => Value::Bool(*b),
        Value::Unit => Value::Unit,
        Value::Mutez(m) => Value::Mutez(*m),
        other => other.clone(),
    }
}

/// Takes the value out of an `Rc`, cloning only if it is shared.
#[inline]
pub fn unwrap_rc(rc: Rc<Value>) -> Value {
    Rc::try_unwrap(rc).unwrap_or_else(|shared| (*shared).clone())
}

#[inline]
fn unwrap_pair(rc: Rc<(Value, Value)>) -> (Value, Value) {
    Rc::try_unwrap(rc).unwrap_or_else(|shared| (shared.0.clone(), shared.1.clone()))
}

/// Octez's `size_of_comparable_value`, used by map and set costs: the one model of
/// [`crate::gas::size::comparable_size_of`] over [`compare_view`].
pub fn comparable_size(v: &Value) -> u64 {
    match v {
        // The keys of most sets and maps: one node, so no walk.
        Value::Int(n) | Value::Nat(n) => crate::gas::size::comparable_int_size_of(n.bits()),
        _ => crate::gas::size::comparable_size_of(v, compare_view),
    }
}

/// What `COMPARE` of two values costs (also paid per key while reading a literal set or map):
/// Octez's model walked over both values ([`cost::cost_compare_values`]).
pub(crate) fn compare_cost(a: &Value, b: &Value) -> u64 {
    cost::cost_compare_values(a, b, compare_view)
}

/// One node of a comparable value as the comparison cost model sees it.
fn compare_view(value: &Value) -> crate::gas::size::CompareView<&Value> {
    use crate::gas::size::{CompareView as View, Curve};
    match value {
        Value::Unit => View::Unit,
        Value::Bool(_) => View::Bool,
        Value::Int(n) | Value::Nat(n) => View::Int { numbits: n.bits() },
        Value::Timestamp(n) => View::Timestamp { numbits: n.bits() },
        Value::String(text) => View::String {
            length: text.len() as u64,
        },
        Value::Bytes(bytes) => View::Bytes {
            length: bytes.len() as u64,
        },
        Value::Mutez(_) => View::Mutez,
        Value::KeyHash(_) => View::KeyHash,
        Value::Address(address) => View::Address {
            entrypoint_length: address.entrypoint.len() as u64,
        },
        Value::Key(key) => View::Key(match key.kind {
            0 => Curve::Ed25519,
            1 => Curve::Secp256k1,
            2 => Curve::P256,
            _ => Curve::Bls12_381,
        }),
        Value::Signature(_) => View::Signature,
        Value::ChainId(_) => View::ChainId,
        Value::Pair(pair) => View::Pair(&pair.0, &pair.1),
        Value::Left(inner) => View::Left(inner),
        Value::Right(inner) => View::Right(inner),
        Value::Some(inner) => View::Some(inner),
        // Values that are not comparable never reach `COMPARE`.
        _ => View::None,
    }
}

fn lsl_bytes(b: &[u8], shift: u64) -> Vec<u8> {
    let big = num_bigint::BigUint::from_bytes_be(b) << shift;
    let mut out = big.to_bytes_be();
    let extra_bytes = shift.div_ceil(8) as usize;
    let target = b.len() + extra_bytes;
    if big_is_zero(&out) {
        out.clear();
    }
    let mut padded = vec![0u8; target.saturating_sub(out.len())];
    padded.extend(out);
    padded
}

fn big_is_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| *b == 0)
}

fn lsr_bytes(b: &[u8], shift: u64) -> Vec<u8> {
    if shift >= (b.len() as u64) * 8 {
        return Vec::new();
    }
    let big = num_bigint::BigUint::from_bytes_be(b) >> shift;
    let drop_bytes = (shift / 8) as usize;
    let target = b.len().saturating_sub(drop_bytes);
    let mut out = big.to_bytes_be();
    if big_is_zero(&out) {
        out.clear();
    }
    let mut padded = vec![0u8; target.saturating_sub(out.len())];
    padded.extend(out);
    padded
}

fn bytes_bitwise(a: &[u8], b: &[u8], instr: &Instr) -> Vec<u8> {
    // Aligned on the right; AND truncates to the shorter length, OR/XOR extend to the longer.
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let offset = long.len() - short.len();
    match instr {
        Instr::AndBytes => short
            .iter()
            .zip(&long[offset..])
            .map(|(x, y)| x & y)
            .collect(),
        Instr::OrBytes => {
            let mut out = long.to_vec();
            for (i, s) in short.iter().enumerate() {
                out[offset + i] |= s;
            }
            out
        }
        _ => {
            let mut out = long.to_vec();
            for (i, s) in short.iter().enumerate() {
                out[offset + i] ^= s;
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The milligas a run of `code` (Michelson text) on `stack` (top last) consumes.
    fn run_gas(code: &str, stack_types: Vec<Type>, stack: Vec<Value>) -> i64 {
        let environment = crate::host::Environment::default();
        let mut host = crate::host::EmptyHost::default();
        let self_parameter = kestrel_micheline::Node::prim(kestrel_micheline::Prim::T_unit, vec![]);
        let mut context = Context::new(&environment, &self_parameter, &mut host);
        let node = kestrel_micheline::parse::parse_expression(code).expect("valid Micheline");
        let (compiled, _) = crate::typecheck::Typechecker::new(context.lookup())
            .typecheck_code(&node, stack_types)
            .expect("well typed");
        let limit = 1_000_000;
        let mut interpreter = Interpreter::new(&mut context, limit);
        interpreter.run(&Rc::new(compiled), stack).expect("runs");
        limit - interpreter.gas_milli_remaining
    }

    #[test]
    fn effects_pay_for_unparsing_their_payload() {
        // `unparse_data` of `5` in optimized mode as PACK pays it: one unparse cycle (65), its
        // encoding (100 per node + 25 per integer byte) and stripping locations (51 per node).
        let unparse_5 = 65 + 125 + 51;
        // EMIT (30), then IHalt (15).
        assert_eq!(
            run_gas("{ EMIT %e }", vec![Type::Nat], vec![Value::nat(5)]),
            30 + unparse_5 + 15
        );
        // CREATE_CONTRACT (60), collecting and extracting the storage's lazy parts (one
        // 220-milligas step each for a type without big maps), unparsing the storage, IHalt.
        let create = "{ CREATE_CONTRACT { parameter unit ; storage nat ; code { FAILWITH } } }";
        assert_eq!(
            run_gas(
                create,
                vec![Type::Nat, Type::Mutez, Type::option(Type::KeyHash)],
                vec![Value::nat(5), Value::Mutez(0), Value::None]
            ),
            60 + 2 * 220 + unparse_5 + 15
        );
    }

    #[test]
    fn map_key_sizes_follow_octez() {
        let key_hash =
            crate::literals::KeyHash::from_base58("tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx")
                .map(Value::KeyHash)
                .expect("valid key hash");
        let address = |text: &str| {
            Value::Address(Rc::new(Address::from_string(text).expect("valid address")))
        };
        // Each line: a key, its `Gas_comparable_input_size.size_of_comparable_value`.
        let cases: [(&str, Value, u64); 6] = [
            ("key_hash: tag and hash", key_hash.clone(), 21),
            (
                "address at the default entrypoint (`default`)",
                address("KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi"),
                21 + 7,
            ),
            (
                "address at %foo",
                address("KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi%foo"),
                21 + 3,
            ),
            ("nat 127 (numbits / 8)", Value::nat(127), 0),
            ("nat 256", Value::nat(256), 1),
            (
                "pair of a string and an option",
                Value::pair(Value::String("ab".into()), Value::some(Value::nat(256))),
                1 + 2 + 1 + 1,
            ),
        ];
        for (name, key, expected) in &cases {
            assert_eq!(comparable_size(key), *expected, "{name}");
        }
        // UPDATE on a 1,000-key key_hash map: 55 + 0.09375 · 21 · log2(1001).
        assert_eq!(cost::cost_map_update(comparable_size(&key_hash), 1_000), 76);
    }
}

/// One step of a recorded trace.
#[derive(Debug, Clone)]
pub struct TracedStep {
    /// The step's Micheline location.
    pub location: u32,
    /// Milligas consumed since the previous step (Octez's `trace_code` `gas`, what
    /// octez-client prints as `just consumed gas`).
    pub gas_milli: i64,
    /// The stack after the step, top first.
    pub stack: Vec<Value>,
}

/// A [`Tracer`] that records every step, and the location of the step running, so that a
/// failed run tells where it failed (`trace_code`, `run script --trace-stack`, and the
/// `location` of a `FAILWITH` or another runtime error).
#[derive(Debug, Clone)]
pub struct TraceRecorder {
    steps: Vec<TracedStep>,
    last_gas_milli: i64,
    entered: Option<u32>,
}

impl TraceRecorder {
    /// A recorder for a run given `gas_limit_milli` milligas.
    pub fn new(gas_limit_milli: u64) -> TraceRecorder {
        TraceRecorder {
            steps: Vec::new(),
            last_gas_milli: i64::try_from(gas_limit_milli).unwrap_or(i64::MAX),
            entered: None,
        }
    }

    /// The location of the last step that started: where a failed run stopped.
    pub fn failing_location(&self) -> Option<u32> {
        self.entered
    }

    /// The steps recorded.
    pub fn into_steps(self) -> Vec<TracedStep> {
        self.steps
    }
}

impl Tracer for TraceRecorder {
    const ENABLED: bool = true;
    fn log(&mut self, location: u32, gas_milli_remaining: i64, stack: &[Value]) {
        self.steps.push(TracedStep {
            location,
            gas_milli: self.last_gas_milli - gas_milli_remaining,
            stack: stack.iter().rev().cloned().collect(),
        });
        self.last_gas_milli = gas_milli_remaining;
    }
    fn enter(&mut self, location: u32) {
        self.entered = Some(location);
    }
}
