//! A deterministic driver for instruction-count profiling of transaction parsing (callgrind,
//! `perf stat -e instructions`), because wall and CPU time on the shared benchmark machine are too
//! noisy to compare small changes. Not a criterion benchmark: it parses the 308-transaction
//! mainnet corpus `ROUNDS` times with one parser and prints a checksum.
//!
//! Usage: `txview_instructions PARSER ROUNDS [atls|transfers|transfer|min]` (`atls`: 1024 v0
//! transactions with 31 lookup tables, Agave's "packed atls" shape; `transfers`: 1024 legacy
//! transactions of 60 transfers, its "packed transfers" shape; `transfer`: one transfer; `min`: no
//! instruction; default: the mainnet corpus) where PARSER is one of `kestrel-unsanitized`,
//! `kestrel-sanitized`, `agave-unsanitized`, `agave-sanitized`, `none` (loads the corpus only, to
//! subtract the fixed cost). Build with `cargo build --release -p kestrel-bench --bench
//! txview_instructions` (release profile: no fat LTO, so builds stay short).

#![allow(missing_docs)]

use agave_transaction_view::sanitize::SanitizeConfig as AgaveConfig;
use agave_transaction_view::transaction_view::TransactionView as AgaveView;
use kestrel_txview::{
    AddressTableLookupSpec, InstructionSpec, MessageHeader, SanitizeConfig,
    SanitizedTransactionView, Transaction, TransactionVersion, UnsanitizedTransactionView,
};
use std::hint::black_box;

const AGAVE_CONFIG: AgaveConfig = AgaveConfig {
    min_requested_heap_size: 32 * 1024,
    max_requested_heap_size: 256 * 1024,
    max_instructions: 64,
    max_accounts_per_instruction: 255,
};

#[inline(never)]
fn kestrel_unsanitized(transactions: &[Vec<u8>]) -> usize {
    let mut accepted = 0;
    for bytes in transactions {
        let view = UnsanitizedTransactionView::try_new_unsanitized(black_box(&bytes[..]));
        accepted += usize::from(view.is_ok());
        let _ = black_box(view);
    }
    accepted
}

#[inline(never)]
fn kestrel_sanitized(transactions: &[Vec<u8>]) -> usize {
    let mut accepted = 0;
    for bytes in transactions {
        let view = SanitizedTransactionView::try_new_sanitized(
            black_box(&bytes[..]),
            &SanitizeConfig::MAINNET,
        );
        accepted += usize::from(view.is_ok());
        let _ = black_box(view);
    }
    accepted
}

#[inline(never)]
fn agave_unsanitized(transactions: &[Vec<u8>]) -> usize {
    let mut accepted = 0;
    for bytes in transactions {
        let view = AgaveView::try_new_unsanitized(black_box(&bytes[..]));
        accepted += usize::from(view.is_ok());
        let _ = black_box(view);
    }
    accepted
}

#[inline(never)]
fn agave_sanitized(transactions: &[Vec<u8>]) -> usize {
    let mut accepted = 0;
    for bytes in transactions {
        let view = AgaveView::try_new_sanitized(black_box(&bytes[..]), &AGAVE_CONFIG);
        accepted += usize::from(view.is_ok());
        let _ = black_box(view);
    }
    accepted
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let parser = arguments
        .next()
        .unwrap_or_else(|| "kestrel-sanitized".into());
    let rounds: usize = arguments
        .next()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1000);
    let shape = arguments.next();
    let transactions: Vec<Vec<u8>> = if shape.as_deref() == Some("atls") {
        packed_lookup_tables()
    } else if shape.as_deref() == Some("transfers") {
        packed_transfers(60)
    } else if shape.as_deref() == Some("transfer") {
        packed_transfers(1)
    } else if shape.as_deref() == Some("min") {
        packed_transfers(0)
    } else {
        let Some(path) =
            kestrel_testdata::require("solana/mainnet-legacy-308.hex", "txview driver")
        else {
            return;
        };
        std::fs::read_to_string(path)
            .map(|text| {
                text.lines()
                    .filter_map(|line| hex::decode(line.trim()).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let run: fn(&[Vec<u8>]) -> usize = match parser.as_str() {
        "kestrel-unsanitized" => kestrel_unsanitized,
        "kestrel-sanitized" => kestrel_sanitized,
        "agave-unsanitized" => agave_unsanitized,
        "agave-sanitized" => agave_sanitized,
        _ => |_| 0,
    };
    let mut accepted = 0;
    for _ in 0..rounds {
        accepted += run(black_box(&transactions));
    }
    println!("{parser}: {accepted} accepted over {rounds} rounds");
}

/// 1024 legacy transactions of `num_transfers` system transfers each (60: Agave's "packed
/// transfers" shape; 1: its "simple transfers"; 0: close to its "min sized", with two more keys).
fn packed_transfers(num_transfers: usize) -> Vec<Vec<u8>> {
    (0..1024u32)
        .map(|seed| {
            let key = |salt: u32| {
                let mut key = [0u8; 32];
                key[..4].copy_from_slice(&(seed * 64 + salt).to_le_bytes());
                key
            };
            let transfer = InstructionSpec {
                program_id_index: 2,
                accounts: vec![0, 1],
                data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
            };
            let mut transaction = Transaction::new(
                TransactionVersion::Legacy,
                MessageHeader {
                    num_required_signatures: 1,
                    num_readonly_signed_accounts: 0,
                    num_readonly_unsigned_accounts: 1,
                },
                vec![key(0), key(1), [0; 32]],
                [0; 32],
                vec![transfer; num_transfers],
            );
            transaction.signatures = vec![[7; 64]];
            transaction.serialize()
        })
        .collect()
}

/// 1024 v0 transactions with one signature, one static key and 31 lookup tables of one writable
/// index each (key values do not affect parsing cost).
fn packed_lookup_tables() -> Vec<Vec<u8>> {
    (0..1024u32)
        .map(|seed| {
            let key = |salt: u32| {
                let mut key = [0u8; 32];
                key[..4].copy_from_slice(&(seed * 64 + salt).to_le_bytes());
                key
            };
            let mut transaction = Transaction::new(
                TransactionVersion::V0,
                MessageHeader {
                    num_required_signatures: 1,
                    num_readonly_signed_accounts: 0,
                    num_readonly_unsigned_accounts: 0,
                },
                vec![key(0)],
                [0; 32],
                vec![],
            );
            transaction.address_table_lookups = (1..32)
                .map(|salt| AddressTableLookupSpec {
                    account_key: key(salt),
                    writable_indexes: vec![0],
                    readonly_indexes: vec![],
                })
                .collect();
            transaction.signatures = vec![[7; 64]];
            transaction.serialize()
        })
        .collect()
}
