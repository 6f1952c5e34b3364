//! The node's HTTP/1.1 server: hyper on a current-thread tokio runtime. Connections are kept
//! alive, `TCP_NODELAY` is set (without it each keep-alive request waits ~40 ms on Nagle and
//! delayed ACKs: `tezos-node.md` §5), every answer carries CORS headers, and body size,
//! connection count and header read time have limits. The router runs on tokio's blocking
//! pool under the chain's lock, so a long request never stalls the accepting thread;
//! `/monitor/heads/main` streams one header per line as blocks are baked.

use bytes::Bytes;
use http_body_util::channel::Channel;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Semaphore};

use crate::block::Block;
use crate::chain::Chain;
use crate::rpc::{self, Request, Response, MONITOR_HEADS_PATH};

/// Most bytes of a request body (a batch of operations with their scripts, as JSON, stays well
/// below: an operation's data is at most 32 KiB).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Most connections served at once; further ones wait to be accepted.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a client may take to send a request's headers before its connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Heads buffered per `/monitor/heads/main` stream before the stream waits for its client.
const HEADS_STREAM_BUFFER: usize = 16;

type Body = Either<Full<Bytes>, Channel<Bytes, Infallible>>;

/// What the server reports of each block it bakes: the block and how long its request took.
pub type BlockObserver = dyn Fn(&Block, Duration) + Send + Sync;

struct Shared {
    chain: Mutex<Chain>,
    heads: watch::Sender<Arc<str>>,
    observer: Box<BlockObserver>,
}

/// Serves `chain` on `listener` until the process ends, calling `observer` for each block.
pub fn serve(
    listener: TcpListener,
    chain: Chain,
    observer: Box<BlockObserver>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let head = Arc::from(chain.head().header_json(&chain.chain_id()));
    let (heads, _) = watch::channel(head);
    let shared = Arc::new(Shared {
        chain: Mutex::new(chain),
        heads,
        observer,
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    runtime.block_on(accept_loop(listener, shared))
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
    let body = match Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return respond(
                StatusCode::PAYLOAD_TOO_LARGE,
                rpc::TEXT,
                Either::Left(Full::new(Bytes::from_static(b"request body too large"))),
            )
        }
    };
    let routed = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let Ok(mut chain) = shared.chain.lock() else {
            return None;
        };
        let before = chain.head().hash;
        let response = rpc::route(
            &mut chain,
            &Request {
                method: method.as_str(),
                path: &path,
                query: &query,
                body: &body,
            },
        );
        let head = chain.head();
        if head.hash != before {
            (shared.observer)(head, started.elapsed());
            shared
                .heads
                .send_replace(Arc::from(head.header_json(&chain.chain_id())));
        }
        Some(response)
    })
    .await;
    match routed {
        Ok(Some(Response {
            status,
            content_type,
            body,
        })) => respond(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            content_type,
            Either::Left(Full::new(Bytes::from(body))),
        ),
        _ => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            rpc::TEXT,
            Either::Left(Full::new(Bytes::from_static(
                b"the node's state is unavailable",
            ))),
        ),
    }
}

/// `/monitor/heads/main`: the head now, then each new head, one JSON object per line.
fn heads_stream(shared: &Shared) -> hyper::Response<Body> {
    let (mut sender, body) = Channel::new(HEADS_STREAM_BUFFER);
    let mut heads = shared.heads.subscribe();
    tokio::spawn(async move {
        loop {
            let line = format!("{}\n", &**heads.borrow_and_update());
            if sender.send_data(Bytes::from(line)).await.is_err() || heads.changed().await.is_err()
            {
                break;
            }
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
