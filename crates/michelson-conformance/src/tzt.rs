//! The TZT runner (`specs/michelson.rst`, "TZT, a Syntax extension for writing unit tests"):
//! reads a test (`code`, `input`, `output` and the optional context primitives), typechecks and
//! runs the code, and compares the outcome with the expected output, wildcards (`_`) included.
//!
//! Expected values without wildcards are typechecked as data and compared as values, which
//! normalizes readable and optimized forms; with wildcards, both sides are compared as readable
//! Micheline.

use crate::fixtures::{FixtureBigMap, FixtureContract, FixtureHost, FixtureView};
use kestrel_micheline::{Node, NodeKind};
use kestrel_michelson::{
    big_map_key_hash, normalize, parse_type, run_code, typecheck_code, typecheck_data, Address,
    BigMapTypes, CodeContext, Environment, ExecutionError, Int, KeyHash, Type, TypecheckError,
    TypecheckErrorKind, UnparsingMode, Value,
};
use std::collections::BTreeMap;
use std::fmt;

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
    StaticError(TypecheckError),
    Runtime(ExecutionError),
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
                            paren(&v.to_string())
                        )
                    })
                    .collect();
                format!("{{ {} }}", items.join(" ; "))
            }
            Outcome::StaticError(e) => format!("(StaticError {e})"),
            Outcome::Runtime(ExecutionError::Failed { value, .. }) => format!("(Failed {value})"),
            Outcome::Runtime(ExecutionError::Overflow) => "Overflow".into(),
            Outcome::Runtime(ExecutionError::MutezUnderflow) => "MutezUnderflow".into(),
            Outcome::Runtime(ExecutionError::GasExhaustion) => "Gas_exhaustion".into(),
            Outcome::Runtime(e) => format!("(RuntimeError {e})"),
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
        kestrel_michelson::HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    )
}

/// A TZT test's world: its environment, the parameter type `SELF` has, and its fixtures.
struct World {
    environment: Environment,
    self_parameter: Node,
    host: FixtureHost,
    legacy: bool,
}

impl World {
    fn context(&mut self) -> CodeContext<'_, FixtureHost> {
        CodeContext {
            environment: &self.environment,
            self_parameter: &self.self_parameter,
            host: &mut self.host,
            legacy: self.legacy,
        }
    }

    fn typecheck_data(&mut self, node: &Node, ty: &Type) -> Result<Value, TypecheckError> {
        typecheck_data(node, ty, &self.context())
    }
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
pub fn run_tzt_limited(source: &str, legacy: bool, gas_limit_milli: u64) -> Result<(), TztFailure> {
    // The TZT suite lays some files out against Micheline's indentation rule (`view_02.tzt`:
    // a `Views` argument under its first), and its runners accept them.
    let root = kestrel_micheline::parse_toplevel_any_layout(source)
        .map_err(|e| malformed(e.describe(source)))?;
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

    let mut world = World {
        environment: Environment::default(),
        self_parameter: Node::prim(kestrel_micheline::Prim::T_unit, vec![]),
        host: FixtureHost::new(0),
        legacy,
    };
    let outcome = match build_world(&mut world, &fields) {
        Err(e) => Outcome::StaticError(e),
        Ok(()) => execute(&mut world, code, input, gas_limit_milli),
    };
    compare(&mut world, output, &outcome)
}

fn static_error(node: &Node, message: &str) -> TypecheckError {
    TypecheckError::new(
        node.span,
        TypecheckErrorKind::BadScript(message.to_string()),
    )
}

fn type_of(node: &Node) -> Result<Type, TypecheckError> {
    parse_type(node).map_err(|e| TypecheckError::new(node.span, TypecheckErrorKind::Type(e)))
}

fn build_world(world: &mut World, fields: &BTreeMap<&str, &[Node]>) -> Result<(), TypecheckError> {
    let get = |name: &str| fields.get(name).and_then(|args| args.first());
    let int_of = |node: &Node| -> Result<i64, TypecheckError> {
        match &node.kind {
            NodeKind::Int(n) => {
                i64::try_from(n).map_err(|_| static_error(node, "integer out of range"))
            }
            _ => Err(static_error(node, "expected an integer")),
        }
    };
    let environment = &mut world.environment;
    if let Some(node) = get("amount") {
        environment.amount_mutez = int_of(node)?;
    }
    if let Some(node) = get("balance") {
        environment.balance_mutez = int_of(node)?;
    }
    if let Some(node) = get("level") {
        environment.level =
            u64::try_from(int_of(node)?).map_err(|_| static_error(node, "negative level"))?;
    }
    if let Some(node) = get("min_block_time") {
        environment.min_block_time_seconds =
            u64::try_from(int_of(node)?).map_err(|_| static_error(node, "negative time"))?;
    }
    if let Some(node) = get("total_voting_power") {
        world.host.total_voting_power =
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
                NodeKind::String(s) => KeyHash::from_base58(s),
                NodeKind::Bytes(b) => KeyHash::from_bytes(b),
                _ => None,
            }
            .ok_or_else(|| static_error(item, "key hash"))?;
            let power =
                u64::try_from(int_of(power)?).map_err(|_| static_error(item, "negative power"))?;
            world.host.voting_powers.insert(key_hash, power);
        }
    }
    let address_of = |node: &Node| -> Result<Address, TypecheckError> {
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
        environment.sender = address_of(node)?;
    }
    if let Some(node) = get("source") {
        environment.source = address_of(node)?;
    }
    if let Some(node) = get("self") {
        environment.self_address = address_of(node)?;
    }
    if let Some(node) = get("parameter") {
        type_of(node)?;
        world.self_parameter = node.clone();
    }
    if let Some(node) = get("now") {
        let now = match &node.kind {
            NodeKind::Int(n) => Some(Int::from(n)),
            NodeKind::String(s) => kestrel_michelson::timestamp_from_rfc3339(s),
            _ => None,
        };
        environment.now_seconds = now
            .and_then(|now| now.to_i64())
            .ok_or_else(|| static_error(node, "invalid timestamp"))?;
    }
    if let Some(node) = get("chain_id") {
        environment.chain_id = match &node.kind {
            NodeKind::String(s) => kestrel_michelson::chain_id_from_base58(s)
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
            type_of(param)?;
            world.host.contracts.insert(
                address.destination,
                FixtureContract {
                    parameter: param.clone(),
                    storage: None,
                    views: Vec::new(),
                    balance_mutez: 0,
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
            let key_type = type_of(key_type)?;
            let value_type = type_of(value_type)?;
            let map_type = Type::Map(
                std::rc::Rc::new(key_type.clone()),
                std::rc::Rc::new(value_type.clone()),
            );
            let Value::Map(map) = world.typecheck_data(contents, &map_type)? else {
                return Err(static_error(item, "big map contents"));
            };
            let values = map
                .iter()
                .map(|(key, value)| {
                    (
                        big_map_key_hash(key, &key_type),
                        normalize(value, UnparsingMode::OptimizedLegacy),
                    )
                })
                .collect();
            world.host.big_maps.insert(
                Int::from(id),
                FixtureBigMap {
                    types: BigMapTypes {
                        key_type,
                        value_type,
                    },
                    values,
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
            let ty = type_of(ty)?;
            let value = world.typecheck_data(value, &ty)?;
            let storage = normalize(&value, UnparsingMode::OptimizedLegacy);
            world.host.contract_mut(address.destination).storage = Some((ty, storage));
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
                stored.push(FixtureView {
                    name: name.clone(),
                    input_type: type_of(input)?,
                    output_type: type_of(output)?,
                    code: kestrel_michelson::expand_macros(code)?,
                });
            }
            world.host.contract_mut(address.destination).views = stored;
        }
    }
    Ok(())
}

fn execute(world: &mut World, code: &Node, input: &Node, gas_limit_milli: u64) -> Outcome {
    let NodeKind::Seq(elements) = &input.kind else {
        return Outcome::StaticError(static_error(input, "input must be a sequence"));
    };
    let mut types = Vec::new();
    let mut values = Vec::new();
    for element in elements.iter().rev() {
        let Some(("Stack_elt", [ty, value])) = prim_of(element) else {
            return Outcome::StaticError(static_error(element, "expected Stack_elt"));
        };
        let ty = match type_of(ty) {
            Ok(t) => t,
            Err(e) => return Outcome::StaticError(e),
        };
        let value = match world.typecheck_data(value, &ty) {
            Ok(v) => v,
            Err(e) => return Outcome::StaticError(e),
        };
        types.push(ty);
        values.push(value);
    }
    let mut context = world.context();
    let typed = match typecheck_code(code, types, &context) {
        Ok(typed) => typed,
        Err(e) => return Outcome::StaticError(e),
    };
    match run_code(&typed, values, &mut context, gas_limit_milli) {
        Ok(stack) => match typed.output_types() {
            Some(types) => Outcome::Stack(types.iter().cloned().zip(stack).collect()),
            None => unreachable!("code typed as always failing returned"),
        },
        Err(e) => Outcome::Runtime(e),
    }
}

fn mismatch(expected: &Node, outcome: &Outcome) -> TztFailure {
    TztFailure::Mismatch {
        expected: kestrel_micheline::print::to_text_single_line(expected),
        actual: outcome.describe(),
    }
}

fn compare(world: &mut World, expected: &Node, outcome: &Outcome) -> Result<(), TztFailure> {
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
                    let expected_type =
                        parse_type(ty).map_err(|e| malformed(format!("bad output type: {e}")))?;
                    if &expected_type != actual_type {
                        return Err(mismatch(expected, outcome));
                    }
                }
                if !value_matches(world, value, actual_type, actual_value) {
                    return Err(mismatch(expected, outcome));
                }
            }
            Ok(())
        }
        (NodeKind::Prim { name, args, .. }, _) => {
            let ok = match (name.as_str(), args.as_slice(), outcome) {
                ("StaticError", _, Outcome::StaticError(_)) => true,
                // Octez's runner calls every error it does not name a static error; this one
                // is Octez's `Invalid_constant`.
                ("StaticError", _, Outcome::Runtime(ExecutionError::InvalidConstant(_))) => true,
                ("Failed", [expected], Outcome::Runtime(ExecutionError::Failed { value, .. })) => {
                    pattern_matches(expected, &normalize(value, UnparsingMode::Readable))
                }
                ("Overflow", _, Outcome::Runtime(ExecutionError::Overflow)) => true,
                ("MutezUnderflow", _, Outcome::Runtime(ExecutionError::MutezUnderflow)) => true,
                ("Gas_exhaustion", [], Outcome::Runtime(ExecutionError::GasExhaustion)) => true,
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

fn value_matches(world: &mut World, expected: &Node, ty: &Type, actual: &Value) -> bool {
    if !has_wildcard(expected) && !matches!(ty, Type::Operation) {
        if let Ok(expected_value) = world.typecheck_data(expected, ty) {
            return expected_value == *actual;
        }
    }
    pattern_matches(expected, &normalize(actual, UnparsingMode::Readable))
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
