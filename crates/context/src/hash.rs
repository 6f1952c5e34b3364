//! Tezos context hashes: the byte encodings of contents, flat nodes, inode values, inode trees and
//! commits that BLAKE2b-256 is applied to, and the `Co...` display form.
//!
//! Spec: tezos-context-hash-SPEC.md, sections "Contents", "Commits", "Nodes", "Inode values",
//! "Inode trees". Pure functions; callers pass entries already sorted by name (the spec's order) and
//! at most 256 entries to a flat node, at most 32 to an inode value, at most 32 pointers to an inode
//! tree (asserted: a violation is a bug in the caller, not an input error).

use crate::leb128;
use kestrel_crypto::base58::{decode_check, encode_check, CONTEXT_HASH};
use std::fmt;

/// The size of every context hash: BLAKE2b-256.
pub const HASH_BYTES: usize = 32;

/// A directory with at most this many entries hashes as a flat node; above, as inodes (spec,
/// "Tree nodes representations"; Irmin's `stable_hash = 256` in Octez's context configuration).
pub const FLAT_NODE_MAX_ENTRIES: usize = 256;

/// An inode value holds at most this many entries, and an inode tree fans out this many ways (spec,
/// "Inode values" and "Index function"; Irmin's `entries = 32` in Octez's configuration).
pub const INODE_ENTRIES_MAX: usize = 32;

/// The 8-byte kind prefix of a flat-node entry pointing to contents (spec, "Nodes").
const FLAT_KIND_CONTENTS: [u8; 8] = [255, 0, 0, 0, 0, 0, 0, 0];
/// The 8-byte kind prefix of a flat-node entry pointing to a node (spec, "Nodes").
const FLAT_KIND_NODE: [u8; 8] = [0; 8];
/// The 1-byte kind of an inode-value entry pointing to a node (spec, "Inode values").
const INODE_KIND_NODE: u8 = 0;
/// The 1-byte kind of an inode-value entry pointing to contents (spec, "Inode values").
const INODE_KIND_CONTENTS: u8 = 1;
/// The tag opening an inode value (spec, "Inode values").
const INODE_VALUE_TAG: u8 = 0;
/// The tag opening an inode tree (spec, "Inode trees").
const INODE_TREE_TAG: u8 = 1;

/// A context hash: the BLAKE2b-256 of an object's encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ContextHash(pub [u8; HASH_BYTES]);

impl ContextHash {
    /// The hash as lowercase hexadecimal.
    pub fn to_hex(&self) -> String {
        let mut text = String::with_capacity(2 * HASH_BYTES);
        for byte in self.0 {
            text.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
            text.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
        }
        text
    }

    /// The `Co...` base58check form.
    pub fn to_base58(&self) -> String {
        encode_check(CONTEXT_HASH, &self.0)
    }

    /// Parses a `Co...` base58check string or 64 hexadecimal digits.
    pub fn try_from_text(text: &str) -> Option<ContextHash> {
        if text.len() == 2 * HASH_BYTES && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut bytes = [0u8; HASH_BYTES];
            for (index, byte) in bytes.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&text[2 * index..2 * index + 2], 16).ok()?;
            }
            return Some(ContextHash(bytes));
        }
        let payload = decode_check(CONTEXT_HASH, text).ok()?;
        Some(ContextHash(payload.try_into().ok()?))
    }
}

impl fmt::Display for ContextHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base58())
    }
}

impl fmt::Debug for ContextHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContextHash({})", self.to_base58())
    }
}

/// What a tree entry points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Bytes (a leaf).
    Contents,
    /// A directory (a node).
    Node,
}

/// Commit metadata (spec, "Commits"): date in seconds, author, message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitInfo {
    /// Seconds since the Unix epoch, stored as an `int64`.
    pub date_seconds: i64,
    /// Usually `"Tezos"`.
    pub author: String,
    /// Free text (Tezos puts level, fitness, priority and operation counts here).
    pub message: String,
}

/// `encode(contents)`: 8-byte big-endian length, then the bytes.
pub fn contents_hash(value: &[u8]) -> ContextHash {
    let mut state = blake2b_params().to_state();
    state.update(&(value.len() as u64).to_be_bytes());
    state.update(value);
    hash_of(&state.finalize())
}

/// Appends the flat-node encoding of `entries` (sorted by name, at most 256) to `out`.
pub fn encode_flat_node<'a>(
    out: &mut Vec<u8>,
    entries: impl ExactSizeIterator<Item = (&'a [u8], Kind, &'a ContextHash)>,
) {
    assert!(entries.len() <= FLAT_NODE_MAX_ENTRIES, "flat node size");
    out.extend_from_slice(&(entries.len() as u64).to_be_bytes());
    for (name, kind, hash) in entries {
        encode_flat_entry(out, name, kind, hash);
    }
}

/// Appends the encoding of one entry of a flat node (after the node's 8-byte entry count).
pub fn encode_flat_entry(out: &mut Vec<u8>, name: &[u8], kind: Kind, hash: &ContextHash) {
    out.extend_from_slice(match kind {
        Kind::Contents => &FLAT_KIND_CONTENTS,
        Kind::Node => &FLAT_KIND_NODE,
    });
    leb128::write_u64(out, name.len() as u64);
    out.extend_from_slice(name);
    out.extend_from_slice(&(HASH_BYTES as u64).to_be_bytes());
    out.extend_from_slice(&hash.0);
}

/// Appends the inode-value encoding of `entries` (sorted by name, at most 32) to `out`.
pub fn encode_inode_value<'a>(
    out: &mut Vec<u8>,
    entries: impl ExactSizeIterator<Item = (&'a [u8], Kind, &'a ContextHash)>,
) {
    assert!(entries.len() <= INODE_ENTRIES_MAX, "inode value size");
    out.push(INODE_VALUE_TAG);
    leb128::write_u64(out, entries.len() as u64);
    for (name, kind, hash) in entries {
        leb128::write_u64(out, name.len() as u64);
        out.extend_from_slice(name);
        out.push(match kind {
            Kind::Contents => INODE_KIND_CONTENTS,
            Kind::Node => INODE_KIND_NODE,
        });
        out.extend_from_slice(&hash.0);
    }
}

/// Appends the inode-tree encoding to `out`: `depth`, the number of entries reachable, and the
/// pointers `(index < 32, hash)` in increasing index order.
pub fn encode_inode_tree<'a>(
    out: &mut Vec<u8>,
    depth: u32,
    length: u64,
    pointers: impl ExactSizeIterator<Item = (u8, &'a ContextHash)>,
) {
    assert!(pointers.len() <= INODE_ENTRIES_MAX, "inode tree fan-out");
    out.push(INODE_TREE_TAG);
    leb128::write_u64(out, u64::from(depth));
    leb128::write_u64(out, length);
    out.push(pointers.len() as u8);
    for (index, hash) in pointers {
        leb128::write_u64(out, u64::from(index));
        out.extend_from_slice(&hash.0);
    }
}

/// Appends the commit encoding to `out`; `parents` are sorted here (the spec's order).
pub fn encode_commit(
    out: &mut Vec<u8>,
    tree: &ContextHash,
    parents: &[ContextHash],
    info: &CommitInfo,
) {
    let hash_size = (HASH_BYTES as u64).to_be_bytes();
    out.extend_from_slice(&hash_size);
    out.extend_from_slice(&tree.0);
    let mut sorted = parents.to_vec();
    sorted.sort_unstable();
    out.extend_from_slice(&(sorted.len() as u64).to_be_bytes());
    for parent in &sorted {
        out.extend_from_slice(&hash_size);
        out.extend_from_slice(&parent.0);
    }
    out.extend_from_slice(&info.date_seconds.to_be_bytes());
    out.extend_from_slice(&(info.author.len() as u64).to_be_bytes());
    out.extend_from_slice(info.author.as_bytes());
    out.extend_from_slice(&(info.message.len() as u64).to_be_bytes());
    out.extend_from_slice(info.message.as_bytes());
}

/// The hash of a commit.
pub fn commit_hash(tree: &ContextHash, parents: &[ContextHash], info: &CommitInfo) -> ContextHash {
    let mut buffer = Vec::with_capacity(128);
    encode_commit(&mut buffer, tree, parents, info);
    hash_encoding(&buffer)
}

/// BLAKE2b-256 of an encoding produced by one of the `encode_*` functions.
pub fn hash_encoding(encoding: &[u8]) -> ContextHash {
    hash_of(&blake2b_params().hash(encoding))
}

/// BLAKE2b with a 32-byte digest. `blake2b_simd` picks its AVX2 code at run time: hashing every
/// new object is the largest single cost of a commit, and this is about twice as fast as the
/// portable implementation on the x86-64 baseline target.
pub(crate) fn blake2b_params() -> blake2b_simd::Params {
    let mut params = blake2b_simd::Params::new();
    params.hash_length(HASH_BYTES);
    params
}

pub(crate) fn hash_of(digest: &blake2b_simd::Hash) -> ContextHash {
    let mut bytes = [0u8; HASH_BYTES];
    bytes.copy_from_slice(digest.as_bytes());
    ContextHash(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_encoding_is_blake2b_256() {
        // The SIMD implementation against the crypto crate's, across block-size boundaries.
        for length in [0, 1, 127, 128, 129, 255, 256, 1000, 4096, 25_000] {
            let input: Vec<u8> = (0..length).map(|index| (index * 7 + 3) as u8).collect();
            assert_eq!(
                hash_encoding(&input).0,
                kestrel_crypto::hash::blake2b_256(&input),
                "{length}"
            );
            let mut prefixed = (length as u64).to_be_bytes().to_vec();
            prefixed.extend_from_slice(&input);
            assert_eq!(
                contents_hash(&input).0,
                kestrel_crypto::hash::blake2b_256(&prefixed)
            );
        }
    }

    #[test]
    fn flat_entries_encode_as_the_spec_says_on_both_sides_of_a_one_byte_name_length() {
        // kind (8 bytes), LEB128 name length, name, hash size (8 bytes), hash.
        for (length, length_bytes) in [
            (0usize, &[0u8][..]),
            (1, &[1]),
            (126, &[126]),
            (127, &[127]),
            (128, &[0x80, 1]),
            (300, &[0xac, 2]),
        ] {
            let name: Vec<u8> = (0..length).map(|index| (index * 5 + 1) as u8).collect();
            let hash = ContextHash([7; HASH_BYTES]);
            for (kind, kind_bytes) in [
                (Kind::Contents, FLAT_KIND_CONTENTS),
                (Kind::Node, FLAT_KIND_NODE),
            ] {
                let mut expected = vec![9u8];
                expected.extend_from_slice(&kind_bytes);
                expected.extend_from_slice(length_bytes);
                expected.extend_from_slice(&name);
                expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 32]);
                expected.extend_from_slice(&hash.0);
                let mut out = vec![9u8];
                encode_flat_entry(&mut out, &name, kind, &hash);
                assert_eq!(out, expected, "name of {length} bytes");
            }
        }
    }

    #[test]
    fn contents_encoding_follows_the_spec_example() {
        // "delphi_007" is encoded as \0*7 \10 then the bytes.
        let mut expected = vec![0, 0, 0, 0, 0, 0, 0, 10];
        expected.extend_from_slice(b"delphi_007");
        assert_eq!(contents_hash(b"delphi_007"), hash_encoding(&expected));
    }

    #[test]
    fn commit_metadata_follows_the_spec_example() {
        let info = CommitInfo {
            date_seconds: 1_612_521_119,
            author: "Tezos".into(),
            message: "msg".into(),
        };
        let mut out = Vec::new();
        encode_commit(&mut out, &ContextHash([1; 32]), &[], &info);
        let metadata = &out[8 + 32 + 8..];
        let mut expected = vec![0, 0, 0, 0, 96, 29, 30, 159];
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 5]);
        expected.extend_from_slice(b"Tezos");
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3]);
        expected.extend_from_slice(b"msg");
        assert_eq!(metadata, expected);
    }

    #[test]
    fn hash_text_round_trips() {
        let text = "CoVGWKM7Ufu6dk74CEQz3MgffhUPFyeaMCD6eS3Q8o7mDis8n1Vi";
        let hash = ContextHash::try_from_text(text).unwrap();
        assert_eq!(hash.to_base58(), text);
        assert_eq!(ContextHash::try_from_text(&hash.to_hex()), Some(hash));
        assert_eq!(ContextHash::try_from_text("Co"), None);
    }
}
