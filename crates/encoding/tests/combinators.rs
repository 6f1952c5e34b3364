//! Combinator behaviour beyond the vector file: the real 206-byte block header from the P2P
//! test data (decoded and re-encoded to the same bytes), recursive encodings at depth 100,000
//! (a typed depth error, no stack overflow), the build-time rejections, and the JSON mapping.

// Helpers of this test file unwrap what the test itself constructs (clippy.toml allows it only
// inside `#[test]` functions).
#![allow(clippy::unwrap_used)]

use kestrel_encoding::recursive::DEFAULT_MAX_DEPTH;
use kestrel_encoding::{
    add_padding, bool, bytes, case, case_with, check_size, conv, dft, dynamic_size, empty,
    fixed_list, int16, int64, int8, list, list_cow, list_inline, list_max, list_with_length,
    merge_objs, merge_tups, n, null, obj, opt, option, req, string, string_enum, tup, uint16,
    uint8, union, unit, variable_bytes, variable_list, variable_string, varopt, z, BuildError,
    DecodeErrorKind, EncodeErrorKind, Encoding, InlineList, LengthKind, SizeClass, TagSize,
};
use kestrel_encoding::{boxed, mu, CaseTag, Tag, TagWidth, Uint16Tag, Uint8Tag};
use serde_json::json;
use std::borrow::Cow;

#[path = "support/block_header.rs"]
mod block_header;
use block_header::block_header_encoding;

#[path = "support/tree.rs"]
mod tree;
use tree::{children_of, leaf_of, tree_encoding, tree_encoding_with, Tree};

#[test]
fn block_header_round_trip() {
    let Some(path) = kestrel_testdata::require("encoding/p2p/block-header.msg", "block_header")
    else {
        return;
    };
    let input = std::fs::read(path).unwrap();
    assert_eq!(input.len(), 206);
    let encoding = block_header_encoding().unwrap();
    assert_eq!(encoding.layout().size, SizeClass::Variable);
    let header = encoding.decode(&input).unwrap();
    assert_eq!(header.level, 610079);
    assert_eq!(header.proto, 4);
    assert_eq!(header.timestamp, 1568622928);
    assert_eq!(header.validation_pass, 4);
    assert_eq!(
        header.fitness[..],
        [&[0x00][..], &[0, 0, 0, 0, 0x01, 0x26, 0x31, 0xb2][..]]
    );
    assert_eq!(header.protocol_data.len(), 75);
    let mut buffer = Vec::new();
    encoding.encode_into(&header, &mut buffer).unwrap();
    assert_eq!(buffer, input);
    // The JSON form goes back to the same bytes.
    let json = encoding.to_json(&header).unwrap();
    assert_eq!(json["level"], json!(610079));
    assert_eq!(json["timestamp"], json!("1568622928"));
    assert_eq!(json["fitness"], json!(["00", "00000000012631b2"]));
    let mut scratch = Vec::new();
    assert_eq!(encoding.decode_json(&json, &mut scratch).unwrap(), header);
    // Truncations fail with Not_enough_data at the first missing byte or earlier.
    for length in [0, 3, 4, 40, 77, 120, 125, 130] {
        let error = encoding.decode(&input[..length]).unwrap_err();
        assert_eq!(
            error.kind,
            DecodeErrorKind::NotEnoughData,
            "length {length}"
        );
    }
}

/// A left comb of `depth` nodes: input nested `depth` levels deep, built iteratively.
fn deep_tree_bytes(depth: usize) -> Vec<u8> {
    let mut bytes = vec![1u8; depth];
    for _ in 0..=depth {
        bytes.push(0);
        bytes.extend_from_slice(&7i64.to_be_bytes());
    }
    bytes
}

#[test]
fn recursive_tree_round_trip() {
    let encoding = tree_encoding().unwrap();
    let tree = Tree::Node((
        Box::new(Tree::Leaf(-1)),
        Box::new(Tree::Node((
            Box::new(Tree::Leaf(2)),
            Box::new(Tree::Leaf(3)),
        ))),
    ));
    let bytes = encoding.encode(&tree).unwrap();
    assert_eq!(bytes.len(), 2 + 3 * 9);
    assert_eq!(encoding.decode(&bytes).unwrap(), tree);
    assert_eq!(encoding.to_json(&tree).unwrap(), json!(["-1", ["2", "3"]]));
    let error = encoding.decode(&[7]).unwrap_err();
    assert_eq!(
        (error.kind.clone(), error.offset),
        (DecodeErrorKind::UnexpectedTag(7), 0)
    );
}

#[test]
fn recursion_depth_100000_is_a_typed_error() {
    let encoding = tree_encoding().unwrap();
    let input = deep_tree_bytes(100_000);
    let error = encoding.decode(&input).unwrap_err();
    assert_eq!(
        error.kind,
        DecodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
    // The JSON interpreter follows the same limit.
    let schema = encoding.schema();
    let json_error = kestrel_encoding::json::binary_to_json(&schema, &input).unwrap_err();
    assert!(matches!(
        json_error,
        kestrel_encoding::JsonError::Decode(error)
            if matches!(error.kind, DecodeErrorKind::DepthLimitExceeded { .. })
    ));
    // Just inside the limit decodes (the root is level 1, each node one more).
    let input = deep_tree_bytes(DEFAULT_MAX_DEPTH - 2);
    let tree = encoding.decode(&input).unwrap();
    assert_eq!(encoding.encode(&tree).unwrap(), input);
    // A value built deeper than the limit fails to encode with a typed error.
    let mut deep = Tree::Leaf(0);
    for _ in 0..DEFAULT_MAX_DEPTH + 10 {
        deep = Tree::Node((Box::new(deep), Box::new(Tree::Leaf(1))));
    }
    let error = encoding.encode(&deep).unwrap_err();
    assert_eq!(
        error.kind,
        EncodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
    // The same for the right child, which the encoder writes in a loop rather than by
    // recursion: each loop turn still counts one level, so what encodes also decodes.
    let right_comb = |depth: usize| {
        let mut tree = Tree::Leaf(0);
        for _ in 0..depth {
            tree = Tree::Node((Box::new(Tree::Leaf(1)), Box::new(tree)));
        }
        tree
    };
    let within = right_comb(DEFAULT_MAX_DEPTH - 1);
    let bytes = encoding.encode(&within).unwrap();
    assert_eq!(encoding.decode(&bytes).unwrap(), within);
    let error = encoding.encode(&right_comb(DEFAULT_MAX_DEPTH)).unwrap_err();
    assert_eq!(
        error.kind,
        EncodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
    // One more level in front (a node whose left child is `Leaf(1)`) is too deep to decode.
    let mut deeper = vec![1u8, 0];
    deeper.extend_from_slice(&1i64.to_be_bytes());
    deeper.extend_from_slice(&bytes);
    assert_eq!(
        encoding.decode(&deeper).unwrap_err().kind,
        DecodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
    // Drop the deep values iteratively: `Tree` is a test type with the compiler's Drop.
    let mut stack = vec![deep, within];
    while let Some(tree) = stack.pop() {
        if let Tree::Node((left, right)) = tree {
            stack.push(*left);
            stack.push(*right);
        }
    }
}

/// Values built 100,000 levels deep, on the left (written by recursion) and on the right
/// (written by the recursion's loop), fail to encode with the typed error, not a stack
/// overflow; the error leaves the caller's buffer holding its earlier contents and the bytes
/// written before the limit.
#[test]
fn encode_depth_100000_is_a_typed_error() {
    let encoding = tree_encoding().unwrap();
    let mut left = Tree::Leaf(0);
    let mut right = Tree::Leaf(0);
    for _ in 0..100_000 {
        left = Tree::Node((Box::new(left), Box::new(Tree::Leaf(1))));
        right = Tree::Node((Box::new(Tree::Leaf(1)), Box::new(right)));
    }
    for (name, deep) in [("left", &left), ("right", &right)] {
        let mut out = vec![0xaa, 0xbb];
        let error = encoding.encode_into(deep, &mut out).unwrap_err();
        assert_eq!(
            error.kind,
            EncodeErrorKind::DepthLimitExceeded {
                max_depth: DEFAULT_MAX_DEPTH
            },
            "{name}"
        );
        assert_eq!(&out[..2], &[0xaa, 0xbb], "{name}");
        assert_eq!(error.offset, out.len(), "{name}");
        // The left comb fails before its first leaf: one tag byte per level entered.
        if name == "left" {
            assert_eq!(out.len(), 2 + DEFAULT_MAX_DEPTH, "{name}");
        }
    }
    // Drop the deep values iteratively: `Tree` is a test type with the compiler's Drop.
    let mut stack = vec![left, right];
    while let Some(tree) = stack.pop() {
        if let Tree::Node((left, right)) = tree {
            stack.push(*left);
            stack.push(*right);
        }
    }
}

/// `encode_into` appends after what the buffer held and reuses its allocation.
#[test]
fn encode_into_appends_and_reuses_the_buffer() {
    let encoding = tree_encoding().unwrap();
    let tree = Tree::Node((Box::new(Tree::Leaf(-1)), Box::new(Tree::Leaf(2))));
    let mut out = Vec::with_capacity(64);
    out.push(0x55);
    let allocation = out.as_ptr();
    encoding.encode_into(&tree, &mut out).unwrap();
    assert_eq!(
        hex::encode(&out),
        "550100ffffffffffffffff000000000000000002"
    );
    assert_eq!(out.as_ptr(), allocation);
}

#[test]
fn build_errors() {
    // A variable-size field that is not last, unless only fixed-size fields follow.
    assert_eq!(
        obj((req("a", variable_string()), req("b", string()))).err(),
        Some(BuildError::VariableNotLast { position: 0 })
    );
    assert!(obj((req("a", variable_string()), req("b", int8()))).is_ok());
    assert_eq!(
        tup((variable_bytes(), variable_bytes())).err(),
        Some(BuildError::VariableNotLast { position: 0 })
    );
    // Lists of variable-size or zero-width elements.
    assert_eq!(
        list(variable_string()).err(),
        Some(BuildError::VariableElements)
    );
    assert_eq!(list(unit()).err(), Some(BuildError::ZeroableElements));
    assert_eq!(
        variable_list(empty()).err(),
        Some(BuildError::ZeroableElements)
    );
    assert!(list(dynamic_size(variable_string())).is_ok());
    // Options.
    assert_eq!(option(unit()).err(), Some(BuildError::NullableOption));
    assert_eq!(option(null()).err(), Some(BuildError::NullableOption));
    assert_eq!(option(empty()).err(), Some(BuildError::OptionOfZeroWidth));
    assert_eq!(
        option(variable_bytes()).err(),
        Some(BuildError::OptionOfVariable)
    );
    assert_eq!(
        option(option(int8()).unwrap()).err(),
        Some(BuildError::NullableOption)
    );
    // Unions.
    let leaf = |tag| case(tag, "x", int8(), |v: &i8| Some(v), |v| v);
    assert_eq!(
        union(TagSize::Uint8, (leaf(1), leaf(1))).err(),
        Some(BuildError::DuplicateTag(1))
    );
    assert_eq!(
        union(TagSize::Uint8, (leaf(256),)).err(),
        Some(BuildError::TagOutOfRange(256))
    );
    assert!(union(TagSize::Uint16, (leaf(256),)).is_ok());
    // Others.
    assert_eq!(
        list_with_length(LengthKind::Uint8, Some(2000), int8()).err(),
        Some(BuildError::MaxLengthTooLarge {
            max_length: 2000,
            limit: 255
        })
    );
    assert_eq!(
        add_padding(string(), 2).err(),
        Some(BuildError::PaddingOfNonFixed)
    );
    assert_eq!(add_padding(int8(), 0).err(), Some(BuildError::ZeroLength));
    assert_eq!(
        string_enum(vec![("a", 1)]).err(),
        Some(BuildError::TooFewEnumCases)
    );
    assert_eq!(
        fixed_list(2, variable_bytes()).err(),
        Some(BuildError::VariableElements)
    );
    assert!(kestrel_encoding::ranged_int(0, 1 << 30).is_err());
    assert!(kestrel_encoding::ranged_float(f64::NAN, 1.0).is_err());
}

#[test]
fn size_classes() {
    assert_eq!(
        tup((int8(), int64())).unwrap().layout().size,
        SizeClass::Fixed(9)
    );
    assert_eq!(
        tup((int8(), n())).unwrap().layout().size,
        SizeClass::Dynamic
    );
    assert_eq!(
        tup((int8(), variable_bytes())).unwrap().layout().size,
        SizeClass::Variable
    );
    assert_eq!(option(int8()).unwrap().layout().size, SizeClass::Dynamic);
    assert_eq!(
        add_padding(int8(), 3).unwrap().layout().size,
        SizeClass::Fixed(4)
    );
    assert_eq!(tree_encoding().unwrap().layout().size, SizeClass::Dynamic);
    assert_eq!(opt("x", int8()).layout_size(), SizeClass::Dynamic);
    assert_eq!(varopt("x", int8()).layout_size(), SizeClass::Variable);
}

trait FieldSize {
    fn layout_size(&self) -> SizeClass;
}

impl<F: kestrel_encoding::product::Field> FieldSize for F {
    fn layout_size(&self) -> SizeClass {
        self.layout().size
    }
}

#[test]
fn binary_forms() {
    // opt: presence byte 0x00/0xff; any non-zero byte reads as present (data-encoding's bool).
    let encoding = obj((opt("a", int8()), req("b", uint8()))).unwrap();
    assert_eq!(encoding.encode(&(Some(5), 1)).unwrap(), vec![0xff, 5, 1]);
    assert_eq!(encoding.encode(&(None, 1)).unwrap(), vec![0x00, 1]);
    assert_eq!(encoding.decode(&[0x01, 5, 1]).unwrap(), (Some(5), 1));
    // A variable opt field: absent iff no bytes remain.
    let encoding = obj((req("a", int8()), opt("b", variable_bytes()))).unwrap();
    assert_eq!(encoding.encode(&(1, None)).unwrap(), vec![1]);
    assert_eq!(
        encoding.decode(&[1, 9, 9]).unwrap(),
        (1, Some(&[9u8, 9][..]))
    );
    // option: tag 0 / 1, other tags rejected.
    let encoding = option(int16()).unwrap();
    assert_eq!(encoding.encode(&Some(-2)).unwrap(), vec![1, 0xff, 0xfe]);
    assert_eq!(encoding.decode(&[0]).unwrap(), None);
    assert_eq!(
        encoding.decode(&[2]).unwrap_err().kind,
        DecodeErrorKind::UnexpectedTag(2)
    );
    // A variable element followed by fixed ones (read_variable_pair).
    let encoding = tup((variable_bytes(), uint16())).unwrap();
    assert_eq!(
        encoding.decode(&[1, 2, 3, 0, 4]).unwrap(),
        (&[1u8, 2, 3][..], 4)
    );
    assert_eq!(
        encoding.decode(&[0]).unwrap_err().kind,
        DecodeErrorKind::NotEnoughData
    );
    // bool writes 0xff; list of uint16 from the tutorial.
    assert_eq!(bool().encode(&true).unwrap(), vec![0xff]);
    assert_eq!(
        list(uint16()).unwrap().encode(&vec![1, 3]).unwrap(),
        vec![0, 0, 0, 4, 0, 1, 0, 3]
    );
    // list_cow: the same bytes from a borrowed slice, decoded as an owned vector.
    let elements = vec![1u16, 3];
    let cow_list = list_cow(uint16()).unwrap();
    let cow_bytes = cow_list.encode(&Cow::Borrowed(&elements[..])).unwrap();
    assert_eq!(cow_bytes, vec![0, 0, 0, 4, 0, 1, 0, 3]);
    assert!(matches!(cow_list.decode(&cow_bytes).unwrap(), Cow::Owned(v) if v == elements));
    assert_eq!(cow_list.schema(), list(uint16()).unwrap().schema());
    // list_inline: the same bytes, two elements inline, five on the heap.
    let inline_list = list_inline::<2, _>(uint16()).unwrap();
    let inline: InlineList<u16, 2> = elements.iter().copied().collect();
    assert!(matches!(inline, InlineList::Inline { length: 2, .. }));
    assert_eq!(
        inline_list.encode(&Cow::Borrowed(&inline)).unwrap(),
        cow_bytes
    );
    assert_eq!(*inline_list.decode(&cow_bytes).unwrap(), inline);
    let five: InlineList<u16, 2> = (1..=5).collect();
    assert!(matches!(&five, InlineList::Heap(heap) if heap[..] == [1, 2, 3, 4, 5]));
    let five_bytes = inline_list.encode(&Cow::Borrowed(&five)).unwrap();
    assert_eq!(
        five_bytes,
        list(uint16())
            .unwrap()
            .encode(&vec![1, 2, 3, 4, 5])
            .unwrap()
    );
    assert_eq!(
        inline_list.decode(&five_bytes).unwrap()[..],
        [1, 2, 3, 4, 5]
    );
    assert_eq!(inline_list.schema(), list(uint16()).unwrap().schema());
    // padding is written as zeros and ignored when read.
    let encoding = add_padding(uint8(), 2).unwrap();
    assert_eq!(encoding.encode(&7).unwrap(), vec![7, 0, 0]);
    assert_eq!(encoding.decode(&[7, 1, 1]).unwrap(), 7);
    // check_size.
    let encoding = check_size(3, bytes());
    assert_eq!(
        encoding.decode(&[0, 0, 0, 1, 9]).unwrap_err().kind,
        DecodeErrorKind::SizeLimitExceeded
    );
    // dynamic_size with each header kind, and its size limit on write.
    for (kind, header) in [
        (LengthKind::Uint8, vec![2]),
        (LengthKind::Uint16, vec![0, 2]),
        (LengthKind::Uint30, vec![0, 0, 0, 2]),
        (LengthKind::N, vec![2]),
    ] {
        let encoding = kestrel_encoding::dynamic_size_with(kind, int16());
        let mut expected = header;
        expected.extend_from_slice(&[0x01, 0x2c]);
        assert_eq!(encoding.encode(&300).unwrap(), expected);
        assert_eq!(encoding.decode(&expected).unwrap(), 300);
    }
    let too_long = vec![0u8; 256];
    let error = bytes()
        .length_kind(LengthKind::Uint8)
        .encode(&&too_long[..])
        .unwrap_err();
    assert!(matches!(
        error.kind,
        EncodeErrorKind::SizeLimitExceeded { .. }
    ));
    // list_with_length and Fixed.list.
    let encoding = list_with_length(LengthKind::Uint8, None, int8()).unwrap();
    assert_eq!(encoding.encode(&vec![1, 2]).unwrap(), vec![2, 1, 2]);
    let encoding = fixed_list(2, int8()).unwrap();
    assert_eq!(encoding.layout().size, SizeClass::Fixed(2));
    assert_eq!(
        encoding.decode(&[1]).unwrap_err().kind,
        DecodeErrorKind::NotEnoughData
    );
    assert!(encoding.encode(&vec![1]).is_err());
    // list max_length on write.
    assert!(matches!(
        list_max(1, int8())
            .unwrap()
            .encode(&vec![1, 2])
            .unwrap_err()
            .kind,
        EncodeErrorKind::ListTooLong { .. }
    ));
    // string_enum.
    let encoding = string_enum(vec![("low", 0u8), ("high", 1u8)]).unwrap();
    assert_eq!(encoding.encode(&1).unwrap(), vec![1]);
    assert_eq!(
        encoding.decode(&[2]).unwrap_err().kind,
        DecodeErrorKind::NoCaseMatched
    );
    // strings are checked UTF-8.
    assert_eq!(
        string().decode(&[0, 0, 0, 1, 0xff]).unwrap_err().kind,
        DecodeErrorKind::InvalidUtf8
    );
    // int31 / uint16 tags / z and n through the typed API.
    assert_eq!(
        kestrel_encoding::int31()
            .decode(&[0x40, 0, 0, 0])
            .unwrap_err()
            .kind,
        DecodeErrorKind::InvalidInt {
            min: -(1 << 30),
            value: 1 << 30,
            max: (1 << 30) - 1
        }
    );
    assert_eq!(z().decode(&[0x41]).unwrap(), (-1).into());
}

#[test]
fn conversions_and_unions_with_struct_payloads() {
    #[derive(Debug, Clone, PartialEq)]
    enum Operation {
        Transfer { amount: i64, destination: String },
        Reveal,
    }
    let encoding = union(
        TagSize::Uint8,
        (
            case_with(
                108,
                "Transfer",
                obj((req("amount", int64()), req("destination", string().owned()))).unwrap(),
                |op: &Operation| match op {
                    Operation::Transfer {
                        amount,
                        destination,
                    } => Some((*amount, destination.clone())),
                    Operation::Reveal => None,
                },
                |(amount, destination)| Operation::Transfer {
                    amount,
                    destination,
                },
            ),
            case_with(
                107,
                "Reveal",
                obj((req("kind", kestrel_encoding::constant("reveal")),)).unwrap(),
                |op: &Operation| matches!(op, Operation::Reveal).then_some(((),)),
                |_| Operation::Reveal,
            ),
        ),
    )
    .unwrap();
    let transfer = Operation::Transfer {
        amount: 5,
        destination: "tz1".into(),
    };
    let bytes = encoding.encode(&transfer).unwrap();
    assert_eq!(bytes[0], 108);
    assert_eq!(encoding.decode(&bytes).unwrap(), transfer);
    assert_eq!(encoding.encode(&Operation::Reveal).unwrap(), vec![107]);
    // JSON: untagged payloads, cases tried in order.
    assert_eq!(
        encoding.to_json(&transfer).unwrap(),
        json!({"amount": "5", "destination": "tz1"})
    );
    let mut buffer = Vec::new();
    assert_eq!(
        encoding
            .decode_json(&json!({"kind": "reveal"}), &mut buffer)
            .unwrap(),
        Operation::Reveal
    );
    // conv over owned types.
    #[derive(Debug, PartialEq)]
    struct Point {
        x: u8,
        y: u8,
    }
    let encoding = conv(
        |p: &Point| (p.x, p.y),
        |(x, y)| Point { x, y },
        tup((uint8(), uint8())).unwrap(),
    );
    assert_eq!(encoding.encode(&Point { x: 1, y: 2 }).unwrap(), vec![1, 2]);
    assert_eq!(encoding.decode(&[3, 4]).unwrap(), Point { x: 3, y: 4 });
    // conv_with_guard rejects with the message.
    let encoding = kestrel_encoding::conv_with_guard(
        |v: &u8| *v,
        |v: u8| if v < 10 { Ok(v) } else { Err("too big".into()) },
        uint8(),
    );
    assert_eq!(
        encoding.decode(&[11]).unwrap_err().kind,
        DecodeErrorKind::Invalid("too big".into())
    );
}

#[test]
fn json_mapping() {
    let encoding = obj((
        req("int64", int64()),
        req("n", n()),
        req("z", z()),
        req("bytes", bytes()),
        req("string", string()),
        opt("absent", int8()),
        dft("default", uint8(), &7).unwrap(),
        req("option", option(int8()).unwrap()),
        req("tuple", tup((int8(), bool())).unwrap()),
        req("float", kestrel_encoding::float()),
    ))
    .unwrap();
    let value = (
        -9_000_000_000_000i64,
        num_bigint::BigUint::from(u128::MAX),
        num_bigint::BigInt::from(-3),
        &[0xde, 0xad][..],
        "hé",
        None,
        7,
        None,
        (-1, true),
        1.5,
    );
    let json = encoding.to_json(&value).unwrap();
    assert_eq!(
        json,
        json!({
            "int64": "-9000000000000",
            "n": u128::MAX.to_string(),
            "z": "-3",
            "bytes": "dead",
            "string": "hé",
            "option": null,
            "tuple": [-1, true],
            "float": 1.5
        })
    );
    let mut buffer = Vec::new();
    let back = encoding.decode_json(&json, &mut buffer).unwrap();
    assert_eq!(format!("{back:?}"), format!("{value:?}"));
    // Shape errors name the path.
    let mut bad = json.clone();
    bad["tuple"] = json!([1]);
    let error = encoding.decode_json(&bad, &mut buffer).unwrap_err();
    assert!(error.to_string().contains("/tuple"), "{error}");
    bad = json.clone();
    bad["extra"] = json!(1);
    assert!(encoding.decode_json(&bad, &mut buffer).is_err());
    // Range checks apply to JSON input too.
    let error = uint8().decode_json(&json!(256), &mut buffer).unwrap_err();
    assert!(matches!(
        error,
        kestrel_encoding::JsonError::Encode(error)
            if matches!(error.kind, EncodeErrorKind::InvalidInt { .. })
    ));
}

#[test]
fn binary_layout_of_the_block_header() {
    let layout = block_header_encoding().unwrap().schema().binary_layout();
    let expected_rows = [
        "| level                 | 4 bytes  | signed 32-bit integer   |",
        "| proto                 | 1 byte   | unsigned 8-bit integer  |",
        "| predecessor           | 32 bytes | bytes                   |",
        "| timestamp             | 8 bytes  | signed 64-bit integer   |",
        "| # bytes in next field | 4 bytes  | unsigned 30-bit integer |",
        "| fitness               | Variable | sequence of bytes       |",
        "| protocol_data         | Variable | bytes                   |",
    ];
    for row in expected_rows {
        assert!(layout.contains(row), "missing {row:?} in\n{layout}");
    }
    assert!(layout
        .starts_with("+-----------------------+----------+-------------------------+\n| Name "));
}

#[test]
fn schemas_of_a_recursive_union() {
    let schema = tree_encoding().unwrap().schema();
    let layout = schema.binary_layout();
    assert!(
        layout.contains("tree (Determined from data, 8-bit tag)"),
        "{layout}"
    );
    assert!(layout.contains("Node (tag 1)"), "{layout}");
    assert!(
        layout.contains("| Unnamed field 0 | Determined from data | $tree"),
        "{layout}"
    );
    let json_schema = schema.json_schema();
    assert_eq!(json_schema["$ref"], json!("#/definitions/tree"));
    assert_eq!(
        json_schema["definitions"]["tree"]["oneOf"][1]["items"][0]["$ref"],
        json!("#/definitions/tree")
    );
    let object = obj((
        req("a", uint8()),
        opt("b", n()),
        dft("c", int8(), &-1).unwrap(),
    ))
    .unwrap()
    .schema();
    let json_schema = object.json_schema();
    assert_eq!(json_schema["required"], json!(["a"]));
    assert_eq!(json_schema["properties"]["c"]["default"], json!(-1));
    let layout = object.binary_layout();
    assert!(
        layout.contains("| ? presence of field \"b\" | 1 byte "),
        "{layout}"
    );
    assert!(layout.contains("N.t\n***"), "{layout}");
}

/// The fields `f{first}` .. `f{first + 15}` as `uint8`s: one 16-field object.
macro_rules! obj16 {
    ($first:expr) => {{
        let name = |index: usize| format!("f{}", $first + index);
        obj((
            req(&name(0), uint8()),
            req(&name(1), uint8()),
            req(&name(2), uint8()),
            req(&name(3), uint8()),
            req(&name(4), uint8()),
            req(&name(5), uint8()),
            req(&name(6), uint8()),
            req(&name(7), uint8()),
            req(&name(8), uint8()),
            req(&name(9), uint8()),
            req(&name(10), uint8()),
            req(&name(11), uint8()),
            req(&name(12), uint8()),
            req(&name(13), uint8()),
            req(&name(14), uint8()),
            req(&name(15), uint8()),
        ))
        .unwrap()
    }};
}

#[test]
fn objects_of_any_arity_by_merge_objs() {
    // 40 fields: 16 + (16 + 8), the last field a variable-size string, so the merge shortens
    // the region while reading the left side only where a fixed-size right side follows.
    let tail = obj((
        req("f32", uint8()),
        req("f33", uint8()),
        req("f34", uint8()),
        req("f35", uint8()),
        req("f36", uint8()),
        req("f37", int16()),
        opt("f38", uint8()),
        req("f39", variable_string()),
    ))
    .unwrap();
    let encoding = merge_objs(obj16!(0), merge_objs(obj16!(16), tail).unwrap()).unwrap();
    assert_eq!(encoding.layout().size, SizeClass::Variable);
    let first: [u8; 16] = std::array::from_fn(|index| index as u8);
    let second: [u8; 16] = std::array::from_fn(|index| 16 + index as u8);
    let as_tuple = |bytes: [u8; 16]| {
        (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15],
        )
    };
    let value = (
        as_tuple(first),
        (
            as_tuple(second),
            (32, 33, 34, 35, 36, -37i16, Some(38), "thirty-nine"),
        ),
    );
    // Binary: the fields one after another, as one 40-field object.
    let mut expected: Vec<u8> = (0..37).collect();
    expected.extend_from_slice(&(-37i16).to_be_bytes());
    expected.extend_from_slice(&[0xff, 38]);
    expected.extend_from_slice(b"thirty-nine");
    let bytes = encoding.encode(&value).unwrap();
    assert_eq!(bytes, expected);
    // (Rust tuples of 16 have no `PartialEq`: compare through a few members and the bytes.)
    type Sixteen = (
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
        u8,
    );
    type Tail<'a> = (u8, u8, u8, u8, u8, i16, Option<u8>, &'a str);
    let check = |decoded: &(Sixteen, (Sixteen, Tail<'_>))| {
        assert_eq!((decoded.0).0, 0);
        assert_eq!((decoded.0).15, 15);
        assert_eq!((decoded.1).0 .15, 31);
        assert_eq!((decoded.1).1, value.1 .1);
        assert_eq!(encoding.encode(decoded).unwrap(), expected);
    };
    check(&encoding.decode(&bytes).unwrap());
    // JSON: one flat object of 40 keys, in order.
    let json = encoding.to_json(&value).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 40);
    assert_eq!(json["f0"], json!(0));
    assert_eq!(json["f31"], json!(31));
    assert_eq!(json["f37"], json!(-37));
    assert_eq!(json["f39"], json!("thirty-nine"));
    let mut buffer = Vec::new();
    check(&encoding.decode_json(&json, &mut buffer).unwrap());
    // The layout description lists the 40 fields in one table.
    let layout = encoding.schema().binary_layout();
    for index in 0..40 {
        assert!(
            layout.contains(&format!("| f{index} ")),
            "f{index} in\n{layout}"
        );
    }
    let json_schema = encoding.schema().json_schema();
    assert_eq!(json_schema["properties"].as_object().unwrap().len(), 40);
}

#[test]
fn merge_build_rules() {
    let left = obj((req("a", variable_bytes()),)).unwrap();
    // A variable-size left side needs a fixed-size right side.
    assert_eq!(
        merge_objs(left.clone(), obj((req("b", n()),)).unwrap()).unwrap_err(),
        BuildError::VariableNotLast { position: 0 }
    );
    assert_eq!(
        merge_objs(left.clone(), uint8()).unwrap_err(),
        BuildError::MergeOfNonObjects
    );
    assert_eq!(
        merge_tups(tup((uint8(),)).unwrap(), left.clone()).unwrap_err(),
        BuildError::MergeOfNonTuples
    );
    // A variable-size left side read before a fixed-size right side: the split is found.
    let merged = merge_objs(left, obj((req("b", int16()),)).unwrap()).unwrap();
    let bytes = [1, 2, 3, 0, 9];
    assert_eq!(merged.decode(&bytes).unwrap(), ((&[1u8, 2, 3][..],), (9,)));
    assert_eq!(merged.encode(&((&[1u8, 2, 3][..],), (9,))).unwrap(), bytes);
    // `empty` merges as an object with no field.
    let with_empty = merge_objs(empty(), obj((req("c", uint8()),)).unwrap()).unwrap();
    assert_eq!(with_empty.to_json(&((), (5,))).unwrap(), json!({"c": 5}));
    // Tuples: one flat array.
    let tuples = merge_tups(tup((uint8(), int8())).unwrap(), tup((bool(),)).unwrap()).unwrap();
    assert_eq!(
        tuples.to_json(&((1, -1), (true,))).unwrap(),
        json!([1, -1, true])
    );
    let mut buffer = Vec::new();
    assert_eq!(
        tuples
            .decode_json(&json!([1, -1, true]), &mut buffer)
            .unwrap(),
        ((1, -1), (true,))
    );
}

/// The same union with its tag width and tags fixed at run time (`TagSize`, `u16`) and in its
/// type (`Uint8Tag`/`Uint16Tag`, `Tag<N>`): the same bytes both ways and the same schema.
#[test]
fn static_tags_write_what_run_time_tags_write() {
    fn shape<S: TagWidth, A: CaseTag, B: CaseTag>(
        tag_size: S,
        small: A,
        large: B,
    ) -> impl for<'a> Encoding<Value<'a> = Result<u8, i16>> {
        union(
            tag_size,
            (
                case_with(small, "Small", uint8(), |v: &Result<u8, i16>| v.ok(), Ok),
                case_with(large, "Large", int16(), |v: &Result<u8, i16>| v.err(), Err),
            ),
        )
        .unwrap()
    }
    let check = |value: Result<u8, i16>, expected_uint8: &str, expected_uint16: &str| {
        let uint8_forms = (
            shape(TagSize::Uint8, 3, 200),
            shape(Uint8Tag, Tag::<3>, Tag::<200>),
        );
        let uint16_forms = (
            shape(TagSize::Uint16, 3, 300),
            shape(Uint16Tag, Tag::<3>, Tag::<300>),
        );
        for (run_time, static_form, expected) in [
            (
                uint8_forms.0.encode(&value).unwrap(),
                uint8_forms.1.encode(&value).unwrap(),
                expected_uint8,
            ),
            (
                uint16_forms.0.encode(&value).unwrap(),
                uint16_forms.1.encode(&value).unwrap(),
                expected_uint16,
            ),
        ] {
            assert_eq!(hex::encode(&run_time), expected, "{value:?}");
            assert_eq!(hex::encode(&static_form), expected, "{value:?}");
        }
        let bytes = hex::decode(expected_uint8).unwrap();
        assert_eq!(uint8_forms.1.decode(&bytes).unwrap(), value);
        let bytes = hex::decode(expected_uint16).unwrap();
        assert_eq!(uint16_forms.1.decode(&bytes).unwrap(), value);
        assert_eq!(uint8_forms.0.schema(), uint8_forms.1.schema());
        assert_eq!(uint16_forms.0.schema(), uint16_forms.1.schema());
    };
    check(Ok(7), "0307", "000307");
    check(Err(-2), "c8fffe", "012cfffe");
    // An unknown tag is the same typed error at the same offset.
    let static_form = shape(Uint16Tag, Tag::<3>, Tag::<300>);
    let error = static_form.decode(&[0x01, 0x2d, 0, 0]).unwrap_err();
    assert_eq!(
        (error.kind.clone(), error.offset),
        (DecodeErrorKind::UnexpectedTag(301), 0)
    );
    // Tags are checked against a static width when the union is built, as against a dynamic one.
    assert_eq!(
        union(
            Uint8Tag,
            (case_with(
                Tag::<256>,
                "Wide",
                uint8(),
                |v: &u8| Some(*v),
                |v| v
            ),)
        )
        .err(),
        Some(BuildError::TagOutOfRange(256))
    );
}

/// A tree whose nodes hold, on their right, a subtree of another recursive encoding of the same
/// Rust type with 16-bit tags: each occurrence must keep to its own `mu` (the body's fast path
/// recognises its own recursion by identity, not by type).
fn mixed_tree_encoding() -> kestrel_encoding::Mu<Tree> {
    let wide = tree_encoding_with(Uint16Tag, Tag::<0>, Tag::<1>).unwrap();
    mu("mixed_tree", |mixed| {
        union(
            TagSize::Uint8,
            (
                case(0, "Leaf", int64(), leaf_of, Tree::Leaf),
                case(
                    1,
                    "Node",
                    tup((boxed(mixed), boxed(wide)))?,
                    children_of,
                    Tree::Node,
                ),
            ),
        )
    })
    .unwrap()
}

#[test]
fn nested_recursions_of_one_type_keep_their_own_bytes() {
    let encoding = mixed_tree_encoding();
    let leaf = |value| Box::new(Tree::Leaf(value));
    let node = |left, right| Box::new(Tree::Node((left, right)));
    let check = |tree: Tree, expected: &str| {
        let bytes = encoding.encode(&tree).unwrap();
        assert_eq!(hex::encode(&bytes), expected);
        assert_eq!(encoding.decode(&bytes).unwrap(), tree);
    };
    // mixed node (01) of [mixed node (01) of [mixed leaf 1 (00 ..01), wide leaf 2 (0000 ..02)],
    // wide node (0001) of [wide leaf 3 (0000 ..03), wide leaf 4 (0000 ..04)]].
    check(
        *node(node(leaf(1), leaf(2)), node(leaf(3), leaf(4))),
        concat!(
            "01",
            "01",
            "000000000000000001",
            "00000000000000000002",
            "0001",
            "00000000000000000003",
            "00000000000000000004"
        ),
    );
    check(Tree::Leaf(-1), "00ffffffffffffffff");
    // The depth counts across both recursions: a left comb of mixed nodes ending in a deep
    // right comb of wide nodes fails at the same limit.
    let mut deep = Tree::Leaf(0);
    for _ in 0..DEFAULT_MAX_DEPTH {
        deep = Tree::Node((Box::new(Tree::Leaf(1)), Box::new(deep)));
    }
    let mixed = Tree::Node((Box::new(Tree::Leaf(0)), Box::new(deep)));
    assert_eq!(
        encoding.encode(&mixed).unwrap_err().kind,
        EncodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
}

/// A rose tree: the recursion runs through `list`, a combinator that does not pass the
/// recursion context on, so each level enters through the `mu`'s cell again.
#[derive(Debug, Clone, PartialEq)]
struct Rose(Vec<Rose>);

fn rose_encoding() -> kestrel_encoding::Mu<Rose> {
    mu("rose", |rose| {
        Ok(conv(
            |value: &Rose| Cow::Borrowed(&value.0[..]),
            |children: Cow<[Rose]>| Rose(children.into_owned()),
            list_cow(rose)?,
        ))
    })
    .unwrap()
}

#[test]
fn recursion_through_a_list_keeps_the_depth_limit() {
    let encoding = rose_encoding();
    let rose = Rose(vec![Rose(vec![]), Rose(vec![Rose(vec![])])]);
    let bytes = encoding.encode(&rose).unwrap();
    // A 12-byte list: an empty list, then a 4-byte list holding an empty list.
    assert_eq!(hex::encode(&bytes), "0000000c000000000000000400000000");
    assert_eq!(encoding.decode(&bytes).unwrap(), rose);
    // Input nested 100,000 levels deep: level k (from the outside) holds a size header of
    // 4 * (depth - k) bytes.
    let depth = 100_000u32;
    let input: Vec<u8> = (1..=depth)
        .flat_map(|level| (4 * (depth - level)).to_be_bytes())
        .collect();
    assert_eq!(
        encoding.decode(&input).unwrap_err().kind,
        DecodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
    // A value built deeper than the limit fails to encode; one at the limit round-trips.
    let nested = |levels: usize| (1..levels).fold(Rose(vec![]), |inner, _| Rose(vec![inner]));
    let within = nested(DEFAULT_MAX_DEPTH);
    assert_eq!(
        encoding.decode(&encoding.encode(&within).unwrap()).unwrap(),
        within
    );
    assert_eq!(
        encoding
            .encode(&nested(DEFAULT_MAX_DEPTH + 1))
            .unwrap_err()
            .kind,
        EncodeErrorKind::DepthLimitExceeded {
            max_depth: DEFAULT_MAX_DEPTH
        }
    );
}
