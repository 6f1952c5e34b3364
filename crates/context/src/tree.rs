//! The public tree API: immutable trees of paths to bytes with `find`, `mem`, `mem_tree`, `add`,
//! `remove`, `copy`, `list` and `hash`, in the manner of Irmin's `Tree` as Tezos uses it.
//!
//! Every update returns a new [`Tree`] and leaves the old one untouched (structure is shared, only
//! the path to the change is copied), so a checkout is a free snapshot. Operations that may need to
//! read stored objects take the [`ObjectSource`] the tree came from (a `Store`, or [`InMemory`] for
//! trees built in memory). Keys are lists of names; the empty key is the root. Empty directories do
//! not exist: removing the last entry of a directory removes the directory, and adding an empty
//! tree removes the binding (Irmin's behaviour). Paths may be arbitrarily deep: every walk is a
//! loop over the key, never a recursion.

use crate::error::ContextError;
use crate::hash::{ContextHash, Kind};
use crate::node::{
    collect_entries, directory_find, directory_set, directory_set_owned, empty_directory_hash,
    ensure_hash, load, take_for_update, Contents, InMemory, NodeBody, NodeObject, NodeRef,
    ObjectSource, Taken, Value,
};
use std::sync::Arc;

/// An immutable tree: empty, a directory, or (at a leaf) contents.
#[derive(Clone, Default)]
pub struct Tree {
    pub(crate) root: Option<Value>,
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tree({})", self.hash())
    }
}

impl Tree {
    /// The empty tree.
    pub fn empty() -> Tree {
        Tree { root: None }
    }

    /// A tree that is just `bytes` (a leaf).
    pub fn of_contents(bytes: &[u8]) -> Tree {
        Tree {
            root: Some(Value::Contents(Contents::new(bytes))),
        }
    }

    /// Whether this is the empty tree.
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Whether this tree is contents (a leaf) rather than a directory.
    pub fn kind(&self) -> Kind {
        match &self.root {
            Some(Value::Contents(_)) => Kind::Contents,
            _ => Kind::Node,
        }
    }

    /// The Tezos context hash of the tree (hashes are computed once per object and cached).
    pub fn hash(&self) -> ContextHash {
        match &self.root {
            None => empty_directory_hash(),
            Some(Value::Contents(contents)) => contents.hash,
            Some(Value::Node(node)) => ensure_hash(node, &mut Vec::with_capacity(1024)),
        }
    }

    /// The value at `key`, if any (descending through the source).
    fn value_at<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<Option<Value>, ContextError> {
        let mut current = self.root.clone();
        for name in key {
            current = match current {
                Some(Value::Node(NodeRef::Memory(directory))) => {
                    directory_find(source, &directory, name.as_ref())?
                }
                Some(Value::Node(stored)) => {
                    let directory = load(source, &stored)?;
                    directory_find(source, &directory, name.as_ref())?
                }
                _ => return Ok(None),
            };
        }
        Ok(current)
    }

    /// The bytes at `key`, if `key` holds contents.
    pub fn find<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<Option<Arc<[u8]>>, ContextError> {
        match self.value_at(source, key)? {
            Some(Value::Contents(contents)) => Ok(Some(contents.bytes(source)?)),
            _ => Ok(None),
        }
    }

    /// Whether `key` holds contents.
    pub fn mem<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<bool, ContextError> {
        Ok(matches!(
            self.value_at(source, key)?,
            Some(Value::Contents(_))
        ))
    }

    /// Whether `key` holds anything (contents or a directory).
    pub fn mem_tree<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<bool, ContextError> {
        Ok(self.value_at(source, key)?.is_some())
    }

    /// The subtree at `key`, if any.
    pub fn find_tree<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<Option<Tree>, ContextError> {
        Ok(self
            .value_at(source, key)?
            .map(|value| Tree { root: Some(value) }))
    }

    /// This tree with `bytes` at `key` (intermediate directories are created, and contents in the
    /// way replaced by directories).
    pub fn add<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
        bytes: &[u8],
    ) -> Result<Tree, ContextError> {
        self.update(source, key, Some(Value::Contents(Contents::new(bytes))))
    }

    /// This tree with `subtree` at `key` (an empty `subtree` removes `key`).
    pub fn add_tree<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
        subtree: &Tree,
    ) -> Result<Tree, ContextError> {
        self.update(source, key, subtree.root.clone())
    }

    /// This tree without `key` (and without directories that this leaves empty).
    pub fn remove<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<Tree, ContextError> {
        self.update(source, key, None)
    }

    /// This tree with the subtree at `from` also bound at `to`; `None` when `from` is absent.
    pub fn copy<K: AsRef<[u8]>, L: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        from: &[K],
        to: &[L],
    ) -> Result<Option<Tree>, ContextError> {
        match self.find_tree(source, from)? {
            None => Ok(None),
            Some(subtree) => Ok(Some(self.add_tree(source, to, &subtree)?)),
        }
    }

    /// The entries of the directory at `key`, sorted by name (empty if `key` is not a directory).
    pub fn list<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<Vec<(Vec<u8>, Kind)>, ContextError> {
        let Some(Value::Node(node)) = self.value_at(source, key)? else {
            return Ok(Vec::new());
        };
        let directory = load(source, &node)?;
        let entries = match &directory.body {
            NodeBody::Flat(entries) => entries.clone(),
            NodeBody::CompactFlat(compact) => {
                return Ok(compact
                    .iter()
                    .map(|entry| (entry.name.to_vec(), entry.value.kind()))
                    .collect())
            }
            _ => collect_entries(source, &directory)?,
        };
        Ok(entries
            .iter()
            .map(|entry| (entry.name.to_vec(), entry.value.kind()))
            .collect())
    }

    /// The number of entries of the directory at `key` (0 if `key` is not a directory).
    pub fn length<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<u64, ContextError> {
        match self.value_at(source, key)? {
            Some(Value::Node(node)) => Ok(load(source, &node)?.length()),
            _ => Ok(0),
        }
    }

    /// Replaces (or, with `None`, removes) the value at `key`, copying the path to it.
    fn update<K: AsRef<[u8]>>(
        &self,
        source: &dyn ObjectSource,
        key: &[K],
        value: Option<Value>,
    ) -> Result<Tree, ContextError> {
        let mut tree = self.clone();
        tree.update_in_place(source, key, value)?;
        Ok(tree)
    }

    /// [`Tree::add`] in place: directories this tree alone holds are changed where they are
    /// instead of being copied (copy-on-write), so a block's many updates under one directory copy
    /// it once. Snapshots (clones) of this tree are unaffected. On error the tree is left empty.
    pub fn add_in_place<K: AsRef<[u8]>>(
        &mut self,
        source: &dyn ObjectSource,
        key: &[K],
        bytes: &[u8],
    ) -> Result<(), ContextError> {
        self.update_in_place(source, key, Some(Value::Contents(Contents::new(bytes))))
    }

    /// [`Tree::add_tree`] in place (see [`Tree::add_in_place`]).
    pub fn add_tree_in_place<K: AsRef<[u8]>>(
        &mut self,
        source: &dyn ObjectSource,
        key: &[K],
        subtree: &Tree,
    ) -> Result<(), ContextError> {
        self.update_in_place(source, key, subtree.root.clone())
    }

    /// [`Tree::remove`] in place (see [`Tree::add_in_place`]).
    pub fn remove_in_place<K: AsRef<[u8]>>(
        &mut self,
        source: &dyn ObjectSource,
        key: &[K],
    ) -> Result<(), ContextError> {
        self.update_in_place(source, key, None)
    }

    /// The update itself: descend the key, taking each flat directory out of its parent when this
    /// tree holds it alone (it is then changed in place) and loading or sharing it otherwise
    /// (it is then copied); then rebuild upwards.
    fn update_in_place<K: AsRef<[u8]>>(
        &mut self,
        source: &dyn ObjectSource,
        key: &[K],
        value: Option<Value>,
    ) -> Result<(), ContextError> {
        if key.is_empty() {
            self.root = value;
            return Ok(());
        }
        let removing = value.is_none();
        // Removing a missing key changes nothing; checking first means the descent below never
        // has to put back what it took apart.
        if removing && self.value_at(source, key)?.is_none() {
            return Ok(());
        }
        let mut levels: Vec<Level> = Vec::with_capacity(key.len());
        let mut current = self.root.take();
        for (position, name) in key.iter().enumerate() {
            let mut level = match current.take() {
                // A stored directory leaves the store's cache (its version is being replaced).
                Some(Value::Node(node)) => match take_for_update(source, node)? {
                    Taken::Owned(object) => Level::Owned(object),
                    Taken::Shared(shared) => Level::Shared(shared),
                },
                _ => Level::Absent,
            };
            if position + 1 < key.len() {
                current = match &mut level {
                    Level::Owned(object) => match &mut object.body {
                        NodeBody::Flat(entries) => {
                            match entries.binary_search_by(|entry| (*entry.name).cmp(name.as_ref()))
                            {
                                Ok(index) => Some(std::mem::replace(
                                    &mut entries[index].value,
                                    Value::Contents(Contents::placeholder()),
                                )),
                                Err(_) => None,
                            }
                        }
                        // An inode directory stays owned: `directory_set_owned` adds to it
                        // in place. The child found is shared with it (and copied).
                        _ => directory_find(source, object, name.as_ref())?,
                    },
                    Level::Shared(directory) => directory_find(source, directory, name.as_ref())?,
                    Level::Absent => None,
                };
            }
            levels.push(level);
        }
        let mut value = value;
        for (level, name) in levels.into_iter().zip(key).rev() {
            let name = name.as_ref();
            value = match level {
                Level::Owned(object) => directory_set_owned(source, object, name, value)?,
                Level::Shared(directory) => directory_set(source, Some(&directory), name, value)?,
                Level::Absent => directory_set(source, None, name, value)?,
            }
            .map(Value::Node);
        }
        self.root = value;
        Ok(())
    }
}

/// A directory on the path of an in-place update.
enum Level {
    /// Held by this tree alone: changed in place.
    Owned(NodeObject),
    /// Shared with snapshots, the cache or the store: copied.
    Shared(Arc<NodeObject>),
    /// Not a directory yet (absent, or contents to be replaced).
    Absent,
}

/// Convenience for trees built only in memory: the same operations with [`InMemory`] as source.
impl Tree {
    /// [`Tree::add`] on an in-memory tree.
    pub fn with<K: AsRef<[u8]>>(&self, key: &[K], bytes: &[u8]) -> Result<Tree, ContextError> {
        self.add(&InMemory, key, bytes)
    }
}
