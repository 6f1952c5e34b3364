//! What the router tests share: a new chain in a temporary directory, requests, and operations
//! signed by bootstrap1 and injected.

#![allow(dead_code)] // Each test binary uses its own part.

use kestrel_crypto::SecretKey;
use kestrel_node::{accounts, route, Chain, ChainConfig, Request, Response};
use kestrel_protocol::Operation;
use serde_json::Value;

pub const BOOTSTRAP1_SECRET: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
pub const BOOTSTRAP1: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
pub const BOOTSTRAP2: &str = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";

/// A directory under the temporary directory, removed when dropped (a store still open in it
/// keeps its files until closed).
pub struct Scratch(std::path::PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("kestrel-node-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new chain with the sandbox accounts, its store in `scratch`.
pub fn new_chain_in(scratch: &Scratch) -> Chain {
    chain_keeping(scratch, kestrel_node::DEFAULT_KEEP_BLOCKS)
}

/// The chain in `scratch` (opened, or new with the sandbox accounts) keeping the last
/// `keep_blocks` blocks' contexts.
pub fn chain_keeping(scratch: &Scratch, keep_blocks: u64) -> Chain {
    Chain::open(ChainConfig {
        directory: &scratch.0,
        accounts: accounts(0),
        balance_mutez: 4_000_000_000_000,
        genesis_seconds: 1_700_000_000,
        liquidity_baking: None,
        keep_blocks,
    })
    .expect("a chain")
}

pub fn call(chain: &mut Chain, method: &str, path: &str, body: &str) -> Response {
    route(
        chain,
        &Request {
            method,
            path,
            query: "",
            body: body.as_bytes(),
        },
    )
}

/// POSTs `body` to `path` and reads the 200 answer's JSON (the body is shown on another status).
pub fn post_json(chain: &mut Chain, path: &str, body: &str) -> Value {
    let response = call(chain, "POST", path, body);
    assert_eq!(
        response.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&response.body)
    );
    serde_json::from_slice(&response.body).expect("JSON")
}

/// `account`'s balance at head, mutez.
pub fn balance(chain: &mut Chain, account: &str) -> u64 {
    let path = format!("/chains/main/blocks/head/context/contracts/{account}/balance");
    get_json(chain, &path)
        .as_str()
        .and_then(|text| text.parse().ok())
        .expect("a balance")
}

pub fn get_json(chain: &mut Chain, path: &str) -> Value {
    let response = call(chain, "GET", path, "");
    assert_eq!(response.status, 200, "{path}");
    serde_json::from_slice(&response.body).expect("JSON")
}

/// The hex of bootstrap1's operation with `contents` (a JSON array), signed, as a JSON string.
pub fn signed_by_bootstrap1(chain: &mut Chain, contents: &str) -> String {
    let branch = get_json(chain, "/chains/main/blocks/head~2/hash");
    let mut operation = Operation::from_json_str(&format!(
        r#"{{"branch": {branch}, "contents": {contents}}}"#
    ))
    .expect("an operation");
    let key = SecretKey::from_b58check(BOOTSTRAP1_SECRET).expect("a key");
    operation.signature = Some(key.sign(&operation.signing_message()));
    format!("\"{}\"", hex::encode(operation.encode()))
}

/// The hex of bootstrap1's transfer of `amount` mutez to `destination` with `counter`.
pub fn signed_transfer(chain: &mut Chain, counter: u32, amount: u64, destination: &str) -> String {
    let branch = get_json(chain, "/chains/main/blocks/head~2/hash");
    let operation = accounts(0)[0]
        .signed_transfer(
            branch.as_str().expect("a block hash"),
            destination,
            counter.into(),
            amount,
        )
        .expect("an operation");
    format!("\"{}\"", hex::encode(operation.encode()))
}

/// Injects `operation`; returns the new head's block.
pub fn inject(chain: &mut Chain, operation: &str) -> Value {
    let response = call(chain, "POST", "/injection/operation", operation);
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    get_json(chain, "/chains/main/blocks/head")
}

/// Originates, from bootstrap1 with `counter`, a contract whose storage is a nat, 5, its
/// parameter unit (the code keeps the storage), with `views` (JSON elements, each after a
/// comma, appended to its code); returns its address.
pub fn originate_nat_contract(chain: &mut Chain, counter: u32, views: &str) -> String {
    let origination = signed_by_bootstrap1(
        chain,
        &format!(
            r#"[{{"kind": "origination", "source": "{BOOTSTRAP1}", "fee": "2000", "counter": "{counter}",
            "gas_limit": "5000", "storage_limit": "600", "balance": "0",
            "script": {{"code": [{{"prim": "parameter", "args": [{{"prim": "unit"}}]}},
              {{"prim": "storage", "args": [{{"prim": "nat"}}]}},
              {{"prim": "code", "args": [[{{"prim": "CDR"}},
                {{"prim": "NIL", "args": [{{"prim": "operation"}}]}}, {{"prim": "PAIR"}}]]}}{views}],
              "storage": {{"int": "5"}}}}}}]"#
        ),
    );
    let block = inject(chain, &origination);
    block["operations"][3][0]["contents"][0]["metadata"]["operation_result"]["originated_contracts"]
        [0]
    .as_str()
    .expect("a contract")
    .to_string()
}
