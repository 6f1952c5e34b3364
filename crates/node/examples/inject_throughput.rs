//! Raw injection throughput: a node in this process on a loopback port, then N transfers signed
//! beforehand, posted to `/injection/operation` one after another over one keep-alive connection
//! (each answer comes after its block is baked). Prints confirmed transfers per second and the
//! process's resident memory after them (BENCHMARKS.md).
//!
//! `cargo run --release -p kestrel-node --example inject_throughput -- [transfers]`

use kestrel_crypto::SecretKey;
use kestrel_node::{accounts, server, Chain, ChainConfig};
use kestrel_protocol::Operation;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

const BOOTSTRAP1_SECRET: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
const BOOTSTRAP1: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
const BOOTSTRAP2: &str = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";

fn main() {
    let transfers: u32 = std::env::args()
        .nth(1)
        .and_then(|text| text.parse().ok())
        .unwrap_or(2_000);
    let directory =
        std::env::temp_dir().join(format!("kestrel-node-throughput-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let chain = Chain::open(ChainConfig {
        directory: &directory,
        accounts: accounts(0),
        balance_mutez: 4_000_000_000_000,
        genesis_seconds: 1_700_000_000,
        liquidity_baking: None,
    })
    .expect("a new chain");
    let branch = chain.head().hash.to_b58check();
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    std::thread::spawn(move || server::serve(listener, chain, Box::new(|_, _| {})));

    let key = SecretKey::from_b58check(BOOTSTRAP1_SECRET).expect("a key");
    let requests: Vec<Vec<u8>> = (1..=transfers)
        .map(|counter| {
            let mut operation = Operation::from_json_str(&format!(
                r#"{{"branch": "{branch}", "contents": [{{"kind": "transaction",
                "source": "{BOOTSTRAP1}", "fee": "1000", "counter": "{counter}",
                "gas_limit": "2000", "storage_limit": "0", "amount": "1",
                "destination": "{BOOTSTRAP2}"}}]}}"#
            ))
            .expect("an operation");
            operation.signature = Some(key.sign(&operation.signing_message()));
            let body = format!("\"{}\"", hex::encode(operation.encode()));
            format!(
                "POST /injection/operation HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        })
        .collect();

    let stream = TcpStream::connect(address).expect("the node accepts");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    let started = Instant::now();
    for request in &requests {
        writer.write_all(request).expect("sent");
        let mut length = 0;
        let mut status = String::new();
        reader.read_line(&mut status).expect("a status line");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a header");
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("a body");
    }
    let elapsed = started.elapsed();
    let resident = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .map(str::to_string)
        })
        .unwrap_or_default();
    println!(
        "{transfers} transfers, one block each, in {:.3} s: {:.0} confirmed transfers/s; {resident}",
        elapsed.as_secs_f64(),
        f64::from(transfers) / elapsed.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&directory);
}
