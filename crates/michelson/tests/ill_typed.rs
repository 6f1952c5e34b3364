//! Every script of `michelson/ill_typed` must be refused by the typechecker (a `StaticError`), except
//! the few listed here that this implementation still accepts.

use kestrel_michelson::{Config, Script};

/// Scripts still accepted: `badly_indented.tz` is a layout lint of octez-client, not a type error;
/// `create_contract_rootname.tz` needs Octez's `%root` rule for originated scripts.
const STILL_ACCEPTED: &[&str] = &["badly_indented.tz", "create_contract_rootname.tz"];

fn run() {
    let Some(dir) =
        kestrel_testdata::require("michelson/ill_typed", "ill_typed_scripts_are_refused")
    else {
        return;
    };
    let mut files = kestrel_testdata::files_with_suffix(&dir, ".tz");
    files.sort();
    let mut accepted = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("script is readable");
        let Ok(node) = kestrel_micheline::parse_toplevel(&source) else {
            continue;
        };
        if Script::typecheck(&node, &Config::default()).is_ok() {
            accepted.push(
                file.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string(),
            );
        }
    }
    println!(
        "{} of {} ill-typed scripts refused",
        files.len() - accepted.len(),
        files.len()
    );
    let unexpected: Vec<&String> = accepted
        .iter()
        .filter(|name| !STILL_ACCEPTED.contains(&name.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "ill-typed scripts accepted: {unexpected:?}"
    );
}

#[test]
fn ill_typed_scripts_are_refused() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run)
        .expect("spawn")
        .join()
        .expect("no panic");
}
