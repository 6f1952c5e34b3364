//! The chain's blocks: every block's line in the blocks file (`blocks.jsonl`), and in memory only
//! the last [`RECENT_BLOCKS`] blocks and, for each level, where its line starts and its hash
//! (40 bytes a block), so that a node that bakes for hours keeps its memory nearly flat. An older
//! block is read back from its line when asked for.

use kestrel_crypto::BlockHash;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::accounts::Account;
use crate::block::Block;

/// Blocks kept in memory: the ones clients ask for (head, `head~2`, pytezos's `head~115`,
/// `live_blocks`' 120) with room to spare.
pub const RECENT_BLOCKS: usize = 256;

/// The blocks file and what is kept of it in memory.
pub struct BlockLog {
    file: File,
    /// The start of each level's line; the file's length after the last.
    offsets: Vec<u64>,
    end: u64,
    hashes: Vec<BlockHash>,
    recent: VecDeque<Block>,
    baker: Account,
}

impl BlockLog {
    /// An empty log in a new file at `path`.
    pub fn create(path: &Path, baker: Account) -> std::io::Result<BlockLog> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(BlockLog::empty(file, baker))
    }

    fn empty(file: File, baker: Account) -> BlockLog {
        BlockLog {
            file,
            offsets: Vec::new(),
            end: 0,
            hashes: Vec::new(),
            recent: VecDeque::new(),
            baker,
        }
    }

    /// The log of the file at `path`: its lines while `keep` accepts their blocks (the first
    /// line that does not read or is refused ends it, and the file is cut there).
    pub fn open(
        path: &Path,
        baker: Account,
        mut keep: impl FnMut(&Block) -> bool,
    ) -> std::io::Result<BlockLog> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(error),
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let mut log = BlockLog::empty(file, baker);
        for line in text.split_inclusive('\n') {
            if !line.ends_with('\n') {
                break;
            }
            let Some(block) = Block::from_line(line.trim_end(), &log.baker) else {
                break;
            };
            if !keep(&block) {
                break;
            }
            log.remember(block, line.len() as u64);
        }
        log.file.set_len(log.end)?;
        Ok(log)
    }

    fn remember(&mut self, block: Block, line_bytes: u64) {
        self.offsets.push(self.end);
        self.end += line_bytes;
        self.hashes.push(block.hash);
        self.recent.push_back(block);
        if self.recent.len() > RECENT_BLOCKS {
            self.recent.pop_front();
        }
    }

    /// Appends `block` (written to the file before it counts).
    pub fn push(&mut self, block: Block) -> std::io::Result<()> {
        let line = block.to_line();
        self.file.write_all_at(line.as_bytes(), self.end)?;
        self.remember(block, line.len() as u64);
        Ok(())
    }

    /// How many blocks (head's level + 1).
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether there is none (before genesis is baked).
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The last block.
    pub fn last(&self) -> Option<&Block> {
        self.recent.back()
    }

    /// The hash of the block at `level`.
    pub fn hash_at(&self, level: usize) -> Option<BlockHash> {
        self.hashes.get(level).copied()
    }

    /// The blocks an operation may be branched on when the next block is baked (Octez's live
    /// blocks, `Store.Chain.compute_live_blocks`): head and its `ttl` predecessors, fewer
    /// near genesis. Returns whether `hash` is one, and how many there are.
    pub fn live(&self, hash: &BlockHash, ttl: usize) -> (bool, usize) {
        let first = self.hashes.len().saturating_sub(ttl.saturating_add(1));
        let live = &self.hashes[first..];
        (live.contains(hash), live.len())
    }

    /// The level of the block with `hash`.
    pub fn level_of(&self, hash: &BlockHash) -> Option<usize> {
        self.hashes.iter().rposition(|known| known == hash)
    }

    /// The block at `level`: from memory when recent, else read back from its line.
    pub fn get(&self, level: usize) -> Option<Cow<'_, Block>> {
        let first_recent = self.len() - self.recent.len();
        if level >= self.len() {
            return None;
        }
        if level >= first_recent {
            return self.recent.get(level - first_recent).map(Cow::Borrowed);
        }
        let start = self.offsets[level];
        let end = self.offsets.get(level + 1).copied().unwrap_or(self.end);
        let mut bytes = vec![0; usize::try_from(end - start).ok()?];
        self.file.read_exact_at(&mut bytes, start).ok()?;
        let line = std::str::from_utf8(&bytes).ok()?;
        Block::from_line(line.trim_end(), &self.baker).map(Cow::Owned)
    }

    /// Drops the blocks from level `count` on, from the file too.
    pub fn truncate(&mut self, count: usize) -> std::io::Result<()> {
        if count >= self.len() {
            return Ok(());
        }
        self.end = self.offsets[count];
        self.file.set_len(self.end)?;
        self.offsets.truncate(count);
        self.hashes.truncate(count);
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
