//! Michelson for Kestrel: a script is parsed and typechecked once into a typed [`Script`], then
//! [`execute`]d — in an [`Environment`], reading the chain's state lazily through a [`Host`] —
//! into a typed [`Execution`]: the new storage, the emitted [`InternalOperation`]s, the
//! [`BigMapDiff`] in Octez's `lazy_storage_diff` shape and the milligas consumed
//! (`specs/michelson.rst`; Octez protocol 025's gas model).
//!
//! Inside (all private): types and values (`types`, `value`, `int`, `literals`), macro
//! expansion (`macros`), the typechecker to a typed IR in which every instruction holds its
//! continuation (`typecheck`, `ir`), the interpreter that runs it in one flat loop with an
//! explicit control stack (`interpret`), Octez's cost functions (`gas`), unparsing and `PACK`
//! (`unparse`, `pack`), and the boundary with the world (`host`, `context`).
//!
//! The conformance runners (TZT, `octez-client run script`) live in
//! `kestrel-michelson-conformance` and use only this API.

// No unsafe code but in `gmp_kernels` (GMP's dispatch table) and `value_stack` (the run loop's
// stacks taken apart), DESIGN.md's named-module rule.
#![deny(unsafe_code)]

mod big_map_diff;
mod bls;
mod call_stack;
mod context;
mod data;
mod error;
mod execute;
// Octez's cost tables are kept whole, as `gas/README.md` lists them; the costs of instructions
// charged through another constant (or not yet implemented) are unused.
#[allow(dead_code)]
mod gas;
mod gmp_kernels;
mod host;
mod int;
mod interpret;
mod ir;
mod list;
mod literals;
mod macros;
mod map;
mod pack;
mod persistent_tree;
mod print;
mod script;
mod set;
mod typecheck;
mod types;
mod unexpand;
mod unparse;
mod value;
mod value_stack;

pub use big_map_diff::{
    big_map_diff_cost_milli, extract_origination_big_maps, BigMapDiff, BigMapDiffAction,
    BigMapInit, BigMapUpdate,
};
pub use data::{
    big_map_alloc_cost_milli, lazy_storage_extract_cost_milli, lazy_storage_walk_cost_milli,
    normalize, pack, pack_metered, serialization_cost_milli, type_equality_cost_milli, unpack,
    unparse_code_cost_milli, unparse_data_cost_milli, UnparsingMode,
};
pub use error::ExecutionError;
pub use execute::{
    execute, execute_traced, expand_macros, run_code, run_view, typecheck_code, typecheck_data,
    typecheck_data_metered, typecheck_data_standalone, typecheck_type, Call, CodeContext,
    Execution, InternalOperation, TypedCode, ViewExecution,
};
pub use gas::interpreter::cost_check_signature_scheme;
pub use host::{
    placeholder_contract_address, BigMapTypes, Config, EmptyHost, Environment, FreshIds, Host,
    HostView, StoredRead, DEFAULT_CHAIN_ID, DEFAULT_SELF, DEFAULT_SENDER,
    HARD_GAS_LIMIT_PER_OPERATION, HARD_GAS_LIMIT_PER_OPERATION_MILLI,
};
pub use int::Int;
pub use interpret::{NoTrace, TraceRecorder, TracedStep, Tracer};
pub use literals::{
    chain_id_from_base58, chain_id_to_base58, timestamp_from_rfc3339, timestamp_to_rfc3339,
    Address, Destination, Key, KeyHash, Signature,
};
pub use map::ValueMap;
pub use pack::big_map_key_hash;
pub use script::{Script, ScriptError, ViewSignature};
pub use set::ValueSet;
pub use typecheck::{TcError as TypecheckError, TcErrorKind as TypecheckErrorKind};
pub use types::{parse_type, Type, TypeError};
pub use unexpand::unexpand_macros;
pub use unparse::{normalize_code, normalize_code_in};
pub use value::Value;
