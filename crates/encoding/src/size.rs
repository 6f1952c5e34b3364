//! Sizing combinators (tutorial, Part 3 "Sizing combinators" and `Fixed.add_padding`):
//! `dynamic_size` (a size header, then exactly that many bytes of the inner encoding),
//! `check_size` (a limit on the bytes an encoding may take) and padding.

use crate::bytes::{n_header, read_length, write_length};
use crate::describe::{Desc, DescribeContext, LengthKind};
use crate::error::{BuildError, DecodeError, EncodeError, EncodeErrorKind};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;

/// `dynamic_size ~kind e`: a size header of `kind`, then `e` in exactly that many bytes.
#[derive(Debug, Clone)]
pub struct DynamicSize<E> {
    kind: LengthKind,
    inner: E,
}

/// `dynamic_size e` with the default `uint30` header.
pub fn dynamic_size<E: Encoding>(inner: E) -> DynamicSize<E> {
    dynamic_size_with(LengthKind::Uint30, inner)
}

/// `dynamic_size ~kind e`.
pub fn dynamic_size_with<E: Encoding>(kind: LengthKind, inner: E) -> DynamicSize<E> {
    DynamicSize { kind, inner }
}

impl<E: Encoding> DynamicSize<E> {
    /// The inner encoding.
    pub fn inner(&self) -> &E {
        &self.inner
    }
}

impl<E: Encoding> Encoding for DynamicSize<E> {
    type Value<'a> = E::Value<'a>;

    #[inline]
    fn layout(&self) -> Layout {
        Layout {
            size: SizeClass::Dynamic,
            zeroable: false,
            nullable: self.inner.layout().nullable,
        }
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let size_bytes = read_length(self.kind, reader)?;
        let saved = reader.enter_region(size_bytes)?;
        let value = self.inner.read(reader)?;
        reader.leave_region(saved)?;
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        let max = self.kind.max_value();
        if self.kind == LengthKind::N {
            // A variable-width header: write the payload, then insert the header before it.
            let start = writer.len();
            self.inner.write(value, writer)?;
            let size_bytes = writer.len() - start;
            check_header(size_bytes, max, writer)?;
            let mut header = [0u8; 5];
            let header_size = n_header(size_bytes, &mut header);
            writer.insert(start, &header[..header_size]);
            return Ok(());
        }
        let header_offset = writer.len();
        write_length(self.kind, 0, writer);
        let start = writer.len();
        self.inner.write(value, writer)?;
        let size_bytes = writer.len() - start;
        check_header(size_bytes, max, writer)?;
        match self.kind {
            LengthKind::Uint8 => writer.patch(header_offset, &[size_bytes as u8]),
            LengthKind::Uint16 => writer.patch(header_offset, &(size_bytes as u16).to_be_bytes()),
            _ => writer.patch(header_offset, &(size_bytes as u32).to_be_bytes()),
        }
        Ok(())
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::DynamicSize {
            kind: self.kind,
            inner: Box::new(self.inner.describe(context)),
        }
    }
}

#[inline]
fn check_header(size_bytes: usize, max: usize, writer: &Writer<'_>) -> Result<(), EncodeError> {
    if size_bytes > max {
        return Err(writer.error(EncodeErrorKind::SizeLimitExceeded {
            limit_bytes: max,
            size_bytes,
        }));
    }
    Ok(())
}

/// `check_size limit e`: `e`, failing with `Size_limit_exceeded` beyond `limit` bytes.
#[derive(Debug, Clone)]
pub struct CheckSize<E> {
    limit_bytes: usize,
    inner: E,
}

/// `check_size limit e`.
pub fn check_size<E: Encoding>(limit_bytes: usize, inner: E) -> CheckSize<E> {
    CheckSize { limit_bytes, inner }
}

impl<E: Encoding> Encoding for CheckSize<E> {
    type Value<'a> = E::Value<'a>;

    #[inline]
    fn layout(&self) -> Layout {
        self.inner.layout()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let saved = reader.enter_allowed(self.limit_bytes);
        let value = self.inner.read(reader)?;
        reader.leave_allowed(saved);
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        let start = writer.len();
        self.inner.write(value, writer)?;
        let size_bytes = writer.len() - start;
        if size_bytes > self.limit_bytes {
            return Err(writer.error(EncodeErrorKind::SizeLimitExceeded {
                limit_bytes: self.limit_bytes,
                size_bytes,
            }));
        }
        Ok(())
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::CheckSize {
            limit_bytes: self.limit_bytes,
            inner: Box::new(self.inner.describe(context)),
        }
    }
}

/// `Fixed.add_padding e n`: `e` then `n` bytes, written as zeros and ignored when read.
#[derive(Debug, Clone)]
pub struct Padded<E> {
    inner: E,
    padding_bytes: usize,
}

/// `Fixed.add_padding e n`; `e` must be of fixed size and `n` positive.
pub fn add_padding<E: Encoding>(inner: E, padding_bytes: usize) -> Result<Padded<E>, BuildError> {
    if padding_bytes == 0 {
        return Err(BuildError::ZeroLength);
    }
    if inner.layout().size.fixed_bytes().is_none() {
        return Err(BuildError::PaddingOfNonFixed);
    }
    Ok(Padded {
        inner,
        padding_bytes,
    })
}

impl<E: Encoding> Encoding for Padded<E> {
    type Value<'a> = E::Value<'a>;

    fn layout(&self) -> Layout {
        let inner = self.inner.layout();
        Layout {
            size: SizeClass::Fixed(inner.size.fixed_bytes().unwrap_or(0) + self.padding_bytes),
            zeroable: false,
            nullable: inner.nullable,
        }
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let value = self.inner.read(reader)?;
        reader.take(self.padding_bytes)?;
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.inner.write(value, writer)?;
        writer.put_zeros(self.padding_bytes);
        Ok(())
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::Padded {
            inner: Box::new(self.inner.describe(context)),
            padding_bytes: self.padding_bytes,
        }
    }
}
