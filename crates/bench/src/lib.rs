//! Shared helpers for Kestrel's side-by-side benchmarks. The benchmarks themselves live in
//! `benches/`, one file per workload family, each with its peer in the same criterion group.

#![forbid(unsafe_code)]

pub mod serialization;
