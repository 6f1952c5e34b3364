//! Signature deduplication: a transaction whose first signature was already accepted is a
//! duplicate.
//!
//! A signature is remembered only after it verified, so an invalid copy cannot shut out the
//! genuine transaction. Keys are the signature's first 16 bytes: finding another valid signature
//! that shares them takes about 2^64 signings even for a sender grinding its own keys. Memory is
//! bounded: two generations of at most `capacity` keys each; the older is dropped when the newer
//! fills or when the blockhash lifetime (150 slots) has passed since the newer one started — a
//! transaction older than that is rejected for its blockhash anyway.

use crate::accounts::SeededState;
use crate::limits::MAX_PROCESSING_AGE_SLOTS;
use kestrel_txview::Signature;
use std::collections::HashSet;

/// Recently accepted signatures.
pub(crate) struct SignatureDeduper {
    current: HashSet<u128, SeededState>,
    previous: HashSet<u128, SeededState>,
    capacity: usize,
    generation_start_slot: u64,
}

fn key(signature: &Signature) -> u128 {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&signature[..16]);
    u128::from_le_bytes(bytes)
}

impl SignatureDeduper {
    pub(crate) fn new(capacity: usize) -> Self {
        let hasher = SeededState::new();
        Self {
            current: HashSet::with_hasher(hasher.clone()),
            previous: HashSet::with_hasher(hasher),
            capacity: capacity.max(1),
            generation_start_slot: 0,
        }
    }

    /// Whether `signature` was accepted already.
    pub(crate) fn contains(&self, signature: &Signature) -> bool {
        let key = key(signature);
        self.current.contains(&key) || self.previous.contains(&key)
    }

    /// Remembers `signature`; `false` when it was already there.
    pub(crate) fn insert(&mut self, signature: &Signature, slot: u64) -> bool {
        let key = key(signature);
        if self.previous.contains(&key) {
            return false;
        }
        if self.current.len() >= self.capacity
            || slot >= self.generation_start_slot + MAX_PROCESSING_AGE_SLOTS
        {
            core::mem::swap(&mut self.previous, &mut self.current);
            self.current.clear();
            self.generation_start_slot = slot;
        }
        self.current.insert(key)
    }

    /// Signatures remembered.
    pub(crate) fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_across_one_rotation_only() {
        let mut deduper = SignatureDeduper::new(2);
        let signature = |byte: u8| [byte; 64];
        assert!(deduper.insert(&signature(1), 0));
        assert!(!deduper.insert(&signature(1), 0));
        assert!(deduper.contains(&signature(1)));
        assert!(deduper.insert(&signature(2), 0));
        // The third fills the generation: 1 and 2 move to the previous one and are still found.
        assert!(deduper.insert(&signature(3), 0));
        assert!(deduper.contains(&signature(1)) && deduper.contains(&signature(2)));
        // A blockhash lifetime later the next rotation forgets them.
        assert!(deduper.insert(&signature(4), MAX_PROCESSING_AGE_SLOTS));
        assert!(!deduper.contains(&signature(1)));
        assert!(deduper.contains(&signature(3)));
        assert!(deduper.len() <= 4);
    }
}
