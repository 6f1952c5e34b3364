//! Application of manager operations as protocol 025 applies them (`apply.ml`): validation
//! ([`validate`]), the fees taken and counters advanced for the whole batch, then each content
//! applied in turn with its gas limit — reveals, transfers to accounts and contracts (calls
//! through `kestrel_michelson::execute`), originations, delegations, paid storage — with the
//! internal operations its contract calls emit, the storage burns, and the receipt. A failed
//! content keeps its fee; its batch's earlier contents become backtracked and later ones skipped,
//! and the state returns to what it was after the fees.
//!
//! Gas follows Octez's mockup mode, where each operation is applied in a block of its own whose
//! script cache holds only the liquidity-baking CPMM (run by the block's subsidy), and is
//! simulated on the head's context, whose cache is empty at genesis and holds the CPMM once a
//! block is baked: every call pays for loading and typechecking its script, and the cache's size enters the cost of its lookups (`gas::ScriptCacheView`). Kestrel keeps typechecked scripts across operations all
//! the same (`script_cache`), which saves time, not gas.

mod activation;
mod block;
mod call;
mod error;
mod forged;
mod gas;
mod internal;
mod lazy_storage;
mod manager;
mod nonce;
mod originate;
mod paid_storage;
mod script_cache;
mod ticket;
mod ticket_scan;
mod token;
mod validate;

use std::time::Instant;

use kestrel_crypto::{ChainId, PublicKey, PublicKeyHash};

use crate::ledger::{ApplyStage, Ledger, LedgerError};
use crate::operation::SignedOperation;
use crate::receipt::{ContentsMetadata, ManagerMetadata, UpdateOrigin};
pub use activation::addresses as liquidity_baking_addresses;
pub(crate) use activation::originate_liquidity_baking;
pub use block::{validate_and_apply_block, StageTimings};
pub use call::contract_code_read_milli;
pub(crate) use call::stored_code_read_milli;
pub use error::{ApplyError, ForgedValue, ERROR_ID_PREFIX};
pub(crate) use gas::read_access_milli;
pub use internal::emitted_operation;
pub use lazy_storage::apply as apply_big_map_diff;
pub use nonce::OriginationNonce;
pub(crate) use script_cache::parameter as cached_parameter_type;
pub use ticket::balance_key as ticket_balance_key;
pub use validate::ValidationError;

/// The block an operation is applied in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockContext {
    /// Its level (`LEVEL`).
    pub level: u64,
    /// Its timestamp, seconds since the epoch (`NOW`).
    pub timestamp_seconds: i64,
    /// The chain (`CHAIN_ID`, and signatures of consensus operations).
    pub chain_id: ChainId,
    /// The baker credited with the block's fees.
    pub payload_producer: PublicKeyHash,
}

/// How an operation is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// For a block: the signature is checked.
    Apply,
    /// `run_operation` / `simulate_operation`: no signature check, the receipt as if applied.
    Simulate,
}

/// Why applying stopped: the operation failed (it keeps its fee), or the state is unreadable
/// (nothing can be decided).
#[derive(Debug)]
pub(crate) enum Fault {
    Operation(ApplyError),
    Ledger(LedgerError),
}

impl From<ApplyError> for Fault {
    fn from(error: ApplyError) -> Fault {
        Fault::Operation(error)
    }
}

impl From<LedgerError> for Fault {
    fn from(error: LedgerError) -> Fault {
        Fault::Ledger(error)
    }
}

impl From<gas::GasExhausted> for Fault {
    fn from(_: gas::GasExhausted) -> Fault {
        Fault::Operation(ApplyError::GasExhausted)
    }
}

/// What every step of one operation's application shares.
pub(crate) struct Env<'l> {
    ledger: &'l mut Ledger,
    block: BlockContext,
    nonce: OriginationNonce,
    origin: UpdateOrigin,
    /// The implicit account that signed the operation and pays its burns.
    payer: PublicKeyHash,
    /// The next internal operation nonce of the operation.
    next_internal_nonce: u64,
    /// The script cache's size as the operation finds it, bytes (`gas::ScriptCacheView`).
    script_cache: gas::ScriptCacheView,
}

/// Validates `operation` against `ledger` and applies it: the receipt of each content. On a
/// validation error nothing changes; otherwise the fees are taken and each content applied or
/// marked failed, backtracked or skipped.
pub fn validate_and_apply(
    ledger: &mut Ledger,
    operation: &SignedOperation<'_>,
    block: &BlockContext,
    mode: Mode,
) -> Result<Vec<ContentsMetadata<'static>>, ValidationError> {
    validate_and_apply_timed(
        ledger,
        operation,
        block,
        mode,
        None,
        &mut StageTimings::default(),
    )
}

/// [`validate_and_apply`], with the signature already verified under `verified_key` when that
/// is the signer's key, and the time spent validating and applying added to `timings`.
fn validate_and_apply_timed(
    ledger: &mut Ledger,
    operation: &SignedOperation<'_>,
    block: &BlockContext,
    mode: Mode,
    verified_key: Option<&PublicKey>,
    timings: &mut StageTimings,
) -> Result<Vec<ContentsMetadata<'static>>, ValidationError> {
    let start = Instant::now();
    let batch = validate::validate(ledger, operation, block.chain_id, mode, verified_key);
    let validated = Instant::now();
    timings.validation += validated - start;
    let batch = batch?;
    ledger.clock().start(validated);
    let checkpoint = ledger.checkpoint();
    let result = apply_batch(ledger, operation, &batch, block);
    let result = match result {
        Ok(metadata) => {
            ledger.release(checkpoint);
            Ok(metadata)
        }
        Err(error) => Err(ValidationError::Ledger(
            ledger.rollback(checkpoint).err().unwrap_or(error),
        )),
    };
    let applied = Instant::now();
    let split = ledger.clock().stop(applied);
    timings.application += applied - validated;
    timings.execution += split.spent[ApplyStage::Execution as usize];
    timings.state_reads += split.spent[ApplyStage::StateReads as usize];
    timings.state_writes += split.spent[ApplyStage::StateWrites as usize];
    timings.clock_reads += split.clock_reads;
    result
}

/// Applies the validated batch: the fees, then each content; a failed content puts the state
/// back as it was after the fees.
fn apply_batch(
    ledger: &mut Ledger,
    operation: &SignedOperation<'_>,
    batch: &validate::ValidBatch<'_, '_>,
    block: &BlockContext,
) -> Result<Vec<ContentsMetadata<'static>>, LedgerError> {
    let origin = UpdateOrigin::Block;
    let mut fee_updates = Vec::with_capacity(batch.contents.len());
    for content in &batch.contents {
        fee_updates.push(manager::take_fees(ledger, content, origin)?);
    }
    let after_fees = ledger.checkpoint();
    let mut env = Env {
        ledger,
        block: *block,
        nonce: OriginationNonce::new(*operation.hash().as_bytes()),
        origin,
        payer: batch.source,
        next_internal_nonce: 0,
        script_cache: gas::ScriptCacheView::at_start(block.level),
    };
    let mut results = Vec::with_capacity(batch.contents.len());
    let mut failed = false;
    for (index, (content, balance_updates)) in batch.contents.iter().zip(fee_updates).enumerate() {
        let (operation_result, internal_operation_results, success) = if failed {
            (manager::skipped(content), Vec::new(), false)
        } else {
            let signature_check = if index == 0 {
                batch.signature_check_milli
            } else {
                0
            };
            manager::apply_content(&mut env, content, signature_check)?
        };
        failed |= !success;
        results.push(ManagerMetadata {
            balance_updates,
            operation_result,
            internal_operation_results,
        });
    }
    if failed {
        env.ledger.rollback(after_fees)?;
        results.iter_mut().for_each(manager::backtrack);
    } else {
        env.ledger.release(after_fees);
        env.ledger.remove_temporary_big_maps()?;
    }
    Ok(results.into_iter().map(ContentsMetadata::Manager).collect())
}
