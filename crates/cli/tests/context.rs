//! `kestrel context ...` end to end: hashes of files and directories, commit hashes, a short
//! replay, and a synthetic trace written then replayed.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

mod support;

/// Runs `kestrel` with `arguments` and an empty stdin: (exit code, stdout, stderr).
fn kestrel(arguments: &[&str]) -> (i32, String, String) {
    support::run_kestrel(arguments, "")
}

fn temporary(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("kestrel-cli-context-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    path
}

#[test]
fn hash_of_a_file_and_a_directory() {
    let directory = temporary("hash");
    std::fs::create_dir_all(directory.join("sub")).unwrap();
    std::fs::write(directory.join("a"), [1u8]).unwrap();
    // A file holding the single byte 1 hashes as contents; the directory {a: "\001"} hashes as
    // the published vector d49a5332...; adding an empty subdirectory changes nothing.
    let (code, stdout, _) = kestrel(&["context", "hash", directory.join("a").to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("407f958990678e2e9fb06758bc6520dae46d838d39948a4c51a5b19bd079293d"),
        "{stdout}"
    );
    let (code, stdout, _) = kestrel(&["context", "hash", "--json", directory.to_str().unwrap()]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json["hex"],
        "d49a53323107f2ae40b01eaa4e9bec4d02801daf60bab82dc2529e40d40fa917"
    );
    assert_eq!(json["kind"], "tree");
    assert!(json["hash"].as_str().unwrap().starts_with("Co"));
    let (code, _, stderr) = kestrel(&[
        "context",
        "hash",
        directory.join("missing").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error:"), "{stderr}");
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn commit_hash_matches_the_published_vector() {
    let (code, stdout, _) = kestrel(&[
        "context",
        "commit-hash",
        "--tree",
        "0d78b30e959c2a079e8ccb4ca19d428c95d29b2f02a35c1c58ef9c8972bc26aa",
        "--date",
        "0",
        "--author",
        "Tezedge",
        "--message",
        "persist changes",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("e6de3fd37b1dc2b3c9d072ea67c2c5be1b55eeed9f5377b2bfc1228e6f9cb69b"),
        "{stdout}"
    );
    let (code, _, stderr) = kestrel(&[
        "context",
        "commit-hash",
        "--tree",
        "nope",
        "--date",
        "0",
        "--author",
        "a",
        "--message",
        "m",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("--tree"), "{stderr}");
    let (code, _, _) = kestrel(&["context", "commit-hash", "--tree"]);
    assert_eq!(code, 2);
}

#[test]
fn replay_and_trace_round_trip() {
    let store = temporary("replay-store");
    let (code, stdout, _) = kestrel(&[
        "context",
        "replay",
        "--blocks",
        "5",
        "--ops-per-block",
        "50",
        "--initial-contracts",
        "300",
        "--json",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["blocks"], 5);
    assert!(report["block_ms_mean"].as_f64().unwrap() > 0.0);
    assert!(report["disk_bytes"].as_u64().unwrap() > 0);
    // The same workload as a trace replays to the same head.
    let trace = temporary("trace").with_extension("repr");
    let (code, _, _) = kestrel(&[
        "context",
        "replay",
        "--blocks",
        "5",
        "--ops-per-block",
        "50",
        "--initial-contracts",
        "300",
        "--write-trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let (code, stdout, stderr) = kestrel(&[
        "context",
        "replay",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let replayed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(replayed["commits"], 6);
    assert_eq!(replayed["read_mismatches"], 0);
    assert_eq!(replayed["head"], report["head"]);
    // Neither replay adds to a store that holds commits (`--help`: empty or absent), and the
    // store is left as it was.
    let pack = std::fs::read(store.join("store.pack")).unwrap();
    for extra in [
        &["--trace", trace.to_str().unwrap()][..],
        &["--blocks", "1"][..],
    ] {
        let mut arguments = vec!["context", "replay", "--store", store.to_str().unwrap()];
        arguments.extend_from_slice(extra);
        let (code, _, stderr) = kestrel(&arguments);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("not empty"), "{stderr}");
    }
    assert!(std::fs::read(store.join("store.pack")).unwrap() == pack);
    let _ = std::fs::remove_dir_all(&store);
    let _ = std::fs::remove_file(&trace);
}

/// `gc`, `verify` and `info` on a replayed store: the GC keeps the last commits, `verify`
/// passes, then reports a flipped pack byte with its file and offset (exit code 1).
#[test]
fn gc_verify_and_info() {
    let store = temporary("gc-store");
    let path = store.to_str().unwrap();
    let (code, _, stderr) = kestrel(&[
        "context",
        "replay",
        "--blocks",
        "6",
        "--ops-per-block",
        "50",
        "--initial-contracts",
        "300",
        "--store",
        path,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = kestrel(&["context", "info", "--json", "--census", "--store", path]);
    assert_eq!(code, 0);
    let info: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(info["commits"], 7);
    assert_eq!(info["gc_count"], 0);
    assert!(info["census"]["total_irmin_v2_bytes"].as_u64().unwrap() > 0);
    let (code, stdout, stderr) =
        kestrel(&["context", "gc", "--json", "--keep", "2", "--store", path]);
    assert_eq!(code, 0, "{stderr}");
    let gc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(gc["collected"], true);
    assert_eq!(gc["commits_kept"], 2);
    assert_eq!(gc["gc"]["commits_dropped"], 5);
    let (code, stdout, _) = kestrel(&["context", "info", "--json", "--store", path]);
    assert_eq!(code, 0);
    let info: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(info["commits"], 2);
    assert_eq!(info["gc_count"], 1);
    // The live objects below the kept commit moved into the first generation's prefix.
    assert!(info["prefix_file_bytes"].as_u64().unwrap() > 0, "{info}");
    assert!(store.join("store.prefix.1").exists() && store.join("store.mapping.1").exists());
    let (code, stdout, _) = kestrel(&[
        "context",
        "verify",
        "--all-commits",
        "--json",
        "--store",
        path,
    ]);
    assert_eq!(code, 0, "{stdout}");
    let verified: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(verified["ok"], true);
    assert_eq!(verified["commits"], 2);
    // A flipped byte in the last commit's region: reported with the pack file and an offset.
    let pack_path = store.join("store.pack");
    let mut pack = std::fs::read(&pack_path).unwrap();
    let position = pack.len() - 200;
    pack[position] ^= 0x10;
    std::fs::write(&pack_path, &pack).unwrap();
    let (code, stdout, _) = kestrel(&[
        "context",
        "verify",
        "--all-commits",
        "--json",
        "--store",
        path,
    ]);
    assert_eq!(code, 1, "{stdout}");
    let failed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["file"], "pack file");
    assert!(failed["offset"].as_u64().unwrap() <= position as u64);
    let _ = std::fs::remove_dir_all(&store);
}

/// A replay into the default temporary store, ended by SIGINT or SIGTERM, leaves nothing in the
/// temporary directory and exits as the signal's number says (130, 143); genesis, seconds
/// before the first block, says what it is doing before anything else.
#[test]
fn an_interrupted_replay_removes_its_temporary_store() {
    let tmpdir = temporary("tmpdir");
    std::fs::create_dir_all(&tmpdir).unwrap();
    for (signal, expected_code) in [("INT", 130), ("TERM", 143)] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args(["context", "replay", "--blocks", "100000000"])
            .args(["--ops-per-block", "50", "--initial-contracts", "300"])
            .env("TMPDIR", &tmpdir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut first_line = String::new();
        std::io::BufRead::read_line(&mut stderr, &mut first_line).unwrap();
        // Blocks are being written: the store exists (the progress line of a block came).
        let mut second_line = String::new();
        std::io::BufRead::read_line(&mut stderr, &mut second_line).unwrap();
        let stored = std::fs::read_dir(&tmpdir).unwrap().count();
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        // Keep reading stderr so the child never blocks on a full pipe while it exits.
        std::io::copy(&mut stderr, &mut std::io::sink()).unwrap();
        let status = child.wait().unwrap();
        let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().flatten().collect();
        assert!(
            first_line.starts_with("genesis: 300 contracts"),
            "{first_line}"
        );
        assert_eq!(stored, 1, "{signal}: the temporary store was never made");
        assert_eq!(status.code(), Some(expected_code), "{signal}");
        assert!(left.is_empty(), "{signal}: left behind {left:?}");
    }
    let _ = std::fs::remove_dir_all(&tmpdir);
}

/// `-` stands for standard input (standard output for `--write-trace`) wherever a context verb
/// takes a file: a trace written to standard output and read from standard input replays to the
/// head of the same workload.
#[test]
fn dash_is_standard_input_or_output_for_file_arguments() {
    let (code, stdout, stderr) = support::run_kestrel(&["context", "hash", "--json", "-"], "\u{1}");
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json["hex"],
        "407f958990678e2e9fb06758bc6520dae46d838d39948a4c51a5b19bd079293d"
    );
    let workload = [
        "--blocks",
        "3",
        "--ops-per-block",
        "20",
        "--initial-contracts",
        "100",
    ];
    let mut arguments = vec!["context", "replay", "--write-trace", "-"];
    arguments.extend_from_slice(&workload);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(&arguments)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stdout.starts_with(b"IrmRepBT"),
        "not a trace on stdout"
    );
    // The trace is binary: hand it over as bytes.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["context", "replay", "--trace", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &output.stdout).unwrap();
    let replayed = child.wait_with_output().unwrap();
    assert_eq!(replayed.status.code(), Some(0));
    let replayed: serde_json::Value = serde_json::from_slice(&replayed.stdout).unwrap();
    let mut arguments = vec!["context", "replay", "--json"];
    arguments.extend_from_slice(&workload);
    let (code, stdout, _) = kestrel(&arguments);
    assert_eq!(code, 0);
    let direct: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(replayed["head"], direct["head"]);
    assert_eq!(replayed["read_mismatches"], 0);
}
