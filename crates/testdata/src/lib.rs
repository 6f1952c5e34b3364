//! Finds the shared conformance data (`../shared/testdata`) for tests and benchmarks, and reads
//! the constants tables of the format documents (`docs/formats/*.md`) for the tests that check
//! them against the code.
//!
//! DESIGN.md, "Test data": tests find the data through `KESTREL_TESTDATA`, defaulting to
//! `<workspace root>/../shared/testdata`. Where it is missing a test prints one line saying what it
//! skipped and why, except under `CI=true`, where missing data is a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod session;

pub use session::{parse_session, shell_words, RecordedCommand, Session, COMMAND_PREFIX};

/// The environment variable that overrides where the shared test data lives.
pub const TESTDATA_VARIABLE: &str = "KESTREL_TESTDATA";

/// The workspace root: two levels above this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The test-data directory, whether or not it exists.
pub fn testdata_dir() -> PathBuf {
    match std::env::var_os(TESTDATA_VARIABLE) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("../shared/testdata"),
    }
}

/// Whether this run is under CI (`CI=true`), where missing data must fail.
pub fn running_in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
}

/// Returns the path of `relative` inside the test data, or `None` after printing why the caller's
/// test is skipped. Panics (fails the test) when the data is missing under `CI=true`.
pub fn require(relative: &str, test_name: &str) -> Option<PathBuf> {
    let path = testdata_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{test_name}: skipped, test data {} not found (set {TESTDATA_VARIABLE})",
        path.display()
    );
    assert!(
        !running_in_ci(),
        "{message}; missing data fails under CI=true"
    );
    eprintln!("{message}");
    None
}

/// All files under `dir` (recursively) whose name ends with `suffix`, sorted by path.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The `| name | value |` rows after the `<!-- constants` marker of the format document
/// `docs/formats/<document>`. Panics (fails the calling test) when it cannot be read.
pub fn documented_constants(document: &str) -> BTreeMap<String, String> {
    let path = workspace_root().join("docs/formats").join(document);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path:?}: {error}"));
    let start = text.find("<!-- constants").expect("constants marker");
    text[start..]
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells.len() == 4 && cells[1] != "name" && !cells[1].starts_with("---"))
                .then(|| (cells[1].to_owned(), cells[2].to_owned()))
        })
        .collect()
}

/// Fails the calling test unless the constants table of `document` is exactly `code` (name,
/// value as the code has it), so a format document and its code cannot drift.
pub fn check_documented_constants(document: &str, code: &[(&str, String)]) {
    let in_code: BTreeMap<String, String> = code
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect();
    assert_eq!(
        documented_constants(document),
        in_code,
        "{document} and the code disagree"
    );
}
