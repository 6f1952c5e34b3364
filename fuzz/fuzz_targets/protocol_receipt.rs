//! Fuzzes the protocol-025 receipt decoders (operations with metadata, internal operations with
//! their results, lazy storage diffs) over arbitrary bytes: no input may panic; every value
//! decoded re-encodes to bytes that decode to the same value, and its JSON form, when it has one,
//! reads back to a value with the same JSON form. (Bytes may change through JSON where
//! data-encoding accepts more than one binary form of a value: Micheline's `-0`, a built-in
//! entrypoint under the named tag, a BSON integer.)

#![no_main]

use kestrel_encoding::Reader;
use kestrel_protocol::receipt::lazy_storage::LazyStorageDiff;
use kestrel_protocol::{Field, InternalOperationResult, OperationWithMetadata};
use libfuzzer_sys::fuzz_target;

/// Decodes `$data` as one `$type`; when it decodes, checks the binary and JSON round trips. (A
/// macro, not a generic function: the re-encoded bytes live shorter than the input.)
macro_rules! check {
    ($type:ty, $data:expr) => {{
        let mut reader = Reader::new($data);
        if let Ok(value) = <$type>::read(&mut reader) {
            if reader.remaining_bytes() == 0 {
                let mut encoded = Vec::new();
                value.write(&mut encoded);
                let mut again_reader = Reader::new(&encoded);
                let again = <$type>::read(&mut again_reader).expect("re-encoded bytes decode");
                assert_eq!(again, value);
                assert_eq!(again_reader.remaining_bytes(), 0);
                let mut json = String::new();
                if value.write_json(&mut json).is_ok() {
                    let parsed: serde_json::Value =
                        serde_json::from_str(&json).expect("valid JSON");
                    let from_json = <$type>::read_json(&parsed, "").expect("JSON reads back");
                    let mut json_again = String::new();
                    from_json.write_json(&mut json_again).expect("JSON form");
                    assert_eq!(json_again, json, "JSON round trip");
                }
            }
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 3 {
        0 => check!(OperationWithMetadata, rest),
        1 => check!(InternalOperationResult, rest),
        _ => check!(LazyStorageDiff, rest),
    }
});
