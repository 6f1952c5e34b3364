//! Revealed keys parsed once and kept across operations and blocks, keyed by their stored bytes
//! (tag and key). Parsing an ed25519 key decompresses a curve point, which cost more than the
//! rest of a tez transfer's validation; a key's bytes determine its parse, so an entry never goes
//! stale and the cache needs no invalidation.
//!
//! The cache is per thread (the block's signature batch reads keys on the applying thread); it
//! holds at most [`CACHED_KEYS_MAX`] keys and is emptied when full.

use std::cell::RefCell;

use kestrel_crypto::{CryptoError, PublicKey};

use crate::bounded_cache::BoundedCache;

/// Keys kept per thread before the cache is emptied (an ML-DSA-44 key, the largest, is about
/// 2.6 kB with its parse; an ed25519 key about 200 bytes).
pub const CACHED_KEYS_MAX: usize = 16_384;

thread_local! {
    static KEYS: RefCell<BoundedCache<Box<[u8]>, PublicKey>> =
        RefCell::new(BoundedCache::new(CACHED_KEYS_MAX));
}

/// The key whose binary form (tag then key) is `bytes`, parsed at most once per thread.
pub fn parsed(bytes: &[u8]) -> Result<PublicKey, CryptoError> {
    if let Some(key) = KEYS.with(|keys| keys.borrow().get(bytes)) {
        return Ok(key);
    }
    let key = PublicKey::try_from_bytes(bytes)?;
    KEYS.with(|keys| keys.borrow_mut().insert(bytes.into(), key.clone()));
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_key_is_the_parsed_key_and_bad_bytes_stay_errors() {
        let key: PublicKey = "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav"
            .parse()
            .unwrap();
        let bytes = key.to_bytes();
        assert_eq!(parsed(&bytes).unwrap(), key);
        assert_eq!(parsed(&bytes).unwrap(), key);
        let mut bad = bytes.clone();
        bad.truncate(10);
        assert!(parsed(&bad).is_err());
        assert!(parsed(&bad).is_err());
    }
}
