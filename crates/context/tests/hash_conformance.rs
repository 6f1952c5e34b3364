//! Conformance of the Tezos context hash: Tarides' vectors (../shared/testdata/context) and
//! published single vectors, plus property tests that large directories hash canonically.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use kestrel_context::hash::{commit_hash, contents_hash, encode_flat_node, hash_encoding};
use kestrel_context::ocaml_hash::ocaml_hash;
use kestrel_context::{CommitInfo, ContextHash, InMemory, Kind, Tree};
use proptest::prelude::*;

fn hex_hash(text: &str) -> ContextHash {
    ContextHash::try_from_text(text).expect("64 hex digits")
}

#[test]
fn all_ocaml_hash_vectors() {
    let Some(path) = kestrel_testdata::require("context/ocaml_hash.json", "all_ocaml_hash_vectors")
    else {
        return;
    };
    let cases: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 100);
    for case in cases {
        let s = case["s"].as_str().unwrap();
        let seed = case["seed"].as_u64().unwrap() as u32;
        let expected = case["ocaml_hash"].as_u64().unwrap() as u32;
        assert_eq!(
            ocaml_hash(seed, s.as_bytes()),
            expected,
            "{s:?} seed {seed}"
        );
    }
}

#[test]
fn all_flat_node_vectors() {
    let Some(path) = kestrel_testdata::require("context/nodes.json", "all_flat_node_vectors")
    else {
        return;
    };
    let cases: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 100);
    for case in cases {
        let mut bindings: Vec<(Vec<u8>, Kind, ContextHash)> = case["bindings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|binding| {
                let kind = match binding["kind"].as_str().unwrap() {
                    "Tree" => Kind::Node,
                    "Contents" => Kind::Contents,
                    other => panic!("kind {other}"),
                };
                let hash = ContextHash::try_from_text(binding["hash"].as_str().unwrap()).unwrap();
                (
                    binding["name"].as_str().unwrap().as_bytes().to_vec(),
                    kind,
                    hash,
                )
            })
            .collect();
        bindings.sort_by(|a, b| a.0.cmp(&b.0));
        let mut encoding = Vec::new();
        encode_flat_node(
            &mut encoding,
            bindings
                .iter()
                .map(|(name, kind, hash)| (&name[..], *kind, hash)),
        );
        assert_eq!(
            hash_encoding(&encoding).to_base58(),
            case["hash"].as_str().unwrap()
        );
    }
}

#[test]
fn published_single_vectors() {
    // A directory {"a": contents "\001"} and a parentless commit, as published with Tezedge's
    // implementation of the same spec.
    let tree = Tree::empty().with(&["a"], &[1]).unwrap();
    assert_eq!(
        contents_hash(&[1]),
        hex_hash("407f958990678e2e9fb06758bc6520dae46d838d39948a4c51a5b19bd079293d")
    );
    assert_eq!(
        tree.hash(),
        hex_hash("d49a53323107f2ae40b01eaa4e9bec4d02801daf60bab82dc2529e40d40fa917")
    );
    let info = CommitInfo {
        date_seconds: 0,
        author: "Tezedge".into(),
        message: "persist changes".into(),
    };
    let root = hex_hash("0d78b30e959c2a079e8ccb4ca19d428c95d29b2f02a35c1c58ef9c8972bc26aa");
    assert_eq!(
        commit_hash(&root, &[], &info),
        hex_hash("e6de3fd37b1dc2b3c9d072ea67c2c5be1b55eeed9f5377b2bfc1228e6f9cb69b")
    );
}

/// The hash a directory of `names -> contents(name)` must have, computed straight from the spec
/// (flat up to 256 entries, `partition(0, X)` above), independently of the store's inode code.
fn reference_directory_hash(names: &[Vec<u8>]) -> ContextHash {
    let mut sorted: Vec<(Vec<u8>, ContextHash)> = names
        .iter()
        .map(|name| (name.clone(), contents_hash(name)))
        .collect();
    sorted.sort();
    sorted.dedup_by(|a, b| a.0 == b.0);
    let mut encoding = Vec::new();
    if sorted.len() <= 256 {
        encode_flat_node(
            &mut encoding,
            sorted
                .iter()
                .map(|(name, hash)| (&name[..], Kind::Contents, hash)),
        );
        return hash_encoding(&encoding);
    }
    reference_partition(0, &sorted)
}

fn reference_partition(depth: u32, entries: &[(Vec<u8>, ContextHash)]) -> ContextHash {
    let mut encoding = Vec::new();
    if entries.len() <= 32 {
        kestrel_context::hash::encode_inode_value(
            &mut encoding,
            entries
                .iter()
                .map(|(name, hash)| (&name[..], Kind::Contents, hash)),
        );
        return hash_encoding(&encoding);
    }
    let mut pointers = Vec::new();
    for index in 0..32u32 {
        let bucket: Vec<_> = entries
            .iter()
            .filter(|(name, _)| ocaml_hash(depth, name) % 32 == index)
            .cloned()
            .collect();
        if !bucket.is_empty() {
            pointers.push((index as u8, reference_partition(depth + 1, &bucket)));
        }
    }
    kestrel_context::hash::encode_inode_tree(
        &mut encoding,
        depth,
        entries.len() as u64,
        pointers.iter().map(|(index, hash)| (*index, hash)),
    );
    hash_encoding(&encoding)
}

fn build(names: &[Vec<u8>]) -> Tree {
    let mut tree = Tree::empty();
    for name in names {
        tree = tree.add(&InMemory, &[name], name).unwrap();
    }
    tree
}

fn names_strategy(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(b'a'..=b'z', 1..12), 0..max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn directories_hash_as_the_spec_says(names in names_strategy(900)) {
        let tree = build(&names);
        if names.is_empty() {
            prop_assert!(tree.is_empty());
        } else {
            prop_assert_eq!(tree.hash(), reference_directory_hash(&names));
        }
    }

    #[test]
    fn insertion_and_removal_order_do_not_matter(
        names in names_strategy(700),
        extra in names_strategy(400),
        seed in any::<u64>(),
    ) {
        // Add names then extra in one order, remove extra in a shuffled order: the tree must hash
        // exactly like one built from the names left, directly.
        let mut all: Vec<Vec<u8>> = names.iter().chain(extra.iter()).cloned().collect();
        let mut state = seed | 1;
        for index in (1..all.len()).rev() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            all.swap(index, (state % (index as u64 + 1)) as usize);
        }
        let mut tree = build(&all);
        let kept: std::collections::BTreeSet<_> = names.iter().cloned().collect();
        let mut removals: Vec<_> = extra.iter().filter(|name| !kept.contains(*name)).cloned().collect();
        removals.reverse();
        for name in &removals {
            tree = tree.remove(&InMemory, &[name]).unwrap();
        }
        let direct = build(&names);
        prop_assert_eq!(tree.hash(), direct.hash());
        if !names.is_empty() {
            prop_assert_eq!(tree.hash(), reference_directory_hash(&names));
        }
        prop_assert_eq!(tree.length(&InMemory, &[] as &[&str]).unwrap(), kept.len() as u64);
    }
}

#[test]
fn flat_up_to_256_and_inodes_above() {
    for count in [1usize, 32, 33, 100, 255, 256, 257, 258, 1000, 5000] {
        let names: Vec<Vec<u8>> = (0..count)
            .map(|index| format!("n{index}").into_bytes())
            .collect();
        let tree = build(&names);
        let mut flat = Vec::new();
        let mut sorted: Vec<_> = names
            .iter()
            .map(|n| (n.clone(), contents_hash(n)))
            .collect();
        sorted.sort();
        if count <= 256 {
            encode_flat_node(
                &mut flat,
                sorted.iter().map(|(n, h)| (&n[..], Kind::Contents, h)),
            );
            assert_eq!(
                tree.hash(),
                hash_encoding(&flat),
                "{count} entries hash flat"
            );
        } else {
            assert_eq!(
                tree.hash(),
                reference_partition(0, &sorted),
                "{count} entries hash as inodes"
            );
        }
        // Shrinking back below the threshold returns to the flat hash.
        let mut shrunk = tree.clone();
        for name in names.iter().skip(200) {
            shrunk = shrunk.remove(&InMemory, &[name]).unwrap();
        }
        assert_eq!(shrunk.hash(), build(&names[..count.min(200)]).hash());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn in_place_updates_match_copying_updates_and_leave_snapshots_alone(
        names in names_strategy(600),
        removals in prop::collection::vec(any::<prop::sample::Index>(), 0..300),
    ) {
        let mut in_place = Tree::empty();
        let mut snapshots = Vec::new();
        for (position, name) in names.iter().enumerate() {
            let key = [&b"dir"[..], &name[..], b"leaf"];
            if position % 97 == 0 {
                snapshots.push((in_place.clone(), position));
            }
            in_place.add_in_place(&InMemory, &key, name).unwrap();
        }
        let mut copying = Tree::empty();
        for name in &names {
            copying = copying.add(&InMemory, &[&b"dir"[..], &name[..], b"leaf"], name).unwrap();
        }
        prop_assert_eq!(in_place.hash(), copying.hash());
        if !names.is_empty() {
            for index in &removals {
                let name = &names[index.index(names.len())];
                let key = [&b"dir"[..], &name[..]];
                in_place.remove_in_place(&InMemory, &key).unwrap();
                copying = copying.remove(&InMemory, &key).unwrap();
            }
        }
        prop_assert_eq!(in_place.hash(), copying.hash());
        for (snapshot, position) in &snapshots {
            // A snapshot taken before later in-place updates keeps exactly its contents.
            let before: std::collections::BTreeSet<&Vec<u8>> = names[..*position].iter().collect();
            let dir: &[&[u8]] = &[b"dir"];
            prop_assert_eq!(snapshot.length(&InMemory, dir).unwrap(), before.len() as u64);
            for name in &names[*position..] {
                let present = snapshot.mem_tree(&InMemory, &[&b"dir"[..], &name[..]]).unwrap();
                prop_assert_eq!(present, before.contains(name));
            }
        }
    }
}

/// A tree built afresh from `model` (every hash computed from the start).
fn fresh_tree(model: &std::collections::BTreeMap<String, Vec<u8>>) -> Tree {
    let mut tree = Tree::empty();
    for (name, value) in model {
        tree.add_in_place(&InMemory, &["directory", name.as_str()], value)
            .unwrap();
    }
    tree
}

#[test]
fn a_large_flat_directory_rehashed_from_a_snapshot_equals_a_fresh_hash() {
    // Replacing entries of a flat directory of 200 entries resumes BLAKE2b from a snapshot
    // before the first changed entry. Each step changes entries (by copying the path or in
    // place, positions around the 16-entry snapshot boundaries, several before one hash,
    // inserts and removals, which reset the snapshots) and compares with a fresh tree.
    let names: Vec<String> = (0..220u32)
        .map(|index| format!("{:08x}", index.wrapping_mul(2_654_435_761)))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    let mut model: std::collections::BTreeMap<String, Vec<u8>> = sorted[..200]
        .iter()
        .map(|name| (name.clone(), b"v0".to_vec()))
        .collect();
    let mut tree = fresh_tree(&model);
    tree.hash();
    // (positions in the sorted names to set, in place?)
    let steps: [(&[usize], bool); 10] = [
        (&[0], true),
        (&[199], false),
        (&[15, 16], true),
        (&[17, 190], false),
        (&[63, 64, 65], true),
        (&[100], true),
        (&[205], true),
        (&[100, 3], false),
        (&[215, 7], true),
        (&[0, 1, 2, 31, 32, 47, 48], false),
    ];
    for (step, (positions, in_place)) in steps.into_iter().enumerate() {
        for position in positions {
            let name = &sorted[*position];
            let value = vec![step as u8; 3 + step];
            let key = ["directory", name.as_str()];
            if in_place {
                tree.add_in_place(&InMemory, &key, &value).unwrap();
            } else {
                tree = tree.add(&InMemory, &key, &value).unwrap();
            }
            model.insert(name.clone(), value);
        }
        if step == 5 {
            tree.remove_in_place(&InMemory, &["directory", sorted[10].as_str()])
                .unwrap();
            model.remove(&sorted[10]);
        }
        assert_eq!(tree.hash(), fresh_tree(&model).hash(), "step {step}");
    }
}
