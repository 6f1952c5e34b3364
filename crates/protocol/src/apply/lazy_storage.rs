//! Applying a run's big-map changes to the ledger (`lazy_storage_diff.ml`, `Big_map` ops):
//! allocations, copies, bindings set and removed, deletions; the bytes they add to the
//! contract's storage (33 per big map, 65 per binding plus its value's bytes), what the
//! carbonated writes cost, and the `lazy_storage_diff` the receipt shows.

use kestrel_micheline::{Node, NodeKind};
use kestrel_michelson::{BigMapDiff, BigMapDiffAction, BigMapInit, BigMapUpdate, UnparsingMode};

use super::gas::write_access_milli;
use crate::field::Z64;
use crate::internal::MichelineExpr;
use crate::ledger::{Ledger, LedgerError};
use crate::receipt::lazy_storage::{BigMapAlloc, BigMapDiff as ReceiptDiff};
use crate::receipt::{
    BigMapUpdate as ReceiptUpdate, LazyStorageDiff, LazyStorageItem, StorageDiff,
};

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
    pub receipt: Option<LazyStorageDiff<'static>>,
}

/// Applies `diffs` in order.
pub fn apply(ledger: &mut Ledger, diffs: &[BigMapDiff]) -> Result<Applied, LedgerError> {
    let mut applied = Applied::default();
    let mut items = Vec::with_capacity(diffs.len());
    for diff in diffs {
        let id = diff.id.to_i64().ok_or(LedgerError::Corrupt {
            path: "big_maps/next".into(),
            expected: "a big-map id below 2^63",
        })?;
        let mut size_diff_bytes = 0;
        let diff = match &diff.action {
            BigMapDiffAction::Remove => {
                size_diff_bytes -= total_bytes(ledger, id)? + EMPTY_BIG_MAP_BYTES;
                ledger.remove_big_map(id)?;
                StorageDiff::Remove
            }
            BigMapDiffAction::Update { init, updates } => {
                let init = apply_init(ledger, id, init, &mut size_diff_bytes)?;
                let receipt_updates = apply_updates(
                    ledger,
                    id,
                    updates,
                    &mut applied.gas_milli,
                    &mut size_diff_bytes,
                )?;
                with_updates(init, receipt_updates)
            }
        };
        // A temporary big map (negative id) is nobody's storage (`Lazy_storage_diff.apply`).
        if id >= 0 {
            applied.size_diff_bytes += size_diff_bytes;
        }
        items.push(LazyStorageItem::BigMap { id: Z64(id), diff });
    }
    if !items.is_empty() {
        applied.receipt = Some(LazyStorageDiff(items));
    }
    Ok(applied)
}

fn total_bytes(ledger: &Ledger, id: i64) -> Result<i128, LedgerError> {
    Ok(i128::try_from(ledger.big_map_total_bytes(id)?).unwrap_or(i128::MAX))
}

fn apply_init(
    ledger: &mut Ledger,
    id: i64,
    init: &BigMapInit,
    size_diff_bytes: &mut i128,
) -> Result<ReceiptDiff<'static>, LedgerError> {
    Ok(match init {
        BigMapInit::Existing => StorageDiff::Update(Vec::new()),
        BigMapInit::Copy { source } => {
            let source = source.to_i64().unwrap_or(-1);
            ledger.copy_big_map(source, id)?;
            *size_diff_bytes += total_bytes(ledger, source)? + EMPTY_BIG_MAP_BYTES;
            StorageDiff::Copy {
                source: Z64(source),
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
            *size_diff_bytes += EMPTY_BIG_MAP_BYTES;
            StorageDiff::Alloc {
                updates: Vec::new(),
                alloc: BigMapAlloc {
                    key_type: expression(&key_type),
                    value_type: expression(&value_type),
                },
            }
        }
    })
}

/// Sets and removes bindings (`Big_map.apply_update`), keeping `total_bytes`.
fn apply_updates(
    ledger: &mut Ledger,
    id: i64,
    updates: &[BigMapUpdate],
    gas_milli: &mut u64,
    size_diff_bytes: &mut i128,
) -> Result<Vec<ReceiptUpdate<'static>>, LedgerError> {
    let mut size_diff: i128 = 0;
    let mut items = Vec::with_capacity(updates.len());
    for update in updates {
        let previous = ledger.big_map_value_size(id, &update.key_hash)?;
        let value = update
            .value
            .as_ref()
            .map(|value| kestrel_michelson::normalize(value, UnparsingMode::Optimized));
        // Encoded once: the length is charged for, the bytes stored and shown in the receipt.
        let encoded = value
            .as_ref()
            .map(|node| kestrel_micheline::binary::encode(node).ok());
        match &encoded {
            Some(bytes) => {
                let length = bytes.as_ref().map_or(0, |bytes| bytes.len() as u64);
                *gas_milli = gas_milli
                    .saturating_add(alloc_mbytes_milli(length))
                    .saturating_add(write_access_milli(length));
                size_diff += i128::from(length) - previous.unwrap_or(0) as i128;
                if previous.is_none() {
                    size_diff += BIG_MAP_KEY_BYTES;
                }
            }
            None => {
                *gas_milli = gas_milli.saturating_add(write_access_milli(0));
                if let Some(previous) = previous {
                    size_diff -= previous as i128 + BIG_MAP_KEY_BYTES;
                }
            }
        }
        match (&encoded, &value) {
            (Some(Some(bytes)), _) => ledger.big_map_set_encoded(id, &update.key_hash, bytes)?,
            // An unencodable value is refused there.
            (_, value) => ledger.big_map_set(id, &update.key_hash, value.as_ref())?,
        }
        let key = kestrel_michelson::normalize(&update.key, UnparsingMode::Optimized);
        items.push(ReceiptUpdate {
            key_hash: kestrel_crypto::ScriptExprHash::new(update.key_hash),
            key: expression(&key),
            value: encoded
                .map(|bytes| MichelineExpr(std::borrow::Cow::Owned(bytes.unwrap_or_default()))),
        });
    }
    if size_diff != 0 {
        let total = total_bytes(ledger, id)? + size_diff;
        ledger.set_big_map_total_bytes(id, u128::try_from(total).unwrap_or(0))?;
    }
    *size_diff_bytes += size_diff;
    Ok(items)
}

fn with_updates(
    init: ReceiptDiff<'static>,
    updates: Vec<ReceiptUpdate<'static>>,
) -> ReceiptDiff<'static> {
    match init {
        StorageDiff::Alloc { alloc, .. } => StorageDiff::Alloc { updates, alloc },
        StorageDiff::Copy { source, .. } => StorageDiff::Copy { source, updates },
        StorageDiff::Update(_) => StorageDiff::Update(updates),
        StorageDiff::Remove => StorageDiff::Remove,
    }
}

/// `node` as a receipt's Micheline (binary; a typechecked value always encodes).
pub fn expression(node: &Node) -> MichelineExpr<'static> {
    MichelineExpr(std::borrow::Cow::Owned(
        kestrel_micheline::binary::encode(node).unwrap_or_default(),
    ))
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
