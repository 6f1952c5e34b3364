//! Micheline, the generic tree syntax of Tezos data and code: nodes with source locations, the
//! text parser (and, as the crate grows, the printer, binary codec, JSON form, PACK and hashes).
//!
//! The crate knows Michelson only through the primitive table the binary form needs.

#![forbid(unsafe_code)]

pub mod binary;
pub mod node;
pub mod parse;
pub mod prim;
pub mod print;

pub use node::{Node, NodeKind, Span};
pub use parse::{parse_expression, parse_toplevel, Limits, ParseError, ParseErrorKind};
pub use prim::{Prim, PrimName};
