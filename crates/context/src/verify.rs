//! `verify`: re-hashes every object reachable from the head (or from every kept commit) and
//! compares each hash with the one its referrer records (an inode tree's children record their
//! own hashes, docs/formats/pack-file.md tag 3: such a hash is only a label until its object is
//! re-hashed, and an inode object's own hash must also equal its computed one); checks each commit against its index record and, for the commits after the last GC,
//! the region checksums. The first mismatch is a typed [`ContextError::Corrupt`] naming the file
//! and offset (never a wrong hash handed to a reader).
//!
//! The walk is [`crate::walk::walk`]: each object once, in decreasing offset order, labelled with
//! the hash its first referrer records; a second referrer recording another hash for the same
//! object is a mismatch too.

use crate::error::{ContextError, CorruptionKind, StoreFile};
use crate::hash::{
    commit_hash, contents_hash, encode_flat_node, encode_inode_tree, encode_inode_value,
    hash_encoding, ContextHash, Kind, FLAT_NODE_MAX_ENTRIES, HASH_BYTES, INODE_ENTRIES_MAX,
};
use crate::pack::{self, EntryList, ValueView};
use crate::prefix::PackReader;
use crate::walk::{corrupt_pack, read_frame, read_own_hash, walk, Visit};
use std::path::Path;

/// Which commits `verify` starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyScope {
    /// The head commit.
    Head,
    /// Every commit the store keeps.
    AllCommits,
}

/// What a successful `verify` checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Commits checked against their index records.
    pub commits: u64,
    /// Objects re-hashed.
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Commit regions whose checksum was checked.
    pub regions: u64,
}

/// A kept commit as `verify` reads it: its index record and its object.
pub(crate) struct CommitToCheck {
    /// The hash the index records.
    pub(crate) indexed: ContextHash,
    /// Where the index records it.
    pub(crate) index_offset_bytes: u64,
    /// Its pack offset.
    pub(crate) offset: u64,
}

/// The pack and index a verification reads.
pub(crate) struct Files<'a> {
    pub(crate) pack: &'a PackReader,
    pub(crate) pack_path: &'a Path,
    pub(crate) pack_length_bytes: u64,
    pub(crate) index_path: &'a Path,
    /// Below this, regions may hold punched pages: their checksums are not checked.
    pub(crate) gc_boundary_bytes: u64,
    /// The head's hash as the control file (or the recovery) records it.
    pub(crate) head: Option<ContextHash>,
    /// Where the first checked commit's region starts, when it is the store's first commit and
    /// no GC punched anything (its region runs from the pack header).
    pub(crate) first_region_start: Option<u64>,
}

/// Checks `commits` (in index order) and everything their trees reach. A bad object below the
/// last GC's boundary is named in the prefix file, at its offset there.
pub(crate) fn verify(
    files: &Files<'_>,
    commits: &[CommitToCheck],
) -> Result<VerifyReport, ContextError> {
    check(files, commits).map_err(|error| files.pack.place(error))
}

fn check(files: &Files<'_>, commits: &[CommitToCheck]) -> Result<VerifyReport, ContextError> {
    let mut report = VerifyReport::default();
    let mut buffer = Vec::new();
    let mut roots = Vec::with_capacity(commits.len());
    let mut records = Vec::with_capacity(commits.len());
    for commit in commits {
        let frame = read_frame(
            files.pack,
            files.pack_length_bytes,
            commit.offset,
            &mut buffer,
        )?;
        if frame.tag != pack::TAG_COMMIT {
            return Err(ContextError::Corrupt {
                file: StoreFile::Index,
                path: files.index_path.to_path_buf(),
                offset_bytes: commit.index_offset_bytes + crate::hash::HASH_BYTES as u64,
                kind: CorruptionKind::UnexpectedObject("a commit at the recorded offset"),
            });
        }
        let record =
            pack::read_commit(&buffer[frame.body.clone()], commit.offset).map_err(|error| {
                corrupt_pack(
                    files.pack_path,
                    frame.body_position(commit.offset, error.body_offset_bytes),
                    error.kind,
                )
            })?;
        records.push((record, frame.length_bytes()));
    }
    for (position, (commit, (record, _))) in commits.iter().zip(&records).enumerate() {
        let parents: Vec<ContextHash> = record.parents.iter().map(|(hash, _)| *hash).collect();
        let computed = commit_hash(&record.tree_hash, &parents, &record.info);
        if computed != commit.indexed {
            // The next commit's parent (or the control file's head) says which file is wrong.
            let witness = match records.get(position + 1) {
                Some((next, _)) => next.parents.first().map(|(hash, _)| *hash),
                None => files.head,
            };
            return Err(if witness == Some(computed) {
                ContextError::Corrupt {
                    file: StoreFile::Index,
                    path: files.index_path.to_path_buf(),
                    offset_bytes: commit.index_offset_bytes,
                    kind: CorruptionKind::HashMismatch,
                }
            } else {
                corrupt_pack(files.pack_path, commit.offset, CorruptionKind::HashMismatch)
            });
        }
        report.commits += 1;
        roots.push((record.tree_offset, record.tree_hash));
        // The parents kept: at the offsets the index records.
        for (hash, offset) in &record.parents {
            if let Some(parent) = commits[..position]
                .iter()
                .rev()
                .find(|c| c.indexed == *hash)
            {
                if *offset != Some(parent.offset) {
                    return Err(corrupt_pack(
                        files.pack_path,
                        commit.offset,
                        CorruptionKind::Inconsistent("a parent's offset is its index record's"),
                    ));
                }
            }
        }
        // The region before the commit, when the previous commit is kept and no GC punched it.
        let region_start = match position {
            0 => files.first_region_start,
            _ => Some(commits[position - 1].offset + records[position - 1].1),
        };
        if let Some(start) = region_start {
            if start >= files.gc_boundary_bytes && start <= commit.offset {
                let mut region = vec![0u8; (commit.offset - start) as usize];
                files.pack.read_exact_at(&mut region, start)?;
                if pack::region_checksum(&region) != record.region_checksum {
                    return Err(corrupt_pack(
                        files.pack_path,
                        start,
                        CorruptionKind::BadChecksum,
                    ));
                }
                report.regions += 1;
            }
        }
    }
    let mut encoding = Vec::new();
    let mut part_buffer = Vec::new();
    // An inode tree's hash is made of its children's own hashes, which lie in their records: a
    // tree whose hash mismatches may hold no bad byte itself. Its error waits for the walk to
    // reach the children (lower in the pack): a child whose own hash is bad is the one named.
    let mut suspect: Option<ContextError> = None;
    walk(
        files.pack,
        files.pack_length_bytes,
        roots,
        |visit: Visit<'_, ContextHash>, push| {
            let body = &visit.bytes[visit.frame.body.clone()];
            let position = |error: pack::PackError| {
                corrupt_pack(
                    files.pack_path,
                    visit
                        .frame
                        .body_position(visit.offset, error.body_offset_bytes),
                    error.kind,
                )
            };
            encoding.clear();
            let mut own: Option<Result<ContextHash, pack::PackError>> = None;
            let computed = match visit.frame.tag {
                pack::TAG_CONTENTS => contents_hash(body),
                pack::TAG_FLAT_NODE | pack::TAG_INODE_VALUES => {
                    let flat = visit.frame.tag == pack::TAG_FLAT_NODE;
                    let (limit, limit_name) = if flat {
                        (FLAT_NODE_MAX_ENTRIES, "FLAT_NODE_MAX_ENTRIES")
                    } else {
                        (INODE_ENTRIES_MAX, "INODE_ENTRIES_MAX")
                    };
                    // An inode value starts with its own hash: checked against the computed
                    // one below.
                    let start = if flat {
                        0
                    } else {
                        own = Some(match body.get(..HASH_BYTES) {
                            Some(bytes) => {
                                let mut hash = ContextHash::default();
                                hash.0.copy_from_slice(bytes);
                                Ok(hash)
                            }
                            None => Err(pack::PackError {
                                body_offset_bytes: body.len(),
                                kind: CorruptionKind::Truncated,
                            }),
                        });
                        HASH_BYTES
                    };
                    let entries =
                        entry_views(body, start, visit.offset, limit, limit_name, &mut *push)
                            .map_err(position)?;
                    let views = entries
                        .iter()
                        .map(|(name, kind, hash)| (*name, *kind, hash));
                    if flat {
                        encode_flat_node(&mut encoding, views);
                    } else {
                        encode_inode_value(&mut encoding, views);
                    }
                    hash_encoding(&encoding)
                }
                pack::TAG_INODE_TREE => {
                    let record = pack::read_tree(body, visit.offset).map_err(position)?;
                    // The children's hashes are in their own records; each child checks its
                    // own when it is visited.
                    let mut hashes = Vec::with_capacity(record.pointers.len());
                    for (index, offset) in &record.pointers {
                        let hash = read_own_hash(files.pack, files.pack_length_bytes, *offset)?;
                        push(*offset, hash);
                        hashes.push((*index, hash));
                    }
                    own = Some(Ok(record.hash));
                    encode_inode_tree(
                        &mut encoding,
                        record.depth,
                        record.length,
                        hashes.iter().map(|(index, hash)| (*index, hash)),
                    );
                    hash_encoding(&encoding)
                }
                pack::TAG_FLAT_SPLIT => {
                    let (count, parts) =
                        pack::read_flat_split(body, visit.offset).map_err(position)?;
                    let mut entries: Vec<(Vec<u8>, Kind, ContextHash)> = Vec::with_capacity(count);
                    for (index, part_offset) in parts {
                        let part = read_frame(
                            files.pack,
                            files.pack_length_bytes,
                            part_offset,
                            &mut part_buffer,
                        )?;
                        let part_body = &part_buffer[part.body.clone()];
                        if part.tag != pack::TAG_FLAT_PART || part_body.first() != Some(&index) {
                            return Err(corrupt_pack(
                                files.pack_path,
                                part_offset,
                                CorruptionKind::UnexpectedObject("a part of a split flat node"),
                            ));
                        }
                        let views = entry_views(
                            part_body,
                            1,
                            part_offset,
                            FLAT_NODE_MAX_ENTRIES,
                            "FLAT_NODE_MAX_ENTRIES",
                            &mut *push,
                        )
                        .map_err(|error| {
                            corrupt_pack(
                                files.pack_path,
                                part.body_position(part_offset, error.body_offset_bytes),
                                error.kind,
                            )
                        })?;
                        entries.extend(
                            views
                                .into_iter()
                                .map(|(name, kind, hash)| (name.to_vec(), kind, hash)),
                        );
                    }
                    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    if entries.len() != count
                        || entries.windows(2).any(|pair| pair[0].0 == pair[1].0)
                    {
                        return Err(corrupt_pack(
                            files.pack_path,
                            visit.offset,
                            CorruptionKind::Inconsistent(
                                "a split flat node's count is its parts' sum",
                            ),
                        ));
                    }
                    encode_flat_node(
                        &mut encoding,
                        entries
                            .iter()
                            .map(|(name, kind, hash)| (&name[..], *kind, hash)),
                    );
                    hash_encoding(&encoding)
                }
                _ => {
                    return Err(corrupt_pack(
                        files.pack_path,
                        visit.offset,
                        CorruptionKind::UnexpectedObject("a node or contents"),
                    ))
                }
            };
            let own = own.transpose().map_err(position)?;
            let mismatch = match own {
                Some(own) if own != computed => Some(corrupt_pack(
                    files.pack_path,
                    visit.frame.body_position(visit.offset, 0),
                    CorruptionKind::HashMismatch,
                )),
                _ => (computed != *visit.label).then(|| {
                    corrupt_pack(files.pack_path, visit.offset, CorruptionKind::HashMismatch)
                }),
            };
            match mismatch {
                Some(error) if visit.frame.tag == pack::TAG_INODE_TREE => {
                    suspect.get_or_insert(error);
                }
                Some(error) => return Err(error),
                None => {}
            }
            report.objects += 1;
            report.bytes += visit.frame.length_bytes();
            Ok(())
        },
        |offset, first, again| {
            if first == again {
                Ok(())
            } else {
                Err(corrupt_pack(
                    files.pack_path,
                    offset,
                    CorruptionKind::HashMismatch,
                ))
            }
        },
        || false,
    )?;
    match suspect {
        Some(error) => Err(error),
        None => Ok(report),
    }
}

/// An entry's name, kind and recorded hash: what a directory's hash encoding is made of.
type EntryHash<'a> = (&'a [u8], Kind, ContextHash);

/// The entries of the entry list at `start` of `body` (of the object at `object_offset`) as
/// (name, kind, hash), pushing each child object with the hash the entry records.
fn entry_views<'a>(
    body: &'a [u8],
    start: usize,
    object_offset: u64,
    limit: usize,
    limit_name: &'static str,
    push: &mut dyn FnMut(u64, ContextHash),
) -> Result<Vec<EntryHash<'a>>, pack::PackError> {
    let mut list = EntryList::try_new(body, start, object_offset, limit, limit_name)?;
    let mut entries = Vec::with_capacity(list.count());
    while let Some((_, entry)) = list.next_entry()? {
        let hash = match entry.value {
            ValueView::Node { hash, offset } | ValueView::Large { hash, offset, .. } => {
                push(offset, hash);
                hash
            }
            ValueView::Inline { hash, bytes } => {
                // Inline contents are checked here: no object of their own.
                if contents_hash(bytes) != hash {
                    return Err(pack::PackError {
                        body_offset_bytes: list.offset(),
                        kind: CorruptionKind::HashMismatch,
                    });
                }
                hash
            }
        };
        entries.push((entry.name, entry.value.kind(), hash));
    }
    if list.offset() != body.len() {
        return Err(pack::PackError {
            body_offset_bytes: list.offset(),
            kind: CorruptionKind::Inconsistent("bytes after the end of the object"),
        });
    }
    Ok(entries)
}
