//! The printer's oracle: every expression octez-client printed in the recorded regression outputs
//! (`michelson-regression/{opcodes,macros}/*.out`) is parsed back and re-printed byte-identically.
//!
//! - `storage` sections hold one value printed with `print_expr` at indentation 2;
//! - each `trace` stack holds elements printed with `print_expr` at column 6 (after `    [ `),
//!   one element per line start at exactly column 6, continuation lines deeper;
//! - the macro-expansion files hold a whole script printed with `print_expr` at column 0.

use kestrel_micheline::print::{to_trace_stack_text, write_indented, Wrapping};
use kestrel_micheline::{parse_expression, parse_toplevel};

/// One recorded expression: where it came from, its text (continuation lines de-indented), and
/// the indentation it was printed at.
struct Recorded {
    origin: String,
    text: String,
}

fn check(recorded: &Recorded, failures: &mut Vec<String>) {
    let node = match parse_expression(&recorded.text) {
        Ok(node) => node,
        Err(error) => {
            failures.push(format!(
                "{}: does not parse: {}\n{}",
                recorded.origin,
                error.describe(&recorded.text),
                recorded.text
            ));
            return;
        }
    };
    let mut printed = String::new();
    write_indented(&mut printed, &node, Wrapping::Wrapped, 0);
    if printed != recorded.text {
        failures.push(format!(
            "{}:\nexpected:\n{}\nprinted:\n{}",
            recorded.origin, recorded.text, printed
        ));
    }
}

/// Removes `indent` leading spaces from every line but the first.
fn dedent(lines: &[&str], indent: usize) -> String {
    let mut text = String::new();
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            text.push('\n');
            text.push_str(line.get(indent..).unwrap_or(""));
        } else {
            text.push_str(line);
        }
    }
    text
}

/// The storage value and the stack elements of one `.out` file.
fn expressions_of(name: &str, contents: &str) -> Vec<Recorded> {
    let lines: Vec<&str> = contents.lines().collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if line == "storage" {
            let mut end = index + 1;
            while end < lines.len() && lines[end].starts_with("  ") {
                end += 1;
            }
            let value: Vec<&str> = lines[index + 1..end].iter().map(|l| &l[2..]).collect();
            if !value.is_empty() {
                found.push(Recorded {
                    origin: format!("{name}:{} (storage)", index + 2),
                    text: dedent(&value, 0),
                });
            }
            index = end;
            continue;
        }
        if let Some(first) = line.strip_prefix("    [ ") {
            // A stack: gather its lines up to the one ending with ` ]`.
            let mut stack_lines = vec![first];
            let mut end = index;
            while !lines[end].ends_with(" ]") && end + 1 < lines.len() {
                end += 1;
                stack_lines.push(lines[end].get(6..).unwrap_or(""));
            }
            if let Some(last) = stack_lines.last_mut() {
                *last = last.strip_suffix(" ]").unwrap_or(last);
                *last = last.strip_suffix(' ').unwrap_or(last);
            }
            // Split into elements: an element starts on a line not beginning with a space.
            let mut element: Vec<&str> = Vec::new();
            let mut element_line = index;
            for (offset, stack_line) in stack_lines.iter().enumerate() {
                if !stack_line.starts_with(' ') && !element.is_empty() {
                    found.push(Recorded {
                        origin: format!("{name}:{} (stack)", element_line + 1),
                        text: dedent(&element, 0),
                    });
                    element.clear();
                }
                if element.is_empty() {
                    element_line = index + offset;
                }
                element.push(stack_line);
            }
            if !element.is_empty() && !element[0].is_empty() {
                found.push(Recorded {
                    origin: format!("{name}:{} (stack)", element_line + 1),
                    text: dedent(&element, 0),
                });
            }
            index = end + 1;
            continue;
        }
        index += 1;
    }
    found
}

#[test]
fn every_recorded_storage_and_stack_expression_reprints_identically() {
    let Some(dir) = kestrel_testdata::require(
        "michelson-regression/opcodes",
        "every_recorded_storage_and_stack_expression_reprints_identically",
    ) else {
        return;
    };
    let mut files = kestrel_testdata::files_with_suffix(&dir, ".out");
    if let Some(macros) = dir.parent().map(|parent| parent.join("macros")) {
        files.extend(kestrel_testdata::files_with_suffix(&macros, ".out"));
    }
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut multi_line = 0usize;
    for file in &files {
        let contents =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for recorded in expressions_of(&name, &contents) {
            multi_line += usize::from(recorded.text.contains('\n'));
            check(&recorded, &mut failures);
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} expressions found");
    assert!(
        multi_line > 50,
        "only {multi_line} multi-line expressions found"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} expressions differ:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n\n")
    );
    eprintln!("{checked} recorded expressions ({multi_line} multi-line) re-printed identically");
}

/// Every whole stack block (`    [ ... ]`) of the trace sections, re-printed from its parsed
/// elements with [`to_trace_stack_text`].
#[test]
fn every_recorded_trace_stack_reprints_identically() {
    let Some(dir) = kestrel_testdata::require(
        "michelson-regression/opcodes",
        "every_recorded_trace_stack_reprints_identically",
    ) else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for file in kestrel_testdata::files_with_suffix(&dir, ".out") {
        let contents =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let lines: Vec<&str> = contents.lines().collect();
        let mut index = 0;
        while index < lines.len() {
            if !lines[index].starts_with("    [ ") {
                index += 1;
                continue;
            }
            let mut end = index;
            while !lines[end].ends_with(" ]") && end + 1 < lines.len() {
                end += 1;
            }
            let block = lines[index..=end].join("\n");
            let name = file.display().to_string();
            let elements: Vec<_> = expressions_of(&name, &block)
                .iter()
                .filter_map(|recorded| parse_expression(&recorded.text).ok())
                .collect();
            let printed = format!("    {}", to_trace_stack_text(&elements, 4));
            if printed != block {
                failures.push(format!(
                    "{name}:{}:\nexpected:\n{block}\nprinted:\n{printed}",
                    index + 1
                ));
            }
            checked += 1;
            index = end + 1;
        }
    }
    assert!(checked > 1000, "only {checked} stacks found");
    assert!(
        failures.is_empty(),
        "{} of {checked} stacks differ:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n\n")
    );
}

#[test]
fn every_recorded_macro_expansion_script_reprints_identically() {
    let Some(dir) = kestrel_testdata::require(
        "michelson-regression/macros",
        "every_recorded_macro_expansion_script_reprints_identically",
    ) else {
        return;
    };
    let files = kestrel_testdata::files_with_suffix(&dir, ".out");
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for file in &files {
        let contents =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // The script is the file's first block, up to the first blank line.
        let script = contents.split("\n\n").next().unwrap_or("").trim_end();
        let node = match parse_toplevel(script) {
            Ok(node) => node,
            Err(error) => {
                failures.push(format!("{}: {}", file.display(), error.describe(script)));
                continue;
            }
        };
        let mut printed = String::new();
        write_indented(&mut printed, &node, Wrapping::Wrapped, 0);
        if printed != script {
            failures.push(format!(
                "{}:\nexpected:\n{script}\nprinted:\n{printed}",
                file.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
