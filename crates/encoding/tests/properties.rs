//! Property tests for every combinator: `decode(encode(v)) == v` for arbitrary values, and
//! arbitrary bytes either decode or fail with an error (never a panic); when they decode, the
//! value re-encodes to bytes that decode to the same value.

// Helpers of this test file unwrap what the test itself constructs (clippy.toml allows it only
// inside `#[test]` functions).
#![allow(clippy::unwrap_used)]

use kestrel_encoding::{
    add_padding, bool, bounded_bytes, bytes, case, case_with, check_size, conv, dft, dynamic_size,
    dynamic_size_with, fixed_bytes, fixed_bytes_ref, fixed_list, float, int16, int31, int32, int64,
    int8, list, list_inline, list_max, list_with_length, merge_objs, n, obj, opt, option,
    ranged_float, ranged_int, req, string, string_enum, tup, uint16, uint30, uint8, union,
    variable_bytes, variable_list, varopt, z, Encoding, InlineList, LengthKind, TagSize,
};
use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;
use std::borrow::Cow;
use std::fmt::Debug;

#[path = "support/tree.rs"]
mod tree;
use tree::{tree_encoding, tree_encoding_with, Tree};

/// `decode(encode(value))` prints like `value` (values may borrow, so compare printed forms).
fn round_trip<E: Encoding>(encoding: &E, value: &E::Value<'_>)
where
    for<'a> E::Value<'a>: Debug,
{
    let encoded = encoding.encode(value).unwrap();
    let decoded = encoding.decode(&encoded).unwrap();
    assert_eq!(format!("{decoded:?}"), format!("{value:?}"));
    // JSON goes back to the same bytes too.
    let json = encoding.to_json(value).unwrap();
    let mut buffer = Vec::new();
    let from_json = encoding.decode_json(&json, &mut buffer).unwrap();
    assert_eq!(format!("{from_json:?}"), format!("{value:?}"), "{json}");
}

/// Arbitrary bytes decode or fail; a decoded value re-encodes and decodes to itself.
fn arbitrary_bytes<E: Encoding>(encoding: &E, input: &[u8])
where
    for<'a> E::Value<'a>: Debug,
{
    if let Ok(value) = encoding.decode(input) {
        let encoded = encoding.encode(&value).unwrap();
        let again = encoding.decode(&encoded).unwrap();
        assert_eq!(format!("{again:?}"), format!("{value:?}"));
    }
    // The JSON interpreter agrees on acceptance.
    let json = kestrel_encoding::json::binary_to_json(&encoding.schema(), input);
    assert_eq!(json.is_ok(), encoding.decode(input).is_ok());
}

macro_rules! properties {
    ($name:ident, $encoding:expr, $strategy:expr, $value:ident => $make:expr) => {
        mod $name {
            use super::*;
            proptest! {
                #[test]
                fn round_trips(input in $strategy) {
                    let encoding = $encoding;
                    let $value = &input;
                    let value = $make;
                    round_trip(&encoding, &value);
                }

                #[test]
                fn arbitrary_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..64)) {
                    arbitrary_bytes(&$encoding, &input);
                }
            }
        }
    };
}

properties!(int8_, int8(), any::<i8>(), v => *v);
properties!(uint8_, uint8(), any::<u8>(), v => *v);
properties!(int16_, int16(), any::<i16>(), v => *v);
properties!(uint16_, uint16(), any::<u16>(), v => *v);
properties!(int31_, int31(), -(1i32 << 30)..(1 << 30), v => *v);
properties!(uint30_, uint30(), 0u32..(1 << 30), v => *v);
properties!(int32_, int32(), any::<i32>(), v => *v);
properties!(int64_, int64(), any::<i64>(), v => *v);
properties!(ranged_int_pos, ranged_int(33, 333333).unwrap(), 33i32..=333333, v => *v);
properties!(ranged_int_neg, ranged_int(-100, 100).unwrap(), -100i32..=100, v => *v);
properties!(float_, float(), -1.0e300f64..1.0e300, v => *v);
properties!(ranged_float_, ranged_float(-1.0, 1.0).unwrap(), -1.0f64..=1.0, v => *v);
properties!(bool_, bool(), any::<bool>(), v => *v);
properties!(n_, n(), proptest::collection::vec(any::<u32>(), 0..6), v => BigUint::new(v.clone()));
properties!(z_, z(), (any::<bool>(), proptest::collection::vec(any::<u32>(), 0..6)),
v => {
    let magnitude = BigInt::from(BigUint::new(v.1.clone()));
    if v.0 { -magnitude } else { magnitude }
});
properties!(bytes_uint30, bytes(), proptest::collection::vec(any::<u8>(), 0..40), v => &v[..]);
properties!(bytes_uint16, bytes().length_kind(LengthKind::Uint16),
    proptest::collection::vec(any::<u8>(), 0..40), v => &v[..]);
properties!(bytes_uint8, bytes().length_kind(LengthKind::Uint8),
    proptest::collection::vec(any::<u8>(), 0..40), v => &v[..]);
properties!(bytes_n, bytes().length_kind(LengthKind::N),
    proptest::collection::vec(any::<u8>(), 0..300), v => &v[..]);
properties!(bounded, bounded_bytes(10), proptest::collection::vec(any::<u8>(), 0..=10), v => &v[..]);
properties!(string_, string(), ".{0,20}", v => v.as_str());
properties!(string_owned, string().owned(), ".{0,20}", v => v.clone());
properties!(variable, variable_bytes(), proptest::collection::vec(any::<u8>(), 0..40), v => &v[..]);
properties!(fixed, fixed_bytes::<4>(), any::<[u8; 4]>(), v => *v);
properties!(fixed_ref, fixed_bytes_ref::<4>(), any::<[u8; 4]>(), v => v);
properties!(option_, option(int16()).unwrap(), proptest::option::of(any::<i16>()), v => *v);
properties!(objects,
    obj((req("a", int8()), opt("b", uint16()), dft("c", uint8(), &3).unwrap(), varopt("d", bytes()))).unwrap(),
    (any::<i8>(), proptest::option::of(any::<u16>()), any::<u8>(),
     proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8))),
    v => (v.0, v.1, v.2, v.3.as_deref()));
properties!(tuples, tup((int8(), variable_bytes(), uint16())).unwrap(),
    (any::<i8>(), proptest::collection::vec(any::<u8>(), 0..8), any::<u16>()),
    v => (v.0, &v.1[..], v.2));
properties!(lists, list(int16()).unwrap(), proptest::collection::vec(any::<i16>(), 0..20), v => v.clone());
// Inline up to three elements, on the heap beyond: both sides of the spill.
properties!(inline_lists, list_inline::<3, _>(bytes()).unwrap(),
    proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..8),
    v => Cow::Owned(v.iter().map(|x| &x[..]).collect::<InlineList<&[u8], 3>>()));
properties!(merged_objects,
    merge_objs(obj((req("a", int8()), req("b", variable_bytes()))).unwrap(),
        obj((req("c", uint16()),)).unwrap()).unwrap(),
    (any::<i8>(), proptest::collection::vec(any::<u8>(), 0..8), any::<u16>()),
    v => ((v.0, &v.1[..]), (v.2,)));
properties!(lists_max, list_max(3, string()).unwrap(),
    proptest::collection::vec(".{0,4}", 0..=3), v => v.iter().map(String::as_str).collect::<Vec<_>>());
properties!(variable_lists, variable_list(n()).unwrap(),
    proptest::collection::vec(any::<u64>(), 0..10), v => v.iter().map(|x| BigUint::from(*x)).collect::<Vec<_>>());
properties!(list_with_length_n, list_with_length(LengthKind::N, None, int32()).unwrap(),
    proptest::collection::vec(any::<i32>(), 0..20), v => v.clone());
properties!(list_with_length_u8, list_with_length(LengthKind::Uint8, Some(5), bool()).unwrap(),
    proptest::collection::vec(any::<bool>(), 0..=5), v => v.clone());
properties!(fixed_lists, fixed_list(3, uint8()).unwrap(),
    proptest::collection::vec(any::<u8>(), 3), v => v.clone());
properties!(dynamic_sizes, dynamic_size_with(LengthKind::Uint8, variable_bytes()),
    proptest::collection::vec(any::<u8>(), 0..40), v => &v[..]);
properties!(dynamic_size_n, dynamic_size_with(LengthKind::N, list(int64()).unwrap()),
    proptest::collection::vec(any::<i64>(), 0..30), v => v.clone());
properties!(check_sizes, check_size(12, dynamic_size(variable_bytes())),
    proptest::collection::vec(any::<u8>(), 0..=8), v => &v[..]);
properties!(padding, add_padding(int16(), 3).unwrap(), any::<i16>(), v => *v);
properties!(enums, string_enum(vec![("a", 0u8), ("b", 1), ("c", 2)]).unwrap(), 0u8..3, v => *v);
properties!(conversions,
    conv(|v: &(u8, u8)| (v.1, v.0), |(a, b)| (b, a), tup((uint8(), uint8())).unwrap()),
    any::<(u8, u8)>(), v => *v);

#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Dot,
    Segment(i16, i16),
    Label(String),
}

fn shape_encoding() -> impl for<'a> Encoding<Value<'a> = Shape> {
    union(
        TagSize::Uint16,
        (
            case_with(
                0,
                "Dot",
                kestrel_encoding::empty(),
                |s: &Shape| matches!(s, Shape::Dot).then_some(()),
                |()| Shape::Dot,
            ),
            case_with(
                300,
                "Segment",
                tup((int16(), int16())).unwrap(),
                |s: &Shape| match s {
                    Shape::Segment(a, b) => Some((*a, *b)),
                    _ => None,
                },
                |(a, b)| Shape::Segment(a, b),
            ),
            case(
                7,
                "Label",
                obj((req("label", string().owned()),)).unwrap(),
                |_: &Shape| None,
                |(label,)| Shape::Label(label),
            ),
        ),
    )
    .unwrap()
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Dot),
        any::<(i16, i16)>().prop_map(|(a, b)| Shape::Segment(a, b)),
    ]
}

properties!(unions, shape_encoding(), shape_strategy(), v => v.clone());

fn tree_strategy() -> impl Strategy<Value = Tree> {
    any::<i64>()
        .prop_map(Tree::Leaf)
        .prop_recursive(8, 64, 2, |inner| {
            (inner.clone(), inner).prop_map(|(l, r)| Tree::Node((Box::new(l), Box::new(r))))
        })
}

properties!(recursive, tree_encoding().unwrap(), tree_strategy(), v => v.clone());

/// The shared tree definition fixes its tag width and tags in its type (`Uint8Tag`, `Tag<N>`);
/// this is the same tree with both chosen at run time, built once.
fn run_time_tagged_tree() -> kestrel_encoding::Mu<Tree> {
    static TREE: std::sync::OnceLock<kestrel_encoding::Mu<Tree>> = std::sync::OnceLock::new();
    *TREE.get_or_init(|| tree_encoding_with(TagSize::Uint8, 0, 1).unwrap())
}

proptest! {
    /// Static and run-time tags write the same bytes, read each other's bytes, and describe
    /// the same schema.
    #[test]
    fn static_tags_agree_with_run_time_tags(tree in tree_strategy()) {
        let static_form = tree_encoding().unwrap();
        let run_time = run_time_tagged_tree();
        let bytes = static_form.encode(&tree).unwrap();
        prop_assert_eq!(&run_time.encode(&tree).unwrap(), &bytes);
        prop_assert_eq!(&run_time.decode(&bytes).unwrap(), &tree);
        prop_assert_eq!(static_form.schema(), run_time.schema());
    }
}

proptest! {
    /// Variable-size elements nested in recursive JSON and lists still round-trip through JSON.
    #[test]
    fn nested_lists(input in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..5), 0..5)) {
        let encoding = list(list(uint8()).unwrap()).unwrap();
        round_trip(&encoding, &input);
    }
}

proptest! {
    /// A union case whose payload is a fixed-width number writes its tag and the number as one
    /// run (`Encoding::FIXED_RUN_BYTES`): the same bytes as the tag and then the number written
    /// one after the other (the path of a payload without a fixed run, here through `conv`),
    /// with 8-bit and 16-bit tags, and they read back.
    #[test]
    fn tag_and_fixed_width_payload_run(value in any::<i64>(), small in any::<u16>(), wide in any::<bool>()) {
        type Value = Result<i64, u16>;
        let (tag_size, tags) = if wide {
            (TagSize::Uint16, (300u16, 7u16))
        } else {
            (TagSize::Uint8, (200u16, 7u16))
        };
        let run = union(tag_size, (
            case_with(tags.0, "Number", int64(), |v: &Value| v.ok(), Ok),
            case_with(tags.1, "Small", uint16(), |v: &Value| v.err(), Err),
        )).unwrap();
        let piecewise = union(tag_size, (
            case_with(tags.0, "Number", conv(|v: &i64| *v, |v| v, int64()), |v: &Value| v.ok(), Ok),
            case_with(tags.1, "Small", conv(|v: &u16| *v, |v| v, uint16()), |v: &Value| v.err(), Err),
        )).unwrap();
        let tag_bytes = |tag: u16| if wide { tag.to_be_bytes().to_vec() } else { vec![tag as u8] };
        for (input, expected) in [
            (Ok(value), [tag_bytes(tags.0), value.to_be_bytes().to_vec()].concat()),
            (Err(small), [tag_bytes(tags.1), small.to_be_bytes().to_vec()].concat()),
        ] {
            let bytes = run.encode(&input).unwrap();
            prop_assert_eq!(&bytes, &expected);
            prop_assert_eq!(&piecewise.encode(&input).unwrap(), &expected);
            prop_assert_eq!(run.decode(&bytes).unwrap(), input);
        }
    }
}
