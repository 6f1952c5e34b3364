//! Entrypoints: the field annotations on the `or` tree of a parameter type
//! (`specs/michelson.rst`, "Entrypoints"). `default` is the whole parameter unless a branch is
//! named `%default`.

use crate::types::{parse_type, Type};
use kestrel_micheline::{Node, NodeKind, Prim};

fn field(node: &Node) -> Option<&str> {
    match &node.kind {
        NodeKind::Prim { annots, .. } => annots.iter().find_map(|a| a.strip_prefix('%')),
        _ => None,
    }
}

fn or_args(node: &Node) -> Option<&[Node]> {
    match &node.kind {
        NodeKind::Prim { name, args, .. }
            if name.known() == Some(Prim::T_or) && args.len() == 2 =>
        {
            Some(args)
        }
        _ => None,
    }
}

/// Every named entrypoint: name and node.
pub fn all(param: &Node) -> Vec<(&str, &Node)> {
    let mut found = Vec::new();
    let mut pending = vec![param];
    while let Some(node) = pending.pop() {
        if let Some(name) = field(node) {
            found.push((name, node));
        }
        if let Some(args) = or_args(node) {
            pending.push(&args[1]);
            pending.push(&args[0]);
        }
    }
    found
}

/// The type of entrypoint `name` of a parameter type.
pub fn find(param: &Node, name: &str) -> Option<Type> {
    for (entry, node) in all(param) {
        if entry == name {
            return parse_type(node).ok();
        }
    }
    if name == "default" || name.is_empty() {
        return parse_type(param).ok();
    }
    None
}

/// Checks entrypoint names are unique and valid.
pub fn check(param: &Node) -> Result<(), String> {
    let entries = all(param);
    for (index, (name, _)) in entries.iter().enumerate() {
        if name.len() > crate::literals::MAX_ENTRYPOINT_LENGTH {
            return Err(format!("entrypoint name too long: {name}"));
        }
        if entries[..index].iter().any(|(other, _)| other == name) {
            return Err(format!("duplicate entrypoint {name}"));
        }
    }
    Ok(())
}

/// The type of entrypoint `name` and the path to it through the `or` tree (`true` = `Left`).
pub fn find_with_path(param: &Node, name: &str) -> Option<(Type, Vec<bool>)> {
    let mut pending: Vec<(&Node, Vec<bool>)> = vec![(param, Vec::new())];
    while let Some((node, path)) = pending.pop() {
        if field(node) == Some(name) {
            return parse_type(node).ok().map(|t| (t, path));
        }
        if let Some(args) = or_args(node) {
            let mut right = path.clone();
            right.push(false);
            pending.push((&args[1], right));
            let mut left = path;
            left.push(true);
            pending.push((&args[0], left));
        }
    }
    if name == "default" || name.is_empty() {
        return parse_type(param).ok().map(|t| (t, Vec::new()));
    }
    None
}

/// How many nodes of the parameter's `or` tree Octez's `find_entrypoint` visits looking for
/// `name` (one `find_entrypoint_cycle` each): a depth-first search, left before right, that
/// stops at the node named `name`; when no node has that name, every node of the `or` tree
/// (the `or` nodes and their non-`or` children) is visited.
pub fn search_steps(param: &Node, name: &str) -> u64 {
    let mut visited = 0u64;
    let mut pending = vec![param];
    while let Some(node) = pending.pop() {
        visited += 1;
        if field(node) == Some(name) {
            return visited;
        }
        if let Some(args) = or_args(node) {
            pending.push(&args[1]);
            pending.push(&args[0]);
        }
    }
    visited
}
