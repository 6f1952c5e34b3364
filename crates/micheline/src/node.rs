//! Micheline nodes: integers, strings, bytes, primitive applications and sequences, each with the
//! source span it was read from.
//!
//! Input controls the depth of a node tree, so nothing here recurses on depth: `Drop`, `Clone`,
//! `PartialEq` and `Debug` walk the tree with explicit stacks (DESIGN.md, "No host recursion").

use crate::prim::{Prim, PrimName};
use num_bigint::BigInt;
use std::fmt;

/// A byte range `[start, end)` of the source a node was read from; `Span::NONE` for built nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span of a node built in code rather than read from text.
    pub const NONE: Span = Span { start: 0, end: 0 };

    /// A span from `start` to `end` byte offsets (saturating at `u32::MAX`).
    pub fn new(start: usize, end: usize) -> Span {
        let clamp = |offset: usize| u32::try_from(offset).unwrap_or(u32::MAX);
        Span {
            start: clamp(start),
            end: clamp(end),
        }
    }

    /// The 1-based line and 0-based column (in characters) of the span's start in `source`.
    pub fn line_column(&self, source: &str) -> (usize, usize) {
        position_of(source, self.start as usize)
    }

    /// The span in the words of Octez's `Micheline_parser.print_location`: `At line L characters
    /// A to B`, `At line L character A` when it is empty, `From line L character A to line M
    /// character B` when it spans lines.
    pub fn location_text(&self, source: &str) -> String {
        let (start_line, start_column) = position_of(source, self.start as usize);
        let (stop_line, stop_column) = position_of(source, self.end as usize);
        if start_line != stop_line {
            format!(
                "From line {start_line} character {start_column} to line {stop_line} character {stop_column}"
            )
        } else if start_column == stop_column {
            format!("At line {start_line} character {start_column}")
        } else {
            format!("At line {start_line} characters {start_column} to {stop_column}")
        }
    }
}

/// The 1-based line and 0-based character column of byte `offset` in `source`.
pub fn position_of(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or(source);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count();
    (line, column)
}

/// What a node is.
pub enum NodeKind {
    /// An arbitrary-precision integer.
    Int(BigInt),
    /// A string (Michelson restricts the characters; Micheline does not).
    String(String),
    /// A byte sequence.
    Bytes(Vec<u8>),
    /// A primitive applied to arguments, with annotations (`@x`, `:t`, `%f`, kept with their sigil).
    Prim {
        /// The primitive's name.
        name: PrimName,
        /// The arguments, in order.
        args: Vec<Node>,
        /// The annotations, in order, each with its leading `@`, `:` or `%`.
        annots: Vec<String>,
    },
    /// A sequence `{ a ; b ; ... }`.
    Seq(Vec<Node>),
}

/// A Micheline node: what it is and where it came from.
pub struct Node {
    /// The node's content.
    pub kind: NodeKind,
    /// Where in the source text it was read (or [`Span::NONE`]).
    pub span: Span,
}

impl Node {
    /// A node of `kind` with no source span.
    pub fn new(kind: NodeKind) -> Node {
        Node {
            kind,
            span: Span::NONE,
        }
    }

    /// An integer node.
    pub fn int(value: impl Into<BigInt>) -> Node {
        Node::new(NodeKind::Int(value.into()))
    }

    /// A string node.
    pub fn string(value: impl Into<String>) -> Node {
        Node::new(NodeKind::String(value.into()))
    }

    /// A bytes node.
    pub fn bytes(value: impl Into<Vec<u8>>) -> Node {
        Node::new(NodeKind::Bytes(value.into()))
    }

    /// A primitive application without annotations.
    pub fn prim(name: impl Into<PrimName>, args: Vec<Node>) -> Node {
        Node::new(NodeKind::Prim {
            name: name.into(),
            args,
            annots: Vec::new(),
        })
    }

    /// A sequence node.
    pub fn seq(items: Vec<Node>) -> Node {
        Node::new(NodeKind::Seq(items))
    }

    /// This node with `span`.
    pub fn with_span(mut self, span: Span) -> Node {
        self.span = span;
        self
    }

    /// The node's children: a primitive's arguments or a sequence's items; empty for leaves.
    pub fn children(&self) -> &[Node] {
        match &self.kind {
            NodeKind::Prim { args, .. } => args,
            NodeKind::Seq(items) => items,
            _ => &[],
        }
    }

    /// The table primitive at the head of this node, if it is an application of one.
    pub fn known_prim(&self) -> Option<Prim> {
        match &self.kind {
            NodeKind::Prim { name, .. } => name.known(),
            _ => None,
        }
    }

    /// Takes the children out of this node, leaving it childless.
    fn take_children(&mut self) -> Vec<Node> {
        match &mut self.kind {
            NodeKind::Prim { args, .. } => std::mem::take(args),
            NodeKind::Seq(items) => std::mem::take(items),
            _ => Vec::new(),
        }
    }

    /// A copy of this node without children, to be given `children` (used by `Clone`).
    fn shallow_copy(&self, children: Vec<Node>) -> Node {
        let kind = match &self.kind {
            NodeKind::Int(value) => NodeKind::Int(value.clone()),
            NodeKind::String(value) => NodeKind::String(value.clone()),
            NodeKind::Bytes(value) => NodeKind::Bytes(value.clone()),
            NodeKind::Prim { name, annots, .. } => NodeKind::Prim {
                name: name.clone(),
                args: children,
                annots: annots.clone(),
            },
            NodeKind::Seq(_) => NodeKind::Seq(children),
        };
        Node {
            kind,
            span: self.span,
        }
    }

    /// Whether the two nodes are equal ignoring their children (and spans).
    fn shallow_eq(&self, other: &Node) -> bool {
        match (&self.kind, &other.kind) {
            (NodeKind::Int(a), NodeKind::Int(b)) => a == b,
            (NodeKind::String(a), NodeKind::String(b)) => a == b,
            (NodeKind::Bytes(a), NodeKind::Bytes(b)) => a == b,
            (
                NodeKind::Prim {
                    name: name_a,
                    args: args_a,
                    annots: annots_a,
                },
                NodeKind::Prim {
                    name: name_b,
                    args: args_b,
                    annots: annots_b,
                },
            ) => name_a == name_b && annots_a == annots_b && args_a.len() == args_b.len(),
            (NodeKind::Seq(a), NodeKind::Seq(b)) => a.len() == b.len(),
            _ => false,
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let mut pending = self.take_children();
        while let Some(mut node) = pending.pop() {
            pending.append(&mut node.take_children());
            // `node` now has no children, so dropping it here does not recurse.
        }
    }
}

impl Clone for Node {
    fn clone(&self) -> Node {
        struct Frame<'a> {
            source: &'a Node,
            next_child_index: usize,
            built_children: Vec<Node>,
        }
        let mut stack = vec![Frame {
            source: self,
            next_child_index: 0,
            built_children: Vec::with_capacity(self.children().len()),
        }];
        loop {
            let Some(top) = stack.last_mut() else {
                unreachable!("the clone stack holds the root until it is returned")
            };
            let children = top.source.children();
            if let Some(child) = children.get(top.next_child_index) {
                top.next_child_index += 1;
                stack.push(Frame {
                    source: child,
                    next_child_index: 0,
                    built_children: Vec::with_capacity(child.children().len()),
                });
                continue;
            }
            let Some(frame) = stack.pop() else {
                unreachable!("the top frame was just inspected")
            };
            let built = frame.source.shallow_copy(frame.built_children);
            match stack.last_mut() {
                Some(parent) => parent.built_children.push(built),
                None => return built,
            }
        }
    }
}

impl PartialEq for Node {
    /// Structural equality; spans are ignored.
    fn eq(&self, other: &Node) -> bool {
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            if !a.shallow_eq(b) {
                return false;
            }
            pending.extend(a.children().iter().zip(b.children()));
        }
        true
    }
}

impl Eq for Node {}

impl fmt::Debug for Node {
    /// A compact one-line form (`Prim(name [annots] args)`, `Seq[...]`), written without recursion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Step<'a> {
            Open(&'a Node),
            Text(&'static str),
        }
        let mut steps = vec![Step::Open(self)];
        while let Some(step) = steps.pop() {
            let node = match step {
                Step::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Step::Open(node) => node,
            };
            match &node.kind {
                NodeKind::Int(value) => write!(f, "Int({value})")?,
                NodeKind::String(value) => write!(f, "String({value:?})")?,
                NodeKind::Bytes(value) => {
                    f.write_str("Bytes(0x")?;
                    for byte in value {
                        write!(f, "{byte:02x}")?;
                    }
                    f.write_str(")")?;
                }
                NodeKind::Prim { name, args, annots } => {
                    write!(f, "Prim({}", name.as_str())?;
                    for annot in annots {
                        write!(f, " {annot}")?;
                    }
                    steps.push(Step::Text(")"));
                    for arg in args.iter().rev() {
                        steps.push(Step::Open(arg));
                        steps.push(Step::Text(" "));
                    }
                }
                NodeKind::Seq(items) => {
                    f.write_str("Seq[")?;
                    steps.push(Step::Text("]"));
                    for (index, item) in items.iter().enumerate().rev() {
                        steps.push(Step::Open(item));
                        if index > 0 {
                            steps.push(Step::Text(", "));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(depth: usize) -> Node {
        let mut node = Node::int(0);
        for _ in 0..depth {
            node = Node::prim(Prim::D_Some, vec![node]);
        }
        node
    }

    #[test]
    fn deep_trees_clone_compare_debug_and_drop_without_recursion() {
        let tree = deep(100_000);
        let copy = tree.clone();
        assert_eq!(tree, copy);
        let text = format!("{copy:?}");
        assert!(text.starts_with("Prim(Some Prim(Some"));
        assert!(text.ends_with(&format!("Int(0){}", ")".repeat(100_000))));
        drop(tree);
        drop(copy);
    }

    #[test]
    fn equality_ignores_spans_but_not_annotations() {
        let a = Node::prim(Prim::I_DROP, vec![]).with_span(Span::new(1, 5));
        let b = Node::prim(Prim::I_DROP, vec![]);
        assert_eq!(a, b);
        let c = Node::new(NodeKind::Prim {
            name: Prim::I_DROP.into(),
            args: vec![],
            annots: vec!["@x".into()],
        });
        assert_ne!(a, c);
    }
}
