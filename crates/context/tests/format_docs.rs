//! The format constants in code and in docs/formats/*.md agree, so the two cannot drift.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::{pack, store_constants as store};
use kestrel_testdata::check_documented_constants as check;

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn pack_file_constants() {
    check(
        "pack-file.md",
        &[
            ("PACK_MAGIC", text(&pack::PACK_MAGIC)),
            ("PACK_VERSION", pack::PACK_VERSION.to_string()),
            ("PACK_HEADER_BYTES", pack::PACK_HEADER_BYTES.to_string()),
            ("TAG_FLAT_NODE", pack::TAG_FLAT_NODE.to_string()),
            ("TAG_INODE_VALUES", pack::TAG_INODE_VALUES.to_string()),
            ("TAG_INODE_TREE", pack::TAG_INODE_TREE.to_string()),
            ("TAG_CONTENTS", pack::TAG_CONTENTS.to_string()),
            ("TAG_COMMIT", pack::TAG_COMMIT.to_string()),
            ("TAG_FLAT_SPLIT", pack::TAG_FLAT_SPLIT.to_string()),
            ("TAG_FLAT_PART", pack::TAG_FLAT_PART.to_string()),
            (
                "FLAT_SPLIT_MIN_ENTRIES",
                kestrel_context::FLAT_SPLIT_MIN_ENTRIES.to_string(),
            ),
            ("ENTRY_NODE", pack::ENTRY_NODE.to_string()),
            (
                "ENTRY_INLINE_CONTENTS",
                pack::ENTRY_INLINE_CONTENTS.to_string(),
            ),
            (
                "ENTRY_LARGE_CONTENTS",
                pack::ENTRY_LARGE_CONTENTS.to_string(),
            ),
            (
                "INLINE_CONTENTS_MAX_BYTES",
                kestrel_context::INLINE_CONTENTS_MAX_BYTES.to_string(),
            ),
            ("NAME_MAX_BYTES", pack::NAME_MAX_BYTES.to_string()),
            (
                "OBJECT_BODY_MAX_BYTES",
                pack::OBJECT_BODY_MAX_BYTES.to_string(),
            ),
            (
                "COMMIT_TEXT_MAX_BYTES",
                pack::COMMIT_TEXT_MAX_BYTES.to_string(),
            ),
            ("COMMIT_PARENTS_MAX", pack::COMMIT_PARENTS_MAX.to_string()),
            ("CHECKSUM_BYTES", pack::CHECKSUM_BYTES.to_string()),
            (
                "INODE_DEPTH_MAX",
                kestrel_context::INODE_DEPTH_MAX.to_string(),
            ),
            (
                "OWN_HASH_PREFIX_MAX_BYTES",
                pack::OWN_HASH_PREFIX_MAX_BYTES.to_string(),
            ),
        ],
    );
}

#[test]
fn control_and_index_constants() {
    check(
        "control-file.md",
        &[
            ("CONTROL_MAGIC", text(&kestrel_context::CONTROL_MAGIC)),
            (
                "CONTROL_VERSION",
                kestrel_context::CONTROL_VERSION.to_string(),
            ),
            ("CONTROL_BYTES", kestrel_context::CONTROL_BYTES.to_string()),
            (
                "CONTROL_V1_BYTES",
                kestrel_context::CONTROL_V1_BYTES.to_string(),
            ),
            ("GC_PAGE_BYTES", kestrel_context::GC_PAGE_BYTES.to_string()),
            ("INDEX_MAGIC", text(&store::INDEX_MAGIC)),
            ("INDEX_VERSION", store::INDEX_VERSION.to_string()),
            ("INDEX_HEADER_BYTES", store::INDEX_HEADER_BYTES.to_string()),
            ("INDEX_RECORD_BYTES", store::INDEX_RECORD_BYTES.to_string()),
            (
                "CHECKPOINT_INTERVAL_COMMITS",
                store::CHECKPOINT_INTERVAL_COMMITS.to_string(),
            ),
            (
                "CONTROL_FLAG_PREFIX",
                kestrel_context::CONTROL_FLAG_PREFIX.to_string(),
            ),
            ("PREFIX_FILE_STEM", store::PREFIX_FILE_STEM.to_string()),
            ("MAPPING_FILE_STEM", store::MAPPING_FILE_STEM.to_string()),
            ("MAPPING_MAGIC", text(&store::MAPPING_MAGIC)),
            ("MAPPING_VERSION", store::MAPPING_VERSION.to_string()),
            (
                "MAPPING_HEADER_BYTES",
                store::MAPPING_HEADER_BYTES.to_string(),
            ),
            ("MAPPING_RUN_BYTES", store::MAPPING_RUN_BYTES.to_string()),
            (
                "MAPPING_CHECKSUM_BYTES",
                store::MAPPING_CHECKSUM_BYTES.to_string(),
            ),
            (
                "MAPPING_CHECKSUM_PIECE_RUNS",
                store::MAPPING_CHECKSUM_PIECE_RUNS.to_string(),
            ),
        ],
    );
}
