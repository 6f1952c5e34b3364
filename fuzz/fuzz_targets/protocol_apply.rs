//! Fuzzes validation and application of protocol-025 operations against a small state (Octez's
//! mockup genesis: five revealed bootstrap accounts): no input may panic, and an operation
//! refused by validation leaves the state exactly as it was (same context hash).
//!
//! The input's first byte picks a bootstrap account; the rest is decoded as a signed operation.
//! It is validated and applied as given (its signature almost never verifies, so this exercises
//! the refusal paths), then simulated (no signature check) with every manager content's source
//! set to the picked account and its counters made consecutive from the account's next, so that
//! arbitrary contents (transfers, originations with fuzzed scripts, calls, delegations) reach
//! application.

#![no_main]

use std::sync::OnceLock;

use kestrel_crypto::PublicKeyHash;
use kestrel_protocol::field::BoundedNat;
use kestrel_protocol::{
    validate_and_apply, BlockContext, Contents, Genesis, Ledger, Mode, SignedOperation,
};
use libfuzzer_sys::fuzz_target;

/// The genesis state and its bootstrap accounts, built once.
fn genesis() -> &'static (Ledger, Vec<PublicKeyHash>) {
    static GENESIS: OnceLock<(Ledger, Vec<PublicKeyHash>)> = OnceLock::new();
    GENESIS.get_or_init(|| {
        let genesis = Genesis::mockup();
        let accounts = genesis
            .accounts
            .iter()
            .map(|account| account.public_key.hash())
            .collect();
        let ledger = Ledger::genesis(&genesis).expect("the mockup genesis builds");
        (ledger, accounts)
    })
}

fn block(producer: PublicKeyHash) -> BlockContext {
    BlockContext {
        level: 1,
        timestamp_seconds: 1,
        chain_id: kestrel_crypto::ChainId::new([0; 4]),
        payload_producer: producer,
    }
}

/// Validates and applies `operation` on a copy of `ledger` in `mode`; a refused operation must
/// leave the copy unchanged.
fn check(ledger: &Ledger, operation: &SignedOperation<'_>, block: &BlockContext, mode: Mode) {
    let mut copy = ledger.clone();
    let before = copy.tree().hash();
    if validate_and_apply(&mut copy, operation, block, mode).is_err() {
        assert_eq!(
            copy.tree().hash(),
            before,
            "a refused operation changed the state"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let (ledger, accounts) = genesis();
    let source = accounts[usize::from(pick) % accounts.len()];
    let block = block(accounts[0]);
    let Ok(signed) = SignedOperation::decode(bytes) else {
        return;
    };
    check(ledger, &signed, &block, Mode::Apply);
    let Ok(Some(counter)) = ledger.counter(&source) else {
        return;
    };
    let mut operation = signed.operation.clone();
    let mut next = counter;
    for content in &mut operation.contents {
        if let Contents::Manager(manager) = content {
            next += 1;
            manager.header.source = source;
            manager.header.counter = BoundedNat(next);
        }
    }
    let simulated = SignedOperation {
        operation,
        bytes: signed.bytes,
        unsigned_size_bytes: signed.unsigned_size_bytes,
    };
    check(ledger, &simulated, &block, Mode::Simulate);
});
