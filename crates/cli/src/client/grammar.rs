//! octez-client's command-line grammar for the offline commands `kestrel client` accepts:
//! global options in front (`--mode mockup`, `--protocol HASH`, ...), then a command's words
//! and parameters (`hash data DATA of type TYPE`), with its options anywhere after the first
//! word. As in octez-client, a word is an option only when it is the name of one (so
//! `hash data -1 of type int` reads `-1` as the data), and an option's value is the next word
//! whatever it starts with (`--amount -5` is an amount, rejected later as negative).

use std::collections::BTreeMap;

/// One word of a command's pattern.
#[derive(Clone, Copy)]
enum Token {
    /// A fixed word.
    Word(&'static str),
    /// A parameter, named for error messages.
    Param(&'static str),
}

use Token::{Param, Word};

/// The commands: their name (for dispatch), words and the options they take.
pub struct CommandSpec {
    /// The dispatch name.
    pub name: &'static str,
    pattern: &'static [Token],
    options: &'static [&'static str],
}

/// Options that take a value (the rest are switches). Each entry: long name, short alias.
const VALUED: &[(&str, Option<&str>)] = &[
    ("--amount", None),
    ("--balance", None),
    ("--source", None),
    ("--payer", None),
    ("--self-address", None),
    ("--now", None),
    ("--level", None),
    ("--gas", Some("-G")),
    ("--entrypoint", None),
    ("--unparsing-mode", None),
    ("--type", None),
    ("--other-contracts", None),
    ("--extra-big-maps", None),
    // The mockup mode's operation commands.
    ("--burn-cap", None),
    ("--init", None),
    ("--arg", None),
    ("--fee", None),
    ("--gas-limit", None),
    ("--storage-limit", Some("-S")),
    ("--delegate", None),
    // Kestrel's: where `create mockup` finds the liquidity-baking scripts.
    ("--liquidity-baking-scripts", None),
];

/// Switches.
const SWITCHES: &[(&str, Option<&str>)] = &[
    ("--trace-stack", None),
    ("--legacy", None),
    ("--details", Some("-v")),
    ("--emacs", None),
    ("--no-print-source", None),
    ("--display-names", None),
    ("--zero-loc", None),
    ("--for-script", None),
    ("--force", None),
    ("--minimal-timestamp", None),
];

const RUN_OPTIONS: &[&str] = &[
    "--trace-stack",
    "--amount",
    "--balance",
    "--source",
    "--payer",
    "--self-address",
    "--now",
    "--level",
    "--gas",
    "--entrypoint",
    "--legacy",
    "--unparsing-mode",
    "--no-print-source",
    "--other-contracts",
    "--extra-big-maps",
];

/// Every command `kestrel client` knows.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "run script",
        pattern: &[
            Word("run"),
            Word("script"),
            Param("script"),
            Word("on"),
            Word("storage"),
            Param("storage"),
            Word("and"),
            Word("input"),
            Param("input"),
        ],
        options: RUN_OPTIONS,
    },
    CommandSpec {
        name: "typecheck script",
        pattern: &[Word("typecheck"), Word("script"), Param("script")],
        options: &[
            "--details",
            "--emacs",
            "--no-print-source",
            "--gas",
            "--legacy",
            "--display-names",
        ],
    },
    CommandSpec {
        name: "typecheck data",
        pattern: &[
            Word("typecheck"),
            Word("data"),
            Param("data"),
            Word("against"),
            Word("type"),
            Param("type"),
        ],
        options: &["--gas", "--legacy"],
    },
    CommandSpec {
        name: "hash data",
        pattern: &[
            Word("hash"),
            Word("data"),
            Param("data"),
            Word("of"),
            Word("type"),
            Param("type"),
        ],
        options: &["--gas", "--for-script"],
    },
    CommandSpec {
        name: "normalize data",
        pattern: &[
            Word("normalize"),
            Word("data"),
            Param("data"),
            Word("of"),
            Word("type"),
            Param("type"),
        ],
        options: &["--unparsing-mode", "--legacy"],
    },
    CommandSpec {
        name: "normalize script",
        pattern: &[Word("normalize"), Word("script"), Param("script")],
        options: &["--unparsing-mode"],
    },
    CommandSpec {
        name: "normalize type",
        pattern: &[Word("normalize"), Word("type"), Param("type")],
        options: &[],
    },
    CommandSpec {
        name: "normalize stack",
        pattern: &[Word("normalize"), Word("stack"), Param("stack")],
        options: &["--unparsing-mode", "--legacy"],
    },
    CommandSpec {
        name: "expand macros in",
        pattern: &[Word("expand"), Word("macros"), Word("in"), Param("script")],
        options: &[],
    },
    CommandSpec {
        name: "convert script",
        pattern: &[
            Word("convert"),
            Word("script"),
            Param("script"),
            Word("from"),
            Param("input format"),
            Word("to"),
            Param("output format"),
        ],
        options: &["--zero-loc"],
    },
    CommandSpec {
        name: "convert data",
        pattern: &[
            Word("convert"),
            Word("data"),
            Param("data"),
            Word("from"),
            Param("input format"),
            Word("to"),
            Param("output format"),
        ],
        options: &["--zero-loc", "--type"],
    },
    CommandSpec {
        name: "unpack michelson data",
        pattern: &[
            Word("unpack"),
            Word("michelson"),
            Word("data"),
            Param("bytes"),
        ],
        options: &[],
    },
];

/// The stateful commands of octez-client's mockup mode (`client::mockup` runs them).
pub const MOCKUP_COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "create mockup",
        pattern: &[Word("create"), Word("mockup")],
        options: &["--liquidity-baking-scripts"],
    },
    CommandSpec {
        name: "originate contract",
        pattern: &[
            Word("originate"),
            Word("contract"),
            Param("new"),
            Word("transferring"),
            Param("qty"),
            Word("from"),
            Param("src"),
            Word("running"),
            Param("prg"),
        ],
        options: &[
            "--init",
            "--delegate",
            "--burn-cap",
            "--fee",
            "--gas-limit",
            "--storage-limit",
            "--force",
        ],
    },
    CommandSpec {
        name: "transfer",
        pattern: &[
            Word("transfer"),
            Param("qty"),
            Word("from"),
            Param("src"),
            Word("to"),
            Param("dst"),
        ],
        options: TRANSFER_OPTIONS,
    },
    CommandSpec {
        name: "call",
        pattern: &[Word("call"), Param("dst"), Word("from"), Param("src")],
        options: TRANSFER_OPTIONS,
    },
    CommandSpec {
        name: "bake for",
        pattern: &[Word("bake"), Word("for"), Param("baker")],
        options: &["--minimal-timestamp"],
    },
    CommandSpec {
        name: "get balance for",
        pattern: &[Word("get"), Word("balance"), Word("for"), Param("src")],
        options: &[],
    },
    CommandSpec {
        name: "get contract storage for",
        pattern: &[
            Word("get"),
            Word("contract"),
            Word("storage"),
            Word("for"),
            Param("src"),
        ],
        options: &["--unparsing-mode"],
    },
    CommandSpec {
        name: "list known contracts",
        pattern: &[Word("list"), Word("known"), Word("contracts")],
        options: &[],
    },
    CommandSpec {
        name: "show known contract",
        pattern: &[Word("show"), Word("known"), Word("contract"), Param("name")],
        options: &[],
    },
    CommandSpec {
        name: "rpc get",
        pattern: &[Word("rpc"), Word("get"), Param("url")],
        options: &[],
    },
    CommandSpec {
        name: "rpc post",
        pattern: &[
            Word("rpc"),
            Word("post"),
            Param("url"),
            Word("with"),
            Param("input"),
        ],
        options: &[],
    },
    CommandSpec {
        name: "run view",
        pattern: RUN_VIEW_WITH_INPUT.split_at(RUN_VIEW_WORDS).0,
        options: VIEW_OPTIONS,
    },
    CommandSpec {
        name: "run view",
        pattern: RUN_VIEW_WITH_INPUT,
        options: VIEW_OPTIONS,
    },
];

/// `run view VIEW on contract CONTRACT with input INPUT`: octez-client's `run view`, whose
/// first [`RUN_VIEW_WORDS`] words alone are the command without an input.
const RUN_VIEW_WITH_INPUT: &[Token] = &[
    Word("run"),
    Word("view"),
    Param("view"),
    Word("on"),
    Word("contract"),
    Param("contract"),
    Word("with"),
    Word("input"),
    Param("input"),
];

/// The words of `run view` without `with input INPUT`.
const RUN_VIEW_WORDS: usize = 6;

/// The options of `transfer` and `call`.
const TRANSFER_OPTIONS: &[&str] = &[
    "--arg",
    "--entrypoint",
    "--burn-cap",
    "--fee",
    "--gas-limit",
    "--storage-limit",
];

/// The options of `run view`.
const VIEW_OPTIONS: &[&str] = &[
    "--source",
    "--payer",
    "--gas",
    "--unparsing-mode",
    "--now",
    "--level",
];

/// The global options octez-client takes before the command (accepted; offline commands do not
/// depend on them). Each: long name, short alias, whether it takes a value.
const GLOBAL: &[(&str, Option<&str>, bool)] = &[
    ("--mode", Some("-M"), true),
    ("--protocol", Some("-p"), true),
    ("--base-dir", Some("-d"), true),
    ("--no-base-dir-warnings", None, false),
    ("--endpoint", Some("-E"), true),
    ("--config-file", Some("-c"), true),
    ("--wait", Some("-w"), true),
    ("--log-requests", Some("-l"), false),
];

/// The `--mode` values under which the offline commands run (octez-client's default `client`
/// mode runs them offline too when no node is needed).
const OFFLINE_MODES: &[&str] = &["mockup", "client"];

/// A parsed command line.
pub struct Invocation {
    /// The command matched.
    pub command: &'static CommandSpec,
    /// Its parameters, by name, with their position on the command line (1-based, counting
    /// the command's words, as octez-client numbers arguments in errors).
    pub params: BTreeMap<&'static str, (usize, String)>,
    /// Its options: long name to value (switches map to an empty string).
    pub options: BTreeMap<&'static str, String>,
    /// The global options given in front: long name to value (switches map to "").
    pub globals: BTreeMap<&'static str, String>,
}

impl Invocation {
    /// The parameter `name`, empty when absent.
    pub fn param(&self, name: &str) -> &str {
        self.params
            .get(name)
            .map_or("", |(_, value)| value.as_str())
    }

    /// The position of parameter `name` on the command line (for error messages).
    pub fn position(&self, name: &str) -> usize {
        self.params.get(name).map_or(0, |(position, _)| *position)
    }

    /// The value of option `name`.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// Whether switch `name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.options.contains_key(name)
    }
}

/// Why a command line was rejected (octez-client's usage errors).
#[derive(Debug, PartialEq, Eq)]
pub enum UsageError {
    /// No command matches the words.
    UnknownCommand(String),
    /// An option the command does not take.
    UnexpectedOption(String),
    /// An option given without its value.
    MissingValue(String),
    /// An unknown global option in front of the command.
    UnknownGlobal(String),
    /// A `--mode` other than the offline ones.
    UnsupportedMode(String),
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UsageError::UnknownCommand(words) => write!(
                f,
                "Unrecognized command: {words}\nTry using the man command to get more information."
            ),
            UsageError::UnexpectedOption(name) => {
                write!(f, "Unexpected command line option {name}.")
            }
            UsageError::MissingValue(name) => {
                write!(f, "Option {name} expects an argument.")
            }
            UsageError::UnknownGlobal(name) => write!(f, "Unexpected command line option {name}."),
            UsageError::UnsupportedMode(mode) => write!(
                f,
                "Mode {mode} is not available: kestrel client runs offline commands (--mode mockup)."
            ),
        }
    }
}

fn lookup(table: &[(&'static str, Option<&'static str>)], word: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(long, short)| *long == word || *short == Some(word))
        .map(|(long, _)| *long)
}

/// The commands and their options, one per line (`kestrel client --help`, `kestrel client man`).
pub fn usage() -> String {
    let mut out = String::from(
        "Usage: kestrel client [--mode mockup] [--protocol HASH] [--base-dir DIR] [--no-base-dir-warnings] COMMAND [--json]\n\nCommands (octez-client's offline commands):\n",
    );
    for spec in COMMANDS.iter().chain(MOCKUP_COMMANDS) {
        out.push_str("  ");
        let words: Vec<String> = spec
            .pattern
            .iter()
            .map(|token| match token {
                Word(word) => (*word).to_string(),
                Param(name) => format!("<{}>", name.replace(' ', "-")),
            })
            .collect();
        out.push_str(&words.join(" "));
        for option in spec.options {
            match lookup(VALUED, option) {
                Some(_) => out.push_str(&format!(" [{option} {}]", value_name(option))),
                None => out.push_str(&format!(" [{option}]")),
            }
        }
        out.push('\n');
    }
    out.push_str(USAGE_NOTES);
    out
}

/// What `kestrel client --help` says after the commands: parameters, units, `--json`, exit codes.
const USAGE_NOTES: &str = "
Parameters: a script is a file, `-` for standard input, or the script's text; data, types and
  stacks are Micheline text (a value starting with `-`, such as `-1`, is a value, not an option).
Units and defaults are octez-client's: amounts in tez (`--amount` 0.05 by default, `--balance`
  4000000), gas in gas units (`--gas` 1040000 by default), `--now` in RFC 3339 or epoch seconds.
Output: what octez-client prints; with `--json` (anywhere on the line) one JSON object instead,
  on success and on failure: {\"error\": {\"kind\", \"message\", \"exit_code\", and \"file\", \"line\",
  \"column\", \"end_column\" when the error has a place}}.
Exit codes: 0 success; 1 the command failed (parse, typing or runtime error, unreadable file);
  2 the command line is not one octez-client accepts (unknown command or option, bad value).
";

/// The placeholder `--help` shows for the value of `option`.
fn value_name(option: &str) -> &'static str {
    match option {
        "--amount" | "--balance" | "--burn-cap" | "--fee" => "TEZ",
        "--gas" | "--gas-limit" => "GAS",
        "--storage-limit" => "BYTES",
        "--now" => "TIMESTAMP",
        "--level" => "LEVEL",
        "--source" | "--payer" | "--self-address" | "--delegate" => "ADDRESS",
        "--entrypoint" => "NAME",
        "--unparsing-mode" => "Readable|Optimized|Optimized_legacy",
        "--type" => "TYPE",
        "--init" | "--arg" => "DATA",
        _ => "MICHELINE",
    }
}

/// Whether `args` ask for the usage (`--help` or `-h` anywhere, `man` or `help` as the last word,
/// or no word at all).
pub fn asks_for_usage(args: &[String]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-h")
        || matches!(args.last().map(String::as_str), None | Some("man" | "help"))
}

/// Parses `args` (the words after `client`).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut globals = BTreeMap::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        if !word.starts_with('-') {
            break;
        }
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (word.as_str(), None),
        };
        let Some(&(long, _, valued)) = GLOBAL
            .iter()
            .find(|(long, short, _)| *long == name || *short == Some(name))
        else {
            return Err(UsageError::UnknownGlobal(word.clone()));
        };
        index += 1;
        let value = if valued {
            match inline {
                Some(value) => value,
                None => {
                    let value = args
                        .get(index)
                        .cloned()
                        .ok_or_else(|| UsageError::MissingValue(long.to_string()))?;
                    index += 1;
                    value
                }
            }
        } else {
            String::new()
        };
        globals.insert(long, value);
    }

    if let Some(mode) = globals
        .get("--mode")
        .filter(|m| !OFFLINE_MODES.contains(&m.as_str()))
    {
        return Err(UsageError::UnsupportedMode(mode.clone()));
    }

    let mut words: Vec<String> = Vec::new();
    let mut options = BTreeMap::new();
    let rest = &args[index..];
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        i += 1;
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (word.as_str(), None),
        };
        if let Some(long) = lookup(VALUED, name) {
            let value = match inline {
                Some(value) => value,
                None => {
                    let value = rest
                        .get(i)
                        .cloned()
                        .ok_or_else(|| UsageError::MissingValue(long.to_string()))?;
                    i += 1;
                    value
                }
            };
            options.insert(long, value);
        } else if let Some(long) = lookup(SWITCHES, name).filter(|_| inline.is_none()) {
            options.insert(long, String::new());
        } else {
            words.push(word.clone());
        }
    }

    let command = COMMANDS
        .iter()
        .chain(MOCKUP_COMMANDS)
        .find(|spec| matches(spec, &words))
        .ok_or_else(|| UsageError::UnknownCommand(words.join(" ")))?;
    for name in options.keys() {
        if !command.options.contains(name) {
            return Err(UsageError::UnexpectedOption((*name).to_string()));
        }
    }
    let mut params = BTreeMap::new();
    for (position, token) in command.pattern.iter().enumerate() {
        if let Param(name) = token {
            // A parameter given as an empty word (`normalize stack ''`) disappears from a
            // recorded command line; it reads as empty, as octez-client saw it.
            let value = words.get(position).cloned().unwrap_or_default();
            params.insert(*name, (position + 1, value));
        }
    }
    Ok(Invocation {
        command,
        params,
        options,
        globals,
    })
}

/// Whether `words` are `spec`'s (a missing last parameter counts as an empty one).
fn matches(spec: &CommandSpec, words: &[String]) -> bool {
    let pattern = spec.pattern;
    let fits_length = words.len() == pattern.len()
        || (words.len() + 1 == pattern.len() && matches!(pattern.last(), Some(Param(_))));
    fits_length
        && pattern.iter().zip(words).all(|(token, word)| match token {
            Word(expected) => expected == word,
            Param(_) => true,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn negative_numbers_are_values_not_options() {
        let invocation = parse(&args("--mode mockup hash data -1 of type int")).expect("parses");
        assert_eq!(invocation.command.name, "hash data");
        assert_eq!(invocation.param("data"), "-1");
        let invocation = parse(&args(
            "run script a.tz on storage -3 and input -12 --amount -5 --trace-stack",
        ))
        .expect("parses");
        assert_eq!(invocation.param("storage"), "-3");
        assert_eq!(invocation.param("input"), "-12");
        assert_eq!(invocation.option("--amount"), Some("-5"));
        assert!(invocation.switch("--trace-stack"));
    }

    #[test]
    fn global_options_in_front_are_accepted() {
        let invocation = parse(&args(
            "--protocol ProtoALpha --mode mockup --no-base-dir-warnings --base-dir /tmp/x normalize type nat",
        ))
        .expect("parses");
        assert_eq!(invocation.param("type"), "nat");
    }

    #[test]
    fn usage_lists_every_command() {
        let text = usage();
        assert!(
            text.contains("  hash data <data> of type <type> [--gas GAS] [--for-script]\n"),
            "{text}"
        );
        let commands = text.split("\n\n").nth(1).unwrap_or_default();
        assert_eq!(
            commands.lines().filter(|l| l.starts_with("  ")).count(),
            COMMANDS.len() + MOCKUP_COMMANDS.len()
        );
        assert!(text.contains("Exit codes: 0 success"), "{text}");
        assert!(asks_for_usage(&args("--mode mockup man")));
        assert!(!asks_for_usage(&args("hash data 1 of type int")));
        assert!(!asks_for_usage(&args("hash data man of type string")));
    }

    #[test]
    fn an_empty_last_parameter_reads_as_empty() {
        let invocation = parse(&args("normalize stack --unparsing-mode Readable")).expect("parses");
        assert_eq!(invocation.param("stack"), "");
        assert_eq!(invocation.position("stack"), 3);
    }

    #[test]
    fn unknown_commands_and_misplaced_options_are_usage_errors() {
        assert!(matches!(
            parse(&args("frobnicate data 1")),
            Err(UsageError::UnknownCommand(_))
        ));
        assert_eq!(
            parse(&args("normalize type nat --trace-stack")).err(),
            Some(UsageError::UnexpectedOption("--trace-stack".into()))
        );
        assert_eq!(
            parse(&args("--mode proxy hash data 1 of type int")).err(),
            Some(UsageError::UnsupportedMode("proxy".into()))
        );
        assert_eq!(
            parse(&args("--bogus hash data 1 of type int")).err(),
            Some(UsageError::UnknownGlobal("--bogus".into()))
        );
    }
}
