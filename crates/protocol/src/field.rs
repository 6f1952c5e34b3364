//! The `Field` trait — one value of an operation's encoding, in both forms (binary: read from a
//! borrowing [`Reader`], written into a reused `Vec`; JSON: written as text, read from a
//! `serde_json::Value`) — and its implementations for the scalar types of Octez's operation
//! encodings: fixed-width integers, Zarith naturals and integers (bounded by `check_size` or
//! not), mutez, booleans, options (`opt`: a presence byte, a left-out JSON field), size-prefixed
//! values (`dynamic_size`), lists, and hex bytes.
//!
//! Each record of `record.rs` is a sequence of fields, so the two forms of every kind come from
//! one list of its fields (their order is the binary order).

use std::borrow::Cow;

use kestrel_encoding::Reader;
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::json::{self, write_hex};

/// One value of an operation encoding, in binary and JSON.
pub trait Field<'a>: Sized {
    /// Reads the binary form at the reader's offset.
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError>;
    /// Appends the binary form.
    fn write(&self, out: &mut Vec<u8>);
    /// Appends the JSON form.
    fn write_json(&self, out: &mut String) -> Result<(), JsonError>;
    /// Reads the JSON form.
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError>;
    /// Whether the field appears in a JSON object (an absent `opt` field is left out).
    fn json_present(&self) -> bool {
        true
    }
    /// The value of a field left out of a JSON object, or `None` when the field is required.
    fn json_missing() -> Option<Self> {
        None
    }
}

/// The largest encoded size of a `check_size 10 n` (counters, limits, mutez): 10 bytes, 70 bits.
pub const BOUNDED_N_MAX_BYTES: usize = 10;

/// A natural read as data-encoding's `n`, at most `max_bytes` long (`check_size`), as a `u128`.
fn read_bounded_n(reader: &mut Reader<'_>, max_bytes: usize) -> Result<u128, DecodeError> {
    let start = reader.offset();
    let mut value: u128 = 0;
    let mut index = 0;
    loop {
        if index == max_bytes {
            return Err(DecodeError::new(
                DecodeErrorKind::SizeLimitExceeded,
                reader.offset(),
            ));
        }
        let byte = reader.take_u8()?;
        value |= u128::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            if byte == 0 && index > 0 {
                return Err(DecodeError::new(
                    DecodeErrorKind::TrailingZero,
                    start + index,
                ));
            }
            return Ok(value);
        }
        index += 1;
    }
}

/// Appends the `n` encoding of `value`.
fn write_n_u128(mut value: u128, out: &mut Vec<u8>) {
    loop {
        let low = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// The bytes of a Zarith number (up to and including the first byte without its high bit).
fn take_zarith<'a>(reader: &mut Reader<'a>) -> Result<Vec<u8>, DecodeError> {
    let start = reader.offset();
    let mut bytes = Vec::new();
    loop {
        let byte = reader.take_u8()?;
        bytes.push(byte);
        if byte & 0x80 == 0 {
            if byte == 0 && bytes.len() > 1 {
                return Err(DecodeError::new(
                    DecodeErrorKind::TrailingZero,
                    start + bytes.len() - 1,
                ));
            }
            return Ok(bytes);
        }
    }
}

/// Parses a decimal string as a natural number within `max`.
fn parse_decimal_u128(value: &Value, path: &str, max: u128) -> Result<u128, JsonError> {
    let text = json::as_str(value, path)?;
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(JsonError::new(path, "expected a decimal natural number"));
    }
    match text.parse::<u128>() {
        Ok(number) if number <= max => Ok(number),
        _ => Err(JsonError::new(path, format!("{text} is too large"))),
    }
}

/// Tez amounts in mutez (`Tez_repr.encoding`: `check_size 10 n`, converted to an `int64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mutez(pub u64);

impl<'a> Field<'a> for Mutez {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = reader.offset();
        let value = read_bounded_n(reader, BOUNDED_N_MAX_BYTES)?;
        // `Tez_repr.encoding` converts with `Z.to_int64`, which fails above `Int64.max_int`.
        match i64::try_from(value) {
            Ok(mutez) => Ok(Mutez(mutez as u64)),
            Err(_) => Err(DecodeError::invalid(
                "mutez",
                "above the int64 maximum",
                start,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_n_u128(u128::from(self.0), out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let max = i64::MAX as u128;
        Ok(Mutez(parse_decimal_u128(value, path, max)? as u64))
    }
}

/// A natural number of `check_size 10 n` (manager counters, gas and storage limits): at most 10
/// encoded bytes, so below 2^70.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BoundedNat(pub u128);

impl BoundedNat {
    /// The largest value 10 encoded bytes hold.
    pub const MAX: u128 = (1 << 70) - 1;
}

impl<'a> Field<'a> for BoundedNat {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        read_bounded_n(reader, BOUNDED_N_MAX_BYTES).map(BoundedNat)
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_n_u128(self.0, out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        parse_decimal_u128(value, path, Self::MAX).map(BoundedNat)
    }
}

/// An arbitrary-precision integer (data-encoding `z`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Zarith(pub BigInt);

impl<'a> Field<'a> for Zarith {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let bytes = take_zarith(reader)?;
        let negative = bytes[0] & 0x40 != 0;
        let mut magnitude = BigUint::from(bytes[0] & 0x3f);
        if bytes.len() > 1 {
            let digits: Vec<u8> = bytes[1..].iter().map(|byte| byte & 0x7f).collect();
            let high = BigUint::from_radix_le(&digits, 128).unwrap_or_default();
            magnitude += high << 6u32;
        }
        let sign = if negative { Sign::Minus } else { Sign::Plus };
        Ok(Zarith(BigInt::from_biguint(sign, magnitude)))
    }
    fn write(&self, out: &mut Vec<u8>) {
        kestrel_encoding::zarith::write_z(&self.0, out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let text = json::as_str(value, path)?;
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(JsonError::new(path, "expected a decimal integer"));
        }
        text.parse::<BigInt>()
            .map(Zarith)
            .map_err(|_| JsonError::new(path, "expected a decimal integer"))
    }
}

/// An arbitrary-precision natural number (data-encoding `n`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Natural(pub BigUint);

impl<'a> Field<'a> for Natural {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let bytes = take_zarith(reader)?;
        let digits: Vec<u8> = bytes.iter().map(|byte| byte & 0x7f).collect();
        Ok(Natural(
            BigUint::from_radix_le(&digits, 128).unwrap_or_default(),
        ))
    }
    fn write(&self, out: &mut Vec<u8>) {
        kestrel_encoding::zarith::write_n(&self.0, out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let text = json::as_str(value, path)?;
        if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(JsonError::new(path, "expected a decimal natural number"));
        }
        text.parse::<BigUint>()
            .map(Natural)
            .map_err(|_| JsonError::new(path, "expected a decimal natural number"))
    }
}

/// A ticket amount (`Ticket_amount.encoding`): a natural number that must be positive, a zero
/// refused by the encoding's guard.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TicketAmount(pub BigUint);

/// `Ticket_amount.encoding`'s guard message.
const TICKET_AMOUNT_GUARD: &str = "expecting positive number";

impl<'a> Field<'a> for TicketAmount {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match Natural::read(reader)? {
            Natural(amount) if amount.is_zero() => Err(DecodeError::new(
                DecodeErrorKind::InvariantGuard {
                    what: "ticket amount",
                    message: TICKET_AMOUNT_GUARD,
                },
                offset,
            )),
            Natural(amount) => Ok(TicketAmount(amount)),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        kestrel_encoding::zarith::write_n(&self.0, out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        Natural(self.0.clone()).write_json(out)
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        match Natural::read_json(value, path)? {
            Natural(amount) if amount.is_zero() => Err(JsonError::new(path, TICKET_AMOUNT_GUARD)),
            Natural(amount) => Ok(TicketAmount(amount)),
        }
    }
}

macro_rules! integer_field {
    ($type:ty, $size:expr) => {
        impl<'a> Field<'a> for $type {
            fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
                Ok(<$type>::from_be_bytes(reader.take_array::<$size>()?))
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
                out.push_str(&self.to_string());
                Ok(())
            }
            fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
                let number = json::as_integer(
                    value,
                    path,
                    i64::from(<$type>::MIN),
                    i64::from(<$type>::MAX),
                )?;
                Ok(number as $type)
            }
        }
    };
}

integer_field!(u8, 1);
integer_field!(u16, 2);
integer_field!(i32, 4);

/// data-encoding's `int64`: 8 bytes, big-endian; a decimal string in JSON.
impl<'a> Field<'a> for i64 {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(i64::from_be_bytes(reader.take_array::<8>()?))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let text = json::as_str(value, path)?;
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(JsonError::new(path, "expected a decimal integer"));
        }
        text.parse::<i64>()
            .map_err(|_| JsonError::new(path, format!("{text} is outside the int64 range")))
    }
}

/// Gas in milligas (`Gas.Arith.n_fp_encoding`: a natural `n`), within `u64` (Octez's gas values
/// are bounded by the block's hard gas limit times 1000, far below 2^64); a decimal string in
/// JSON. A larger value is refused with an offset rather than truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Milligas(pub u64);

impl<'a> Field<'a> for Milligas {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = reader.offset();
        let value = read_bounded_n(reader, BOUNDED_N_MAX_BYTES)?;
        u64::try_from(value)
            .map(Milligas)
            .map_err(|_| DecodeError::invalid("milligas", "above 2^64 - 1", start))
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_n_u128(u128::from(self.0), out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        parse_decimal_u128(value, path, u128::from(u64::MAX)).map(|gas| Milligas(gas as u64))
    }
}

/// A data-encoding `z` whose values fit an `i64` (storage sizes and their diffs, big map and
/// sapling ids in receipts: Octez's `Z.t`, bounded in practice by the chain's storage); a
/// decimal string in JSON. A larger value is refused with an offset rather than truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Z64(pub i64);

impl<'a> Field<'a> for Z64 {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = reader.offset();
        let Zarith(value) = Zarith::read(reader)?;
        i64::try_from(&value)
            .map(Z64)
            .map_err(|_| DecodeError::invalid("integer", "outside the int64 range", start))
    }
    fn write(&self, out: &mut Vec<u8>) {
        kestrel_encoding::zarith::write_z(&BigInt::from(self.0), out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('"');
        out.push_str(&self.0.to_string());
        out.push('"');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        i64::read_json(value, path).map(Z64)
    }
}

/// data-encoding's `int31`: a 4-byte signed integer within [-2^30, 2^30 - 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Int31(pub i32);

impl Int31 {
    /// The smallest value.
    pub const MIN: i32 = -(1 << 30);
    /// The largest value.
    pub const MAX: i32 = (1 << 30) - 1;
}

impl<'a> Field<'a> for Int31 {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let value = i32::read(reader)?;
        if !(Self::MIN..=Self::MAX).contains(&value) {
            return Err(DecodeError::invalid(
                "int31",
                format!("{value} out of range"),
                offset,
            ));
        }
        Ok(Int31(value))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.0.write_json(out)
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        json::as_integer(value, path, i64::from(Self::MIN), i64::from(Self::MAX))
            .map(|number| Int31(number as i32))
    }
}

/// Two values one after the other (`tup2`); a two-element array in JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair<A, B>(pub A, pub B);

impl<'a, A: Field<'a>, B: Field<'a>> Field<'a> for Pair<A, B> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Pair(A::read(reader)?, B::read(reader)?))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.0.write(out);
        self.1.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('[');
        self.0.write_json(out)?;
        out.push(',');
        self.1.write_json(out)?;
        out.push(']');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        match json::as_array(value, path)? {
            [first, second] => Ok(Pair(
                A::read_json(first, &json::child(path, "0"))?,
                B::read_json(second, &json::child(path, "1"))?,
            )),
            _ => Err(JsonError::new(path, "expected a pair")),
        }
    }
}

/// A boolean: one byte, `0x00` false, `0xff` true (data-encoding reads any other byte as true;
/// the protocol's encodings are read strictly here so each value has one encoding).
impl<'a> Field<'a> for bool {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0x00 => Ok(false),
            0xff => Ok(true),
            byte => Err(DecodeError::invalid(
                "boolean",
                format!("byte 0x{byte:02x}"),
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(if *self { 0xff } else { 0x00 });
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push_str(if *self { "true" } else { "false" });
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        value
            .as_bool()
            .ok_or_else(|| JsonError::new(path, "expected a boolean"))
    }
}

/// An optional value (`opt`): a presence byte (`0x00` absent, `0xff` present) then the value; in
/// JSON, a left-out field.
impl<'a, T: Field<'a>> Field<'a> for Option<T> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0x00 => Ok(None),
            0xff => T::read(reader).map(Some),
            tag => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "option",
                    tag: u16::from(tag),
                },
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0x00),
            Some(value) => {
                out.push(0xff);
                value.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        match self {
            None => out.push_str("null"),
            Some(value) => value.write_json(out)?,
        }
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        if value.is_null() {
            return Ok(None);
        }
        T::read_json(value, path).map(Some)
    }
    fn json_present(&self) -> bool {
        self.is_some()
    }
    fn json_missing() -> Option<Self> {
        Some(None)
    }
}

/// data-encoding's `option t` (as in `req name (option t)`): a union on a one-byte tag, 0 for
/// none and 1 for some (unlike an `opt` field's `00`/`ff` presence byte); in JSON always present,
/// `null` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Nullable<T>(pub Option<T>);

impl<'a, T: Field<'a>> Field<'a> for Nullable<T> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => Ok(Nullable(None)),
            1 => T::read(reader).map(|value| Nullable(Some(value))),
            tag => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "option",
                    tag: u16::from(tag),
                },
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        match &self.0 {
            None => out.push(0),
            Some(value) => {
                out.push(1);
                value.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.0.write_json(out)
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        Option::read_json(value, path).map(Nullable)
    }
}

/// Reads a 4-byte size header (data-encoding's `uint30`).
fn read_size(reader: &mut Reader<'_>) -> Result<usize, DecodeError> {
    let offset = reader.offset();
    let size = u32::from_be_bytes(reader.take_array::<4>()?);
    if size > (1 << 30) - 1 {
        return Err(DecodeError::invalid("size", "above 2^30 - 1", offset));
    }
    Ok(size as usize)
}

/// Reads a 4-byte size header and enters the region it covers.
pub(crate) fn enter_sized(
    reader: &mut Reader<'_>,
) -> Result<kestrel_encoding::reader::SavedLimit, DecodeError> {
    let size = read_size(reader)?;
    Ok(reader.enter_region(size)?)
}

/// Writes a 4-byte size header for what `write` appends.
pub(crate) fn write_sized(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    write(out);
    let size = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
}

/// Appends a 4-byte size header and `bytes`.
pub(crate) fn write_sized_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A value behind a 4-byte size header (`dynamic_size`); the same JSON as the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizePrefixed<T>(pub T);

impl<'a, T: Field<'a>> Field<'a> for SizePrefixed<T> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let saved = enter_sized(reader)?;
        let value = T::read(reader)?;
        reader.leave_region(saved)?;
        Ok(SizePrefixed(value))
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_sized(out, |out| self.0.write(out));
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        self.0.write_json(out)?;
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        T::read_json(value, path).map(SizePrefixed)
    }
}

/// The most elements a list of operation fields is read with: bounded by the input anyway (each
/// element takes at least one byte), this bounds the `Vec` growth of a hostile length.
const LIST_RESERVE_MAX: usize = 1024;

/// A list behind a 4-byte size header (data-encoding `list`), read to the end of its region.
impl<'a, T: Field<'a>> Field<'a> for Vec<T> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let saved = enter_sized(reader)?;
        let mut items = Vec::with_capacity(reader.remaining_bytes().min(LIST_RESERVE_MAX));
        while reader.remaining_bytes() > 0 {
            let before = reader.offset();
            items.push(T::read(reader)?);
            if reader.offset() == before {
                // A zero-width element would loop forever; no operation field is one.
                return Err(DecodeError::invalid("list", "zero-width element", before));
            }
        }
        reader.leave_region(saved)?;
        Ok(items)
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_sized(out, |out| {
            for item in self {
                item.write(out);
            }
        });
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        out.push('[');
        for (index, item) in self.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            item.write_json(out)?;
        }
        out.push(']');
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        json::as_array(value, path)?
            .iter()
            .enumerate()
            .map(|(index, item)| T::read_json(item, &json::child(path, &index.to_string())))
            .collect()
    }
}

/// Bytes behind a 4-byte size header, borrowed from the input when decoded (`bytes`/`string Hex`);
/// a hex string in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HexBytes<'a>(pub Cow<'a, [u8]>);

impl<'a> Field<'a> for HexBytes<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let size = read_size(reader)?;
        Ok(HexBytes(Cow::Borrowed(reader.take(size)?)))
    }
    fn write(&self, out: &mut Vec<u8>) {
        write_sized_bytes(&self.0, out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_hex(out, &self.0);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        json::parse_hex(value, path).map(|bytes| HexBytes(Cow::Owned(bytes)))
    }
}

/// The rest of the current region's bytes (`Variable.bytes`), borrowed; a hex string in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemainingHex<'a>(pub Cow<'a, [u8]>);

impl<'a> Field<'a> for RemainingHex<'a> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(RemainingHex(Cow::Borrowed(
            reader.take(reader.remaining_bytes())?,
        )))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_hex(out, &self.0);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        json::parse_hex(value, path).map(|bytes| RemainingHex(Cow::Owned(bytes)))
    }
}

/// `N` bytes (`Fixed.bytes`); a hex string in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedHex<const N: usize>(pub [u8; N]);

impl<'a, const N: usize> Field<'a> for FixedHex<N> {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(FixedHex(reader.take_array::<N>()?))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_hex(out, &self.0);
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let bytes = json::parse_hex(value, path)?;
        <[u8; N]>::try_from(bytes.as_slice())
            .map(FixedHex)
            .map_err(|_| JsonError::new(path, format!("expected {N} bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_bounded(bytes: &[u8]) -> Result<u128, DecodeError> {
        let mut reader = Reader::new(bytes);
        read_bounded_n(&mut reader, BOUNDED_N_MAX_BYTES)
    }

    #[test]
    fn bounded_n_edges() {
        assert_eq!(read_bounded(&[0x00]), Ok(0));
        assert_eq!(read_bounded(&[0x7f]), Ok(127));
        assert_eq!(read_bounded(&[0x80, 0x01]), Ok(128));
        // Ten bytes is the most `check_size 10` allows; an eleventh is a size error.
        let mut ten = vec![0xffu8; 9];
        ten.push(0x7f);
        assert_eq!(read_bounded(&ten), Ok(BoundedNat::MAX));
        let mut eleven = vec![0xffu8; 10];
        eleven.push(0x01);
        assert_eq!(
            read_bounded(&eleven).map_err(|error| error.kind),
            Err(DecodeErrorKind::SizeLimitExceeded)
        );
        assert_eq!(
            read_bounded(&[0x80, 0x00]),
            Err(DecodeError::new(DecodeErrorKind::TrailingZero, 1))
        );
        assert_eq!(
            read_bounded(&[0x80]).map_err(|error| error.kind),
            Err(DecodeErrorKind::Truncated)
        );
        for value in [0u128, 1, 127, 128, 300, BoundedNat::MAX] {
            let mut out = Vec::new();
            write_n_u128(value, &mut out);
            assert_eq!(read_bounded(&out), Ok(value));
        }
    }

    #[test]
    fn mutez_above_int64_is_invalid() {
        let mut out = Vec::new();
        write_n_u128(i64::MAX as u128 + 1, &mut out);
        let mut reader = Reader::new(&out);
        let error = Mutez::read(&mut reader).unwrap_err();
        assert!(matches!(
            error.kind,
            DecodeErrorKind::Invalid { what: "mutez", .. }
        ));
    }
}
