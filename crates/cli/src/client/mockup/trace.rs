//! The error trace octez-client prints after a failed simulation
//! (`src/proto_025_PsUshuai/lib_client/michelson_v1_error_reporter.ml`), for the errors the
//! protocol's application reports: a rejected script (`Runtime error in contract …`, the
//! contract's code with numbered lines, `script reached FAILWITH instruction`, `with VALUE`), a
//! bad parameter, an ill-typed contract; other errors by their id.
//!
//! A rejected script's `At line L characters A to B,` line: Octez prints the code with macros
//! unexpanded (`Michelson_v1_printer.unparse_toplevel`), parses that text again, and looks the
//! error's location (a node of the stored, expanded code) up in the reparsed text's expansion
//! table: a node a macro expanded to is placed at the macro (`ASSERT_SOME`).

use crate::client::engine::failure_span;
use crate::client::report::{at, ill_typed_data_header, invalid_value};
use kestrel_micheline::Node;
use kestrel_protocol::receipt::ProtocolError;

/// The trace of `errors`, raised while running `contract` (its address and code) when known.
pub fn render(errors: &[ProtocolError], contract: Option<(&str, &Node)>) -> String {
    let mut out = String::new();
    // The value an `Ill_typed_data` printed, in which the errors after it are placed; after a
    // bad parameter, they are placed by location only (`At (unshown) location N`).
    let mut data_text: Option<String> = None;
    let node_field = |error: &ProtocolError, name: &str| {
        error
            .fields
            .get(name)
            .and_then(|value| kestrel_micheline::json::from_json_str(&value.to_string()).ok())
    };
    for error in errors {
        let location = error
            .fields
            .get("location")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let place = |text: &Option<String>| -> String {
            let span = text.as_ref().and_then(|text| {
                let node = kestrel_micheline::parse_expression(text).ok()?;
                let at_node =
                    kestrel_micheline::location::node_at(&node, usize::try_from(location).ok()?)?;
                // Octez's parser starts a parenthesized application at its `(`.
                let mut span = at_node.span;
                if span.start > 0 && text.as_bytes().get(span.start as usize - 1) == Some(&b'(') {
                    span.start -= 1;
                }
                Some((text, span))
            });
            match span {
                Some((text, span)) => at(text, span),
                None => format!("At (unshown) location {location}"),
            }
        };
        let id = error
            .id
            .rsplit_once("025-PsUshuai.")
            .map_or(error.id.as_str(), |(_, id)| id);
        let address = contract.map_or("", |(address, _)| address);
        match id {
            "michelson_v1.script_rejected" => {
                out.push_str(&format!("Runtime error in contract {address}:\n"));
                if let Some((_, code)) = contract {
                    let text = kestrel_protocol::render::script_text(code);
                    out.push_str(&numbered(&text));
                    let span = error
                        .fields
                        .get("location")
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|location| u32::try_from(location).ok())
                        .and_then(|location| failure_span(&text, location));
                    if let Some(span) = span {
                        out.push_str(&format!("{},\n", at(&text, span)));
                    }
                }
                out.push_str("script reached FAILWITH instruction\n");
                if let Some(with) = error.fields.get("with").and_then(|value| {
                    kestrel_micheline::json::from_json_str(&value.to_string()).ok()
                }) {
                    out.push_str(&format!(
                        "with {}\n",
                        kestrel_micheline::print::to_text_indented(&with)
                    ));
                }
            }
            "michelson_v1.bad_contract_parameter" => {
                out.push_str(&format!("Invalid argument passed to contract {address}.\n"));
            }
            "michelson_v1.ill_typed_contract" => out.push_str("Ill typed contract.\n"),
            "michelson_v1.ill_typed_data" => {
                let (Some(value), Some(ty)) = (
                    node_field(error, "ill_typed_expression"),
                    node_field(error, "expected_type"),
                ) else {
                    continue;
                };
                let text = kestrel_micheline::print::to_text_indented_wrapped(&value);
                let ty = kestrel_micheline::print::to_text_single_line(&ty);
                out.push_str(&ill_typed_data_header(&text, &ty));
                out.push('\n');
                data_text = Some(text);
            }
            "michelson_v1.invalid_constant" => {
                let (Some(value), Some(ty)) = (
                    node_field(error, "wrong_expression"),
                    node_field(error, "expected_type"),
                ) else {
                    continue;
                };
                let value = kestrel_micheline::print::to_text_indented_wrapped(&value);
                let ty = kestrel_micheline::print::to_text_single_line(&ty);
                out.push_str(&invalid_value(&place(&data_text), &value, &ty));
                out.push('\n');
            }
            "michelson_v1.unexpected_forged_value" => {
                let place = place(&data_text);
                let separator = if data_text.is_some() { ",\n" } else { ", " };
                out.push_str(&format!("{place}{separator}Unexpected forged value.\n"));
            }
            other => out.push_str(&format!("Error: {other}\n")),
        }
    }
    out
}

/// `text` with its lines numbered as octez-client numbers a contract's code: `  1: …`, with
/// the numbers zero-padded to the width of the last one.
fn numbered(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let width = lines.len().to_string().len();
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| format!("  {:0width$}: {line}\n", index + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded trace of `test_contract_fails.out`: the `FAILWITH` the `ASSERT_SOME` macro
    /// expands to is placed at the macro.
    #[test]
    fn a_rejected_script_prints_its_numbered_code_place_and_value() {
        let code = kestrel_micheline::parse_toplevel(
            "{ parameter address ; storage unit ; code { CAR ; CONTRACT unit ; ASSERT_SOME ; DROP ; UNIT ; NIL operation ; PAIR } }",
        )
        .expect("Micheline");
        let mut fields = serde_json::Map::new();
        fields.insert("with".into(), serde_json::json!({"prim": "Unit"}));
        // The expanded code's node 14 (prefix order): `ASSERT_SOME`'s `FAILWITH`.
        fields.insert("location".into(), serde_json::json!(14));
        let error = ProtocolError {
            category: "temporary".into(),
            id: "proto.025-PsUshuai.michelson_v1.script_rejected".into(),
            fields,
        };
        let text = render(&[error], Some(("KT1X", &code)));
        assert!(text.starts_with("Runtime error in contract KT1X:\n  1: { parameter address ;\n  2:   storage unit ;\n"), "{text}");
        assert!(
            text.ends_with(
                "At line 3 characters 31 to 42,\nscript reached FAILWITH instruction\nwith Unit\n"
            ),
            "{text}"
        );
        assert_eq!(numbered(&"x\n".repeat(10)).lines().next(), Some("  01: x"));
    }
}
