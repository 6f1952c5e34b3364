//! The architecture's dependency rules (ARCHITECTURE.md, "Invariants"), checked on the manifests with
//! `cargo metadata`: library crates depend on each other only in the pipeline's direction, and no
//! crate of the default build depends on a peer implementation.

use std::collections::BTreeSet;
use std::process::Command;

/// The workspace crates each library may depend on (normal dependencies).
const ALLOWED_WORKSPACE_DEPENDENCIES: &[(&str, &[&str])] = &[
    ("kestrel-encoding", &[]),
    ("kestrel-crypto", &[]),
    ("kestrel-testdata", &[]),
    ("kestrel-txview", &[]),
    ("kestrel-scheduler", &["kestrel-txview"]),
    ("kestrel-micheline", &["kestrel-encoding", "kestrel-crypto"]),
    (
        "kestrel-michelson",
        &["kestrel-micheline", "kestrel-crypto"],
    ),
    // The conformance runners use the VM's public API only.
    (
        "kestrel-michelson-conformance",
        &["kestrel-micheline", "kestrel-michelson"],
    ),
    ("kestrel-context", &["kestrel-crypto"]),
    // The replay workload and trace tools measure the store through its public API.
    ("kestrel-context-replay", &["kestrel-context"]),
    // The operation layer, application through the VM, and state in a context tree.
    (
        "kestrel-protocol",
        &[
            "kestrel-encoding",
            "kestrel-micheline",
            "kestrel-crypto",
            "kestrel-michelson",
            "kestrel-context",
        ],
    ),
    // The node: chain state and block production over the protocol layer, the RPC on top.
    (
        "kestrel-node",
        &[
            "kestrel-encoding",
            "kestrel-micheline",
            "kestrel-michelson",
            "kestrel-crypto",
            "kestrel-protocol",
            "kestrel-context",
        ],
    ),
];

/// Peer implementations, which only `kestrel-bench` may depend on.
const PEERS: &[&str] = &[
    "agave-transaction-view",
    "nomt",
    "capnp",
    "tezos_data_encoding",
    "criterion",
    "wincode",
    "bincode",
    "prio-graph",
    "solana-compute-budget-instruction",
];

fn workspace_packages() -> Vec<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    metadata["packages"]
        .as_array()
        .expect("metadata lists packages")
        .clone()
}

/// The names of `package`'s dependencies of the given kind (`null` = normal), optional ones included.
fn dependency_names(package: &serde_json::Value, kind: Option<&str>) -> BTreeSet<String> {
    package["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|dependency| dependency["kind"].as_str() == kind)
        .filter_map(|dependency| dependency["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn libraries_depend_only_in_the_pipeline_direction() {
    let packages = workspace_packages();
    for (name, allowed) in ALLOWED_WORKSPACE_DEPENDENCIES {
        let package = packages
            .iter()
            .find(|package| package["name"] == *name)
            .unwrap_or_else(|| panic!("{name} is in the workspace"));
        for dependency in dependency_names(package, None) {
            if dependency.starts_with("kestrel-") {
                assert!(
                    allowed.contains(&dependency.as_str()),
                    "{name} must not depend on {dependency}"
                );
            }
        }
    }
}

#[test]
fn no_default_crate_depends_on_a_peer() {
    for package in workspace_packages() {
        let name = package["name"].as_str().unwrap_or_default().to_string();
        if name == "kestrel-bench" {
            continue;
        }
        for kind in [None, Some("dev"), Some("build")] {
            for dependency in dependency_names(&package, kind) {
                assert!(
                    !PEERS.contains(&dependency.as_str()) && !dependency.starts_with("solana-"),
                    "{name} depends on the peer {dependency}"
                );
            }
        }
        // The CLI reaches the bench crate (and so capnp) only through its optional `peers` feature.
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            if dependency["name"] == "kestrel-bench" {
                assert_eq!(
                    dependency["optional"], true,
                    "{name} must depend on kestrel-bench only optionally"
                );
            }
        }
    }
}
