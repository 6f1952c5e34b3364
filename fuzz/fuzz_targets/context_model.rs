//! Reference-model fuzzing of the context store: random add / bulk add / remove / commit /
//! checkout / reopen / garbage-collection operations on a `Store` and on a `BTreeMap` of full
//! paths beside it; after every operation the touched key is compared, and at the end every
//! binding, the number of leaves and the root hash (against a tree rebuilt from the model in
//! sorted order) are compared. A GC keeps a commit of the current chain (commits each built on
//! the one before, as the GC requires) and every later one; every kept commit is then checked
//! against its model and verified, and the dropped ones must be gone.

#![no_main]

use kestrel_context::{
    CommitInfo, ContextHash, InMemory, Kind, Store, StoreOptions, SyncMode, Tree, VerifyScope,
};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

type Model = BTreeMap<Vec<Vec<u8>>, Vec<u8>>;

const NAMES: &[&[u8]] = &[b"a", b"b", b"c", b"data", b"index", b"big", b"x", b"yy"];

struct Input<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.position)?;
        self.position += 1;
        Some(byte)
    }

    fn key(&mut self) -> Option<Vec<Vec<u8>>> {
        let depth = 1 + self.byte()? as usize % 3;
        (0..depth)
            .map(|_| {
                self.byte()
                    .map(|byte| NAMES[byte as usize % NAMES.len()].to_vec())
            })
            .collect()
    }
}

fn model_add(model: &mut Model, key: &[Vec<u8>], value: Vec<u8>) {
    // Contents on a strict prefix are replaced by directories; a directory at `key` by contents.
    for length in 1..key.len() {
        model.remove(&key[..length]);
    }
    model.retain(|existing, _| !(existing.len() > key.len() && existing.starts_with(key)));
    model.insert(key.to_vec(), value);
}

fn model_remove(model: &mut Model, key: &[Vec<u8>]) {
    model.retain(|existing, _| !existing.starts_with(key));
}

fn leaves(store: &Store, tree: &Tree) -> Model {
    let mut found = Model::new();
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    while let Some(key) = pending.pop() {
        for (name, kind) in tree.list(store, &key).expect("list") {
            let mut child = key.clone();
            child.push(name);
            match kind {
                Kind::Node => pending.push(child),
                Kind::Contents => {
                    let bytes = tree.find(store, &child).expect("find").expect("listed");
                    found.insert(child, bytes.to_vec());
                }
            }
        }
    }
    found
}

fn check(store: &Store, tree: &Tree, model: &Model) {
    assert_eq!(&leaves(store, tree), model);
    let mut rebuilt = Tree::empty();
    for (key, value) in model {
        rebuilt = rebuilt.add(&InMemory, key, value).expect("in memory");
    }
    assert_eq!(rebuilt.hash(), tree.hash(), "canonical hash");
}

fuzz_target!(|bytes: &[u8]| {
    let directory = std::env::temp_dir().join(format!("kestrel-fuzz-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut store = Store::open(&directory, options.clone()).expect("open");
    let mut input = Input { bytes, position: 0 };
    let mut tree = Tree::empty();
    let mut model = Model::new();
    let mut commits: Vec<(ContextHash, Model)> = Vec::new();
    // The first commit of the current chain: every later commit is built on the one before.
    let mut chain_from = 0;
    while let Some(operation) = input.byte() {
        match operation % 8 {
            0 | 1 => {
                let Some(key) = input.key() else { break };
                let length = input.byte().unwrap_or(0) as usize;
                // Some values are long enough to be stored as their own objects.
                let value: Vec<u8> = (0..length * (1 + length % 3))
                    .map(|index| index as u8 ^ operation)
                    .collect();
                // Both update styles: copying (the old tree stays valid) and in place.
                if operation % 7 == 0 {
                    tree = tree.add(&store, &key, &value).expect("add");
                } else {
                    tree.add_in_place(&store, &key, &value)
                        .expect("add in place");
                }
                model_add(&mut model, &key, value.clone());
                assert_eq!(
                    tree.find(&store, &key)
                        .expect("find")
                        .map(|bytes| bytes.to_vec()),
                    Some(value)
                );
            }
            2 => {
                // Bulk add into one directory, crossing the flat/inode threshold of 256 entries.
                let count = input.byte().unwrap_or(0) as usize * 2;
                let salt = input.byte().unwrap_or(0);
                for index in 0..count {
                    let key = vec![b"big".to_vec(), format!("{salt}-{index}").into_bytes()];
                    tree.add_in_place(&store, &key, &[salt])
                        .expect("add in place");
                    model_add(&mut model, &key, vec![salt]);
                }
            }
            3 => {
                let Some(key) = input.key() else { break };
                if input.byte().unwrap_or(0) % 2 == 0 {
                    tree = tree.remove(&store, &key).expect("remove");
                } else {
                    // Keep a snapshot across the in-place removal: it must not change.
                    let snapshot = tree.clone();
                    let snapshot_model = model.clone();
                    tree.remove_in_place(&store, &key).expect("remove in place");
                    assert_eq!(leaves(&store, &snapshot), snapshot_model);
                }
                model_remove(&mut model, &key);
                assert!(!tree.mem_tree(&store, &key).expect("mem_tree"));
            }
            4 => {
                let parents: Vec<ContextHash> =
                    commits.last().map(|(hash, _)| *hash).into_iter().collect();
                let info = CommitInfo {
                    date_seconds: commits.len() as i64,
                    author: "f".into(),
                    message: String::new(),
                };
                let hash = store.commit(&tree, &parents, &info).expect("commit");
                // Committing a stored state again makes no new commit.
                if !commits.iter().any(|(known, _)| *known == hash) {
                    commits.push((hash, model.clone()));
                }
            }
            5 => {
                if commits.is_empty() {
                    continue;
                }
                let index = input.byte().unwrap_or(0) as usize % commits.len();
                let (hash, snapshot) = &commits[index];
                tree = store
                    .checkout(hash)
                    .expect("checkout")
                    .expect("known commit");
                model = snapshot.clone();
                check(&store, &tree, &model);
                // The next commit is built on an older one: a new chain starts with it.
                chain_from = commits.len();
            }
            6 => {
                if commits.is_empty() {
                    continue;
                }
                let first = chain_from.min(commits.len() - 1);
                let keep = first + input.byte().unwrap_or(0) as usize % (commits.len() - first);
                store.gc(&commits[keep].0).expect("gc");
                store.wait_for_gc().expect("gc ends");
                for (hash, _) in commits.drain(..keep) {
                    assert!(store.checkout(&hash).expect("checkout").is_none());
                }
                chain_from = 0;
                for (hash, snapshot) in &commits {
                    let kept = store.checkout(hash).expect("checkout").expect("kept");
                    check(&store, &kept, snapshot);
                }
                store.verify(VerifyScope::AllCommits).expect("verify");
                // The tree being built may come from a dropped commit: start from the head.
                let (hash, snapshot) = commits.last().expect("kept");
                tree = store.checkout(hash).expect("checkout").expect("head");
                model = snapshot.clone();
            }
            _ => {
                drop(tree);
                drop(store);
                store = Store::open(&directory, options.clone()).expect("reopen");
                tree = match commits.last() {
                    Some((hash, snapshot)) => {
                        model = snapshot.clone();
                        store
                            .checkout(hash)
                            .expect("checkout")
                            .expect("durable commit")
                    }
                    None => {
                        model.clear();
                        Tree::empty()
                    }
                };
            }
        }
    }
    check(&store, &tree, &model);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
});
