//! A cache hint: asks the processor to start loading a value's cache line before the code reads
//! it. The scheduler's large windows (100,000 transactions over up to a million accounts) are
//! bound by memory latency: each account a transaction names costs an index slot and an account
//! row scattered over tens of megabytes, read one after the other. Hinting all of a
//! transaction's lines first lets their loads overlap. Smaller windows stay in L2 but not in L1,
//! and the same hints (all but the rows at insertion) hide the L2 latency there too.
//!
//! One of the crate's two `unsafe` blocks (the other is `huge_pages`): `_mm_prefetch` is a `#[target_feature(enable = "sse")]`
//! function, which Rust lets only unsafe code call even where the feature is always on. On other
//! architectures the hint does nothing.

#![allow(unsafe_code)]

/// Hints that `value`'s cache line will be read soon. No effect on results.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, so the target feature `_mm_prefetch` requires
    // is present on every processor this code runs on; a prefetch has no effect but on the
    // caches and cannot fault, and the address is a live reference's.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
