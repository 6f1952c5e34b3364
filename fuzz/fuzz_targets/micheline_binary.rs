//! Fuzzes the binary Micheline decoder (and UNPACK): any input decodes or fails with an error;
//! what decodes re-encodes to bytes that decode to the same tree.
#![no_main]

use kestrel_micheline::{binary, pack};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(node) = binary::decode(data) {
        let encoded = binary::encode(&node).expect("a decoded tree has only table primitives");
        assert!(binary::decode(&encoded).as_ref() == Ok(&node));
        // The encoder is canonical: re-encoding is stable.
        assert_eq!(binary::encode(&node).ok(), Some(encoded));
    }
    let _ = pack::unpack(data);
});
