//! Every Michelson contract (but the misaligned one, which octez-client refuses too) and TZT file
//! (whose runners do not apply the layout rule) of the shared test data parses as a toplevel
//! sequence.

use kestrel_micheline::{
    parse_toplevel, parse_toplevel_any_layout, Node, ParseError, ParseErrorKind,
};

/// The contract whose layout Micheline's indentation rule refuses.
const MISALIGNED: &str = "ill_typed/badly_indented.tz";

fn check_all(
    relative: &str,
    suffix: &str,
    test_name: &str,
    parse: fn(&str) -> Result<Node, ParseError>,
) {
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
        let misaligned = file.ends_with(MISALIGNED);
        match parse(&source) {
            Err(error) if misaligned && error.kind == ParseErrorKind::Misaligned => {}
            Err(error) => failures.push(format!("{}: {}", file.display(), error.describe(&source))),
            Ok(_) if misaligned => failures.push(format!("{}: parsed", file.display())),
            Ok(_) => {}
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
    check_all("michelson", ".tz", "every_contract_parses", parse_toplevel);
}

#[test]
fn every_tzt_file_parses() {
    check_all(
        "tzt",
        ".tzt",
        "every_tzt_file_parses",
        parse_toplevel_any_layout,
    );
}

/// What octez-client 025 prints for the TZT files its parser refuses for their layout
/// (`tzt_regression.ml`, `U025-- Run TZT.out`): the layout rule gives the same words.
#[test]
fn misaligned_tzt_files_are_refused_in_octez_words() {
    let Some(dir) =
        kestrel_testdata::require("tzt", "misaligned_tzt_files_are_refused_in_octez_words")
    else {
        return;
    };
    let cases = [
        (
            "view_02.tzt",
            "At line 17 characters 6 to 62, misaligned expression",
        ),
        (
            "view_03.tzt",
            "At line 17 characters 6 to 58, misaligned expression",
        ),
        (
            "view_04.tzt",
            "At line 17 characters 6 to 56, misaligned expression",
        ),
    ];
    for (name, words) in cases {
        let source =
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let error = parse_toplevel(&source)
            .err()
            .map(|error| error.describe(&source));
        assert_eq!(error.as_deref(), Some(words), "{name}");
    }
}
