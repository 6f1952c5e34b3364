//! Applying a run's big-map changes to the ledger (`lazy_storage_diff.ml`, `Big_map` ops):
//! allocations, copies, bindings set and removed, deletions; the bytes they add to the
//! contract's storage (33 per big map, 65 per binding plus its value's bytes), what the
//! carbonated writes cost, and the `lazy_storage_diff` the receipt shows.

use kestrel_micheline::{Node, NodeKind};
use kestrel_michelson::{BigMapDiff, BigMapDiffAction, BigMapInit, BigMapUpdate, UnparsingMode};

use super::gas::write_access_milli;
use super::results::{BigMapAction, BigMapDiffItem, BigMapUpdateItem, LazyStorageDiff};
use super::Fault;
use crate::ledger::{Ledger, LedgerError};

/// Bytes an empty big map takes (`bytes_size_for_empty`).
pub const EMPTY_BIG_MAP_BYTES: i128 = 33;
/// Bytes a binding takes besides its value (`bytes_size_for_big_map_key`).
pub const BIG_MAP_KEY_BYTES: i128 = 65;

/// What applying a diff did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Bytes added to the storage (negative when freed).
    pub size_diff_bytes: i128,
    /// Milligas the writes cost.
    pub gas_milli: u64,
    /// The receipt's form, `None` when nothing changed.
    pub receipt: Option<LazyStorageDiff>,
}

/// Applies `diffs` in order.
pub fn apply(ledger: &mut Ledger, diffs: &[BigMapDiff]) -> Result<Applied, Fault> {
    let mut applied = Applied::default();
    let mut items = Vec::with_capacity(diffs.len());
    for diff in diffs {
        let id = diff.id.to_i64().ok_or(LedgerError::Corrupt {
            path: "big_maps/next".into(),
            expected: "a big-map id below 2^63",
        })?;
        let action = match &diff.action {
            BigMapDiffAction::Remove => {
                applied.size_diff_bytes -= i128::try_from(ledger.big_map_total_bytes(id)?)
                    .unwrap_or(i128::MAX)
                    + EMPTY_BIG_MAP_BYTES;
                ledger.remove_big_map(id)?;
                BigMapAction::Remove
            }
            BigMapDiffAction::Update { init, updates } => {
                let action = apply_init(ledger, id, init, &mut applied)?;
                let receipt_updates = apply_updates(ledger, id, updates, &mut applied)?;
                with_updates(action, receipt_updates)
            }
        };
        items.push(BigMapDiffItem { id, action });
    }
    if !items.is_empty() {
        applied.receipt = Some(LazyStorageDiff { big_maps: items });
    }
    Ok(applied)
}

fn apply_init(
    ledger: &mut Ledger,
    id: i64,
    init: &BigMapInit,
    applied: &mut Applied,
) -> Result<BigMapAction, Fault> {
    Ok(match init {
        BigMapInit::Existing => BigMapAction::Update {
            updates: Vec::new(),
        },
        BigMapInit::Copy { source } => {
            let source = source.to_i64().unwrap_or(-1);
            ledger.copy_big_map(source, id)?;
            applied.size_diff_bytes += i128::try_from(ledger.big_map_total_bytes(source)?)
                .unwrap_or(i128::MAX)
                + EMPTY_BIG_MAP_BYTES;
            BigMapAction::Copy {
                source,
                updates: Vec::new(),
            }
        }
        BigMapInit::Alloc {
            key_type,
            value_type,
        } => {
            let key_type = strip_annotations(key_type.to_node());
            let value_type = strip_annotations(value_type.to_node());
            ledger.create_big_map(id, &key_type, &value_type)?;
            applied.size_diff_bytes += EMPTY_BIG_MAP_BYTES;
            BigMapAction::Alloc {
                key_type,
                value_type,
                updates: Vec::new(),
            }
        }
    })
}

/// Sets and removes bindings (`Big_map.apply_update`), keeping `total_bytes`.
fn apply_updates(
    ledger: &mut Ledger,
    id: i64,
    updates: &[BigMapUpdate],
    applied: &mut Applied,
) -> Result<Vec<BigMapUpdateItem>, Fault> {
    let mut size_diff: i128 = 0;
    let mut items = Vec::with_capacity(updates.len());
    for update in updates {
        let previous = ledger.big_map_value_size(id, &update.key_hash)?;
        let value = update
            .value
            .as_ref()
            .map(|value| kestrel_michelson::normalize(value, UnparsingMode::Optimized));
        match &value {
            Some(node) => {
                let length = encoded_length(node);
                applied.gas_milli = applied
                    .gas_milli
                    .saturating_add(alloc_mbytes_milli(length))
                    .saturating_add(write_access_milli(length));
                size_diff += length as i128 - previous.unwrap_or(0) as i128;
                if previous.is_none() {
                    size_diff += BIG_MAP_KEY_BYTES;
                }
            }
            None => {
                applied.gas_milli = applied.gas_milli.saturating_add(write_access_milli(0));
                if let Some(previous) = previous {
                    size_diff -= previous as i128 + BIG_MAP_KEY_BYTES;
                }
            }
        }
        ledger.big_map_set(id, &update.key_hash, value.as_ref())?;
        items.push(BigMapUpdateItem {
            key_hash: update.key_hash,
            key: kestrel_michelson::normalize(&update.key, UnparsingMode::Optimized),
            value,
        });
    }
    if size_diff != 0 {
        let total =
            i128::try_from(ledger.big_map_total_bytes(id)?).unwrap_or(i128::MAX) + size_diff;
        ledger.set_big_map_total_bytes(id, u128::try_from(total).unwrap_or(0))?;
    }
    applied.size_diff_bytes += size_diff;
    Ok(items)
}

fn with_updates(action: BigMapAction, updates: Vec<BigMapUpdateItem>) -> BigMapAction {
    match action {
        BigMapAction::Alloc {
            key_type,
            value_type,
            ..
        } => BigMapAction::Alloc {
            key_type,
            value_type,
            updates,
        },
        BigMapAction::Copy { source, .. } => BigMapAction::Copy { source, updates },
        BigMapAction::Update { .. } => BigMapAction::Update { updates },
        BigMapAction::Remove => BigMapAction::Remove,
    }
}

/// The bytes of `node`'s binary Micheline (0 if it does not encode, which a typechecked value
/// always does).
pub fn encoded_length(node: &Node) -> u64 {
    kestrel_micheline::binary::encode(node)
        .map(|bytes| bytes.len() as u64)
        .unwrap_or(0)
}

/// `Gas_limit_repr.alloc_mbytes_cost`: allocating 12 words and `length` bytes, 2 gas a word.
fn alloc_mbytes_milli(length: u64) -> u64 {
    let alloc = |words: u64| words.saturating_add(1).saturating_mul(2_000);
    alloc(12).saturating_add(alloc(length.div_ceil(8)))
}

/// A type without its annotations (`Script_repr.strip_annotations`), as big maps store it.
fn strip_annotations(mut node: Node) -> Node {
    let mut pending = vec![&mut node];
    while let Some(node) = pending.pop() {
        match &mut node.kind {
            NodeKind::Prim { args, annots, .. } => {
                annots.clear();
                pending.extend(args.iter_mut());
            }
            NodeKind::Seq(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
    node
}
