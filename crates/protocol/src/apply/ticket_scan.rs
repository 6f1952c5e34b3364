//! The tickets a value holds, found as protocol 025's `Ticket_scanner.tickets_of_value` finds
//! them, with the steps it pays for (`Ticket_costs.consume_gas_steps`): a step for each value
//! it visits (a value of a type that can hold no ticket is one step, not walked), one for each
//! cell of a list and its end, one for a map and one for each of its bindings (its values are
//! then a list), one for a big map, whose stored values (`tickets_of_big_map`, when big maps
//! are included) the caller's reader lists and parses, then a list.
//!
//! Octez refuses to scan a big map with pending changes (`Unsupported_non_empty_overlay`); the
//! big maps Kestrel's runs send and receive have none (they are temporaries), and a pending
//! value, should one be met, is scanned after the stored ones.

use kestrel_michelson::{Type, Value};

use super::gas::{type_has_tickets_milli, COLLECT_TICKETS_STEP_MILLI};
use super::Fault;

/// What a scan found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The tickets, in the order the scan met them.
    pub tickets: Vec<Value>,
    /// The steps it took.
    pub steps: u64,
}

impl Scan {
    /// What the steps cost, milligas.
    pub fn steps_milli(&self) -> u64 {
        self.steps.saturating_mul(COLLECT_TICKETS_STEP_MILLI)
    }
}

/// `Ticket_scanner.type_has_tickets` of `ty`: what it costs, milligas (whether the type holds
/// tickets is [`Type::has_ticket`]).
pub fn type_has_tickets_cost(ty: &Type) -> u64 {
    type_has_tickets_milli(ty.size() as u64)
}

/// Reads the values stored in a big map (its id, its value type), parsed (and charged).
pub type BigMapReader<'r> = &'r mut dyn FnMut(i64, &Type) -> Result<Vec<Value>, Fault>;

/// The tickets of `value`, of type `ty`; `has_tickets` is `ty.has_ticket()` (callers usually
/// know it), and a `value` of a type without tickets need not be given (it is one step). Big
/// maps are scanned (`include_lazy`) when a reader is given.
pub fn scan(
    ty: &Type,
    has_tickets: bool,
    value: Option<&Value>,
    mut big_maps: Option<BigMapReader<'_>>,
) -> Result<Scan, Fault> {
    let mut scan = Scan::default();
    let value = match value {
        Some(value) if has_tickets => value,
        _ => {
            scan.steps = 1;
            return Ok(scan);
        }
    };
    let mut pending: Vec<(Type, Value)> = vec![(ty.clone(), value.clone())];
    // The root's answer is known; inner types are asked (`False_ht` branches stop there).
    let mut root = true;
    while let Some((ty, value)) = pending.pop() {
        scan.steps += 1;
        if !std::mem::take(&mut root) && !ty.has_ticket() {
            continue;
        }
        match (&ty, &value) {
            (Type::Ticket(_), Value::Ticket(_)) => scan.tickets.push(value),
            (Type::Pair(left, right), Value::Pair(pair)) => {
                pending.push((Type::clone(right), pair.1.clone()));
                pending.push((Type::clone(left), pair.0.clone()));
            }
            (Type::Or(left, _), Value::Left(inner)) => {
                pending.push((Type::clone(left), Value::clone(inner)))
            }
            (Type::Or(_, right), Value::Right(inner)) => {
                pending.push((Type::clone(right), Value::clone(inner)))
            }
            (Type::Option(inner_type), Value::Some(inner)) => {
                pending.push((Type::clone(inner_type), Value::clone(inner)))
            }
            // The head is visited first, so it goes on the stack last.
            (Type::List(element), Value::List(items)) => {
                scan.steps += items.len() as u64 + 1;
                let items: Vec<&Value> = items.iter().collect();
                pending.extend(
                    items
                        .into_iter()
                        .rev()
                        .map(|item| (Type::clone(element), item.clone())),
                );
            }
            // `tickets_of_map`: a step, one per binding, then its values as a list, from the
            // greatest key down.
            (Type::Map(_, bound), Value::Map(map)) => {
                scan.steps += 2 * map.len() as u64 + 2;
                pending.extend(map.values().map(|item| (Type::clone(bound), item.clone())));
            }
            (Type::BigMap(_, bound), Value::BigMap(map)) => {
                let Some(read) = big_maps.as_mut() else {
                    continue;
                };
                let mut values = match map.id.as_ref().and_then(|id| id.to_i64()) {
                    Some(id) => read(id, bound)?,
                    None => Vec::new(),
                };
                values.extend(map.overlay.values().flatten().cloned());
                scan.steps += 1 + values.len() as u64 + 1;
                // Listed by key hash, then folded into a list that prepends: the last first.
                pending.extend(values.into_iter().map(|item| (Type::clone(bound), item)));
            }
            _ => {}
        }
    }
    Ok(scan)
}
