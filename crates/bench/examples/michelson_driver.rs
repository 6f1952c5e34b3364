//! A fixed amount of Michelson work per process, for instruction counts under callgrind, where
//! criterion's adaptive iteration counts would make two runs incomparable.
//!
//! `michelson_driver loop <iterations>` runs `benches/michelson.rs`'s loop contract once on that
//! many iterations (8 Michelson instructions each); `michelson_driver fa12|cpmm <calls>` executes
//! the bench's FA1.2 `transfer` / cpmm `xtzToToken` call that many times on a script typechecked
//! once; `fa12-tc|cpmm-tc <calls>` typechecks and executes each time. The per-unit count is the
//! difference between two runs divided by the difference of their arguments (BENCHMARKS.md,
//! "Michelson: tight loop"). Needs `KESTREL_TESTDATA` for the two contracts.

use kestrel_micheline::Node;
use kestrel_michelson::{
    execute, Address, Config, Environment, Script, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
use kestrel_michelson_conformance::fixtures::{FixtureContract, FixtureHost};

/// The allocator of the `kestrel` binary and of the Michelson benches.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `benches/michelson.rs`'s loop contract: sums 1..=n.
const LOOP_SCRIPT: &str =
    "parameter nat; storage int; code { CAR ; INT ; PUSH int 0 ; SWAP ; DUP ; GT ; \
    LOOP { DUP ; DIP { ADD } ; PUSH int -1 ; ADD ; DUP ; GT } ; DROP ; NIL operation ; PAIR }";

/// The benches' configuration: the CPMM was originated before the current protocol.
const CONFIG: Config = Config {
    legacy: true,
    gas_limit_milli: HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};

struct Prepared {
    script: Node,
    entrypoint: &'static str,
    parameter: Node,
    storage: Node,
    environment: Environment,
    host: FixtureHost,
}

impl Prepared {
    fn new(script: &str, entrypoint: &'static str, parameter: &str, storage: &str) -> Prepared {
        Prepared {
            script: kestrel_micheline::parse_toplevel(script).expect("script parses"),
            entrypoint,
            parameter: kestrel_micheline::parse_expression(parameter).expect("parameter parses"),
            storage: kestrel_micheline::parse_expression(storage).expect("storage parses"),
            environment: Environment::default(),
            host: FixtureHost::new(0),
        }
    }

    fn typecheck(&self) -> Script {
        Script::typecheck(&self.script, &CONFIG).expect("script typechecks")
    }

    fn execute(&mut self, typed: &Script) -> u64 {
        execute(
            typed,
            self.entrypoint,
            &self.parameter,
            &self.storage,
            &self.environment,
            &mut self.host,
            HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        )
        .expect("call runs")
        .consumed_milligas
    }
}

fn contract_text(path: &str) -> String {
    let path = kestrel_testdata::require(path, "michelson_driver").expect("KESTREL_TESTDATA set");
    std::fs::read_to_string(path).expect("contract readable")
}

fn cpmm() -> Prepared {
    let mut prepared = Prepared::new(
        &contract_text("michelson/protocol/cpmm.tz"),
        "xtzToToken",
        "Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" 1 \"2030-01-01T00:00:00Z\"",
        "Pair 1000000000 100000000000 1000000 \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\" \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\"",
    );
    let token = Address::from_string("KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo").expect("address");
    prepared.host.contracts.insert(
        token.destination,
        FixtureContract {
            parameter: kestrel_micheline::parse_expression(
                "(pair %transfer address (pair address nat))",
            )
            .expect("type parses"),
            storage: None,
            views: Vec::new(),
            balance_mutez: 0,
        },
    );
    prepared.environment.amount_mutez = 1_000_000;
    prepared.environment.balance_mutez = 100_000_000_000;
    prepared.environment.now_seconds = 1_700_000_000;
    prepared
}

fn fa12() -> Prepared {
    Prepared::new(
        &contract_text("michelson/mini_scenarios/fa12_reference.tz"),
        "default",
        "Left (Left (Left (Pair \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" \"tz1cxcwwnzENRdhe2Kb8ZdTrdNy4bFNyScx5\" 10)))",
        "Pair { Elt \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" (Pair 1000000 {}) } \"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\" False 1000000",
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: michelson_driver loop|fa12|cpmm|fa12-tc|cpmm-tc <count>";
    let (Some(mode), Some(count)) = (args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Ok(count) = count.parse::<u64>() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (mut prepared, calls, typecheck_each) = match mode.as_str() {
        "loop" => (
            Prepared::new(LOOP_SCRIPT, "default", &count.to_string(), "0"),
            1,
            false,
        ),
        "fa12" => (fa12(), count, false),
        "cpmm" => (cpmm(), count, false),
        "fa12-tc" => (fa12(), count, true),
        "cpmm-tc" => (cpmm(), count, true),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let typed = prepared.typecheck();
    let mut consumed_milligas = 0;
    for _ in 0..calls {
        consumed_milligas = if typecheck_each {
            let typed = prepared.typecheck();
            prepared.execute(&typed)
        } else {
            prepared.execute(&typed)
        };
    }
    println!("{mode} {count}: {consumed_milligas} milligas consumed by the last call");
}
