//! The [`Encoding`] trait: what every combinator implements. An encoding is an immutable value,
//! built (and checked) once by the combinator functions; its `read` and `write` are generic code
//! the compiler monomorphises and inlines through the whole combinator tree, so a record of
//! fixed-size fields decodes as straight-line loads. Values may borrow from the input
//! (`Value<'a>` of `bytes()` is `&'a [u8]`).

use crate::describe::{Desc, DescribeContext, Schema};
use crate::error::{DecodeError, EncodeError};
use crate::json::{self, JsonError};
use crate::layout::Layout;
use crate::reader::Reader;

use crate::writer::Writer;

/// A binary (and, through its description, JSON) codec for values of type `Value<'a>`.
pub trait Encoding {
    /// The type of the values, which may borrow from an input that lives for `'a`.
    type Value<'a>;

    /// The size class and other static properties, computed when the encoding was built.
    fn layout(&self) -> Layout;

    /// Reads one value at the reader's offset.
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError>;

    /// Appends the binary form of `value`.
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError>;

    /// The size of the binary form when it is the same for every value and cannot fail to be
    /// written (a fixed-width number), so that a combinator writing a few bytes before it (a
    /// union's tag) can append both with one capacity check ([`Encoding::write_fixed_run`]).
    const FIXED_RUN_BYTES: Option<usize> = None;

    /// Writes the binary form of `value` into `out`, which is exactly `FIXED_RUN_BYTES` long;
    /// only called when that is `Some`. The default, for the other encodings, writes nothing.
    #[inline(always)]
    fn write_fixed_run(&self, value: &Self::Value<'_>, out: &mut [u8]) {
        let _ = (value, out);
    }

    crate::recursion_context_defaults!();

    /// The dynamic description (for JSON and schemas).
    fn describe(&self, context: &mut DescribeContext) -> Desc;

    /// Decodes `input`, which must hold exactly one value (`Binary.of_bytes`).
    fn decode<'a>(&self, input: &'a [u8]) -> Result<Self::Value<'a>, DecodeError> {
        let mut reader = Reader::new(input);
        let value = self.read(&mut reader)?;
        reader.finish()?;
        Ok(value)
    }

    /// Decodes one value at the start of `input` and returns it with the number of bytes read
    /// (`Binary.read`).
    fn decode_prefix<'a>(&self, input: &'a [u8]) -> Result<(Self::Value<'a>, usize), DecodeError> {
        let mut reader = Reader::new(input);
        let value = self.read(&mut reader)?;
        Ok((value, reader.offset()))
    }

    /// Appends the binary form of `value` to `out`; reuse `out` across values to avoid
    /// allocation. On error, `out` may hold a partial value after its previous contents.
    fn encode_into(&self, value: &Self::Value<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.write(value, &mut Writer::new(out))
    }

    /// The binary form of `value` in a new buffer (`Binary.to_bytes`).
    fn encode(&self, value: &Self::Value<'_>) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode_into(value, &mut out)?;
        Ok(out)
    }

    /// The complete dynamic description.
    fn schema(&self) -> Schema {
        let mut context = DescribeContext::new();
        let root = self.describe(&mut context);
        context.finish(root)
    }

    /// The JSON form of `value` (`Json.construct`).
    fn to_json(&self, value: &Self::Value<'_>) -> Result<serde_json::Value, JsonError> {
        let bytes = self.encode(value).map_err(JsonError::Encode)?;
        json::binary_to_json(&self.schema(), &bytes)
    }

    /// Reads a value from its JSON form (`Json.destruct`). The JSON is first turned into binary
    /// in `buffer` (cleared first), which the returned value may borrow.
    fn decode_json<'b>(
        &self,
        value: &serde_json::Value,
        buffer: &'b mut Vec<u8>,
    ) -> Result<Self::Value<'b>, JsonError> {
        buffer.clear();
        json::json_to_binary(&self.schema(), value, buffer)?;
        self.decode(buffer).map_err(JsonError::Decode)
    }
}

/// `Encoding` for a pointer to an encoding (`&E`, `Arc<E>`): everything forwarded.
macro_rules! pointer_encoding {
    ($Pointer:ty) => {
        impl<E: Encoding + ?Sized> Encoding for $Pointer {
            type Value<'a> = E::Value<'a>;

            #[inline]
            fn layout(&self) -> Layout {
                (**self).layout()
            }

            #[inline]
            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
                (**self).read(reader)
            }

            #[inline]
            fn write(
                &self,
                value: &Self::Value<'_>,
                writer: &mut Writer<'_>,
            ) -> Result<(), EncodeError> {
                (**self).write(value, writer)
            }

            const FIXED_RUN_BYTES: Option<usize> = E::FIXED_RUN_BYTES;

            #[inline(always)]
            fn write_fixed_run(&self, value: &Self::Value<'_>, out: &mut [u8]) {
                (**self).write_fixed_run(value, out)
            }

            crate::forward_in_context!(self => (**self));

            fn describe(&self, context: &mut DescribeContext) -> Desc {
                (**self).describe(context)
            }
        }
    };
}

pointer_encoding!(&E);
pointer_encoding!(std::sync::Arc<E>);
