//! The node's HTTP/1.1 server: hyper on a current-thread tokio runtime. Connections are kept
//! alive, `TCP_NODELAY` is set (without it each keep-alive request waits ~40 ms on Nagle and
//! delayed ACKs: `tezos-node.md` §5), every answer carries CORS headers, and body size,
//! connection count, header and body read times have limits, so a slow or malformed client
//! holds only its own connection. The router runs on tokio's blocking pool under the chain's
//! lock, so a long request never stalls the accepting thread; injections go to one block-making
//! thread, which makes a block of those that wait together; a request whose handler panics
//! is answered 500 with an error list and the chain is put back at head's commit (the lock is
//! never left poisoned). `/monitor/heads/main` streams one header per line as blocks are baked;
//! with a block time, a timer bakes the mempool's operations.

use bytes::Bytes;
use http_body_util::channel::Channel;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::TcpListener;
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch, Notify, Semaphore};

use crate::block::Block;
use crate::chain::Chain;
use crate::rpc::{self, Request, Response, MONITOR_HEADS_PATH};

/// Most bytes of a request body (a batch of operations with their scripts, as JSON, stays well
/// below: an operation's data is at most 32 KiB).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Most connections served at once; further ones wait to be accepted.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's headers before its connection is closed
/// (a slowloris client holds one of [`MAX_CONNECTIONS`] for at most this long).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's body, once its headers are read; past it
/// the request is answered 408 and the connection closed.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Most operations in a block made of concurrent injections (the others wait for the next
/// block): bounds the time one block holds the chain, and stays below the manager pass's
/// `MAX_PREAPPLY_OPERATIONS`.
pub const MAX_BLOCK_OPERATIONS: usize = 256;

/// Heads buffered per `/monitor/heads/main` stream before the stream waits for its client.
const HEADS_STREAM_BUFFER: usize = 16;

type Body = Either<Full<Bytes>, Channel<Bytes, Infallible>>;

/// What the server reports of each block it bakes: the block and how long its request took.
pub type BlockObserver = dyn Fn(&Block, Duration) + Send + Sync;

struct Shared {
    chain: Mutex<Chain>,
    /// Where injections wait for the block maker ([`make_blocks`]); `None` once the server
    /// stops.
    injections: Mutex<Option<mpsc::Sender<Injection>>>,
    heads: watch::Sender<Arc<str>>,
    observer: Box<BlockObserver>,
}

/// An injected operation waiting for its block, and where its answer goes.
struct Injection {
    bytes: Vec<u8>,
    answer: oneshot::Sender<Response>,
}

impl Shared {
    /// The chain. A panic while it was held was caught and the chain recovered (see
    /// [`answer`]), so a poisoned lock holds a sound chain.
    fn chain(&self) -> MutexGuard<'_, Chain> {
        self.chain.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes one block of `batch` (its valid operations), and answers each injection once the
    /// block is made (or its operation refused).
    fn inject_batch(&self, batch: Vec<Injection>) {
        let started = Instant::now();
        let mut chain = self.chain();
        let before = chain.head().hash;
        let operations: Vec<&[u8]> = batch.iter().map(|injection| &injection.bytes[..]).collect();
        let answers: Vec<Response> =
            match guarded(&mut chain, |chain| chain.inject_all(&operations)) {
                Ok(results) => results
                    .into_iter()
                    .map(rpc::operations::injection_answer)
                    .collect(),
                Err(failure) => vec![failure; batch.len()],
            };
        self.announce(&chain, before, started.elapsed());
        drop(chain);
        for (injection, answer) in batch.into_iter().zip(answers) {
            let _ = injection.answer.send(answer);
        }
    }

    /// Reports head to the observer and the heads streams if it is no longer `before`. The
    /// header's JSON (a tenth of a block's cost: its hashes and signature in base58) is made only
    /// when a stream listens; a new stream reads head itself ([`heads_stream`]).
    fn announce(&self, chain: &Chain, before: kestrel_crypto::BlockHash, elapsed: Duration) {
        let head = chain.head();
        if head.hash != before {
            (self.observer)(head, elapsed);
            if self.heads.receiver_count() > 0 {
                self.heads
                    .send_replace(Arc::from(head.header_json(&chain.chain_id())));
            }
        }
    }
}

/// How a server runs beyond its defaults.
#[derive(Default)]
pub struct ServerOptions {
    /// Bake a block every so often from the mempool (`--block-time`); `None`: a block per
    /// injected operation.
    pub block_time: Option<Duration>,
    /// When asked to, the server stops, and [`serve_with`] returns the chain.
    pub stop: Option<Stop>,
}

/// A handle that stops a server from another thread (a signal handler).
#[derive(Clone, Default)]
pub struct Stop(Arc<Notify>);

impl Stop {
    /// Stops the server (once it runs, if it does not yet).
    pub fn stop(&self) {
        self.0.notify_one();
    }
}

/// Serves `chain` on `listener` until the process ends, calling `observer` for each block.
pub fn serve(
    listener: TcpListener,
    chain: Chain,
    observer: Box<BlockObserver>,
) -> std::io::Result<()> {
    serve_with(listener, chain, observer, ServerOptions::default()).map(drop)
}

/// Serves `chain` on `listener` as `options` say, calling `observer` for each block; returns
/// the chain once `options.stop` is notified.
pub fn serve_with(
    listener: TcpListener,
    mut chain: Chain,
    observer: Box<BlockObserver>,
    options: ServerOptions,
) -> std::io::Result<Chain> {
    listener.set_nonblocking(true)?;
    chain.hold_operations(options.block_time.is_some());
    let head = Arc::from(chain.head().header_json(&chain.chain_id()));
    let (heads, _) = watch::channel(head);
    let (injections, waiting) = mpsc::channel();
    let shared = Arc::new(Shared {
        chain: Mutex::new(chain),
        injections: Mutex::new(Some(injections)),
        heads,
        observer,
    });
    let maker = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("make-blocks".into())
            .spawn(move || make_blocks(&shared, &waiting))?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let stop = options.stop.unwrap_or_default().0;
    let failure = Arc::new(Mutex::new(None));
    runtime.block_on(async {
        if let Some(period) = options.block_time {
            tokio::spawn(bake_on_timer(shared.clone(), period));
        }
        let (accepting, stopping, failed) = (shared.clone(), stop.clone(), failure.clone());
        tokio::spawn(async move {
            if let Err(error) = accept_loop(listener, accepting).await {
                *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
                stopping.notify_one();
            }
        });
        stop.notified().await;
    });
    // Ends the connections' tasks and waits for a request still under the lock, then for the
    // block maker, whose queue closes.
    drop(runtime);
    shared
        .injections
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let _ = maker.join();
    if let Some(error) = failure
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        return Err(error);
    }
    let shared = Arc::try_unwrap(shared)
        .map_err(|_| std::io::Error::other("a request still holds the chain"))?;
    Ok(shared
        .chain
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner))
}

/// The block maker's loop: takes the injections waiting (at most [`MAX_BLOCK_OPERATIONS`]) and
/// makes a block of them, until the server stops. Injections that arrive while a block is being
/// made wait for the next: under load, concurrent clients' injections share a block. One thread
/// makes every block (a thread per request would each keep an allocator heap of its own).
fn make_blocks(shared: &Shared, waiting: &mpsc::Receiver<Injection>) {
    while let Ok(first) = waiting.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BLOCK_OPERATIONS {
            match waiting.try_recv() {
                Ok(injection) => batch.push(injection),
                Err(_) => break,
            }
        }
        shared.inject_batch(batch);
    }
}

/// Bakes the mempool's operations every `period`.
async fn bake_on_timer(shared: Arc<Shared>, period: Duration) {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let shared = shared.clone();
        let baked = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut chain = shared.chain();
            let before = chain.head().hash;
            let response = guarded(&mut chain, |chain| match chain.bake_pending() {
                Ok(_) => Response::json(String::new()),
                Err(error) => rpc::error::chain_error(&error),
            })
            .unwrap_or_else(|failure| failure);
            if response.status != 200 {
                eprintln!(
                    "kestrel node: cannot bake: {}",
                    String::from_utf8_lossy(&response.body)
                );
            }
            shared.announce(&chain, before, started.elapsed());
        })
        .await;
        if baked.is_err() {
            return;
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .map_err(std::io::Error::other)?;
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // A connection reset before it was accepted, or out of descriptors: go on.
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(shared, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

async fn answer(shared: Arc<Shared>, request: hyper::Request<Incoming>) -> hyper::Response<Body> {
    let method = request.method().clone();
    if method == Method::OPTIONS {
        return respond(
            StatusCode::NO_CONTENT,
            rpc::TEXT,
            Either::Left(Full::default()),
        );
    }
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    if method == Method::GET && path == MONITOR_HEADS_PATH {
        return heads_stream(&shared);
    }
    let collected = tokio::time::timeout(
        BODY_READ_TIMEOUT,
        Limited::new(request.into_body(), MAX_BODY_BYTES).collect(),
    )
    .await;
    let body = match collected {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(_)) => {
            return closing(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is larger than the node accepts (MAX_BODY_BYTES)",
            )
        }
        Err(_) => {
            return closing(
                StatusCode::REQUEST_TIMEOUT,
                "the request body took too long (BODY_READ_TIMEOUT)",
            )
        }
    };
    let request = Request {
        method: method.as_str(),
        path: &path,
        query: &query,
        body: &body,
    };
    if rpc::is_injection(&request) {
        return http_response(inject(shared, &body).await);
    }
    let routed = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut chain = shared.chain();
        let before = chain.head().hash;
        let request = Request {
            method: method.as_str(),
            path: &path,
            query: &query,
            body: &body,
        };
        let response = guarded(&mut chain, |chain| rpc::route(chain, &request))
            .unwrap_or_else(|failure| failure);
        shared.announce(&chain, before, started.elapsed());
        response
    })
    .await;
    http_response(
        routed.unwrap_or_else(|_| rpc::error::internal("the node failed on this request")),
    )
}

/// `POST /injection/operation`: the operation waits with the other injections for the block
/// maker ([`make_blocks`]); the answer comes once its block is made.
async fn inject(shared: Arc<Shared>, body: &[u8]) -> Response {
    let bytes = match rpc::operations::injected_bytes(body) {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let (answer, answered) = oneshot::channel();
    let sent = shared
        .injections
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .is_some_and(|waiting| waiting.send(Injection { bytes, answer }).is_ok());
    if !sent {
        return rpc::error::internal("the node is stopping");
    }
    answered
        .await
        .unwrap_or_else(|_| rpc::error::internal("the node failed on this request"))
}

fn http_response(response: Response) -> hyper::Response<Body> {
    let Response {
        status,
        content_type,
        body,
    } = response;
    respond(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        content_type,
        Either::Left(Full::new(Bytes::from(body))),
    )
}

/// Runs `handle` on `chain`; if it panics, puts the chain back at head's commit (whatever the
/// handler changed in memory is dropped) and gives the 500 answer with the panic's message.
fn guarded<T>(chain: &mut Chain, handle: impl FnOnce(&mut Chain) -> T) -> Result<T, Response> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| handle(chain))) {
        Ok(answer) => Ok(answer),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let recovered = match chain.recover() {
                Ok(()) => "the node's state is back at head".to_string(),
                Err(error) => format!("the node's state could not be restored: {error}"),
            };
            Err(rpc::error::internal(&format!(
                "the node failed on this request ({message}); {recovered}"
            )))
        }
    }
}

/// A text answer after which the connection is closed (the rest of its body is not read).
fn closing(status: StatusCode, message: &'static str) -> hyper::Response<Body> {
    let mut response = respond(
        status,
        rpc::TEXT,
        Either::Left(Full::new(Bytes::from_static(message.as_bytes()))),
    );
    response
        .headers_mut()
        .insert("connection", HeaderValue::from_static("close"));
    response
}

/// `/monitor/heads/main`: the head now, then each new head, one JSON object per line.
/// The stream subscribes first, then reads head under the chain's lock, so no head baked
/// meanwhile is missed; one announced in between is the same head, not sent twice.
fn heads_stream(shared: &Arc<Shared>) -> hyper::Response<Body> {
    let (mut sender, body) = Channel::new(HEADS_STREAM_BUFFER);
    let mut heads = shared.heads.subscribe();
    let shared = shared.clone();
    tokio::spawn(async move {
        let head = tokio::task::spawn_blocking(move || {
            let chain = shared.chain();
            Arc::<str>::from(chain.head().header_json(&chain.chain_id()))
        })
        .await;
        let Ok(mut last) = head else {
            return;
        };
        if sender
            .send_data(Bytes::from(format!("{last}\n")))
            .await
            .is_err()
        {
            return;
        }
        while heads.changed().await.is_ok() {
            let line = heads.borrow_and_update().clone();
            if line == last {
                continue;
            }
            if sender
                .send_data(Bytes::from(format!("{line}\n")))
                .await
                .is_err()
            {
                break;
            }
            last = line;
        }
    });
    respond(StatusCode::OK, rpc::JSON, Either::Right(body))
}

fn respond(status: StatusCode, content_type: &'static str, body: Body) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert("access-control-allow-origin", HeaderValue::from_static("*"));
    headers.insert(
        "access-control-allow-methods",
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        "access-control-allow-headers",
        HeaderValue::from_static("content-type"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{accounts, ChainConfig};

    #[test]
    fn a_panicking_handler_answers_500_and_leaves_the_chain_at_head() {
        let directory =
            std::env::temp_dir().join(format!("kestrel-node-test-guarded-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let mut chain = Chain::open(ChainConfig {
            directory: &directory,
            accounts: accounts(0),
            balance_mutez: 4_000_000_000_000,
            genesis_seconds: 1_700_000_000,
            liquidity_baking: None,
            keep_blocks: crate::DEFAULT_KEEP_BLOCKS,
        })
        .expect("a new chain");
        let bootstrap1 = chain.accounts()[0].clone();
        let bootstrap2 = kestrel_crypto::Destination::Implicit(chain.accounts()[1].public_key_hash);
        let before = chain.ledger().balance(&bootstrap2).expect("a balance");
        let transfer = bootstrap1
            .signed_transfer(
                &chain.head().hash.to_b58check(),
                &chain.accounts()[1].public_key_hash.to_b58check(),
                1,
                5,
            )
            .expect("an operation");
        chain.hold_operations(true);
        let response = guarded(&mut chain, |chain| -> Response {
            chain.inject(&transfer.encode()).expect("held");
            assert_eq!(chain.mempool().len(), 1);
            panic!("a bug");
        })
        .expect_err("the handler panics");
        assert_eq!(response.status, 500);
        assert_eq!(response.content_type, rpc::JSON);
        let body: serde_json::Value = serde_json::from_slice(&response.body).expect("JSON");
        assert_eq!(body[0]["id"], "failure");
        assert!(body[0]["msg"].as_str().is_some_and(|m| m.contains("a bug")));
        // The held transfer is gone: the next block does not include it.
        assert!(chain.mempool().is_empty());
        chain.bake_pending().expect("a block");
        assert!(chain.head().operations.is_empty());
        assert_eq!(
            chain.ledger().balance(&bootstrap2).expect("a balance"),
            before
        );
        // And the chain goes on: the same transfer is accepted.
        chain.inject(&transfer.encode()).expect("held");
        chain.bake_pending().expect("a block");
        assert_eq!(
            chain.ledger().balance(&bootstrap2).expect("a balance"),
            before + 5
        );
        drop(chain);
        let _ = std::fs::remove_dir_all(&directory);
    }
}
