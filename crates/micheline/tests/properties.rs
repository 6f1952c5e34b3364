//! Property tests: arbitrary Micheline trees round-trip through every form (text in both layouts,
//! binary, PACK, JSON), and arbitrary input bytes or text either decode or give an error, never a
//! panic.

use kestrel_micheline::prim::ALL_PRIMS;
use kestrel_micheline::print::{to_text_indented, to_text_indented_wrapped, to_text_single_line};
use kestrel_micheline::{binary, json, pack, parse_expression, parse_toplevel, Node, NodeKind};
use num_bigint::BigInt;
use proptest::prelude::*;

fn int_strategy() -> impl Strategy<Value = BigInt> {
    prop_oneof![
        any::<i64>().prop_map(BigInt::from),
        any::<i128>().prop_map(BigInt::from),
        "-?[1-9][0-9]{20,60}".prop_map(|digits| digits.parse::<BigInt>().unwrap_or_default()),
    ]
}

fn leaf_strategy() -> impl Strategy<Value = Node> {
    prop_oneof![
        int_strategy().prop_map(|value| Node::new(NodeKind::Int(value))),
        any::<String>().prop_map(Node::string),
        "[ -~\\n\\t\\r\"\\\\]{0,90}".prop_map(Node::string),
        proptest::collection::vec(any::<u8>(), 0..50).prop_map(Node::bytes),
    ]
}

fn prim_name_strategy() -> impl Strategy<Value = kestrel_micheline::PrimName> {
    (0..ALL_PRIMS.len()).prop_map(|index| ALL_PRIMS[index].into())
}

fn annots_strategy() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[@:%$&!?][a-zA-Z0-9_.%@]{0,12}", 0..3)
}

fn node_strategy() -> impl Strategy<Value = Node> {
    leaf_strategy().prop_recursive(8, 96, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Node::seq),
            (
                prim_name_strategy(),
                proptest::collection::vec(inner, 0..5),
                annots_strategy()
            )
                .prop_map(|(name, args, annots)| Node::new(NodeKind::Prim {
                    name,
                    args,
                    annots
                })),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn text_round_trips_in_every_layout(node in node_strategy()) {
        for printed in [
            to_text_indented(&node),
            to_text_indented_wrapped(&node),
            to_text_single_line(&node),
        ] {
            let parsed = parse_expression(&printed);
            prop_assert!(parsed.as_ref() == Ok(&node), "{printed}\n{parsed:?}");
        }
    }

    #[test]
    fn binary_and_pack_round_trip(node in node_strategy()) {
        let encoded = binary::encode(&node);
        prop_assert!(encoded.is_ok());
        let encoded = encoded.unwrap_or_default();
        prop_assert_eq!(binary::decode(&encoded), Ok(node.clone()));
        // Decoding follows the same path on any strict prefix, so every one runs out of data.
        for cut in [0, encoded.len() / 3, encoded.len() / 2, encoded.len() - 1] {
            prop_assert_eq!(
                binary::decode(&encoded[..cut]).map_err(|e| e.kind),
                Err(binary::DecodeErrorKind::NotEnoughData)
            );
        }
        let packed = pack::pack(&node).unwrap_or_default();
        prop_assert_eq!(&packed[1..], &encoded[..]);
        prop_assert_eq!(pack::unpack(&packed), Ok(node));
    }

    #[test]
    fn json_round_trips(node in node_strategy()) {
        let text = json::to_json_string(&node);
        prop_assert_eq!(json::from_json_str(&text), Ok(node.clone()));
        // serde_json agrees the output is JSON.
        prop_assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(node) = binary::decode(&bytes) {
            // What decodes re-encodes and decodes to the same tree.
            let again = binary::encode(&node).unwrap_or_default();
            prop_assert_eq!(binary::decode(&again), Ok(node));
        }
        let mut packed = vec![pack::PACK_PREFIX];
        packed.extend_from_slice(&bytes);
        let _ = pack::unpack(&packed);
    }

    #[test]
    fn mutated_encodings_decode_or_fail_cleanly(
        node in node_strategy(),
        position in any::<prop::sample::Index>(),
        value in any::<u8>(),
    ) {
        let mut encoded = binary::encode(&node).unwrap_or_default();
        let index = position.index(encoded.len());
        encoded[index] = value;
        if let Ok(decoded) = binary::decode(&encoded) {
            let again = binary::encode(&decoded).unwrap_or_default();
            prop_assert_eq!(binary::decode(&again), Ok(decoded));
        }
    }

    #[test]
    fn arbitrary_text_parses_or_fails_cleanly(source in "[ -~\\n\\t{}();\"@%:#/*\\\\]{0,120}") {
        if let Ok(node) = parse_expression(&source) {
            let printed = to_text_indented(&node);
            prop_assert!(parse_expression(&printed).as_ref() == Ok(&node), "{printed}");
        }
        let _ = parse_toplevel(&source);
        let _ = json::from_json_str(&source);
    }

    #[test]
    fn arbitrary_json_like_text_reads_or_fails_cleanly(
        source in "[ \\[\\]{}:,\"a-z0-9\\\\]{0,120}"
    ) {
        if let Ok(node) = json::from_json_str(&source) {
            prop_assert_eq!(json::from_json_str(&json::to_json_string(&node)), Ok(node));
        }
    }
}
