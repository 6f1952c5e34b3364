//! No host recursion on input-controlled depth: a key of 100,000 components is added, hashed,
//! committed, reopened, read back, removed and dropped (each would overflow the stack if any of
//! these recursed per level).

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::{CommitInfo, InMemory, Store, StoreOptions, SyncMode, Tree};

const DEPTH: usize = 100_000;

#[test]
fn key_of_depth_100000() {
    let key: Vec<String> = (0..DEPTH).map(|level| format!("d{}", level % 7)).collect();
    let tree = Tree::empty().add(&InMemory, &key, b"deep").unwrap();
    let hash = tree.hash();
    assert_eq!(&tree.find(&InMemory, &key).unwrap().unwrap()[..], b"deep");

    let directory = std::env::temp_dir().join(format!("kestrel-deep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let commit = {
        let mut store = Store::open(&directory, options.clone()).unwrap();
        let info = CommitInfo {
            date_seconds: 0,
            author: "a".into(),
            message: "m".into(),
        };
        let commit = store.commit(&tree, &[], &info).unwrap();
        store.close().unwrap();
        commit
    };
    let store = Store::open(&directory, options).unwrap();
    let stored = store.checkout(&commit).unwrap().unwrap();
    assert_eq!(stored.hash(), hash);
    assert_eq!(&stored.find(&store, &key).unwrap().unwrap()[..], b"deep");
    let removed = stored.remove(&store, &key).unwrap();
    assert!(removed.is_empty());
    drop(stored);
    drop(tree);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}
