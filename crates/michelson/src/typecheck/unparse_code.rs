//! What Octez's `unparse_code` costs (`Script_ir_unparser.unparse_code_rec`): one
//! [`COST_UNPARSE_INSTRUCTION_CYCLE`] per Micheline node of the code, except that a `PUSH t d` is
//! not walked but typechecked again — `t` parsed as a packable type, `d` parsed as data of type
//! `t` (a lambda's code typechecked and normalized again, in legacy mode) — and `d`'s value
//! unparsed again. Octez does this when it normalizes a lambda written as data, and whenever it
//! unparses a lambda value (`PACK`, the value `APPLY` captures, storage). Each level of lambdas
//! pushing lambdas typechecks the levels below it again, so the cost grows exponentially with
//! the depth; gas bounds the work, since every node is charged and checked before it is visited.
//!
//! Octez reports an error raised while a constant's content is parsed under that constant
//! (`Invalid_constant`, `Ill_typed_data`): gas running out there is not a plain gas exhaustion
//! but a static error. [`UnparseExhausted`] says which of the two happened.

use super::{TcError, TcErrorKind, Typechecker, MAX_NESTED_TYPECHECKS};
use crate::gas::typecheck::COST_UNPARSE_INSTRUCTION_CYCLE;
use crate::unparse::{lambda_node, Mode};
use crate::value::{Lambda, Value};
use kestrel_micheline::{Node, NodeKind, Prim};

/// Unparsing ran out of its gas budget.
#[derive(Debug)]
pub enum UnparseExhausted {
    /// Outside any constant's content: Octez's plain gas exhaustion.
    Plain,
    /// While the content of a `PUSH`ed constant was typechecked again: Octez wraps the
    /// exhaustion in the constant's error, a static error.
    InConstant(TcError),
}

/// Whether `code` has a `PUSH t d`, the one node whose unparsing is more than a cycle.
pub fn has_push(code: &Node) -> bool {
    let mut pending = vec![code];
    while let Some(node) = pending.pop() {
        match &node.kind {
            NodeKind::Prim { name, args, .. } => {
                if name.known() == Some(Prim::I_PUSH) && args.len() == 2 {
                    return true;
                }
                pending.extend(args.iter());
            }
            NodeKind::Seq(items) => pending.extend(items.iter()),
            _ => {}
        }
    }
    false
}

/// The code Octez walks when it unparses `lambda`: its normalized code with the values
/// `APPLY` captured pushed in front; for a `LAMBDA_REC` not yet applied, the body (the
/// `Lambda_rec` node around it is not charged).
fn unparsed_code(lambda: &Lambda) -> Node {
    let mut node = lambda_node(lambda, Mode::Optimized);
    if let NodeKind::Prim { name, args, .. } = &mut node.kind {
        if name.known() == Some(Prim::D_Lambda_rec) && args.len() == 1 {
            return args.pop().unwrap_or_else(|| Node::seq(Vec::new()));
        }
    }
    node
}

/// What unparsing the code of `lambda` in optimized mode costs (`unparse_code_rec`, which
/// `unparse_data_rec` of a `Lam` calls after its data cycle), within `budget_milli`.
pub fn lambda_unparse_cost(lambda: &Lambda, budget_milli: u64) -> Result<u64, UnparseExhausted> {
    code_unparse_cost(&unparsed_code(lambda), budget_milli)
}

/// What `unparse_code_rec` of `code` in optimized mode costs (a lambda's code, or a whole
/// script as an origination stores it), within `budget_milli`.
pub fn code_unparse_cost(code: &Node, budget_milli: u64) -> Result<u64, UnparseExhausted> {
    if !has_push(code) {
        let nodes = super::charges::micheline_nodes(code);
        let cost = nodes.saturating_mul(COST_UNPARSE_INSTRUCTION_CYCLE);
        return if cost > budget_milli {
            Err(UnparseExhausted::Plain)
        } else {
            Ok(cost)
        };
    }
    crate::context::with_empty_lookup(|lookup| {
        let mut checker = Typechecker::new(lookup);
        checker.gas_limit_milli = i64::try_from(budget_milli).unwrap_or(i64::MAX);
        checker.allow_self = false;
        checker.legacy = true;
        match checker.charge_unparse_code(code) {
            Ok(()) => Ok(checker.gas_consumed_milli.max(0) as u64),
            Err(error) if error.kind == TcErrorKind::GasExhaustion => {
                if checker.exhausted_in_constant.get() {
                    Err(UnparseExhausted::InConstant(error))
                } else {
                    Err(UnparseExhausted::Plain)
                }
            }
            // Code that typechecked once typechecks again; what is left is nesting beyond
            // our bound, reported as the constant's error.
            Err(error) => Err(UnparseExhausted::InConstant(error)),
        }
    })
}

impl Typechecker<'_> {
    /// Charges `unparse_code_rec` of `code` in optimized mode, typechecking every `PUSH`ed
    /// constant again.
    pub fn charge_unparse_code(&mut self, code: &Node) -> Result<(), TcError> {
        if self.nesting >= MAX_NESTED_TYPECHECKS {
            return Err(TcError::new(code.span, TcErrorKind::TooDeep));
        }
        self.nesting += 1;
        self.unparse_depth += 1;
        let result = self.walk_unparse_code(code);
        self.unparse_depth -= 1;
        self.nesting -= 1;
        result
    }

    fn walk_unparse_code(&mut self, code: &Node) -> Result<(), TcError> {
        let mut pending = vec![code];
        while let Some(node) = pending.pop() {
            self.charge_gas(COST_UNPARSE_INSTRUCTION_CYCLE);
            self.check_gas(node.span)?;
            match &node.kind {
                NodeKind::Prim { name, args, .. } => {
                    if name.known() == Some(Prim::I_PUSH) && args.len() == 2 {
                        let ty = self.parse_type(&args[0])?;
                        self.check_gas(args[0].span)?;
                        let value = self.parse_data(&args[1], &ty)?;
                        self.charge_unparse_data(&value)?;
                    } else {
                        // Octez visits the arguments left to right.
                        pending.extend(args.iter().rev());
                    }
                }
                NodeKind::Seq(items) => pending.extend(items.iter().rev()),
                _ => {}
            }
        }
        Ok(())
    }

    /// Charges `unparse_data_rec` of `value` in optimized mode: its lambdas' code is walked
    /// again ([`Typechecker::charge_unparse_code`]), the rest costs what `PACK`'s unparsing does.
    fn charge_unparse_data(&mut self, value: &Value) -> Result<(), TcError> {
        let mut lambdas = Vec::new();
        let rest = crate::pack::unparse_cost_with(value, |lambda| {
            lambdas.push(lambda.clone());
            0
        });
        self.charge_gas(rest);
        for lambda in lambdas {
            self.check_gas(lambda.node.span)?;
            self.charge_unparse_code(&unparsed_code(&lambda))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Type;

    /// The unparsing cost of the code of the lambda written as `text`, of type `lambda nat nat`.
    fn code_cost(text: &str, budget_milli: u64) -> Result<u64, UnparseExhausted> {
        let node = kestrel_micheline::parse::parse_expression(text).expect("valid Micheline");
        let lambda = crate::context::with_empty_lookup(|lookup| {
            Typechecker::new(lookup).parse_data(&node, &Type::lambda(Type::Nat, Type::Nat))
        });
        let Ok(Value::Lambda(lambda)) = lambda else {
            panic!("{text} is a lambda nat nat");
        };
        lambda_unparse_cost(&lambda, budget_milli)
    }

    #[test]
    fn pushed_constants_are_parsed_and_unparsed_again() {
        // `{ ADD ; ... }`-like code without PUSH: a cycle per node (the sequence, two
        // instructions).
        assert_eq!(code_cost("{ DUP ; ADD }", 10_000).ok(), Some(3 * 115));
        // The sequence, PUSH and ADD cycles; `nat` parsed as a type (60), `1` parsed (100) and
        // unparsed (65) as data, instead of two more node cycles (Octez's `hash data` of this
        // lambda: 1039995.858 gas remaining).
        assert_eq!(
            code_cost("{ PUSH nat 1 ; ADD }", 10_000).ok(),
            Some(3 * 115 + 60 + 100 + 65)
        );
    }

    #[test]
    fn running_out_inside_a_pushed_lambda_is_a_static_error() {
        let nested =
            "{ PUSH (lambda nat nat) { PUSH (lambda nat nat) { DUP ; ADD } ; SWAP ; EXEC } ; \
                      SWAP ; EXEC }";
        let full = code_cost(nested, 1_000_000).expect("fits");
        // Out of gas at the first node: plain; deep inside the inner lambda's typechecking:
        // under the constant.
        assert!(matches!(
            code_cost(nested, 100),
            Err(UnparseExhausted::Plain)
        ));
        assert!(matches!(
            code_cost(nested, 115 * 2 + 60 * 3 + 100 + 300),
            Err(UnparseExhausted::InConstant(_))
        ));
        assert!(code_cost(nested, full).is_ok());
        assert!(code_cost(nested, full - 1).is_err());
    }
}
