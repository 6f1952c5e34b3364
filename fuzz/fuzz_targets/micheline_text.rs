//! Fuzzes the Micheline text parser and the printer: any input parses or fails with an error;
//! what parses prints (in every layout) to text that parses back to the same tree, and converts to
//! JSON and back unchanged.
#![no_main]

use kestrel_micheline::print::{to_script_text, to_text_indented, to_text_single_line};
use kestrel_micheline::{json, parse_expression, parse_toplevel};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(node) = parse_expression(source) {
        for printed in [to_text_indented(&node), to_text_single_line(&node)] {
            let reparsed = parse_expression(&printed);
            assert!(
                reparsed.as_ref() == Ok(&node),
                "{printed:?} does not round-trip"
            );
        }
        let json_text = json::to_json_string(&node);
        assert!(json::from_json_str(&json_text).as_ref() == Ok(&node));
    }
    if let Ok(script) = parse_toplevel(source) {
        let printed = to_script_text(&script);
        assert!(
            parse_toplevel(&printed).as_ref() == Ok(&script),
            "{printed:?}"
        );
    }
    let _ = json::from_json_str(source);
});
