//! The control file: one fixed-size record saying how much of the pack file and of the index file
//! is known good, and which commit is the head. It is replaced atomically (write a temporary file,
//! fsync it, rename it over the old one, fsync the directory), so it is always either the old or
//! the new record. Normative spec: docs/formats/control-file.md.

use crate::hash::{ContextHash, HASH_BYTES};
use crate::CorruptionKind;

/// The first 8 bytes of the control file.
pub const CONTROL_MAGIC: [u8; 8] = *b"KSTRLCTL";
/// The control format version this code writes (it reads versions 1 and 2 too).
pub const CONTROL_VERSION: u32 = 3;
/// Flag bit (version 3): the objects below `gc_boundary` are read from the prefix and mapping
/// files of generation `gc_count` (docs/formats/control-file.md).
pub const CONTROL_FLAG_PREFIX: u32 = 1;
/// The size of a version-1 control record: magic 8, version 4, flags 4, pack length 8, index
/// length 8, commit count 8, head offset 8, head hash 32, checksum 8.
pub const CONTROL_V1_BYTES: usize = 8 + 4 + 4 + 8 + 8 + 8 + 8 + HASH_BYTES + 8;
/// The size of the control record: version 1's fields, then index start 8, GC boundary 8, GC
/// count 8, GC time 8, and the checksum 8.
pub const CONTROL_BYTES: usize = CONTROL_V1_BYTES + 4 * 8;
/// Where the checksum starts in the current version.
const CHECKSUM_OFFSET: usize = CONTROL_BYTES - 8;
/// The head offset recorded when the store has no commit yet.
pub const NO_HEAD_OFFSET: u64 = u64::MAX;

/// The decoded control record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlRecord {
    /// Pack bytes known durable and valid at the last checkpoint.
    pub pack_length_bytes: u64,
    /// Index bytes known durable and valid at the last checkpoint.
    pub index_length_bytes: u64,
    /// Commits in the index at the last checkpoint.
    pub commit_count: u64,
    /// The head commit's pack offset and hash, if any.
    pub head: Option<(u64, ContextHash)>,
    /// Where the kept commits' records start in the index: the records before were dropped by
    /// a GC (`INDEX_HEADER_BYTES` when none was).
    pub index_start_bytes: u64,
    /// The end of the last GC's commit object in the pack: below it, objects no kept commit
    /// reaches may have been freed; 0 when the store was never collected.
    pub gc_boundary_bytes: u64,
    /// GCs completed on this store.
    pub gc_count: u64,
    /// When the last GC was recorded, in seconds since the Unix epoch (0: never).
    pub gc_time_seconds: u64,
    /// The objects below `gc_boundary_bytes` are in the prefix of generation `gc_count`
    /// ([`CONTROL_FLAG_PREFIX`]); otherwise (a store collected by version 2, which punched dead
    /// pages in place) they are in the pack.
    pub gc_prefix: bool,
}

impl ControlRecord {
    /// The record's bytes, checksum included.
    pub fn encode(&self) -> [u8; CONTROL_BYTES] {
        let mut bytes = [0u8; CONTROL_BYTES];
        bytes[0..8].copy_from_slice(&CONTROL_MAGIC);
        bytes[8..12].copy_from_slice(&CONTROL_VERSION.to_be_bytes());
        let flags = if self.gc_prefix {
            CONTROL_FLAG_PREFIX
        } else {
            0
        };
        bytes[12..16].copy_from_slice(&flags.to_be_bytes());
        bytes[16..24].copy_from_slice(&self.pack_length_bytes.to_be_bytes());
        bytes[24..32].copy_from_slice(&self.index_length_bytes.to_be_bytes());
        bytes[32..40].copy_from_slice(&self.commit_count.to_be_bytes());
        let (head_offset, head_hash) = self
            .head
            .unwrap_or((NO_HEAD_OFFSET, ContextHash::default()));
        bytes[40..48].copy_from_slice(&head_offset.to_be_bytes());
        bytes[48..80].copy_from_slice(&head_hash.0);
        bytes[80..88].copy_from_slice(&self.index_start_bytes.to_be_bytes());
        bytes[88..96].copy_from_slice(&self.gc_boundary_bytes.to_be_bytes());
        bytes[96..104].copy_from_slice(&self.gc_count.to_be_bytes());
        bytes[104..112].copy_from_slice(&self.gc_time_seconds.to_be_bytes());
        let checksum = control_checksum(&bytes[..CHECKSUM_OFFSET]);
        bytes[CHECKSUM_OFFSET..].copy_from_slice(&checksum.to_be_bytes());
        bytes
    }

    /// Decodes a control file's bytes; the error carries the offset of the bad field.
    pub fn decode(bytes: &[u8]) -> Result<ControlRecord, (u64, CorruptionKind)> {
        if bytes.len() < 8 || bytes[0..8] != CONTROL_MAGIC {
            return Err((0, CorruptionKind::BadMagic));
        }
        if bytes.len() < 12 {
            return Err((8, CorruptionKind::Truncated));
        }
        let version = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        let size = match version {
            1 => CONTROL_V1_BYTES,
            2 | CONTROL_VERSION => CONTROL_BYTES,
            _ => return Err((8, CorruptionKind::UnsupportedVersion(u64::from(version)))),
        };
        if bytes.len() < size {
            return Err((bytes.len() as u64, CorruptionKind::Truncated));
        }
        if bytes.len() > size {
            return Err((
                size as u64,
                CorruptionKind::Inconsistent("bytes after the control record"),
            ));
        }
        let word = |start: usize| {
            let mut value = [0u8; 8];
            value.copy_from_slice(&bytes[start..start + 8]);
            u64::from_be_bytes(value)
        };
        let checksum_offset = size - 8;
        if word(checksum_offset) != control_checksum(&bytes[..checksum_offset]) {
            return Err((checksum_offset as u64, CorruptionKind::BadChecksum));
        }
        let flags = u32::from_be_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
        let known_flags = if version == CONTROL_VERSION {
            CONTROL_FLAG_PREFIX
        } else {
            0
        };
        if flags & !known_flags != 0 {
            return Err((12, CorruptionKind::Inconsistent("no unknown flag is set")));
        }
        let head_offset = word(40);
        let mut head_hash = [0u8; HASH_BYTES];
        head_hash.copy_from_slice(&bytes[48..80]);
        let record = ControlRecord {
            pack_length_bytes: word(16),
            index_length_bytes: word(24),
            commit_count: word(32),
            head: (head_offset != NO_HEAD_OFFSET).then_some((head_offset, ContextHash(head_hash))),
            index_start_bytes: if version == 1 {
                crate::store::INDEX_HEADER_BYTES
            } else {
                word(80)
            },
            gc_boundary_bytes: if version == 1 { 0 } else { word(88) },
            gc_count: if version == 1 { 0 } else { word(96) },
            gc_time_seconds: if version == 1 { 0 } else { word(104) },
            gc_prefix: flags & CONTROL_FLAG_PREFIX != 0,
        };
        if record.index_start_bytes < crate::store::INDEX_HEADER_BYTES
            || record.index_start_bytes > record.index_length_bytes
        {
            return Err((
                80,
                CorruptionKind::Inconsistent("the index start lies within the index"),
            ));
        }
        if record.gc_prefix && (record.gc_boundary_bytes == 0 || record.gc_count == 0) {
            return Err((
                12,
                CorruptionKind::Inconsistent("a prefix is named by a GC's boundary and count"),
            ));
        }
        if record.gc_boundary_bytes > record.pack_length_bytes {
            return Err((
                88,
                CorruptionKind::Inconsistent("the GC boundary lies within the pack"),
            ));
        }
        Ok(record)
    }
}

/// The control record's checksum: the first 8 bytes of BLAKE2b-256 (docs/formats/control-file.md;
/// 80 bytes once per checkpoint, so its cost does not matter).
fn control_checksum(bytes: &[u8]) -> u64 {
    let digest = kestrel_crypto::hash::blake2b_256(bytes);
    u64::from_be_bytes([
        digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_each_field() {
        let record = ControlRecord {
            pack_length_bytes: 1234,
            index_length_bytes: 56,
            commit_count: 1,
            head: Some((16, ContextHash([7; 32]))),
            index_start_bytes: 16,
            gc_boundary_bytes: 1000,
            gc_count: 3,
            gc_time_seconds: 1_700_000_000,
            gc_prefix: true,
        };
        let bytes = record.encode();
        assert_eq!(ControlRecord::decode(&bytes), Ok(record.clone()));
        assert_eq!(
            ControlRecord::decode(&bytes[..40]),
            Err((40, CorruptionKind::Truncated))
        );
        let mut bad = bytes;
        bad[0] ^= 1;
        assert_eq!(
            ControlRecord::decode(&bad),
            Err((0, CorruptionKind::BadMagic))
        );
        let mut bad = bytes;
        bad[20] ^= 1;
        assert_eq!(
            ControlRecord::decode(&bad),
            Err((CHECKSUM_OFFSET as u64, CorruptionKind::BadChecksum))
        );
        let mut bad = bytes;
        bad[11] = 9;
        assert_eq!(
            ControlRecord::decode(&bad),
            Err((8, CorruptionKind::UnsupportedVersion(9)))
        );
        let mut bad = record.clone();
        bad.index_start_bytes = 8;
        assert_eq!(
            ControlRecord::decode(&bad.encode()),
            Err((
                80,
                CorruptionKind::Inconsistent("the index start lies within the index")
            ))
        );
    }

    /// A version-1 record (written before GC existed) reads as a store never collected.
    #[test]
    fn version_1_records_read_as_never_collected() {
        let mut bytes = [0u8; CONTROL_V1_BYTES];
        bytes[0..8].copy_from_slice(&CONTROL_MAGIC);
        bytes[8..12].copy_from_slice(&1u32.to_be_bytes());
        bytes[16..24].copy_from_slice(&1234u64.to_be_bytes());
        bytes[24..32].copy_from_slice(&56u64.to_be_bytes());
        bytes[32..40].copy_from_slice(&1u64.to_be_bytes());
        bytes[40..48].copy_from_slice(&16u64.to_be_bytes());
        bytes[48..80].copy_from_slice(&[7; 32]);
        let checksum = control_checksum(&bytes[..80]);
        bytes[80..88].copy_from_slice(&checksum.to_be_bytes());
        assert_eq!(
            ControlRecord::decode(&bytes),
            Ok(ControlRecord {
                pack_length_bytes: 1234,
                index_length_bytes: 56,
                commit_count: 1,
                head: Some((16, ContextHash([7; 32]))),
                index_start_bytes: 16,
                gc_boundary_bytes: 0,
                gc_count: 0,
                gc_time_seconds: 0,
                gc_prefix: false,
            })
        );
    }
}
