//! Strings and bytes (tutorial, Part 3 "Ground encodings" and "Sizing variants"): with a size
//! header (`uint30` by default, or `uint16`, `uint8`, `N`), `Fixed` (exactly n bytes),
//! `Variable` (to the end of the enclosing region) and `Bounded` (the smallest header for a
//! bound, and the bound checked). Decoded values borrow from the input (`&'a [u8]`, `&'a str`);
//! `.owned()` gives `Vec<u8>`/`String` values for types that must own their data.

use crate::describe::{Desc, DescribeContext, JsonRepr, LengthKind};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::layout::Layout;
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;
use std::marker::PhantomData;

/// The Rust type a string or bytes encoding reads into and writes from.
pub trait ByteValue {
    /// The value type, possibly borrowing the input for `'a`.
    type Value<'a>;
    /// The JSON form used unless overridden (`Hex` for bytes, `Plain` for strings).
    const DEFAULT_JSON: JsonRepr;
    /// Converts read bytes (at input `offset`) to a value.
    fn from_bytes(bytes: &[u8], offset: usize) -> Result<Self::Value<'_>, DecodeError>;
    /// The bytes of a value.
    fn as_bytes<'v>(value: &'v Self::Value<'_>) -> &'v [u8];
}

/// Values are `&'a [u8]` borrowed from the input.
#[derive(Debug, Clone, Copy)]
pub struct BorrowedBytes;
/// Values are `Vec<u8>`.
#[derive(Debug, Clone, Copy)]
pub struct OwnedBytes;
/// Values are `&'a str` borrowed from the input (checked UTF-8).
#[derive(Debug, Clone, Copy)]
pub struct BorrowedStr;
/// Values are `String` (checked UTF-8).
#[derive(Debug, Clone, Copy)]
pub struct OwnedString;

impl ByteValue for BorrowedBytes {
    type Value<'a> = &'a [u8];
    const DEFAULT_JSON: JsonRepr = JsonRepr::Hex;
    #[inline]
    fn from_bytes(bytes: &[u8], _offset: usize) -> Result<&[u8], DecodeError> {
        Ok(bytes)
    }
    #[inline]
    fn as_bytes<'v>(value: &'v &[u8]) -> &'v [u8] {
        value
    }
}

impl ByteValue for OwnedBytes {
    type Value<'a> = Vec<u8>;
    const DEFAULT_JSON: JsonRepr = JsonRepr::Hex;
    #[inline]
    fn from_bytes(bytes: &[u8], _offset: usize) -> Result<Vec<u8>, DecodeError> {
        Ok(bytes.to_vec())
    }
    #[inline]
    fn as_bytes(value: &Vec<u8>) -> &[u8] {
        value
    }
}

fn utf8(bytes: &[u8], offset: usize) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|error| {
        DecodeError::new(DecodeErrorKind::InvalidUtf8, offset + error.valid_up_to())
    })
}

impl ByteValue for BorrowedStr {
    type Value<'a> = &'a str;
    const DEFAULT_JSON: JsonRepr = JsonRepr::Plain;
    #[inline]
    fn from_bytes(bytes: &[u8], offset: usize) -> Result<&str, DecodeError> {
        utf8(bytes, offset)
    }
    #[inline]
    fn as_bytes<'v>(value: &'v &str) -> &'v [u8] {
        value.as_bytes()
    }
}

impl ByteValue for OwnedString {
    type Value<'a> = String;
    const DEFAULT_JSON: JsonRepr = JsonRepr::Plain;
    #[inline]
    fn from_bytes(bytes: &[u8], offset: usize) -> Result<String, DecodeError> {
        utf8(bytes, offset).map(str::to_owned)
    }
    #[inline]
    fn as_bytes(value: &String) -> &[u8] {
        value.as_bytes()
    }
}

/// How the size of a string or bytes value is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesSize {
    /// A size header of this kind, and at most `max_bytes` bytes.
    Prefixed {
        /// The header kind.
        kind: LengthKind,
        /// The largest size accepted (the header's maximum, or a `Bounded` bound).
        max_bytes: usize,
    },
    /// Exactly this many bytes (`Fixed`).
    Fixed(usize),
    /// To the end of the enclosing region (`Variable`).
    Variable,
}

/// A string or bytes encoding; `V` chooses the Rust value type.
#[derive(Debug, Clone, Copy)]
pub struct Bytes<V> {
    size: BytesSize,
    json: JsonRepr,
    value: PhantomData<fn() -> V>,
}

fn make<V: ByteValue>(size: BytesSize) -> Bytes<V> {
    Bytes {
        size,
        json: V::DEFAULT_JSON,
        value: PhantomData,
    }
}

fn prefixed(kind: LengthKind) -> BytesSize {
    BytesSize::Prefixed {
        kind,
        max_bytes: kind.max_value(),
    }
}

/// `bytes`: a `uint30` size header, then the bytes (hex in JSON); values borrow the input.
pub fn bytes() -> Bytes<BorrowedBytes> {
    make(prefixed(LengthKind::Uint30))
}

/// `string`: a `uint30` size header, then UTF-8 bytes; values borrow the input.
pub fn string() -> Bytes<BorrowedStr> {
    make(prefixed(LengthKind::Uint30))
}

/// `Variable.bytes`: the bytes to the end of the enclosing region, no header.
pub fn variable_bytes() -> Bytes<BorrowedBytes> {
    make(BytesSize::Variable)
}

/// `Variable.string`: UTF-8 bytes to the end of the enclosing region, no header.
pub fn variable_string() -> Bytes<BorrowedStr> {
    make(BytesSize::Variable)
}

/// `Fixed.bytes n` with values as slices (see [`fixed_bytes`] for arrays); `n` must be positive.
pub fn fixed_bytes_slice(size_bytes: usize) -> Result<Bytes<BorrowedBytes>, BuildError> {
    if size_bytes == 0 {
        return Err(BuildError::ZeroLength);
    }
    Ok(make(BytesSize::Fixed(size_bytes)))
}

/// `Fixed.string n`: exactly `n` bytes of UTF-8; `n` must be positive.
pub fn fixed_string(size_bytes: usize) -> Result<Bytes<BorrowedStr>, BuildError> {
    if size_bytes == 0 {
        return Err(BuildError::ZeroLength);
    }
    Ok(make(BytesSize::Fixed(size_bytes)))
}

/// `Bounded.bytes n`: the smallest size header holding `n`, and at most `n` bytes.
pub fn bounded_bytes(max_bytes: usize) -> Bytes<BorrowedBytes> {
    make(BytesSize::Prefixed {
        kind: LengthKind::for_bound(max_bytes),
        max_bytes,
    })
}

/// `Bounded.string n`: the smallest size header holding `n`, and at most `n` bytes.
pub fn bounded_string(max_bytes: usize) -> Bytes<BorrowedStr> {
    make(BytesSize::Prefixed {
        kind: LengthKind::for_bound(max_bytes),
        max_bytes,
    })
}

impl<V: ByteValue> Bytes<V> {
    /// The same encoding with a size header of `kind` (`?length_kind`); no effect on `Fixed`
    /// and `Variable` forms.
    pub fn length_kind(mut self, kind: LengthKind) -> Self {
        if let BytesSize::Prefixed { .. } = self.size {
            self.size = prefixed(kind);
        }
        self
    }

    /// The same encoding with JSON form `json` (`string'`/`bytes'`).
    pub fn json(mut self, json: JsonRepr) -> Self {
        self.json = json;
        self
    }

    /// The same binary form, with owned values (`Vec<u8>` for bytes, `String` for strings).
    pub fn owned<W: ByteValue>(self) -> Bytes<W>
    where
        V: Owns<W>,
    {
        Bytes {
            size: self.size,
            json: self.json,
            value: PhantomData,
        }
    }

    /// How the size is known.
    pub fn size(&self) -> BytesSize {
        self.size
    }
}

/// Pairs a borrowed value kind with its owned counterpart, for [`Bytes::owned`].
pub trait Owns<W> {}
impl Owns<OwnedBytes> for BorrowedBytes {}
impl Owns<OwnedString> for BorrowedStr {}

/// Reads a size header of `kind`.
#[inline(always)]
pub(crate) fn read_length(kind: LengthKind, reader: &mut Reader<'_>) -> Result<usize, DecodeError> {
    let start = reader.offset();
    let value: u64 = match kind {
        LengthKind::Uint8 => reader.take_u8()?.into(),
        LengthKind::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?).into(),
        LengthKind::Uint30 => u32::from_be_bytes(reader.take_array::<4>()?).into(),
        LengthKind::N => {
            let bytes = crate::primitive::take_zarith(reader)?;
            let mut value: u64 = 0;
            for (index, byte) in bytes.iter().enumerate() {
                // A header beyond 2^30 is rejected below; stop accumulating before overflow.
                if index >= 5 {
                    value = u64::MAX;
                    break;
                }
                value |= u64::from(byte & 0x7f) << (7 * index);
            }
            value
        }
    };
    let max = kind.max_value() as u64;
    if value > max {
        return Err(DecodeError::new(
            DecodeErrorKind::InvalidInt {
                min: 0,
                value: value.min(i64::MAX as u64) as i64,
                max: max as i64,
            },
            start,
        ));
    }
    Ok(value as usize)
}

/// Writes a size header of `kind` for `length` (already checked against `kind.max_value()`).
#[inline]
pub(crate) fn write_length(kind: LengthKind, length: usize, writer: &mut Writer<'_>) {
    match kind {
        LengthKind::Uint8 => writer.put_u8(length as u8),
        LengthKind::Uint16 => writer.put(&(length as u16).to_be_bytes()),
        LengthKind::Uint30 => writer.put(&(length as u32).to_be_bytes()),
        LengthKind::N => {
            let mut buffer = [0u8; 5];
            let size = n_header(length, &mut buffer);
            writer.put(&buffer[..size]);
        }
    }
}

/// The `n` encoding of `value` (at most 2^30, so at most 5 bytes) into `buffer`; returns its size.
pub(crate) fn n_header(mut value: usize, buffer: &mut [u8; 5]) -> usize {
    let mut size = 0;
    loop {
        let group = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            buffer[size] = group;
            return size + 1;
        }
        buffer[size] = group | 0x80;
        size += 1;
    }
}

impl<V: ByteValue> Encoding for Bytes<V> {
    type Value<'a> = V::Value<'a>;

    fn layout(&self) -> Layout {
        match self.size {
            BytesSize::Prefixed { .. } => Layout::dynamic(),
            BytesSize::Fixed(size_bytes) => Layout::fixed(size_bytes),
            BytesSize::Variable => Layout::variable(true),
        }
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let size_bytes = match self.size {
            BytesSize::Prefixed { kind, max_bytes } => {
                let header_offset = reader.offset();
                let size_bytes = read_length(kind, reader)?;
                if size_bytes > max_bytes {
                    return Err(DecodeError::new(
                        DecodeErrorKind::SizeLimitExceeded,
                        header_offset,
                    ));
                }
                size_bytes
            }
            BytesSize::Fixed(size_bytes) => size_bytes,
            BytesSize::Variable => reader.remaining_bytes(),
        };
        let offset = reader.offset();
        V::from_bytes(reader.take(size_bytes)?, offset)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        let bytes = V::as_bytes(value);
        match self.size {
            BytesSize::Prefixed { kind, max_bytes } => {
                if bytes.len() > max_bytes {
                    return Err(writer.error(EncodeErrorKind::SizeLimitExceeded {
                        limit_bytes: max_bytes,
                        size_bytes: bytes.len(),
                    }));
                }
                write_length(kind, bytes.len(), writer);
            }
            BytesSize::Fixed(size_bytes) => {
                if bytes.len() != size_bytes {
                    return Err(writer.error(EncodeErrorKind::InvalidFixedLength {
                        expected: size_bytes,
                        actual: bytes.len(),
                    }));
                }
            }
            BytesSize::Variable => {}
        }
        writer.put(bytes);
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        let inner = Desc::Bytes {
            fixed_bytes: match self.size {
                BytesSize::Fixed(size_bytes) => Some(size_bytes),
                _ => None,
            },
            json: self.json,
        };
        match self.size {
            BytesSize::Prefixed { kind, max_bytes } => {
                let sized = Desc::DynamicSize {
                    kind,
                    inner: Box::new(inner),
                };
                if max_bytes < kind.max_value() {
                    // data-encoding's `Bounded`: a `check_size` over header and payload.
                    Desc::CheckSize {
                        limit_bytes: max_bytes + header_size_bytes(kind),
                        inner: Box::new(sized),
                    }
                } else {
                    sized
                }
            }
            _ => inner,
        }
    }
}

/// The size of a fixed-width header (the largest, 5 bytes, for `N`).
pub(crate) fn header_size_bytes(kind: LengthKind) -> usize {
    match kind {
        LengthKind::Uint8 => 1,
        LengthKind::Uint16 => 2,
        LengthKind::Uint30 => 4,
        LengthKind::N => 5,
    }
}

/// `Fixed.bytes N` with array values (`[u8; N]`, e.g. a 32-byte hash); `N` must be positive.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedBytes<const N: usize>;

/// `Fixed.bytes N` with array values; `N` must be positive (checked at compile time).
pub fn fixed_bytes<const N: usize>() -> FixedBytes<N> {
    const { assert!(N > 0, "Fixed.bytes needs a positive length") };
    FixedBytes
}

impl<const N: usize> Encoding for FixedBytes<N> {
    type Value<'a> = [u8; N];

    #[inline]
    fn layout(&self) -> Layout {
        Layout::fixed(N)
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<[u8; N], DecodeError> {
        reader.take_array::<N>()
    }

    #[inline]
    fn write(&self, value: &[u8; N], writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        writer.put(value);
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::Bytes {
            fixed_bytes: Some(N),
            json: JsonRepr::Hex,
        }
    }
}

/// `Fixed.bytes N` with values borrowed from the input as arrays (`&[u8; N]`): a hash read
/// without copying its bytes; `N` must be positive.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedBytesRef<const N: usize>;

/// `Fixed.bytes N` with borrowed array values; `N` must be positive (checked at compile time).
pub fn fixed_bytes_ref<const N: usize>() -> FixedBytesRef<N> {
    const { assert!(N > 0, "Fixed.bytes needs a positive length") };
    FixedBytesRef
}

impl<const N: usize> Encoding for FixedBytesRef<N> {
    type Value<'a> = &'a [u8; N];

    #[inline]
    fn layout(&self) -> Layout {
        Layout::fixed(N)
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<&'a [u8; N], DecodeError> {
        reader.take_array_ref::<N>()
    }

    #[inline]
    fn write(&self, value: &&[u8; N], writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        writer.put(&value[..]);
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        FixedBytes::<N>.describe(context)
    }
}
