//! Bad operation bytes get typed errors at the right offsets: truncation, trailing bytes,
//! unknown tags, a batch with a non-manager operation, a misplaced signature prefix. Then
//! truncations and a one-bit mutation of each byte (spread positions of long vectors) are decoded:
//! none panics, and
//! whatever decodes re-encodes and decodes to the same value (the fuzz target's properties, run
//! here on every byte of the real vectors).

use kestrel_protocol::{
    Contents, DecodeError, DecodeErrorKind, ManagerKind, Operation, SignedOperation, PARSE_ERROR_ID,
};

const BRANCH: &str = "BKpbfCvh777DQHnXjU2sqHvVUNZ7dBAdqEfKkdw8EGSkD9LSYXb";

/// A signed (zero-signature) transfer's bytes.
fn transfer_bytes() -> Vec<u8> {
    Operation::from_json_str(&format!(
        r#"{{"branch":"{BRANCH}","contents":[{{"kind":"transaction",
        "source":"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx","fee":"1000","counter":"1",
        "gas_limit":"3040","storage_limit":"257","amount":"1000000",
        "destination":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"}}]}}"#
    ))
    .expect("valid transfer")
    .encode()
}

fn check(bytes: &[u8], kind: DecodeErrorKind, offset: usize) {
    assert_eq!(
        SignedOperation::decode(bytes).map(|_| ()),
        Err(DecodeError::new(kind, offset))
    );
}

#[test]
fn truncated_and_trailing() {
    let bytes = transfer_bytes();
    // Shorter than a branch: the branch read fails at 0.
    check(&bytes[..10], DecodeErrorKind::Truncated, 0);
    // Contents cut: the 64-byte suffix is reserved first, so the transaction runs short.
    let error = SignedOperation::decode(&bytes[..bytes.len() - 1]).unwrap_err();
    assert_eq!(error.kind, DecodeErrorKind::Truncated);
    assert_eq!(error.read_error_name(), "Not_enough_data");
    // An extra byte is read as the start of another content (tag 0 is no kind).
    let mut longer = bytes.clone();
    longer.insert(bytes.len() - 64, 0x00);
    check(
        &longer,
        DecodeErrorKind::UnknownTag {
            what: "operation contents",
            tag: 0,
        },
        bytes.len() - 64,
    );
    // Unsigned form: trailing bytes after complete contents are a content with a bad tag.
    let unsigned = &bytes[..bytes.len() - 64];
    assert!(Operation::decode_unsigned(unsigned).is_ok());
    let mut trailing = unsigned.to_vec();
    trailing.push(0x6c);
    let error = Operation::decode_unsigned(&trailing).unwrap_err();
    assert_eq!(
        (error.kind, error.offset),
        (DecodeErrorKind::Truncated, trailing.len())
    );
    assert_eq!(PARSE_ERROR_ID, "node.prevalidation.parse_error");
}

#[test]
fn unknown_and_unsupported_tags() {
    let bytes = transfer_bytes();
    let mut unknown = bytes.clone();
    unknown[32] = 0x63;
    check(
        &unknown,
        DecodeErrorKind::UnknownTag {
            what: "operation contents",
            tag: 0x63,
        },
        32,
    );
    let mut refute = bytes.clone();
    refute[32] = 204;
    check(
        &refute,
        DecodeErrorKind::UnsupportedKind {
            name: "smart_rollup_refute",
            tag: 204,
        },
        32,
    );
    // The source's key-hash tag (offset 33) names no scheme.
    let mut bad_source = bytes.clone();
    bad_source[33] = 9;
    check(
        &bad_source,
        DecodeErrorKind::UnknownTag {
            what: "public key hash",
            tag: 9,
        },
        33,
    );
    // A signature prefix of an unknown scheme.
    let mut bad_prefix = bytes[..bytes.len() - 64].to_vec();
    bad_prefix.extend_from_slice(&[0xff, 0x01]);
    bad_prefix.extend_from_slice(&[0; 64]);
    check(
        &bad_prefix,
        DecodeErrorKind::UnknownTag {
            what: "signature prefix",
            tag: 1,
        },
        bytes.len() - 64 + 1,
    );
}

#[test]
fn batch_rules() {
    let bytes = transfer_bytes();
    let unsigned = &bytes[32..bytes.len() - 64];
    // Two transfers: a valid batch.
    let mut batch = bytes[..bytes.len() - 64].to_vec();
    batch.extend_from_slice(unsigned);
    batch.extend_from_slice(&[0; 64]);
    let decoded = Operation::decode(&batch).expect("a manager batch");
    assert_eq!(decoded.contents.len(), 2);
    // A failing_noop after a transfer: refused.
    let mut mixed = bytes[..bytes.len() - 64].to_vec();
    mixed.extend_from_slice(&[17, 0, 0, 0, 1, 0xaa]);
    mixed.extend_from_slice(&[0; 64]);
    let error = Operation::decode(&mixed).unwrap_err();
    assert!(matches!(
        error.kind,
        DecodeErrorKind::Invalid {
            what: "operation",
            ..
        }
    ));
    // No contents at all.
    let mut empty = bytes[..32].to_vec();
    empty.extend_from_slice(&[0; 64]);
    assert!(matches!(
        Operation::decode(&empty).unwrap_err().kind,
        DecodeErrorKind::Invalid { .. }
    ));
}

/// The fuzz target's properties (`fuzz/fuzz_targets/protocol_operation.rs`).
fn round_trip_if_decodes(data: &[u8]) {
    let Ok(signed) = SignedOperation::decode(data) else {
        return;
    };
    let operation = signed.operation;
    let encoded = operation.encode();
    let calls_entrypoint = operation.contents.iter().any(|content| {
        matches!(content, Contents::Manager(manager)
            if matches!(&manager.operation, ManagerKind::Transaction(t) if t.parameters.is_some()))
    });
    if !calls_entrypoint {
        assert_eq!(encoded, data, "re-encoding differs");
    }
    let again = Operation::decode(&encoded).expect("re-encoded bytes decode");
    assert_eq!(again, operation);
    // The JSON form fails only where Octez's does (lazy Micheline that does not decode); what it
    // writes reads back to the same bytes.
    if let Ok(json) = operation.to_json() {
        let from_json = Operation::from_json_str(&json).expect("JSON reads back");
        assert_eq!(from_json.encode(), encoded, "JSON round trip");
    }
}

#[test]
fn every_truncation_and_byte_mutation_of_the_vectors() {
    let Some(path) = kestrel_testdata::require(
        "octez-protocol/encoding/operation.out",
        "operation mutations",
    ) else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("readable");
    let mut decoded = 0usize;
    for line in text.lines().filter(|line| !line.is_empty()) {
        let (_, hex_text) = line.split_once(": ").expect("`name: hex`");
        let bytes = hex::decode(hex_text.trim()).expect("hex");
        // Truncations only fail; every eighth is enough to cross each field boundary's kind.
        for end in (0..bytes.len()).step_by(8) {
            assert!(SignedOperation::decode(&bytes[..end]).is_err());
        }
        // Every byte of short vectors; about 160 spread positions of long ones (DAL shards), so
        // the sweep stays a few seconds.
        for index in (0..bytes.len()).step_by((bytes.len() / 160).max(1)) {
            let mut mutated = bytes.clone();
            mutated[index] ^= 0x01;
            if SignedOperation::decode(&mutated).is_ok() {
                decoded += 1;
            }
            round_trip_if_decodes(&mutated);
        }
    }
    // Most mutations of fixed-size fields still decode: the sweep exercised the encoder.
    assert!(decoded > 500, "only {decoded} mutations decoded");
}

#[test]
fn lazy_micheline_that_does_not_decode_has_no_json_form() {
    // A registered constant whose value is the bytes `03 00 00`: a primitive, then a trailing
    // byte. The binary form keeps them; the JSON form refuses, as Octez's `lazy_encoding` does.
    let mut bytes = hex::decode(
        "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8\
         6f00ba3bed311a5d7b06dc4daf3c94c5c406927e4bcf0a01000000000003030000",
    )
    .expect("hex");
    bytes.extend_from_slice(&[0x11; 64]);
    let operation = Operation::decode(&bytes).expect("decodes: Micheline stays lazy");
    assert_eq!(operation.encode(), bytes);
    let error = operation.to_json().unwrap_err();
    assert!(error.message.contains("does not decode"), "{error}");
}

/// A signed (zero-signature) `transfer_ticket` moving `amount` units, as JSON.
fn transfer_ticket_json(amount: &str) -> String {
    format!(
        r#"{{"branch":"{BRANCH}","contents":[{{"kind":"transfer_ticket",
        "source":"tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx","fee":"441","counter":"5",
        "gas_limit":"1396","storage_limit":"86","ticket_contents":{{"string":"Ticket"}},
        "ticket_ty":{{"prim":"string"}},"ticket_ticketer":"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo",
        "ticket_amount":"{amount}","destination":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN",
        "entrypoint":"default"}}]}}"#
    )
}

/// A zero ticket amount is refused where it is read, as `Ticket_amount.encoding`'s guard
/// refuses it (`conv_with_guard`, "expecting positive number": data-encoding's
/// `User_invariant_guard`), in binary and in JSON; one unit decodes.
#[test]
fn zero_ticket_amount_refused() {
    let bytes = |amount: &str| {
        Operation::from_json_str(&transfer_ticket_json(amount))
            .expect("a transfer_ticket")
            .encode()
    };
    let (one, two) = (bytes("1"), bytes("2"));
    assert!(SignedOperation::decode(&one).is_ok());
    // The amount is the one byte where one and two units differ (a one-byte Zarith).
    let differing: Vec<usize> = (0..one.len()).filter(|&i| one[i] != two[i]).collect();
    assert_eq!(differing.len(), 1);
    let offset = differing[0];
    assert_eq!((one[offset], two[offset]), (1, 2));
    let mut zero = one.clone();
    zero[offset] = 0;
    let error = SignedOperation::decode(&zero).unwrap_err();
    assert_eq!(
        error,
        DecodeError::new(
            DecodeErrorKind::InvariantGuard {
                what: "ticket amount",
                message: "expecting positive number",
            },
            offset,
        )
    );
    assert_eq!(error.read_error_name(), "User_invariant_guard");
    let error = Operation::from_json_str(&transfer_ticket_json("0")).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("ticket_amount: expecting positive number"),
        "{error}"
    );
}
