//! The Micheline text printer, in octez-client's layout.
//!
//! Octez prints expressions with `Micheline_printer` (lib_micheline/micheline_printer.ml) into a
//! formatter whose margin is effectively unbounded, so the layout never depends on the margin: it
//! depends only on each node's *preformatted size* and uses two kinds of boxes, horizontal (never
//! breaks) and vertical (always breaks). This module reproduces that layout exactly:
//!
//! - The size of a node is: for an int, its decimal length; for a string, its byte length before
//!   escaping; for bytes, `2 + 2 × length`; for an application, the name's length, plus the
//!   annotations' joined length plus 2 if there are any, plus `1 + size` per argument; for a
//!   sequence, `4 + Σ (3 + size)` over its items.
//! - A node whose size is below [`SINGLE_LINE_SIZE_LIMIT`] (80) is printed on one line:
//!   `Pair 1 (Some "x")`, `{ DROP ; UNIT }`.
//! - A larger application with a name (annotations included) of at most 4 characters puts its
//!   first argument after the name and aligns the others under it (`Pair 1` / `     2`); with a
//!   longer name, every argument goes on its own line indented by 2 under the name.
//! - A larger sequence puts each item on its own line aligned after `{ `, with ` ;` at the end of
//!   every item but the last and ` }` after the last.
//! - In the *wrapped* form (Octez's `print_expr`, used for storage and stack elements), every
//!   argument that is an application with arguments or annotations is parenthesised, and so is
//!   the root; the *unwrapped* form (`print_expr_unwrapped`) leaves the root bare.
//!
//! Continuation lines can be shifted right by a fixed indentation, which is what Octez does when
//! it embeds an expression in an outer box (`storage\n  ...`, the `[ ... ]` of a trace stack).
//!
//! Octez's layout indents each nesting level further, so its output grows with the square of the
//! nesting depth (20 KB of left-nested pairs would print 300 MB). Like the OCaml formatter's
//! maximum indentation, continuation lines here never start beyond [`MAX_INDENT_COLUMNS`]: the
//! output is at most a constant factor larger than the input, whatever its shape, and printing
//! takes time linear in the output. [`write_indented_to`] streams the text to any writer, so
//! printing holds only the node and two integers per node, never the whole text.
//!
//! Octez's formatter gives up beyond 99,999 nested boxes or 99,999 columns of indentation (it
//! prints `.` or forces line breaks); this printer does not imitate those degenerate cases: it
//! keeps the same rules at any depth. Nothing here recurses: sizes are computed over a prefix-order
//! array and printing runs on an explicit task stack, so any depth prints (tested at 100,000).

use crate::node::{Node, NodeKind};
use num_traits::ToPrimitive;

/// Nodes whose preformatted size is below this are printed on one line (Micheline_printer's
/// `s < 80` test).
pub const SINGLE_LINE_SIZE_LIMIT: usize = 80;

/// An application whose name (with annotations) is at most this long keeps its first argument on
/// the name's line when it breaks (Micheline_printer's `String.length name <= 4` test).
pub const SHORT_NAME_MAX_LENGTH: usize = 4;

/// No continuation line starts beyond this column (relative to the expression's left edge):
/// deeper boxes reuse it. Far beyond what real values reach (the recorded Octez traces stay
/// under 200 columns); it bounds the output at about this many bytes per line of input, where
/// Octez's layout is quadratic in the depth (OCaml's formatter has the same kind of bound, its
/// maximum indentation).
pub const MAX_INDENT_COLUMNS: usize = 1000;

/// Where the printer writes: a `String` in memory, or a stream through [`write_indented_to`].
pub trait Sink {
    /// Appends `text`.
    fn push_str(&mut self, text: &str);
}

impl Sink for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

/// A [`Sink`] over an `io::Write`, keeping the first write error (later writes are dropped).
struct WriteSink<W: std::io::Write> {
    writer: W,
    error: Option<std::io::Error>,
}

impl<W: std::io::Write> Sink for WriteSink<W> {
    fn push_str(&mut self, text: &str) {
        if self.error.is_none() {
            if let Err(error) = self.writer.write_all(text.as_bytes()) {
                self.error = Some(error);
            }
        }
    }
}

/// A [`Sink`] that counts the bytes written through it (the printer's columns).
struct Counted<'a, S: Sink + ?Sized> {
    inner: &'a mut S,
    written: usize,
}

impl<S: Sink + ?Sized> Sink for Counted<'_, S> {
    fn push_str(&mut self, text: &str) {
        self.inner.push_str(text);
        self.written += text.len();
    }
}

/// Whether the root is parenthesised when it is an application with arguments or annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapping {
    /// `(Pair 1 2)`: Octez's `print_expr`, used for storage values and stack elements.
    Wrapped,
    /// `Pair 1 2`: Octez's `print_expr_unwrapped`, used for scripts and most messages.
    Unwrapped,
}

/// Prints `node` on one line with Octez's spacing (`Pair 1 (Some "x")`, `{ DROP ; UNIT }`),
/// whatever its size; the root is not parenthesised.
pub fn to_text_single_line(node: &Node) -> String {
    let mut out = String::new();
    write_single_line(&mut out, node, Wrapping::Unwrapped);
    out
}

/// Prints `node` exactly as octez-client's `print_expr_unwrapped` does (multi-line when large).
pub fn to_text_indented(node: &Node) -> String {
    let mut out = String::new();
    write_indented(&mut out, node, Wrapping::Unwrapped, 0);
    out
}

/// Prints `node` exactly as octez-client's `print_expr` does: like [`to_text_indented`] but with
/// the root parenthesised when it is an application with arguments or annotations, as in the
/// `storage` section and the stack elements of `run script --trace-stack`.
pub fn to_text_indented_wrapped(node: &Node) -> String {
    let mut out = String::new();
    write_indented(&mut out, node, Wrapping::Wrapped, 0);
    out
}

/// Prints a script (a toplevel sequence such as `parameter ..; storage ..; code ..`) the way
/// `.tz` files are written: each toplevel item in Octez's unwrapped layout, separated by `;` and a
/// newline, the last followed by `;` too. A node that is not a sequence is printed as one item;
/// a sequence whose only item is a sequence is printed braced, so that it parses back unchanged.
pub fn to_script_text(node: &Node) -> String {
    let mut out = String::new();
    let items: &[Node] = match &node.kind {
        NodeKind::Seq(items) => items,
        _ => std::slice::from_ref(node),
    };
    if let [only] = items {
        if matches!(only.kind, NodeKind::Seq(_)) {
            // A toplevel whose only item is a sequence would read back as that sequence's items
            // (see `parse_toplevel`): keep the outer braces so it reads back unchanged.
            write_indented(&mut out, node, Wrapping::Unwrapped, 0);
            out.push('\n');
            return out;
        }
    }
    for item in items {
        write_indented(&mut out, item, Wrapping::Unwrapped, 0);
        out.push_str(";\n");
    }
    out
}

impl std::fmt::Display for Node {
    /// Octez's unwrapped layout, as [`to_text_indented`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_text_indented(self))
    }
}

/// Appends `node` in Octez's layout to `out`. Every line after the first is shifted right by
/// `indent_columns` spaces, as when Octez prints the expression inside a box opened at that
/// column (e.g. 6 for a stack element after `    [ `).
pub fn write_indented(out: &mut String, node: &Node, wrapping: Wrapping, indent_columns: usize) {
    print_into(out, node, wrapping, indent_columns);
}

/// Streams `node` in Octez's layout to `writer` (as [`write_indented`], without building the
/// text in memory), followed by a newline; returns the first write error.
pub fn write_indented_to<W: std::io::Write>(
    writer: W,
    node: &Node,
    wrapping: Wrapping,
    indent_columns: usize,
) -> std::io::Result<()> {
    let mut sink = WriteSink {
        writer: std::io::BufWriter::new(writer),
        error: None,
    };
    print_into(&mut sink, node, wrapping, indent_columns);
    sink.push_str("\n");
    match sink.error {
        Some(error) => Err(error),
        None => std::io::Write::flush(&mut sink.writer),
    }
}

fn print_into<S: Sink + ?Sized>(
    out: &mut S,
    node: &Node,
    wrapping: Wrapping,
    indent_columns: usize,
) {
    let preformat = preformat(node);
    Printer {
        out: Counted {
            inner: out,
            written: 0,
        },
        line_start: 0,
        first_line: true,
        indent_columns,
    }
    .run(node, wrapping, &preformat);
}

/// Prints a stack the way `octez-client run script --trace-stack` does after each
/// `- location: N (...)` line: `[ e1` then every other element on its own line aligned after
/// `[ `, then ` ]`; each element in the wrapped layout; `[  ]` for the empty stack.
/// `indent_columns` is the column where `[` is written (4 in Octez traces), so continuation lines
/// are aligned for that position. The top of the stack is the first element.
pub fn to_trace_stack_text(elements: &[Node], indent_columns: usize) -> String {
    let mut out = String::from("[ ");
    let element_column = indent_columns + 2;
    for (index, element) in elements.iter().enumerate() {
        if index > 0 {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', element_column));
        }
        write_indented(&mut out, element, Wrapping::Wrapped, element_column);
    }
    out.push_str(" ]");
    out
}

/// Appends `node` on one line to `out`.
pub fn write_single_line<S: Sink + ?Sized>(out: &mut S, node: &Node, wrapping: Wrapping) {
    write_single_line_with(out, node, wrapping == Wrapping::Wrapped, &mut Vec::new());
}

/// [`write_single_line`] with a caller-owned task stack, reused across calls by the printer.
fn write_single_line_with<'a, S: Sink + ?Sized>(
    out: &mut S,
    node: &'a Node,
    wrapped: bool,
    tasks: &mut Vec<Task<'a>>,
) {
    tasks.clear();
    tasks.push(Task::Node(node, wrapped));
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(text) => out.push_str(text),
            Task::Node(node, wrapped) => push_single_line_node(out, tasks, node, wrapped),
            Task::Break { .. } | Task::OpenBox | Task::CloseBox => {
                unreachable!("single-line printing schedules no boxes")
            }
        }
    }
}

/// Writes the head of `node` and schedules its children, all on one line.
fn push_single_line_node<'a, S: Sink + ?Sized>(
    out: &mut S,
    tasks: &mut Vec<Task<'a>>,
    node: &'a Node,
    wrapped: bool,
) {
    match &node.kind {
        NodeKind::Prim { name, args, annots } => {
            let parenthesised = wrapped && (!args.is_empty() || !annots.is_empty());
            if parenthesised {
                out.push_str("(");
                tasks.push(Task::Text(")"));
            }
            write_name(out, name.as_str(), annots);
            for arg in args.iter().rev() {
                tasks.push(Task::Node(arg, true));
                tasks.push(Task::Text(" "));
            }
        }
        NodeKind::Seq(items) if items.is_empty() => out.push_str("{}"),
        NodeKind::Seq(items) => {
            out.push_str("{ ");
            tasks.push(Task::Text(" }"));
            for (index, item) in items.iter().enumerate().rev() {
                tasks.push(Task::Node(item, false));
                if index > 0 {
                    tasks.push(Task::Text(" ; "));
                }
            }
        }
        _ => write_leaf(out, node),
    }
}

/// One step of printing.
enum Task<'a> {
    /// Print a node; `true` parenthesises it if it is an application with arguments or annots.
    Node(&'a Node, bool),
    /// Print fixed text.
    Text(&'static str),
    /// Open a vertical box at the current column.
    OpenBox,
    /// Close the innermost vertical box.
    CloseBox,
    /// Start a new line at the innermost box's column plus `offset_columns`.
    Break { offset_columns: usize },
}

struct Printer<'a, S: Sink + ?Sized> {
    out: Counted<'a, S>,
    /// Bytes written before the current line starts (0 on the expression's first line).
    line_start: usize,
    /// Whether the cursor is still on the expression's first line (which has no indentation).
    first_line: bool,
    indent_columns: usize,
}

impl<S: Sink + ?Sized> Printer<'_, S> {
    /// The column of the cursor relative to the expression's own left edge. Octez counts columns
    /// in bytes (its formatter measures strings with `String.length`).
    fn column(&self) -> usize {
        let on_line = self.out.written - self.line_start;
        if self.first_line {
            on_line
        } else {
            on_line - self.indent_columns
        }
    }

    fn run(&mut self, root: &Node, wrapping: Wrapping, preformat: &Preformat) {
        let sizes = &preformat.sizes;
        let mut single_line_tasks: Vec<Task<'_>> = Vec::new();
        // Sizes are indexed by prefix order; `next_index` follows the printing order, which is
        // prefix order too, so each node's size is found without a map.
        let mut next_index = 0usize;
        let mut boxes: Vec<usize> = Vec::new();
        let mut tasks = vec![Task::Node(root, wrapping == Wrapping::Wrapped)];
        while let Some(task) = tasks.pop() {
            let node = match task {
                Task::Text(text) => {
                    self.out.push_str(text);
                    continue;
                }
                Task::OpenBox => {
                    boxes.push(self.column());
                    continue;
                }
                Task::CloseBox => {
                    boxes.pop();
                    continue;
                }
                Task::Break { offset_columns } => {
                    let column = (boxes.last().copied().unwrap_or(0) + offset_columns)
                        .min(MAX_INDENT_COLUMNS);
                    self.out.push_str("\n");
                    self.line_start = self.out.written;
                    self.first_line = false;
                    self.push_spaces(self.indent_columns + column);
                    continue;
                }
                Task::Node(node, wrapped) => (node, wrapped),
            };
            let (node, wrapped) = node;
            let size = sizes.get(next_index).copied().unwrap_or(0);
            if size < SINGLE_LINE_SIZE_LIMIT {
                // The whole subtree fits on one line: print it and skip its sizes.
                write_single_line_with(&mut self.out, node, wrapped, &mut single_line_tasks);
                next_index += preformat.subtree_node_counts[next_index];
                continue;
            }
            next_index += 1;
            match &node.kind {
                NodeKind::Prim { name, args, annots } => {
                    let parenthesised = wrapped && (!args.is_empty() || !annots.is_empty());
                    if parenthesised {
                        self.out.push_str("(");
                        tasks.push(Task::Text(")"));
                    }
                    let name_start = self.column();
                    let head_start = self.out.written;
                    write_name(&mut self.out, name.as_str(), annots);
                    if args.is_empty() {
                        continue;
                    }
                    let head_length = self.out.written - head_start;
                    tasks.push(Task::CloseBox);
                    if head_length <= SHORT_NAME_MAX_LENGTH {
                        // `Pair 1` then the other arguments aligned under the first.
                        self.out.push_str(" ");
                        for (index, arg) in args.iter().enumerate().rev() {
                            tasks.push(Task::Node(arg, true));
                            if index > 0 {
                                tasks.push(Task::Break { offset_columns: 0 });
                            }
                        }
                        tasks.push(Task::OpenBox);
                    } else {
                        // The name alone, then every argument indented by 2 under it.
                        for arg in args.iter().rev() {
                            tasks.push(Task::Node(arg, true));
                            tasks.push(Task::Break { offset_columns: 2 });
                        }
                        boxes.push(name_start);
                    }
                }
                NodeKind::Seq(items) if items.is_empty() => self.out.push_str("{}"),
                NodeKind::Seq(items) => {
                    self.out.push_str("{ ");
                    tasks.push(Task::Text(" }"));
                    tasks.push(Task::CloseBox);
                    for (index, item) in items.iter().enumerate().rev() {
                        tasks.push(Task::Node(item, false));
                        if index > 0 {
                            tasks.push(Task::Break { offset_columns: 0 });
                            tasks.push(Task::Text(" ;"));
                        }
                    }
                    tasks.push(Task::OpenBox);
                }
                _ => write_leaf(&mut self.out, node),
            }
        }
    }

    fn push_spaces(&mut self, mut count: usize) {
        const SPACES: &str = "                                                                ";
        while count > 0 {
            let chunk = count.min(SPACES.len());
            self.out.push_str(&SPACES[..chunk]);
            count -= chunk;
        }
    }
}

/// Writes a primitive's name and its annotations, space-separated.
fn write_name<S: Sink + ?Sized>(out: &mut S, name: &str, annots: &[String]) {
    out.push_str(name);
    for annot in annots {
        out.push_str(" ");
        out.push_str(annot);
    }
}

/// Writes an int, string or bytes node.
fn write_leaf<S: Sink + ?Sized>(out: &mut S, node: &Node) {
    match &node.kind {
        NodeKind::Int(value) => match value.to_i64() {
            // Small values skip BigInt's radix conversion and any allocation.
            Some(small) => write_small_int(out, small),
            None => out.push_str(&value.to_string()),
        },
        NodeKind::String(value) => write_string_literal(out, value),
        NodeKind::Bytes(value) => {
            out.push_str("0x");
            write_hex_to(out, value);
        }
        NodeKind::Prim { .. } | NodeKind::Seq(_) => {
            unreachable!("write_leaf is called on leaves only")
        }
    }
}

/// Writes `value` in decimal through a buffer on the stack.
fn write_small_int<S: Sink + ?Sized>(out: &mut S, value: i64) {
    let mut buffer = [0u8; 20];
    let mut start = buffer.len();
    let mut rest = value.unsigned_abs();
    loop {
        start -= 1;
        buffer[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        start -= 1;
        buffer[start] = b'-';
    }
    // Only ASCII digits and a sign were written.
    out.push_str(std::str::from_utf8(&buffer[start..]).unwrap_or_default());
}

/// Writes `bytes` as lowercase hex into any sink, a chunk at a time.
fn write_hex_to<S: Sink + ?Sized>(out: &mut S, bytes: &[u8]) {
    let mut chunk = String::with_capacity(256);
    for part in bytes.chunks(128) {
        chunk.clear();
        write_hex(&mut chunk, part);
        out.push_str(&chunk);
    }
}

/// Writes `bytes` as lowercase hex.
pub(crate) fn write_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
}

/// Writes a string literal with Micheline_printer's escapes (`\" \n \r \b \t \\`); every other
/// character is written as is.
pub fn write_string_literal<S: Sink + ?Sized>(out: &mut S, value: &str) {
    out.push_str("\"");
    let mut run_start = 0;
    for (index, byte) in value.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\n' => "\\n",
            b'\r' => "\\r",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\\' => "\\\\",
            _ => continue,
        };
        out.push_str(&value[run_start..index]);
        out.push_str(escape);
        run_start = index + 1;
    }
    out.push_str(&value[run_start..]);
    out.push_str("\"");
}

/// Each node's preformatted size and subtree node count, indexed by prefix order.
struct Preformat {
    /// Micheline_printer's `preformat` size of each node.
    sizes: Vec<usize>,
    /// The number of nodes in each node's subtree (itself included), to skip a subtree printed
    /// on one line.
    subtree_node_counts: Vec<usize>,
}

/// Computes [`Preformat`] (Micheline_printer's `preformat`) without recursion.
fn preformat(root: &Node) -> Preformat {
    // Prefix-order walk recording each node's parent; children come after their parent, so one
    // backward pass adds every node's size and count into its parent's.
    let mut parents: Vec<(usize, bool)> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut pending: Vec<(&Node, usize, bool)> = vec![(root, usize::MAX, false)];
    while let Some((node, parent, in_seq)) = pending.pop() {
        let index = sizes.len();
        parents.push((parent, in_seq));
        sizes.push(own_size(node));
        let child_in_seq = matches!(node.kind, NodeKind::Seq(_));
        for child in node.children().iter().rev() {
            pending.push((child, index, child_in_seq));
        }
    }
    let mut subtree_node_counts = vec![1usize; sizes.len()];
    for index in (1..sizes.len()).rev() {
        let (parent, in_seq) = parents[index];
        let separator = if in_seq { 3 } else { 1 };
        sizes[parent] = sizes[parent].saturating_add(separator + sizes[index]);
        subtree_node_counts[parent] += subtree_node_counts[index];
    }
    Preformat {
        sizes,
        subtree_node_counts,
    }
}

/// A node's size before its children are counted.
fn own_size(node: &Node) -> usize {
    match &node.kind {
        NodeKind::Int(value) => match value.to_i64() {
            Some(small) => decimal_length(small),
            None => value.to_string().len(),
        },
        NodeKind::String(value) => value.len(),
        NodeKind::Bytes(value) => value.len().saturating_mul(2).saturating_add(2),
        NodeKind::Prim { name, annots, .. } => {
            let annots_size = if annots.is_empty() {
                0
            } else {
                annots.iter().map(String::len).sum::<usize>() + annots.len() - 1 + 2
            };
            name.as_str().len() + annots_size
        }
        NodeKind::Seq(_) => 4,
    }
}

/// The length of `value` in decimal, sign included.
fn decimal_length(value: i64) -> usize {
    let mut length = if value < 0 { 2 } else { 1 };
    let mut rest = value.unsigned_abs();
    while rest >= 10 {
        rest /= 10;
        length += 1;
    }
    length
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_expression;
    use crate::prim::Prim;

    fn check(source: &str, wrapping: Wrapping, expected: &str) {
        let node = parse_expression(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let mut printed = String::new();
        write_indented(&mut printed, &node, wrapping, 0);
        assert_eq!(printed, expected, "{source}");
    }

    #[test]
    fn short_expressions_stay_on_one_line() {
        check(
            "Pair 1 (Some \"x\")",
            Wrapping::Unwrapped,
            "Pair 1 (Some \"x\")",
        );
        check(
            "Pair 1 (Some \"x\")",
            Wrapping::Wrapped,
            "(Pair 1 (Some \"x\"))",
        );
        check("{DROP;UNIT}", Wrapping::Unwrapped, "{ DROP ; UNIT }");
        check("{}", Wrapping::Wrapped, "{}");
        check("Unit", Wrapping::Wrapped, "Unit");
        check("CAR @x %y", Wrapping::Wrapped, "(CAR @x %y)");
        check("0xABcd", Wrapping::Wrapped, "0xabcd");
        check("-12", Wrapping::Wrapped, "-12");
        check(
            "\"a\\\"b\\\\c\\nd\\te\\rf\\b\"",
            Wrapping::Wrapped,
            "\"a\\\"b\\\\c\\nd\\te\\rf\\b\"",
        );
    }

    #[test]
    fn long_expressions_break_like_octez() {
        let hex = "01".repeat(32);
        check(
            &format!("Pair (Pair 0x{hex} 0x{hex}) None"),
            Wrapping::Wrapped,
            &format!("(Pair (Pair 0x{hex}\n            0x{hex})\n      None)"),
        );
        let long = "x".repeat(70);
        check(
            &format!("Right (Left \"{long}\")"),
            Wrapping::Unwrapped,
            &format!("Right\n  (Left \"{long}\")"),
        );
        check(
            &format!("{{ PUSH string \"{long}\" ; DROP }}"),
            Wrapping::Unwrapped,
            &format!("{{ PUSH string\n       \"{long}\" ;\n  DROP }}"),
        );
    }

    #[test]
    fn continuation_lines_take_the_outer_indentation() {
        let hex = "ab".repeat(40);
        let node = parse_expression(&format!("Pair 0x{hex} 1")).unwrap_or_else(|e| panic!("{e}"));
        let mut out = String::from("    [ ");
        write_indented(&mut out, &node, Wrapping::Wrapped, 6);
        assert_eq!(out, format!("    [ (Pair 0x{hex}\n            1)"));
    }

    #[test]
    fn display_is_the_unwrapped_layout() {
        let node = parse_expression("Pair 1 (Some \"x\")").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(node.to_string(), "Pair 1 (Some \"x\")");
        assert_eq!(
            "{ DROP }".parse::<Node>().map(|n| n.to_string()),
            Ok("{ DROP }".to_string())
        );
    }

    #[test]
    fn script_layout() {
        let script = crate::parse::parse_toplevel("parameter unit ; storage unit ; code {CDR}")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            to_script_text(&script),
            "parameter unit;\nstorage unit;\ncode { CDR };\n"
        );
        assert_eq!(
            to_text_indented(&script),
            "{ parameter unit ; storage unit ; code { CDR } }"
        );
        // Found by fuzzing: a toplevel whose only item is a sequence keeps its braces.
        let nested = crate::parse::parse_toplevel("{{\"\"}}").unwrap_or_else(|e| panic!("{e}"));
        let printed = to_script_text(&nested);
        assert_eq!(printed, "{ { \"\" } }\n");
        assert_eq!(crate::parse::parse_toplevel(&printed), Ok(nested));
    }

    #[test]
    fn streaming_prints_the_same_text() {
        let hex = "01".repeat(32);
        let node = parse_expression(&format!(
            "Pair (Pair 0x{hex} 0x{hex}) {{ -9223372036854775808 ; 12345678901234567890123 ; \"a\\nb\" }}"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let mut streamed = Vec::new();
        write_indented_to(&mut streamed, &node, Wrapping::Wrapped, 4)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut text = String::new();
        write_indented(&mut text, &node, Wrapping::Wrapped, 4);
        text.push('\n');
        assert_eq!(String::from_utf8(streamed).ok(), Some(text));
    }

    #[test]
    fn deep_nesting_prints_in_space_linear_in_the_input() {
        // Left-nested pairs: Octez's layout indents every level by 6 more columns.
        let depth = 5_000;
        let mut node = Node::int(0);
        for _ in 0..depth {
            node = Node::prim(Prim::D_Pair, vec![node, Node::int(1)]);
        }
        let printed = to_text_indented(&node);
        // The first line holds every opening `(Pair `; each other line starts at most at the
        // indentation bound and holds one `1` and closing parentheses.
        let first = printed.lines().next().map_or(0, str::len);
        assert!(
            first <= "(Pair ".len() * depth + SINGLE_LINE_SIZE_LIMIT,
            "{first}"
        );
        let longest = printed
            .lines()
            .skip(1)
            .map(|l| l.trim_end_matches(')').len())
            .max();
        assert_eq!(longest, Some(MAX_INDENT_COLUMNS + 1));
        assert!(printed.len() <= depth * (MAX_INDENT_COLUMNS + "(Pair ".len() + 3));
        // Below the bound, Octez's indentation is kept exactly: 160 levels reach about 900 columns.
        let mut node = Node::int(0);
        for _ in 0..160 {
            node = Node::prim(Prim::D_Pair, vec![node, Node::int(1)]);
        }
        let printed = to_text_indented(&node);
        let deepest = printed
            .lines()
            .map(|l| l.len() - l.trim_start().len())
            .max();
        assert!(
            deepest.is_some_and(|d| (850..MAX_INDENT_COLUMNS).contains(&d)),
            "{deepest:?}"
        );
    }

    #[test]
    fn depth_100000_prints_without_recursion() {
        let depth = 100_000;
        let mut node = Node::int(7);
        for _ in 0..depth {
            node = Node::prim(Prim::D_Some, vec![node]);
        }
        // `Some` is a short name with one argument: Octez never breaks such a chain.
        let indented = to_text_indented(&node);
        assert!(indented.starts_with("Some (Some (Some"));
        assert!(indented.ends_with(&format!("(Some 7){}", ")".repeat(depth - 2))));
        assert_eq!(
            indented.len(),
            "Some ".len() + (depth - 1) * "(Some )".len() + 1
        );
        assert_eq!(to_text_single_line(&node), indented);
        // The parser's default depth limit counts its root frame, hence one level less.
        let mut nested = Node::seq(vec![]);
        for _ in 0..depth - 2 {
            nested = Node::seq(vec![nested]);
        }
        let printed = to_text_indented(&nested);
        let reparsed = parse_expression(&printed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reparsed, nested);
    }
}
