//! The one error type of the context crate: a variant per rule, each carrying the file and byte
//! offset (or the key) it is about, so a corrupted store is reported precisely and never panics.

use std::fmt;
use std::path::PathBuf;

/// Which of the store's files an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFile {
    /// `store.pack`: the append-only object file.
    Pack,
    /// `store.control`: the small file replaced atomically at checkpoints.
    Control,
    /// `store.index`: commit hash to pack offset.
    Index,
    /// A trace file (Irmin's replay format).
    Trace,
    /// `store.prefix.<g>`: the live objects below the last GC's boundary.
    Prefix,
    /// `store.mapping.<g>`: where the prefix's objects lie in it.
    Mapping,
}

impl fmt::Display for StoreFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreFile::Pack => "pack file",
            StoreFile::Control => "control file",
            StoreFile::Index => "index file",
            StoreFile::Trace => "trace file",
            StoreFile::Prefix => "prefix file",
            StoreFile::Mapping => "mapping file",
        })
    }
}

/// Why a store file's bytes were rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorruptionKind {
    /// The file does not start with the expected magic bytes.
    BadMagic,
    /// The format version is not one this code reads.
    UnsupportedVersion(u64),
    /// The file ends before a record or object does.
    Truncated,
    /// A checksum did not match.
    BadChecksum,
    /// An object tag that no format version defines.
    UnknownTag(u8),
    /// A LEB128 integer is malformed or too long.
    BadInteger,
    /// A size or count exceeds its limit (the limit's name).
    LimitExceeded(&'static str),
    /// A child offset does not point strictly before its parent (objects only point backwards).
    BadChildOffset(u64),
    /// An object at an offset is not of the kind its referrer expects.
    UnexpectedObject(&'static str),
    /// Names of a node are not strictly increasing, or an inode invariant fails.
    NotCanonical(&'static str),
    /// A length recorded in one file disagrees with another file.
    Inconsistent(&'static str),
    /// An object's hash, recomputed from its bytes, differs from the hash its referrer records
    /// (`verify`).
    HashMismatch,
    /// The file is missing although the store's other files hold data (a store is never
    /// created afresh over them).
    Missing,
}

impl fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorruptionKind::BadMagic => f.write_str("bad magic bytes"),
            CorruptionKind::UnsupportedVersion(version) => {
                write!(f, "unsupported version {version}")
            }
            CorruptionKind::Truncated => f.write_str("truncated"),
            CorruptionKind::BadChecksum => f.write_str("checksum mismatch"),
            CorruptionKind::UnknownTag(tag) => write!(f, "unknown object tag {tag}"),
            CorruptionKind::BadInteger => f.write_str("malformed integer"),
            CorruptionKind::LimitExceeded(limit) => write!(f, "limit {limit} exceeded"),
            CorruptionKind::BadChildOffset(child) => {
                write!(f, "child offset {child} does not point before its parent")
            }
            CorruptionKind::UnexpectedObject(expected) => write!(f, "expected {expected}"),
            CorruptionKind::NotCanonical(rule) => write!(f, "not canonical: {rule}"),
            CorruptionKind::Inconsistent(rule) => write!(f, "inconsistent: {rule}"),
            CorruptionKind::HashMismatch => {
                f.write_str("hash differs from the one its referrer records")
            }
            CorruptionKind::Missing => {
                f.write_str("missing, although the pack or index holds data")
            }
        }
    }
}

/// Every way a context operation can fail.
#[derive(Debug)]
pub enum ContextError {
    /// An operating-system error on a file.
    Io {
        /// The file's path.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A store file's bytes are not valid.
    Corrupt {
        /// Which file.
        file: StoreFile,
        /// The file's path.
        path: PathBuf,
        /// The byte offset of the bad record or object.
        offset_bytes: u64,
        /// Which rule failed.
        kind: CorruptionKind,
    },
    /// A tree that is only in memory was asked to load a stored object.
    NoStore,
    /// A commit hash that the store does not know.
    UnknownCommit(crate::ContextHash),
    /// A parent of a new commit is not in the store.
    UnknownParent(crate::ContextHash),
    /// An inode trie grew deeper than `INODE_DEPTH_MAX` (names colliding at every depth).
    InodeTooDeep,
    /// A name or value is larger than the store accepts (the limit's name).
    TooLarge(&'static str),
    /// An object violates a tree invariant (its pack offset when it has one).
    BadObject {
        /// The object's pack offset, when it was loaded from a store.
        offset_bytes: Option<u64>,
        /// The invariant that failed.
        rule: &'static str,
    },
    /// A caller-supplied argument is not acceptable (the message says why).
    InvalidArgument(String),
    /// Another `Store` (in this process or another) has the store open for writing: it holds
    /// the directory's exclusive lock. Nothing was read or changed.
    InUse {
        /// The store directory.
        path: PathBuf,
    },
    /// The store was opened read-only ([`crate::Store::open_read_only`]) and cannot change.
    ReadOnly,
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContextError::Io {
                path,
                action,
                source,
            } => {
                write!(f, "{action} {}: {source}", path.display())
            }
            ContextError::Corrupt {
                file,
                path,
                offset_bytes,
                kind,
            } => {
                write!(
                    f,
                    "{file} {} at offset {offset_bytes}: {kind}",
                    path.display()
                )
            }
            ContextError::NoStore => f.write_str("tree refers to a store object but has no store"),
            ContextError::UnknownCommit(hash) => write!(f, "unknown commit {hash}"),
            ContextError::UnknownParent(hash) => write!(f, "unknown parent commit {hash}"),
            ContextError::InodeTooDeep => f.write_str("inode trie deeper than the limit"),
            ContextError::TooLarge(limit) => write!(f, "{limit} exceeded"),
            ContextError::BadObject {
                offset_bytes: Some(offset),
                rule,
            } => {
                write!(f, "object at pack offset {offset} breaks rule: {rule}")
            }
            ContextError::BadObject {
                offset_bytes: None,
                rule,
            } => {
                write!(f, "in-memory object breaks rule: {rule}")
            }
            ContextError::InvalidArgument(message) => f.write_str(message),
            ContextError::InUse { path } => write!(
                f,
                "store {} is in use: another process (or store) has it open for writing",
                path.display()
            ),
            ContextError::ReadOnly => f.write_str("the store is open read-only"),
        }
    }
}

impl std::error::Error for ContextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ContextError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
