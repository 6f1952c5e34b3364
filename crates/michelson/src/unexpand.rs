//! Macros restored in expanded code, as octez-client prints a script
//! (`Michelson_v1_macros.unexpand_rec`): a sequence that is exactly a macro's expansion is
//! printed as the macro (`{ COMPARE ; EQ }` as `CMPEQ`, `{ CAR ; CAR }` as `CAAR`, the
//! `ASSERT_*` forms, `IF_SOME`, `IF_RIGHT`, `FAIL`, `DUP n`, `DIP n`, `CAR n`/`CDR n`). Octez
//! tries its unexpansions in a fixed order at each sequence item, and does not unexpand the
//! root of an instruction's argument (so `DIP { { DUP } }` stays as written).
//!
//! Not restored: `SET_C[AD]+R`, `MAP_C[AD]+R`, `P[AIP]+R` and `UNP[AIP]+R`, whose expansions
//! stay printed expanded.

use kestrel_micheline::{Node, NodeKind, Prim, PrimName};
use num_bigint::BigInt;

/// `code` with every macro expansion Octez recognizes printed as its macro.
pub fn unexpand_macros(code: &Node) -> Node {
    let mut out = code.clone();
    // (node, whether its root may be unexpanded), top-down as `unexpand_rec`.
    let mut pending: Vec<(&mut Node, bool)> = vec![(&mut out, true)];
    while let Some((node, at_root)) = pending.pop() {
        if at_root {
            if let Some(macro_node) = unexpand(node) {
                *node = macro_node;
            }
        }
        match &mut node.kind {
            NodeKind::Seq(items) => pending.extend(items.iter_mut().map(|item| (item, true))),
            NodeKind::Prim { args, .. } => pending.extend(args.iter_mut().map(|arg| (arg, false))),
            _ => {}
        }
    }
    out
}

/// One of Octez's unexpansions: the macro whose expansion a sequence's items are.
type Unexpander = fn(&[Node]) -> Option<Node>;

/// The first unexpansion that applies to `node`, in Octez's order.
fn unexpand(node: &Node) -> Option<Node> {
    let NodeKind::Seq(items) = &node.kind else {
        return None;
    };
    let unexpanders: [Unexpander; 10] = [
        asserts,
        car_n_cdr_n,
        cadr,
        deprecated_dip_n,
        deprecated_dup_n,
        dup_n,
        compare,
        if_some,
        if_right,
        fail,
    ];
    let mut found = unexpanders
        .iter()
        .find_map(|unexpander| unexpander(items))?;
    found.span = node.span;
    Some(found)
}

/// A primitive's name, arguments and annotations.
fn parts(node: &Node) -> Option<(&str, &[Node], &[String])> {
    match &node.kind {
        NodeKind::Prim { name, args, annots } => Some((name.as_str(), args, annots)),
        _ => None,
    }
}

/// Whether `node` is the primitive `name` without arguments or annotations.
fn is_bare(node: &Node, name: &str) -> bool {
    matches!(parts(node), Some((n, [], [])) if n == name)
}

/// The items of a sequence.
fn seq_items(node: &Node) -> Option<&[Node]> {
    match &node.kind {
        NodeKind::Seq(items) => Some(items),
        _ => None,
    }
}

fn named(name: &str, args: Vec<Node>, annots: &[String]) -> Node {
    let mut node = Node::prim(PrimName::new(name), args);
    if let NodeKind::Prim { annots: slot, .. } = &mut node.kind {
        *slot = annots.to_vec();
    }
    node
}

/// `{ { UNIT ; FAILWITH } }`: the failing branch of the `ASSERT` macros.
fn is_fail_branch(node: &Node) -> bool {
    matches!(seq_items(node), Some([inner]) if seq_items(inner).is_some_and(is_fail))
}

/// `UNIT ; FAILWITH`.
fn is_fail(items: &[Node]) -> bool {
    matches!(items, [unit, failwith] if is_bare(unit, "UNIT") && is_bare(failwith, "FAILWITH"))
}

/// `{}` or `{ RENAME @a }`: the other branch of the `ASSERT` macros, and its annotation.
fn pass_branch(node: &Node) -> Option<&[String]> {
    match seq_items(node)? {
        [] => Some(&[]),
        [rename] => match parts(rename)? {
            ("RENAME", [], annots) => Some(annots),
            _ => None,
        },
        _ => None,
    }
}

/// `unexpand_asserts`.
fn asserts(items: &[Node]) -> Option<Node> {
    // The last item branches with an empty (or renaming) branch and a failing one.
    let (last, before) = items.split_last()?;
    let (branching, [left, right], []) = parts(last)? else {
        return None;
    };
    let fail_on_right = is_fail_branch(right);
    let (pass, fail_first) = if fail_on_right {
        (pass_branch(left)?, false)
    } else if is_fail_branch(left) {
        (pass_branch(right)?, true)
    } else {
        return None;
    };
    // `IF`'s passing branch is `{}` itself, not a `RENAME`.
    let empty_pass = matches!(seq_items(if fail_first { right } else { left }), Some([]));
    let name = match (branching, fail_first, before) {
        ("IF", false, []) if empty_pass => "ASSERT".to_string(),
        ("IF", false, [compared]) if empty_pass => match seq_items(compared) {
            Some([compare, op]) if is_bare(compare, "COMPARE") && parts(op)?.1.is_empty() => {
                let (op, _, op_annots) = parts(op)?;
                if !op_annots.is_empty() {
                    return None;
                }
                format!("ASSERT_CMP{op}")
            }
            _ => match parts(compared)? {
                (op, [], []) => format!("ASSERT_{op}"),
                _ => return None,
            },
        },
        ("IF_NONE", false, []) => "ASSERT_NONE".to_string(),
        ("IF_NONE", true, []) => "ASSERT_SOME".to_string(),
        ("IF_LEFT", false, []) => "ASSERT_LEFT".to_string(),
        ("IF_LEFT", true, []) => "ASSERT_RIGHT".to_string(),
        _ => return None,
    };
    Some(named(&name, Vec::new(), pass))
}

/// `unexpand_carn_and_cdrn`: `{ GET n }` as `CAR k` (n = 2k + 1) or `CDR k` (n = 2k).
fn car_n_cdr_n(items: &[Node]) -> Option<Node> {
    let [get] = items else { return None };
    let ("GET", [index], annots) = parts(get)? else {
        return None;
    };
    let NodeKind::Int(n) = &index.kind else {
        return None;
    };
    let two = BigInt::from(2);
    let (half, odd) = (n / &two, n % &two != BigInt::from(0));
    let name = if odd { "CAR" } else { "CDR" };
    Some(named(name, vec![Node::int(half)], annots))
}

/// `unexpand_caddadr`: a sequence of bare `CAR`s and `CDR`s as `C[AD]+R`.
fn cadr(items: &[Node]) -> Option<Node> {
    if items.is_empty() {
        return None;
    }
    let mut name = String::from("C");
    for item in items {
        if is_bare(item, "CAR") {
            name.push('A');
        } else if is_bare(item, "CDR") {
            name.push('D');
        } else {
            return None;
        }
    }
    name.push('R');
    Some(named(&name, Vec::new(), &[]))
}

/// `unexpand_deprecated_dxiiivp`: `{ DIP { DIP ... { DIP code } } }` as `DIP n code`.
fn deprecated_dip_n(items: &[Node]) -> Option<Node> {
    let [outer] = items else { return None };
    let ("DIP", [first], []) = parts(outer)? else {
        return None;
    };
    let nested = |node: &Node| -> Option<Node> {
        match seq_items(node)? {
            [dip] => match parts(dip)? {
                ("DIP", [sub], []) => Some(sub.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    let mut sub = nested(first)?;
    let mut depth = 2u64;
    while let Some(inner) = nested(&sub) {
        sub = inner;
        depth += 1;
    }
    Some(named("DIP", vec![Node::int(depth), sub], &[]))
}

/// `unexpand_deprecated_duuuuup`: `{ DIP { ... { DUP } } ; SWAP }` nested as `DUP n`.
fn deprecated_dup_n(items: &[Node]) -> Option<Node> {
    let mut depth = 1u64;
    let mut current = items;
    loop {
        match current {
            [dup] => {
                let ("DUP", [], annots) = parts(dup)? else {
                    return None;
                };
                return (depth > 1).then(|| named("DUP", vec![Node::int(depth)], annots));
            }
            [dip, swap] if is_bare(swap, "SWAP") => {
                let ("DIP", [inner], []) = parts(dip)? else {
                    return None;
                };
                current = seq_items(inner)?;
                depth += 1;
            }
            _ => return None,
        }
    }
}

/// `unexpand_dupn`: `{ DIP (n - 1) { DUP } ; DIG n }` as `DUP n`.
fn dup_n(items: &[Node]) -> Option<Node> {
    let [dip, dig] = items else { return None };
    let ("DIP", [depth, body], []) = parts(dip)? else {
        return None;
    };
    let ("DIG", [dig_depth], []) = parts(dig)? else {
        return None;
    };
    let (NodeKind::Int(dip_n), NodeKind::Int(dig_n)) = (&depth.kind, &dig_depth.kind) else {
        return None;
    };
    let [dup] = seq_items(body)? else { return None };
    let ("DUP", [], annots) = parts(dup)? else {
        return None;
    };
    (*dip_n == dig_n - BigInt::from(1)).then(|| named("DUP", vec![dig_depth.clone()], annots))
}

/// The comparison instructions the `CMP`, `IF` and `IFCMP` macros name.
const COMPARISONS: [&str; 6] = ["EQ", "NEQ", "LT", "GT", "LE", "GE"];

/// A comparison instruction without arguments: its name and annotations.
fn comparison(node: &Node) -> Option<(&str, &[String])> {
    parts(node).and_then(|(name, args, annots)| {
        (COMPARISONS.contains(&name) && args.is_empty()).then_some((name, annots))
    })
}

/// `unexpand_compare`: `{ COMPARE ; op }`, `{ COMPARE ; op ; IF bt bf }`, `{ op ; IF bt bf }`.
fn compare(items: &[Node]) -> Option<Node> {
    let is_compare = |node: &Node| matches!(parts(node), Some(("COMPARE", [], _)));
    match items {
        [cmp, op] if is_compare(cmp) => {
            let (op, annots) = comparison(op)?;
            Some(named(&format!("CMP{op}"), Vec::new(), annots))
        }
        [cmp, op, branch] if is_compare(cmp) => {
            let (op, _) = comparison(op)?;
            let ("IF", args, annots) = parts(branch)? else {
                return None;
            };
            Some(named(&format!("IFCMP{op}"), args.to_vec(), annots))
        }
        [op, branch] => {
            let (op, _) = comparison(op)?;
            let ("IF", args, annots) = parts(branch)? else {
                return None;
            };
            Some(named(&format!("IF{op}"), args.to_vec(), annots))
        }
        _ => None,
    }
}

/// `{ IF_NONE l r }` as `IF_SOME r l`.
fn if_some(items: &[Node]) -> Option<Node> {
    swapped_branches(items, Prim::I_IF_NONE, "IF_SOME")
}

/// `{ IF_LEFT l r }` as `IF_RIGHT r l`.
fn if_right(items: &[Node]) -> Option<Node> {
    swapped_branches(items, Prim::I_IF_LEFT, "IF_RIGHT")
}

fn swapped_branches(items: &[Node], branching: Prim, name: &str) -> Option<Node> {
    let [only] = items else { return None };
    let (found, [left, right], annots) = parts(only)? else {
        return None;
    };
    (found == branching.name()).then(|| named(name, vec![right.clone(), left.clone()], annots))
}

/// `{ UNIT ; FAILWITH }` as `FAIL`.
fn fail(items: &[Node]) -> Option<Node> {
    is_fail(items).then(|| named("FAIL", Vec::new(), &[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(written: &str) -> String {
        let node = kestrel_micheline::parse::parse_expression(written).expect("parses");
        let expanded = crate::macros::expand_all(&node).expect("expands");
        kestrel_micheline::print::to_text_single_line(&unexpand_macros(&expanded))
    }

    #[test]
    fn macros_come_back_as_written() {
        for (written, printed) in [
            ("{ CMPEQ }", "{ CMPEQ }"),
            ("{ ASSERT_CMPEQ }", "{ ASSERT_CMPEQ }"),
            (
                "{ ASSERT_SOME ; ASSERT_NONE ; ASSERT_LEFT ; ASSERT_RIGHT }",
                "{ ASSERT_SOME ; ASSERT_NONE ; ASSERT_LEFT ; ASSERT_RIGHT }",
            ),
            ("{ ASSERT ; ASSERT_EQ }", "{ ASSERT ; ASSERT_EQ }"),
            ("{ CAAR ; CDAR }", "{ CAAR ; CDAR }"),
            (
                "{ IFCMPLT {} { DROP } ; IFGT {} {} }",
                "{ IFCMPLT {} { DROP } ; IFGT {} {} }",
            ),
            (
                "{ IF_SOME { DROP } {} ; IF_RIGHT {} { DROP } }",
                "{ IF_SOME { DROP } {} ; IF_RIGHT {} { DROP } }",
            ),
            ("{ FAIL }", "{ FAIL }"),
            // Their expansions are already `DIP n` and `DUP n`, which Octez leaves in braces.
            (
                "{ DIIP { DROP } ; DUUUP }",
                "{ { DIP 2 { DROP } } ; { DUP 3 } }",
            ),
            // The expansions of earlier protocols.
            (
                "{ { DIP { DIP { DROP } } } ; { DIP { DUP } ; SWAP } }",
                "{ DIP 2 { DROP } ; DUP 2 }",
            ),
            // An instruction's argument keeps its root: a written `{ { CAR ; CAR } }` body.
            ("{ DIP { CAR ; CAR } }", "{ DIP { CAR ; CAR } }"),
        ] {
            assert_eq!(round_trip(written), printed, "{written}");
        }
    }
}
