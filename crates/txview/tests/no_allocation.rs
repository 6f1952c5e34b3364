//! Parsing, sanitizing, resolving and iterating every field of a transaction performs no heap
//! allocation: a counting global allocator sees zero allocations across all of it, for legacy, v0
//! and v1 transactions and the mainnet corpus. One test function only, so no other test thread
//! allocates while the counter is read.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]
// A global allocator cannot be written without `unsafe`; this test binary only counts calls and
// forwards them to the system allocator.
#![allow(unsafe_code)]

use kestrel_txview::{
    AddressTableLookupSpec, InstructionSpec, LoadedAddresses, MessageHeader,
    ResolvedTransactionView, SanitizeConfig, SanitizedTransactionView, Transaction,
    TransactionConfig, TransactionVersion, UnsanitizedTransactionView,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` came from `System.alloc` with this layout.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as for `dealloc`; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Touches every byte every accessor exposes, and returns a checksum so nothing is optimized out.
fn walk_everything(
    bytes: &[u8],
    loaded_writable: &[[u8; 32]],
    loaded_readonly: &[[u8; 32]],
) -> u64 {
    let mut checksum = 0u64;
    let mut add = |slice: &[u8]| {
        checksum = slice.iter().fold(checksum, |sum, &byte| {
            sum.wrapping_mul(31).wrapping_add(u64::from(byte))
        })
    };
    let view = UnsanitizedTransactionView::try_new_unsanitized(bytes).expect("parses");
    view.check_sanitized(&SanitizeConfig::MAINNET)
        .expect("sanitizes");
    let (prefix_view, length) =
        UnsanitizedTransactionView::try_new_unsanitized_from_prefix(bytes).expect("parses");
    assert_eq!(length, bytes.len());
    add(prefix_view.data());
    let view = view.sanitize(&SanitizeConfig::MAINNET).expect("sanitizes");
    let view_again = SanitizedTransactionView::try_new_sanitized(bytes, &SanitizeConfig::MAINNET)
        .expect("sanitizes");
    add(view_again.message_data());
    for signature in view.signatures() {
        add(signature);
    }
    for key in view.static_account_keys() {
        add(key);
    }
    add(view.recent_blockhash());
    for instruction in view.instructions_iter() {
        add(&[instruction.program_id_index]);
        add(instruction.accounts);
        add(instruction.data);
    }
    for (program, instruction) in view.program_instructions_iter() {
        add(program);
        add(instruction.data);
    }
    for lookup in view.address_table_lookup_iter() {
        add(lookup.account_key);
        add(lookup.writable_indexes);
        add(lookup.readonly_indexes);
    }
    if let Some(config) = view.transaction_config() {
        add(&config.priority_fee_lamports().unwrap_or(0).to_le_bytes());
        add(&config.compute_unit_limit().unwrap_or(0).to_le_bytes());
        add(&config.requested_heap_size().unwrap_or(0).to_le_bytes());
    }
    let loaded = LoadedAddresses {
        writable: loaded_writable,
        readonly: loaded_readonly,
    };
    let resolved = ResolvedTransactionView::try_new(view, Some(loaded), |key| key == &[0; 32])
        .expect("resolves");
    for (index, key) in resolved.account_keys().enumerate() {
        add(key);
        let role = resolved.account_role(index).expect("in range");
        add(&[u8::from(role.signer), u8::from(role.writable)]);
    }
    checksum
}

fn sample_transactions() -> Vec<(Vec<u8>, usize, usize)> {
    let mut legacy = Transaction::new(
        TransactionVersion::Legacy,
        MessageHeader {
            num_required_signatures: 2,
            num_readonly_signed_accounts: 1,
            num_readonly_unsigned_accounts: 1,
        },
        (1..=5).map(|n| [n; 32]).collect(),
        [7; 32],
        (0..64)
            .map(|n| InstructionSpec {
                program_id_index: 4,
                accounts: vec![0, 1, 2, 3],
                data: vec![n as u8; n % 7],
            })
            .collect(),
    );
    legacy.signatures = vec![[3; 64], [4; 64]];
    let mut v0 = legacy.clone();
    v0.version = TransactionVersion::V0;
    v0.instructions.truncate(3);
    v0.address_table_lookups = vec![
        AddressTableLookupSpec {
            account_key: [9; 32],
            writable_indexes: vec![1, 2],
            readonly_indexes: vec![3],
        },
        AddressTableLookupSpec {
            account_key: [10; 32],
            writable_indexes: vec![],
            readonly_indexes: vec![4, 5, 6],
        },
    ];
    let mut v1 = legacy.clone();
    v1.version = TransactionVersion::V1;
    v1.config = TransactionConfig {
        priority_fee_lamports: Some(5000),
        compute_unit_limit: Some(200_000),
        loaded_accounts_data_size_limit: None,
        requested_heap_size: Some(64 * 1024),
    };
    vec![
        (legacy.serialize(), 0, 0),
        (v0.serialize(), 2, 4),
        (v1.serialize(), 0, 0),
    ]
}

#[test]
fn parse_sanitize_resolve_and_iterate_allocate_nothing() {
    let mut inputs = sample_transactions();
    if let Some(path) = kestrel_testdata::require("solana/mainnet-legacy-308.hex", "no_allocation")
    {
        let text = std::fs::read_to_string(path).unwrap();
        inputs.extend(
            text.lines()
                .map(|line| (hex::decode(line.trim()).unwrap(), 0, 0)),
        );
    }
    let loaded_writable = vec![[1u8; 32]; 8];
    let loaded_readonly = vec![[2u8; 32]; 8];
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let mut checksum = 0u64;
    for (bytes, writable, readonly) in &inputs {
        checksum ^= walk_everything(
            bytes,
            &loaded_writable[..*writable],
            &loaded_readonly[..*readonly],
        );
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(allocations, 0, "allocations during parse/sanitize/iterate");
    assert_ne!(checksum, 0);
    // The counter works: a Vec allocates.
    let counted = ALLOCATIONS.load(Ordering::SeqCst);
    let vector = std::hint::black_box(vec![1u8; 10]);
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > counted);
    drop(vector);
}
