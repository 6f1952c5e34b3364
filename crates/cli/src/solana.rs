//! `kestrel solana pack <FILE|-> [--workers N] [--json]`: runs the Solana ingest stage
//! (`kestrel-scheduler`) over a file of transactions against an in-memory clock and prints, per
//! block, the transactions scheduled, their compute units, the fees the leader captured, the
//! batches handed to workers and the rejected transactions by reason.
//!
//! Input: one transaction per line in hex, base64 or base58 (blank lines and `#` comments
//! skipped), or a binary stream of packets each preceded by its length as a u16 little-endian
//! (`--binary`, or detected when the input's first 64 KiB are not text). The clock: each block is
//! one slot; a blockhash is valid for 150 slots from the slot it is first seen in; packets arrive
//! `--packets-per-block` per slot. Workers execute instantly: the scheduler refills them until
//! the block is full or nothing more can run, and the block ends.
//!
//! The input is streamed: each block's packets are read when the block starts, so memory holds
//! one window of packets (each kept to at most one byte more than the largest transaction) and
//! the stage, whatever the input's length; what grows is one small report per block, printed at
//! the end (a read error then reports nothing else, as before any output).

use crate::output::{print_json, CommandResult};
use base64::Engine;
use clap::{Args, Subcommand};
use kestrel_scheduler::limits::MAX_PROCESSING_AGE_SLOTS;
use kestrel_scheduler::{BlockhashSource, NoAddressTables, SchedulerConfig, Stage, StageConfig};
use kestrel_txview::limits::MAX_TRANSACTION_SIZE_V1;
use kestrel_txview::{Hash, UnsanitizedTransactionView};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
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

/// Bytes of the input's start that decide between text and binary when `--binary` is not given:
/// text if they are UTF-8 (all of it, for an input shorter than this; a binary stream's random
/// signature bytes are UTF-8 with negligible probability).
const FORMAT_PROBE_BYTES: u64 = 64 * 1024;

/// Bytes kept of one packet: a longer one is rejected as too large whatever its content, so one
/// byte more than the largest transaction (v1) keeps its rejection and bounds a window's memory.
const MAX_KEPT_PACKET_BYTES: usize = MAX_TRANSACTION_SIZE_V1 + 1;

/// The longest text line decoded: twice the hex of the largest transaction, so a longer line
/// decodes, in any of the three encodings, to more bytes than a transaction may have. A longer
/// line is passed on as a too-large packet without being decoded (one that decodes in no encoding
/// is then counted as too large rather than malformed).
const MAX_LINE_BYTES: usize = 4 * MAX_TRANSACTION_SIZE_V1;

/// The input: the probed first bytes, then the rest.
type ProbedInput = io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read>>;

/// The input's packets, read one at a time: memory holds one line or packet, not the input.
struct PacketStream {
    path: String,
    reader: BufReader<ProbedInput>,
    binary: bool,
    /// Packets read so far.
    packets: usize,
    /// Input bytes read so far.
    bytes: u64,
    /// The input's length, when it is a file.
    length: Option<u64>,
    line: Vec<u8>,
    /// The next packet, read ahead so that a window knows whether it is the last.
    peeked: Option<Vec<u8>>,
    ended: bool,
}

impl PacketStream {
    fn open(path: &str, binary: bool) -> Result<Self, String> {
        let (mut stream, length) =
            crate::input::open_stream(path).map_err(|error| error.to_string())?;
        let mut probe = Vec::new();
        (&mut stream)
            .take(FORMAT_PROBE_BYTES)
            .read_to_end(&mut probe)
            .map_err(|error| read_error(path, error))?;
        let text = match std::str::from_utf8(&probe) {
            Ok(_) => true,
            // A character cut by the probe's end, in an input that goes on.
            Err(error) => error.error_len().is_none() && probe.len() as u64 == FORMAT_PROBE_BYTES,
        };
        Ok(Self {
            path: path.to_string(),
            reader: BufReader::with_capacity(1 << 16, io::Cursor::new(probe).chain(stream)),
            binary: binary || !text,
            packets: 0,
            bytes: 0,
            length,
            line: Vec::new(),
            peeked: None,
            ended: false,
        })
    }

    /// Replaces `window`'s packets with the next `count` (fewer at the end); true if no packet
    /// follows them.
    fn fill(&mut self, window: &mut Vec<Vec<u8>>, count: usize) -> Result<bool, String> {
        window.clear();
        while window.len() < count {
            let packet = match self.peeked.take() {
                Some(packet) => packet,
                None => match self.next_packet()? {
                    Some(packet) => packet,
                    None => return Ok(true),
                },
            };
            window.push(packet);
        }
        self.peeked = self.next_packet()?;
        Ok(self.peeked.is_none())
    }

    fn next_packet(&mut self) -> Result<Option<Vec<u8>>, String> {
        if self.ended {
            return Ok(None);
        }
        let packet = if self.binary {
            self.next_binary()?
        } else {
            self.next_line()?
        };
        match packet {
            Some(_) => self.packets += 1,
            None => self.ended = true,
        }
        Ok(packet)
    }

    /// The next length-prefixed packet.
    fn next_binary(&mut self) -> Result<Option<Vec<u8>>, String> {
        let mut length = Vec::with_capacity(2);
        self.read_at_most(2, &mut length)?;
        let length = match length[..] {
            [] => return Ok(None),
            [low, high] => usize::from(u16::from_le_bytes([low, high])),
            _ => return Err("binary stream: truncated length".to_string()),
        };
        let kept = length.min(MAX_KEPT_PACKET_BYTES);
        let mut packet = Vec::with_capacity(kept);
        let mut present = self.read_at_most(kept, &mut packet)?;
        if present == kept {
            let rest = (length - present) as u64;
            present += io::copy(&mut (&mut self.reader).take(rest), &mut io::sink())
                .map_err(|error| read_error(&self.path, error))? as usize;
            self.bytes += rest;
        }
        if present < length {
            return Err(format!(
                "binary stream: packet {} announces {length} bytes, {present} remain",
                self.packets
            ));
        }
        Ok(Some(packet))
    }

    /// Appends up to `count` bytes to `into`; returns how many came.
    fn read_at_most(&mut self, count: usize, into: &mut Vec<u8>) -> Result<usize, String> {
        let read = (&mut self.reader)
            .take(count as u64)
            .read_to_end(into)
            .map_err(|error| read_error(&self.path, error))?;
        self.bytes += read as u64;
        Ok(read)
    }

    /// The next text line's packet (blank lines and `#` comments skipped); lines that decode in
    /// no encoding, or are not UTF-8, become empty packets (rejected as malformed, so they are
    /// counted).
    fn next_line(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            self.line.clear();
            let (read, whole) = read_line(&mut self.reader, &mut self.line, MAX_LINE_BYTES)
                .map_err(|error| read_error(&self.path, error))?;
            self.bytes += read as u64;
            if read == 0 {
                return Ok(None);
            }
            if !whole {
                return Ok(Some(vec![0; MAX_KEPT_PACKET_BYTES]));
            }
            let Ok(line) = std::str::from_utf8(&self.line) else {
                let line = self.line.trim_ascii();
                if line.is_empty() || line.starts_with(b"#") {
                    continue;
                }
                return Ok(Some(Vec::new()));
            };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            return Ok(Some(decode_line(line).unwrap_or_default()));
        }
    }
}

fn read_error(path: &str, error: io::Error) -> String {
    crate::input::InputError::Io {
        path: path.to_string(),
        error,
    }
    .to_string()
}

/// Reads one line into `line` without its `\n`, keeping at most `max` bytes of it; returns the
/// bytes consumed (0 at the end of the input) and whether the line was kept whole.
fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<(usize, bool)> {
    let mut consumed = 0;
    let mut whole = true;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            return Ok((consumed, whole));
        }
        let (end, used) = match buffer.iter().position(|&byte| byte == b'\n') {
            Some(newline) => (newline, newline + 1),
            None => (buffer.len(), buffer.len()),
        };
        if whole && line.len() + end <= max {
            line.extend_from_slice(&buffer[..end]);
        } else {
            whole = false;
        }
        reader.consume(used);
        consumed += used;
        if end < used {
            return Ok((consumed, whole));
        }
    }
}

/// Packets read before the progress line shows (on a terminal).
const PROGRESS_AFTER_PACKETS: usize = 100_000;

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
    let mut input = PacketStream::open(&args.input, args.binary)?;
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
    let mut window = Vec::with_capacity(args.packets_per_block);
    let terminal = std::io::stderr().is_terminal();
    let mut progress = false;
    loop {
        let mut report = BlockReport {
            slot: stage.slot(),
            ..BlockReport::default()
        };
        let exhausted = input.fill(&mut window, args.packets_per_block)?;
        let arrivals: Vec<&[u8]> = window.iter().map(Vec::as_slice).collect();
        stage.ingest(&arrivals, &NoAddressTables, &mut clock, |_, reason| {
            *report.rejected.entry(reason.kind()).or_default() += 1;
        });
        drop(arrivals);
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
        progress |= terminal && input.packets >= PROGRESS_AFTER_PACKETS;
        if progress {
            let of_length = input
                .length
                .map(|length| format!(" of {}", length >> 20))
                .unwrap_or_default();
            eprint!(
                "\r{} packets ({}{of_length} MiB), {} blocks",
                input.packets,
                input.bytes >> 20,
                blocks.len()
            );
        }
        if exhausted && (queued == 0 || idle) {
            break;
        }
        stage.new_block(stage.slot() + 1);
    }
    if progress {
        eprintln!();
    }
    let packets = input.packets;
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
            "packets": packets,
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
            packets,
            blocks.len(),
            total_transactions,
            total_rejected.values().sum::<usize>(),
            evicted
        );
    }
    Ok(ExitCode::SUCCESS)
}
