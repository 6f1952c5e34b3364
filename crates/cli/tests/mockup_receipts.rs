//! Replays every recorded `octez-client --mode mockup` session of `octez-protocol/receipts/`
//! through `kestrel client --mode mockup` on a fresh base directory (made by `create mockup`),
//! and compares each command's whole output (standard output, then standard error, as the
//! recorder captured them) with the recording, once masked as the recorder masks
//! (`tezt/lib_tezos/tezos_regression.ml`: block, operation, key and contract hashes,
//! timestamps).
//!
//! The recorder masked hashes in the command lines too; [`UNMASK`] says, per file and in order
//! of appearance, which alias (or literal) each masked argument stood for, read from the
//! recording (the contract just originated, the source whose counter the receipt shows, the
//! key hash whose bytes an `Updated storage` shows unmasked). Contracts a test originated
//! without recording it are originated as it did, before the command that needs them
//! ([`SETUP`]). Files that cannot be replayed are listed in [`NOT_REPLAYABLE`] with the reason.
//!
//! [`PASSING`] lists the files whose every command prints the recorded output; the test fails
//! when one of them does not, and prints, for every other file, its first difference.

mod support;

use std::path::{Path, PathBuf};

/// Files whose every command matches the recording: raise it as more do.
const PASSING: &[&str] = &[
    "Create_contract.out",
    "Self_address_transfer.out",
    "Test_sending_a_big_map_during_contract_internal_origination.out",
    "Test_sending_a_big_map_from_a_contract_to_another.out",
    "test_big_map_origination.out",
    "test_contract_fails.out",
    "test_level.out",
    "test_now.out",
    "test_self.out",
    "test_sender.out",
    "test_set_delegate.out",
    "test_slice.out",
    "test_source.out",
    "test_split_bytes.out",
    "test_split_string.out",
    "test_store_input.out",
    "test_trace_origination_compare_big_type.out",
    "test_trace_origination_compare_big_type2.out",
    "test_transfer_amount.out",
    "test_transfer_tokens.out",
];

/// Files whose every command matches the recording once gas figures (estimated and consumed
/// gas, gas limits, and the fees computed from them) are set aside: raise it as more do. Every
/// such file is now identical too, so the list is [`PASSING`]; give it its own when one is not.
const PASSING_BUT_FOR_GAS: &[&str] = PASSING;

/// Files the recording does not let us replay, with the reason.
const NOT_REPLAYABLE: &[(&str, &str)] = &[(
    "increase_paid_storage.out",
    "records the receipt only: neither the command nor the origination of its contract",
)];

/// A step a test took without recording it.
#[derive(Clone, Copy)]
enum Setup {
    /// An origination: alias, script under `michelson_test_scripts/`, initial storage (tezt's
    /// `originate_contract_at` in `contract_big_map_transfer.ml`: 0 tez from bootstrap1, burn
    /// cap 1, `--force`).
    Originate(&'static str, &'static str, &'static str),
    /// `Client.bake_for ~minimal_timestamp:true` (`contract_onchain_opcodes.ml`).
    Bake,
}

const SENDER_FRESH: Setup = Setup::Originate("sender", "big_maps/sender_fresh.tz", "Unit");
const SENDER_STORED: Setup =
    Setup::Originate("sender", "big_maps/sender_stored.tz", "{Elt \"d\" 0x; }");
const SENDER_STORED_UPDATED: Setup = Setup::Originate(
    "sender",
    "big_maps/sender_stored_updated.tz",
    "{Elt \"b\" 0x; Elt \"d\" 0x; }",
);
const RECEIVER_DROP: Setup = Setup::Originate("receiver", "big_maps/receiver_drop.tz", "Unit");
const RECEIVER_STORE: Setup = Setup::Originate("receiver", "big_maps/receiver_store.tz", "{}");
const RECEIVER_STORE_UPDATED: Setup =
    Setup::Originate("receiver", "big_maps/receiver_store_updated.tz", "{}");

/// `contract_big_map_transfer.ml`'s first test: for each sender and receiver, the receiver
/// then the sender originated, then the recorded call.
const SENDER_RECEIVER_SETUP: &[&[Setup]] = &[
    &[RECEIVER_DROP, SENDER_FRESH],
    &[RECEIVER_STORE, SENDER_FRESH],
    &[RECEIVER_STORE_UPDATED, SENDER_FRESH],
    &[RECEIVER_DROP, SENDER_STORED],
    &[RECEIVER_STORE, SENDER_STORED],
    &[RECEIVER_STORE_UPDATED, SENDER_STORED],
    &[RECEIVER_DROP, SENDER_STORED_UPDATED],
    &[RECEIVER_STORE, SENDER_STORED_UPDATED],
    &[RECEIVER_STORE_UPDATED, SENDER_STORED_UPDATED],
];

/// Per file, the originations to make before each recorded command, by command.
const SETUP: &[(&str, &[&[Setup]])] = &[
    (
        "Test_sending_a_big_map_during_contract_internal_origination.out",
        &[&[Setup::Originate(
            "originator",
            "big_maps/originator.tz",
            "{Elt \"b\" 0x; Elt \"d\" 0x; }",
        )]],
    ),
    // `test_level`: a block after the first call, two more before the second storage read,
    // one after the second call.
    (
        "test_level.out",
        &[
            &[],
            &[],
            &[Setup::Bake],
            &[Setup::Bake, Setup::Bake],
            &[],
            &[Setup::Bake],
        ],
    ),
    (
        "Test_sending_a_big_map_from_a_contract_to_another.out",
        SENDER_RECEIVER_SETUP,
    ),
];

/// Titles the recorder wrote into a session between commands (`Regression.capture` in
/// `contract_big_map_transfer.ml`); they end the previous command's recorded output.
const CAPTURED_TITLES: &[&str] = &["Test transferring big map from "];

/// Per file, what each masked command-line value stood for, in order: a wallet alias (contract
/// or key), or `=TEXT` for a literal.
const UNMASK: &[(&str, &[&str])] = &[
    ("Create_contract.out", &["originate_contract"]),
    (
        "Self_address_transfer.out",
        &["self_address_sender", "self_address_receiver"],
    ),
    (
        "test_big_map_origination.out",
        &["originate_big_map", "originate_big_map"],
    ),
    ("test_contract_fails.out", &["contract", "contract"]),
    (
        "Test_sending_a_big_map_during_contract_internal_origination.out",
        &["originator"],
    ),
    (
        "Test_sending_a_big_map_from_a_contract_to_another.out",
        &[
            "sender", "receiver", "sender", "receiver", "sender", "receiver", "sender", "receiver",
            "sender", "receiver", "sender", "receiver", "sender", "receiver", "sender", "receiver",
            "sender", "receiver",
        ],
    ),
    (
        "test_level.out",
        &["level", "level", "level", "level", "level"],
    ),
    (
        "test_now.out",
        &["=2024-01-01T00:00:00Z", "store_now", "store_now"],
    ),
    ("test_self.out", &["bootstrap1", "self", "self"]),
    // The transfers' source is bootstrap2: its counter starts at 1 and `SENDER` stores
    // 0x0000e7670f…, bootstrap2's key hash.
    (
        "test_sender.out",
        &[
            "bootstrap1",
            "bootstrap2",
            "sender",
            "sender",
            "bootstrap2",
            "proxy",
            "sender",
            "sender",
        ],
    ),
    (
        "test_source.out",
        &[
            "bootstrap1",
            "bootstrap2",
            "source",
            "source",
            "bootstrap2",
            "proxy",
            "source",
            "source",
        ],
    ),
    (
        "test_set_delegate.out",
        &["set_delegate", "bootstrap5", "set_delegate"],
    ),
    (
        "test_slice.out",
        &["slices", "slices", "slices", "slices", "slices", "slices"],
    ),
    (
        "test_split_bytes.out",
        &["split_bytes", "split_bytes", "split_bytes", "split_bytes"],
    ),
    (
        "test_split_string.out",
        &[
            "split_string",
            "split_string",
            "split_string",
            "split_string",
        ],
    ),
    (
        "test_store_input.out",
        &["store_input", "store_input", "store_input", "store_input"],
    ),
    ("test_trace_origination_compare_big_type.out", &[]),
    ("test_trace_origination_compare_big_type2.out", &[]),
    (
        "test_transfer_amount.out",
        &["transfer_amount", "transfer_amount"],
    ),
    (
        "test_transfer_tokens.out",
        &[
            "transfer_tokens",
            "test_transfer_contract1",
            "transfer_tokens",
            "test_transfer_contract2",
        ],
    ),
];

/// What the recorder put in place of values in command lines.
const COMMAND_MASKS: &[&str] = &["[CONTRACT_HASH]", "[PUBLIC_KEY_HASH]", "[TIMESTAMP]"];

#[test]
fn recorded_mockup_sessions_replay_with_the_same_receipts() {
    let (Some(receipts), Some(scripts)) = (
        kestrel_testdata::require("octez-protocol/receipts", "recorded_mockup_sessions"),
        kestrel_testdata::require("michelson", "recorded_mockup_sessions"),
    ) else {
        return;
    };
    let files = kestrel_testdata::files_with_suffix(&receipts, ".out");
    assert_eq!(files.len(), 21, "recorded sessions");
    let scripts = format!("{}/", scripts.display());
    let mut passing = Vec::new();
    let mut passing_but_gas = Vec::new();
    let mut failing = Vec::new();
    for file in &files {
        let name = file_name(file);
        if let Some((_, reason)) = NOT_REPLAYABLE.iter().find(|(n, _)| *n == name) {
            println!("NOT REPLAYABLE {name}: {reason}");
            continue;
        }
        let values = UNMASK
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, values)| *values)
            .unwrap_or_else(|| panic!("{name}: neither in UNMASK nor in NOT_REPLAYABLE"));
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let replayed = replay(&name, &text, values, &scripts);
        println!(
            "{name}: {}/{} commands identical, {}/{} identical but for gas",
            replayed.identical, replayed.commands, replayed.identical_but_gas, replayed.commands
        );
        if let Some(difference) = &replayed.first_difference_beyond_gas {
            println!("  first difference beyond gas: {difference}");
        } else if let Some(difference) = &replayed.first_difference {
            println!("  first difference (gas): {difference}");
        }
        if replayed.identical == replayed.commands {
            passing.push(name.clone());
        }
        if replayed.identical_but_gas == replayed.commands {
            passing_but_gas.push(name);
        } else {
            failing.push(name);
        }
    }
    println!(
        "recorded mockup sessions: {} of {} replayable files identical, {} identical but for gas; {} not replayable",
        passing.len(),
        passing_but_gas.len() + failing.len(),
        passing_but_gas.len(),
        NOT_REPLAYABLE.len()
    );
    for name in PASSING_BUT_FOR_GAS {
        assert!(
            passing_but_gas.iter().any(|p| p == name),
            "{name} is listed as identical but for gas, and differs beyond gas"
        );
    }
    for name in PASSING {
        assert!(
            passing.iter().any(|p| p == name),
            "{name} is listed as passing but differs"
        );
    }
    // The lists say exactly what passes: a file that starts to pass is added to them.
    assert_eq!(passing.len(), PASSING.len(), "identical files: {passing:?}");
    assert_eq!(
        passing_but_gas.len(),
        PASSING_BUT_FOR_GAS.len(),
        "files identical but for gas: {passing_but_gas:?}"
    );
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// How one replayed session compared with its recording.
struct Replayed {
    /// Commands run.
    commands: usize,
    /// Commands whose whole output is the recorded one.
    identical: usize,
    /// Commands whose output is the recorded one once gas figures (and the fee and limits that
    /// follow from them) are set aside.
    identical_but_gas: usize,
    /// The first difference of each kind: any, and beyond gas.
    first_difference: Option<String>,
    first_difference_beyond_gas: Option<String>,
}

/// Replays one session on a fresh base directory.
fn replay(name: &str, text: &str, values: &[&str], scripts: &str) -> Replayed {
    let session = kestrel_testdata::parse_session(text);
    let masked: usize = session
        .commands
        .iter()
        .flat_map(|c| &c.argv)
        .map(|word| {
            COMMAND_MASKS
                .iter()
                .map(|m| word.matches(m).count())
                .sum::<usize>()
        })
        .sum();
    assert_eq!(
        masked,
        values.len(),
        "{name}: UNMASK must give one value per masked argument"
    );
    let mut replayed = Replayed {
        commands: session.commands.len(),
        identical: 0,
        identical_but_gas: 0,
        first_difference: None,
        first_difference_beyond_gas: None,
    };
    let base_dir = fresh_base_dir(name);
    let base = base_dir.to_string_lossy().into_owned();
    // Octez's mockup originates the liquidity-baking contracts at genesis (big maps 0 to 3).
    let liquidity_baking_scripts = kestrel_testdata::testdata_dir()
        .join("michelson")
        .join("protocol")
        .to_string_lossy()
        .into_owned();
    let (code, _, stderr) = support::run_kestrel(
        &[
            "client",
            "--mode",
            "mockup",
            "--base-dir",
            &base,
            "create",
            "mockup",
            "--liquidity-baking-scripts",
            &liquidity_baking_scripts,
        ],
        "",
    );
    assert_eq!(code, 0, "create mockup failed: {stderr}");
    let mut pending = values.iter();
    let setup = SETUP
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(&[][..], |(_, setup)| *setup);
    for (index, command) in session.commands.iter().enumerate() {
        for step in setup.get(index).copied().unwrap_or_default() {
            let arguments: Vec<String> = match *step {
                Setup::Originate(alias, script, init) => [
                    "originate",
                    "contract",
                    alias,
                    "transferring",
                    "0",
                    "from",
                    "bootstrap1",
                    "running",
                    &format!("{scripts}{script}"),
                    "--init",
                    init,
                    "--burn-cap",
                    "1",
                    "--force",
                ]
                .map(str::to_string)
                .to_vec(),
                Setup::Bake => ["bake", "for", "bootstrap1", "--minimal-timestamp"]
                    .map(str::to_string)
                    .to_vec(),
            };
            let mut command = vec!["client", "--mode", "mockup", "--base-dir", &base];
            command.extend(arguments.iter().map(String::as_str));
            let (code, _, stderr) = support::run_kestrel(&command, "");
            assert_eq!(code, 0, "{name}: setup step {arguments:?} failed: {stderr}");
        }
        let recorded = without_captured_titles(&command.output);
        let mut arguments = vec!["client".to_string(), "--base-dir".to_string(), base.clone()];
        for word in &command.argv {
            let mut word = word.replacen("michelson_test_scripts/", scripts, 1);
            while let Some((at, mask)) = COMMAND_MASKS
                .iter()
                .filter_map(|mask| word.find(mask).map(|at| (at, *mask)))
                .min()
            {
                let value = pending.next().expect("counted above");
                word.replace_range(at..at + mask.len(), &resolve(&base, value));
            }
            arguments.push(word);
        }
        let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
        let (_, stdout, stderr) = support::run_kestrel(&arguments, "");
        let got = mask(&format!("{stdout}{stderr}"));
        let at =
            |difference: String| format!("command {} ({}): {difference}", index + 1, command.line);
        if got == recorded {
            replayed.identical += 1;
            replayed.identical_but_gas += 1;
            continue;
        }
        replayed
            .first_difference
            .get_or_insert_with(|| at(first_difference(&recorded, &got)));
        let (want, got) = (without_gas(&recorded), without_gas(&got));
        if want == got {
            replayed.identical_but_gas += 1;
        } else {
            replayed
                .first_difference_beyond_gas
                .get_or_insert_with(|| at(first_difference(&want, &got)));
        }
    }
    let _ = std::fs::remove_dir_all(&base_dir);
    replayed
}

/// A command's recorded output without the recorder's titles at its end ([`CAPTURED_TITLES`])
/// and the blank lines before them.
fn without_captured_titles(output: &str) -> String {
    let mut lines: Vec<&str> = output.lines().collect();
    while lines.last().is_some_and(|line| {
        line.is_empty() || CAPTURED_TITLES.iter().any(|title| line.starts_with(title))
    }) {
        lines.pop();
    }
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// `text` with the figures that follow from gas replaced by `#`: estimated and consumed gas,
/// gas limits, and the fee (computed from the gas limit) where the receipt shows it.
fn without_gas(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (index, line) in lines.iter().enumerate() {
        let fee_debit = lines
            .get(index + 1)
            .is_some_and(|next| next.contains("payload fees"));
        let gas_figure = [
            "Estimated gas",
            "Consumed gas",
            "Gas limit",
            "Fee to the baker",
            "payload fees",
        ]
        .iter()
        .any(|label| line.contains(label));
        if gas_figure || fee_debit {
            // A figure's length changes with it (ꜩ0.00044, ꜩ0.000441): each run of digits and
            // points becomes one `#`.
            let mut in_figure = false;
            for c in line.chars() {
                let figure = c.is_ascii_digit() || (in_figure && c == '.');
                if !figure {
                    out.push(c);
                } else if !in_figure {
                    out.push('#');
                }
                in_figure = figure;
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The address an `UNMASK` value names (`=TEXT` is the text itself), read from the base
/// directory's wallet.
fn resolve(base: &str, value: &str) -> String {
    if let Some(text) = value.strip_prefix('=') {
        return text.to_string();
    }
    let (_, listed, _) = support::run_kestrel(
        &[
            "client",
            "--mode",
            "mockup",
            "--base-dir",
            base,
            "list",
            "known",
            "contracts",
        ],
        "",
    );
    listed
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{value}: ")))
        .map_or_else(|| format!("<no alias {value}>"), str::to_string)
}

fn fresh_base_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kestrel-mockup-{}-{}",
        std::process::id(),
        name.trim_end_matches(".out")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `want` and `got` from their first differing line.
fn first_difference(want: &str, got: &str) -> String {
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), got.lines().collect());
    let at = want_lines
        .iter()
        .zip(&got_lines)
        .take_while(|(a, b)| a == b)
        .count();
    format!(
        "line {}: want {:?}, got {:?}",
        at + 1,
        want_lines.get(at).copied().unwrap_or("<end>"),
        got_lines.get(at).copied().unwrap_or("<end>")
    )
}

/// Masks `text` as the recorder does (`tezos_regression.ml`'s replacements that can occur in a
/// mockup session, in its order): a 51-character word starting with `B` (block hash), a
/// 51-character word starting with `o` (operation hash), the last 36 characters of a word
/// starting with `tz1`..`tz4` or `KT1`, and `YYYY-MM-DDTHH:MM:SSZ`.
fn mask(text: &str) -> String {
    let masked = mask_words(text);
    mask_timestamps(&masked)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn mask_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        out.push_str(&mask_word(word));
        let gap = after.find(is_word).unwrap_or(after.len());
        out.push_str(&after[..gap]);
        rest = &after[gap..];
    }
    out
}

fn mask_word(word: &str) -> String {
    if word.len() == 51 && word.starts_with('B') {
        return "[BLOCK_HASH]".into();
    }
    if word.len() == 51 && word.starts_with('o') {
        return "[OPERATION_HASH]".into();
    }
    if word.len() >= 36 {
        let (head, tail) = word.split_at(word.len() - 36);
        if ["tz1", "tz2", "tz3", "tz4"]
            .iter()
            .any(|p| tail.starts_with(p))
        {
            return format!("{head}[PUBLIC_KEY_HASH]");
        }
        if tail.starts_with("KT1") {
            return format!("{head}[CONTRACT_HASH]");
        }
    }
    word.to_string()
}

fn mask_timestamps(text: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:ddZ";
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut index = 0;
    let mut copied = 0;
    while index + SHAPE.len() <= bytes.len() {
        let fits = SHAPE.iter().zip(&bytes[index..]).all(|(s, b)| match s {
            b'd' => b.is_ascii_digit(),
            other => other == b,
        });
        if fits {
            out.push_str(&text[copied..index]);
            out.push_str("[TIMESTAMP]");
            index += SHAPE.len();
            copied = index;
        } else {
            index += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[test]
fn masks_follow_the_recorder() {
    assert_eq!(
        mask("From: tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx to KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW."),
        "From: [PUBLIC_KEY_HASH] to [CONTRACT_HASH]."
    );
    assert_eq!(
        mask("'oo4vECCgpTowVrRRSPwYcBM3FpkyvitMqVvpHonrjNstrqgR9yU' --branch BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2"),
        "'[OPERATION_HASH]' --branch [BLOCK_HASH]"
    );
    assert_eq!(
        mask("{ \"string\": \"2024-01-01T00:00:00Z\" } 0x0000e7670f32038107a59a2b9cfefae36ea21f5aa63c"),
        "{ \"string\": \"[TIMESTAMP]\" } 0x0000e7670f32038107a59a2b9cfefae36ea21f5aa63c"
    );
}

/// State persists in the base directory between commands: an originated contract's views run
/// on its storage and balance, with `run_script_view`'s defaults (`SENDER` the contract,
/// `SOURCE` the zero key hash) and `--payer`; a base directory that is not a mockup one gets
/// an in-memory mockup and is left untouched.
#[test]
fn views_run_on_the_persisted_state() {
    let Some(scripts) = kestrel_testdata::require("michelson", "views_run_on_the_persisted_state")
    else {
        return;
    };
    let dir = fresh_base_dir("views");
    let base = dir.to_string_lossy().into_owned();
    let client = |words: &[&str]| {
        let mut arguments = vec!["client", "--mode", "mockup", "--base-dir", &base];
        arguments.extend_from_slice(words);
        support::run_kestrel(&arguments, "")
    };
    assert_eq!(client(&["create", "mockup"]).0, 0);
    let script = scripts.join("opcodes/view_toplevel_lib.tz");
    let script = script.to_string_lossy();
    let (code, _, stderr) = client(&[
        "--wait",
        "none",
        "originate",
        "contract",
        "lib",
        "transferring",
        "3",
        "from",
        "bootstrap1",
        "running",
        &script,
        "--init",
        "5",
        "--burn-cap",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (_, address, _) = client(&["show", "known", "contract", "lib"]);
    let address = address.trim();
    assert_eq!(
        client(&["run", "view", "add", "on", "contract", "lib", "with", "input", "10"]).1,
        "15\n"
    );
    let zero = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";
    assert_eq!(
        client(&["run", "view", "step_constants", "on", "contract", "lib"]).1,
        format!(
            "Pair (Pair 0 3000000)\n     (Pair \"{address}\" \"{address}\")\n     \"{zero}\"\n"
        )
    );
    let bootstrap2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";
    assert_eq!(
        client(&["run", "view", "step_constants", "on", "contract", "lib", "--payer", "bootstrap2"]).1,
        format!("Pair (Pair 0 3000000)\n     (Pair \"{address}\" \"{bootstrap2}\")\n     \"{bootstrap2}\"\n")
    );
    assert_eq!(client(&["get", "balance", "for", "lib"]).1, "3 \u{a729}\n");
    let (_, genesis_balance, _) = client(&["get", "balance", "for", "bootstrap2"]);
    let _ = std::fs::remove_dir_all(&dir);

    let absent = fresh_base_dir("absent");
    let absent_text = absent.to_string_lossy().into_owned();
    let (code, stdout, _) = support::run_kestrel(
        &[
            "client",
            "--mode",
            "mockup",
            "--base-dir",
            &absent_text,
            "get",
            "balance",
            "for",
            "bootstrap2",
        ],
        "",
    );
    assert_eq!((code, stdout), (0, genesis_balance));
    assert!(!absent.exists());
}
