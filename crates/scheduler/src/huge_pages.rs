//! Transparent huge pages for the scheduler's large tables: a hint to the kernel that a buffer's
//! memory, not yet touched, be backed by 2 MiB pages.
//!
//! Why: a window of 100,000 transactions over a million accounts fills some 130 MB of account
//! rows, index slots and lock-queue nodes. With 4 KiB pages each first touch of a page is a page
//! fault; on the benchmark VM the faults (with their zeroing, memory-cgroup charging and, at the
//! end, unmapping) took a third of such a window's CPU time, and the index rebuild and row copies
//! of a growing table fault again. With 2 MiB pages a fault covers 512 times the memory and the
//! TLB reaches as far. The kernel zeroes the same bytes either way.
//!
//! The hint is `madvise(MADV_HUGEPAGE)` (Linux; the system's `transparent_hugepage` setting
//! `always` or `madvise` honours it, `never` ignores it). It changes no byte of the buffer and no
//! result: at worst it is ignored. Buffers below `ADVISED_BYTES` are left alone. On other systems
//! it does nothing. The crate's second `unsafe` block (after `prefetch`).

#![allow(unsafe_code)]

/// The x86-64 and aarch64 (4 KiB granule) huge-page size.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Buffers from this size on are advised: glibc's allocator maps them fresh from the system
/// (its dynamic mmap threshold stops growing at 32 MiB), so their pages are faulted in anew
/// each time. Smaller ones it may serve from memory already faulted in, which huge pages would
/// only split and compact (measured: 10,000-transaction windows slower when advised).
const ADVISED_BYTES: usize = 32 << 20;

/// Asks for huge pages behind the whole huge pages that `vector`'s allocated capacity spans. No
/// effect on results.
pub(crate) fn advise<T>(vector: &Vec<T>) {
    let bytes = vector.capacity().saturating_mul(core::mem::size_of::<T>());
    if bytes < ADVISED_BYTES {
        return;
    }
    let start = vector.as_ptr() as usize;
    let first = start.next_multiple_of(HUGE_PAGE_BYTES);
    let end = (start + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > first {
        advise_range(first, end - first);
    }
}

#[cfg(target_os = "linux")]
fn advise_range(start: usize, length: usize) {
    // SAFETY: the caller passes a range inside a live allocation (a vector's capacity rounded
    // inward to whole huge pages, so page-aligned as `madvise` requires). `MADV_HUGEPAGE` only
    // tells the kernel which page size to back the range with: the memory's contents, mapping and
    // protection are unchanged, so no reference into the buffer is affected. Its result is
    // ignored on purpose: a kernel without transparent huge pages refuses, and nothing changes.
    unsafe {
        libc::madvise(start as *mut libc::c_void, length, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_range(_start: usize, _length: usize) {}
