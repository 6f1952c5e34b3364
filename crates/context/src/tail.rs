//! Page-cache pages past the pack's end, made resident before a commit writes them.
//!
//! A commit appends its objects with one `pwrite`, which copies them into page-cache pages the
//! kernel allocates for the occasion. On a virtual machine whose free memory the host has taken
//! back, the first touch of such a page costs several times the copy: `copy_folio_from_iter_atomic`
//! under the commit's `pwrite` was the largest single cost of a replayed block (BENCHMARKS.md,
//! "Session 6 (pack tail)"). A [`TailPrefaulter`] runs one background thread that writes zeros up to
//! [`PREFAULT_AHEAD_BYTES`] past the end of the pack, so the commit overwrites pages that are
//! already resident and the allocation happens on the other core. It is the idea behind databases
//! that zero their log files ahead of use (PostgreSQL's `wal_init_zero`).
//!
//! Protocol: before it writes `[end, new_end)`, the store calls [`TailPrefaulter::begin_append`]
//! with `new_end`; the call waits while a zero write overlaps that range, then records `new_end`.
//! The thread only starts zero writes at or past the recorded end, so a zero never lands on the
//! store's bytes. After its write the store calls [`TailPrefaulter::end_append`], which wakes the
//! thread: waking it before would have its zero write hold the file's write lock while the
//! store's `pwrite` waits for it. The zeros are not part of the store: a reopen scans past the checkpointed length, stops at
//! the first byte that is not a tag (0 is none) and cuts the file there, as after a torn write;
//! [`TailPrefaulter::stop`] ends the thread so [`crate::Store::close`] can cut them first.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How far past the end the thread keeps pages written: about 20 blocks of the replay (213 KB
/// each). Each checkpoint's `fdatasync` also writes this tail, so it stays small.
pub const PREFAULT_AHEAD_BYTES: u64 = 4 << 20;
/// One zero write: short, so that a store write never waits long behind one.
const STEP_BYTES: usize = 128 << 10;

static ZEROS: [u8; STEP_BYTES] = [0; STEP_BYTES];

#[derive(Debug, Default)]
struct State {
    /// The end of the store's bytes, as last announced.
    end: u64,
    /// Zeros were written up to here (they may since have been overwritten by the store).
    zeroed: u64,
    /// Start of the zero write in progress (`STEP_BYTES` long), if any.
    writing: Option<u64>,
    stop: bool,
    /// A zero write failed (a full disk, say): the thread stops writing ahead. The store's own
    /// writes report their errors themselves.
    failed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a handful of integers updated in single statements: a panic elsewhere
        // cannot leave it half-changed.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The background thread writing zeros past the pack's end; see the module documentation.
#[derive(Debug)]
pub struct TailPrefaulter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl TailPrefaulter {
    /// Starts the thread on `file` (a second handle is opened on it), whose store bytes end at
    /// `end`.
    pub fn start(file: &File, end: u64) -> std::io::Result<TailPrefaulter> {
        let file = file.try_clone()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                end,
                zeroed: end,
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("pack-tail".into())
            .spawn(move || write_ahead(&thread_shared, &file))?;
        Ok(TailPrefaulter {
            shared,
            thread: Some(thread),
        })
    }

    /// The store is about to write its bytes up to `new_end` (from the previous append's end):
    /// waits while a zero write overlaps them, then keeps the thread past `new_end`.
    pub fn begin_append(&self, new_end: u64) {
        let mut state = self.shared.lock();
        while matches!(state.writing, Some(start) if start < new_end) {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.end = state.end.max(new_end);
    }

    /// The store's write announced by [`TailPrefaulter::begin_append`] is done: the thread may
    /// write ahead of it.
    pub fn end_append(&self) {
        self.shared.changed.notify_all();
    }

    /// How far zeros were written.
    #[cfg(test)]
    fn zeroed_until(&self) -> u64 {
        self.shared.lock().zeroed
    }

    /// Stops the thread and waits for it: no zero write is in progress or will start.
    pub fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // The thread does not panic (it only writes and waits); if it did, there is nothing
            // left running to wait for.
            let _ = thread.join();
        }
    }
}

impl Drop for TailPrefaulter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: write the next step past `max(end, zeroed)` while that is less than
/// [`PREFAULT_AHEAD_BYTES`] past the end, else wait for an append.
fn write_ahead(shared: &Shared, file: &File) {
    loop {
        let mut state = shared.lock();
        let start = loop {
            if state.stop {
                return;
            }
            let start = state.zeroed.max(state.end);
            if !state.failed && start < state.end + PREFAULT_AHEAD_BYTES {
                break start;
            }
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        };
        state.writing = Some(start);
        drop(state);
        let result = file.write_all_at(&ZEROS, start);
        let mut state = shared.lock();
        state.writing = None;
        match result {
            Ok(()) => state.zeroed = start + STEP_BYTES as u64,
            Err(_) => state.failed = true,
        }
        drop(state);
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends of many sizes while the thread writes ahead: every byte the "store" wrote is
    /// still there at the end (no zero landed on it), and the thread did write ahead.
    #[test]
    fn zeros_never_overwrite_appended_bytes() {
        let directory = std::env::temp_dir().join(format!(
            "kestrel-tail-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join("pack");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut prefaulter = TailPrefaulter::start(&file, 0).unwrap();
        let mut expected = Vec::new();
        let mut seed = 0x9e37_79b9_u64;
        for round in 0..400u64 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            // Sizes from one byte to a bit more than the distance written ahead.
            let length = if round % 50 == 0 {
                PREFAULT_AHEAD_BYTES as usize + 12_345
            } else {
                1 + (seed >> 40) as usize % 300_000
            };
            let start = expected.len();
            let bytes: Vec<u8> = (0..length)
                .map(|i| 1 + ((seed as usize + i) % 251) as u8)
                .collect();
            prefaulter.begin_append((start + length) as u64);
            file.write_all_at(&bytes, start as u64).unwrap();
            prefaulter.end_append();
            expected.extend_from_slice(&bytes);
        }
        let zeroed = prefaulter.zeroed_until();
        prefaulter.stop();
        assert!(zeroed > 0, "the thread never wrote ahead");
        let mut actual = vec![0u8; expected.len()];
        file.read_exact_at(&mut actual, 0).unwrap();
        assert!(actual == expected, "a zero write overwrote appended bytes");
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
