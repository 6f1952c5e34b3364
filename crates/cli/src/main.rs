//! The `kestrel` command: `kestrel <area> <verb>`, one module per area. Human-readable output by
//! default, `--json` for machines; exit code 0 on success, 1 on failure, 2 on usage errors.

#![forbid(unsafe_code)]

mod bench;
mod client;
mod context;
mod input;
mod micheline;
mod michelson;
mod node;
mod output;
mod protocol;
mod solana;
mod temporary;
mod tx;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The process's allocator: mimalloc instead of the system's (glibc) malloc, for every area. Under
/// callgrind, a 200-block context replay spent about 30 % of its instructions in glibc's malloc,
/// free and realloc (decoded directory entries, names and values are separate allocations, and
/// replaced objects are freed one by one); BENCHMARKS.md ("Context store") has the measured effect.
/// Its version 2 (the workspace selects it): over the 150,000-block context replay, version 3 held
/// 14-15 MB more resident memory for the same work and time (BENCHMARKS.md, session 7).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Kestrel: a fast smart-contract execution core for blockchain nodes.
#[derive(Parser)]
#[command(name = "kestrel", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    area: Area,
}

/// The areas of Kestrel, one per pipeline stage.
#[derive(Subcommand)]
enum Area {
    /// Print version and build information.
    Version {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// octez-client's offline commands, as octez-client takes and prints them: `run script`,
    /// `typecheck script|data`, `hash data`, `normalize data|script|type|stack`, `expand macros
    /// in`, `convert script|data`, `unpack michelson data`.
    #[command(disable_help_flag = true)]
    Client {
        /// The octez-client command line (global options first, e.g. `--mode mockup`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Michelson: TZT runner, run-script, typecheck, pack.
    Michelson {
        #[command(subcommand)]
        command: Box<michelson::MichelsonCommand>,
    },
    /// Micheline expressions: pack, unpack, convert between text, binary and JSON, hash.
    Micheline {
        #[command(subcommand)]
        command: micheline::MichelineCommand,
    },
    /// The context store: Tezos context hashes, commits, replay benchmark.
    #[command(subcommand)]
    Context(context::ContextCommand),
    /// Tezos protocol 025: application throughput benchmark.
    #[command(subcommand)]
    Protocol(protocol::ProtocolCommand),
    /// Side-by-side benchmarks against peer implementations (needs the `peers` feature).
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// A local Tezos node for Taquito, pytezos and octez-client: a block per operation.
    ///
    /// Protocol 025 (Ushuaia) with the five sandbox accounts bootstrap1 … bootstrap5 (their keys,
    /// printed at start, are public) plus `--accounts` generated ones, and three blocks so that
    /// `head~2` exists. Each operation injected is validated, applied and baked into a new block
    /// before `/injection/operation` answers, so clients confirm at once (injections that arrive
    /// while a block is being made share the next one); one whose application fails is included
    /// and pays its fee. State lives in a context store in a temporary
    /// directory, removed on exit, unless `--data-dir` names one (reopening it continues the
    /// chain; start it with the same `--accounts`, the first account bakes).
    ///
    /// With `--block-time N`, operations wait in the mempool and a block is baked every N seconds.
    ///
    /// Anvil's habits, as `POST /kestrel/<method>` with a JSON object body (docs/node-rpc.md):
    /// `mine {"blocks": N}`, `snapshot` → `{"id"}`, `revert {"id"}`, `dump_state` / `load_state`
    /// (and `--state FILE`), `set_next_block_timestamp {"timestamp"}`, `increase_time
    /// {"seconds"}`, `set_balance {"address", "balance"}`, `set_storage {"address", "storage"}`,
    /// `impersonate {"address"}` (its operations accepted unsigned) / `stop_impersonating`.
    ///
    /// Example: `kestrel node`, then with Taquito `new TezosToolkit("http://127.0.0.1:8732")`
    /// and `new InMemorySigner("edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh")`
    /// (bootstrap1); `curl -d '{"blocks": 5}' http://127.0.0.1:8732/kestrel/mine`.
    ///
    /// `kestrel node bench [--json]` measures the node (start time, transfers per second, memory).
    Node(node::NodeArgs),
    /// Solana wire transactions: decode one, or check a file of them.
    #[command(subcommand)]
    Tx(tx::TxCommand),
    /// Solana block production: ingest and scheduling over a file of transactions.
    #[command(subcommand)]
    Solana(solana::SolanaCommand),
}

fn main() -> ExitCode {
    output::exit_quietly_on_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return output::usage_error(&error),
    };
    let result = match cli.area {
        Area::Client { args } => return client::run(&args),
        Area::Version { json } => output::print_version(json),
        Area::Michelson { command } => michelson::run(*command),
        Area::Micheline { command } => micheline::run(command),
        Area::Context(command) => context::run(command),
        Area::Protocol(command) => protocol::run(command),
        Area::Bench { command } => bench::run(command),
        Area::Tx(command) => tx::run(command),
        Area::Solana(command) => solana::run(command),
        Area::Node(args) => node::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => output::failure(&error),
    }
}
