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
/// (`unparse_code` in optimized mode, then the stripping and serialization), in milligas.
pub fn unparse_code_cost_milli(code: &Node) -> u64 {
    crate::typecheck::charges::serialize_normalized_lambda(code)
}

/// `UNPACK`: the value of type `ty` packed in `bytes`, if they hold one (`contract` values and
/// big map ids are checked against `context`'s host).
pub fn unpack<H: Host>(bytes: &[u8], ty: &Type, context: &CodeContext<'_, H>) -> Option<Value> {
    crate::pack::unpack_value(bytes, ty, context.lookup())
}
