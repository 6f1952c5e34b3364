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
//! compiler monomorphises a whole encoding into straight-line code; only the recursion point of
//! a [`mu`] is a virtual call. Recursive encodings have a depth limit
//! ([`recursive::DEFAULT_MAX_DEPTH`]); see [`recursive`] for why.
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
