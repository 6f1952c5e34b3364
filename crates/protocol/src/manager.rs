//! Manager operations (`operation_repr.ml`, `Manager_operations`): the header every manager
//! operation starts with (source, fee, counter, gas and storage limits) and the kinds that follow
//! it, each a record of its fields. Tags are those of the `contents` union (107 = reveal, ...).

use kestrel_crypto::{ContractHash, PublicKey, PublicKeyHash, SmartRollupAddress};

use crate::crypto_fields::{
    BlsSignature, Contract, SmartRollupCommitmentHash, SmartRollupStateHash,
};
use crate::field::{BoundedNat, HexBytes, Mutez, Natural, SizePrefixed, TicketAmount, Zarith};
use crate::record::record;
use crate::script::{LazyExpr, Parameters, Script, SimpleEntrypoint};

record! {
    /// The fields every manager operation starts with (`manager_encoding`).
    pub struct ManagerHeader {
        /// The account that signs and pays.
        source: PublicKeyHash => "source",
        /// The fee, in mutez.
        fee: Mutez => "fee",
        /// The source's counter for this operation.
        counter: BoundedNat => "counter",
        /// The most gas the operation may consume.
        gas_limit: BoundedNat => "gas_limit",
        /// The most storage, in bytes, the operation may pay for.
        storage_limit: BoundedNat => "storage_limit",
    }
}

record! {
    /// Reveals the source's public key (tag 107); a tz4 key needs its proof of possession.
    pub struct Reveal {
        /// The key whose hash is the source.
        public_key: PublicKey => "public_key",
        /// The BLS proof of possession (tz4 only).
        proof: Option<SizePrefixed<BlsSignature>> => "proof",
    }
}

record! {
    /// Transfers tez, and calls a contract when the destination is one (tag 108).
    pub struct Transaction<'a> {
        /// The amount, in mutez.
        amount: Mutez => "amount",
        /// Who receives it.
        destination: Contract => "destination",
        /// The call, absent for `Unit` to `default`.
        parameters: Option<Parameters<'a>> => "parameters",
    }
}

record! {
    /// Originates a contract (tag 109).
    pub struct Origination<'a> {
        /// The new contract's initial balance, in mutez.
        balance: Mutez => "balance",
        /// Its delegate.
        delegate: Option<PublicKeyHash> => "delegate",
        /// Its code and initial storage.
        script: Script<'a> => "script",
    }
}

record! {
    /// Sets or withdraws the source's delegate (tag 110).
    pub struct Delegation {
        /// The new delegate; absent withdraws the delegation.
        delegate: Option<PublicKeyHash> => "delegate",
    }
}

record! {
    /// Registers a global constant (tag 111).
    pub struct RegisterGlobalConstant<'a> {
        /// The constant's value, Micheline.
        value: LazyExpr<'a> => "value",
    }
}

record! {
    /// Sets or removes a delegate's deposit limit (tag 112).
    pub struct SetDepositsLimit {
        /// The limit, in mutez; absent removes it.
        limit: Option<Mutez> => "limit",
    }
}

record! {
    /// Pays in advance for storage of an originated contract (tag 113).
    pub struct IncreasePaidStorage {
        /// The number of bytes paid for (`z`).
        amount: Zarith => "amount",
        /// The contract.
        destination: ContractHash => "destination",
    }
}

record! {
    /// Sets a delegate's consensus key (tag 114) or companion key (tag 115).
    pub struct UpdateKey {
        /// The new key.
        pk: PublicKey => "pk",
        /// The BLS proof of possession (tz4 keys).
        proof: Option<SizePrefixed<BlsSignature>> => "proof",
    }
}

record! {
    /// Transfers a ticket from an implicit account (tag 158).
    pub struct TransferTicket<'a> {
        /// The ticket's contents, Micheline.
        ticket_contents: LazyExpr<'a> => "ticket_contents",
        /// The ticket's contents type, Micheline.
        ticket_ty: LazyExpr<'a> => "ticket_ty",
        /// The ticket's creator.
        ticket_ticketer: Contract => "ticket_ticketer",
        /// The amount, positive.
        ticket_amount: TicketAmount => "ticket_amount",
        /// The receiver.
        destination: Contract => "destination",
        /// The receiver's entrypoint.
        entrypoint: SimpleEntrypoint => "entrypoint",
    }
}

/// A smart rollup PVM kind (`Sc_rollups.Kind.encoding`, a `string_enum`: one byte in binary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PvmKind {
    /// The example arithmetic PVM.
    Arith,
    /// The WASM 2.0.0 PVM.
    Wasm2_0_0,
    /// The RISC-V PVM.
    Riscv,
}

impl PvmKind {
    const NAMES: [&'static str; 3] = ["arith", "wasm_2_0_0", "riscv"];
    const ALL: [PvmKind; 3] = [PvmKind::Arith, PvmKind::Wasm2_0_0, PvmKind::Riscv];

    /// Octez's name of the kind.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl<'a> crate::field::Field<'a> for PvmKind {
    fn read(reader: &mut kestrel_encoding::Reader<'a>) -> Result<Self, crate::DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        Self::ALL.get(usize::from(tag)).copied().ok_or_else(|| {
            crate::DecodeError::new(
                crate::DecodeErrorKind::UnknownTag {
                    what: "PVM kind",
                    tag: u16::from(tag),
                },
                offset,
            )
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn write_json(&self, out: &mut String) -> Result<(), crate::JsonError> {
        crate::json::write_string(out, self.name());
        Ok(())
    }
    fn read_json(value: &serde_json::Value, path: &str) -> Result<Self, crate::JsonError> {
        let name = crate::json::as_str(value, path)?;
        Self::NAMES
            .iter()
            .position(|known| *known == name)
            .map(|index| Self::ALL[index])
            .ok_or_else(|| crate::JsonError::new(path, format!("unknown PVM kind {name}")))
    }
}

record! {
    /// Originates a smart rollup (tag 200).
    pub struct SmartRollupOriginate<'a> {
        /// The PVM.
        pvm_kind: PvmKind => "pvm_kind",
        /// The boot sector.
        kernel: HexBytes<'a> => "kernel",
        /// The type of the rollup's parameters, Micheline.
        parameters_ty: LazyExpr<'a> => "parameters_ty",
        /// The stakers allowed to publish commitments, if restricted.
        whitelist: Option<Vec<PublicKeyHash>> => "whitelist",
    }
}

record! {
    /// Adds messages to the smart rollups' inbox (tag 201).
    pub struct SmartRollupAddMessages<'a> {
        /// The messages.
        message: Vec<HexBytes<'a>> => "message",
    }
}

record! {
    /// Cements a smart rollup's oldest commitment (tag 202).
    pub struct SmartRollupCement {
        /// The rollup.
        rollup: SmartRollupAddress => "rollup",
    }
}

record! {
    /// A smart rollup commitment (`Sc_rollup_commitment_repr.encoding`).
    pub struct SmartRollupCommitment {
        /// The PVM state hash after the commitment's ticks.
        compressed_state: SmartRollupStateHash => "compressed_state",
        /// The inbox level committed to.
        inbox_level: i32 => "inbox_level",
        /// The previous commitment.
        predecessor: SmartRollupCommitmentHash => "predecessor",
        /// The number of ticks executed (`n`).
        number_of_ticks: Natural => "number_of_ticks",
    }
}

record! {
    /// Publishes a smart rollup commitment (tag 203).
    pub struct SmartRollupPublish {
        /// The rollup.
        rollup: SmartRollupAddress => "rollup",
        /// The commitment.
        commitment: SmartRollupCommitment => "commitment",
    }
}

record! {
    /// The two stakers of a refutation game (`Sc_rollup_game_repr.Index`).
    pub struct SmartRollupStakers {
        /// The first staker.
        alice: PublicKeyHash => "alice",
        /// The second staker.
        bob: PublicKeyHash => "bob",
    }
}

record! {
    /// Ends a refutation game whose player ran out of time (tag 205).
    pub struct SmartRollupTimeout {
        /// The rollup.
        rollup: SmartRollupAddress => "rollup",
        /// The game's stakers.
        stakers: SmartRollupStakers => "stakers",
    }
}

record! {
    /// Executes an outbox message of a cemented commitment (tag 206).
    pub struct SmartRollupExecuteOutboxMessage<'a> {
        /// The rollup.
        rollup: SmartRollupAddress => "rollup",
        /// The cemented commitment.
        cemented_commitment: SmartRollupCommitmentHash => "cemented_commitment",
        /// The output proof.
        output_proof: HexBytes<'a> => "output_proof",
    }
}

record! {
    /// Recovers a staker's bond (tag 207).
    pub struct SmartRollupRecoverBond {
        /// The rollup.
        rollup: SmartRollupAddress => "rollup",
        /// The staker.
        staker: PublicKeyHash => "staker",
    }
}
