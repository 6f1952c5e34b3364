//! Diagnostics: where a replay's resident memory goes. Runs the synthetic replay
//! (`kestrel_context_replay::workload::replay`) under mimalloc (the `kestrel` binary's allocator) wrapped
//! in a counter of the bytes the program has asked for and not freed yet (the live heap), and
//! every `INTERVAL` blocks prints, side by side: the resident set (`VmRSS`), the live heap, and
//! the store's own estimates of what it holds (object cache, retired objects, retained tree,
//! buffers). Live heap against estimates is the estimate's error; resident set against live heap
//! is the allocator's overhead and fragmentation.
//!
//! Usage: `cargo run --release -p kestrel-context-replay --example replay_heap -- BLOCKS [INTERVAL]
//! [CACHE_MIB] [clock|lru|two-generations] [unified|separate] [RETAIN_MIB]` (store in a temporary directory, removed).

#![allow(unsafe_code)]

use kestrel_context::cache::CachePolicy;
use kestrel_context::{StoreOptions, SyncMode};
use kestrel_context_replay::workload::{self, ReplayOptions};
use std::alloc::{GlobalAlloc, Layout};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// mimalloc with a count of the bytes allocated and not freed (requested sizes).
struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

// SAFETY: every method forwards its arguments unchanged to mimalloc's `GlobalAlloc`, whose
// contract is the caller's; the counter is only arithmetic on the layout sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received (see the impl).
        unsafe { INNER.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received (see the impl).
        unsafe { INNER.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received (see the impl).
        unsafe { INNER.dealloc(pointer, layout) }
    }
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as received (see the impl).
        let moved = unsafe { INNER.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let number = |index: usize, default: u64| -> Option<u64> {
        arguments
            .get(index)
            .map_or(Some(default), |text| text.parse().ok())
    };
    let (Some(blocks), Some(interval), Some(cache_mib)) =
        (number(0, 10_000), number(1, 1000), number(2, 96))
    else {
        eprintln!("usage: replay_heap BLOCKS [INTERVAL] [CACHE_MIB] [POLICY]");
        return ExitCode::from(2);
    };
    let policy = match arguments.get(3).map(String::as_str) {
        None | Some("two-generations") => CachePolicy::TwoGenerations,
        Some("clock") => CachePolicy::Clock,
        Some("lru") => CachePolicy::Lru,
        Some(other) => {
            eprintln!("unknown policy {other}");
            return ExitCode::from(2);
        }
    };
    let options = ReplayOptions {
        blocks,
        operations_per_block: workload::OPERATIONS_PER_BLOCK_EARLY,
        seed: 1,
        initial_contracts: workload::INITIAL_CONTRACTS_DEFAULT,
        store_options: StoreOptions {
            sync_mode: SyncMode::Checkpoints,
            cache_budget_bytes: (cache_mib as usize) << 20,
            cache_policy: policy,
            cache_budget_includes_retained: arguments.get(4).is_some_and(|flag| flag == "unified"),
            retained_written_bytes_max: arguments
                .get(5)
                .and_then(|mib| mib.parse::<u64>().ok())
                .map(|mib| mib << 20),
            ..StoreOptions::default()
        },
        time_limit: None,
        memory_sample_interval_blocks: Some(interval.max(1)),
    };
    let directory =
        std::env::temp_dir().join(format!("kestrel-replay-heap-{}", std::process::id()));
    // The replay takes its memory sample right before it reports the block done, so the live
    // heap read here is the same moment's.
    let mut live = Vec::new();
    let result = workload::replay(&directory, &options, |level| {
        if level % interval.max(1) == 0 {
            live.push(LIVE_BYTES.load(Ordering::Relaxed));
        }
    });
    let _ = std::fs::remove_dir_all(&directory);
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let mib = |bytes: u64| bytes as f64 / 1048576.0;
    println!("| level | RSS | live heap | RSS − live | cache held (est.) | retired (est.) | retained tree (est.) | buffers | estimates total | live − estimates |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (sample, live) in report.memory_samples.iter().zip(live) {
        let store = &sample.store;
        let buffers = store.read_buffer_bytes + store.write_buffer_bytes + store.hash_buffer_bytes;
        let estimates = store.cache.held_bytes
            + store.cache.retired_bytes
            + store.retained_estimated_bytes
            + buffers;
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            sample.level,
            mib(sample.resident_bytes),
            mib(live as u64),
            mib(sample.resident_bytes) - mib(live as u64),
            mib(store.cache.held_bytes as u64),
            mib(store.cache.retired_bytes as u64),
            mib(store.retained_estimated_bytes as u64),
            mib(buffers as u64),
            mib(estimates as u64),
            mib(live as u64) - mib(estimates as u64),
        );
    }
    println!(
        "\npeak RSS {:.1} MiB, objects read {}",
        mib(workload::peak_resident_bytes().unwrap_or(0)),
        report.statistics.objects_read
    );
    ExitCode::SUCCESS
}
