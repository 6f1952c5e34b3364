//! Depth-100,000 regression tests: programs and values whose depth input controls must neither
//! overflow the host stack nor take quadratic time. They run on the test harness's own thread
//! (2 MiB stack by default), which is smaller than the 8 MiB main thread.

use kestrel_michelson_conformance::tzt::run_tzt;

/// The Micheline parser's default depth limit is 100,000; the TZT wrapper (`code { .. }`,
/// `input { Stack_elt .. }`) takes a few levels of it.
const DEPTH: usize = 100_000 - 10;

fn check(source: &str) {
    if let Err(why) = run_tzt(source) {
        panic!("deep test failed: {why}");
    }
}

#[test]
fn nested_sequences_typecheck_and_run() {
    let code = format!("{}UNIT{}", "{ ".repeat(DEPTH - 1), " }".repeat(DEPTH - 1));
    check(&format!(
        "code {{ {code} }} ; input {{}} ; output {{ Stack_elt unit Unit }}"
    ));
}

#[test]
fn nested_ifs_typecheck_and_run() {
    let depth = DEPTH / 4;
    let mut code = String::new();
    for _ in 0..depth {
        code.push_str("PUSH bool True ; IF { ");
    }
    code.push_str("UNIT");
    for _ in 0..depth {
        code.push_str(" } { UNIT }");
    }
    check(&format!(
        "code {{ {code} }} ; input {{}} ; output {{ Stack_elt unit Unit }}"
    ));
}

#[test]
fn nested_dips_typecheck_and_run() {
    let depth = DEPTH / 4;
    let code = format!("{}UNIT{}", "DIP { ".repeat(depth), " }".repeat(depth));
    let input = "Stack_elt nat 1 ; ".repeat(depth);
    let mut output = String::from("Stack_elt nat 1 ; ");
    output.push_str(&"Stack_elt nat 1 ; ".repeat(depth - 1));
    let expected = format!("{}Stack_elt unit Unit", "Stack_elt nat 1 ; ".repeat(depth));
    let _ = output;
    check(&format!(
        "code {{ {code} }} ; input {{ {} }} ; output {{ {expected} }}",
        input.trim_end_matches("; ")
    ));
}

#[test]
fn deep_lambda_apply_chain_is_dropped_without_recursion() {
    // APPLYs build a lambda capturing a lambda capturing a lambda ... Octez charges each APPLY
    // for unparsing the captured value, which typechecks every captured level again (its code
    // `PUSH`es the level below), so the chain ends long before 100,000 levels, with the gas
    // running out inside such a constant (a static error, as in the TZT suite's
    // `drop_deep_apply_00`); the values built so far must still be dropped without host
    // recursion. A smaller gas limit than an operation's keeps the test quick.
    let source = "code { LAMBDA unit unit { } ; PUSH int 100000 ; DUP ; GT ; \
        LOOP { PUSH int 1 ; SWAP ; SUB ; \
               DIP { LAMBDA (pair (lambda unit unit) unit) unit { CDR } ; SWAP ; APPLY } ; DUP ; GT } ; \
        DROP ; DROP } ; input {} ; output (StaticError _)";
    if let Err(why) =
        kestrel_michelson_conformance::tzt::run_tzt_limited(source, false, 100_000_000)
    {
        panic!("deep test failed: {why}");
    }
}

#[test]
fn deep_type_is_refused_not_overflowed() {
    // Each parenthesised application counts two levels for the parser.
    let ty = format!(
        "{}unit{}",
        "(option ".repeat(DEPTH / 2),
        ")".repeat(DEPTH / 2)
    );
    let source =
        format!("code {{ DROP }} ; input {{ Stack_elt {ty} Unit }} ; output (StaticError _)");
    check(&source);
}

#[test]
fn deep_recursion_returns() {
    // 100,000 nested calls of a recursive lambda that return through every level: one that
    // always returns to the same place (its call entries are counted, not stored), and one
    // that keeps a value under each call (one entry per level).
    let same_place = "LAMBDA_REC int int { DUP ; EQ ; \
        IF { DIP { DROP } } { PUSH int 1 ; SWAP ; SUB ; EXEC ; PUSH int 1 ; ADD } }";
    let keeps_values = "LAMBDA_REC int int { DUP ; EQ ; \
        IF { DIP { DROP } } { DUP ; PUSH int 1 ; SWAP ; SUB ; DIG 2 ; SWAP ; EXEC ; ADD } }";
    for (lambda, result) in [(same_place, 100_000u64), (keeps_values, 5_000_050_000)] {
        check(&format!(
            "code {{ {lambda} ; SWAP ; EXEC }} ; input {{ Stack_elt int 100000 }} ; \
             output {{ Stack_elt int {result} }}"
        ));
    }
}
