//! `kestrel micheline ...` run as a process: outputs, error messages and exit codes.

mod support;

use support::run_kestrel as run;

fn check(args: &[&str], stdin: &str, expected_code: i32, expected_stdout: &str) {
    let (code, stdout, stderr) = run(args, stdin);
    assert_eq!(code, expected_code, "{args:?}: stderr {stderr}");
    assert_eq!(stdout, expected_stdout, "{args:?}");
}

fn check_error(args: &[&str], stdin: &str, expected_code: i32, stderr_contains: &str) {
    let (code, stdout, stderr) = run(args, stdin);
    assert_eq!(code, expected_code, "{args:?}: stdout {stdout}");
    assert!(
        stderr.contains(stderr_contains),
        "{args:?}: stderr {stderr:?} lacks {stderr_contains:?}"
    );
}

#[test]
fn pack_unpack_and_hash_the_documented_vector() {
    check(
        &["micheline", "pack", "Pair 1 \"foo\""],
        "",
        0,
        "05070700010100000003666f6f\n",
    );
    check(
        &["micheline", "pack", "--json", "Pair 1 \"foo\""],
        "",
        0,
        "{\"packed\":\"05070700010100000003666f6f\"}\n",
    );
    check(
        &["micheline", "hash", "Pair 1 \"foo\""],
        "",
        0,
        "exprvPNUJQXpct6VrbJQCazrDgh7pN8d8SH8P1UFHMrRPmQnxC16nr\n",
    );
    check(
        &["micheline", "unpack", "0x05070700010100000003666f6f"],
        "",
        0,
        "Pair 1 \"foo\"\n",
    );
    check(
        &["micheline", "unpack", "--json", "05070700010100000003666f6f"],
        "",
        0,
        "{\"text\":\"Pair 1 \\\"foo\\\"\",\"expression\":{\"prim\":\"Pair\",\"args\":[{\"int\":\"1\"},{\"string\":\"foo\"}]}}\n",
    );
}

#[test]
fn convert_between_every_form() {
    let text = "{ DROP ; PUSH @x nat 1 }";
    let binary_hex = "020000000e0320084303620001000000024078";
    let json =
        r#"[{"prim":"DROP"},{"prim":"PUSH","args":[{"prim":"nat"},{"int":"1"}],"annots":["@x"]}]"#;
    check(
        &["micheline", "convert", "--from", "text", "--to", "binary"],
        text,
        0,
        &format!("{binary_hex}\n"),
    );
    check(
        &[
            "micheline",
            "convert",
            "--from",
            "binary",
            "--to",
            "json",
            "-",
        ],
        binary_hex,
        0,
        &format!("{json}\n"),
    );
    check(
        &["micheline", "convert", "--from", "json", "--to", "text"],
        json,
        0,
        &format!("{text}\n"),
    );
    // A script toplevel converts too.
    check(
        &["micheline", "convert", "--from", "text", "--to", "text"],
        "parameter unit; storage unit; code { CDR ; NIL operation ; PAIR }",
        0,
        "{ parameter unit ; storage unit ; code { CDR ; NIL operation ; PAIR } }\n",
    );
}

#[test]
fn errors_give_positions_and_exit_codes() {
    check_error(
        &["micheline", "pack", "{ DROP ;\n  ~ }"],
        "",
        1,
        "error: At line 2 character 2, unexpected character ~",
    );
    check_error(
        &["micheline", "unpack", "0503ff"],
        "",
        1,
        "error: unknown primitive tag 255 at byte 2",
    );
    check_error(
        &["micheline", "unpack", "0603"],
        "",
        1,
        "error: packed data starts with 0x05",
    );
    check_error(
        &["micheline", "convert", "--from", "json", "--to", "text"],
        "{\"int\": 1}",
        1,
        "error: field \"int\" has the wrong type at byte 8",
    );
    check_error(
        &["micheline", "pack", "Pair 1 (Stack_elt 2)"],
        "",
        1,
        "error: primitive Stack_elt",
    );
    check_error(
        &["micheline", "convert", "--from", "yaml", "--to", "text"],
        "",
        2,
        "invalid value 'yaml'",
    );
    check_error(
        &["micheline", "frobnicate"],
        "",
        2,
        "unrecognized subcommand",
    );
}

#[test]
fn every_verb_has_help() {
    for verb in ["pack", "unpack", "convert", "hash"] {
        let (code, stdout, _) = run(&["micheline", verb, "--help"], "");
        assert_eq!(code, 0, "{verb}");
        assert!(
            stdout.contains("Usage: kestrel micheline"),
            "{verb}: {stdout}"
        );
    }
}
