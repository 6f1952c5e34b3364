//! Michelson for Kestrel: types and values, the typechecker from Micheline to a typed IR in which
//! every instruction holds its continuation, the interpreter that runs it in one flat loop with an
//! explicit control stack, and Octez's gas model (`specs/michelson.rst`).
//!
//! Map: [`types`] and [`value`] (with [`int`] and [`literals`]), [`macros`], [`typecheck`]
//! (code and data), [`ir`], [`interpret`], [`gas`] (Octez's cost functions), [`unparse`] and
//! [`pack`], [`context`], [`tzt`] (the TZT runner) and [`run_script`] (`octez-client run script`).

#![forbid(unsafe_code)]

pub mod bls;
pub mod context;
pub mod gas;
pub mod int;
pub mod interpret;
pub mod ir;
pub mod literals;
pub mod macros;
pub mod pack;
pub mod print;
pub mod run_script;
pub mod typecheck;
pub mod types;
pub mod tzt;
pub mod unparse;
pub mod value;
