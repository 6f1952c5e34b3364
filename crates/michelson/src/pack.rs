//! Typed `PACK` and `UNPACK` (`specs/michelson.rst`, "PACK"): a value is unparsed in optimized
//! form (bytes for addresses, keys, signatures, chain ids; integers for timestamps; binary pairs)
//! and serialized as `0x05` followed by binary Micheline; `UNPACK` reads it back and typechecks
//! it as data of the expected type. Signature checking lives here too because it needs the
//! crypto crate's key types.

use crate::context::Context;
use crate::literals::{Key, Signature};
use crate::types::Type;
use crate::unparse::{unparse, Mode};
use crate::value::Value;
use kestrel_crypto::keys::{PublicKey, Signature as CryptoSignature, SignatureScheme};

/// `PACK`: the serialized optimized form of `value`.
pub fn pack_value(
    value: &Value,
    _ty: &Type,
) -> Result<Vec<u8>, kestrel_micheline::binary::EncodeError> {
    kestrel_micheline::pack::pack(&unparse(value, Mode::Optimized))
}

/// `UNPACK`: the value of type `ty` packed in `bytes`, if any.
pub fn unpack_value(bytes: &[u8], ty: &Type, context: &Context) -> Option<Value> {
    let node = kestrel_micheline::pack::unpack(bytes).ok()?;
    let mut tc = crate::typecheck::Typechecker::new(context);
    tc.allow_self = false;
    tc.parse_data(&node, ty).ok()
}

/// `CHECK_SIGNATURE`: whether `signature` by `key` is valid for `message`.
pub fn check_signature(key: &Key, signature: &Signature, message: &[u8]) -> bool {
    let Ok(public_key) = PublicKey::try_from_bytes(&key.to_bytes()) else {
        return false;
    };
    let scheme = SignatureScheme::from_tag(key.kind);
    let Ok(signature) = CryptoSignature::try_new(scheme, &signature.bytes) else {
        return false;
    };
    public_key.verify(&signature, message)
}
