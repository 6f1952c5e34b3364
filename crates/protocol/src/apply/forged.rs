//! Octez refuses big-map ids in what an implicit account sends — an origination's storage, a
//! transaction's argument (`allow_forged_lazy_storage_id:false`): a stored big map may only be
//! passed by the contract holding it. This finds one in a typechecked value.

use kestrel_michelson::Value;

use super::ApplyError;

/// Fails if `value` holds a big map with an id.
pub fn refuse_forged_big_maps(value: &Value) -> Result<(), ApplyError> {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::BigMap(map) if map.id.is_some() => {
                return Err(ApplyError::UnexpectedForgedValue)
            }
            Value::Pair(pair) => {
                pending.push(&pair.0);
                pending.push(&pair.1);
            }
            Value::Left(inner) | Value::Right(inner) | Value::Some(inner) => pending.push(inner),
            Value::List(items) => pending.extend(items.iter()),
            Value::Map(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    Ok(())
}
