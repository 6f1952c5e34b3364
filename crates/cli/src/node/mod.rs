//! `kestrel node`: a local Tezos node (`kestrel-node`) that Taquito, pytezos and octez-client
//! drive over Octez's RPC. Prints the accounts with their keys, the address it listens on, then
//! one line per block (or JSON objects with `--json`). `kestrel node bench` measures it
//! ([`bench`]).

mod bench;

use clap::{Args, Subcommand};
use kestrel_node::server::{ServerOptions, Stop};
use kestrel_node::{accounts, server, state_file, Chain, ChainConfig};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::output::CommandResult;
use crate::temporary::TemporaryDirectory;

/// Mutez in a tez.
const MUTEZ_PER_TEZ: u64 = 1_000_000;

/// `kestrel node`'s options (its help text is on `Area::Node` in `main.rs`).
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NodeArgs {
    #[command(subcommand)]
    command: Option<NodeCommand>,
    /// The port to listen on.
    #[arg(long, default_value_t = 8732)]
    port: u16,
    /// The address to listen on. Anything but loopback exposes the sandbox keys' accounts and
    /// the state-changing `/kestrel/*` methods to whoever reaches it.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Bake a block every SECONDS from the mempool (`mempool/pending_operations` lists the
    /// operations waiting); 0, the default, bakes a block for each injected operation.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    block_time: u64,
    /// Start from the state saved in FILE if it exists, and save the state there on exit
    /// (SIGINT, SIGTERM, SIGHUP): see `POST /kestrel/dump_state`.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Keep the state in a temporary directory, removed on exit (the default).
    #[arg(long, conflicts_with = "data_dir")]
    in_memory: bool,
    /// Keep the chain (context store and blocks) in DIR; a DIR that holds one continues it.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Keep the contexts of the last N blocks (head's included); older ones are collected
    /// every N/10 blocks, so that memory and disk stay bounded, and reading their state (or
    /// reverting to a snapshot among them) answers a `kestrel.pruned_context` error. 0 keeps
    /// every block's.
    #[arg(long, value_name = "N", default_value_t = kestrel_node::DEFAULT_KEEP_BLOCKS)]
    keep_blocks: u64,
    /// Generated accounts funded at genesis, after the five sandbox accounts.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1000))]
    accounts: u16,
    /// The balance of each account at genesis, in tez (5 % of it staked).
    #[arg(long, value_name = "TEZ", default_value_t = 4_000_000)]
    balance: u64,
    /// Print the accounts and blocks as JSON lines.
    #[arg(long)]
    json: bool,
    /// Originate Liquidity Baking's contracts at genesis from DIR's `cpmm.tz` and `lqt.tz`, as
    /// Octez's sandbox does (the CPMM, its liquidity token, a test FA1.2 token).
    #[arg(long, value_name = "DIR")]
    liquidity_baking_scripts: Option<PathBuf>,
}

/// What `kestrel node` does besides serving.
#[derive(Subcommand)]
enum NodeCommand {
    /// Measure the node: start to first RPC answer, confirmed transfers per second with 1 and
    /// 16 concurrent clients (`--clients`), resident memory after 100,000 transfers.
    ///
    /// Each measurement starts nodes in this process, on loopback ports, each on a new chain in
    /// a temporary directory. The clients inject transfers signed beforehand, each from its own
    /// account over one keep-alive connection; each answer comes once its block is made
    /// (concurrent injections share a block), so a transfer counted is confirmed. Medians over
    /// `--runs`. `--duration S` runs a load test instead, sampling the rate and resident memory.
    ///
    /// Example: `kestrel node bench --json`; `kestrel node bench --clients 16 --duration 600
    /// --sample 30`.
    Bench(bench::BenchArgs),
}

/// Runs the node until the process is ended (or `kestrel node bench`).
pub fn run(mut args: NodeArgs) -> CommandResult {
    if let Some(NodeCommand::Bench(bench)) = args.command.take() {
        return bench::run(bench);
    }
    let started = Instant::now();
    let balance_mutez = args.balance.checked_mul(MUTEZ_PER_TEZ).ok_or_else(|| {
        format!(
            "--balance {} tez is more mutez than fit in 64 bits",
            args.balance
        )
    })?;
    let temporary;
    let directory = match &args.data_dir {
        Some(directory) => directory.clone(),
        None => {
            temporary = TemporaryDirectory::without_signal_thread("kestrel-node");
            temporary.path().to_path_buf()
        }
    };
    // Signals stop the server, so that the state is saved and the temporary directory removed.
    let stop = Stop::default();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|error| format!("cannot watch for signals: {error}"))?;
    let stopping = stop.clone();
    let signalled = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let signal_seen = signalled.clone();
    std::thread::Builder::new()
        .name("stop-on-signal".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                signal_seen.store(signal, std::sync::atomic::Ordering::SeqCst);
                stopping.stop();
            }
        })
        .map_err(|error| format!("cannot start the signal thread: {error}"))?;
    let address = SocketAddr::new(args.host, args.port);
    let listener = TcpListener::bind(address)
        .map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let genesis_seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64)
        // Genesis and the two blocks after it, a second apart, end at now.
        - 2;
    let liquidity_baking = args
        .liquidity_baking_scripts
        .as_deref()
        .map(crate::client::mockup::chain::read_liquidity_baking_scripts)
        .transpose()
        .map_err(|error| error.message())?;
    let mut chain = Chain::open(ChainConfig {
        directory: &directory,
        accounts: accounts(usize::from(args.accounts)),
        balance_mutez,
        genesis_seconds,
        liquidity_baking,
        keep_blocks: args.keep_blocks,
    })
    .map_err(|error| error.to_string())?;
    if let Some(path) = args.state.as_ref().filter(|path| path.exists()) {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        state_file::load(&mut chain, &text)
            .map_err(|error| format!("{}: {error}", path.display()))?;
    }
    let address = listener.local_addr().unwrap_or(address);
    print_start(&args, &chain, &address, started);
    let json = args.json;
    let observer = Box::new(
        move |block: &kestrel_node::block::Block, elapsed: std::time::Duration| {
            let hashes: Vec<String> = block
                .operations
                .iter()
                .map(|o| o.hash.to_b58check())
                .collect();
            let line = if json {
                serde_json::json!({
                    "event": "block",
                    "level": block.level(),
                    "hash": block.hash.to_b58check(),
                    "operations": hashes,
                    "milliseconds": elapsed.as_secs_f64() * 1e3,
                })
                .to_string()
            } else {
                format!(
                    "block {} {} {} ({:.1} ms)",
                    block.level(),
                    block.hash.to_b58check(),
                    hashes.join(" "),
                    elapsed.as_secs_f64() * 1e3
                )
            };
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        },
    );
    let options = ServerOptions {
        block_time: (args.block_time > 0).then(|| Duration::from_secs(args.block_time)),
        stop: Some(stop),
    };
    let chain = server::serve_with(listener, chain, observer, options)
        .map_err(|error| format!("server: {error}"))?;
    if let Some(path) = &args.state {
        let text = state_file::dump(&chain).map_err(|error| error.to_string())?;
        std::fs::write(path, text).map_err(|error| format!("{}: {error}", path.display()))?;
        eprintln!("kestrel node: state saved to {}", path.display());
    }
    drop(chain);
    let signal = signalled.load(std::sync::atomic::Ordering::SeqCst);
    if signal == 0 {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    // As a shell reports a process a signal ended.
    Ok(std::process::ExitCode::from(
        u8::try_from(128 + signal).unwrap_or(1),
    ))
}

fn print_start(args: &NodeArgs, chain: &Chain, address: &SocketAddr, started: Instant) {
    let mut out = std::io::stdout().lock();
    let url = format!("http://{address}");
    let milliseconds = started.elapsed().as_secs_f64() * 1e3;
    if args.json {
        for account in chain.accounts() {
            let line = serde_json::json!({
                "event": "account",
                "alias": account.alias,
                "address": account.public_key_hash.to_b58check(),
                "public_key": account.public_key.to_b58check(),
                "secret_key": account.secret_key.to_b58check(),
            });
            let _ = writeln!(out, "{line}");
        }
        let line = serde_json::json!({
            "event": "listening",
            "url": url,
            "chain_id": chain.chain_id().to_b58check(),
            "start_milliseconds": milliseconds,
        });
        let _ = writeln!(out, "{line}");
    } else {
        let _ = writeln!(
            out,
            "Accounts (unencrypted:edsk… secret keys; each holds {} tez):",
            args.balance
        );
        for account in chain.accounts() {
            let _ = writeln!(
                out,
                "  {:<12} {} {} {}",
                account.alias,
                account.public_key_hash.to_b58check(),
                account.public_key.to_b58check(),
                account.secret_key.to_b58check()
            );
        }
        let _ = writeln!(
            out,
            "Chain {} (protocol 025 Ushuaia), head at level {}; started in {milliseconds:.1} ms",
            chain.chain_id().to_b58check(),
            chain.head().level()
        );
        let _ = writeln!(out, "Listening on {url}");
    }
    if !args.host.is_loopback() {
        eprintln!(
            "warning: listening on {} — the sandbox accounts' secret keys are public, anyone who \
             reaches this address can spend their tez, and the /kestrel/* methods (set a \
             balance, impersonate an account, revert the chain, …) are open to them",
            args.host
        );
    }
    let _ = out.flush();
}
