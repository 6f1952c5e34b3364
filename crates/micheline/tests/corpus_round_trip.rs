//! Every `.tz` contract of the shared test data (but the misaligned one) parses, prints (Octez layout and script layout),
//! re-parses to the same tree, and round-trips through JSON; every contract whose primitives are
//! all in the Michelson table (i.e. without unexpanded macros such as `CMPEQ` or `DUUP`) also
//! round-trips through binary and PACK.

use kestrel_micheline::print::{to_script_text, to_text_indented, to_text_single_line};
use kestrel_micheline::{
    binary, json, location, pack, parse_expression, parse_toplevel, Node, ParseErrorKind,
};

/// The one contract whose layout Micheline's indentation rule refuses.
const MISALIGNED: &str = "ill_typed/badly_indented.tz";

fn all_prims_known(node: &Node) -> bool {
    location::prefix_order(node).all(|(_, node)| match &node.kind {
        kestrel_micheline::NodeKind::Prim { name, .. } => name.known().is_some(),
        _ => true,
    })
}

#[test]
fn every_contract_round_trips_through_text_json_and_binary() {
    let Some(dir) = kestrel_testdata::require(
        "michelson",
        "every_contract_round_trips_through_text_json_and_binary",
    ) else {
        return;
    };
    let files = kestrel_testdata::files_with_suffix(&dir, ".tz");
    assert!(files.len() > 400, "only {} contracts", files.len());
    let mut failures = Vec::new();
    let mut binary_checked = 0usize;
    for file in &files {
        let name = file.display().to_string();
        let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let script = match parse_toplevel(&source) {
            // Octez's parser refuses this one's layout too.
            Err(error) if name.ends_with(MISALIGNED) => {
                if error.kind != ParseErrorKind::Misaligned {
                    failures.push(format!("{name}: {}", error.describe(&source)));
                }
                continue;
            }
            Ok(_) if name.ends_with(MISALIGNED) => {
                failures.push(format!("{name}: misaligned, yet parsed"));
                continue;
            }
            Ok(script) => script,
            Err(error) => {
                failures.push(format!("{name}: {}", error.describe(&source)));
                continue;
            }
        };
        let layouts = [
            ("octez layout", to_text_indented(&script)),
            ("script layout", to_script_text(&script)),
        ];
        for (layout, printed) in layouts {
            match parse_toplevel(&printed) {
                Ok(reparsed) if reparsed == script => {}
                Ok(_) => failures.push(format!("{name}: {layout} re-parses to another tree")),
                Err(error) => failures.push(format!(
                    "{name}: {layout} does not re-parse: {}",
                    error.describe(&printed)
                )),
            }
        }
        let single = to_text_single_line(&script);
        if parse_expression(&single).ok().as_ref() != Some(&script) {
            failures.push(format!("{name}: single-line form does not round-trip"));
        }
        let json_text = json::to_json_string(&script);
        match json::from_json_str(&json_text) {
            Ok(read) if read == script => {}
            Ok(_) => failures.push(format!("{name}: JSON reads back another tree")),
            Err(error) => failures.push(format!("{name}: JSON does not read back: {error}")),
        }
        if all_prims_known(&script) {
            binary_checked += 1;
            match binary::encode(&script) {
                Ok(bytes) => match binary::decode(&bytes) {
                    Ok(decoded) if decoded == script => {}
                    Ok(_) => failures.push(format!("{name}: binary decodes to another tree")),
                    Err(error) => failures.push(format!("{name}: binary does not decode: {error}")),
                },
                Err(error) => failures.push(format!("{name}: binary encode failed: {error}")),
            }
            match pack::pack(&script).map(|packed| pack::unpack(&packed)) {
                Ok(Ok(unpacked)) if unpacked == script => {}
                _ => failures.push(format!("{name}: PACK/UNPACK does not round-trip")),
            }
        } else if binary::encode(&script).is_ok() {
            failures.push(format!(
                "{name}: a non-table primitive was encoded in binary"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures over {} contracts:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    assert!(
        binary_checked > 250,
        "only {binary_checked} contracts in binary"
    );
    eprintln!(
        "{} contracts round-trip through text and JSON, {binary_checked} also through binary",
        files.len()
    );
}
