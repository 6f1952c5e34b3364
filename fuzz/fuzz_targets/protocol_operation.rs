//! Fuzzes the protocol-025 operation decoder over signed operation bytes: no input may panic;
//! every operation decoded re-encodes to the same bytes, decodes again to the same value, and
//! survives its JSON form when it has one. Three non-canonical inputs re-encode differently, as
//! in Octez: a transaction entrypoint with a built-in name under the named tag (written back under
//! the built-in tag), a ticket transfer's empty entrypoint (written back as `default`), and a `z`
//! written as a negative zero (read as 0, written back as `0x00`).

#![no_main]

use kestrel_protocol::{Contents, ManagerKind, Operation, SignedOperation};
use libfuzzer_sys::fuzz_target;

/// Whether a transaction calls a built-in entrypoint, which the input may have written under
/// the named tag, or a ticket transfer names `default`, which the input may have written as the
/// empty string (`Entrypoint_repr.simple_encoding` reads it laxly and writes `default`).
fn may_be_non_canonical(operation: &Operation<'_>) -> bool {
    operation.contents.iter().any(|content| match content {
        Contents::Manager(manager) => match &manager.operation {
            ManagerKind::Transaction(transaction) => transaction.parameters.is_some(),
            ManagerKind::TransferTicket(transfer) => transfer.entrypoint.0.is_default(),
            _ => false,
        },
        _ => false,
    })
}

/// Whether `encoded` is `data` with some negative zeros (`0x40`, data-encoding's `z` for -0: the
/// DAL attestation bitsets) written as `0x00`, the one other place a re-encoding may differ.
fn differs_only_by_negative_zeros(encoded: &[u8], data: &[u8]) -> bool {
    encoded.len() == data.len()
        && encoded
            .iter()
            .zip(data)
            .all(|(written, read)| written == read || (*read == 0x40 && *written == 0))
}

fuzz_target!(|data: &[u8]| {
    let Ok(signed) = SignedOperation::decode(data) else {
        return;
    };
    let operation = signed.operation;
    let encoded = operation.encode();
    if !may_be_non_canonical(&operation) && !differs_only_by_negative_zeros(&encoded, data) {
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
    let _ = Operation::decode_unsigned(data);
});
