//! In-memory tree objects: flat nodes, inode values and inode trees, their entries, their lazily
//! computed and cached hashes, and the directory operations (find, set, remove) that keep large
//! directories in the canonical inode shape the hash requires.
//!
//! Spec: tezos-context-hash-SPEC.md, "Nodes", "Inodes", "Inode decomposition", "Inode search",
//! "Inode add". Objects are immutable once built and shared through `Arc`, so a checked-out tree is
//! a cheap snapshot: an update copies only the path from the root to the changed entry. Children
//! are either in memory or stored (a pack-file offset plus the child's hash); stored children are
//! loaded through an [`ObjectSource`]. Callers must hand directory operations a directory object
//! (flat, or an inode tree of depth 0); objects decoded from a store are checked for this on load.

use crate::error::ContextError;
use crate::hash::{
    blake2b_params, encode_flat_entry, encode_flat_node, encode_inode_tree, encode_inode_value,
    hash_encoding, hash_of, ContextHash, Kind, FLAT_NODE_MAX_ENTRIES, INODE_ENTRIES_MAX,
};
use crate::ocaml_hash::ocaml_hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Inode tries deeper than this are refused. Each depth re-seeds OCaml's 30-bit hash, so 33 names
/// colliding on 5 bits at 16 successive depths (80 bits) cannot happen by chance; a 10^9-entry
/// directory needs depth 6. Bounds the (host) recursion of the inode operations.
pub const INODE_DEPTH_MAX: u32 = 16;

/// Values up to this size are stored inside their parent node's record instead of as objects of
/// their own (most Tezos values are under 64 bytes; see docs/formats/pack-file.md).
pub const INLINE_CONTENTS_MAX_BYTES: usize = 128;

/// The name of a tree entry (shared, so copying a node to change one entry copies no names).
pub(crate) type Name = Arc<[u8]>;

/// Where stored objects come from: a store, or nothing (for trees built only in memory).
pub trait ObjectSource {
    /// Loads the node object at `offset` whose hash is `hash`.
    fn load_node(&self, offset: u64, hash: &ContextHash) -> Result<Arc<NodeObject>, ContextError>;
    /// Loads the bytes of a large contents object at `offset` of `length_bytes` bytes.
    fn load_contents(&self, offset: u64, length_bytes: u64) -> Result<Arc<[u8]>, ContextError>;
    /// Loads the node object at `offset` for a caller about to replace it by a changed version
    /// (an update on its path). A store hands over its cached copy instead of sharing it: the
    /// version being replaced is not read again by the replay, so it stops taking cache room, and
    /// a copy nobody else holds can be changed in place instead of copied. Default:
    /// [`ObjectSource::load_node`].
    fn load_node_for_update(
        &self,
        offset: u64,
        hash: &ContextHash,
    ) -> Result<Arc<NodeObject>, ContextError> {
        self.load_node(offset, hash)
    }
}

/// The source of trees that live only in memory: every load is an error ([`ContextError::NoStore`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct InMemory;

impl ObjectSource for InMemory {
    fn load_node(&self, _: u64, _: &ContextHash) -> Result<Arc<NodeObject>, ContextError> {
        Err(ContextError::NoStore)
    }
    fn load_contents(&self, _: u64, _: u64) -> Result<Arc<[u8]>, ContextError> {
        Err(ContextError::NoStore)
    }
}

/// A node, inode value or inode tree, with its hash and pack offset once known.
pub struct NodeObject {
    pub(crate) body: NodeBody,
    pub(crate) hash: OnceLock<ContextHash>,
    pub(crate) offset: OnceLock<u64>,
    /// For a flat directory of more than [`FLAT_SPLIT_MIN_ENTRIES`] entries: where each of its
    /// parts is in the pack (docs/formats/pack-file.md, tags 6 and 7), by inode index at depth 0;
    /// 0 for a part that must be written. Inherited from the version this object was derived
    /// from with the changed parts zeroed, so a commit rewrites only the parts that changed.
    /// Atomics only because written objects are shared: a store fills them from one thread.
    pub(crate) parts: OnceLock<Box<FlatParts>>,
    /// For a flat directory of at least [`FLAT_HASH_SNAPSHOT_MIN_ENTRIES`] entries, once hashed:
    /// BLAKE2b states part-way through its hash encoding.
    pub(crate) hash_states: OnceLock<Arc<FlatHashStates>>,
    /// The states of the version this object was derived from by replacing entries, and how many
    /// leading entries are unchanged since: hashing resumes from the last state before the first
    /// change instead of from the start (the encoding is a stream, so the prefix is the same).
    pub(crate) hash_reuse: Option<(Arc<FlatHashStates>, usize)>,
}

/// Flat directories with at least this many entries keep hash snapshots: below, rehashing
/// (at most about 7 KB) costs less than keeping the states.
pub const FLAT_HASH_SNAPSHOT_MIN_ENTRIES: usize = 64;

/// Entries between two hash snapshots (about 1.8 KB of encoding for 64-byte names; a snapshot
/// is about 250 bytes).
const FLAT_HASH_SNAPSHOT_ENTRIES: usize = 16;

/// BLAKE2b states while hashing a flat directory of `entry_count` entries: `states[k]` is the
/// state after the entry count and the first `k * FLAT_HASH_SNAPSHOT_ENTRIES` entries.
pub(crate) struct FlatHashStates {
    entry_count: usize,
    states: Vec<blake2b_simd::State>,
}

/// The hash snapshots `object` offers to a version derived from it, with its unchanged prefix.
fn hash_reuse_of(object: &NodeObject) -> Option<(Arc<FlatHashStates>, usize)> {
    match object.hash_states.get() {
        Some(states) => Some((states.clone(), states.entry_count)),
        None => object.hash_reuse.clone(),
    }
}

impl NodeObject {
    /// Forgets the hash and offset of an object about to be changed in place (it is held by
    /// nobody else), keeping its hash snapshots for the new version.
    pub(crate) fn reset_for_update(&mut self) {
        self.hash_reuse = hash_reuse_of(self);
        self.hash_states = OnceLock::new();
        self.hash = OnceLock::new();
        self.offset = OnceLock::new();
    }
}

/// Flat directories with more entries than this are stored in parts (by inode index at depth 0,
/// as Irmin stores directories of more than 32 entries as inodes), while their hash stays the
/// flat hash up to 256 entries (tezos-context-hash-SPEC.md, "Nodes").
pub const FLAT_SPLIT_MIN_ENTRIES: usize = INODE_ENTRIES_MAX;

/// The pack offsets of a split flat directory's parts, by part index (0: not written).
pub(crate) type FlatParts = [AtomicU64; INODE_ENTRIES_MAX];

/// Fresh part offsets, all to be written.
pub(crate) fn flat_parts_empty() -> Box<FlatParts> {
    Box::new(std::array::from_fn(|_| AtomicU64::new(0)))
}

/// The part offsets of `parts` with the part holding `name` marked for rewriting.
fn flat_parts_derived(parts: Option<&FlatParts>, name: &[u8]) -> OnceLock<Box<FlatParts>> {
    let Some(parts) = parts else {
        return OnceLock::new();
    };
    let derived: Box<FlatParts> = Box::new(std::array::from_fn(|index| {
        AtomicU64::new(parts[index].load(Ordering::Relaxed))
    }));
    derived[usize::from(inode_index(0, name))].store(0, Ordering::Relaxed);
    OnceLock::from(derived)
}

/// The three shapes of node objects.
pub(crate) enum NodeBody {
    /// A directory of at most 256 entries, sorted by name.
    Flat(Vec<Entry>),
    /// An inode value: at most 32 entries, sorted by name, below an inode tree.
    Values(Vec<Entry>),
    /// An inode tree: `length` entries reachable through at most 32 pointers, by increasing index.
    Tree {
        depth: u32,
        length: u64,
        pointers: Vec<(u8, NodeRef)>,
    },
}

/// One binding of a directory.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) name: Name,
    pub(crate) value: Value,
}

/// What an entry points to.
#[derive(Clone)]
pub(crate) enum Value {
    Contents(Contents),
    Node(NodeRef),
}

/// Contents with their hash, computed once when they enter the tree.
#[derive(Clone)]
pub(crate) struct Contents {
    pub(crate) hash: ContextHash,
    pub(crate) body: ContentsBody,
}

/// Small contents are kept inline; large ones are objects of their own.
#[derive(Clone)]
pub(crate) enum ContentsBody {
    Inline(Arc<[u8]>),
    Large(Arc<LargeContents>),
}

/// A large contents object: its bytes once loaded, its offset once written.
pub(crate) struct LargeContents {
    pub(crate) length_bytes: u64,
    pub(crate) bytes: OnceLock<Arc<[u8]>>,
    pub(crate) offset: OnceLock<u64>,
}

/// A reference to a node object.
#[derive(Clone)]
pub(crate) enum NodeRef {
    Memory(Arc<NodeObject>),
    Stored { offset: u64, hash: ContextHash },
}

impl NodeObject {
    pub(crate) fn new(body: NodeBody) -> NodeObject {
        NodeObject {
            body,
            hash: OnceLock::new(),
            offset: OnceLock::new(),
            parts: OnceLock::new(),
            hash_states: OnceLock::new(),
            hash_reuse: None,
        }
    }

    /// The number of directory entries reachable from this object.
    pub(crate) fn length(&self) -> u64 {
        match &self.body {
            NodeBody::Flat(entries) | NodeBody::Values(entries) => entries.len() as u64,
            NodeBody::Tree { length, .. } => *length,
        }
    }

    fn bad(&self, rule: &'static str) -> ContextError {
        ContextError::BadObject {
            offset_bytes: self.offset.get().copied(),
            rule,
        }
    }
}

impl Drop for NodeObject {
    // Dropping a deep chain of directories must not recurse on the host stack: children that
    // this object owns alone are moved to an explicit stack and emptied one by one.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_memory_children(&mut self.body, &mut stack);
        while let Some(child) = stack.pop() {
            if let Some(mut object) = Arc::into_inner(child) {
                take_memory_children(&mut object.body, &mut stack);
            }
        }
    }
}

fn take_memory_children(body: &mut NodeBody, stack: &mut Vec<Arc<NodeObject>>) {
    match body {
        NodeBody::Flat(entries) | NodeBody::Values(entries) => {
            if entries
                .iter()
                .any(|entry| matches!(entry.value, Value::Node(NodeRef::Memory(_))))
            {
                for entry in entries.drain(..) {
                    if let Value::Node(NodeRef::Memory(child)) = entry.value {
                        stack.push(child);
                    }
                }
            }
        }
        NodeBody::Tree { pointers, .. } => {
            for (_, pointer) in pointers.drain(..) {
                if let NodeRef::Memory(child) = pointer {
                    stack.push(child);
                }
            }
        }
    }
}

impl NodeRef {
    /// The hash, if known (stored objects always know it; memory objects once hashed).
    pub(crate) fn known_hash(&self) -> Option<&ContextHash> {
        match self {
            NodeRef::Memory(object) => object.hash.get(),
            NodeRef::Stored { hash, .. } => Some(hash),
        }
    }

    fn memory(object: NodeObject) -> NodeRef {
        NodeRef::Memory(Arc::new(object))
    }
}

impl Value {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Value::Contents(_) => Kind::Contents,
            Value::Node(_) => Kind::Node,
        }
    }

    /// The hash; for a memory node, only after [`ensure_hash`] ran on an ancestor (a bug otherwise).
    pub(crate) fn hash_ref(&self) -> &ContextHash {
        match self {
            Value::Contents(contents) => &contents.hash,
            Value::Node(node) => node
                .known_hash()
                .expect("children are hashed before their parent"),
        }
    }
}

impl Contents {
    /// Contents for `bytes`, hashed now.
    pub(crate) fn new(bytes: &[u8]) -> Contents {
        let hash = crate::hash::contents_hash(bytes);
        let body = if bytes.len() <= INLINE_CONTENTS_MAX_BYTES {
            ContentsBody::Inline(Arc::from(bytes))
        } else {
            ContentsBody::Large(Arc::new(LargeContents {
                length_bytes: bytes.len() as u64,
                bytes: OnceLock::from(Arc::<[u8]>::from(bytes)),
                offset: OnceLock::new(),
            }))
        };
        Contents { hash, body }
    }

    /// A stand-in for a value moved out of an entry during an in-place update; always
    /// overwritten or removed before the update returns.
    pub(crate) fn placeholder() -> Contents {
        Contents {
            hash: ContextHash::default(),
            body: ContentsBody::Inline(Arc::from(&[][..])),
        }
    }

    /// The bytes, loading them from `source` if they are stored apart.
    pub(crate) fn bytes(&self, source: &dyn ObjectSource) -> Result<Arc<[u8]>, ContextError> {
        match &self.body {
            ContentsBody::Inline(bytes) => Ok(bytes.clone()),
            ContentsBody::Large(large) => {
                if let Some(bytes) = large.bytes.get() {
                    return Ok(bytes.clone());
                }
                let offset = *large.offset.get().ok_or(ContextError::NoStore)?;
                source.load_contents(offset, large.length_bytes)
            }
        }
    }
}

/// The inode child of `name` at `depth` (spec, "Index function").
#[inline]
pub(crate) fn inode_index(depth: u32, name: &[u8]) -> u8 {
    (ocaml_hash(depth, name) % INODE_ENTRIES_MAX as u32) as u8
}

/// The object a reference designates.
#[inline]
pub(crate) fn load(
    source: &dyn ObjectSource,
    node: &NodeRef,
) -> Result<Arc<NodeObject>, ContextError> {
    match node {
        NodeRef::Memory(object) => Ok(object.clone()),
        NodeRef::Stored { offset, hash } => source.load_node(*offset, hash),
    }
}

/// Where the pointer of inode index `index` is in `pointers` (sorted by strictly increasing
/// index below 32), or where it would go. Position `p` holds an index between `p` and
/// `p + missing` (`missing` = 32 - pointer count), so only the positions from `index - missing`
/// to `index` can hold `index`: a full inode tree, as every upper level of a large directory is,
/// holds it at position `index` (no search), a nearly full one within a few adjacent slots.
/// A binary search over all (up to 32) 56-byte pointers touched a cache line per step: under
/// `perf`, two fifths of `directory_find`'s own time late in a 30,000-block replay.
#[inline]
fn pointer_position(pointers: &[(u8, NodeRef)], index: u8) -> Result<usize, usize> {
    let missing = INODE_ENTRIES_MAX.saturating_sub(pointers.len());
    let first = usize::from(index).saturating_sub(missing);
    let end = (usize::from(index) + 1).min(pointers.len()).max(first);
    // Every position before `first` holds a smaller index and every one from `end` a larger
    // one, so the window's answer (found, or where to insert) is the whole slice's.
    match pointers[first..end].binary_search_by_key(&index, |(slot, _)| *slot) {
        Ok(position) => Ok(first + position),
        Err(position) => Err(first + position),
    }
}

/// [`load`] for an update that replaces the object (see [`ObjectSource::load_node_for_update`]).
#[inline]
pub(crate) fn load_for_update(
    source: &dyn ObjectSource,
    node: &NodeRef,
) -> Result<Arc<NodeObject>, ContextError> {
    match node {
        NodeRef::Memory(object) => Ok(object.clone()),
        NodeRef::Stored { offset, hash } => source.load_node_for_update(*offset, hash),
    }
}

fn search(entries: &[Entry], name: &[u8]) -> Result<usize, usize> {
    entries.binary_search_by(|entry| (*entry.name).cmp(name))
}

/// The value bound to `name` in the directory `directory`. Walks in-memory inode levels by
/// reference (no reference-count traffic) and switches to owned handles at the first stored one.
pub(crate) fn directory_find(
    source: &dyn ObjectSource,
    directory: &NodeObject,
    name: &[u8],
) -> Result<Option<Value>, ContextError> {
    let mut node = directory;
    loop {
        match &node.body {
            NodeBody::Flat(entries) | NodeBody::Values(entries) => {
                return Ok(search(entries, name)
                    .ok()
                    .map(|index| entries[index].value.clone()));
            }
            NodeBody::Tree {
                depth, pointers, ..
            } => {
                let index = inode_index(*depth, name);
                let position = pointer_position(pointers, index);
                match position.ok().map(|position| &pointers[position]) {
                    None => return Ok(None),
                    Some((_, NodeRef::Memory(child))) => node = child,
                    Some((_, stored)) => {
                        let loaded = load(source, stored)?;
                        return directory_find_owned(source, loaded, name);
                    }
                }
            }
        }
    }
}

/// [`directory_find`] below a stored inode: each level is a loaded (owned) object.
fn directory_find_owned(
    source: &dyn ObjectSource,
    directory: Arc<NodeObject>,
    name: &[u8],
) -> Result<Option<Value>, ContextError> {
    let mut current = directory;
    loop {
        let next = match &current.body {
            NodeBody::Flat(entries) | NodeBody::Values(entries) => {
                return Ok(search(entries, name)
                    .ok()
                    .map(|index| entries[index].value.clone()));
            }
            NodeBody::Tree {
                depth, pointers, ..
            } => {
                let index = inode_index(*depth, name);
                match pointer_position(pointers, index) {
                    Err(_) => return Ok(None),
                    Ok(position) => load(source, &pointers[position].1)?,
                }
            }
        };
        current = next;
    }
}

/// Binds (`Some`) or unbinds (`None`) `name` in `directory` (absent: an empty directory), returning
/// the new directory, or `None` when it ends up empty (empty directories do not exist in the
/// context). Unbinding a missing name returns the directory unchanged.
pub(crate) fn directory_set(
    source: &dyn ObjectSource,
    directory: Option<&Arc<NodeObject>>,
    name: &[u8],
    value: Option<Value>,
) -> Result<Option<NodeRef>, ContextError> {
    let Some(directory) = directory else {
        return Ok(value.map(|value| {
            NodeRef::memory(NodeObject::new(NodeBody::Flat(vec![Entry {
                name: Arc::from(name),
                value,
            }])))
        }));
    };
    match &directory.body {
        NodeBody::Flat(entries) => {
            let mut entries_new;
            let mut hash_reuse = None;
            match (search(entries, name), value) {
                (Ok(index), Some(value)) => {
                    entries_new = entries.clone();
                    entries_new[index].value = value;
                    hash_reuse = hash_reuse_of(directory)
                        .map(|(states, unchanged)| (states, unchanged.min(index)));
                }
                (Ok(index), None) => {
                    if entries.len() == 1 {
                        return Ok(None);
                    }
                    entries_new = Vec::with_capacity(entries.len() - 1);
                    entries_new.extend_from_slice(&entries[..index]);
                    entries_new.extend_from_slice(&entries[index + 1..]);
                }
                (Err(_), None) => return Ok(Some(NodeRef::Memory(directory.clone()))),
                (Err(index), Some(value)) => {
                    entries_new = Vec::with_capacity(entries.len() + 1);
                    entries_new.extend_from_slice(&entries[..index]);
                    entries_new.push(Entry {
                        name: Arc::from(name),
                        value,
                    });
                    entries_new.extend_from_slice(&entries[index..]);
                    if entries_new.len() > FLAT_NODE_MAX_ENTRIES {
                        return Ok(Some(NodeRef::memory(partition(0, entries_new)?)));
                    }
                }
            }
            let mut object = NodeObject::new(NodeBody::Flat(entries_new));
            object.parts = flat_parts_derived(directory.parts.get().map(|parts| &**parts), name);
            object.hash_reuse = hash_reuse;
            Ok(Some(NodeRef::memory(object)))
        }
        NodeBody::Tree { depth: 0, .. } => match value {
            Some(value) => {
                let entry = Entry {
                    name: Arc::from(name),
                    value,
                };
                let (object, _) = inode_add(source, directory, 0, entry)?;
                Ok(Some(NodeRef::memory(object)))
            }
            None => match inode_remove(source, directory, 0, name)? {
                None => Ok(Some(NodeRef::Memory(directory.clone()))),
                Some(None) => Ok(None),
                Some(Some(object)) => {
                    if object.length() as usize <= FLAT_NODE_MAX_ENTRIES {
                        let entries = collect_entries(source, &object)?;
                        Ok(Some(NodeRef::memory(NodeObject::new(NodeBody::Flat(
                            entries,
                        )))))
                    } else {
                        Ok(Some(NodeRef::memory(object)))
                    }
                }
            },
        },
        _ => Err(directory.bad("a directory is a flat node or an inode tree of depth 0")),
    }
}

/// [`directory_set`] on a directory this tree holds alone (its hash and offset already reset):
/// a flat directory is changed in place; an inode directory falls back to copying its path.
pub(crate) fn directory_set_owned(
    source: &dyn ObjectSource,
    mut directory: NodeObject,
    name: &[u8],
    value: Option<Value>,
) -> Result<Option<NodeRef>, ContextError> {
    let NodeBody::Flat(entries) = &mut directory.body else {
        if let (NodeBody::Tree { depth: 0, .. }, Some(value)) = (&directory.body, &value) {
            let entry = Entry {
                name: Arc::from(name),
                value: value.clone(),
            };
            inode_add_owned(source, &mut directory, 0, entry)?;
            return Ok(Some(NodeRef::memory(directory)));
        }
        return directory_set(source, Some(&Arc::new(directory)), name, value);
    };
    if let Some(parts) = directory.parts.get() {
        parts[usize::from(inode_index(0, name))].store(0, Ordering::Relaxed);
    }
    let position = search(entries, name);
    match (&position, &value) {
        (Ok(index), Some(_)) => {
            if let Some((_, unchanged)) = &mut directory.hash_reuse {
                *unchanged = (*unchanged).min(*index);
            }
        }
        // The entry count is the first thing hashed: nothing is reusable.
        (Ok(_), None) | (Err(_), Some(_)) => directory.hash_reuse = None,
        (Err(_), None) => {}
    }
    match (position, value) {
        (Ok(index), Some(value)) => entries[index].value = value,
        (Ok(index), None) => {
            entries.remove(index);
            if entries.is_empty() {
                return Ok(None);
            }
        }
        (Err(_), None) => {}
        (Err(index), Some(value)) => {
            // Exactly one more (see `inode_add_owned`).
            entries.reserve_exact(1);
            entries.insert(
                index,
                Entry {
                    name: Arc::from(name),
                    value,
                },
            );
            if entries.len() > FLAT_NODE_MAX_ENTRIES {
                let entries = std::mem::take(entries);
                return Ok(Some(NodeRef::memory(partition(0, entries)?)));
            }
        }
    }
    Ok(Some(NodeRef::memory(directory)))
}

/// `partition(depth, X)` of the spec, for `entries` sorted by name.
pub(crate) fn partition(depth: u32, entries: Vec<Entry>) -> Result<NodeObject, ContextError> {
    if entries.len() <= INODE_ENTRIES_MAX {
        return Ok(NodeObject::new(NodeBody::Values(entries)));
    }
    if depth >= INODE_DEPTH_MAX {
        return Err(ContextError::InodeTooDeep);
    }
    let length = entries.len() as u64;
    let mut buckets: Vec<Vec<Entry>> = (0..INODE_ENTRIES_MAX).map(|_| Vec::new()).collect();
    for entry in entries {
        buckets[usize::from(inode_index(depth, &entry.name))].push(entry);
    }
    let mut pointers = Vec::with_capacity(INODE_ENTRIES_MAX);
    for (index, bucket) in buckets.into_iter().enumerate() {
        if !bucket.is_empty() {
            pointers.push((index as u8, NodeRef::memory(partition(depth + 1, bucket)?)));
        }
    }
    Ok(NodeObject::new(NodeBody::Tree {
        depth,
        length,
        pointers,
    }))
}

/// `add(depth, entry, node)` of the spec (replacing a binding of the same name); also returns
/// whether the name is new.
fn inode_add(
    source: &dyn ObjectSource,
    node: &NodeObject,
    depth: u32,
    entry: Entry,
) -> Result<(NodeObject, bool), ContextError> {
    match &node.body {
        NodeBody::Values(entries) => match search(entries, &entry.name) {
            Ok(index) => {
                let mut entries_new = entries.clone();
                entries_new[index].value = entry.value;
                Ok((NodeObject::new(NodeBody::Values(entries_new)), false))
            }
            Err(index) => {
                let mut entries_new = Vec::with_capacity(entries.len() + 1);
                entries_new.extend_from_slice(&entries[..index]);
                entries_new.push(entry);
                entries_new.extend_from_slice(&entries[index..]);
                Ok((partition(depth, entries_new)?, true))
            }
        },
        NodeBody::Tree {
            depth: node_depth,
            length,
            pointers,
        } if *node_depth == depth => {
            if depth >= INODE_DEPTH_MAX {
                return Err(ContextError::InodeTooDeep);
            }
            let index = inode_index(depth, &entry.name);
            let position = pointer_position(pointers, index);
            let (child, added) = match position {
                Ok(position) => {
                    let child = load_for_update(source, &pointers[position].1)?;
                    inode_add(source, &child, depth + 1, entry)?
                }
                Err(_) => (NodeObject::new(NodeBody::Values(vec![entry])), true),
            };
            let mut pointers_new = pointers.clone();
            match position {
                Ok(position) => pointers_new[position].1 = NodeRef::memory(child),
                Err(position) => pointers_new.insert(position, (index, NodeRef::memory(child))),
            }
            Ok((
                NodeObject::new(NodeBody::Tree {
                    depth,
                    length: length + u64::from(added),
                    pointers: pointers_new,
                }),
                added,
            ))
        }
        _ => Err(node.bad("inode child of the expected shape and depth")),
    }
}

/// [`inode_add`] on an inode this tree holds alone (its hash and offset already reset): each
/// level held alone is changed where it is, so adding to a large directory stops copying (and
/// later freeing) a 32-pointer array per level and a 32-entry value; below the first level that
/// is shared, [`inode_add`] copies as before. Returns whether the name is new. On error the
/// inode is left with a placeholder pointer (the caller drops the tree being updated).
fn inode_add_owned(
    source: &dyn ObjectSource,
    node: &mut NodeObject,
    depth: u32,
    entry: Entry,
) -> Result<bool, ContextError> {
    match &mut node.body {
        NodeBody::Values(entries) => match search(entries, &entry.name) {
            Ok(index) => {
                entries[index].value = entry.value;
                Ok(false)
            }
            Err(index) => {
                // Exactly one more: a doubled capacity would stay allocated (and uncounted by
                // the cache's estimate) for as long as the object lives.
                entries.reserve_exact(1);
                entries.insert(index, entry);
                if entries.len() > INODE_ENTRIES_MAX {
                    let entries = std::mem::take(entries);
                    let mut tree = partition(depth, entries)?;
                    node.body = std::mem::replace(&mut tree.body, NodeBody::Values(Vec::new()));
                }
                Ok(true)
            }
        },
        NodeBody::Tree {
            depth: node_depth,
            length,
            pointers,
        } if *node_depth == depth => {
            if depth >= INODE_DEPTH_MAX {
                return Err(ContextError::InodeTooDeep);
            }
            let index = inode_index(depth, &entry.name);
            let added = match pointer_position(pointers, index) {
                Ok(position) => {
                    let slot = &mut pointers[position].1;
                    let taken = std::mem::replace(
                        slot,
                        NodeRef::Stored {
                            offset: 0,
                            hash: ContextHash([0; 32]),
                        },
                    );
                    let child = match taken {
                        NodeRef::Memory(child) => child,
                        stored => load_for_update(source, &stored)?,
                    };
                    let (child, added) = match Arc::try_unwrap(child) {
                        Ok(mut child) => {
                            child.reset_for_update();
                            let added = inode_add_owned(source, &mut child, depth + 1, entry)?;
                            (child, added)
                        }
                        Err(shared) => inode_add(source, &shared, depth + 1, entry)?,
                    };
                    *slot = NodeRef::memory(child);
                    added
                }
                Err(position) => {
                    let child = NodeObject::new(NodeBody::Values(vec![entry]));
                    pointers.reserve_exact(1);
                    pointers.insert(position, (index, NodeRef::memory(child)));
                    true
                }
            };
            *length += u64::from(added);
            Ok(added)
        }
        _ => Err(node.bad("inode child of the expected shape and depth")),
    }
}

/// Removes `name` below the inode `node` at `depth`: `None` when absent (nothing changes),
/// `Some(None)` when the inode becomes empty, else the new inode (canonical: subtrees of at most
/// 32 entries below the root collapse into values).
fn inode_remove(
    source: &dyn ObjectSource,
    node: &NodeObject,
    depth: u32,
    name: &[u8],
) -> Result<Option<Option<NodeObject>>, ContextError> {
    match &node.body {
        NodeBody::Values(entries) => match search(entries, name) {
            Err(_) => Ok(None),
            Ok(_) if entries.len() == 1 => Ok(Some(None)),
            Ok(index) => {
                let mut entries_new = Vec::with_capacity(entries.len() - 1);
                entries_new.extend_from_slice(&entries[..index]);
                entries_new.extend_from_slice(&entries[index + 1..]);
                Ok(Some(Some(NodeObject::new(NodeBody::Values(entries_new)))))
            }
        },
        NodeBody::Tree {
            depth: node_depth,
            length,
            pointers,
        } if *node_depth == depth => {
            if depth >= INODE_DEPTH_MAX {
                return Err(ContextError::InodeTooDeep);
            }
            let index = inode_index(depth, name);
            let Ok(position) = pointer_position(pointers, index) else {
                return Ok(None);
            };
            let child = load_for_update(source, &pointers[position].1)?;
            let Some(child_new) = inode_remove(source, &child, depth + 1, name)? else {
                return Ok(None);
            };
            let mut pointers_new = pointers.clone();
            match child_new {
                None => {
                    pointers_new.remove(position);
                }
                Some(child_new) => pointers_new[position].1 = NodeRef::memory(child_new),
            }
            let length_new = length - 1;
            let tree = NodeObject::new(NodeBody::Tree {
                depth,
                length: length_new,
                pointers: pointers_new,
            });
            if depth > 0 && length_new as usize <= INODE_ENTRIES_MAX {
                let entries = collect_entries(source, &tree)?;
                return Ok(Some(Some(NodeObject::new(NodeBody::Values(entries)))));
            }
            Ok(Some(Some(tree)))
        }
        _ => Err(node.bad("inode child of the expected shape and depth")),
    }
}

/// All entries reachable from `node`, sorted by name (walks inode trees with an explicit stack).
pub(crate) fn collect_entries(
    source: &dyn ObjectSource,
    node: &NodeObject,
) -> Result<Vec<Entry>, ContextError> {
    let mut entries = Vec::with_capacity(node.length().min(1 << 20) as usize);
    let mut pending: Vec<Arc<NodeObject>> = Vec::new();
    let mut visit =
        |object: &NodeObject, pending: &mut Vec<Arc<NodeObject>>| -> Result<(), ContextError> {
            match &object.body {
                NodeBody::Flat(found) | NodeBody::Values(found) => entries.extend_from_slice(found),
                NodeBody::Tree { pointers, .. } => {
                    for (_, pointer) in pointers {
                        pending.push(load(source, pointer)?);
                    }
                }
            }
            Ok(())
        };
    visit(node, &mut pending)?;
    while let Some(object) = pending.pop() {
        visit(&object, &mut pending)?;
    }
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// Appends the hash encoding of `object` to `buffer`; every child's hash must be known.
pub(crate) fn encode_for_hash(object: &NodeObject, buffer: &mut Vec<u8>) {
    match &object.body {
        NodeBody::Flat(entries) => encode_flat_node(
            buffer,
            entries
                .iter()
                .map(|entry| (&*entry.name, entry.value.kind(), entry.value.hash_ref())),
        ),
        NodeBody::Values(entries) => encode_inode_value(
            buffer,
            entries
                .iter()
                .map(|entry| (&*entry.name, entry.value.kind(), entry.value.hash_ref())),
        ),
        NodeBody::Tree {
            depth,
            length,
            pointers,
        } => encode_inode_tree(
            buffer,
            *depth,
            *length,
            pointers.iter().map(|(index, pointer)| {
                (
                    *index,
                    pointer
                        .known_hash()
                        .expect("children are hashed before their parent"),
                )
            }),
        ),
    }
}

/// Calls `visit` on every memory node object directly below `object`.
pub(crate) fn for_each_memory_child(object: &NodeObject, mut visit: impl FnMut(&Arc<NodeObject>)) {
    match &object.body {
        NodeBody::Flat(entries) | NodeBody::Values(entries) => {
            for entry in entries {
                if let Value::Node(NodeRef::Memory(child)) = &entry.value {
                    visit(child);
                }
            }
        }
        NodeBody::Tree { pointers, .. } => {
            for (_, pointer) in pointers {
                if let NodeRef::Memory(child) = pointer {
                    visit(child);
                }
            }
        }
    }
}

/// The hash of `node`, computing (once, cached in each object) the hashes of all memory objects
/// below it, children first, with an explicit stack.
pub(crate) fn ensure_hash(node: &NodeRef, buffer: &mut Vec<u8>) -> ContextHash {
    let root = match node {
        NodeRef::Stored { hash, .. } => return *hash,
        NodeRef::Memory(object) => object,
    };
    if let Some(hash) = root.hash.get() {
        return *hash;
    }
    let mut stack: Vec<Arc<NodeObject>> = vec![root.clone()];
    while let Some(top) = stack.last() {
        if top.hash.get().is_some() {
            stack.pop();
            continue;
        }
        let height = stack.len();
        let mut unhashed = Vec::new();
        for_each_memory_child(top, |child| {
            if child.hash.get().is_none() {
                unhashed.push(child.clone());
            }
        });
        if unhashed.is_empty() {
            let hash = match &top.body {
                NodeBody::Flat(entries) if entries.len() >= FLAT_HASH_SNAPSHOT_MIN_ENTRIES => {
                    hash_flat_resuming(top, entries, buffer)
                }
                _ => {
                    buffer.clear();
                    encode_for_hash(top, buffer);
                    hash_encoding(buffer)
                }
            };
            let _ = top.hash.set(hash);
            stack.pop();
        } else {
            debug_assert_eq!(stack.len(), height);
            stack.extend(unhashed);
        }
    }
    *root.hash.get().expect("hashed above")
}

/// The flat-node hash of `object` (with `entries`, every child hashed), resuming from the last
/// snapshot before its first changed entry when it was derived from a hashed version by
/// replacing entries; records its own snapshots for the next version.
fn hash_flat_resuming(object: &NodeObject, entries: &[Entry], buffer: &mut Vec<u8>) -> ContextHash {
    debug_assert!(entries.len() <= FLAT_NODE_MAX_ENTRIES);
    let (mut state, mut states, start) = match &object.hash_reuse {
        Some((old, unchanged)) if old.entry_count == entries.len() && !old.states.is_empty() => {
            let snapshot = (unchanged / FLAT_HASH_SNAPSHOT_ENTRIES).min(old.states.len() - 1);
            (
                old.states[snapshot].clone(),
                old.states[..=snapshot].to_vec(),
                snapshot * FLAT_HASH_SNAPSHOT_ENTRIES,
            )
        }
        _ => {
            let mut state = blake2b_params().to_state();
            state.update(&(entries.len() as u64).to_be_bytes());
            let first = state.clone();
            (state, vec![first], 0)
        }
    };
    buffer.clear();
    for (position, entry) in entries.iter().enumerate().skip(start) {
        encode_flat_entry(
            buffer,
            &entry.name,
            entry.value.kind(),
            entry.value.hash_ref(),
        );
        let done = position + 1;
        if done.is_multiple_of(FLAT_HASH_SNAPSHOT_ENTRIES) && done < entries.len() {
            state.update(buffer);
            buffer.clear();
            states.push(state.clone());
        }
    }
    state.update(buffer);
    let _ = object.hash_states.set(Arc::new(FlatHashStates {
        entry_count: entries.len(),
        states,
    }));
    hash_of(&state.finalize())
}

/// The hash of the empty directory (a flat node with no entries).
pub(crate) fn empty_directory_hash() -> ContextHash {
    let mut buffer = Vec::with_capacity(8);
    encode_flat_node(&mut buffer, std::iter::empty());
    hash_encoding(&buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pointer_position` must answer as a binary search over all the pointers does.
    fn check(present: u32) {
        let pointers: Vec<(u8, NodeRef)> = (0..INODE_ENTRIES_MAX as u8)
            .filter(|index| present & (1 << index) != 0)
            .map(|index| {
                let node = NodeRef::Stored {
                    offset: u64::from(index) + 1,
                    hash: ContextHash([index; 32]),
                };
                (index, node)
            })
            .collect();
        for index in 0..INODE_ENTRIES_MAX as u8 {
            assert_eq!(
                pointer_position(&pointers, index),
                pointers.binary_search_by_key(&index, |(slot, _)| *slot),
                "pointers {present:#034b}, index {index}"
            );
        }
    }

    #[test]
    fn pointer_position_equals_a_full_binary_search() {
        // Empty, one, full, full but one (each), and pseudo-random sets of every density.
        let mut sets = vec![0u32, 1, 1 << 31, u32::MAX];
        sets.extend((0..32).map(|index| !(1u32 << index)));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let density = state % 4;
            let mut set = state as u32;
            for _ in 0..density {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                set |= state as u32;
            }
            sets.push(set);
        }
        for set in sets {
            check(set);
        }
    }
}
