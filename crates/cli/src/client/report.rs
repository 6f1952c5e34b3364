//! Errors of `kestrel client` in octez-client's words and layout (`Error:` and its indented
//! lines, `At line L characters A to B,`, `Runtime error in contract ...` with the numbered
//! source, `Fatal error:`), each with a stable kind and position for `--json`, and its exit code
//! (1 for a failure, 2 for a command line octez-client would not accept).

use crate::client::engine::{Failure, TraceStep};
use crate::client::grammar::UsageError;
use crate::input::InputError;
use kestrel_micheline::node::position_of;
use kestrel_micheline::{ParseError, ParseErrorKind, Span};

/// The width octez-client lays its messages out in: OCaml `Format`'s default margin, which the
/// client's message printer keeps. A box of Octez's error printer stays on one line when it fits.
const OCTEZ_MARGIN_COLUMNS: usize = 78;

/// Exit code of a failed command.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of a command line that is not a valid command.
pub const EXIT_USAGE: u8 = 2;

/// A failed command: what it prints and how it exits (boxed: errors travel through every
/// command's `Result`).
#[derive(Debug)]
pub struct ClientError(Box<Details>);

#[derive(Debug)]
struct Details {
    /// A stable name of the kind of error (`usage`, `parse`, `typecheck`, `runtime`, ...).
    kind: &'static str,
    /// The whole text printed on standard error.
    text: String,
    /// The message alone (for `--json`).
    message: String,
    /// Where in its text the error is: (origin, line, first column, last column).
    position: Option<(String, usize, usize, usize)>,
    /// The exit code.
    exit_code: u8,
}

/// `At line L characters A to B` for `span` of `text` (octez-client's location form).
pub fn at(text: &str, span: Span) -> String {
    let (line, start) = position_of(text, span.start as usize);
    let (_, end) = position_of(text, span.end as usize);
    format!("At line {line} characters {start} to {end}")
}

/// The failure at its place in `text`: `At line L characters A to B,` then the sentence on the
/// next line, except `value V is invalid for type T.`, which Octez prints in boxes that stay on
/// the location's line as far as they fit.
pub(crate) fn located(text: &str, failure: &Failure) -> String {
    let place = at(text, failure.span);
    match &failure.invalid_value {
        Some((value, ty)) => invalid_value(&place, value, ty),
        None => format!("{place},\n{}", failure.message),
    }
}

/// `PLACE, value V is invalid for type T.`, broken before `is` when it does not fit the margin.
pub(crate) fn invalid_value(place: &str, value: &str, ty: &str) -> String {
    let head = format!("{place}, value {value}");
    let tail = format!("is invalid for type {ty}.");
    let separator = if width(&head) + 1 + width(&tail) > OCTEZ_MARGIN_COLUMNS {
        '\n'
    } else {
        ' '
    };
    format!("{head}{separator}{tail}")
}

/// The columns `text` takes.
fn width(text: &str) -> usize {
    text.chars().count()
}

/// The first lines octez-client prints for Octez's `Ill_typed_data`: `Ill typed data:`, the
/// value's numbered source lines (`1: ...`), then `is not an expression of type TYPE`, each part
/// on the line before when it fits in the margin, as `Format` lays out its boxes.
pub(crate) fn ill_typed_data_header(source: &str, type_text: &str) -> String {
    const HEAD: &str = "Ill typed data:";
    let lines: Vec<&str> = source.split('\n').collect();
    let digits = lines.len().to_string().len();
    let numbered: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(index, line)| format!("{:0digits$}: {line}", index + 1))
        .collect();
    let source_width: usize = numbered.iter().map(|line| width(line)).sum();
    let indent = if width(HEAD) + 1 + source_width > OCTEZ_MARGIN_COLUMNS {
        2
    } else {
        width(HEAD) + 1
    };
    let mut out = String::from(HEAD);
    if indent == 2 {
        out.push_str("\n  ");
    } else {
        out.push(' ');
    }
    out.push_str(&numbered.join(&format!("\n{}", " ".repeat(indent))));
    let column = indent + numbered.last().map_or(0, |line| width(line));
    let tail = format!("is not an expression of type {type_text}");
    out.push(if column + 1 + width(&tail) > OCTEZ_MARGIN_COLUMNS {
        '\n'
    } else {
        ' '
    });
    out.push_str(&tail);
    out
}

/// `text` as Octez prints a value it reports (its own layout, an application in parentheses),
/// with `span` of `text` moved onto the same node of the printed text; `text` and `span`
/// unchanged when `text` is not one expression.
fn reprinted(text: &str, span: Span) -> (String, Span) {
    let Ok(node) = kestrel_micheline::parse_expression(text) else {
        return (text.to_string(), span);
    };
    let printed = kestrel_micheline::print::to_text_indented_wrapped(&node);
    let moved = kestrel_micheline::location::prefix_order(&node)
        .find(|(_, n)| n.span == span)
        .and_then(|(location, _)| {
            let again = kestrel_micheline::parse_expression(&printed).ok()?;
            kestrel_micheline::location::node_at(&again, location).map(|n| n.span)
        });
    match moved {
        Some(moved) => (printed, moved),
        None => (text.to_string(), span),
    }
}

/// Milligas as octez-client prints gas: `1039999.224`, or no decimals when there are none.
pub fn format_gas(milligas: i64) -> String {
    let (whole, milli) = (milligas.div_euclid(1000), milligas.rem_euclid(1000));
    if milli == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{milli:03}")
    }
}

fn indent(lines: &[String]) -> String {
    let mut out = String::from("Error:\n");
    for line in lines.iter().flat_map(|l| l.split('\n')) {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The span octez-client reports for a parse error: an unclosed `{` or `(` is reported at
/// the opener, everything else where it was found; an unexpected character with every other
/// one, one a line, as octez-client lists the errors its lexer collected.
fn parse_error_words(text: &str, error: &ParseError) -> String {
    match &error.kind {
        ParseErrorKind::Empty => "empty expression".to_string(),
        ParseErrorKind::UnexpectedCharacter(_) => {
            let all = kestrel_micheline::parse::unexpected_characters(text);
            if all.first() == Some(error) {
                let words: Vec<String> = all.iter().map(|e| e.describe(text)).collect();
                words.join("\n")
            } else {
                error.describe(text)
            }
        }
        ParseErrorKind::UnexpectedEnd => match unclosed_opener(text) {
            Some((offset, brace)) => format!(
                "{}, {}",
                at(
                    text,
                    Span {
                        start: offset as u32,
                        end: offset as u32 + 1
                    }
                ),
                if brace == b'{' {
                    "unclosed curly brace"
                } else {
                    "unclosed parenthesis"
                }
            ),
            None => error.describe(text),
        },
        _ => error.describe(text),
    }
}

/// The offset of the first `{` or `(` never closed in `text` (strings and comments skipped).
fn unclosed_opener(text: &str) -> Option<(usize, u8)> {
    let bytes = text.as_bytes();
    let mut open: Vec<(usize, u8)> = Vec::new();
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'"' => {
                index += 1;
                while let Some(&b) = bytes.get(index) {
                    if b == b'\\' {
                        index += 1;
                    } else if b == b'"' {
                        break;
                    }
                    index += 1;
                }
            }
            b'#' => {
                while bytes.get(index).is_some_and(|&b| b != b'\n') {
                    index += 1;
                }
            }
            b'{' | b'(' => open.push((index, byte)),
            b'}' | b')' => {
                open.pop();
            }
            _ => {}
        }
        index += 1;
    }
    open.first().copied()
}

impl ClientError {
    fn new(kind: &'static str, text: String, message: String, exit_code: u8) -> ClientError {
        ClientError(Box::new(Details {
            kind,
            text,
            message,
            position: None,
            exit_code,
        }))
    }

    fn with_position(mut self, origin: &str, text: &str, span: Span) -> ClientError {
        let (line, start) = position_of(text, span.start as usize);
        let (_, end) = position_of(text, span.end as usize);
        self.0.position = Some((origin.to_string(), line, start, end));
        self
    }

    /// The exit code.
    pub fn exit_code(&self) -> u8 {
        self.0.exit_code
    }

    /// A command line octez-client does not accept.
    pub fn usage(error: UsageError) -> ClientError {
        let message = error.to_string();
        ClientError::new(
            "usage",
            indent(std::slice::from_ref(&message)),
            message,
            EXIT_USAGE,
        )
    }

    /// An option with a value octez-client rejects.
    pub fn option(name: &str, message: &str) -> ClientError {
        let _ = name;
        ClientError::new(
            "usage",
            indent(&[message.to_string()]),
            message.to_string(),
            EXIT_USAGE,
        )
    }

    /// A file that cannot be read.
    pub fn input(error: InputError) -> ClientError {
        let message = error.to_string();
        ClientError::new(
            "input",
            indent(std::slice::from_ref(&message)),
            message,
            EXIT_FAILURE,
        )
    }

    /// A plain error message.
    pub fn message(kind: &'static str, message: &str) -> ClientError {
        ClientError::new(
            kind,
            indent(&[message.to_string()]),
            message.to_string(),
            EXIT_FAILURE,
        )
    }

    /// An error of several lines, at `span` of a command-line parameter.
    pub fn lines(kind: &'static str, lines: Vec<String>, span: Option<Span>) -> ClientError {
        let message = lines.join("\n");
        let mut error = ClientError::new(kind, indent(&lines), message, EXIT_FAILURE);
        if let Some(span) = span {
            error.0.position = Some((
                "command line".to_string(),
                1,
                span.start as usize,
                span.end as usize,
            ));
        }
        error
    }

    /// Parameter number `position` (`text`) is not Micheline.
    pub fn argument(position: usize, text: &str, error: &ParseError) -> ClientError {
        let words = parse_error_words(text, error);
        ClientError::new(
            "parse",
            indent(&[
                format!("Erroneous command line argument {position} ({text})."),
                words.clone(),
            ]),
            words,
            EXIT_FAILURE,
        )
        .with_position("command line", text, error.span)
    }

    /// `text`, read from `origin` (a file name or `command line`), is not Micheline.
    pub fn parse_in(origin: &str, text: &str, error: &ParseError) -> ClientError {
        let words = parse_error_words(text, error);
        ClientError::new(
            "parse",
            indent(&[format!("In {origin}:"), words.clone()]),
            words,
            EXIT_FAILURE,
        )
        .with_position(origin, text, error.span)
    }

    /// An ill-typed type or script read from `origin`.
    pub fn typecheck(origin: &str, text: &str, failure: &Failure, what: &str) -> ClientError {
        ClientError::new(
            "typecheck",
            format!("{}\nFatal error:\n  {what}\n", located(text, failure)),
            failure.message.clone(),
            EXIT_FAILURE,
        )
        .with_position(origin, text, failure.span)
    }

    /// A value `text` (from `origin`) that is not of type `type_text`, as octez-client reports
    /// Octez's `Ill_typed_data` (`typecheck data`, `hash data`, a `run script` storage): the
    /// value as Octez prints it and the failure placed in that printed text. The JSON position
    /// stays in `text` as given.
    pub fn ill_typed_data(
        origin: &str,
        text: &str,
        type_text: &str,
        failure: &Failure,
        what: &str,
    ) -> ClientError {
        let (printed, span) = reprinted(text, failure.span);
        let moved = Failure {
            span,
            message: failure.message.clone(),
            invalid_value: failure.invalid_value.clone(),
        };
        ClientError::new(
            "typecheck",
            format!(
                "{}\n{}\nFatal error:\n  {what}\n",
                ill_typed_data_header(&printed, type_text),
                located(&printed, &moved)
            ),
            failure.message.clone(),
            EXIT_FAILURE,
        )
        .with_position(origin, text, failure.span)
    }

    /// A `run script` input `text` that is not of the parameter's type: Octez's
    /// `Bad_contract_parameter`, after which octez-client locates the failing node by its
    /// canonical location only (`At (unshown) location N,`).
    pub fn bad_argument(text: &str, self_address: &str, failure: &Failure) -> ClientError {
        let location = kestrel_micheline::parse_expression(text)
            .ok()
            .and_then(|node| {
                kestrel_micheline::location::prefix_order(&node)
                    .find(|(_, n)| n.span == failure.span)
                    .map(|(location, _)| location)
            })
            .unwrap_or(0);
        let sentence = match &failure.invalid_value {
            Some((value, ty)) => format!("value {value} is invalid for type {ty}."),
            None => failure.message.clone(),
        };
        ClientError::new(
            "typecheck",
            format!(
                "Invalid argument passed to contract {self_address}.\nAt (unshown) location {location}, {sentence}\nFatal error:\n  error running script\n"
            ),
            failure.message.clone(),
            EXIT_FAILURE,
        )
        .with_position("input", text, failure.span)
    }

    /// A stack item whose type or value is ill-typed (`normalize stack`).
    pub fn ill_typed_stack(failure: &Failure) -> ClientError {
        ClientError::new(
            "typecheck",
            format!(
                "At (unshown) location 0, {}\nFatal error:\n  ill-typed stack\n",
                failure.message
            ),
            failure.message.clone(),
            EXIT_FAILURE,
        )
    }

    /// A script that failed while running, as `run script` reports it.
    pub fn runtime(
        origin: &str,
        source: &str,
        self_address: &str,
        message: &str,
        show_source: bool,
        span: Option<Span>,
        trace: &[TraceStep],
    ) -> ClientError {
        let mut text = format!("Runtime error in contract {self_address}:\n");
        if show_source {
            let lines: Vec<&str> = source.split('\n').collect();
            let width = lines.len().to_string().len().max(2);
            for (number, line) in lines.iter().enumerate() {
                text.push_str(&format!("  {:0width$}: {line}\n", number + 1));
            }
        }
        if let Some(span) = span {
            text.push_str(&at(source, span));
            text.push_str(",\n");
        }
        text.push_str(message);
        text.push('\n');
        if !trace.is_empty() {
            text.push_str("trace\n");
            let mut steps = String::new();
            kestrel_michelson_conformance::run_script::print_trace(&mut steps, trace);
            text.push_str(&steps);
        }
        text.push_str("Fatal error:\n  error running script\n");
        let error = ClientError::new("runtime", text, message.to_string(), EXIT_FAILURE);
        match span {
            Some(span) => error.with_position(origin, source, span),
            None => error,
        }
    }

    /// What is printed on standard error.
    pub fn render(&self) -> &str {
        &self.0.text
    }

    /// The stable JSON error object: `{"error": {"kind", "message", "exit_code", "file",
    /// "line", "column", "end_column"}}` (the position fields only when known).
    pub fn to_json(&self) -> serde_json::Value {
        let details = &self.0;
        let mut error = serde_json::json!({
            "kind": details.kind,
            "message": details.message,
            "exit_code": details.exit_code,
        });
        if let (Some((origin, line, start, end)), Some(object)) =
            (&details.position, error.as_object_mut())
        {
            object.insert("file".into(), origin.clone().into());
            object.insert("line".into(), (*line).into());
            object.insert("column".into(), (*start).into());
            object.insert("end_column".into(), (*end).into());
        }
        serde_json::json!({ "error": error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gas_prints_as_octez_client_prints_it() {
        assert_eq!(format_gas(1_039_999_224), "1039999.224");
        assert_eq!(format_gas(1_039_998_120), "1039998.120");
        assert_eq!(format_gas(1_040_000_000), "1040000");
    }

    #[test]
    fn an_unclosed_brace_is_reported_where_it_opens() {
        let text = "{ \"{\" ; (Pair 1 2) ; {";
        assert_eq!(unclosed_opener(text), Some((0, b'{')));
        assert_eq!(unclosed_opener("{ 1 }"), None);
    }
}
