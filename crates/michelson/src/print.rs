//! A one-line Micheline printer for messages and reports (`Pair 1 (Some "a")`, `{ 1 ; 2 }`).
//! It walks the tree with an explicit stack.

use kestrel_micheline::{Node, NodeKind};
use std::fmt::Write;

/// Prints `node` on one line, with parentheses around nested applications that have arguments
/// or annotations.
pub fn node_to_string(node: &Node) -> String {
    enum Task<'a> {
        Node(&'a Node, bool),
        Text(&'static str),
    }
    let mut out = String::new();
    let mut tasks = vec![Task::Node(node, false)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(text) => out.push_str(text),
            Task::Node(n, nested) => match &n.kind {
                NodeKind::Int(value) => {
                    let _ = write!(out, "{value}");
                }
                NodeKind::String(value) => {
                    out.push('"');
                    for c in value.chars() {
                        match c {
                            '"' => out.push_str("\\\""),
                            '\\' => out.push_str("\\\\"),
                            '\n' => out.push_str("\\n"),
                            '\r' => out.push_str("\\r"),
                            '\t' => out.push_str("\\t"),
                            c => out.push(c),
                        }
                    }
                    out.push('"');
                }
                NodeKind::Bytes(bytes) => {
                    out.push_str("0x");
                    for b in bytes {
                        let _ = write!(out, "{b:02x}");
                    }
                }
                NodeKind::Seq(items) => {
                    if items.is_empty() {
                        out.push_str("{}");
                        continue;
                    }
                    out.push_str("{ ");
                    tasks.push(Task::Text(" }"));
                    for (index, item) in items.iter().enumerate().rev() {
                        tasks.push(Task::Node(item, false));
                        if index > 0 {
                            tasks.push(Task::Text(" ; "));
                        }
                    }
                }
                NodeKind::Prim { name, args, annots } => {
                    let wrap = nested && (!args.is_empty() || !annots.is_empty());
                    if wrap {
                        out.push('(');
                        tasks.push(Task::Text(")"));
                    }
                    out.push_str(name.as_str());
                    for annot in annots {
                        out.push(' ');
                        out.push_str(annot);
                    }
                    for arg in args.iter().rev() {
                        tasks.push(Task::Node(arg, true));
                        tasks.push(Task::Text(" "));
                    }
                }
            },
        }
    }
    out
}
