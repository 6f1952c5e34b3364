//! Reader for the recorded `octez-client run script ... --trace-stack` outputs in
//! `../shared/testdata/michelson-regression/{opcodes,macros}/*.out` (Tezos regression tests).
//!
//! # File shapes
//!
//! * **Runs** (every `opcodes/*.out`): one or more runs, each opening with a line
//!   `./octez-client ... run script michelson_test_scripts/<dir>/<name>.tz on storage <S> and
//!   input <I> [flags]`, followed either by a success block
//!   (`storage` / `emitted operations` / `big_map diff` / `trace`) or by a failure block (an error
//!   text such as `Runtime error in contract ...`, `script reached FAILWITH instruction`,
//!   `unexpected arithmetic overflow`, then `trace`, then `Fatal error:`).
//! * **Macro expansions** (every `macros/*.out`): the expanded script only, no command and no
//!   trace ([`OctezOutput::MacroExpansion`]).
//!
//! # API
//!
//! ```ignore
//! let output = octez_output::read_file(path)?;          // or parse(&text)
//! for run in output.runs() {
//!     run.command.script_path(&kestrel_testdata::testdata_dir())
//!                                    // …/shared/testdata/michelson/opcodes/abs.tz
//!     run.command.storage, .input    // Micheline text, shell quoting removed
//!     run.command.level, .amount, …  // flags (None when absent)
//!     run.outcome                    // Success { storage, emitted_operations, big_map_diff } | Failure { .. }
//!     for step in &run.trace {       // in order
//!         step.location              // Micheline location of the logged instruction
//!         step.gas_milli             // "just consumed gas: 0.035" → 35
//!         step.stack                 // top first; each element one normalized line
//!     }
//! }
//! ```
//!
//! Stack elements and the storage are normalized to one line: the lines of a multi-line
//! expression are trimmed and joined with one space (octez-client never breaks a line inside a
//! string literal, so no literal changes). The first trace step's gas is everything consumed
//! before the first instruction (script, storage and parameter parsing and typechecking).
//!
//! Trace locations are Octez's Micheline locations: node indexes in prefix order of the script
//! **after macro expansion** (a file written `{ parameter ..; storage ..; code .. }` has the
//! braced sequence as node 0). Octez logs `LOOP`/`LOOP_LEFT` control steps at the location of the
//! instruction following the loop, and logs no step for `EXEC` itself (see `src/gas/README.md`).
//!
//! The reader never panics on malformed input: it returns a [`ReadError`] with the 1-based line.

use std::fmt;
use std::path::{Path, PathBuf};

/// The directory of the test scripts, relative to the shared test data, that
/// `michelson_test_scripts/` in recorded command lines stands for.
pub const SCRIPTS_DIR_RELATIVE: &str = "michelson";

/// The prefix of script paths in recorded command lines.
pub const SCRIPTS_PREFIX: &str = "michelson_test_scripts/";

/// A parsed `.out` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OctezOutput {
    /// One or more `run script` invocations.
    Runs(Vec<Run>),
    /// A macro-expansion record: the expanded script text, verbatim.
    MacroExpansion(String),
}

impl OctezOutput {
    /// The runs of the file (empty for a macro expansion).
    pub fn runs(&self) -> &[Run] {
        match self {
            OctezOutput::Runs(runs) => runs,
            OctezOutput::MacroExpansion(_) => &[],
        }
    }
}

/// One `octez-client run script` invocation and what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The command line and its arguments.
    pub command: Command,
    /// Success with results, or the failure text.
    pub outcome: Outcome,
    /// The `--trace-stack` steps, in order (empty when the run printed no trace).
    pub trace: Vec<TraceStep>,
    /// 1-based line of the command in the file.
    pub line: usize,
}

impl Run {
    /// Total milligas of the trace (the sum of every step's "just consumed gas").
    pub fn trace_gas_milli(&self) -> u64 {
        self.trace.iter().map(|step| step.gas_milli).sum()
    }
}

/// The recorded command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    /// The whole line, verbatim.
    pub line: String,
    /// The script as written, e.g. `michelson_test_scripts/opcodes/abs.tz`.
    pub script: String,
    /// The script relative to the shared test data, e.g. `michelson/opcodes/abs.tz`.
    pub script_relative: String,
    /// `--protocol` hash, if given.
    pub protocol: Option<String>,
    /// `--mode`, if given (`mockup` in every recorded file).
    pub mode: Option<String>,
    /// The initial storage (Micheline text, shell quoting removed).
    pub storage: String,
    /// The parameter (Micheline text, shell quoting removed).
    pub input: String,
    /// `--amount` (tez, as written).
    pub amount: Option<String>,
    /// `--balance` (tez, as written).
    pub balance: Option<String>,
    /// `--level`.
    pub level: Option<u64>,
    /// `--now` (timestamp, as written).
    pub now: Option<String>,
    /// `--source`.
    pub source: Option<String>,
    /// `--sender`.
    pub sender: Option<String>,
    /// `--self-address`.
    pub self_address: Option<String>,
    /// `--entrypoint`.
    pub entrypoint: Option<String>,
    /// `--gas` limit, as written.
    pub gas: Option<String>,
    /// `--trace-stack` (also set for a line truncated inside that flag, as happens in the
    /// recorded files: `--trace-sta`).
    pub trace_stack: bool,
    /// Every other flag, with its value when it takes one.
    pub other_flags: Vec<(String, Option<String>)>,
}

impl Command {
    /// The script's path in the shared test data directory `testdata_dir`.
    pub fn script_path(&self, testdata_dir: &Path) -> PathBuf {
        testdata_dir.join(&self.script_relative)
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The script returned.
    Success {
        /// The final storage, normalized to one line.
        storage: String,
        /// The `emitted operations` block, verbatim lines without their two-space indent
        /// (blank lines dropped; empty when no operation was emitted).
        emitted_operations: Vec<String>,
        /// The `big_map diff` lines without their indent (empty when none).
        big_map_diff: Vec<String>,
    },
    /// The script failed; `message` is the error text as printed (without the trace).
    Failure {
        /// What kind of failure.
        kind: FailureKind,
        /// The error lines, verbatim.
        message: Vec<String>,
        /// The `At line L characters A to B` position, when printed.
        position: Option<(u32, u32, u32)>,
    },
}

/// The failure kinds that the recorded outputs distinguish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// `script reached FAILWITH instruction` `with <value>`.
    FailWith {
        /// The value passed to `FAILWITH`, one line.
        value: String,
    },
    /// `unexpected arithmetic overflow`.
    ArithmeticOverflow,
    /// The gas limit was exceeded (`Gas limit exceeded`, `Gas_exhaustion`).
    GasExhausted,
    /// Anything else: the first error line.
    Other(String),
}

/// One `--trace-stack` step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStep {
    /// The Micheline location (node index) that octez-client printed.
    pub location: u32,
    /// "just consumed gas", in milligas: everything consumed since the previous step.
    pub gas_milli: u64,
    /// The stack after the step, top first, each element normalized to one line.
    pub stack: Vec<String>,
    /// 1-based line of the step's header in the file.
    pub line: usize,
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line where reading stopped (0 for I/O errors).
    pub line: usize,
    /// What was expected.
    pub reason: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for ReadError {}

fn error(line: usize, reason: impl Into<String>) -> ReadError {
    ReadError {
        line,
        reason: reason.into(),
    }
}

/// Reads and parses the file at `path`.
pub fn read_file(path: &Path) -> Result<OctezOutput, ReadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|io| error(0, format!("cannot read {}: {io}", path.display())))?;
    parse(&text)
}

/// Parses the text of a `.out` file.
pub fn parse(text: &str) -> Result<OctezOutput, ReadError> {
    let lines: Vec<&str> = text.lines().collect();
    let command_indexes: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| is_command_line(line))
        .map(|(index, _)| index)
        .collect();
    if command_indexes.is_empty() {
        return Ok(OctezOutput::MacroExpansion(text.to_string()));
    }
    let mut runs = Vec::with_capacity(command_indexes.len());
    for (position, &start) in command_indexes.iter().enumerate() {
        let end = command_indexes
            .get(position + 1)
            .copied()
            .unwrap_or(lines.len());
        runs.push(parse_run(&lines, start, end)?);
    }
    Ok(OctezOutput::Runs(runs))
}

fn is_command_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("./octez-client") || trimmed.starts_with("octez-client")
}

/// Parses lines `start..end` (0-based), `start` being the command line.
fn parse_run(lines: &[&str], start: usize, end: usize) -> Result<Run, ReadError> {
    let command = parse_command(lines[start], start + 1)?;
    let body = &lines[start + 1..end];
    let trace_index = body.iter().position(|line| *line == "trace");
    let head_end = trace_index.unwrap_or(body.len());
    let head = &body[..head_end];
    let outcome = if head.first() == Some(&"storage") {
        parse_success(head, start + 2)?
    } else {
        parse_failure(head)
    };
    let trace = match trace_index {
        Some(index) => parse_trace(&body[index + 1..], start + 2 + index + 1)?,
        None => Vec::new(),
    };
    Ok(Run {
        command,
        outcome,
        trace,
        line: start + 1,
    })
}

/// The section of lines after `header` (exclusive) up to the next unindented line.
fn section<'a>(head: &'a [&'a str], header: &str) -> Option<&'a [&'a str]> {
    let index = head.iter().position(|line| *line == header)?;
    let rest = &head[index + 1..];
    let length = rest
        .iter()
        .position(|line| !line.starts_with(' ') && !line.is_empty())
        .unwrap_or(rest.len());
    Some(&rest[..length])
}

fn indented_lines(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line.strip_prefix("  ").unwrap_or(line).to_string())
        .filter(|line| !line.trim().is_empty())
        .collect()
}

fn parse_success(head: &[&str], first_line: usize) -> Result<Outcome, ReadError> {
    let storage_lines = section(head, "storage")
        .ok_or_else(|| error(first_line, "expected a `storage` section"))?;
    let storage = normalize(storage_lines.iter().copied());
    if storage.is_empty() {
        return Err(error(first_line, "empty `storage` section"));
    }
    let emitted_operations = section(head, "emitted operations")
        .map(indented_lines)
        .ok_or_else(|| error(first_line, "expected an `emitted operations` section"))?;
    let big_map_diff = section(head, "big_map diff")
        .map(indented_lines)
        .ok_or_else(|| error(first_line, "expected a `big_map diff` section"))?;
    Ok(Outcome::Success {
        storage,
        emitted_operations,
        big_map_diff,
    })
}

fn parse_failure(head: &[&str]) -> Outcome {
    let message: Vec<String> = head
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.to_string())
        .collect();
    let position = message.iter().find_map(|line| parse_position(line));
    let kind = if let Some(index) = message
        .iter()
        .position(|line| line.contains("script reached FAILWITH instruction"))
    {
        let value = message
            .get(index + 1)
            .and_then(|line| line.strip_prefix("with "))
            .map(|value| {
                // The value may continue on further indented lines.
                let mut parts = vec![value.trim().to_string()];
                for continuation in &message[index + 2..] {
                    if continuation.starts_with(' ') {
                        parts.push(continuation.trim().to_string());
                    } else {
                        break;
                    }
                }
                parts.join(" ")
            })
            .unwrap_or_default();
        FailureKind::FailWith { value }
    } else if message
        .iter()
        .any(|line| line.contains("unexpected arithmetic overflow"))
    {
        FailureKind::ArithmeticOverflow
    } else if message.iter().any(|line| {
        line.contains("Gas limit exceeded")
            || line.contains("Gas_exhaustion")
            || line.contains("gas_exhausted")
    }) {
        FailureKind::GasExhausted
    } else {
        FailureKind::Other(
            message
                .iter()
                .find(|line| !line.starts_with(' ') && !line.starts_with("Runtime error"))
                .or_else(|| message.first())
                .cloned()
                .unwrap_or_default(),
        )
    };
    Outcome::Failure {
        kind,
        message,
        position,
    }
}

/// `At line 10 characters 25 to 28,` → `(10, 25, 28)`.
fn parse_position(line: &str) -> Option<(u32, u32, u32)> {
    let rest = line.strip_prefix("At line ")?;
    let (line_number, rest) = rest.split_once(" characters ")?;
    let (from, rest) = rest.split_once(" to ")?;
    let to = rest.trim_end_matches(',');
    Some((
        line_number.trim().parse().ok()?,
        from.trim().parse().ok()?,
        to.trim().parse().ok()?,
    ))
}

const STEP_PREFIX: &str = "  - location: ";
const GAS_PREFIX: &str = "(just consumed gas: ";

fn parse_trace(lines: &[&str], first_line: usize) -> Result<Vec<TraceStep>, ReadError> {
    let mut steps = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let line_number = first_line + index;
        let Some(header) = line.strip_prefix(STEP_PREFIX) else {
            // The trace ends at the first line that is neither a step nor a stack line
            // (`Fatal error:`, a blank line before the next run).
            break;
        };
        let (location, gas) = header
            .split_once(' ')
            .ok_or_else(|| error(line_number, "expected `location: N (just consumed gas: G)`"))?;
        let location: u32 = location
            .parse()
            .map_err(|_| error(line_number, format!("bad location `{location}`")))?;
        let gas_text = gas
            .strip_prefix(GAS_PREFIX)
            .and_then(|rest| rest.strip_suffix(')'))
            .ok_or_else(|| error(line_number, "expected `(just consumed gas: G)`"))?;
        let gas_milli = parse_gas(gas_text)
            .ok_or_else(|| error(line_number, format!("bad gas amount `{gas_text}`")))?;
        index += 1;
        let stack_start = index;
        while index < lines.len()
            && lines[index].starts_with("    ")
            && !lines[index].starts_with(STEP_PREFIX)
        {
            index += 1;
        }
        let stack = parse_stack(&lines[stack_start..index], first_line + stack_start)?;
        steps.push(TraceStep {
            location,
            gas_milli,
            stack,
            line: line_number,
        });
    }
    Ok(steps)
}

/// Parses `    [ a\n      b ]` into `["a", "b"]`; elements start at column 6, deeper lines
/// continue the previous element.
fn parse_stack(lines: &[&str], first_line: usize) -> Result<Vec<String>, ReadError> {
    let Some(first) = lines.first() else {
        return Err(error(
            first_line,
            "expected a stack `[ ... ]` after the step",
        ));
    };
    let opened = first
        .strip_prefix("    [")
        .ok_or_else(|| error(first_line, "expected a stack line opening with `    [`"))?;
    let last_index = lines.len() - 1;
    let mut elements: Vec<Vec<&str>> = Vec::new();
    for (offset, raw) in lines.iter().enumerate() {
        let mut content: &str = if offset == 0 { opened } else { raw };
        if offset == last_index {
            content = content.trim_end().strip_suffix(']').ok_or_else(|| {
                error(first_line + offset, "expected the stack to close with `]`")
            })?;
        }
        let starts_element =
            offset == 0 || (raw.starts_with("      ") && !raw.starts_with("       "));
        let trimmed = content.trim();
        if trimmed.is_empty() {
            continue;
        }
        match elements.last_mut() {
            Some(element) if !starts_element => element.push(trimmed),
            _ => elements.push(vec![trimmed]),
        }
    }
    Ok(elements.into_iter().map(|parts| parts.join(" ")).collect())
}

/// Trims each line and joins the non-blank ones with one space.
fn normalize<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    lines
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses octez-client's printed gas (`9.929`) to milligas.
pub fn parse_gas(text: &str) -> Option<u64> {
    let (units, decimals) = text.split_once('.').unwrap_or((text, ""));
    if units.is_empty()
        || decimals.len() > 3
        || !units.bytes().all(|byte| byte.is_ascii_digit())
        || !decimals.bytes().all(|byte| byte.is_ascii_digit())
    {
        return None;
    }
    let mut milli: u64 = 0;
    for (index, digit) in decimals.bytes().enumerate() {
        milli += u64::from(digit - b'0') * 10u64.pow(2 - index as u32);
    }
    units
        .parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(milli)
}

/// Splits a shell command line into words: single quotes are literal, double quotes allow
/// `\"` and `\\`, a backslash outside quotes escapes the next character. An unterminated quote
/// (a truncated recorded line) ends the word at the end of the line.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(character) = chars.next() {
        match character {
            '\'' => {
                in_word = true;
                for quoted in chars.by_ref() {
                    if quoted == '\'' {
                        break;
                    }
                    current.push(quoted);
                }
            }
            '"' => {
                in_word = true;
                while let Some(quoted) = chars.next() {
                    match quoted {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&next) if next == '"' || next == '\\' || next == '$' => {
                                current.push(next);
                                chars.next();
                            }
                            _ => current.push('\\'),
                        },
                        other => current.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            whitespace if whitespace.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// Flags of `run script` that take a value.
const VALUED_FLAGS: &[&str] = &[
    "--protocol",
    "--mode",
    "--amount",
    "--balance",
    "--level",
    "--now",
    "--source",
    "--sender",
    "--payer",
    "--self-address",
    "--entrypoint",
    "--gas",
    "--base-dir",
    "--endpoint",
    "--unparsing-mode",
    "--other-contracts",
    "--extra-big-maps",
];

fn parse_command(line: &str, line_number: usize) -> Result<Command, ReadError> {
    let words = shell_words(line);
    let mut command = Command {
        line: line.to_string(),
        ..Command::default()
    };
    let mut index = 1; // skip the executable
    let mut saw_run_script = false;
    while index < words.len() {
        let word = words[index].as_str();
        if word == "run" && words.get(index + 1).map(String::as_str) == Some("script") {
            saw_run_script = true;
            let script = words
                .get(index + 2)
                .ok_or_else(|| error(line_number, "`run script` without a script"))?;
            command.script = script.clone();
            command.script_relative = match script.strip_prefix(SCRIPTS_PREFIX) {
                Some(relative) => format!("{SCRIPTS_DIR_RELATIVE}/{relative}"),
                None => script.clone(),
            };
            if words.get(index + 3).map(String::as_str) != Some("on")
                || words.get(index + 4).map(String::as_str) != Some("storage")
            {
                return Err(error(line_number, "expected `on storage` after the script"));
            }
            command.storage = words
                .get(index + 5)
                .cloned()
                .ok_or_else(|| error(line_number, "missing storage"))?;
            if words.get(index + 6).map(String::as_str) != Some("and")
                || words.get(index + 7).map(String::as_str) != Some("input")
            {
                return Err(error(line_number, "expected `and input` after the storage"));
            }
            command.input = words
                .get(index + 8)
                .cloned()
                .ok_or_else(|| error(line_number, "missing input"))?;
            index += 9;
            continue;
        }
        if let Some(flag) = word.strip_prefix("--").map(|_| word) {
            if "--trace-stack".starts_with(flag) && flag.len() >= "--trace".len() {
                command.trace_stack = true;
                index += 1;
                continue;
            }
            let value =
                if VALUED_FLAGS.contains(&flag) {
                    index += 1;
                    Some(words.get(index).cloned().ok_or_else(|| {
                        error(line_number, format!("flag {flag} without a value"))
                    })?)
                } else {
                    None
                };
            index += 1;
            match flag {
                "--protocol" => command.protocol = value,
                "--mode" => command.mode = value,
                "--amount" => command.amount = value,
                "--balance" => command.balance = value,
                "--level" => {
                    let text = value.unwrap_or_default();
                    command.level = Some(
                        text.parse()
                            .map_err(|_| error(line_number, format!("bad --level `{text}`")))?,
                    );
                }
                "--now" => command.now = value,
                "--source" => command.source = value,
                "--sender" => command.sender = value,
                "--self-address" => command.self_address = value,
                "--entrypoint" => command.entrypoint = value,
                "--gas" => command.gas = value,
                _ => command.other_flags.push((flag.to_string(), value)),
            }
            continue;
        }
        index += 1;
    }
    if !saw_run_script {
        return Err(error(line_number, "expected `run script` in the command"));
    }
    Ok(command)
}
