//! The node's benchmark (BENCHMARKS.md, "kestrel node: robustness, …"): a node in this process
//! on a loopback port; transfers signed beforehand, each client from its own account, posted to
//! `/injection/operation` over one keep-alive connection per client (each answer comes after
//! its block is baked). Measures:
//! - `start`: a new chain (genesis and two blocks in a fresh store) to the first `GET /version`
//!   answer, in this process;
//! - `throughput`: confirmed transfers per second with `--clients` concurrent clients, median of
//!   `--runs` runs, each on a new node;
//! - `rss`: the process's resident memory after the last run (`--transfers` per client);
//! - with `--duration S`: a load test instead — the clients inject for S seconds, resident
//!   memory and the rate sampled every `--sample` seconds.
//!
//! `cargo run --release -p kestrel-node --example inject_throughput -- [--clients N]
//! [--transfers N] [--runs N] [--duration S] [--sample S] [--json]`

use kestrel_crypto::SecretKey;
use kestrel_node::server::{self, ServerOptions, Stop};
use kestrel_node::{accounts, Account, Chain, ChainConfig};
use kestrel_protocol::Operation;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most concurrent clients: each needs a funded account of its own (5 sandbox + generated).
const MAX_CLIENTS: usize = 64;

struct Options {
    clients: usize,
    transfers: u32,
    runs: usize,
    duration: Option<u64>,
    sample: u64,
    json: bool,
    /// A node already running (`kestrel node --accounts N`) to inject into, and its process
    /// id, whose resident memory is then reported instead of this process's.
    external: Option<(SocketAddr, u32)>,
}

fn options() -> Options {
    let mut options = Options {
        clients: 1,
        transfers: 2_000,
        runs: 3,
        duration: None,
        sample: 60,
        json: false,
        external: None,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = || {
            arguments
                .next()
                .and_then(|text| text.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("{argument} needs a number"))
        };
        match argument.as_str() {
            "--clients" => options.clients = (value() as usize).clamp(1, MAX_CLIENTS),
            "--transfers" => options.transfers = value() as u32,
            "--runs" => options.runs = (value() as usize).max(1),
            "--duration" => options.duration = Some(value()),
            "--sample" => options.sample = value().max(1),
            "--json" => options.json = true,
            "--external" => {
                let address = arguments
                    .next()
                    .and_then(|text| text.parse().ok())
                    .expect("--external needs HOST:PORT");
                let pid = arguments
                    .next()
                    .and_then(|text| text.parse().ok())
                    .expect("--external needs the node's process id after its address");
                options.external = Some((address, pid));
            }
            other => panic!("unknown argument {other}"),
        }
    }
    options
}

/// A node on a new chain in `directory` with `generated` accounts beyond the sandbox's five.
struct Node {
    address: SocketAddr,
    branch: String,
    accounts: Vec<Account>,
    stop: Stop,
    thread: std::thread::JoinHandle<std::io::Result<Chain>>,
    directory: PathBuf,
}

impl Node {
    /// Stops the node, waits for its store to close, and removes its directory.
    fn shut_down(self) {
        self.stop.stop();
        let _ = self.thread.join();
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// Nodes started so far: each gets a directory of its own.
static STARTED: AtomicU64 = AtomicU64::new(0);

fn start_node(generated: usize) -> Node {
    let directory = std::env::temp_dir().join(format!(
        "kestrel-node-bench-{}-{}",
        std::process::id(),
        STARTED.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&directory);
    let accounts = accounts(generated);
    let mut chain = Chain::open(ChainConfig {
        directory: &directory,
        accounts: accounts.clone(),
        balance_mutez: 4_000_000_000_000,
        genesis_seconds: 1_700_000_000,
        liquidity_baking: None,
    })
    .expect("a new chain");
    let branch = chain.head().hash.to_b58check();
    // Every transfer is signed ahead on this branch, outdated after 8 blocks.
    chain.require_live_branches(false);
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    let stop = Stop::default();
    let options = ServerOptions {
        block_time: None,
        stop: Some(stop.clone()),
    };
    let thread = std::thread::spawn(move || {
        server::serve_with(listener, chain, Box::new(|_, _| {}), options)
    });
    Node {
        address,
        branch,
        accounts,
        stop,
        thread,
        directory,
    }
}

/// The HTTP request injecting `from`'s transfer of 1 mutez to `to` with `counter`.
fn injection(
    address: SocketAddr,
    branch: &str,
    from: &Account,
    to: &Account,
    counter: u64,
) -> Vec<u8> {
    let mut operation = Operation::from_json_str(&format!(
        r#"{{"branch": "{branch}", "contents": [{{"kind": "transaction",
        "source": "{}", "fee": "1000", "counter": "{counter}",
        "gas_limit": "2000", "storage_limit": "0", "amount": "1",
        "destination": "{}"}}]}}"#,
        from.public_key_hash.to_b58check(),
        to.public_key_hash.to_b58check()
    ))
    .expect("an operation");
    let key: &SecretKey = &from.secret_key;
    operation.signature = Some(key.sign(&operation.signing_message()));
    let body = format!("\"{}\"", hex::encode(operation.encode()));
    format!(
        "POST /injection/operation HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
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
    fn open(address: SocketAddr) -> Connection {
        let stream = TcpStream::connect(address).expect("the node accepts");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let writer = stream.try_clone().expect("a second handle");
        Connection {
            writer,
            reader: BufReader::new(stream),
        }
    }

    /// Sends `request`; returns the answer's status line and body.
    fn exchange(&mut self, request: &[u8]) -> (String, Vec<u8>) {
        self.writer.write_all(request).expect("sent");
        let mut status = String::new();
        self.reader.read_line(&mut status).expect("a status line");
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("a header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("a body");
        (status, body)
    }
}

fn resident_kib() -> u64 {
    resident_kib_of("self")
}

fn resident_kib_of(process: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{process}/status"))
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
fn start_milliseconds() -> f64 {
    let started = Instant::now();
    let node = start_node(0);
    let address = node.address;
    let mut connection = Connection::open(address);
    let (status, _) =
        connection.exchange(format!("GET /version HTTP/1.1\r\nhost: {address}\r\n\r\n").as_bytes());
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let milliseconds = started.elapsed().as_secs_f64() * 1e3;
    drop(connection);
    node.shut_down();
    milliseconds
}

/// One run: `clients` clients each inject `transfers` pre-signed transfers; transfers/s.
fn throughput_run(clients: usize, transfers: u32) -> f64 {
    let node = start_node(clients.saturating_sub(5));
    let (address, branch, accounts) = (node.address, &node.branch, &node.accounts);
    let requests: Vec<Vec<Vec<u8>>> = (0..clients)
        .map(|client| {
            let to = &accounts[(client + 1) % accounts.len()];
            (1..=u64::from(transfers))
                .map(|counter| injection(address, branch, &accounts[client], to, counter))
                .collect()
        })
        .collect();
    let rate = inject_all(address, &requests);
    node.shut_down();
    rate
}

/// The load test: `clients` clients inject for `duration` seconds, signing as they go; one
/// sample of the rate and resident memory every `sample` seconds.
fn load_test(clients: usize, duration: u64, sample: u64, json: bool) {
    let node = start_node(clients.saturating_sub(5));
    let (address, branch, accounts) = (node.address, &node.branch, &node.accounts);
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        for client in 0..clients {
            let (done, stop) = (done.clone(), stop.clone());
            scope.spawn(move || {
                let mut connection = Connection::open(address);
                let to = &accounts[(client + 1) % accounts.len()];
                let mut counter = 1;
                while !stop.load(Ordering::Relaxed) {
                    let request = injection(address, branch, &accounts[client], to, counter);
                    let (status, _) = connection.exchange(&request);
                    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
                    counter += 1;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let mut previous = 0;
        for index in 1..=duration.div_ceil(sample) {
            std::thread::sleep(Duration::from_secs(sample));
            let now = done.load(Ordering::Relaxed);
            let rate = (now - previous) as f64 / sample as f64;
            previous = now;
            let line = format!(
                "{{\"seconds\": {}, \"operations\": {now}, \"per_second\": {rate:.0}, \"rss_kib\": {}}}",
                index * sample,
                resident_kib()
            );
            if json {
                println!("{line}");
            } else {
                println!(
                    "{:>5} s: {now} operations, {rate:.0}/s in the last {sample} s, RSS {} MiB",
                    index * sample,
                    resident_kib() / 1024
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    node.shut_down();
}

/// Injects `transfers` per client into a node already running at `address`, from its first
/// `clients` accounts (their counters read first); transfers/s.
fn external_run(address: SocketAddr, clients: usize, transfers: u32) -> f64 {
    let accounts = accounts(clients.saturating_sub(5));
    let mut connection = Connection::open(address);
    let mut get = |path: &str| -> String {
        let (status, body) = connection
            .exchange(format!("GET {path} HTTP/1.1\r\nhost: {address}\r\n\r\n").as_bytes());
        assert!(status.starts_with("HTTP/1.1 200"), "{path}: {status}");
        serde_json::from_slice::<String>(&body).expect("a JSON string")
    };
    let branch = get("/chains/main/blocks/head/hash");
    let requests: Vec<Vec<Vec<u8>>> = (0..clients)
        .map(|client| {
            let from = &accounts[client];
            let to = &accounts[(client + 1) % accounts.len()];
            let path = format!(
                "/chains/main/blocks/head/context/contracts/{}/counter",
                from.public_key_hash.to_b58check()
            );
            let first: u64 = get(&path).parse::<u64>().expect("a counter") + 1;
            (first..first + u64::from(transfers))
                .map(|counter| injection(address, &branch, from, to, counter))
                .collect()
        })
        .collect();
    inject_all(address, &requests)
}

/// Posts each client's `requests` in turn over a connection of its own, the clients at once;
/// requests answered per second.
fn inject_all(address: SocketAddr, requests: &[Vec<Vec<u8>>]) -> f64 {
    let mut connections: Vec<Connection> =
        requests.iter().map(|_| Connection::open(address)).collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (connection, requests) in connections.iter_mut().zip(requests) {
            scope.spawn(move || {
                for request in requests {
                    let (status, body) = connection.exchange(request);
                    assert!(
                        status.starts_with("HTTP/1.1 200"),
                        "{status} {}",
                        String::from_utf8_lossy(&body)
                    );
                }
            });
        }
    });
    let count: usize = requests.iter().map(Vec::len).sum();
    count as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let options = options();
    if let Some((address, pid)) = options.external {
        let before = resident_kib_of(&pid.to_string());
        let rate = external_run(address, options.clients, options.transfers);
        let after = resident_kib_of(&pid.to_string());
        println!(
            "{{\"external\": true, \"clients\": {}, \"transfers_per_client\": {}, \"transfers_per_second\": {rate:.0}, \"node_rss_kib_before\": {before}, \"node_rss_kib_after\": {after}}}",
            options.clients, options.transfers
        );
        return;
    }
    if let Some(duration) = options.duration {
        load_test(options.clients, duration, options.sample, options.json);
        return;
    }
    let mut starts: Vec<f64> = (0..options.runs.max(5))
        .map(|_| start_milliseconds())
        .collect();
    let start = median(&mut starts);
    let mut rates: Vec<f64> = (0..options.runs)
        .map(|_| throughput_run(options.clients, options.transfers))
        .collect();
    let rates_text = format!("{rates:.0?}");
    let rate = median(&mut rates);
    let rss = resident_kib();
    let operations = options.clients as u64 * u64::from(options.transfers);
    if options.json {
        println!(
            "{{\"start_ms_median\": {start:.1}, \"clients\": {}, \"transfers_per_client\": {}, \"runs\": {}, \"transfers_per_second_median\": {rate:.0}, \"transfers_per_second\": {rates_text}, \"rss_kib_after\": {rss}, \"operations_last_run\": {operations}}}",
            options.clients, options.transfers, options.runs
        );
    } else {
        println!(
            "start to first answer: median {start:.1} ms; {} clients × {} transfers, a block each: median {rate:.0} confirmed transfers/s over {} runs {rates_text}; RSS {} MiB after {operations} operations",
            options.clients, options.transfers, options.runs, rss / 1024
        );
    }
}
