//! The operations the mockup commands inject, built as octez-client builds them
//! (`Client_proto_context.transfer`, `originate_contract`): one manager operation from the
//! command's source, with the next counter, then signed with the source's secret key over
//! `0x03 ‖ unsigned bytes`.

use kestrel_crypto::{BlockHash, Entrypoint, PublicKeyHash, SecretKey};
use kestrel_micheline::{Node, NodeKind};
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::field::BoundedNat;
use kestrel_protocol::manager::{ManagerHeader, Origination, Transaction};
use kestrel_protocol::script::{LazyExpr, Parameters, Script};
use kestrel_protocol::{Contents, ManagerKind, ManagerOperation, Mutez, Operation};
use std::borrow::Cow;

use super::MockupError;

/// What a transfer or call carries beyond its amount and destination.
pub struct Call {
    /// The entrypoint (`--entrypoint`, else `default`).
    pub entrypoint: Entrypoint,
    /// The argument (`--arg`, else `Unit`), macros expanded.
    pub argument: Node,
}

/// The header of a manager operation from `source` with `counter` and the given limits.
pub fn header(
    source: &PublicKeyHash,
    counter: u128,
    fee_mutez: u64,
    gas_limit: u64,
    storage_limit_bytes: u64,
) -> ManagerHeader {
    ManagerHeader {
        source: *source,
        fee: Mutez(fee_mutez),
        counter: BoundedNat(counter),
        gas_limit: BoundedNat(u128::from(gas_limit)),
        storage_limit: BoundedNat(u128::from(storage_limit_bytes)),
    }
}

/// A transaction of `amount_mutez` to `destination`. `Unit` to `default` carries no
/// parameters, as Octez's encoding leaves them out.
pub fn transaction(
    amount_mutez: u64,
    destination: Contract,
    call: &Call,
) -> Result<ManagerKind<'static>, MockupError> {
    let is_unit = matches!(
        &call.argument.kind,
        NodeKind::Prim { name, args, annots }
            if args.is_empty() && annots.is_empty() && name.as_str() == "Unit"
    );
    let parameters = if is_unit && call.entrypoint.is_default() {
        None
    } else {
        Some(Parameters {
            entrypoint: call.entrypoint.clone(),
            value: lazy(&call.argument)?,
        })
    };
    Ok(ManagerKind::Transaction(Transaction {
        amount: Mutez(amount_mutez),
        destination,
        parameters,
    }))
}

/// An origination of `code` with `storage` and `balance_mutez`.
pub fn origination(
    balance_mutez: u64,
    delegate: Option<PublicKeyHash>,
    code: &Node,
    storage: &Node,
) -> Result<ManagerKind<'static>, MockupError> {
    Ok(ManagerKind::Origination(Origination {
        balance: Mutez(balance_mutez),
        delegate,
        script: Script {
            code: lazy(code)?,
            storage: lazy(storage)?,
        },
    }))
}

fn lazy(node: &Node) -> Result<LazyExpr<'static>, MockupError> {
    kestrel_micheline::binary::encode(node)
        .map(|bytes| LazyExpr(Cow::Owned(bytes)))
        .map_err(|error| MockupError::Forge(format!("{error:?}")))
}

/// The unsigned operation of one manager content on `branch`.
pub fn operation(
    branch: BlockHash,
    header: ManagerHeader,
    kind: ManagerKind<'static>,
) -> Operation<'static> {
    Operation {
        branch,
        contents: vec![Contents::Manager(ManagerOperation {
            header,
            operation: kind,
        })],
        signature: None,
    }
}

/// The size in bytes of `operation` once signed with an ed25519 key (the unsigned encoding
/// with its 64-byte suffix).
pub fn signed_size_bytes(operation: &Operation<'_>) -> usize {
    operation.encode().len()
}

/// `operation` signed by `key`.
pub fn sign(mut operation: Operation<'static>, key: &SecretKey) -> Operation<'static> {
    operation.signature = Some(key.sign(&operation.signing_message()));
    operation
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transfer_amount's recorded transfer: 500 tez to a contract with `--arg Unit`, gas limit
    /// 1379, storage limit 24, fee ꜩ0.00039, counter 2: 152 signed bytes, which is what its
    /// fee was computed on (100 + 138 + 152 µꜩ).
    #[test]
    fn the_recorded_transfer_has_the_size_its_fee_was_computed_on() {
        let key =
            SecretKey::from_b58check("edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh")
                .expect("valid");
        let source = key.public_key().hash();
        let destination = Contract(kestrel_crypto::Destination::Originated(
            kestrel_crypto::ContractHash::from_b58check("KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW")
                .expect("valid"),
        ));
        let call = Call {
            entrypoint: Entrypoint::default_entrypoint(),
            argument: kestrel_micheline::parse_expression("Unit").expect("Micheline"),
        };
        let kind = transaction(500_000_000, destination, &call).expect("forged");
        let branch =
            BlockHash::from_b58check(super::super::chain::GENESIS_BLOCK_HASH).expect("valid");
        let unsigned = operation(branch, header(&source, 2, 390, 1379, 24), kind);
        assert_eq!(signed_size_bytes(&unsigned), 152);
        let signed = sign(unsigned, &key);
        assert_eq!(signed.encode().len(), 152);
        let signature = signed.signature.clone().expect("signed");
        assert!(key
            .public_key()
            .check(&signature, &signed.signing_message()));
    }
}
