//! Exercises the reader of recorded `octez-client run script --trace-stack` outputs
//! (`tests/common/octez_output.rs`) on every file of `michelson-regression/`, and on small
//! hand-written inputs for the edge cases.

mod common;

use common::octez_output::{self, FailureKind, OctezOutput, Outcome};
use kestrel_micheline::parse::{parse_expression, parse_toplevel};

const REGRESSION_DIR: &str = "michelson-regression";

#[test]
fn every_recorded_file_reads_with_sane_counts() {
    let Some(dir) = kestrel_testdata::require(REGRESSION_DIR, "every_recorded_file_reads") else {
        return;
    };
    let testdata = kestrel_testdata::testdata_dir();
    let files = kestrel_testdata::files_with_suffix(&dir, ".out");
    assert!(files.len() >= 200, "only {} .out files found", files.len());
    let (mut runs, mut steps, mut failures, mut expansions) = (0, 0, 0, 0);
    for path in &files {
        let name = path.display().to_string();
        let output =
            octez_output::read_file(path).unwrap_or_else(|error| panic!("{name}: {error}"));
        match &output {
            OctezOutput::MacroExpansion(text) => {
                expansions += 1;
                assert!(
                    name.contains("/macros/"),
                    "{name}: no command outside macros/"
                );
                parse_toplevel(text).unwrap_or_else(|error| panic!("{name}: {error:?}"));
            }
            OctezOutput::Runs(file_runs) => {
                assert!(!file_runs.is_empty(), "{name}");
                for run in file_runs {
                    runs += 1;
                    let command = &run.command;
                    assert!(command.trace_stack, "{name}:{} no --trace-stack", run.line);
                    assert!(
                        command.script_path(&testdata).is_file(),
                        "{name}: script {} not found",
                        command.script_relative
                    );
                    for text in [&command.storage, &command.input] {
                        parse_expression(text)
                            .unwrap_or_else(|error| panic!("{name}: `{text}`: {error:?}"));
                    }
                    assert!(!run.trace.is_empty(), "{name}:{} empty trace", run.line);
                    // The first step is the entry of the script with (Pair parameter storage).
                    assert_eq!(run.trace[0].stack.len(), 1, "{name}: first stack");
                    assert!(run.trace[0].gas_milli >= 1_000, "{name}: first step gas");
                    for step in &run.trace {
                        steps += 1;
                        assert!(step.gas_milli > 0, "{name}:{} zero gas", step.line);
                        for element in &step.stack {
                            parse_expression(element).unwrap_or_else(|error| {
                                panic!("{name}:{} `{element}`: {error:?}", step.line)
                            });
                        }
                    }
                    match &run.outcome {
                        Outcome::Success { storage, .. } => {
                            parse_expression(storage)
                                .unwrap_or_else(|error| panic!("{name}: {error:?}"));
                            let last = run
                                .trace
                                .last()
                                .map(|step| step.stack.clone())
                                .unwrap_or_default();
                            assert_eq!(last.len(), 1, "{name}: final stack");
                            assert!(
                                last[0].starts_with("(Pair "),
                                "{name}: final stack {last:?}"
                            );
                        }
                        Outcome::Failure { kind, message, .. } => {
                            failures += 1;
                            assert!(!message.is_empty(), "{name}");
                            assert!(!matches!(kind, FailureKind::Other(_)), "{name}: {kind:?}");
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "{} files: {runs} runs, {steps} trace steps, {failures} failures, {expansions} macro expansions",
        files.len()
    );
    assert!(runs >= 180 && steps >= 2_000 && expansions >= 20 && failures >= 5);
}

const SUCCESS: &str = r#"
./octez-client --protocol ProtoALpha --mode mockup --no-base-dir-warnings run script michelson_test_scripts/opcodes/abs.tz on storage Unit and input '{ "a b" ; "c" }' --level 7 --amount 1.5 --source tz1x --trace-stack
storage
  (Pair 1
        2)
emitted operations
  
big_map diff
  New map(4) of type (big_map nat nat)
  Set map(4)[1] to 4
trace
  - location: 7 (just consumed gas: 9.929)
    [ (Pair 948 Unit) ]
  - location: 8 (just consumed gas: 0.010)
    [  ]
  - location: 9 (just consumed gas: 100.026)
    [ (Pair "x"
            "y")
      -948
      { Elt 1 2 } ]
"#;

#[test]
fn reads_a_success_run() {
    let output = octez_output::parse(SUCCESS).expect("parses");
    let runs = output.runs();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let command = &run.command;
    assert_eq!(command.script, "michelson_test_scripts/opcodes/abs.tz");
    assert_eq!(command.script_relative, "michelson/opcodes/abs.tz");
    assert_eq!(command.storage, "Unit");
    assert_eq!(command.input, r#"{ "a b" ; "c" }"#);
    assert_eq!(command.level, Some(7));
    assert_eq!(command.amount.as_deref(), Some("1.5"));
    assert_eq!(command.source.as_deref(), Some("tz1x"));
    assert_eq!(command.protocol.as_deref(), Some("ProtoALpha"));
    assert_eq!(command.mode.as_deref(), Some("mockup"));
    assert_eq!(
        command.other_flags,
        vec![("--no-base-dir-warnings".to_string(), None)]
    );
    assert!(command.trace_stack);
    assert_eq!(
        run.outcome,
        Outcome::Success {
            storage: "(Pair 1 2)".into(),
            emitted_operations: vec![],
            big_map_diff: vec![
                "New map(4) of type (big_map nat nat)".into(),
                "Set map(4)[1] to 4".into()
            ],
        }
    );
    let summary: Vec<(u32, u64, Vec<&str>)> = run
        .trace
        .iter()
        .map(|step| {
            (
                step.location,
                step.gas_milli,
                step.stack.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (7, 9_929, vec!["(Pair 948 Unit)"]),
            (8, 10, vec![]),
            (9, 100_026, vec![r#"(Pair "x" "y")"#, "-948", "{ Elt 1 2 }"]),
        ]
    );
    assert_eq!(run.trace_gas_milli(), 9_929 + 10 + 100_026);
}

const FAILURES: &str = r#"
./octez-client --mode mockup run script michelson_test_scripts/opcodes/check_signature.tz on storage '(Pair "sig" "abcd")' and input '"edpk"' --trace-stac
Runtime error in contract KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi:
  01: parameter key;
At line 8 characters 14 to 18,
script reached FAILWITH instruction
with (Pair 1
           2)
trace
  - location: 9 (just consumed gas: 100.016)
    [ Unit ]
Fatal error:
  error running script

./octez-client --mode mockup run script michelson_test_scripts/opcodes/shifts.tz on storage None and input '(Left (Pair 1 257))' --trace-stack
Runtime error in contract KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi:
At line 10 characters 25 to 28,
unexpected arithmetic overflow
trace
  - location: 14 (just consumed gas: 8.673)
    [ (Pair (Left (Pair 1 257)) None) ]
Fatal error:
  error running script
"#;

#[test]
fn reads_failures_and_a_truncated_command_line() {
    let output = octez_output::parse(FAILURES).expect("parses");
    let runs = output.runs();
    assert_eq!(runs.len(), 2);
    assert!(
        runs[0].command.trace_stack,
        "a truncated --trace-stack still counts"
    );
    assert_eq!(runs[0].command.input, r#""edpk""#);
    match &runs[0].outcome {
        Outcome::Failure { kind, position, .. } => {
            assert_eq!(
                kind,
                &FailureKind::FailWith {
                    value: "(Pair 1 2)".into()
                }
            );
            assert_eq!(*position, Some((8, 14, 18)));
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(runs[0].trace.len(), 1);
    assert_eq!(runs[0].trace[0].stack, vec!["Unit".to_string()]);
    match &runs[1].outcome {
        Outcome::Failure { kind, position, .. } => {
            assert_eq!(kind, &FailureKind::ArithmeticOverflow);
            assert_eq!(*position, Some((10, 25, 28)));
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(runs[1].trace[0].gas_milli, 8_673);
}

#[test]
fn macro_expansions_have_no_runs() {
    let output = octez_output::parse("{ parameter unit ;\n  storage unit ;\n  code { CDR } }\n")
        .expect("parses");
    assert!(matches!(output, OctezOutput::MacroExpansion(_)));
    assert!(output.runs().is_empty());
}

#[test]
fn malformed_inputs_are_errors_not_panics() {
    let cases = [
        "./octez-client run script x.tz on storage Unit\n",
        "./octez-client run script x.tz on storage Unit and input Unit\ntrace\n  - location: x (just consumed gas: 1.0)\n    [ Unit ]\n",
        "./octez-client run script x.tz on storage Unit and input Unit\ntrace\n  - location: 1 (just consumed gas: 1.0000)\n    [ Unit ]\n",
        "./octez-client run script x.tz on storage Unit and input Unit\ntrace\n  - location: 1 (just consumed gas: 1.0)\n    [ Unit\n",
        "./octez-client run script x.tz on storage Unit and input Unit\ntrace\n  - location: 1 (just consumed gas: 1.0)\n",
        "./octez-client --level\n",
        "./octez-client --level x run script x.tz on storage Unit and input Unit\n",
        "./octez-client run script x.tz on storage Unit and input Unit\nstorage\nemitted operations\n",
    ];
    for case in cases {
        assert!(octez_output::parse(case).is_err(), "{case:?}");
    }
}

#[test]
fn shell_words_follow_posix_quoting() {
    let check = |line: &str, expected: &[&str]| {
        assert_eq!(octez_output::shell_words(line), expected, "{line}");
    };
    check("a 'b c' d", &["a", "b c", "d"]);
    check(r#"a "b \" c" d"#, &["a", r#"b " c"#, "d"]);
    check(r"a\ b", &["a b"]);
    check("a ''", &["a", ""]);
    check("a 'unterminated", &["a", "unterminated"]);
    check("  ", &[]);
}

#[test]
fn gas_text_parses_to_milligas() {
    for (text, expected) in [
        ("9.929", Some(9_929)),
        ("0.010", Some(10)),
        ("12", Some(12_000)),
        ("1.5", Some(1_500)),
    ] {
        assert_eq!(octez_output::parse_gas(text), expected, "{text}");
    }
    for text in ["", "1.2345", "a", "-1", ".5"] {
        assert_eq!(octez_output::parse_gas(text), None, "{text}");
    }
}

/// The reader must return errors, never panic, on damaged files: every recorded file is cut at
/// every line, and lines are dropped or duplicated by a fixed pseudo-random sequence.
#[test]
fn damaged_recorded_files_never_panic() {
    let Some(dir) = kestrel_testdata::require(REGRESSION_DIR, "damaged_recorded_files_never_panic")
    else {
        return;
    };
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // xorshift64*: deterministic, no dependency.
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut variants = 0usize;
    for path in kestrel_testdata::files_with_suffix(&dir, ".out")
        .iter()
        .take(60)
    {
        let text = std::fs::read_to_string(path).expect("readable");
        let lines: Vec<&str> = text.lines().collect();
        for cut in 0..lines.len() {
            let _ = octez_output::parse(&lines[..cut].join("\n"));
            variants += 1;
        }
        for _ in 0..20 {
            let mut damaged = Vec::with_capacity(lines.len());
            for line in &lines {
                match next() % 16 {
                    0 => {}
                    1 => {
                        damaged.push(*line);
                        damaged.push(*line);
                    }
                    2 => damaged.push(line.get(..line.len() / 2).unwrap_or(line)),
                    _ => damaged.push(*line),
                }
            }
            let _ = octez_output::parse(&damaged.join("\n"));
            variants += 1;
        }
    }
    assert!(variants > 1_000, "only {variants} damaged variants tried");
}
