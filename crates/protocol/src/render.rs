//! octez-client's text for operations with their metadata ("This sequence of operations was
//! run:"), as `src/proto_025_PsUshuai/lib_client/operation_result.ml` prints it: the manager
//! header (source, fee, counter, limits, fee balance updates), the operation (transaction,
//! origination, reveal, delegation), its status and result (originated contracts, updated
//! storage and big maps, storage sizes, consumed gas, balance updates with the dotted
//! alignment), and internal operations with theirs.
//!
//! Octez lays the text out with `Format` boxes; the boxes used there are vertical, so this module
//! writes lines at explicit indentations. Micheline is printed with `kestrel-micheline`'s
//! Octez layout. Kinds other than the four above print their results (gas, sizes, balance
//! updates) under the kind's name without their specific fields.

use kestrel_micheline::{binary, print, Node};

use crate::contents::{Contents, ManagerKind, ManagerOperation};
use crate::field::{Milligas, Z64};
use crate::internal::{InternalKind, InternalOperation, MichelineExpr};
use crate::receipt::balance::{Balance, BalanceUpdate, FrozenStaker, UnstakedStaker, UpdateOrigin};
use crate::receipt::contents::{ContentsAndMetadata, ContentsMetadata, ManagerMetadata};
use crate::receipt::internal::InternalOperationResult;
use crate::receipt::lazy_storage::{LazyStorageDiff, LazyStorageItem, StorageDiff};
use crate::receipt::manager::{ManagerResult, TransactionOutcome};
use crate::receipt::result::OperationResult;
use crate::receipt::ticket::TicketReceiptItem;
use crate::script::{LazyExpr, Parameters, Script};

/// The tez symbol octez-client prints (`ꜩ`).
pub const TEZ_SYMBOL: &str = "\u{a729}";

/// Lines at indentations.
struct Text {
    out: String,
}

impl Text {
    fn line(&mut self, indent: usize, text: &str) {
        // Multi-line text (Micheline) keeps its own layout, shifted by the indentation.
        for part in text.split('\n') {
            self.out.extend(std::iter::repeat_n(' ', indent));
            self.out.push_str(part);
            self.out.push('\n');
        }
    }
}

/// Renders operation contents with their metadata as octez-client prints them after injecting,
/// from "This sequence of operations was run:" to the last line (each line ends with `\n`).
pub fn render_receipt(contents: &[ContentsAndMetadata<'_>]) -> String {
    render_with_heading("This sequence of operations was run:", contents)
}

/// Renders a simulation that failed as octez-client prints it before giving up on an injection
/// ("This simulation failed:" and the simulated receipt).
pub fn render_failed_simulation(contents: &[ContentsAndMetadata<'_>]) -> String {
    render_with_heading("This simulation failed:", contents)
}

fn render_with_heading(heading: &str, contents: &[ContentsAndMetadata<'_>]) -> String {
    let mut text = Text { out: String::new() };
    text.line(0, heading);
    for item in contents {
        match (&item.contents, &item.metadata) {
            (Contents::Manager(operation), ContentsMetadata::Manager(metadata)) => {
                manager(&mut text, 2, operation, metadata)
            }
            (other, _) => text.line(2, &format!("{}: (not rendered)", other.kind_name())),
        }
    }
    text.out
}

/// Formats mutez as `Tez_repr.pp`: the integer part, then the decimals without trailing zeros.
pub fn format_tez(mutez: u64) -> String {
    let units = mutez / 1_000_000;
    let fraction = mutez % 1_000_000;
    if fraction == 0 {
        return units.to_string();
    }
    let decimals = format!("{fraction:06}");
    format!("{units}.{}", decimals.trim_end_matches('0'))
}

/// Formats milligas as `Gas.Arith.pp`: units, then three decimals when not whole.
pub fn format_gas(gas: Milligas) -> String {
    let units = gas.0 / 1000;
    let fraction = gas.0 % 1000;
    if fraction == 0 {
        units.to_string()
    } else {
        format!("{units}.{fraction:03}")
    }
}

fn expr_text(bytes: &[u8], wrapped: bool) -> String {
    match binary::decode(bytes) {
        Ok(node) if wrapped => print::to_text_indented_wrapped(&node),
        Ok(node) => print::to_text_indented(&node),
        Err(_) => "<ill-serialized micheline expression>".to_owned(),
    }
}

fn manager(
    text: &mut Text,
    indent: usize,
    operation: &ManagerOperation<'_>,
    metadata: &ManagerMetadata<'_>,
) {
    let header = &operation.header;
    text.line(indent, "Manager signed operations:");
    let inner = indent + 2;
    text.line(inner, &format!("From: {}", header.source.to_b58check()));
    text.line(
        inner,
        &format!("Fee to the baker: {TEZ_SYMBOL}{}", format_tez(header.fee.0)),
    );
    text.line(inner, &format!("Expected counter: {}", header.counter.0));
    text.line(inner, &format!("Gas limit: {}", header.gas_limit.0));
    text.line(
        inner,
        &format!("Storage limit: {} bytes", header.storage_limit.0),
    );
    balance_updates(text, inner, &metadata.balance_updates);
    let source = header.source.to_b58check();
    let body = inner + 2;
    let result_indent = match &operation.operation {
        ManagerKind::Transaction(transaction) => {
            text.line(inner, "Transaction:");
            let destination = transaction.destination.0.to_b58check();
            transfer(
                text,
                body,
                transaction.amount.0,
                &source,
                &destination,
                &transaction.parameters,
            );
            body
        }
        ManagerKind::Origination(origination) => {
            text.line(inner, "Origination:");
            // The manager case leaves the script's box open: what follows is indented with it.
            let delegate = origination.delegate.map(|d| d.to_b58check());
            let new = NewContract {
                source: &source,
                credit: origination.balance.0,
                script: &origination.script,
            };
            originate(text, body, &new, body + 2, delegate);
            body + 2
        }
        ManagerKind::Reveal(reveal) => {
            text.line(inner, "Revelation of manager public key:");
            text.line(body, &format!("Contract: {source}"));
            text.line(body, &format!("Key: {}", reveal.public_key.to_b58check()));
            if let Some(proof) = &reveal.proof {
                let proof = proof.0 .0.to_b58check();
                text.line(body, &format!("Proof of possession: {proof}"));
            }
            body
        }
        ManagerKind::Delegation(delegation) => {
            text.line(inner, "Delegation:");
            delegate(text, body, &source, delegation.delegate.as_ref());
            body
        }
        ManagerKind::TransferTicket(transfer) => {
            text.line(inner, "Transfer tickets:");
            let expr = |lazy: &LazyExpr<'_>| expr_text(lazy.bytes(), false);
            text.line(
                body,
                &format!("Ticket content: {}", expr(&transfer.ticket_contents)),
            );
            text.line(
                body,
                &format!("Ticket content type: {}", expr(&transfer.ticket_ty)),
            );
            let ticketer = transfer.ticket_ticketer.0.to_b58check();
            text.line(body, &format!("Ticket ticketer: {ticketer}"));
            text.line(
                body,
                &format!("Ticket amount: {}", transfer.ticket_amount.0),
            );
            let destination = transfer.destination.0.to_b58check();
            text.line(body, &format!("Destination: {destination}"));
            let entrypoint = transfer.entrypoint.0.as_str();
            if entrypoint != "default" {
                text.line(body, &format!("Entrypoint: {entrypoint}"));
            }
            text.line(body, &format!("From: {source}"));
            body
        }
        ManagerKind::IncreasePaidStorage(increase) => {
            text.line(inner, "Increase paid storage:");
            text.line(
                body,
                &format!("Increased size: {} bytes", increase.amount.0),
            );
            text.line(body, &format!("From: {source}"));
            text.line(body, &format!("To: {}", increase.destination.to_b58check()));
            body
        }
        other => {
            text.line(inner, &format!("{}:", other.kind_name()));
            body
        }
    };
    result(text, result_indent, &metadata.operation_result);
    internal_results(text, result_indent, &metadata.internal_operation_results);
}

fn transfer(
    text: &mut Text,
    indent: usize,
    amount: u64,
    from: &str,
    to: &str,
    parameters: &Option<Parameters<'_>>,
) {
    text.line(
        indent,
        &format!("Amount: {TEZ_SYMBOL}{}", format_tez(amount)),
    );
    text.line(indent, &format!("From: {from}"));
    text.line(indent, &format!("To: {to}"));
    if let Some(parameters) = parameters {
        let (entrypoint, value) = (parameters.entrypoint.as_str(), parameters.value.bytes());
        if entrypoint != "default" {
            text.line(indent, &format!("Entrypoint: {entrypoint}"));
        }
        let is_unit = matches!(binary::decode(value), Ok(node) if is_unit(&node));
        if !is_unit {
            text.line(
                indent,
                &format!("Parameter: {}", shift(&expr_text(value, true), 11)),
            );
        }
    }
}

fn is_unit(node: &Node) -> bool {
    print::to_text_single_line(node) == "Unit"
}

/// Shifts the continuation lines of `text` right by `columns` (Micheline printed in a box
/// opened after a label of that width).
fn shift(text: &str, columns: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(columns)))
}

/// The margin of octez-client's formatter (`Format`'s default).
const FORMAT_MARGIN_COLUMNS: usize = 78;

/// `@[<hv 2>label:@ expr@]`: on one line when it fits the margin, else the expression on the
/// next lines, two columns in.
fn labelled_box(text: &mut Text, indent: usize, label: &str, expr: &str) {
    let width = indent + label.len() + 1 + expr.len();
    if expr.contains('\n') || width > FORMAT_MARGIN_COLUMNS {
        text.line(indent, label);
        text.line(indent + 2, expr);
    } else {
        text.line(indent, &format!("{label} {expr}"));
    }
}

/// A contract's code as octez-client prints it (`Michelson_v1_printer.unparse_toplevel`):
/// macros restored (`unexpand_rec`), indented.
pub fn script_text(code: &Node) -> String {
    print::to_text_indented(&kestrel_michelson::unexpand_macros(code))
}

/// A script and its initial storage as written.
fn script(text: &mut Text, indent: usize, code: &LazyExpr<'_>, storage: &LazyExpr<'_>) {
    text.line(indent, "Script:");
    let code_text = match binary::decode(code.bytes()) {
        Ok(node) => script_text(&node),
        Err(_) => expr_text(code.bytes(), false),
    };
    text.line(indent + 2, &code_text);
    labelled_box(
        text,
        indent + 2,
        "Initial storage:",
        &expr_text(storage.bytes(), true),
    );
}

/// What an origination, external or internal, shows of the new contract.
struct NewContract<'s, 'a> {
    source: &'s str,
    credit: u64,
    script: &'s Script<'a>,
}

/// An origination's sender, credit, script and delegate (the delegate line at
/// `delegate_indent`).
fn originate(
    text: &mut Text,
    indent: usize,
    new: &NewContract<'_, '_>,
    delegate_indent: usize,
    delegate: Option<String>,
) {
    text.line(indent, &format!("From: {}", new.source));
    text.line(
        indent,
        &format!("Credit: {TEZ_SYMBOL}{}", format_tez(new.credit)),
    );
    script(text, indent, &new.script.code, &new.script.storage);
    delegate_line(text, delegate_indent, delegate);
}

/// A delegation's contract and new delegate.
fn delegate(
    text: &mut Text,
    indent: usize,
    source: &str,
    to: Option<&kestrel_crypto::PublicKeyHash>,
) {
    text.line(indent, &format!("Contract: {source}"));
    let to = to.map_or("nobody".to_owned(), |d| d.to_b58check());
    text.line(indent, &format!("To: {to}"));
}

fn delegate_line(text: &mut Text, indent: usize, delegate: Option<String>) {
    match delegate {
        None => text.line(indent, "No delegate for this contract"),
        Some(delegate) => text.line(indent, &format!("Delegate: {delegate}")),
    }
}

/// The status line and the result's fields.
fn result(text: &mut Text, indent: usize, result: &ManagerResult<'_>) {
    let name = operation_name(result);
    match result.status() {
        "skipped" => text.line(indent, "This operation was skipped."),
        "failed" => text.line(indent, "This operation FAILED."),
        "backtracked" => text.line(
            indent,
            &format!("This {name} was BACKTRACKED, its expected effects were NOT applied."),
        ),
        _ => text.line(indent, &format!("This {name} was successfully applied")),
    }
    result_fields(text, indent, result);
}

fn operation_name(result: &ManagerResult<'_>) -> &'static str {
    match result {
        ManagerResult::Reveal(_) => "revelation",
        ManagerResult::Transaction(_) => "transaction",
        ManagerResult::Origination(_) => "origination",
        ManagerResult::Delegation(_) => "delegation",
        ManagerResult::RegisterGlobalConstant(_) => "global constant registration",
        ManagerResult::SetDepositsLimit(_) => "deposits limit modification",
        ManagerResult::IncreasePaidStorage(_) => "paid storage increase",
        ManagerResult::UpdateKey(result) => match result.result() {
            Some(update) if !update.consensus => "companion key update",
            _ => "consensus key update",
        },
        ManagerResult::SmartRollupOriginate(_) => "smart rollup origination",
        ManagerResult::SmartRollupAddMessages(_) => "smart rollup messages submission",
        ManagerResult::SmartRollupCement(_) => "smart rollup commitment cementing",
        ManagerResult::SmartRollupPublish(_) => "smart rollup commitment publishing",
        ManagerResult::SmartRollupExecuteOutboxMessage(_) => "smart output message execution",
        ManagerResult::SmartRollupRecoverBond(_) => "smart rollup bond retrieval",
        ManagerResult::DalPublishCommitment(_) => "data availability slot header publishing",
        ManagerResult::ZkRollupOrigination(_) => "epoxy originate",
        ManagerResult::ZkRollupPublish(_) => "epoxy publish",
        ManagerResult::ZkRollupUpdate(_) => "epoxy update",
        ManagerResult::TransferTicket(_) => "tickets transfer",
        ManagerResult::Event(_) => "event",
        _ => "operation",
    }
}

fn result_fields(text: &mut Text, indent: usize, result: &ManagerResult<'_>) {
    match result {
        ManagerResult::Transaction(result) => {
            if let Some(TransactionOutcome::Contract(result)) = result.result() {
                originated(text, indent, &result.originated_contracts);
                if let Some(storage) = &result.storage {
                    labelled_box(
                        text,
                        indent,
                        "Updated storage:",
                        &expr_text(&storage.0, true),
                    );
                }
                lazy_storage(text, indent, result.lazy_storage_diff.as_ref());
                sizes(
                    text,
                    indent,
                    Some(result.storage_size),
                    result.paid_storage_size_diff,
                );
                gas(text, indent, result.consumed_milligas);
                balance_updates(text, indent, &result.balance_updates);
                ticket_updates(text, indent, &result.ticket_updates);
            } else if let Some(TransactionOutcome::SmartRollup(result)) = result.result() {
                gas(text, indent, result.consumed_milligas);
            }
        }
        ManagerResult::Origination(result) => {
            if let Some(result) = result.result() {
                originated(text, indent, &result.originated_contracts);
                if result.storage_size.0 != 0 {
                    text.line(
                        indent,
                        &format!("Storage size: {} bytes", result.storage_size.0),
                    );
                }
                lazy_storage(text, indent, result.lazy_storage_diff.as_ref());
                sizes(text, indent, None, result.paid_storage_size_diff);
                gas(text, indent, result.consumed_milligas);
                balance_updates(text, indent, &result.balance_updates);
            }
        }
        ManagerResult::Delegation(result) => {
            if let Some(result) = result.result() {
                gas(text, indent, result.consumed_milligas);
                balance_updates(text, indent, &result.balance_updates);
            }
        }
        ManagerResult::Reveal(result)
        | ManagerResult::SetDepositsLimit(result)
        | ManagerResult::Event(result) => {
            gas_of(text, indent, result);
        }
        ManagerResult::IncreasePaidStorage(result) => {
            if let Some(result) = result.result() {
                balance_updates(text, indent, &result.balance_updates);
                gas(text, indent, result.consumed_milligas);
            }
        }
        ManagerResult::TransferTicket(result) => {
            if let Some(result) = result.result() {
                sizes(text, indent, None, result.paid_storage_size_diff);
                ticket_updates(text, indent, &result.ticket_updates);
                gas(text, indent, result.consumed_milligas);
                balance_updates(text, indent, &result.balance_updates);
            }
        }
        _ => {}
    }
}

fn gas_of(
    text: &mut Text,
    indent: usize,
    result: &OperationResult<crate::receipt::manager::GasResult>,
) {
    if let Some(result) = result.result() {
        gas(text, indent, result.consumed_milligas);
    }
}

fn originated(text: &mut Text, indent: usize, contracts: &[kestrel_crypto::ContractHash]) {
    if contracts.is_empty() {
        return;
    }
    text.line(indent, "Originated contracts:");
    for contract in contracts {
        text.line(indent + 2, &contract.to_b58check());
    }
}

fn sizes(text: &mut Text, indent: usize, storage_size: Option<Z64>, paid: Z64) {
    if let Some(size) = storage_size.filter(|size| size.0 != 0) {
        text.line(indent, &format!("Storage size: {} bytes", size.0));
    }
    if paid.0 != 0 {
        text.line(indent, &format!("Paid storage size diff: {} bytes", paid.0));
    }
}

fn gas(text: &mut Text, indent: usize, consumed: Milligas) {
    text.line(indent, &format!("Consumed gas: {}", format_gas(consumed)));
}

/// A big map's name in `print_big_map_diff`: `map(id)`, or `temp(-id)` for a temporary one.
fn big_map_name(id: Z64) -> String {
    if id.0 < 0 {
        format!("temp({})", -id.0)
    } else {
        format!("map({})", id.0)
    }
}

fn lazy_storage(text: &mut Text, indent: usize, diff: Option<&LazyStorageDiff<'_>>) {
    let Some(diff) = diff else { return };
    let mut lines = Vec::new();
    for item in &diff.0 {
        let LazyStorageItem::BigMap { id, diff } = item else {
            continue;
        };
        let name = big_map_name(*id);
        let updates = match diff {
            StorageDiff::Remove => {
                lines.push(format!("Clear {name}"));
                continue;
            }
            StorageDiff::Update(updates) => updates,
            StorageDiff::Copy { source, updates } => {
                lines.push(format!("Copy {} to {name}", big_map_name(*source)));
                updates
            }
            StorageDiff::Alloc { updates, alloc } => {
                lines.push(format!(
                    "New {name} of type (big_map {} {})",
                    expr_text(&alloc.key_type.0, true),
                    expr_text(&alloc.value_type.0, true)
                ));
                updates
            }
        };
        // `Legacy_big_map_diff.of_lazy_storage_diff` lists an item's updates in reverse.
        for update in updates.iter().rev() {
            let key = expr_text(&update.key.0, true);
            match &update.value {
                Some(value) => lines.push(format!(
                    "Set {name}[{key}] to {}",
                    expr_text(&value.0, true)
                )),
                None => lines.push(format!("Unset {name}[{key}]")),
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    text.line(indent, "Updated big_maps:");
    for line in lines {
        text.line(indent + 2, &line);
    }
}

fn internal_results(text: &mut Text, indent: usize, results: &[InternalOperationResult<'_>]) {
    if results.is_empty() {
        return;
    }
    text.line(indent, "Internal operations:");
    let indent = indent + 2;
    for item in results {
        internal(text, indent, &item.operation);
        result(text, indent + 2, &item.result);
    }
}

fn internal(text: &mut Text, indent: usize, operation: &InternalOperation<'_>) {
    let source = operation.source.0.to_b58check();
    let body = indent + 2;
    match &operation.operation {
        InternalKind::Transaction(transaction) => {
            text.line(indent, "Internal Transaction:");
            let destination = transaction.destination.0.to_b58check();
            transfer(
                text,
                body,
                transaction.amount.0,
                &source,
                &destination,
                &transaction.parameters,
            );
        }
        InternalKind::Origination(origination) => {
            text.line(indent, "Internal Origination:");
            let delegate = origination.delegate.map(|d| d.to_b58check());
            let new = NewContract {
                source: &source,
                credit: origination.balance.0,
                script: &origination.script,
            };
            originate(text, body, &new, body, delegate);
        }
        InternalKind::Delegation(delegation) => {
            text.line(indent, "Internal Delegation:");
            delegate(text, body, &source, delegation.delegate.as_ref());
        }
        InternalKind::Event(event) => {
            text.line(indent, "Internal Event:");
            text.line(body, &format!("From: {source}"));
            text.line(body, &format!("Type: {}", expr_text(&event.ty.0, false)));
            if let Some(tag) = &event.tag {
                if tag.as_str() != "default" {
                    text.line(body, &format!("Tag: {}", tag.as_str()));
                }
            }
            let payload = event
                .payload
                .as_ref()
                .map_or("Unit".to_owned(), |p: &MichelineExpr<'_>| {
                    expr_text(&p.0, false)
                });
            text.line(body, &format!("Payload: {payload}"));
        }
    }
}

/// The label of a balance in `pp_balance_updates`.
fn balance_label(balance: &Balance) -> String {
    let staker = |staker: &FrozenStaker| match staker {
        FrozenStaker::Baker(baker) => baker.to_b58check(),
        FrozenStaker::BakerEdge(baker) => format!("baker edge {}", baker.to_b58check()),
        FrozenStaker::Single { contract, delegate } => {
            format!(
                "{} delegated to {}",
                contract.0.to_b58check(),
                delegate.to_b58check()
            )
        }
        FrozenStaker::Shared { delegate } => {
            format!("shared between delegators of {}", delegate.to_b58check())
        }
    };
    match balance {
        Balance::Contract(contract) => contract.0.to_b58check(),
        Balance::BlockFees => "payload fees(the block proposer)".to_owned(),
        Balance::Deposits(frozen) => format!("deposits({})", staker(frozen)),
        Balance::UnstakedDeposits { staker, cycle } => {
            let who = match staker {
                UnstakedStaker::Single { contract, delegate } => {
                    format!(
                        "{} delegated to {}",
                        contract.0.to_b58check(),
                        delegate.to_b58check()
                    )
                }
                UnstakedStaker::Shared { delegate } => {
                    format!("shared between delegators of {}", delegate.to_b58check())
                }
            };
            format!("unstaked_deposits({who},{cycle})")
        }
        Balance::StezDeposits => "clst deposits".to_owned(),
        Balance::StezRedeemedDeposits { staker, cycle } => {
            format!("clst_redeemed_deposits({},{cycle})", staker.0.to_b58check())
        }
        Balance::NonceRevelationRewards => "nonce revelation rewards".to_owned(),
        Balance::AttestingRewards => "attesting rewards".to_owned(),
        Balance::BakingRewards => "baking rewards".to_owned(),
        Balance::BakingBonuses => "baking bonuses".to_owned(),
        Balance::DalAttestingRewards => "DAL attesting rewards".to_owned(),
        Balance::StorageFees => "storage fees".to_owned(),
        Balance::DoubleSigningPunishments => "double signing punishments".to_owned(),
        Balance::LostAttestingRewards {
            delegate,
            participation,
            revelation,
        } => {
            let reason = match (participation, revelation) {
                (false, false) => "",
                (false, true) => ",revelation",
                (true, false) => ",participation",
                (true, true) => ",participation,revelation",
            };
            format!("lost attesting rewards({}{reason})", delegate.to_b58check())
        }
        Balance::LostDalAttestingRewards(delegate) => {
            format!("lost DAL attesting rewards({})", delegate.to_b58check())
        }
        Balance::LiquidityBakingSubsidies => "liquidity baking subsidies".to_owned(),
        Balance::Burned => "burned".to_owned(),
        Balance::Commitments(committer) => format!("commitment({})", committer.to_b58check()),
        Balance::Bootstrap => "bootstrap".to_owned(),
        Balance::Invoice => "invoices".to_owned(),
        Balance::InitialCommitments => "initial commitments".to_owned(),
        Balance::Minted => "minted".to_owned(),
        Balance::FrozenBonds {
            contract,
            smart_rollup,
        } => {
            format!(
                "Frozen_bonds({},{})",
                contract.0.to_b58check(),
                smart_rollup.to_b58check()
            )
        }
        Balance::SmartRollupRefutationPunishments => {
            "smart rollup refutation punishments".to_owned()
        }
        Balance::SmartRollupRefutationRewards => "smart rollup refutation rewards".to_owned(),
        Balance::StakingDelegatorNumerator(delegator) => {
            format!("staking delegator numerator({})", delegator.0.to_b58check())
        }
        Balance::StakingDelegateDenominator(delegate) => {
            format!("staking delegate denominator({})", delegate.to_b58check())
        }
    }
}

/// `pp_ticket_receipt`: each token, then each account's signed change.
fn ticket_updates(text: &mut Text, indent: usize, items: &[TicketReceiptItem<'_>]) {
    if items.is_empty() {
        return;
    }
    text.line(indent, "Ticket updates:");
    for item in items {
        let token = &item.ticket_token;
        let ticketer = token.ticketer.0.to_b58check();
        text.line(indent + 2, &format!("Ticketer: {ticketer}"));
        let content_type = expr_text(&token.content_type.0, false);
        text.line(indent + 2, &format!("Content type: {content_type}"));
        text.line(
            indent + 2,
            &format!("Content: {}", expr_text(&token.content.0, false)),
        );
        text.line(indent + 2, "Account updates:");
        for update in &item.updates {
            let sign = if update.amount.0 > 0.into() { "+" } else { "" };
            let account = update.account.0.to_b58check();
            text.line(
                indent + 4,
                &format!("{account} ... {sign}{}", update.amount.0),
            );
        }
    }
}

fn balance_updates(text: &mut Text, indent: usize, updates: &[BalanceUpdate]) {
    if updates.is_empty() {
        return;
    }
    let rows: Vec<(String, String)> = updates
        .iter()
        .map(|update| {
            let label = balance_label(&update.balance);
            let label = match update.origin {
                UpdateOrigin::Block => label,
                UpdateOrigin::Migration => format!("migration {label}"),
                UpdateOrigin::Subsidy => format!("subsidy {label}"),
                UpdateOrigin::Simulation => format!("simulation {label}"),
                UpdateOrigin::DelayedOperation(hash) => {
                    format!("delayed operation({}) {label}", hash.to_b58check())
                }
            };
            let sign = if update.change < 0 { '-' } else { '+' };
            let amount = format_tez(update.change.unsigned_abs());
            let symbol = if update.balance.is_pseudotoken() {
                ""
            } else {
                TEZ_SYMBOL
            };
            (label, format!("{sign}{symbol}{amount}"))
        })
        .collect();
    let column = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    text.line(indent, "Balance updates:");
    for (label, change) in rows {
        let dots = ".".repeat(column + 3 - label.len());
        text.line(indent + 2, &format!("{label} {dots} {change}"));
    }
}
