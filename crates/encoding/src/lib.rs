//! Kestrel's implementation of the Tezos data-encoding format (`specs/data-encoding-tutorial.md`):
//! typed binary and JSON codecs whose bytes are those of data-encoding v1.
//!
//! An encoding is a value built once from combinators ([`obj`], [`tup`], [`list`], [`union()`],
//! [`mu`], [`conv()`], ...), checked when it is built (a variable-size field that is not last, a
//! list of variable-size elements, ... are [`BuildError`]s, as data-encoding raises
//! `Invalid_argument`), and then used for any number of values:
//!
//! - [`Encoding::decode`] reads from a `&[u8]`, and the value may borrow from it (`bytes()`
//!   gives `&[u8]`, `string()` gives `&str`); malformed input is a [`DecodeError`] with a
//!   [`DecodeErrorKind`] and the byte offset.
//! - [`Encoding::encode_into`] appends to a caller-owned `Vec<u8>`, reused across values.
//! - [`Encoding::to_json`], [`Encoding::decode_json`] and [`Encoding::schema`] use the dynamic
//!   description each encoding produces ([`describe`]), so the typed paths carry none of that.
//!
//! Every combinator is a struct implementing [`Encoding`] generically over its parts, so the
//! compiler monomorphises a whole encoding into straight-line code. A [`mu`] is entered through
//! one virtual call per value read or written from outside; inside its body, each occurrence of
//! the same `mu` is a direct call of the body's monomorphised code (the combinators pass a
//! [`RecursionContext`] down). Union tag widths and case tags may be fixed in the type
//! ([`Uint8Tag`], [`Tag`]) so that dispatch compares against constants. Recursive encodings have
//! a depth limit ([`recursive::DEFAULT_MAX_DEPTH`]); see [`recursive`] for why.
//!
//! ```
//! use kestrel_encoding::{bytes, dynamic_size, int32, list, obj, req, uint8, Encoding};
//!
//! // obj3 (req "level" int32) (req "proto" uint8) (req "fitness" (list bytes))
//! let encoding = obj((
//!     req("level", int32()),
//!     req("proto", uint8()),
//!     req("fitness", list(bytes())?),
//! ))?;
//! let fitness: Vec<&[u8]> = vec![&[0x02], &[0, 0, 0, 1]];
//! let mut buffer = Vec::new();
//! encoding.encode_into(&(610079, 4, fitness), &mut buffer)?;
//! assert_eq!(buffer.len(), 4 + 1 + 4 + (4 + 1) + (4 + 4));
//!
//! let (level, proto, fitness) = encoding.decode(&buffer)?;
//! assert_eq!((level, proto, fitness[1]), (610079, 4, &[0u8, 0, 0, 1][..]));
//! assert_eq!(
//!     encoding.to_json(&(1, 2, vec![]))?.to_string(),
//!     r#"{"level":1,"proto":2,"fitness":[]}"#
//! );
//! # let _ = dynamic_size(uint8());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate knows nothing of Michelson, Micheline or any file: it turns values into bytes and
//! bytes into values.

#![forbid(unsafe_code)]

/// Calls `$implement!` once for each arity from 1 to 16 with the indices and type names of the
/// members (`0 A`, then `0 A, 1 B`, ...): products and unions are Rust tuples of up to 16
/// members, and each arity needs its own impl.
macro_rules! for_each_arity {
    ($implement:ident) => {
        $crate::for_each_arity!(@ $implement [] 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J,
            10 K, 11 L, 12 M, 13 N, 14 O, 15 P);
    };
    (@ $implement:ident [$($done:tt)*] $index:tt $T:ident $(, $rest_index:tt $Rest:ident)*) => {
        $implement!($($done)* $index $T);
        $crate::for_each_arity!(@ $implement [$($done)* $index $T,] $($rest_index $Rest),*);
    };
    (@ $implement:ident [$($done:tt)*]) => {};
}
pub(crate) use for_each_arity;

/// The default `read_in`, `write_in` and `write_tail` of [`Encoding`] and of
/// [`product::Field`] (which mirrors it for object fields).
macro_rules! recursion_context_defaults {
    () => {
        /// Reads one value as `read` does, inside the recursive encoding `context`
        /// (a [`Mu`](crate::Mu)'s body being read): combinators that hold sub-encodings pass the
        /// context down, so that an occurrence of that same `Mu` reads its body by a direct,
        /// monomorphised call instead of through the `Mu`'s type-erased cell. The default ignores
        /// the context, which is always correct (the occurrence then goes through the cell).
        #[inline(always)]
        fn read_in<'a, X: $crate::recursive::RecursionContext>(
            &self,
            reader: &mut $crate::reader::Reader<'a>,
            context: &X,
        ) -> Result<Self::Value<'a>, $crate::error::DecodeError> {
            let _ = context;
            self.read(reader)
        }

        /// Writes `value` as `write` does, inside the recursive encoding `context`
        /// (see `read_in`). The default first gives the writer the context's depth, since
        /// `write` may enter a recursive encoding through its cell, which counts on from the
        /// writer's depth; encodings that hold no sub-encoding skip that
        /// ([`leaf_in_context`](crate::leaf_in_context)).
        #[inline(always)]
        fn write_in<X: $crate::recursive::RecursionContext>(
            &self,
            value: &Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
            context: &X,
        ) -> Result<(), $crate::error::EncodeError> {
            context.publish_depth(writer);
            self.write(value, writer)
        }

        /// Writes `value` as `write_in` does, except for its last part when that is an
        /// occurrence of the recursive encoding of `context` (a [`Mu`](crate::Mu)): that value is
        /// returned unwritten, for the recursion's own loop to write next. Nothing may be written
        /// after a returned value, so only combinators that end with a sub-encoding whose value
        /// they hold by reference pass this on (union cases, the last member of a tuple or object,
        /// `boxed`); the default writes everything. This is how a recursive encoding iterates on
        /// its last child instead of recursing, as a hand-written codec's tail call does.
        #[inline(always)]
        fn write_tail<'v, X: $crate::recursive::RecursionContext>(
            &self,
            value: &'v Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
            context: &X,
        ) -> Result<Option<&'v X::Value>, $crate::error::EncodeError>
        where
            Self: 'v,
        {
            self.write_in(value, writer, context)?;
            Ok(None)
        }
    };
}
pub(crate) use recursion_context_defaults;

/// The `write_in` of an encoding that holds no sub-encoding (a primitive, bytes, a constant):
/// it cannot reach a recursive encoding, so it writes without giving the writer the context's
/// depth (one store fewer per primitive inside a recursive body).
macro_rules! leaf_in_context {
    () => {
        #[inline(always)]
        fn write_in<X: $crate::recursive::RecursionContext>(
            &self,
            value: &Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
            context: &X,
        ) -> Result<(), $crate::error::EncodeError> {
            let _ = context;
            self.write(value, writer)
        }
    };
}
pub(crate) use leaf_in_context;

/// The `read_in`, `write_in` and `write_tail` of an encoding (or object field) whose value is
/// read and written by the sub-encoding `$inner` (an expression of `$self`), passing the
/// recursion context on; `read_in` turns the value read (bound to `$read`) into `$wrap`.
macro_rules! forward_in_context {
    ($self:ident => $inner:expr) => {
        $crate::forward_in_context!($self => $inner, |value| value);
    };
    ($self:ident => $inner:expr, |$read:ident| $wrap:expr) => {
        #[inline(always)]
        fn read_in<'a, X: $crate::recursive::RecursionContext>(
            &$self,
            reader: &mut $crate::reader::Reader<'a>,
            context: &X,
        ) -> Result<Self::Value<'a>, $crate::error::DecodeError> {
            let $read = $inner.read_in(reader, context)?;
            Ok($wrap)
        }

        #[inline(always)]
        fn write_in<X: $crate::recursive::RecursionContext>(
            &$self,
            value: &Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
            context: &X,
        ) -> Result<(), $crate::error::EncodeError> {
            $inner.write_in(value, writer, context)
        }

        #[inline(always)]
        fn write_tail<'v, X: $crate::recursive::RecursionContext>(
            &$self,
            value: &'v Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
            context: &X,
        ) -> Result<Option<&'v X::Value>, $crate::error::EncodeError>
        where
            Self: 'v,
        {
            $inner.write_tail(value, writer, context)
        }
    };
}
pub(crate) use forward_in_context;

/// `read` and `write` of a combinator that implements `read_in` and `write_in`: the same code
/// outside any recursive body.
macro_rules! read_write_outside_recursion {
    () => {
        #[inline]
        fn read<'a>(
            &self,
            reader: &mut $crate::reader::Reader<'a>,
        ) -> Result<Self::Value<'a>, $crate::error::DecodeError> {
            self.read_in(reader, &$crate::recursive::NoRecursion)
        }

        #[inline]
        fn write(
            &self,
            value: &Self::Value<'_>,
            writer: &mut $crate::writer::Writer<'_>,
        ) -> Result<(), $crate::error::EncodeError> {
            self.write_in(value, writer, &$crate::recursive::NoRecursion)
        }
    };
}
pub(crate) use read_write_outside_recursion;

pub mod arena;
pub mod bytes;
pub mod collection;
pub mod conv;
pub mod describe;
pub mod encoding;
pub mod error;
pub mod json;
pub mod layout;
pub mod primitive;
pub mod product;
pub mod reader;
pub mod recursive;
pub mod schema;
pub mod size;
pub mod union;
pub mod writer;
pub mod zarith;

pub use arena::{Arena, ArenaEncodeError, NodeCodec, RecursiveArena, Step};
pub use bytes::{
    bounded_bytes, bounded_string, bytes, fixed_bytes, fixed_bytes_ref, fixed_bytes_slice,
    fixed_string, string, variable_bytes, variable_string,
};
pub use collection::{
    fixed_list, list, list_cow, list_inline, list_max, list_with_length, variable_list,
    variable_list_cow, variable_list_inline, variable_list_max, InlineList,
};
pub use conv::{boxed, conv, conv_with_guard, convert, Convert};
pub use describe::{JsonRepr, LengthKind, Schema, TagSize};
pub use encoding::Encoding;
pub use error::{
    BuildError, DecodeError, DecodeErrorInfo, DecodeErrorKind, EncodeError, EncodeErrorInfo,
    EncodeErrorKind,
};
pub use json::JsonError;
pub use layout::{Layout, SizeClass};
pub use primitive::{
    bool, constant, empty, float, int16, int31, int32, int64, int8, n, null, ranged_float,
    ranged_int, uint16, uint30, uint8, unit, z,
};
pub use product::{dft, merge_objs, merge_tups, obj, opt, option, req, tup, varopt};
pub use reader::Reader;
pub use recursive::{mu, mu_with_max_depth, Mu, NoRecursion, RecursionContext};
pub use size::{add_padding, check_size, dynamic_size, dynamic_size_with};
pub use union::{case, case_with, string_enum, union, CaseTag, Tag, TagWidth, Uint16Tag, Uint8Tag};
pub use writer::Writer;
