//! The tickets a value holds, found as protocol 025's `Ticket_scanner.tickets_of_value` finds
//! them, with the steps it pays for (`Ticket_costs.consume_gas_steps`): a step for each value
//! it visits (a value of a type that can hold no ticket is one step, not walked), one for each
//! cell of a list and its end, one for a map and one for each of its bindings (its values are
//! then a list), one for a big map.
//!
//! Not modelled: the stored contents of a big map (`tickets_of_big_map` reads and parses them
//! when scanning an argument or an operation): the values pending in its overlay are scanned
//! as a list instead.

use kestrel_michelson::{Type, Value};

use super::gas::{type_has_tickets_milli, COLLECT_TICKETS_STEP_MILLI};

/// What a scan found.
#[derive(Debug, Default)]
pub struct Scan<'v> {
    /// The tickets, in the order the scan met them.
    pub tickets: Vec<&'v Value>,
    /// The steps it took.
    pub steps: u64,
}

impl Scan<'_> {
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

/// The tickets of `value`, of type `ty`; `has_tickets` is `ty.has_ticket()` (callers usually
/// know it), and a `value` of a type without tickets need not be given (it is one step).
/// `include_lazy` scans big maps too.
pub fn scan<'v>(
    ty: &Type,
    has_tickets: bool,
    value: Option<&'v Value>,
    include_lazy: bool,
) -> Scan<'v> {
    let mut scan = Scan::default();
    let value = match value {
        Some(value) if has_tickets => value,
        _ => {
            scan.steps = 1;
            return scan;
        }
    };
    let mut pending: Vec<(&Type, &'v Value)> = vec![(ty, value)];
    // The root's answer is known; inner types are asked (`False_ht` branches stop there).
    let mut root = true;
    while let Some((ty, value)) = pending.pop() {
        scan.steps += 1;
        if !std::mem::take(&mut root) && !ty.has_ticket() {
            continue;
        }
        match (ty, value) {
            (Type::Ticket(_), Value::Ticket(_)) => scan.tickets.push(value),
            (Type::Pair(left, right), Value::Pair(pair)) => {
                pending.push((right, &pair.1));
                pending.push((left, &pair.0));
            }
            (Type::Or(left, _), Value::Left(inner)) => pending.push((left, inner)),
            (Type::Or(_, right), Value::Right(inner)) => pending.push((right, inner)),
            (Type::Option(inner_type), Value::Some(inner)) => pending.push((inner_type, inner)),
            (Type::List(element), Value::List(items)) => {
                scan.steps += items.len() as u64 + 1;
                pending.extend(items.iter().rev().map(|item| (element.as_ref(), item)));
            }
            // `tickets_of_map`: a step, one per binding, then its values as a list, from the
            // greatest key down.
            (Type::Map(_, bound), Value::Map(map)) => {
                scan.steps += 2 * map.len() as u64 + 2;
                pending.extend(map.values().map(|item| (bound.as_ref(), item)));
            }
            (Type::BigMap(_, bound), Value::BigMap(map)) if include_lazy => {
                let values: Vec<&Value> = map.overlay.values().flatten().collect();
                scan.steps += 1 + values.len() as u64 + 1;
                pending.extend(values.into_iter().rev().map(|item| (bound.as_ref(), item)));
            }
            _ => {}
        }
    }
    scan
}
