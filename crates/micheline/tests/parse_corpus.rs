//! Every Michelson contract and TZT file of the shared test data parses as a toplevel sequence.

use kestrel_micheline::parse_toplevel;

fn check_all(relative: &str, suffix: &str, test_name: &str) {
    let Some(dir) = kestrel_testdata::require(relative, test_name) else {
        return;
    };
    let files = kestrel_testdata::files_with_suffix(&dir, suffix);
    assert!(
        !files.is_empty(),
        "no {suffix} files under {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for file in &files {
        let source =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if let Err(error) = parse_toplevel(&source) {
            failures.push(format!("{}: {}", file.display(), error.describe(&source)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn every_contract_parses() {
    check_all("michelson", ".tz", "every_contract_parses");
}

#[test]
fn every_tzt_file_parses() {
    check_all("tzt", ".tzt", "every_tzt_file_parses");
}
