//! The Michelson benchmarks' calls, shared by `benches/michelson.rs` (criterion) and
//! `examples/michelson_driver.rs` (fixed work for callgrind), so that both measure the same
//! contracts with the same data and world.

// Each includer uses a part (the driver does not trace).
#![allow(dead_code)]

use kestrel_micheline::Node;
use kestrel_michelson::{
    execute, execute_traced, Address, Call, Config, Environment, Execution, ExecutionError, Script,
    Tracer, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use kestrel_michelson_conformance::fixtures::{FixtureContract, FixtureHost};

/// The tight loop as a full contract: sums 1..=n (8 Michelson instructions per iteration).
pub const LOOP_SCRIPT: &str =
    "parameter nat; storage int; code { CAR ; INT ; PUSH int 0 ; SWAP ; DUP ; GT ; \
    LOOP { DUP ; DIP { ADD } ; PUSH int -1 ; ADD ; DUP ; GT } ; DROP ; NIL operation ; PAIR }";

/// Contracts originated before the current protocol (the CPMM uses `SUB` on mutez) run in
/// Octez's legacy mode.
const CONFIG: Config = Config {
    legacy: true,
    gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};

pub fn parse(text: &str) -> Node {
    kestrel_micheline::parse_toplevel(text).expect("benchmark script parses")
}

fn expression(text: &str) -> Node {
    kestrel_micheline::parse_expression(text).expect("benchmark data parses")
}

pub fn typecheck(script: &Node) -> Script {
    Script::typecheck(script, &CONFIG).expect("benchmark script typechecks")
}

/// A call ready to run: the script, the call's data and its world.
pub struct Prepared {
    pub script: Node,
    entrypoint: &'static str,
    parameter: Node,
    storage: Node,
    environment: Environment,
    host: FixtureHost,
}

impl Prepared {
    pub fn new(script: Node, entrypoint: &'static str, parameter: &str, storage: &str) -> Prepared {
        Prepared {
            script,
            entrypoint,
            parameter: expression(parameter),
            storage: expression(storage),
            environment: Environment::default(),
            host: FixtureHost::new(0),
        }
    }

    pub fn execute(&mut self, typed: &Script) -> Result<Execution, ExecutionError> {
        execute(
            typed,
            self.entrypoint,
            &self.parameter,
            &self.storage,
            &self.environment,
            &mut self.host,
            HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        )
    }

    /// [`Prepared::execute`] with every step reported to `tracer`.
    pub fn execute_traced(
        &mut self,
        typed: &Script,
        tracer: &mut impl Tracer,
    ) -> Result<Execution, ExecutionError> {
        let call = Call {
            entrypoint: self.entrypoint,
            parameter: &self.parameter,
            storage: &self.storage,
        };
        execute_traced(
            typed,
            &call,
            &self.environment,
            &mut self.host,
            HARD_GAS_LIMIT_PER_OPERATION_MILLI,
            tracer,
        )
    }
}

/// The contract at `path` under `KESTREL_TESTDATA`, or `None` (with a note) without it.
fn contract(path: &str) -> Option<Node> {
    let path = kestrel_testdata::require(path, "michelson benchmarks")?;
    Some(parse(&std::fs::read_to_string(path).ok()?))
}

/// The Liquidity Baking CPMM's `xtzToToken`, with the token contract it calls.
pub fn cpmm() -> Option<Prepared> {
    let mut prepared = Prepared::new(
        contract("michelson/protocol/cpmm.tz")?,
        "xtzToToken",
        "Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" 1 \"2030-01-01T00:00:00Z\"",
        "Pair 1000000000 100000000000 1000000 \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\" \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\"",
    );
    let token = Address::from_string("KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo")?;
    prepared.host.contracts.insert(
        token.destination,
        FixtureContract {
            parameter: expression("(pair %transfer address (pair address nat))"),
            storage: None,
            views: Vec::new(),
            balance_mutez: 0,
        },
    );
    prepared.environment.amount_mutez = 1_000_000;
    prepared.environment.balance_mutez = 100_000_000_000;
    prepared.environment.now_seconds = 1_700_000_000;
    Some(prepared)
}

/// The FA1.2 reference contract's `transfer`.
pub fn fa12() -> Option<Prepared> {
    Some(Prepared::new(
        contract("michelson/mini_scenarios/fa12_reference.tz")?,
        "default",
        "Left (Left (Left (Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" \"tz1cxcwwnzENRdhe2Kb8ZdTrdNy4bFNyScx5\" 10)))",
        "Pair { Elt \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" (Pair 1000000 {}) } \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" False 1000000",
    ))
}
