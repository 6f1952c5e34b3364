//! A thread that writes parts of a commit to the pack while the commit goes on hashing.
//!
//! A commit hashes its new objects level by level (children before parents) and encodes each
//! level once hashed; the bytes of the levels done so far are handed to a [`PackWriter`], whose
//! thread `pwrite`s them at their offsets while the commit hashes and encodes the next levels.
//! The copy into new page-cache pages that the `pwrite` does is the larger half of a commit when
//! the VM's free memory is cold (BENCHMARKS.md, "Session 6"). The commit waits for every part
//! ([`PackWriter::wait`]) before it returns, so a returned commit's bytes are all in the kernel,
//! as with one `pwrite`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// The writing thread and the parts handed to it that it has not acknowledged yet.
pub(crate) struct PackWriter {
    parts: Option<Sender<(u64, Vec<u8>)>>,
    done: Receiver<std::io::Result<()>>,
    in_flight: usize,
    thread: Option<JoinHandle<()>>,
}

impl PackWriter {
    /// Starts the thread on a second handle of `file`.
    pub(crate) fn start(file: &File) -> std::io::Result<PackWriter> {
        let file = file.try_clone()?;
        let (parts, parts_received) = channel::<(u64, Vec<u8>)>();
        let (done_sent, done) = channel();
        let thread = std::thread::Builder::new()
            .name("pack-writer".into())
            .spawn(move || {
                for (offset, bytes) in parts_received {
                    if done_sent.send(file.write_all_at(&bytes, offset)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(PackWriter {
            parts: Some(parts),
            done,
            in_flight: 0,
            thread: Some(thread),
        })
    }

    /// Hands `bytes` to the thread, to be written at `offset`.
    pub(crate) fn submit(&mut self, offset: u64, bytes: Vec<u8>) -> std::io::Result<()> {
        let sent = self
            .parts
            .as_ref()
            .is_some_and(|parts| parts.send((offset, bytes)).is_ok());
        if !sent {
            return Err(std::io::Error::other("the pack writer thread stopped"));
        }
        self.in_flight += 1;
        Ok(())
    }

    /// Waits until every part handed over is written; the first error, if any.
    pub(crate) fn wait(&mut self) -> std::io::Result<()> {
        let mut result = Ok(());
        while self.in_flight > 0 {
            self.in_flight -= 1;
            let written = self
                .done
                .recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("the pack writer thread stopped")));
            if result.is_ok() {
                result = written;
            }
        }
        result
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.parts = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
