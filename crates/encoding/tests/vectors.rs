//! Runs every line of `encoding/data-encoding-vectors.tsv` (data-encoding v1.0.0's own expected
//! outputs and tezedge's unit tests): each success line is encoded and compared with the
//! expected bytes, then the bytes are decoded back to the value; each `error:<Kind>` line
//! decodes its input and must fail with exactly that kind.
//!
//! One line is inconsistent with the `z` rule that all the others follow: `z 165316766
//! 9e9ed49d01`. The bytes 9e 9e d4 9d 01 decode, under that rule, to 30 + 64 * (30 + 84*128 +
//! 29*128^2 + 1*128^3) = 165316510, not 165316766 (the difference, 256, is one bit in the
//! third group). The line is checked as what it is: the bytes must decode to 165316510 and
//! re-encode to the same bytes, and 165316766 must encode to different bytes.

// Helpers of this test file unwrap what the test itself constructs (clippy.toml allows it only
// inside `#[test]` functions).
#![allow(clippy::unwrap_used)]

use kestrel_encoding::{
    bytes, dynamic_size, int16, int31, int64, int8, list_max, list_with_length, n, ranged_int,
    uint16, uint8, variable_string, z, DecodeError, Encoding, JsonRepr, LengthKind,
};
use num_bigint::{BigInt, BigUint};
use std::fmt::Debug;

/// The line known to be inconsistent, and what its bytes really decode to.
const BAD_Z_VALUE: &str = "165316766";
const BAD_Z_BYTES_DECODE_TO: i64 = 165316510;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    if text == "(empty)" {
        return Vec::new();
    }
    kestrel_encoding::json::from_hex(text).expect("hex in the vector file")
}

/// Encodes `value`, compares with `expected_hex`, decodes back and compares with `value`.
fn check<E>(encoding: E, value: E::Value<'_>, expected_hex: &str, line: &str)
where
    E: Encoding,
    for<'a> E::Value<'a>: Debug,
{
    let encoded = encoding
        .encode(&value)
        .unwrap_or_else(|error| panic!("{line}: {error}"));
    assert_eq!(hex(&encoded), expected_hex, "{line}: encoding");
    let decoded = encoding
        .decode(&encoded)
        .unwrap_or_else(|error| panic!("{line}: {error}"));
    // The decoded value borrows `encoded`, so compare the printed forms.
    assert_eq!(
        format!("{decoded:?}"),
        format!("{value:?}"),
        "{line}: decoding"
    );
}

/// Decodes `input_hex` and expects a failure named `kind`.
fn check_error<E: Encoding>(encoding: E, input_hex: &str, kind: &str, line: &str)
where
    for<'a> E::Value<'a>: Debug,
{
    let input = unhex(input_hex);
    let result: Result<_, DecodeError> = encoding.decode(&input);
    match result {
        Ok(value) => panic!("{line}: decoded to {value:?}, expected {kind}"),
        Err(error) => assert_eq!(error.kind_name(), kind, "{line}: {error}"),
    }
}

fn int<T: std::str::FromStr>(text: &str) -> T
where
    T::Err: Debug,
{
    text.parse().expect("integer in the vector file")
}

fn run_line(encoding: &str, value: &str, expected: &str, line: &str) {
    if let Some(kind) = expected.strip_prefix("error:") {
        let max_one = Some(1);
        match encoding {
            "n" => check_error(n(), value, kind, line),
            "z" => check_error(z(), value, kind, line),
            "dynamic_size(Variable.string)" => {
                check_error(dynamic_size(variable_string()), value, kind, line)
            }
            "dynamic_size(uint8)" => check_error(dynamic_size(uint8()), value, kind, line),
            "list(max_length=1, int8)" => {
                check_error(list_max(1, int8()).unwrap(), value, kind, line)
            }
            "list_with_length(N, max_length=1, int8)" => check_error(
                list_with_length(LengthKind::N, max_one, int8()).unwrap(),
                value,
                kind,
                line,
            ),
            other => panic!("{line}: no encoding named {other:?} in this test"),
        }
        return;
    }
    match encoding {
        "uint8" => check(uint8(), int(value), expected, line),
        "int8" => check(int8(), int(value), expected, line),
        "uint16" => check(uint16(), int(value), expected, line),
        "int16" => check(int16(), int(value), expected, line),
        "int31" => check(int31(), int(value), expected, line),
        "int64" => check(int64(), int(value), expected, line),
        "ranged_int(33,333333)" => {
            check(ranged_int(33, 333333).unwrap(), int(value), expected, line)
        }
        "n" => check(n(), int::<BigUint>(value), expected, line),
        "z" if value == BAD_Z_VALUE => {
            // The inconsistent vector (see the module comment): check what the bytes really are.
            let input = unhex(expected);
            assert_eq!(
                z().decode(&input),
                Ok(BigInt::from(BAD_Z_BYTES_DECODE_TO)),
                "{line}"
            );
            check(z(), BigInt::from(BAD_Z_BYTES_DECODE_TO), expected, line);
            let claimed = z().encode(&int::<BigInt>(value)).unwrap();
            assert_ne!(
                hex(&claimed),
                expected,
                "{line}: the vector would be consistent"
            );
            assert_eq!(
                hex(&claimed),
                "9ea2d49d01",
                "{line}: 165316766 under the z rule"
            );
        }
        "z" => check(z(), int::<BigInt>(value), expected, line),
        "string'(Hex) uint30 prefix" => {
            let bytes_value = unhex(value);
            check(
                bytes().json(JsonRepr::Hex),
                &bytes_value[..],
                expected,
                line,
            )
        }
        "string'(Hex) uint8 prefix" => {
            let bytes_value = unhex(value);
            let encoding = bytes().length_kind(LengthKind::Uint8);
            check(encoding, &bytes_value[..], expected, line)
        }
        "string'(Hex) N prefix" => {
            let bytes_value = unhex(value);
            check(
                bytes().length_kind(LengthKind::N),
                &bytes_value[..],
                expected,
                line,
            )
        }
        other => panic!("{line}: no encoding named {other:?} in this test"),
    }
}

#[test]
fn every_vector_line() {
    let Some(path) =
        kestrel_testdata::require("encoding/data-encoding-vectors.tsv", "every_vector_line")
    else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("vector file readable");
    let mut checked = 0;
    let mut data_lines = 0;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        data_lines += 1;
        let columns: Vec<&str> = line.split('\t').collect();
        assert_eq!(columns.len(), 3, "malformed line {line:?}");
        run_line(columns[0], columns[1], columns[2], line);
        checked += 1;
    }
    assert_eq!(checked, data_lines);
    // The file as shipped has 63 data lines; a shorter file means lost coverage.
    assert!(checked >= 63, "only {checked} vector lines");
}
