//! Real Tezos clients, unmodified, against a node started in this process: the Taquito 25 script
//! in `tests/clients/` (installed by `.ci/run` with npm) reveals a new account, transfers tez,
//! originates the FA1.2 reference contract, calls its `transfer` and reads its storage and a
//! big-map value, and so does the pytezos 3.20 script beside it (installed by `.ci/run` with pip);
//! this test checks what each read.

use kestrel_node::{accounts, server, Chain, ChainConfig};
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The clients' directory, with their `package.json`.
fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// Starts a node on a free loopback port, its store in `directory`; returns its URL. The
/// server's thread lives as long as the test process.
fn start_node(directory: &Path) -> String {
    let _ = std::fs::remove_dir_all(directory);
    let chain = Chain::open(ChainConfig {
        directory,
        accounts: accounts(0),
        balance_mutez: 4_000_000_000_000,
        genesis_seconds: 1_700_000_000,
    })
    .expect("a new chain");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    std::thread::spawn(move || server::serve(listener, chain, Box::new(|_, _| {})));
    url
}

/// Whether the npm packages are installed; under CI they must be.
fn taquito_installed(test: &str) -> bool {
    let installed = clients_dir().join("node_modules/@taquito/taquito").exists();
    if !installed {
        let message = format!("{test}: skipped, run `npm ci` in crates/node/tests/clients");
        assert!(!kestrel_testdata::running_in_ci(), "{message}");
        eprintln!("{message}");
    }
    installed
}

/// Whether pytezos is importable; under CI it must be.
fn pytezos_installed(test: &str) -> bool {
    let installed = Command::new("python3")
        .args(["-c", "import pytezos"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        let message = format!("{test}: skipped, pytezos is not installed (see .ci/run)");
        assert!(!kestrel_testdata::running_in_ci(), "{message}");
        eprintln!("{message}");
    }
    installed
}

/// Runs `program script url fa12` in the clients' directory against a new node; returns what
/// the script printed.
fn run_client(program: &str, script: &str, fa12: &Path) -> Value {
    let directory =
        std::env::temp_dir().join(format!("kestrel-node-test-{script}-{}", std::process::id()));
    let url = start_node(&directory);
    let output = Command::new(program)
        .arg(script)
        .arg(&url)
        .arg(fa12)
        .current_dir(clients_dir())
        .output()
        .unwrap_or_else(|error| panic!("{program} does not run: {error}"));
    // The server keeps its store open; its files go when the process ends.
    let _ = std::fs::remove_dir_all(&directory);
    assert!(
        output.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the script prints JSON")
}

/// What both clients must have read.
fn check(result: &Value) {
    assert_eq!(result["funding_status"], "applied", "{result}");
    assert_eq!(result["revealed_before"], false, "{result}");
    assert_eq!(result["revealed_after"], true, "{result}");
    // 100 tez in, 1 tez out, and the reveal's and the transfer's fees (each under 0.1 tez).
    let fresh_balance: u64 = result["fresh_balance"]
        .as_str()
        .and_then(|text| text.parse().ok())
        .expect("a balance");
    assert!(
        (98_800_000..99_000_000).contains(&fresh_balance),
        "{result}"
    );
    assert!(
        result["contract"]
            .as_str()
            .is_some_and(|address| address.starts_with("KT1")),
        "{result}"
    );
    assert_eq!(result["call_status"], "applied", "{result}");
    assert_eq!(result["total_supply"], "1000", "{result}");
    assert_eq!(result["fresh_tokens"], "30", "{result}");
    assert_eq!(result["admin_tokens"], "970", "{result}");
    // Genesis and two empty blocks, then one block per operation: funding, reveal, payment,
    // origination, call.
    assert_eq!(result["head_level"], 7, "{result}");
}

#[test]
fn taquito_reveals_transfers_originates_and_calls() {
    let test = "taquito_reveals_transfers_originates_and_calls";
    let Some(fa12) = kestrel_testdata::require("michelson/mini_scenarios/fa12_reference.tz", test)
    else {
        return;
    };
    if taquito_installed(test) {
        check(&run_client("node", "taquito.mjs", &fa12));
    }
}

#[test]
fn pytezos_reveals_transfers_originates_and_calls() {
    let test = "pytezos_reveals_transfers_originates_and_calls";
    let Some(fa12) = kestrel_testdata::require("michelson/mini_scenarios/fa12_reference.tz", test)
    else {
        return;
    };
    if pytezos_installed(test) {
        check(&run_client("python3", "pytezos_client.py", &fa12));
    }
}
