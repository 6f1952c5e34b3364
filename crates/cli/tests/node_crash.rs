//! `kestrel node --data-dir` killed with SIGKILL while operations are injected and heads are
//! streamed: no block that was announced (answered to an injection, or streamed on
//! `/monitor/heads/main`) is lost, and the reopened chain goes on. Three rounds, each killing the
//! node at a different moment of its injections.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

const BOOTSTRAP2: &str = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";
/// Each transfer's amount, mutez.
const AMOUNT: u64 = 1_000;

/// Starts `kestrel node` on a free port with its chain in `directory`; returns it and its
/// address.
fn start(directory: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["node", "--port", "0", "--json", "--data-dir"])
        .arg(directory)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("the node prints where it listens")
            .unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["event"] == "listening" {
            let url = event["url"].as_str().unwrap();
            break url.trim_start_matches("http://").to_string();
        }
    };
    // Its later lines (one a block) are read and dropped, so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, address)
}

/// One request on its own connection: (status, body).
fn request(address: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(address).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: node\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.get(9..12)?.parse().ok()?;
    let (_, body) = answer.split_once("\r\n\r\n")?;
    Some((status, body.to_string()))
}

fn get(address: &str, path: &str) -> Value {
    let (status, body) = request(address, "GET", path, "").unwrap();
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn head_level(address: &str) -> i64 {
    get(address, "/chains/main/blocks/head/header")["level"]
        .as_i64()
        .unwrap()
}

fn balance(address: &str) -> u64 {
    let path = format!("/chains/main/blocks/head/context/contracts/{BOOTSTRAP2}/balance");
    get(address, &path).as_str().unwrap().parse().unwrap()
}

/// The head's hash, if the node answers.
fn head_hash(address: &str) -> Option<String> {
    let (status, body) = request(address, "GET", "/chains/main/blocks/head/hash", "")?;
    let hash: Value = serde_json::from_str(&body).ok().filter(|_| status == 200)?;
    hash.as_str().map(str::to_string)
}

/// bootstrap1's transfer of [`AMOUNT`] to bootstrap2 with `counter`, signed, as the JSON body
/// of `/injection/operation`.
fn transfer(branch: &str, counter: u32) -> String {
    let operation = kestrel_node::accounts(0)[0]
        .signed_transfer(branch, BOOTSTRAP2, counter.into(), AMOUNT)
        .unwrap();
    format!("\"{}\"", hex::encode(operation.encode()))
}

/// Streams `/monitor/heads/main`, recording the highest level announced.
fn watch_heads(address: String, highest: Arc<AtomicI64>) {
    std::thread::spawn(move || {
        let Ok(mut stream) = TcpStream::connect(&address) else {
            return;
        };
        let request = "GET /monitor/heads/main HTTP/1.1\r\nhost: node\r\n\r\n";
        if stream.write_all(request.as_bytes()).is_err() {
            return;
        }
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            if let Ok(head) = serde_json::from_str::<Value>(&line) {
                if let Some(level) = head["level"].as_i64() {
                    highest.fetch_max(level, Ordering::SeqCst);
                }
            }
        }
    });
}

#[test]
fn a_killed_node_keeps_every_announced_block() {
    let directory =
        std::env::temp_dir().join(format!("kestrel-cli-node-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let (mut node, mut address) = start(&directory);
    let initial = balance(&address);
    // Blocks after level 2 each hold one transfer: the chain's state follows from its level.
    let mut level = head_level(&address);
    assert_eq!(level, 2);
    // Kill after this many answers in each round (the next injection is then in flight).
    for answers_before_kill in [5u32, 1, 12] {
        let announced = Arc::new(AtomicI64::new(0));
        watch_heads(address.clone(), announced.clone());
        let answered = Arc::new(AtomicI64::new(level));
        let count = Arc::new(AtomicU32::new(0));
        let injector = {
            let address = address.clone();
            let (answered, count) = (answered.clone(), count.clone());
            let first_counter = u32::try_from(level - 1).unwrap();
            std::thread::spawn(move || {
                for counter in first_counter.. {
                    // Branched on head: an operation outlives its branch by at most the
                    // operations' time to live.
                    let Some(branch) = head_hash(&address) else {
                        return;
                    };
                    let body = transfer(&branch, counter);
                    match request(&address, "POST", "/injection/operation", &body) {
                        Some((200, _)) => {
                            // Answered: its block, level counter + 2, was announced.
                            answered.fetch_max(i64::from(counter) + 2, Ordering::SeqCst);
                            count.fetch_add(1, Ordering::SeqCst);
                        }
                        _ => return,
                    }
                }
            })
        };
        while count.load(Ordering::SeqCst) < answers_before_kill {
            assert!(!injector.is_finished(), "an injection was refused");
            std::thread::sleep(Duration::from_millis(1));
        }
        node.kill().unwrap(); // SIGKILL
        node.wait().unwrap();
        injector.join().unwrap();
        let announced = announced
            .load(Ordering::SeqCst)
            .max(answered.load(Ordering::SeqCst));

        (node, address) = start(&directory);
        let address_now = address.clone();
        level = head_level(&address_now);
        assert!(level >= announced, "head {level} < announced {announced}");
        // At most the injection in flight went in beyond the announced blocks.
        assert!(
            level <= announced + 1,
            "head {level}, announced {announced}"
        );
        assert_eq!(
            balance(&address_now),
            initial + AMOUNT * u64::try_from(level - 2).unwrap()
        );
        // The reopened chain goes on from its head.
        let counter = u32::try_from(level - 1).unwrap();
        let branch = head_hash(&address_now).unwrap();
        let (status, body) = request(
            &address_now,
            "POST",
            "/injection/operation",
            &transfer(&branch, counter),
        )
        .unwrap();
        assert_eq!(status, 200, "{body}");
        level += 1;
        assert_eq!(head_level(&address_now), level);
    }
    node.kill().unwrap();
    node.wait().unwrap();
    let _ = std::fs::remove_dir_all(&directory);
}
