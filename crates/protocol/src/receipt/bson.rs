//! The binary form of Octez's errors: data-encoding writes a `json` value in binary as BSON
//! (`Json_repr_bson` of ocplib-json-typed), so an error trace in a binary receipt is a list of
//! size-prefixed BSON documents. This module reads and writes that subset of BSON: documents,
//! arrays, strings, doubles (every JSON number is written as one, as ocplib does), booleans and
//! null; 32- and 64-bit integers are read too.
//!
//! Nesting is bounded by [`BSON_DEPTH_MAX`], so the (recursive) reader and writer and the
//! `serde_json::Value` they build have a bounded depth.

use serde_json::{Map, Number, Value};

/// The deepest nesting of documents and arrays read: serde_json's own recursion limit (128), so
/// that a value read here can also be written and read back as JSON text.
pub const BSON_DEPTH_MAX: usize = 128;

const DOUBLE: u8 = 0x01;
const STRING: u8 = 0x02;
const DOCUMENT: u8 = 0x03;
const ARRAY: u8 = 0x04;
const BOOLEAN: u8 = 0x08;
const NULL: u8 = 0x0a;
const INT32: u8 = 0x10;
const INT64: u8 = 0x12;

/// Why BSON bytes were refused, at which offset from the start of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsonError {
    /// The offset.
    pub offset: usize,
    /// The rule broken.
    pub reason: &'static str,
}

struct Cursor<'b> {
    bytes: &'b [u8],
    offset: usize,
}

impl<'b> Cursor<'b> {
    fn fail<T>(&self, reason: &'static str) -> Result<T, BsonError> {
        Err(BsonError {
            offset: self.offset,
            reason,
        })
    }

    fn take(&mut self, size: usize) -> Result<&'b [u8], BsonError> {
        match self
            .bytes
            .get(self.offset..self.offset.saturating_add(size))
        {
            Some(slice) if size <= self.bytes.len() => {
                self.offset += size;
                Ok(slice)
            }
            _ => self.fail("truncated"),
        }
    }

    fn u8(&mut self) -> Result<u8, BsonError> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, BsonError> {
        let bytes = self.take(4)?;
        Ok(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn array8(&mut self) -> Result<[u8; 8], BsonError> {
        let mut out = [0u8; 8];
        out.copy_from_slice(self.take(8)?);
        Ok(out)
    }

    fn cstring(&mut self) -> Result<&'b str, BsonError> {
        let rest = &self.bytes[self.offset..];
        let Some(end) = rest.iter().position(|byte| *byte == 0) else {
            return self.fail("unterminated key");
        };
        let text = std::str::from_utf8(&rest[..end]).or_else(|_| self.fail("key not UTF-8"))?;
        self.offset += end + 1;
        Ok(text)
    }

    fn string(&mut self) -> Result<String, BsonError> {
        let size = self.i32()?;
        let size = usize::try_from(size).or_else(|_| self.fail("negative string size"))?;
        let bytes = self.take(size)?;
        match bytes.split_last() {
            Some((0, text)) => std::str::from_utf8(text)
                .map(str::to_owned)
                .or_else(|_| self.fail("string not UTF-8")),
            _ => self.fail("string not NUL-terminated"),
        }
    }

    /// Reads a document or array body (size, elements, NUL) into an object or array.
    fn document(&mut self, is_array: bool, depth: usize) -> Result<Value, BsonError> {
        if depth > BSON_DEPTH_MAX {
            return self.fail("nested too deeply");
        }
        let start = self.offset;
        let size = usize::try_from(self.i32()?).or_else(|_| self.fail("negative size"))?;
        let end = start
            .checked_add(size)
            .filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return self.fail("document beyond the input");
        };
        let mut object = Map::new();
        let mut items = Vec::new();
        loop {
            let tag = self.u8()?;
            if tag == 0 {
                break;
            }
            let key = self.cstring()?;
            let value = self.element(tag, depth)?;
            if is_array {
                items.push(value);
            } else {
                object.insert(key.to_owned(), value);
            }
        }
        if self.offset != end {
            return self.fail("document size does not match its contents");
        }
        Ok(if is_array {
            Value::Array(items)
        } else {
            Value::Object(object)
        })
    }

    fn element(&mut self, tag: u8, depth: usize) -> Result<Value, BsonError> {
        Ok(match tag {
            DOUBLE => {
                let number = f64::from_le_bytes(self.array8()?);
                json_number(number).map_or_else(|| self.fail("not a finite number"), Ok)?
            }
            STRING => Value::String(self.string()?),
            DOCUMENT => self.document(false, depth + 1)?,
            ARRAY => self.document(true, depth + 1)?,
            BOOLEAN => match self.u8()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                _ => return self.fail("boolean byte"),
            },
            NULL => Value::Null,
            INT32 => Value::from(self.i32()?),
            INT64 => Value::from(i64::from_le_bytes(self.array8()?)),
            _ => return self.fail("unsupported BSON element type"),
        })
    }
}

/// A double as a JSON number: an integer when it is one (as Octez's JSON prints it).
fn json_number(number: f64) -> Option<Value> {
    // 2^53: the integers a double holds exactly.
    const EXACT_INTEGER_MAX: f64 = 9_007_199_254_740_992.0;
    if number.fract() == 0.0 && number.abs() <= EXACT_INTEGER_MAX {
        return Some(Value::from(number as i64));
    }
    Number::from_f64(number).map(Value::Number)
}

/// Reads one BSON document (all of `bytes`) as a JSON value.
pub fn read_document(bytes: &[u8]) -> Result<Value, BsonError> {
    let mut cursor = Cursor { bytes, offset: 0 };
    let value = cursor.document(false, 0)?;
    if cursor.offset != bytes.len() {
        return cursor.fail("bytes after the document");
    }
    Ok(value)
}

/// Appends `value` as a BSON document; a value that is not an object is refused.
pub fn write_document(value: &Value, out: &mut Vec<u8>) -> Result<(), &'static str> {
    match value {
        Value::Object(object) => {
            write_body(object.iter().map(|(key, value)| (key.as_str(), value)), out)
        }
        _ => Err("a BSON document must be a JSON object"),
    }
}

fn write_body<'v>(
    elements: impl Iterator<Item = (&'v str, &'v Value)>,
    out: &mut Vec<u8>,
) -> Result<(), &'static str> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    for (key, value) in elements {
        if key.as_bytes().contains(&0) {
            return Err("a BSON key cannot contain NUL");
        }
        let tag_index = out.len();
        out.push(0);
        out.extend_from_slice(key.as_bytes());
        out.push(0);
        out[tag_index] = write_element(value, out)?;
    }
    out.push(0);
    let size = i32::try_from(out.len() - start).map_err(|_| "BSON document too large")?;
    out[start..start + 4].copy_from_slice(&size.to_le_bytes());
    Ok(())
}

/// Appends the element's value and returns its type tag.
fn write_element(value: &Value, out: &mut Vec<u8>) -> Result<u8, &'static str> {
    Ok(match value {
        Value::Null => NULL,
        Value::Bool(flag) => {
            out.push(u8::from(*flag));
            BOOLEAN
        }
        Value::Number(number) => {
            let double = number
                .as_f64()
                .ok_or("number not representable as a double")?;
            out.extend_from_slice(&double.to_le_bytes());
            DOUBLE
        }
        Value::String(text) => {
            // Length-prefixed: unlike a key, a string value may contain NUL.
            let size = i32::try_from(text.len() + 1).map_err(|_| "BSON string too large")?;
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            out.push(0);
            STRING
        }
        Value::Object(object) => {
            write_body(object.iter().map(|(key, value)| (key.as_str(), value)), out)?;
            DOCUMENT
        }
        Value::Array(items) => {
            let keys: Vec<String> = (0..items.len()).map(|index| index.to_string()).collect();
            write_body(keys.iter().map(String::as_str).zip(items.iter()), out)?;
            ARRAY
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_element_type() {
        let value = serde_json::json!({
            "kind": "permanent", "id": "proto.x", "n": 7, "f": 1.5, "ok": true,
            "none": null, "list": ["a", {"b": [1, 2]}], "nul": "a\u{0}b"
        });
        let mut out = Vec::new();
        write_document(&value, &mut out).expect("an object");
        assert_eq!(read_document(&out), Ok(value));
    }

    #[test]
    fn refuses_bad_documents() {
        let mut out = Vec::new();
        write_document(&serde_json::json!({"a": "b"}), &mut out).expect("an object");
        assert!(read_document(&out[..out.len() - 1]).is_err());
        let mut longer = out.clone();
        longer.push(0);
        assert!(read_document(&longer).is_err());
        assert!(write_document(&serde_json::json!([1]), &mut Vec::new()).is_err());
    }

    #[test]
    fn depth_is_bounded() {
        // 200 nested documents {"a": {"a": …}} built by hand, without recursion.
        let depth = 200;
        let mut bytes = Vec::new();
        for _ in 0..depth {
            bytes.extend_from_slice(&[0, 0, 0, 0, DOCUMENT, b'a', 0]);
        }
        bytes.extend_from_slice(&[5, 0, 0, 0, 0]);
        for level in (0..depth).rev() {
            bytes.push(0);
            let start = level * 7;
            let size = (bytes.len() - start) as i32;
            bytes[start..start + 4].copy_from_slice(&size.to_le_bytes());
        }
        let error = read_document(&bytes).unwrap_err();
        assert_eq!(error.reason, "nested too deeply");
    }
}
