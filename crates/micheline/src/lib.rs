//! Micheline, the generic tree syntax of Tezos data and code: nodes with source spans, the text
//! parser ([`parse`]) and printer in octez-client's layout ([`print`]), the binary codec
//! ([`binary`]), the JSON form of Octez RPCs ([`json`]), PACK/UNPACK and `expr...` hashes
//! ([`pack`]), and Octez's canonical node locations ([`location`]).
//!
//! The crate knows Michelson only through the primitive table the binary form needs.

#![forbid(unsafe_code)]

pub mod binary;
pub mod decimal;
pub mod json;
pub mod location;
pub mod node;
pub mod pack;
pub mod parse;
pub mod prim;
pub mod print;

pub use node::{Node, NodeKind, Span};
pub use parse::{
    parse_expression, parse_toplevel, parse_toplevel_any_layout, Limits, ParseError, ParseErrorKind,
};
pub use prim::{Prim, PrimName};
