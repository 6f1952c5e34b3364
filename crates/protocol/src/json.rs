//! The RPC JSON form's plumbing: a writer that appends JSON text to a `String` (so Micheline
//! values, written by `kestrel-micheline` on its own explicit stack, go in without a
//! `serde_json::Value` and its depth limit), and the readers of `serde_json::Value` fields the
//! codecs share.
//!
//! Octez's JSON conventions (data-encoding `Json`): 64-bit and arbitrary-precision integers
//! (`int64`, `n`, `z`, mutez) are decimal strings; `int31`, `int32`, `uint8`, `uint16` are
//! numbers; bytes are lowercase hex strings; optional object fields are left out when absent.

use serde_json::{Map, Value};

use crate::error::JsonError;

/// Writes one JSON object: `{`, then `"key":value` pairs, then `}`.
pub(crate) struct ObjectWriter<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> ObjectWriter<'o> {
    /// Starts an object.
    pub(crate) fn new(out: &'o mut String) -> Self {
        out.push('{');
        Self { out, first: true }
    }

    /// Writes `"name":` (after a comma unless first) and returns the output for the value.
    pub(crate) fn key(&mut self, name: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_string(self.out, name);
        self.out.push(':');
        self.out
    }

    /// Ends the object.
    pub(crate) fn end(self) {
        self.out.push('}');
    }
}

/// Writes a JSON string literal.
pub(crate) fn write_string(out: &mut String, value: &str) {
    kestrel_micheline::json::write_json_string(out, value);
}

/// Writes bytes as a lowercase hex JSON string.
pub(crate) fn write_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2 + 2);
    out.push('"');
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out.push('"');
}

/// The path of a child field, for error messages.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}/{name}")
    }
}

/// The value as an object.
pub(crate) fn as_object<'v>(
    value: &'v Value,
    path: &str,
) -> Result<&'v Map<String, Value>, JsonError> {
    value
        .as_object()
        .ok_or_else(|| JsonError::new(path, "expected an object"))
}

/// Writes a `{"kind": …, fields…}` object, Octez's JSON for a tagged operation content.
pub(crate) fn write_kinded(
    out: &mut String,
    kind: &str,
    fields: impl FnOnce(&mut ObjectWriter<'_>) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    let mut object = ObjectWriter::new(out);
    write_string(object.key("kind"), kind);
    fields(&mut object)?;
    object.end();
    Ok(())
}

/// A `{"kind": …, fields…}` object's members and its kind.
pub(crate) fn kinded_object<'v>(
    value: &'v Value,
    path: &str,
) -> Result<(&'v Map<String, Value>, &'v str), JsonError> {
    let object = as_object(value, path)?;
    let kind = object
        .get("kind")
        .ok_or_else(|| JsonError::new(path, "missing field \"kind\""))?;
    Ok((object, as_str(kind, &child(path, "kind"))?))
}

/// The value as a string.
pub(crate) fn as_str<'v>(value: &'v Value, path: &str) -> Result<&'v str, JsonError> {
    value
        .as_str()
        .ok_or_else(|| JsonError::new(path, "expected a string"))
}

/// The value as an array.
pub(crate) fn as_array<'v>(value: &'v Value, path: &str) -> Result<&'v [Value], JsonError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| JsonError::new(path, "expected an array"))
}

/// The value as an integer number within `[min, max]`.
pub(crate) fn as_integer(value: &Value, path: &str, min: i64, max: i64) -> Result<i64, JsonError> {
    let number = value
        .as_i64()
        .ok_or_else(|| JsonError::new(path, "expected an integer"))?;
    if number < min || number > max {
        return Err(JsonError::new(
            path,
            format!("{number} is outside [{min}, {max}]"),
        ));
    }
    Ok(number)
}

/// Decodes a hex string.
pub(crate) fn parse_hex(value: &Value, path: &str) -> Result<Vec<u8>, JsonError> {
    let text = as_str(value, path)?;
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(JsonError::new(path, "odd number of hex digits"));
    }
    let nibble = |digit: u8| -> Result<u8, JsonError> {
        match digit {
            b'0'..=b'9' => Ok(digit - b'0'),
            b'a'..=b'f' => Ok(digit - b'a' + 10),
            b'A'..=b'F' => Ok(digit - b'A' + 10),
            _ => Err(JsonError::new(path, "not a hex digit")),
        }
    };
    digits
        .chunks_exact(2)
        .map(|pair| Ok(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}
