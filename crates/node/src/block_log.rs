//! The chain's blocks: every block's line in the blocks file (`blocks.jsonl`), and beside it an
//! index file (`blocks.index`) of one fixed-size record per level — the block's hash and where
//! its line starts — so that memory holds only the last [`RECENT_BLOCKS`] blocks, whatever the
//! chain's length (a node that bakes for hours keeps its memory flat). An older block is read
//! back from its line; a hash older than the recent blocks is looked for in the index file,
//! newest first.
//!
//! The index is derived data: written after the block's line, never synced, and rebuilt from
//! the blocks file whenever the log is opened, so a crash leaves nothing to reconcile.

use kestrel_crypto::BlockHash;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::accounts::Account;
use crate::block::Block;

/// Blocks kept in memory: the ones clients ask for (head, `head~2`, pytezos's `head~115`,
/// `live_blocks`' 120) with room to spare.
pub const RECENT_BLOCKS: usize = 256;

/// The extension of the index file, beside the blocks file.
const INDEX_EXTENSION: &str = "index";

/// Bytes of a block's hash in an index record.
const HASH_BYTES: usize = 32;

/// Bytes of an index record: the block's hash, then where its line starts (big-endian).
const INDEX_RECORD_BYTES: usize = HASH_BYTES + 8;

/// Index records read at once when looking for a hash older than the recent blocks.
const INDEX_SCAN_RECORDS: usize = 4_096;

/// The blocks file, its index, and the recent blocks in memory.
pub struct BlockLog {
    file: File,
    index: File,
    /// How many blocks.
    count: usize,
    /// The blocks file's length: where the next line goes.
    end: u64,
    recent: VecDeque<Block>,
    baker: Account,
}

impl BlockLog {
    /// An empty log in a new file at `path` (and a new index beside it).
    pub fn create(path: &Path, baker: Account) -> std::io::Result<BlockLog> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        BlockLog::empty(file, path, baker)
    }

    fn empty(file: File, path: &Path, baker: Account) -> std::io::Result<BlockLog> {
        let index = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path.with_extension(INDEX_EXTENSION))?;
        Ok(BlockLog {
            file,
            index,
            count: 0,
            end: 0,
            recent: VecDeque::new(),
            baker,
        })
    }

    /// The log of the file at `path`: its lines while `keep` accepts their blocks (the first
    /// line that does not read or is refused ends it, and the file is cut there); the index is
    /// written anew.
    pub fn open(
        path: &Path,
        baker: Account,
        mut keep: impl FnMut(&Block) -> bool,
    ) -> std::io::Result<BlockLog> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let mut log = BlockLog::empty(file.try_clone()?, path, baker)?;
        let mut lines = BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            if lines.read_until(b'\n', &mut line)? == 0 || !line.ends_with(b"\n") {
                break;
            }
            let Some(block) = std::str::from_utf8(&line)
                .ok()
                .and_then(|text| Block::from_line(text.trim_end(), &log.baker))
            else {
                break;
            };
            if !keep(&block) {
                break;
            }
            log.remember(block, line.len() as u64)?;
        }
        log.file.set_len(log.end)?;
        Ok(log)
    }

    /// Counts `block`, whose line of `line_bytes` is at the end of the file: its index record,
    /// and the recent blocks.
    fn remember(&mut self, block: Block, line_bytes: u64) -> std::io::Result<()> {
        let mut record = [0u8; INDEX_RECORD_BYTES];
        record[..HASH_BYTES].copy_from_slice(block.hash.as_bytes());
        record[HASH_BYTES..].copy_from_slice(&self.end.to_be_bytes());
        self.index
            .write_all_at(&record, (self.count * INDEX_RECORD_BYTES) as u64)?;
        self.count += 1;
        self.end += line_bytes;
        self.recent.push_back(block);
        if self.recent.len() > RECENT_BLOCKS {
            self.recent.pop_front();
        }
        Ok(())
    }

    /// Appends `block` (written to the file before it counts).
    pub fn push(&mut self, block: Block) -> std::io::Result<()> {
        let line = block.to_line();
        self.file.write_all_at(line.as_bytes(), self.end)?;
        self.remember(block, line.len() as u64)
    }

    /// How many blocks (head's level + 1).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is none (before genesis is baked).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The last block.
    pub fn last(&self) -> Option<&Block> {
        self.recent.back()
    }

    /// The level of the first recent block.
    fn first_recent(&self) -> usize {
        self.count - self.recent.len()
    }

    /// The blocks an operation may be branched on when the next block is baked (Octez's live
    /// blocks, `Store.Chain.compute_live_blocks`): head and its `ttl` predecessors, fewer
    /// near genesis. Returns whether `hash` is one, and how many there are.
    pub fn live(&self, hash: &BlockHash, ttl: usize) -> (bool, usize) {
        let first = self.count.saturating_sub(ttl.saturating_add(1));
        let live: Vec<BlockHash> = (first..self.count)
            .filter_map(|level| self.hash_at(level))
            .collect();
        (live.contains(hash), live.len())
    }

    /// The index record of `level`: the block's hash and where its line starts.
    fn record(&self, level: usize) -> Option<(BlockHash, u64)> {
        if level >= self.count {
            return None;
        }
        let mut record = [0u8; INDEX_RECORD_BYTES];
        self.index
            .read_exact_at(&mut record, (level * INDEX_RECORD_BYTES) as u64)
            .ok()?;
        let hash = BlockHash::try_from_bytes(&record[..HASH_BYTES]).ok()?;
        let start = u64::from_be_bytes(record[HASH_BYTES..].try_into().ok()?);
        Some((hash, start))
    }

    /// The hash of the block at `level`.
    pub fn hash_at(&self, level: usize) -> Option<BlockHash> {
        match level.checked_sub(self.first_recent()) {
            Some(recent) => self.recent.get(recent).map(|block| block.hash),
            None => self.record(level).map(|(hash, _)| hash),
        }
    }

    /// The level of the block with `hash`: among the recent blocks, else in the index file,
    /// newest first (a read of the whole index for a hash the chain does not have).
    pub fn level_of(&self, hash: &BlockHash) -> Option<usize> {
        if let Some(recent) = self.recent.iter().rposition(|block| &block.hash == hash) {
            return Some(self.first_recent() + recent);
        }
        let mut chunk = vec![0u8; INDEX_SCAN_RECORDS * INDEX_RECORD_BYTES];
        let mut end = self.first_recent();
        while end > 0 {
            let start = end.saturating_sub(INDEX_SCAN_RECORDS);
            let bytes = &mut chunk[..(end - start) * INDEX_RECORD_BYTES];
            self.index
                .read_exact_at(bytes, (start * INDEX_RECORD_BYTES) as u64)
                .ok()?;
            if let Some(found) = bytes
                .chunks_exact(INDEX_RECORD_BYTES)
                .rposition(|record| &record[..HASH_BYTES] == hash.as_bytes())
            {
                return Some(start + found);
            }
            end = start;
        }
        None
    }

    /// The block at `level`: from memory when recent, else read back from its line.
    pub fn get(&self, level: usize) -> Option<Cow<'_, Block>> {
        if level >= self.count {
            return None;
        }
        if let Some(recent) = level.checked_sub(self.first_recent()) {
            return self.recent.get(recent).map(Cow::Borrowed);
        }
        let (_, start) = self.record(level)?;
        let end = match self.record(level + 1) {
            Some((_, next)) => next,
            None => self.end,
        };
        let mut bytes = vec![0; usize::try_from(end.checked_sub(start)?).ok()?];
        self.file.read_exact_at(&mut bytes, start).ok()?;
        let line = std::str::from_utf8(&bytes).ok()?;
        Block::from_line(line.trim_end(), &self.baker).map(Cow::Owned)
    }

    /// Drops the blocks from level `count` on, from the files too.
    pub fn truncate(&mut self, count: usize) -> std::io::Result<()> {
        if count >= self.count {
            return Ok(());
        }
        let Some((_, start)) = self.record(count) else {
            return Err(std::io::Error::other(format!(
                "the index has no record of level {count}"
            )));
        };
        self.end = start;
        self.file.set_len(self.end)?;
        self.count = count;
        self.index.set_len((count * INDEX_RECORD_BYTES) as u64)?;
        // The recent window lost its newest blocks: refilled from the file (read while the
        // window is empty, so that every level is read from its line).
        self.recent.clear();
        let refilled: Vec<Block> = (count.saturating_sub(RECENT_BLOCKS)..count)
            .filter_map(|level| self.get(level).map(Cow::into_owned))
            .collect();
        self.recent = refilled.into();
        self.file.flush()?;
        Ok(())
    }
}
