//! `kestrel solana pack <FILE|-> [--workers N] [--json]`: runs the Solana ingest stage
//! (`kestrel-scheduler`) over a file of transactions against an in-memory clock and prints, per
//! block, the transactions scheduled, their compute units, the fees the leader captured, the
//! batches handed to workers and the rejected transactions by reason.
//!
//! Input: one transaction per line in hex, base64 or base58 (blank lines and `#` comments
//! skipped), or a binary stream of packets each preceded by its length as a u16 little-endian
//! (`--binary`, or detected when the input is not text). The clock: each block is one slot; a
//! blockhash is valid for 150 slots from the slot it is first seen in; packets arrive
//! `--packets-per-block` per slot. Workers execute instantly: the scheduler refills them until
//! the block is full or nothing more can run, and the block ends.

use crate::output::{print_json, CommandResult};
use base64::Engine;
use clap::{Args, Subcommand};
use kestrel_scheduler::limits::MAX_PROCESSING_AGE_SLOTS;
use kestrel_scheduler::{BlockhashSource, NoAddressTables, SchedulerConfig, Stage, StageConfig};
use kestrel_txview::{Hash, UnsanitizedTransactionView};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// `kestrel solana` verbs.
#[derive(Subcommand)]
pub enum SolanaCommand {
    /// Run ingest and scheduling over a file of transactions; print per-block results.
    Pack(PackArgs),
}

/// `kestrel solana pack` arguments.
#[derive(Args)]
pub struct PackArgs {
    /// The file, or `-` for standard input.
    input: String,
    /// Execution workers the scheduler fills.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Packets arriving per block (slot).
    #[arg(long, default_value_t = 4_096)]
    packets_per_block: usize,
    /// Read a binary stream of u16-LE-length-prefixed packets.
    #[arg(long)]
    binary: bool,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a `kestrel solana` verb.
pub fn run(command: SolanaCommand) -> CommandResult {
    match command {
        SolanaCommand::Pack(args) => pack(&args),
    }
}

/// A blockhash is valid for 150 slots from the slot it is first seen in.
#[derive(Default)]
struct FirstSeenClock(HashMap<Hash, u64>);

impl BlockhashSource for FirstSeenClock {
    fn last_valid_slot(&mut self, blockhash: &Hash, slot: u64) -> Option<u64> {
        Some(*self.0.entry(*blockhash).or_insert(slot) + MAX_PROCESSING_AGE_SLOTS)
    }

    /// Every blockhash is known here, so no transaction reaches the nonce check.
    fn durable_nonce_last_valid_slot(
        &mut self,
        _: &[u8; 32],
        nonce: &Hash,
        slot: u64,
    ) -> Option<u64> {
        self.last_valid_slot(nonce, slot)
    }
}

/// One line's bytes: hex, then base58 or base64 — whichever gives bytes that frame as a
/// transaction when both decode (base58's alphabet is inside base64's).
fn decode_line(line: &str) -> Option<Vec<u8>> {
    if let Ok(bytes) = hex::decode(line.strip_prefix("0x").unwrap_or(line)) {
        return Some(bytes);
    }
    let base64 = base64::engine::general_purpose::STANDARD.decode(line).ok();
    let base58 = bs58::decode(line).into_vec().ok();
    let frames =
        |bytes: &Vec<u8>| UnsanitizedTransactionView::try_new_unsanitized(&bytes[..]).is_ok();
    match (base58, base64) {
        (Some(base58), Some(base64)) if !frames(&base58) && frames(&base64) => Some(base64),
        (Some(base58), _) => Some(base58),
        (None, base64) => base64,
    }
}

/// The packets of the input; lines that decode in no encoding become empty packets (rejected
/// as malformed, so they are counted).
fn read_packets(raw: &[u8], binary: bool) -> Result<Vec<Vec<u8>>, String> {
    let text = if binary {
        None
    } else {
        std::str::from_utf8(raw).ok()
    };
    match text {
        Some(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| decode_line(line).unwrap_or_default())
            .collect()),
        None => {
            let mut packets = Vec::new();
            let mut rest = raw;
            while !rest.is_empty() {
                let (length, after) = rest
                    .split_first_chunk::<2>()
                    .ok_or("binary stream: truncated length")?;
                let length = usize::from(u16::from_le_bytes(*length));
                if after.len() < length {
                    return Err(format!(
                        "binary stream: packet {} announces {length} bytes, {} remain",
                        packets.len(),
                        after.len()
                    ));
                }
                packets.push(after[..length].to_vec());
                rest = &after[length..];
            }
            Ok(packets)
        }
    }
}

/// What one block did.
#[derive(Default)]
struct BlockReport {
    slot: u64,
    transactions: usize,
    compute_units: u64,
    fees_lamports: u64,
    batches: usize,
    rejected: BTreeMap<&'static str, usize>,
}

fn pack(args: &PackArgs) -> CommandResult {
    if args.workers == 0 || args.packets_per_block == 0 {
        return Err("--workers and --packets-per-block must be at least 1".to_string());
    }
    let raw = crate::input::read_bytes(&args.input).map_err(|error| error.to_string())?;
    let packets = read_packets(&raw, args.binary)?;
    drop(raw);
    let config = StageConfig {
        scheduler: SchedulerConfig {
            workers: args.workers,
            ..SchedulerConfig::default()
        },
        max_ingest_packets: args.packets_per_block,
        ..StageConfig::default()
    };
    let mut stage = Stage::new(config);
    let mut clock = FirstSeenClock::default();
    let mut blocks = Vec::new();
    let mut next = 0;
    let progress = packets.len() >= 100_000 && std::io::stderr().is_terminal();
    loop {
        let mut report = BlockReport {
            slot: stage.slot(),
            ..BlockReport::default()
        };
        let end = (next + args.packets_per_block).min(packets.len());
        let arrivals: Vec<&[u8]> = packets[next..end].iter().map(Vec::as_slice).collect();
        stage.ingest(&arrivals, &NoAddressTables, &mut clock, |_, reason| {
            *report.rejected.entry(reason.kind()).or_default() += 1;
        });
        next = end;
        loop {
            let mut batches = Vec::new();
            let emitted = stage.schedule(
                |batch| batches.push(batch),
                |_| *report.rejected.entry("blockhash_expired").or_default() += 1,
            );
            if emitted == 0 {
                break;
            }
            for batch in &batches {
                for &id in batch.transactions() {
                    let meta = stage.meta(id);
                    report.transactions += 1;
                    report.compute_units += meta.cost;
                    report.fees_lamports += meta.reward;
                }
                stage.complete(batch);
            }
            report.batches += batches.len();
        }
        let queued = stage.scheduler().counts().queued;
        let idle = report.transactions == 0 && report.rejected.is_empty();
        if !idle {
            blocks.push(report);
        }
        if progress {
            eprint!(
                "\r{next}/{} packets, {} blocks",
                packets.len(),
                blocks.len()
            );
        }
        if next == packets.len() && (queued == 0 || idle) {
            break;
        }
        stage.new_block(stage.slot() + 1);
    }
    if progress {
        eprintln!();
    }
    let (evicted, _) = stage.left_unscheduled();
    let total_transactions: usize = blocks.iter().map(|block| block.transactions).sum();
    let mut total_rejected: BTreeMap<&str, usize> = BTreeMap::new();
    for block in &blocks {
        for (kind, count) in &block.rejected {
            *total_rejected.entry(kind).or_default() += count;
        }
    }
    if args.json {
        print_json(&json!({
            "packets": packets.len(),
            "blocks": blocks.iter().map(|block| json!({
                "slot": block.slot,
                "transactions": block.transactions,
                "compute_units": block.compute_units,
                "fees_lamports": block.fees_lamports,
                "batches": block.batches,
                "rejected": block.rejected,
            })).collect::<Vec<_>>(),
            "total": {
                "transactions": total_transactions,
                "compute_units": blocks.iter().map(|block| block.compute_units).sum::<u64>(),
                "fees_lamports": blocks.iter().map(|block| block.fees_lamports).sum::<u64>(),
                "batches": blocks.iter().map(|block| block.batches).sum::<usize>(),
                "rejected": total_rejected,
                "evicted": evicted,
            },
        }));
    } else {
        let mut out = std::io::stdout().lock();
        for block in &blocks {
            let rejected: Vec<String> = block
                .rejected
                .iter()
                .map(|(kind, count)| format!("{kind} {count}"))
                .collect();
            // A closed pipe ends the listing; nothing else to report.
            let _ = writeln!(
                out,
                "slot {:>5}: {:>6} transactions {:>11} CU {:>14} lamports {:>5} batches{}{}",
                block.slot,
                block.transactions,
                block.compute_units,
                block.fees_lamports,
                block.batches,
                if rejected.is_empty() {
                    ""
                } else {
                    ", rejected: "
                },
                rejected.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "{} packets, {} blocks, {} transactions scheduled, {} rejected ({} evicted)",
            packets.len(),
            blocks.len(),
            total_transactions,
            total_rejected.values().sum::<usize>(),
            evicted
        );
    }
    Ok(ExitCode::SUCCESS)
}
