//! Garbage collection: frees the pack bytes of every object that only commits older than a kept
//! commit reach, beside the commits that go on, by moving the live objects below the kept commit
//! into a dense prefix file ([`crate::prefix`]) and giving the pack's bytes below it back to the
//! file system.
//!
//! Design (docs/formats/control-file.md, "Garbage collection"; ARCHITECTURE.md names the thread).
//! Irmin's GC (irmin-pack 3.x, `layered_store.md` and its release notes) copies the objects the
//! GC commit reaches into a new *prefix* file, with a *mapping* file from their old offsets to
//! their new places, keeps the bytes after the commit as a chunked *suffix* whose chunks wholly
//! before the commit it deletes, and swaps the files in. Kestrel does the same with one pack file
//! instead of chunks: once the new prefix is published, every read below the GC boundary goes to
//! the prefix, so the pack's bytes below the boundary are never read again and one hole punched
//! (`fallocate(PUNCH_HOLE | KEEP_SIZE)`) gives them all back. Objects keep their offsets (the
//! mapping translates them), so no referrer is rewritten. The mapping holds *runs* of live bytes
//! that touch each other in the pack, not one entry per object. Extra disk while a GC runs: the
//! new prefix and mapping beside the old ones (at most the live bytes below the boundary).
//!
//! Phases, on a thread the store owns (`gc`): **mark** walks every object reachable from the
//! kept commit and from the head when the GC started ([`crate::walk::walk`], in decreasing offset
//! order, the heap being its own visited set), recording the runs of live bytes below the
//! boundary (the end of the kept commit's object); **copy** writes those runs, read through the
//! store's current reader (old prefix or pack), into the next generation's prefix and mapping
//! files and syncs them; the store then **publishes** (on its own thread, between two commits: it
//! drops the older commits from its index, reads through the new prefix from then on, and starts
//! a checkpoint whose control file names the new generation and boundary); once that checkpoint
//! is durable the thread **frees**: it removes the previous generation's files, punches the
//! pack below the boundary and the dropped records' pages of the index.
//!
//! Crash safety: until the control file names the new generation, its files are strays the next
//! open removes and the old control file's generation and boundary are intact; the rename of the
//! control file is the one switch; after it, the old generation's files and the pack bytes below
//! the boundary are never read, so a crash while freeing only leaves bytes the next GC (or open)
//! frees. [`GcStep`] names the points a crash test aborts at.
//!
//! What callers must guarantee: a commit made after the kept commit is built from it or from a
//! later commit (as a chain of blocks is), so that what it points to below the GC boundary is
//! reachable from the kept commit or from the head. A tree checked out from a dropped commit
//! before the GC must not be committed after it: its objects may be gone (a read of one then
//! fails with a typed error; it never returns other bytes as the object).

use crate::error::ContextError;
use crate::pack::{self, PACK_HEADER_BYTES};
use crate::prefix::{self, PackReader, Prefix};
use crate::runs::MarkedRuns;
use crate::walk::{corrupt_pack, walk, Visit, PAGE_BYTES};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The unit of space given back: the page size of the page cache and the block size of ext4 and
/// most Linux file systems (a hole punched in a smaller range frees nothing).
pub const GC_PAGE_BYTES: u64 = PAGE_BYTES;

/// When a store collects by itself ([`crate::StoreOptions::gc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcPolicy {
    /// Commits kept: the GC keeps the `keep_commits`-th commit from the head and every later one.
    pub keep_commits: u64,
    /// Commits between the starts of two GCs (a GC still running when the next is due delays it).
    pub every_commits: u64,
}

/// A point of a GC at which a crash test makes the process abort
/// ([`crate::StoreOptions::gc_abort_at`]), in the order a GC passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcStep {
    /// The mark is done; nothing written.
    Marked,
    /// Half of the live runs are copied into the new prefix.
    Copying,
    /// The new prefix and mapping are written and synced, not yet published.
    Copied,
    /// The control file naming the new generation is durable; nothing freed yet.
    Published,
    /// The previous generation's files are removed; the pack not yet punched.
    OldFilesRemoved,
    /// The pack and index are punched (the GC's last step).
    Punched,
}

/// What one GC did, for `kestrel context info` and the replay's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// The kept commit: it and every later commit stay.
    pub kept_commit: crate::ContextHash,
    /// The end of the kept commit's object: below it, only the live objects stay (in the prefix).
    pub boundary_bytes: u64,
    /// Commits dropped from the index.
    pub commits_dropped: u64,
    /// Objects the mark reached.
    pub live_objects: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// Bytes of the new prefix file (the live bytes below the boundary).
    pub prefix_bytes: u64,
    /// Runs of live bytes in its mapping (16 bytes each on disk, 3-5 in memory,
    /// [`crate::runs`]).
    pub prefix_runs: u64,
    /// Bytes of the pack below the boundary given back by this GC (not punched before).
    pub pack_bytes_punched: u64,
    /// Bytes of the index punched.
    pub index_bytes_punched: u64,
    /// The most offsets the mark had pending at once (its frontier, 4 bytes each; see
    /// [`crate::walk`]).
    pub mark_frontier_peak: u64,
    /// Time spent marking.
    pub mark_duration: Duration,
    /// Time spent copying the live runs into the new prefix (and syncing it).
    pub copy_duration: Duration,
    /// How long the store's own thread spent publishing (between two commits: dropping the
    /// older commits, switching to the new prefix, starting the checkpoint): the GC's pause of
    /// the writer.
    pub publish_duration: Duration,
    /// From the start to the end of the freeing (publishing included).
    pub total_duration: Duration,
}

/// What the mark and copy hand to the store before it publishes.
#[derive(Clone)]
pub(crate) struct Marked {
    pub(crate) boundary_bytes: u64,
    pub(crate) live_objects: u64,
    pub(crate) live_bytes: u64,
    pub(crate) prefix: Arc<Prefix>,
    pub(crate) frontier_peak: u64,
    pub(crate) mark_duration: Duration,
    pub(crate) copy_duration: Duration,
}

/// What the freeing hands back.
#[derive(Default)]
pub(crate) struct Punched {
    /// The pack is punched from its header's page up to here (the next GC starts here).
    pub(crate) punched_below_bytes: u64,
    pub(crate) pack_bytes_punched: u64,
    pub(crate) index_bytes_punched: u64,
}

/// Everything the GC thread needs, taken from the store when the GC starts.
pub(crate) struct GcJob {
    /// Reads objects as the store did when the GC started (through the current prefix).
    pub(crate) reader: PackReader,
    pub(crate) directory: PathBuf,
    /// The generation the new prefix is written as (the GC count once published).
    pub(crate) generation: u64,
    pub(crate) sync: bool,
    pub(crate) pack: File,
    pub(crate) pack_path: PathBuf,
    pub(crate) index: File,
    pub(crate) index_path: PathBuf,
    /// The pack's length when the GC started (every root lies before it).
    pub(crate) pack_length_bytes: u64,
    /// The kept commit's offset, then the head's (if another).
    pub(crate) roots: Vec<u64>,
    /// The index start the publication records: the index pages wholly before it are punched.
    pub(crate) index_start_bytes: u64,
    /// The pack is known punched from its header's page up to here.
    pub(crate) punched_below_bytes: u64,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) abort_at: Option<GcStep>,
}

impl GcJob {
    /// Aborts the process at `step` if the crash test asked for it.
    fn step(&self, step: GcStep) {
        if self.abort_at == Some(step) {
            std::process::abort();
        }
    }
}

/// Runs a GC's mark and copy, sends their result, waits for the store's go (the publication is
/// durable), then frees. A closed channel (the store gave up) ends it early; a cancelled GC
/// removes the files it wrote.
pub(crate) fn run(
    job: GcJob,
    marked: Sender<Result<Marked, ContextError>>,
    go: Receiver<()>,
) -> Result<Punched, ContextError> {
    let unchanged = Punched {
        punched_below_bytes: job.punched_below_bytes,
        ..Punched::default()
    };
    let mark_start = Instant::now();
    let live = match mark(&job) {
        Ok(Some(live)) => live,
        Ok(None) => return Ok(unchanged),
        Err(error) => {
            let _ = marked.send(Err(error));
            return Ok(unchanged);
        }
    };
    let mark_duration = mark_start.elapsed();
    job.step(GcStep::Marked);
    let copy_start = Instant::now();
    let runs = live.runs.into_ascending();
    let half = runs.len() / 2;
    let copied = Prefix::write(
        &job.directory,
        job.generation,
        live.boundary_bytes,
        runs,
        &job.reader,
        job.sync,
        |index| {
            if index == half {
                job.step(GcStep::Copying);
            }
            job.cancel.load(Ordering::Relaxed)
        },
    );
    let prefix = match copied {
        Ok(Some(prefix)) => prefix,
        Ok(None) => return Ok(unchanged),
        Err(error) => {
            prefix::remove_generation(&job.directory, job.generation);
            let _ = marked.send(Err(error));
            return Ok(unchanged);
        }
    };
    job.step(GcStep::Copied);
    if marked
        .send(Ok(Marked {
            boundary_bytes: live.boundary_bytes,
            live_objects: live.objects,
            live_bytes: live.bytes,
            prefix: Arc::new(prefix),
            frontier_peak: live.frontier_peak,
            mark_duration,
            copy_duration: copy_start.elapsed(),
        }))
        .is_err()
        || go.recv().is_err()
    {
        // Not published: the store drops the new files when it gives up (or its next open does).
        return Ok(unchanged);
    }
    job.step(GcStep::Published);
    prefix::remove_other_generations(&job.directory, Some(job.generation))?;
    job.step(GcStep::OldFilesRemoved);
    // The pack below the boundary, from the page after the header's (which is never punched):
    // whole pages only.
    let first = job
        .punched_below_bytes
        .max(PACK_HEADER_BYTES.div_ceil(GC_PAGE_BYTES) * GC_PAGE_BYTES);
    let end = live.boundary_bytes / GC_PAGE_BYTES * GC_PAGE_BYTES;
    let pack_bytes_punched = if end > first {
        punch_hole(&job.pack, &job.pack_path, first, end - first)?;
        end - first
    } else {
        0
    };
    // The index records before the kept commit's: whole pages after the header's.
    let index_end = job.index_start_bytes / GC_PAGE_BYTES * GC_PAGE_BYTES;
    let index_bytes_punched = if index_end > GC_PAGE_BYTES {
        punch_hole(
            &job.index,
            &job.index_path,
            GC_PAGE_BYTES,
            index_end - GC_PAGE_BYTES,
        )?;
        index_end - GC_PAGE_BYTES
    } else {
        0
    };
    job.step(GcStep::Punched);
    Ok(Punched {
        punched_below_bytes: end.max(job.punched_below_bytes),
        pack_bytes_punched,
        index_bytes_punched,
    })
}

/// Gives the `length` bytes at `start` (whole pages) back to the file system; the file keeps
/// its length and reads zeros there.
fn punch_hole(
    file: &File,
    path: &std::path::Path,
    start: u64,
    length: u64,
) -> Result<(), ContextError> {
    rustix::fs::fallocate(
        file,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        start,
        length,
    )
    .map_err(|errno| ContextError::Io {
        path: path.to_path_buf(),
        action: "punch a hole in",
        source: errno.into(),
    })
}

/// What the mark found.
struct Live {
    /// The runs of live bytes below the boundary.
    runs: MarkedRuns,
    boundary_bytes: u64,
    objects: u64,
    bytes: u64,
    frontier_peak: u64,
}

/// Walks every object reachable from the job's roots, recording the runs of live bytes below
/// the boundary; `None` if cancelled.
fn mark(job: &GcJob) -> Result<Option<Live>, ContextError> {
    let Some(&keep) = job.roots.first() else {
        return Ok(Some(Live {
            runs: MarkedRuns::default(),
            boundary_bytes: 0,
            objects: 0,
            bytes: 0,
            frontier_peak: 0,
        }));
    };
    // The boundary: the end of the kept commit's object.
    let mut buffer = Vec::new();
    let frame = crate::walk::read_frame(&job.reader, job.pack_length_bytes, keep, &mut buffer)?;
    if frame.tag != pack::TAG_COMMIT {
        return Err(corrupt_pack(
            &job.pack_path,
            keep,
            crate::CorruptionKind::UnexpectedObject("a commit"),
        ));
    }
    let boundary_bytes = keep + frame.length_bytes();
    // Visited in decreasing offset order: a run grows downwards while objects touch.
    let mut runs = MarkedRuns::default();
    let mut objects = 0u64;
    let mut bytes = 0u64;
    let mut children = Vec::new();
    let peak = walk(
        &job.reader,
        job.pack_length_bytes,
        job.roots.iter().map(|root| (*root, ())).collect(),
        |visit: Visit<'_, ()>, push| {
            let end = visit.offset + visit.frame.length_bytes();
            objects += 1;
            bytes += visit.frame.length_bytes();
            if visit.offset < boundary_bytes {
                runs.add(visit.offset, end);
            }
            children.clear();
            pack::child_offsets(
                visit.frame.tag,
                &visit.bytes[visit.frame.body.clone()],
                visit.offset,
                &mut children,
            )
            .map_err(|error| {
                corrupt_pack(
                    &job.pack_path,
                    visit
                        .frame
                        .body_position(visit.offset, error.body_offset_bytes),
                    error.kind,
                )
            })?;
            for child in &children {
                push(*child, ());
            }
            Ok(())
        },
        |_, _, _| Ok(()),
        || job.cancel.load(Ordering::Relaxed),
    )?;
    let Some(peak) = peak else {
        return Ok(None);
    };
    Ok(Some(Live {
        runs,
        boundary_bytes,
        objects,
        bytes,
        frontier_peak: peak as u64,
    }))
}
