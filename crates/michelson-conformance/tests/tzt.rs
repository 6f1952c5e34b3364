//! Runs the whole TZT reference suite (`testdata/tzt`) and checks the pass count does not
//! regress below the recorded figure.

#![allow(clippy::unwrap_used)]

use kestrel_michelson_conformance::tzt::run_tzt_with;

/// The number of TZT files this implementation passes; raise it when more pass.
const MINIMUM_PASSING: usize = 792;

/// The suite's directory of tests written for legacy mode (deprecated instructions such as `SUB`
/// on mutez); every other test runs in the current mode.
const LEGACY_DIRECTORY: &str = "legacy";

fn run_suite() {
    let Some(dir) = kestrel_testdata::require("tzt", "tzt_suite") else {
        return;
    };
    let mut files = kestrel_testdata::files_with_suffix(&dir, ".tzt");
    files.sort();
    let mut passed = 0;
    let mut failures = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("TZT file is readable");
        let legacy = file.starts_with(dir.join(LEGACY_DIRECTORY));
        match run_tzt_with(&source, legacy) {
            Ok(()) => passed += 1,
            Err(why) => failures.push(format!(
                "{}: {}",
                file.strip_prefix(&dir).unwrap_or(file).display(),
                why
            )),
        }
    }
    for failure in &failures {
        println!("FAIL {failure}");
    }
    println!("{passed} passed, {} failed", failures.len());
    assert!(
        passed >= MINIMUM_PASSING,
        "{passed} passed, below the recorded {MINIMUM_PASSING}"
    );
}

#[test]
fn tzt_suite() {
    // The suite includes deep programs; run on a thread with the main thread's 8 MiB stack.
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run_suite)
        .unwrap()
        .join()
        .unwrap();
}
