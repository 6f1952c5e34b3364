//! The binary Micheline codec: Octez's `Micheline_encoding.canonical_encoding` (semantics V2)
//! with the Michelson primitive table as primitive encoding — the form of scripts and storage in
//! operations and the context, and of PACKed data after its `0x05` byte.
//!
//! Every node starts with a one-byte tag:
//!
//! | tag | node | followed by |
//! |---|---|---|
//! | 0 | int | `z` (Zarith) |
//! | 1 | string | uint30 byte length (4 bytes, big-endian), bytes |
//! | 2 | sequence | uint30 byte length, the items |
//! | 3 | prim, no args, no annots | prim tag (1 byte) |
//! | 4 | prim, no args, annots | prim tag, annots |
//! | 5 | prim, 1 arg, no annots | prim tag, arg |
//! | 6 | prim, 1 arg, annots | prim tag, arg, annots |
//! | 7 | prim, 2 args, no annots | prim tag, arg1, arg2 |
//! | 8 | prim, 2 args, annots | prim tag, arg1, arg2, annots |
//! | 9 | prim, any args | prim tag, uint30 byte length, the args, annots |
//! | 10 | bytes | uint30 byte length, bytes |
//!
//! Annotations are one uint30-prefixed string, space-separated; the empty string means none.
//! As Octez's V2 semantics does, the decoder checks every annotation is well formed. It also
//! accepts what Octez accepts but never writes (tag 4 with an empty annotation string, tag 9 with
//! two arguments or fewer); the encoder always picks the smallest tag, as Octez does.
//!
//! Strings must be UTF-8 here (a [`Node`] holds a Rust `String`); Micheline itself allows any
//! bytes, but Michelson accepts only printable ASCII, so this rejects nothing a contract can use.
//!
//! Both directions run on explicit stacks (no host recursion) and decoding is bounded by
//! [`DecodeLimits`]; every error carries the byte offset where it was detected.

use crate::node::{Node, NodeKind};
use crate::parse::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODE_COUNT};
use crate::prim::{Prim, PrimName};
use kestrel_encoding::zarith;
use num_bigint::BigInt;
use std::fmt;

/// Tag of an int node.
pub const TAG_INT: u8 = 0;
/// Tag of a string node.
pub const TAG_STRING: u8 = 1;
/// Tag of a sequence node.
pub const TAG_SEQ: u8 = 2;
/// Tag of a primitive without arguments or annotations.
pub const TAG_PRIM_0: u8 = 3;
/// Tag of a primitive without arguments, with annotations.
pub const TAG_PRIM_0_ANNOTS: u8 = 4;
/// Tag of a primitive with one argument, without annotations.
pub const TAG_PRIM_1: u8 = 5;
/// Tag of a primitive with one argument and annotations.
pub const TAG_PRIM_1_ANNOTS: u8 = 6;
/// Tag of a primitive with two arguments, without annotations.
pub const TAG_PRIM_2: u8 = 7;
/// Tag of a primitive with two arguments and annotations.
pub const TAG_PRIM_2_ANNOTS: u8 = 8;
/// Tag of a primitive with any number of arguments (and annotations, possibly none).
pub const TAG_PRIM_GENERIC: u8 = 9;
/// Tag of a bytes node.
pub const TAG_BYTES: u8 = 10;

/// The largest length a uint30 prefix may hold (data-encoding's `uint30`: 2^30 - 1).
pub const UINT30_MAX: usize = (1 << 30) - 1;

/// The longest annotation, in bytes (Octez's `Micheline_parser.max_annot_length`).
pub const MAX_ANNOTATION_LENGTH_BYTES: usize = 255;

/// Largest input accepted by default: the largest size one uint30-prefixed field can have, so
/// any expression Octez can embed in a length-prefixed field (PACKed bytes, a script) fits.
pub const DEFAULT_MAX_SIZE_BYTES: usize = UINT30_MAX;

/// Bounds on what one decode may build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// The deepest nesting of sequences and applications accepted.
    pub max_depth: usize,
    /// The most nodes one decode may build.
    pub max_node_count: usize,
    /// The largest input, in bytes.
    pub max_size_bytes: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_node_count: DEFAULT_MAX_NODE_COUNT,
            max_size_bytes: DEFAULT_MAX_SIZE_BYTES,
        }
    }
}

/// Why binary input was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input (or the enclosing length-prefixed region) ended inside a node.
    NotEnoughData,
    /// A node tag other than 0 to 10.
    UnknownNodeTag(u8),
    /// A primitive tag outside the Michelson primitive table.
    UnknownPrimitive(u8),
    /// A length prefix above 2^30 - 1 (data-encoding's uint30 range).
    LengthOutOfRange(u32),
    /// A Zarith integer ended with a zero byte.
    TrailingZero,
    /// A string node that is not UTF-8.
    InvalidUtf8,
    /// An annotation that is empty, too long or not `[@:$&%!?][A-Za-z0-9_.%@]*`.
    InvalidAnnotation(String),
    /// Bytes left after the node (the whole input must be one node).
    ExtraBytes,
    /// Nesting deeper than [`DecodeLimits::max_depth`].
    TooDeep,
    /// More nodes than [`DecodeLimits::max_node_count`].
    TooManyNodes,
    /// An input larger than [`DecodeLimits::max_size_bytes`].
    TooLarge,
}

/// A binary decode failure and the byte offset where it was detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Offset from the start of the input, in bytes.
    pub offset_bytes: usize,
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::NotEnoughData => f.write_str("not enough data"),
            DecodeErrorKind::UnknownNodeTag(tag) => write!(f, "unknown node tag {tag}"),
            DecodeErrorKind::UnknownPrimitive(tag) => write!(f, "unknown primitive tag {tag}"),
            DecodeErrorKind::LengthOutOfRange(length) => {
                write!(f, "length {length} above the uint30 range")
            }
            DecodeErrorKind::TrailingZero => f.write_str("integer with a trailing zero byte"),
            DecodeErrorKind::InvalidUtf8 => f.write_str("string is not UTF-8"),
            DecodeErrorKind::InvalidAnnotation(annot) => {
                write!(f, "malformed annotation {annot:?}")
            }
            DecodeErrorKind::ExtraBytes => f.write_str("extra bytes after the expression"),
            DecodeErrorKind::TooDeep => f.write_str("expression nested too deeply"),
            DecodeErrorKind::TooManyNodes => f.write_str("expression has too many nodes"),
            DecodeErrorKind::TooLarge => f.write_str("input too large"),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset_bytes)
    }
}

impl std::error::Error for DecodeError {}

/// Why a tree cannot be written in binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A primitive outside the Michelson table (binary Micheline can only name table entries).
    UnknownPrimitive {
        /// The primitive's name.
        name: String,
        /// The node's canonical location (prefix-order index).
        location: usize,
    },
    /// A string, bytes, sequence, argument list or annotation list longer than 2^30 - 1 bytes.
    TooLarge {
        /// The node's canonical location (prefix-order index).
        location: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UnknownPrimitive { name, location } => write!(
                f,
                "primitive {name} (node {location}) is not a Michelson primitive and has no binary tag"
            ),
            EncodeError::TooLarge { location } => {
                write!(f, "node {location} is longer than 2^30 - 1 bytes")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// Decodes one expression filling all of `input`, with default limits.
pub fn decode(input: &[u8]) -> Result<Node, DecodeError> {
    decode_with(input, DecodeLimits::default())
}

/// Decodes one expression filling all of `input`.
pub fn decode_with(input: &[u8], limits: DecodeLimits) -> Result<Node, DecodeError> {
    let mut offset = 0;
    let node = decode_prefix(input, &mut offset, limits)?;
    if offset != input.len() {
        return Err(DecodeError {
            kind: DecodeErrorKind::ExtraBytes,
            offset_bytes: offset,
        });
    }
    Ok(node)
}

/// Decodes one expression starting at `*offset` and advances the offset past it; bytes after it
/// are left for the caller (for expressions embedded in larger structures).
pub fn decode_prefix(
    input: &[u8],
    offset: &mut usize,
    limits: DecodeLimits,
) -> Result<Node, DecodeError> {
    if input.len() > limits.max_size_bytes {
        return Err(DecodeError {
            kind: DecodeErrorKind::TooLarge,
            offset_bytes: limits.max_size_bytes,
        });
    }
    let mut decoder = Decoder {
        input,
        offset: *offset,
        limits,
        node_count: 0,
    };
    let node = decoder.run()?;
    *offset = decoder.offset;
    Ok(node)
}

/// A node being decoded, waiting for its children. Finished children wait on the decoder's
/// shared value stack from `first_child` on, so each node's child vector is allocated once, at
/// its exact size, when the node completes.
enum Frame {
    /// A sequence whose items end at `end`.
    Seq { end: usize, first_child: usize },
    /// An application with a fixed argument count (tags 5 to 8).
    Fixed {
        prim: Prim,
        arg_count: usize,
        has_annots: bool,
        first_child: usize,
        /// The end of the enclosing region (inherited: a fixed application has no length).
        end: usize,
    },
    /// A generic application (tag 9) whose arguments end at `args_end`.
    Generic {
        prim: Prim,
        args_end: usize,
        first_child: usize,
        /// The end of the enclosing region, for the annotations after the arguments.
        end: usize,
    },
}

impl Frame {
    /// Where reading children of this frame must stop.
    fn child_end(&self) -> usize {
        match self {
            Frame::Seq { end, .. } | Frame::Fixed { end, .. } => *end,
            Frame::Generic { args_end, .. } => *args_end,
        }
    }
}

struct Decoder<'a> {
    input: &'a [u8],
    offset: usize,
    limits: DecodeLimits,
    node_count: usize,
}

impl Decoder<'_> {
    fn error(&self, kind: DecodeErrorKind, offset_bytes: usize) -> DecodeError {
        DecodeError { kind, offset_bytes }
    }

    fn run(&mut self) -> Result<Node, DecodeError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut values: Vec<Node> = Vec::new();
        loop {
            // Finish every frame whose children are complete, handing each result up.
            while let Some(top) = stack.last() {
                let complete = match top {
                    Frame::Seq { end, .. } => self.offset >= *end,
                    Frame::Fixed {
                        arg_count,
                        first_child,
                        ..
                    } => values.len() - first_child == *arg_count,
                    Frame::Generic { args_end, .. } => self.offset >= *args_end,
                };
                if !complete {
                    break;
                }
                let Some(frame) = stack.pop() else {
                    unreachable!("a complete frame was just inspected")
                };
                let node = self.finish(frame, &mut values)?;
                if stack.is_empty() {
                    return Ok(node);
                }
                values.push(node);
            }
            let end = stack
                .last()
                .map(Frame::child_end)
                .unwrap_or(self.input.len());
            match self.read_node(end, values.len())? {
                Step::Leaf(node) => {
                    if stack.is_empty() {
                        return Ok(node);
                    }
                    values.push(node);
                }
                Step::Open(frame) => {
                    if stack.len() >= self.limits.max_depth {
                        return Err(self.error(DecodeErrorKind::TooDeep, self.offset));
                    }
                    stack.push(frame);
                }
            }
        }
    }

    /// Builds the node of a frame whose children are all read (reading trailing annotations),
    /// taking its children off the value stack.
    fn finish(&mut self, frame: Frame, values: &mut Vec<Node>) -> Result<Node, DecodeError> {
        match frame {
            Frame::Seq { end, first_child } => {
                if self.offset != end {
                    return Err(self.error(DecodeErrorKind::NotEnoughData, end));
                }
                let items: Vec<Node> = values.drain(first_child..).collect();
                Ok(Node::new(NodeKind::Seq(items)))
            }
            Frame::Fixed {
                prim,
                has_annots,
                first_child,
                end,
                ..
            } => {
                let annots = if has_annots {
                    self.read_annots(end)?
                } else {
                    Vec::new()
                };
                let args: Vec<Node> = values.drain(first_child..).collect();
                Ok(prim_node(prim, args, annots))
            }
            Frame::Generic {
                prim,
                args_end,
                first_child,
                end,
            } => {
                if self.offset != args_end {
                    return Err(self.error(DecodeErrorKind::NotEnoughData, args_end));
                }
                let annots = self.read_annots(end)?;
                let args: Vec<Node> = values.drain(first_child..).collect();
                Ok(prim_node(prim, args, annots))
            }
        }
    }

    fn count_node(&mut self, at: usize) -> Result<(), DecodeError> {
        self.node_count += 1;
        if self.node_count > self.limits.max_node_count {
            return Err(self.error(DecodeErrorKind::TooManyNodes, at));
        }
        Ok(())
    }

    fn read_u8(&mut self, end: usize) -> Result<u8, DecodeError> {
        if self.offset >= end {
            return Err(self.error(DecodeErrorKind::NotEnoughData, self.offset));
        }
        let byte = self.input[self.offset];
        self.offset += 1;
        Ok(byte)
    }

    /// Reads a uint30 length and returns the end offset of the region it introduces.
    fn read_length(&mut self, end: usize) -> Result<usize, DecodeError> {
        let start = self.offset;
        let Some(bytes) = self
            .input
            .get(start..start + 4)
            .filter(|_| start + 4 <= end)
        else {
            return Err(self.error(DecodeErrorKind::NotEnoughData, start));
        };
        let length = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if length as usize > UINT30_MAX {
            return Err(self.error(DecodeErrorKind::LengthOutOfRange(length), start));
        }
        self.offset = start + 4;
        let region_end = self.offset + length as usize;
        if region_end > end {
            return Err(self.error(DecodeErrorKind::NotEnoughData, self.offset));
        }
        Ok(region_end)
    }

    fn read_prim(&mut self, end: usize) -> Result<Prim, DecodeError> {
        let at = self.offset;
        let tag = self.read_u8(end)?;
        Prim::from_tag(tag).ok_or_else(|| self.error(DecodeErrorKind::UnknownPrimitive(tag), at))
    }

    fn read_string_bytes(&mut self, end: usize) -> Result<&[u8], DecodeError> {
        let region_end = self.read_length(end)?;
        let bytes = &self.input[self.offset..region_end];
        self.offset = region_end;
        Ok(bytes)
    }

    fn read_annots(&mut self, end: usize) -> Result<Vec<String>, DecodeError> {
        let at = self.offset;
        let bytes = self.read_string_bytes(end)?;
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        let mut annots = Vec::new();
        let mut start = 0;
        for piece in bytes.split(|&b| b == b' ') {
            if !is_valid_annotation(piece) {
                let text = String::from_utf8_lossy(piece).into_owned();
                return Err(self.error(DecodeErrorKind::InvalidAnnotation(text), at + 4 + start));
            }
            // Valid annotations are ASCII, hence UTF-8: the lossy conversion never replaces.
            annots.push(String::from_utf8_lossy(piece).into_owned());
            start += piece.len() + 1;
        }
        Ok(annots)
    }

    /// Reads one node: a leaf entirely, or the head of a node with children as a new frame.
    fn read_node(&mut self, end: usize, first_child: usize) -> Result<Step, DecodeError> {
        let at = self.offset;
        self.count_node(at)?;
        let tag = self.read_u8(end)?;
        let step = match tag {
            TAG_INT => {
                let value = read_z(&self.input[..end], &mut self.offset).map_err(|error| {
                    let kind = match error.kind {
                        kestrel_encoding::error::DecodeErrorKind::TrailingZero => {
                            DecodeErrorKind::TrailingZero
                        }
                        _ => DecodeErrorKind::NotEnoughData,
                    };
                    self.error(kind, error.offset)
                })?;
                Step::Leaf(Node::new(NodeKind::Int(value)))
            }
            TAG_STRING => {
                let string_at = self.offset;
                let bytes = self.read_string_bytes(end)?;
                match std::str::from_utf8(bytes) {
                    Ok(text) => Step::Leaf(Node::new(NodeKind::String(text.to_owned()))),
                    Err(utf8) => {
                        return Err(self.error(
                            DecodeErrorKind::InvalidUtf8,
                            string_at + 4 + utf8.valid_up_to(),
                        ))
                    }
                }
            }
            TAG_BYTES => {
                let bytes = self.read_string_bytes(end)?;
                Step::Leaf(Node::new(NodeKind::Bytes(bytes.to_vec())))
            }
            TAG_SEQ => {
                let seq_end = self.read_length(end)?;
                Step::Open(Frame::Seq {
                    end: seq_end,
                    first_child,
                })
            }
            TAG_PRIM_0 => Step::Leaf(prim_node(self.read_prim(end)?, Vec::new(), Vec::new())),
            TAG_PRIM_0_ANNOTS => {
                let prim = self.read_prim(end)?;
                let annots = self.read_annots(end)?;
                Step::Leaf(prim_node(prim, Vec::new(), annots))
            }
            TAG_PRIM_1 | TAG_PRIM_1_ANNOTS | TAG_PRIM_2 | TAG_PRIM_2_ANNOTS => {
                let prim = self.read_prim(end)?;
                let arg_count = if tag <= TAG_PRIM_1_ANNOTS { 1 } else { 2 };
                Step::Open(Frame::Fixed {
                    prim,
                    arg_count,
                    has_annots: tag == TAG_PRIM_1_ANNOTS || tag == TAG_PRIM_2_ANNOTS,
                    first_child,
                    end,
                })
            }
            TAG_PRIM_GENERIC => {
                let prim = self.read_prim(end)?;
                let args_end = self.read_length(end)?;
                Step::Open(Frame::Generic {
                    prim,
                    args_end,
                    first_child,
                    end,
                })
            }
            other => return Err(self.error(DecodeErrorKind::UnknownNodeTag(other), at)),
        };
        Ok(step)
    }
}

/// What reading one node produced.
enum Step {
    Leaf(Node),
    Open(Frame),
}

fn prim_node(prim: Prim, args: Vec<Node>, annots: Vec<String>) -> Node {
    Node::new(NodeKind::Prim {
        name: PrimName::Known(prim),
        args,
        annots,
    })
}

/// Reads a Zarith `z`, with a fast path for values that fit in 63 bits (almost all of them).
fn read_z(input: &[u8], offset: &mut usize) -> Result<BigInt, kestrel_encoding::DecodeError> {
    let start = *offset;
    // Up to 9 bytes hold 6 + 8 × 7 = 62 bits of magnitude: they fit an i64 exactly.
    let mut magnitude: i64 = 0;
    let mut shift = 0u32;
    for (index, &byte) in input.iter().enumerate().skip(start).take(9) {
        let bits = if index == start {
            i64::from(byte & 0x3f)
        } else {
            i64::from(byte & 0x7f)
        };
        magnitude |= bits << shift;
        shift += if index == start { 6 } else { 7 };
        if byte & 0x80 == 0 {
            if byte == 0 && index > start {
                break; // Trailing zero: let the general reader report it.
            }
            *offset = index + 1;
            let negative = input[start] & 0x40 != 0;
            return Ok(BigInt::from(if negative { -magnitude } else { magnitude }));
        }
    }
    zarith::read_z(input, offset)
}

/// Whether `annot` is a well-formed annotation: 1 to 255 bytes, a sigil among `@ : $ & % ! ?`,
/// then letters, digits, `_`, `.`, `%` or `@` (the characters Octez's lexer accepts in one).
pub fn is_valid_annotation(annot: &[u8]) -> bool {
    let Some((&first, rest)) = annot.split_first() else {
        return false;
    };
    annot.len() <= MAX_ANNOTATION_LENGTH_BYTES
        && matches!(first, b'@' | b':' | b'$' | b'&' | b'%' | b'!' | b'?')
        && rest
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%' | b'@'))
}

/// Encodes `node` in binary.
pub fn encode(node: &Node) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_into(node, &mut out)?;
    Ok(out)
}

/// Appends the binary encoding of `node` to `out` (on error, `out` holds a partial encoding).
pub fn encode_into(node: &Node, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    encode_to(node, out)
}

/// The length in bytes of `node`'s binary encoding, computed without building it (what a
/// script's code size is).
pub fn encoded_size(node: &Node) -> Result<usize, EncodeError> {
    let mut size = ByteCount(0);
    encode_to(node, &mut size)?;
    Ok(size.0)
}

/// Where [`encode_to`] writes: the bytes themselves, or only their count.
trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
    /// How many bytes were appended so far.
    fn written(&self) -> usize;
    /// Overwrites the four bytes appended at `at` (a length placeholder).
    fn patch(&mut self, at: usize, bytes: [u8; 4]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn written(&self) -> usize {
        self.len()
    }

    fn patch(&mut self, at: usize, bytes: [u8; 4]) {
        self[at..at + 4].copy_from_slice(&bytes);
    }
}

/// A [`Sink`] that keeps only the length.
struct ByteCount(usize);

impl Sink for ByteCount {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn written(&self) -> usize {
        self.0
    }

    fn patch(&mut self, _: usize, _: [u8; 4]) {}
}

/// Writes the binary encoding of `node` to `out`.
fn encode_to(node: &Node, out: &mut impl Sink) -> Result<(), EncodeError> {
    enum Task<'a> {
        Node(&'a Node),
        /// Write the length of everything after `length_at + 4` into the placeholder there.
        PatchLength {
            length_at: usize,
            location: usize,
        },
        Annots(&'a [String], usize),
    }
    let mut location = 0usize;
    let mut tasks = vec![Task::Node(node)];
    while let Some(task) = tasks.pop() {
        let node = match task {
            Task::Node(node) => node,
            Task::PatchLength {
                length_at,
                location,
            } => {
                let length = out.written() - length_at - 4;
                let length = u32::try_from(length)
                    .ok()
                    .filter(|&length| length as usize <= UINT30_MAX)
                    .ok_or(EncodeError::TooLarge { location })?;
                out.patch(length_at, length.to_be_bytes());
                continue;
            }
            Task::Annots(annots, location) => {
                write_annots(out, annots, location)?;
                continue;
            }
        };
        let here = location;
        location += 1;
        match &node.kind {
            NodeKind::Int(value) => {
                out.put(&[TAG_INT]);
                write_z(value, out);
            }
            NodeKind::String(value) => {
                out.put(&[TAG_STRING]);
                write_length_prefixed(out, value.as_bytes(), here)?;
            }
            NodeKind::Bytes(value) => {
                out.put(&[TAG_BYTES]);
                write_length_prefixed(out, value, here)?;
            }
            NodeKind::Seq(items) => {
                out.put(&[TAG_SEQ]);
                let length_at = out.written();
                out.put(&[0; 4]);
                tasks.push(Task::PatchLength {
                    length_at,
                    location: here,
                });
                tasks.extend(items.iter().rev().map(Task::Node));
            }
            NodeKind::Prim { name, args, annots } => {
                let Some(prim) = name.known() else {
                    return Err(EncodeError::UnknownPrimitive {
                        name: name.as_str().to_owned(),
                        location: here,
                    });
                };
                let has_annots = !annots.is_empty();
                let tag = match (args.len(), has_annots) {
                    (0, false) => TAG_PRIM_0,
                    (0, true) => TAG_PRIM_0_ANNOTS,
                    (1, false) => TAG_PRIM_1,
                    (1, true) => TAG_PRIM_1_ANNOTS,
                    (2, false) => TAG_PRIM_2,
                    (2, true) => TAG_PRIM_2_ANNOTS,
                    _ => TAG_PRIM_GENERIC,
                };
                out.put(&[tag]);
                out.put(&[prim.tag()]);
                if tag == TAG_PRIM_GENERIC {
                    tasks.push(Task::Annots(annots, here));
                    let length_at = out.written();
                    out.put(&[0; 4]);
                    tasks.push(Task::PatchLength {
                        length_at,
                        location: here,
                    });
                } else if has_annots {
                    tasks.push(Task::Annots(annots, here));
                }
                tasks.extend(args.iter().rev().map(Task::Node));
            }
        }
    }
    Ok(())
}

/// Writes a Zarith `z`, with a fast path for values that fit in an i64.
fn write_z(value: &BigInt, out: &mut impl Sink) {
    use num_traits::ToPrimitive;
    let Some(small) = value.to_i64().filter(|v| *v != i64::MIN) else {
        let mut bytes = Vec::new();
        zarith::write_z(value, &mut bytes);
        out.put(&bytes);
        return;
    };
    let sign_bit = if small < 0 { 0x40 } else { 0 };
    let mut magnitude = small.unsigned_abs();
    let low6 = (magnitude & 0x3f) as u8;
    magnitude >>= 6;
    if magnitude == 0 {
        out.put(&[sign_bit | low6]);
        return;
    }
    out.put(&[0x80 | sign_bit | low6]);
    while magnitude >= 0x80 {
        out.put(&[0x80 | (magnitude & 0x7f) as u8]);
        magnitude >>= 7;
    }
    out.put(&[magnitude as u8]);
}

fn write_length_prefixed(
    out: &mut impl Sink,
    bytes: &[u8],
    location: usize,
) -> Result<(), EncodeError> {
    let length = u32::try_from(bytes.len())
        .ok()
        .filter(|&length| length as usize <= UINT30_MAX)
        .ok_or(EncodeError::TooLarge { location })?;
    out.put(&length.to_be_bytes());
    out.put(bytes);
    Ok(())
}

fn write_annots(
    out: &mut impl Sink,
    annots: &[String],
    location: usize,
) -> Result<(), EncodeError> {
    let total = annots.iter().map(String::len).sum::<usize>() + annots.len().saturating_sub(1);
    let length = u32::try_from(total)
        .ok()
        .filter(|&length| length as usize <= UINT30_MAX)
        .ok_or(EncodeError::TooLarge { location })?;
    out.put(&length.to_be_bytes());
    for (index, annot) in annots.iter().enumerate() {
        if index > 0 {
            out.put(b" ");
        }
        out.put(annot.as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_expression;

    fn hex(bytes: &[u8]) -> String {
        let mut out = String::new();
        crate::print::write_hex(&mut out, bytes);
        out
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap_or_default())
            .collect()
    }

    /// `source` encodes to `expected_hex` and decodes back to the same tree.
    fn check(source: &str, expected_hex: &str) {
        let node = parse_expression(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let encoded = encode(&node).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(hex(&encoded), expected_hex, "{source}");
        assert_eq!(encoded_size(&node).ok(), Some(encoded.len()), "{source}");
        let decoded = decode(&encoded).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(decoded, node, "{source}");
    }

    fn check_error(input_hex: &str, kind: DecodeErrorKind, offset_bytes: usize) {
        let error = decode(&unhex(input_hex)).expect_err(input_hex);
        assert_eq!(error, DecodeError { kind, offset_bytes }, "{input_hex}");
    }

    #[test]
    fn every_tag() {
        check("0", "0000");
        check("1", "0001");
        check("-1", "0041");
        check("64", "008001");
        check("-64", "00c001");
        check("12345678901234567890", "0092abf8b19de3d4d4d602");
        check("-12345678901234567890", "00d2abf8b19de3d4d4d602");
        check("\"foo\"", "0100000003666f6f");
        check("0xdead", "0a00000002dead");
        check("{}", "0200000000");
        check("{ 1 ; 2 }", "020000000400010002");
        check("{ {} }", "02000000050200000000");
    }

    #[test]
    fn applications() {
        check("Unit", "030b");
        check("Pair 1 \"foo\"", "070700010100000003666f6f");
        check("Some 1", "05090001");
        check("CAR @x", "0416000000024078");
        check("DROP @a 2", "06200002000000024061");
        check("CAR @x %y", "0416000000054078202579");
        check("PAIR 3", "05420003");
        check("Pair 1 2 3", "09070000000600010002000300000000");
        check("Pair @p 1 2", "080700010002000000024070");
        check("Pair @p 1 2 3", "090700000006000100020003000000024070");
    }

    #[test]
    fn errors_carry_offsets() {
        check_error("", DecodeErrorKind::NotEnoughData, 0);
        check_error("0b", DecodeErrorKind::UnknownNodeTag(11), 0);
        check_error("03ff", DecodeErrorKind::UnknownPrimitive(255), 1);
        check_error("0100000004666f6f", DecodeErrorKind::NotEnoughData, 5);
        check_error(
            "0140000000",
            DecodeErrorKind::LengthOutOfRange(0x4000_0000),
            1,
        );
        check_error("0080", DecodeErrorKind::NotEnoughData, 2);
        check_error("0180", DecodeErrorKind::NotEnoughData, 1);
        check_error("008000", DecodeErrorKind::TrailingZero, 2);
        check_error("030b00", DecodeErrorKind::ExtraBytes, 2);
        check_error("0100000001ff", DecodeErrorKind::InvalidUtf8, 5);
        check_error(
            "040b0000000178",
            DecodeErrorKind::InvalidAnnotation("x".into()),
            6,
        );
        // A sequence whose item runs past the sequence's length.
        check_error(
            "020000000101000000016161",
            DecodeErrorKind::NotEnoughData,
            6,
        );
    }

    #[test]
    fn non_canonical_forms_octez_accepts() {
        // Tag 4 with no annotations decodes as a plain primitive.
        let node = decode(&unhex("040b00000000")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(node, Node::prim(Prim::D_Unit, vec![]));
        // Tag 9 with one argument: decodes, and re-encodes with the smaller tag 5.
        let node = decode(&unhex("090900000002000100000000")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(node, Node::prim(Prim::D_Some, vec![Node::int(1)]));
        assert_eq!(hex(&encode(&node).unwrap_or_default()), "05090001");
        // Tag 9 whose annotation string is missing.
        assert_eq!(
            decode(&unhex("0909000000020001")).map_err(|e| e.kind),
            Err(DecodeErrorKind::NotEnoughData)
        );
    }

    #[test]
    fn unknown_primitive_cannot_be_encoded() {
        let node = parse_expression("Pair 1 (Stack_elt 2)").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            encode(&node),
            Err(EncodeError::UnknownPrimitive {
                name: "Stack_elt".into(),
                location: 2
            })
        );
    }

    #[test]
    fn depth_100000_round_trips_and_limits_apply() {
        let mut node = Node::int(1);
        for index in 0..100_000 {
            node = if index % 2 == 0 {
                Node::prim(Prim::D_Some, vec![node])
            } else {
                Node::seq(vec![node])
            };
        }
        let encoded = encode(&node).unwrap_or_else(|e| panic!("{e}"));
        let decoded = decode(&encoded).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded, node);
        let limits = DecodeLimits {
            max_depth: 10,
            ..DecodeLimits::default()
        };
        assert_eq!(
            decode_with(&encoded, limits).map_err(|e| e.kind),
            Err(DecodeErrorKind::TooDeep)
        );
        let limits = DecodeLimits {
            max_node_count: 10,
            ..DecodeLimits::default()
        };
        assert_eq!(
            decode_with(&encoded, limits).map_err(|e| e.kind),
            Err(DecodeErrorKind::TooManyNodes)
        );
        let limits = DecodeLimits {
            max_size_bytes: 10,
            ..DecodeLimits::default()
        };
        assert_eq!(
            decode_with(&encoded, limits).map_err(|e| e.kind),
            Err(DecodeErrorKind::TooLarge)
        );
    }
}
