//! The RPC router: Octez's RPCs as a plain function from a request (method, path, query, body)
//! to an answer (status, content type, body), independent of any transport, so that the HTTP
//! server and an in-process caller (octez-client's mockup `rpc get|post`) share it.
//!
//! Map: this module (paths, block ids, shell RPCs), [`context`] (`…/context/…`: constants,
//! contracts, big maps), [`operations`] (forging, simulation, preapplication, injection),
//! [`error`] (error answers).

mod context;
pub mod error;
mod kestrel;
pub(crate) mod operations;
mod scripts;

use crate::block::{Block, MANAGER_PASS, PROTOCOL_HASH};
use crate::chain::Chain;

/// The content type of JSON answers.
pub const JSON: &str = "application/json";
/// The content type of text answers.
pub const TEXT: &str = "text/plain";

/// The path of the heads stream, which the transport serves itself (see [`Chain::head`]).
pub const MONITOR_HEADS_PATH: &str = "/monitor/heads/main";

/// The blocks `live_blocks` lists (pytezos's sandbox time to live).
const LIVE_BLOCKS: usize = 120;

/// An RPC request.
pub struct Request<'a> {
    /// `GET`, `POST`, ….
    pub method: &'a str,
    /// The path, `/chains/main/…`.
    pub path: &'a str,
    /// The query string, without `?` (empty when none).
    pub query: &'a str,
    /// The body.
    pub body: &'a [u8],
}

/// An RPC answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The content type.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A 200 with a JSON body.
    pub fn json(body: String) -> Response {
        Response {
            status: 200,
            content_type: JSON,
            body: body.into_bytes(),
        }
    }
}

/// Whether `request` injects an operation (`POST /injection/operation`), which the HTTP server
/// batches with the injections that arrive beside it (`Chain::inject_all`).
pub fn is_injection(request: &Request<'_>) -> bool {
    request.method == "POST" && segments(request.path) == ["injection", "operation"]
}

/// The path's non-empty segments.
fn segments(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .collect()
}

/// Answers `request` against `chain`.
pub fn route(chain: &mut Chain, request: &Request<'_>) -> Response {
    match (request.method, segments(request.path).as_slice()) {
        ("GET", ["version"]) => Response::json(version()),
        ("POST", ["injection", "operation"]) => operations::inject(chain, request.body),
        ("POST", [kestrel::PREFIX, method]) => kestrel::call(chain, method, request.body),
        (method, ["chains", name, rest @ ..]) if is_this_chain(chain, name) => {
            chain_rpc(chain, method, rest, request)
        }
        _ => error::not_found(),
    }
}

/// `main` or the chain's id.
fn is_this_chain(chain: &Chain, name: &str) -> bool {
    name == "main" || name == chain.chain_id().to_b58check()
}

fn chain_rpc(chain: &Chain, method: &str, rest: &[&str], request: &Request<'_>) -> Response {
    match (method, rest) {
        ("GET", ["chain_id"]) => Response::json(quoted(&chain.chain_id().to_b58check())),
        ("GET", ["is_bootstrapped"]) => {
            Response::json(r#"{"bootstrapped":true,"sync_state":"synced"}"#.to_string())
        }
        ("GET", ["mempool", "filter"]) => Response::json(mempool_filter()),
        ("GET", ["mempool", "pending_operations"]) => {
            Response::json(chain.mempool().pending_operations_json())
        }
        (method, ["blocks", id, rest @ ..]) => {
            let Some(block) = resolve_block(chain, id) else {
                return error::not_found();
            };
            let is_head = block.hash == chain.head().hash;
            block_rpc(chain, &block, is_head, method, rest, request)
        }
        _ => error::not_found(),
    }
}

fn block_rpc(
    chain: &Chain,
    block: &Block,
    is_head: bool,
    method: &str,
    rest: &[&str],
    request: &Request<'_>,
) -> Response {
    let chain_id = chain.chain_id();
    match (method, rest) {
        ("GET", []) => Response::json(block_json(chain, block)),
        ("GET", ["hash"]) => Response::json(quoted(&block.hash.to_b58check())),
        ("GET", ["header"]) => Response::json(block.header_json(&chain_id)),
        ("GET", ["protocols"]) => Response::json(format!(
            "{{\"protocol\":\"{PROTOCOL_HASH}\",\"next_protocol\":\"{PROTOCOL_HASH}\"}}"
        )),
        ("GET", ["metadata"]) => Response::json(block_metadata(chain, block)),
        ("GET", ["operation_hashes"]) => Response::json(block.operation_hashes_json()),
        ("GET", ["operations"]) => Response::json(block.operations_json()),
        ("GET", ["operations", pass]) => match pass.parse::<usize>() {
            Ok(MANAGER_PASS) => Response::json(format!(
                "[{}]",
                block
                    .operations
                    .iter()
                    .map(|operation| operation.json.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            Ok(pass) if pass < MANAGER_PASS => Response::json("[]".to_string()),
            _ => error::not_found(),
        },
        ("GET", ["operations", pass, index]) => {
            let found = (pass.parse::<usize>() == Ok(MANAGER_PASS))
                .then(|| index.parse::<usize>().ok())
                .flatten()
                .and_then(|index| block.operations.get(index));
            match found {
                Some(operation) => Response::json(operation.json.clone()),
                None => error::not_found(),
            }
        }
        ("GET", ["live_blocks"]) => Response::json(live_blocks(chain, block)),
        ("GET", ["context", rest @ ..]) => match chain.ledger_at(block) {
            Ok(ledger) => match rest {
                ["contracts", id, "entrypoints", name] => {
                    scripts::contract_entrypoint(&ledger, id, name)
                }
                _ => context::route(&ledger, rest),
            },
            Err(chain_error) => error::chain_error(&chain_error),
        },
        ("POST", ["context", "contracts", id, rest @ ..]) if is_head => {
            scripts::contract_post(chain, id, rest, request.body).unwrap_or_else(error::not_found)
        }
        ("POST", ["helpers", rest @ ..]) if is_head => {
            operations::helpers(chain, rest, request.body)
        }
        _ => error::not_found(),
    }
}

/// The block named by `id` (`block_services.ml`, `parse_block`): `head`, `genesis`, a level, a
/// hash, each optionally followed by `~N` or `-N` (ancestors) or `+N` (descendants). Ancestors
/// below genesis are clamped to genesis, as a young chain must for pytezos's `head~115` branch.
fn resolve_block<'c>(chain: &'c Chain, id: &str) -> Option<std::borrow::Cow<'c, Block>> {
    let split = id.find(['~', '-', '+']).unwrap_or(id.len());
    let (base, offset) = id.split_at(split);
    let level = match base {
        "head" => i64::from(chain.head().level()),
        "genesis" => 0,
        _ if !base.is_empty() && base.bytes().all(|byte| byte.is_ascii_digit()) => {
            base.parse().ok()?
        }
        _ => {
            let hash = kestrel_crypto::BlockHash::from_b58check(base).ok()?;
            i64::from(chain.block_by_hash(&hash)?.level())
        }
    };
    let level = match offset.split_at_checked(1) {
        None | Some(("", _)) => level,
        Some((sign, count)) => {
            let count: i64 = count.parse().ok()?;
            if sign == "+" {
                level.checked_add(count)?
            } else {
                level.saturating_sub(count).max(0)
            }
        }
    };
    chain.block_at_level(level)
}

/// A JSON string.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// `/version`: Octez 25.1 on a sandboxed chain (pytezos then uses a time to live of 120).
fn version() -> String {
    serde_json::json!({
        "version": {"major": 25, "minor": 1, "build": 0, "additional_info": "release"},
        "network_version": {
            "chain_name": "SANDBOXED_TEZOS",
            "distributed_db_version": 2,
            "p2p_version": 1
        },
        "commit_info": {"commit_hash": "kestrel", "commit_date": "2026-01-01 00:00:00 +0000"}
    })
    .to_string()
}

/// `mempool/filter`: the shell's default fee filter.
fn mempool_filter() -> String {
    serde_json::json!({
        "minimal_fees": "100",
        "minimal_nanotez_per_gas_unit": ["100", "1"],
        "minimal_nanotez_per_byte": ["1000", "1"],
        "replace_by_fee_factor": ["21", "20"],
        "max_operations": 10000,
        "max_total_bytes": 10000000
    })
    .to_string()
}

/// `…/live_blocks`: the block and its ancestors within the time to live.
fn live_blocks(chain: &Chain, block: &Block) -> String {
    let level = i64::from(block.level());
    let hashes: Vec<String> = (0..LIVE_BLOCKS as i64)
        .map_while(|back| chain.block_at_level(level - back))
        .map(|block| quoted(&block.hash.to_b58check()))
        .collect();
    format!("[{}]", hashes.join(","))
}

/// A block's metadata: what clients read of it (levels, baker, protocols).
fn block_metadata(chain: &Chain, block: &Block) -> String {
    let level = block.level();
    let blocks_per_cycle = context::BLOCKS_PER_CYCLE;
    let baker = block.baker.to_b58check();
    serde_json::json!({
        "protocol": PROTOCOL_HASH,
        "next_protocol": PROTOCOL_HASH,
        "test_chain_status": {"status": "not_running"},
        "max_operations_ttl": level.min(context::MAX_OPERATIONS_TIME_TO_LIVE),
        "max_operation_data_length": crate::chain::MAX_OPERATION_DATA_BYTES,
        "max_block_header_length": 289,
        "max_operation_list_length": [
            {"max_size": 4194304, "max_op": 2048},
            {"max_size": 32768},
            {"max_size": 135168, "max_op": 132},
            {"max_size": 524288}
        ],
        "proposer": baker,
        "baker": baker,
        "level_info": {
            "level": level,
            "level_position": (level - 1).max(0),
            "cycle": (level - 1).max(0) / blocks_per_cycle,
            "cycle_position": (level - 1).max(0) % blocks_per_cycle,
            "expected_commitment": false
        },
        "nonce_hash": null,
        "deactivated": [],
        "balance_updates": [],
        "liquidity_baking_toggle_ema": 0,
        "implicit_operations_results": [],
        "proposer_consensus_key": baker,
        "baker_consensus_key": baker,
        "consumed_milligas": "0",
        "chain_id": chain.chain_id().to_b58check()
    })
    .to_string()
}

/// A whole block: `{protocol, chain_id, hash, header, metadata, operations}`.
fn block_json(chain: &Chain, block: &Block) -> String {
    let mut header = String::new();
    kestrel_protocol::Field::write_json(&block.header, &mut header)
        .expect("a header the node made has a JSON form");
    format!(
        "{{\"protocol\":\"{PROTOCOL_HASH}\",\"chain_id\":\"{}\",\"hash\":\"{}\",\"header\":{header},\"metadata\":{},\"operations\":{}}}",
        chain.chain_id().to_b58check(),
        block.hash.to_b58check(),
        block_metadata(chain, block),
        block.operations_json()
    )
}
