//! The atoms of the format (tutorial, Part 3 "Ground encodings"): big-endian fixed-width
//! integers, `int31`/`uint30` with their range checks, `ranged_int`, `float`, `ranged_float`,
//! `bool`, the Zarith `n` and `z` (arbitrary precision, via `zarith.rs`), and the zero-width
//! `unit`, `null`, `empty` and `constant`.

use crate::describe::{Desc, DescribeContext, IntKind};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::layout::Layout;
use crate::reader::Reader;
use crate::writer::Writer;
use crate::zarith;
use crate::Encoding;
use num_bigint::{BigInt, BigUint};

/// A fixed-width big-endian number: its unit struct, constructor and `Encoding`.
macro_rules! fixed_number {
    ($(#[$doc:meta])* $name:ident, $function:ident, $desc:expr, $value:ty, $size:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        $(#[$doc])*
        pub fn $function() -> $name {
            $name
        }

        impl Encoding for $name {
            type Value<'a> = $value;

            #[inline]
            fn layout(&self) -> Layout {
                Layout::fixed($size)
            }

            #[inline]
            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<$value, DecodeError> {
                Ok(<$value>::from_be_bytes(reader.take_array::<$size>()?))
            }

            #[inline]
            fn write(&self, value: &$value, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                writer.put(&value.to_be_bytes());
                Ok(())
            }

            const FIXED_RUN_BYTES: Option<usize> = Some($size);

            #[inline(always)]
            fn write_fixed_run(&self, value: &$value, out: &mut [u8]) {
                out.copy_from_slice(&value.to_be_bytes());
            }

            crate::leaf_in_context!();

            fn describe(&self, _context: &mut DescribeContext) -> Desc {
                $desc
            }
        }
    };
}

fixed_number!(
    /// `int8`: a signed byte.
    Int8, int8, Desc::Int(IntKind::Int8), i8, 1
);
fixed_number!(
    /// `uint8`: an unsigned byte.
    Uint8, uint8, Desc::Int(IntKind::Uint8), u8, 1
);
fixed_number!(
    /// `int16`: signed, 2 bytes big-endian.
    Int16, int16, Desc::Int(IntKind::Int16), i16, 2
);
fixed_number!(
    /// `uint16`: unsigned, 2 bytes big-endian.
    Uint16, uint16, Desc::Int(IntKind::Uint16), u16, 2
);
fixed_number!(
    /// `int32`: signed, 4 bytes big-endian.
    Int32, int32, Desc::Int(IntKind::Int32), i32, 4
);
fixed_number!(
    /// `int64`: signed, 8 bytes big-endian (a decimal string in JSON).
    Int64, int64, Desc::Int(IntKind::Int64), i64, 8
);

/// The smallest value of `int31` (-2^30).
pub const INT31_MIN: i32 = -(1 << 30);
/// The largest value of `int31` (2^30 - 1).
pub const INT31_MAX: i32 = (1 << 30) - 1;
/// The largest value of `uint30` (2^30 - 1); also the largest size header.
pub const UINT30_MAX: u32 = (1 << 30) - 1;

/// A 4-byte integer with a range narrower than its type's: its unit struct, constructor and
/// `Encoding`, which checks the range on both read and write (`Invalid_int`).
macro_rules! narrow_int {
    ($(#[$doc:meta])* $name:ident, $function:ident, $kind:ident, $value:ty, $min:expr, $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        $(#[$doc])*
        pub fn $function() -> $name {
            $name
        }

        impl Encoding for $name {
            type Value<'a> = $value;

            #[inline]
            fn layout(&self) -> Layout {
                Layout::fixed(4)
            }

            #[inline]
            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<$value, DecodeError> {
                let start = reader.offset();
                let value = <$value>::from_be_bytes(reader.take_array::<4>()?);
                check_read_range(value.into(), $min.into(), $max.into(), start)?;
                Ok(value)
            }

            #[inline]
            fn write(&self, value: &$value, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                check_write_range((*value).into(), $min.into(), $max.into(), writer)?;
                writer.put(&value.to_be_bytes());
                Ok(())
            }

            crate::leaf_in_context!();

            fn describe(&self, _context: &mut DescribeContext) -> Desc {
                Desc::Int(IntKind::$kind)
            }
        }
    };
}

narrow_int!(
    /// `int31`: a signed 31-bit integer on 4 bytes; other 32-bit values are `Invalid_int`.
    Int31, int31, Int31, i32, INT31_MIN, INT31_MAX
);
narrow_int!(
    /// `uint30`: an unsigned 30-bit integer on 4 bytes (size headers use it).
    Uint30, uint30, Uint30, u32, 0u32, UINT30_MAX
);

#[inline]
fn check_read_range(value: i64, min: i64, max: i64, offset: usize) -> Result<(), DecodeError> {
    if value < min || value > max {
        return Err(DecodeError::new(
            DecodeErrorKind::InvalidInt { min, value, max },
            offset,
        ));
    }
    Ok(())
}

#[inline]
fn check_write_range(
    value: i64,
    min: i64,
    max: i64,
    writer: &Writer<'_>,
) -> Result<(), EncodeError> {
    if value < min || value > max {
        return Err(writer.error(EncodeErrorKind::InvalidInt { min, value, max }));
    }
    Ok(())
}

/// The integer atom `ranged_int minimum maximum` is stored as (`Binary_size.range_to_size`):
/// for a non-negative minimum, the offset `value - minimum` as the smallest unsigned atom that
/// holds `maximum - minimum`; otherwise the smallest signed atom holding both bounds.
pub fn range_to_int_kind(minimum: i32, maximum: i32) -> IntKind {
    if minimum < 0 {
        if minimum >= i8::MIN.into() && maximum <= i8::MAX.into() {
            IntKind::Int8
        } else if minimum >= i16::MIN.into() && maximum <= i16::MAX.into() {
            IntKind::Int16
        } else {
            IntKind::Int31
        }
    } else {
        let span = i64::from(maximum) - i64::from(minimum);
        if span <= u8::MAX.into() {
            IntKind::Uint8
        } else if span <= u16::MAX.into() {
            IntKind::Uint16
        } else {
            IntKind::Int31
        }
    }
}

/// `ranged_int minimum maximum`: an integer in an inclusive range, on the smallest atom that
/// holds it (shifted by `minimum` when `minimum > 0`).
#[derive(Debug, Clone, Copy)]
pub struct RangedInt {
    minimum: i32,
    maximum: i32,
    kind: IntKind,
}

/// `ranged_int minimum maximum`; the bounds may come in either order but must lie in the
/// `int31` range.
pub fn ranged_int(minimum: i32, maximum: i32) -> Result<RangedInt, BuildError> {
    let (minimum, maximum) = (minimum.min(maximum), minimum.max(maximum));
    if minimum < INT31_MIN || maximum > INT31_MAX {
        return Err(BuildError::InvalidRange);
    }
    Ok(RangedInt {
        minimum,
        maximum,
        kind: range_to_int_kind(minimum, maximum),
    })
}

impl RangedInt {
    fn shift(&self) -> i64 {
        if self.minimum > 0 {
            self.minimum.into()
        } else {
            0
        }
    }
}

impl Encoding for RangedInt {
    type Value<'a> = i32;

    fn layout(&self) -> Layout {
        Layout::fixed(self.kind.size_bytes())
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<i32, DecodeError> {
        let start = reader.offset();
        let stored: i64 = match self.kind {
            IntKind::Int8 => i8::from_be_bytes(reader.take_array::<1>()?).into(),
            IntKind::Uint8 => reader.take_u8()?.into(),
            IntKind::Int16 => i16::from_be_bytes(reader.take_array::<2>()?).into(),
            IntKind::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?).into(),
            _ => i32::from_be_bytes(reader.take_array::<4>()?).into(),
        };
        let value = stored + self.shift();
        check_read_range(value, self.minimum.into(), self.maximum.into(), start)?;
        // In range, so it fits an i32.
        Ok(value as i32)
    }

    #[inline]
    fn write(&self, value: &i32, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        let value = i64::from(*value);
        check_write_range(value, self.minimum.into(), self.maximum.into(), writer)?;
        let stored = value - self.shift();
        match self.kind {
            IntKind::Int8 | IntKind::Uint8 => writer.put_u8(stored as u8),
            IntKind::Int16 | IntKind::Uint16 => writer.put(&(stored as u16).to_be_bytes()),
            _ => writer.put(&(stored as i32).to_be_bytes()),
        }
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::RangedInt {
            minimum: self.minimum,
            maximum: self.maximum,
        }
    }
}

fixed_number!(
    /// `float`: an IEEE 754 double, 8 bytes big-endian.
    Float, float, Desc::Float, f64, 8
);

/// `ranged_float minimum maximum`: a `float` within inclusive bounds.
#[derive(Debug, Clone, Copy)]
pub struct RangedFloat {
    minimum: f64,
    maximum: f64,
}

/// `ranged_float minimum maximum`; the bounds may come in either order and must not be NaN.
pub fn ranged_float(minimum: f64, maximum: f64) -> Result<RangedFloat, BuildError> {
    if minimum.is_nan() || maximum.is_nan() {
        return Err(BuildError::InvalidRange);
    }
    Ok(RangedFloat {
        minimum: minimum.min(maximum),
        maximum: minimum.max(maximum),
    })
}

impl Encoding for RangedFloat {
    type Value<'a> = f64;

    fn layout(&self) -> Layout {
        Layout::fixed(8)
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<f64, DecodeError> {
        let start = reader.offset();
        let value = f64::from_be_bytes(reader.take_array::<8>()?);
        // Written so that NaN fails too.
        if !(self.minimum <= value && value <= self.maximum) {
            return Err(DecodeError::new(
                DecodeErrorKind::InvalidFloat {
                    min: self.minimum,
                    value,
                    max: self.maximum,
                },
                start,
            ));
        }
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &f64, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        if !(self.minimum <= *value && *value <= self.maximum) {
            return Err(writer.error(EncodeErrorKind::InvalidFloat {
                min: self.minimum,
                value: *value,
                max: self.maximum,
            }));
        }
        writer.put(&value.to_be_bytes());
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::RangedFloat {
            minimum: self.minimum,
            maximum: self.maximum,
        }
    }
}

/// `bool`: one byte, written 0x00 or 0xff; read as data-encoding does (`int8 <> 0`), so any
/// non-zero byte is `true`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bool;

/// `bool`: one byte.
pub fn bool() -> Bool {
    Bool
}

impl Encoding for Bool {
    type Value<'a> = bool;

    #[inline]
    fn layout(&self) -> Layout {
        Layout::fixed(1)
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<bool, DecodeError> {
        Ok(reader.take_u8()? != 0)
    }

    #[inline]
    fn write(&self, value: &bool, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        writer.put_u8(if *value { 0xff } else { 0x00 });
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::Bool
    }
}

/// A Zarith number: its unit struct, constructor and `Encoding` over `zarith.rs`.
macro_rules! zarith_number {
    ($(#[$doc:meta])* $name:ident, $function:ident, $value:ty, $read:path, $write:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        $(#[$doc])*
        pub fn $function() -> $name {
            $name
        }

        impl Encoding for $name {
            type Value<'a> = $value;

            fn layout(&self) -> Layout {
                Layout::dynamic()
            }

            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<$value, DecodeError> {
                let bytes = take_zarith(reader)?;
                let mut offset = 0;
                $read(bytes, &mut offset)
            }

            fn write(&self, value: &$value, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                $write(value, writer.buffer());
                Ok(())
            }

            crate::leaf_in_context!();

            fn describe(&self, _context: &mut DescribeContext) -> Desc {
                Desc::$name
            }
        }
    };
}

zarith_number!(
    /// `n`: a Zarith natural number of any size.
    N, n, BigUint, zarith::read_n, zarith::write_n
);
zarith_number!(
    /// `z`: a Zarith integer of any size.
    Z, z, BigInt, zarith::read_z, zarith::write_z
);

/// Takes the bytes of one Zarith number (up to the first byte without its high bit), checking
/// the trailing-zero rule, with errors at input offsets.
pub(crate) fn take_zarith<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
    let start = reader.offset();
    let mut length = 0;
    loop {
        let byte = reader.take_u8()?;
        length += 1;
        if byte & 0x80 == 0 {
            if byte == 0 && length > 1 {
                return Err(DecodeError::new(
                    DecodeErrorKind::TrailingZero,
                    start + length - 1,
                ));
            }
            break;
        }
    }
    Ok(reader.last_bytes(length))
}

macro_rules! zero_width {
    ($(#[$doc:meta])* $name:ident, $function:ident, $desc:expr, $nullable:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        $(#[$doc])*
        pub fn $function() -> $name {
            $name
        }

        impl Encoding for $name {
            type Value<'a> = ();

            #[inline]
            fn layout(&self) -> Layout {
                Layout {
                    nullable: $nullable,
                    ..Layout::fixed(0)
                }
            }

            #[inline]
            fn read<'a>(&self, _reader: &mut Reader<'a>) -> Result<(), DecodeError> {
                Ok(())
            }

            #[inline]
            fn write(&self, _value: &(), _writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                Ok(())
            }

            crate::leaf_in_context!();

            fn describe(&self, _context: &mut DescribeContext) -> Desc {
                $desc
            }
        }
    };
}

zero_width!(
    /// `unit`: no bytes; `{}` in JSON, where any value is accepted.
    Unit, unit, Desc::Unit, true
);
zero_width!(
    /// `null`: no bytes; `null` in JSON.
    Null, null, Desc::Null, true
);
zero_width!(
    /// `empty`: no bytes; `{}` in JSON.
    Empty, empty, Desc::Empty, false
);

/// `constant s`: no bytes; the string `s` in JSON.
#[derive(Debug, Clone)]
pub struct Constant {
    text: String,
}

/// `constant s`: no bytes; the string `s` in JSON.
pub fn constant(text: &str) -> Constant {
    Constant {
        text: text.to_owned(),
    }
}

impl Encoding for Constant {
    type Value<'a> = ();

    fn layout(&self) -> Layout {
        Layout::fixed(0)
    }

    #[inline]
    fn read<'a>(&self, _reader: &mut Reader<'a>) -> Result<(), DecodeError> {
        Ok(())
    }

    #[inline]
    fn write(&self, _value: &(), _writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::Constant(self.text.clone())
    }
}
