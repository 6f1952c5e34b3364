//! The node's state as a document (`kestrel_dump_state`, `kestrel_load_state`, `kestrel node
//! --state FILE`): every entry of head's context tree, so that a chain can be saved and started
//! again from it, as Anvil's `--state` does.
//!
//! Format: `{"format": "kestrel-node-state/1", "level": N, "entries": [[[segment, …], hex], …]}`,
//! entries in tree order. Loading replaces the state of a running chain with the document's and
//! bakes a block holding it; blocks before it keep their own states (the history is not part of
//! the document).

use kestrel_context::{Kind, Tree};
use serde_json::{json, Value};

use crate::chain::{Chain, ChainError};

/// The document's `format`.
pub const STATE_FORMAT: &str = "kestrel-node-state/1";

/// Most entries a document may hold (a sandbox's accounts and contracts take thousands; a
/// document past this is not one the node wrote).
pub const MAX_STATE_ENTRIES: usize = 10_000_000;

/// Head's state as a document.
pub fn dump(chain: &Chain) -> Result<String, ChainError> {
    let tree = chain.ledger().tree();
    let source = chain.store().as_ref();
    let mut entries = Vec::new();
    // Directories still to list, depth first, without recursion.
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    while let Some(path) = pending.pop() {
        let listed = tree.list(source, &path).map_err(ChainError::Store)?;
        for (name, kind) in listed.into_iter().rev() {
            let mut child = path.clone();
            child.push(name);
            match kind {
                Kind::Node => pending.push(child),
                Kind::Contents => {
                    let bytes = tree
                        .find(source, &child)
                        .map_err(ChainError::Store)?
                        .unwrap_or_default();
                    let segments: Vec<String> = child
                        .iter()
                        .map(|segment| String::from_utf8_lossy(segment).into_owned())
                        .collect();
                    entries.push(json!([segments, hex::encode(&bytes[..])]));
                }
            }
        }
    }
    Ok(json!({
        "format": STATE_FORMAT,
        "level": chain.head().level(),
        "entries": entries,
    })
    .to_string())
}

/// Replaces `chain`'s state by the document `text`'s and bakes a block holding it.
pub fn load(chain: &mut Chain, text: &str) -> Result<(), ChainError> {
    let invalid = |message: &str| ChainError::Unknown(format!("not a state document: {message}"));
    let value: Value = serde_json::from_str(text).map_err(|_| invalid("not JSON"))?;
    if value.get("format").and_then(Value::as_str) != Some(STATE_FORMAT) {
        return Err(invalid(&format!("its format is not {STATE_FORMAT}")));
    }
    let entries = value
        .get("entries")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no entries"))?;
    if entries.len() > MAX_STATE_ENTRIES {
        return Err(invalid("too many entries"));
    }
    let source = chain.store().clone();
    let mut tree = Tree::empty();
    for entry in entries {
        let segments: Option<Vec<&str>> = entry
            .get(0)
            .and_then(Value::as_array)
            .and_then(|segments| segments.iter().map(Value::as_str).collect());
        let bytes = entry
            .get(1)
            .and_then(Value::as_str)
            .and_then(|text| hex::decode(text).ok());
        let (Some(segments), Some(bytes)) = (segments, bytes) else {
            return Err(invalid("an entry is not [[segment, …], hex]"));
        };
        if segments.is_empty() {
            return Err(invalid("an entry has an empty path"));
        }
        tree.add_in_place(source.as_ref(), &segments, &bytes)
            .map_err(ChainError::Store)?;
    }
    chain.replace_state(tree)?;
    Ok(())
}
