//! The public API end to end, as data: each case is a script, a storage and a parameter, and the
//! expected outcome written as text ([`render`]: the storage, one line per operation and per
//! big-map change, or the error). [`check`] runs a case through `Script::typecheck` and `execute`
//! over [`TestHost`], which serves stored big maps one key at a time and counts the reads.

use kestrel_micheline::Node;
use kestrel_michelson::{
    big_map_key_hash, execute, normalize, parse_type, run_view, BigMapDiff, BigMapDiffAction,
    BigMapInit, BigMapTypes, Config, Destination, Environment, Execution, ExecutionError, FreshIds,
    Host, HostView, Int, InternalOperation, KeyHash, Script, StoredRead, UnparsingMode, Value,
    HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use std::cell::Cell;
use std::collections::BTreeMap;

/// Stored big map 0, of type `big_map nat string`, holds `1 -> "one"` and `2 -> "two"`.
struct TestHost {
    big_map: BTreeMap<[u8; 32], Node>,
    reads: Cell<usize>,
    fresh: FreshIds,
    /// Milligas the store charges for a lookup, and besides it for reading a bound value.
    lookup_cost_milli: u64,
    read_cost_milli: u64,
}

fn expression(text: &str) -> Node {
    kestrel_micheline::parse_expression(text).expect("test data parses")
}

fn nat_string_types() -> BigMapTypes {
    BigMapTypes {
        key_type: parse_type(&expression("nat")).expect("type"),
        value_type: parse_type(&expression("string")).expect("type"),
    }
}

impl TestHost {
    fn new() -> TestHost {
        let key_type = nat_string_types().key_type;
        let big_map = [(1_u64, "\"one\""), (2, "\"two\"")]
            .into_iter()
            .map(|(key, value)| {
                (
                    big_map_key_hash(&Value::nat(key), &key_type),
                    expression(value),
                )
            })
            .collect();
        TestHost {
            big_map,
            reads: Cell::new(0),
            fresh: FreshIds::new(10),
            lookup_cost_milli: 0,
            read_cost_milli: 0,
        }
    }
}

impl Host for TestHost {
    fn big_map_types(&self, id: &Int) -> StoredRead<Option<BigMapTypes>> {
        StoredRead::free((*id == Int::from(0)).then(nat_string_types))
    }
    fn big_map_value(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<Option<Node>> {
        self.reads.set(self.reads.get() + 1);
        let value = (*id == Int::from(0))
            .then(|| self.big_map.get(key_hash).cloned())
            .flatten();
        let read = if value.is_some() {
            self.read_cost_milli
        } else {
            0
        };
        StoredRead {
            value,
            cost_milli: self.lookup_cost_milli + read,
        }
    }
    fn big_map_mem(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<bool> {
        self.reads.set(self.reads.get() + 1);
        StoredRead {
            value: *id == Int::from(0) && self.big_map.contains_key(key_hash),
            cost_milli: self.lookup_cost_milli,
        }
    }
    fn contract_parameter(&self, _: &Destination) -> Option<Node> {
        None
    }
    fn view(&self, _: &Destination, _: &str) -> Option<HostView> {
        None
    }
    fn voting_power(&self, _: &KeyHash) -> u64 {
        0
    }
    fn total_voting_power(&self) -> u64 {
        0
    }
    fn address_index(&self, _: &Destination) -> Option<u64> {
        None
    }
    fn index_address(&mut self, _: &Destination) -> u64 {
        0
    }
    fn fresh_big_map_id(&mut self) -> Int {
        self.fresh.big_map_id()
    }
    fn fresh_temporary_big_map_id(&mut self) -> Int {
        self.fresh.temporary_big_map_id()
    }
    fn fresh_contract_address(&mut self) -> Destination {
        self.fresh.contract_address()
    }
}

fn readable(value: &Value) -> String {
    kestrel_micheline::print::to_text_single_line(&normalize(value, UnparsingMode::Readable))
}

/// An outcome as text: `storage S`, then `operation ...` and `big_map ...` lines; or the error.
fn render(result: &Result<Execution, ExecutionError>) -> String {
    let execution = match result {
        Ok(execution) => execution,
        Err(ExecutionError::Failed { value, location }) => {
            return format!("failed {} at {location}", readable(value))
        }
        Err(ExecutionError::IllTypedData(_)) => return "ill-typed data".into(),
        Err(error) => return format!("error {error}"),
    };
    let mut lines = vec![format!("storage {}", readable(&execution.storage))];
    for operation in &execution.operations {
        lines.push(match operation {
            InternalOperation::Transaction {
                destination,
                amount_mutez,
                parameter,
                nonce,
                ..
            } => format!(
                "operation {nonce} transaction {} {amount_mutez} {}",
                destination.to_readable(),
                readable(parameter)
            ),
            InternalOperation::Origination {
                credit_mutez,
                storage,
                nonce,
                ..
            } => format!(
                "operation {nonce} origination {credit_mutez} {}",
                readable(storage)
            ),
            InternalOperation::Delegation { delegate, nonce } => format!(
                "operation {nonce} delegation {}",
                delegate.map_or("none".to_string(), |key| key.to_base58())
            ),
            InternalOperation::Event {
                tag,
                payload,
                nonce,
                ..
            } => format!("operation {nonce} event {tag} {}", readable(payload)),
        });
    }
    for BigMapDiff { id, action } in &execution.big_map_diff {
        match action {
            BigMapDiffAction::Remove => lines.push(format!("big_map {id} remove")),
            BigMapDiffAction::Update { init, updates } => {
                lines.push(match init {
                    BigMapInit::Existing => format!("big_map {id} existing"),
                    BigMapInit::Copy { source } => format!("big_map {id} copy {source}"),
                    BigMapInit::Alloc { .. } => format!("big_map {id} alloc"),
                });
                for update in updates {
                    lines.push(match &update.value {
                        Some(value) => format!(
                            "big_map {id} set {} {}",
                            readable(&update.key),
                            readable(value)
                        ),
                        None => format!("big_map {id} unset {}", readable(&update.key)),
                    });
                }
            }
        }
    }
    lines.join("\n")
}

/// Runs `script`'s default entrypoint on `storage` and `parameter` and compares the rendered
/// outcome with `expected`; returns the host to inspect its reads.
fn check(script: &str, storage: &str, parameter: &str, expected: &str) -> TestHost {
    check_entrypoint(script, "default", storage, parameter, expected)
}

fn check_entrypoint(
    script: &str,
    entrypoint: &str,
    storage: &str,
    parameter: &str,
    expected: &str,
) -> TestHost {
    let typed = Script::parse(script, &Config::default()).expect("test script typechecks");
    let mut host = TestHost::new();
    let result = execute(
        &typed,
        entrypoint,
        &expression(parameter),
        &expression(storage),
        &Environment::default(),
        &mut host,
        HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    );
    assert_eq!(render(&result), expected, "{script}");
    host
}

#[test]
fn storage_and_entrypoints() {
    check(
        "parameter nat; storage nat; code { UNPAIR; ADD; NIL operation; PAIR }",
        "1",
        "2",
        "storage 3",
    );
    let entrypoints = "parameter (or (nat %add) (nat %sub)); storage int; \
        code { UNPAIR; IF_LEFT { ADD } { SWAP; SUB }; NIL operation; PAIR }";
    check_entrypoint(entrypoints, "add", "10", "3", "storage 13");
    check_entrypoint(entrypoints, "sub", "10", "3", "storage 7");
    check_entrypoint(entrypoints, "default", "10", "Right 4", "storage 6");
    check_entrypoint(
        entrypoints,
        "mul",
        "10",
        "3",
        "error Contract has no entrypoint named mul",
    );
}

#[test]
fn errors_carry_the_failing_value() {
    check(
        "parameter string; storage unit; code { CAR; PUSH int 7; PAIR; FAILWITH }",
        "Unit",
        "\"boom\"",
        "failed Pair 7 \"boom\" at 12",
    );
    check(
        "parameter mutez; storage mutez; code { UNPAIR; ADD; NIL operation; PAIR }",
        "9223372036854775807",
        "1",
        "error unexpected arithmetic overflow",
    );
    check(
        "parameter nat; storage unit; code { CDR; NIL operation; PAIR }",
        "Unit",
        "-1",
        "ill-typed data",
    );
    check(
        "parameter unit; storage unit; code { DROP; PUSH bool True; LOOP { PUSH bool True }; UNIT; NIL operation; PAIR }",
        "Unit",
        "Unit",
        "error Gas limit exceeded during typechecking or execution.",
    );
}

#[test]
fn negative_mutez_in_the_environment_is_refused() {
    let script = Script::parse(
        "parameter unit; storage mutez; code { DROP; AMOUNT; NIL operation; PAIR }",
        &Config::default(),
    )
    .expect("test script typechecks");
    let run = |amount_mutez: i64| {
        let environment = Environment {
            amount_mutez,
            ..Environment::default()
        };
        render(&execute(
            &script,
            "default",
            &expression("Unit"),
            &expression("0"),
            &environment,
            &mut TestHost::new(),
            HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        ))
    };
    assert_eq!(run(12), "storage 12");
    assert_eq!(run(-1), "error invalid environment: negative amount");
}

#[test]
fn operations_in_order_with_their_nonces() {
    check(
        "parameter unit; storage unit; code { DROP; \
         NIL operation; \
         PUSH string \"hello\"; EMIT %greeting string; CONS; \
         NONE key_hash; SET_DELEGATE; CONS; \
         PUSH address \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\"; CONTRACT unit; ASSERT_SOME; \
         PUSH mutez 5; UNIT; TRANSFER_TOKENS; CONS; \
         UNIT; SWAP; PAIR }",
        "Unit",
        "Unit",
        "storage Unit\n\
         operation 2 transaction tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx 5 Unit\n\
         operation 1 delegation none\n\
         operation 0 event greeting \"hello\"",
    );
}

#[test]
fn big_map_diffs_in_octez_shape() {
    // Octez's order (`extract_lazy_storage_diff`): removals first, then the big maps from the
    // last met to the first, so a copy is taken before the original's updates apply; a big
    // map's updates from the highest key hash down (`diff_of_big_map`).
    // A literal big map is allocated a fresh id, with its bindings set.
    check(
        "parameter unit; storage (big_map nat string); code { CDR; NIL operation; PAIR }",
        "{ Elt 1 \"a\" }",
        "Unit",
        "storage 10\nbig_map 10 alloc\nbig_map 10 set 1 \"a\"",
    );
    // A stored big map updated in place: a binding added, one removed (`Unset`).
    let host = check(
        "parameter unit; storage (big_map nat string); \
         code { CDR; PUSH (option string) (Some \"three\"); PUSH nat 3; UPDATE; \
                NONE string; PUSH nat 1; UPDATE; NIL operation; PAIR }",
        "0",
        "Unit",
        "storage 0\nbig_map 0 existing\nbig_map 0 set 3 \"three\"\nbig_map 0 unset 1",
    );
    assert_eq!(host.reads.get(), 0, "UPDATE reads nothing");
    // A fresh big map keeps a removed binding as `Unset` (Octez's overlay binds it to
    // nothing rather than dropping it).
    check(
        "parameter unit; storage (big_map nat string); \
         code { DROP; EMPTY_BIG_MAP nat string; PUSH (option string) (Some \"two\"); \
                PUSH nat 2; UPDATE; NONE string; PUSH nat 2; UPDATE; NIL operation; PAIR }",
        "0",
        "Unit",
        "storage 10\nbig_map 0 remove\nbig_map 10 alloc\nbig_map 10 unset 2",
    );
    // Replaced by a new one: the old one is removed.
    check(
        "parameter unit; storage (big_map nat string); \
         code { DROP; EMPTY_BIG_MAP nat string; NIL operation; PAIR }",
        "0",
        "Unit",
        "storage 10\nbig_map 0 remove\nbig_map 10 alloc",
    );
    // Kept twice: the second occurrence is a copy.
    check(
        "parameter unit; storage (pair (big_map nat string) (big_map nat string)); \
         code { CDR; CAR; DUP; PAIR; NIL operation; PAIR }",
        "Pair 0 {}",
        "Unit",
        "storage Pair 0 10\nbig_map 10 copy 0\nbig_map 0 existing",
    );
}

/// An emitted origination's (or transfer's) big maps move to temporary ids, their diff before
/// the storage's (`create_contract` / `transfer` in `script_interpreter_defs.ml`:
/// `extract_lazy_storage_diff ~temporary:true`; `Script_interpreter.execute`'s
/// `lazy_storage_diff_all`): a stored one is copied with its pending changes, a fresh one
/// allocated, each under the next id from -1 down.
#[test]
fn emitted_big_maps_move_to_temporary_ids() {
    check(
        "parameter unit; storage (big_map nat string); \
         code { CDR; DUP; PUSH (option string) (Some \"x\"); PUSH nat 5; UPDATE; \
                PUSH mutez 0; NONE key_hash; \
                CREATE_CONTRACT { parameter unit; storage (big_map nat string); \
                                  code { CDR; NIL operation; PAIR } }; \
                SWAP; DROP; \
                EMPTY_BIG_MAP nat string; PUSH mutez 0; NONE key_hash; \
                CREATE_CONTRACT { parameter unit; storage (big_map nat string); \
                                  code { CDR; NIL operation; PAIR } }; \
                SWAP; DROP; NIL operation; SWAP; CONS; SWAP; CONS; PAIR }",
        "0",
        "Unit",
        "storage 0\n\
         operation 0 origination 0 -1\n\
         operation 1 origination 0 -2\n\
         big_map -1 copy 0\n\
         big_map -1 set 5 \"x\"\n\
         big_map -2 alloc\n\
         big_map 0 existing",
    );
}

#[test]
fn big_maps_are_read_one_key_at_a_time() {
    let host = check(
        "parameter nat; storage (pair (big_map nat string) (option string)); \
         code { UNPAIR; SWAP; CAR; DUP; DIG 2; GET; SWAP; PAIR; NIL operation; PAIR }",
        "Pair 0 None",
        "2",
        "storage Pair 0 (Some \"two\")\nbig_map 0 existing",
    );
    assert_eq!(host.reads.get(), 1);
}

/// Milligas `script` consumes on stored big map 0 with `parameter`, the store charging
/// `lookup` for a lookup and `read` besides for reading a bound value.
fn consumed_on_stored_map(script: &str, parameter: &str, lookup: u64, read: u64) -> u64 {
    let typed = Script::parse(script, &Config::default()).expect("test script typechecks");
    let mut host = TestHost::new();
    host.lookup_cost_milli = lookup;
    host.read_cost_milli = read;
    execute(
        &typed,
        "default",
        &expression(parameter),
        &expression("0"),
        &Environment::default(),
        &mut host,
        HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    )
    .expect("script runs")
    .consumed_milligas
}

/// A `GET` that reads a stored big map pays what the store charges, the value's
/// deserialization and its typechecking (`Script_big_map.get_by_hash`: `Big_map.get_opt` —
/// `Storage.Big_map.Contents.find`, carbonated, then `Script_repr.deserialized_cost` —, then
/// `parse_data`); a `MEM` pays the store's lookup only (`Big_map.mem`).
#[test]
fn stored_big_map_reads_are_charged() {
    let get = "parameter nat; storage (big_map nat string); \
               code { UNPAIR; DUP 2; SWAP; GET; DROP; NIL operation; PAIR }";
    let mem = "parameter nat; storage (big_map nat string); \
               code { UNPAIR; DUP 2; SWAP; MEM; DROP; NIL operation; PAIR }";
    // Key 2 is bound to "two", key 3 is not; both hash at the same cost.
    let hit = consumed_on_stored_map(get, "2", 1_000, 5_000);
    let miss = consumed_on_stored_map(get, "3", 1_000, 5_000);
    // `cost_DECODING_MICHELINE` of "two": 60 · 1 node + 10 · 3 string bytes = 90;
    // `parse_data` of a string: a cycle (100) and `check_printable` (15 + 10 · 3) = 145.
    assert_eq!(hit - miss, 5_000 + 90 + 145);
    assert_eq!(hit - consumed_on_stored_map(get, "2", 0, 0), 6_000);
    assert_eq!(miss - consumed_on_stored_map(get, "3", 0, 0), 1_000);
    let mem_hit = consumed_on_stored_map(mem, "2", 1_000, 5_000);
    assert_eq!(mem_hit, consumed_on_stored_map(mem, "3", 1_000, 5_000));
    assert_eq!(mem_hit - consumed_on_stored_map(mem, "2", 0, 0), 1_000);
}

#[test]
fn views_run_on_the_given_storage() {
    let script = Script::parse(
        "parameter unit; storage nat; code { CDR; NIL operation; PAIR }; \
         view \"add\" nat nat { UNPAIR; ADD }",
        &Config::default(),
    )
    .expect("test script typechecks");
    assert_eq!(script.views().len(), 1);
    let result = run_view(
        &script,
        "add",
        &expression("5"),
        &expression("37"),
        &Environment::default(),
        &mut TestHost::new(),
        HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    )
    .expect("view runs");
    assert_eq!(readable(&result.result), "42");
    assert!(result.consumed_milligas > 0);
}

#[test]
fn deep_recursion_alternating_call_sites_returns_through_every_frame() {
    // Two `EXEC` sites chosen by parity: consecutive return addresses differ, so every level
    // stores its own, and 150,000 levels cross the call stack's chunks (65,536 words) both ways.
    let script = "parameter nat; storage nat; code { CAR ; \
        LAMBDA_REC nat nat { DUP ; INT ; EQ ; \
          IF { DROP 2 ; PUSH nat 0 } \
             { PUSH nat 1 ; SWAP ; SUB ; ABS ; \
               DUP ; PUSH nat 2 ; SWAP ; EDIV ; ASSERT_SOME ; CDR ; INT ; EQ ; \
               IF { EXEC ; PUSH nat 1 ; ADD } { EXEC ; PUSH nat 1 ; ADD } } } ; \
        SWAP ; EXEC ; NIL operation ; PAIR }";
    check(script, "0", "150000", "storage 150000");
}
