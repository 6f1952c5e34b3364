//! Michelson conformance runners, outside the VM crate and over its public API only: the TZT
//! runner ([`tzt`], `specs/michelson.rst`, "TZT") and an emulator of `octez-client run script`
//! ([`run_script`]) whose output is compared with recorded Octez outputs. Each implements
//! `kestrel_michelson::Host` over its fixtures ([`fixtures`]).

#![forbid(unsafe_code)]

pub mod fixtures;
pub mod run_script;
pub mod tzt;
