//! Octez's Michelson gas model in milligas: cost functions, the sizes they take, saturated
//! arithmetic and the gas counter (see `README.md` beside this file, included below).
#![doc = include_str!("README.md")]

pub mod arith;
pub mod interpreter;
pub mod size;
pub mod typecheck;

#[cfg(test)]
mod oracle_tests;

use std::fmt;

/// Milligas in one gas unit: Octez counts gas with three decimals (`Gas_limit_repr.scaling_factor`).
pub const MILLIGAS_PER_GAS: u64 = 1_000;

/// The most gas one operation may use (`hard_gas_limit_per_operation`, protocol constants of
/// Paris through Rio and proto_alpha): 1,040,000 gas.
pub const HARD_GAS_LIMIT_PER_OPERATION: u64 = 1_040_000;

/// [`HARD_GAS_LIMIT_PER_OPERATION`] in milligas, the largest budget a script run starts with.
pub const HARD_GAS_LIMIT_PER_OPERATION_MILLI: u64 = HARD_GAS_LIMIT_PER_OPERATION * MILLIGAS_PER_GAS;

/// The most gas all operations of one block may use together (`hard_gas_limit_per_block` of
/// proto_alpha's mainnet constants, 6-second blocks; 1,733,333 in Quebec/Rio with 8-second
/// blocks). A block producer checks each operation's limit against what is left.
pub const HARD_GAS_LIMIT_PER_BLOCK: u64 = 1_386_666;

/// [`HARD_GAS_LIMIT_PER_BLOCK`] in milligas.
pub const HARD_GAS_LIMIT_PER_BLOCK_MILLI: u64 = HARD_GAS_LIMIT_PER_BLOCK * MILLIGAS_PER_GAS;

/// The gas budget was exhausted (Octez's `Gas_limit_repr.Operation_quota_exceeded`, reported by
/// the client as "Gas limit exceeded during typechecking or execution").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GasExhausted {
    /// The cost, in milligas, that did not fit.
    pub cost_milli: u64,
    /// What was left, in milligas, when it was refused.
    pub gas_milli_remaining: u64,
}

impl fmt::Display for GasExhausted {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "gas exhausted: a cost of {} milligas does not fit in the {} milligas remaining",
            self.cost_milli, self.gas_milli_remaining
        )
    }
}

impl std::error::Error for GasExhausted {}

/// A milligas budget, consumed by exact (saturated) costs.
///
/// Octez refuses a cost that exceeds what remains and leaves the counter unchanged; so does
/// [`GasCounter::consume`]. The interpreter keeps the remaining milligas in a local `u64` inside
/// its loop and writes it back here only where the outside world needs it (DESIGN.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GasCounter {
    gas_milli_limit: u64,
    gas_milli_remaining: u64,
}

impl GasCounter {
    /// A counter with `gas_milli_limit` milligas to spend.
    pub const fn new(gas_milli_limit: u64) -> GasCounter {
        GasCounter {
            gas_milli_limit,
            gas_milli_remaining: gas_milli_limit,
        }
    }

    /// A counter with the per-operation hard limit, as `octez-client run script` uses by default.
    pub const fn per_operation_default() -> GasCounter {
        GasCounter::new(HARD_GAS_LIMIT_PER_OPERATION_MILLI)
    }

    /// Spends `cost_milli`, or refuses (leaving the counter unchanged) when it does not fit.
    #[inline]
    pub fn consume(&mut self, cost_milli: u64) -> Result<(), GasExhausted> {
        match self.gas_milli_remaining.checked_sub(cost_milli) {
            Some(left) => {
                self.gas_milli_remaining = left;
                Ok(())
            }
            None => Err(GasExhausted {
                cost_milli,
                gas_milli_remaining: self.gas_milli_remaining,
            }),
        }
    }

    /// Milligas left.
    pub const fn gas_milli_remaining(&self) -> u64 {
        self.gas_milli_remaining
    }

    /// Milligas spent since the counter was created.
    pub const fn gas_milli_consumed(&self) -> u64 {
        self.gas_milli_limit - self.gas_milli_remaining
    }

    /// The budget the counter started with, in milligas.
    pub const fn gas_milli_limit(&self) -> u64 {
        self.gas_milli_limit
    }

    /// Restores the remaining milligas, e.g. after the interpreter kept it in a local variable.
    /// Values above the limit are clamped to the limit.
    pub fn set_gas_milli_remaining(&mut self, gas_milli_remaining: u64) {
        self.gas_milli_remaining = gas_milli_remaining.min(self.gas_milli_limit);
    }
}

/// Gas units needed to pay `milligas`, rounded up (Octez's `Gas.Arith.ceil`, the integral
/// `consumed_gas` of receipts).
pub const fn gas_units_ceil(milligas: u64) -> u64 {
    milligas.div_ceil(MILLIGAS_PER_GAS)
}

/// Formats milligas as octez-client prints gas (`Gas.Arith.pp`): units, a dot and exactly three
/// decimals, e.g. `9929` → `9.929`, `10` → `0.010`.
pub fn format_gas(milligas: u64) -> String {
    format!(
        "{}.{:03}",
        milligas / MILLIGAS_PER_GAS,
        milligas % MILLIGAS_PER_GAS
    )
}

/// Parses octez-client's printed gas (`9.929`, `0.010`, `1040000`) back to milligas; `None` when
/// the text is not of that form (more than three decimals, signs, garbage).
pub fn parse_gas(text: &str) -> Option<u64> {
    let (units, decimals) = match text.split_once('.') {
        Some((units, decimals)) => (units, decimals),
        None => (text, ""),
    };
    if units.is_empty()
        || !units.bytes().all(|byte| byte.is_ascii_digit())
        || decimals.len() > 3
        || !decimals.bytes().all(|byte| byte.is_ascii_digit())
    {
        return None;
    }
    let units: u64 = units.parse().ok()?;
    let mut milli: u64 = 0;
    for (index, digit) in decimals.bytes().enumerate() {
        milli += u64::from(digit - b'0') * 10u64.pow(2 - index as u32);
    }
    units.checked_mul(MILLIGAS_PER_GAS)?.checked_add(milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_parse_round_trip() {
        for (milligas, text) in [
            (9929, "9.929"),
            (10, "0.010"),
            (0, "0.000"),
            (100_026, "100.026"),
        ] {
            assert_eq!(format_gas(milligas), text);
            assert_eq!(parse_gas(text), Some(milligas));
        }
        assert_eq!(
            parse_gas("1040000"),
            Some(HARD_GAS_LIMIT_PER_OPERATION_MILLI)
        );
        assert_eq!(parse_gas("0.5"), Some(500));
        for bad in ["", ".5", "1.2345", "-1", "1e3", "1.x"] {
            assert_eq!(parse_gas(bad), None, "{bad}");
        }
    }

    #[test]
    fn counter_refuses_without_spending() {
        let mut counter = GasCounter::new(25);
        assert_eq!(counter.consume(10), Ok(()));
        assert_eq!(
            counter.consume(20),
            Err(GasExhausted {
                cost_milli: 20,
                gas_milli_remaining: 15
            })
        );
        assert_eq!(counter.gas_milli_remaining(), 15);
        assert_eq!(counter.consume(15), Ok(()));
        assert_eq!(counter.gas_milli_consumed(), 25);
        assert_eq!(gas_units_ceil(9929), 10);
        assert_eq!(gas_units_ceil(9000), 9);
    }
}
