//! `kestrel node bench`: a short run reports each measurement in its JSON shape (the figures
//! themselves are the benchmark's, never asserted), and a load test prints its samples.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::process::Command;

fn bench(arguments: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["node", "bench", "--json"])
        .args(arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_short_bench_reports_start_throughput_and_memory() {
    let report: Value = serde_json::from_str(&bench(&[
        "--clients",
        "1,6",
        "--runs",
        "1",
        "--transfers",
        "3",
        "--memory-operations",
        "30",
    ]))
    .unwrap();
    assert!(report["start_to_first_answer_ms_median"].as_f64().unwrap() > 0.0);
    let throughput = report["throughput"].as_array().unwrap();
    let clients: Vec<u64> = throughput
        .iter()
        .map(|entry| entry["clients"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [1, 6]);
    for entry in throughput {
        assert_eq!(entry["transfers_per_second"].as_array().unwrap().len(), 1);
        assert!(entry["transfers_per_second_median"].as_f64().unwrap() > 0.0);
    }
    assert!(report["memory"]["operations"].as_u64().unwrap() >= 30);
    assert_eq!(report["memory"]["clients"], 6);
    assert!(report["memory"]["rss_kib_after"].as_u64().unwrap() > 0);
    assert!(report["memory"]["head_level"].as_u64().unwrap() > 2);
}

#[test]
fn a_load_test_prints_a_sample_per_period() {
    let output = bench(&["--clients", "2", "--duration", "2", "--sample", "1"]);
    let samples: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let seconds: Vec<u64> = samples
        .iter()
        .map(|sample| sample["seconds"].as_u64().unwrap())
        .collect();
    assert_eq!(seconds, [1, 2]);
    assert!(samples[1]["operations"].as_u64().unwrap() > 0);
    assert!(samples[1]["head_level"].as_u64().unwrap() > 2);
}
