//! In-memory tree objects: flat nodes, inode values and inode trees, their entries, their lazily
//! computed and cached hashes, and the directory operations (find, set, remove) that keep large
//! directories in the canonical inode shape the hash requires. Hashing a tree hashes its new
//! objects level by level, each level in batches of independent inputs (`blake2b_simd::many`).
//!
//! Spec: tezos-context-hash-SPEC.md, "Nodes", "Inodes", "Inode decomposition", "Inode search",
//! "Inode add". Objects are immutable once built and shared through `Arc`, so a checked-out tree is
//! a cheap snapshot: an update copies only the path from the root to the changed entry. Children
//! are either in memory or stored (a pack-file offset plus the child's hash); stored children are
//! loaded through an [`ObjectSource`]. Callers must hand directory operations a directory object
//! (flat, or an inode tree of depth 0); objects decoded from a store are checked for this on load.

use crate::cache::CachedValue;
use crate::compact::CompactEntries;
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
    /// What only large flat directories use (split parts, hash snapshots), boxed so that every
    /// other object (most of the cache: compact directories, inode values and trees) pays one
    /// pointer for it instead of the fields themselves (176 bytes per object before, 112 now).
    /// Set from a shared reference when a written object first needs it (hence the `OnceLock`).
    pub(crate) extras: OnceLock<Box<FlatExtras>>,
}

/// The fields of a [`NodeObject`] that only flat directories of more than
/// [`FLAT_SPLIT_MIN_ENTRIES`] (parts) or at least [`FLAT_HASH_SNAPSHOT_MIN_ENTRIES`] entries
/// (hash snapshots) use.
#[derive(Default)]
pub(crate) struct FlatExtras {
    /// For a flat directory of more than [`FLAT_SPLIT_MIN_ENTRIES`] entries: where each of its
    /// parts is in the pack (docs/formats/pack-file.md, tags 6 and 7), by inode index at depth 0;
    /// 0 for a part that must be written. Inherited from the version this object was derived
    /// from with the changed parts zeroed, so a commit rewrites only the parts that changed.
    /// Atomics only because written objects are shared: a store fills them from one thread.
    pub(crate) parts: OnceLock<Box<FlatParts>>,
    /// For a flat directory once stored in parts: each entry's part (its inode index at depth
    /// 0, by entry position), so that writing the changed parts does not hash every name again.
    /// Kept in step by in-place updates ([`directory_set_owned`]); a copy starts without it.
    pub(crate) part_indices: OnceLock<Vec<u8>>,
    /// For a flat directory of at least [`FLAT_HASH_SNAPSHOT_MIN_ENTRIES`] entries, once hashed:
    /// BLAKE2b states part-way through its hash encoding.
    pub(crate) hash_states: OnceLock<Arc<FlatHashStates>>,
    /// The states of the version this object was derived from by replacing entries, and how many
    /// leading entries are unchanged since: hashing resumes from the last state before the first
    /// change instead of from the start (the encoding is a stream, so the prefix is the same).
    pub(crate) hash_reuse: Option<(Arc<FlatHashStates>, usize)>,
}

impl FlatExtras {
    /// Heap bytes held through these fields (the box itself included), for the cache budget.
    /// Snapshots shared with another version (`hash_reuse` of a derived one) count in each.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of::<FlatExtras>()
            + self
                .parts
                .get()
                .map_or(0, |_| std::mem::size_of::<FlatParts>())
            + self.part_indices.get().map_or(0, Vec::capacity)
            + self
                .hash_states
                .get()
                .map_or(0, |states| states.heap_bytes())
            + self
                .hash_reuse
                .as_ref()
                .map_or(0, |(states, _)| states.heap_bytes())
    }
}

/// Cached objects are immutable: a copy serves any reader as the original does.
impl CachedValue for Arc<NodeObject> {
    fn relocated(&self) -> Option<Self> {
        self.copy_of_stored().map(Arc::new)
    }
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

impl FlatHashStates {
    /// Heap bytes of these states with their `Arc` (two counters).
    fn heap_bytes(&self) -> usize {
        2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<FlatHashStates>()
            + self.states.capacity() * std::mem::size_of::<blake2b_simd::State>()
    }
}

/// The hash snapshots `object` offers to a version derived from it, with its unchanged prefix.
fn hash_reuse_of(object: &NodeObject) -> Option<(Arc<FlatHashStates>, usize)> {
    let extras = object.extras.get()?;
    match extras.hash_states.get() {
        Some(states) => Some((states.clone(), states.entry_count)),
        None => extras.hash_reuse.clone(),
    }
}

impl NodeObject {
    /// A copy, in allocations of its own, of an object as decoded from the pack (a compact
    /// directory or inode value, or an inode tree of stored pointers, without flat-directory
    /// extras); `None` for any other object.
    pub(crate) fn copy_of_stored(&self) -> Option<NodeObject> {
        if self.extras.get().is_some() {
            return None;
        }
        let body = match &self.body {
            NodeBody::CompactFlat(entries) => NodeBody::CompactFlat(entries.clone()),
            NodeBody::CompactValues(entries) => NodeBody::CompactValues(entries.clone()),
            NodeBody::Tree {
                depth,
                length,
                pointers,
            } if pointers
                .iter()
                .all(|(_, pointer)| matches!(pointer, NodeRef::Stored { .. })) =>
            {
                NodeBody::Tree {
                    depth: *depth,
                    length: *length,
                    pointers: pointers.clone(),
                }
            }
            _ => return None,
        };
        let copy = NodeObject::new(body);
        let _ = copy.hash.set(*self.hash.get()?);
        let _ = copy.offset.set(*self.offset.get()?);
        Some(copy)
    }

    /// Forgets the hash and offset of an object about to be changed in place (it is held by
    /// nobody else), keeping its hash snapshots for the new version.
    pub(crate) fn reset_for_update(&mut self) {
        let hash_reuse = hash_reuse_of(self);
        if let Some(extras) = self.extras.get_mut() {
            extras.hash_reuse = hash_reuse;
            extras.hash_states = OnceLock::new();
        }
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
fn flat_parts_derived(parts: Option<&FlatParts>, name: &[u8]) -> Option<Box<FlatParts>> {
    let parts = parts?;
    let derived: Box<FlatParts> = Box::new(std::array::from_fn(|index| {
        AtomicU64::new(parts[index].load(Ordering::Relaxed))
    }));
    derived[usize::from(inode_index(0, name))].store(0, Ordering::Relaxed);
    Some(derived)
}

/// The three shapes of node objects.
pub(crate) enum NodeBody {
    /// A directory of at most 256 entries, sorted by name.
    Flat(Vec<Entry>),
    /// An inode value: at most 32 entries, sorted by name, below an inode tree.
    Values(Vec<Entry>),
    /// A flat directory decoded from the pack, kept as stored (read-only: see `compact.rs`).
    CompactFlat(CompactEntries),
    /// An inode value decoded from the pack, kept as stored (read-only: see `compact.rs`).
    CompactValues(CompactEntries),
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
            extras: OnceLock::new(),
        }
    }

    /// The flat-directory fields, if this object has any.
    pub(crate) fn extras(&self) -> Option<&FlatExtras> {
        self.extras.get().map(|extras| &**extras)
    }

    /// The flat-directory fields, allocated empty on first use.
    pub(crate) fn extras_or_init(&self) -> &FlatExtras {
        self.extras.get_or_init(Box::default)
    }

    /// The split parts' offsets, if known.
    pub(crate) fn parts(&self) -> Option<&FlatParts> {
        self.extras()?.parts.get().map(|parts| &**parts)
    }

    /// The number of directory entries reachable from this object.
    pub(crate) fn length(&self) -> u64 {
        match &self.body {
            NodeBody::Flat(entries) | NodeBody::Values(entries) => entries.len() as u64,
            NodeBody::CompactFlat(compact) | NodeBody::CompactValues(compact) => {
                compact.len() as u64
            }
            NodeBody::Tree { length, .. } => *length,
        }
    }

    /// Whether the body is in the compact, read-only form (then the object came from the pack:
    /// its hash and offset are known, and its entries are never hashed nor written again).
    pub(crate) fn is_compact(&self) -> bool {
        matches!(
            self.body,
            NodeBody::CompactFlat(_) | NodeBody::CompactValues(_)
        )
    }

    /// Converts a compact body to the vector form in place, before an update changes it (the
    /// decode cost of a miss, paid only on the update path); other bodies are left as they are.
    pub(crate) fn make_mutable(&mut self) {
        self.make_mutable_with(|name| Arc::from(name));
    }

    /// [`NodeObject::make_mutable`] with each name made by `name_of` (a store shares short
    /// names through its interner). The hash and offset stay: the entries are the same.
    pub(crate) fn make_mutable_with(&mut self, name_of: impl FnMut(&[u8]) -> Name) {
        match &self.body {
            NodeBody::CompactFlat(compact) => {
                self.body = NodeBody::Flat(compact.to_entries_with(name_of))
            }
            NodeBody::CompactValues(compact) => {
                self.body = NodeBody::Values(compact.to_entries_with(name_of))
            }
            _ => {}
        }
    }

    /// A fresh object (no hash, offset or snapshots) with the vector form of this compact
    /// object's entries, for an update of a copy shared with others.
    fn mutable_copy(&self) -> NodeObject {
        NodeObject::new(match &self.body {
            NodeBody::CompactFlat(compact) => NodeBody::Flat(compact.to_entries()),
            NodeBody::CompactValues(compact) => NodeBody::Values(compact.to_entries()),
            _ => unreachable!("only compact objects are copied to be changed"),
        })
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
        // Stored children only.
        NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {}
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

/// An object taken for an update that replaces it (see [`take_for_update`]).
pub(crate) enum Taken {
    /// Held by nobody else: changed in place, its hash and offset already reset.
    Owned(NodeObject),
    /// Shared with another tree (or the cache): copied by the update.
    Shared(Arc<NodeObject>),
}

/// Takes the object `node` refers to for an update that replaces it: a memory object or the
/// store's cached copy (handed over by [`ObjectSource::load_node_for_update`]) is owned when
/// nobody else holds it, so the update changes it in place.
pub(crate) fn take_for_update(
    source: &dyn ObjectSource,
    node: NodeRef,
) -> Result<Taken, ContextError> {
    let object = match node {
        NodeRef::Memory(object) => object,
        NodeRef::Stored { offset, hash } => source.load_node_for_update(offset, &hash)?,
    };
    Ok(match Arc::try_unwrap(object) {
        Ok(mut object) => {
            // Its cached hash and offset are about to be stale.
            object.reset_for_update();
            object.make_mutable();
            Taken::Owned(object)
        }
        // A shared compact object would be copied by the update anyway: its vector form is
        // that copy, owned.
        Err(shared) if shared.is_compact() => Taken::Owned(shared.mutable_copy()),
        Err(shared) => Taken::Shared(shared),
    })
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
            NodeBody::CompactFlat(compact) | NodeBody::CompactValues(compact) => {
                return Ok(compact.find(name));
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
            NodeBody::CompactFlat(compact) | NodeBody::CompactValues(compact) => {
                return Ok(compact.find(name));
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
            let object = NodeObject::new(NodeBody::Flat(entries_new));
            let parts = flat_parts_derived(directory.parts(), name);
            // Only a directory with parts or snapshots to pass on pays for the extras.
            if parts.is_some() || hash_reuse.is_some() {
                let _ = object.extras.set(Box::new(FlatExtras {
                    parts: parts.map_or_else(OnceLock::new, OnceLock::from),
                    hash_reuse,
                    ..FlatExtras::default()
                }));
            }
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
        NodeBody::CompactFlat(compact) => {
            if value.is_none() && compact.search(name).is_err() {
                return Ok(Some(NodeRef::Memory(directory.clone())));
            }
            directory_set_owned(source, directory.mutable_copy(), name, value)
        }
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
    directory.make_mutable();
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
    let part_index = inode_index(0, name);
    let (mut part_indices, hash_reuse) = match directory.extras.get_mut() {
        Some(extras) => {
            if let Some(parts) = extras.parts.get() {
                parts[usize::from(part_index)].store(0, Ordering::Relaxed);
            }
            (extras.part_indices.get_mut(), Some(&mut extras.hash_reuse))
        }
        None => (None, None),
    };
    let position = search(entries, name);
    if let Some(hash_reuse) = hash_reuse {
        match (&position, &value) {
            (Ok(index), Some(_)) => {
                if let Some((_, unchanged)) = hash_reuse {
                    *unchanged = (*unchanged).min(*index);
                }
            }
            // The entry count is the first thing hashed: nothing is reusable.
            (Ok(_), None) | (Err(_), Some(_)) => *hash_reuse = None,
            (Err(_), None) => {}
        }
    }
    match (position, value) {
        (Ok(index), Some(value)) => entries[index].value = value,
        (Ok(index), None) => {
            entries.remove(index);
            if let Some(part_indices) = &mut part_indices {
                part_indices.remove(index);
            }
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
            if let Some(part_indices) = &mut part_indices {
                part_indices.insert(index, part_index);
            }
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
        NodeBody::CompactValues(_) => {
            let mut copy = node.mutable_copy();
            let added = inode_add_owned(source, &mut copy, depth, entry)?;
            Ok((copy, added))
        }
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
    node.make_mutable();
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
                    let (child, added) = match take_for_update(source, taken)? {
                        Taken::Owned(mut child) => {
                            let added = inode_add_owned(source, &mut child, depth + 1, entry)?;
                            (child, added)
                        }
                        Taken::Shared(shared) => inode_add(source, &shared, depth + 1, entry)?,
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
        NodeBody::CompactValues(compact) => match compact.search(name) {
            Err(_) => Ok(None),
            Ok(_) if compact.len() == 1 => Ok(Some(None)),
            Ok(index) => {
                let mut entries_new = compact.to_entries();
                entries_new.remove(index);
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
                NodeBody::CompactFlat(compact) | NodeBody::CompactValues(compact) => {
                    entries.extend(compact.to_entries())
                }
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
        NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {
            unreachable!("compact objects come from the pack with their hash")
        }
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
pub(crate) fn for_each_memory_child<'a>(
    object: &'a NodeObject,
    mut visit: impl FnMut(&'a Arc<NodeObject>),
) {
    match &object.body {
        NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {}
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
/// below it. The unhashed objects are first sorted into levels by height (an object's height is
/// one more than its highest unhashed child's), with an explicit stack; then each level is hashed
/// as a batch, children's levels before their parents', so that `blake2b_simd`'s multi-input
/// compression (four inputs per AVX2 pass, `many::hash_many` / `many::update_many`) does the
/// work instead of one input at a time. `buffer` holds a level's encodings (reused).
pub(crate) fn ensure_hash(node: &NodeRef, buffer: &mut Vec<u8>) -> ContextHash {
    let root = match node {
        NodeRef::Stored { hash, .. } => return *hash,
        NodeRef::Memory(object) => object,
    };
    let hashed: Result<ContextHash, std::convert::Infallible> =
        ensure_hash_by_level(root, buffer, |_| Ok(()), |_| Ok(()));
    match hashed {
        Ok(hash) => hash,
        Err(never) => match never {},
    }
}

/// [`ensure_hash`] of a memory object, calling `after_level` with each level of objects it
/// hashes just after hashing it, children's levels before their parents' (so every object handed
/// over and its children are hashed). The store encodes and hands each level to its writer
/// thread there (inode records hold their own hash), so the writer copies a level into the page
/// cache while the next level is hashed. Before anything is hashed, `inspect` sees each unhashed
/// object, and each memory child of one that is hashed but has no pack offset (hashed before
/// the commit, by [`ensure_hash`]; the walk does not descend below it). The store checks names
/// there, in the walk that sorts the objects anyway, instead of walking the new objects a second
/// time. An error from `inspect` or `after_level` stops the hashing and is returned.
pub(crate) fn ensure_hash_by_level<E>(
    root: &Arc<NodeObject>,
    buffer: &mut Vec<u8>,
    inspect: impl FnMut(&NodeObject) -> Result<(), E>,
    mut after_level: impl FnMut(&[Arc<NodeObject>]) -> Result<(), E>,
) -> Result<ContextHash, E> {
    if let Some(hash) = root.hash.get() {
        return Ok(*hash);
    }
    let params = blake2b_params();
    let mut batch = HashBatch::default();
    for level in unhashed_by_height(root, inspect)? {
        for chunk in level.chunks(HASH_BATCH_OBJECTS) {
            batch.hash_level(&params, chunk, buffer);
        }
        after_level(&level)?;
    }
    Ok(*root.hash.get().expect("hashed above"))
}

/// The memory objects below `root` (included) whose hash is unknown, by height: level 0 holds
/// those whose children are all hashed, level `h` those whose highest unhashed child is at level
/// `h - 1`. Each object appears once: an object held by more than one parent (a subtree copied
/// within the tree) is remembered by address with its height once known, so a tree of shared
/// copies is walked in time linear in its distinct objects. `inspect` is called as
/// [`ensure_hash_by_level`] says; its first error ends the walk.
fn unhashed_by_height<E>(
    root: &Arc<NodeObject>,
    mut inspect: impl FnMut(&NodeObject) -> Result<(), E>,
) -> Result<Vec<Vec<Arc<NodeObject>>>, E> {
    struct Frame {
        object: Arc<NodeObject>,
        /// Unhashed children counted above this frame; `None` until it is expanded.
        children: Option<usize>,
    }
    let mut levels: Vec<Vec<Arc<NodeObject>>> = Vec::new();
    let mut stack = vec![Frame {
        object: root.clone(),
        children: None,
    }];
    // The heights of finished objects whose parent is still on the stack, in stack order.
    let mut heights: Vec<usize> = Vec::new();
    // Shared objects by address: `None` while on the stack, then their height.
    let mut shared: std::collections::HashMap<usize, Option<usize>> =
        std::collections::HashMap::new();
    while let Some(top) = stack.last_mut() {
        match top.children {
            None => {
                let object = top.object.clone();
                let address = Arc::as_ptr(&object) as usize;
                // A second frame of a shared object, pushed while the first was waiting,
                // finished first: this one only reports the height.
                if let Some(Some(height)) = shared.get(&address) {
                    heights.push(*height);
                    stack.pop();
                    continue;
                }
                inspect(&object)?;
                let parent = stack.len() - 1;
                let mut count = 0;
                let mut failure = Ok(());
                for_each_memory_child(&object, |child| {
                    if child.hash.get().is_some() {
                        if child.offset.get().is_none() && failure.is_ok() {
                            failure = inspect(child);
                        }
                        return;
                    }
                    count += 1;
                    // A child held only by its parent cannot be reached another way.
                    if Arc::strong_count(child) > 1 {
                        match shared.entry(Arc::as_ptr(child) as usize) {
                            std::collections::hash_map::Entry::Occupied(known) => {
                                if let Some(height) = known.get() {
                                    heights.push(*height);
                                    return;
                                }
                            }
                            std::collections::hash_map::Entry::Vacant(vacant) => {
                                vacant.insert(None);
                            }
                        }
                    }
                    stack.push(Frame {
                        object: child.clone(),
                        children: None,
                    });
                });
                failure?;
                stack[parent].children = Some(count);
            }
            Some(count) => {
                let tail = heights.len() - count;
                let height = heights[tail..]
                    .iter()
                    .max()
                    .map_or(0, |highest| highest + 1);
                heights.truncate(tail);
                heights.push(height);
                let Some(frame) = stack.pop() else { break };
                if !shared.is_empty() {
                    if let Some(known) = shared.get_mut(&(Arc::as_ptr(&frame.object) as usize)) {
                        *known = Some(height);
                    }
                }
                if levels.len() <= height {
                    levels.resize_with(height + 1, Vec::new);
                }
                levels[height].push(frame.object);
            }
        }
    }
    Ok(levels)
}

/// Objects hashed in one batch at most: enough to keep the four SIMD lanes busy, while the
/// batch's encodings (at most about 25 KB per object, a whole flat directory) stay small even
/// when a level holds hundreds of thousands of objects (a genesis commit).
const HASH_BATCH_OBJECTS: usize = 64;

/// Reusable scratch space for hashing levels of objects in batches.
#[derive(Default)]
struct HashBatch {
    /// Objects hashed from their whole encoding, with the range of `buffer` holding it.
    whole: Vec<(usize, std::ops::Range<usize>)>,
    /// Flat directories hashed with snapshots.
    flat: Vec<FlatJob>,
}

/// One flat directory being hashed with snapshots (see [`FlatHashStates`]).
struct FlatJob {
    /// The position of the object in its level.
    object_index: usize,
    state: blake2b_simd::State,
    states: Vec<blake2b_simd::State>,
    /// The first entry not yet fed to `state`.
    next_entry: usize,
    /// The range of the scratch buffer holding this round's input, if it has any.
    round: Option<std::ops::Range<usize>>,
}

impl HashBatch {
    /// Hashes every object of `level` (all their children are hashed; at most
    /// [`HASH_BATCH_OBJECTS`]) and records the hashes.
    fn hash_level(
        &mut self,
        params: &blake2b_simd::Params,
        level: &[Arc<NodeObject>],
        buffer: &mut Vec<u8>,
    ) {
        self.whole.clear();
        self.flat.clear();
        buffer.clear();
        for (object_index, object) in level.iter().enumerate() {
            match &object.body {
                NodeBody::Flat(entries) if entries.len() >= FLAT_HASH_SNAPSHOT_MIN_ENTRIES => {
                    self.flat
                        .push(flat_job_start(object_index, object, entries));
                }
                _ => {
                    let start = buffer.len();
                    encode_for_hash(object, buffer);
                    self.whole.push((object_index, start..buffer.len()));
                }
            }
        }
        if !self.whole.is_empty() {
            // Longest first, so that the long inputs find others to share the SIMD lanes with.
            self.whole
                .sort_unstable_by_key(|(_, range)| std::cmp::Reverse(range.len()));
            let mut jobs: Vec<blake2b_simd::many::HashManyJob<'_>> = self
                .whole
                .iter()
                .map(|(_, range)| {
                    blake2b_simd::many::HashManyJob::new(params, &buffer[range.clone()])
                })
                .collect();
            blake2b_simd::many::hash_many(jobs.iter_mut());
            for ((object_index, _), job) in self.whole.iter().zip(&jobs) {
                let _ = level[*object_index].hash.set(hash_of(&job.to_hash()));
            }
        }
        if !self.flat.is_empty() {
            self.hash_flat_jobs(level, buffer);
        }
    }

    /// Feeds the flat jobs their entries in rounds of up to [`FLAT_HASH_SNAPSHOT_ENTRIES`]
    /// (one snapshot interval each, all jobs' rounds through one `update_many`), then records
    /// each directory's hash and snapshots.
    fn hash_flat_jobs(&mut self, level: &[Arc<NodeObject>], buffer: &mut Vec<u8>) {
        loop {
            buffer.clear();
            let mut busy = false;
            for job in &mut self.flat {
                let NodeBody::Flat(entries) = &level[job.object_index].body else {
                    unreachable!("flat jobs are flat directories")
                };
                if job.next_entry >= entries.len() {
                    job.round = None;
                    continue;
                }
                let end = ((job.next_entry / FLAT_HASH_SNAPSHOT_ENTRIES + 1)
                    * FLAT_HASH_SNAPSHOT_ENTRIES)
                    .min(entries.len());
                let start = buffer.len();
                for entry in &entries[job.next_entry..end] {
                    encode_flat_entry(
                        buffer,
                        &entry.name,
                        entry.value.kind(),
                        entry.value.hash_ref(),
                    );
                }
                job.next_entry = end;
                job.round = Some(start..buffer.len());
                busy = true;
            }
            if !busy {
                break;
            }
            blake2b_simd::many::update_many(self.flat.iter_mut().filter_map(|job| {
                let range = job.round.clone()?;
                Some((&mut job.state, &buffer[range]))
            }));
            for job in &mut self.flat {
                let NodeBody::Flat(entries) = &level[job.object_index].body else {
                    unreachable!("flat jobs are flat directories")
                };
                if job.round.is_some()
                    && job.next_entry.is_multiple_of(FLAT_HASH_SNAPSHOT_ENTRIES)
                    && job.next_entry < entries.len()
                {
                    job.states.push(job.state.clone());
                }
            }
        }
        for job in self.flat.drain(..) {
            let object = &level[job.object_index];
            let _ = object
                .extras_or_init()
                .hash_states
                .set(Arc::new(FlatHashStates {
                    entry_count: object.length() as usize,
                    states: job.states,
                }));
            let _ = object.hash.set(hash_of(&job.state.finalize()));
        }
    }
}

/// The starting point of the flat-node hash of `object` (with `entries`): the last snapshot
/// before its first changed entry when it was derived from a hashed version of the same size by
/// replacing entries (the encoding is a stream, so the prefix is the same), else the start.
fn flat_job_start(object_index: usize, object: &NodeObject, entries: &[Entry]) -> FlatJob {
    debug_assert!(entries.len() <= FLAT_NODE_MAX_ENTRIES);
    let hash_reuse = object
        .extras()
        .and_then(|extras| extras.hash_reuse.as_ref());
    let (state, states, next_entry) = match hash_reuse {
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
    FlatJob {
        object_index,
        state,
        states,
        next_entry,
        round: None,
    }
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
    use crate::tree::Tree;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn only_objects_as_stored_are_copied() {
        let with_location = |body| {
            let object = NodeObject::new(body);
            let _ = object.hash.set(ContextHash([2; 32]));
            let _ = object.offset.set(200);
            object
        };
        let stored = NodeRef::Stored {
            offset: 100,
            hash: ContextHash([1; 32]),
        };
        let tree = |pointer: NodeRef| NodeBody::Tree {
            depth: 1,
            length: 40,
            pointers: vec![(3, pointer)],
        };
        assert!(
            NodeObject::new(tree(stored.clone()))
                .copy_of_stored()
                .is_none(),
            "no hash and offset yet"
        );
        let copy = with_location(tree(stored.clone()))
            .copy_of_stored()
            .expect("an inode tree of stored pointers is copied");
        assert_eq!(copy.hash.get(), Some(&ContextHash([2; 32])));
        assert_eq!(copy.offset.get(), Some(&200));
        assert!(matches!(
            &copy.body,
            NodeBody::Tree { depth: 1, length: 40, pointers }
                if matches!(pointers[..], [(3, NodeRef::Stored { offset: 100, .. })])
        ));
        // Objects built in memory (a pointer to a memory child, the vector forms) and flat
        // directories with extras are not what a cache holds: never copied.
        let child = Arc::new(NodeObject::new(NodeBody::Values(Vec::new())));
        assert!(with_location(tree(NodeRef::Memory(child)))
            .copy_of_stored()
            .is_none());
        assert!(with_location(NodeBody::Flat(Vec::new()))
            .copy_of_stored()
            .is_none());
        assert!(with_location(NodeBody::Values(Vec::new()))
            .copy_of_stored()
            .is_none());
        let with_extras = with_location(tree(stored));
        let _ = with_extras.extras.set(Box::default());
        assert!(with_extras.copy_of_stored().is_none());
    }

    /// The hash of `node` computed one object at a time from the spec's encodings, ignoring
    /// every cached hash and snapshot of memory objects (its own memo, by address, makes shared
    /// objects cost once). Children first, with an explicit stack.
    fn hash_one_at_a_time(node: &NodeRef) -> ContextHash {
        let root = match node {
            NodeRef::Stored { hash, .. } => return *hash,
            NodeRef::Memory(object) => object.clone(),
        };
        let mut memo: HashMap<usize, ContextHash> = HashMap::new();
        let address = |object: &Arc<NodeObject>| Arc::as_ptr(object) as usize;
        let mut stack = vec![root.clone()];
        while let Some(top) = stack.last().cloned() {
            if memo.contains_key(&address(&top)) {
                stack.pop();
                continue;
            }
            let mut pending = Vec::new();
            for_each_memory_child(&top, |child| {
                if !memo.contains_key(&address(child)) {
                    pending.push(child.clone());
                }
            });
            if !pending.is_empty() {
                stack.extend(pending);
                continue;
            }
            let hash_of_value = |value: &Value| match value {
                Value::Contents(contents) => contents.hash,
                Value::Node(NodeRef::Memory(child)) => memo[&address(child)],
                Value::Node(NodeRef::Stored { hash, .. }) => *hash,
            };
            let mut buffer = Vec::new();
            match &top.body {
                NodeBody::CompactFlat(_) | NodeBody::CompactValues(_) => {
                    unreachable!("trees built in memory hold no compact objects")
                }
                NodeBody::Flat(entries) => {
                    let hashes: Vec<ContextHash> = entries
                        .iter()
                        .map(|entry| hash_of_value(&entry.value))
                        .collect();
                    encode_flat_node(
                        &mut buffer,
                        entries
                            .iter()
                            .zip(&hashes)
                            .map(|(entry, hash)| (&*entry.name, entry.value.kind(), hash)),
                    );
                }
                NodeBody::Values(entries) => {
                    let hashes: Vec<ContextHash> = entries
                        .iter()
                        .map(|entry| hash_of_value(&entry.value))
                        .collect();
                    encode_inode_value(
                        &mut buffer,
                        entries
                            .iter()
                            .zip(&hashes)
                            .map(|(entry, hash)| (&*entry.name, entry.value.kind(), hash)),
                    );
                }
                NodeBody::Tree {
                    depth,
                    length,
                    pointers,
                } => {
                    let hashes: Vec<ContextHash> = pointers
                        .iter()
                        .map(|(_, pointer)| match pointer {
                            NodeRef::Memory(child) => memo[&address(child)],
                            NodeRef::Stored { hash, .. } => *hash,
                        })
                        .collect();
                    encode_inode_tree(
                        &mut buffer,
                        *depth,
                        *length,
                        pointers
                            .iter()
                            .zip(&hashes)
                            .map(|((index, _), hash)| (*index, hash)),
                    );
                }
            }
            memo.insert(address(&top), hash_encoding(&buffer));
            stack.pop();
        }
        memo[&address(&root)]
    }

    fn root_of(tree: &Tree) -> NodeRef {
        match &tree.root {
            Some(Value::Node(node)) => node.clone(),
            _ => panic!("a directory"),
        }
    }

    /// Hashes `tree` in batches and one object at a time (on the same objects, before the
    /// batch fills their caches) and checks that the two agree.
    fn check_batched_equals_one_at_a_time(tree: &Tree) -> Result<(), TestCaseError> {
        let root = root_of(tree);
        let expected = hash_one_at_a_time(&root);
        prop_assert_eq!(ensure_hash(&root, &mut Vec::new()), expected);
        Ok(())
    }

    /// A key under one of a few top-level directories of very different sizes: small flat
    /// directories, flat ones with hash snapshots (64-256 entries) and inode trees (above 256),
    /// some entries being directories themselves.
    fn key_of(directory: u8, entry: u16, nested: bool) -> Vec<Vec<u8>> {
        let sizes = [3u16, 70, 200, 256, 600];
        let directory = directory % sizes.len() as u8;
        let entry = entry % sizes[usize::from(directory)];
        let mut key = vec![
            format!("directory-{directory}").into_bytes(),
            format!(
                "entry-{:05}",
                u32::from(entry).wrapping_mul(2_654_435_761) % 99_991
            )
            .into_bytes(),
        ];
        if nested {
            key.push(format!("leaf-{}", entry % 90).into_bytes());
        }
        key
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Several rounds of in-place updates (replacing, adding and removing entries of many
        /// directories at once, so that each level holds flat directories resuming from
        /// different snapshots beside inode objects and small nodes), each round's hash
        /// computed in batches and checked against one-at-a-time hashing.
        #[test]
        fn batched_hashing_equals_one_at_a_time_hashing(
            initial in prop::collection::vec((any::<u8>(), any::<u16>(), any::<bool>()), 1..900),
            rounds in prop::collection::vec(
                prop::collection::vec((any::<u8>(), any::<u16>(), any::<bool>(), 0u8..4), 1..60),
                1..5,
            ),
        ) {
            let mut tree = Tree::empty();
            for (directory, entry, nested) in &initial {
                let key = key_of(*directory, *entry, *nested);
                tree.add_in_place(&InMemory, &key, &key[1]).unwrap();
            }
            check_batched_equals_one_at_a_time(&tree)?;
            for (round, changes) in rounds.iter().enumerate() {
                for (directory, entry, nested, action) in changes {
                    let key = key_of(*directory, *entry, *nested);
                    if *action == 0 {
                        tree.remove_in_place(&InMemory, &key).unwrap();
                    } else {
                        let value = format!("round {round} action {action}").into_bytes();
                        tree.add_in_place(&InMemory, &key, &value).unwrap();
                    }
                }
                if tree.is_empty() {
                    break;
                }
                check_batched_equals_one_at_a_time(&tree)?;
            }
        }
    }

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
    fn shared_copies_are_hashed_once_and_in_order() {
        // Level k holds two copies of level k-1 (and level 0 a 100-entry flat directory): 2^60
        // paths, 61 distinct objects, none hashed before the end. Hashing must take time linear
        // in the objects, and every object must come after its children.
        let mut level = Tree::empty();
        for index in 0..100 {
            level
                .add_in_place(&InMemory, &[format!("name-{index:03}")], b"value")
                .unwrap();
        }
        for _ in 0..60 {
            let mut next = Tree::empty();
            next.add_tree_in_place(&InMemory, &["left"], &level)
                .unwrap();
            next.add_tree_in_place(&InMemory, &["right"], &level)
                .unwrap();
            next.add_in_place(&InMemory, &["middle", "contents"], b"x")
                .unwrap();
            next.add_tree_in_place(&InMemory, &["middle", "copy"], &level)
                .unwrap();
            level = next;
        }
        let root = root_of(&level);
        let expected = hash_one_at_a_time(&root);
        assert_eq!(ensure_hash(&root, &mut Vec::new()), expected);
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

    /// The fields only large flat directories use are boxed: every other object pays one
    /// pointer (176 bytes per object when they were inline).
    #[test]
    fn node_object_keeps_flat_fields_out_of_line() {
        assert!(std::mem::size_of::<NodeObject>() <= 112);
    }

    fn flat_of(count: usize) -> Arc<NodeObject> {
        let entries = (0..count)
            .map(|index| Entry {
                name: Arc::from(format!("entry-{index:04}").as_bytes()),
                value: Value::Contents(Contents::new(b"value")),
            })
            .collect();
        Arc::new(NodeObject::new(NodeBody::Flat(entries)))
    }

    /// Hashing allocates the extras only for directories that keep snapshots, and the budget
    /// estimate counts them.
    #[test]
    fn only_snapshot_directories_hold_extras() {
        let check = |count: usize, expect_extras: bool| {
            let object = flat_of(count);
            ensure_hash(&NodeRef::Memory(object.clone()), &mut Vec::new());
            assert_eq!(object.extras().is_some(), expect_extras, "{count} entries");
            if let Some(extras) = object.extras() {
                let states = extras.hash_states.get().expect("hashed with snapshots");
                assert_eq!(states.entry_count, count);
                assert!(extras.heap_bytes() > states.states.len() * 200);
            }
        };
        check(1, false);
        check(FLAT_HASH_SNAPSHOT_MIN_ENTRIES - 1, false);
        check(FLAT_HASH_SNAPSHOT_MIN_ENTRIES, true);
        check(FLAT_NODE_MAX_ENTRIES, true);
    }

    /// A derived version carries the snapshots of a hashed large directory (in its extras) and
    /// a derived small one allocates none.
    #[test]
    fn derived_versions_carry_extras_only_when_useful() {
        for (count, expect_extras) in [(10, false), (100, true)] {
            let object = flat_of(count);
            ensure_hash(&NodeRef::Memory(object.clone()), &mut Vec::new());
            let value = Value::Contents(Contents::new(b"changed"));
            let derived = directory_set(&InMemory, Some(&object), b"entry-0005", Some(value))
                .unwrap()
                .unwrap();
            let NodeRef::Memory(derived) = derived else {
                panic!("a memory object")
            };
            let reuse = derived
                .extras()
                .and_then(|extras| extras.hash_reuse.as_ref());
            assert_eq!(reuse.is_some(), expect_extras, "{count} entries");
            assert_eq!(derived.extras().is_some(), expect_extras, "{count} entries");
            if let Some((_, unchanged)) = reuse {
                assert_eq!(*unchanged, 5);
            }
        }
    }
}
