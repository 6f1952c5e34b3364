//! The prefix: the live objects below the last GC's boundary, copied by the GC into a dense file
//! of their own (`store.prefix.<g>`), with a mapping file (`store.mapping.<g>`) from their pack
//! offsets to where they lie in it; and [`PackReader`], through which every object is read, so
//! that an object keeps its pack offset whether it lies in the pack or in the prefix.
//!
//! Normative spec: docs/formats/control-file.md, "Prefix and mapping files". The idea is
//! irmin-pack 3's (prefix + mapping, `layered_store.md`), with two differences: the mapping is a
//! sorted list of *runs* (maximal ranges of live bytes that touch each other in the pack), so an
//! object read costs a binary search over runs and one `pread`; and the bytes after the boundary
//! stay in the one pack file, the GC giving the bytes below the boundary back to the file system
//! by one hole punched (`fallocate(PUNCH_HOLE)`) instead of deleting chunk files.
//!
//! A read below the boundary returns the bytes the pack held there for every live object, and
//! zeros between runs, exactly as the punched pack reads: a zero byte is no object's tag, so a
//! read of a freed object is a typed error, never another object's bytes.
//!
//! What callers must guarantee: a prefix is only read below its boundary ([`PackReader`] splits a
//! read that crosses it), and its files are not changed once written (a GC writes the next
//! generation's files beside them).

use crate::error::{ContextError, CorruptionKind, StoreFile};
use crate::runs::RunMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The prefix file of generation `g` is named this followed by `g` in decimal.
pub const PREFIX_FILE_STEM: &str = "store.prefix.";
/// The mapping file of generation `g` is named this followed by `g` in decimal.
pub const MAPPING_FILE_STEM: &str = "store.mapping.";
/// The first 8 bytes of a mapping file.
pub const MAPPING_MAGIC: [u8; 8] = *b"KSTRLMAP";
/// The mapping format version this code reads and writes.
pub const MAPPING_VERSION: u32 = 1;
/// Magic 8, version 4, reserved 4, boundary 8, run count 8.
pub const MAPPING_HEADER_BYTES: u64 = 8 + 4 + 4 + 8 + 8;
/// One run: its pack offset and its length (u64 big-endian each).
pub const MAPPING_RUN_BYTES: u64 = 16;
/// The checksum that ends the file: the first 8 bytes of BLAKE2b-256 of the BLAKE2b-256 digests
/// of the file's pieces before it (so that a writer streams the file): the header, then each
/// [`MAPPING_CHECKSUM_PIECE_RUNS`] runs (the last piece may hold fewer).
pub const MAPPING_CHECKSUM_BYTES: u64 = 8;
/// Runs per checksummed piece of a mapping file (64 KiB).
pub const MAPPING_CHECKSUM_PIECE_RUNS: u64 = 4096;
/// The buffer a GC copies live runs through into a new prefix: runs are read straight into it
/// and it is written out when full. One 256 KiB buffer, where a 1 MiB read chunk and a 1 MiB
/// write buffer held up to 2 MiB beside the collecting store's cache.
const COPY_BUFFER_BYTES: u64 = 256 << 10;

/// One generation's prefix and mapping, open for reading.
pub(crate) struct Prefix {
    file: File,
    path: PathBuf,
    mapping_path: PathBuf,
    generation: u64,
    /// Pack offsets at or after this are not in the prefix (the GC boundary).
    boundary: u64,
    /// Sorted by pack offset, disjoint, not touching one another, each run right after the one
    /// before in the prefix file (held compactly, [`crate::runs`]).
    runs: RunMap,
}

/// The file names of generation `generation`: prefix, mapping.
fn file_names(generation: u64) -> (String, String) {
    (
        format!("{PREFIX_FILE_STEM}{generation}"),
        format!("{MAPPING_FILE_STEM}{generation}"),
    )
}

fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> ContextError {
    let path = path.to_path_buf();
    move |source| ContextError::Io {
        path,
        action,
        source,
    }
}

/// The mapping file's checksum, fed piece by piece ([`MAPPING_CHECKSUM_BYTES`]).
#[derive(Default)]
struct PieceChecksum {
    digests: Vec<u8>,
}

impl PieceChecksum {
    fn piece(&mut self, bytes: &[u8]) {
        self.digests
            .extend_from_slice(&kestrel_crypto::hash::blake2b_256(bytes));
    }

    fn finish(&self) -> u64 {
        let digest = kestrel_crypto::hash::blake2b_256(&self.digests);
        u64::from_be_bytes([
            digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
        ])
    }
}

/// The checksum of a whole mapping file's `bytes` before its checksum.
fn checksum(bytes: &[u8]) -> u64 {
    let mut checksum = PieceChecksum::default();
    let (header, runs) = bytes.split_at(MAPPING_HEADER_BYTES as usize);
    checksum.piece(header);
    for piece in runs.chunks((MAPPING_CHECKSUM_PIECE_RUNS * MAPPING_RUN_BYTES) as usize) {
        checksum.piece(piece);
    }
    checksum.finish()
}

impl Prefix {
    /// Opens generation `generation` in `directory`, whose boundary the control file records as
    /// `boundary`; every rule of the mapping format is checked (typed errors naming the file and
    /// offset).
    pub(crate) fn open(
        directory: &Path,
        generation: u64,
        boundary: u64,
    ) -> Result<Prefix, ContextError> {
        let (prefix_name, mapping_name) = file_names(generation);
        let path = directory.join(prefix_name);
        let mapping_path = directory.join(mapping_name);
        let corrupt = |offset_bytes, kind| ContextError::Corrupt {
            file: StoreFile::Mapping,
            path: mapping_path.clone(),
            offset_bytes,
            kind,
        };
        let bytes = match std::fs::read(&mapping_path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(corrupt(0, CorruptionKind::Missing))
            }
            Err(error) => return Err(io_error(&mapping_path, "read")(error)),
        };
        let length = bytes.len() as u64;
        if length < MAPPING_HEADER_BYTES + MAPPING_CHECKSUM_BYTES {
            return Err(corrupt(length, CorruptionKind::Truncated));
        }
        if bytes[..8] != MAPPING_MAGIC {
            return Err(corrupt(0, CorruptionKind::BadMagic));
        }
        let word = |at: usize| {
            let mut value = [0u8; 8];
            value.copy_from_slice(&bytes[at..at + 8]);
            u64::from_be_bytes(value)
        };
        let version = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != MAPPING_VERSION {
            return Err(corrupt(
                8,
                CorruptionKind::UnsupportedVersion(u64::from(version)),
            ));
        }
        let body_end = length - MAPPING_CHECKSUM_BYTES;
        if word(body_end as usize) != checksum(&bytes[..body_end as usize]) {
            return Err(corrupt(body_end, CorruptionKind::BadChecksum));
        }
        if bytes[12..16] != [0; 4] {
            return Err(corrupt(
                12,
                CorruptionKind::Inconsistent("reserved header bytes are zero"),
            ));
        }
        if word(16) != boundary {
            return Err(corrupt(
                16,
                CorruptionKind::Inconsistent("the mapping's boundary is the control file's"),
            ));
        }
        let count = word(24);
        if count.checked_mul(MAPPING_RUN_BYTES) != Some(body_end - MAPPING_HEADER_BYTES) {
            return Err(corrupt(24, CorruptionKind::Truncated));
        }
        let mut runs = RunMap::default();
        let mut previous_end = 0u64;
        for index in 0..count {
            let at = (MAPPING_HEADER_BYTES + index * MAPPING_RUN_BYTES) as usize;
            let (start, run_length) = (word(at), word(at + 8));
            // Runs are sorted, never empty, never touching the one before, and below the
            // boundary.
            let end = start.checked_add(run_length);
            if run_length == 0
                || (index > 0 && start <= previous_end)
                || end.is_none_or(|end| end > boundary)
            {
                return Err(corrupt(
                    at as u64,
                    CorruptionKind::Inconsistent("runs are sorted, apart and below the boundary"),
                ));
            }
            let end = start + run_length;
            runs.push(start, end);
            previous_end = end;
        }
        runs.shrink_to_fit();
        let prefix_offset = runs.length_bytes();
        let file = File::open(&path).map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                ContextError::Corrupt {
                    file: StoreFile::Prefix,
                    path: path.clone(),
                    offset_bytes: 0,
                    kind: CorruptionKind::Missing,
                }
            } else {
                io_error(&path, "open")(error)
            }
        })?;
        let prefix_length = file.metadata().map_err(io_error(&path, "stat"))?.len();
        if prefix_length != prefix_offset {
            return Err(ContextError::Corrupt {
                file: StoreFile::Prefix,
                path,
                offset_bytes: prefix_length.min(prefix_offset),
                kind: CorruptionKind::Inconsistent("the prefix holds the mapping's runs exactly"),
            });
        }
        Ok(Prefix {
            file,
            path,
            mapping_path,
            generation,
            boundary,
            runs,
        })
    }

    /// Copies the pack bytes of `live` (ranges `[start, end)`, sorted, apart, below
    /// `boundary`) from `source` into generation `generation`'s prefix and writes its mapping, both synced
    /// (with the directory) when `sync` is set. `should_stop` is polled before each range (given
    /// its index): `None` when it stopped (the partial files are removed).
    pub(crate) fn write(
        directory: &Path,
        generation: u64,
        boundary: u64,
        live: impl ExactSizeIterator<Item = (u64, u64)>,
        source: &PackReader,
        sync: bool,
        should_stop: impl Fn(usize) -> bool,
    ) -> Result<Option<Prefix>, ContextError> {
        let (prefix_name, mapping_name) = file_names(generation);
        let path = directory.join(prefix_name);
        let mapping_path = directory.join(mapping_name);
        let create = |path: &Path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .map_err(io_error(path, "create"))
        };
        let file = create(&path)?;
        let mapping_file = create(&mapping_path)?;
        let mut mapping = std::io::BufWriter::new(&mapping_file);
        let mut checksum = PieceChecksum::default();
        let piece_bytes = (MAPPING_CHECKSUM_PIECE_RUNS * MAPPING_RUN_BYTES) as usize;
        let mut piece = Vec::with_capacity(piece_bytes);
        piece.extend_from_slice(&MAPPING_MAGIC);
        piece.extend_from_slice(&MAPPING_VERSION.to_be_bytes());
        piece.extend_from_slice(&[0; 4]);
        piece.extend_from_slice(&boundary.to_be_bytes());
        let count = live.len() as u64;
        piece.extend_from_slice(&count.to_be_bytes());
        let mut flush_piece = |piece: &mut Vec<u8>| {
            checksum.piece(piece);
            let written = mapping.write_all(piece);
            piece.clear();
            written.map_err(io_error(&mapping_path, "write"))
        };
        flush_piece(&mut piece)?;
        let mut out: Vec<u8> = Vec::with_capacity(COPY_BUFFER_BYTES as usize);
        let write_out = |out: &mut Vec<u8>| {
            let written = (&file).write_all(out);
            out.clear();
            written.map_err(io_error(&path, "write"))
        };
        let mut runs = RunMap::default();
        for (index, (start, end)) in live.enumerate() {
            assert!(
                start < end && end <= boundary,
                "a live range below the boundary"
            );
            runs.push(start, end);
            if should_stop(index) {
                drop(out);
                drop(mapping);
                remove_generation(directory, generation);
                return Ok(None);
            }
            let mut at = start;
            while at < end {
                if out.len() as u64 == COPY_BUFFER_BYTES {
                    write_out(&mut out)?;
                }
                let filled = out.len();
                let length = (end - at).min(COPY_BUFFER_BYTES - filled as u64) as usize;
                out.resize(filled + length, 0);
                source.read_exact_at(&mut out[filled..], at)?;
                at += length as u64;
            }
            piece.extend_from_slice(&start.to_be_bytes());
            piece.extend_from_slice(&(end - start).to_be_bytes());
            if piece.len() == piece_bytes {
                flush_piece(&mut piece)?;
            }
        }
        assert_eq!(runs.count(), count, "as many live ranges as counted");
        runs.shrink_to_fit();
        if !piece.is_empty() {
            flush_piece(&mut piece)?;
        }
        write_out(&mut out)?;
        drop(out);
        mapping
            .write_all(&checksum.finish().to_be_bytes())
            .and_then(|()| mapping.flush())
            .map_err(io_error(&mapping_path, "write"))?;
        drop(mapping);
        if sync {
            file.sync_all().map_err(io_error(&path, "sync"))?;
            mapping_file
                .sync_all()
                .map_err(io_error(&mapping_path, "sync"))?;
            File::open(directory)
                .and_then(|directory| directory.sync_all())
                .map_err(io_error(directory, "sync"))?;
        }
        Ok(Some(Prefix {
            file,
            path,
            mapping_path,
            generation,
            boundary,
            runs,
        }))
    }

    /// The generation (the GC count that published it).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The pack offset below which reads come from here.
    pub(crate) fn boundary(&self) -> u64 {
        self.boundary
    }

    /// Runs in the mapping.
    pub(crate) fn run_count(&self) -> u64 {
        self.runs.count()
    }

    /// The runs of live pack bytes, `[start, end)`, in increasing order.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.from(0).map(|run| (run.start, run.end))
    }

    /// Where the live pack byte at `offset` lies in the prefix file, if it is one.
    fn prefix_offset(&self, offset: u64) -> Option<u64> {
        if offset >= self.boundary {
            return None;
        }
        let run = self.runs.from(offset).find(|run| run.end > offset)?;
        (run.start <= offset).then(|| run.prefix_offset + (offset - run.start))
    }

    /// Bytes of the prefix file (the live bytes below the boundary).
    pub(crate) fn length_bytes(&self) -> u64 {
        self.runs.length_bytes()
    }

    /// Bytes the file system holds for the prefix and mapping files.
    pub(crate) fn disk_bytes(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let allocated = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.blocks() * 512);
        allocated(&self.path) + allocated(&self.mapping_path)
    }

    /// Bytes of memory the mapping takes.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.runs.memory_bytes()
    }

    /// Fills the start of `buffer` with the pack bytes at `offset` (below the boundary) up to the
    /// end of the run holding `offset`, or with zeros up to the next run's start when `offset` is
    /// in no run, and returns how many bytes it filled (at least one for a non-empty buffer): one
    /// lookup and at most one `pread`, where [`Prefix::read`] of a whole page can touch dozens of
    /// runs. An object lies within one run (the mark records whole objects), so the bytes after
    /// the run are never part of an object that starts in it.
    fn read_in_run(&self, buffer: &mut [u8], offset: u64) -> Result<usize, ContextError> {
        debug_assert!(offset < self.boundary);
        let wanted = buffer.len() as u64;
        match self.runs.from(offset).find(|run| run.end > offset) {
            Some(run) if run.start <= offset => {
                let length = wanted.min(run.end - offset) as usize;
                self.file
                    .read_exact_at(
                        &mut buffer[..length],
                        run.prefix_offset + (offset - run.start),
                    )
                    .map_err(io_error(&self.path, "read"))?;
                Ok(length)
            }
            next => {
                let gap_end = next.map_or(self.boundary, |run| run.start);
                let length = wanted.min(gap_end - offset) as usize;
                buffer[..length].fill(0);
                Ok(length)
            }
        }
    }

    /// Fills `buffer` with the pack bytes at `offset` (the whole range below the boundary): the
    /// live bytes from the prefix, zeros elsewhere. One `pread` of the prefix bytes of every run
    /// the range touches (they are contiguous there) into the end of the buffer, then each run's
    /// bytes moved down to its place.
    fn read(&self, buffer: &mut [u8], offset: u64) -> Result<(), ContextError> {
        let end = offset + buffer.len() as u64;
        debug_assert!(end <= self.boundary);
        // Each touched run's part inside the read: its pack range and where it is in the prefix.
        let parts = self
            .runs
            .from(offset)
            .skip_while(|run| run.end <= offset)
            .take_while(|run| run.start < end)
            .map(|run| {
                let start = run.start.max(offset);
                let stop = run.end.min(end);
                (start, stop, run.prefix_offset + (start - run.start))
            });
        let mut read_start = None;
        let mut read_length = 0usize;
        for (start, stop, from_prefix) in parts.clone() {
            read_start.get_or_insert(from_prefix);
            read_length += (stop - start) as usize;
        }
        let Some(read_start) = read_start else {
            buffer.fill(0);
            return Ok(());
        };
        let spare = buffer.len() - read_length;
        self.file
            .read_exact_at(&mut buffer[spare..], read_start)
            .map_err(io_error(&self.path, "read"))?;
        // A part's bytes were read `spare` minus the gaps before it after its place, so each goes
        // to a place at or before where it is, and ends at or before the next part's bytes:
        // moving them from the first one on overwrites none not moved; the gaps read as zeros.
        let mut cursor = offset;
        let mut from = spare;
        for (start, stop, _) in parts {
            let to = (start - offset) as usize;
            let length = (stop - start) as usize;
            buffer[(cursor - offset) as usize..to].fill(0);
            buffer.copy_within(from..from + length, to);
            from += length;
            cursor = stop;
        }
        buffer[(cursor - offset) as usize..].fill(0);
        Ok(())
    }
}

/// Removes generation `generation`'s files, if there (best effort: a file left is removed by the
/// next writer's open, [`remove_other_generations`]).
pub(crate) fn remove_generation(directory: &Path, generation: u64) {
    let (prefix_name, mapping_name) = file_names(generation);
    let _ = std::fs::remove_file(directory.join(prefix_name));
    let _ = std::fs::remove_file(directory.join(mapping_name));
}

/// Removes every prefix and mapping file of `directory` but generation `keep`'s: those of a GC
/// that never published (a crash while it copied) or of the one a later GC replaced.
pub(crate) fn remove_other_generations(
    directory: &Path,
    keep: Option<u64>,
) -> Result<(), ContextError> {
    let entries = std::fs::read_dir(directory).map_err(io_error(directory, "list"))?;
    for entry in entries {
        let entry = entry.map_err(io_error(directory, "list"))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let generation = name
            .strip_prefix(PREFIX_FILE_STEM)
            .or_else(|| name.strip_prefix(MAPPING_FILE_STEM))
            .and_then(|digits| digits.parse::<u64>().ok());
        if let Some(generation) = generation {
            if Some(generation) != keep {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(io_error(&path, "remove"))?;
            }
        }
    }
    Ok(())
}

/// Reads pack bytes by pack offset: below the prefix's boundary from the prefix, elsewhere from
/// the pack file.
pub(crate) struct PackReader {
    file: File,
    path: PathBuf,
    prefix: Option<Arc<Prefix>>,
}

impl PackReader {
    /// A reader of the pack `file` at `path`, with `prefix` below its boundary.
    pub(crate) fn new(file: File, path: PathBuf, prefix: Option<Arc<Prefix>>) -> PackReader {
        PackReader { file, path, prefix }
    }

    /// Another reader of the same files (the GC thread's).
    pub(crate) fn try_clone(&self) -> Result<PackReader, ContextError> {
        Ok(PackReader {
            file: self
                .file
                .try_clone()
                .map_err(io_error(&self.path, "open"))?,
            path: self.path.clone(),
            prefix: self.prefix.clone(),
        })
    }

    /// The pack file's path (errors name it with the pack offset, wherever the bytes lie).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The prefix reads below its boundary come from, if any.
    pub(crate) fn prefix(&self) -> Option<&Arc<Prefix>> {
        self.prefix.as_ref()
    }

    /// Reads from `prefix` below its boundary from now on.
    pub(crate) fn set_prefix(&mut self, prefix: Arc<Prefix>) {
        self.prefix = Some(prefix);
    }

    /// `error` naming the file the bad bytes lie in: a pack offset of this reader's pack that
    /// lies in a run of the prefix becomes the prefix file and its offset there.
    pub(crate) fn place(&self, error: ContextError) -> ContextError {
        match (error, &self.prefix) {
            (
                ContextError::Corrupt {
                    file: StoreFile::Pack,
                    path,
                    offset_bytes,
                    kind,
                },
                Some(prefix),
            ) if path == self.path => match prefix.prefix_offset(offset_bytes) {
                Some(in_prefix) => ContextError::Corrupt {
                    file: StoreFile::Prefix,
                    path: prefix.path.clone(),
                    offset_bytes: in_prefix,
                    kind,
                },
                None => ContextError::Corrupt {
                    file: StoreFile::Pack,
                    path,
                    offset_bytes,
                    kind,
                },
            },
            (error, _) => error,
        }
    }

    /// Fills the start of `buffer` with the pack bytes at `offset`, at least one byte and as many
    /// as one read gives cheaply: all of them above the boundary, up to the end of the prefix's
    /// run holding `offset` below it (no object crosses it; [`Prefix::read_in_run`]). Returns
    /// how many bytes it filled. For a read that fetches more than the object it wants (the
    /// first read of an object of unknown length, [`crate::walk::read_frame`]).
    pub(crate) fn read_some_at(
        &self,
        buffer: &mut [u8],
        offset: u64,
    ) -> Result<usize, ContextError> {
        match &self.prefix {
            Some(prefix) if offset < prefix.boundary && !buffer.is_empty() => {
                prefix.read_in_run(buffer, offset)
            }
            _ => {
                self.read_exact_at(buffer, offset)?;
                Ok(buffer.len())
            }
        }
    }

    /// Fills `buffer` with the pack bytes at `offset`.
    pub(crate) fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> Result<(), ContextError> {
        let (below, above) = match &self.prefix {
            Some(prefix) if offset < prefix.boundary => {
                let below = (prefix.boundary - offset).min(buffer.len() as u64) as usize;
                let (below, above) = buffer.split_at_mut(below);
                prefix.read(below, offset)?;
                (below.len() as u64, above)
            }
            _ => (0, buffer),
        };
        if above.is_empty() {
            return Ok(());
        }
        self.file
            .read_exact_at(above, offset + below)
            .map_err(io_error(&self.path, "read"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let directory =
            std::env::temp_dir().join(format!("kestrel-prefix-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).unwrap();
        directory
    }

    /// A pack of 200 bytes `i as u8 | 0x80`, live in three ranges: every read below the
    /// boundary gives the pack's bytes in live ranges and zeros elsewhere, above it the pack's.
    #[test]
    fn reads_give_live_bytes_and_zeros_elsewhere() {
        let directory = scratch("read");
        let pack_bytes: Vec<u8> = (0..200u32).map(|i| i as u8 | 0x80).collect();
        let pack_path = directory.join("pack");
        std::fs::write(&pack_path, &pack_bytes).unwrap();
        let reader = PackReader::new(File::open(&pack_path).unwrap(), pack_path.clone(), None);
        let live = [(10, 20), (21, 40), (90, 150)];
        let prefix = Prefix::write(&directory, 7, 160, live.into_iter(), &reader, true, |_| {
            false
        })
        .unwrap()
        .unwrap();
        assert_eq!(prefix.length_bytes(), 10 + 19 + 60);
        drop(prefix);
        let prefix = Arc::new(Prefix::open(&directory, 7, 160).unwrap());
        let reader = PackReader::new(File::open(&pack_path).unwrap(), pack_path, Some(prefix));
        let expected = |at: u64| {
            let live_here = live.iter().any(|&(start, end)| at >= start && at < end);
            if at >= 160 || live_here {
                pack_bytes[at as usize]
            } else {
                0
            }
        };
        for offset in 0..200u64 {
            for length in [0u64, 1, 5, 19, 70, 200 - offset] {
                let length = length.min(200 - offset);
                let mut buffer = vec![0xAA; length as usize];
                reader.read_exact_at(&mut buffer, offset).unwrap();
                let wanted: Vec<u8> = (offset..offset + length).map(expected).collect();
                assert_eq!(buffer, wanted, "offset {offset} length {length}");
                // A partial read gives the start of the same bytes, stopping only where a run
                // or a gap between runs ends below the boundary.
                let mut some = vec![0xAA; length as usize];
                let filled = reader.read_some_at(&mut some, offset).unwrap();
                assert_eq!(some[..filled], wanted[..filled], "offset {offset}");
                let piece_end = live
                    .iter()
                    .flat_map(|&(start, end)| [start, end])
                    .chain([160])
                    .find(|&edge| edge > offset)
                    .filter(|_| offset < 160)
                    .unwrap_or(200);
                assert_eq!(
                    filled as u64,
                    length.min(piece_end - offset),
                    "offset {offset} length {length}"
                );
            }
        }
        // Another generation's files go, this one's stay.
        std::fs::write(directory.join("store.prefix.6"), b"").unwrap();
        std::fs::write(directory.join("store.mapping.8"), b"").unwrap();
        remove_other_generations(&directory, Some(7)).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["pack", "store.mapping.7", "store.prefix.7"]);
        std::fs::remove_dir_all(&directory).unwrap();
    }

    /// A mapping of more runs than one checksummed piece holds reopens, and reads every run.
    #[test]
    fn mappings_of_several_pieces_reopen() {
        let directory = scratch("pieces");
        let runs = MAPPING_CHECKSUM_PIECE_RUNS + 5;
        let pack_bytes: Vec<u8> = (0..runs * 3 + 16).map(|i| (i % 251) as u8 | 1).collect();
        let pack_path = directory.join("pack");
        std::fs::write(&pack_path, &pack_bytes).unwrap();
        let reader = PackReader::new(File::open(&pack_path).unwrap(), pack_path.clone(), None);
        let live: Vec<(u64, u64)> = (0..runs).map(|k| (16 + 3 * k, 18 + 3 * k)).collect();
        let boundary = 16 + 3 * runs;
        Prefix::write(
            &directory,
            2,
            boundary,
            live.into_iter(),
            &reader,
            false,
            |_| false,
        )
        .unwrap()
        .unwrap();
        let prefix = Prefix::open(&directory, 2, boundary).unwrap();
        assert_eq!(prefix.run_count(), runs);
        let reader = PackReader::new(
            File::open(&pack_path).unwrap(),
            pack_path,
            Some(Arc::new(prefix)),
        );
        let mut buffer = vec![0u8; (boundary - 16) as usize];
        reader.read_exact_at(&mut buffer, 16).unwrap();
        for (index, byte) in buffer.iter().enumerate() {
            let expected = if index % 3 == 2 {
                0
            } else {
                pack_bytes[16 + index]
            };
            assert_eq!(*byte, expected, "{index}");
        }
        std::fs::remove_dir_all(&directory).unwrap();
    }

    /// Every flipped byte of a mapping file, and a prefix file of another length, is a typed
    /// error naming the file.
    #[test]
    fn damaged_mapping_or_prefix_files_are_typed_errors() {
        let directory = scratch("damaged");
        let pack_path = directory.join("pack");
        std::fs::write(&pack_path, [0x55u8; 100]).unwrap();
        let reader = PackReader::new(File::open(&pack_path).unwrap(), pack_path, None);
        Prefix::write(
            &directory,
            1,
            90,
            [(16, 30), (40, 50)].into_iter(),
            &reader,
            false,
            |_| false,
        )
        .unwrap()
        .unwrap();
        let mapping_path = directory.join("store.mapping.1");
        let mapping = std::fs::read(&mapping_path).unwrap();
        for at in 0..mapping.len() {
            let mut bad = mapping.clone();
            bad[at] ^= 0x10;
            std::fs::write(&mapping_path, &bad).unwrap();
            assert!(
                matches!(
                    Prefix::open(&directory, 1, 90),
                    Err(ContextError::Corrupt {
                        file: StoreFile::Mapping,
                        ..
                    })
                ),
                "byte {at}"
            );
        }
        std::fs::write(&mapping_path, &mapping).unwrap();
        assert!(matches!(
            Prefix::open(&directory, 1, 91),
            Err(ContextError::Corrupt {
                file: StoreFile::Mapping,
                offset_bytes: 16,
                ..
            })
        ));
        std::fs::write(directory.join("store.prefix.1"), [0u8; 23]).unwrap();
        assert!(matches!(
            Prefix::open(&directory, 1, 90),
            Err(ContextError::Corrupt {
                file: StoreFile::Prefix,
                ..
            })
        ));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
