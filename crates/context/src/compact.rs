//! The compact, read-only form of a directory decoded from the pack (a flat node, tag 1, or an
//! inode value, tag 2; docs/formats/pack-file.md): the object's entries exactly as stored, in one
//! allocation together with a table of where each entry starts, so a cache miss costs one
//! allocation for the entries instead of one per name and per inline value, a lookup
//! binary-searches names that sit next to each other, and evicting the object frees one block.
//!
//! Spec: tezos-context-hash-SPEC.md, "Nodes" and "Inodes" (the entries are sorted by name, which
//! the binary search relies on). Building one runs the pack's entry-list parser
//! ([`crate::pack::EntryList`]) once over the bytes, with every check the vector form has (same
//! typed errors at the same offsets); afterwards the bytes are trusted. Callers must only read
//! it: anything that changes a directory first converts it to the vector form
//! ([`CompactEntries::to_entries`]). A compact object always came from the pack, so its hash and
//! offset are known: hashing and writing never need its entries.

use crate::hash::FLAT_NODE_MAX_ENTRIES;
use crate::node::{Entry, Name, Value};
use crate::pack::{self, EntryList, EntryView, PackError};
use std::sync::Arc;

/// Bytes of one entry in the start table (a `u32`, little-endian: an object body is at most
/// `OBJECT_BODY_MAX_BYTES` = 2^30 bytes, so every offset fits).
const START_BYTES: usize = 4;
const _: () = assert!(pack::OBJECT_BODY_MAX_BYTES <= u32::MAX as u64);

/// A directory's entries as stored, with their start offsets (see the module documentation).
#[derive(Clone)]
pub(crate) struct CompactEntries {
    /// `count` little-endian `u32` start offsets (into this same buffer), then the entries'
    /// bytes as they are in the pack (without the count that precedes them there).
    bytes: Box<[u8]>,
    count: u32,
}

impl CompactEntries {
    /// Parses the entry list at `*offset` of the object body `body` (stored at `object_offset`)
    /// with at most `limit` entries (`limit_name` in the error, at most
    /// [`FLAT_NODE_MAX_ENTRIES`]) and advances `*offset` past it. Errors are those of the vector
    /// decoder, at the same offsets of the body.
    pub(crate) fn try_new(
        body: &[u8],
        offset: &mut usize,
        object_offset: u64,
        limit: usize,
        limit_name: &'static str,
    ) -> Result<CompactEntries, PackError> {
        assert!(
            limit <= FLAT_NODE_MAX_ENTRIES,
            "entry limits are at most 256"
        );
        let mut list = EntryList::try_new(body, *offset, object_offset, limit, limit_name)?;
        let entries_start = list.offset();
        let count = list.count();
        let table_bytes = count * START_BYTES;
        // The entry list ends the body of a valid object, so this is the exact size; the start
        // table is filled in as the entries are checked, then the entries are copied once.
        let mut bytes = Vec::with_capacity(table_bytes + (body.len() - entries_start));
        bytes.resize(table_bytes, 0);
        let mut index = 0;
        while let Some((start, _)) = list.next_entry()? {
            let start_in_buffer = (start - entries_start + table_bytes) as u32;
            bytes[index * START_BYTES..(index + 1) * START_BYTES]
                .copy_from_slice(&start_in_buffer.to_le_bytes());
            index += 1;
        }
        let entries_end = list.offset();
        bytes.extend_from_slice(&body[entries_start..entries_end]);
        *offset = entries_end;
        Ok(CompactEntries {
            bytes: bytes.into_boxed_slice(),
            count: count as u32,
        })
    }

    /// The number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are no entries (an empty flat node; inode values are never empty).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes this form allocates (the one buffer), for the cache's estimate.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Where entry `index` starts in `bytes`.
    #[inline]
    fn start(&self, index: usize) -> usize {
        let at = index * START_BYTES;
        let mut word = [0u8; START_BYTES];
        word.copy_from_slice(&self.bytes[at..at + START_BYTES]);
        u32::from_le_bytes(word) as usize
    }

    /// The name of entry `index`, and where its value starts.
    #[inline]
    fn name(&self, index: usize) -> (&[u8], usize) {
        pack::entry_name(&self.bytes, self.start(index)).expect("entries are checked on load")
    }

    /// Entry `index`, parsed from the checked bytes.
    fn entry(&self, index: usize) -> EntryView<'_> {
        let mut offset = self.start(index);
        // Child offsets were checked against the object's own offset on load.
        pack::read_entry(&self.bytes, &mut offset, u64::MAX).expect("entries are checked on load")
    }

    /// Where `name` is (`Ok`) or would go (`Err`), as `slice::binary_search` answers.
    #[inline]
    pub(crate) fn search(&self, name: &[u8]) -> Result<usize, usize> {
        let mut low = 0;
        let mut high = self.len();
        while low < high {
            let middle = low + (high - low) / 2;
            match self.name(middle).0.cmp(name) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(low)
    }

    /// The value bound to `name`. A node child is built from the bytes without allocating;
    /// contents allocate their (at most 128) bytes, as the vector form's clone shares them.
    #[inline]
    pub(crate) fn find(&self, name: &[u8]) -> Option<Value> {
        let index = self.search(name).ok()?;
        // The name was just compared: only the value is parsed.
        let mut offset = self.name(index).1;
        // Child offsets were checked against the object's own offset on load.
        let value = pack::read_entry_value(&self.bytes, &mut offset, u64::MAX)
            .expect("entries are checked on load");
        Some(value.to_value())
    }

    /// The entries in order, as stored.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = EntryView<'_>> + '_ {
        (0..self.len()).map(|index| self.entry(index))
    }

    /// The vector form of the same entries (one allocation per name and per inline value): what
    /// an update changes.
    pub(crate) fn to_entries(&self) -> Vec<Entry> {
        self.to_entries_with(|name| Arc::from(name))
    }

    /// [`CompactEntries::to_entries`] with each name made by `name_of` (a store shares short
    /// names through its interner).
    pub(crate) fn to_entries_with(&self, mut name_of: impl FnMut(&[u8]) -> Name) -> Vec<Entry> {
        let mut entries = Vec::with_capacity(self.len());
        entries.extend(self.iter().map(|entry| Entry {
            name: name_of(entry.name),
            value: entry.value.to_value(),
        }));
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{ContextHash, INODE_ENTRIES_MAX};
    use crate::node::{Contents, ContentsBody, LargeContents, NodeBody, NodeObject, NodeRef};
    use crate::pack::{read_frame_header, read_node, write_node, DirectoryForm, NameInterner};
    use crate::pack::{TAG_FLAT_NODE, TAG_INODE_VALUES};
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// Where the test objects claim to be stored: child offsets must be below it.
    const OBJECT_OFFSET: u64 = 1 << 20;
    /// The hash the test inode values record of themselves.
    const OWN_HASH: ContextHash = ContextHash([5; 32]);

    /// What an entry says, comparable: (name, kind code, hash, inline bytes, length, offset).
    type Plain = (Vec<u8>, u8, [u8; 32], Vec<u8>, u64, u64);

    fn plain(entry: &Entry) -> Plain {
        let name = entry.name.to_vec();
        match &entry.value {
            Value::Node(NodeRef::Stored { offset, hash }) => (name, 0, hash.0, vec![], 0, *offset),
            Value::Node(NodeRef::Memory(_)) => panic!("decoded children are stored"),
            Value::Contents(contents) => match &contents.body {
                ContentsBody::Inline(bytes) => (name, 1, contents.hash.0, bytes.to_vec(), 0, 0),
                ContentsBody::Large(large) => (
                    name,
                    2,
                    contents.hash.0,
                    vec![],
                    large.length_bytes,
                    *large.offset.get().unwrap(),
                ),
            },
        }
    }

    /// A value of kind `kind % 3` made from `seed`.
    fn value_of(kind: u8, seed: u64, bytes: &[u8]) -> Value {
        let hash = ContextHash([seed as u8; 32]);
        let offset = 16 + seed % (OBJECT_OFFSET - 16);
        match kind % 3 {
            0 => Value::Node(NodeRef::Stored { offset, hash }),
            1 => Value::Contents(Contents {
                hash,
                body: ContentsBody::Inline(Arc::from(bytes)),
            }),
            _ => Value::Contents(Contents {
                hash,
                body: ContentsBody::Large(Arc::new(LargeContents {
                    length_bytes: 129 + seed % 100_000,
                    bytes: OnceLock::new(),
                    offset: OnceLock::from(offset),
                })),
            }),
        }
    }

    /// The entries of `body` decoded in the `Vec<Entry>` form: the oracle.
    fn read_entries_form(tag: u8, body: &[u8]) -> Result<Vec<Entry>, PackError> {
        let mut interner = NameInterner::default();
        let object = read_node(
            tag,
            body,
            OBJECT_OFFSET,
            DirectoryForm::Entries(&mut interner),
        )?;
        match &object.body {
            NodeBody::Flat(entries) if tag == TAG_FLAT_NODE => Ok(entries.clone()),
            NodeBody::Values(entries) if tag == TAG_INODE_VALUES => Ok(entries.clone()),
            _ => panic!("not the vector form of its tag"),
        }
    }

    /// The object body of a flat node (`values == false`) or inode value with `entries`.
    fn encode(values: bool, entries: Vec<Entry>) -> (u8, Vec<u8>) {
        encode_with_hash(values, entries, OWN_HASH)
    }

    /// [`encode`] of an inode value recording `hash` as its own.
    fn encode_with_hash(values: bool, entries: Vec<Entry>, hash: ContextHash) -> (u8, Vec<u8>) {
        let body = if values {
            NodeBody::Values(entries)
        } else {
            NodeBody::Flat(entries)
        };
        let mut out = Vec::new();
        let object = NodeObject::new(body);
        // An inode value's record starts with its own hash.
        let _ = object.hash.set(hash);
        write_node(&mut out, &object);
        let (tag, header_length, _) = read_frame_header(&out).unwrap();
        (tag, out[header_length..].to_vec())
    }

    /// Decodes `body` both ways and checks that they agree: the same error, or the same
    /// entries, and `find` answering as a search of the vector form for `probes`.
    fn check(tag: u8, body: &[u8], probes: &[Vec<u8>]) -> Result<(), TestCaseError> {
        let expected = read_entries_form(tag, body);
        let compact = read_node(tag, body, OBJECT_OFFSET, DirectoryForm::Compact);
        let (expected, object) = match (expected, compact) {
            (Err(expected), Err(found)) => {
                prop_assert_eq!(expected, found);
                return Ok(());
            }
            (Ok(expected), Ok(object)) => (expected, object),
            (expected, found) => {
                return Err(TestCaseError::fail(format!(
                    "vector form {:?}, compact form {:?}",
                    expected.map(|entries| entries.len()),
                    found.map(|object| object.length())
                )))
            }
        };
        let compact = match &object.body {
            NodeBody::CompactFlat(compact) if tag == TAG_FLAT_NODE => compact,
            NodeBody::CompactValues(compact) if tag == TAG_INODE_VALUES => compact,
            _ => return Err(TestCaseError::fail("not the compact form of its tag")),
        };
        prop_assert_eq!(
            compact.to_entries().iter().map(plain).collect::<Vec<_>>(),
            expected.iter().map(plain).collect::<Vec<_>>()
        );
        prop_assert_eq!(compact.len(), expected.len());
        let mut names: Vec<Vec<u8>> = expected.iter().map(|entry| entry.name.to_vec()).collect();
        names.extend(probes.iter().cloned());
        for name in names {
            let wanted = expected
                .binary_search_by(|entry| (*entry.name).cmp(&name))
                .ok()
                .map(|index| plain(&expected[index]));
            let found = compact.find(&name).map(|value| {
                plain(&Entry {
                    name: Arc::from(&name[..]),
                    value,
                })
            });
            prop_assert_eq!(found, wanted, "name {:?}", name);
            prop_assert_eq!(
                compact.search(&name),
                expected.binary_search_by(|entry| (*entry.name).cmp(&name))
            );
        }
        // Round trip: the vector form written again is the same body.
        let own = object.hash.get().copied().unwrap_or(OWN_HASH);
        let (_, again) = encode_with_hash(tag == TAG_INODE_VALUES, compact.to_entries(), own);
        prop_assert_eq!(&again[..], body);
        // The cache's copy (a hit moved back to the young generation) is the same object in
        // memory of its own; without a known hash and offset there is no copy.
        prop_assert!(object.copy_of_stored().is_none());
        // An inode value knows its hash from its record already.
        let hash = *object.hash.get_or_init(|| ContextHash([7; 32]));
        prop_assert_eq!(hash == ContextHash([7; 32]), tag == TAG_FLAT_NODE);
        let _ = object.offset.set(OBJECT_OFFSET);
        let copy = object
            .copy_of_stored()
            .expect("a decoded directory is copied");
        prop_assert_eq!(copy.hash.get(), Some(&hash));
        prop_assert_eq!(copy.offset.get(), Some(&OBJECT_OFFSET));
        let copied = match (&object.body, &copy.body) {
            (NodeBody::CompactFlat(_), NodeBody::CompactFlat(copied))
            | (NodeBody::CompactValues(_), NodeBody::CompactValues(copied)) => copied,
            _ => return Err(TestCaseError::fail("the copy changed the object's shape")),
        };
        prop_assert_eq!(
            copied.to_entries().iter().map(plain).collect::<Vec<_>>(),
            expected.iter().map(plain).collect::<Vec<_>>()
        );
        prop_assert!(
            compact.bytes.is_empty()
                || !std::ptr::eq(copied.bytes.as_ptr(), compact.bytes.as_ptr())
        );
        Ok(())
    }

    fn directory(
        values: bool,
        names: &std::collections::BTreeMap<Vec<u8>, (u8, u64, Vec<u8>)>,
    ) -> (u8, Vec<u8>) {
        let entries: Vec<Entry> = names
            .iter()
            .map(|(name, (kind, seed, bytes))| Entry {
                name: Arc::from(&name[..]),
                value: value_of(*kind, *seed, bytes),
            })
            .collect();
        encode(values, entries)
    }

    fn names_strategy(
        count: std::ops::Range<usize>,
    ) -> impl Strategy<Value = std::collections::BTreeMap<Vec<u8>, (u8, u64, Vec<u8>)>> {
        prop::collection::btree_map(
            // Short names collide often (prefixes, neighbours); a few long ones take a
            // two-byte length.
            prop_oneof![
                prop::collection::vec(0u8..4, 0..4),
                prop::collection::vec(any::<u8>(), 0..70),
                prop::collection::vec(any::<u8>(), 120..300),
            ],
            (
                any::<u8>(),
                any::<u64>(),
                prop::collection::vec(any::<u8>(), 0..=128),
            ),
            count,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn compact_form_agrees_with_the_vector_form(
            values in any::<bool>(),
            names in names_strategy(0..40),
            probes in prop::collection::vec(prop::collection::vec(0u8..5, 0..5), 0..20),
        ) {
            let names = if values {
                names.into_iter().take(INODE_ENTRIES_MAX).collect()
            } else {
                names
            };
            let (tag, body) = directory(values, &names);
            // Absent names next to present ones: each with a byte added, and cut short.
            let mut probes = probes;
            for name in names.keys() {
                let mut longer = name.clone();
                longer.push(0);
                probes.push(longer);
                if let Some((_, shorter)) = name.split_last() {
                    probes.push(shorter.to_vec());
                }
            }
            check(tag, &body, &probes)?;
        }

        #[test]
        fn corrupted_bodies_are_rejected_alike(
            values in any::<bool>(),
            names in names_strategy(0..12),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let (tag, mut body) = directory(values, &names);
            if truncate && !body.is_empty() {
                body.truncate(cut.index(body.len()));
            }
            if !body.is_empty() {
                for (position, byte) in flips {
                    let position = position.index(body.len());
                    body[position] = byte;
                }
            }
            check(tag, &body, &[])?;
        }
    }

    /// Bodies each rule of the decoder rejects, as (tag, body).
    #[test]
    fn each_rule_is_rejected_alike() {
        let entry = |name: &[u8], kind: u8| Entry {
            name: Arc::from(name),
            value: value_of(kind, 7, b"abc"),
        };
        let (_, valid) = encode(false, vec![entry(b"a", 0), entry(b"b", 1), entry(b"c", 2)]);
        // An inode value's body: its own hash, then its entries.
        let values = |entries: &[u8]| [&OWN_HASH.0[..], entries].concat();
        let mut cases: Vec<(u8, Vec<u8>)> = vec![
            // Empty inode value; empty flat node (valid).
            (TAG_INODE_VALUES, values(&[0])),
            (TAG_FLAT_NODE, vec![0]),
            // Counts over the limits.
            (TAG_INODE_VALUES, values(&[33])),
            // An inode value cut inside its own hash.
            (TAG_INODE_VALUES, values(&[])[..20].to_vec()),
            (TAG_FLAT_NODE, vec![0x81, 0x02]),
            // Truncated and overlong integers.
            (TAG_FLAT_NODE, vec![0x80]),
            (TAG_FLAT_NODE, vec![0xff; 11]),
            // Bytes after the end.
            (TAG_FLAT_NODE, vec![0, 0]),
        ];
        // Names not increasing (b, a) and equal (a, a).
        let (_, body) = encode(false, vec![entry(b"b", 0), entry(b"a", 0)]);
        cases.push((TAG_FLAT_NODE, body));
        let (_, body) = encode(false, vec![entry(b"a", 1), entry(b"a", 1)]);
        cases.push((TAG_FLAT_NODE, body));
        // Unknown kind (the kind byte of the first entry is at 3: count, length, name).
        let mut body = valid.clone();
        body[3] = 9;
        cases.push((TAG_FLAT_NODE, body));
        // A child offset at or after the object, and below the header.
        for offset in [OBJECT_OFFSET, OBJECT_OFFSET + 5, 3] {
            let (_, body) = encode(
                false,
                vec![Entry {
                    name: Arc::from(&b"x"[..]),
                    value: Value::Node(NodeRef::Stored {
                        offset,
                        hash: ContextHash([1; 32]),
                    }),
                }],
            );
            cases.push((TAG_FLAT_NODE, body));
        }
        // An inline value longer than 128 bytes (length 129 written by hand).
        let mut body = vec![1, 1, b'x', 1];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0x81, 0x01]);
        body.extend_from_slice(&[0; 129]);
        cases.push((TAG_FLAT_NODE, body));
        // Every truncation of a valid body.
        for length in 0..valid.len() {
            cases.push((TAG_FLAT_NODE, valid[..length].to_vec()));
        }
        for (tag, body) in cases {
            let expected = read_entries_form(tag, &body).map(|entries| entries.len());
            let found = read_node(tag, &body, OBJECT_OFFSET, DirectoryForm::Compact)
                .map(|object| object.length() as usize);
            assert_eq!(found, expected, "tag {tag}, body {body:?}");
        }
    }
}
