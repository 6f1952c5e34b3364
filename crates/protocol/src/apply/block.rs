//! A block's operations validated and applied in order, with their signatures checked first as
//! one batch ([`crate::signature::check_all`]: the ed25519 ones verified together, the batch
//! split over the machine's cores). Each
//! operation's receipt is exactly what [`super::validate_and_apply`] gives applied one after the
//! other: the batch only replaces single checks it has already passed. Its key for an operation
//! is the one the state holds for the source before the block, or the key the operation reveals;
//! an operation whose key the validation finds different, or a batch that fails, is checked alone.

use std::time::{Duration, Instant};

use kestrel_crypto::PublicKey;

use super::validate::source_key;
use super::{validate_and_apply_timed, BlockContext, Mode, ValidationError};
use crate::ledger::Ledger;
use crate::operation::SignedOperation;
use crate::receipt::ContentsMetadata;

/// Where the time of [`validate_and_apply_block`] went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageTimings {
    /// The batched signature check.
    pub signature: Duration,
    /// Validation (counters, keys, limits, fees; single signature checks).
    pub validation: Duration,
    /// Application: fees, Michelson runs, state reads and writes, receipts.
    pub application: Duration,
}

/// Validates and applies `operations` in order against `ledger` (as [`Mode::Apply`]), their
/// signatures checked as one batch first: each operation's receipt, or why it was refused (a
/// refused operation changes nothing), and where the time went.
pub fn validate_and_apply_block(
    ledger: &mut Ledger,
    operations: &[SignedOperation<'_>],
    block: &BlockContext,
) -> (
    Vec<Result<Vec<ContentsMetadata<'static>>, ValidationError>>,
    StageTimings,
) {
    let mut timings = StageTimings::default();
    let start = Instant::now();
    let keys = batch_verified_keys(ledger, operations, block);
    timings.signature = start.elapsed();
    let receipts = operations
        .iter()
        .zip(&keys)
        .map(|(operation, key)| {
            validate_and_apply_timed(
                ledger,
                operation,
                block,
                Mode::Apply,
                key.as_ref(),
                &mut timings,
            )
        })
        .collect();
    (receipts, timings)
}

/// For each operation, the key its signature verified under in one batched check, or `None`
/// when its key is unknown before the block or the batch failed.
fn batch_verified_keys(
    ledger: &Ledger,
    operations: &[SignedOperation<'_>],
    block: &BlockContext,
) -> Vec<Option<PublicKey>> {
    let keys: Vec<Option<PublicKey>> = operations
        .iter()
        .map(|operation| {
            let first = operation.operation.contents.first()?.as_manager()?;
            source_key(ledger, &first.header.source, first).ok()
        })
        .collect();
    let checked: Vec<(&SignedOperation<'_>, &PublicKey)> = operations
        .iter()
        .zip(&keys)
        .filter_map(|(operation, key)| Some((operation, key.as_ref()?)))
        .collect();
    if all_verify(&checked, block) {
        keys
    } else {
        vec![None; operations.len()]
    }
}

/// Operations below which the batch is checked on one thread (a thread costs more than the
/// few checks it would take over).
const PARALLEL_BATCH_MIN: usize = 64;

/// Whether every signature verifies, the batch split over the machine's cores.
fn all_verify(checked: &[(&SignedOperation<'_>, &PublicKey)], block: &BlockContext) -> bool {
    let threads = std::thread::available_parallelism().map_or(1, |threads| threads.get());
    if threads < 2 || checked.len() < PARALLEL_BATCH_MIN {
        return crate::signature::check_all(checked, block.chain_id).is_ok();
    }
    let chunk = checked.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = checked
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || crate::signature::check_all(part, block.chain_id).is_ok())
            })
            .collect();
        parts.into_iter().all(|part| part.join().unwrap_or(false))
    })
}
