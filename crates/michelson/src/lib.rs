//! Michelson for Kestrel: types and values, the typechecker from Micheline to a typed IR in which
//! every instruction holds its continuation, the interpreter that runs it in one flat loop with an
//! explicit control stack, and Octez's gas model (`specs/michelson.rst`).

#![forbid(unsafe_code)]
pub mod gas;
