//! An owned transaction and its serializer for all three formats, for tests, benchmarks and the
//! node. It writes exactly what it is given, including transactions that break sanitization rules
//! (tests need those); counts that the wire cannot hold at all are caller bugs and stop the program.
//!
//! Spec: `solana-transaction-format.md` (legacy and v0 layout), SIMD-0385 (v1 layout and config).

use crate::bytes::write_compact_u16;
use crate::limits::{MESSAGE_VERSION_PREFIX, SIGNATURE_BYTES, V1_VERSION_BYTE};
use crate::transaction_view::TransactionView;
use crate::{Address, Hash, Signature, TransactionVersion};
use ed25519_dalek::Signer;

/// The three header counts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageHeader {
    /// Signatures the message requires (the first keys sign).
    pub num_required_signatures: u8,
    /// Readonly accounts among the signers (the last signers).
    pub num_readonly_signed_accounts: u8,
    /// Readonly accounts among the non-signers (the last static keys).
    pub num_readonly_unsigned_accounts: u8,
}

/// One instruction to serialize.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstructionSpec {
    /// Index of the program among the static keys.
    pub program_id_index: u8,
    /// Indexes of the accounts passed to the program.
    pub accounts: Vec<u8>,
    /// Instruction data.
    pub data: Vec<u8>,
}

/// One address table lookup to serialize (v0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressTableLookupSpec {
    /// The table's address.
    pub account_key: Address,
    /// Indexes loaded writable.
    pub writable_indexes: Vec<u8>,
    /// Indexes loaded readonly.
    pub readonly_indexes: Vec<u8>,
}

/// The v1 config values; each `Some` sets its mask bit(s).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TransactionConfig {
    /// Total priority fee in lamports (bits 0 and 1).
    pub priority_fee_lamports: Option<u64>,
    /// Compute-unit limit (bit 2).
    pub compute_unit_limit: Option<u32>,
    /// Loaded-accounts-data-size limit in bytes (bit 3).
    pub loaded_accounts_data_size_limit: Option<u32>,
    /// Requested heap size in bytes (bit 4).
    pub requested_heap_size: Option<u32>,
}

impl TransactionConfig {
    /// The `TransactionConfigMask` for the values present.
    pub fn mask(&self) -> u32 {
        let mut mask = 0;
        if self.priority_fee_lamports.is_some() {
            mask |= 0b11;
        }
        if self.compute_unit_limit.is_some() {
            mask |= 1 << 2;
        }
        if self.loaded_accounts_data_size_limit.is_some() {
            mask |= 1 << 3;
        }
        if self.requested_heap_size.is_some() {
            mask |= 1 << 4;
        }
        mask
    }
}

/// An owned transaction of any version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// The wire format.
    pub version: TransactionVersion,
    /// Signatures, in signer order (written as given; for v1 their count is implied by the header).
    pub signatures: Vec<Signature>,
    /// The header counts.
    pub header: MessageHeader,
    /// Static account keys (v1: addresses).
    pub account_keys: Vec<Address>,
    /// Recent blockhash (v1: lifetime specifier).
    pub recent_blockhash: Hash,
    /// Instructions.
    pub instructions: Vec<InstructionSpec>,
    /// Address table lookups (written for v0 only).
    pub address_table_lookups: Vec<AddressTableLookupSpec>,
    /// Config values (written for v1 only).
    pub config: TransactionConfig,
}

impl Transaction {
    /// A transaction with zeroed signatures, one per required signature.
    pub fn new(
        version: TransactionVersion,
        header: MessageHeader,
        account_keys: Vec<Address>,
        recent_blockhash: Hash,
        instructions: Vec<InstructionSpec>,
    ) -> Self {
        Self {
            version,
            signatures: vec![[0; SIGNATURE_BYTES]; usize::from(header.num_required_signatures)],
            header,
            account_keys,
            recent_blockhash,
            instructions,
            address_table_lookups: Vec::new(),
            config: TransactionConfig::default(),
        }
    }

    /// Copies a view into an owned transaction.
    pub fn from_view<D: AsRef<[u8]>, const SANITIZED: bool>(
        view: &TransactionView<D, SANITIZED>,
    ) -> Self {
        let config = view.transaction_config().map(|config| TransactionConfig {
            priority_fee_lamports: config.priority_fee_lamports(),
            compute_unit_limit: config.compute_unit_limit(),
            loaded_accounts_data_size_limit: config.loaded_accounts_data_size_limit(),
            requested_heap_size: config.requested_heap_size(),
        });
        Self {
            version: view.version(),
            signatures: view.signatures().to_vec(),
            header: MessageHeader {
                num_required_signatures: view.num_required_signatures(),
                num_readonly_signed_accounts: view.num_readonly_signed_static_accounts(),
                num_readonly_unsigned_accounts: view.num_readonly_unsigned_static_accounts(),
            },
            account_keys: view.static_account_keys().to_vec(),
            recent_blockhash: *view.recent_blockhash(),
            instructions: view
                .instructions_iter()
                .map(|instruction| InstructionSpec {
                    program_id_index: instruction.program_id_index,
                    accounts: instruction.accounts.to_vec(),
                    data: instruction.data.to_vec(),
                })
                .collect(),
            address_table_lookups: view
                .address_table_lookup_iter()
                .map(|lookup| AddressTableLookupSpec {
                    account_key: *lookup.account_key,
                    writable_indexes: lookup.writable_indexes.to_vec(),
                    readonly_indexes: lookup.readonly_indexes.to_vec(),
                })
                .collect(),
            config: config.unwrap_or_default(),
        }
    }

    /// The signed message bytes.
    pub fn message_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_message(&mut out);
        out
    }

    /// Appends the signed message bytes to `out`.
    pub fn write_message(&self, out: &mut Vec<u8>) {
        match self.version {
            TransactionVersion::Legacy | TransactionVersion::V0 => self.write_compact_message(out),
            TransactionVersion::V1 => self.write_v1_message(out),
        }
    }

    fn write_compact_message(&self, out: &mut Vec<u8>) {
        if self.version == TransactionVersion::V0 {
            out.push(MESSAGE_VERSION_PREFIX);
        }
        out.extend([
            self.header.num_required_signatures,
            self.header.num_readonly_signed_accounts,
            self.header.num_readonly_unsigned_accounts,
        ]);
        write_compact_u16(out, wire_count(self.account_keys.len()));
        for key in &self.account_keys {
            out.extend(key);
        }
        out.extend(self.recent_blockhash);
        write_compact_u16(out, wire_count(self.instructions.len()));
        for instruction in &self.instructions {
            out.push(instruction.program_id_index);
            write_compact_u16(out, wire_count(instruction.accounts.len()));
            out.extend(&instruction.accounts);
            write_compact_u16(out, wire_count(instruction.data.len()));
            out.extend(&instruction.data);
        }
        if self.version == TransactionVersion::V0 {
            write_compact_u16(out, wire_count(self.address_table_lookups.len()));
            for lookup in &self.address_table_lookups {
                out.extend(lookup.account_key);
                write_compact_u16(out, wire_count(lookup.writable_indexes.len()));
                out.extend(&lookup.writable_indexes);
                write_compact_u16(out, wire_count(lookup.readonly_indexes.len()));
                out.extend(&lookup.readonly_indexes);
            }
        }
    }

    fn write_v1_message(&self, out: &mut Vec<u8>) {
        out.extend([
            V1_VERSION_BYTE,
            self.header.num_required_signatures,
            self.header.num_readonly_signed_accounts,
            self.header.num_readonly_unsigned_accounts,
        ]);
        out.extend(self.config.mask().to_le_bytes());
        out.extend(self.recent_blockhash);
        out.push(byte_count(self.instructions.len()));
        out.push(byte_count(self.account_keys.len()));
        for key in &self.account_keys {
            out.extend(key);
        }
        if let Some(fee) = self.config.priority_fee_lamports {
            out.extend(fee.to_le_bytes());
        }
        for value in [
            self.config.compute_unit_limit,
            self.config.loaded_accounts_data_size_limit,
            self.config.requested_heap_size,
        ]
        .into_iter()
        .flatten()
        {
            out.extend(value.to_le_bytes());
        }
        for instruction in &self.instructions {
            out.push(instruction.program_id_index);
            out.push(byte_count(instruction.accounts.len()));
            out.extend(wire_count(instruction.data.len()).to_le_bytes());
        }
        for instruction in &self.instructions {
            out.extend(&instruction.accounts);
            out.extend(&instruction.data);
        }
    }

    /// The wire bytes.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.serialize_into(&mut out);
        out
    }

    /// Appends the wire bytes to `out` (reuse one buffer for many transactions).
    pub fn serialize_into(&self, out: &mut Vec<u8>) {
        match self.version {
            TransactionVersion::Legacy | TransactionVersion::V0 => {
                write_compact_u16(out, wire_count(self.signatures.len()));
                for signature in &self.signatures {
                    out.extend(signature);
                }
                self.write_message(out);
            }
            TransactionVersion::V1 => {
                self.write_v1_message(out);
                for signature in &self.signatures {
                    out.extend(signature);
                }
            }
        }
    }

    /// Signs the message with `signing_keys` (in signer order), replacing the signatures.
    pub fn sign(&mut self, signing_keys: &[ed25519_dalek::SigningKey]) {
        let message = self.message_bytes();
        self.signatures = signing_keys
            .iter()
            .map(|key| key.sign(&message).to_bytes())
            .collect();
    }
}

/// A length the compact-u16 or u16 fields can hold; more is a caller bug.
fn wire_count(length: usize) -> u16 {
    u16::try_from(length).expect("the builder was given more than u16::MAX elements")
}

/// A length a v1 u8 count can hold; more is a caller bug.
fn byte_count(length: usize) -> u8 {
    u8::try_from(length).expect("a v1 count exceeds u8::MAX")
}
