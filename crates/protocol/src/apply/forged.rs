//! Octez refuses big-map ids and tickets in what an implicit account sends — an origination's
//! storage, a transaction's argument (`allow_forged_lazy_storage_id:false`,
//! `allow_forged_tickets:false`): a stored big map may only be passed by the contract holding
//! it, and a ticket only created by `TICKET`. This finds one in a typechecked value, or where
//! Octez's `parse_data` meets one in the Micheline before typechecking it
//! (`Unexpected_forged_value` at the id or the ticket, whether or not a big map has that id).

use kestrel_micheline::{Node, NodeKind, Prim};
use kestrel_michelson::{Type, Value};

use super::ApplyError;

/// The location (prefix order) of the first big-map id or ticket written in `node`, a value of
/// type `ty`: an integer, or the id of a `Pair id { … }` diff, where a big map is expected; any
/// value where a ticket is.
pub fn forged_id_location(ty: &Type, node: &Node) -> Option<u32> {
    let forgeable = |ty: &Type| ty.has_big_map() || ty.has_ticket();
    if !forgeable(ty) {
        return None;
    }
    let mut found: Option<&Node> = None;
    let mut pending: Vec<(&Type, &Node)> = vec![(ty, node)];
    while let Some((ty, node)) = pending.pop() {
        if !forgeable(ty) {
            continue;
        }
        let mut children: Vec<(&Type, &Node)> = Vec::new();
        match (ty, &node.kind) {
            (Type::Ticket(_), _) => found = Some(node),
            (Type::BigMap(..), NodeKind::Int(_)) => found = Some(node),
            (Type::BigMap(..), NodeKind::Prim { args, .. })
                if node.known_prim() == Some(Prim::D_Pair)
                    && matches!(args.first().map(|a| &a.kind), Some(NodeKind::Int(_))) =>
            {
                found = args.first();
            }
            (Type::Pair(..), NodeKind::Prim { args, .. }) if args.len() >= 2 => {
                comb(ty, args, &mut children)
            }
            (Type::Pair(..), NodeKind::Seq(items)) if items.len() >= 2 => {
                comb(ty, items, &mut children)
            }
            (Type::Or(left, right), NodeKind::Prim { args, .. }) if args.len() == 1 => {
                let side = if node.known_prim() == Some(Prim::D_Left) {
                    left
                } else {
                    right
                };
                children.push((side, &args[0]));
            }
            (Type::Option(inner), NodeKind::Prim { args, .. }) if args.len() == 1 => {
                children.push((inner, &args[0]))
            }
            (Type::List(element), NodeKind::Seq(items)) => {
                children.extend(items.iter().map(|item| (element.as_ref(), item)))
            }
            (Type::Map(key, bound), NodeKind::Seq(items)) => {
                for item in items {
                    if let NodeKind::Prim { args, .. } = &item.kind {
                        if let [k, v] = args.as_slice() {
                            children.push((key, k));
                            children.push((bound, v));
                        }
                    }
                }
            }
            _ => {}
        }
        if found.is_some() {
            break;
        }
        // Depth first, left to right, as `parse_data` meets them.
        pending.extend(children.into_iter().rev());
    }
    let found = found?;
    kestrel_micheline::location::prefix_order(node)
        .find(|(_, n)| std::ptr::eq(*n, found))
        .and_then(|(location, _)| u32::try_from(location).ok())
}

/// The items of a right comb written flat (`Pair a b c`, `{a; b; c}`) of type `ty`, with their
/// types.
fn comb<'a>(ty: &'a Type, items: &'a [Node], out: &mut Vec<(&'a Type, &'a Node)>) {
    let mut ty = ty;
    for (index, item) in items.iter().enumerate() {
        if index + 1 == items.len() {
            out.push((ty, item));
            return;
        }
        let Type::Pair(left, right) = ty else {
            return;
        };
        out.push((left, item));
        ty = right;
    }
}

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
