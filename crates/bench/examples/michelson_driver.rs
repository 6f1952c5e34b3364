//! A fixed amount of Michelson work per process, for instruction counts under callgrind, where
//! criterion's adaptive iteration counts would make two runs incomparable.
//!
//! `michelson_driver loop <iterations>` runs `benches/michelson.rs`'s loop contract once on that
//! many iterations (8 Michelson instructions each); `michelson_driver fa12|cpmm <calls>` executes
//! the bench's FA1.2 `transfer` / cpmm `xtzToToken` call that many times on a script typechecked
//! once; `fa12-tc|cpmm-tc <calls>` typechecks and executes each time. The per-unit count is the
//! difference between two runs divided by the difference of their arguments (BENCHMARKS.md,
//! "Michelson: tight loop"). Needs `KESTREL_TESTDATA` for the two contracts.

#[path = "../benches/michelson_support/fixtures.rs"]
mod fixtures;
use fixtures::{cpmm, fa12, parse, typecheck, Prepared, LOOP_SCRIPT};

/// The allocator of the `kestrel` binary and of the Michelson benches.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A contract fixture, or the usage error's exit when `KESTREL_TESTDATA` is not set.
fn required(prepared: Option<Prepared>) -> Prepared {
    prepared.unwrap_or_else(|| {
        eprintln!("michelson_driver: the contracts need KESTREL_TESTDATA");
        std::process::exit(2)
    })
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
            Prepared::new(parse(LOOP_SCRIPT), "default", &count.to_string(), "0"),
            1,
            false,
        ),
        "fa12" => (required(fa12()), count, false),
        "cpmm" => (required(cpmm()), count, false),
        "fa12-tc" => (required(fa12()), count, true),
        "cpmm-tc" => (required(cpmm()), count, true),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let typed = typecheck(&prepared.script);
    let mut consumed_milligas = 0;
    for _ in 0..calls {
        let execution = if typecheck_each {
            prepared.execute(&typecheck(&prepared.script))
        } else {
            prepared.execute(&typed)
        };
        consumed_milligas = execution.expect("call runs").consumed_milligas;
    }
    println!("{mode} {count}: {consumed_milligas} milligas consumed by the last call");
}
