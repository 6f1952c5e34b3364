//! Shared helpers for Kestrel's side-by-side benchmarks. The benchmarks themselves live in
//! `benches/`, one file per workload family, each with its peer in the same criterion group.

// `deny` rather than `forbid` so that one named module may opt out: `serialization::cpu`, whose
// single `getrusage(2)` call reads the CPU time of the pipe modes' client and server.
#![deny(unsafe_code)]

pub mod rng;
pub mod serialization;
