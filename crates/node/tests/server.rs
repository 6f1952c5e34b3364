//! The HTTP server against clients that misbehave: a malformed request, an oversized body, a
//! client that sends half its headers or half its body and stalls (slowloris) — each is
//! answered or held on its own connection while another client is served; and a held block
//! time bakes the mempool on a timer.

mod support;

use kestrel_node::server::{self, ServerOptions, Stop, MAX_BODY_BYTES};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// How long a test waits for an answer before it fails (it never measures time).
const ANSWER_WAIT: Duration = Duration::from_secs(20);

fn start(scratch: &support::Scratch, options: ServerOptions) -> SocketAddr {
    let chain = support::new_chain_in(scratch);
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    std::thread::spawn(move || server::serve_with(listener, chain, Box::new(|_, _| {}), options));
    address
}

fn connect(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).expect("the node accepts");
    stream
        .set_read_timeout(Some(ANSWER_WAIT))
        .expect("a read timeout");
    stream
}

/// Sends `request` on a new connection and reads the answer until the server closes it.
fn exchange(address: SocketAddr, request: &[u8]) -> String {
    let mut stream = connect(address);
    stream.write_all(request).expect("sent");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// A second, well-behaved client: `GET path` answers 200.
fn get(address: SocketAddr, path: &str) -> String {
    let answer = exchange(
        address,
        format!("GET {path} HTTP/1.1\r\nhost: node\r\nconnection: close\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

#[test]
fn misbehaving_clients_do_not_block_others() {
    let scratch = support::Scratch::new("server-misbehaving");
    let address = start(&scratch, ServerOptions::default());

    // Slowloris: half the headers, then nothing; and a body promised but half sent.
    let mut half_headers = connect(address);
    half_headers
        .write_all(b"GET /version HTTP/1.1\r\nhost: node\r\n")
        .expect("sent");
    let mut half_body = connect(address);
    half_body
        .write_all(
            b"POST /injection/operation HTTP/1.1\r\nhost: node\r\ncontent-length: 100\r\n\r\n\"00",
        )
        .expect("sent");
    get(address, "/version");
    get(address, "/chains/main/blocks/head/header");

    // Malformed: 400, and the node goes on.
    let answer = exchange(address, b"NOT HTTP AT ALL\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let answer = exchange(
        address,
        b"POST /injection/operation HTTP/1.1\r\nhost: node\r\nconnection: close\r\ncontent-length: 4\r\n\r\n[1,]",
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    get(address, "/version");

    // Oversized: a body past the limit is refused with 413.
    let mut oversized = connect(address);
    let length = MAX_BODY_BYTES + 1;
    oversized
        .write_all(
            format!("POST /injection/operation HTTP/1.1\r\nhost: node\r\ncontent-length: {length}\r\n\r\n")
                .as_bytes(),
        )
        .expect("sent");
    // The server may answer and close before the whole body is written.
    let _ = oversized.write_all(&vec![b' '; length]);
    let mut answer = Vec::new();
    let _ = oversized.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    get(address, "/version");

    // An unknown path: 404, CORS headers as everywhere.
    let answer = exchange(
        address,
        b"GET /nope HTTP/1.1\r\nhost: node\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(
        answer.contains("access-control-allow-origin: *"),
        "{answer}"
    );

    // The stalled clients are still connected and still not answered.
    half_headers
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("a read timeout");
    let mut byte = [0; 1];
    assert!(matches!(half_headers.read(&mut byte), Err(_) | Ok(0)));
    drop(half_body);
}

#[test]
fn a_block_time_bakes_the_mempool_on_a_timer() {
    let scratch = support::Scratch::new("server-block-time");
    let stop = Stop::default();
    let address = start(
        &scratch,
        ServerOptions {
            block_time: Some(Duration::from_millis(200)),
            stop: Some(stop.clone()),
        },
    );
    // Blocks come without operations; wait for one past the three of a new chain.
    let mut level = 2;
    for _ in 0..200 {
        let answer = get(address, "/chains/main/blocks/head/header");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let header: serde_json::Value = serde_json::from_str(body).expect("JSON");
        level = header["level"].as_i64().expect("a level");
        if level > 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(level > 2, "no block was baked on the timer");
    stop.stop();
}

#[test]
fn the_heads_stream_sends_head_then_each_new_head() {
    let scratch = support::Scratch::new("server-heads");
    let address = start(&scratch, ServerOptions::default());
    let mut stream = connect(address);
    stream
        .write_all(b"GET /monitor/heads/main HTTP/1.1\r\nhost: node\r\n\r\n")
        .expect("sent");
    let mut reader = std::io::BufReader::new(stream);
    let mut levels = Vec::new();
    let mut mined = false;
    let mut line = String::new();
    while levels.len() < 3 {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut reader, &mut line).expect("a line") > 0,
            "the stream ended"
        );
        // Chunk sizes and headers are skipped: only JSON lines count.
        let parsed = serde_json::from_str::<serde_json::Value>(line.trim());
        if let Ok(head) = parsed.as_ref().map(|value| value.as_object()) {
            let Some(head) = head else { continue };
            levels.push(head["level"].as_i64().expect("a level"));
            if !mined {
                mined = true;
                for _ in 0..2 {
                    let answer = exchange(
                        address,
                        b"POST /kestrel/mine HTTP/1.1\r\nhost: node\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
                    );
                    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
                }
            }
        }
    }
    assert_eq!(levels, [2, 3, 4]);
}

/// Sends `request` on a keep-alive connection; returns the answer's status line and body.
fn exchange_kept(reader: &mut std::io::BufReader<TcpStream>, request: &[u8]) -> (String, String) {
    use std::io::BufRead;
    reader.get_mut().write_all(request).expect("sent");
    let mut status = String::new();
    reader.read_line(&mut status).expect("a status line");
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a header");
        if line.trim().is_empty() {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("a body");
    (status, String::from_utf8(body).expect("UTF-8"))
}

/// Head's block hash, asked on a connection of its own.
fn head_hash(address: SocketAddr) -> String {
    let answer = get(address, "/chains/main/blocks/head/hash");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str::<String>(body).expect("a hash")
}

#[test]
fn concurrent_injections_are_each_included_once_and_answered_after_their_block() {
    const TRANSFERS: u64 = 12;
    let scratch = support::Scratch::new("server-concurrent");
    let address = start(&scratch, ServerOptions::default());
    let accounts = kestrel_node::accounts(0);
    let answered: Vec<Vec<String>> = std::thread::scope(|scope| {
        let clients: Vec<_> = accounts
            .iter()
            .enumerate()
            .map(|(index, from)| {
                let to = &accounts[(index + 1) % accounts.len()];
                scope.spawn(move || {
                    let mut reader = std::io::BufReader::new(connect(address));
                    (1..=TRANSFERS)
                        .map(|counter| {
                            // Branched on head as it is now: the others' blocks in between stay
                            // within the operations' time to live.
                            let branch = head_hash(address);
                            let operation = from
                                .signed_transfer(
                                    &branch,
                                    &to.public_key_hash.to_b58check(),
                                    counter,
                                    1,
                                )
                                .expect("an operation");
                            let body = format!("\"{}\"", hex::encode(operation.encode()));
                            let (status, answer) = exchange_kept(
                                &mut reader,
                                format!(
                                    "POST /injection/operation HTTP/1.1\r\nhost: node\r\ncontent-length: {}\r\n\r\n{body}",
                                    body.len()
                                )
                                .as_bytes(),
                            );
                            assert!(status.starts_with("HTTP/1.1 200"), "{status} {answer}");
                            let hash: String = serde_json::from_str(&answer).expect("a hash");
                            hash
                        })
                        .collect()
                })
            })
            .collect();
        clients
            .into_iter()
            .map(|client| client.join().expect("a client"))
            .collect()
    });
    let mut answered: Vec<String> = answered.into_iter().flatten().collect();
    answered.sort();
    let head = get(address, "/chains/main/blocks/head/header");
    let body = head.split("\r\n\r\n").nth(1).unwrap_or_default();
    let level = serde_json::from_str::<serde_json::Value>(body).expect("JSON")["level"]
        .as_i64()
        .expect("a level");
    let mut included = Vec::new();
    for block in 3..=level {
        let answer = get(
            address,
            &format!("/chains/main/blocks/{block}/operation_hashes"),
        );
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let hashes: Vec<Vec<String>> = serde_json::from_str(body).expect("JSON");
        assert!(!hashes[3].is_empty(), "block {block} includes no operation");
        included.extend(hashes[3].iter().cloned());
    }
    included.sort();
    assert_eq!(included, answered);
    assert_eq!(included.len(), accounts.len() * TRANSFERS as usize);
}
