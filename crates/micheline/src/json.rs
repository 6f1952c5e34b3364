//! The JSON form of Micheline, as Octez RPCs read and write it (the JSON side of
//! `Micheline_encoding.canonical_encoding`):
//!
//! - int: `{"int": "42"}` (the value as a decimal string);
//! - string: `{"string": "..."}`;
//! - bytes: `{"bytes": "deadbeef"}` (hex, no `0x`);
//! - sequence: a JSON array of nodes;
//! - application: `{"prim": "Pair", "args": [..], "annots": ["%a"]}`, `args` and `annots` being
//!   optional on input (default: empty) and omitted on output when empty, as data-encoding does
//!   for its `dft` fields.
//!
//! Objects with unknown, duplicated or conflicting fields are rejected, as data-encoding's
//! destructors do; annotations must be well formed (Octez's V2 semantics).
//!
//! serde_json's parser recurses once per nesting level and stops at depth 128, far below what
//! Micheline needs (and its `Value` drops recursively), so this module has its own small JSON
//! reader and writer, both running on explicit stacks and bounded by [`JsonLimits`]. Depth is
//! limited only by [`JsonLimits::max_depth`] (default 100,000, tested).

use crate::binary::{is_valid_annotation, MAX_ANNOTATION_LENGTH_BYTES};
use crate::node::{Node, NodeKind};
use crate::parse::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODE_COUNT};
use crate::prim::PrimName;
use num_bigint::BigInt;
use std::borrow::Cow;
use std::fmt;

/// Largest JSON input accepted by default, in bytes: 1 GiB, the same order as the largest binary
/// expression (a uint30 length), since JSON is a few times larger than binary.
pub const DEFAULT_MAX_JSON_SIZE_BYTES: usize = 1 << 30;

/// Bounds on what one JSON read may build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// The deepest nesting of arrays and objects accepted (a leaf's object counts as a level).
    pub max_depth: usize,
    /// The most nodes one read may build.
    pub max_node_count: usize,
    /// The largest input, in bytes.
    pub max_size_bytes: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        JsonLimits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_node_count: DEFAULT_MAX_NODE_COUNT,
            max_size_bytes: DEFAULT_MAX_JSON_SIZE_BYTES,
        }
    }
}

/// Why JSON input was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// Not JSON: an unexpected character, with what was expected.
    Syntax(&'static str),
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A string with a bad escape, a control character or a lone surrogate.
    InvalidString,
    /// A JSON value that is not a Micheline node (a number, `true`, ...).
    NotANode,
    /// An object field other than `int`, `string`, `bytes`, `prim`, `args`, `annots`.
    UnknownField(String),
    /// A field given twice.
    DuplicateField(String),
    /// An object that is none of the node forms (e.g. `{}`, or `int` with `prim`).
    InvalidObject,
    /// A field whose value has the wrong JSON type.
    WrongFieldType(&'static str),
    /// An `int` field that is not a decimal integer.
    InvalidInt,
    /// A `bytes` field that is not an even number of hex digits.
    InvalidBytes,
    /// A malformed annotation.
    InvalidAnnotation(String),
    /// Nesting deeper than [`JsonLimits::max_depth`].
    TooDeep,
    /// More nodes than [`JsonLimits::max_node_count`].
    TooManyNodes,
    /// An input larger than [`JsonLimits::max_size_bytes`].
    TooLarge,
    /// Something other than whitespace after the value.
    TrailingCharacters,
}

/// A JSON read failure and the byte offset where it was detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// What went wrong.
    pub kind: JsonErrorKind,
    /// Offset from the start of the input, in bytes.
    pub offset_bytes: usize,
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::Syntax(expected) => write!(f, "invalid JSON, expected {expected}"),
            JsonErrorKind::UnexpectedEnd => f.write_str("unexpected end of JSON input"),
            JsonErrorKind::InvalidString => f.write_str("invalid JSON string"),
            JsonErrorKind::NotANode => f.write_str("JSON value is not a Micheline node"),
            JsonErrorKind::UnknownField(name) => write!(f, "unknown field {name:?}"),
            JsonErrorKind::DuplicateField(name) => write!(f, "duplicate field {name:?}"),
            JsonErrorKind::InvalidObject => {
                f.write_str("object is not a Micheline node (int, string, bytes or prim)")
            }
            JsonErrorKind::WrongFieldType(field) => write!(f, "field {field:?} has the wrong type"),
            JsonErrorKind::InvalidInt => f.write_str("invalid integer"),
            JsonErrorKind::InvalidBytes => f.write_str("invalid hex bytes"),
            JsonErrorKind::InvalidAnnotation(annot) => write!(f, "malformed annotation {annot:?}"),
            JsonErrorKind::TooDeep => f.write_str("expression nested too deeply"),
            JsonErrorKind::TooManyNodes => f.write_str("expression has too many nodes"),
            JsonErrorKind::TooLarge => f.write_str("input too large"),
            JsonErrorKind::TrailingCharacters => f.write_str("characters after the JSON value"),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset_bytes)
    }
}

impl std::error::Error for JsonError {}

// ---------------------------------------------------------------------------------------------
// Writing

/// Writes `node` as compact JSON (`{"prim":"Pair","args":[{"int":"1"},{"string":"foo"}]}`).
pub fn to_json_string(node: &Node) -> String {
    let mut out = String::new();
    write_json(&mut out, node);
    out
}

/// Appends `node` as compact JSON to `out`.
pub fn write_json(out: &mut String, node: &Node) {
    enum Task<'a> {
        Node(&'a Node),
        Text(&'static str),
        Annots(&'a [String]),
    }
    let mut tasks = vec![Task::Node(node)];
    while let Some(task) = tasks.pop() {
        let node = match task {
            Task::Text(text) => {
                out.push_str(text);
                continue;
            }
            Task::Annots(annots) => {
                out.push_str(",\"annots\":[");
                for (index, annot) in annots.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write_json_string(out, annot);
                }
                out.push(']');
                continue;
            }
            Task::Node(node) => node,
        };
        match &node.kind {
            NodeKind::Int(value) => {
                use std::fmt::Write;
                // Writing into a String cannot fail.
                let _ = write!(out, "{{\"int\":\"{value}\"}}");
            }
            NodeKind::String(value) => {
                out.push_str("{\"string\":");
                write_json_string(out, value);
                out.push('}');
            }
            NodeKind::Bytes(value) => {
                out.push_str("{\"bytes\":\"");
                crate::print::write_hex(out, value);
                out.push_str("\"}");
            }
            NodeKind::Seq(items) => {
                out.push('[');
                tasks.push(Task::Text("]"));
                for (index, item) in items.iter().enumerate().rev() {
                    tasks.push(Task::Node(item));
                    if index > 0 {
                        tasks.push(Task::Text(","));
                    }
                }
            }
            NodeKind::Prim { name, args, annots } => {
                out.push_str("{\"prim\":");
                write_json_string(out, name.as_str());
                tasks.push(Task::Text("}"));
                if !annots.is_empty() {
                    tasks.push(Task::Annots(annots));
                }
                if !args.is_empty() {
                    out.push_str(",\"args\":[");
                    tasks.push(Task::Text("]"));
                    for (index, arg) in args.iter().enumerate().rev() {
                        tasks.push(Task::Node(arg));
                        if index > 0 {
                            tasks.push(Task::Text(","));
                        }
                    }
                }
            }
        }
    }
}

/// Writes `value` as a JSON string literal.
pub fn write_json_string(out: &mut String, value: &str) {
    out.push('"');
    let mut run_start = 0;
    for (index, byte) in value.bytes().enumerate() {
        let escape: Option<&str> = match byte {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&value[run_start..index]);
        match escape {
            Some(text) => out.push_str(text),
            None => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{byte:04x}");
            }
        }
        run_start = index + 1;
    }
    out.push_str(&value[run_start..]);
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Reads one Micheline node from JSON text, with default limits.
pub fn from_json_str(source: &str) -> Result<Node, JsonError> {
    from_json_str_with(source, JsonLimits::default())
}

/// Reads one Micheline node from JSON text.
pub fn from_json_str_with(source: &str, limits: JsonLimits) -> Result<Node, JsonError> {
    if source.len() > limits.max_size_bytes {
        return Err(JsonError {
            kind: JsonErrorKind::TooLarge,
            offset_bytes: limits.max_size_bytes,
        });
    }
    Reader {
        source,
        bytes: source.as_bytes(),
        position: 0,
        limits,
        node_count: 0,
        depth: 0,
    }
    .run()
}

/// An open JSON container.
enum Frame {
    /// An array that is a sequence node.
    Seq { items: Vec<Node> },
    /// An object being read; `args` is filled when its `args` array closes.
    Object(ObjectFields),
    /// The `args` array of the object just below on the stack.
    Args { items: Vec<Node> },
}

#[derive(Default)]
struct ObjectFields {
    start: usize,
    prim: Option<PrimName>,
    args: Option<Vec<Node>>,
    annots: Option<Vec<String>>,
    int: Option<BigInt>,
    string: Option<String>,
    bytes: Option<Vec<u8>>,
}

/// Where the reader is.
enum State {
    /// A value must come next.
    ExpectValue,
    /// A value just finished; deliver it to the enclosing container.
    Deliver(Node),
    /// Inside an object, after `{` (`first`) or after a member.
    ObjectMember { first: bool },
    /// Inside an array, after an item.
    AfterItem,
}

struct Reader<'a> {
    source: &'a str,
    bytes: &'a [u8],
    position: usize,
    limits: JsonLimits,
    node_count: usize,
    /// Open sequences and objects (an object's `args` array adds no depth of its own).
    depth: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            kind,
            offset_bytes: self.position,
        }
    }

    fn error_at(kind: JsonErrorKind, offset_bytes: usize) -> JsonError {
        JsonError { kind, offset_bytes }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.position) {
            self.position += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    fn peek(&mut self) -> Result<u8, JsonError> {
        self.skip_whitespace();
        self.bytes
            .get(self.position)
            .copied()
            .ok_or_else(|| self.error(JsonErrorKind::UnexpectedEnd))
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), JsonError> {
        if self.peek()? != byte {
            return Err(self.error(JsonErrorKind::Syntax(expected)));
        }
        self.position += 1;
        Ok(())
    }

    fn count_node(&mut self, at: usize) -> Result<(), JsonError> {
        self.node_count += 1;
        if self.node_count > self.limits.max_node_count {
            return Err(Self::error_at(JsonErrorKind::TooManyNodes, at));
        }
        Ok(())
    }

    fn push(&mut self, stack: &mut Vec<Frame>, frame: Frame) -> Result<(), JsonError> {
        if !matches!(frame, Frame::Args { .. }) {
            if self.depth >= self.limits.max_depth {
                return Err(self.error(JsonErrorKind::TooDeep));
            }
            self.depth += 1;
        }
        stack.push(frame);
        Ok(())
    }

    fn run(mut self) -> Result<Node, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut state = State::ExpectValue;
        loop {
            state = match state {
                State::ExpectValue => match self.peek()? {
                    b'[' => {
                        let at = self.position;
                        self.position += 1;
                        self.count_node(at)?;
                        self.push(&mut stack, Frame::Seq { items: Vec::new() })?;
                        if self.peek()? == b']' {
                            self.position += 1;
                            let Some(Frame::Seq { items }) = stack.pop() else {
                                unreachable!("the sequence frame was just pushed")
                            };
                            self.depth -= 1;
                            State::Deliver(Node::new(NodeKind::Seq(items)))
                        } else {
                            State::ExpectValue
                        }
                    }
                    b'{' => {
                        let at = self.position;
                        self.position += 1;
                        self.count_node(at)?;
                        let fields = ObjectFields {
                            start: at,
                            ..ObjectFields::default()
                        };
                        self.push(&mut stack, Frame::Object(fields))?;
                        State::ObjectMember { first: true }
                    }
                    b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                        return Err(self.error(JsonErrorKind::NotANode))
                    }
                    _ => return Err(self.error(JsonErrorKind::Syntax("a value"))),
                },
                State::Deliver(node) => match stack.last_mut() {
                    None => {
                        self.skip_whitespace();
                        if self.position != self.bytes.len() {
                            return Err(self.error(JsonErrorKind::TrailingCharacters));
                        }
                        return Ok(node);
                    }
                    Some(Frame::Seq { items } | Frame::Args { items }) => {
                        items.push(node);
                        State::AfterItem
                    }
                    Some(Frame::Object(_)) => {
                        unreachable!("object members are read in place, never delivered")
                    }
                },
                State::AfterItem => match self.peek()? {
                    b',' => {
                        self.position += 1;
                        State::ExpectValue
                    }
                    b']' => {
                        self.position += 1;
                        match stack.pop() {
                            Some(Frame::Seq { items }) => {
                                self.depth -= 1;
                                State::Deliver(Node::new(NodeKind::Seq(items)))
                            }
                            Some(Frame::Args { items }) => {
                                let Some(Frame::Object(fields)) = stack.last_mut() else {
                                    unreachable!("an args frame sits on its object")
                                };
                                fields.args = Some(items);
                                State::ObjectMember { first: false }
                            }
                            _ => unreachable!("items are read only inside arrays"),
                        }
                    }
                    _ => return Err(self.error(JsonErrorKind::Syntax("',' or ']'"))),
                },
                State::ObjectMember { first } => {
                    let byte = self.peek()?;
                    if byte == b'}' {
                        self.position += 1;
                        let Some(Frame::Object(fields)) = stack.pop() else {
                            unreachable!("members are read only inside objects")
                        };
                        self.depth -= 1;
                        State::Deliver(self.build_object(fields)?)
                    } else {
                        if !first {
                            self.expect(b',', "',' or '}'")?;
                        }
                        self.read_member(&mut stack)?
                    }
                }
            };
        }
    }

    /// Reads `"key": value` inside the object on top of the stack.
    fn read_member(&mut self, stack: &mut Vec<Frame>) -> Result<State, JsonError> {
        if self.peek()? != b'"' {
            return Err(self.error(JsonErrorKind::Syntax("a field name")));
        }
        let key_at = self.position;
        let key = self.read_string()?;
        self.expect(b':', "':'")?;
        let Some(Frame::Object(fields)) = stack.last_mut() else {
            unreachable!("members are read only inside objects")
        };
        let duplicate = || Self::error_at(JsonErrorKind::DuplicateField(key.to_string()), key_at);
        match key.as_ref() {
            "prim" => {
                if fields.prim.is_some() {
                    return Err(duplicate());
                }
                fields.prim = Some(PrimName::new(&self.read_string_field("prim")?));
            }
            "string" => {
                if fields.string.is_some() {
                    return Err(duplicate());
                }
                fields.string = Some(self.read_string_field("string")?.into_owned());
            }
            "int" => {
                if fields.int.is_some() {
                    return Err(duplicate());
                }
                let at = self.position;
                let text = self.read_string_field("int")?;
                fields.int = Some(
                    crate::decimal::parse_decimal(&text)
                        .ok_or_else(|| Self::error_at(JsonErrorKind::InvalidInt, at))?,
                );
            }
            "bytes" => {
                if fields.bytes.is_some() {
                    return Err(duplicate());
                }
                let at = self.position;
                let text = self.read_string_field("bytes")?;
                fields.bytes = Some(
                    parse_hex(&text)
                        .ok_or_else(|| Self::error_at(JsonErrorKind::InvalidBytes, at))?,
                );
            }
            "annots" => {
                if fields.annots.is_some() {
                    return Err(duplicate());
                }
                let annots = self.read_annots()?;
                let Some(Frame::Object(fields)) = stack.last_mut() else {
                    unreachable!("members are read only inside objects")
                };
                fields.annots = Some(annots);
            }
            "args" => {
                if fields.args.is_some() {
                    return Err(duplicate());
                }
                if self.peek()? != b'[' {
                    return Err(self.error(JsonErrorKind::WrongFieldType("args")));
                }
                self.position += 1;
                if self.peek()? == b']' {
                    self.position += 1;
                    fields.args = Some(Vec::new());
                    return Ok(State::ObjectMember { first: false });
                }
                self.push(stack, Frame::Args { items: Vec::new() })?;
                return Ok(State::ExpectValue);
            }
            _ => {
                return Err(Self::error_at(
                    JsonErrorKind::UnknownField(key.into_owned()),
                    key_at,
                ))
            }
        }
        Ok(State::ObjectMember { first: false })
    }

    fn read_string_field(&mut self, field: &'static str) -> Result<Cow<'a, str>, JsonError> {
        if self.peek()? != b'"' {
            return Err(self.error(JsonErrorKind::WrongFieldType(field)));
        }
        self.read_string()
    }

    fn read_annots(&mut self) -> Result<Vec<String>, JsonError> {
        if self.peek()? != b'[' {
            return Err(self.error(JsonErrorKind::WrongFieldType("annots")));
        }
        self.position += 1;
        let mut annots = Vec::new();
        if self.peek()? == b']' {
            self.position += 1;
            return Ok(annots);
        }
        loop {
            let at = self.position;
            let annot = self.read_string_field("annots")?.into_owned();
            if annot.len() > MAX_ANNOTATION_LENGTH_BYTES || !is_valid_annotation(annot.as_bytes()) {
                return Err(Self::error_at(JsonErrorKind::InvalidAnnotation(annot), at));
            }
            annots.push(annot);
            match self.peek()? {
                b',' => self.position += 1,
                b']' => {
                    self.position += 1;
                    return Ok(annots);
                }
                _ => return Err(self.error(JsonErrorKind::Syntax("',' or ']'"))),
            }
        }
    }

    fn build_object(&self, fields: ObjectFields) -> Result<Node, JsonError> {
        let invalid = Self::error_at(JsonErrorKind::InvalidObject, fields.start);
        let leaf_count = usize::from(fields.int.is_some())
            + usize::from(fields.string.is_some())
            + usize::from(fields.bytes.is_some());
        match fields.prim {
            Some(name) => {
                if leaf_count > 0 {
                    return Err(invalid);
                }
                Ok(Node::new(NodeKind::Prim {
                    name,
                    args: fields.args.unwrap_or_default(),
                    annots: fields.annots.unwrap_or_default(),
                }))
            }
            None => {
                if leaf_count != 1 || fields.args.is_some() || fields.annots.is_some() {
                    return Err(invalid);
                }
                if let Some(value) = fields.int {
                    Ok(Node::new(NodeKind::Int(value)))
                } else if let Some(value) = fields.string {
                    Ok(Node::new(NodeKind::String(value)))
                } else if let Some(value) = fields.bytes {
                    Ok(Node::new(NodeKind::Bytes(value)))
                } else {
                    Err(invalid)
                }
            }
        }
    }

    /// Reads a JSON string literal at the cursor (which is on its opening quote), borrowing it
    /// from the input when it has no escape.
    fn read_string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.position += 1;
        let start = self.position;
        let plain_end = self.bytes[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .map(|length| start + length);
        if let Some(end) = plain_end.filter(|&end| self.bytes[end] == b'"') {
            self.position = end + 1;
            // `start` and `end` sit next to ASCII quotes, so they are character boundaries.
            return Ok(Cow::Borrowed(&self.source[start..end]));
        }
        self.read_escaped_string().map(Cow::Owned)
    }

    /// The general path of [`Reader::read_string`], from just after the opening quote.
    fn read_escaped_string(&mut self) -> Result<String, JsonError> {
        let mut value: Vec<u8> = Vec::new();
        loop {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(self.error(JsonErrorKind::UnexpectedEnd));
            };
            match byte {
                b'"' => {
                    self.position += 1;
                    // The input is a `str` and escapes produce whole characters: valid UTF-8.
                    return String::from_utf8(value)
                        .map_err(|_| self.error(JsonErrorKind::InvalidString));
                }
                b'\\' => {
                    let escape_at = self.position;
                    let Some(&escaped) = self.bytes.get(self.position + 1) else {
                        return Err(self.error(JsonErrorKind::UnexpectedEnd));
                    };
                    self.position += 2;
                    let simple = match escaped {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => return Err(Self::error_at(JsonErrorKind::InvalidString, escape_at)),
                    };
                    if let Some(decoded) = simple {
                        value.push(decoded);
                        continue;
                    }
                    let high = self.read_hex4(escape_at)?;
                    let code = if (0xd800..0xdc00).contains(&high) {
                        // A high surrogate must be followed by `\u` and a low surrogate.
                        if self.bytes.get(self.position..self.position + 2) != Some(b"\\u") {
                            return Err(Self::error_at(JsonErrorKind::InvalidString, escape_at));
                        }
                        self.position += 2;
                        let low = self.read_hex4(escape_at)?;
                        if !(0xdc00..0xe000).contains(&low) {
                            return Err(Self::error_at(JsonErrorKind::InvalidString, escape_at));
                        }
                        0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
                    } else {
                        high
                    };
                    let character = char::from_u32(code)
                        .ok_or_else(|| Self::error_at(JsonErrorKind::InvalidString, escape_at))?;
                    let mut buffer = [0u8; 4];
                    value.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
                }
                0..=0x1f => return Err(self.error(JsonErrorKind::InvalidString)),
                _ => {
                    let run_start = self.position;
                    while let Some(&b) = self.bytes.get(self.position) {
                        if b == b'"' || b == b'\\' || b < 0x20 {
                            break;
                        }
                        self.position += 1;
                    }
                    value.extend_from_slice(&self.bytes[run_start..self.position]);
                }
            }
        }
    }

    fn read_hex4(&mut self, escape_at: usize) -> Result<u32, JsonError> {
        let digits = self
            .bytes
            .get(self.position..self.position + 4)
            .ok_or_else(|| Self::error_at(JsonErrorKind::InvalidString, escape_at))?;
        let mut code = 0u32;
        for &digit in digits {
            let value = (digit as char)
                .to_digit(16)
                .ok_or_else(|| Self::error_at(JsonErrorKind::InvalidString, escape_at))?;
            code = code * 16 + value;
        }
        self.position += 4;
        Ok(code)
    }
}

/// Parses an even number of hex digits.
fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| {
            let high = (pair[0] as char).to_digit(16)?;
            let low = (pair[1] as char).to_digit(16)?;
            Some((high * 16 + low) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_expression;
    use crate::prim::Prim;

    /// `source` (Micheline text) writes as `expected_json`, which reads back to the same tree.
    fn check(source: &str, expected_json: &str) {
        let node = parse_expression(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let json = to_json_string(&node);
        assert_eq!(json, expected_json, "{source}");
        assert_eq!(from_json_str(&json), Ok(node), "{source}");
    }

    fn check_error(json: &str, kind: JsonErrorKind, offset_bytes: usize) {
        assert_eq!(
            from_json_str(json),
            Err(JsonError { kind, offset_bytes }),
            "{json}"
        );
    }

    #[test]
    fn every_form() {
        check("-42", r#"{"int":"-42"}"#);
        check(r#""a\"b\n""#, r#"{"string":"a\"b\n"}"#);
        check("0xDEad", r#"{"bytes":"dead"}"#);
        check("{}", "[]");
        check("{ 1 ; {} }", r#"[{"int":"1"},[]]"#);
        check("Unit", r#"{"prim":"Unit"}"#);
        check(
            "Pair 1 \"foo\"",
            r#"{"prim":"Pair","args":[{"int":"1"},{"string":"foo"}]}"#,
        );
        check("CAR @x %y", r#"{"prim":"CAR","annots":["@x","%y"]}"#);
        check(
            "PUSH @n nat 1",
            r#"{"prim":"PUSH","args":[{"prim":"nat"},{"int":"1"}],"annots":["@n"]}"#,
        );
        check("Stack_elt", r#"{"prim":"Stack_elt"}"#);
    }

    #[test]
    fn lenient_input_as_octez_accepts_it() {
        let node = from_json_str(
            " { \"args\" : [ { \"int\" : \"1\" } ] , \"annots\":[], \"prim\" : \"Some\" } ",
        );
        assert_eq!(node, Ok(Node::prim(Prim::D_Some, vec![Node::int(1)])));
        assert_eq!(
            from_json_str(r#"{"string":"\u00e9\ud83d\ude00\/"}"#),
            Ok(Node::string("é😀/"))
        );
        assert_eq!(
            from_json_str(r#"{"prim":"Unit","args":[]}"#),
            Ok(Node::prim(Prim::D_Unit, vec![]))
        );
    }

    #[test]
    fn errors_carry_offsets() {
        check_error("", JsonErrorKind::UnexpectedEnd, 0);
        check_error("1", JsonErrorKind::NotANode, 0);
        check_error("{}", JsonErrorKind::InvalidObject, 0);
        check_error(r#"{"int":1}"#, JsonErrorKind::WrongFieldType("int"), 7);
        check_error(r#"{"int":"1x"}"#, JsonErrorKind::InvalidInt, 7);
        check_error(r#"{"bytes":"abc"}"#, JsonErrorKind::InvalidBytes, 9);
        check_error(
            r#"{"int":"1","int":"2"}"#,
            JsonErrorKind::DuplicateField("int".into()),
            11,
        );
        check_error(
            r#"{"foo":"1"}"#,
            JsonErrorKind::UnknownField("foo".into()),
            1,
        );
        check_error(
            r#"{"int":"1","prim":"Unit"}"#,
            JsonErrorKind::InvalidObject,
            0,
        );
        check_error(
            r#"{"prim":"CAR","annots":["x"]}"#,
            JsonErrorKind::InvalidAnnotation("x".into()),
            24,
        );
        check_error("[[]", JsonErrorKind::UnexpectedEnd, 3);
        check_error("[] x", JsonErrorKind::TrailingCharacters, 3);
        check_error("[1]", JsonErrorKind::NotANode, 1);
        check_error(r#"{"string":"\q"}"#, JsonErrorKind::InvalidString, 11);
        check_error(r#"{"string":"\ud800"}"#, JsonErrorKind::InvalidString, 11);
    }

    #[test]
    fn depth_100000_and_limits() {
        // The leaf `{"int":"1"}` is an object too, so 99,999 containers above it make 100,000.
        let depth = 100_000 - 1;
        let mut node = Node::int(1);
        for index in 0..depth {
            node = if index % 2 == 0 {
                Node::prim(Prim::D_Some, vec![node])
            } else {
                Node::seq(vec![node])
            };
        }
        let json = to_json_string(&node);
        // Compared with `assert!`: a failing `assert_eq!` would print both deep trees.
        match from_json_str(&json) {
            Ok(read) => assert!(read == node),
            Err(error) => panic!("{error}"),
        }
        let limited = JsonLimits {
            max_depth: 10,
            ..JsonLimits::default()
        };
        assert_eq!(
            from_json_str_with(&json, limited).map_err(|e| e.kind),
            Err(JsonErrorKind::TooDeep)
        );
        let limited = JsonLimits {
            max_node_count: 10,
            ..JsonLimits::default()
        };
        assert_eq!(
            from_json_str_with(&json, limited).map_err(|e| e.kind),
            Err(JsonErrorKind::TooManyNodes)
        );
    }
}
