//! Michelson macros (`specs/michelson.rst`, "Macros"): `CMPop`, `IFop`, `IFCMPop`, `FAIL`,
//! `ASSERT*`, `IF_SOME`, `IF_RIGHT`, `DUU+P`, `DII+P`, `P[AIP]+R`, `UNP[AIP]+R`, `C[AD]+R`,
//! `CAR k`/`CDR k`, `SET_C[AD]+R`, `MAP_C[AD]+R`, expanded to the exact Micheline Octez produces
//! (the shape matters: `PACK` of a lambda sees it).
//!
//! [`expand_all`] walks the tree with an explicit stack, so input depth never becomes host
//! recursion.

use kestrel_micheline::{Node, NodeKind, Prim, PrimName, Span};
use std::borrow::Cow;

/// Why a macro could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MacroError {
    /// A macro applied to the wrong number of arguments.
    Arity {
        /// The macro's name.
        name: String,
        /// Where it was written.
        span: Span,
    },
}

fn prim(name: Prim, args: Vec<Node>, span: Span) -> Node {
    Node {
        kind: NodeKind::Prim {
            name: PrimName::Known(name),
            args,
            annots: Vec::new(),
        },
        span,
    }
}

fn prim_annot(name: Prim, args: Vec<Node>, annots: Vec<String>, span: Span) -> Node {
    Node {
        kind: NodeKind::Prim {
            name: PrimName::Known(name),
            args,
            annots,
        },
        span,
    }
}

fn seq(items: Vec<Node>, span: Span) -> Node {
    Node {
        kind: NodeKind::Seq(items),
        span,
    }
}

fn int(value: usize, span: Span) -> Node {
    Node {
        kind: NodeKind::Int(value.into()),
        span,
    }
}

fn comparison(op: &str) -> Option<Prim> {
    Some(match op {
        "EQ" => Prim::I_EQ,
        "NEQ" => Prim::I_NEQ,
        "LT" => Prim::I_LT,
        "GT" => Prim::I_GT,
        "LE" => Prim::I_LE,
        "GE" => Prim::I_GE,
        _ => return None,
    })
}

fn fail(span: Span) -> Node {
    seq(
        vec![
            prim(Prim::I_UNIT, vec![], span),
            prim(Prim::I_FAILWITH, vec![], span),
        ],
        span,
    )
}

/// The branching of an assertion: `PRIM {} { FAIL }`, or `PRIM { FAIL } {}` when the failing
/// branch comes first.
fn assertion(branching: Prim, fail_first: bool, span: Span) -> Node {
    let (pass, failing) = (seq(vec![], span), seq(vec![fail(span)], span));
    let branches = if fail_first {
        vec![failing, pass]
    } else {
        vec![pass, failing]
    };
    prim(branching, branches, span)
}

/// The assertion macros that take no comparison: name, branching instruction, and whether the
/// failing branch is the first.
const ASSERTIONS: &[(&str, Prim, bool)] = &[
    ("ASSERT", Prim::I_IF, false),
    ("ASSERT_NONE", Prim::I_IF_NONE, false),
    ("ASSERT_SOME", Prim::I_IF_NONE, true),
    ("ASSERT_LEFT", Prim::I_IF_LEFT, false),
    ("ASSERT_RIGHT", Prim::I_IF_LEFT, true),
];

/// The branching macros that are an instruction with its branches swapped.
const SWAPPED_BRANCHES: &[(&str, Prim)] =
    &[("IF_SOME", Prim::I_IF_NONE), ("IF_RIGHT", Prim::I_IF_LEFT)];

/// The depth `n` of a name made of `first`, `repeated` one or more times and `last`
/// (`DUUP` is `DUP 2`, `DIIIP` is `DIP 3`), counting the repeated letters and the first one.
fn repeated_letter_depth(name: &str, first: u8, repeated: u8, last: u8) -> Option<usize> {
    let bytes = name.as_bytes();
    let len = bytes.len();
    let matches = len > 3
        && bytes[0] == first
        && bytes[len - 1] == last
        && bytes[1..len - 1].iter().all(|&b| b == repeated);
    // `len - 2` only once `len > 3` is known: evaluated eagerly it would underflow.
    if matches {
        Some(len - 2)
    } else {
        None
    }
}

/// The result of expanding one node: the node and whether it must be spliced into the
/// enclosing sequence (Octez's `C[AD]+R` expansions are).
struct Expanded {
    node: Node,
    splice: bool,
}

/// Expands one primitive application whose arguments are already expanded. Returns `Ok(None)`
/// when `name` is not a macro.
fn expand_one(
    name: &str,
    args: &mut Vec<Node>,
    annots: &[String],
    span: Span,
) -> Result<Option<Expanded>, MacroError> {
    let arity = |expected: usize, args: &Vec<Node>| -> Result<(), MacroError> {
        if args.len() == expected {
            Ok(())
        } else {
            Err(MacroError::Arity {
                name: name.to_string(),
                span,
            })
        }
    };
    let plain = |node: Node| {
        Ok(Some(Expanded {
            node,
            splice: false,
        }))
    };
    if let Some(op) = name.strip_prefix("CMP").and_then(comparison) {
        arity(0, args)?;
        return plain(seq(
            vec![
                prim(Prim::I_COMPARE, vec![], span),
                prim_annot(op, vec![], annots.to_vec(), span),
            ],
            span,
        ));
    }
    if let Some(op) = name.strip_prefix("IFCMP").and_then(comparison) {
        arity(2, args)?;
        let (bt, bf) = take2(args);
        return plain(seq(
            vec![
                prim(Prim::I_COMPARE, vec![], span),
                prim(op, vec![], span),
                prim_annot(Prim::I_IF, vec![bt, bf], annots.to_vec(), span),
            ],
            span,
        ));
    }
    if let Some(op) = name.strip_prefix("IF").and_then(comparison) {
        arity(2, args)?;
        let (bt, bf) = take2(args);
        return plain(seq(
            vec![
                prim(op, vec![], span),
                prim_annot(Prim::I_IF, vec![bt, bf], annots.to_vec(), span),
            ],
            span,
        ));
    }
    if let Some(op) = name.strip_prefix("ASSERT_CMP").and_then(comparison) {
        arity(0, args)?;
        return plain(seq(
            vec![
                seq(
                    vec![prim(Prim::I_COMPARE, vec![], span), prim(op, vec![], span)],
                    span,
                ),
                assertion(Prim::I_IF, false, span),
            ],
            span,
        ));
    }
    if let Some(op) = name.strip_prefix("ASSERT_").and_then(comparison) {
        arity(0, args)?;
        return plain(seq(
            vec![prim(op, vec![], span), assertion(Prim::I_IF, false, span)],
            span,
        ));
    }
    if let Some(&(_, branching, fail_first)) = ASSERTIONS.iter().find(|(n, ..)| *n == name) {
        arity(0, args)?;
        return plain(seq(vec![assertion(branching, fail_first, span)], span));
    }
    if let Some(&(_, branching)) = SWAPPED_BRANCHES.iter().find(|(n, _)| *n == name) {
        arity(2, args)?;
        let (bt, bf) = take2(args);
        return plain(seq(
            vec![prim_annot(branching, vec![bf, bt], annots.to_vec(), span)],
            span,
        ));
    }
    if name == "FAIL" {
        arity(0, args)?;
        return plain(fail(span));
    }
    let bytes = name.as_bytes();
    let len = bytes.len();
    // DUU+P: DUP n.
    if let Some(depth) = repeated_letter_depth(name, b'D', b'U', b'P') {
        arity(0, args)?;
        return plain(seq(
            vec![prim_annot(
                Prim::I_DUP,
                vec![int(depth, span)],
                annots.to_vec(),
                span,
            )],
            span,
        ));
    }
    // DII+P code: DIP n code.
    if let Some(depth) = repeated_letter_depth(name, b'D', b'I', b'P') {
        arity(1, args)?;
        let code = args.pop().unwrap_or_else(|| seq(vec![], span));
        return plain(seq(
            vec![prim_annot(
                Prim::I_DIP,
                vec![int(depth, span), code],
                annots.to_vec(),
                span,
            )],
            span,
        ));
    }
    // C[AD]+R.
    if len > 3
        && bytes[0] == b'C'
        && bytes[len - 1] == b'R'
        && bytes[1..len - 1].iter().all(|&b| b == b'A' || b == b'D')
    {
        arity(0, args)?;
        let path = &bytes[1..len - 1];
        let items = path
            .iter()
            .enumerate()
            .map(|(index, &b)| {
                let op = if b == b'A' { Prim::I_CAR } else { Prim::I_CDR };
                // The macro's annotations go on the last access.
                let annots = if index + 1 == path.len() {
                    annots.to_vec()
                } else {
                    Vec::new()
                };
                prim_annot(op, vec![], annots, span)
            })
            .collect();
        return plain(seq(items, span));
    }
    // P[AIP]+R and UNP[AIP]+R.
    if len > 4 && name.ends_with('R') {
        let (unpair, body) = match name.strip_prefix("UN") {
            Some(rest) => (true, rest),
            None => (false, name),
        };
        if body.starts_with('P')
            && body.len() > 3
            && body[1..body.len() - 1]
                .bytes()
                .all(|b| matches!(b, b'P' | b'A' | b'I'))
        {
            if let Some(tree) = parse_pair_tree(body.as_bytes()) {
                arity(0, args)?;
                let mut out = Vec::new();
                if unpair {
                    emit_unpair(&tree, 0, &mut out, span);
                } else {
                    let fields: Vec<String> = annots
                        .iter()
                        .filter(|a| a.starts_with('%'))
                        .cloned()
                        .collect();
                    let others: Vec<String> = annots
                        .iter()
                        .filter(|a| !a.starts_with('%'))
                        .cloned()
                        .collect();
                    let mut next_leaf = 0;
                    emit_pair(&tree, 0, &mut out, span, &fields, &mut next_leaf, &others);
                }
                return plain(seq(out, span));
            }
        }
    }
    // SET_C[AD]+R and MAP_C[AD]+R.
    if let Some(path) = name
        .strip_prefix("SET_C")
        .and_then(|rest| rest.strip_suffix('R'))
    {
        if !path.is_empty() && path.bytes().all(|b| b == b'A' || b == b'D') {
            arity(0, args)?;
            let field = annots.iter().find_map(|a| a.strip_prefix('%'));
            let vars: Vec<String> = annots
                .iter()
                .filter(|a| !a.starts_with('%'))
                .cloned()
                .collect();
            return plain(expand_set_cxr(path.as_bytes(), span, field, &vars));
        }
    }
    if let Some(path) = name
        .strip_prefix("MAP_C")
        .and_then(|rest| rest.strip_suffix('R'))
    {
        if !path.is_empty() && path.bytes().all(|b| b == b'A' || b == b'D') {
            arity(1, args)?;
            let code = args.pop().unwrap_or_else(|| seq(vec![], span));
            let field = annots.iter().find_map(|a| a.strip_prefix('%'));
            let vars: Vec<String> = annots
                .iter()
                .filter(|a| !a.starts_with('%'))
                .cloned()
                .collect();
            return plain(expand_map_cxr(path.as_bytes(), code, span, field, &vars));
        }
    }
    Ok(None)
}

fn take2(args: &mut Vec<Node>) -> (Node, Node) {
    let second = args.pop();
    let first = args.pop();
    let empty = || Node::seq(vec![]);
    (first.unwrap_or_else(empty), second.unwrap_or_else(empty))
}

/// A `P[AIP]+R` tree: `None` for a leaf.
enum PairTree {
    Leaf,
    Node(Box<PairTree>, Box<PairTree>),
}

impl PairTree {
    fn leaves(&self) -> usize {
        match self {
            PairTree::Leaf => 1,
            PairTree::Node(left, right) => left.leaves() + right.leaves(),
        }
    }
}

/// Parses `P left right ... R`, where `left` is `A` or a pair and `right` is `I` or a pair.
fn parse_pair_tree(name: &[u8]) -> Option<PairTree> {
    let inner = &name[..name.len() - 1];
    // Each `P` opens a node; the name is short (bounded by the identifier), recursion is bounded.
    fn parse(bytes: &[u8], index: &mut usize, is_left: bool, depth: usize) -> Option<PairTree> {
        if depth > 64 {
            return None;
        }
        let b = *bytes.get(*index)?;
        *index += 1;
        match b {
            b'A' if is_left => Some(PairTree::Leaf),
            b'I' if !is_left => Some(PairTree::Leaf),
            b'P' => {
                let left = parse(bytes, index, true, depth + 1)?;
                let right = parse(bytes, index, false, depth + 1)?;
                Some(PairTree::Node(Box::new(left), Box::new(right)))
            }
            _ => None,
        }
    }
    let mut index = 0;
    // The root is a pair.
    if inner.first() != Some(&b'P') {
        return None;
    }
    let tree = parse(inner, &mut index, true, 0)?;
    if index != inner.len() {
        return None;
    }
    match tree {
        PairTree::Leaf => None,
        tree => Some(tree),
    }
}

fn dip(depth: usize, code: Vec<Node>, span: Span) -> Node {
    if depth == 1 {
        prim(Prim::I_DIP, vec![seq(code, span)], span)
    } else {
        prim(Prim::I_DIP, vec![int(depth, span), seq(code, span)], span)
    }
}

fn at_depth(depth: usize, instr: Node, span: Span) -> Node {
    if depth == 0 {
        instr
    } else {
        dip(depth, vec![instr], span)
    }
}

/// Emits the `PAIR`s building `tree` at stack depth `depth`: the right subtree first (below the
/// left one's leaves), then the left, then the node (Octez's order). Field annotations name the
/// leaves left to right; a `PAIR` carries those of its leaf children (`%` for an unnamed left),
/// and the root also carries the macro's other annotations.
fn emit_pair(
    tree: &PairTree,
    depth: usize,
    out: &mut Vec<Node>,
    span: Span,
    fields: &[String],
    next_leaf: &mut usize,
    root_annots: &[String],
) {
    let PairTree::Node(left, right) = tree else {
        return;
    };
    let first_leaf = *next_leaf;
    let left_leaves = left.leaves();
    let mut right_start = first_leaf + left_leaves;
    emit_pair(
        right,
        depth + left_leaves,
        out,
        span,
        fields,
        &mut right_start,
        &[],
    );
    let mut left_start = first_leaf;
    emit_pair(left, depth, out, span, fields, &mut left_start, &[]);
    *next_leaf = first_leaf + tree.leaves();
    let field = |index: usize| fields.get(index).cloned();
    let left_annot = if matches!(**left, PairTree::Leaf) {
        field(first_leaf)
    } else {
        None
    };
    let right_annot = if matches!(**right, PairTree::Leaf) {
        field(first_leaf + left_leaves)
    } else {
        None
    };
    let mut node_annots = Vec::new();
    match (left_annot, right_annot) {
        (Some(l), Some(r)) => {
            node_annots.push(l);
            node_annots.push(r);
        }
        (Some(l), None) => node_annots.push(l),
        (None, Some(r)) => {
            node_annots.push("%".to_string());
            node_annots.push(r);
        }
        (None, None) => {}
    }
    node_annots.extend(root_annots.iter().cloned());
    out.push(at_depth(
        depth,
        prim_annot(Prim::I_PAIR, vec![], node_annots, span),
        span,
    ));
}

/// Emits the `UNPAIR`s taking `tree` apart at depth `depth`: the node, then the left subtree,
/// then the right one below the left one's leaves.
fn emit_unpair(tree: &PairTree, depth: usize, out: &mut Vec<Node>, span: Span) {
    if let PairTree::Node(left, right) = tree {
        out.push(at_depth(depth, prim(Prim::I_UNPAIR, vec![], span), span));
        emit_unpair(left, depth, out, span);
        emit_unpair(right, depth + left.leaves(), out, span);
    }
}

/// A primitive without arguments with `annots`.
fn pa(name: Prim, annots: Vec<String>, span: Span) -> Node {
    prim_annot(name, vec![], annots, span)
}

fn annotated(name: Prim, annots: &[&str], span: Span) -> Node {
    prim_annot(
        name,
        vec![],
        annots.iter().map(|a| a.to_string()).collect(),
        span,
    )
}

/// `SET_C[AD]+R`, as Octez expands it (with its `@%%` / `%@` annotations). `field` is the
/// macro's field annotation (checked on the replaced value), `vars` its other annotations, put on
/// the outermost `PAIR`.
fn expand_set_cxr(path: &[u8], span: Span, field: Option<&str>, vars: &[String]) -> Node {
    let with_vars = |mut annots: Vec<String>, outermost: bool| {
        if outermost {
            annots.extend(vars.iter().cloned());
        }
        annots
    };
    let own = |a: &str| a.to_string();
    let outermost = true;
    match path {
        [b'A'] => match field {
            None => seq(
                vec![
                    annotated(Prim::I_CDR, &["@%%"], span),
                    prim(Prim::I_SWAP, vec![], span),
                    pa(
                        Prim::I_PAIR,
                        with_vars(vec![own("%"), own("%@")], outermost),
                        span,
                    ),
                ],
                span,
            ),
            Some(f) => seq(
                vec![
                    prim(Prim::I_DUP, vec![], span),
                    pa(Prim::I_CAR, vec![format!("%{f}")], span),
                    prim(Prim::I_DROP, vec![], span),
                    annotated(Prim::I_CDR, &["@%%"], span),
                    prim(Prim::I_SWAP, vec![], span),
                    pa(
                        Prim::I_PAIR,
                        with_vars(vec![format!("%{f}"), own("%@")], outermost),
                        span,
                    ),
                ],
                span,
            ),
        },
        [b'D'] => match field {
            None => seq(
                vec![
                    annotated(Prim::I_CAR, &["@%%"], span),
                    pa(
                        Prim::I_PAIR,
                        with_vars(vec![own("%@"), own("%")], outermost),
                        span,
                    ),
                ],
                span,
            ),
            Some(f) => seq(
                vec![
                    prim(Prim::I_DUP, vec![], span),
                    pa(Prim::I_CDR, vec![format!("%{f}")], span),
                    prim(Prim::I_DROP, vec![], span),
                    annotated(Prim::I_CAR, &["@%%"], span),
                    pa(
                        Prim::I_PAIR,
                        with_vars(vec![own("%@"), format!("%{f}")], outermost),
                        span,
                    ),
                ],
                span,
            ),
        },
        [first, rest @ ..] => {
            let inner = expand_set_cxr(rest, span, field, &[]);
            let pair = pa(
                Prim::I_PAIR,
                with_vars(vec![own("%@"), own("%@")], outermost),
                span,
            );
            descend_cxr(*first, inner, pair, span)
        }
        [] => seq(vec![], span),
    }
}

/// One inner step of `SET_C[AD]+R` and `MAP_C[AD]+R`: open the pair on the side `first`
/// names (`A` for the left), rewrite that side with `inner` under a `DIP`, and rebuild the
/// pair with `pair` (which carries the field annotations).
fn descend_cxr(first: u8, inner: Node, pair: Node, span: Span) -> Node {
    let (open, keep) = if first == b'A' {
        (Prim::I_CAR, Prim::I_CDR)
    } else {
        (Prim::I_CDR, Prim::I_CAR)
    };
    let mut items = vec![
        prim(Prim::I_DUP, vec![], span),
        dip(1, vec![annotated(open, &["@%%"], span), inner], span),
        annotated(keep, &["@%%"], span),
    ];
    // The rewritten left half must go back under the untouched right one.
    if first == b'A' {
        items.push(prim(Prim::I_SWAP, vec![], span));
    }
    items.push(pair);
    seq(items, span)
}

/// `MAP_C[AD]+R code`, as Octez expands it; `field` and `vars` as for [`expand_set_cxr`].
fn expand_map_cxr(
    path: &[u8],
    code: Node,
    span: Span,
    field: Option<&str>,
    vars: &[String],
) -> Node {
    let with_vars = |mut annots: Vec<String>| {
        annots.extend(vars.iter().cloned());
        annots
    };
    let own = |a: &str| a.to_string();
    let field_annot = || field.map(|f| format!("%{f}")).unwrap_or_else(|| own("%"));
    let value_var = || field.map(|f| vec![format!("@{f}")]).unwrap_or_default();
    match path {
        [b'A'] => seq(
            vec![
                prim(Prim::I_DUP, vec![], span),
                annotated(Prim::I_CDR, &["@%%"], span),
                dip(1, vec![pa(Prim::I_CAR, value_var(), span), code], span),
                prim(Prim::I_SWAP, vec![], span),
                pa(
                    Prim::I_PAIR,
                    with_vars(vec![field_annot(), own("%@")]),
                    span,
                ),
            ],
            span,
        ),
        [b'D'] => seq(
            vec![
                prim(Prim::I_DUP, vec![], span),
                pa(Prim::I_CDR, value_var(), span),
                code,
                prim(Prim::I_SWAP, vec![], span),
                annotated(Prim::I_CAR, &["@%%"], span),
                pa(
                    Prim::I_PAIR,
                    with_vars(vec![own("%@"), field_annot()]),
                    span,
                ),
            ],
            span,
        ),
        [first, rest @ ..] => {
            let inner = expand_map_cxr(rest, code, span, field, &[]);
            let pair = pa(Prim::I_PAIR, with_vars(vec![own("%@"), own("%@")]), span);
            descend_cxr(*first, inner, pair, span)
        }
        [] => code,
    }
}

/// `CAR k` / `CDR k`: `GET (2k+1)` / `GET 2k`.
fn expand_car_cdr_n(name: Prim, args: &[Node], span: Span) -> Option<Node> {
    let [arg] = args else { return None };
    let NodeKind::Int(k) = &arg.kind else {
        return None;
    };
    let k = usize::try_from(k).ok()?;
    let index = if name == Prim::I_CAR {
        k.checked_mul(2)?.checked_add(1)?
    } else {
        k.checked_mul(2)?
    };
    Some(seq(
        vec![prim(Prim::I_GET, vec![int(index, span)], span)],
        span,
    ))
}

/// Whether `node` holds anything [`expand_all`] could rewrite: a primitive outside the table
/// (a macro, or a name the typechecker will refuse) or `CAR k` / `CDR k`.
fn may_hold_macros(node: &Node) -> bool {
    // Whole argument lists are kept pending (one entry per application or sequence), inline
    // for ordinary depths: every script typechecked is scanned.
    let mut pending: crate::types::WorkStack<&[Node]> =
        smallvec::smallvec![std::slice::from_ref(node)];
    while let Some(nodes) = pending.pop() {
        for node in nodes {
            match &node.kind {
                NodeKind::Prim { name, args, .. } => {
                    if matches!(name, PrimName::Other(_))
                        || (matches!(name, PrimName::Known(Prim::I_CAR | Prim::I_CDR))
                            && args.len() == 1)
                    {
                        return true;
                    }
                    if !args.is_empty() {
                        pending.push(args);
                    }
                }
                NodeKind::Seq(items) if !items.is_empty() => pending.push(items),
                _ => {}
            }
        }
    }
    false
}

/// Expands every macro in `node`, which is code (an instruction or a sequence). Code without
/// macros (most compiled contracts) is returned as it is, not copied.
pub fn expand_all(node: &Node) -> Result<Cow<'_, Node>, MacroError> {
    if may_hold_macros(node) {
        expand_all_copying(node).map(Cow::Owned)
    } else {
        Ok(Cow::Borrowed(node))
    }
}

/// [`expand_all`] on code that may hold macros: builds the expanded copy.
fn expand_all_copying(node: &Node) -> Result<Node, MacroError> {
    enum Frame<'a> {
        Enter(&'a Node),
        Exit(&'a Node, usize),
    }
    let mut work = vec![Frame::Enter(node)];
    let mut results: Vec<Expanded> = Vec::new();
    while let Some(frame) = work.pop() {
        match frame {
            Frame::Enter(n) => match &n.kind {
                NodeKind::Prim { args, .. } => {
                    work.push(Frame::Exit(n, results.len()));
                    for arg in args.iter().rev() {
                        work.push(Frame::Enter(arg));
                    }
                }
                NodeKind::Seq(items) => {
                    work.push(Frame::Exit(n, results.len()));
                    for item in items.iter().rev() {
                        work.push(Frame::Enter(item));
                    }
                }
                _ => results.push(Expanded {
                    node: n.clone(),
                    splice: false,
                }),
            },
            Frame::Exit(n, start) => {
                let children: Vec<Expanded> = results.drain(start..).collect();
                match &n.kind {
                    NodeKind::Seq(_) => {
                        let mut items = Vec::with_capacity(children.len());
                        for child in children {
                            if child.splice {
                                let mut node = child.node;
                                if let NodeKind::Seq(inner) = &mut node.kind {
                                    items.append(inner);
                                    continue;
                                }
                                // Unreachable: only sequences are marked for splicing.
                                continue;
                            }
                            items.push(child.node);
                        }
                        results.push(Expanded {
                            node: seq(items, n.span),
                            splice: false,
                        });
                    }
                    NodeKind::Prim { name, annots, .. } => {
                        let mut args: Vec<Node> = children.into_iter().map(|c| c.node).collect();
                        let expanded = match name {
                            PrimName::Other(text) => expand_one(text, &mut args, annots, n.span)?,
                            PrimName::Known(p @ (Prim::I_CAR | Prim::I_CDR)) if args.len() == 1 => {
                                expand_car_cdr_n(*p, &args, n.span).map(|node| Expanded {
                                    node,
                                    splice: false,
                                })
                            }
                            PrimName::Known(_) => None,
                        };
                        match expanded {
                            Some(expanded) => results.push(expanded),
                            None => results.push(Expanded {
                                node: Node {
                                    kind: NodeKind::Prim {
                                        name: name.clone(),
                                        args,
                                        annots: annots.clone(),
                                    },
                                    span: n.span,
                                },
                                splice: false,
                            }),
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(results
        .pop()
        .map(|e| e.node)
        .unwrap_or_else(|| Node::seq(vec![])))
}
