//! Irmin's replayable trace format: rows round-trip, a synthetic trace replays to exactly the
//! commits of the direct replay, and bad traces give positioned errors.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::{ContextError, Store, StoreOptions, SyncMode};
use kestrel_context_replay::trace::{
    replay_trace, write_synthetic_trace, ReadKind, Scoped, TraceReader, TraceRow, TraceWriter,
};
use kestrel_context_replay::workload::{replay, ReplayOptions};
use std::path::PathBuf;

fn temporary_directory(name: &str) -> PathBuf {
    let directory =
        std::env::temp_dir().join(format!("kestrel-trace-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

fn rows() -> Vec<TraceRow> {
    let context = |value, keep| Scoped { value, keep };
    vec![
        TraceRow::Add {
            key: vec![b"a".to_vec(), b"b".to_vec()],
            value: vec![1, 2, 3],
            input: context(0, false),
            output: context(1, true),
        },
        TraceRow::Read {
            kind: ReadKind::Find,
            key: vec![b"a".to_vec()],
            found: false,
            context: context(1, true),
        },
        TraceRow::Read {
            kind: ReadKind::Mem,
            key: vec![],
            found: true,
            context: context(-5, true),
        },
        TraceRow::Read {
            kind: ReadKind::MemTree,
            key: vec![b"x".to_vec()],
            found: true,
            context: context(1, true),
        },
        TraceRow::Copy {
            from: vec![b"a".to_vec()],
            to: vec![b"c".to_vec()],
            input: context(1, false),
            output: context(2, true),
        },
        TraceRow::Remove {
            key: vec![b"a".to_vec()],
            input: context(2, false),
            output: context(3, true),
        },
        TraceRow::Commit {
            hash: Scoped {
                value: b"h0".to_vec(),
                keep: true,
            },
            date_seconds: -1,
            message: b"m".to_vec(),
            parents: vec![Scoped {
                value: b"p".to_vec(),
                keep: false,
            }],
            input: context(3, false),
        },
        TraceRow::Checkout {
            hash: Scoped {
                value: b"h0".to_vec(),
                keep: false,
            },
            context: context(4, true),
        },
    ]
}

#[test]
fn rows_round_trip() {
    let mut writer = TraceWriter::try_new(Vec::new()).unwrap();
    for row in rows() {
        writer.write_row(&row).unwrap();
    }
    let bytes = writer.finish().unwrap();
    assert_eq!(&bytes[..8], b"IrmRepBT");
    assert_eq!(&bytes[8..13], &[0, 0, 0, 0, 0]);
    let mut reader = TraceReader::try_new(&bytes[..], "memory".into()).unwrap();
    let mut read = Vec::new();
    while let Some(row) = reader.next_row().unwrap() {
        read.push(row);
    }
    assert_eq!(read, rows());
    // Every truncation is an error naming an offset, or a clean shorter trace; never a panic.
    for length in 0..bytes.len() {
        match TraceReader::try_new(&bytes[..length], "memory".into()) {
            Err(ContextError::Corrupt { .. }) => {}
            Err(other) => panic!("{other}"),
            Ok(mut reader) => loop {
                match reader.next_row() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(ContextError::Corrupt { .. }) => break,
                    Err(other) => panic!("{other}"),
                }
            },
        }
    }
}

#[test]
fn bad_magic_and_tags_are_positioned_errors() {
    let error = TraceReader::try_new(&b"IrmRepXX\0\0\0\0\0"[..], "t".into())
        .err()
        .unwrap();
    assert!(error.to_string().contains("offset 0"), "{error}");
    let mut bytes = b"IrmRepBT\0\0\0\0\0".to_vec();
    bytes.extend_from_slice(&[1, 9]);
    let mut reader = TraceReader::try_new(&bytes[..], "t".into()).unwrap();
    let error = reader.next_row().err().unwrap();
    assert!(error.to_string().contains("offset 14"), "{error}");
}

#[test]
fn synthetic_trace_replays_to_the_same_commits() {
    let blocks = 12;
    let options = ReplayOptions {
        blocks,
        operations_per_block: 200,
        seed: 9,
        initial_contracts: 1500,
        store_options: StoreOptions {
            sync_mode: SyncMode::Checkpoints,
            ..StoreOptions::default()
        },
        time_limit: None,
        memory_sample_interval_blocks: None,
    };
    let direct_directory = temporary_directory("direct");
    let direct = replay(&direct_directory, &options, |_| {}).unwrap();

    let mut writer = TraceWriter::try_new(Vec::new()).unwrap();
    write_synthetic_trace(&mut writer, 9, 1500, blocks, 200).unwrap();
    let bytes = writer.finish().unwrap();
    let trace_directory = temporary_directory("trace");
    let mut store = Store::open(&trace_directory, options.store_options.clone()).unwrap();
    let mut reader = TraceReader::try_new(&bytes[..], "synthetic".into()).unwrap();
    let report = replay_trace(&mut store, &mut reader, |_| {}).unwrap();
    assert_eq!(report.commits, blocks + 1);
    assert_eq!(report.read_mismatches, 0);
    assert_eq!(report.head, direct.head);
    let _ = std::fs::remove_dir_all(&direct_directory);
    let _ = std::fs::remove_dir_all(&trace_directory);
}
