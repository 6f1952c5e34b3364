//! The JSON mapping (tutorial, Part 2 "JSON" and the JSON notes of Part 3), as two interpreters
//! of an encoding's [`Schema`]: binary to JSON and JSON to binary. `int64`, `n` and `z` are
//! decimal strings; other numbers are JSON numbers; bytes are hexadecimal strings (strings are
//! plain unless `Hex`); objects omit absent `opt` fields and `dft` fields equal to their
//! default; tuples are arrays; `option` is `null` or the value; union payloads are untagged, and
//! reading JSON tries the cases in order, as data-encoding does. Objects reject unknown fields,
//! so untagged unions stay decidable.
//!
//! The typed [`crate::Encoding::to_json`]/[`crate::Encoding::decode_json`] go through the binary
//! form, so a value has exactly the same checks in both backends.

use crate::bytes::{n_header, read_length, write_length};
use crate::describe::{Desc, FieldDesc, IntKind, JsonRepr, LengthKind, Presence, Schema, TagSize};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::layout::SizeClass;
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;
use num_bigint::{BigInt, BigUint};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Why a JSON conversion failed.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonError {
    /// The binary input was malformed.
    Decode(DecodeError),
    /// The value could not be serialised.
    Encode(EncodeError),
    /// The JSON did not have the expected shape.
    Mismatch {
        /// Where, as a JSON pointer (`/field/0`).
        path: String,
        /// What was expected.
        expected: String,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Decode(error) => write!(f, "binary input: {error}"),
            JsonError::Encode(error) => write!(f, "value: {error}"),
            JsonError::Mismatch { path, expected } => {
                write!(
                    f,
                    "JSON at {:?}: expected {expected}",
                    if path.is_empty() { "/" } else { path }
                )
            }
        }
    }
}

impl std::error::Error for JsonError {}

fn mismatch(expected: impl Into<String>) -> JsonError {
    JsonError::Mismatch {
        path: String::new(),
        expected: expected.into(),
    }
}

fn at(segment: &str, error: JsonError) -> JsonError {
    match error {
        JsonError::Mismatch { path, expected } => JsonError::Mismatch {
            path: format!("/{segment}{path}"),
            expected,
        },
        other => other,
    }
}

/// Lowercase hexadecimal of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    text
}

/// The bytes of a hexadecimal string (either case), or `None` if it is not one.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    fn digit(byte: u8) -> Option<u8> {
        match byte {
            b'0'..=b'9' => Some(byte - b'0'),
            b'a'..=b'f' => Some(byte - b'a' + 10),
            b'A'..=b'F' => Some(byte - b'A' + 10),
            _ => None,
        }
    }
    let text = text.as_bytes();
    if text.len() & 1 == 1 {
        return None;
    }
    text.chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The JSON form of the binary value `input` under `schema`; `input` must hold exactly one value.
pub fn binary_to_json(schema: &Schema, input: &[u8]) -> Result<Value, JsonError> {
    let mut reader = Reader::new(input);
    let value = read_json(schema, &schema.root, &mut reader).map_err(JsonError::Decode)?;
    reader.finish().map_err(JsonError::Decode)?;
    Ok(value)
}

/// Appends the binary form of the JSON `value` under `schema` to `out`.
pub fn json_to_binary(schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<(), JsonError> {
    write_json(schema, &schema.root, value, &mut Writer::new(out))
}

fn read_int(kind: IntKind, reader: &mut Reader<'_>) -> Result<i64, DecodeError> {
    let start = reader.offset();
    let value: i64 = match kind {
        IntKind::Int8 => i8::from_be_bytes(reader.take_array::<1>()?).into(),
        IntKind::Uint8 => reader.take_u8()?.into(),
        IntKind::Int16 => i16::from_be_bytes(reader.take_array::<2>()?).into(),
        IntKind::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?).into(),
        IntKind::Int31 | IntKind::Int32 => i32::from_be_bytes(reader.take_array::<4>()?).into(),
        IntKind::Uint30 => u32::from_be_bytes(reader.take_array::<4>()?).into(),
        IntKind::Int64 => i64::from_be_bytes(reader.take_array::<8>()?),
    };
    let (min, max) = kind.range();
    if value < min || value > max {
        return Err(DecodeError::new(
            DecodeErrorKind::InvalidInt { min, value, max },
            start,
        ));
    }
    Ok(value)
}

fn float_json(value: f64) -> Value {
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// The classes of a product's parts, and where the variable one's region ends early.
fn split_of(classes: &[SizeClass]) -> Option<(usize, usize)> {
    let position = classes
        .iter()
        .position(|class| *class == SizeClass::Variable)?;
    let suffix: usize = classes[position + 1..]
        .iter()
        .filter_map(|class| class.fixed_bytes())
        .sum();
    (suffix > 0).then_some((position, suffix))
}

fn field_class(schema: &Schema, field: &FieldDesc) -> SizeClass {
    match field.presence {
        Presence::Optional { variable: true } => SizeClass::Variable,
        Presence::Optional { variable: false } => SizeClass::Dynamic,
        _ => schema.size_class(&field.desc),
    }
}

fn read_part<'a, T>(
    split: Option<(usize, usize)>,
    position: usize,
    reader: &mut Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match split {
        Some((split_position, suffix)) if split_position == position => {
            let saved = reader.enter_prefix(suffix)?;
            let value = read(reader)?;
            if reader.remaining_bytes() != 0 {
                return Err(reader.error(DecodeErrorKind::ExtraBytes));
            }
            reader.leave_prefix(saved);
            Ok(value)
        }
        _ => read(reader),
    }
}

fn read_json(schema: &Schema, desc: &Desc, reader: &mut Reader<'_>) -> Result<Value, DecodeError> {
    Ok(match desc {
        Desc::Unit | Desc::Empty => Value::Object(Map::new()),
        Desc::Null => Value::Null,
        Desc::Constant(text) => Value::String(text.clone()),
        Desc::Bool => Value::Bool(reader.take_u8()? != 0),
        Desc::Int(IntKind::Int64) => Value::String(read_int(IntKind::Int64, reader)?.to_string()),
        Desc::Int(kind) => Value::from(read_int(*kind, reader)?),
        Desc::RangedInt { minimum, maximum } => {
            let encoding = crate::primitive::ranged_int(*minimum, *maximum)
                .map_err(|_| reader.error(DecodeErrorKind::Invalid("invalid range".into())))?;
            Value::from(encoding.read(reader)?)
        }
        Desc::Float => float_json(crate::primitive::float().read(reader)?),
        Desc::RangedFloat { minimum, maximum } => {
            let encoding = crate::primitive::ranged_float(*minimum, *maximum)
                .map_err(|_| reader.error(DecodeErrorKind::Invalid("invalid range".into())))?;
            float_json(encoding.read(reader)?)
        }
        Desc::N => Value::String(crate::primitive::n().read(reader)?.to_string()),
        Desc::Z => Value::String(crate::primitive::z().read(reader)?.to_string()),
        Desc::Bytes { fixed_bytes, json } => {
            let size = fixed_bytes.unwrap_or_else(|| reader.remaining_bytes());
            let offset = reader.offset();
            let bytes = reader.take(size)?;
            match json {
                JsonRepr::Hex => Value::String(to_hex(bytes)),
                JsonRepr::Plain => Value::String(
                    std::str::from_utf8(bytes)
                        .map_err(|error| {
                            DecodeError::new(
                                DecodeErrorKind::InvalidUtf8,
                                offset + error.valid_up_to(),
                            )
                        })?
                        .to_owned(),
                ),
            }
        }
        Desc::Padded {
            inner,
            padding_bytes,
        } => {
            let value = read_json(schema, inner, reader)?;
            reader.take(*padding_bytes)?;
            value
        }
        Desc::StringEnum { cases } => {
            let offset = reader.offset();
            let index = read_int(crate::union::enum_tag_kind(cases.len()), reader)? as usize;
            match cases.get(index) {
                Some(case) => Value::String(case.clone()),
                None => return Err(DecodeError::new(DecodeErrorKind::NoCaseMatched, offset)),
            }
        }
        Desc::List {
            max_length,
            element,
        } => {
            let mut values = Vec::new();
            while reader.remaining_bytes() != 0 {
                if Some(values.len()) == *max_length {
                    return Err(reader.error(DecodeErrorKind::ListTooLong));
                }
                values.push(read_json(schema, element, reader)?);
            }
            Value::Array(values)
        }
        Desc::ListWithLength {
            kind,
            max_length,
            element,
        } => {
            let offset = reader.offset();
            let length = read_length(*kind, reader)?;
            if length > max_length.unwrap_or(usize::MAX) {
                return Err(DecodeError::new(DecodeErrorKind::ListTooLong, offset));
            }
            let mut values = Vec::new();
            for _ in 0..length {
                values.push(read_json(schema, element, reader)?);
            }
            Value::Array(values)
        }
        Desc::FixedList { length, element } => {
            let mut values = Vec::new();
            for _ in 0..*length {
                values.push(read_json(schema, element, reader)?);
            }
            Value::Array(values)
        }
        Desc::Obj(fields) => {
            let classes: Vec<SizeClass> = fields.iter().map(|f| field_class(schema, f)).collect();
            let split = split_of(&classes);
            let mut object = Map::new();
            for (position, field) in fields.iter().enumerate() {
                let value = read_part(split, position, reader, |reader| {
                    read_field(schema, field, reader)
                })?;
                if let Some(value) = value {
                    object.insert(field.name.clone(), value);
                }
            }
            Value::Object(object)
        }
        Desc::Tup(elements) => {
            let classes: Vec<SizeClass> = elements.iter().map(|e| schema.size_class(e)).collect();
            let split = split_of(&classes);
            let mut values = Vec::with_capacity(elements.len());
            for (position, element) in elements.iter().enumerate() {
                values.push(read_part(split, position, reader, |reader| {
                    read_json(schema, element, reader)
                })?);
            }
            Value::Array(values)
        }
        Desc::Option(inner) => {
            let offset = reader.offset();
            match reader.take_u8()? {
                0 => Value::Null,
                1 => read_json(schema, inner, reader)?,
                tag => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnexpectedTag(tag.into()),
                        offset,
                    ))
                }
            }
        }
        Desc::Union { tag_size, cases } => {
            let offset = reader.offset();
            let tag = match tag_size {
                TagSize::Uint8 => u16::from(reader.take_u8()?),
                TagSize::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?),
            };
            match cases.iter().find(|case| case.tag == tag) {
                Some(case) => read_json(schema, &case.desc, reader)?,
                None => {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnexpectedTag(tag.into()),
                        offset,
                    ))
                }
            }
        }
        Desc::DynamicSize { kind, inner } => {
            let size = read_length(*kind, reader)?;
            let saved = reader.enter_region(size)?;
            let value = read_json(schema, inner, reader)?;
            reader.leave_region(saved)?;
            value
        }
        Desc::CheckSize { limit_bytes, inner } => {
            let saved = reader.enter_allowed(*limit_bytes);
            let value = read_json(schema, inner, reader)?;
            reader.leave_allowed(saved);
            value
        }
        Desc::Mu(index) => {
            let Some(mu) = schema.recursive.get(*index) else {
                return Err(reader.error(DecodeErrorKind::Invalid(
                    "unknown recursive encoding".into(),
                )));
            };
            reader.enter_recursion(mu.max_depth)?;
            let value = read_json(schema, &mu.body, reader)?;
            reader.leave_recursion();
            value
        }
    })
}

fn read_field(
    schema: &Schema,
    field: &FieldDesc,
    reader: &mut Reader<'_>,
) -> Result<Option<Value>, DecodeError> {
    match &field.presence {
        Presence::Required => Ok(Some(read_json(schema, &field.desc, reader)?)),
        Presence::Optional { variable } => {
            let present = if *variable {
                reader.remaining_bytes() != 0
            } else {
                reader.take_u8()? != 0
            };
            if present {
                Ok(Some(read_json(schema, &field.desc, reader)?))
            } else {
                Ok(None)
            }
        }
        Presence::Default(default_binary) => {
            let start = reader.offset();
            let value = read_json(schema, &field.desc, reader)?;
            let size = reader.offset() - start;
            if reader.last_bytes(size) == default_binary.as_slice() {
                Ok(None)
            } else {
                Ok(Some(value))
            }
        }
    }
}

fn json_int(value: &Value, allow_string: bool) -> Result<i64, JsonError> {
    match value {
        Value::Number(number) => {
            if let Some(integer) = number.as_i64() {
                return Ok(integer);
            }
            // data-encoding's JSON numbers are floats: accept integral floats.
            match number.as_f64() {
                Some(float) if float.fract() == 0.0 && float.abs() < 9.0e15 => Ok(float as i64),
                _ => Err(mismatch("an integer")),
            }
        }
        Value::String(text) if allow_string => text
            .parse::<i64>()
            .map_err(|_| mismatch("a decimal integer string")),
        _ => Err(mismatch(if allow_string {
            "a decimal integer string"
        } else {
            "an integer"
        })),
    }
}

fn check_range(value: i64, min: i64, max: i64, writer: &Writer<'_>) -> Result<(), JsonError> {
    if value < min || value > max {
        return Err(JsonError::Encode(
            writer.error(EncodeErrorKind::InvalidInt { min, value, max }),
        ));
    }
    Ok(())
}

fn write_json(
    schema: &Schema,
    desc: &Desc,
    value: &Value,
    writer: &mut Writer<'_>,
) -> Result<(), JsonError> {
    let encode = JsonError::Encode;
    match desc {
        Desc::Unit => {}
        Desc::Empty => match value {
            Value::Object(object) if object.is_empty() => {}
            _ => return Err(mismatch("{}")),
        },
        Desc::Null => {
            if !value.is_null() {
                return Err(mismatch("null"));
            }
        }
        Desc::Constant(text) => {
            if value.as_str() != Some(text.as_str()) {
                return Err(mismatch(format!("the string {text:?}")));
            }
        }
        Desc::Bool => match value {
            Value::Bool(flag) => writer.put_u8(if *flag { 0xff } else { 0 }),
            _ => return Err(mismatch("a boolean")),
        },
        Desc::Int(kind) => {
            let integer = json_int(value, *kind == IntKind::Int64)?;
            let (min, max) = kind.range();
            check_range(integer, min, max, writer)?;
            match kind {
                IntKind::Int8 | IntKind::Uint8 => writer.put_u8(integer as u8),
                IntKind::Int16 | IntKind::Uint16 => writer.put(&(integer as u16).to_be_bytes()),
                IntKind::Int64 => writer.put(&integer.to_be_bytes()),
                _ => writer.put(&(integer as u32).to_be_bytes()),
            }
        }
        Desc::RangedInt { minimum, maximum } => {
            let integer = json_int(value, false)?;
            check_range(integer, (*minimum).into(), (*maximum).into(), writer)?;
            let encoding = crate::primitive::ranged_int(*minimum, *maximum)
                .map_err(|_| mismatch("a range"))?;
            encoding.write(&(integer as i32), writer).map_err(encode)?;
        }
        Desc::Float | Desc::RangedFloat { .. } => {
            let Some(float) = value.as_f64() else {
                return Err(mismatch("a number"));
            };
            if let Desc::RangedFloat { minimum, maximum } = desc {
                let encoding = crate::primitive::ranged_float(*minimum, *maximum)
                    .map_err(|_| mismatch("a range"))?;
                encoding.write(&float, writer).map_err(encode)?;
            } else {
                writer.put(&float.to_be_bytes());
            }
        }
        Desc::N => {
            let text = zarith_text(value)?;
            let natural: BigUint = text.parse().map_err(|_| mismatch("a natural number"))?;
            crate::zarith::write_n(&natural, writer.buffer());
        }
        Desc::Z => {
            let text = zarith_text(value)?;
            let integer: BigInt = text.parse().map_err(|_| mismatch("an integer"))?;
            crate::zarith::write_z(&integer, writer.buffer());
        }
        Desc::Bytes { fixed_bytes, json } => {
            let Some(text) = value.as_str() else {
                return Err(mismatch("a string"));
            };
            let bytes = match json {
                JsonRepr::Hex => from_hex(text).ok_or_else(|| mismatch("a hexadecimal string"))?,
                JsonRepr::Plain => text.as_bytes().to_vec(),
            };
            if let Some(size) = fixed_bytes {
                if bytes.len() != *size {
                    return Err(encode(writer.error(EncodeErrorKind::InvalidFixedLength {
                        expected: *size,
                        actual: bytes.len(),
                    })));
                }
            }
            writer.put(&bytes);
        }
        Desc::Padded {
            inner,
            padding_bytes,
        } => {
            write_json(schema, inner, value, writer)?;
            writer.put_zeros(*padding_bytes);
        }
        Desc::StringEnum { cases } => {
            let Some(index) = value
                .as_str()
                .and_then(|text| cases.iter().position(|case| case == text))
            else {
                return Err(mismatch(format!("one of {cases:?}")));
            };
            match crate::union::enum_tag_kind(cases.len()) {
                IntKind::Uint8 => writer.put_u8(index as u8),
                IntKind::Uint16 => writer.put(&(index as u16).to_be_bytes()),
                _ => writer.put(&(index as u32).to_be_bytes()),
            }
        }
        Desc::List {
            max_length,
            element,
        } => {
            let items = json_array(value)?;
            check_length(items.len(), *max_length, writer)?;
            write_items(schema, element, items, writer)?;
        }
        Desc::ListWithLength {
            kind,
            max_length,
            element,
        } => {
            let items = json_array(value)?;
            check_length(
                items.len(),
                Some(max_length.unwrap_or(kind.max_value())),
                writer,
            )?;
            write_length(*kind, items.len(), writer);
            write_items(schema, element, items, writer)?;
        }
        Desc::FixedList { length, element } => {
            let items = json_array(value)?;
            if items.len() != *length {
                return Err(encode(writer.error(EncodeErrorKind::InvalidFixedLength {
                    expected: *length,
                    actual: items.len(),
                })));
            }
            write_items(schema, element, items, writer)?;
        }
        Desc::Obj(fields) => {
            let Value::Object(object) = value else {
                return Err(mismatch("an object"));
            };
            for key in object.keys() {
                if !fields.iter().any(|field| &field.name == key) {
                    return Err(mismatch(format!("no field {key:?}")));
                }
            }
            for field in fields {
                let item = object.get(&field.name);
                write_field(schema, field, item, writer).map_err(|error| at(&field.name, error))?;
            }
        }
        Desc::Tup(elements) => {
            let items = json_array(value)?;
            if items.len() != elements.len() {
                return Err(mismatch(format!("an array of {} elements", elements.len())));
            }
            for (index, (element, item)) in elements.iter().zip(items).enumerate() {
                write_json(schema, element, item, writer)
                    .map_err(|error| at(&index.to_string(), error))?;
            }
        }
        Desc::Option(inner) => {
            if value.is_null() {
                writer.put_u8(0);
            } else {
                writer.put_u8(1);
                write_json(schema, inner, value, writer)?;
            }
        }
        Desc::Union { tag_size, cases } => {
            let start = writer.len();
            let mut last_error = mismatch("a value of one of the union's cases");
            for case in cases {
                match tag_size {
                    TagSize::Uint8 => writer.put_u8(case.tag as u8),
                    TagSize::Uint16 => writer.put(&case.tag.to_be_bytes()),
                }
                match write_json(schema, &case.desc, value, writer) {
                    Ok(()) => return Ok(()),
                    Err(error) => {
                        writer.truncate(start);
                        last_error = error;
                    }
                }
            }
            return Err(last_error);
        }
        Desc::DynamicSize { kind, inner } => {
            let start = writer.len();
            if *kind != LengthKind::N {
                write_length(*kind, 0, writer);
            }
            let payload_start = writer.len();
            write_json(schema, inner, value, writer)?;
            let size = writer.len() - payload_start;
            if size > kind.max_value() {
                return Err(encode(writer.error(EncodeErrorKind::SizeLimitExceeded {
                    limit_bytes: kind.max_value(),
                    size_bytes: size,
                })));
            }
            match kind {
                LengthKind::N => {
                    let mut header = [0u8; 5];
                    let header_size = n_header(size, &mut header);
                    writer.insert(start, &header[..header_size]);
                }
                LengthKind::Uint8 => writer.patch(start, &[size as u8]),
                LengthKind::Uint16 => writer.patch(start, &(size as u16).to_be_bytes()),
                LengthKind::Uint30 => writer.patch(start, &(size as u32).to_be_bytes()),
            }
        }
        Desc::CheckSize { limit_bytes, inner } => {
            let start = writer.len();
            write_json(schema, inner, value, writer)?;
            let size = writer.written_since(start).len();
            if size > *limit_bytes {
                return Err(encode(writer.error(EncodeErrorKind::SizeLimitExceeded {
                    limit_bytes: *limit_bytes,
                    size_bytes: size,
                })));
            }
        }
        Desc::Mu(index) => {
            let Some(mu) = schema.recursive.get(*index) else {
                return Err(mismatch("a known recursive encoding"));
            };
            writer.enter_recursion(mu.max_depth).map_err(encode)?;
            write_json(schema, &mu.body, value, writer)?;
            writer.leave_recursion();
        }
    }
    Ok(())
}

fn zarith_text(value: &Value) -> Result<String, JsonError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Ok(number.to_string()),
        _ => Err(mismatch("a decimal integer string")),
    }
}

fn json_array(value: &Value) -> Result<&Vec<Value>, JsonError> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(mismatch("an array")),
    }
}

fn check_length(
    length: usize,
    max_length: Option<usize>,
    writer: &Writer<'_>,
) -> Result<(), JsonError> {
    match max_length {
        Some(max_length) if length > max_length => Err(JsonError::Encode(
            writer.error(EncodeErrorKind::ListTooLong { max_length, length }),
        )),
        _ => Ok(()),
    }
}

fn write_items(
    schema: &Schema,
    element: &Desc,
    items: &[Value],
    writer: &mut Writer<'_>,
) -> Result<(), JsonError> {
    for (index, item) in items.iter().enumerate() {
        write_json(schema, element, item, writer).map_err(|error| at(&index.to_string(), error))?;
    }
    Ok(())
}

fn write_field(
    schema: &Schema,
    field: &FieldDesc,
    item: Option<&Value>,
    writer: &mut Writer<'_>,
) -> Result<(), JsonError> {
    match (&field.presence, item) {
        (Presence::Required, Some(item)) => write_json(schema, &field.desc, item, writer),
        (Presence::Required, None) => Err(mismatch("a required field")),
        (Presence::Optional { variable }, None) => {
            if !variable {
                writer.put_u8(0);
            }
            Ok(())
        }
        (Presence::Optional { variable }, Some(item)) => {
            if !variable {
                writer.put_u8(0xff);
            }
            write_json(schema, &field.desc, item, writer)
        }
        (Presence::Default(default_binary), None) => {
            writer.put(default_binary);
            Ok(())
        }
        (Presence::Default(_), Some(item)) => write_json(schema, &field.desc, item, writer),
    }
}
