//! The object cache's policies and the release of the retained tree, end to end: whatever the
//! policy, budget and retention, every commit reads back exactly what the model (a `BTreeMap`
//! per commit) holds, and hashes as a tree rebuilt from those values. Small budgets and retention
//! limits make evictions, takes for update and releases (with their leaves moved into the cache)
//! happen every few blocks.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::cache::CachePolicy;
use kestrel_context::{CommitInfo, ContextHash, InMemory, Store, StoreOptions, SyncMode, Tree};
use std::collections::BTreeMap;

fn commit_info(level: u64) -> CommitInfo {
    CommitInfo {
        date_seconds: level as i64,
        author: "test".into(),
        message: format!("level {level}"),
    }
}
use std::path::PathBuf;

/// Commits 2,000 contracts (`contracts/cNNNNN/balance`) as the first commit; returns its hash.
fn commit_contracts(store: &mut Store) -> ContextHash {
    let mut tree = Tree::empty();
    for entry in 0..2000u64 {
        let key = ["contracts", &format!("c{entry:05}"), "balance"];
        tree.add_in_place(&*store, &key, &entry.to_be_bytes())
            .unwrap();
    }
    store.commit(&tree, &[], &commit_info(0)).unwrap()
}

fn temporary_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "kestrel-context-cache-test-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

type Model = BTreeMap<[String; 3], Vec<u8>>;

/// Block `level`'s changes: adds and removals spread over a 2,000-entry directory (an inode
/// tree) and a few small ones, skewed so that some directories change again soon.
fn changes(level: u64) -> Vec<([String; 3], Option<Vec<u8>>)> {
    (0..40u64)
        .map(|index| {
            let mixed = (level * 40 + index).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let entry = if index % 4 == 0 {
                mixed % 20
            } else {
                mixed % 2000
            };
            let key = [
                "contracts".to_string(),
                format!("c{entry:05}"),
                if mixed.is_multiple_of(3) {
                    "counter"
                } else {
                    "balance"
                }
                .to_string(),
            ];
            let value = (mixed >> 20 & 0xff != 7).then(|| {
                let length = 4 + (mixed >> 40) as usize % 50;
                vec![(level + index) as u8; length]
            });
            (key, value)
        })
        .collect()
}

fn rebuilt_hash(model: &Model) -> ContextHash {
    let mut tree = Tree::empty();
    for (key, value) in model {
        tree = tree.add(&InMemory, key, value).unwrap();
    }
    tree.hash()
}

fn check(
    policy: CachePolicy,
    budget_bytes: usize,
    retained_bytes: u64,
    released_leaves: bool,
    unified: bool,
) {
    let name = format!("{policy:?}-{budget_bytes}-{retained_bytes}-{released_leaves}-{unified}")
        .replace([' ', '{', '}', ':'], "");
    let directory = temporary_directory(&name);
    let mut store = Store::open(
        &directory,
        StoreOptions {
            sync_mode: SyncMode::Never,
            cache_budget_bytes: budget_bytes,
            cache_policy: policy,
            retained_written_bytes_max: Some(retained_bytes),
            cache_released_leaves: released_leaves,
            cache_budget_includes_retained: unified,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let mut model = Model::new();
    let mut tree = Tree::empty();
    for entry in 0..2000u64 {
        let key = [
            "contracts".to_string(),
            format!("c{entry:05}"),
            "balance".to_string(),
        ];
        let value = entry.to_be_bytes().to_vec();
        tree.add_in_place(&store, &key, &value).unwrap();
        model.insert(key, value);
    }
    let mut head = store.commit(&tree, &[], &commit_info(0)).unwrap();
    drop(tree);
    let mut history = vec![(head, model.clone())];
    for level in 1..=60u64 {
        let mut tree = store.checkout_for_update(&head).unwrap().unwrap();
        for (key, value) in changes(level) {
            match value {
                Some(value) => {
                    tree.add_in_place(&store, &key, &value).unwrap();
                    model.insert(key, value);
                }
                None => {
                    tree.remove_in_place(&store, &key).unwrap();
                    model.remove(&key);
                }
            }
        }
        let info = commit_info(level);
        head = store.commit(&tree, &[head], &info).unwrap();
        drop(tree);
        history.push((head, model.clone()));
        // An older commit read now and then: its objects pass through the same cache.
        if level % 15 == 0 {
            let (old_head, old_model) = &history[(level / 2) as usize];
            let old = store.checkout(old_head).unwrap().unwrap();
            for (key, value) in old_model.iter().step_by(37) {
                assert_eq!(old.find(&store, key).unwrap().as_deref(), Some(&value[..]));
            }
        }
    }
    assert!(
        store.statistics().objects_read > 0,
        "{name}: nothing was evicted or released"
    );
    assert_eq!(
        store.statistics().released_leaves_cached > 0,
        released_leaves,
        "{name}: released leaves"
    );
    // Every commit reads back its model and hashes as a tree rebuilt from it.
    for (hash, expected) in history.iter().step_by(7).chain(history.last()) {
        let tree = store.checkout(hash).unwrap().unwrap();
        for (key, value) in expected {
            assert_eq!(
                tree.find(&store, key).unwrap().as_deref(),
                Some(&value[..]),
                "{name}"
            );
        }
        assert_eq!(tree.hash(), rebuilt_hash(expected), "{name}");
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn every_policy_reads_back_every_commit() {
    for policy in [
        CachePolicy::TwoGenerations,
        CachePolicy::Lru,
        CachePolicy::Clock,
        CachePolicy::S3Fifo { small_percent: 10 },
    ] {
        for (budget_bytes, retained_bytes, released_leaves, unified) in [
            (64 << 10, 0, false, false),
            (256 << 10, 20 << 10, true, false),
            (1 << 20, 60 << 10, true, true),
            (1 << 20, 1 << 20, false, false),
            (512 << 10, 300 << 10, false, true),
        ] {
            check(
                policy,
                budget_bytes,
                retained_bytes,
                released_leaves,
                unified,
            );
        }
    }
}

#[test]
fn released_leaves_are_served_from_the_cache() {
    // With the leaves of each released tree moved into a cache large enough to hold them, the
    // next blocks read fewer objects from the pack than when they are dropped.
    let objects_read = |released_leaves: bool| {
        let directory = temporary_directory(&format!("leaves-{released_leaves}"));
        let mut store = Store::open(
            &directory,
            StoreOptions {
                sync_mode: SyncMode::Never,
                cache_budget_bytes: 64 << 20,
                cache_policy: CachePolicy::Clock,
                retained_written_bytes_max: Some(0),
                cache_released_leaves: released_leaves,
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let mut head = commit_contracts(&mut store);
        let start = store.statistics().objects_read;
        for level in 1..=20u64 {
            let mut tree = store.checkout_for_update(&head).unwrap().unwrap();
            for (key, value) in changes(level) {
                tree.add_in_place(&store, &key, &value.unwrap_or_default())
                    .unwrap();
            }
            let info = commit_info(level);
            head = store.commit(&tree, &[head], &info).unwrap();
        }
        let read = store.statistics().objects_read - start;
        drop(store);
        let _ = std::fs::remove_dir_all(&directory);
        read
    };
    let dropped = objects_read(false);
    let kept = objects_read(true);
    assert!(kept < dropped, "kept {kept}, dropped {dropped}");
}

#[test]
fn trace_format_document_matches_the_code() {
    use kestrel_context::cache::{TraceEvent, TRACE_RECORD_BYTES};
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats/cache-trace.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("<!-- constants").expect("constants marker");
    let documented: BTreeMap<String, String> = text[start..]
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells.len() == 4 && cells[1] != "name" && !cells[1].starts_with("---"))
                .then(|| (cells[1].to_owned(), cells[2].to_owned()))
        })
        .collect();
    let mut in_code: BTreeMap<String, String> = [
        TraceEvent::Hit,
        TraceEvent::MissInserted,
        TraceEvent::TakeHit,
        TraceEvent::TakeMiss,
        TraceEvent::Commit,
        TraceEvent::InsertWritten,
    ]
    .iter()
    .map(|event| (format!("{event:?}"), (*event as u8).to_string()))
    .collect();
    in_code.insert(
        "TRACE_RECORD_BYTES".to_owned(),
        TRACE_RECORD_BYTES.to_string(),
    );
    assert_eq!(documented, in_code);
}

#[test]
fn the_access_trace_counts_what_the_statistics_count() {
    use kestrel_context::cache::{decode_trace_record, TraceEvent, TRACE_RECORD_BYTES};
    let directory = temporary_directory("trace");
    std::fs::create_dir_all(&directory).unwrap();
    let trace_path = directory.join("cache.trace");
    let commits = 12u64;
    let statistics = {
        let mut store = Store::open(
            &directory.join("store"),
            StoreOptions {
                sync_mode: SyncMode::Never,
                cache_budget_bytes: 128 << 10,
                retained_written_bytes_max: Some(0),
                cache_trace: Some(trace_path.clone()),
                ..StoreOptions::default()
            },
        )
        .unwrap();
        let mut head = commit_contracts(&mut store);
        for level in 1..commits {
            let mut tree = store.checkout_for_update(&head).unwrap().unwrap();
            for (key, value) in changes(level) {
                tree.add_in_place(&store, &key, &value.unwrap_or_default())
                    .unwrap();
            }
            head = store.commit(&tree, &[head], &commit_info(level)).unwrap();
        }
        let statistics = store.statistics();
        store.close().unwrap();
        statistics
    };
    let bytes = std::fs::read(&trace_path).unwrap();
    assert_eq!(bytes.len() % TRACE_RECORD_BYTES, 0);
    let mut counts = BTreeMap::new();
    for record in bytes.chunks_exact(TRACE_RECORD_BYTES) {
        let (_, _, event) = decode_trace_record(record.try_into().unwrap()).unwrap();
        *counts.entry(format!("{event:?}")).or_insert(0u64) += 1;
    }
    let count = |event: TraceEvent| counts.get(&format!("{event:?}")).copied().unwrap_or(0);
    assert_eq!(count(TraceEvent::Commit), commits);
    assert_eq!(
        count(TraceEvent::Hit) + count(TraceEvent::TakeHit),
        statistics.cache_hits
    );
    // Objects read from the pack: node misses, plus commit records (one per checkout of a
    // commit that is not retained) and large contents, which do not go through the cache.
    let misses = count(TraceEvent::MissInserted) + count(TraceEvent::TakeMiss);
    let commit_records =
        statistics.objects_read_by_tag[usize::from(kestrel_context::pack::TAG_COMMIT)];
    let contents = statistics.objects_read_by_tag[usize::from(kestrel_context::pack::TAG_CONTENTS)];
    assert!(misses > 0, "nothing missed");
    assert_eq!(misses + commit_records + contents, statistics.objects_read);
    let _ = std::fs::remove_dir_all(&directory);
}
