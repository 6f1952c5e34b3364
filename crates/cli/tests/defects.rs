//! Regression tests for what a new user hit in the `kestrel` command: values starting with `-`,
//! a closed pipe, negative amounts, non-packable types, error words and positions, `--json` on
//! failure, exit codes, standard input, oversized numbers, build information, TZT strictness and
//! inputs that are not regular files.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use support::run_kestrel as run;

fn scripts() -> Option<std::path::PathBuf> {
    kestrel_testdata::require("michelson/opcodes", "defects")
}

/// The path of `michelson/opcodes/<name>`, or `None` (the test is skipped) without test data.
fn opcode_script(name: &str) -> Option<String> {
    scripts().map(|dir| dir.join(name).to_string_lossy().into_owned())
}

/// The arguments of `kestrel micheline convert` from text to `to`, reading `input`.
fn convert_text_to<'a>(to: &'a str, input: &'a str) -> [&'a str; 7] {
    ["micheline", "convert", "--from", "text", "--to", to, input]
}

/// An empty directory of its own for the test `name` under the temporary directory.
fn scratch_directory(name: &str) -> std::path::PathBuf {
    let directory =
        std::env::temp_dir().join(format!("kestrel-defects-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap_or_else(|error| panic!("{error}"));
    directory
}

/// `kestrel client run script SCRIPT on storage STORAGE and input INPUT OPTIONS...`.
fn client_run_script(
    script: &str,
    storage: &str,
    input: &str,
    options: &[&str],
) -> (i32, String, String) {
    let mut arguments = vec![
        "client", "run", "script", script, "on", "storage", storage, "and", "input", input,
    ];
    arguments.extend_from_slice(options);
    run(&arguments, "")
}

/// `kestrel michelson run-script SCRIPT --storage STORAGE --input INPUT OPTIONS...`.
fn michelson_run_script(
    script: &str,
    storage: &str,
    input: &str,
    options: &[&str],
) -> (i32, String, String) {
    let mut arguments = vec![
        "michelson",
        "run-script",
        script,
        "--storage",
        storage,
        "--input",
        input,
    ];
    arguments.extend_from_slice(options);
    run(&arguments, "")
}

#[test]
fn values_starting_with_a_dash_are_values() {
    let (code, stdout, stderr) = run(&["micheline", "pack", "-1"], "");
    assert_eq!((code, stdout.as_str()), (0, "050041\n"), "{stderr}");
    let (code, stdout, stderr) = run(&["michelson", "pack", "--type", "int", "-7"], "");
    assert_eq!((code, stdout.as_str()), (0, "0x050047\n"), "{stderr}");
    let (code, stdout, stderr) = run(
        &[
            "client", "--mode", "mockup", "hash", "data", "-1", "of", "type", "int",
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("Raw packed data: 0x050041\n"),
        "{stdout}"
    );
    let (code, _, stderr) = run(
        &[
            "context",
            "commit-hash",
            "--tree",
            "0d78b30e959c2a079e8ccb4ca19d428c95d29b2f02a35c1c58ef9c8972bc26aa",
            "--date",
            "-5",
            "--author",
            "-a",
            "--message",
            "-msg",
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    let Some(cons) = opcode_script("cons.tz") else {
        return;
    };
    let (code, stdout, stderr) = michelson_run_script(&cons, "{ -1 }", "-12", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("storage\n  { -12 ; -1 }\n"), "{stdout}");
    let (code, stdout, stderr) = client_run_script(&cons, "{}", "-12", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("storage\n  { -12 }\n"), "{stdout}");
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    // A sequence this long prints one item per line, far more than a pipe buffers.
    let sequence = format!("{{ {} }}", vec!["1"; 200_000].join(" ; "));
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(convert_text_to("text", "-"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run kestrel: {error}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(sequence.as_bytes())
            .unwrap_or_else(|error| panic!("cannot write: {error}"));
    }
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap_or_else(|error| panic!("cannot read: {error}"));
    assert_eq!(first, "{ 1 ;\n");
    // The reading end is closed here, as `head -1` closes it.
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("kestrel did not finish: {error}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn negative_amounts_and_non_packable_types_are_refused() {
    let (code, _, stderr) = run(
        &["michelson", "pack", "--type", "big_map int int", "{}"],
        "",
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("not packable"), "{stderr}");
    let (code, _, stderr) = run(
        &[
            "client",
            "hash",
            "data",
            "{}",
            "of",
            "type",
            "big_map int int",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("not packable"), "{stderr}");
    let Some(abs) = opcode_script("abs.tz") else {
        return;
    };
    let (code, _, stderr) = client_run_script(&abs, "Unit", "1", &["--amount", "-5"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("Invalid \u{a729} notation in parameter amount"),
        "{stderr}"
    );
    let (code, _, stderr) = michelson_run_script(&abs, "Unit", "1", &["--amount=-5"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--amount"), "{stderr}");
}

#[test]
fn errors_name_line_and_column_in_octez_client_words_and_json() {
    let (code, stdout, stderr) = run(
        &[
            "client",
            "typecheck",
            "data",
            "\n  \"x\"",
            "against",
            "type",
            "nat",
        ],
        "",
    );
    assert_eq!(code, 1, "{stdout}");
    // Octez reports the value as it prints it (`"x"` on line 1), the JSON below as given.
    assert_eq!(
        stderr,
        "Ill typed data: 1: \"x\" is not an expression of type nat\nAt line 1 characters 0 to 3, value \"x\" is invalid for type nat.\nFatal error:\n  ill-typed data\n"
    );
    assert!(!stderr.contains("InvalidData {"), "{stderr}");
    let (code, _, stderr) = run(&["michelson", "pack", "--type", "nat", "\"x\""], "");
    assert_eq!(code, 1);
    assert!(!stderr.contains("InvalidData {"), "{stderr}");
    assert!(stderr.contains("line 1, column 0"), "{stderr}");

    let (code, stdout, _) = run(
        &[
            "client",
            "--json",
            "typecheck",
            "data",
            "\n  \"x\"",
            "against",
            "type",
            "nat",
        ],
        "",
    );
    assert_eq!(code, 1);
    let value: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert_eq!(value["error"]["kind"], "typecheck");
    assert_eq!(value["error"]["line"], 2);
    assert_eq!(value["error"]["column"], 2);
    let (code, stdout, _) = run(&["micheline", "pack", "{", "--json"], "");
    assert_eq!(code, 1);
    let value: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert_eq!(value["error"]["exit_code"], 1);
    assert!(value["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("At line 1")));
    // Every command takes `--json`, these two included.
    let json_of = |arguments: &[&str], stdin: &str| {
        let (code, stdout, stderr) = run(arguments, stdin);
        assert_eq!(code, 0, "{arguments:?}: {stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout)
            .unwrap_or_else(|error| panic!("{error}: {stdout}"))
    };
    let packed = json_of(&["michelson", "pack", "--type", "int", "-7", "--json"], "");
    assert_eq!(packed["packed"], "0x050047");
    let mut arguments = convert_text_to("binary", "-").to_vec();
    arguments.push("--json");
    assert_eq!(json_of(&arguments, "-1")["output"], "0041");
}

#[test]
fn runtime_errors_show_the_failing_instruction() {
    let Some(shifts) = opcode_script("shifts.tz") else {
        return;
    };
    let (code, _, stderr) = client_run_script(&shifts, "None", "(Left (Pair 1 257))", &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("At line 10 characters 25 to 28,\nunexpected arithmetic overflow\n"),
        "{stderr}"
    );
}

#[test]
fn exit_codes_separate_failures_from_usage_errors() {
    assert_eq!(run(&["client", "frobnicate", "data"], "").0, 2);
    assert_eq!(
        run(&["client", "normalize", "type", "nat", "--trace-stack"], "").0,
        2
    );
    assert_eq!(
        run(
            &["client", "--mode", "proxy", "normalize", "type", "nat"],
            ""
        )
        .0,
        2
    );
    assert_eq!(run(&["no-such-area"], "").0, 2);
    assert_eq!(run(&["client", "normalize", "type", "nat"], "").0, 0);
    assert_eq!(run(&["client", "normalize", "type", "0"], "").0, 1);
}

#[test]
fn standard_input_is_read_for_a_script_given_as_dash() {
    let script = "parameter unit; storage unit; code { CDR ; NIL operation ; PAIR }";
    let (code, stdout, stderr) = run(&["client", "typecheck", "script", "-"], script);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("Well typed\nGas remaining: "),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(
        &[
            "client", "run", "script", "-", "on", "storage", "Unit", "and", "input", "Unit",
        ],
        script,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("storage\n  Unit\n"), "{stdout}");
    // Values too long for an argument come from standard input too.
    let (code, stdout, stderr) = run(&["micheline", "unpack", "-"], "050041\n");
    assert_eq!((code, stdout.as_str()), (0, "-1\n"), "{stderr}");
    let (code, stdout, stderr) = run(&["micheline", "pack", "-"], "-1");
    assert_eq!((code, stdout.as_str()), (0, "050041\n"), "{stderr}");
}

#[test]
fn sizes_that_do_not_fit_are_refused_instead_of_wrapping() {
    let (code, _, stderr) = run(
        &[
            "context",
            "replay",
            "--blocks",
            "1",
            "--cache-mib",
            "18446744073709551615",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("--cache-mib"), "{stderr}");
}

#[test]
fn version_prints_build_information() {
    let (code, stdout, _) = run(&["version", "--json"], "");
    assert_eq!(code, 0);
    let value: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert!(
        value["rustc"]
            .as_str()
            .is_some_and(|r| r.starts_with("rustc ")),
        "{stdout}"
    );
    assert!(
        value["commit"].as_str().is_some_and(|c| !c.is_empty()),
        "{stdout}"
    );
    assert!(value["profile"].is_string(), "{stdout}");
}

#[test]
fn tzt_refuses_unknown_fields_and_empty_directories() {
    let directory = scratch_directory("tzt");
    let dir = directory.to_str().unwrap_or_default().to_string();
    let (code, _, stderr) = run(&["michelson", "tzt", &dir], "");
    assert_eq!(code, 1);
    assert!(stderr.contains("no .tzt file"), "{stderr}");
    let file = directory.join("typo.tzt");
    std::fs::write(&file, "code {}; input {}; output {}; amuont 5")
        .unwrap_or_else(|error| panic!("{error}"));
    let (code, stdout, _) = run(&["michelson", "tzt", &dir], "");
    let _ = std::fs::remove_dir_all(&directory);
    assert_eq!(code, 1);
    assert!(stdout.contains("unknown field amuont"), "{stdout}");
}

#[test]
fn devices_and_fifos_given_as_files_are_refused() {
    let (code, _, stderr) = run(&convert_text_to("text", "/dev/zero"), "");
    assert_eq!(code, 1);
    assert!(stderr.contains("not a regular file"), "{stderr}");
    let scratch = scratch_directory("fifo");
    let fifo = scratch.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|status| status.success()) {
        let path = fifo.to_str().unwrap_or_default().to_string();
        let (code, _, stderr) = run(&["tx", "check", &path], "");
        let (client_code, _, _) = run(&["client", "typecheck", "script", &path], "");
        let _ = std::fs::remove_dir_all(&scratch);
        assert_eq!(code, 1);
        assert!(stderr.contains("not a regular file"), "{stderr}");
        assert_eq!(client_code, 1);
    }
}

#[test]
fn deeply_nested_values_print_in_bounded_space() {
    // 10,000 left-nested pairs (20 KB packed): Octez's layout would print 299 MB.
    let packed = format!("05{}{}", "0707".repeat(10_000), "0001".repeat(10_001));
    let (code, stdout, stderr) = run(&["micheline", "unpack", &packed], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Pair (Pair (Pair"), "{}", &stdout[..40]);
    assert!(stdout.len() <= 10_100_000, "{} bytes", stdout.len());
}

#[test]
fn the_two_ill_typed_scripts_once_accepted_are_refused_in_octez_client_words() {
    let Some(ill_typed) = kestrel_testdata::require("michelson/ill_typed", "defects") else {
        return;
    };
    let cases = [
        (
            "badly_indented.tz",
            "At line 2 characters 2 to 16, misaligned expression",
        ),
        (
            "create_contract_rootname.tz",
            "At line 9 characters 11 to 31,\nunexpected annotation.",
        ),
    ];
    for (name, words) in cases {
        let path = ill_typed.join(name);
        let path = path.to_str().unwrap_or_default();
        let (code, _, stderr) = run(&["client", "typecheck", "script", path], "");
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stderr.contains(words), "{name}: {stderr}");
        let (code, _, stderr) = run(&["michelson", "typecheck", path], "");
        assert_eq!(code, 1, "{name}: {stderr}");
    }
}

#[test]
fn legacy_mode_is_a_flag_not_a_directory_name() {
    let Some(protocol) = kestrel_testdata::require("michelson/protocol", "defects") else {
        return;
    };
    // The Liquidity Baking CPMM subtracts mutez with `SUB`, deprecated since it was originated.
    let cpmm = protocol.join("cpmm.tz");
    let cpmm = cpmm.to_str().unwrap_or_default();
    let (code, _, stderr) = run(&["michelson", "typecheck", cpmm], "");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("SUB"), "{stderr}");
    let (code, stdout, stderr) = run(&["michelson", "typecheck", "--legacy", cpmm], "");
    assert_eq!((code, stdout.as_str()), (0, "Well typed\n"), "{stderr}");

    // A TZT test needing legacy mode, in a directory that happens to be named `legacy`.
    let scratch = scratch_directory("legacy");
    let directory = scratch.join("legacy");
    std::fs::create_dir_all(&directory).unwrap_or_else(|error| panic!("{error}"));
    std::fs::write(
        directory.join("sub_mutez.tzt"),
        "code { SUB } ;\ninput { Stack_elt mutez 5 ; Stack_elt mutez 3 } ;\noutput { Stack_elt mutez 2 }",
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let dir = directory.to_str().unwrap_or_default().to_string();
    // `-` reads one test from standard input.
    let (code, stdout, _) = run(
        &["michelson", "tzt", "--legacy", "-"],
        "code { SUB } ; input { Stack_elt mutez 5 ; Stack_elt mutez 3 } ; output { Stack_elt mutez 2 }",
    );
    assert_eq!((code, stdout.as_str()), (0, "PASS -\n1 passed, 0 failed\n"));
    let current = run(&["michelson", "tzt", &dir], "");
    let legacy = run(&["michelson", "tzt", "--legacy", &dir], "");
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(current.0, 1, "{}", current.1);
    assert!(current.1.contains("0 passed, 1 failed"), "{}", current.1);
    assert_eq!(legacy.0, 0, "{}", legacy.1);
    assert!(legacy.1.contains("1 passed, 0 failed"), "{}", legacy.1);
}

#[test]
fn ill_typed_storage_in_run_script_is_a_typing_error_with_line_and_column() {
    let Some(cons) = opcode_script("cons.tz") else {
        return;
    };
    let (code, _, stderr) = client_run_script(&cons, "{}", "\"x\"", &[]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        "Invalid argument passed to contract KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi.\nAt (unshown) location 0, value \"x\" is invalid for type int.\nFatal error:\n  error running script\n"
    );
    let (code, _, stderr) = client_run_script(&cons, "Unit", "1", &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("Runtime error"), "{stderr}");
    assert!(!stderr.contains("byte"), "{stderr}");
    assert_eq!(
        stderr,
        "Ill typed data: 1: Unit is not an expression of type list int\nAt line 1 characters 0 to 4, value Unit is invalid for type list int.\nFatal error:\n  error running script\n"
    );
}

#[test]
fn run_script_errors_give_lines_and_columns_and_binary_takes_macros() {
    let (Some(cons), Some(shifts)) = (opcode_script("cons.tz"), opcode_script("shifts.tz")) else {
        return;
    };
    let (code, _, stderr) = michelson_run_script(&cons, "{}", "\"x\"", &[]);
    assert_eq!(code, 1);
    assert!(
        stderr
            .contains("ill-typed input at line 1, column 0: value \"x\" is invalid for type int."),
        "{stderr}"
    );
    let (code, _, stderr) = michelson_run_script(&cons, "{ \"y\" }", "1", &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("ill-typed storage at line 1, column 2:"),
        "{stderr}"
    );
    let (code, _, stderr) = michelson_run_script(&shifts, "None", "(Left (Pair 1 257))", &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("At line 10 characters 25 to 28, unexpected arithmetic overflow"),
        "{stderr}"
    );
    // Macros have no binary tag: `convert` expands them, as octez-client's `convert data` does.
    let (code, stdout, stderr) = run(&convert_text_to("binary", "-"), "{ ASSERT_EQ }");
    assert_eq!(code, 0, "{stderr}");
    let (_, client, _) = run(
        &[
            "client",
            "convert",
            "data",
            "{ ASSERT_EQ }",
            "from",
            "michelson",
            "to",
            "binary",
        ],
        "",
    );
    assert_eq!(format!("0x{stdout}"), client);
}

#[test]
fn ill_typed_data_breaks_its_lines_where_octez_client_does() {
    // Too long for one line of octez-client's 78 columns: each box goes on a line of its own.
    let long = format!("\"{}\"", "a".repeat(60));
    let (code, _, stderr) = run(
        &[
            "client",
            "typecheck",
            "data",
            &long,
            "against",
            "type",
            "nat",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "Ill typed data:\n  1: {long}\nis not an expression of type nat\nAt line 1 characters 0 to 62, value {long}\nis invalid for type nat.\nFatal error:\n  ill-typed data\n"
        )
    );
    // The failing node inside a value is located in the value as octez-client prints it.
    let (code, _, stderr) = run(
        &[
            "client",
            "typecheck",
            "data",
            "{1;\"x\"}",
            "against",
            "type",
            "list int",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("Ill typed data: 1: { 1 ; \"x\" } is not an expression of type list int\nAt line 1 characters 6 to 9, value \"x\" is invalid for type int.\n"),
        "{stderr}"
    );
    // An application is printed in parentheses (octez-client's `print_expr`), and `hash data`
    // ends with its own words.
    let (code, _, stderr) = run(
        &[
            "client",
            "hash",
            "data",
            "Pair 1 \"x\"",
            "of",
            "type",
            "pair int int",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "Ill typed data: 1: (Pair 1 \"x\") is not an expression of type pair int int\nAt line 1 characters 8 to 11, value \"x\" is invalid for type int.\nFatal error:\n  ill-formed data\n"
    );
}

#[test]
fn run_script_takes_octez_client_units_defaults_and_addresses() {
    let (Some(amount), Some(balance), Some(sender), Some(source)) = (
        opcode_script("transfer_amount.tz"),
        opcode_script("balance.tz"),
        opcode_script("sender.tz"),
        opcode_script("source.tz"),
    ) else {
        return;
    };
    let stored = |script: &str, storage: &str, options: &[&str]| {
        let (code, stdout, stderr) = client_run_script(script, storage, "Unit", options);
        assert_eq!(code, 0, "{script} {options:?}: {stderr}");
        stdout.lines().nth(1).unwrap_or_default().trim().to_string()
    };
    // Amounts are in tez; octez-client's default amount is 0.05 tez.
    assert_eq!(stored(&amount, "0", &[]), "50000");
    assert_eq!(stored(&amount, "0", &["--amount", "1.5"]), "1500000");
    assert_eq!(stored(&balance, "0", &["--balance", "3"]), "3000000");
    // octez-client's `--source` is SENDER, its `--payer` is SOURCE.
    let (implicit, originated) = (
        "tz1cxcwwnzENRdhe2Kb8ZdTrdNy4bFNyScx5",
        "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi",
    );
    let initial = "\"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx\"";
    let options = ["--source", originated, "--payer", implicit];
    assert_eq!(
        stored(&sender, initial, &options),
        format!("\"{originated}\"")
    );
    assert_eq!(
        stored(&source, initial, &options),
        format!("\"{implicit}\"")
    );
}

#[test]
fn tabs_and_carriage_returns_are_unexpected_characters_listed_together() {
    // Octez's lexer skips only spaces and line feeds, and octez-client lists every character
    // its lexer skipped.
    let (code, _, stderr) = run(
        &[
            "client",
            "typecheck",
            "data",
            "{ 1 ;\t2 ; ~ }",
            "against",
            "type",
            "list int",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "Error:\n  Erroneous command line argument 3 ({ 1 ;\t2 ; ~ }).\n  At line 1 character 5, unexpected character \t\n  At line 1 character 10, unexpected character ~\n"
    );
    let script = "parameter unit;\r\nstorage unit;\r\ncode { CDR ; NIL operation ; PAIR }";
    let (code, _, stderr) = run(&["client", "typecheck", "script", "-"], script);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("At line 1 character 15, unexpected character \r\n  At line 2 character 13, unexpected character \r\n"),
        "{stderr:?}"
    );
}
