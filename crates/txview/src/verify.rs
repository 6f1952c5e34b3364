//! ed25519 signature checks of a framed transaction: signature `i` must be key `i`'s signature of
//! the message bytes.
//!
//! Single checks use `ed25519-dalek`'s `verify_strict` (rejects non-canonical and small-order
//! points, as `solana-signature`'s `verify` does today). Batch checks use `ed25519-dalek`'s batch
//! equation, which is faster per signature; when a batch fails, every signature is checked singly
//! to name the first bad one. The batch equation does not make `verify_strict`'s extra rejections
//! (small-order and non-canonical points), so a batch can accept a signature that
//! [`verify_signatures`] rejects; callers that need strict answers for adversarial keys use the
//! single check. Batch checks allocate (the batch's vectors); parsing does not. A [`KeyCache`] keeps
//! recent signers' keys decompressed for the single check.

use crate::transaction_view::TransactionView;
use crate::Address;
use core::fmt;
use ed25519_dalek::{Signature as DalekSignature, VerifyingKey};

/// Why a transaction's signatures do not verify.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// More signatures than static keys: some signature has no key.
    MissingPublicKey {
        /// The signature without a key.
        index: usize,
    },
    /// Key `index` is not a valid ed25519 point.
    InvalidPublicKey {
        /// The key.
        index: usize,
    },
    /// Signature `index` does not verify.
    InvalidSignature {
        /// The signature.
        index: usize,
    },
    /// Transaction `transaction` of a batch failed.
    InTransaction {
        /// Position of the transaction in the batch.
        transaction: usize,
        /// Its first bad signature.
        index: usize,
    },
}

impl fmt::Display for VerifyError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::MissingPublicKey { index } => {
                write!(formatter, "signature {index} has no public key")
            }
            VerifyError::InvalidPublicKey { index } => {
                write!(formatter, "public key {index} is not a valid point")
            }
            VerifyError::InvalidSignature { index } => {
                write!(formatter, "signature {index} does not verify")
            }
            VerifyError::InTransaction { transaction, index } => {
                write!(
                    formatter,
                    "transaction {transaction}: signature {index} does not verify"
                )
            }
        }
    }
}

impl std::error::Error for VerifyError {}

/// Slots of a [`KeyCache`] (a power of two; about 50 KB).
const KEY_CACHE_SLOTS: usize = 256;

/// Decompressed public keys of recent signers, so that a key signing many transactions (a busy
/// payer) is decompressed once rather than once per signature — point decompression is a field
/// exponentiation, a sizeable part of a `verify_strict`.
///
/// A cached key is the very `VerifyingKey` that `VerifyingKey::from_bytes` returns for the same 32
/// bytes, so checks through the cache answer exactly as checks without it. Direct-mapped on the
/// key's first two bytes: memory is fixed, and keys ground to share a slot only evict each other
/// (each then costs what it costs without a cache). Invalid keys are not cached.
pub struct KeyCache {
    slots: Box<[Option<VerifyingKey>]>,
}

impl Default for KeyCache {
    fn default() -> Self {
        Self {
            slots: vec![None; KEY_CACHE_SLOTS].into_boxed_slice(),
        }
    }
}

impl KeyCache {
    /// `key` decompressed, or `None` when it is not a valid point.
    fn get(&mut self, key: &Address) -> Option<VerifyingKey> {
        let slot =
            &mut self.slots[usize::from(u16::from_le_bytes([key[0], key[1]])) % KEY_CACHE_SLOTS];
        match slot {
            Some(cached) if cached.as_bytes() == key => Some(*cached),
            _ => {
                let decompressed = VerifyingKey::from_bytes(key).ok()?;
                *slot = Some(decompressed);
                Some(decompressed)
            }
        }
    }
}

/// Checks every signature of `view` against its key and the message bytes.
pub fn verify_signatures<D: AsRef<[u8]>, const SANITIZED: bool>(
    view: &TransactionView<D, SANITIZED>,
) -> Result<(), VerifyError> {
    verify_with(view, |key| VerifyingKey::from_bytes(key).ok())
}

/// [`verify_signatures`], the keys decompressed through `cache`.
pub fn verify_signatures_cached<D: AsRef<[u8]>, const SANITIZED: bool>(
    view: &TransactionView<D, SANITIZED>,
    cache: &mut KeyCache,
) -> Result<(), VerifyError> {
    verify_with(view, |key| cache.get(key))
}

/// Checks every signature of `view`, `decompress` giving each key's point.
fn verify_with<D: AsRef<[u8]>, const SANITIZED: bool>(
    view: &TransactionView<D, SANITIZED>,
    mut decompress: impl FnMut(&Address) -> Option<VerifyingKey>,
) -> Result<(), VerifyError> {
    let message = view.message_data();
    let keys = view.static_account_keys();
    for (index, signature) in view.signatures().iter().enumerate() {
        let key = keys
            .get(index)
            .ok_or(VerifyError::MissingPublicKey { index })?;
        let key = decompress(key).ok_or(VerifyError::InvalidPublicKey { index })?;
        key.verify_strict(message, &DalekSignature::from_bytes(signature))
            .map_err(|_| VerifyError::InvalidSignature { index })?;
    }
    Ok(())
}

/// Checks every signature of every transaction in one batch; on failure names the first bad
/// transaction and signature.
pub fn verify_signatures_batch<D: AsRef<[u8]>, const SANITIZED: bool>(
    views: &[TransactionView<D, SANITIZED>],
) -> Result<(), VerifyError> {
    let total: usize = views.iter().map(|view| view.signatures().len()).sum();
    let mut messages = Vec::with_capacity(total);
    let mut signatures = Vec::with_capacity(total);
    let mut keys = Vec::with_capacity(total);
    let mut batch_possible = true;
    'views: for view in views {
        let static_keys = view.static_account_keys();
        for (index, signature) in view.signatures().iter().enumerate() {
            let Some(Ok(key)) = static_keys.get(index).map(VerifyingKey::from_bytes) else {
                batch_possible = false;
                break 'views;
            };
            messages.push(view.message_data());
            signatures.push(DalekSignature::from_bytes(signature));
            keys.push(key);
        }
    }
    if batch_possible && ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok() {
        return Ok(());
    }
    for (transaction, view) in views.iter().enumerate() {
        verify_signatures(view).map_err(|error| match error {
            VerifyError::MissingPublicKey { index }
            | VerifyError::InvalidPublicKey { index }
            | VerifyError::InvalidSignature { index }
            | VerifyError::InTransaction { index, .. } => {
                VerifyError::InTransaction { transaction, index }
            }
        })?;
    }
    Ok(())
}
