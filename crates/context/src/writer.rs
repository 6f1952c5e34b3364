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

/// Part buffers kept for reuse: the thread hands each one back once written, so that buffers
/// are allocated and freed on the store's thread only (freed on the writer's, they made the
/// allocator keep about 10 MB more resident over the 150,000-block replay).
const SPARE_BUFFERS_MAX: usize = 4;
/// Larger part buffers (a bulk load's) are freed rather than kept: the spare buffers hold at most
/// 1 MiB (a block's parts are 64-200 KiB).
const SPARE_BUFFER_MAX_BYTES: usize = 256 << 10;

/// The writing thread and the parts handed to it that it has not acknowledged yet.
pub(crate) struct PackWriter {
    parts: Option<Sender<(u64, Vec<u8>)>>,
    done: Receiver<(std::io::Result<()>, Vec<u8>)>,
    in_flight: usize,
    spare: Vec<Vec<u8>>,
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
                    let written = file.write_all_at(&bytes, offset);
                    if done_sent.send((written, bytes)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(PackWriter {
            parts: Some(parts),
            done,
            in_flight: 0,
            spare: Vec::new(),
            thread: Some(thread),
        })
    }

    /// Hands a copy of `bytes` to the thread, to be written at `offset`.
    pub(crate) fn submit(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        let mut part = self.spare.pop().unwrap_or_default();
        part.clear();
        part.extend_from_slice(bytes);
        let sent = self
            .parts
            .as_ref()
            .is_some_and(|parts| parts.send((offset, part)).is_ok());
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
            let written = match self.done.recv() {
                Ok((written, buffer)) => {
                    if self.spare.len() < SPARE_BUFFERS_MAX
                        && buffer.capacity() <= SPARE_BUFFER_MAX_BYTES
                    {
                        self.spare.push(buffer);
                    }
                    written
                }
                Err(_) => Err(std::io::Error::other("the pack writer thread stopped")),
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts handed over in any order land at their offsets; `wait` returns once all are written
    /// and buffers are reused.
    #[test]
    fn parts_land_at_their_offsets() {
        let path = std::env::temp_dir().join(format!("kestrel-writer-test-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut writer = PackWriter::start(&file).unwrap();
        let mut expected = vec![0u8; 200_000];
        for round in 0..3u8 {
            for (start, length) in [(150_000usize, 50_000usize), (0, 70_000), (70_000, 80_000)] {
                let bytes: Vec<u8> = (0..length).map(|i| (i as u8) ^ round ^ 0x5a).collect();
                expected[start..start + length].copy_from_slice(&bytes);
                writer.submit(start as u64, &bytes).unwrap();
            }
            writer.wait().unwrap();
            let mut actual = vec![0u8; expected.len()];
            file.read_exact_at(&mut actual, 0).unwrap();
            assert!(actual == expected, "round {round}");
        }
        assert!(!writer.spare.is_empty());
        drop(writer);
        std::fs::remove_file(&path).unwrap();
    }
}
