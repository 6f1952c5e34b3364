//! Throughput of `kestrel-protocol`'s application: blocks of 1,000 signed FA1.2 `transfer`
//! calls (TZIP-7's reference contract, `michelson/mini_scenarios/fa12_reference.tz`) from 500
//! revealed accounts (two each, consecutive counters), each operation decoded, validated (counter, fees, limits, its
//! ed25519 signature), applied (fee, Michelson run with Octez's gas, big-map update, storage
//! accounting) and the block's state committed once to a `kestrel_context::Store` on disk.
//! Signing happens in criterion's setup, outside the measurement.
//!
//! No peer runs here: Octez's own figures are the comparison (BENCHMARKS.md).

// criterion's `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::cell::RefCell;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use kestrel_context::{CommitInfo, ContextHash, InMemory, Store, StoreOptions};
use kestrel_crypto::{BlockHash, ChainId, Destination, Entrypoint, PublicKeyHash, SecretKey};
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::field::BoundedNat;
use kestrel_protocol::ledger::Manager;
use kestrel_protocol::manager::{ManagerHeader, Origination, Transaction};
use kestrel_protocol::receipt::{ContentsMetadata, ManagerResult, OperationResult};
use kestrel_protocol::script::{LazyExpr, Parameters, Script};
use kestrel_protocol::{
    validate_and_apply, BlockContext, Contents, Genesis, Ledger, ManagerKind, ManagerOperation,
    Mode, Mutez, Operation, SignedOperation,
};

/// Token holders (their big map must fit an origination's 60,000-byte storage limit); each
/// sends two transfers per block.
const ACCOUNTS: usize = 500;
const OPERATIONS_PER_BLOCK: usize = 1_000;
const BRANCH: &str = "BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2";
const CHAIN_ID: &str = "NetXdQprcVkpaWU";
const BOOTSTRAP1: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
/// An FA1.2 transfer's limits, with room (it consumes about 2,700 gas).
const GAS_LIMIT: u128 = 10_000;
const STORAGE_LIMIT: u128 = 100;
const FEE_MUTEZ: u64 = 2_000;

/// The chain: state, accounts, the token contract, the store.
struct Chain {
    ledger: Ledger,
    store: Store,
    head: Option<ContextHash>,
    accounts: Vec<SecretKey>,
    token: Destination,
    level: u64,
}

fn account(index: usize) -> SecretKey {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(index as u64 + 1).to_be_bytes());
    let text = kestrel_crypto::base58::encode_check(kestrel_crypto::base58::ED25519_SEED, &seed);
    SecretKey::from_b58check(&text).expect("seed key")
}

/// Signs `contents` with `key`.
fn sign(key: &SecretKey, contents: Vec<Contents<'static>>) -> Vec<u8> {
    let operation = Operation {
        branch: BlockHash::from_b58check(BRANCH).expect("branch"),
        contents,
        signature: None,
    };
    let mut bytes = operation.encode_unsigned();
    let mut message = vec![3];
    message.extend_from_slice(&bytes);
    bytes.extend_from_slice(key.sign(&message).as_bytes());
    bytes
}

fn header(key: &SecretKey, counter: u128, gas: u128, storage: u128) -> ManagerHeader {
    ManagerHeader {
        source: key.public_key().hash(),
        fee: Mutez(FEE_MUTEZ),
        counter: BoundedNat(counter),
        gas_limit: BoundedNat(gas),
        storage_limit: BoundedNat(storage),
    }
}

/// A script's text (`toplevel`) or a value's, as binary Micheline with macros expanded.
fn lazy(text: &str, toplevel: bool) -> LazyExpr<'static> {
    let node = if toplevel {
        kestrel_micheline::parse_toplevel(text)
    } else {
        kestrel_micheline::parse_expression(text)
    };
    let node = kestrel_michelson::expand_macros(&node.expect("Micheline")).expect("macros");
    LazyExpr(std::borrow::Cow::Owned(
        kestrel_micheline::binary::encode(&node).expect("encodes"),
    ))
}

fn block(level: u64) -> BlockContext {
    BlockContext {
        level,
        timestamp_seconds: 1_700_000_000 + level as i64,
        chain_id: ChainId::from_b58check(CHAIN_ID).expect("chain id"),
        payload_producer: account(0).public_key().hash(),
    }
}

/// Genesis, the accounts funded and revealed, the token originated with a balance for each.
fn chain() -> Chain {
    let mut ledger = Ledger::from_tree(
        Ledger::genesis(&Genesis::mockup())
            .expect("genesis")
            .tree()
            .clone(),
        Arc::new(InMemory),
        Genesis::mockup().constants,
    );
    let accounts: Vec<SecretKey> = (0..ACCOUNTS).map(account).collect();
    for key in &accounts {
        let hash = key.public_key().hash();
        ledger.allocate_implicit(&hash).expect("allocate");
        ledger
            .set_balance(&Destination::Implicit(hash), 1_000_000_000)
            .expect("fund");
        let manager = Manager::PublicKey(Box::new(key.public_key()));
        ledger.set_manager(&hash, &manager).expect("reveal");
    }
    let token = originate_token(&mut ledger, &accounts);
    let directory =
        std::env::temp_dir().join(format!("kestrel-bench-apply-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let store = Store::open(&directory, StoreOptions::default()).expect("store");
    Chain {
        ledger,
        store,
        head: None,
        accounts,
        token,
        level: 2,
    }
}

fn originate_token(ledger: &mut Ledger, accounts: &[SecretKey]) -> Destination {
    let path = kestrel_testdata::testdata_dir().join("michelson/mini_scenarios/fa12_reference.tz");
    let code = std::fs::read_to_string(&path).expect("fa12_reference.tz (set KESTREL_TESTDATA)");
    let mut holders: Vec<PublicKeyHash> =
        accounts.iter().map(|key| key.public_key().hash()).collect();
    holders.sort_by_key(|hash| hash.to_bytes());
    let ledger_entries: Vec<String> = holders
        .iter()
        .map(|hash| format!("Elt \"{}\" (Pair 1000000 {{}})", hash.to_b58check()))
        .collect();
    let admin = SecretKey::from_b58check(BOOTSTRAP1).expect("bootstrap1");
    let storage = format!(
        "Pair {{ {} }} (Pair \"{}\" (Pair False {}))",
        ledger_entries.join(" ; "),
        admin.public_key().hash().to_b58check(),
        1_000_000 * ACCOUNTS
    );
    let origination = ManagerKind::Origination(Origination {
        balance: Mutez(0),
        delegate: None,
        script: Script {
            code: lazy(&code, true),
            storage: lazy(&storage, false),
        },
    });
    let contents = vec![Contents::Manager(ManagerOperation {
        header: header(&admin, 1, 1_040_000, 60_000),
        operation: origination,
    })];
    let bytes = sign(&admin, contents);
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    let metadata = validate_and_apply(ledger, &signed, &block(1), Mode::Apply).expect("valid");
    let ContentsMetadata::Manager(manager) = &metadata[0] else {
        panic!("manager metadata");
    };
    match &manager.operation_result {
        ManagerResult::Origination(OperationResult::Applied(result)) => {
            Destination::Originated(result.originated_contracts[0])
        }
        other => panic!("origination failed: {other:?}"),
    }
}

/// One block of signed transfers: account i sends 1 token to account i + 1, twice.
fn signed_block(chain: &Chain) -> Vec<Vec<u8>> {
    (0..OPERATIONS_PER_BLOCK)
        .map(|index| {
            let key = &chain.accounts[index % ACCOUNTS];
            let from = key.public_key().hash();
            let to = chain.accounts[(index + 1) % ACCOUNTS].public_key().hash();
            let counter = chain.ledger.counter(&from).expect("counter").unwrap_or(0)
                + 1
                + (index / ACCOUNTS) as u128;
            let argument = format!(
                "Pair \"{}\" (Pair \"{}\" 1)",
                from.to_b58check(),
                to.to_b58check()
            );
            let transfer = ManagerKind::Transaction(Transaction {
                amount: Mutez(0),
                destination: Contract(chain.token),
                parameters: Some(Parameters {
                    entrypoint: Entrypoint::try_new("transfer").expect("entrypoint"),
                    value: lazy(&argument, false),
                }),
            });
            let contents = vec![Contents::Manager(ManagerOperation {
                header: header(key, counter, GAS_LIMIT, STORAGE_LIMIT),
                operation: transfer,
            })];
            sign(key, contents)
        })
        .collect()
}

/// Decodes, validates and applies every operation, then commits the block.
fn apply_block(chain: &mut Chain, operations: &[Vec<u8>]) {
    let block = block(chain.level);
    for bytes in operations {
        let signed = SignedOperation::decode(bytes).expect("decodes");
        let metadata = validate_and_apply(&mut chain.ledger, &signed, &block, Mode::Apply)
            .expect("valid operation");
        debug_assert!(matches!(
            &metadata[0],
            ContentsMetadata::Manager(manager)
                if matches!(manager.operation_result, ManagerResult::Transaction(OperationResult::Applied(_)))
        ));
    }
    let info = CommitInfo {
        date_seconds: block.timestamp_seconds,
        author: "Tezos".into(),
        message: format!("level {}", chain.level),
    };
    let parents: Vec<ContextHash> = chain.head.into_iter().collect();
    chain.head = Some(
        chain
            .store
            .commit(chain.ledger.tree(), &parents, &info)
            .expect("commit"),
    );
    chain.level += 1;
}

fn fa12_transfers(c: &mut Criterion) {
    let chain = RefCell::new(chain());
    // The first block applied must succeed entirely: every transfer applied.
    let first = signed_block(&chain.borrow());
    check_applied(&mut chain.borrow_mut(), &first);
    let mut group = c.benchmark_group("protocol_apply");
    group.throughput(Throughput::Elements(OPERATIONS_PER_BLOCK as u64));
    group.sample_size(10);
    group.bench_function("fa12_transfer_blocks_of_1000", |b| {
        b.iter_batched(
            || signed_block(&chain.borrow()),
            |operations| apply_block(&mut chain.borrow_mut(), &operations),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Applies `operations` as a block, asserting each transfer was applied.
fn check_applied(chain: &mut Chain, operations: &[Vec<u8>]) {
    let block = block(chain.level);
    for bytes in operations {
        let signed = SignedOperation::decode(bytes).expect("decodes");
        let metadata =
            validate_and_apply(&mut chain.ledger, &signed, &block, Mode::Apply).expect("valid");
        let ContentsMetadata::Manager(manager) = &metadata[0] else {
            panic!("manager metadata");
        };
        assert!(
            matches!(
                manager.operation_result,
                ManagerResult::Transaction(OperationResult::Applied(_))
            ),
            "transfer not applied: {:?}",
            manager.operation_result
        );
    }
    chain.level += 1;
}

criterion_group!(benches, fa12_transfers);
criterion_main!(benches);
