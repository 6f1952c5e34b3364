//! Fuzzes the binary decoders of `kestrel-encoding` over untrusted bytes: several encodings,
//! including recursive ones (one nesting another of the same type, with tags fixed in their
//! types). The first byte picks the encoding; every decode must return a value or an error
//! (never panic, overflow the stack or allocate without bound), and a decoded value must
//! re-encode to bytes that decode to the same value. The JSON interpreter must agree
//! with the typed decoder on acceptance.

#![no_main]

use kestrel_encoding::{
    bool, boxed, bytes, case, case_with, check_size, dft, dynamic_size_with, fixed_bytes,
    fixed_bytes_ref, int16, int31, int64, list, list_cow, list_inline, list_with_length,
    merge_objs, mu, n, obj, opt, option, ranged_int, req, string, tup, uint8, union,
    variable_bytes, variable_list, varopt, z, Encoding, LengthKind, Mu, Tag, TagSize, Uint16Tag,
    Uint8Tag,
};
use libfuzzer_sys::fuzz_target;
use std::fmt::Debug;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq)]
enum Tree {
    Leaf(i64),
    Node((Box<Tree>, Box<Tree>)),
    Named((String, Vec<Tree>)),
}

fn tree() -> Mu<Tree> {
    static TREE: OnceLock<Mu<Tree>> = OnceLock::new();
    *TREE.get_or_init(|| {
        mu("tree", |tree| {
            union(
                TagSize::Uint8,
                (
                    case(
                        0,
                        "Leaf",
                        int64(),
                        |t: &Tree| match t {
                            Tree::Leaf(value) => Some(value),
                            _ => None,
                        },
                        Tree::Leaf,
                    ),
                    case(
                        1,
                        "Node",
                        tup((boxed(tree), boxed(tree)))?,
                        |t: &Tree| match t {
                            Tree::Node(children) => Some(children),
                            _ => None,
                        },
                        Tree::Node,
                    ),
                    case_with(
                        2,
                        "Named",
                        obj((req("name", string().owned()), req("children", list(tree)?)))?,
                        |t: &Tree| match t {
                            Tree::Named((name, children)) => Some((name.clone(), children.clone())),
                            _ => None,
                        },
                        Tree::Named,
                    ),
                ),
            )
        })
        .expect("tree encoding builds")
    })
}

fn leaf_of(tree: &Tree) -> Option<&i64> {
    match tree {
        Tree::Leaf(value) => Some(value),
        _ => None,
    }
}

fn children_of(tree: &Tree) -> Option<&(Box<Tree>, Box<Tree>)> {
    match tree {
        Tree::Node(children) => Some(children),
        _ => None,
    }
}

/// Two recursive encodings of the same type with tags fixed in their types: nodes of the outer
/// one (8-bit tags) hold a subtree of the inner one (16-bit tags) on their right, so each
/// occurrence must keep to its own recursion.
fn mixed_tree() -> Mu<Tree> {
    static TREE: OnceLock<Mu<Tree>> = OnceLock::new();
    *TREE.get_or_init(|| {
        let wide = mu("wide", |wide| {
            union(
                Uint16Tag,
                (
                    case(Tag::<0>, "Leaf", int64(), leaf_of, Tree::Leaf),
                    case(
                        Tag::<0x101>,
                        "Node",
                        tup((boxed(wide), boxed(wide)))?,
                        children_of,
                        Tree::Node,
                    ),
                ),
            )
        })
        .expect("wide tree encoding builds");
        mu("mixed", |mixed| {
            union(
                Uint8Tag,
                (
                    case(Tag::<0>, "Leaf", int64(), leaf_of, Tree::Leaf),
                    case(
                        Tag::<1>,
                        "Node",
                        tup((boxed(mixed), boxed(wide)))?,
                        children_of,
                        Tree::Node,
                    ),
                ),
            )
        })
        .expect("mixed tree encoding builds")
    })
}

fn check<E: Encoding>(encoding: &E, input: &[u8])
where
    for<'a> E::Value<'a>: Debug,
{
    let decoded = encoding.decode(input);
    if let Ok(value) = &decoded {
        let encoded = encoding.encode(value).expect("a decoded value re-encodes");
        let again = encoding.decode(&encoded).expect("re-encoded bytes decode");
        assert_eq!(format!("{again:?}"), format!("{value:?}"));
    }
    let json = kestrel_encoding::json::binary_to_json(&encoding.schema(), input);
    assert_eq!(
        json.is_ok(),
        decoded.is_ok(),
        "JSON and typed decoders disagree"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    match selector % 9 {
        0 => check(&tree(), input),
        7 => check(&mixed_tree(), input),
        1 => check(&n(), input),
        2 => check(&z(), input),
        3 => check(
            // Two objects merged into one: the left one of variable size (a `list_inline`
            // that moves to the heap beyond two elements) before a fixed-size right one.
            &merge_objs(
                obj((
                    req("level", int31()),
                    opt("hash", fixed_bytes::<4>()),
                    dft("flag", bool(), &false).expect("default"),
                    req("fitness", list_cow(bytes()).expect("list")),
                    req("inline", list_inline::<2, _>(bytes()).expect("list")),
                    varopt("tail", variable_bytes()),
                ))
                .expect("object"),
                obj((req("context", fixed_bytes_ref::<3>()),)).expect("object"),
            )
            .expect("merged object"),
            input,
        ),
        4 => check(
            &list_with_length(
                LengthKind::N,
                Some(100),
                option(ranged_int(-5, 300).expect("range")).expect("option"),
            )
            .expect("list"),
            input,
        ),
        5 => check(
            &dynamic_size_with(
                LengthKind::Uint16,
                variable_list(tup((uint8(), int16())).expect("tuple")).expect("list"),
            ),
            input,
        ),
        6 => check(
            &check_size(40, tup((string(), variable_bytes())).expect("tuple")),
            input,
        ),
        _ => check(&tup((variable_bytes(), int64())).expect("tuple"), input),
    }
});
