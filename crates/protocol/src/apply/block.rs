//! A block's operations validated and applied in order, with their signatures checked as one
//! batch ([`crate::signature::check_all`]: the ed25519 ones verified together, the batch split over
//! the machine's cores) on other threads *while* the operations are applied, each as if its
//! signature had passed. When the batch passes, each operation's receipt is exactly what
//! [`super::validate_and_apply`] gives applied one after the other: the batch only replaces single
//! checks it has passed. When it fails, the state is put back as it was before the block and the
//! block applied again with every signature checked alone, so the outcome never depends on the
//! overlap. The batch's key for an operation is the one the state holds for the source before the
//! block, or the key the operation reveals; an operation whose key the validation finds different
//! is checked alone.

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
    /// The signature stage's time on the applying thread: reading the batch's keys, then waiting
    /// for the batch once the operations are applied (the batch runs beside the application), and
    /// the block's second application when the batch fails.
    pub signature: Duration,
    /// Validation (counters, keys, limits, fees; single signature checks).
    pub validation: Duration,
    /// Application: fees, Michelson runs, state reads and writes, receipts. With
    /// [`crate::ledger::Ledger::time_stages`] on, split into the four fields below and what is
    /// left ([`StageTimings::bookkeeping`]); off, those four are zero.
    pub application: Duration,
    /// Of the application: inside the Michelson interpreter, less the state reads it asks for.
    pub execution: Duration,
    /// Of the application: finding values in the state's tree (loading nodes from the store).
    pub state_reads: Duration,
    /// Of the application: changing the state's tree (with the undo records of the open
    /// checkpoints, and rollbacks) and applying big-map diffs.
    pub state_writes: Duration,
    /// `Instant::now` calls the stage split made (its overhead, some 20-40 ns each).
    pub clock_reads: u64,
}

impl StageTimings {
    /// Of the application, what is neither execution nor state reads or writes: fees, counters,
    /// gas accounting, scripts from the cache, storage encoding, receipts.
    pub fn bookkeeping(&self) -> Duration {
        self.application
            .saturating_sub(self.execution + self.state_reads + self.state_writes)
    }
}

/// One receipt per operation, or why it was refused.
type Receipts = Vec<Result<Vec<ContentsMetadata<'static>>, ValidationError>>;

/// Validates and applies `operations` in order against `ledger` (as [`Mode::Apply`]), their
/// signatures checked as one batch beside the application: each operation's receipt, or why it
/// was refused (a refused operation changes nothing), and where the time went.
pub fn validate_and_apply_block(
    ledger: &mut Ledger,
    operations: &[SignedOperation<'_>],
    block: &BlockContext,
) -> (Receipts, StageTimings) {
    let mut timings = StageTimings::default();
    let start = Instant::now();
    let keys = batch_keys(ledger, operations);
    let checked: Vec<(&SignedOperation<'_>, &PublicKey)> = operations
        .iter()
        .zip(&keys)
        .filter_map(|(operation, key)| Some((operation, key.as_ref()?)))
        .collect();
    timings.signature = start.elapsed();
    let before = ledger.clone();
    let (receipts, batch_passed) = std::thread::scope(|scope| {
        let batch = spawn_batch(scope, &checked, block);
        let receipts = apply_all(ledger, operations, &keys, block, &mut timings);
        let waited = Instant::now();
        let passed = batch.into_iter().all(|part| part.join().unwrap_or(false));
        timings.signature += waited.elapsed();
        (receipts, passed)
    });
    if batch_passed {
        return (receipts, timings);
    }
    let again = Instant::now();
    *ledger = before;
    let unchecked = vec![None; operations.len()];
    let mut discarded = StageTimings::default();
    let receipts = apply_all(ledger, operations, &unchecked, block, &mut discarded);
    timings.signature += again.elapsed();
    (receipts, timings)
}

/// Each operation validated and applied in turn, its signature taken as verified under its key
/// in `keys`.
fn apply_all(
    ledger: &mut Ledger,
    operations: &[SignedOperation<'_>],
    keys: &[Option<PublicKey>],
    block: &BlockContext,
    timings: &mut StageTimings,
) -> Receipts {
    operations
        .iter()
        .zip(keys)
        .map(|(operation, key)| {
            validate_and_apply_timed(ledger, operation, block, Mode::Apply, key.as_ref(), timings)
        })
        .collect()
}

/// For each operation, the key its signature must verify under in the batch, or `None` when its
/// key is unknown before the block (it is then checked alone).
fn batch_keys(ledger: &Ledger, operations: &[SignedOperation<'_>]) -> Vec<Option<PublicKey>> {
    operations
        .iter()
        .map(|operation| {
            let first = operation.operation.contents.first()?.as_manager()?;
            source_key(ledger, &first.header.source, first).ok()
        })
        .collect()
}

/// Operations below which the batch is checked on one thread (a thread costs more than the
/// few checks it would take over).
const PARALLEL_BATCH_MIN: usize = 64;

/// The batch's check started on other threads, split over the machine's cores: each part's
/// handle answers whether every signature in it verifies.
fn spawn_batch<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    checked: &'env [(&'env SignedOperation<'env>, &'env PublicKey)],
    block: &'env BlockContext,
) -> Vec<std::thread::ScopedJoinHandle<'scope, bool>> {
    let threads = std::thread::available_parallelism().map_or(1, |threads| threads.get());
    let parts = if checked.len() < PARALLEL_BATCH_MIN {
        1
    } else {
        threads
    };
    checked
        .chunks(checked.len().div_ceil(parts).max(1))
        .map(|part| scope.spawn(move || crate::signature::check_all(part, block.chain_id).is_ok()))
        .collect()
}
