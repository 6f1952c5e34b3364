//! Helpers shared by the integration tests of `kestrel-michelson`.

#![allow(dead_code)]

pub mod octez_output;
