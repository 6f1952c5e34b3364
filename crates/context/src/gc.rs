//! Garbage collection: frees the pack bytes of every object that only commits older than a kept
//! commit reach, without moving any object, beside the commits that go on.
//!
//! Design (docs/formats/control-file.md, "Garbage collection"; ARCHITECTURE.md names the thread).
//! Irmin's GC (irmin-pack 3.x, `layered_store.md` and its release notes) copies the objects the
//! GC commit reaches into a new *prefix* file, with a *mapping* file from their old offsets to
//! their new places, keeps the bytes after the commit as a chunked *suffix*, and swaps the files
//! in: objects keep their offsets (the mapping translates them), and the disk needs room for a
//! second copy of the live objects while the GC runs. Kestrel keeps the offsets without a
//! mapping: objects never move, and the bytes of dead objects are given back to the file system
//! by punching holes (`fallocate(PUNCH_HOLE | KEEP_SIZE)`) in every 4 KiB page of the pack below
//! the GC commit that holds no byte of a live object. So a GC needs no extra disk at all, no file
//! is swapped, a read of a live object costs what it did (no mapping lookup), and every step is
//! safe to kill: the mark only reads; the commits older than the kept one are dropped by the one
//! atomic replacement of the control file (the index start and the GC boundary it records), made
//! durable before any hole is punched; a kill while punching leaves dead pages unpunched, which
//! the next GC punches. The price is that a live object pins its pages: the bytes freed are the
//! whole dead pages, not every dead byte (BENCHMARKS.md measures the difference).
//!
//! Phases, on a thread the store owns (`gc`): **mark** walks every object reachable from the
//! kept commit and from the head when the GC started ([`crate::walk::walk`], in decreasing offset
//! order, the heap being its own visited set), recording the pages their bytes lie in; the store
//! then **publishes** (on its own thread, between two commits: it drops the older commits from
//! its index and starts a checkpoint carrying the new index start and GC boundary); once that
//! checkpoint is durable the thread **punches** the dead pages of the pack and the dropped
//! records' pages of the index.
//!
//! What callers must guarantee: a commit made after the kept commit is built from it or from a
//! later commit (as a chain of blocks is), so that what it points to below the GC boundary is
//! reachable from the kept commit or from the head. A tree checked out from a dropped commit
//! before the GC must not be committed after it: its objects may be gone (a read of one then
//! fails with a typed error; it never returns other bytes as the object).

use crate::error::ContextError;
use crate::pack::{self, PACK_HEADER_BYTES};
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

/// Holes punched between two pauses of the GC thread, and the pause: 64 `fallocate` calls take
/// about a millisecond, so commits wait for at most that (the 5,000-block replay's p99 block time
/// was 41 ms with no pause and the machine loaded, against 18 ms without GC).
const PUNCHES_PER_PAUSE: u64 = 64;
const PUNCH_PAUSE: Duration = Duration::from_millis(1);

/// When a store collects by itself ([`crate::StoreOptions::gc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcPolicy {
    /// Commits kept: the GC keeps the `keep_commits`-th commit from the head and every later one.
    pub keep_commits: u64,
    /// Commits between the starts of two GCs (a GC still running when the next is due delays it).
    pub every_commits: u64,
}

/// What one GC did, for `kestrel context info` and the replay's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// The kept commit: it and every later commit stay.
    pub kept_commit: crate::ContextHash,
    /// The end of the kept commit's object: the pages wholly below it were candidates.
    pub boundary_bytes: u64,
    /// Commits dropped from the index.
    pub commits_dropped: u64,
    /// Objects the mark reached.
    pub live_objects: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// Pages below the boundary holding a byte of a live object.
    pub live_pages: u64,
    /// Pages punched by this GC (dead since the previous one, or never punched before).
    pub pages_punched: u64,
    /// Holes punched (runs of dead pages, one `fallocate` each).
    pub holes_punched: u64,
    /// Bytes of the index punched.
    pub index_bytes_punched: u64,
    /// The most offsets the mark had pending at once (its frontier, 8 bytes each; see
    /// [`crate::walk`]).
    pub mark_frontier_peak: u64,
    /// Time spent marking.
    pub mark_duration: Duration,
    /// From the start to the end of the punching (publishing included).
    pub total_duration: Duration,
}

/// A set of pages, one bit each.
#[derive(Clone, Debug, Default)]
pub(crate) struct PageSet {
    words: Vec<u64>,
}

impl PageSet {
    fn with_pages(pages: u64) -> PageSet {
        PageSet {
            words: vec![0; pages.div_ceil(64) as usize],
        }
    }

    fn pages(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    fn contains(&self, page: u64) -> bool {
        self.words
            .get((page / 64) as usize)
            .is_some_and(|word| word & (1 << (page % 64)) != 0)
    }

    /// Adds `page`; pages beyond the set's size are ignored.
    fn insert(&mut self, page: u64) {
        if let Some(word) = self.words.get_mut((page / 64) as usize) {
            *word |= 1 << (page % 64);
        }
    }

    fn grow_to(&mut self, pages: u64) {
        let words = pages.div_ceil(64) as usize;
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
    }
}

/// What the mark hands to the store before it publishes.
#[derive(Clone, Debug)]
pub(crate) struct Marked {
    pub(crate) boundary_bytes: u64,
    pub(crate) live_objects: u64,
    pub(crate) live_bytes: u64,
    pub(crate) live_pages: u64,
    pub(crate) frontier_peak: u64,
    pub(crate) mark_duration: Duration,
}

/// What the punching hands back: the pages known punched (kept for the next GC) and counts.
pub(crate) struct Punched {
    pub(crate) punched: PageSet,
    pub(crate) pages_punched: u64,
    pub(crate) holes_punched: u64,
    pub(crate) index_bytes_punched: u64,
}

/// Everything the GC thread needs, taken from the store when the GC starts.
pub(crate) struct GcJob {
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
    /// The pages punched by earlier GCs of this store since it was opened.
    pub(crate) punched: PageSet,
    pub(crate) cancel: Arc<AtomicBool>,
}

/// Runs a GC's mark, sends its result, waits for the store's go (the publication is durable),
/// then punches. Returns the punched pages; a closed channel (the store gave up) ends it early.
pub(crate) fn run(
    mut job: GcJob,
    marked: Sender<Result<Marked, ContextError>>,
    go: Receiver<()>,
) -> Result<Punched, ContextError> {
    let mut punched = std::mem::take(&mut job.punched);
    let mark_start = Instant::now();
    let live = match mark(&job) {
        Ok(Some(live)) => live,
        Ok(None) => {
            return Ok(Punched {
                punched,
                pages_punched: 0,
                holes_punched: 0,
                index_bytes_punched: 0,
            })
        }
        Err(error) => {
            let _ = marked.send(Err(error));
            return Ok(Punched {
                punched,
                pages_punched: 0,
                holes_punched: 0,
                index_bytes_punched: 0,
            });
        }
    };
    let (live_pages, boundary_bytes, live_objects, live_bytes, frontier_peak) = live;
    let candidate_pages = boundary_bytes / GC_PAGE_BYTES;
    let live_page_count = (0..candidate_pages)
        .filter(|page| live_pages.contains(*page))
        .count() as u64;
    if marked
        .send(Ok(Marked {
            boundary_bytes,
            live_objects,
            live_bytes,
            live_pages: live_page_count,
            frontier_peak,
            mark_duration: mark_start.elapsed(),
        }))
        .is_err()
        || go.recv().is_err()
    {
        return Ok(Punched {
            punched,
            pages_punched: 0,
            holes_punched: 0,
            index_bytes_punched: 0,
        });
    }
    punched.grow_to(candidate_pages);
    let mut pages_punched = 0;
    let mut holes = 0u64;
    let mut page = 0;
    while page < candidate_pages {
        if live_pages.contains(page) || punched.contains(page) {
            page += 1;
            continue;
        }
        if job.cancel.load(Ordering::Relaxed) {
            break;
        }
        let start = page;
        while page < candidate_pages && !live_pages.contains(page) && !punched.contains(page) {
            page += 1;
        }
        punch_hole(&job.pack, &job.pack_path, start, page - start)?;
        for punched_page in start..page {
            punched.insert(punched_page);
        }
        pages_punched += page - start;
        holes += 1;
        // A punch holds the file's locks that commits' writes and page-cache misses need:
        // pause now and then so that a commit never queues behind a long run of them.
        if holes.is_multiple_of(PUNCHES_PER_PAUSE) {
            std::thread::sleep(PUNCH_PAUSE);
        }
    }
    // The index records before the kept commit's: whole pages after the header's.
    let index_pages = job.index_start_bytes / GC_PAGE_BYTES;
    let index_bytes_punched = if index_pages > 1 {
        punch_hole(&job.index, &job.index_path, 1, index_pages - 1)?;
        (index_pages - 1) * GC_PAGE_BYTES
    } else {
        0
    };
    Ok(Punched {
        punched,
        pages_punched,
        holes_punched: holes,
        index_bytes_punched,
    })
}

/// Gives the `count` pages from `first` back to the file system; the file keeps its length and
/// reads zeros there.
fn punch_hole(
    file: &File,
    path: &std::path::Path,
    first: u64,
    count: u64,
) -> Result<(), ContextError> {
    rustix::fs::fallocate(
        file,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        first * GC_PAGE_BYTES,
        count * GC_PAGE_BYTES,
    )
    .map_err(|errno| ContextError::Io {
        path: path.to_path_buf(),
        action: "punch a hole in",
        source: errno.into(),
    })
}

/// The live pages below the boundary, the boundary, the live objects and bytes, and the most
/// offsets pending at once; `None` if cancelled.
type Live = (PageSet, u64, u64, u64, u64);

/// Walks every object reachable from the job's roots, recording the pages its bytes lie in.
fn mark(job: &GcJob) -> Result<Option<Live>, ContextError> {
    let Some(&keep) = job.roots.first() else {
        return Ok(Some((PageSet::default(), 0, 0, 0, 0)));
    };
    // The boundary: the end of the kept commit's object.
    let mut buffer = Vec::new();
    let frame = crate::walk::read_frame(
        &job.pack,
        &job.pack_path,
        job.pack_length_bytes,
        keep,
        &mut buffer,
    )?;
    if frame.tag != pack::TAG_COMMIT {
        return Err(corrupt_pack(
            &job.pack_path,
            keep,
            crate::CorruptionKind::UnexpectedObject("a commit"),
        ));
    }
    let boundary_bytes = keep + frame.length_bytes();
    let mut live = PageSet::with_pages(boundary_bytes.div_ceil(GC_PAGE_BYTES));
    // The header's page is never punched.
    live.insert(PACK_HEADER_BYTES / GC_PAGE_BYTES);
    let mut live_objects = 0u64;
    let mut live_bytes = 0u64;
    let mut children = Vec::new();
    let peak = walk(
        &job.pack,
        &job.pack_path,
        job.pack_length_bytes,
        job.roots.iter().map(|root| (*root, ())).collect(),
        |visit: Visit<'_, ()>, push| {
            let end = visit.offset + visit.frame.length_bytes();
            live_objects += 1;
            live_bytes += visit.frame.length_bytes();
            if visit.offset < boundary_bytes {
                for page in visit.offset / GC_PAGE_BYTES..end.div_ceil(GC_PAGE_BYTES) {
                    live.insert(page);
                }
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
    debug_assert!(live.pages() >= boundary_bytes / GC_PAGE_BYTES);
    Ok(Some((
        live,
        boundary_bytes,
        live_objects,
        live_bytes,
        peak as u64,
    )))
}
