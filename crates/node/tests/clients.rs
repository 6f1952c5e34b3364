//! Real Tezos clients, unmodified, against a node started in this process (with Liquidity
//! Baking's contracts at genesis, as Octez's sandbox): the Taquito 25 script in `tests/clients/`
//! (installed by `.ci/run` with npm) reveals a new account, transfers tez, originates the FA1.2
//! reference contract, calls its `transfer` and reads its storage and a big-map value, originates
//! `lqt.tz`, funds the CPMM (`approve`, `addLiquidity`), estimates, runs (`run_code`) and sends an
//! `xtzToToken`, reads a TZIP-4 view and an on-chain view; the pytezos 3.20 script beside it
//! (installed by `.ci/run` with pip) does the same; this test checks what each read.

use kestrel_node::{accounts, server, Chain, ChainConfig};
use kestrel_protocol::ledger::LiquidityBakingScripts;
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
fn start_node(directory: &Path, scripts: &Scripts) -> String {
    let _ = std::fs::remove_dir_all(directory);
    let read = |path: &Path| {
        let text = std::fs::read_to_string(path).expect("a script");
        let script = kestrel_micheline::parse_toplevel(&text).expect("a script");
        kestrel_michelson::expand_macros(&script).expect("macros expand")
    };
    let chain = Chain::open(ChainConfig {
        directory,
        accounts: accounts(0),
        balance_mutez: 4_000_000_000_000,
        genesis_seconds: 1_700_000_000,
        liquidity_baking: Some(LiquidityBakingScripts {
            cpmm: read(&scripts.cpmm),
            lqt: read(&scripts.lqt),
        }),
        keep_blocks: kestrel_node::DEFAULT_KEEP_BLOCKS,
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

/// The scripts the clients originate: the FA1.2 reference token and Liquidity Baking's liquidity
/// token and exchange.
struct Scripts {
    fa12: PathBuf,
    lqt: PathBuf,
    cpmm: PathBuf,
}

impl Scripts {
    fn require(test: &str) -> Option<Scripts> {
        Some(Scripts {
            fa12: kestrel_testdata::require("michelson/mini_scenarios/fa12_reference.tz", test)?,
            lqt: kestrel_testdata::require("michelson/protocol/lqt.tz", test)?,
            cpmm: kestrel_testdata::require("michelson/protocol/cpmm.tz", test)?,
        })
    }
}

/// Runs `program script url fa12 lqt cpmm` in the clients' directory against a new node;
/// returns what the script printed.
fn run_client(program: &str, script: &str, scripts: &Scripts) -> Value {
    let directory =
        std::env::temp_dir().join(format!("kestrel-node-test-{script}-{}", std::process::id()));
    let url = start_node(&directory, scripts);
    let output = Command::new(program)
        .arg(script)
        .arg(&url)
        .args([&scripts.fa12, &scripts.lqt, &scripts.cpmm])
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

/// The natural number a Micheline `{"int": …}` holds.
fn int(node: &Value) -> u64 {
    node["int"]
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| panic!("an int: {node}"))
}

fn mutez(text: &Value) -> i64 {
    text.as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| panic!("a decimal: {text}"))
}

/// The first three fields of the CPMM's storage: `tokenPool`, `xtzPool`, `lqtTotal` (a
/// five-element comb, as sequence or as nested `Pair`s).
fn pools(storage: &Value) -> [u64; 3] {
    let mut items = Vec::new();
    let mut node = storage;
    while items.len() < 3 {
        let args = node
            .as_array()
            .or_else(|| node["args"].as_array())
            .unwrap_or_else(|| panic!("a comb: {storage}"));
        items.push(int(&args[0]));
        node = if args.len() == 2 { &args[1] } else { storage };
        if args.len() > 2 {
            items = args.iter().take(3).map(int).collect();
        }
    }
    [items[0], items[1], items[2]]
}

/// The Liquidity Baking part: the genesis CPMM funded with `addLiquidity` (which spends the
/// `approve`d tokens), an `xtzToToken` of 10,000 mutez estimated, run with `run_code`, sent, and
/// read back. The oracle for the exchange is `cpmm.tz`'s own arithmetic: 0.1 % of the tez burnt
/// (sent to the null address), then `bought = net × 999 × tokenPool / (xtzPool × 1000 + net ×
/// 999)`; the receipt is checked against the estimate (fee, gas limit) and against the account's
/// balance (every balance update of the fresh account adds up to its balance change).
fn check_liquidity_baking(result: &Value) {
    assert_eq!(result["lqt_status"], "applied", "{result}");
    assert_eq!(result["approve_status"], "applied", "{result}");
    assert_eq!(result["add_liquidity_status"], "applied", "{result}");
    assert_eq!(result["swap_status"], "applied", "{result}");
    let amount: u64 = 10_000;
    let net = amount * 999 / 1000;
    let [token_pool, xtz_pool, lqt_total] = pools(&result["pools_before_swap"]);
    let bought = net * 999 * token_pool / (xtz_pool * 1000 + net * 999);
    assert!(bought > 0, "{result}");
    let after = [token_pool - bought, xtz_pool + net, lqt_total];
    assert_eq!(pools(&result["pools_after_swap"]), after, "{result}");
    assert_eq!(pools(&result["run_code_storage"]), after, "{result}");
    assert_eq!(result["run_code_operations"], 2, "{result}");
    assert_eq!(
        result["fresh_swapped_tokens"],
        bought.to_string(),
        "{result}"
    );
    assert_eq!(result["tzip4_balance"], bought.to_string(), "{result}");

    let receipt = &result["swap_receipt"];
    assert_eq!(receipt["fee"], result["estimate_fee"], "{result}");
    let metadata = &receipt["metadata"];
    let internals = metadata["internal_operation_results"]
        .as_array()
        .expect("internal results");
    let results = std::iter::once(&metadata["operation_result"])
        .chain(internals.iter().map(|internal| &internal["result"]));
    let milligas: i64 = results
        .clone()
        .map(|result| mutez(&result["consumed_milligas"]))
        .sum();
    // The estimate simulates with Octez's expected script cache, so its milligas may differ a
    // little from the application's; the gas limit it set must cover what was consumed.
    let gas_limit_milli = mutez(&receipt["gas_limit"]) * 1000;
    assert!(milligas <= gas_limit_milli, "{result}");
    assert!(
        mutez(&result["estimate_milligas"]) <= gas_limit_milli,
        "{result}"
    );
    let burn = &internals[1];
    assert_eq!(burn["destination"], "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU");
    assert_eq!(burn["amount"], (amount - net).to_string(), "{result}");
    let fresh = &result["fresh"];
    let change: i64 = std::iter::once(metadata)
        .chain(results)
        .flat_map(|result| result["balance_updates"].as_array().into_iter().flatten())
        .filter(|update| &update["contract"] == fresh)
        .map(|update| mutez(&update["change"]))
        .sum();
    assert_eq!(
        mutez(&result["fresh_after_swap"]) - mutez(&result["fresh_before_swap"]),
        change,
        "{result}"
    );
    assert_eq!(result["onchain_view"], "12", "{result}");
}

#[test]
fn taquito_reveals_transfers_originates_and_calls() {
    let test = "taquito_reveals_transfers_originates_and_calls";
    let Some(scripts) = Scripts::require(test) else {
        return;
    };
    if taquito_installed(test) {
        let result = run_client("node", "taquito.mjs", &scripts);
        check(&result);
        check_liquidity_baking(&result);
    }
}

#[test]
fn pytezos_reveals_transfers_originates_and_calls() {
    let test = "pytezos_reveals_transfers_originates_and_calls";
    let Some(scripts) = Scripts::require(test) else {
        return;
    };
    if pytezos_installed(test) {
        let result = run_client("python3", "pytezos_client.py", &scripts);
        check(&result);
        check_liquidity_baking(&result);
    }
}
