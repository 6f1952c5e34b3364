//! The stage's verify pool: ed25519 signature checks of a batch of transactions, spread over
//! worker threads that the pool owns (ARCHITECTURE.md names it) plus the calling thread.
//!
//! Each signature is checked with `verify_strict`, the check Agave's sigverify makes
//! (`solana-signature` `verify`). The batch equation of `ed25519-dalek` is not used: it is
//! cofactorless with coefficients derived from the batch itself, so a signature whose R carries a
//! small-order component passes it for one coefficient in eight, which a sender can grind for; the
//! stage would then accept transactions Agave rejects.
//!
//! Packets are copied into a job's buffer (reused from call to call) for the workers, which frame
//! each one again (a few tens of nanoseconds beside tens of microseconds of verification).

use kestrel_txview::{verify_signatures, UnsanitizedTransactionView};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// Packets for one worker and its answers.
#[derive(Default)]
struct Job {
    /// Index of the first packet in the caller's batch.
    start: usize,
    bytes: Vec<u8>,
    ends: Vec<usize>,
    results: Vec<bool>,
}

/// Whether every signature of the transaction in `packet` verifies.
fn verify_packet(packet: &[u8]) -> bool {
    UnsanitizedTransactionView::try_new_unsanitized(packet)
        .is_ok_and(|view| verify_signatures(&view).is_ok())
}

fn run_job(job: &mut Job) {
    job.results.clear();
    let mut start = 0;
    for &end in &job.ends {
        job.results.push(verify_packet(&job.bytes[start..end]));
        start = end;
    }
}

/// Worker threads checking signatures.
pub(crate) struct VerifyPool {
    senders: Vec<Sender<Job>>,
    done: Receiver<Job>,
    workers: Vec<JoinHandle<()>>,
    spare: Vec<Job>,
}

impl VerifyPool {
    /// A pool of `threads` workers (0: the calling thread does all the work).
    pub(crate) fn new(threads: usize) -> Self {
        let (done_sender, done) = channel::<Job>();
        let mut senders = Vec::with_capacity(threads);
        let mut workers = Vec::with_capacity(threads);
        for index in 0..threads {
            let (sender, receiver) = channel::<Job>();
            let done_sender = done_sender.clone();
            let worker = std::thread::Builder::new()
                .name(format!("kestrel-verify-{index}"))
                .spawn(move || {
                    while let Ok(mut job) = receiver.recv() {
                        run_job(&mut job);
                        if done_sender.send(job).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawning a verify thread");
            senders.push(sender);
            workers.push(worker);
        }
        Self {
            senders,
            done,
            workers,
            spare: Vec::new(),
        }
    }

    /// Checks every packet's signatures; `results[i]` tells packet `i`'s verdict.
    pub(crate) fn verify(&mut self, packets: &[&[u8]], results: &mut Vec<bool>) {
        results.clear();
        results.resize(packets.len(), false);
        let parts = self.senders.len() + 1;
        let chunk = packets.len().div_ceil(parts).max(1);
        let mut sent = 0;
        for (index, sender) in self.senders.iter().enumerate() {
            let start = chunk * (index + 1);
            if start >= packets.len() {
                break;
            }
            let end = (start + chunk).min(packets.len());
            let mut job = self.spare.pop().unwrap_or_default();
            job.start = start;
            job.bytes.clear();
            job.ends.clear();
            for packet in &packets[start..end] {
                job.bytes.extend_from_slice(packet);
                job.ends.push(job.bytes.len());
            }
            sender.send(job).expect("a verify thread stopped");
            sent += 1;
        }
        for (result, packet) in results.iter_mut().zip(&packets[..chunk.min(packets.len())]) {
            *result = verify_packet(packet);
        }
        for _ in 0..sent {
            let job = self.done.recv().expect("a verify thread stopped");
            results[job.start..job.start + job.results.len()].copy_from_slice(&job.results);
            self.spare.push(job);
        }
    }
}

impl Drop for VerifyPool {
    fn drop(&mut self) {
        // Closing the job channels ends the workers' loops.
        self.senders.clear();
        for worker in self.workers.drain(..) {
            // A worker that panicked already reported it; nothing more to do here.
            let _ = worker.join();
        }
    }
}
