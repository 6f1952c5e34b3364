//! Tickets applied as Octez protocol 025 applies them, against Octez's own regression outputs
//! for it: the `octez-client --mode mockup` sessions tezt records in
//! `tezt/tests/expected/tickets.ml/U025-- Create and remove tickets.out`,
//! `… Send tickets between originated contracts and implicit accounts.out`,
//! `… Overdrafting ticket from implicit accounts must be rejected.out` and
//! `… Sending ticket of wrong type from implicit accounts must be rejected.out` (tezos-mirror).
//! The operations are those sessions' (same sources, scripts from `michelson_test_scripts/`,
//! fees, counters and limits, so that the signed bytes, and the contracts' addresses, are
//! Octez's); the expected facts below are transcribed from the recordings: status, storage
//! size, paid storage diff, storage burns, ticket updates, the ticket's bytes in an emitted
//! parameter, the failures' errors, the ticket balances `get ticket balance` printed, and the
//! consumed gas.

use kestrel_crypto::{ChainId, ContractHash, Destination, Entrypoint};
use kestrel_micheline::Node;
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::field::{BoundedNat, TicketAmount};
use kestrel_protocol::ledger::LiquidityBakingScripts;
use kestrel_protocol::manager::{ManagerHeader, Origination, Transaction, TransferTicket};
use kestrel_protocol::receipt::ticket::TicketReceiptItem;
use kestrel_protocol::receipt::{
    Balance, BalanceUpdate, ContentsAndMetadata, ContentsMetadata, ManagerResult, OperationResult,
    TransactionOutcome,
};
use kestrel_protocol::script::{Parameters, Script, SimpleEntrypoint};
use kestrel_protocol::{
    validate_and_apply, BlockContext, Contents, Genesis, Ledger, ManagerKind, ManagerOperation,
    Mode, Mutez, SignedOperation,
};

mod support;

use support::{bootstrap_key_hash, expand, lazy, signed_bytes, Limits, CHAIN_ID};

/// A mockup session: the state, the contracts it originated, in order, and the gas each
/// applied transaction or ticket transfer consumed (milligas), in order.
struct Session {
    ledger: Ledger,
    originated: Vec<ContractHash>,
    level: u64,
    gas: Vec<u64>,
    /// The last operation's receipt as `octez-client` prints it.
    rendered: String,
}

impl Session {
    fn new() -> Session {
        let genesis = Genesis::mockup().with_liquidity_baking(liquidity_baking());
        Session {
            ledger: Ledger::genesis(&genesis).expect("genesis"),
            originated: Vec::new(),
            level: 1,
            gas: Vec::new(),
            rendered: String::new(),
        }
    }

    /// Applies `kind` from bootstrap `source` (0-based) with `header`: its facts.
    fn run(&mut self, source: usize, header: Limits, kind: ManagerKind<'static>) -> Vec<String> {
        self.apply(source, header, kind, Mode::Apply)
    }

    fn apply(
        &mut self,
        source: usize,
        limits: Limits,
        kind: ManagerKind<'static>,
        mode: Mode,
    ) -> Vec<String> {
        let contents = ManagerOperation {
            header: ManagerHeader {
                source: bootstrap_key_hash(source),
                fee: Mutez(limits.0),
                counter: BoundedNat(limits.1),
                gas_limit: BoundedNat(limits.2),
                storage_limit: BoundedNat(limits.3),
            },
            operation: kind.clone(),
        };
        let contents = Contents::Manager(contents);
        let bytes = signed_bytes(source, limits, kind);
        let signed = SignedOperation::decode(&bytes).expect("signed operation decodes");
        let block = BlockContext {
            level: self.level,
            timestamp_seconds: 1,
            chain_id: ChainId::from_b58check(CHAIN_ID).expect("chain id"),
            payload_producer: bootstrap_key_hash(0),
        };
        self.level += 1;
        // A simulation changes nothing.
        let mut simulated = self.ledger.clone();
        let ledger = match mode {
            Mode::Apply => &mut self.ledger,
            Mode::Simulate => &mut simulated,
        };
        let metadata = validate_and_apply(ledger, &signed, &block, mode).expect("validated");
        self.rendered = kestrel_protocol::render_receipt(&[ContentsAndMetadata {
            contents,
            metadata: metadata[0].clone(),
        }]);
        let ContentsMetadata::Manager(manager) = &metadata[0] else {
            panic!("a manager operation's receipt");
        };
        if let ManagerResult::Origination(OperationResult::Applied(result)) =
            &manager.operation_result
        {
            self.originated.push(result.originated_contracts[0]);
        }
        let mut facts = Vec::new();
        let results = std::iter::once(&manager.operation_result).chain(
            manager
                .internal_operation_results
                .iter()
                .map(|internal| &internal.result),
        );
        for result in results {
            match result {
                ManagerResult::Transaction(OperationResult::Applied(
                    TransactionOutcome::Contract(result),
                )) => self.gas.push(result.consumed_milligas.0),
                ManagerResult::TransferTicket(OperationResult::Applied(result)) => {
                    self.gas.push(result.consumed_milligas.0)
                }
                _ => {}
            }
        }
        push_result(&mut facts, &manager.operation_result);
        for internal in &manager.internal_operation_results {
            facts.push("internal".to_string());
            if let kestrel_protocol::internal::InternalKind::Transaction(transaction) =
                &internal.operation.operation
            {
                if let Some(parameters) = &transaction.parameters {
                    let node = kestrel_micheline::binary::decode(parameters.value.bytes())
                        .expect("parameter decodes");
                    let text = kestrel_micheline::print::to_text_single_line(&node);
                    facts.push(format!("parameter ({text})"));
                }
            }
            push_result(&mut facts, &internal.result);
        }
        facts
    }

    fn contract(&self, index: usize) -> Destination {
        Destination::Originated(self.originated[index])
    }

    /// `owner`'s balance of the string ticket `content` created by `ticketer`.
    fn ticket_balance(&self, ticketer: &Destination, content: &str, owner: &Destination) -> u64 {
        let key = kestrel_protocol::apply::ticket_balance_key(
            ticketer,
            &Node::prim(kestrel_micheline::Prim::T_string, Vec::new()),
            &Node::string(content),
            owner,
        );
        let balance = self.ledger.ticket_balance(&key).expect("readable");
        balance.map_or(0, |(amount, _)| u64::try_from(amount).expect("small"))
    }
}

fn push_result(facts: &mut Vec<String>, result: &ManagerResult<'_>) {
    match result {
        ManagerResult::Origination(OperationResult::Applied(result)) => {
            facts.push("applied".into());
            facts.push(format!("storage size {}", result.storage_size.0));
            facts.push(format!("paid {}", result.paid_storage_size_diff.0));
            push_burn(facts, &result.balance_updates);
        }
        ManagerResult::Transaction(OperationResult::Applied(TransactionOutcome::Contract(
            result,
        ))) => {
            facts.push("applied".into());
            if result.storage.is_some() {
                facts.push(format!("storage size {}", result.storage_size.0));
            }
            if result.paid_storage_size_diff.0 != 0 {
                facts.push(format!("paid {}", result.paid_storage_size_diff.0));
            }
            push_burn(facts, &result.balance_updates);
            push_tickets(facts, &result.ticket_updates);
        }
        ManagerResult::TransferTicket(OperationResult::Applied(result)) => {
            facts.push("applied".into());
            facts.push(format!("paid {}", result.paid_storage_size_diff.0));
            push_tickets(facts, &result.ticket_updates);
            push_burn(facts, &result.balance_updates);
        }
        ManagerResult::Transaction(OperationResult::Failed(errors)) => {
            facts.push("failed".into());
            for error in errors {
                facts.push(format!("error {}", error.id));
            }
        }
        ManagerResult::TransferTicket(OperationResult::Failed(errors)) => {
            facts.push("failed".into());
            for error in errors {
                facts.push(format!("error {} {:?}", error.id, error.fields));
            }
        }
        other => facts.push(format!("unexpected {other:?}")),
    }
}

/// The storage burns, mutez.
fn push_burn(facts: &mut Vec<String>, updates: &[BalanceUpdate]) {
    for update in updates {
        if matches!(update.balance, Balance::StorageFees) {
            facts.push(format!("burn {}", update.change));
        }
    }
}

fn push_tickets(facts: &mut Vec<String>, items: &[TicketReceiptItem<'_>]) {
    for item in items {
        let decode = |bytes: &[u8]| {
            kestrel_micheline::print::to_text_single_line(
                &kestrel_micheline::binary::decode(bytes).expect("decodes"),
            )
        };
        let token = &item.ticket_token;
        facts.push(format!(
            "ticket {} {} {}",
            token.ticketer.0.to_b58check(),
            decode(&token.content_type.0),
            decode(&token.content.0)
        ));
        for update in &item.updates {
            facts.push(format!(
                "  {} {:+}",
                update.account.0.to_b58check(),
                update.amount.0
            ));
        }
    }
}

fn implicit(index: usize) -> Destination {
    Destination::Implicit(bootstrap_key_hash(index))
}

fn liquidity_baking() -> LiquidityBakingScripts {
    let dir = kestrel_testdata::testdata_dir()
        .join("michelson")
        .join("protocol");
    let read = |name: &str| parse_script(&std::fs::read_to_string(dir.join(name)).expect("script"));
    LiquidityBakingScripts {
        cpmm: read("cpmm.tz"),
        lqt: read("lqt.tz"),
    }
}

fn parse_script(text: &str) -> Node {
    expand(kestrel_micheline::parse_toplevel(text).expect("script parses"))
}

fn data(text: &str) -> Node {
    kestrel_micheline::parse_expression(text).expect("data parses")
}

fn originate(script: &str, credit: u64, init: &str) -> ManagerKind<'static> {
    let path = kestrel_testdata::testdata_dir()
        .join("michelson")
        .join("mini_scenarios")
        .join(script);
    let code = parse_script(&std::fs::read_to_string(path).expect("script file"));
    ManagerKind::Origination(Origination {
        balance: Mutez(credit),
        delegate: None,
        script: Script {
            code: lazy(&code),
            storage: lazy(&data(init)),
        },
    })
}

fn call(destination: Destination, entrypoint: &str, argument: &str) -> ManagerKind<'static> {
    ManagerKind::Transaction(Transaction {
        amount: Mutez(0),
        destination: Contract(destination),
        parameters: Some(Parameters {
            entrypoint: Entrypoint::try_new(entrypoint).expect("entrypoint"),
            value: lazy(&data(argument)),
        }),
    })
}

fn transfer_ticket(
    ticketer: Destination,
    ty: &str,
    contents: &str,
    amount: u64,
    destination: Destination,
    entrypoint: &str,
) -> ManagerKind<'static> {
    ManagerKind::TransferTicket(TransferTicket {
        ticket_contents: lazy(&data(contents)),
        ticket_ty: lazy(&data(ty)),
        ticket_ticketer: Contract(ticketer),
        ticket_amount: TicketAmount(amount.into()),
        destination: Contract(destination),
        entrypoint: SimpleEntrypoint(Entrypoint::try_new(entrypoint).expect("entrypoint")),
    })
}

/// The gas Octez consumed (the recording's `Consumed gas`, milligas), each applied transaction
/// and ticket transfer in order: the same, to the milligas.
fn assert_gas(session: &Session, recorded: &[u64]) {
    assert_eq!(session.gas, recorded);
}

fn lines(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|line| line.to_string()).collect()
}

/// `Create and remove tickets.out`: a contract minting tickets into its storage (+1 for itself,
/// the table's new entry paid with its storage: 39 + 66 bytes), then dropping them all (−1),
/// then minting again (the table's bytes already paid for).
#[test]
fn minted_stored_and_dropped_tickets_match_octez() {
    if kestrel_testdata::require("michelson/mini_scenarios", "tickets").is_none() {
        return;
    }
    let mut session = Session::new();
    let origination = originate("add_clear_tickets_015.tz", 200_000_000, "{}");
    let facts = session.run(0, (443, 1, 711, 418), origination);
    assert_eq!(
        facts,
        lines(&[
            "applied",
            "storage size 141",
            "paid 141",
            "burn 35250",
            "burn 64250"
        ])
    );
    let contract = session.contract(0);
    let me = contract.to_b58check();
    let ticket = |content: &str, change: &str| {
        [
            format!("ticket {me} string \"{content}\""),
            format!("  {me} {change}"),
        ]
    };
    let add = |content: &str| call(contract, "add", &format!("Pair 1 \"{content}\""));
    let facts = session.run(1, (453, 1, 1853, 125), add("A"));
    let mut expected = lines(&["applied", "storage size 180", "paid 105", "burn 26250"]);
    expected.extend(ticket("A", "+1"));
    assert_eq!(facts, expected);
    let printed = format!(
        "      Ticket updates:\n        Ticketer: {me}\n        Content type: string\n        Content: \"A\"\n        Account updates:\n          {me} ... +1\n"
    );
    assert!(session.rendered.ends_with(&printed), "{}", session.rendered);
    assert_eq!(session.ticket_balance(&contract, "A", &contract), 1);

    let facts = session.run(1, (466, 2, 2043, 0), call(contract, "clear", "Unit"));
    let mut expected = lines(&["applied", "storage size 141"]);
    expected.extend(ticket("A", "-1"));
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&contract, "A", &contract), 0);

    let facts = session.run(1, (453, 3, 1853, 0), add("B"));
    let mut expected = lines(&["applied", "storage size 180"]);
    expected.extend(ticket("B", "+1"));
    assert_eq!(facts, expected);

    let facts = session.run(1, (521, 4, 2535, 125), add("C"));
    let mut expected = lines(&["applied", "storage size 219", "paid 105", "burn 26250"]);
    expected.extend(ticket("C", "+1"));
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&contract, "B", &contract), 1);
    assert_eq!(session.ticket_balance(&contract, "C", &contract), 1);
    assert_gas(&session, &[1_753_216, 1_942_889, 1_753_216, 2_435_226]);
}

/// `Send tickets between originated contracts and implicit accounts.out`, then the failures of
/// `Overdrafting ticket from implicit accounts must be rejected.out` and `Sending ticket of
/// wrong type from implicit accounts must be rejected.out` (the same first origination, so the
/// same ticketer).
#[test]
fn tickets_sent_between_contracts_and_accounts_match_octez() {
    if kestrel_testdata::require("michelson/mini_scenarios", "tickets").is_none() {
        return;
    }
    let mut session = Session::new();
    session.run(
        0,
        (457, 1, 715, 435),
        originate("tickets_send_016.tz", 0, "Unit"),
    );
    session.run(
        0,
        (494, 2, 721, 471),
        originate("tickets_bag_016.tz", 0, "{}"),
    );
    session.run(
        0,
        (346, 3, 680, 328),
        originate("tickets_blackhole_016.tz", 0, "Unit"),
    );
    let (sender, bag, blackhole) = (
        session.contract(0),
        session.contract(1),
        session.contract(2),
    );
    let (b1, b2) = (implicit(0), implicit(1));
    let ticket_line = format!("ticket {} string \"Ticket\"", sender.to_b58check());
    let update =
        |account: &Destination, change: &str| format!("  {} {change}", account.to_b58check());
    // The recording shows the ticketer's bytes (`0x01fca241…00`); the mockup's origination
    // addresses are not reproduced (its branch is not the genesis block's), so the ticket shows
    // this session's contract, and the balance keys in the errors are this ticketer's (the
    // keys of Octez's ticketer are checked in `apply::ticket`'s tests).
    let sender_bytes = hex::encode(sender.to_bytes());
    let parameter =
        |amount: u32| format!("parameter (Pair 0x{sender_bytes} (Pair \"Ticket\" {amount}))");
    let key = |ty: &str, content: &str, owner: &Destination| {
        let key =
            kestrel_protocol::apply::ticket_balance_key(&sender, &data(ty), &data(content), owner);
        kestrel_crypto::ScriptExprHash::new(key).to_b58check()
    };

    // The contract mints 3 tickets and sends them to bootstrap1.
    let argument = format!("Pair \"{}\" 3", b1.to_b58check());
    let facts = session.run(0, (694, 4, 3960, 86), call(sender, "default", &argument));
    let expected = vec![
        "applied".to_string(),
        "storage size 158".into(),
        "paid 66".into(),
        "burn 16500".into(),
        "internal".into(),
        parameter(3),
        "applied".into(),
        ticket_line.clone(),
        update(&b1, "+3"),
    ];
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b1), 3);

    // bootstrap1 gives 2 to bootstrap2.
    let give = transfer_ticket(sender, "string", "\"Ticket\"", 2, b2, "default");
    let facts = session.run(0, (441, 5, 1396, 86), give);
    let expected = vec![
        "applied".to_string(),
        "paid 66".into(),
        ticket_line.clone(),
        update(&b1, "-2"),
        update(&b2, "+2"),
        "burn 16500".into(),
    ];
    assert_eq!(facts, expected);
    let (b1_text, b2_text, ticketer) = (b1.to_b58check(), b2.to_b58check(), sender.to_b58check());
    let printed = format!(
        "    Transfer tickets:
      Ticket content: \"Ticket\"
      Ticket content type: string
      Ticket ticketer: {ticketer}
      Ticket amount: 2
      Destination: {b2_text}
      From: {b1_text}
      This tickets transfer was successfully applied
      Paid storage size diff: 66 bytes
      Ticket updates:
        Ticketer: {ticketer}
        Content type: string
        Content: \"Ticket\"
        Account updates:
          {b1_text} ... -2
          {b2_text} ... +2
      Consumed gas: "
    );
    assert!(session.rendered.contains(&printed), "{}", session.rendered);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b1), 1);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b2), 2);

    // bootstrap2 sends 1 to the bag's `save`, which stores it.
    let save = transfer_ticket(sender, "string", "\"Ticket\"", 1, bag, "save");
    let facts = session.run(1, (630, 1, 3308, 130), save);
    let expected = vec![
        "applied".to_string(),
        "paid 66".into(),
        ticket_line.clone(),
        update(&b2, "-1"),
        "burn 16500".into(),
        "internal".into(),
        parameter(1),
        "applied".into(),
        "storage size 238".into(),
        "paid 44".into(),
        "burn 11000".into(),
        ticket_line.clone(),
        update(&bag, "+1"),
    ];
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b2), 1);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &bag), 1);

    // The bag sends its ticket to the blackhole, which drops it.
    let send = call(bag, "send", &format!("\"{}\"", blackhole.to_b58check()));
    let facts = session.run(0, (781, 6, 4819, 0), send);
    let expected = vec![
        "applied".to_string(),
        "storage size 194".into(),
        ticket_line.clone(),
        update(&bag, "-1"),
        "internal".into(),
        parameter(1),
        "applied".into(),
        "storage size 51".into(),
    ];
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &bag), 0);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &blackhole), 0);

    // bootstrap1 holds 1: sending 2 fails, as does sending a ticket it never had.
    let overdraft = transfer_ticket(sender, "string", "\"Ticket\"", 2, b2, "default");
    let facts = session.apply(0, (0, 7, 1_040_000, 60_000), overdraft, Mode::Simulate);
    let negative = |key: &str, balance: &str| {
        format!(
            "error proto.025-PsUshuai.Negative_ticket_balance {{\"key\": String(\"{key}\"), \"balance\": String(\"{balance}\")}}"
        )
    };
    let expected = vec![
        "failed".to_string(),
        negative(&key("string", "\"Ticket\"", &b1), "-1"),
    ];
    assert_eq!(facts, expected);
    let wrong_type = transfer_ticket(sender, "nat", "0", 2, b2, "default");
    let facts = session.apply(0, (0, 7, 1_040_000, 60_000), wrong_type, Mode::Simulate);
    let expected = vec!["failed".to_string(), negative(&key("nat", "0", &b1), "-2")];
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b1), 1);
    // An implicit account cannot write a ticket in an argument (`allow_forged_tickets:false`).
    let forged = format!("Pair \"{}\" \"Ticket\" 5", sender.to_b58check());
    let facts = session.apply(
        0,
        (0, 7, 1_040_000, 60_000),
        call(bag, "save", &forged),
        Mode::Simulate,
    );
    let expected = [
        "failed",
        "error proto.025-PsUshuai.michelson_v1.bad_contract_parameter",
        "error proto.025-PsUshuai.michelson_v1.invalid_constant",
        "error proto.025-PsUshuai.michelson_v1.unexpected_forged_value",
    ];
    assert_eq!(facts, lines(&expected));
    assert_eq!(session.ticket_balance(&sender, "Ticket", &bag), 0);
    assert_gas(
        &session,
        &[
            1_759_817, 2_100_398, 1_295_089, 1_296_552, 1_911_889, 2_865_333, 1_854_668,
        ],
    );
}

/// `Send tickets in bigmap.out`: a contract mints 100 tickets into a fresh big map and sends it
/// (a temporary big map) to a contract that stores it in place of its own. The sender's
/// operation carries the tickets (the receiver's balance +100, its table entry paid by the
/// sender: 67 bytes); the receiver's storage gains them by the copy of the temporary big map
/// (`ticket_lazy_storage_diff.ml`), which its receipt shows (+100), while its balance is
/// unchanged (the argument brought them).
#[test]
fn tickets_sent_in_a_big_map_match_octez() {
    if kestrel_testdata::require("michelson/mini_scenarios", "tickets").is_none() {
        return;
    }
    let mut session = Session::new();
    let receiver = originate("receive_tickets_in_big_map.tz", 200_000_000, "{}");
    let facts = session.run(0, (352, 1, 683, 360), receiver);
    assert_eq!(
        facts,
        lines(&[
            "applied",
            "storage size 83",
            "paid 83",
            "burn 20750",
            "burn 64250"
        ])
    );
    let sender = originate("send_tickets_in_big_map_015.tz", 200_000_000, "Unit");
    let facts = session.run(0, (628, 2, 775, 597), sender);
    assert_eq!(
        facts,
        lines(&[
            "applied",
            "storage size 320",
            "paid 320",
            "burn 80000",
            "burn 64250"
        ])
    );
    let (receiver, sender) = (session.contract(0), session.contract(1));
    let argument = format!("\"{}\"", receiver.to_b58check());
    let facts = session.run(
        1,
        (10_190, 1, 98_938, 10_787),
        call(sender, "default", &argument),
    );
    let expected = vec![
        "applied".to_string(),
        "storage size 320".into(),
        "paid 67".into(),
        "burn 16750".into(),
        "internal".into(),
        "parameter (-1)".into(),
        "applied".into(),
        "storage size 10783".into(),
        "paid 10700".into(),
        "burn 2675000".into(),
        format!("ticket {} string \"BLUE\"", sender.to_b58check()),
        format!("  {} +100", receiver.to_b58check()),
    ];
    assert_eq!(facts, expected);
    assert_eq!(session.ticket_balance(&sender, "BLUE", &receiver), 100);
    assert_gas(&session, &[49_911_085, 48_927_805]);
}

/// `Sending ticket from contract storage to implicit accounts.out`: bootstrap1 gets a ticket
/// from the minting contract, stores it in a bag (`transfer_ticket` to its `save`), and the bag
/// sends it from its storage to bootstrap2.
#[test]
fn a_stored_ticket_sent_to_an_implicit_account_matches_octez() {
    if kestrel_testdata::require("michelson/mini_scenarios", "tickets").is_none() {
        return;
    }
    let mut session = Session::new();
    let facts = session.run(
        0,
        (457, 1, 715, 435),
        originate("tickets_send_016.tz", 0, "Unit"),
    );
    assert_eq!(
        facts[..3],
        lines(&["applied", "storage size 158", "paid 158"])
    );
    let facts = session.run(
        0,
        (482, 2, 720, 460),
        originate("tickets_bag_implicit_016.tz", 0, "{}"),
    );
    assert_eq!(
        facts[..3],
        lines(&["applied", "storage size 183", "paid 183"])
    );
    let (sender, bag) = (session.contract(0), session.contract(1));
    let (b1, b2) = (implicit(0), implicit(1));
    let argument = format!("Pair \"{}\" 1", b1.to_b58check());
    session.run(0, (694, 3, 3960, 86), call(sender, "default", &argument));
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b1), 1);

    let save = transfer_ticket(sender, "string", "\"Ticket\"", 1, bag, "save");
    let facts = session.run(0, (626, 4, 3278, 64), save);
    let ticket_line = format!("ticket {} string \"Ticket\"", sender.to_b58check());
    let update =
        |account: &Destination, change: &str| format!("  {} {change}", account.to_b58check());
    assert_eq!(
        facts,
        vec![
            "applied".to_string(),
            "paid 0".into(),
            ticket_line.clone(),
            update(&b1, "-1"),
            "internal".into(),
            format!(
                "parameter (Pair 0x{} (Pair \"Ticket\" 1))",
                hex::encode(sender.to_bytes())
            ),
            "applied".into(),
            "storage size 227".into(),
            "paid 44".into(),
            "burn 11000".into(),
            ticket_line.clone(),
            update(&bag, "+1"),
        ]
    );
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b1), 0);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &bag), 1);

    let send = call(bag, "send", &format!("\"{}\"", b2.to_b58check()));
    let facts = session.run(0, (761, 5, 4612, 0), send);
    assert_eq!(
        facts[..4],
        [
            "applied".to_string(),
            "storage size 183".into(),
            ticket_line.clone(),
            update(&bag, "-1"),
        ]
    );
    assert_eq!(session.ticket_balance(&sender, "Ticket", &b2), 1);
    assert_eq!(session.ticket_balance(&sender, "Ticket", &bag), 0);
    assert_gas(
        &session,
        &[
            1_759_817, 2_100_398, 1_266_515, 1_911_382, 2_412_377, 2_100_398,
        ],
    );
}
