//! Reads the recorded `octez-client` sessions of `octez-protocol/receipts/*.out` (and files of
//! the same shape): each command line the recorder ran, split into words as a POSIX shell splits
//! them, with the text octez-client printed for it.
//!
//! Shape of a recording: a command is one line starting with `./octez-client `; its output is
//! every line after it up to the blank line that separates it from the next command line (or the
//! end of the file). Text before the first command (a file may have no command at all, only the
//! printed receipt) is kept as the recording's `prelude`. The recorder masks hashes in both the
//! command lines and the output (`[CONTRACT_HASH]`, `[PUBLIC_KEY_HASH]`, `[OPERATION_HASH]`,
//! `[BLOCK_HASH]`, `[TIMESTAMP]`, ...); the parser keeps them verbatim. Lines the test harness
//! logged between commands (`Test transferring big map from ...`) cannot be told apart from
//! output and end the previous command's output.

/// What starts a recorded command line.
pub const COMMAND_PREFIX: &str = "./octez-client ";

/// One recorded session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Text before the first command line, without surrounding blank lines.
    pub prelude: String,
    /// The commands in the order they were run.
    pub commands: Vec<RecordedCommand>,
}

/// One command of a session with what octez-client printed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCommand {
    /// The recorded line after `./octez-client `, as written.
    pub line: String,
    /// `line` split into words (quotes removed) as a POSIX shell does.
    pub argv: Vec<String>,
    /// The printed text, each line ending with `\n`, without the separating blank line.
    pub output: String,
}

/// Parses the text of one recorded session.
pub fn parse_session(text: &str) -> Session {
    let mut prelude = Vec::new();
    let mut commands: Vec<RecordedCommand> = Vec::new();
    let mut output: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix(COMMAND_PREFIX) {
            finish_output(&mut commands, &mut prelude, &mut output);
            commands.push(RecordedCommand {
                line: command.to_string(),
                argv: shell_words(command),
                output: String::new(),
            });
        } else {
            output.push(line);
        }
    }
    finish_output(&mut commands, &mut prelude, &mut output);
    let prelude = prelude.join("\n").trim_matches('\n').to_string();
    Session { prelude, commands }
}

/// Hands the lines gathered since the last command line to that command (or to the prelude).
fn finish_output<'a>(
    commands: &mut [RecordedCommand],
    prelude: &mut Vec<&'a str>,
    output: &mut Vec<&'a str>,
) {
    let Some(last) = commands.last_mut() else {
        prelude.append(output);
        return;
    };
    // The blank line before the next command (and blank lines at the end of the file) separate
    // commands; a blank line inside the output (before "New contract ...") is kept.
    while output.last().is_some_and(|line| line.is_empty()) {
        output.pop();
    }
    last.output = output.iter().map(|line| format!("{line}\n")).collect();
    output.clear();
}

/// Splits a command line into words as a POSIX shell does: single quotes keep everything,
/// double quotes keep everything but `\"`, `\\`, `\$` and `` \` `` escapes, a backslash outside
/// quotes escapes the next character, and unquoted whitespace separates words.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for quoted in chars.by_ref() {
                    if quoted == '\'' {
                        break;
                    }
                    word.push(quoted);
                }
            }
            '"' => {
                in_word = true;
                while let Some(quoted) = chars.next() {
                    match quoted {
                        '"' => break,
                        '\\' => {
                            if let Some(next) = chars.next() {
                                if !matches!(next, '"' | '\\' | '$' | '`') {
                                    word.push('\\');
                                }
                                word.push(next);
                            }
                        }
                        _ => word.push(quoted),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_outputs_and_separators() {
        let text = "\n./octez-client --mode mockup get balance for bootstrap1\n4000000 ꜩ\n\n\
                    ./octez-client --wait none transfer 1 from a to '[CONTRACT_HASH]' --arg '\"x y\"'\n\
                    This sequence of operations was run:\n\nNew contract.\n\n";
        let session = parse_session(text);
        assert_eq!(session.prelude, "");
        assert_eq!(session.commands.len(), 2);
        assert_eq!(
            session.commands[0].argv,
            ["--mode", "mockup", "get", "balance", "for", "bootstrap1"]
        );
        assert_eq!(session.commands[0].output, "4000000 ꜩ\n");
        assert_eq!(
            session.commands[1].argv,
            [
                "--wait",
                "none",
                "transfer",
                "1",
                "from",
                "a",
                "to",
                "[CONTRACT_HASH]",
                "--arg",
                "\"x y\""
            ]
        );
        assert_eq!(
            session.commands[1].output,
            "This sequence of operations was run:\n\nNew contract.\n"
        );
    }

    #[test]
    fn a_file_without_commands_is_all_prelude() {
        let session = parse_session("Node is bootstrapped.\nEstimated gas: 1 units\n\n\n");
        assert!(session.commands.is_empty());
        assert_eq!(
            session.prelude,
            "Node is bootstrapped.\nEstimated gas: 1 units"
        );
    }

    #[test]
    fn shell_words_follow_posix_quoting() {
        assert_eq!(
            shell_words(r#"hash data '"ABC\n123"' of  type "a b" c\ d ''"#),
            [
                "hash",
                "data",
                r#""ABC\n123""#,
                "of",
                "type",
                "a b",
                "c d",
                ""
            ]
        );
    }

    /// Every recorded receipt session parses into commands whose words start with octez-client
    /// global options or a command, and whose outputs are non-empty.
    #[test]
    fn every_recorded_session_parses() {
        let Some(dir) = crate::require("octez-protocol/receipts", "every_recorded_session_parses")
        else {
            return;
        };
        let files = crate::files_with_suffix(&dir, ".out");
        assert_eq!(files.len(), 21, "recorded sessions");
        let mut commands = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
            let session = parse_session(&text);
            if session.commands.is_empty() {
                assert!(
                    session.prelude.starts_with("Node is bootstrapped."),
                    "{file:?}"
                );
            }
            for command in &session.commands {
                assert_eq!(command.argv.first().map(String::as_str), Some("--mode"));
                assert!(!command.output.is_empty(), "{file:?}: {}", command.line);
                assert!(!command.output.contains(COMMAND_PREFIX));
                commands += 1;
            }
        }
        assert_eq!(commands, 81, "recorded commands");
    }
}
