//! Replays the operations of the recorded `octez-client --mode mockup` sessions
//! (`octez-protocol/receipts/*.out`) through `validate_and_apply` on Octez's mockup genesis (its liquidity-baking contracts included), with
//! the fee, counter and limits each receipt shows (so the signed bytes have Octez's size), and
//! compares what the receipts show of each result: status, consumed gas, storage size, paid
//! storage diff and balance updates (hashes masked as the recording masks them).
//!
//! Destinations the recording masks (`[CONTRACT_HASH]`) are the contract last originated by the
//! session; a masked contract in an argument is the one originated before it.

use std::collections::HashMap;

use kestrel_crypto::{ChainId, ContractHash, Destination, Entrypoint};
use kestrel_micheline::Node;
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::manager::{Origination, Transaction};
use kestrel_protocol::receipt::{
    Balance, BalanceUpdate, ContentsMetadata, ManagerResult, OperationResult, TransactionOutcome,
};
use kestrel_protocol::script::{Parameters, Script};
use kestrel_protocol::{
    validate_and_apply, BlockContext, Genesis, Ledger, ManagerKind, Mode, Mutez, SignedOperation,
};
use kestrel_testdata::{parse_session, RecordedCommand};

mod support;

use support::{bootstrap_key_hash, expand, lazy, signed_bytes, CHAIN_ID, SECRET_KEYS};

/// A session being replayed.
struct Replay {
    ledger: Ledger,
    aliases: HashMap<String, ContractHash>,
    originated: Vec<ContractHash>,
    level: u64,
    /// Calls to contracts whose origination the session did not record.
    unreplayable: usize,
}

/// What one replayed operation gave against what was recorded.
struct Outcome {
    command: String,
    recorded: Vec<String>,
    replayed: Vec<String>,
}

#[test]
fn receipts_match_octez() {
    let Some(dir) = kestrel_testdata::require("octez-protocol/receipts", "receipts_match_octez")
    else {
        return;
    };
    let mut operations = 0;
    let mut exact = 0;
    let mut exact_but_gas = 0;
    let mut skipped = 0;
    let mut report = String::new();
    let mut files_exact = 0;
    let files = kestrel_testdata::files_with_suffix(&dir, ".out");
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable session");
        let (outcomes, unreplayable) = replay_session(&text);
        skipped += unreplayable;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut file_exact = !outcomes.is_empty();
        for outcome in outcomes {
            operations += 1;
            if without_gas(&outcome.recorded) == without_gas(&outcome.replayed) {
                exact_but_gas += 1;
            }
            if outcome.recorded == outcome.replayed {
                exact += 1;
            } else {
                file_exact = false;
                report.push_str(&format!("{name}: {}\n", outcome.command));
                for line in diff(&outcome.recorded, &outcome.replayed) {
                    report.push_str(&format!("    {line}\n"));
                }
            }
        }
        files_exact += usize::from(file_exact);
    }
    eprintln!("{report}");
    eprintln!(
        "files exact: {files_exact}/{}; operations exact: {exact}/{operations}, \
         all but gas: {exact_but_gas}/{operations}; not replayable (origination not recorded): {skipped}",
        files.len()
    );
    assert!(operations >= 55, "only {operations} operations replayed");
    assert_eq!(
        exact_but_gas, operations,
        "statuses, sizes, paid storage or balance updates differ"
    );
    assert_eq!(exact, operations, "consumed gas differs");
}

fn without_gas(facts: &[String]) -> Vec<&String> {
    facts
        .iter()
        .filter(|fact| !fact.starts_with("gas "))
        .collect()
}

fn diff(recorded: &[String], replayed: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    for index in 0..recorded.len().max(replayed.len()) {
        let (left, right) = (recorded.get(index), replayed.get(index));
        if left != right {
            lines.push(format!(
                "octez {:<40} kestrel {}",
                left.map_or("-", String::as_str),
                right.map_or("-", String::as_str)
            ));
        }
    }
    lines
}

/// The outcomes of a session's replayable operations, and how many it could not replay.
fn replay_session(text: &str) -> (Vec<Outcome>, usize) {
    let session = parse_session(text);
    let mut replay = Replay {
        ledger: Ledger::genesis(&Genesis::mockup().with_liquidity_baking(liquidity_baking()))
            .expect("genesis"),
        aliases: HashMap::new(),
        originated: Vec::new(),
        level: 1,
        unreplayable: 0,
    };
    let outcomes = session
        .commands
        .iter()
        .filter_map(|command| replay.run(command))
        .collect();
    (outcomes, replay.unreplayable)
}

/// Octez's liquidity-baking scripts, from the test data.
fn liquidity_baking() -> LiquidityBakingScripts {
    let dir = kestrel_testdata::testdata_dir()
        .join("michelson")
        .join("protocol");
    let read = |name: &str| {
        let text = std::fs::read_to_string(dir.join(name)).expect("liquidity-baking script");
        expand(kestrel_micheline::parse_toplevel(&text).expect("script parses"))
    };
    LiquidityBakingScripts {
        cpmm: read("cpmm.tz"),
        lqt: read("lqt.tz"),
    }
}

impl Replay {
    fn run(&mut self, command: &RecordedCommand) -> Option<Outcome> {
        let words: Vec<&str> = command.argv.iter().map(String::as_str).collect();
        let position = words
            .iter()
            .position(|word| *word == "originate" || *word == "transfer")?;
        let recorded = recorded_facts(&command.output)?;
        let header = Header::read(&command.output)?;
        let args = &words[position..];
        let mode = if command.output.contains("This simulation failed") {
            Mode::Simulate
        } else {
            Mode::Apply
        };
        // A masked destination is one of the contracts originated so far: the latest that
        // accepts the call (the argument's masked contract is then the latest other one).
        let choices = if args[0] == "transfer" && args[5] == "[CONTRACT_HASH]" {
            self.originated.len().max(1)
        } else {
            1
        };
        let mut replayed = Vec::new();
        for choice in 0..choices {
            let planned = if args[0] == "originate" {
                Some(self.origination(args))
            } else {
                self.transaction(args, choice)
            };
            let Some((alias, kind)) = planned else {
                // The session did not record the origination of the contract it calls.
                self.unreplayable += 1;
                return None;
            };
            let source = self.source(alias, header.counter);
            let (facts, applied) = self.apply(source, &header, kind, mode);
            replayed = facts;
            let failed = replayed
                .iter()
                .any(|fact| fact == "failed" || fact.starts_with("refused"));
            if !failed || choice + 1 == choices {
                if let Some((ledger, metadata)) = applied {
                    self.ledger = ledger;
                    self.remember_originations(&metadata, args);
                }
                break;
            }
        }
        self.level += 1;
        Some(Outcome {
            command: command.line.clone(),
            recorded,
            replayed,
        })
    }

    /// The bootstrap account `alias` names; a masked one is the first whose next counter is
    /// the receipt's.
    fn source(&self, alias: &str, counter: u128) -> usize {
        if let Some(index) = alias.strip_prefix("bootstrap") {
            return index.parse::<usize>().expect("bootstrap index") - 1;
        }
        (0..SECRET_KEYS.len())
            .find(|index| {
                let current = self
                    .ledger
                    .counter(&bootstrap_key_hash(*index))
                    .expect("counter");
                current.map(|current| current + 1) == Some(counter)
            })
            .unwrap_or(0)
    }

    fn origination<'w>(&self, args: &[&'w str]) -> (&'w str, ManagerKind<'static>) {
        // originate contract NAME transferring TEZ from SRC running FILE --init DATA ...
        let credit = mutez(args[4]);
        let source = args[6];
        let file = args[8].trim_start_matches("michelson_test_scripts/");
        let path = kestrel_testdata::testdata_dir()
            .join("michelson")
            .join(file);
        let script_text = std::fs::read_to_string(&path).expect("script file");
        let code = expand(kestrel_micheline::parse_toplevel(&script_text).expect("script parses"));
        let init = option(args, "--init").unwrap_or("Unit");
        let storage = expand(self.data(init, None));
        let kind = ManagerKind::Origination(Origination {
            balance: Mutez(credit),
            delegate: None,
            script: Script {
                code: lazy(&code),
                storage: lazy(&storage),
            },
        });
        (source, kind)
    }

    fn transaction<'w>(
        &self,
        args: &[&'w str],
        choice: usize,
    ) -> Option<(&'w str, ManagerKind<'static>)> {
        // transfer TEZ from SRC to DST [--arg DATA] [--entrypoint NAME] ...
        let amount = mutez(args[1]);
        let source = args[3];
        let destination = self.destination(args[5], choice)?;
        let entrypoint = option(args, "--entrypoint").unwrap_or("default");
        let parameters = option(args, "--arg").and_then(|text| {
            let value = expand(self.data(text, destination_hash(&destination)));
            let is_unit = value.known_prim() == Some(kestrel_micheline::Prim::D_Unit);
            (!(is_unit && entrypoint == "default")).then(|| Parameters {
                entrypoint: Entrypoint::try_new(entrypoint).expect("entrypoint"),
                value: lazy(&value),
            })
        });
        let kind = ManagerKind::Transaction(Transaction {
            amount: Mutez(amount),
            destination: Contract(destination),
            parameters,
        });
        Some((source, kind))
    }

    fn destination(&self, word: &str, choice: usize) -> Option<Destination> {
        if let Some(index) = word.strip_prefix("bootstrap") {
            let index: usize = index.parse().expect("bootstrap index");
            return Some(Destination::Implicit(bootstrap_key_hash(index - 1)));
        }
        let latest = self.originated.len().checked_sub(choice + 1);
        let hash = self
            .aliases
            .get(word)
            .or(latest.and_then(|index| self.originated.get(index)))?;
        Some(Destination::Originated(*hash))
    }

    /// Data text with the masked hashes replaced: a contract by the one originated before the
    /// destination, a key hash by bootstrap1's.
    fn data(&self, text: &str, destination: Option<ContractHash>) -> Node {
        let other = self
            .originated
            .iter()
            .rev()
            .find(|hash| Some(**hash) != destination)
            .or(self.originated.last());
        let mut text = text
            .replace("[PUBLIC_KEY_HASH]", &bootstrap_key_hash(0).to_b58check())
            .replace("[TIMESTAMP]", "2024-01-01T00:00:00Z");
        if let Some(other) = other {
            text = text.replace(
                "[CONTRACT_HASH]",
                &Destination::Originated(*other).to_b58check(),
            );
        }
        kestrel_micheline::parse_expression(&text).expect("data parses")
    }

    /// Applies on a copy of the state: the facts, and the state and metadata if applied.
    fn apply(
        &self,
        source: usize,
        header: &Header,
        kind: ManagerKind<'static>,
        mode: Mode,
    ) -> (
        Vec<String>,
        Option<(Ledger, Vec<ContentsMetadata<'static>>)>,
    ) {
        let limits = (
            header.fee,
            header.counter,
            header.gas_limit,
            header.storage_limit,
        );
        let bytes = signed_bytes(source, limits, kind);
        let signed = SignedOperation::decode(&bytes).expect("signed operation decodes");
        let block = BlockContext {
            level: self.level,
            // What `NOW` gives in the recorded mockup sessions (test_now.out).
            timestamp_seconds: 1,
            chain_id: ChainId::from_b58check(CHAIN_ID).expect("chain id"),
            payload_producer: bootstrap_key_hash(0),
        };
        let mut ledger = self.ledger.clone();
        let metadata = match validate_and_apply(&mut ledger, &signed, &block, mode) {
            Ok(metadata) => metadata,
            Err(error) => return (vec![format!("refused: {error}")], None),
        };
        let facts = facts_of(&metadata);
        (facts, (mode == Mode::Apply).then_some((ledger, metadata)))
    }

    fn remember_originations(&mut self, metadata: &[ContentsMetadata<'_>], args: &[&str]) {
        let ContentsMetadata::Manager(manager) = &metadata[0] else {
            return;
        };
        if let ManagerResult::Origination(OperationResult::Applied(result)) =
            &manager.operation_result
        {
            let hash = result.originated_contracts[0];
            self.originated.push(hash);
            self.aliases.insert(args[2].to_string(), hash);
        }
    }
}

fn destination_hash(destination: &Destination) -> Option<ContractHash> {
    match destination {
        Destination::Originated(hash) => Some(*hash),
        _ => None,
    }
}

/// The fee, counter and limits a receipt shows.
struct Header {
    fee: u64,
    counter: u128,
    gas_limit: u128,
    storage_limit: u128,
}

impl Header {
    fn read(output: &str) -> Option<Header> {
        let field = |prefix: &str| {
            output
                .lines()
                .map(str::trim)
                .find_map(|line| line.strip_prefix(prefix))
                .map(|rest| rest.trim_end_matches(" bytes").to_string())
        };
        Some(Header {
            fee: mutez(field("Fee to the baker: ꜩ")?.as_str()),
            counter: field("Expected counter: ")?.parse().ok()?,
            gas_limit: field("Gas limit: ")?.parse().ok()?,
            storage_limit: field("Storage limit: ")?.parse().ok()?,
        })
    }
}

/// The facts of a recorded receipt: statuses, sizes, gas, balance updates, in printed order.
fn recorded_facts(output: &str) -> Option<Vec<String>> {
    let start = output
        .find("This sequence of operations was run:")
        .or_else(|| output.find("This simulation failed:"))?;
    let mut facts = Vec::new();
    for line in output[start..].lines().map(str::trim) {
        if line.is_empty() {
            break;
        }
        if let Some(fact) = recorded_fact(line) {
            facts.push(fact);
        }
    }
    Some(facts)
}

fn recorded_fact(line: &str) -> Option<String> {
    if let Some(gas) = line.strip_prefix("Consumed gas: ") {
        return Some(format!("gas {gas}"));
    }
    if let Some(size) = line.strip_prefix("Storage size: ") {
        return Some(format!("size {}", size.trim_end_matches(" bytes")));
    }
    if let Some(size) = line.strip_prefix("Paid storage size diff: ") {
        return Some(format!("paid {}", size.trim_end_matches(" bytes")));
    }
    if line.contains("FAILED") {
        return Some("failed".into());
    }
    if line.contains("BACKTRACKED") {
        return Some("backtracked".into());
    }
    if line.contains("was skipped") {
        return Some("skipped".into());
    }
    let (who, amount) = line.split_once(" ...")?;
    let amount = amount.trim_start_matches('.').trim();
    amount
        .contains('ꜩ')
        .then(|| format!("{} {}", who.trim(), amount.replace('ꜩ', "")))
}

/// The same facts of an applied operation.
fn facts_of(metadata: &[ContentsMetadata<'_>]) -> Vec<String> {
    let mut facts = Vec::new();
    for contents in metadata {
        let ContentsMetadata::Manager(manager) = contents else {
            panic!("only manager operations are replayed");
        };
        push_updates(&mut facts, &manager.balance_updates);
        push_result(&mut facts, &manager.operation_result);
        for internal in &manager.internal_operation_results {
            push_result(&mut facts, &internal.result);
        }
    }
    facts
}

fn push_result(facts: &mut Vec<String>, result: &ManagerResult<'_>) {
    match result {
        ManagerResult::Transaction(result) => push_status(facts, result, |facts, outcome| {
            let TransactionOutcome::Contract(result) = outcome else {
                return;
            };
            if result.storage.is_some() {
                facts.push(format!("size {}", result.storage_size.0));
            }
            push_paid(facts, result.paid_storage_size_diff.0);
            push_gas(facts, result.consumed_milligas.0);
            push_updates(facts, &result.balance_updates);
        }),
        ManagerResult::Origination(result) => push_status(facts, result, |facts, result| {
            facts.push(format!("size {}", result.storage_size.0));
            push_paid(facts, result.paid_storage_size_diff.0);
            push_gas(facts, result.consumed_milligas.0);
            push_updates(facts, &result.balance_updates);
        }),
        ManagerResult::Reveal(result) | ManagerResult::Event(result) => {
            push_status(facts, result, |facts, result| {
                push_gas(facts, result.consumed_milligas.0)
            })
        }
        ManagerResult::Delegation(result) => push_status(facts, result, |facts, result| {
            push_gas(facts, result.consumed_milligas.0)
        }),
        ManagerResult::IncreasePaidStorage(result) => {
            push_status(facts, result, |facts, result| {
                push_updates(facts, &result.balance_updates);
                push_gas(facts, result.consumed_milligas.0);
            })
        }
        other => panic!("unexpected result kind {:?}", other.kind()),
    }
}

fn push_status<T>(
    facts: &mut Vec<String>,
    status: &OperationResult<T>,
    applied: impl Fn(&mut Vec<String>, &T),
) {
    match status {
        OperationResult::Applied(result) => applied(facts, result),
        OperationResult::Failed(errors) => {
            if std::env::var_os("APPLY_RECEIPTS_DEBUG").is_some() {
                eprintln!("failed: {errors:?}");
            }
            facts.push("failed".into())
        }
        OperationResult::Skipped => facts.push("skipped".into()),
        OperationResult::Backtracked { result, .. } => {
            facts.push("backtracked".into());
            applied(facts, result);
        }
    }
}

fn push_paid(facts: &mut Vec<String>, paid: i64) {
    if paid > 0 {
        facts.push(format!("paid {paid}"));
    }
}

fn push_gas(facts: &mut Vec<String>, milligas: u64) {
    let (units, milli) = (milligas / 1000, milligas % 1000);
    facts.push(if milli == 0 {
        format!("gas {units}")
    } else {
        format!("gas {units}.{milli:03}")
    });
}

fn push_updates(facts: &mut Vec<String>, updates: &[BalanceUpdate]) {
    for update in updates {
        let who = match &update.balance {
            Balance::Contract(Contract(Destination::Originated(_))) => {
                "[CONTRACT_HASH]".to_string()
            }
            Balance::Contract(_) => "[PUBLIC_KEY_HASH]".to_string(),
            Balance::BlockFees => "payload fees(the block proposer)".to_string(),
            Balance::StorageFees => "storage fees".to_string(),
            other => format!("{other:?}"),
        };
        let sign = if update.change < 0 { '-' } else { '+' };
        facts.push(format!("{who} {sign}{}", tez(update.change.unsigned_abs())));
    }
}

/// Mutez as octez-client prints tez: no trailing zeros.
fn tez(mutez: u64) -> String {
    let (units, fraction) = (mutez / 1_000_000, mutez % 1_000_000);
    if fraction == 0 {
        return units.to_string();
    }
    format!("{units}.{}", format!("{fraction:06}").trim_end_matches('0'))
}

/// Tez text (`500`, `0.000335`) in mutez.
fn mutez(text: &str) -> u64 {
    let (units, fraction) = text.split_once('.').unwrap_or((text, ""));
    let fraction = format!("{fraction:0<6}");
    units.parse::<u64>().expect("tez units") * 1_000_000
        + fraction.parse::<u64>().expect("tez fraction")
}

fn option<'a>(args: &[&'a str], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|word| *word == name)
        .and_then(|index| args.get(index + 1).copied())
}
