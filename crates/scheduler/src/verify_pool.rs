//! The stage's verify pool: ed25519 signature checks of a round of transactions, spread over
//! worker threads that the pool owns (ARCHITECTURE.md names it) plus the calling thread.
//!
//! Each signature is checked with `verify_strict`, the check Agave's sigverify makes
//! (`solana-signature` `verify`). The batch equation of `ed25519-dalek` is not used: it is
//! cofactorless with coefficients derived from the batch itself, so a signature whose R carries a
//! small-order component passes it for one coefficient in eight, which a sender can grind for; the
//! stage would then accept transactions Agave rejects.
//!
//! Work is handed out in chunks of [`CHUNK_PACKETS`] packets through one queue, so that:
//! - verification overlaps the caller's cheap checks: a chunk is queued as soon as it is full, and
//!   the workers start on it while the caller prepares the next packets;
//! - the load balances itself: whichever thread is free takes the next chunk (on a shared host a
//!   thread that loses its core for a while takes fewer), and the caller, done preparing, takes
//!   chunks too; at the end at most one chunk's work is left on one thread while another idles.
//!
//! Each thread keeps its own [`KeyCache`], so a payer signing many transactions has its key
//! decompressed about once per thread and round of cache misses, not once per signature.
//!
//! Packets are copied into a chunk's buffer (chunks are reused from round to round) for the
//! workers, which frame each one again (a few tens of nanoseconds beside tens of microseconds of
//! verification).

use kestrel_txview::{verify_signatures_cached, KeyCache, UnsanitizedTransactionView};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Packets per chunk: about a millisecond of checks, small enough that the last chunk leaves
/// little imbalance, large enough that the queue's lock is taken rarely.
const CHUNK_PACKETS: usize = 16;

/// How long the caller waits for a checked chunk before it looks whether a worker stopped.
const WORKER_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Packets for one thread and its answers.
#[derive(Default)]
struct Chunk {
    /// Position of the chunk's first packet in the round.
    start: usize,
    bytes: Vec<u8>,
    ends: Vec<usize>,
    results: Vec<bool>,
}

impl Chunk {
    fn run(&mut self, cache: &mut KeyCache) {
        self.results.clear();
        let mut start = 0;
        for &end in &self.ends {
            self.results
                .push(verify_packet(&self.bytes[start..end], cache));
            start = end;
        }
    }
}

/// Whether every signature of the transaction in `packet` verifies.
fn verify_packet(packet: &[u8], cache: &mut KeyCache) -> bool {
    UnsanitizedTransactionView::try_new_unsanitized(packet)
        .is_ok_and(|view| verify_signatures_cached(&view, cache).is_ok())
}

/// What the threads share, under one lock.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<Chunk>,
    checked: Vec<Chunk>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a chunk is queued or the pool closes.
    work: Condvar,
    /// Signalled when a chunk is checked.
    checked: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A worker panics only inside `verify_strict`'s callers, never while holding the lock.
        self.queue
            .lock()
            .expect("the verify queue's lock is never poisoned")
    }
}

fn work(shared: &Shared) {
    let mut cache = KeyCache::default();
    let mut queue = shared.lock();
    loop {
        if let Some(mut chunk) = queue.waiting.pop_front() {
            drop(queue);
            chunk.run(&mut cache);
            queue = shared.lock();
            queue.checked.push(chunk);
            shared.checked.notify_one();
        } else if queue.closed {
            return;
        } else {
            queue = shared
                .work
                .wait(queue)
                .expect("the verify queue's lock is never poisoned");
        }
    }
}

/// Worker threads checking signatures.
pub(crate) struct VerifyPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// The chunk the caller is filling.
    filling: Chunk,
    /// Packets pushed this round.
    pushed: usize,
    /// Chunks queued this round.
    queued: usize,
    spare: Vec<Chunk>,
    cache: KeyCache,
}

impl VerifyPool {
    /// A pool of `threads` workers (0: the calling thread does all the work).
    pub(crate) fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared::default());
        let workers = (0..threads)
            .map(|index| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("kestrel-verify-{index}"))
                    .spawn(move || work(&shared))
                    .expect("spawning a verify thread")
            })
            .collect();
        Self {
            shared,
            workers,
            filling: Chunk::default(),
            pushed: 0,
            queued: 0,
            spare: Vec::new(),
            cache: KeyCache::default(),
        }
    }

    /// Adds `packet` to the round; its verdict comes out of [`Self::finish`] at the position of
    /// the push.
    pub(crate) fn push(&mut self, packet: &[u8]) {
        if self.filling.ends.is_empty() {
            self.filling.start = self.pushed;
        }
        self.filling.bytes.extend_from_slice(packet);
        self.filling.ends.push(self.filling.bytes.len());
        self.pushed += 1;
        if self.filling.ends.len() == CHUNK_PACKETS {
            self.queue_filling();
        }
    }

    fn queue_filling(&mut self) {
        let mut next = self.spare.pop().unwrap_or_default();
        next.bytes.clear();
        next.ends.clear();
        let chunk = core::mem::replace(&mut self.filling, next);
        self.shared.lock().waiting.push_back(chunk);
        self.shared.work.notify_one();
        self.queued += 1;
    }

    /// Checks the round's packets; `results[i]` tells the verdict of the `i`-th pushed packet.
    /// The next push starts a new round.
    pub(crate) fn finish(&mut self, results: &mut Vec<bool>) {
        if !self.filling.ends.is_empty() {
            self.queue_filling();
        }
        results.clear();
        results.resize(self.pushed, false);
        let mut collected = 0;
        let mut queue = self.shared.lock();
        while collected < self.queued {
            if let Some(mut chunk) = queue.waiting.pop_front() {
                drop(queue);
                chunk.run(&mut self.cache);
                queue = self.shared.lock();
                queue.checked.push(chunk);
            }
            for chunk in queue.checked.drain(..) {
                results[chunk.start..chunk.start + chunk.results.len()]
                    .copy_from_slice(&chunk.results);
                self.spare.push(chunk);
                collected += 1;
            }
            if collected < self.queued && queue.waiting.is_empty() {
                let timeout;
                (queue, timeout) = self
                    .shared
                    .checked
                    .wait_timeout(queue, WORKER_CHECK_INTERVAL)
                    .expect("the verify queue's lock is never poisoned");
                // A worker that stopped (a panic) would never hand its chunk back.
                assert!(
                    !timeout.timed_out() || !self.workers.iter().any(JoinHandle::is_finished),
                    "a verify thread stopped"
                );
            }
        }
        drop(queue);
        self.pushed = 0;
        self.queued = 0;
    }
}

impl Drop for VerifyPool {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_all();
        for worker in self.workers.drain(..) {
            // A worker that panicked already reported it; nothing more to do here.
            let _ = worker.join();
        }
    }
}
