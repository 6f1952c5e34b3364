//! Validation of a batch of manager operations (`validate.ml`, `Manager`): what the mempool and
//! the block check before anything is applied — one source, consecutive counters starting at the
//! source's next, a reveal only first, the source allocated and revealed, the limits within the
//! hard limits and above the fixed cost, the fees payable in turn, and the signature. A batch
//! that fails here changes nothing.

use kestrel_crypto::{ChainId, Destination, PublicKey, PublicKeyHash};

use super::gas::{signature_check_milli, MANAGER_OPERATION_MILLI};
use super::Mode;
use crate::contents::{Contents, ManagerKind, ManagerOperation};
use crate::ledger::{Ledger, LedgerError};
use crate::operation::SignedOperation;
use crate::signature::SignatureError;

/// Why a batch is refused before application, with Octez's error ids.
#[derive(Debug)]
pub enum ValidationError {
    /// A content is not a manager operation (only manager operations are applied here).
    NotManager {
        /// Its index in the batch.
        index: usize,
    },
    /// The batch is empty.
    Empty,
    /// Two contents have different sources (`validate.operation.inconsistent_sources`).
    InconsistentSources,
    /// Counters are not consecutive (`validate.operation.inconsistent_counters`).
    InconsistentCounters {
        /// The previous content's counter.
        previous: u128,
        /// This content's counter.
        found: u128,
    },
    /// A reveal that is not first (`validate.operation.incorrect_reveal_position`).
    IncorrectRevealPosition,
    /// The source does not exist (`implicit.empty_implicit_contract`).
    EmptyImplicitContract(PublicKeyHash),
    /// The first counter is already used (`contract.counter_in_the_past`).
    CounterInThePast {
        /// The source.
        contract: PublicKeyHash,
        /// The counter expected.
        expected: u128,
        /// The counter given.
        found: u128,
    },
    /// The first counter is ahead (`contract.counter_in_the_future`).
    CounterInTheFuture {
        /// The source.
        contract: PublicKeyHash,
        /// The counter expected.
        expected: u128,
        /// The counter given.
        found: u128,
    },
    /// The source's key is not revealed (`contract.unrevealed_key`).
    UnrevealedKey(PublicKeyHash),
    /// The key revealed is already (`contract.previously_revealed_key`).
    PreviouslyRevealedKey(PublicKeyHash),
    /// The key revealed is not the source's (`contract.manager.inconsistent_hash`).
    InconsistentHash {
        /// The source.
        expected: PublicKeyHash,
        /// The hash of the key given.
        provided: PublicKeyHash,
    },
    /// A gas limit above the hard limit (`gas_limit_too_high`).
    GasLimitTooHigh,
    /// The batch's gas limits exceed the block's (`gas_exhausted.block`).
    BlockQuotaExceeded,
    /// A gas limit below the operation's fixed cost (`validate.operation.insufficient_gas_for_manager`).
    InsufficientGasForManager,
    /// A storage limit above the hard limit (`storage_limit_too_high`).
    StorageLimitTooHigh,
    /// The fees exceed the balance (`contract.balance_too_low`).
    BalanceTooLow {
        /// The source.
        contract: PublicKeyHash,
        /// Its balance when this fee is taken, mutez.
        balance: u64,
        /// The fee, mutez.
        amount: u64,
    },
    /// The signature or a proof of possession is refused.
    Signature(SignatureError),
    /// The state could not be read.
    Ledger(LedgerError),
}

impl ValidationError {
    /// Octez's error id, without the `proto.025-PsUshuai.` prefix.
    pub fn octez_id(&self) -> &'static str {
        match self {
            Self::NotManager { .. } | Self::Empty => "operation.not_supported",
            Self::InconsistentSources => "validate.operation.inconsistent_sources",
            Self::InconsistentCounters { .. } => "validate.operation.inconsistent_counters",
            Self::IncorrectRevealPosition => "validate.operation.incorrect_reveal_position",
            Self::EmptyImplicitContract(_) => "implicit.empty_implicit_contract",
            Self::CounterInThePast { .. } => "contract.counter_in_the_past",
            Self::CounterInTheFuture { .. } => "contract.counter_in_the_future",
            Self::UnrevealedKey(_) => "contract.unrevealed_key",
            Self::PreviouslyRevealedKey(_) => "contract.previously_revealed_key",
            Self::InconsistentHash { .. } => "contract.manager.inconsistent_hash",
            Self::GasLimitTooHigh => "gas_limit_too_high",
            Self::BlockQuotaExceeded => "gas_exhausted.block",
            Self::InsufficientGasForManager => "validate.operation.insufficient_gas_for_manager",
            Self::StorageLimitTooHigh => "storage_limit_too_high",
            Self::BalanceTooLow { .. } => "contract.balance_too_low",
            Self::Signature(error) => error.octez_id(),
            Self::Ledger(_) => "context.storage_error",
        }
    }
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CounterInThePast {
                contract,
                expected,
                found,
            }
            | Self::CounterInTheFuture {
                contract,
                expected,
                found,
            } => write!(
                f,
                "{}: counter {found} for {contract}, expected {expected}",
                self.octez_id()
            ),
            Self::BalanceTooLow {
                contract,
                balance,
                amount,
            } => write!(
                f,
                "{}: {contract} has {balance} mutez, cannot pay {amount}",
                self.octez_id()
            ),
            Self::Signature(error) => write!(f, "{}: {error}", self.octez_id()),
            Self::Ledger(error) => write!(f, "{}: {error}", self.octez_id()),
            other => f.write_str(other.octez_id()),
        }
    }
}

impl std::error::Error for ValidationError {}

impl From<LedgerError> for ValidationError {
    fn from(error: LedgerError) -> ValidationError {
        ValidationError::Ledger(error)
    }
}

/// A validated batch: its manager contents, its source and the source's key.
pub struct ValidBatch<'o, 'a> {
    /// The contents.
    pub contents: Vec<&'o ManagerOperation<'a>>,
    /// The source of every content.
    pub source: PublicKeyHash,
    /// The signature check's gas, charged to the first content.
    pub signature_check_milli: u64,
}

/// Checks `operation` against `ledger` as Octez's `validate_operation` does. `verified_key` is
/// a key this operation's signature is already known to verify under (a block's batched check,
/// `block.rs`): when it is the signer's key, the signature is not checked again.
pub fn validate<'o, 'a>(
    ledger: &Ledger,
    operation: &'o SignedOperation<'a>,
    chain_id: ChainId,
    mode: Mode,
    verified_key: Option<&PublicKey>,
) -> Result<ValidBatch<'o, 'a>, ValidationError> {
    let contents = manager_contents(&operation.operation.contents)?;
    let source = check_consistency(&contents)?;
    let contract = Destination::Implicit(source);
    if !ledger.is_allocated(&contract)? {
        return Err(ValidationError::EmptyImplicitContract(source));
    }
    check_counter(ledger, &source, contents[0].header.counter.0)?;
    // The key a block's batch verified, when it is the one stored, needs no parsing again.
    let key = match verified_key {
        Some(verified)
            if !matches!(contents[0].operation, ManagerKind::Reveal(_))
                && ledger.is_manager_key(&source, verified)? =>
        {
            verified.clone()
        }
        _ => source_key(ledger, &source, contents[0])?,
    };
    let unsigned_length = operation.unsigned_size_bytes as u64;
    let signature_check_milli = signature_check_milli(key.scheme(), unsigned_length);
    check_limits_and_fees(ledger, &contents, &source, signature_check_milli)?;
    if mode == Mode::Apply {
        operation
            .check_proofs_of_possession()
            .map_err(ValidationError::Signature)?;
        if verified_key != Some(&key) {
            operation
                .check_signature(&key, chain_id)
                .map_err(ValidationError::Signature)?;
        }
    }
    Ok(ValidBatch {
        contents,
        source,
        signature_check_milli,
    })
}

fn manager_contents<'o, 'a>(
    contents: &'o [Contents<'a>],
) -> Result<Vec<&'o ManagerOperation<'a>>, ValidationError> {
    if contents.is_empty() {
        return Err(ValidationError::Empty);
    }
    contents
        .iter()
        .enumerate()
        .map(|(index, content)| {
            content
                .as_manager()
                .ok_or(ValidationError::NotManager { index })
        })
        .collect()
}

/// `check_consistency`: one source, consecutive counters, a reveal only first.
fn check_consistency(contents: &[&ManagerOperation<'_>]) -> Result<PublicKeyHash, ValidationError> {
    let source = contents[0].header.source;
    for pair in contents.windows(2) {
        let (previous, next) = (pair[0], pair[1]);
        if next.header.source != source {
            return Err(ValidationError::InconsistentSources);
        }
        if previous.header.counter.0.checked_add(1) != Some(next.header.counter.0) {
            return Err(ValidationError::InconsistentCounters {
                previous: previous.header.counter.0,
                found: next.header.counter.0,
            });
        }
        if matches!(next.operation, ManagerKind::Reveal(_)) {
            return Err(ValidationError::IncorrectRevealPosition);
        }
    }
    Ok(source)
}

/// `check_counter_increment`: the first counter is the source's next.
fn check_counter(
    ledger: &Ledger,
    source: &PublicKeyHash,
    found: u128,
) -> Result<(), ValidationError> {
    let current = ledger.counter(source)?.unwrap_or_default();
    let expected = current.saturating_add(1);
    match found.cmp(&expected) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(ValidationError::CounterInThePast {
            contract: *source,
            expected,
            found,
        }),
        std::cmp::Ordering::Greater => Err(ValidationError::CounterInTheFuture {
            contract: *source,
            expected,
            found,
        }),
    }
}

/// The key the batch is signed with: the one the first content reveals, else the stored one.
pub(super) fn source_key(
    ledger: &Ledger,
    source: &PublicKeyHash,
    first: &ManagerOperation<'_>,
) -> Result<PublicKey, ValidationError> {
    let stored = ledger.manager_key(source)?;
    match (&first.operation, stored) {
        (ManagerKind::Reveal(_), Some(_)) => Err(ValidationError::PreviouslyRevealedKey(*source)),
        (ManagerKind::Reveal(reveal), None) => {
            let provided = reveal.public_key.hash();
            if provided != *source {
                return Err(ValidationError::InconsistentHash {
                    expected: *source,
                    provided,
                });
            }
            Ok(reveal.public_key.clone())
        }
        (_, Some(key)) => Ok(key),
        (_, None) => Err(ValidationError::UnrevealedKey(*source)),
    }
}

/// `check_contents` for each content: limits, then the fee from the balance left.
fn check_limits_and_fees(
    ledger: &Ledger,
    contents: &[&ManagerOperation<'_>],
    source: &PublicKeyHash,
    signature_check_milli: u64,
) -> Result<(), ValidationError> {
    let constants = ledger.constants();
    let mut balance = ledger.balance(&Destination::Implicit(*source))?;
    let mut total_gas: u128 = 0;
    for (index, content) in contents.iter().enumerate() {
        let header = &content.header;
        if header.gas_limit.0 > u128::from(constants.hard_gas_limit_per_operation) {
            return Err(ValidationError::GasLimitTooHigh);
        }
        total_gas = total_gas.saturating_add(header.gas_limit.0);
        if total_gas > u128::from(constants.hard_gas_limit_per_block) {
            return Err(ValidationError::BlockQuotaExceeded);
        }
        let fixed = MANAGER_OPERATION_MILLI + if index == 0 { signature_check_milli } else { 0 };
        if header.gas_limit.0.saturating_mul(1000) < u128::from(fixed) {
            return Err(ValidationError::InsufficientGasForManager);
        }
        if header.storage_limit.0 > u128::from(constants.hard_storage_limit_per_operation) {
            return Err(ValidationError::StorageLimitTooHigh);
        }
        balance = balance
            .checked_sub(header.fee.0)
            .ok_or(ValidationError::BalanceTooLow {
                contract: *source,
                balance,
                amount: header.fee.0,
            })?;
    }
    Ok(())
}
