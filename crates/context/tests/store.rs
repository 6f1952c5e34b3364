//! The store on disk: reopen-and-rehash, every truncation of the pack tail, corrupted files giving
//! typed errors, and a writer process killed with SIGKILL at random points.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::{
    CommitInfo, ContextError, ContextHash, Store, StoreOptions, SyncMode, Tree, PACK_FILE_NAME,
};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn temporary_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "kestrel-context-test-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// Copies every file of the store in `directory` into `image` (created): a crash image when the
/// store is open.
fn copy_store_files(directory: &Path, image: &Path) {
    std::fs::create_dir_all(image).unwrap();
    for entry in std::fs::read_dir(directory).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), image.join(entry.file_name())).unwrap();
    }
}

fn info(level: u64) -> CommitInfo {
    CommitInfo {
        date_seconds: 1_600_000_000 + level as i64,
        author: "Tezos".into(),
        message: format!("lvl {level}"),
    }
}

fn key(level: u64, index: u64) -> [String; 4] {
    [
        "data".into(),
        "contracts".into(),
        format!(
            "{:016x}",
            level.wrapping_mul(7919).wrapping_add(index) % 5000
        ),
        "balance".into(),
    ]
}

fn value(level: u64, index: u64) -> Vec<u8> {
    let length = if index.is_multiple_of(97) {
        3000
    } else {
        8 + (index % 40) as usize
    };
    (0..length)
        .map(|position| (level as usize * 31 + index as usize + position) as u8)
        .collect()
}

/// Applies block `level`'s changes (300 adds into a large directory, a few removals) to `tree`.
fn block(store: &Store, tree: &Tree, level: u64) -> Tree {
    let mut tree = tree.clone();
    for index in 0..300 {
        tree = tree
            .add(store, &key(level, index), &value(level, index))
            .unwrap();
    }
    for index in 0..3 {
        tree = tree
            .remove(store, &key(level.wrapping_sub(1), index * 11))
            .unwrap();
    }
    tree.add(store, &["blocks", &level.to_string()], &level.to_be_bytes())
        .unwrap()
}

#[test]
fn reopen_gives_the_same_trees_and_hashes() {
    let directory = temporary_directory("reopen");
    let mut expected = Vec::new();
    {
        let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
        let mut tree = Tree::empty();
        let mut parent: Vec<ContextHash> = Vec::new();
        for level in 0..6 {
            tree = block(&store, &tree, level);
            let hash = store.commit(&tree, &parent, &info(level)).unwrap();
            expected.push((hash, tree.hash(), tree.clone()));
            parent = vec![hash];
            // Checkout right after commit reads back through the cache.
            let checked_out = store.checkout(&hash).unwrap().unwrap();
            assert_eq!(checked_out.hash(), tree.hash());
        }
        store.close().unwrap();
    }
    let store = Store::open(&directory, StoreOptions::default()).unwrap();
    assert_eq!(store.commit_count(), 6);
    assert_eq!(store.head(), Some(expected[5].0));
    for (level, (commit, tree_hash, memory_tree)) in expected.iter().enumerate() {
        let tree = store.checkout(commit).unwrap().unwrap();
        assert_eq!(tree.hash(), *tree_hash);
        let record = store.commit_record(commit).unwrap().unwrap();
        assert_eq!(record.info, info(level as u64));
        for index in [0u64, 1, 97, 150, 299] {
            let key = key(level as u64, index);
            assert_eq!(
                tree.find(&store, &key).unwrap().map(|bytes| bytes.to_vec()),
                memory_tree
                    .find(&store, &key)
                    .unwrap()
                    .map(|bytes| bytes.to_vec()),
            );
        }
        // Rehash from disk without trusting any stored hash: read every leaf back and rebuild.
        assert_eq!(rebuild_from_leaves(&store, &tree).hash(), *tree_hash);
        // Rebuild the large directory from its listing and compare.
        let listing = tree.list(&store, &["data", "contracts"]).unwrap();
        assert_eq!(
            listing.len() as u64,
            tree.length(&store, &["data", "contracts"]).unwrap()
        );
        let mut rebuilt = Tree::empty();
        for (name, _) in &listing {
            let subtree = tree
                .find_tree(&store, &["data".as_bytes(), b"contracts", name])
                .unwrap()
                .unwrap();
            rebuilt = rebuilt.add_tree(&store, &[name], &subtree).unwrap();
        }
        assert_eq!(
            rebuilt.hash(),
            tree.find_tree(&store, &["data", "contracts"])
                .unwrap()
                .unwrap()
                .hash()
        );
    }
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn every_truncation_of_the_pack_opens_with_the_commits_it_holds() {
    let directory = temporary_directory("truncate");
    let mut ends = Vec::new();
    let mut hashes = Vec::new();
    {
        let mut store = Store::open(
            &directory,
            StoreOptions {
                sync_mode: SyncMode::Checkpoints,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let mut tree = Tree::empty();
        for level in 0..3u64 {
            for index in 0..40 {
                tree = tree
                    .add(&store, &key(level, index), &value(level, index))
                    .unwrap();
            }
            let parents: Vec<_> = hashes.last().copied().into_iter().collect();
            hashes.push(store.commit(&tree, &parents, &info(level)).unwrap());
            ends.push(store.pack_length_bytes());
        }
        // Simulate a crash: no checkpoint, the control file still says "empty store".
        std::mem::forget(store);
    }
    let pristine: Vec<(String, Vec<u8>)> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect();
    let full_length = *ends.last().unwrap();
    let step = ((full_length - 16) / 400).max(1);
    let mut length = 16;
    while length <= full_length {
        let copy = directory.with_extension(format!("t{length}"));
        std::fs::create_dir_all(&copy).unwrap();
        for (name, bytes) in &pristine {
            let bytes = if name == PACK_FILE_NAME {
                &bytes[..length as usize]
            } else {
                &bytes[..]
            };
            std::fs::write(copy.join(name), bytes).unwrap();
        }
        let store = Store::open(&copy, StoreOptions::default()).unwrap();
        let durable = ends.iter().filter(|end| **end <= length).count();
        assert_eq!(store.commit_count(), durable, "pack cut at {length}");
        for hash in &hashes[..durable] {
            let tree = store.checkout(hash).unwrap().unwrap();
            assert!(tree.mem_tree(&store, &["data"]).unwrap());
        }
        drop(store);
        // Reopening again after the repair gives the same store.
        assert_eq!(
            Store::open(&copy, StoreOptions::default())
                .unwrap()
                .commit_count(),
            durable
        );
        let _ = std::fs::remove_dir_all(&copy);
        length += if ends.iter().any(|end| end.abs_diff(length) < 3) {
            1
        } else {
            step
        };
    }
    let _ = std::fs::remove_dir_all(&directory);
}

/// A fresh in-memory tree with every leaf of `tree` (read from the store), so its hash is
/// computed from the contents up, trusting no hash stored in the pack.
fn rebuild_from_leaves(store: &Store, tree: &Tree) -> Tree {
    let mut rebuilt = Tree::empty();
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    while let Some(key) = pending.pop() {
        for (name, kind) in tree.list(store, &key).unwrap() {
            let mut child = key.clone();
            child.push(name);
            match kind {
                kestrel_context::Kind::Node => pending.push(child),
                kestrel_context::Kind::Contents => {
                    let bytes = tree.find(store, &child).unwrap().unwrap();
                    rebuilt
                        .add_in_place(&kestrel_context::InMemory, &child, &bytes)
                        .unwrap();
                }
            }
        }
    }
    rebuilt
}

#[test]
fn changing_one_entry_of_a_large_directory_writes_logarithmic_bytes() {
    // 200,000 entries: an inode trie of depth 4. One change rewrites one path of inodes (each at
    // most 32 pointers of 32-byte hash + offset), the directories above it and the commit.
    let directory = temporary_directory("large");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut store = Store::open(&directory, options).unwrap();
    let mut tree = Tree::empty();
    for index in 0..200_000u32 {
        tree.add_in_place(
            &store,
            &["data", "index", &format!("{index:08x}")],
            &index.to_be_bytes(),
        )
        .unwrap();
    }
    let first = store.commit(&tree, &[], &info(0)).unwrap();
    let before = store.pack_length_bytes();
    let mut tree = store.checkout(&first).unwrap().unwrap();
    tree.add_in_place(&store, &["data", "index", "00001234"], b"changed")
        .unwrap();
    store.commit(&tree, &[first], &info(1)).unwrap();
    let written = store.pack_length_bytes() - before;
    assert!(written < 6 * 1024, "one change wrote {written} bytes");
    assert_eq!(tree.length(&store, &["data", "index"]).unwrap(), 200_000);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn a_flat_directory_is_stored_in_parts_and_one_change_rewrites_one_part() {
    // A directory of 33 to 256 entries keeps the flat Tezos hash but is stored as up to 32
    // parts: changing one entry rewrites one part (a few entries) and the root's part offsets,
    // not the whole directory (200 entries of about 60 bytes: 12 KB). Each step changes the
    // store, reopens it, and checks the tree read back against one rebuilt from its leaves; the
    // steps shrink the directory below 33 entries (stored flat) and grow it back (parts again,
    // some of them still in the pack from before).
    let directory = temporary_directory("parts");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let name = |index: u64| format!("{:016x}", index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut store = Store::open(&directory, options.clone()).unwrap();
    let mut tree = Tree::empty();
    for index in 0..200u64 {
        tree.add_in_place(&store, &["big_map", &name(index)], &index.to_be_bytes())
            .unwrap();
    }
    let mut head = store.commit(&tree, &[], &info(0)).unwrap();
    // (first index, last index, add (or remove), bytes a commit may write at most)
    let steps: [(u64, u64, bool, u64); 6] = [
        (7, 7, true, 2048),
        (150, 150, false, 2048),
        (0, 180, false, 4096),
        (0, 180, true, 16_384),
        (300, 300, true, 2048),
        (19, 19, true, 2048),
    ];
    for (level, (first, last, add, bound_bytes)) in steps.into_iter().enumerate() {
        let level = level as u64 + 1;
        let mut tree = store.checkout(&head).unwrap().unwrap();
        for index in first..=last {
            let key = ["big_map".to_owned(), name(index)];
            if add {
                tree.add_in_place(&store, &key, &(index + level).to_be_bytes())
                    .unwrap();
            } else {
                tree.remove_in_place(&store, &key).unwrap();
            }
        }
        let before = store.pack_length_bytes();
        head = store.commit(&tree, &[head], &info(level)).unwrap();
        let written = store.pack_length_bytes() - before;
        assert!(written <= bound_bytes, "step {level} wrote {written} bytes");
        store.close().unwrap();
        store = Store::open(&directory, options.clone()).unwrap();
        let reopened = store.checkout(&head).unwrap().unwrap();
        assert_eq!(reopened.hash(), tree.hash(), "step {level}");
        assert_eq!(rebuild_from_leaves(&store, &reopened).hash(), tree.hash());
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn building_on_the_handed_over_head_changes_no_earlier_commit() {
    // `checkout_for_update` hands the last commit's tree over, and in-place updates then change
    // the directories that commit wrote. Every earlier commit must still read back with its hash,
    // and the commits must equal those of the same blocks built on shared snapshots.
    let handed = temporary_directory("handed");
    let shared = temporary_directory("shared");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut stores = [
        Store::open(&handed, options.clone()).unwrap(),
        Store::open(&shared, options).unwrap(),
    ];
    let mut heads: Vec<Vec<(ContextHash, ContextHash)>> = vec![Vec::new(), Vec::new()];
    for (which, store) in stores.iter_mut().enumerate() {
        let mut parent: Option<ContextHash> = None;
        for level in 0..8u64 {
            let mut tree = match (parent, which) {
                (None, _) => Tree::empty(),
                (Some(head), 0) => store.checkout_for_update(&head).unwrap().unwrap(),
                (Some(head), _) => store.checkout(&head).unwrap().unwrap(),
            };
            for index in 0..150 {
                tree.add_in_place(&*store, &key(level, index), &value(level, index))
                    .unwrap();
            }
            tree.remove_in_place(&*store, &key(level.saturating_sub(1), 3))
                .unwrap();
            let tree_hash = tree.hash();
            let parents: Vec<ContextHash> = parent.into_iter().collect();
            let head = store.commit(&tree, &parents, &info(level)).unwrap();
            heads[which].push((head, tree_hash));
            parent = Some(head);
        }
    }
    assert_eq!(heads[0], heads[1]);
    for (head, tree_hash) in &heads[0] {
        let tree = stores[0].checkout(head).unwrap().unwrap();
        assert_eq!(tree.hash(), *tree_hash);
        assert_eq!(rebuild_from_leaves(&stores[0], &tree).hash(), *tree_hash);
    }
    drop(stores);
    let _ = std::fs::remove_dir_all(&handed);
    let _ = std::fs::remove_dir_all(&shared);
}

#[test]
fn updates_that_take_objects_from_the_cache_change_no_other_checkout() {
    // An update hands the cached copy of each stored directory on its path over to the tree
    // (`load_node_for_update`), which changes it in place when nobody else holds it. Another
    // checkout of the same commit, read before, during and after, must keep every old value and
    // its hash, recomputed from its leaves; the updated tree must hash as one rebuilt from its own.
    let directory = temporary_directory("taken");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let head = {
        let mut store = Store::open(&directory, options.clone()).unwrap();
        let mut tree = Tree::empty();
        for level in 0..3 {
            tree = block(&store, &tree, level);
        }
        let head = store.commit(&tree, &[], &info(0)).unwrap();
        store.close().unwrap();
        head
    };
    let store = Store::open(&directory, options).unwrap();
    let original = store.checkout(&head).unwrap().unwrap();
    let original_hash = original.hash();
    let mut updated = store.checkout(&head).unwrap().unwrap();
    let mut other = store.checkout(&head).unwrap().unwrap();
    // Every key of the original, with its value: the updated tree's reads fill the cache.
    let keys: Vec<[String; 4]> = (0..3)
        .flat_map(|level| (0..300).map(move |index| key(level, index)))
        .collect();
    let before: Vec<Option<Vec<u8>>> = keys
        .iter()
        .map(|key| {
            updated
                .find(&store, key)
                .unwrap()
                .map(|bytes| bytes.to_vec())
        })
        .collect();
    for (position, key) in keys.iter().enumerate() {
        // `other` holds a few directories while the update takes the cached copies.
        if position % 50 == 0 {
            assert_eq!(
                other.find(&store, key).unwrap().map(|bytes| bytes.to_vec()),
                before[position]
            );
        }
        match position % 3 {
            0 => updated.add_in_place(&store, key, b"changed").unwrap(),
            1 => updated.remove_in_place(&store, key).unwrap(),
            _ => {}
        }
        if position % 7 == 0 {
            other
                .add_in_place(&store, &["other", "marker"], &[position as u8])
                .unwrap();
        }
    }
    for (position, key) in keys.iter().enumerate() {
        assert_eq!(
            original
                .find(&store, key)
                .unwrap()
                .map(|bytes| bytes.to_vec()),
            before[position]
        );
        let expected = match position % 3 {
            0 => Some(b"changed".to_vec()),
            1 => None,
            _ => before[position].clone(),
        };
        assert_eq!(
            updated
                .find(&store, key)
                .unwrap()
                .map(|bytes| bytes.to_vec()),
            expected
        );
    }
    assert_eq!(rebuild_from_leaves(&store, &original).hash(), original_hash);
    assert_ne!(updated.hash(), original_hash);
    assert_eq!(rebuild_from_leaves(&store, &updated).hash(), updated.hash());
    other.remove_in_place(&store, &["other"]).unwrap();
    assert_eq!(other.hash(), original_hash);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

fn check_error_names_file(error: &ContextError) {
    let text = error.to_string();
    assert!(
        matches!(error, ContextError::Corrupt { .. }) && text.contains("offset"),
        "{text}"
    );
}

#[test]
fn corrupted_files_give_typed_errors() {
    let directory = temporary_directory("corrupt");
    {
        let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
        let tree = block(&store, &Tree::empty(), 1);
        store.commit(&tree, &[], &info(1)).unwrap();
        store.close().unwrap();
    }
    let cases: &[(&str, usize, u8)] = &[
        ("store.control", 0, b'X'),
        ("store.control", 20, 0xff),
        ("store.pack", 0, b'X'),
        ("store.pack", 9, 7),
        ("store.index", 0, b'X'),
    ];
    for (name, position, byte) in cases {
        let path = directory.join(name);
        let original = std::fs::read(&path).unwrap();
        let mut bad = original.clone();
        bad[*position] = *byte;
        std::fs::write(&path, &bad).unwrap();
        let error = Store::open(&directory, StoreOptions::default())
            .err()
            .expect("must fail");
        check_error_names_file(&error);
        assert!(error.to_string().contains(name), "{error}");
        std::fs::write(&path, &original).unwrap();
    }
    // A pack of version 2 (inode trees holding their children's hashes) is refused by version.
    let pack_path = directory.join(PACK_FILE_NAME);
    let original = std::fs::read(&pack_path).unwrap();
    let mut old = original.clone();
    old[8..12].copy_from_slice(&2u32.to_be_bytes());
    std::fs::write(&pack_path, &old).unwrap();
    let error = Store::open(&directory, StoreOptions::default())
        .err()
        .expect("a version 2 pack is refused");
    assert!(
        matches!(
            error,
            ContextError::Corrupt {
                offset_bytes: 8,
                kind: kestrel_context::CorruptionKind::UnsupportedVersion(2),
                ..
            }
        ),
        "{error}"
    );
    std::fs::write(&pack_path, &original).unwrap();
    // Flipping bytes inside objects: opening works (the checkpoint covers them), reading gives
    // a typed error or, if the flip lands in a value, different bytes; never a panic.
    let pack_path = directory.join(PACK_FILE_NAME);
    let original = std::fs::read(&pack_path).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let position = 16 + (state % (original.len() as u64 - 16)) as usize;
        let mut bad = original.clone();
        bad[position] ^= 1 << (state >> 60 & 7);
        std::fs::write(&pack_path, &bad).unwrap();
        if let Ok(store) = Store::open(&directory, StoreOptions::default()) {
            if let Ok(Some(tree)) = store.checkout(&store.head().unwrap()) {
                walk_everything(&store, &tree);
            }
        }
    }
    std::fs::write(&pack_path, &original).unwrap();
    let _ = std::fs::remove_dir_all(&directory);
}

/// Reads every entry of `tree`; errors are fine, panics are not.
fn walk_everything(store: &Store, tree: &Tree) {
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    while let Some(key) = pending.pop() {
        let Ok(entries) = tree.list(store, &key) else {
            continue;
        };
        for (name, kind) in entries {
            let mut child = key.clone();
            child.push(name);
            match kind {
                kestrel_context::Kind::Node => pending.push(child),
                kestrel_context::Kind::Contents => {
                    let _ = tree.find(store, &child);
                }
            }
        }
    }
}

const CRASH_CHILD_VARIABLE: &str = "KESTREL_CONTEXT_CRASH_CHILD";
/// The GC policy of the crash test's writer process, `keep,every` (none when unset).
const CRASH_CHILD_GC_VARIABLE: &str = "KESTREL_CONTEXT_CRASH_GC";
/// The GC step at which the crash test's writer process aborts (`GcStep`'s name; none when
/// unset).
const CRASH_CHILD_ABORT_VARIABLE: &str = "KESTREL_CONTEXT_CRASH_GC_ABORT";
/// Rounds of the crash test that kills a collecting writer (default [`GC_CRASH_ROUNDS`]; set it
/// higher for a longer run: `KESTREL_CONTEXT_CRASH_ROUNDS=500 cargo test -p kestrel-context
/// --test store killing_the_writer_during_gc`).
const CRASH_ROUNDS_VARIABLE: &str = "KESTREL_CONTEXT_CRASH_ROUNDS";
/// Rounds in CI: with the 10 rounds of `killing_the_writer_loses_no_durable_commit`, 50 kills.
const GC_CRASH_ROUNDS: u64 = 40;

/// Entry point of the writer process the crash test kills (does nothing in a normal run): it
/// commits blocks forever, printing `durable <level> <commit hex>` after each commit returns.
#[test]
fn crash_writer_process() {
    let Some(directory) = std::env::var_os(CRASH_CHILD_VARIABLE) else {
        return;
    };
    // With a GC policy (`keep,every`), the writer collects as it commits.
    let gc = std::env::var(CRASH_CHILD_GC_VARIABLE).ok().map(|policy| {
        let (keep, every) = policy.split_once(',').unwrap();
        kestrel_context::GcPolicy {
            keep_commits: keep.parse().unwrap(),
            every_commits: every.parse().unwrap(),
        }
    });
    let gc_abort_at = std::env::var(CRASH_CHILD_ABORT_VARIABLE).ok().map(|name| {
        *GC_STEPS
            .iter()
            .find(|step| format!("{step:?}") == name)
            .unwrap()
    });
    let options = StoreOptions {
        gc,
        gc_abort_at,
        ..StoreOptions::default()
    };
    let mut store = Store::open(Path::new(&directory), options).unwrap();
    let (mut level, mut tree, mut parents) = match store.head() {
        None => (0, Tree::empty(), Vec::new()),
        Some(head) => {
            let tree = store.checkout(&head).unwrap().unwrap();
            let level = u64::from_be_bytes(
                tree.find(&store, &["last"]).unwrap().unwrap()[..]
                    .try_into()
                    .unwrap(),
            ) + 1;
            (level, tree, vec![head])
        }
    };
    loop {
        tree = block(&store, &tree, level);
        tree = tree.add(&store, &["last"], &level.to_be_bytes()).unwrap();
        let hash = store.commit(&tree, &parents, &info(level)).unwrap();
        println!("durable {level} {}", hash.to_hex());
        parents = vec![hash];
        level += 1;
    }
}

#[test]
fn killing_the_writer_loses_no_durable_commit() {
    let directory = temporary_directory("crash");
    let mut durable: Vec<(u64, ContextHash)> = Vec::new();
    // Kill delays in milliseconds after the first durable commit of each round.
    for (round, delay_milliseconds) in [3u64, 41, 0, 17, 88, 9, 130, 1, 55, 23].iter().enumerate() {
        let (mut child, receiver, reader) = spawn_writer(&directory, None);
        // Wait for one durable commit so each round makes progress, then kill at the delay.
        let first = receiver
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("child commits");
        durable.push(first);
        // The writer process holds the store's lock: a second writer is refused.
        assert!(matches!(
            Store::open(&directory, StoreOptions::default()),
            Err(ContextError::InUse { .. })
        ));
        std::thread::sleep(std::time::Duration::from_millis(*delay_milliseconds));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        durable.extend(receiver.try_iter());
        let store = Store::open(&directory, StoreOptions::default())
            .unwrap_or_else(|error| panic!("round {round}: reopen failed: {error}"));
        for (level, hash) in &durable {
            let tree = store
                .checkout(hash)
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: durable commit {level} lost"));
            let last = tree.find(&store, &["last"]).unwrap().unwrap();
            assert_eq!(&last[..], &level.to_be_bytes());
            assert_eq!(
                tree.find(&store, &key(*level, 5))
                    .unwrap()
                    .unwrap()
                    .to_vec(),
                value(*level, 5)
            );
        }
    }
    assert!(durable.len() >= 10);
    let _ = std::fs::remove_dir_all(&directory);
}

/// While a store is open, zeros are written ahead of the pack's end (so that the kernel caches
/// it in large folios); a crash image taken then holds them, and reopening it cuts them off and
/// keeps every commit. A closed store leaves none.
#[test]
fn zeros_written_ahead_of_the_pack_are_cut_off_on_reopen() {
    let directory = temporary_directory("reserve");
    let image = temporary_directory("reserve-image");
    let file_length = |directory: &Path| {
        std::fs::metadata(directory.join(PACK_FILE_NAME))
            .unwrap()
            .len()
    };
    let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
    let mut tree = Tree::empty();
    let mut parents = Vec::new();
    let mut commits = Vec::new();
    for level in 0..3 {
        tree = block(&store, &tree, level);
        let hash = store.commit(&tree, &parents, &info(level)).unwrap();
        commits.push((hash, tree.hash()));
        parents = vec![hash];
    }
    let pack_length = store.pack_length_bytes();
    // The writer thread writes the zeros after the commit has returned.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while file_length(&directory) <= pack_length {
        assert!(
            std::time::Instant::now() < deadline,
            "no zeros written ahead"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // A crash image: the files as a process killed now leaves them (no checkpoint since).
    copy_store_files(&directory, &image);
    let image_bytes = std::fs::read(image.join(PACK_FILE_NAME)).unwrap();
    assert!(image_bytes.len() as u64 > pack_length);
    assert!(image_bytes[pack_length as usize..]
        .iter()
        .all(|byte| *byte == 0));
    store.close().unwrap();
    assert_eq!(file_length(&directory), pack_length);

    let mut store = Store::open(&image, StoreOptions::default()).unwrap();
    assert_eq!(store.pack_length_bytes(), pack_length);
    assert_eq!(file_length(&image), pack_length);
    assert_eq!(store.head(), Some(commits[2].0));
    for (hash, tree_hash) in &commits {
        assert_eq!(store.checkout(hash).unwrap().unwrap().hash(), *tree_hash);
    }
    let tree = block(&store, &store.checkout(&commits[2].0).unwrap().unwrap(), 3);
    store.commit(&tree, &[commits[2].0], &info(3)).unwrap();
    let pack_length = store.pack_length_bytes();
    store.close().unwrap();
    assert_eq!(file_length(&image), pack_length);
    let _ = std::fs::remove_dir_all(&directory);
    let _ = std::fs::remove_dir_all(&image);
}

#[test]
fn in_place_updates_of_split_directories_across_commits_read_back() {
    // Flat directories of 33-256 entries are written in parts, and a directory changed in
    // place keeps each entry's part from one commit to the next (adding and removing entries
    // shifts them). Each commit adds and removes entries of such directories on the handed-over
    // head; after reopening, every commit must hold exactly its model's entries and hash as a
    // tree built afresh from them.
    let directory = temporary_directory("split-in-place");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let name = |entry: u64| format!("entry-{:04}", entry.wrapping_mul(2_654_435_761) % 9973);
    let mut model: std::collections::BTreeMap<(u64, String), Vec<u8>> = Default::default();
    let mut commits = Vec::new();
    {
        let mut store = Store::open(&directory, options.clone()).unwrap();
        let mut head: Option<ContextHash> = None;
        let mut random = 0x9e37_79b9_7f4a_7c15u64;
        for level in 0..40u64 {
            let mut tree = match head {
                None => Tree::empty(),
                Some(head) => store.checkout_for_update(&head).unwrap().unwrap(),
            };
            for step in 0..60u64 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                // Two directories: one around 40 entries, one around 200.
                let (big_map, range) = if step % 3 == 0 { (0, 60) } else { (1, 260) };
                let entry = name(random % range);
                let key = ["big_maps", &big_map.to_string(), &entry];
                if random.is_multiple_of(5) {
                    tree.remove_in_place(&store, &key).unwrap();
                    model.remove(&(big_map, entry));
                } else {
                    let value = format!("{level}/{step}").into_bytes();
                    tree.add_in_place(&store, &key, &value).unwrap();
                    model.insert((big_map, entry), value);
                }
            }
            let parents: Vec<ContextHash> = head.into_iter().collect();
            let commit = store.commit(&tree, &parents, &info(level)).unwrap();
            commits.push((commit, model.clone()));
            head = Some(commit);
        }
        store.close().unwrap();
    }
    let store = Store::open(&directory, options).unwrap();
    for (commit, entries) in &commits {
        let tree = store.checkout(commit).unwrap().unwrap();
        let mut fresh = Tree::empty();
        for ((big_map, entry), value) in entries {
            let key = ["big_maps", &big_map.to_string(), entry.as_str()];
            assert_eq!(
                tree.find(&store, &key).unwrap().as_deref(),
                Some(&value[..])
            );
            fresh = fresh.add(&kestrel_context::InMemory, &key, value).unwrap();
        }
        for big_map in 0..2u64 {
            let listed = tree
                .length(&store, &["big_maps", &big_map.to_string()])
                .unwrap();
            let expected = entries.keys().filter(|(map, _)| *map == big_map).count();
            assert_eq!(listed, expected as u64);
        }
        assert_eq!(tree.hash(), fresh.hash());
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn background_checkpoints_record_the_pack_and_a_crash_image_reopens() {
    let directory = temporary_directory("background-checkpoint");
    let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
    let interval = u64::from(kestrel_context::store_constants::CHECKPOINT_INTERVAL_COMMITS);
    let mut tree = Tree::empty();
    let mut parents = Vec::new();
    let mut checkpointed_length = 0;
    for level in 0..interval + 5 {
        tree = tree
            .add(&store, &key(level, 1), &value(level, 1))
            .unwrap()
            .add(&store, &["last"], &level.to_be_bytes())
            .unwrap();
        parents = vec![store.commit(&tree, &parents, &info(level)).unwrap()];
        if level + 1 == interval {
            // The commit that reached the interval started a checkpoint of the pack as it is.
            checkpointed_length = store.pack_length_bytes();
            store.wait_for_checkpoint().unwrap();
        }
    }
    let control = kestrel_context::ControlRecord::decode(
        &std::fs::read(directory.join(kestrel_context::store_constants::CONTROL_FILE_NAME))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(control.commit_count, interval);
    assert_eq!(control.pack_length_bytes, checkpointed_length);

    // A crash image taken now, while no checkpoint covers the last five commits (their bytes are
    // in the file), with zeros past the end as a file system can leave after a crash: reopening
    // keeps every commit and cuts the zeros.
    let image = temporary_directory("background-checkpoint-image");
    copy_store_files(&directory, &image);
    let image_pack = image.join(PACK_FILE_NAME);
    let mut bytes = std::fs::read(&image_pack).unwrap();
    bytes.truncate(store.pack_length_bytes() as usize);
    bytes.resize(bytes.len() + 300_000, 0);
    std::fs::write(&image_pack, &bytes).unwrap();
    let reopened = Store::open(&image, StoreOptions::default()).unwrap();
    assert_eq!(reopened.head(), store.head());
    assert_eq!(reopened.pack_length_bytes(), store.pack_length_bytes());
    assert_eq!(
        std::fs::metadata(&image_pack).unwrap().len(),
        store.pack_length_bytes()
    );
    let last = reopened
        .checkout(&store.head().unwrap())
        .unwrap()
        .unwrap()
        .find(&reopened, &["last"])
        .unwrap()
        .unwrap();
    assert_eq!(&last[..], &(interval + 4).to_be_bytes());
    reopened.close().unwrap();

    // Closing waits for nothing left running and checkpoints the rest.
    let head = store.head();
    store.close().unwrap();
    let reopened = Store::open(&directory, StoreOptions::default()).unwrap();
    assert_eq!(reopened.head(), head);
    drop(reopened);
    let _ = std::fs::remove_dir_all(&directory);
    let _ = std::fs::remove_dir_all(&image);
}

#[test]
fn committing_a_stored_state_again_keeps_the_store_whole() {
    // The second commit of the same state, parents and info rebuilds the tree from scratch, so
    // its objects are encoded (and partly handed to the writer) before the commit is found to
    // exist: their bytes wait in the write buffer for the next commit.
    let directory = temporary_directory("recommit");
    let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
    let build = |store: &Store, level: u64| {
        let mut tree = Tree::empty();
        for index in 0..2_000 {
            tree = tree
                .add(store, &key(level, index), &value(level, index))
                .unwrap();
        }
        tree
    };
    let first = store.commit(&build(&store, 1), &[], &info(1)).unwrap();
    let length = store.pack_length_bytes();
    let again = store.commit(&build(&store, 1), &[], &info(1)).unwrap();
    assert_eq!(again, first);
    assert_eq!(store.pack_length_bytes(), length);
    let second = store.commit(&build(&store, 2), &[first], &info(2)).unwrap();
    store.close().unwrap();
    let store = Store::open(&directory, StoreOptions::default()).unwrap();
    for (hash, level) in [(first, 1), (second, 2)] {
        let tree = store.checkout(&hash).unwrap().unwrap();
        for index in [0, 999, 1_999] {
            assert_eq!(
                tree.find(&store, &key(level, index))
                    .unwrap()
                    .unwrap()
                    .to_vec(),
                value(level, index)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&directory);
}

/// The bytes of every file of the store in `directory`, by name.
fn store_files(directory: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}

/// A store with `levels` commits of [`block`], closed; their hashes.
fn closed_store(directory: &Path, levels: u64) -> Vec<ContextHash> {
    let mut store = Store::open(directory, StoreOptions::default()).unwrap();
    let mut tree = Tree::empty();
    let mut hashes: Vec<ContextHash> = Vec::new();
    for level in 0..levels {
        tree = block(&store, &tree, level);
        let parents: Vec<_> = hashes.last().copied().into_iter().collect();
        hashes.push(store.commit(&tree, &parents, &info(level)).unwrap());
    }
    store.close().unwrap();
    hashes
}

/// A second writer, in this process or another, gets `InUse` and changes no byte, while the
/// first goes on committing; a read-only open is allowed beside the writer; once the writer
/// closes, the directory opens for writing again.
#[test]
fn a_second_writer_is_refused_and_touches_nothing() {
    let directory = temporary_directory("two-writers");
    let hashes = closed_store(&directory, 2);
    let mut first = Store::open(&directory, StoreOptions::default()).unwrap();
    let tree = block(&first, &first.checkout(&hashes[1]).unwrap().unwrap(), 2);
    let head = first.commit(&tree, &[hashes[1]], &info(2)).unwrap();
    first.checkpoint().unwrap();
    let before = store_files(&directory);
    for _ in 0..2 {
        match Store::open(&directory, StoreOptions::default()) {
            Err(ContextError::InUse { path }) => assert_eq!(path, directory),
            other => panic!("expected InUse, got {:?}", other.map(|store| store.head())),
        }
        assert!(
            store_files(&directory) == before,
            "the refused open changed a file"
        );
    }
    let reader = Store::open_read_only(&directory, StoreOptions::default()).unwrap();
    assert_eq!(reader.head(), Some(head));
    assert!(reader.checkout(&head).unwrap().is_some());
    drop(reader);
    let tree = block(&first, &tree, 3);
    first.commit(&tree, &[head], &info(3)).unwrap();
    first.close().unwrap();
    let second = Store::open(&directory, StoreOptions::default()).unwrap();
    assert_eq!(second.commit_count(), 4);
    drop(second);
    let _ = std::fs::remove_dir_all(&directory);
}

/// A read-only store refuses to commit or checkpoint and writes nothing, even when the files
/// hold a tail a writer would recover.
#[test]
fn a_read_only_store_writes_nothing() {
    let directory = temporary_directory("read-only");
    let hashes = closed_store(&directory, 1);
    let before = store_files(&directory);
    let mut reader = Store::open_read_only(&directory, StoreOptions::default()).unwrap();
    let tree = reader.checkout(&hashes[0]).unwrap().unwrap();
    assert!(matches!(
        reader.commit(&tree, &[hashes[0]], &info(1)),
        Err(ContextError::ReadOnly)
    ));
    assert!(matches!(reader.checkpoint(), Err(ContextError::ReadOnly)));
    reader.close().unwrap();
    assert!(store_files(&directory) == before);
    let _ = std::fs::remove_dir_all(&directory);
}

/// A store whose control file is missing or damaged is a typed error naming the control file,
/// and nothing is wiped; only a directory whose pack and index hold no more than their headers
/// (a creation cut short) is created afresh.
#[test]
fn a_missing_or_damaged_control_file_is_an_error_not_a_new_store() {
    use kestrel_context::{CorruptionKind, StoreFile, CONTROL_FILE_NAME};
    let directory = temporary_directory("no-control");
    let hashes = closed_store(&directory, 2);
    let control = directory.join(CONTROL_FILE_NAME);
    let control_bytes = std::fs::read(&control).unwrap();
    std::fs::remove_file(&control).unwrap();
    let before = store_files(&directory);
    for _ in 0..2 {
        match Store::open(&directory, StoreOptions::default()) {
            Err(ContextError::Corrupt {
                file: StoreFile::Control,
                offset_bytes: 0,
                kind: CorruptionKind::Missing,
                ..
            }) => {}
            other => panic!("expected a missing control file, got {:?}", other.err()),
        }
        assert!(
            store_files(&directory) == before,
            "the failed open changed a file"
        );
    }
    for damaged in [&control_bytes[..10], &[][..], &control_bytes[1..]] {
        std::fs::write(&control, damaged).unwrap();
        let error = Store::open(&directory, StoreOptions::default())
            .err()
            .expect("a damaged control file fails");
        assert!(
            matches!(
                error,
                ContextError::Corrupt {
                    file: StoreFile::Control,
                    ..
                }
            ),
            "{error}"
        );
        let mut after = store_files(&directory);
        after.remove(CONTROL_FILE_NAME);
        assert!(after == before, "the failed open changed a file");
    }
    std::fs::write(&control, &control_bytes).unwrap();
    let store = Store::open(&directory, StoreOptions::default()).unwrap();
    assert_eq!(store.head(), Some(hashes[1]));
    drop(store);
    // A creation cut short before its control file: headers only, created afresh.
    let fresh = temporary_directory("no-control-fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::write(fresh.join(PACK_FILE_NAME), &before[PACK_FILE_NAME][..16]).unwrap();
    std::fs::write(
        fresh.join(kestrel_context::INDEX_FILE_NAME),
        &before[kestrel_context::INDEX_FILE_NAME][..16],
    )
    .unwrap();
    let store = Store::open(&fresh, StoreOptions::default()).unwrap();
    assert_eq!(store.commit_count(), 0);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
    let _ = std::fs::remove_dir_all(&fresh);
}

/// Reopening after a crash says what it adopted and what it cut, and where: nothing for a store
/// closed cleanly; the commits beyond the checkpoint and the zeros written ahead for a crash
/// image; a torn object for a pack cut inside one.
#[test]
fn recovery_reports_what_it_adopted_and_cut() {
    use kestrel_context::TailStop;
    let directory = temporary_directory("recovery");
    let image = temporary_directory("recovery-image");
    closed_store(&directory, 1);
    let store = Store::open(&directory, StoreOptions::default()).unwrap();
    assert_eq!(store.recovery(), None);
    let checkpoint_length = store.pack_length_bytes();
    drop(store);
    let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
    let head = store.head().unwrap();
    let tree = block(&store, &store.checkout(&head).unwrap().unwrap(), 1);
    let first_end = {
        store.commit(&tree, &[head], &info(1)).unwrap();
        store.pack_length_bytes()
    };
    let head = store.head().unwrap();
    let tree = block(&store, &tree, 2);
    store.commit(&tree, &[head], &info(2)).unwrap();
    let end = store.pack_length_bytes();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::metadata(directory.join(PACK_FILE_NAME))
        .unwrap()
        .len()
        <= end
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no zeros written ahead"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    copy_store_files(&directory, &image);
    let crash_image = store_files(&image);
    let file_length = std::fs::metadata(image.join(PACK_FILE_NAME)).unwrap().len();
    store.close().unwrap();

    let recovered = Store::open(&image, StoreOptions::default()).unwrap();
    let recovery = recovered.recovery().expect("a recovery").clone();
    assert_eq!(recovery.checkpoint_pack_length_bytes, checkpoint_length);
    assert_eq!(recovery.commits_adopted, 2);
    assert_eq!(recovery.pack_length_bytes, end);
    assert_eq!(recovery.pack_file_length_bytes, file_length);
    assert_eq!(recovery.stop, Some(TailStop::Zeros { offset_bytes: end }));
    let text = recovery.to_string();
    assert!(
        text.contains(&format!(
            "cut {} byte(s) of the pack from offset {end}",
            file_length - end
        )),
        "{text}"
    );
    drop(recovered);
    // The crash image again, its pack cut inside the second commit's objects: one commit
    // adopted, a torn object or objects without a commit reported at or after its end.
    let _ = std::fs::remove_dir_all(&image);
    std::fs::create_dir_all(&image).unwrap();
    for (name, bytes) in &crash_image {
        let bytes = if name == PACK_FILE_NAME {
            &bytes[..first_end as usize + 1000]
        } else {
            &bytes[..]
        };
        std::fs::write(image.join(name), bytes).unwrap();
    }
    let store = Store::open(&image, StoreOptions::default()).unwrap();
    let recovery = store.recovery().expect("a recovery");
    assert_eq!(recovery.commits_adopted, 1);
    assert_eq!(recovery.pack_length_bytes, first_end);
    assert_eq!(recovery.pack_file_length_bytes, first_end + 1000);
    match &recovery.stop {
        Some(TailStop::TornObject { offset_bytes, .. }) => assert!(*offset_bytes >= first_end),
        Some(TailStop::NoCommit { offset_bytes }) => assert_eq!(*offset_bytes, first_end),
        other => panic!("unexpected stop {other:?}"),
    }
    assert_eq!(store.commit_count(), 2);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
    let _ = std::fs::remove_dir_all(&image);
}

/// Every kept commit reads back whole (every leaf, rebuilt into a tree whose hash is computed
/// from the contents up) and dropped commits are gone.
fn check_kept(store: &Store, kept: &[(ContextHash, ContextHash)], dropped: &[ContextHash]) {
    for (hash, tree_hash) in kept {
        let tree = store
            .checkout(hash)
            .unwrap()
            .unwrap_or_else(|| panic!("kept commit {hash} lost"));
        assert_eq!(rebuild_from_leaves(store, &tree).hash(), *tree_hash);
    }
    for hash in dropped {
        assert!(store.checkout(hash).unwrap().is_none());
    }
}

/// `gc` keeps the given commit and every later one, drops the older ones, gives whole dead pages
/// back to the file system, and the store goes on committing and reopens; a policy collects by
/// itself as commits go.
#[test]
fn gc_keeps_the_last_commits_and_frees_the_rest() {
    let directory = temporary_directory("gc");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut store = Store::open(&directory, options.clone()).unwrap();
    let mut tree = Tree::empty();
    let mut commits: Vec<(ContextHash, ContextHash)> = Vec::new();
    for level in 0..40 {
        tree = block(&store, &tree, level);
        let parents: Vec<_> = commits.last().map(|(hash, _)| *hash).into_iter().collect();
        commits.push((
            store.commit(&tree, &parents, &info(level)).unwrap(),
            tree.hash(),
        ));
    }
    store.checkpoint().unwrap();
    let disk_before = store.disk_bytes();
    store.gc(&commits[30].0).unwrap();
    // Commits go on beside the GC.
    for level in 40..43 {
        tree = block(&store, &tree, level);
        let parents = vec![commits.last().unwrap().0];
        commits.push((
            store.commit(&tree, &parents, &info(level)).unwrap(),
            tree.hash(),
        ));
    }
    let report = store.wait_for_gc().unwrap().expect("a GC report");
    assert_eq!(report.kept_commit, commits[30].0);
    assert_eq!(report.commits_dropped, 30);
    assert!(report.pack_bytes_punched > 0, "{report:?}");
    assert!(
        report.prefix_bytes > 0 && report.prefix_bytes < report.live_bytes,
        "{report:?}"
    );
    assert!(
        store.disk_bytes() < disk_before,
        "{} {disk_before}",
        store.disk_bytes()
    );
    let dropped: Vec<ContextHash> = commits[..30].iter().map(|(hash, _)| *hash).collect();
    check_kept(&store, &commits[30..], &dropped);
    assert_eq!(store.commit_count(), 13);
    store.close().unwrap();

    // Reopened: the same commits, and a policy that collects every 3 commits keeping 5.
    let mut store = Store::open(
        &directory,
        StoreOptions {
            gc: Some(kestrel_context::GcPolicy {
                keep_commits: 5,
                every_commits: 3,
            }),
            ..options.clone()
        },
    )
    .unwrap();
    assert_eq!(store.gc_history().0, 1);
    check_kept(&store, &commits[30..], &dropped);
    let mut tree = store.checkout(&commits.last().unwrap().0).unwrap().unwrap();
    for level in 43..60 {
        tree = block(&store, &tree, level);
        let parents = vec![commits.last().unwrap().0];
        commits.push((
            store.commit(&tree, &parents, &info(level)).unwrap(),
            tree.hash(),
        ));
    }
    let report = store.wait_for_gc().unwrap().expect("the policy collected");
    // How many policy GCs ran, and how far behind the head the last one started, depends on
    // how fast the GC thread runs beside the commits (a GC still running delays the next): the
    // invariant is that the last GC's kept commit and every later one stay, and no other.
    let (gc_count, _, _) = store.gc_history();
    assert!(gc_count >= 2, "{gc_count}");
    let kept_from = commits
        .iter()
        .position(|(hash, _)| *hash == report.kept_commit)
        .expect("the kept commit is one of the chain's");
    assert!(
        kept_from > 30,
        "the policy moved the kept commit forward: {kept_from}"
    );
    assert!(commits.len() - kept_from >= 5, "{kept_from}");
    let count = store.commit_count();
    assert_eq!(count, commits.len() - kept_from);
    let dropped: Vec<ContextHash> = commits[..kept_from].iter().map(|(hash, _)| *hash).collect();
    check_kept(&store, &commits[kept_from..], &dropped);
    store.close().unwrap();
    let store = Store::open(&directory, options).unwrap();
    assert_eq!(store.commit_count(), count);
    check_kept(&store, &commits[kept_from..], &dropped);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

/// `verify` passes on a sound store (every commit, after a GC too) and reports every flipped
/// byte of the pack, index or control file as a typed error naming a file and offset: none is
/// answered with a wrong hash or a panic.
#[test]
fn verify_reports_every_flipped_byte_with_file_and_offset() {
    use kestrel_context::{StoreFile, VerifyScope};
    let directory = temporary_directory("verify");
    let hashes = closed_store(&directory, 4);
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let store = Store::open_read_only(&directory, options.clone()).unwrap();
    let all = store.verify(VerifyScope::AllCommits).unwrap();
    assert_eq!(all.commits, 4);
    assert_eq!(all.regions, 4);
    let head = store.verify(VerifyScope::Head).unwrap();
    assert_eq!(head.commits, 1);
    assert!(
        head.objects > 300 && all.objects > head.objects,
        "{head:?} {all:?}"
    );
    drop(store);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut reported: std::collections::BTreeMap<String, u32> = Default::default();
    for (name, trials) in [
        (PACK_FILE_NAME, 150),
        (kestrel_context::INDEX_FILE_NAME, 40),
        (kestrel_context::CONTROL_FILE_NAME, 40),
    ] {
        let path = directory.join(name);
        let original = std::fs::read(&path).unwrap();
        for _ in 0..trials {
            let position = (next() % original.len() as u64) as usize;
            let mut bad = original.clone();
            bad[position] ^= 1 << (next() % 8);
            std::fs::write(&path, &bad).unwrap();
            let error = match Store::open_read_only(&directory, options.clone()) {
                Err(error) => error,
                Ok(store) => store
                    .verify(VerifyScope::AllCommits)
                    .err()
                    .unwrap_or_else(|| panic!("{name}: flip at {position} not reported")),
            };
            let ContextError::Corrupt {
                file, offset_bytes, ..
            } = &error
            else {
                panic!("{name}: flip at {position}: {error}")
            };
            // The file named is the one flipped, or (for a commit's record or object, whose
            // fault cannot always be told apart) its partner; the offset lies in that file.
            let partner_ok = match (name, file) {
                (n, StoreFile::Pack) if n == PACK_FILE_NAME => true,
                (n, StoreFile::Index) if n == kestrel_context::INDEX_FILE_NAME => true,
                (n, StoreFile::Control) if n == kestrel_context::CONTROL_FILE_NAME => true,
                (_, StoreFile::Index | StoreFile::Control | StoreFile::Pack) => true,
                (_, StoreFile::Trace | StoreFile::Prefix | StoreFile::Mapping) => false,
            };
            assert!(partner_ok, "{name}: flip at {position}: {error}");
            if format!("{file:?}") == "Control" {
                assert!(*offset_bytes <= 120, "{error}");
            }
            *reported.entry(format!("{name} -> {file:?}")).or_default() += 1;
        }
        std::fs::write(&path, &original).unwrap();
    }
    println!("{reported:?}");
    // A GC then verify: the kept commits check, regions after the boundary too.
    let mut store = Store::open(&directory, options).unwrap();
    store.gc(&hashes[2]).unwrap();
    store.wait_for_gc().unwrap();
    let report = store.verify(VerifyScope::AllCommits).unwrap();
    assert_eq!(report.commits, 2);
    store.close().unwrap();
    let _ = std::fs::remove_dir_all(&directory);
}

/// Every step of a GC, in order.
const GC_STEPS: [kestrel_context::GcStep; 6] = [
    kestrel_context::GcStep::Marked,
    kestrel_context::GcStep::Copying,
    kestrel_context::GcStep::Copied,
    kestrel_context::GcStep::Published,
    kestrel_context::GcStep::OldFilesRemoved,
    kestrel_context::GcStep::Punched,
];

/// Starts the crash test's writer process on `directory` (with a GC policy `gc`, if any); its
/// durable commits arrive on the returned receiver.
fn spawn_writer(
    directory: &Path,
    gc: Option<&str>,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<(u64, ContextHash)>,
    std::thread::JoinHandle<()>,
) {
    spawn_writer_aborting(directory, gc, None)
}

/// [`spawn_writer`] whose GCs abort the process at `abort_at`.
fn spawn_writer_aborting(
    directory: &Path,
    gc: Option<&str>,
    abort_at: Option<kestrel_context::GcStep>,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<(u64, ContextHash)>,
    std::thread::JoinHandle<()>,
) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "crash_writer_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_CHILD_VARIABLE, directory)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(gc) = gc {
        command.env(CRASH_CHILD_GC_VARIABLE, gc);
    }
    if let Some(step) = abort_at {
        command.env(CRASH_CHILD_ABORT_VARIABLE, format!("{step:?}"));
    }
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("durable ") {
                let mut parts = rest.split(' ');
                let level: u64 = parts.next().unwrap().parse().unwrap();
                let hash = ContextHash::try_from_text(parts.next().unwrap()).unwrap();
                if sender.send((level, hash)).is_err() {
                    break;
                }
            }
        }
    });
    (child, receiver, reader)
}

/// A writer that collects garbage every 2 commits keeping 3 is killed with SIGKILL at random
/// points (during commits, marks, publications and punching): every reopen recovers, keeps the
/// last 3 durable commits with their contents, and every commit it keeps verifies.
#[test]
fn killing_the_writer_during_gc_loses_no_kept_commit() {
    use kestrel_context::VerifyScope;
    const KEEP: usize = 3;
    let directory = temporary_directory("crash-gc");
    let rounds: u64 = std::env::var(CRASH_ROUNDS_VARIABLE)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(GC_CRASH_ROUNDS);
    let mut durable: Vec<(u64, ContextHash)> = Vec::new();
    let mut state = 0x5851_f42d_4c95_7f2du64;
    let mut collected = 0;
    for round in 0..rounds {
        let (mut child, receiver, reader) = spawn_writer(&directory, Some("3,2"));
        let first = receiver
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("child commits");
        durable.push(first);
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::thread::sleep(std::time::Duration::from_millis(state % 120));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        durable.extend(receiver.try_iter());
        let store = Store::open(&directory, StoreOptions::default())
            .unwrap_or_else(|error| panic!("round {round}: reopen failed: {error}"));
        // Levels are consecutive commits, so the last KEEP are those within KEEP - 1 levels of
        // the head (which may be past the last commit printed: a kill between a commit and its
        // line).
        let head_tree = store.checkout(&store.head().unwrap()).unwrap().unwrap();
        let head_level = u64::from_be_bytes(
            head_tree.find(&store, &["last"]).unwrap().unwrap()[..]
                .try_into()
                .unwrap(),
        );
        let last_durable = durable.last().unwrap().0;
        assert!(
            head_level >= last_durable,
            "round {round}: head {head_level} < {last_durable}"
        );
        for (level, hash) in durable
            .iter()
            .filter(|(level, _)| *level + KEEP as u64 > head_level)
        {
            let tree = store
                .checkout(hash)
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: durable commit {level} lost"));
            assert_eq!(
                &tree.find(&store, &["last"]).unwrap().unwrap()[..],
                &level.to_be_bytes()
            );
            assert_eq!(
                tree.find(&store, &key(*level, 5))
                    .unwrap()
                    .unwrap()
                    .to_vec(),
                value(*level, 5)
            );
        }
        let report = store
            .verify(VerifyScope::AllCommits)
            .unwrap_or_else(|error| panic!("round {round}: verify failed: {error}"));
        assert!(report.commits as usize >= KEEP.min(durable.len()));
        collected = store.gc_history().0;
        drop(store);
    }
    assert!(collected > 0, "no GC ran");
    let _ = std::fs::remove_dir_all(&directory);
}

/// The census counts every byte of the pack once (inline contents apart from their
/// directories), and irmin-pack's V2 encoding of the same objects holds no child hash but a
/// hash per object.
#[test]
fn census_counts_every_byte_of_the_pack_once() {
    let directory = temporary_directory("census");
    closed_store(&directory, 3);
    let store = Store::open_read_only(&directory, StoreOptions::default()).unwrap();
    let census = store.census().unwrap();
    let total = census.total();
    assert_eq!(total.bytes, store.pack_length_bytes() - 16);
    // Every object and every inline value is a record of its own in irmin-pack.
    let objects = total.count;
    assert!(total.irmin_bytes > 33 * objects, "{census:?}");
    assert_eq!(census.by_tag[5].count, 3);
    assert!(
        census.by_tag[0].count > 0 && census.by_tag[4].count > 0,
        "{census:?}"
    );
    assert!(census.child_hash_bytes > 0 && census.child_hash_bytes < total.bytes);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

/// Twelve blocks committed into a new store at `directory`, collected down to the last four and
/// closed; the options it was opened with.
fn collected_store(directory: &std::path::Path) -> StoreOptions {
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut store = Store::open(directory, options.clone()).unwrap();
    let mut tree = Tree::empty();
    let mut parents = Vec::new();
    for level in 0..12 {
        tree = block(&store, &tree, level);
        parents = vec![store.commit(&tree, &parents, &info(level)).unwrap()];
    }
    assert!(store.gc_keep_last(4).unwrap());
    store.wait_for_gc().unwrap();
    store.close().unwrap();
    options
}

/// On a collected store the census counts the prefix's live objects and the pack above the
/// boundary: every byte of both once.
#[test]
fn census_of_a_collected_store_counts_the_prefix_and_the_pack_above_the_boundary() {
    let directory = temporary_directory("census-gc");
    let options = collected_store(&directory);
    let store = Store::open_read_only(&directory, options).unwrap();
    let (generation, boundary, _) = store.gc_history();
    assert_eq!(generation, 1);
    let prefix_bytes = std::fs::metadata(directory.join("store.prefix.1"))
        .unwrap()
        .len();
    assert!(prefix_bytes > 0);
    let census = store.census().unwrap();
    assert_eq!(
        census.total().bytes,
        prefix_bytes + store.pack_length_bytes() - boundary,
        "{census:?}"
    );
    assert_eq!(census.by_tag[5].count, 4, "the 4 kept commits");
    assert!(census.inline_child_hash_bytes <= census.child_hash_bytes);
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

/// One directory named by more entries than a walk lets copies pile up in its frontier
/// (the walk folds equal copies once the frontier passes 65,536): the GC's mark and `verify`
/// still visit every object exactly once and agree on the count, and the mark's frontier stays
/// below the number of copies pushed.
#[test]
fn a_walk_folds_copies_of_a_shared_object() {
    use kestrel_context::VerifyScope;
    const NAMES: u64 = 70_000;
    let directory = temporary_directory("walk-fold");
    let options = StoreOptions {
        sync_mode: SyncMode::Never,
        ..StoreOptions::default()
    };
    let mut store = Store::open(&directory, options).unwrap();
    // One directory object, written once: every entry points to it by offset.
    let shared = Tree::empty().add(&store, &["leaf"], &[7u8; 200]).unwrap();
    let mut tree = Tree::empty();
    for index in 0..NAMES {
        tree = tree
            .add_tree(&store, &["shared", &index.to_string()], &shared)
            .unwrap();
    }
    let commit = store.commit(&tree, &[], &info(0)).unwrap();
    store.checkpoint().unwrap();
    let verified = store.verify(VerifyScope::AllCommits).unwrap();
    store.gc(&commit).unwrap();
    let report = store.wait_for_gc().unwrap().expect("a GC report");
    // The mark counts the commit object; verify counts it among the commits.
    assert_eq!(verified.commits, 1);
    assert_eq!(report.live_objects, verified.objects + 1, "{report:?}");
    assert!(
        report.mark_frontier_peak < NAMES,
        "{}",
        report.mark_frontier_peak
    );
    // The tree reads back whole.
    let reread = store.checkout(&commit).unwrap().unwrap();
    assert_eq!(reread.hash(), tree.hash());
    store.close().unwrap();
    let _ = std::fs::remove_dir_all(&directory);
}

/// Checks a store reopened after a crash: the last `keep` durable commits read back with their
/// contents, every kept commit verifies, and only the current generation's prefix files remain.
fn check_reopened_after_gc_crash(
    directory: &Path,
    durable: &[(u64, ContextHash)],
    keep: u64,
    context: &str,
) -> u64 {
    use kestrel_context::VerifyScope;
    let store = Store::open(directory, StoreOptions::default())
        .unwrap_or_else(|error| panic!("{context}: reopen failed: {error}"));
    let head_tree = store.checkout(&store.head().unwrap()).unwrap().unwrap();
    let head_level = u64::from_be_bytes(
        head_tree.find(&store, &["last"]).unwrap().unwrap()[..]
            .try_into()
            .unwrap(),
    );
    for (level, hash) in durable
        .iter()
        .filter(|(level, _)| *level + keep > head_level)
    {
        let tree = store
            .checkout(hash)
            .unwrap()
            .unwrap_or_else(|| panic!("{context}: durable commit {level} lost"));
        assert_eq!(
            tree.find(&store, &key(*level, 5))
                .unwrap()
                .unwrap()
                .to_vec(),
            value(*level, 5),
            "{context}"
        );
    }
    store
        .verify(VerifyScope::AllCommits)
        .unwrap_or_else(|error| panic!("{context}: verify failed: {error}"));
    let (gc_count, _, _) = store.gc_history();
    let mut strays: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| {
            name.starts_with(kestrel_context::store_constants::PREFIX_FILE_STEM)
                || name.starts_with(kestrel_context::store_constants::MAPPING_FILE_STEM)
        })
        .collect();
    strays.sort();
    let expected: Vec<String> = if gc_count == 0 {
        Vec::new()
    } else {
        vec![
            format!("store.mapping.{gc_count}"),
            format!("store.prefix.{gc_count}"),
        ]
    };
    assert_eq!(strays, expected, "{context}");
    gc_count
}

/// A writer collecting every 2 commits keeping 3 aborts (as a kill would) at each step of a GC
/// in turn: the mark done, the copy half done, the copy synced, the control file naming the new
/// prefix durable, the old prefix removed, the pack punched. Each reopen keeps every kept commit
/// whole and verified, with only the current prefix's files; then the store collects again.
#[test]
fn a_crash_at_each_gc_step_loses_no_kept_commit() {
    const KEEP: u64 = 3;
    for step in GC_STEPS {
        let directory = temporary_directory(&format!("crash-step-{step:?}"));
        let mut durable: Vec<(u64, ContextHash)> = Vec::new();
        // Twice: the first abort is in the store's first GC (no old prefix), the second in a
        // GC that replaces a prefix.
        for round in 0..2 {
            let (mut child, receiver, reader) =
                spawn_writer_aborting(&directory, Some("3,2"), Some(step));
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{step:?}: the writer never reached the step"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            };
            assert!(!status.success(), "{step:?}: the writer aborted");
            reader.join().unwrap();
            durable.extend(receiver.try_iter());
            let context = format!("{step:?} round {round}");
            let gc_count = check_reopened_after_gc_crash(&directory, &durable, KEEP, &context);
            let published = !matches!(
                step,
                kestrel_context::GcStep::Marked
                    | kestrel_context::GcStep::Copying
                    | kestrel_context::GcStep::Copied
            );
            assert_eq!(gc_count > 0, published || round > 0, "{context}");
            if round == 0 && !published {
                // Let one GC complete so that the next round's abort replaces a prefix.
                let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
                assert!(store.gc_keep_last(KEEP).unwrap());
                store.wait_for_gc().unwrap();
                store.close().unwrap();
                check_reopened_after_gc_crash(&directory, &durable, KEEP, &context);
            }
        }
        let _ = std::fs::remove_dir_all(&directory);
    }
}

/// After a GC, every byte flipped in the prefix file (where the live objects below the kept
/// commit now are) is reported by `verify` as a typed error: none is answered with a wrong hash.
#[test]
fn verify_reports_flipped_bytes_of_the_prefix() {
    use kestrel_context::{StoreFile, VerifyScope};
    let directory = temporary_directory("verify-prefix");
    let options = collected_store(&directory);
    let path = directory.join("store.prefix.1");
    let original = std::fs::read(&path).unwrap();
    assert!(!original.is_empty());
    let step = (original.len() / 64).max(1);
    for position in (0..original.len()).step_by(step) {
        let mut bad = original.clone();
        bad[position] ^= 0x08;
        std::fs::write(&path, &bad).unwrap();
        let store = Store::open_read_only(&directory, options.clone()).unwrap();
        // Named in the prefix file, at an offset of that file (the object holding the byte, a
        // field inside it, or the object whose hash it records), not at a pack offset.
        match store.verify(VerifyScope::AllCommits) {
            Err(ContextError::Corrupt {
                file: StoreFile::Prefix,
                path: named,
                offset_bytes,
                ..
            }) if named == path && offset_bytes < original.len() as u64 => {}
            other => panic!("flip at {position} of the prefix: {other:?}"),
        }
    }
    std::fs::write(&path, &original).unwrap();
    let store = Store::open_read_only(&directory, options).unwrap();
    store.verify(VerifyScope::AllCommits).unwrap();
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn a_name_longer_than_the_pack_allows_is_refused_before_anything_is_written() {
    let directory = temporary_directory("long-name");
    let mut store = Store::open(&directory, StoreOptions::default()).unwrap();
    let base = block(&store, &Tree::empty(), 0);
    let head = store.commit(&base, &[], &info(0)).unwrap();
    let pack_bytes = store.pack_length_bytes();
    let long = "n".repeat(kestrel_context::pack::NAME_MAX_BYTES + 1);
    let longest = "n".repeat(kestrel_context::pack::NAME_MAX_BYTES);
    // A new object deep in the tree (found by the walk that sorts new objects into levels), and
    // a subtree hashed before it was put in the tree (below which that walk stops).
    let deep = base
        .add(&store, &["data", "contracts", "deep", &long], b"v")
        .unwrap();
    let hashed = Tree::empty().add(&store, &["x", &long], b"v").unwrap();
    hashed.hash();
    let with_hashed = base.add_tree(&store, &["data", "hashed"], &hashed).unwrap();
    for tree in [&deep, &with_hashed] {
        match store.commit(tree, &[head], &info(1)) {
            Err(ContextError::TooLarge(limit)) => assert_eq!(limit, "NAME_MAX_BYTES"),
            other => panic!("expected TooLarge, got {other:?}"),
        }
        assert_eq!(store.pack_length_bytes(), pack_bytes);
    }
    // Nothing was written, so the store takes the next commit; a name of the limit is accepted.
    let accepted = base
        .add(&store, &["data", "contracts", "deep", &longest], b"v")
        .unwrap();
    let next = store.commit(&accepted, &[head], &info(1)).unwrap();
    store.close().unwrap();
    let store = Store::open(&directory, StoreOptions::default()).unwrap();
    let tree = store.checkout(&next).unwrap().unwrap();
    assert_eq!(
        tree.find(&store, &["data", "contracts", "deep", &longest])
            .unwrap()
            .as_deref(),
        Some(&b"v"[..])
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}
