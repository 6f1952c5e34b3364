//! Recursive values in an arena (tutorial Part 3, "Recursive combinator"): a recursive value
//! decoded into a caller-owned [`Arena`], a `Vec` of nodes in preorder addressed by index and
//! reused across messages, and encoded straight back from it, with an explicit stack in both
//! directions.
//!
//! [`mu`](crate::mu) reads a recursive value into a tree of owned values: one heap allocation
//! per `Box`ed level on decode, one per level when a program builds the value, and one free
//! each, with host recursion bounded by a depth limit. This module is the arena alternative for
//! the same bytes: a [`RecursiveArena`] walks the value with a stack of its own (a fixed array,
//! spilling to the heap only past 32 levels), so it allocates nothing per node
//! once the arena has grown, and no input can grow the native stack, whatever the depth limit.
//!
//! **The format is unchanged.** A recursive occurrence in data-encoding is written in place: a
//! node's bytes are its own fields with each sub-value's bytes spliced in where the recursive
//! field sits. A node is therefore a sequence of *segments* separated by its children: the
//! segment before the first child (its head), and one after each child. A [`NodeCodec`] reads
//! and writes one segment at a time with the ordinary encodings (`uint8()`, `int32()`,
//! `union` tags, strings ...) and says after each whether a child follows ([`Step::Child`]) or
//! the node is complete ([`Step::End`]). The arena keeps the nodes in the order their heads
//! appear in the bytes (preorder), so a node's first child is the next node and the next child
//! starts where the previous child's subtree ends ([`Arena::subtree_end`]). The bytes produced
//! and accepted are those of the equivalent `mu` encoding; `tests/arena.rs` checks it both ways
//! on arbitrary values and arbitrary bytes.
//!
//! Callers must guarantee, of their [`NodeCodec`]: a node reads at least one byte (so a value
//! of `n` bytes has at most `n` nodes: the decoder asserts this, since a codec that reads
//! nothing would otherwise loop); `read_after_child` and `write_after_child` agree on the steps
//! with `read_head` and `write_head` (the shape of the value is the codec's, not the arena's).
//! Decoding checks the depth against [`RecursiveArena::max_depth`] exactly as `mu` does (the
//! same error kind at the same offset); encoding checks it too, and checks that every child the
//! codec asks for is in the arena.

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::reader::Reader;
use crate::writer::Writer;

/// The default nesting limit: that of [`mu`](crate::mu), so that the arena and the tree of
/// owned values accept the same inputs. The arena itself needs no limit for the stack's sake
/// (past a few levels its stack is on the heap, two words per level); the limit bounds the work an
/// input can ask for and keeps both readers of one format in agreement.
pub const DEFAULT_MAX_DEPTH: usize = crate::recursive::DEFAULT_MAX_DEPTH;

/// What follows a segment of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A child node's bytes follow, then the node's next segment.
    Child,
    /// The node is complete.
    End,
}

/// How the nodes of one recursive type are read and written, a segment at a time (see the
/// module documentation). The child passed as `child_index` counts from 0 within its parent.
pub trait NodeCodec {
    /// A node as stored in the arena; it may borrow from an input that lives for `'a`.
    type Node<'a>;

    /// The fewest bytes a node reads itself (at least 1, the module's precondition); with it
    /// [`RecursiveArena::read_into`] reserves room for the most nodes an input can hold.
    const MIN_NODE_BYTES: usize = 1;

    /// The bytes `node` writes itself (all its segments, not its children), so that a write can
    /// reserve its output once: exact if the codec says so, else a lower bound (by default
    /// [`NodeCodec::MIN_NODE_BYTES`]). Only the allocation depends on it, never the bytes.
    #[inline]
    fn node_size_bytes(&self, node: &Self::Node<'_>) -> usize {
        let _ = node;
        Self::MIN_NODE_BYTES
    }

    /// Reads a node's head: the fields before its first child (all of them if it has none).
    fn read_head<'a>(&self, reader: &mut Reader<'a>)
        -> Result<(Self::Node<'a>, Step), DecodeError>;

    /// Reads the segment of `node` that follows its child `child_index`.
    fn read_after_child<'a>(
        &self,
        node: &mut Self::Node<'a>,
        child_index: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Step, DecodeError>;

    /// Writes a node's head.
    fn write_head(
        &self,
        node: &Self::Node<'_>,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError>;

    /// Writes the segment of `node` that follows its child `child_index`.
    fn write_after_child(
        &self,
        node: &Self::Node<'_>,
        child_index: usize,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError>;
}

/// A node whose children are being read or written: its index and how many children are done.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    index: usize,
    children_done: usize,
}

/// Frames kept inline on the host stack before the walk spills to the heap: 32 levels cover
/// the values these formats carry in practice (an eval expression is at most 10 deep, Tezos
/// tree-shaped P2P and RPC values a few levels), in 512 bytes of native stack per walk.
const INLINE_FRAMES: usize = 32;

/// The walk's stack: the first [`INLINE_FRAMES`] frames in an array, deeper ones in a `Vec`
/// (allocated only by values deeper than that), so a walk of a shallow value allocates nothing.
struct FrameStack {
    inline: [Frame; INLINE_FRAMES],
    inline_length: usize,
    spilled: Vec<Frame>,
}

impl FrameStack {
    #[inline]
    fn new() -> Self {
        FrameStack {
            inline: [Frame::default(); INLINE_FRAMES],
            inline_length: 0,
            spilled: Vec::new(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.inline_length + self.spilled.len()
    }

    #[inline]
    fn push(&mut self, frame: Frame) {
        if self.inline_length < INLINE_FRAMES {
            self.inline[self.inline_length] = frame;
            self.inline_length += 1;
        } else {
            self.spilled.push(frame);
        }
    }

    #[inline]
    fn last_mut(&mut self) -> Option<&mut Frame> {
        if self.spilled.is_empty() {
            let top = self.inline_length.checked_sub(1)?;
            self.inline.get_mut(top)
        } else {
            self.spilled.last_mut()
        }
    }

    #[inline]
    fn pop(&mut self) {
        if self.spilled.pop().is_none() {
            self.inline_length = self.inline_length.saturating_sub(1);
        }
    }
}

/// The most nodes [`RecursiveArena::read_into`] reserves room for from the input's size
/// before reading: a fresh arena is then allocated once for typical values, while a large
/// input cannot make it reserve more than this (about 100 KiB for small nodes) before the
/// nodes are actually read; past it the arena grows as a `Vec` does.
pub const RESERVE_MAX_NODES: usize = 4096;

/// One node and the end of its subtree, side by side (one allocation for both).
#[derive(Debug, Clone)]
struct Entry<N> {
    node: N,
    /// The index one past the last node of this node's subtree.
    subtree_end: usize,
}

/// Nodes of recursive values in preorder, addressed by index; clear and reuse it across values
/// so that steady-state decoding allocates nothing.
#[derive(Debug, Clone)]
pub struct Arena<N> {
    entries: Vec<Entry<N>>,
}

impl<N> Default for Arena<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<N> Arena<N> {
    /// An empty arena (no allocation until the first node).
    pub fn new() -> Self {
        Arena {
            entries: Vec::new(),
        }
    }

    /// An empty arena with room for `nodes_capacity` nodes.
    pub fn with_capacity(nodes_capacity: usize) -> Self {
        Arena {
            entries: Vec::with_capacity(nodes_capacity),
        }
    }

    /// Removes every node, keeping the allocation.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Makes room for at least `additional_nodes` more nodes.
    pub fn reserve(&mut self, additional_nodes: usize) {
        self.entries.reserve(additional_nodes);
    }

    /// The same arena, emptied, for nodes of another type, typically the same node type with
    /// another input lifetime (`Arena<Node<'old>>` to `Arena<Node<'new>>`); the allocation is
    /// kept when the two node types have the same size and alignment.
    pub fn recycle<M>(self) -> Arena<M> {
        let mut entries = self.entries;
        entries.clear();
        Arena {
            // The vector is empty, so the closure never runs; collecting an empty `IntoIter`
            // into a `Vec` of a same-layout type reuses its buffer.
            entries: entries.into_iter().map(|_| unreachable_node()).collect(),
        }
    }

    /// The number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many nodes the arena holds without allocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Whether the arena holds no node.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All nodes in preorder (a parent before its children, children in order); reversed, every
    /// node comes after all of its descendants.
    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &N> + ExactSizeIterator + '_ {
        self.entries.iter().map(|entry| &entry.node)
    }

    /// The node at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&N> {
        self.entries.get(index).map(|entry| &entry.node)
    }

    /// The node at `index`, mutably, if any (to fill in fields after its children were built).
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<&mut N> {
        self.entries.get_mut(index).map(|entry| &mut entry.node)
    }

    /// One past the last node of the subtree rooted at `index` (for a node still open, the
    /// index after its head).
    pub fn subtree_end(&self, index: usize) -> Option<usize> {
        self.entries.get(index).map(|entry| entry.subtree_end)
    }

    /// The indices of the children of the node at `index`, in order.
    pub fn children(&self, index: usize) -> Children<'_, N> {
        let end = self.subtree_end(index).unwrap_or(index);
        Children {
            arena: self,
            next: index + 1,
            end,
        }
    }

    /// Builder: appends `node`, whose children (pushed next) make up its subtree until
    /// [`Arena::close`]; returns its index.
    #[inline]
    pub fn open(&mut self, node: N) -> usize {
        let index = self.entries.len();
        self.entries.push(Entry {
            node,
            subtree_end: index + 1,
        });
        index
    }

    /// Builder: ends the subtree of the node at `index` after the nodes pushed so far.
    #[inline]
    pub fn close(&mut self, index: usize) {
        let end = self.entries.len();
        if let Some(entry) = self.entries.get_mut(index) {
            entry.subtree_end = end;
        }
    }

    /// Builder: appends a node without children; returns its index.
    #[inline]
    pub fn push_leaf(&mut self, node: N) -> usize {
        self.open(node)
    }
}

fn unreachable_node<T>() -> T {
    // `recycle` maps an empty vector.
    unreachable!("Arena::recycle maps an empty vector")
}

/// The children of one node, as indices (see [`Arena::children`]).
#[derive(Debug)]
pub struct Children<'r, N> {
    arena: &'r Arena<N>,
    next: usize,
    end: usize,
}

impl<N> Iterator for Children<'_, N> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.next >= self.end {
            return None;
        }
        let child = self.next;
        self.next = self.arena.subtree_end(child)?.max(child + 1);
        Some(child)
    }
}

/// Why a value could not be written from an arena.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArenaEncodeError {
    /// A segment or the depth failed to encode (the usual encode errors).
    Encode(EncodeError),
    /// The codec asked for a child of the node at `parent_index` past the arena's last node.
    MissingChild {
        /// The node whose child is missing.
        parent_index: usize,
    },
    /// The value given as the root is not in the arena.
    MissingRoot {
        /// The index asked for.
        root_index: usize,
        /// The arena's length.
        length: usize,
    },
    /// The codec completed the root before the arena's last node (only when a whole arena is
    /// written as one value, [`RecursiveArena::encode_into`]).
    UnreachedNodes {
        /// The first node the walk did not reach.
        first_index: usize,
    },
}

impl From<EncodeError> for ArenaEncodeError {
    fn from(error: EncodeError) -> Self {
        ArenaEncodeError::Encode(error)
    }
}

impl std::fmt::Display for ArenaEncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArenaEncodeError::Encode(error) => error.fmt(f),
            ArenaEncodeError::MissingChild { parent_index } => write!(
                f,
                "node {parent_index} has a child past the end of the arena"
            ),
            ArenaEncodeError::MissingRoot { root_index, length } => {
                write!(f, "root {root_index} is not in an arena of {length} nodes")
            }
            ArenaEncodeError::UnreachedNodes { first_index } => {
                write!(f, "the value ends before the arena's node {first_index}")
            }
        }
    }
}

impl std::error::Error for ArenaEncodeError {}

/// A recursive encoding that decodes into and encodes from an [`Arena`]: a [`NodeCodec`] and a
/// depth limit. Built once, used for any number of values.
#[derive(Debug, Clone, Copy)]
pub struct RecursiveArena<C> {
    codec: C,
    max_depth: usize,
}

impl<C: NodeCodec> RecursiveArena<C> {
    /// The codec with [`DEFAULT_MAX_DEPTH`].
    pub fn new(codec: C) -> Self {
        Self::with_max_depth(codec, DEFAULT_MAX_DEPTH)
    }

    /// The codec with a nesting limit of `max_depth` nodes (a root alone is depth 1, as in
    /// [`mu_with_max_depth`](crate::mu_with_max_depth)).
    pub fn with_max_depth(codec: C, max_depth: usize) -> Self {
        RecursiveArena { codec, max_depth }
    }

    /// The nesting limit.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The node codec.
    pub fn codec(&self) -> &C {
        &self.codec
    }

    #[cold]
    #[inline(never)]
    fn depth_exceeded_on_read(&self, reader: &Reader<'_>) -> DecodeError {
        reader.error(DecodeErrorKind::DepthLimitExceeded {
            max_depth: self.max_depth,
        })
    }

    #[cold]
    #[inline(never)]
    fn depth_exceeded_on_write(&self, writer: &Writer<'_>) -> ArenaEncodeError {
        ArenaEncodeError::Encode(writer.error(EncodeErrorKind::DepthLimitExceeded {
            max_depth: self.max_depth,
        }))
    }

    /// Reads one value at the reader's offset and appends its nodes to `arena`; returns the
    /// root's index. On error the arena holds part of the value (clear it before reuse).
    pub fn read_into<'a>(
        &self,
        reader: &mut Reader<'a>,
        arena: &mut Arena<C::Node<'a>>,
    ) -> Result<usize, DecodeError> {
        let root = arena.len();
        // With at least one byte per node (the module's precondition), a value has at most
        // as many nodes as there are bytes left.
        let nodes_limit = reader.remaining_bytes();
        // Room for as many nodes as the bytes left can hold, up to a bound, so a fresh arena
        // is allocated once for a typical value (a reused one has room already).
        arena.reserve((nodes_limit / C::MIN_NODE_BYTES.max(1)).min(RESERVE_MAX_NODES));
        let mut stack = FrameStack::new();
        loop {
            // A new node starts here: the root, or the next child of the node on top.
            if stack.len() >= self.max_depth {
                return Err(self.depth_exceeded_on_read(reader));
            }
            // More nodes than bytes means the codec read nothing: stop rather than loop for
            // ever (a bug in the codec, not bad input).
            assert!(
                arena.len() - root <= nodes_limit,
                "a NodeCodec read a node of zero bytes"
            );
            let (node, step) = self.codec.read_head(reader)?;
            let mut index = arena.open(node);
            if step == Step::Child {
                stack.push(Frame {
                    index,
                    children_done: 0,
                });
                continue;
            }
            // The node at `index` is complete: close it and resume its parents until one
            // asks for another child or the root is complete.
            loop {
                arena.close(index);
                let Some(frame) = stack.last_mut() else {
                    return Ok(root);
                };
                index = frame.index;
                let child_index = frame.children_done;
                frame.children_done += 1;
                let step = self.codec.read_after_child(
                    &mut arena.entries[index].node,
                    child_index,
                    reader,
                )?;
                if step == Step::Child {
                    break;
                }
                stack.pop();
            }
        }
    }

    /// Decodes `input`, which must hold exactly one value, into `arena` (cleared first); the
    /// root is node 0.
    pub fn decode_into<'a>(
        &self,
        input: &'a [u8],
        arena: &mut Arena<C::Node<'a>>,
    ) -> Result<(), DecodeError> {
        arena.clear();
        let mut reader = Reader::new(input);
        self.read_into(&mut reader, arena)?;
        reader.finish()
    }

    /// The bytes the value rooted at `root` takes, as far as [`NodeCodec::node_size_bytes`]
    /// knows (exact when it is): the sum over the root's subtree. 0 if `root` is not in the
    /// arena.
    pub fn size_hint_bytes(&self, arena: &Arena<C::Node<'_>>, root: usize) -> usize {
        let end = arena.subtree_end(root).unwrap_or(root);
        arena
            .entries
            .get(root..end)
            .unwrap_or_default()
            .iter()
            .map(|entry| self.codec.node_size_bytes(&entry.node))
            .sum()
    }

    /// Writes the value rooted at `root` (its subtree, as the codec's steps walk it); returns
    /// the index one past its last node. It reserves nothing: a caller writing into a fresh
    /// buffer reserves [`RecursiveArena::size_hint_bytes`] first, as `encode_into` does.
    pub fn write(
        &self,
        arena: &Arena<C::Node<'_>>,
        root: usize,
        writer: &mut Writer<'_>,
    ) -> Result<usize, ArenaEncodeError> {
        let nodes = &arena.entries;
        if root >= nodes.len() {
            return Err(ArenaEncodeError::MissingRoot {
                root_index: root,
                length: nodes.len(),
            });
        }
        let mut stack = FrameStack::new();
        let mut next = root;
        loop {
            if stack.len() >= self.max_depth {
                return Err(self.depth_exceeded_on_write(writer));
            }
            let index = next;
            next += 1;
            if self.codec.write_head(&nodes[index].node, writer)? == Step::Child {
                if next >= nodes.len() {
                    return Err(ArenaEncodeError::MissingChild {
                        parent_index: index,
                    });
                }
                stack.push(Frame {
                    index,
                    children_done: 0,
                });
                continue;
            }
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(next);
                };
                let parent = frame.index;
                let child_index = frame.children_done;
                frame.children_done += 1;
                if self
                    .codec
                    .write_after_child(&nodes[parent].node, child_index, writer)?
                    == Step::Child
                {
                    if next >= nodes.len() {
                        return Err(ArenaEncodeError::MissingChild {
                            parent_index: parent,
                        });
                    }
                    break;
                }
                stack.pop();
            }
        }
    }

    /// Appends the binary form of the whole arena, one value rooted at node 0, to `out`, after
    /// reserving [`RecursiveArena::size_hint_bytes`] there.
    pub fn encode_into(
        &self,
        arena: &Arena<C::Node<'_>>,
        out: &mut Vec<u8>,
    ) -> Result<(), ArenaEncodeError> {
        out.reserve(self.size_hint_bytes(arena, 0));
        let end = self.write(arena, 0, &mut Writer::new(out))?;
        if end != arena.len() {
            return Err(ArenaEncodeError::UnreachedNodes { first_index: end });
        }
        Ok(())
    }

    /// The binary form of the whole arena in a new buffer.
    pub fn encode(&self, arena: &Arena<C::Node<'_>>) -> Result<Vec<u8>, ArenaEncodeError> {
        let mut out = Vec::new();
        self.encode_into(arena, &mut out)?;
        Ok(out)
    }
}

/// Reads a union tag of `tag_size` for a codec's segment; returns it with the offset it
/// started at (for [`unexpected_tag`]).
#[inline]
pub fn read_tag(
    reader: &mut Reader<'_>,
    tag_size: crate::TagSize,
) -> Result<(u16, usize), DecodeError> {
    let offset = reader.offset();
    let tag = match tag_size {
        crate::TagSize::Uint8 => u16::from(reader.take_u8()?),
        crate::TagSize::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?),
    };
    Ok((tag, offset))
}

/// The error a union reports for a tag that names no case: at the tag's offset, as
/// [`union()`](crate::union()) does.
#[cold]
pub fn unexpected_tag(tag: u16, offset: usize) -> DecodeError {
    DecodeError::new(DecodeErrorKind::UnexpectedTag(tag.into()), offset)
}

/// Writes a union tag of `tag_size`.
#[inline]
pub fn write_tag(writer: &mut Writer<'_>, tag: u16, tag_size: crate::TagSize) {
    match tag_size {
        crate::TagSize::Uint8 => writer.put_u8(tag as u8),
        crate::TagSize::Uint16 => writer.put(&tag.to_be_bytes()),
    }
}
