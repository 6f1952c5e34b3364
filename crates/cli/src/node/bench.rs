//! `kestrel node bench`: the node's figures (BENCHMARKS.md, "kestrel node"), measured on nodes
//! started in this process on loopback ports, each on a new chain in a temporary directory:
//! - start: a new chain (genesis and two blocks in a fresh store) to the first `GET /version`
//!   answer;
//! - throughput: confirmed transfers per second with each `--clients` count, median of `--runs`
//!   runs — transfers signed beforehand, each client from its own account over one keep-alive
//!   connection, each answer coming once its block is made (concurrent injections share one);
//! - memory: resident memory after `--memory-operations` transfers (signed as they go, so that
//!   no prepared request counts);
//! - with `--duration S`, a load test instead: the clients inject for S seconds, the rate and
//!   resident memory and the node's disk use (its directory's allocated blocks) sampled every
//!   `--sample` seconds.

use clap::Args;
use kestrel_node::server::{self, ServerOptions, Stop};
use kestrel_node::{accounts, Account, Chain, ChainConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::output::CommandResult;
use crate::temporary::TemporaryDirectory;

/// Most concurrent clients: each injects from a funded account of its own (the five sandbox
/// accounts, then generated ones).
const MAX_CLIENTS: usize = 64;

/// The balance of each account, mutez: enough for any run's fees and transfers.
const BALANCE_MUTEZ: u64 = 4_000_000_000_000;

/// Runs of the start measurement, at least (it is short).
const MIN_START_RUNS: usize = 5;

/// `kestrel node bench`'s options.
#[derive(Args)]
pub struct BenchArgs {
    /// The numbers of concurrent clients to measure throughput with, comma-separated (at most
    /// 64 each).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 16],
          value_parser = clap::value_parser!(u16).range(1..=MAX_CLIENTS as i64))]
    clients: Vec<u16>,
    /// Transfers each client injects in a throughput run.
    #[arg(long, default_value_t = 1_000)]
    transfers: u32,
    /// Throughput runs per clients count (the median is reported); each on a new node.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    runs: u16,
    /// Transfers injected before resident memory is read (by the largest `--clients` count);
    /// 0 skips the measurement.
    #[arg(long, default_value_t = 100_000)]
    memory_operations: u64,
    /// Run a load test for SECONDS instead (with the largest `--clients` count).
    #[arg(long, value_name = "SECONDS")]
    duration: Option<u64>,
    /// The load test's sampling period.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    sample: u64,
    /// Print one JSON object (a JSON line per sample for a load test).
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> CommandResult {
    let clients = usize::from(args.clients.iter().copied().max().unwrap_or(1));
    if let Some(duration) = args.duration {
        load_test(clients, duration, args.sample, args.json)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let mut starts = (0..usize::from(args.runs).max(MIN_START_RUNS))
        .map(|_| start_milliseconds())
        .collect::<Result<Vec<f64>, String>>()?;
    let start = median(&mut starts);
    let mut throughput = Vec::new();
    for &count in &args.clients {
        let mut rates = (0..args.runs)
            .map(|_| throughput_run(usize::from(count), args.transfers))
            .collect::<Result<Vec<f64>, String>>()?;
        let runs = rates.clone();
        throughput.push((count, median(&mut rates), runs));
    }
    let memory = (args.memory_operations > 0)
        .then(|| memory_after(clients, args.memory_operations))
        .transpose()?;
    if args.json {
        let throughput: Vec<serde_json::Value> = throughput
            .iter()
            .map(|(count, rate, runs)| {
                serde_json::json!({
                    "clients": count,
                    "transfers_per_client": args.transfers,
                    "transfers_per_second_median": rate.round(),
                    "transfers_per_second": runs.iter().map(|rate| rate.round()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut report = serde_json::json!({
            "start_to_first_answer_ms_median": (start * 10.0).round() / 10.0,
            "start_runs": starts.len(),
            "throughput": throughput,
        });
        if let Some(memory) = &memory {
            report["memory"] = serde_json::json!({
                "operations": memory.operations,
                "head_level": memory.blocks,
                "clients": clients,
                "rss_kib_before": memory.rss_kib_before,
                "rss_kib_after": memory.rss_kib_after,
            });
        }
        println!("{report}");
    } else {
        println!(
            "start to first answer: median {start:.1} ms over {} starts",
            starts.len()
        );
        for (count, rate, runs) in &throughput {
            println!(
                "{count} client(s) × {} transfers: median {rate:.0} confirmed transfers/s over {} runs {runs:.0?}",
                args.transfers, args.runs
            );
        }
        if let Some(memory) = &memory {
            println!(
                "resident memory: {} MiB at start, {} MiB after {} transfers ({clients} clients, head at level {})",
                memory.rss_kib_before / 1024,
                memory.rss_kib_after / 1024,
                memory.operations,
                memory.blocks
            );
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A node on a new chain with `generated` accounts beyond the sandbox's five.
struct Node {
    address: SocketAddr,
    branch: String,
    accounts: Vec<Account>,
    stop: Stop,
    thread: std::thread::JoinHandle<std::io::Result<Chain>>,
    directory: TemporaryDirectory,
}

impl Node {
    fn start(generated: usize) -> Result<Node, String> {
        let directory = TemporaryDirectory::without_signal_thread("kestrel-node-bench");
        let accounts = accounts(generated);
        let mut chain = Chain::open(ChainConfig {
            directory: directory.path(),
            accounts: accounts.clone(),
            balance_mutez: BALANCE_MUTEZ,
            genesis_seconds: 1_700_000_000,
            liquidity_baking: None,
            keep_blocks: kestrel_node::DEFAULT_KEEP_BLOCKS,
        })
        .map_err(|error| error.to_string())?;
        // Every transfer is signed ahead on the first head, so that signing is not what is
        // measured; the blocks made meanwhile would put that branch past the operations' time to
        // live, which the node's shell checks (a lookup among nine hashes) and is turned off here.
        chain.require_live_branches(false);
        let branch = chain.head().hash.to_b58check();
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|error| format!("cannot listen on loopback: {error}"))?;
        let address = listener.local_addr().map_err(|error| error.to_string())?;
        let stop = Stop::default();
        let options = ServerOptions {
            block_time: None,
            stop: Some(stop.clone()),
        };
        let thread = std::thread::spawn(move || {
            server::serve_with(listener, chain, Box::new(|_, _| {}), options)
        });
        Ok(Node {
            address,
            branch,
            accounts,
            stop,
            thread,
            directory,
        })
    }

    /// Stops the node and waits for its store to close (its directory is removed on drop).
    fn shut_down(self) {
        self.stop.stop();
        let _ = self.thread.join();
    }
}

/// The HTTP request injecting `from`'s transfer of 1 mutez to `to` with `counter`.
fn injection(branch: &str, from: &Account, to: &Account, counter: u64) -> Vec<u8> {
    let operation = from
        .signed_transfer(branch, &to.public_key_hash.to_b58check(), counter, 1)
        .expect("the head's hash and an account's address are base58");
    let body = format!("\"{}\"", hex::encode(operation.encode()));
    format!(
        "POST /injection/operation HTTP/1.1\r\nhost: node\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A keep-alive connection that sends requests and reads their answers.
struct Connection {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Connection {
    fn open(address: SocketAddr) -> Result<Connection, String> {
        let stream = TcpStream::connect(address).map_err(|error| error.to_string())?;
        stream
            .set_nodelay(true)
            .map_err(|error| error.to_string())?;
        let writer = stream.try_clone().map_err(|error| error.to_string())?;
        Ok(Connection {
            writer,
            reader: BufReader::new(stream),
        })
    }

    /// Sends `request`; its answer's body, or why it is not a 200.
    fn exchange(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        let io = |error: std::io::Error| error.to_string();
        self.writer.write_all(request).map_err(io)?;
        let mut status = String::new();
        self.reader.read_line(&mut status).map_err(io)?;
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).map_err(io)?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().map_err(|_| "a bad content-length")?;
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).map_err(io)?;
        if !status.starts_with("HTTP/1.1 200") {
            return Err(format!(
                "the node answered {}: {}",
                status.trim(),
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(body)
    }

    /// The level of the head of the node at `address`, asked on a new connection (the node
    /// closes a keep-alive connection idle for `HEADER_READ_TIMEOUT`).
    fn head_level(address: SocketAddr) -> Result<u64, String> {
        let body = Connection::open(address)?
            .exchange(b"GET /chains/main/blocks/head/header HTTP/1.1\r\nhost: node\r\n\r\n")?;
        serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|header| header["level"].as_u64())
            .ok_or_else(|| "the head's header has no level".to_string())
    }
}

/// The disk space the files directly in `directory` take, KiB (allocated blocks: the store's
/// GC punches holes in its files; 0 where unreadable).
fn disk_kib(directory: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(directory).map_or(0, |entries| {
        entries
            .filter_map(|entry| entry.ok()?.metadata().ok())
            .map(|metadata| metadata.blocks() * 512 / 1024)
            .sum()
    })
}

/// This process's resident memory, KiB (Linux; 0 elsewhere).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Milliseconds from nothing to a node answering `GET /version`.
fn start_milliseconds() -> Result<f64, String> {
    let started = Instant::now();
    let node = Node::start(0)?;
    let mut connection = Connection::open(node.address)?;
    connection.exchange(b"GET /version HTTP/1.1\r\nhost: node\r\n\r\n")?;
    let milliseconds = started.elapsed().as_secs_f64() * 1e3;
    drop(connection);
    node.shut_down();
    Ok(milliseconds)
}

/// One run: `clients` clients each inject `transfers` transfers signed beforehand; transfers/s.
fn throughput_run(clients: usize, transfers: u32) -> Result<f64, String> {
    let node = Node::start(clients.saturating_sub(5))?;
    let accounts = &node.accounts;
    let requests: Vec<Vec<Vec<u8>>> = (0..clients)
        .map(|client| {
            let to = &accounts[(client + 1) % accounts.len()];
            (1..=u64::from(transfers))
                .map(|counter| injection(&node.branch, &accounts[client], to, counter))
                .collect()
        })
        .collect();
    let mut connections = requests
        .iter()
        .map(|_| Connection::open(node.address))
        .collect::<Result<Vec<_>, String>>()?;
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        let handles: Vec<_> = connections
            .iter_mut()
            .zip(&requests)
            .map(|(connection, requests)| {
                scope.spawn(move || {
                    requests
                        .iter()
                        .try_for_each(|request| connection.exchange(request).map(drop))
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|handle| handle.join().unwrap_or(Err("a client panicked".into())))
    });
    let elapsed = started.elapsed().as_secs_f64();
    node.shut_down();
    outcome?;
    Ok((clients as f64 * f64::from(transfers)) / elapsed)
}

/// Clients injecting on a node until told to stop, each signing its transfers as it goes.
struct Load {
    node: Node,
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    clients: Vec<std::thread::JoinHandle<Result<(), String>>>,
}

impl Load {
    fn start(clients: usize) -> Result<Load, String> {
        let node = Node::start(clients.saturating_sub(5))?;
        let done = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let clients = (0..clients)
            .map(|client| {
                let (done, stop) = (done.clone(), stop.clone());
                let from = node.accounts[client].clone();
                let to = node.accounts[(client + 1) % node.accounts.len()].clone();
                let (address, branch) = (node.address, node.branch.clone());
                std::thread::spawn(move || {
                    let mut connection = Connection::open(address)?;
                    let mut counter = 1;
                    while !stop.load(Ordering::Relaxed) {
                        connection.exchange(&injection(&branch, &from, &to, counter))?;
                        counter += 1;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        Ok(Load {
            node,
            done,
            stop,
            clients,
        })
    }

    /// Transfers confirmed so far.
    fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Stops the clients, then the node; the first client's failure, if any.
    fn finish(self) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        let outcome = self
            .clients
            .into_iter()
            .try_for_each(|client| client.join().unwrap_or(Err("a client panicked".into())));
        self.node.shut_down();
        outcome
    }
}

/// What [`memory_after`] measured.
struct Memory {
    operations: u64,
    blocks: u64,
    rss_kib_before: u64,
    rss_kib_after: u64,
}

/// Resident memory (KiB) once a node has started and once `operations` transfers are confirmed.
fn memory_after(clients: usize, operations: u64) -> Result<Memory, String> {
    let load = Load::start(clients)?;
    let before = resident_kib();
    while load.done() < operations {
        if load.clients.iter().any(|client| client.is_finished()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = resident_kib();
    let done = load.done();
    let blocks = Connection::head_level(load.node.address)?;
    load.finish()?;
    Ok(Memory {
        operations: done,
        blocks,
        rss_kib_before: before,
        rss_kib_after: after,
    })
}

/// The load test: `clients` clients inject for `duration` seconds; a sample of the rate and
/// resident memory every `sample` seconds.
fn load_test(clients: usize, duration: u64, sample: u64, json: bool) -> Result<(), String> {
    let load = Load::start(clients)?;
    let mut previous = 0;
    for index in 1..=duration.div_ceil(sample) {
        std::thread::sleep(Duration::from_secs(sample));
        if load.clients.iter().any(|client| client.is_finished()) {
            break;
        }
        let now = load.done();
        let rate = (now - previous) as f64 / sample as f64;
        previous = now;
        let (seconds, rss, level, disk) = (
            index * sample,
            resident_kib(),
            Connection::head_level(load.node.address)?,
            disk_kib(load.node.directory.path()),
        );
        if json {
            println!(
                "{}",
                serde_json::json!({"seconds": seconds, "operations": now,
                    "per_second": rate.round(), "head_level": level, "rss_kib": rss,
                    "disk_kib": disk})
            );
        } else {
            println!(
                "{seconds:>5} s: {now} transfers, {rate:.0}/s over the last {sample} s, head at level {level}, RSS {} MiB, disk {} MiB",
                rss / 1024,
                disk / 1024
            );
        }
        let _ = std::io::stdout().flush();
    }
    load.finish()
}
