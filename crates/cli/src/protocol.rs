//! `kestrel protocol bench`: the throughput of protocol 025's application — blocks of signed
//! operations from many accounts decoded, signature-checked as one batch, validated, applied and
//! committed to a context store once per block (`kestrel_protocol::workload`) — with the time of
//! each stage. Blocks are signed before the clock starts.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use kestrel_protocol::workload::{BlockTimings, Chain, Sources, Workload, ACCOUNTS_MAX};

use crate::output::{self, CommandResult};
use crate::temporary::TemporaryDirectory;

/// The verbs of `kestrel protocol`.
#[derive(Subcommand)]
pub enum ProtocolCommand {
    /// Operations per second applying blocks of signed operations, with a per-stage breakdown.
    ///
    /// The stages add up to the total: decode (the signed bytes), signature (the batch check's
    /// wait), validation (counters, keys, limits, fees), execution (inside the Michelson
    /// interpreter, less its state reads), state reads (finding values in the state's tree),
    /// state writes (changing the tree, undo records, big-map diffs), bookkeeping (the rest of
    /// the application: fees, counters, gas accounting, cached scripts, storage encoding,
    /// receipts) and commit (hashing and writing the block's state). Splitting the application
    /// reads the clock at each switch (`clock_reads` per operation in the output);
    /// `--no-stage-split` leaves it whole.
    Bench(BenchArgs),
}

/// The operations the blocks hold.
#[derive(Clone, Copy, ValueEnum)]
pub enum WorkloadName {
    /// FA1.2 `transfer`s (TZIP-7's reference contract).
    Fa12,
    /// Tez transfers between implicit accounts.
    Transfer,
    /// Originations of the FA1.2 contract.
    Originate,
    /// `xtzToToken` calls of the liquidity-baking CPMM (Octez's scripts, originated at genesis).
    XtzToToken,
}

/// Options of `kestrel protocol bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Operations to apply in all (rounded up to whole blocks).
    #[arg(long, default_value_t = 10_000)]
    ops: usize,
    /// Operations per block (one commit each).
    #[arg(long, default_value_t = 1_000)]
    block_size: usize,
    /// Sending accounts (at most 500), each sending in turn.
    #[arg(long, default_value_t = ACCOUNTS_MAX)]
    accounts: usize,
    /// What the blocks hold.
    #[arg(long, value_enum, default_value = "fa12")]
    workload: WorkloadName,
    /// The FA1.2 contract (default: `$KESTREL_TESTDATA/michelson/mini_scenarios/fa12_reference.tz`).
    #[arg(long)]
    fa12: Option<PathBuf>,
    /// The directory of the liquidity-baking scripts `cpmm.tz` and `lqt.tz` (default:
    /// `$KESTREL_TESTDATA/michelson/protocol`), for `xtz-to-token`.
    #[arg(long)]
    liquidity_baking: Option<PathBuf>,
    /// Do not split the application into execution, state reads, state writes and bookkeeping
    /// (no clock read per switch): those four read zero and bookkeeping holds the whole
    /// application.
    #[arg(long)]
    no_stage_split: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a `kestrel protocol` verb.
pub fn run(command: ProtocolCommand) -> CommandResult {
    match command {
        ProtocolCommand::Bench(args) => bench(&args),
    }
}

fn source(given: &Option<PathBuf>, testdata_path: &str) -> Result<String, String> {
    let path =
        match given {
            Some(path) => path.clone(),
            None => PathBuf::from(std::env::var_os("KESTREL_TESTDATA").ok_or_else(|| {
                format!("set KESTREL_TESTDATA or pass the file ({testdata_path})")
            })?)
            .join(testdata_path),
        };
    std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))
}

fn bench(args: &BenchArgs) -> CommandResult {
    if args.block_size == 0 {
        return Err("--block-size must be at least 1".into());
    }
    let workload = match args.workload {
        WorkloadName::Fa12 => Workload::Fa12,
        WorkloadName::Transfer => Workload::Transfer,
        WorkloadName::Originate => Workload::Originate,
        WorkloadName::XtzToToken => Workload::XtzToToken,
    };
    let fa12 = source(&args.fa12, "michelson/mini_scenarios/fa12_reference.tz")?;
    let liquidity_baking = match workload {
        Workload::XtzToToken => {
            let script = |name: &str| {
                let given = args.liquidity_baking.as_ref().map(|dir| dir.join(name));
                source(&given, &format!("michelson/protocol/{name}"))
            };
            Some((script("cpmm.tz")?, script("lqt.tz")?))
        }
        _ => None,
    };
    let sources = Sources {
        fa12: &fa12,
        liquidity_baking: liquidity_baking
            .as_ref()
            .map(|(cpmm, lqt)| (cpmm.as_str(), lqt.as_str())),
    };
    let directory = TemporaryDirectory::try_new("kestrel-protocol-bench")?;
    let mut chain = Chain::new(workload, args.accounts, &sources, directory.path())
        .map_err(|error| error.to_string())?;
    chain.time_stages(!args.no_stage_split);
    let blocks = args.ops.div_ceil(args.block_size).max(1);
    let mut timings = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let block = chain
            .signed_block(args.block_size)
            .map_err(|error| error.to_string())?;
        timings.push(
            chain
                .apply_block(&block)
                .map_err(|error| error.to_string())?,
        );
    }
    report(args, blocks, &timings);
    Ok(ExitCode::SUCCESS)
}

/// The stages, named, summed over the blocks.
fn stages(timings: &[BlockTimings]) -> [(&'static str, Duration); 8] {
    let sum = |stage: fn(&BlockTimings) -> Duration| timings.iter().map(stage).sum::<Duration>();
    [
        ("decode", sum(|t| t.decode)),
        ("signature", sum(|t| t.stages.signature)),
        ("validation", sum(|t| t.stages.validation)),
        ("execution", sum(|t| t.stages.execution)),
        ("state_reads", sum(|t| t.stages.state_reads)),
        ("state_writes", sum(|t| t.stages.state_writes)),
        ("bookkeeping", sum(|t| t.stages.bookkeeping())),
        ("commit", sum(|t| t.commit)),
    ]
}

fn report(args: &BenchArgs, blocks: usize, timings: &[BlockTimings]) {
    let operations = blocks * args.block_size;
    let total: Duration = timings.iter().map(BlockTimings::total).sum();
    let per_second = operations as f64 / total.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut block_ms: Vec<f64> = timings
        .iter()
        .map(|t| t.total().as_secs_f64() * 1e3)
        .collect();
    block_ms.sort_by(f64::total_cmp);
    let median_block_ms = block_ms[block_ms.len() / 2];
    let workload = args
        .workload
        .to_possible_value()
        .map(|value| value.get_name().to_string())
        .unwrap_or_default();
    let stages = stages(timings);
    let application: Duration = timings.iter().map(|t| t.stages.application).sum();
    let clock_reads: u64 = timings.iter().map(|t| t.stages.clock_reads).sum();
    let clock_reads_per_operation = clock_reads as f64 / operations as f64;
    if args.json {
        let breakdown: serde_json::Map<String, serde_json::Value> = stages
            .iter()
            .map(|(name, time)| {
                (
                    format!("{name}_ms"),
                    serde_json::json!(time.as_secs_f64() * 1e3),
                )
            })
            .collect();
        output::print_json(&serde_json::json!({
            "workload": workload,
            "operations": operations,
            "blocks": blocks,
            "block_size": args.block_size,
            "accounts": args.accounts,
            "seconds": total.as_secs_f64(),
            "operations_per_second": per_second,
            "median_block_ms": median_block_ms,
            "application_ms": application.as_secs_f64() * 1e3,
            "stage_split": !args.no_stage_split,
            "clock_reads_per_operation": clock_reads_per_operation,
            "stages": breakdown,
        }));
        return;
    }
    println!(
        "{workload}: {operations} operations in {blocks} blocks of {}, {} accounts",
        args.block_size, args.accounts
    );
    println!(
        "{per_second:.0} operations/s ({:.3} s; median block {median_block_ms:.1} ms)",
        total.as_secs_f64()
    );
    if !args.no_stage_split {
        println!(
            "application {:.1} ms split below ({clock_reads_per_operation:.1} clock reads/op)",
            application.as_secs_f64() * 1e3
        );
    }
    for (name, time) in stages {
        println!(
            "  {name:<12} {:>9.1} ms  {:>5.1} %  {:>7.2} µs/op",
            time.as_secs_f64() * 1e3,
            100.0 * time.as_secs_f64() / total.as_secs_f64().max(f64::MIN_POSITIVE),
            time.as_secs_f64() * 1e6 / operations as f64
        );
    }
}
