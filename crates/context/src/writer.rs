//! A thread that writes parts of a commit to the pack while the commit goes on hashing.
//!
//! A commit hashes its new objects level by level (children before parents) and encodes each
//! level once hashed; the bytes of the levels done so far are handed to a [`PackWriter`], whose
//! thread `pwrite`s them at their offsets while the commit hashes and encodes the next levels.
//! The copy into new page-cache pages that the `pwrite` does is the larger half of a commit when
//! the VM's free memory is cold (BENCHMARKS.md, "Session 6"). The commit waits for every part
//! ([`PackWriter::wait`]) before it returns, so a returned commit's bytes are all in the kernel,
//! as with one `pwrite`.
//!
//! The thread also writes zeros ahead of the pack's end ([`PackWriter::reserve`]), one whole
//! aligned [`RESERVE_CHUNK_BYTES`] chunk at a time, so that the kernel caches the pack in large
//! folios (ext4 sizes a new folio by the write that creates it) instead of the single pages that
//! unaligned appends of a few kilobytes get. The appends then copy into folios that exist, and the
//! page-cache lookup every object read does (`xas_load`, `filemap_get_read_batch`) stops a level
//! higher in a shallower tree and touches fewer folios (BENCHMARKS.md, "Session 9"). A reader
//! never sees the zeros (offsets come from records written before them), and a reopen cuts them
//! off as a torn tail (tag 0 is no object).

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

/// The size and alignment of a zero-filled range written ahead of the pack's end: 64 pages, an
/// order-6 folio, which fills one slot of the page cache's tree one level above the pages. 2 MiB
/// chunks (the largest folio) made a commit wait behind the zero write about every tenth block
/// (the allocation of 2 MiB of contiguous memory is slow once the page cache fills memory).
pub(crate) const RESERVE_CHUNK_BYTES: u64 = 256 << 10;

/// The bytes of a reserved chunk. In `.bss`: never written, its pages all map the kernel's
/// shared zero page, so it takes no resident memory of its own.
static ZEROS: [u8; RESERVE_CHUNK_BYTES as usize] = [0; RESERVE_CHUNK_BYTES as usize];

/// What the thread is asked to do, in order.
enum Job {
    /// Write these bytes at this offset.
    Write(u64, Vec<u8>),
    /// Write [`RESERVE_CHUNK_BYTES`] zeros at this offset.
    Reserve(u64),
}

/// The writing thread and the parts handed to it that it has not acknowledged yet.
pub(crate) struct PackWriter {
    parts: Option<Sender<Job>>,
    done: Receiver<(std::io::Result<()>, Option<Vec<u8>>)>,
    in_flight: usize,
    spare: Vec<Vec<u8>>,
    thread: Option<JoinHandle<()>>,
}

impl PackWriter {
    /// Starts the thread on a second handle of `file`.
    pub(crate) fn start(file: &File) -> std::io::Result<PackWriter> {
        let file = file.try_clone()?;
        let (parts, parts_received) = channel::<Job>();
        let (done_sent, done) = channel();
        let thread = std::thread::Builder::new()
            .name("pack-writer".into())
            .spawn(move || {
                for job in parts_received {
                    let done = match job {
                        Job::Write(offset, bytes) => {
                            (file.write_all_at(&bytes, offset), Some(bytes))
                        }
                        Job::Reserve(offset) => (file.write_all_at(&ZEROS, offset), None),
                    };
                    if done_sent.send(done).is_err() {
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
        self.send(Job::Write(offset, part))
    }

    /// Has the thread write [`RESERVE_CHUNK_BYTES`] zeros at `offset`, a multiple of them, after
    /// everything handed over before. The caller must not hand over bytes for that range before
    /// this call.
    pub(crate) fn reserve(&mut self, offset: u64) -> std::io::Result<()> {
        debug_assert!(offset.is_multiple_of(RESERVE_CHUNK_BYTES));
        self.send(Job::Reserve(offset))
    }

    fn send(&mut self, job: Job) -> std::io::Result<()> {
        let sent = self
            .parts
            .as_ref()
            .is_some_and(|parts| parts.send(job).is_ok());
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
                    if let Some(buffer) = buffer {
                        if self.spare.len() < SPARE_BUFFERS_MAX
                            && buffer.capacity() <= SPARE_BUFFER_MAX_BYTES
                        {
                            self.spare.push(buffer);
                        }
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

    /// An empty file for one test, readable and writable, and its path.
    fn scratch_file(name: &str) -> (std::path::PathBuf, File) {
        let path =
            std::env::temp_dir().join(format!("kestrel-writer-{name}-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        (path, file)
    }

    /// Parts handed over in any order land at their offsets; `wait` returns once all are written
    /// and buffers are reused.
    #[test]
    fn parts_land_at_their_offsets() {
        let (path, file) = scratch_file("parts");
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

    /// A chunk reserved before parts are handed over for its range is written first: the parts
    /// stay, the rest of the chunk is zeros.
    #[test]
    fn a_reserved_chunk_is_written_before_the_parts_after_it() {
        let (path, file) = scratch_file("reserve");
        let mut writer = PackWriter::start(&file).unwrap();
        let chunk = RESERVE_CHUNK_BYTES as usize;
        file.write_all_at(&vec![0xee; chunk * 2], 0).unwrap();
        writer.reserve(0).unwrap();
        writer.submit(100, &[7; 1000]).unwrap();
        writer.reserve(RESERVE_CHUNK_BYTES).unwrap();
        writer.submit(RESERVE_CHUNK_BYTES - 10, &[9; 20]).unwrap();
        writer.wait().unwrap();
        let mut actual = vec![0u8; chunk * 2];
        file.read_exact_at(&mut actual, 0).unwrap();
        let mut expected = vec![0u8; chunk * 2];
        expected[100..1100].fill(7);
        expected[chunk - 10..chunk + 10].fill(9);
        assert!(actual == expected);
        drop(writer);
        std::fs::remove_file(&path).unwrap();
    }
}
