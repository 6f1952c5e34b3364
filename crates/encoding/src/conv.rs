//! Conversions (tutorial, Part 3 "Multi-purpose combinators"): `conv` and `conv_with_guard`
//! with closures, for owned value types; the [`Convert`] trait, for value types that borrow
//! from the input (a struct holding `&'a [u8]`); and [`boxed`], for recursive types.
//!
//! A conversion is transparent in the binary and JSON forms: both are those of the
//! representation encoding.

use crate::describe::{Desc, DescribeContext};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::layout::Layout;
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;
use std::marker::PhantomData;

/// `conv project inject e` over owned values `T`.
pub struct Conv<E, T, P, I> {
    encoding: E,
    project: P,
    inject: I,
    value: PhantomData<fn() -> T>,
}

impl<E: std::fmt::Debug, T, P, I> std::fmt::Debug for Conv<E, T, P, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conv")
            .field("encoding", &self.encoding)
            .finish()
    }
}

/// `conv project inject e`: values of type `T` written as `project(value)` with `e`, read as
/// `inject(e's value)`. `project` may return a representation borrowing from the value.
pub fn conv<T, E, P, I>(project: P, inject: I, encoding: E) -> Conv<E, T, P, I>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> E::Value<'r>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    Conv {
        encoding,
        project,
        inject,
        value: PhantomData,
    }
}

impl<T, E, P, I> Encoding for Conv<E, T, P, I>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> E::Value<'r>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    type Value<'a> = T;

    #[inline]
    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        Ok((self.inject)(self.encoding.read(reader)?))
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encoding.write(&(self.project)(value), writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.encoding.describe(context)
    }
}

/// `conv_with_guard project inject e` over owned values `T`.
pub struct ConvWithGuard<E, T, P, I> {
    encoding: E,
    project: P,
    inject: I,
    value: PhantomData<fn() -> T>,
}

impl<E: std::fmt::Debug, T, P, I> std::fmt::Debug for ConvWithGuard<E, T, P, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvWithGuard")
            .field("encoding", &self.encoding)
            .finish()
    }
}

/// `conv_with_guard project inject e`: as [`conv`], but `inject` may reject a representation,
/// which fails the decode with `DecodeErrorKind::Invalid` and the message.
pub fn conv_with_guard<T, E, P, I>(project: P, inject: I, encoding: E) -> ConvWithGuard<E, T, P, I>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> E::Value<'r>,
    I: for<'a> Fn(E::Value<'a>) -> Result<T, String>,
{
    ConvWithGuard {
        encoding,
        project,
        inject,
        value: PhantomData,
    }
}

impl<T, E, P, I> Encoding for ConvWithGuard<E, T, P, I>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> E::Value<'r>,
    I: for<'a> Fn(E::Value<'a>) -> Result<T, String>,
{
    type Value<'a> = T;

    #[inline]
    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        let offset = reader.offset();
        let repr = self.encoding.read(reader)?;
        (self.inject)(repr)
            .map_err(|message| DecodeError::new(DecodeErrorKind::Invalid(message), offset))
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encoding.write(&(self.project)(value), writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.encoding.describe(context)
    }
}

/// A conversion for value types that borrow from the input: closures cannot be generic over
/// the input lifetime, so such a conversion is a trait implemented once per type (usually on a
/// unit struct), generic over any representation encoding `R` with the right values:
///
/// ```
/// use kestrel_encoding::{bytes, convert, int32, obj, req, Convert, Encoding};
///
/// struct Message<'a> { id: i32, payload: &'a [u8] }
/// struct MessageConvert;
/// impl<R> Convert<R> for MessageConvert
/// where
///     R: for<'a> Encoding<Value<'a> = (i32, &'a [u8])>,
/// {
///     type Value<'a> = Message<'a>;
///     fn from_repr<'a>((id, payload): (i32, &'a [u8])) -> Result<Message<'a>, String>
///     where
///         Self: 'a,
///     {
///         Ok(Message { id, payload })
///     }
///     fn to_repr<'r>(message: &'r Message<'_>) -> (i32, &'r [u8]) {
///         (message.id, message.payload)
///     }
/// }
///
/// let encoding = convert::<MessageConvert, _>(obj((req("id", int32()), req("payload", bytes())))?);
/// let data = encoding.encode(&Message { id: 7, payload: b"hi" })?;
/// let message = encoding.decode(&data)?;
/// assert_eq!((message.id, message.payload), (7, &b"hi"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Convert<R: Encoding> {
    /// The value type, borrowing the input for `'a`.
    type Value<'a>;
    /// Builds a value from its representation, or rejects it with a message. (The `where`
    /// clause only makes `'a` early-bound, so that implementations can name it.)
    fn from_repr<'a>(repr: R::Value<'a>) -> Result<Self::Value<'a>, String>
    where
        Self: 'a;
    /// The representation of a value, possibly borrowing from it.
    fn to_repr<'r>(value: &'r Self::Value<'_>) -> R::Value<'r>;
}

/// The encoding of a [`Convert`] implementation `C` over the representation encoding `R`.
pub struct Converted<C, R> {
    repr: R,
    conversion: PhantomData<fn() -> C>,
}

impl<C, R: std::fmt::Debug> std::fmt::Debug for Converted<C, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converted")
            .field("repr", &self.repr)
            .finish()
    }
}

impl<C, R: Clone> Clone for Converted<C, R> {
    fn clone(&self) -> Self {
        Converted {
            repr: self.repr.clone(),
            conversion: PhantomData,
        }
    }
}

/// The encoding of the [`Convert`] implementation `C`, over the representation encoding `repr`.
pub fn convert<C: Convert<R>, R: Encoding>(repr: R) -> Converted<C, R> {
    Converted {
        repr,
        conversion: PhantomData,
    }
}

impl<C: Convert<R> + 'static, R: Encoding> Encoding for Converted<C, R> {
    type Value<'a> = C::Value<'a>;

    #[inline]
    fn layout(&self) -> Layout {
        self.repr.layout()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let offset = reader.offset();
        let repr = self.repr.read(reader)?;
        C::from_repr(repr)
            .map_err(|message| DecodeError::new(DecodeErrorKind::Invalid(message), offset))
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.repr.write(&C::to_repr(value), writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.repr.describe(context)
    }
}

/// `e` with values in a `Box` (for recursive types: `Node(Box<Tree>, Box<Tree>)`).
#[derive(Debug, Clone, Copy)]
pub struct Boxed<E> {
    encoding: E,
}

/// `e` with values in a `Box`.
pub fn boxed<E: Encoding>(encoding: E) -> Boxed<E> {
    Boxed { encoding }
}

impl<E: Encoding> Encoding for Boxed<E> {
    type Value<'a> = Box<E::Value<'a>>;

    #[inline]
    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        Ok(Box::new(self.encoding.read(reader)?))
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encoding.write(value, writer)
    }

    crate::forward_in_context!(self => self.encoding, |value| Box::new(value));

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.encoding.describe(context)
    }
}
