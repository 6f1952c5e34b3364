//! Replays a recorded object-cache access stream (`kestrel context replay --cache-trace FILE`,
//! format in `src/cache.rs`) through each replacement policy of `kestrel_context::cache` at
//! several budgets, and prints the misses per block at equal memory (a markdown table).
//!
//! The stream a replay asks the cache for does not depend on the policy (what is looked up is
//! decided by the workload and the trees; only whether it is found changes), so one recording
//! answers for every policy. A miss is a read from the pack: a lookup that does not find its
//! object, or an update taking an object that is not cached.
//!
//! Usage: `cargo run --release -p kestrel-context --example cache_simulate -- TRACE
//! [BUDGET_MIB,...] [POLICY,...]` (policies: two-generations, lru, clock, s3fifo, s3fifo-N with
//! N the small FIFO's percent).

use kestrel_context::cache::{
    decode_trace_record, CachePolicy, ObjectCache, TraceEvent, S3FIFO_SMALL_PERCENT_DEFAULT,
    TRACE_RECORD_BYTES,
};
use std::io::{BufReader, Read};
use std::process::ExitCode;

/// Budgets simulated when none are given, in MiB.
const BUDGETS_MIB_DEFAULT: [usize; 5] = [48, 64, 96, 128, 144];

/// What one simulation counted.
#[derive(Default)]
struct Outcome {
    blocks: u64,
    misses: u64,
    /// Misses in the last third of the blocks (the state is largest there).
    late_misses: u64,
    late_blocks: u64,
    hits: u64,
    /// Largest and mean estimated bytes held, including objects retired but not freed yet.
    peak_bytes: usize,
    held_byte_blocks: u128,
}

fn policy_of(name: &str) -> Option<CachePolicy> {
    Some(match name {
        "two-generations" => CachePolicy::TwoGenerations,
        "lru" => CachePolicy::Lru,
        "clock" => CachePolicy::Clock,
        "s3fifo" => CachePolicy::S3Fifo {
            small_percent: S3FIFO_SMALL_PERCENT_DEFAULT,
        },
        other => CachePolicy::S3Fifo {
            small_percent: other.strip_prefix("s3fifo-")?.parse().ok()?,
        },
    })
}

fn simulate(
    path: &std::path::Path,
    policy: CachePolicy,
    budget_bytes: usize,
    total_blocks: u64,
) -> std::io::Result<Outcome> {
    let mut reader = BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut cache: ObjectCache<()> = ObjectCache::new(policy, budget_bytes);
    let mut outcome = Outcome::default();
    let late_start = total_blocks - total_blocks / 3;
    let mut record = [0u8; TRACE_RECORD_BYTES];
    loop {
        match reader.read_exact(&mut record) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(error) => return Err(error),
        }
        let Some((offset, size, event)) = decode_trace_record(&record) else {
            return Err(std::io::Error::other("unknown event byte"));
        };
        let late = outcome.blocks >= late_start;
        let hit = match event {
            TraceEvent::Commit => {
                outcome.blocks += 1;
                let occupancy = cache.occupancy();
                let held = occupancy.held_bytes + occupancy.retired_bytes;
                outcome.peak_bytes = outcome.peak_bytes.max(held);
                outcome.held_byte_blocks += held as u128;
                if late {
                    outcome.late_blocks += 1;
                }
                continue;
            }
            TraceEvent::Hit | TraceEvent::MissInserted => {
                if cache.get(offset).is_some() {
                    true
                } else {
                    cache.insert(offset, (), size);
                    false
                }
            }
            TraceEvent::TakeHit | TraceEvent::TakeMiss => cache.take(offset).is_some(),
            TraceEvent::InsertWritten => {
                if !cache.contains(offset) {
                    cache.insert(offset, (), size);
                }
                continue;
            }
        };
        if hit {
            outcome.hits += 1;
        } else {
            outcome.misses += 1;
            if late {
                outcome.late_misses += 1;
            }
        }
    }
    Ok(outcome)
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = arguments.first().map(std::path::PathBuf::from) else {
        eprintln!("usage: cache_simulate TRACE [BUDGET_MIB,...] [POLICY,...]");
        return ExitCode::from(2);
    };
    let budgets: Vec<usize> = match arguments.get(1) {
        Some(list) => match list.split(',').map(str::parse).collect() {
            Ok(budgets) => budgets,
            Err(_) => {
                eprintln!("budgets: a comma-separated list of MiB");
                return ExitCode::from(2);
            }
        },
        None => BUDGETS_MIB_DEFAULT.to_vec(),
    };
    let names = arguments
        .get(2)
        .map_or("two-generations,lru,clock,s3fifo", String::as_str);
    let mut policies = Vec::new();
    for name in names.split(',') {
        match policy_of(name) {
            Some(policy) => policies.push((name, policy)),
            None => {
                eprintln!("unknown policy {name}");
                return ExitCode::from(2);
            }
        }
    }
    // The recorded run's own counts, and its block count (for the "late" third).
    let recorded = match simulate(&path, CachePolicy::TwoGenerations, usize::MAX, u64::MAX) {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("{}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let blocks = recorded.blocks;
    println!(
        "{blocks} blocks, {} accesses; an unbounded cache misses {} ({:.1} per block)\n",
        recorded.hits + recorded.misses,
        recorded.misses,
        recorded.misses as f64 / blocks.max(1) as f64
    );
    println!("| budget | policy | misses | per block | per block, last third | vs two generations | peak held | mean held |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    for budget_mib in budgets {
        let mut baseline = None;
        for (name, policy) in &policies {
            let outcome = match simulate(&path, *policy, budget_mib << 20, blocks) {
                Ok(outcome) => outcome,
                Err(error) => {
                    eprintln!("{}: {error}", path.display());
                    return ExitCode::FAILURE;
                }
            };
            if *policy == CachePolicy::TwoGenerations {
                baseline = Some(outcome.misses);
            }
            let ratio = baseline.map_or(String::from("-"), |base| {
                format!("{:.3}", outcome.misses as f64 / base.max(1) as f64)
            });
            println!(
                "| {budget_mib} MiB | {name} | {} | {:.1} | {:.1} | {ratio} | {:.1} MiB | {:.1} MiB |",
                outcome.misses,
                outcome.misses as f64 / outcome.blocks.max(1) as f64,
                outcome.late_misses as f64 / outcome.late_blocks.max(1) as f64,
                outcome.peak_bytes as f64 / 1048576.0,
                (outcome.held_byte_blocks / u128::from(outcome.blocks.max(1))) as f64 / 1048576.0,
            );
        }
    }
    ExitCode::SUCCESS
}
