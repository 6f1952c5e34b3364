//! Taquito 25, unmodified, driving the `kestrel_*` methods of a node started in this process
//! (`tests/clients/kestrel_methods.mjs`, installed by `.ci/run` with npm): snapshot, a transfer
//! confirmed, revert and the balance back, mining and a set timestamp.

mod support;

use kestrel_node::server;
use serde_json::Value;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

#[test]
fn taquito_snapshots_transfers_and_reverts() {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    if !clients.join("node_modules/@taquito/taquito").exists() {
        let message = "taquito_snapshots_transfers_and_reverts: skipped, run `npm ci` in \
                       crates/node/tests/clients";
        assert!(!kestrel_testdata::running_in_ci(), "{message}");
        eprintln!("{message}");
        return;
    }
    let scratch = support::Scratch::new("kestrel-taquito");
    let chain = support::new_chain_in(&scratch);
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    std::thread::spawn(move || server::serve(listener, chain, Box::new(|_, _| {})));

    let output = Command::new("node")
        .arg("kestrel_methods.mjs")
        .arg(&url)
        .current_dir(&clients)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "kestrel_methods.mjs failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    let mutez = |name: &str| -> u64 {
        result[name]
            .as_str()
            .and_then(|text| text.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {result}"))
    };
    assert_eq!(result["transfer_status"], "applied", "{result}");
    assert_eq!(mutez("after_transfer"), mutez("before") + 5_000_000);
    assert_eq!(result["revert"]["reverted"], true, "{result}");
    assert_eq!(result["revert"]["level"], 2, "{result}");
    assert_eq!(mutez("after_revert"), mutez("before"));
    assert_eq!(mutez("after_second_transfer"), mutez("before") + 2_000_000);
    // Level 3 the second transfer, then three mined blocks from the set date on.
    assert_eq!(result["head_level"], 6, "{result}");
    assert_eq!(
        result["timestamps"],
        serde_json::json!([
            "2031-06-01T00:00:00Z",
            "2031-06-01T00:00:01Z",
            "2031-06-01T00:00:02Z"
        ]),
        "{result}"
    );
}
