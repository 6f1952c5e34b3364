//! Values to and from their external forms: Micheline in Octez's three unparsing modes
//! ([`normalize`]), and `PACK` bytes ([`pack`], [`unpack`]).

use crate::execute::CodeContext;
use crate::host::Host;
use crate::types::Type;
use crate::unparse::{unparse, Mode};
use crate::value::Value;
use kestrel_micheline::Node;

/// Octez's unparsing modes (`Script_ir_unparser.unparsing_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnparsingMode {
    /// Strings for addresses, keys, signatures, timestamps, chain ids; flat `Pair a b c` combs.
    Readable,
    /// Bytes and integers; right combs of four or more as sequences `{ a ; b ; c ; d }`, of three
    /// as `Pair a (Pair b c)`.
    Optimized,
    /// Bytes and integers; binary pairs (the form `PACK` serializes).
    OptimizedLegacy,
}

/// `value` as Micheline in `mode`.
pub fn normalize(value: &Value, mode: UnparsingMode) -> Node {
    unparse(
        value,
        match mode {
            UnparsingMode::Readable => Mode::Readable,
            UnparsingMode::Optimized => Mode::Optimized,
            UnparsingMode::OptimizedLegacy => Mode::OptimizedLegacy,
        },
    )
}

/// `PACK`: `0x05` and the binary Micheline of `value` in optimized-legacy form. Fails only if
/// the value's Micheline exceeds the binary encoding's limits.
pub fn pack(value: &Value, ty: &Type) -> Result<Vec<u8>, kestrel_micheline::binary::EncodeError> {
    crate::pack::pack_value(value, ty)
}

/// [`pack`], also returning what Octez charges for it (`Script_ir_translator.pack_data`:
/// unparsing, stripping locations, serializing), in milligas.
pub fn pack_metered(
    value: &Value,
) -> Result<(Vec<u8>, u64), kestrel_micheline::binary::EncodeError> {
    crate::pack::pack_with_cost(value)
}

/// What Octez charges to unparse `value` as a contract's storage (`unparse_data`, then the
/// stripping and serialization it accounts for, as after a call or an origination): `PACK`'s
/// cost, in milligas.
pub fn unparse_data_cost_milli(value: &Value) -> u64 {
    crate::pack::pack_cost(value)
}

/// What Octez charges to unparse a contract's code as an origination stores it
/// (`Script_ir_translator.unparse_code` in optimized mode): expanding global constants over the
/// script, `unparse_code_rec` (a cycle per node, `PUSH`ed constants typechecked and unparsed
/// again), then stripping the locations of the normalized code and serializing it, in milligas.
pub fn unparse_code_cost_milli(code: &Node) -> u64 {
    use crate::typecheck::charges;
    let expand = crate::gas::typecheck::cost_expand_no_constants(charges::micheline_nodes(code));
    let walk = crate::typecheck::unparse_code::code_unparse_cost(
        code,
        crate::host::HARD_GAS_LIMIT_PER_OPERATION_MILLI,
    )
    .unwrap_or(crate::gas::arith::SATURATED);
    let serialize = charges::serialize_normalized_lambda(&crate::unparse::normalize_code(code));
    expand.saturating_add(walk).saturating_add(serialize)
}

/// What Octez charges to serialize `node` when it writes a contract's code or storage to the
/// context (`Script_repr.force_bytes_cost` of a decoded expression:
/// `micheline_serialization_cost`), in milligas.
pub fn serialization_cost_milli(node: &Node) -> u64 {
    crate::typecheck::charges::micheline_serialization(node)
}

/// What Octez charges for a walk of a value collecting its stored big maps
/// (`Script_ir_translator.collect_lazy_storage`): a cycle per step, two for a stored big map,
/// in milligas.
pub fn lazy_storage_walk_cost_milli(ty: &Type, value: &Value) -> u64 {
    crate::typecheck::charges::collect_lazy_storage(ty, value)
}

/// What Octez charges for the walk of a value extracting its big maps
/// (`Script_ir_translator.extract_lazy_storage_diff`): a cycle per step, in milligas.
pub fn lazy_storage_extract_cost_milli(ty: &Type, value: &Value) -> u64 {
    crate::typecheck::charges::extract_lazy_storage(ty, value)
}

/// What Octez charges to describe a fresh big map in a lazy-storage diff (`diff_of_big_map`:
/// the key type unparsed and its locations stripped, then the value type's), in milligas.
pub fn big_map_alloc_cost_milli(key_type: &Type, value_type: &Type) -> u64 {
    use crate::gas::typecheck::{cost_strip_locations, cost_unparse_type};
    let strip = |ty: &Type| cost_strip_locations(ty.size() as u64);
    strip(key_type)
        .saturating_add(cost_unparse_type(value_type.size() as u64))
        .saturating_add(strip(value_type))
}

/// What Octez charges to check that two types are equal (`Script_ir_translator.ty_eq`), in
/// milligas.
pub fn type_equality_cost_milli(left: &Type, right: &Type) -> u64 {
    crate::typecheck::charges::ty_eq(left, right)
}

/// `UNPACK`: the value of type `ty` packed in `bytes`, if they hold one (`contract` values and
/// big map ids are checked against `context`'s host).
pub fn unpack<H: Host>(bytes: &[u8], ty: &Type, context: &CodeContext<'_, H>) -> Option<Value> {
    crate::pack::unpack_value(bytes, ty, context.lookup())
}
