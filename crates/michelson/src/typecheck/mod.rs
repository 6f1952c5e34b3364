//! The typechecker: Micheline code (macros expanded) and an input stack type to the typed IR of
//! [`crate::ir`] and the output stack type (`specs/michelson.rst`, "Typing" and each
//! instruction's typing rule). Errors are `StaticError`s carrying the source span.
//!
//! Structured instructions are compiled to jumps (see `ir.rs`). Nested code blocks are handled
//! by recursion on the block structure of the program.

pub mod charges;
pub mod data;
pub mod entrypoints;
pub mod ir_size;
pub mod operators;
pub mod unparse_code;

use crate::context::Lookup;
use crate::ir::{Code, Instr, IterKind};
use crate::macros::MacroError;
use crate::types::{Type, TypeError};
use crate::value::Value;
use kestrel_micheline::{Node, NodeKind, Prim, Span};
use num_traits::ToPrimitive;
use std::fmt;
use std::rc::Rc;

/// A typechecking error (`StaticError` in TZT terms), with the span of the offending node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcError {
    /// Where the error was found.
    pub span: Span,
    /// What went wrong.
    pub kind: TcErrorKind,
}

/// The rule a program or value broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcErrorKind {
    /// An ill-formed type.
    Type(TypeError),
    /// An instruction applied to a stack it does not accept.
    BadStack {
        /// The instruction.
        instr: String,
        /// The stack it found.
        stack: String,
    },
    /// An unknown primitive in instruction position.
    UnknownInstruction(String),
    /// An instruction with the wrong arguments.
    BadArguments(String),
    /// A value that does not have the expected type.
    InvalidData {
        /// The expected type.
        expected: String,
        /// The node found.
        found: String,
    },
    /// Set elements not strictly increasing.
    UnorderedSet,
    /// Map keys not strictly increasing.
    UnorderedMap,
    /// Two branches ending with different stacks.
    UnmatchedBranches {
        /// One branch's stack.
        first: String,
        /// The other's.
        second: String,
    },
    /// A loop or iteration body that changes the stack type.
    BadLoopBody,
    /// A lambda or script whose result has the wrong type.
    BadReturn {
        /// Expected.
        expected: String,
        /// Found.
        found: String,
    },
    /// Code after `FAILWITH` or `NEVER` in the same sequence.
    UnreachableCode,
    /// A type that must be comparable, packable, pushable, ... is not.
    ForbiddenType {
        /// The property.
        property: &'static str,
        /// The type.
        ty: String,
    },
    /// A macro error.
    Macro(String),
    /// A feature this implementation does not support (sapling, timelock).
    Unsupported(String),
    /// An entrypoint that does not exist or is ill-formed.
    BadEntrypoint(String),
    /// A malformed annotation.
    BadAnnotation(String),
    /// A stack given to `code` in a script that is not `pair parameter storage`.
    BadScript(String),
    /// Gas ran out while typechecking.
    GasExhaustion,
    /// A `FAILWITH` (or `NEVER`) that is not in tail position, e.g. as the end of a `DIP` body.
    FailNotInTail,
    /// Lambdas written as data, or `CREATE_CONTRACT` scripts, nested beyond
    /// [`MAX_NESTED_TYPECHECKS`].
    TooDeep,
}

impl TcError {
    /// An error at `span`.
    pub fn new(span: Span, kind: TcErrorKind) -> TcError {
        TcError { span, kind }
    }

    /// `instr` at `span` was applied to a stack it does not accept.
    fn bad_stack(span: Span, instr: &str, stack: &[Type]) -> TcError {
        TcError::new(
            span,
            TcErrorKind::BadStack {
                instr: instr.to_string(),
                stack: stack_to_string(stack),
            },
        )
    }

    /// A type at `span` lacks `property` (packable, comparable, ...) where the instruction needs it.
    fn forbidden_type(span: Span, property: &'static str, ty: &Type) -> TcError {
        TcError::new(
            span,
            TcErrorKind::ForbiddenType {
                property,
                ty: ty.to_string(),
            },
        )
    }

    /// `instr` at `span` was given the wrong arguments.
    fn bad_arguments(span: Span, instr: &str) -> TcError {
        TcError::new(span, TcErrorKind::BadArguments(instr.to_string()))
    }

    /// `Ok` when `args` has exactly `count` elements, else a bad-arguments error for `prim`
    /// (whose name is looked up only then: every instruction checks its arity).
    fn check_arity(span: Span, prim: Prim, args: &[Node], count: usize) -> Result<(), TcError> {
        if args.len() == count {
            Ok(())
        } else {
            Err(TcError::bad_arguments(span, prim.name()))
        }
    }
}

impl fmt::Display for TcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.span.start, self.kind)
    }
}

impl From<MacroError> for TcError {
    fn from(error: MacroError) -> TcError {
        match error {
            MacroError::Arity { name, span } => TcError::new(span, TcErrorKind::Macro(name)),
        }
    }
}

/// How deep lambdas written as data (`PUSH (lambda ..) { .. }`) and `CREATE_CONTRACT` scripts may
/// nest: each level is a nested run of the typechecker on the host stack. Code nesting itself is
/// unbounded (it uses the typechecker's frame stack); this bound is ours, chosen far above what
/// real contracts do.
pub const MAX_NESTED_TYPECHECKS: usize = 256;

/// Prints a stack type top first.
pub fn stack_to_string(stack: &[Type]) -> String {
    let items: Vec<String> = stack.iter().rev().map(|t| t.to_string()).collect();
    format!("[ {} ]", items.join(" : "))
}

/// The typechecker's state: the context (for `SELF`, contract and big map literals) and the
/// typechecking gas spent.
pub struct Typechecker<'a> {
    /// The world whose contracts and big maps data literals may name.
    pub(crate) context: Lookup<'a>,
    /// Milligas consumed by typechecking so far, as Octez charges it (see [`charges`]).
    pub gas_consumed_milli: i64,
    /// The milligas typechecking may consume (the operation limit unless set).
    pub gas_limit_milli: i64,
    /// Nodes of Octez's typed IR for the code typechecked so far (`Script_typed_ir_size`),
    /// which Octez charges once a script's code is typechecked.
    pub ir_nodes: u64,
    /// Bytes of Octez's size model for the typed code typechecked so far (`ir_size`).
    pub ir_bytes: u64,
    /// Whether `SELF` is allowed (not inside views and lambdas... Octez forbids it in lambdas).
    pub allow_self: bool,
    /// Whether the legacy mode is on (accepts deprecated instructions).
    pub legacy: bool,
    /// The parameter type `SELF` refers to inside a `CREATE_CONTRACT` script.
    pub self_param_override: Option<Node>,
    /// Current nesting of data lambdas and `CREATE_CONTRACT` scripts.
    pub nesting: usize,
    /// How many `unparse_code` walks ([`unparse_code`]) enclose the current step: inside one,
    /// Octez normalizes a lambda written as data without charging its serialization.
    pub unparse_depth: u32,
    /// How many data parses enclose the current step past their first cycle: Octez traces
    /// errors raised there under the data (`Invalid_constant`).
    pub traced_depth: u32,
    /// Whether the gas ran out inside a traced data parse (see [`unparse_code`]).
    pub exhausted_in_constant: std::cell::Cell<bool>,
    /// Whether the next [`Typechecker::typecheck_script`] receives an expanded script whose
    /// canonical locations it should record (for traces).
    pub record_locations: bool,
    /// Canonical Micheline locations of the nodes being typechecked (set by
    /// [`Typechecker::set_locations`]); without them, byte offsets stand in.
    locations: Locations,
    /// `node_measure` of each toplevel field's argument, by its address, from the walk of
    /// [`Typechecker::set_locations`] (the code's is part of `code_size`).
    field_measures: Vec<(usize, (u64, u64))>,
    /// Measures of the stack's types for proof witnesses and typed-IR sizes.
    measures: ir_size::MeasureCache,
    /// Instructions to reserve for the next code block [`Typechecker::typecheck_code`] starts
    /// (a script's code, sized from its location table): growing the instruction vector one
    /// doubling at a time copied it about twice over, 8 % of typechecking the CPMM.
    code_capacity: usize,
}

/// Canonical locations of a script's applications and sequences
/// ([`Typechecker::set_locations`]). The typechecker looks nodes up in prefix order (an
/// instruction, then its bodies, then the next instruction), so a lookup scans forward from
/// where the previous one ended; one the scan does not answer (a view written before the code,
/// a node of another expansion) goes through an index by address, built the first time.
#[derive(Default)]
struct Locations {
    /// `(node address, location)` in prefix order.
    nodes: Vec<(usize, u32)>,
    /// Where the next lookup's scan starts.
    cursor: std::cell::Cell<usize>,
    /// Position in `nodes` by node address.
    index: std::cell::OnceCell<AddressIndex>,
}

/// Positions by node address ([`Locations::index`]).
type AddressIndex =
    std::collections::HashMap<usize, usize, std::hash::BuildHasherDefault<AddressHasher>>;

/// The entries [`Typechecker::set_locations`] reserves: a contract of ordinary size grew its
/// table a dozen times from empty.
const LOCATIONS_CAPACITY: usize = 2048;

/// How many entries a lookup scans before it uses the index: the types and data literals
/// between two instructions, at ordinary sizes.
const LOCATION_SCAN: usize = 128;

impl Locations {
    fn get(&self, node: &Node) -> Option<u32> {
        let address = std::ptr::from_ref(node) as usize;
        let start = self.cursor.get().min(self.nodes.len());
        let end = start.saturating_add(LOCATION_SCAN).min(self.nodes.len());
        let found = match self.nodes[start..end]
            .iter()
            .position(|&(a, _)| a == address)
        {
            Some(offset) => start + offset,
            None => *self
                .index
                .get_or_init(|| {
                    let mut index = AddressIndex::default();
                    index.reserve(self.nodes.len());
                    index.extend(self.nodes.iter().enumerate().map(|(i, &(a, _))| (a, i)));
                    index
                })
                .get(&address)?,
        };
        self.cursor.set(found + 1);
        Some(self.nodes[found].1)
    }
}

/// Hashes a node's address for [`AddressIndex`]: addresses are distinct and not chosen by
/// the script's author, so a multiplicative mix (Fibonacci hashing) spreads them well and
/// costs a few instructions where SipHash cost about a tenth of typechecking.
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        let mixed = (self.0 ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = mixed ^ (mixed >> 29);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

/// The largest argument of `DROP n`, `DUP n`, `DIG n`, `DUG n`, `PAIR n`, `UNPAIR n` and
/// `DIP n` (Octez's `parse_uint10`: a 10-bit unsigned integer).
const MAX_UINT10: usize = (1 << 10) - 1;
/// The largest argument of `GET n` and `UPDATE n` (Octez's `parse_uint11`: an 11-bit unsigned
/// integer, since a comb of 1,023 leaves has 2,046 addressable nodes).
const MAX_UINT11: usize = (1 << 11) - 1;

/// Whether a script is the one being run or the argument of a `CREATE_CONTRACT` in it: only
/// the former pays for constant expansion and its typed code's size.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Toplevel,
    Nested,
}

/// The stack type after a block: `None` when the block always fails.
pub type StackOut = Option<Vec<Type>>;

/// Room a stack copied for a branch or body keeps for the values its code pushes: a copy of
/// exactly its length grew (reallocating) at the body's first push.
const STACK_HEADROOM: usize = 8;

/// A copy of `stack` for a branch or a body, with room to grow ([`STACK_HEADROOM`]).
fn fork(stack: &[Type]) -> Vec<Type> {
    let mut copy = Vec::with_capacity(stack.len() + STACK_HEADROOM);
    copy.extend_from_slice(stack);
    copy
}

struct Builder {
    code: Code,
}

impl Builder {
    fn emit(&mut self, instr: Instr, location: u32) -> usize {
        self.code.instrs.push(instr);
        self.code.locations.push(location);
        self.code.instrs.len() - 1
    }

    fn here(&self) -> usize {
        self.code.instrs.len()
    }

    fn patch(&mut self, at: usize, target: usize) {
        match &mut self.code.instrs[at] {
            Instr::Jump(t)
            | Instr::BranchEnd(t)
            | Instr::LoopBack(t)
            | Instr::IterBack(t)
            | Instr::If(t)
            | Instr::IfNone(t)
            | Instr::IfLeft(t)
            | Instr::IfCons(t)
            | Instr::LoopHead(t)
            | Instr::LoopLeftHead(t)
            | Instr::IterNext(t)
            | Instr::MapNext(t) => *t = target,
            _ => {}
        }
    }
}

fn annots_of(node: &Node) -> &[String] {
    match &node.kind {
        NodeKind::Prim { annots, .. } => annots,
        _ => &[],
    }
}

/// Octez's limit on the number of annotations of one kind and their length is not enforced
/// here; only syntax is checked.
fn field_annot(node: &Node) -> Option<&str> {
    annots_of(node).iter().find_map(|a| a.strip_prefix('%'))
}

impl<'a> Typechecker<'a> {
    /// A typechecker over `context`.
    pub(crate) fn new(context: Lookup<'a>) -> Typechecker<'a> {
        Typechecker {
            context,
            gas_consumed_milli: 0,
            gas_limit_milli: crate::host::HARD_GAS_LIMIT_PER_OPERATION_MILLI as i64,
            ir_nodes: 0,
            ir_bytes: 0,
            allow_self: true,
            legacy: false,
            self_param_override: None,
            record_locations: false,
            nesting: 0,
            unparse_depth: 0,
            traced_depth: 0,
            exhausted_in_constant: std::cell::Cell::new(false),
            locations: Locations::default(),
            field_measures: Vec::new(),
            measures: ir_size::MeasureCache::default(),
            code_capacity: 0,
        }
    }

    /// Records the canonical locations (prefix-order node numbers, Octez's `location: N`) of
    /// every node of `root`, which must outlive the typechecking that uses them, and measures
    /// each toplevel field's argument on the way ([`ir_size::node_measure`]). Returns the
    /// number of nodes.
    pub fn set_locations(&mut self, root: &Node) -> u64 {
        let mut nodes = Vec::with_capacity(LOCATIONS_CAPACITY);
        self.field_measures.clear();
        nodes.push((std::ptr::from_ref(root) as usize, 0));
        let mut count = 1u32;
        // The root's children (a script's fields) are walked one by one, so that the walk
        // measures each field's argument for `code_size`.
        for field in root.children() {
            let mut measure = (0u64, 0u64);
            let mut field_nodes = 0u32;
            for (index, node) in kestrel_micheline::location::prefix_order(field) {
                let location = count.saturating_add(index as u32);
                field_nodes = (index as u32).saturating_add(1);
                // Only code (sequences and instructions) is looked up; literals never are.
                if matches!(node.kind, NodeKind::Prim { .. } | NodeKind::Seq(_)) {
                    nodes.push((std::ptr::from_ref(node) as usize, location));
                }
                if index > 0 {
                    let (own_nodes, own_bytes) = ir_size::node_own_measure(node);
                    measure.0 = measure.0.saturating_add(own_nodes);
                    measure.1 = measure.1.saturating_add(own_bytes);
                }
            }
            count = count.saturating_add(field_nodes);
            if let [argument] = field.children() {
                self.field_measures
                    .push((std::ptr::from_ref(argument) as usize, measure));
            }
        }
        self.locations = Locations {
            nodes,
            ..Locations::default()
        };
        u64::from(count)
    }

    fn location_of(&self, node: &Node) -> u32 {
        self.locations.get(node).unwrap_or(node.span.start)
    }

    /// Charges `milligas` of typechecking gas (saturating, as Octez's counters do).
    pub fn charge_gas(&mut self, milligas: u64) {
        let milligas = i64::try_from(milligas).unwrap_or(i64::MAX);
        self.gas_consumed_milli = self.gas_consumed_milli.saturating_add(milligas);
    }

    /// Fails once the gas charged exceeds the limit (`gas_limit_milli`), as Octez's
    /// `Gas.consume` does: checked before each instruction and each data node, so the work
    /// (and memory) typechecking can take is bounded by gas.
    pub fn check_gas(&self, span: Span) -> Result<(), TcError> {
        if self.gas_consumed_milli > self.gas_limit_milli {
            self.exhausted_in_constant.set(self.traced_depth > 0);
            return Err(TcError::new(span, TcErrorKind::GasExhaustion));
        }
        Ok(())
    }

    /// Charges one typechecking step: its gas and the typed-IR nodes it builds.
    pub fn charge(&mut self, charge: charges::Charge) {
        self.charge_gas(charge.gas_milli);
        self.ir_nodes = self.ir_nodes.saturating_add(charge.ir_nodes);
        self.ir_bytes = self.ir_bytes.saturating_add(charge.ir_bytes);
    }

    /// Parses a type node, charging Octez's `parse_ty` (one cycle per type node).
    pub fn parse_type(&mut self, node: &Node) -> Result<Type, TcError> {
        Ok(self.parse_stored_type(node)?.0)
    }

    /// [`Typechecker::parse_type`] of a type an instruction stores, with what it adds to the
    /// typed code ([`charges::stored_type`]) for the caller to charge, measured while parsing.
    pub fn parse_stored_type(&mut self, node: &Node) -> Result<(Type, charges::Charge), TcError> {
        let mut nodes = 0u64;
        let mut big_maps = 0u64;
        let mut ir_bytes = 0u64;
        let ty = crate::types::parse_type_visiting(node, &mut |ty| {
            nodes += 1;
            big_maps += u64::from(matches!(ty, Type::BigMap(..)));
            ir_bytes += ir_size::type_node_bytes(ty);
        })
        .map_err(|e| TcError::new(node.span, TcErrorKind::Type(e)))?;
        self.charge_gas(charges::parse_type_cycles(nodes, big_maps));
        let stored = charges::Charge {
            gas_milli: 0,
            ir_nodes: nodes,
            ir_bytes,
        };
        Ok((ty, stored))
    }

    /// Typechecks code (already macro-expanded) against `stack`.
    ///
    /// Nested blocks are walked with an explicit frame stack, never host recursion, so code
    /// nested as deep as the parser allows typechecks in constant native stack.
    pub fn typecheck_code(
        &mut self,
        node: &Node,
        stack: Vec<Type>,
    ) -> Result<(Code, StackOut), TcError> {
        let capacity = std::mem::take(&mut self.code_capacity);
        let mut builders = vec![Builder {
            code: Code {
                instrs: Vec::with_capacity(capacity),
                locations: Vec::with_capacity(capacity),
                location: 0,
            },
        }];
        if let NodeKind::Seq(items) = &node.kind {
            self.charge(charges::block(items.len()));
        }
        let mut frames: Vec<Frame<'_>> = vec![Frame::Block {
            items: block_items(node),
            next: 0,
            state: Some(stack),
        }];
        loop {
            let Some(Frame::Block { items, next, state }) = frames.last_mut() else {
                // Only blocks are ever on top; results are delivered to `After` frames below.
                return Err(TcError::new(
                    node.span,
                    TcErrorKind::BadScript("typechecker state".into()),
                ));
            };
            if *next < items.len() {
                let item = &items[*next];
                *next += 1;
                let Some(current) = state.take() else {
                    return Err(TcError::new(item.span, TcErrorKind::UnreachableCode));
                };
                self.check_gas(item.span)?;
                let builder = builders.last_mut().ok_or_else(|| {
                    TcError::new(item.span, TcErrorKind::BadScript("builder".into()))
                })?;
                match self.step(builder, item, current)? {
                    Step::Done(out) => {
                        if let Some(Frame::Block { state, .. }) = frames.last_mut() {
                            *state = out;
                        }
                    }
                    Step::Enter { body, stack, after } => {
                        self.enter(&mut frames, &mut builders, body, stack, after)?
                    }
                }
                continue;
            }
            // The block is finished: hand its result to whatever waits for it.
            let Some(Frame::Block { state: mut out, .. }) = frames.pop() else {
                continue;
            };
            loop {
                match frames.pop() {
                    None => {
                        let builder = builders.pop().ok_or_else(|| {
                            TcError::new(node.span, TcErrorKind::BadScript("builder".into()))
                        })?;
                        return Ok((builder.code, out.take()));
                    }
                    Some(Frame::Block { items, next, .. }) => {
                        frames.push(Frame::Block {
                            items,
                            next,
                            state: out.take(),
                        });
                        break;
                    }
                    Some(Frame::After(after)) => {
                        let step = self.after(&mut builders, after, out.take())?;
                        match step {
                            Step::Done(result) => {
                                out = result;
                                continue;
                            }
                            Step::Enter { body, stack, after } => {
                                self.enter(&mut frames, &mut builders, body, stack, after)?;
                                break;
                            }
                        }
                    }
                }
            }
        }
    }

    fn enter<'n>(
        &mut self,
        frames: &mut Vec<Frame<'n>>,
        builders: &mut Vec<Builder>,
        body: &'n Node,
        stack: Vec<Type>,
        after: After<'n>,
    ) -> Result<(), TcError> {
        if !matches!(after, After::Inline) && !matches!(body.kind, NodeKind::Seq(_)) {
            return Err(TcError::new(
                body.span,
                TcErrorKind::BadArguments("expected a sequence".into()),
            ));
        }
        if matches!(after, After::Lambda { .. }) {
            builders.push(Builder {
                code: Code::default(),
            });
        }
        if let NodeKind::Seq(items) = &body.kind {
            self.charge(charges::block(items.len()));
        }
        frames.push(Frame::After(after));
        frames.push(Frame::Block {
            items: block_items(body),
            next: 0,
            state: Some(stack),
        });
        Ok(())
    }

    /// One instruction: done at once, or a structured one that asks for a body to be checked.
    fn step<'n>(
        &mut self,
        b: &mut Builder,
        node: &'n Node,
        mut stack: Vec<Type>,
    ) -> Result<Step<'n>, TcError> {
        let span = node.span;
        let loc = self.location_of(node);
        let (prim, args) = match &node.kind {
            NodeKind::Seq(_) => {
                return Ok(Step::Enter {
                    body: node,
                    stack,
                    after: After::Inline,
                });
            }
            NodeKind::Prim { name, args, .. } => match name.known() {
                Some(prim) => (prim, args.as_slice()),
                None => {
                    self.charge(charges::PLAIN_INSTRUCTION);
                    return Ok(Step::Done(self.instr(b, node, loc, stack)?));
                }
            },
            _ => {
                self.charge(charges::PLAIN_INSTRUCTION);
                return Ok(Step::Done(self.instr(b, node, loc, stack)?));
            }
        };
        let charge = charges::instruction(prim, args, &stack, &mut self.measures);
        self.charge(charge);
        let bad_stack = |stack: &[Type]| TcError::bad_stack(span, prim.name(), stack);
        let bad_args = || TcError::bad_arguments(span, prim.name());
        let arity = |count: usize| TcError::check_arity(span, prim, args, count);
        match prim {
            Prim::I_IF | Prim::I_IF_NONE | Prim::I_IF_LEFT | Prim::I_IF_CONS => {
                crate::types::check_annotations(annots_of(node))
                    .map_err(|e| TcError::new(span, TcErrorKind::Type(e)))?;
                arity(2)?;
                let Some(top) = stack.pop() else {
                    return Err(bad_stack(&stack));
                };
                let (instr, first_stack, second_stack) = match (prim, &top) {
                    (Prim::I_IF, Type::Bool) => (Instr::If(0), fork(&stack), stack),
                    (Prim::I_IF_NONE, Type::Option(inner)) => {
                        let mut some = fork(&stack);
                        some.push((**inner).clone());
                        (Instr::IfNone(0), stack, some)
                    }
                    (Prim::I_IF_LEFT, Type::Or(left, right)) => {
                        let mut l = fork(&stack);
                        l.push((**left).clone());
                        let mut r = stack;
                        r.push((**right).clone());
                        (Instr::IfLeft(0), l, r)
                    }
                    (Prim::I_IF_CONS, Type::List(inner)) => {
                        let mut cons = fork(&stack);
                        cons.push(top.clone());
                        cons.push((**inner).clone());
                        (Instr::IfCons(0), cons, stack)
                    }
                    _ => {
                        stack.push(top);
                        return Err(bad_stack(&stack));
                    }
                };
                let branch = b.emit(instr, loc);
                Ok(Step::Enter {
                    body: &args[0],
                    stack: first_stack,
                    after: After::IfFirst {
                        span,
                        loc,
                        branch,
                        second: &args[1],
                        second_stack,
                    },
                })
            }
            Prim::I_LOOP | Prim::I_LOOP_LEFT => {
                arity(1)?;
                let Some(top) = stack.last().cloned() else {
                    return Err(bad_stack(&stack));
                };
                let expected = stack.clone();
                let mut body_stack = fork(&stack);
                body_stack.pop();
                let mut result = fork(&body_stack);
                match (prim, &top) {
                    (Prim::I_LOOP, Type::Bool) => {}
                    (Prim::I_LOOP_LEFT, Type::Or(left, right)) => {
                        body_stack.push((**left).clone());
                        result.push((**right).clone());
                    }
                    _ => return Err(bad_stack(&stack)),
                }
                b.emit(Instr::LoopEnter, loc);
                let head = b.emit(
                    if prim == Prim::I_LOOP {
                        Instr::LoopHead(0)
                    } else {
                        Instr::LoopLeftHead(0)
                    },
                    loc,
                );
                Ok(Step::Enter {
                    body: &args[0],
                    stack: body_stack,
                    after: After::Loop {
                        span,
                        loc,
                        head,
                        expected,
                        result,
                    },
                })
            }
            Prim::I_DIP => {
                let (n, code) = match (args.len(), args.first().map(|a| &a.kind)) {
                    (1, _) => (1, &args[0]),
                    (2, Some(NodeKind::Int(n))) => (
                        n.to_usize()
                            .filter(|n| *n <= MAX_UINT10)
                            .ok_or_else(bad_args)?,
                        &args[1],
                    ),
                    _ => return Err(bad_args()),
                };
                if stack.len() < n {
                    return Err(bad_stack(&stack));
                }
                let saved = stack.split_off(stack.len() - n);
                if n > 0 {
                    b.emit(Instr::DipStart(n), loc);
                }
                Ok(Step::Enter {
                    body: code,
                    stack,
                    after: After::Dip { loc, n, saved },
                })
            }
            Prim::I_ITER => {
                arity(1)?;
                let (kind, element) = match stack.last() {
                    Some(Type::List(t)) => (IterKind::List, (**t).clone()),
                    Some(Type::Set(t)) => (IterKind::Set, (**t).clone()),
                    Some(Type::Map(k, v)) => {
                        (IterKind::Map, Type::pair((**k).clone(), (**v).clone()))
                    }
                    _ => return Err(bad_stack(&stack)),
                };
                stack.pop();
                b.emit(Instr::IterStart(kind), loc);
                let head = b.emit(Instr::IterNext(0), loc);
                let mut body_stack = fork(&stack);
                body_stack.push(element);
                Ok(Step::Enter {
                    body: &args[0],
                    stack: body_stack,
                    after: After::Iter {
                        span,
                        loc,
                        head,
                        expected: stack,
                    },
                })
            }
            Prim::I_MAP => {
                arity(1)?;
                let (kind, element, key) = match stack.last() {
                    Some(Type::List(t)) => (IterKind::List, (**t).clone(), MapResult::List),
                    Some(Type::Option(t)) => (IterKind::Set, (**t).clone(), MapResult::Option),
                    Some(Type::Map(k, v)) => (
                        IterKind::Map,
                        Type::pair((**k).clone(), (**v).clone()),
                        MapResult::Map((**k).clone()),
                    ),
                    _ => return Err(bad_stack(&stack)),
                };
                stack.pop();
                b.emit(Instr::MapStart(kind), loc);
                let head = b.emit(Instr::MapNext(0), loc);
                let mut body_stack = fork(&stack);
                body_stack.push(element);
                Ok(Step::Enter {
                    body: &args[0],
                    stack: body_stack,
                    after: After::Map {
                        span,
                        loc,
                        head,
                        rest: stack,
                        result: key,
                    },
                })
            }
            Prim::I_LAMBDA | Prim::I_LAMBDA_REC => {
                arity(3)?;
                let arg = self.parse_type(&args[0])?;
                let ret = self.parse_type(&args[1])?;
                let recursive = prim == Prim::I_LAMBDA_REC;
                let mut body_stack = vec![arg.clone()];
                if recursive {
                    body_stack.insert(0, Type::lambda(arg.clone(), ret.clone()));
                }
                self.charge(charges::lambda_descriptor(&body_stack, &ret));
                // Looked up before the body's instructions, in prefix order (`location_of`).
                let code_loc = self.location_of(&args[2]);
                let saved_allow_self = self.allow_self;
                self.allow_self = false;
                Ok(Step::Enter {
                    body: &args[2],
                    stack: body_stack,
                    after: After::Lambda {
                        span,
                        loc,
                        arg,
                        ret,
                        recursive,
                        code: &args[2],
                        code_loc,
                        outer: stack,
                        saved_allow_self,
                    },
                })
            }
            _ => Ok(Step::Done(self.instr(b, node, loc, stack)?)),
        }
    }

    /// Charges the end of a body: its `IHalt` when it does not always fail, and the
    /// `stack_eq` against `expected` (loops, iterations) when the stacks can be unified.
    fn charge_body_end(&mut self, out: &StackOut, expected: Option<&[Type]>) {
        if let Some(out) = out {
            self.charge(charges::BLOCK_END);
            if let Some(expected) = expected.filter(|e| e.len() == out.len()) {
                let cost = charges::stack_eq(out, expected, &mut self.measures);
                self.charge_gas(cost);
            }
        }
    }

    /// Closes the body of a `LOOP`, `LOOP_LEFT` or `ITER`: charges its end, checks that it
    /// leaves `expected` (unless it always fails), emits the jump `back` to the loop's `head`
    /// and makes the head's exit land after it.
    #[allow(clippy::too_many_arguments)]
    fn close_loop(
        &mut self,
        b: &mut Builder,
        out: &StackOut,
        expected: &[Type],
        span: Span,
        back: Instr,
        loc: u32,
        head: usize,
    ) -> Result<(), TcError> {
        self.charge_body_end(out, Some(expected));
        if out.as_ref().is_some_and(|out| out != expected) {
            return Err(TcError::new(span, TcErrorKind::BadLoopBody));
        }
        b.emit(back, loc);
        let here = b.here();
        b.patch(head, here);
        Ok(())
    }

    /// Continues a structured instruction once its body's result `out` is known.
    fn after<'n>(
        &mut self,
        builders: &mut Vec<Builder>,
        after: After<'n>,
        out: StackOut,
    ) -> Result<Step<'n>, TcError> {
        if let After::Lambda {
            span,
            loc,
            arg,
            ret,
            recursive,
            code,
            code_loc,
            outer,
            saved_allow_self,
        } = after
        {
            self.allow_self = saved_allow_self;
            let body = builders
                .pop()
                .ok_or_else(|| TcError::new(span, TcErrorKind::BadScript("builder".into())))?;
            self.charge_body_end(&out, None);
            match &out {
                None => {}
                Some(out) if out.len() == 1 && out[0] == ret => {
                    self.charge_gas(charges::ty_eq(&out[0], &ret));
                }
                Some(out) => {
                    return Err(TcError::new(
                        span,
                        TcErrorKind::BadReturn {
                            expected: ret.to_string(),
                            found: stack_to_string(out),
                        },
                    ));
                }
            }
            let mut body_code = body.code;
            body_code.location = code_loc;
            let lambda = crate::value::Lambda {
                node: code.clone(),
                code: Rc::new(body_code),
                recursive,
                arg: arg.clone(),
                ret: ret.clone(),
                applied: Vec::new(),
            };
            let b = builders
                .last_mut()
                .ok_or_else(|| TcError::new(span, TcErrorKind::BadScript("builder".into())))?;
            b.emit(Instr::Lambda(Rc::new(lambda)), loc);
            let mut outer = outer;
            outer.push(Type::lambda(arg, ret));
            return Ok(Step::Done(Some(outer)));
        }
        let b = builders
            .last_mut()
            .ok_or_else(|| TcError::new(Span::NONE, TcErrorKind::BadScript("builder".into())))?;
        match after {
            After::Inline => Ok(Step::Done(out)),
            After::IfFirst {
                span,
                loc,
                branch,
                second,
                second_stack,
            } => {
                self.charge_body_end(&out, None);
                let jump = b.emit(Instr::BranchEnd(0), loc);
                let here = b.here();
                b.patch(branch, here);
                Ok(Step::Enter {
                    body: second,
                    stack: second_stack,
                    after: After::IfSecond {
                        span,
                        loc,
                        jump,
                        first: out,
                    },
                })
            }
            After::IfSecond {
                span,
                loc,
                jump,
                first,
            } => {
                self.charge_body_end(&out, None);
                if let (Some(first), Some(second)) = (&first, &out) {
                    let cost = charges::stack_eq(first, second, &mut self.measures);
                    self.charge_gas(cost);
                }
                let else_end = b.emit(Instr::BranchEnd(0), loc);
                let end = b.here();
                b.patch(else_end, end);
                b.patch(jump, end);
                Ok(Step::Done(merge(first, out, span)?))
            }
            After::Loop {
                span,
                loc,
                head,
                expected,
                result,
            } => {
                self.close_loop(b, &out, &expected, span, Instr::LoopBack(head), loc, head)?;
                Ok(Step::Done(Some(result)))
            }
            After::Dip { loc, n, saved } => {
                self.charge_body_end(&out, None);
                // Octez accepts FAILWITH only in tail position: a DIP body that always fails
                // is ill-typed.
                let Some(mut out) = out else {
                    return Err(TcError::new(Span::NONE, TcErrorKind::FailNotInTail));
                };
                if n > 0 {
                    b.emit(Instr::DipEnd(n), loc);
                }
                out.extend(saved);
                Ok(Step::Done(Some(out)))
            }
            After::Iter {
                span,
                loc,
                head,
                expected,
            } => {
                self.close_loop(b, &out, &expected, span, Instr::IterBack(head), loc, head)?;
                Ok(Step::Done(Some(expected)))
            }
            After::Map {
                span,
                loc,
                head,
                rest,
                result,
            } => {
                self.charge_body_end(&out, None);
                let Some(mut out) = out else {
                    return Err(TcError::new(span, TcErrorKind::BadLoopBody));
                };
                let Some(element) = out.pop() else {
                    return Err(TcError::new(span, TcErrorKind::BadLoopBody));
                };
                if out != rest {
                    return Err(TcError::new(span, TcErrorKind::BadLoopBody));
                }
                let cost = charges::stack_eq(&out, &rest, &mut self.measures);
                self.charge_gas(cost);
                b.emit(Instr::MapCollect, loc);
                b.emit(Instr::Jump(head), loc);
                let here = b.here();
                b.patch(head, here);
                let mut stack = rest;
                stack.push(match result {
                    MapResult::List => Type::list(element),
                    MapResult::Option => Type::option(element),
                    MapResult::Map(key) => Type::Map(Rc::new(key), Rc::new(element)),
                });
                Ok(Step::Done(Some(stack)))
            }
            After::Lambda { .. } => Err(TcError::new(
                Span::NONE,
                TcErrorKind::BadScript("lambda".into()),
            )),
        }
    }

    #[allow(clippy::too_many_lines)]
    fn instr(
        &mut self,
        b: &mut Builder,
        node: &Node,
        loc: u32,
        mut stack: Vec<Type>,
    ) -> Result<StackOut, TcError> {
        let span = node.span;
        let (prim, args, annots) = match &node.kind {
            NodeKind::Seq(_) => {
                // Sequences are handled by `step` as blocks.
                return Err(TcError::new(
                    span,
                    TcErrorKind::BadScript("nested sequence".into()),
                ));
            }
            NodeKind::Prim { name, args, annots } => match name.known() {
                // The newest instructions (tags 158-160) are typed by `instr_extension`, which also
                // accepts them by name where an older primitive table lacks them.
                Some(
                    Prim::I_IS_IMPLICIT_ACCOUNT | Prim::I_INDEX_ADDRESS | Prim::I_GET_ADDRESS_INDEX,
                )
                | None => return self.instr_extension(b, node, loc, name.as_str(), args, stack),
                Some(prim) => (prim, args.as_slice(), annots),
            },
            _ => {
                return Err(TcError::new(
                    span,
                    TcErrorKind::UnknownInstruction(crate::print::node_to_string(node)),
                ))
            }
        };
        if !annots.is_empty() {
            crate::types::check_annotations(annots)
                .map_err(|e| TcError::new(span, TcErrorKind::Type(e)))?;
        }
        let bad_stack = |stack: &[Type]| TcError::bad_stack(span, prim.name(), stack);
        let bad_args = || TcError::bad_arguments(span, prim.name());
        let arity = |count: usize| TcError::check_arity(span, prim, args, count);
        let len = stack.len();
        // Helpers to look at the top of the stack (index 0 = top).
        macro_rules! top {
            ($i:expr) => {
                if $i < len {
                    &stack[len - 1 - $i]
                } else {
                    return Err(bad_stack(&stack));
                }
            };
        }
        macro_rules! need {
            ($n:expr) => {
                if len < $n {
                    return Err(bad_stack(&stack));
                }
            };
        }
        macro_rules! replace {
            ($n:expr, $instr:expr, $out:expr) => {{
                need!($n);
                let instr: Instr = $instr;
                let out: Type = $out;
                stack.truncate(len - $n);
                stack.push(out);
                b.emit(instr, loc);
                return Ok(Some(stack));
            }};
        }
        let int_arg_up_to = |index: usize, max: usize| -> Result<usize, TcError> {
            match args.get(index).map(|a| &a.kind) {
                Some(NodeKind::Int(n)) => n.to_usize().filter(|n| *n <= max).ok_or_else(bad_args),
                _ => Err(bad_args()),
            }
        };
        let int_arg = |index: usize| int_arg_up_to(index, MAX_UINT10);
        if operators::is_operator(prim) {
            arity(0)?;
            let Some((instr, consumed, out)) = operators::type_operator(prim, &stack, self.legacy)
            else {
                return Err(bad_stack(&stack));
            };
            replace!(consumed, instr, out)
        }
        match prim {
            Prim::I_DROP => {
                let n = if args.is_empty() { 1 } else { int_arg(0)? };
                arity(if args.is_empty() { 0 } else { 1 })?;
                need!(n);
                stack.truncate(len - n);
                b.emit(
                    if args.is_empty() {
                        Instr::Drop
                    } else {
                        Instr::DropN(n)
                    },
                    loc,
                );
                Ok(Some(stack))
            }
            Prim::I_DUP => {
                let n = if args.is_empty() { 1 } else { int_arg(0)? };
                arity(if args.is_empty() { 0 } else { 1 })?;
                if n == 0 {
                    return Err(bad_args());
                }
                let t = top!(n - 1).clone();
                if !t.is_duplicable() {
                    return Err(TcError::forbidden_type(span, "duplicable", &t));
                }
                stack.push(t);
                // `DUP 1` is Octez's `IDup_n`, with its own cost; only a bare `DUP` is `IDup`.
                b.emit(
                    if args.is_empty() {
                        Instr::Dup
                    } else {
                        Instr::DupN(n)
                    },
                    loc,
                );
                Ok(Some(stack))
            }
            Prim::I_SWAP => {
                arity(0)?;
                need!(2);
                stack.swap(len - 1, len - 2);
                b.emit(Instr::Swap, loc);
                Ok(Some(stack))
            }
            Prim::I_DIG => {
                arity(1)?;
                let n = int_arg(0)?;
                need!(n + 1);
                let t = stack.remove(len - 1 - n);
                stack.push(t);
                b.emit(Instr::Dig(n), loc);
                Ok(Some(stack))
            }
            Prim::I_DUG => {
                arity(1)?;
                let n = int_arg(0)?;
                need!(n + 1);
                let t = stack.pop().ok_or_else(|| bad_stack(&[]))?;
                stack.insert(len - 1 - n, t);
                b.emit(Instr::Dug(n), loc);
                Ok(Some(stack))
            }
            Prim::I_PUSH => {
                arity(2)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                if !t.is_pushable() {
                    return Err(TcError::forbidden_type(span, "pushable", &t));
                }
                let value = self.parse_data(&args[1], &t)?;
                self.charge(stored);
                self.charge(charges::stored_value(&value));
                stack.push(t);
                b.emit(Instr::Push(value), loc);
                Ok(Some(stack))
            }
            Prim::I_UNIT => {
                arity(0)?;
                stack.push(Type::Unit);
                b.emit(Instr::Unit, loc);
                Ok(Some(stack))
            }
            Prim::I_NEVER => {
                arity(0)?;
                if top!(0) != &Type::Never {
                    return Err(bad_stack(&stack));
                }
                b.emit(Instr::Never, loc);
                Ok(None)
            }
            Prim::I_FAILWITH => {
                arity(0)?;
                let t = top!(0);
                if !t.is_packable() {
                    return Err(TcError::forbidden_type(span, "packable", t));
                }
                b.emit(Instr::Failwith, loc);
                Ok(None)
            }
            Prim::I_EXEC => {
                arity(0)?;
                let Type::Lambda(arg, ret) = top!(1).clone() else {
                    return Err(bad_stack(&stack));
                };
                if top!(0) != arg.as_ref() {
                    return Err(bad_stack(&stack));
                }
                replace!(2, Instr::Exec, (*ret).clone())
            }
            Prim::I_APPLY => {
                arity(0)?;
                let Type::Lambda(arg, ret) = top!(1).clone() else {
                    return Err(bad_stack(&stack));
                };
                let Type::Pair(captured, rest) = arg.as_ref() else {
                    return Err(bad_stack(&stack));
                };
                let captured_ty = top!(0);
                if captured_ty != captured.as_ref()
                    || !captured_ty.is_packable()
                    || captured_ty.has_big_map()
                {
                    return Err(bad_stack(&stack));
                }
                let out = Type::Lambda(rest.clone(), ret.clone());
                let captured = captured.as_ref().clone();
                need!(2);
                stack.truncate(len - 2);
                stack.push(out);
                b.emit(Instr::Apply, loc);
                let _ = captured;
                Ok(Some(stack))
            }
            Prim::I_CAST => {
                arity(1)?;
                let t = self.parse_type(&args[0])?;
                if top!(0) != &t {
                    return Err(bad_stack(&stack));
                }
                b.emit(Instr::Nop, loc);
                Ok(Some(stack))
            }
            Prim::I_RENAME => {
                arity(0)?;
                need!(1);
                b.emit(Instr::Nop, loc);
                Ok(Some(stack))
            }
            // Comparison (arithmetic and bitwise operators are typed by `operators`).
            Prim::I_COMPARE => {
                arity(0)?;
                let (a, c) = (top!(0), top!(1));
                if a != c || !a.is_comparable() {
                    return Err(bad_stack(&stack));
                }
                replace!(2, Instr::Compare, Type::Int)
            }
            Prim::I_EQ | Prim::I_NEQ | Prim::I_LT | Prim::I_GT | Prim::I_LE | Prim::I_GE => {
                arity(0)?;
                if top!(0) != &Type::Int {
                    return Err(bad_stack(&stack));
                }
                let instr = match prim {
                    Prim::I_EQ => Instr::Eq,
                    Prim::I_NEQ => Instr::Neq,
                    Prim::I_LT => Instr::Lt,
                    Prim::I_GT => Instr::Gt,
                    Prim::I_LE => Instr::Le,
                    _ => Instr::Ge,
                };
                replace!(1, instr, Type::Bool)
            }
            Prim::I_CONCAT => {
                arity(0)?;
                match top!(0) {
                    Type::String if top!(1) == &Type::String => {
                        replace!(2, Instr::ConcatString, Type::String)
                    }
                    Type::Bytes if top!(1) == &Type::Bytes => {
                        replace!(2, Instr::ConcatBytes, Type::Bytes)
                    }
                    Type::List(t) if **t == Type::String => {
                        replace!(1, Instr::ConcatListString, Type::String)
                    }
                    Type::List(t) if **t == Type::Bytes => {
                        replace!(1, Instr::ConcatListBytes, Type::Bytes)
                    }
                    _ => Err(bad_stack(&stack)),
                }
            }
            Prim::I_SIZE => {
                arity(0)?;
                let instr = match top!(0) {
                    Type::String => Instr::SizeString,
                    Type::Bytes => Instr::SizeBytes,
                    Type::List(_) => Instr::SizeList,
                    Type::Set(_) => Instr::SizeSet,
                    Type::Map(..) => Instr::SizeMap,
                    _ => return Err(bad_stack(&stack)),
                };
                replace!(1, instr, Type::Nat)
            }
            Prim::I_SLICE => {
                arity(0)?;
                if top!(0) != &Type::Nat || top!(1) != &Type::Nat {
                    return Err(bad_stack(&stack));
                }
                match top!(2) {
                    Type::String => replace!(3, Instr::SliceString, Type::option(Type::String)),
                    Type::Bytes => replace!(3, Instr::SliceBytes, Type::option(Type::Bytes)),
                    _ => Err(bad_stack(&stack)),
                }
            }
            Prim::I_PACK => {
                arity(0)?;
                let t = top!(0).clone();
                if !t.is_packable() {
                    return Err(TcError::forbidden_type(span, "packable", &t));
                }
                replace!(1, Instr::Pack(t), Type::Bytes)
            }
            Prim::I_UNPACK => {
                arity(1)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                if !t.is_packable() {
                    return Err(TcError::forbidden_type(span, "packable", &t));
                }
                if top!(0) != &Type::Bytes {
                    return Err(bad_stack(&stack));
                }
                self.charge(stored);
                replace!(1, Instr::Unpack(t.clone()), Type::option(t))
            }
            // Pairs, unions, options.
            Prim::I_PAIR => {
                if args.is_empty() {
                    let out = Type::pair(top!(0).clone(), top!(1).clone());
                    replace!(2, Instr::Pair, out)
                } else {
                    arity(1)?;
                    let n = int_arg(0)?;
                    if n < 2 {
                        return Err(bad_args());
                    }
                    need!(n);
                    let mut out = top!(n - 1).clone();
                    for i in (0..n - 1).rev() {
                        out = Type::pair(top!(i).clone(), out);
                    }
                    replace!(n, Instr::PairN(n), out)
                }
            }
            Prim::I_UNPAIR => {
                let n = if args.is_empty() { 2 } else { int_arg(0)? };
                arity(if args.is_empty() { 0 } else { 1 })?;
                if n < 2 {
                    return Err(bad_args());
                }
                let mut parts = Vec::new();
                let mut current = top!(0).clone();
                for _ in 0..n - 1 {
                    let Type::Pair(left, right) = current else {
                        return Err(bad_stack(&stack));
                    };
                    parts.push((*left).clone());
                    current = (*right).clone();
                }
                parts.push(current);
                stack.pop();
                stack.extend(parts.into_iter().rev());
                b.emit(
                    if args.is_empty() {
                        Instr::Unpair
                    } else {
                        Instr::UnpairN(n)
                    },
                    loc,
                );
                Ok(Some(stack))
            }
            Prim::I_CAR | Prim::I_CDR => {
                arity(0)?;
                let Type::Pair(left, right) = top!(0) else {
                    return Err(bad_stack(&stack));
                };
                let (instr, out) = if prim == Prim::I_CAR {
                    (Instr::Car, (**left).clone())
                } else {
                    (Instr::Cdr, (**right).clone())
                };
                replace!(1, instr, out)
            }
            Prim::I_GET if args.len() == 1 => {
                let n = int_arg_up_to(0, MAX_UINT11)?;
                let mut current = top!(0).clone();
                let mut i = n;
                while i >= 2 {
                    let Type::Pair(_, right) = current else {
                        return Err(bad_stack(&stack));
                    };
                    current = (*right).clone();
                    i -= 2;
                }
                if i == 1 {
                    let Type::Pair(left, _) = current else {
                        return Err(bad_stack(&stack));
                    };
                    current = (*left).clone();
                }
                replace!(1, Instr::GetN(n), current)
            }
            Prim::I_UPDATE if args.len() == 1 => {
                let n = int_arg_up_to(0, MAX_UINT11)?;
                let value = top!(0).clone();
                let target = top!(1).clone();
                let out = update_type(&target, n, value).ok_or_else(|| bad_stack(&stack))?;
                replace!(2, Instr::UpdateN(n), out)
            }
            Prim::I_LEFT | Prim::I_RIGHT => {
                arity(1)?;
                let (other, stored) = self.parse_stored_type(&args[0])?;
                self.charge(stored);
                let t = top!(0).clone();
                if prim == Prim::I_LEFT {
                    replace!(1, Instr::Left, Type::or(t, other))
                } else {
                    replace!(1, Instr::Right, Type::or(other, t))
                }
            }
            Prim::I_SOME => {
                arity(0)?;
                let t = top!(0).clone();
                replace!(1, Instr::Some, Type::option(t))
            }
            Prim::I_NONE => {
                arity(1)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                self.charge(stored);
                stack.push(Type::option(t));
                b.emit(Instr::None, loc);
                Ok(Some(stack))
            }
            // Collections.
            Prim::I_NIL => {
                arity(1)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                self.charge(stored);
                stack.push(Type::list(t));
                b.emit(Instr::Nil, loc);
                Ok(Some(stack))
            }
            Prim::I_CONS => {
                arity(0)?;
                let Type::List(inner) = top!(1) else {
                    return Err(bad_stack(&stack));
                };
                if inner.as_ref() != top!(0) {
                    return Err(bad_stack(&stack));
                }
                let out = top!(1).clone();
                replace!(2, Instr::Cons, out)
            }
            Prim::I_EMPTY_SET => {
                arity(1)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                if !t.is_comparable() {
                    return Err(TcError::forbidden_type(span, "comparable", &t));
                }
                self.charge(stored);
                stack.push(Type::Set(Rc::new(t)));
                b.emit(Instr::EmptySet, loc);
                Ok(Some(stack))
            }
            Prim::I_EMPTY_MAP | Prim::I_EMPTY_BIG_MAP => {
                arity(2)?;
                let (k, stored_key) = self.parse_stored_type(&args[0])?;
                let (v, stored_value) = self.parse_stored_type(&args[1])?;
                if !k.is_comparable() {
                    return Err(TcError::forbidden_type(span, "comparable", &k));
                }
                self.charge(stored_key);
                if prim == Prim::I_EMPTY_MAP {
                    stack.push(Type::Map(Rc::new(k), Rc::new(v)));
                    b.emit(Instr::EmptyMap, loc);
                } else {
                    if !v.is_big_map_value() {
                        return Err(TcError::forbidden_type(span, "big_map value", &v));
                    }
                    self.charge(stored_value);
                    stack.push(Type::BigMap(Rc::new(k.clone()), Rc::new(v.clone())));
                    b.emit(Instr::EmptyBigMap(k, v), loc);
                }
                Ok(Some(stack))
            }
            Prim::I_MEM => {
                arity(0)?;
                let key = top!(0);
                let instr = match top!(1) {
                    Type::Set(k) if k.as_ref() == key => Instr::MemSet,
                    Type::Map(k, _) if k.as_ref() == key => Instr::MemMap,
                    Type::BigMap(k, _) if k.as_ref() == key => Instr::MemBigMap,
                    _ => return Err(bad_stack(&stack)),
                };
                replace!(2, instr, Type::Bool)
            }
            Prim::I_GET => {
                arity(0)?;
                let key = top!(0);
                let (instr, v) = match top!(1) {
                    Type::Map(k, v) if k.as_ref() == key => (Instr::GetMap, v.clone()),
                    Type::BigMap(k, v) if k.as_ref() == key => (Instr::GetBigMap, v.clone()),
                    _ => return Err(bad_stack(&stack)),
                };
                replace!(2, instr, Type::Option(v))
            }
            Prim::I_UPDATE => {
                arity(0)?;
                let key = top!(0);
                let value = top!(1);
                let collection = top!(2).clone();
                let instr = match &collection {
                    Type::Set(k) if k.as_ref() == key && value == &Type::Bool => Instr::UpdateSet,
                    Type::Map(k, v)
                        if k.as_ref() == key && value == &Type::option((**v).clone()) =>
                    {
                        Instr::UpdateMap
                    }
                    Type::BigMap(k, v)
                        if k.as_ref() == key && value == &Type::option((**v).clone()) =>
                    {
                        Instr::UpdateBigMap
                    }
                    _ => return Err(bad_stack(&stack)),
                };
                replace!(3, instr, collection)
            }
            Prim::I_GET_AND_UPDATE => {
                arity(0)?;
                let key = top!(0);
                let value = top!(1).clone();
                let collection = top!(2).clone();
                let instr = match &collection {
                    Type::Map(k, v)
                        if k.as_ref() == key && value == Type::option((**v).clone()) =>
                    {
                        Instr::GetAndUpdateMap
                    }
                    Type::BigMap(k, v)
                        if k.as_ref() == key && value == Type::option((**v).clone()) =>
                    {
                        Instr::GetAndUpdateBigMap
                    }
                    _ => return Err(bad_stack(&stack)),
                };
                stack.truncate(len - 3);
                stack.push(collection);
                stack.push(value);
                b.emit(instr, loc);
                Ok(Some(stack))
            }
            // Cryptography.
            Prim::I_HASH_KEY => {
                arity(0)?;
                match top!(0) {
                    Type::Key => replace!(1, Instr::HashKey, Type::KeyHash),
                    _ => Err(bad_stack(&stack)),
                }
            }
            Prim::I_BLAKE2B | Prim::I_SHA256 | Prim::I_SHA512 | Prim::I_KECCAK | Prim::I_SHA3 => {
                arity(0)?;
                if top!(0) != &Type::Bytes {
                    return Err(bad_stack(&stack));
                }
                let instr = match prim {
                    Prim::I_BLAKE2B => Instr::Blake2b,
                    Prim::I_SHA256 => Instr::Sha256,
                    Prim::I_SHA512 => Instr::Sha512,
                    Prim::I_KECCAK => Instr::Keccak,
                    _ => Instr::Sha3,
                };
                replace!(1, instr, Type::Bytes)
            }
            Prim::I_CHECK_SIGNATURE => {
                arity(0)?;
                if top!(0) != &Type::Key || top!(1) != &Type::Signature || top!(2) != &Type::Bytes {
                    return Err(bad_stack(&stack));
                }
                replace!(3, Instr::CheckSignature, Type::Bool)
            }
            Prim::I_PAIRING_CHECK => {
                arity(0)?;
                if top!(0) != &Type::list(Type::pair(Type::Bls12381G1, Type::Bls12381G2)) {
                    return Err(bad_stack(&stack));
                }
                replace!(1, Instr::PairingCheck, Type::Bool)
            }
            // Blockchain.
            Prim::I_AMOUNT | Prim::I_BALANCE => self.push_const(
                b,
                stack,
                span,
                loc,
                args,
                if prim == Prim::I_AMOUNT {
                    Instr::Amount
                } else {
                    Instr::Balance
                },
                Type::Mutez,
            ),
            Prim::I_NOW => self.push_const(b, stack, span, loc, args, Instr::Now, Type::Timestamp),
            Prim::I_LEVEL => self.push_const(b, stack, span, loc, args, Instr::Level, Type::Nat),
            Prim::I_SENDER => {
                self.push_const(b, stack, span, loc, args, Instr::Sender, Type::Address)
            }
            Prim::I_SOURCE => {
                self.push_const(b, stack, span, loc, args, Instr::Source, Type::Address)
            }
            Prim::I_SELF_ADDRESS => {
                self.push_const(b, stack, span, loc, args, Instr::SelfAddress, Type::Address)
            }
            Prim::I_CHAIN_ID => {
                self.push_const(b, stack, span, loc, args, Instr::ChainId, Type::ChainId)
            }
            Prim::I_MIN_BLOCK_TIME => {
                self.push_const(b, stack, span, loc, args, Instr::MinBlockTime, Type::Nat)
            }
            Prim::I_TOTAL_VOTING_POWER => self.push_const(
                b,
                stack,
                span,
                loc,
                args,
                Instr::TotalVotingPower,
                Type::Nat,
            ),
            Prim::I_SELF => {
                arity(0)?;
                if !self.allow_self {
                    return Err(TcError::new(
                        span,
                        TcErrorKind::BadArguments("SELF in a lambda".into()),
                    ));
                }
                let entrypoint = field_annot(node).unwrap_or("default").to_string();
                let param = self
                    .self_param_override
                    .as_ref()
                    .unwrap_or(self.context.self_param);
                let search_steps = entrypoints::search_steps(param, &entrypoint);
                let t = entrypoints::find(param, &entrypoint).ok_or_else(|| {
                    TcError::new(span, TcErrorKind::BadEntrypoint(entrypoint.clone()))
                })?;
                self.charge_gas(search_steps * crate::gas::typecheck::COST_FIND_ENTRYPOINT_CYCLE);
                self.charge(charges::stored_type(&t));
                self.charge(charges::stored_entrypoint(&entrypoint));
                let stored = if entrypoint == "default" {
                    String::new()
                } else {
                    entrypoint
                };
                stack.push(Type::Contract(Rc::new(t.clone())));
                b.emit(Instr::Self_(Rc::from(stored.as_str()), t), loc);
                Ok(Some(stack))
            }
            Prim::I_VOTING_POWER => {
                arity(0)?;
                if top!(0) != &Type::KeyHash {
                    return Err(bad_stack(&stack));
                }
                replace!(1, Instr::VotingPower, Type::Nat)
            }
            Prim::I_ADDRESS => {
                arity(0)?;
                let Type::Contract(_) = top!(0) else {
                    return Err(bad_stack(&stack));
                };
                replace!(1, Instr::Address, Type::Address)
            }
            Prim::I_CONTRACT => {
                arity(1)?;
                let (t, stored) = self.parse_stored_type(&args[0])?;
                if top!(0) != &Type::Address {
                    return Err(bad_stack(&stack));
                }
                if !t.is_passable() {
                    return Err(TcError::forbidden_type(span, "passable", &t));
                }
                let entrypoint = field_annot(node).unwrap_or("").to_string();
                if entrypoint == "default" || !crate::literals::valid_entrypoint(&entrypoint) {
                    return Err(TcError::new(span, TcErrorKind::BadEntrypoint(entrypoint)));
                }
                self.charge(stored);
                self.charge(charges::stored_entrypoint(&entrypoint));
                replace!(
                    1,
                    Instr::Contract(Rc::from(entrypoint.as_str()), t.clone()),
                    Type::option(Type::Contract(Rc::new(t)))
                )
            }
            Prim::I_IMPLICIT_ACCOUNT => {
                arity(0)?;
                if top!(0) != &Type::KeyHash {
                    return Err(bad_stack(&stack));
                }
                replace!(
                    1,
                    Instr::ImplicitAccount,
                    Type::Contract(Rc::new(Type::Unit))
                )
            }
            Prim::I_TRANSFER_TOKENS => {
                arity(0)?;
                let Type::Contract(param) = top!(2) else {
                    return Err(bad_stack(&stack));
                };
                if top!(0) != param.as_ref() || top!(1) != &Type::Mutez {
                    return Err(bad_stack(&stack));
                }
                replace!(3, Instr::TransferTokens, Type::Operation)
            }
            Prim::I_SET_DELEGATE => {
                arity(0)?;
                if top!(0) != &Type::option(Type::KeyHash) {
                    return Err(bad_stack(&stack));
                }
                replace!(1, Instr::SetDelegate, Type::Operation)
            }
            Prim::I_CREATE_CONTRACT => {
                arity(1)?;
                let script = &args[0];
                if self.nesting >= MAX_NESTED_TYPECHECKS {
                    return Err(TcError::new(span, TcErrorKind::TooDeep));
                }
                self.nesting += 1;
                let parsed = self.typecheck_script_at(script, Level::Nested);
                self.nesting -= 1;
                let parsed = parsed?;
                // Octez unifies the checked code's input and output with the script's types
                // and the storage type with the stack's, and keeps the storage type and the
                // code in the instruction.
                let input = Type::pair(parsed.param_type.clone(), parsed.storage_type.clone());
                let output = Type::pair(Type::list(Type::Operation), parsed.storage_type.clone());
                let (script_nodes, script_bytes) = ir_size::node_measure(script);
                self.charge(charges::Charge {
                    gas_milli: charges::ty_eq(&input, &input)
                        + charges::ty_eq(&output, &output)
                        + charges::ty_eq(&parsed.storage_type, top!(2)),
                    ir_nodes: charges::type_size(&parsed.storage_type) + script_nodes,
                    ir_bytes: ir_size::type_bytes(&parsed.storage_type) + script_bytes,
                });
                if top!(0) != &Type::option(Type::KeyHash)
                    || top!(1) != &Type::Mutez
                    || top!(2) != &parsed.storage_type
                {
                    return Err(bad_stack(&stack));
                }
                need!(3);
                stack.truncate(len - 3);
                stack.push(Type::Address);
                stack.push(Type::Operation);
                b.emit(
                    Instr::CreateContract(
                        Rc::new(parsed.as_lambda_holder(script)),
                        parsed.storage_type.clone(),
                    ),
                    loc,
                );
                Ok(Some(stack))
            }
            Prim::I_EMIT => {
                let tag = field_annot(node).unwrap_or("").to_string();
                self.charge(charges::stored_entrypoint(&tag));
                let (type_node, t) = match args.len() {
                    0 => (top!(0).to_node(), top!(0).clone()),
                    1 => (args[0].clone(), self.parse_type(&args[0])?),
                    _ => return Err(bad_args()),
                };
                if top!(0) != &t || !t.is_packable() {
                    return Err(bad_stack(&stack));
                }
                replace!(
                    1,
                    Instr::Emit(Rc::from(tag.as_str()), Rc::new(type_node), t),
                    Type::Operation
                )
            }
            Prim::I_VIEW => {
                arity(2)?;
                let NodeKind::String(name) = &args[0].kind else {
                    return Err(bad_args());
                };
                if name.len() > 31
                    || !name.bytes().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'%' | b'@')
                    })
                {
                    return Err(bad_args());
                }
                let (t, stored) = self.parse_stored_type(&args[1])?;
                if !view_type_allowed(&t) {
                    return Err(TcError::forbidden_type(span, "view result", &t));
                }
                if top!(1) != &Type::Address {
                    return Err(bad_stack(&stack));
                }
                self.charge(stored);
                replace!(
                    2,
                    Instr::View(Rc::from(name.as_str()), t.clone()),
                    Type::option(t)
                )
            }
            // Tickets.
            Prim::I_TICKET | Prim::I_TICKET_DEPRECATED => {
                arity(0)?;
                let t = top!(0).clone();
                if !t.is_comparable() || top!(1) != &Type::Nat {
                    return Err(bad_stack(&stack));
                }
                let ticket = Type::Ticket(Rc::new(t.clone()));
                if prim == Prim::I_TICKET {
                    replace!(2, Instr::Ticket(t), Type::option(ticket))
                } else {
                    replace!(2, Instr::TicketDeprecated(t), ticket)
                }
            }
            Prim::I_READ_TICKET => {
                arity(0)?;
                let Type::Ticket(t) = top!(0).clone() else {
                    return Err(bad_stack(&stack));
                };
                stack.push(Type::pair(
                    Type::Address,
                    Type::pair((*t).clone(), Type::Nat),
                ));
                b.emit(Instr::ReadTicket, loc);
                Ok(Some(stack))
            }
            Prim::I_SPLIT_TICKET => {
                arity(0)?;
                let ticket = top!(0).clone();
                let Type::Ticket(_) = &ticket else {
                    return Err(bad_stack(&stack));
                };
                if top!(1) != &Type::pair(Type::Nat, Type::Nat) {
                    return Err(bad_stack(&stack));
                }
                replace!(
                    2,
                    Instr::SplitTicket,
                    Type::option(Type::pair(ticket.clone(), ticket))
                )
            }
            Prim::I_JOIN_TICKETS => {
                arity(0)?;
                let Type::Pair(a, c) = top!(0).clone() else {
                    return Err(bad_stack(&stack));
                };
                if a != c || !matches!(*a, Type::Ticket(_)) {
                    return Err(bad_stack(&stack));
                }
                replace!(1, Instr::JoinTickets, Type::Option(a))
            }
            Prim::I_SAPLING_EMPTY_STATE | Prim::I_SAPLING_VERIFY_UPDATE | Prim::I_OPEN_CHEST => {
                Err(TcError::new(
                    span,
                    TcErrorKind::Unsupported(prim.name().to_string()),
                ))
            }
            _ => Err(TcError::new(
                span,
                TcErrorKind::UnknownInstruction(prim.name().to_string()),
            )),
        }
    }

    /// Instructions newer than the binary primitive table (`INDEX_ADDRESS`,
    /// `GET_ADDRESS_INDEX`, `IS_IMPLICIT_ACCOUNT`).
    fn instr_extension(
        &mut self,
        b: &mut Builder,
        node: &Node,
        loc: u32,
        name: &str,
        args: &[Node],
        mut stack: Vec<Type>,
    ) -> Result<StackOut, TcError> {
        let span = node.span;
        let (instr, out) = match name {
            "INDEX_ADDRESS" => (Instr::IndexAddress, Type::Nat),
            "GET_ADDRESS_INDEX" => (Instr::GetAddressIndex, Type::option(Type::Nat)),
            "IS_IMPLICIT_ACCOUNT" => (Instr::IsImplicitAccount, Type::option(Type::KeyHash)),
            _ => {
                return Err(TcError::new(
                    span,
                    TcErrorKind::UnknownInstruction(name.to_string()),
                ))
            }
        };
        if !args.is_empty() || stack.last() != Some(&Type::Address) {
            return Err(TcError::bad_stack(span, name, &stack));
        }
        stack.pop();
        stack.push(out);
        b.emit(instr, loc);
        Ok(Some(stack))
    }

    #[allow(clippy::too_many_arguments)]
    fn push_const(
        &mut self,
        b: &mut Builder,
        mut stack: Vec<Type>,
        span: Span,
        loc: u32,
        args: &[Node],
        instr: Instr,
        t: Type,
    ) -> Result<StackOut, TcError> {
        if !args.is_empty() {
            return Err(TcError::new(
                span,
                TcErrorKind::BadArguments("no arguments expected".into()),
            ));
        }
        stack.push(t);
        b.emit(instr, loc);
        Ok(Some(stack))
    }

    /// Typechecks a script `{ parameter ..; storage ..; code .. }` (views are checked too),
    /// charging what Octez's `parse_code` charges before a run.
    pub fn typecheck_script(&mut self, node: &Node) -> Result<Script, TcError> {
        self.typecheck_script_at(node, Level::Toplevel)
    }

    fn typecheck_script_at(&mut self, node: &Node, level: Level) -> Result<Script, TcError> {
        let expanded_holder;
        let mut nodes = None;
        let node = if self.record_locations {
            // The caller expanded the whole script and wants its canonical locations.
            self.record_locations = false;
            nodes = Some(self.set_locations(node));
            node
        } else {
            expanded_holder = crate::macros::expand_all(node)?;
            &expanded_holder
        };
        if level == Level::Toplevel {
            // `Global_constants_storage.expand` walks the whole script first.
            let nodes = nodes.unwrap_or_else(|| charges::micheline_nodes(node));
            self.charge_gas(crate::gas::typecheck::cost_expand_no_constants(nodes));
        }
        let ir_nodes_before = self.ir_nodes;
        let ir_bytes_before = self.ir_bytes;
        let NodeKind::Seq(items) = &node.kind else {
            return Err(TcError::new(
                node.span,
                TcErrorKind::BadScript("expected a sequence".into()),
            ));
        };
        let mut param = None;
        let mut storage = None;
        let mut code = None;
        let mut views = Vec::new();
        for item in items {
            let NodeKind::Prim { name, args, .. } = &item.kind else {
                return Err(TcError::new(
                    item.span,
                    TcErrorKind::BadScript("expected a toplevel primitive".into()),
                ));
            };
            let slot = match name.known() {
                Some(Prim::K_parameter) => &mut param,
                Some(Prim::K_storage) => &mut storage,
                Some(Prim::K_code) => &mut code,
                Some(Prim::K_view) => {
                    views.push(item);
                    continue;
                }
                _ => {
                    return Err(TcError::new(
                        item.span,
                        TcErrorKind::BadScript(name.as_str().to_string()),
                    ))
                }
            };
            if slot.is_some() || args.len() != 1 {
                return Err(TcError::new(
                    item.span,
                    TcErrorKind::BadScript("duplicate or malformed field".into()),
                ));
            }
            *slot = Some((item, &args[0]));
        }
        let (
            Some((param_field, param_node)),
            Some((storage_field, storage_node)),
            Some((code_field, code_node)),
        ) = (param, storage, code)
        else {
            return Err(TcError::new(
                node.span,
                TcErrorKind::BadScript("missing field".into()),
            ));
        };
        // Octez's `parse_toplevel` refuses annotations on the three fields themselves (e.g.
        // `parameter %root unit`: a root name goes on the type), in this order.
        for field in [param_field, code_field, storage_field] {
            if let NodeKind::Prim { annots, .. } = &field.kind {
                if let Some(annot) = annots.first() {
                    return Err(TcError::new(
                        field.span,
                        TcErrorKind::BadAnnotation(annot.clone()),
                    ));
                }
            }
        }
        let param_type = self.parse_type(param_node)?;
        let storage_type = self.parse_type(storage_node)?;
        if !param_type.is_passable() {
            return Err(TcError::forbidden_type(
                param_node.span,
                "passable",
                &param_type,
            ));
        }
        if !storage_type.is_storable() {
            return Err(TcError::forbidden_type(
                storage_node.span,
                "storable",
                &storage_type,
            ));
        }
        entrypoints::check(param_node)
            .map_err(|e| TcError::new(param_node.span, TcErrorKind::BadEntrypoint(e)))?;
        let code_expanded = code_node;
        let input = Type::pair(param_type.clone(), storage_type.clone());
        let expected = Type::pair(Type::list(Type::Operation), storage_type.clone());
        // The code compiles to about one instruction per primitive or sequence, and the
        // location table holds the script's primitives and sequences (its types' too: an
        // overestimate by their share).
        if level == Level::Toplevel {
            self.code_capacity = self.locations.nodes.len();
        }
        // Typecheck the code with this script's own parameter for SELF.
        let (compiled, out) = self.with_self_param(param_node, |tc| {
            tc.typecheck_code(code_expanded, {
                let mut stack = Vec::with_capacity(1 + STACK_HEADROOM);
                stack.push(input.clone());
                stack
            })
        })?;
        self.charge_body_end(&out, None);
        match out {
            None => {}
            Some(out) if out.len() == 1 && out[0] == expected => {
                self.charge_gas(charges::ty_eq(&out[0], &expected));
            }
            Some(out) => {
                return Err(TcError::new(
                    code_node.span,
                    TcErrorKind::BadReturn {
                        expected: expected.to_string(),
                        found: stack_to_string(&out),
                    },
                ))
            }
        }
        // `code_size`: the typed code, its descriptor and the Micheline of the code and of the
        // views (which a run does not typecheck, so their typechecking is not charged here).
        let code_ir_nodes = self.ir_nodes.saturating_sub(ir_nodes_before);
        let code_ir_bytes = self.ir_bytes.saturating_sub(ir_bytes_before);
        let mut views_nodes = 0u64;
        let mut views_bytes = 0u64;
        for view in &views {
            for part in view.children().iter().skip(1) {
                let (part_nodes, part_bytes) = ir_size::node_measure(part);
                views_nodes = views_nodes.saturating_add(part_nodes);
                views_bytes = views_bytes.saturating_add(part_bytes);
            }
        }
        // Octez's `code_size`: the code's `Lam` (its Micheline, descriptor and typed code) and
        // the views' Micheline.
        let code_address = std::ptr::from_ref(code_node) as usize;
        let (code_micheline_nodes, code_micheline_bytes) = self
            .field_measures
            .iter()
            .find(|(address, _)| *address == code_address)
            .map_or_else(|| ir_size::node_measure(code_node), |(_, measure)| *measure);
        let code_size_bytes = code_micheline_bytes
            .saturating_add(ir_size::lambda_descriptor_bytes(
                std::slice::from_ref(&input),
                &expected,
            ))
            .saturating_add(code_ir_bytes)
            .saturating_add(views_bytes);
        let gas_before_views = self.gas_consumed_milli;
        let mut typed_views = Vec::new();
        for view in views {
            let NodeKind::Prim { args, .. } = &view.kind else {
                continue;
            };
            if args.len() != 4 {
                return Err(TcError::new(
                    view.span,
                    TcErrorKind::BadScript("view".into()),
                ));
            }
            let NodeKind::String(name) = &args[0].kind else {
                return Err(TcError::new(
                    view.span,
                    TcErrorKind::BadScript("view name".into()),
                ));
            };
            if typed_views
                .iter()
                .any(|(n, ..): &(String, Type, Type, Node)| n == name)
            {
                return Err(TcError::new(
                    view.span,
                    TcErrorKind::BadScript("duplicate view".into()),
                ));
            }
            let input_type = self.parse_type(&args[1])?;
            let output_type = self.parse_type(&args[2])?;
            let name_ok = name.len() <= crate::literals::MAX_ENTRYPOINT_LENGTH
                && !name.is_empty()
                && name
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'%' | b'@'));
            if !name_ok {
                return Err(TcError::new(
                    view.span,
                    TcErrorKind::BadScript(format!("invalid view name {name:?}")),
                ));
            }
            for t in [&input_type, &output_type] {
                if !view_type_allowed(t) {
                    return Err(TcError::forbidden_type(view.span, "view type", t));
                }
            }
            let view_code = crate::macros::expand_all(&args[3])?;
            let (_, out) = self.typecheck_code(
                &view_code,
                vec![Type::pair(input_type.clone(), storage_type.clone())],
            )?;
            if let Some(out) = out {
                if out.len() != 1 || out[0] != output_type {
                    return Err(TcError::new(
                        view.span,
                        TcErrorKind::BadReturn {
                            expected: output_type.to_string(),
                            found: stack_to_string(&out),
                        },
                    ));
                }
            }
            typed_views.push((
                name.clone(),
                input_type,
                output_type,
                view_code.into_owned(),
            ));
        }
        match level {
            Level::Toplevel => {
                self.gas_consumed_milli = gas_before_views;
                let nodes = code_micheline_nodes
                    .saturating_add(charges::lambda_descriptor_nodes(&[input], &expected))
                    .saturating_add(code_ir_nodes)
                    .saturating_add(views_nodes);
                self.charge_gas(crate::gas::typecheck::cost_typed_ir_size_nodes(nodes));
            }
            // The enclosing code counts a `CREATE_CONTRACT`'s script as Micheline only.
            Level::Nested => {
                self.ir_nodes = ir_nodes_before;
                self.ir_bytes = ir_bytes_before;
            }
        }
        Ok(Script {
            param_node: param_node.clone(),
            param_type,
            storage_type,
            code: Rc::new(compiled),
            views: typed_views,
            code_size_bytes,
        })
    }

    fn with_self_param<T>(&mut self, param: &Node, f: impl FnOnce(&mut Self) -> T) -> T {
        // SELF inside a script refers to that script's own parameter, even when the script is
        // the argument of a CREATE_CONTRACT inside a lambda.
        let saved_allow = self.allow_self;
        let saved_param = if std::ptr::eq(param, self.context.self_param) {
            // The context's own parameter (the script being typechecked): no copy needed.
            self.self_param_override.take()
        } else {
            self.self_param_override.replace(param.clone())
        };
        self.allow_self = true;
        let result = f(self);
        self.allow_self = saved_allow;
        self.self_param_override = saved_param;
        result
    }

    /// The type of entrypoint `entrypoint` of the contract at `address`, if it exists, and
    /// what finding it costs beyond `parse_contract`'s cycle and the host's read of the code.
    pub fn contract_entrypoint_type(
        &self,
        address: &crate::literals::Address,
        entrypoint: &str,
        expected: &Type,
    ) -> (Option<Type>, u64) {
        let name = if entrypoint.is_empty() {
            "default"
        } else {
            entrypoint
        };
        match &address.destination {
            crate::literals::Destination::Implicit(_) => {
                let found = if name == "default" {
                    Some(Type::Unit)
                } else {
                    None
                };
                (found, 0)
            }
            destination => {
                if *destination == self.context.self_address.destination {
                    return (entrypoints::find(self.context.self_param, name), 0);
                }
                let Some(param) = self.context.host.contract_parameter(destination) else {
                    return (None, 0);
                };
                let found = entrypoints::find(&param, name);
                // `parse_originated_contract`: the parameter type parsed with its
                // entrypoints, the entrypoint searched, its type unified with the expected one.
                let parsed =
                    crate::types::parse_type(&param).map_or(0, |ty| charges::parse_type(&ty));
                let search = entrypoints::search_steps(&param, name)
                    .saturating_mul(crate::gas::typecheck::COST_FIND_ENTRYPOINT_CYCLE);
                let unify = found.as_ref().map_or(0, |ty| charges::ty_eq(ty, expected));
                (found, parsed.saturating_add(search).saturating_add(unify))
            }
        }
    }
}

/// The items of a code block: a sequence's, or the single instruction.
fn block_items(node: &Node) -> &[Node] {
    match &node.kind {
        NodeKind::Seq(items) => items,
        _ => std::slice::from_ref(node),
    }
}

/// A frame of the typechecker's explicit stack.
enum Frame<'n> {
    /// A sequence being checked: its items, the next one, and the stack so far (`None` once
    /// it has failed).
    Block {
        items: &'n [Node],
        next: usize,
        state: StackOut,
    },
    /// A structured instruction waiting for the result of a body.
    After(After<'n>),
}

/// What a structured instruction does once its body is checked.
enum After<'n> {
    /// A nested sequence: its result is the instruction's.
    Inline,
    /// The first branch of an `IF*` is done; the second is next.
    IfFirst {
        span: Span,
        loc: u32,
        branch: usize,
        second: &'n Node,
        second_stack: Vec<Type>,
    },
    /// Both branches are done.
    IfSecond {
        span: Span,
        loc: u32,
        jump: usize,
        first: StackOut,
    },
    /// `LOOP`/`LOOP_LEFT`: the body must give back `expected`; the result is `result`.
    Loop {
        span: Span,
        loc: u32,
        head: usize,
        expected: Vec<Type>,
        result: Vec<Type>,
    },
    /// `DIP n`: the `saved` values go back on top.
    Dip {
        loc: u32,
        n: usize,
        saved: Vec<Type>,
    },
    /// `ITER`: the body must give back `expected`.
    Iter {
        span: Span,
        loc: u32,
        head: usize,
        expected: Vec<Type>,
    },
    /// `MAP`: the body must give back `rest` plus the new element.
    Map {
        span: Span,
        loc: u32,
        head: usize,
        rest: Vec<Type>,
        result: MapResult,
    },
    /// `LAMBDA`: the body was compiled into its own code.
    Lambda {
        span: Span,
        loc: u32,
        arg: Type,
        ret: Type,
        recursive: bool,
        code: &'n Node,
        /// The body's location.
        code_loc: u32,
        outer: Vec<Type>,
        saved_allow_self: bool,
    },
}

/// The collection `MAP` builds.
enum MapResult {
    List,
    Option,
    Map(Type),
}

/// The outcome of one instruction.
enum Step<'n> {
    /// Checked; the stack after it.
    Done(StackOut),
    /// A body to check first, with this stack, then `after`.
    Enter {
        body: &'n Node,
        stack: Vec<Type>,
        after: After<'n>,
    },
}

/// A typechecked script.
pub struct Script {
    /// The parameter type as written (entrypoints).
    pub param_node: Node,
    /// The parameter type.
    pub param_type: Type,
    /// The storage type.
    pub storage_type: Type,
    /// The compiled code.
    pub code: Rc<Code>,
    /// Views: name, input type, output type, expanded code.
    pub views: Vec<(String, Type, Type, Node)>,
    /// Octez's `code_size` of the script, bytes (`ir_size`).
    pub code_size_bytes: u64,
}

impl Script {
    /// Wraps the script for `CREATE_CONTRACT` (its Micheline is what the operation shows).
    fn as_lambda_holder(&self, node: &Node) -> crate::value::Lambda {
        crate::value::Lambda {
            node: node.clone(),
            code: self.code.clone(),
            recursive: false,
            arg: self.param_type.clone(),
            ret: self.storage_type.clone(),
            applied: Vec::new(),
        }
    }
}

/// Whether a type may be a view's input or output: duplicable, without big maps, sapling states
/// or operations (Octez's view typing rules).
fn view_type_allowed(t: &Type) -> bool {
    t.is_duplicable() && t.is_big_map_value() && !t.has_big_map() && t.is_passable()
}

/// Merges the stacks of two branches.
fn merge(a: StackOut, b: StackOut, span: Span) -> Result<StackOut, TcError> {
    match (a, b) {
        (None, other) | (other, None) => Ok(other),
        (Some(a), Some(b)) => {
            if a == b {
                Ok(Some(a))
            } else {
                Err(TcError::new(
                    span,
                    TcErrorKind::UnmatchedBranches {
                        first: stack_to_string(&a),
                        second: stack_to_string(&b),
                    },
                ))
            }
        }
    }
}

/// The type of `UPDATE n` applied to `target` with a value of type `value`.
fn update_type(target: &Type, n: usize, value: Type) -> Option<Type> {
    // Walk down the right comb n/2 times, then replace the left (odd n) or the rest (even n).
    let mut spine: Vec<Rc<Type>> = Vec::new();
    let mut current = target.clone();
    let mut i = n;
    while i >= 2 {
        let Type::Pair(left, right) = &current else {
            return None;
        };
        spine.push(left.clone());
        let next = (**right).clone();
        current = next;
        i -= 2;
    }
    let mut result = if i == 1 {
        let Type::Pair(_, right) = &current else {
            return None;
        };
        Type::Pair(Rc::new(value), right.clone())
    } else {
        value
    };
    while let Some(left) = spine.pop() {
        result = Type::Pair(left, Rc::new(result));
    }
    Some(result)
}

/// Keeps `Value` in scope for doc links.
#[allow(dead_code)]
fn _value_marker(_: Value) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Typechecks one instruction, given as Michelson text, on a stack of `pair nat nat`.
    fn kind_of_error(instruction: &str) -> Option<TcErrorKind> {
        let code = kestrel_micheline::parse::parse_expression(&format!("{{ {instruction} }}"))
            .expect("valid Micheline");
        let stack = vec![Type::Nat, Type::pair(Type::Nat, Type::Nat)];
        crate::context::with_empty_lookup(|lookup| {
            Typechecker::new(lookup)
                .typecheck_code(&code, stack)
                .err()
                .map(|error| error.kind)
        })
    }

    #[test]
    fn comb_access_arguments_are_11_bit() {
        // `parse_uint11`: up to 2047 is a well-formed argument, rejected here by the stack.
        for instruction in ["GET 2047", "UPDATE 2047"] {
            assert!(
                matches!(
                    kind_of_error(instruction),
                    Some(TcErrorKind::BadStack { .. })
                ),
                "{instruction}"
            );
        }
        for instruction in ["GET 2048", "UPDATE 2048", "DUP 1024", "DIG 1024"] {
            assert!(
                matches!(
                    kind_of_error(instruction),
                    Some(TcErrorKind::BadArguments(_))
                ),
                "{instruction}"
            );
        }
        assert_eq!(kind_of_error("GET 1"), None);
    }

    #[test]
    fn typechecking_stops_at_the_gas_limit() {
        // `{ UNIT ; DROP }` repeated: 220 milligas per instruction and per suffix of the block.
        let code = kestrel_micheline::parse::parse_expression(&format!(
            "{{ {} }}",
            "UNIT ; DROP ; ".repeat(1_000)
        ))
        .expect("valid Micheline");
        let check = |gas_limit_milli: i64| {
            crate::context::with_empty_lookup(|lookup| {
                let mut typechecker = Typechecker::new(lookup);
                typechecker.gas_limit_milli = gas_limit_milli;
                typechecker
                    .typecheck_code(&code, Vec::new())
                    .err()
                    .map(|error| error.kind)
            })
        };
        assert!(matches!(check(10_000), Some(TcErrorKind::GasExhaustion)));
        assert_eq!(check(1_000_000_000), None);
    }
}
