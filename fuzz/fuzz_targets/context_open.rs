//! Opening corrupted store files: a valid small store is built once; each input replaces one of
//! its files (pack, index or control) by a mutation of it, then the store is opened and, if that
//! succeeds, every commit is checked out and every binding read. Errors are fine; a panic, a hang
//! or an unbounded allocation is a bug.

#![no_main]

use kestrel_context::{CommitInfo, ContextHash, Kind, Store, StoreOptions, SyncMode, Tree};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const FILES: [&str; 3] = ["store.pack", "store.index", "store.control"];

/// The pristine files of a small store with a large directory, nesting and a big value.
fn pristine() -> &'static Vec<Vec<u8>> {
    static FILES_BYTES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FILES_BYTES.get_or_init(|| {
        let directory =
            std::env::temp_dir().join(format!("kestrel-fuzz-open-seed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let mut store = Store::open(&directory, StoreOptions::default()).expect("open");
        let mut tree = Tree::empty();
        let mut parents: Vec<ContextHash> = Vec::new();
        for level in 0..3u8 {
            for index in 0..100u32 {
                tree = tree
                    .add(
                        &store,
                        &["data", "big", &format!("{level}-{index}")],
                        &[level; 9],
                    )
                    .expect("add");
            }
            tree = tree.add(&store, &["code"], &vec![level; 300]).expect("add");
            let info = CommitInfo {
                date_seconds: i64::from(level),
                author: "a".into(),
                message: "m".into(),
            };
            parents = vec![store.commit(&tree, &parents, &info).expect("commit")];
        }
        store.close().expect("close");
        let bytes = FILES
            .iter()
            .map(|name| std::fs::read(directory.join(name)).expect("read"))
            .collect();
        let _ = std::fs::remove_dir_all(&directory);
        bytes
    })
}

fn walk(store: &Store, tree: &Tree) {
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    let mut visited = 0;
    while let Some(key) = pending.pop() {
        let Ok(entries) = tree.list(store, &key) else {
            continue;
        };
        for (name, kind) in entries {
            visited += 1;
            if visited > 10_000 {
                return;
            }
            let mut child = key.clone();
            child.push(name);
            match kind {
                Kind::Node => pending.push(child),
                Kind::Contents => {
                    let _ = tree.find(store, &child);
                }
            }
        }
    }
    let _ = tree.hash();
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&selector, rest)) = bytes.split_first() else {
        return;
    };
    let files = pristine();
    let target = selector as usize % FILES.len();
    // Mode: the input either replaces the file, or is a list of (position, xor) patches on it.
    let mut contents = files[target].clone();
    if selector & 0x80 == 0 {
        contents = rest.to_vec();
    } else {
        for patch in rest.chunks_exact(3) {
            if contents.is_empty() {
                break;
            }
            let position = usize::from(u16::from_le_bytes([patch[0], patch[1]])) % contents.len();
            contents[position] ^= patch[2];
        }
        if selector & 0x40 != 0 {
            let keep = usize::from(rest.first().copied().unwrap_or(0)) * contents.len() / 256;
            contents.truncate(keep);
        }
    }
    let directory = std::env::temp_dir().join(format!("kestrel-fuzz-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("mkdir");
    for (index, name) in FILES.iter().enumerate() {
        let data = if index == target {
            &contents
        } else {
            &files[index]
        };
        std::fs::write(directory.join(name), data).expect("write");
    }
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    if let Ok(store) = Store::open(&directory, options) {
        if let Some(head) = store.head() {
            let mut next = Some(head);
            let mut steps = 0;
            while let Some(hash) = next.take() {
                steps += 1;
                if steps > 10 {
                    break;
                }
                if let Ok(Some(tree)) = store.checkout(&hash) {
                    walk(&store, &tree);
                }
                if let Ok(Some(record)) = store.commit_record(&hash) {
                    next = record.parents.first().map(|(parent, _)| *parent);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&directory);
});
