//! The big-map changes of a call in Octez's `lazy_storage_diff` shape
//! (`Lazy_storage_diff`: per id, `Remove` or `Update { init: Existing | Copy | Alloc, updates }`),
//! extracted from the storage after the call as Octez's `extract_lazy_storage_diff` does: a big
//! map of the old storage seen once more keeps its id (`Existing`), one seen again or coming from
//! elsewhere is copied to a fresh id, one without an id is allocated one, and the old storage's
//! big maps no longer present are removed. An emitted operation's big maps go to temporary ids
//! the same way.

use crate::host::Host;
use crate::int::Int;
use crate::map::ValueMap;
use crate::types::Type;
use crate::value::{BigMap, Value};
use std::collections::BTreeSet;
use std::rc::Rc;

/// The changes to one big map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigMapDiff {
    /// The big map's id.
    pub id: Int,
    /// What happens to it.
    pub action: BigMapDiffAction,
}

/// What happens to a big map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BigMapDiffAction {
    /// Created or kept, then updated.
    Update {
        /// Where its contents start from.
        init: BigMapInit,
        /// Bindings set or removed, by key.
        updates: Vec<BigMapUpdate>,
    },
    /// Deleted (no longer in the storage).
    Remove,
}

/// Where a big map's contents start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BigMapInit {
    /// The stored big map of the same id.
    Existing,
    /// A copy of stored big map `source`.
    Copy {
        /// The id copied.
        source: Int,
    },
    /// A new, empty big map.
    Alloc {
        /// Its key type.
        key_type: Type,
        /// Its value type.
        value_type: Type,
    },
}

/// One binding set (`Some`) or removed (`None`, Octez's `Unset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigMapUpdate {
    /// The key's hash (`Script_expr_hash`), what the map is keyed by in the context.
    pub key_hash: [u8; 32],
    /// The key.
    pub key: Value,
    /// The new value, or `None` for a removal.
    pub value: Option<Value>,
}

/// Replaces every big map of `after` (of type `ty`) by a stored one without pending changes,
/// returning the new storage and the diff that turns the stored state into it. `before` is the
/// storage the call started from.
pub(crate) fn extract_big_map_diff(
    before: &Value,
    after: &Value,
    ty: &Type,
    host: &mut dyn Host,
) -> (Value, Vec<BigMapDiff>) {
    extract(before, after, ty, host, false)
}

/// What an emitted transfer's argument or origination's storage carries (`transfer` and
/// `create_contract` in `script_interpreter_defs.ml`: `extract_lazy_storage_diff ~temporary:true`
/// with the value's own ids to duplicate): each big map moved to a fresh temporary id, a copy
/// of its stored map if it has one, allocated otherwise, with its pending changes.
pub(crate) fn extract_temporary_big_maps(
    value: &Value,
    ty: &Type,
    host: &mut dyn Host,
) -> (Value, Vec<BigMapDiff>) {
    extract(&Value::Unit, value, ty, host, true)
}

/// `after` with its big maps stored under ids (fresh ones temporary if `temporary`), and the
/// diff in Octez's order (`extract_lazy_storage_diff`): the removals of `before`'s big maps no
/// longer present, highest id first, then the big maps from the last met to the first.
fn extract(
    before: &Value,
    after: &Value,
    ty: &Type,
    host: &mut dyn Host,
    temporary: bool,
) -> (Value, Vec<BigMapDiff>) {
    let mut extraction = Extraction {
        unclaimed: BTreeSet::new(),
        temporary,
        diff: Vec::new(),
        host,
    };
    collect_ids(before, &mut extraction.unclaimed);
    let storage = extraction.walk(after, ty);
    let mut diff: Vec<BigMapDiff> = std::mem::take(&mut extraction.unclaimed)
        .into_iter()
        .rev()
        .map(|id| BigMapDiff {
            id,
            action: BigMapDiffAction::Remove,
        })
        .collect();
    diff.extend(extraction.diff.into_iter().rev());
    (storage, diff)
}

/// What Octez charges to describe `diffs` (`diff_of_big_map`, once per big map extracted): a
/// fresh big map's types unparsed, and for each binding a cycle and its key and value
/// unparsed, in milligas.
pub fn big_map_diff_cost_milli(diffs: &[BigMapDiff]) -> u64 {
    let mut total = 0u64;
    for diff in diffs {
        let BigMapDiffAction::Update { init, updates } = &diff.action else {
            continue;
        };
        if let BigMapInit::Alloc {
            key_type,
            value_type,
        } = init
        {
            total =
                total.saturating_add(crate::data::big_map_alloc_cost_milli(key_type, value_type));
        }
        for update in updates {
            let value = update.value.as_ref().map_or(0, crate::pack::pack_cost);
            total = total
                .saturating_add(crate::gas::typecheck::COST_PARSE_INSTRUCTION_CYCLE)
                .saturating_add(crate::pack::pack_cost(&update.key))
                .saturating_add(value);
        }
    }
    total
}

/// The ids of the stored big maps in `value`.
fn collect_ids(value: &Value, ids: &mut BTreeSet<Int>) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::BigMap(map) => {
                if let Some(id) = &map.id {
                    ids.insert(id.clone());
                }
            }
            Value::Pair(pair) => {
                pending.push(&pair.0);
                pending.push(&pair.1);
            }
            Value::Left(inner) | Value::Right(inner) | Value::Some(inner) => pending.push(inner),
            Value::List(items) => items.append_to(&mut pending),
            Value::Map(map) => pending.extend(map.values()),
            _ => {}
        }
    }
}

struct Extraction<'h> {
    /// Ids of the old storage not yet seen in the new one.
    unclaimed: BTreeSet<Int>,
    /// Whether fresh ids are temporary ones.
    temporary: bool,
    diff: Vec<BigMapDiff>,
    host: &'h mut dyn Host,
}

impl Extraction<'_> {
    /// The value with its big maps stored. Recursion follows the type, whose size is bounded
    /// ([`crate::types::MAX_TYPE_SIZE`]).
    fn walk(&mut self, value: &Value, ty: &Type) -> Value {
        if !ty.has_big_map() {
            return value.clone();
        }
        match (value, ty) {
            (Value::BigMap(map), Type::BigMap(..)) => self.store(map),
            (Value::Pair(pair), Type::Pair(left, right)) => {
                let a = self.walk(&pair.0, left);
                let b = self.walk(&pair.1, right);
                Value::pair(a, b)
            }
            (Value::Left(inner), Type::Or(left, _)) => Value::Left(Rc::new(self.walk(inner, left))),
            (Value::Right(inner), Type::Or(_, right)) => {
                Value::Right(Rc::new(self.walk(inner, right)))
            }
            (Value::Some(inner), Type::Option(inner_type)) => {
                Value::some(self.walk(inner, inner_type))
            }
            (Value::List(items), Type::List(item_type)) => Value::list_from(
                items
                    .iter()
                    .map(|item| self.walk(item, item_type))
                    .collect(),
            ),
            (Value::Map(map), Type::Map(_, value_type)) => {
                let mut stored = ValueMap::new();
                for (key, value) in map.iter() {
                    stored.push_last(key.clone(), self.walk(value, value_type));
                }
                Value::Map(Rc::new(stored))
            }
            _ => value.clone(),
        }
    }

    fn fresh_id(&mut self) -> Int {
        if self.temporary {
            self.host.fresh_temporary_big_map_id()
        } else {
            self.host.fresh_big_map_id()
        }
    }

    fn store(&mut self, map: &BigMap) -> Value {
        let (id, init) = match &map.id {
            Some(id) if self.unclaimed.remove(id) => (id.clone(), BigMapInit::Existing),
            Some(source) => (
                self.fresh_id(),
                BigMapInit::Copy {
                    source: source.clone(),
                },
            ),
            None => (
                self.fresh_id(),
                BigMapInit::Alloc {
                    key_type: map.key_type.clone(),
                    value_type: map.value_type.clone(),
                },
            ),
        };
        // Octez's overlay is keyed by the keys' hashes, and `diff_of_big_map` lists it from the
        // highest hash down.
        let mut updates: Vec<BigMapUpdate> = map
            .overlay
            .iter()
            .map(|(key, value)| BigMapUpdate {
                key_hash: crate::pack::big_map_key_hash(key, &map.key_type),
                key: key.clone(),
                value: value.clone(),
            })
            .collect();
        updates.sort_unstable_by_key(|update| std::cmp::Reverse(update.key_hash));
        self.diff.push(BigMapDiff {
            id: id.clone(),
            action: BigMapDiffAction::Update { init, updates },
        });
        Value::BigMap(Rc::new(BigMap {
            id: Some(id),
            key_type: map.key_type.clone(),
            value_type: map.value_type.clone(),
            overlay: Default::default(),
        }))
    }
}

/// A new contract's storage with its big maps stored, as an origination stores it (Octez's
/// `extract_lazy_storage_diff` with nothing to update): big maps without an id are allocated,
/// big maps with one (a `CREATE_CONTRACT` passing a stored map) are copied, each under a fresh
/// id from `host`. Returns the storage and the diff.
pub fn extract_origination_big_maps(
    storage: &Value,
    ty: &Type,
    host: &mut dyn Host,
) -> (Value, Vec<BigMapDiff>) {
    extract_big_map_diff(&Value::Unit, storage, ty, host)
}
