//! Runs every recorded octez-client command of `octez-protocol/client/*.out` and
//! `michelson-regression/*/*.out` through `kestrel client`, exactly as recorded (the words after
//! `./octez-client`, with `michelson_test_scripts/` pointing at the shared scripts), and compares
//! the whole output (standard output then standard error) with the recording, whitespace runs
//! aside.
//!
//! Commands whose recorded input was masked by the recorder (`"[CONTRACT_HASH]"`,
//! `"[PUBLIC_KEY]"`, ...) cannot be run as recorded (octez-client itself rejects those strings);
//! they are counted apart, and run once more with the masked value recovered from the recording's
//! `Raw packed data` (unpacked, then normalized to its readable form), which checks their hashes
//! and gas.

mod support;

use kestrel_testdata::shell_words;
use std::path::Path;

/// Commands whose whole output must match: all of them.
const MINIMUM_IDENTICAL: usize = 303;

/// What the recorder put in place of values it masked.
const MASKS: &[&str] = &[
    "[CONTRACT_HASH]",
    "[PUBLIC_KEY_HASH]",
    "[PUBLIC_KEY]",
    "[TIMESTAMP]",
];

/// The (command line, expected output) pairs of one recorded file.
fn cases(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut blocks = text.split("\n./octez-client ");
    let first = blocks.next().unwrap_or("");
    let mut rest: Vec<&str> = blocks.collect();
    if let Some(command) = first.strip_prefix("./octez-client ") {
        rest.insert(0, command);
    }
    for block in rest {
        let (command, body) = block.split_once('\n').unwrap_or((block, ""));
        found.push((command.to_string(), body.trim_matches('\n').to_string()));
    }
    found
}

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn recorded_octez_client_commands_print_the_same() {
    let (Some(client), Some(regression), Some(scripts)) = (
        kestrel_testdata::require("octez-protocol/client", "recorded_octez_client_commands"),
        kestrel_testdata::require("michelson-regression", "recorded_octez_client_commands"),
        kestrel_testdata::require("michelson", "recorded_octez_client_commands"),
    ) else {
        return;
    };
    let mut files = kestrel_testdata::files_with_suffix(&client, ".out");
    files.extend(kestrel_testdata::files_with_suffix(&regression, ".out"));
    let scripts = format!("{}/", scripts.display());
    let (mut total, mut identical, mut masked, mut unmasked_identical) = (0, 0, 0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let name = file.file_name().map(Path::new).unwrap_or(file).display();
        for (command, expected) in cases(&text) {
            if MASKS.iter().any(|mask| command.contains(mask)) {
                masked += 1;
                if let Some(got) = run_unmasked(&command, &expected) {
                    if normalized(&got) == normalized(&expected) {
                        unmasked_identical += 1;
                    } else {
                        println!("DIFFERS (unmasked) {name}: {command}\n  got {got}");
                    }
                }
                continue;
            }
            total += 1;
            let words: Vec<String> = shell_words(&command)
                .into_iter()
                .map(|w| w.replacen("michelson_test_scripts/", &scripts, 1))
                .collect();
            let mut arguments = vec!["client"];
            arguments.extend(words.iter().map(String::as_str));
            let (_, stdout, stderr) = support::run_kestrel(&arguments, "");
            let got = format!("{stdout}{stderr}");
            if normalized(&got) == normalized(&expected) {
                identical += 1;
            } else {
                let (want, got) = (normalized(&expected), normalized(&got));
                let at = want
                    .chars()
                    .zip(got.chars())
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = at.saturating_sub(40);
                let excerpt = |s: &str| s.chars().skip(from).take(120).collect::<String>();
                println!(
                    "DIFFERS {name}: {command}\n  want …{}\n  got  …{}",
                    excerpt(&want),
                    excerpt(&got)
                );
            }
        }
    }
    println!(
        "recorded octez-client commands: {identical}/{total} identical; with masked inputs: {unmasked_identical}/{masked} identical once the value is recovered"
    );
    assert!(total >= 300, "only {total} recorded commands found");
    assert!(
        identical >= MINIMUM_IDENTICAL,
        "{identical}/{total} identical, expected at least {MINIMUM_IDENTICAL}"
    );
    assert!(masked >= 10, "only {masked} masked commands found");
    assert_eq!(unmasked_identical, masked);
}

/// Runs a `hash data "[MASK]" of type T` command with the masked value recovered from the
/// recording's packed bytes; `None` when the recording has none.
fn run_unmasked(command: &str, expected: &str) -> Option<String> {
    let packed = expected
        .lines()
        .find_map(|line| line.strip_prefix("Raw packed data: "))?;
    let words = shell_words(command);
    let ty = words.last()?.clone();
    let (_, optimized, _) =
        support::run_kestrel(&["client", "unpack", "michelson", "data", packed], "");
    let (_, readable, _) = support::run_kestrel(
        &[
            "client",
            "normalize",
            "data",
            optimized.trim(),
            "of",
            "type",
            &ty,
        ],
        "",
    );
    let arguments: Vec<String> = words
        .into_iter()
        .map(|word| {
            if MASKS.iter().any(|mask| word.contains(mask)) {
                readable.trim().to_string()
            } else {
                word
            }
        })
        .collect();
    let mut full = vec!["client"];
    full.extend(arguments.iter().map(String::as_str));
    let (_, stdout, stderr) = support::run_kestrel(&full, "");
    Some(format!("{stdout}{stderr}"))
}

/// `expand macros in` prints each recorded macro expansion of `michelson-regression/macros`
/// (`Macro_expansion-_macros-NAME.out` records `michelson/macros/NAME.tz`), whitespace aside.
#[test]
fn recorded_macro_expansions_print_the_same() {
    let (Some(recorded), Some(scripts)) = (
        kestrel_testdata::require("michelson-regression/macros", "recorded_macro_expansions"),
        kestrel_testdata::require("michelson/macros", "recorded_macro_expansions"),
    ) else {
        return;
    };
    let files = kestrel_testdata::files_with_suffix(&recorded, ".out");
    let mut identical = 0;
    for file in &files {
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let name = stem.trim_start_matches("Macro_expansion-_macros-");
        let script = scripts.join(format!("{name}.tz"));
        let script = script.to_str().unwrap_or_default();
        let (_, stdout, stderr) =
            support::run_kestrel(&["client", "expand", "macros", "in", script], "");
        let expected = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        if normalized(&format!("{stdout}{stderr}")) == normalized(&expected) {
            identical += 1;
        } else {
            println!("DIFFERS {name}: {stdout}{stderr}");
        }
    }
    println!(
        "recorded macro expansions: {identical}/{} identical",
        files.len()
    );
    assert!(files.len() >= 29, "only {} recordings found", files.len());
    assert_eq!(identical, files.len());
}
