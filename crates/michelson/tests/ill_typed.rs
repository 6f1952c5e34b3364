//! The test scripts as octez-client 025 judges them: every script of `michelson/ill_typed` is
//! refused (by the parser, as `badly_indented.tz`, or the typechecker), and every script Octez's
//! typecheck regression (`contract_typecheck_regression.ml`, protocol 025) finds well typed is
//! accepted, except the few listed here with the reason.

use kestrel_michelson::{Config, Script};
use std::path::{Path, PathBuf};

/// Scripts Octez 025 typechecks that this implementation still refuses. The three `constant`
/// scripts are well typed only once the constants exist: Octez's regression
/// (`tezt/tests/contract_typecheck_regression.ml`) registers `999`, `Unit` and `unit` before
/// typechecking (their hashes, blake2b of the binary expression without the `05`, are the ones
/// the scripts name), and without them Octez refuses the scripts too; this typechecker has no
/// global-constants table to register them in. `sapling_empty_state.tz` needs Sapling, which is
/// not supported.
const STILL_REFUSED: &[&str] = &[
    "mini_scenarios/999_constant.tz",
    "mini_scenarios/constant_entrypoints.tz",
    "mini_scenarios/constant_unit.tz",
    "opcodes/sapling_empty_state.tz",
];

/// Scripts outside `ill_typed/` that Octez 025 refuses too, so they are no part of its
/// well-typed list: `legacy/` holds instructions removed from the language, the two ticket
/// scripts predate `TICKET` returning an option (their `_015` versions are the current ones),
/// and the transaction-rollup type is gone.
fn refused_by_octez_too(relative: &str) -> bool {
    relative.starts_with("legacy/")
        || [
            "mini_scenarios/add_clear_tickets.tz",
            "mini_scenarios/send_tickets_in_big_map.tz",
            "mini_scenarios/tx_rollup_deposit_013_014.tz",
            "mini_scenarios/tx_rollup_deposit_015_015.tz",
        ]
        .contains(&relative)
}

/// Scripts originated under earlier protocols, which Octez runs in legacy mode (the Liquidity
/// Baking CPMM subtracts mutez with `SUB`).
const LEGACY: &[&str] = &["protocol/cpmm.tz"];

/// Whether `file` parses and typechecks.
fn accepted(file: &Path, legacy: bool) -> bool {
    let source = std::fs::read_to_string(file).expect("script is readable");
    let Ok(node) = kestrel_micheline::parse_toplevel(&source) else {
        return false;
    };
    let config = Config {
        legacy,
        ..Config::default()
    };
    Script::typecheck(&node, &config).is_ok()
}

/// `file` relative to `root`, with `/` separators.
fn relative(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every `.tz` file under `root`, sorted.
fn scripts_under(root: &Path) -> Vec<PathBuf> {
    let mut pending = vec![root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("directory is readable") {
            let path = entry.expect("entry is readable").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "tz") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn refuse_ill_typed() {
    let Some(dir) =
        kestrel_testdata::require("michelson/ill_typed", "ill_typed_scripts_are_refused")
    else {
        return;
    };
    let files = scripts_under(&dir);
    let accepted: Vec<String> = files
        .iter()
        .filter(|file| accepted(file, false))
        .map(|file| relative(&dir, file))
        .collect();
    println!(
        "{} of {} ill-typed scripts refused",
        files.len() - accepted.len(),
        files.len()
    );
    assert!(
        accepted.is_empty(),
        "ill-typed scripts accepted: {accepted:?}"
    );
}

fn accept_well_typed() {
    let Some(root) = kestrel_testdata::require("michelson", "well_typed_scripts_are_accepted")
    else {
        return;
    };
    let mut checked = 0;
    let mut refused = Vec::new();
    for file in scripts_under(&root) {
        let name = relative(&root, &file);
        if name.starts_with("ill_typed/") || refused_by_octez_too(&name) {
            continue;
        }
        checked += 1;
        if !accepted(&file, LEGACY.contains(&name.as_str())) {
            refused.push(name);
        }
    }
    println!(
        "{} of {checked} well-typed scripts accepted",
        checked - refused.len()
    );
    assert_eq!(refused, STILL_REFUSED, "well-typed scripts refused");
}

/// Runs `check` on a thread with room for the typechecker's deepest scripts.
fn on_big_stack(check: fn()) {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(check)
        .expect("spawn")
        .join()
        .expect("no panic");
}

#[test]
fn ill_typed_scripts_are_refused() {
    on_big_stack(refuse_ill_typed);
}

#[test]
fn well_typed_scripts_are_accepted() {
    on_big_stack(accept_well_typed);
}
