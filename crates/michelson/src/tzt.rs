//! The TZT runner (`specs/michelson.rst`, "TZT, a Syntax extension for writing unit tests"):
//! reads a test (`code`, `input`, `output` and the optional context primitives), typechecks and
//! runs the code, and compares the outcome with the expected output, wildcards (`_`) included.
//!
//! Expected values without wildcards are typechecked as data and compared as values, which
//! normalizes readable and optimized forms; with wildcards, both sides are compared as readable
//! Micheline.

use crate::context::{Context, OtherContract, StoredBigMap, StoredView};
use crate::int::Int;
use crate::interpret::{Interpreter, RunError};
use crate::literals::Address;
use crate::typecheck::{TcError, Typechecker};
use crate::types::Type;
use crate::unparse::{unparse, Mode};
use crate::value::Value;
use kestrel_micheline::{Node, NodeKind, Prim};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// Why a TZT test did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TztFailure {
    /// The file is not valid Micheline or not a valid TZT test.
    Malformed(String),
    /// The outcome differs from the expected output.
    Mismatch {
        /// What the test expected.
        expected: String,
        /// What happened.
        actual: String,
    },
}

impl fmt::Display for TztFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TztFailure::Malformed(why) => write!(f, "malformed test: {why}"),
            TztFailure::Mismatch { expected, actual } => {
                write!(f, "expected {expected}, got {actual}")
            }
        }
    }
}

/// What a run produced.
enum Outcome {
    Stack(Vec<(Type, Value)>),
    StaticError(TcError),
    Runtime(RunError),
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Stack(stack) => {
                let items: Vec<String> = stack
                    .iter()
                    .rev()
                    .map(|(t, v)| {
                        format!(
                            "Stack_elt {} {}",
                            paren(&t.to_string()),
                            paren(&format!("{v:?}"))
                        )
                    })
                    .collect();
                format!("{{ {} }}", items.join(" ; "))
            }
            Outcome::StaticError(e) => format!("(StaticError {e})"),
            Outcome::Runtime(RunError::Failed(v)) => format!("(Failed {v:?})"),
            Outcome::Runtime(RunError::Overflow) => "Overflow".into(),
            Outcome::Runtime(RunError::MutezUnderflow) => "MutezUnderflow".into(),
            Outcome::Runtime(RunError::GasExhaustion) => "Gas_exhaustion".into(),
            Outcome::Runtime(RunError::Other(e)) => format!("(RuntimeError {e})"),
        }
    }
}

fn paren(text: &str) -> String {
    if text.contains(' ') && !text.starts_with('{') {
        format!("({text})")
    } else {
        text.to_string()
    }
}

fn malformed(why: impl Into<String>) -> TztFailure {
    TztFailure::Malformed(why.into())
}

fn prim_of(node: &Node) -> Option<(&str, &[Node])> {
    match &node.kind {
        NodeKind::Prim { name, args, .. } => Some((name.as_str(), args.as_slice())),
        _ => None,
    }
}

fn is_wildcard(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Prim { name, args, .. } if name.as_str() == "_" && args.is_empty())
}

fn has_wildcard(node: &Node) -> bool {
    let mut pending = vec![node];
    while let Some(n) = pending.pop() {
        if let NodeKind::Prim { name, .. } = &n.kind {
            if name.as_str() == "_" {
                return true;
            }
        }
        pending.extend(n.children());
    }
    false
}

/// Runs one TZT test given as text.
pub fn run_tzt(source: &str) -> Result<(), TztFailure> {
    run_tzt_with(source, false)
}

/// Runs one TZT test; `legacy` accepts deprecated instructions (the suite's `legacy/` tests).
pub fn run_tzt_with(source: &str, legacy: bool) -> Result<(), TztFailure> {
    run_tzt_limited(
        source,
        legacy,
        crate::context::HARD_GAS_LIMIT_PER_OPERATION * 1000,
    )
}

/// The toplevel fields a TZT test may have (the TZT format's, and Octez's extensions such as
/// `other_contracts` and `big_maps`); any other is refused rather than silently ignored.
const TZT_FIELDS: &[&str] = &[
    "code",
    "input",
    "output",
    "amount",
    "balance",
    "big_maps",
    "chain_id",
    "level",
    "min_block_time",
    "now",
    "other_contracts",
    "parameter",
    "self",
    "sender",
    "source",
    "storages",
    "total_voting_power",
    "views",
    "voting_power",
];

/// Runs one TZT test with `gas_limit_milli` milligas.
pub fn run_tzt_limited(source: &str, legacy: bool, gas_limit_milli: i64) -> Result<(), TztFailure> {
    let root =
        kestrel_micheline::parse_toplevel(source).map_err(|e| malformed(e.describe(source)))?;
    let items: Vec<&Node> = match &root.kind {
        NodeKind::Seq(items) => items.iter().collect(),
        _ => vec![&root],
    };
    let mut fields: BTreeMap<&str, &[Node]> = BTreeMap::new();
    for item in &items {
        let Some((name, args)) = prim_of(item) else {
            return Err(malformed("toplevel item is not a primitive"));
        };
        if !TZT_FIELDS.contains(&name) {
            return Err(malformed(format!("unknown field {name}")));
        }
        if fields.insert(name, args).is_some() {
            return Err(malformed(format!("duplicate field {name}")));
        }
    }
    let one = |name: &str| -> Result<Option<&Node>, TztFailure> {
        match fields.get(name) {
            None => Ok(None),
            Some([arg]) => Ok(Some(arg)),
            Some(_) => Err(malformed(format!("{name} takes one argument"))),
        }
    };
    let code = one("code")?.ok_or_else(|| malformed("missing code"))?;
    let input = one("input")?.ok_or_else(|| malformed("missing input"))?;
    let output = one("output")?.ok_or_else(|| malformed("missing output"))?;

    let mut context = Context {
        legacy,
        gas_limit_milli,
        ..Context::default()
    };
    let outcome = match build_context(&mut context, &fields) {
        Err(e) => Outcome::StaticError(e),
        Ok(()) => execute(&mut context, code, input),
    };
    compare(&context, output, &outcome)
}

fn static_error(node: &Node, message: &str) -> TcError {
    TcError::new(
        node.span,
        crate::typecheck::TcErrorKind::BadScript(message.to_string()),
    )
}

fn build_context(context: &mut Context, fields: &BTreeMap<&str, &[Node]>) -> Result<(), TcError> {
    let get = |name: &str| fields.get(name).and_then(|args| args.first());
    let int_of = |node: &Node| -> Result<i64, TcError> {
        match &node.kind {
            NodeKind::Int(n) => {
                i64::try_from(n).map_err(|_| static_error(node, "integer out of range"))
            }
            _ => Err(static_error(node, "expected an integer")),
        }
    };
    if let Some(node) = get("amount") {
        context.amount = int_of(node)?;
    }
    if let Some(node) = get("balance") {
        context.balance = int_of(node)?;
    }
    if let Some(node) = get("level") {
        context.level =
            u64::try_from(int_of(node)?).map_err(|_| static_error(node, "negative level"))?;
    }
    if let Some(node) = get("min_block_time") {
        context.min_block_time =
            u64::try_from(int_of(node)?).map_err(|_| static_error(node, "negative time"))?;
    }
    if let Some(node) = get("total_voting_power") {
        context.total_voting_power =
            u64::try_from(int_of(node)?).map_err(|_| static_error(node, "negative power"))?;
    }
    if let Some(node) = get("voting_power") {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(static_error(node, "voting_power"));
        };
        for item in items {
            let Some(("Elt", [key_hash, power])) = prim_of(item) else {
                return Err(static_error(item, "Elt"));
            };
            let key_hash = match &key_hash.kind {
                NodeKind::String(s) => crate::literals::KeyHash::from_base58(s),
                NodeKind::Bytes(b) => crate::literals::KeyHash::from_bytes(b),
                _ => None,
            }
            .ok_or_else(|| static_error(item, "key hash"))?;
            let power =
                u64::try_from(int_of(power)?).map_err(|_| static_error(item, "negative power"))?;
            context.voting_powers.insert(key_hash, power);
        }
    }
    let address_of = |node: &Node| -> Result<Address, TcError> {
        match &node.kind {
            NodeKind::String(s) => {
                Address::from_string(s).ok_or_else(|| static_error(node, "invalid address"))
            }
            NodeKind::Bytes(b) => {
                Address::from_bytes(b).ok_or_else(|| static_error(node, "invalid address"))
            }
            _ => Err(static_error(node, "expected an address")),
        }
    };
    if let Some(node) = get("sender") {
        context.sender = address_of(node)?;
    }
    if let Some(node) = get("source") {
        context.source = address_of(node)?;
    }
    if let Some(node) = get("self") {
        context.self_address = address_of(node)?;
    }
    if let Some(node) = get("parameter") {
        crate::types::parse_type(node)
            .map_err(|e| TcError::new(node.span, crate::typecheck::TcErrorKind::Type(e)))?;
        context.self_param = node.clone();
    }
    if let Some(node) = get("now") {
        let tc = Typechecker::new(context);
        let _ = tc;
        context.now = match &node.kind {
            NodeKind::Int(n) => Int::from(n),
            NodeKind::String(s) => crate::literals::timestamp_from_rfc3339(s)
                .ok_or_else(|| static_error(node, "invalid timestamp"))?,
            _ => return Err(static_error(node, "invalid timestamp")),
        };
    }
    if let Some(node) = get("chain_id") {
        context.chain_id = match &node.kind {
            NodeKind::String(s) => crate::literals::chain_id_from_base58(s)
                .ok_or_else(|| static_error(node, "invalid chain id"))?,
            NodeKind::Bytes(b) => <[u8; 4]>::try_from(b.as_slice())
                .map_err(|_| static_error(node, "invalid chain id"))?,
            _ => return Err(static_error(node, "invalid chain id")),
        };
    }
    if let Some(node) = get("other_contracts") {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(static_error(node, "other_contracts"));
        };
        for item in items {
            let Some(("Contract", [address, param])) = prim_of(item) else {
                return Err(static_error(item, "Contract"));
            };
            let address = address_of(address)?;
            crate::types::parse_type(param)
                .map_err(|e| TcError::new(param.span, crate::typecheck::TcErrorKind::Type(e)))?;
            context.contracts.insert(
                address.destination,
                OtherContract {
                    param: param.clone(),
                    storage: None,
                    views: Vec::new(),
                    balance: 0,
                },
            );
        }
    }
    if let Some(node) = get("big_maps") {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(static_error(node, "big_maps"));
        };
        for item in items {
            let Some(("Big_map", [id, key_type, value_type, contents])) = prim_of(item) else {
                return Err(static_error(item, "Big_map"));
            };
            let NodeKind::Int(id) = &id.kind else {
                return Err(static_error(item, "big map id"));
            };
            let key_type_parsed = crate::types::parse_type(key_type)
                .map_err(|e| TcError::new(key_type.span, crate::typecheck::TcErrorKind::Type(e)))?;
            let value_type_parsed = crate::types::parse_type(value_type).map_err(|e| {
                TcError::new(value_type.span, crate::typecheck::TcErrorKind::Type(e))
            })?;
            let map_type = Type::Map(
                Rc::new(key_type_parsed.clone()),
                Rc::new(value_type_parsed.clone()),
            );
            let mut tc = Typechecker::new(context);
            let Value::Map(map) = tc.parse_data(contents, &map_type)? else {
                return Err(static_error(item, "big map contents"));
            };
            context.big_maps.insert(
                Int::from(id),
                StoredBigMap {
                    key_type: key_type_parsed,
                    value_type: value_type_parsed,
                    contents: Rc::try_unwrap(map).unwrap_or_else(|shared| (*shared).clone()),
                },
            );
        }
    }
    if let Some(node) = get("storages") {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(static_error(node, "storages"));
        };
        for item in items {
            let Some(("Storage", [address, ty, value])) = prim_of(item) else {
                return Err(static_error(item, "Storage"));
            };
            let address = address_of(address)?;
            let ty = crate::types::parse_type(ty)
                .map_err(|e| TcError::new(ty.span, crate::typecheck::TcErrorKind::Type(e)))?;
            let mut tc = Typechecker::new(context);
            let value = tc.parse_data(value, &ty)?;
            let entry = context
                .contracts
                .entry(address.destination)
                .or_insert_with(|| OtherContract {
                    param: Node::prim(Prim::T_unit, vec![]),
                    storage: None,
                    views: Vec::new(),
                    balance: 0,
                });
            entry.storage = Some((ty, value));
        }
    }
    if let Some(node) = get("views") {
        let NodeKind::Seq(items) = &node.kind else {
            return Err(static_error(node, "views"));
        };
        for item in items {
            let Some(("Views", [address, views])) = prim_of(item) else {
                return Err(static_error(item, "Views"));
            };
            let address = address_of(address)?;
            let NodeKind::Seq(views) = &views.kind else {
                return Err(static_error(item, "views list"));
            };
            let mut stored = Vec::new();
            for view in views {
                let Some(("View", [name, input, output, code])) = prim_of(view) else {
                    return Err(static_error(view, "View"));
                };
                let NodeKind::String(name) = &name.kind else {
                    return Err(static_error(view, "view name"));
                };
                let parse = |t: &Node| {
                    crate::types::parse_type(t)
                        .map_err(|e| TcError::new(t.span, crate::typecheck::TcErrorKind::Type(e)))
                };
                stored.push(StoredView {
                    name: name.clone(),
                    input_type: parse(input)?,
                    output_type: parse(output)?,
                    code: crate::macros::expand_all(code)?,
                });
            }
            let entry = context
                .contracts
                .entry(address.destination)
                .or_insert_with(|| OtherContract {
                    param: Node::prim(Prim::T_unit, vec![]),
                    storage: None,
                    views: Vec::new(),
                    balance: 0,
                });
            entry.views = stored;
        }
    }
    Ok(())
}

fn execute(context: &mut Context, code: &Node, input: &Node) -> Outcome {
    let NodeKind::Seq(elements) = &input.kind else {
        return Outcome::StaticError(static_error(input, "input must be a sequence"));
    };
    let mut types = Vec::new();
    let mut values = Vec::new();
    {
        let mut tc = Typechecker::new(context);
        for element in elements.iter().rev() {
            let Some(("Stack_elt", [ty, value])) = prim_of(element) else {
                return Outcome::StaticError(static_error(element, "expected Stack_elt"));
            };
            let ty = match tc.parse_type(ty) {
                Ok(t) => t,
                Err(e) => return Outcome::StaticError(e),
            };
            let value = match expand_and_parse(&mut tc, value, &ty) {
                Ok(v) => v,
                Err(e) => return Outcome::StaticError(e),
            };
            types.push(ty);
            values.push(value);
        }
    }
    let compiled = {
        let mut tc = Typechecker::new(context);
        tc.legacy = context.legacy;
        let expanded = match crate::macros::expand_all(code) {
            Ok(e) => e,
            Err(e) => return Outcome::StaticError(e.into()),
        };
        match tc.typecheck_code(&expanded, types) {
            Ok(result) => result,
            Err(e) => return Outcome::StaticError(e),
        }
    };
    let (code, out_types) = compiled;
    let gas = context.gas_limit_milli;
    let mut interpreter = Interpreter::new(context, gas);
    match interpreter.run(&Rc::new(code), values) {
        Ok(stack) => match out_types {
            Some(types) => Outcome::Stack(types.into_iter().zip(stack).collect()),
            None => Outcome::Runtime(RunError::Other("failing code returned".into())),
        },
        Err(e) => Outcome::Runtime(e),
    }
}

/// Lambdas in data are code: expand their macros before typechecking.
fn expand_and_parse(tc: &mut Typechecker, node: &Node, ty: &Type) -> Result<Value, TcError> {
    if contains_lambda(ty) {
        let expanded = crate::macros::expand_all(node)?;
        tc.parse_data(&expanded, ty)
    } else {
        tc.parse_data(node, ty)
    }
}

fn contains_lambda(ty: &Type) -> bool {
    let text = ty.to_string();
    text.contains("lambda")
}

fn mismatch(expected: &Node, outcome: &Outcome) -> TztFailure {
    TztFailure::Mismatch {
        expected: crate::print::node_to_string(expected),
        actual: outcome.describe(),
    }
}

fn compare(context: &Context, expected: &Node, outcome: &Outcome) -> Result<(), TztFailure> {
    if is_wildcard(expected) {
        return Ok(());
    }
    match (&expected.kind, outcome) {
        (NodeKind::Seq(items), Outcome::Stack(stack)) => {
            if items.len() != stack.len() {
                return Err(mismatch(expected, outcome));
            }
            for (item, (actual_type, actual_value)) in items.iter().zip(stack.iter().rev()) {
                if is_wildcard(item) {
                    continue;
                }
                let Some(("Stack_elt", [ty, value])) = prim_of(item) else {
                    return Err(malformed("expected Stack_elt in output"));
                };
                if !is_wildcard(ty) {
                    let expected_type = crate::types::parse_type(ty)
                        .map_err(|e| malformed(format!("bad output type: {e}")))?;
                    if &expected_type != actual_type {
                        return Err(mismatch(expected, outcome));
                    }
                }
                if !value_matches(context, value, actual_type, actual_value) {
                    return Err(mismatch(expected, outcome));
                }
            }
            Ok(())
        }
        (NodeKind::Prim { name, args, .. }, _) => {
            let ok = match (name.as_str(), args.as_slice(), outcome) {
                ("StaticError", _, Outcome::StaticError(_)) => true,
                ("Failed", [value], Outcome::Runtime(RunError::Failed(actual))) => {
                    failed_matches(context, value, actual)
                }
                ("Overflow", _, Outcome::Runtime(RunError::Overflow)) => true,
                ("MutezUnderflow", _, Outcome::Runtime(RunError::MutezUnderflow)) => true,
                ("Gas_exhaustion", [], Outcome::Runtime(RunError::GasExhaustion)) => true,
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                Err(mismatch(expected, outcome))
            }
        }
        _ => Err(mismatch(expected, outcome)),
    }
}

fn failed_matches(context: &Context, expected: &Node, actual: &Value) -> bool {
    pattern_matches(expected, &unparse(actual, Mode::Readable)) || {
        let _ = context;
        false
    }
}

fn value_matches(context: &Context, expected: &Node, ty: &Type, actual: &Value) -> bool {
    if !has_wildcard(expected) && !matches!(ty, Type::Operation) {
        let mut tc = Typechecker::new(context);
        if let Ok(expected_value) = expand_and_parse(&mut tc, expected, ty) {
            return expected_value == *actual;
        }
    }
    pattern_matches(expected, &unparse(actual, Mode::Readable))
}

/// Flattens right-comb `Pair`s so `Pair a (Pair b c)` and `Pair a b c` compare equal.
fn flatten_pair(node: &Node) -> Option<Vec<&Node>> {
    let (name, args) = prim_of(node)?;
    if name != "Pair" || args.len() < 2 {
        return None;
    }
    let mut out: Vec<&Node> = args[..args.len() - 1].iter().collect();
    let mut last = &args[args.len() - 1];
    while let Some(("Pair", inner)) = prim_of(last) {
        if inner.len() < 2 {
            break;
        }
        out.extend(&inner[..inner.len() - 1]);
        last = &inner[inner.len() - 1];
    }
    out.push(last);
    Some(out)
}

/// Whether `pattern` (with `_` wildcards) matches `actual`.
pub fn pattern_matches(pattern: &Node, actual: &Node) -> bool {
    let mut pending = vec![(pattern, actual)];
    while let Some((p, a)) = pending.pop() {
        if is_wildcard(p) {
            continue;
        }
        if let (Some(ps), Some(as_)) = (flatten_pair(p), flatten_pair(a)) {
            if ps.len() != as_.len() {
                return false;
            }
            pending.extend(ps.into_iter().zip(as_));
            continue;
        }
        match (&p.kind, &a.kind) {
            (NodeKind::Int(x), NodeKind::Int(y)) if x == y => {}
            (NodeKind::String(x), NodeKind::String(y)) if x == y => {}
            (NodeKind::Bytes(x), NodeKind::Bytes(y)) if x == y => {}
            (NodeKind::Seq(xs), NodeKind::Seq(ys)) if xs.len() == ys.len() => {
                pending.extend(xs.iter().zip(ys.iter()))
            }
            (
                NodeKind::Prim {
                    name: n1, args: a1, ..
                },
                NodeKind::Prim {
                    name: n2, args: a2, ..
                },
            ) => {
                if n1.as_str() == "_" {
                    // `_ True "foo"`: a wildcard head with arguments.
                    if a1.len() != a2.len() {
                        return false;
                    }
                } else if n1 != n2 || a1.len() != a2.len() {
                    return false;
                }
                pending.extend(a1.iter().zip(a2.iter()));
            }
            _ => return false,
        }
    }
    true
}
