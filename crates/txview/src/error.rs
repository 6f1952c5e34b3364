//! Typed errors for parsing, sanitizing and resolving transactions.
//!
//! Every rule has its own variant, each naming the wire [`Field`] it is about and, where a byte
//! position exists, the offset in the packet. A differential test compares these against
//! `agave-transaction-view`, whose error is one of three bare kinds; [`ErrorClass`] is that mapping
//! (`ParseError::class`, `SanitizeError::class`).
//!
//! Error constructors used in the hot path are `#[cold]` so the happy path stays straight-line code.

use core::fmt;

/// The wire section (or element of one) an error is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The transaction as a whole (its size).
    Transaction,
    /// The compact-u16 signature count of a legacy or v0 transaction.
    SignatureCount,
    /// The 64-byte signatures.
    Signatures,
    /// The version byte (`0x80 | version`).
    Version,
    /// The three header bytes `num_required_signatures`, `num_readonly_signed_accounts`,
    /// `num_readonly_unsigned_accounts` (and, for v1, the whole fixed-size prefix).
    MessageHeader,
    /// The compact-u16 count of static account keys.
    StaticAccountKeyCount,
    /// The 32-byte static account keys (v1: `Addresses`).
    StaticAccountKeys,
    /// The 32-byte recent blockhash (v1: `LifetimeSpecifier`).
    RecentBlockhash,
    /// The v1 `TransactionConfigMask`.
    ConfigMask,
    /// The v1 `ConfigValues` words.
    ConfigValues,
    /// The instruction count.
    InstructionCount,
    /// The v1 fixed-size `InstructionHeaders`.
    InstructionHeaders,
    /// The v1 `InstructionPayloads` region.
    InstructionPayloads,
    /// Instruction `index`'s program id index.
    ProgramIdIndex {
        /// Position of the instruction in the transaction.
        index: u16,
    },
    /// Instruction `index`'s account-index count.
    InstructionAccountCount {
        /// Position of the instruction in the transaction.
        index: u16,
    },
    /// Instruction `index`'s account indexes.
    InstructionAccounts {
        /// Position of the instruction in the transaction.
        index: u16,
    },
    /// Instruction `index`'s data length.
    InstructionDataLength {
        /// Position of the instruction in the transaction.
        index: u16,
    },
    /// Instruction `index`'s data.
    InstructionData {
        /// Position of the instruction in the transaction.
        index: u16,
    },
    /// The count of address table lookups (v0).
    AddressTableLookupCount,
    /// Address table lookup `index` as a whole.
    AddressTableLookup {
        /// Position of the lookup in the transaction.
        index: u8,
    },
    /// The totals of writable and readonly lookup indexes across all tables.
    AddressTableLookupTotals,
    /// Bytes after the end of the transaction.
    TrailingBytes,
    /// The caller-supplied loaded addresses of a resolved view.
    LoadedAddresses,
}

impl fmt::Display for Field {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Transaction => formatter.write_str("transaction"),
            Field::SignatureCount => formatter.write_str("signature_count"),
            Field::Signatures => formatter.write_str("signatures"),
            Field::Version => formatter.write_str("version"),
            Field::MessageHeader => formatter.write_str("message_header"),
            Field::StaticAccountKeyCount => formatter.write_str("static_account_key_count"),
            Field::StaticAccountKeys => formatter.write_str("static_account_keys"),
            Field::RecentBlockhash => formatter.write_str("recent_blockhash"),
            Field::ConfigMask => formatter.write_str("config_mask"),
            Field::ConfigValues => formatter.write_str("config_values"),
            Field::InstructionCount => formatter.write_str("instruction_count"),
            Field::InstructionHeaders => formatter.write_str("instruction_headers"),
            Field::InstructionPayloads => formatter.write_str("instruction_payloads"),
            Field::ProgramIdIndex { index } => {
                write!(formatter, "instructions[{index}].program_id_index")
            }
            Field::InstructionAccountCount { index } => {
                write!(formatter, "instructions[{index}].account_count")
            }
            Field::InstructionAccounts { index } => {
                write!(formatter, "instructions[{index}].accounts")
            }
            Field::InstructionDataLength { index } => {
                write!(formatter, "instructions[{index}].data_length")
            }
            Field::InstructionData { index } => write!(formatter, "instructions[{index}].data"),
            Field::AddressTableLookupCount => formatter.write_str("address_table_lookup_count"),
            Field::AddressTableLookup { index } => {
                write!(formatter, "address_table_lookups[{index}]")
            }
            Field::AddressTableLookupTotals => formatter.write_str("address_table_lookup_totals"),
            Field::TrailingBytes => formatter.write_str("trailing_bytes"),
            Field::LoadedAddresses => formatter.write_str("loaded_addresses"),
        }
    }
}

/// The three kinds of error `agave-transaction-view` reports (`TransactionViewError`), for
/// comparing answers with it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// `TransactionViewError::ParseError`.
    Parse,
    /// `TransactionViewError::SanitizeError`.
    Sanitize,
    /// `TransactionViewError::AddressLookupMismatch`.
    AddressLookupMismatch,
}

/// A packet that does not frame as a transaction. Each variant is one parse rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParseError {
    /// The packet ends inside `field`, which starts at `offset_bytes`.
    Truncated {
        /// The section that does not fit.
        field: Field,
        /// Where the section starts.
        offset_bytes: usize,
    },
    /// A count is outside what the format allows (signatures 1..=12, static keys 1..=38,
    /// address table lookups <= 31 for legacy and v0).
    CountOutOfRange {
        /// The count field.
        field: Field,
        /// Where the count starts.
        offset_bytes: usize,
        /// The count read.
        count: u16,
    },
    /// A compact-u16 that is non-minimal or needs more than the 2 bytes any packet can use.
    InvalidCompactU16 {
        /// The length field.
        field: Field,
        /// Where the compact-u16 starts.
        offset_bytes: usize,
    },
    /// A version byte other than `0x80` (v0) or `0x81` (v1).
    UnsupportedVersion {
        /// Where the version byte is.
        offset_bytes: usize,
        /// The version number (the byte without its top bit).
        version: u8,
    },
    /// A section that would start or end beyond offset `u16::MAX`; views store u16 offsets.
    OffsetOverflow {
        /// The section.
        field: Field,
        /// The offset that does not fit a u16.
        offset_bytes: usize,
    },
    /// The buffer holds bytes after the transaction (only for the non-prefix constructors).
    TrailingBytes {
        /// Where the transaction ends.
        offset_bytes: usize,
        /// How many bytes follow it.
        trailing_bytes: usize,
    },
    /// A v1 config mask with bits other than 0..=4 set. Agave reports this while parsing, as a
    /// sanitize error.
    UnknownConfigMaskBits {
        /// Where the mask is.
        offset_bytes: usize,
        /// The mask.
        mask: u32,
    },
    /// A v1 config mask with only one of the two priority-fee bits (0, 1) set. Agave reports
    /// this while parsing, as a sanitize error.
    PartialPriorityFeeBits {
        /// Where the mask is.
        offset_bytes: usize,
        /// The mask.
        mask: u32,
    },
    /// The writable or readonly lookup totals across all tables exceed u16. Agave reports this
    /// while parsing, as a sanitize error.
    LookupTotalsOverflow {
        /// Where the address table lookups start.
        offset_bytes: usize,
    },
}

impl ParseError {
    /// The `agave-transaction-view` error kind for this rule.
    pub fn class(&self) -> ErrorClass {
        match self {
            ParseError::UnknownConfigMaskBits { .. }
            | ParseError::PartialPriorityFeeBits { .. }
            | ParseError::LookupTotalsOverflow { .. } => ErrorClass::Sanitize,
            _ => ErrorClass::Parse,
        }
    }

    /// The rule's name in snake case, as the CLI prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            ParseError::Truncated { .. } => "truncated",
            ParseError::CountOutOfRange { .. } => "count_out_of_range",
            ParseError::InvalidCompactU16 { .. } => "invalid_compact_u16",
            ParseError::UnsupportedVersion { .. } => "unsupported_version",
            ParseError::OffsetOverflow { .. } => "offset_overflow",
            ParseError::TrailingBytes { .. } => "trailing_bytes",
            ParseError::UnknownConfigMaskBits { .. } => "unknown_config_mask_bits",
            ParseError::PartialPriorityFeeBits { .. } => "partial_priority_fee_bits",
            ParseError::LookupTotalsOverflow { .. } => "lookup_totals_overflow",
        }
    }

    /// The field the error is about.
    pub fn field(&self) -> Field {
        match self {
            ParseError::Truncated { field, .. }
            | ParseError::CountOutOfRange { field, .. }
            | ParseError::InvalidCompactU16 { field, .. }
            | ParseError::OffsetOverflow { field, .. } => *field,
            ParseError::UnsupportedVersion { .. } => Field::Version,
            ParseError::TrailingBytes { .. } => Field::TrailingBytes,
            ParseError::UnknownConfigMaskBits { .. }
            | ParseError::PartialPriorityFeeBits { .. } => Field::ConfigMask,
            ParseError::LookupTotalsOverflow { .. } => Field::AddressTableLookupTotals,
        }
    }

    /// The byte offset the error is about.
    pub fn offset_bytes(&self) -> usize {
        match self {
            ParseError::Truncated { offset_bytes, .. }
            | ParseError::CountOutOfRange { offset_bytes, .. }
            | ParseError::InvalidCompactU16 { offset_bytes, .. }
            | ParseError::UnsupportedVersion { offset_bytes, .. }
            | ParseError::OffsetOverflow { offset_bytes, .. }
            | ParseError::TrailingBytes { offset_bytes, .. }
            | ParseError::UnknownConfigMaskBits { offset_bytes, .. }
            | ParseError::PartialPriorityFeeBits { offset_bytes, .. }
            | ParseError::LookupTotalsOverflow { offset_bytes } => *offset_bytes,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} at {} (byte {})",
            self.kind(),
            self.field(),
            self.offset_bytes()
        )?;
        match self {
            ParseError::CountOutOfRange { count, .. } => write!(formatter, ": count {count}"),
            ParseError::UnsupportedVersion { version, .. } => {
                write!(formatter, ": version {version}")
            }
            ParseError::TrailingBytes { trailing_bytes, .. } => {
                write!(formatter, ": {trailing_bytes} trailing bytes")
            }
            ParseError::UnknownConfigMaskBits { mask, .. }
            | ParseError::PartialPriorityFeeBits { mask, .. } => {
                write!(formatter, ": mask {mask:#x}")
            }
            _ => Ok(()),
        }
    }
}

impl std::error::Error for ParseError {}

/// A well-framed transaction that breaks a sanitization rule. Each variant is one rule of
/// `agave-transaction-view`'s `sanitize`, in the order Agave checks them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SanitizeError {
    /// More bytes than the version allows (1232 for legacy and v0, 4096 for v1).
    TransactionTooLarge {
        /// The transaction's size.
        size_bytes: usize,
        /// The limit for its version.
        max_bytes: usize,
    },
    /// `num_required_signatures == 0`.
    NoRequiredSignatures,
    /// `num_readonly_signed_accounts >= num_required_signatures`: the fee payer would be readonly.
    FeePayerReadonly {
        /// `num_readonly_signed_accounts`.
        num_readonly_signed_accounts: u8,
        /// `num_required_signatures`.
        num_required_signatures: u8,
    },
    /// `num_readonly_unsigned_accounts` exceeds the unsigned static keys.
    ReadonlyUnsignedOverlap {
        /// `num_readonly_unsigned_accounts`.
        num_readonly_unsigned_accounts: u8,
        /// The number of static keys.
        num_static_account_keys: u8,
    },
    /// A v1 requested heap size outside the configured range or not a multiple of 1024.
    InvalidRequestedHeapSize {
        /// The requested heap size.
        requested_bytes: u32,
    },
    /// The signature count differs from `num_required_signatures`.
    SignatureCountMismatch {
        /// Signatures present.
        num_signatures: u8,
        /// `num_required_signatures`.
        num_required_signatures: u8,
    },
    /// More than 12 signatures (a v1 transaction can frame up to 255).
    TooManySignatures {
        /// Signatures present.
        num_signatures: u8,
    },
    /// Fewer static keys than signatures.
    NotEnoughStaticAccountKeys {
        /// Static keys present.
        num_static_account_keys: u8,
        /// Signatures present.
        num_signatures: u8,
    },
    /// More accounts (static plus looked-up) than the version allows (256, or 64 for v1).
    TooManyAccounts {
        /// Static keys plus lookup indexes (saturating).
        total_accounts: u16,
        /// The limit for the version.
        max_accounts: u16,
    },
    /// More top-level instructions than `SanitizeConfig::max_instructions` (SIMD-0160).
    TooManyInstructions {
        /// Instructions present.
        num_instructions: u16,
    },
    /// A program id index that is not a static key.
    ProgramIdIndexOutOfRange {
        /// The instruction.
        instruction: u16,
        /// Its program id index.
        program_id_index: u8,
    },
    /// A program id index of 0: the fee payer cannot be a program.
    ProgramIdIsFeePayer {
        /// The instruction.
        instruction: u16,
    },
    /// An account index beyond the transaction's accounts.
    AccountIndexOutOfRange {
        /// The instruction.
        instruction: u16,
        /// The bad account index.
        account_index: u8,
    },
    /// More accounts in one instruction than `SanitizeConfig::max_accounts_per_instruction`
    /// (SIMD-0406).
    TooManyInstructionAccounts {
        /// The instruction.
        instruction: u16,
        /// Its account count.
        num_accounts: u16,
    },
    /// An address table lookup with neither writable nor readonly indexes.
    EmptyAddressTableLookup {
        /// The lookup.
        lookup: u8,
    },
}

impl SanitizeError {
    /// The `agave-transaction-view` error kind: always `Sanitize`.
    pub fn class(&self) -> ErrorClass {
        ErrorClass::Sanitize
    }

    /// The rule's name in snake case, as the CLI prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            SanitizeError::TransactionTooLarge { .. } => "transaction_too_large",
            SanitizeError::NoRequiredSignatures => "no_required_signatures",
            SanitizeError::FeePayerReadonly { .. } => "fee_payer_readonly",
            SanitizeError::ReadonlyUnsignedOverlap { .. } => "readonly_unsigned_overlap",
            SanitizeError::InvalidRequestedHeapSize { .. } => "invalid_requested_heap_size",
            SanitizeError::SignatureCountMismatch { .. } => "signature_count_mismatch",
            SanitizeError::TooManySignatures { .. } => "too_many_signatures",
            SanitizeError::NotEnoughStaticAccountKeys { .. } => "not_enough_static_account_keys",
            SanitizeError::TooManyAccounts { .. } => "too_many_accounts",
            SanitizeError::TooManyInstructions { .. } => "too_many_instructions",
            SanitizeError::ProgramIdIndexOutOfRange { .. } => "program_id_index_out_of_range",
            SanitizeError::ProgramIdIsFeePayer { .. } => "program_id_is_fee_payer",
            SanitizeError::AccountIndexOutOfRange { .. } => "account_index_out_of_range",
            SanitizeError::TooManyInstructionAccounts { .. } => "too_many_instruction_accounts",
            SanitizeError::EmptyAddressTableLookup { .. } => "empty_address_table_lookup",
        }
    }

    /// The field the rule is about.
    pub fn field(&self) -> Field {
        match self {
            SanitizeError::TransactionTooLarge { .. } => Field::Transaction,
            SanitizeError::NoRequiredSignatures
            | SanitizeError::FeePayerReadonly { .. }
            | SanitizeError::ReadonlyUnsignedOverlap { .. } => Field::MessageHeader,
            SanitizeError::InvalidRequestedHeapSize { .. } => Field::ConfigValues,
            SanitizeError::SignatureCountMismatch { .. }
            | SanitizeError::TooManySignatures { .. } => Field::SignatureCount,
            SanitizeError::NotEnoughStaticAccountKeys { .. } => Field::StaticAccountKeyCount,
            SanitizeError::TooManyAccounts { .. } => Field::StaticAccountKeys,
            SanitizeError::TooManyInstructions { .. } => Field::InstructionCount,
            SanitizeError::ProgramIdIndexOutOfRange { instruction, .. }
            | SanitizeError::ProgramIdIsFeePayer { instruction } => Field::ProgramIdIndex {
                index: *instruction,
            },
            SanitizeError::AccountIndexOutOfRange { instruction, .. } => {
                Field::InstructionAccounts {
                    index: *instruction,
                }
            }
            SanitizeError::TooManyInstructionAccounts { instruction, .. } => {
                Field::InstructionAccountCount {
                    index: *instruction,
                }
            }
            SanitizeError::EmptyAddressTableLookup { lookup } => {
                Field::AddressTableLookup { index: *lookup }
            }
        }
    }
}

impl fmt::Display for SanitizeError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} at {}", self.kind(), self.field())?;
        match self {
            SanitizeError::TransactionTooLarge {
                size_bytes,
                max_bytes,
            } => write!(formatter, ": {size_bytes} bytes > {max_bytes}"),
            SanitizeError::InvalidRequestedHeapSize { requested_bytes } => {
                write!(formatter, ": {requested_bytes} bytes")
            }
            SanitizeError::TooManyAccounts {
                total_accounts,
                max_accounts,
            } => write!(formatter, ": {total_accounts} > {max_accounts}"),
            SanitizeError::AccountIndexOutOfRange { account_index, .. } => {
                write!(formatter, ": index {account_index}")
            }
            SanitizeError::ProgramIdIndexOutOfRange {
                program_id_index, ..
            } => write!(formatter, ": index {program_id_index}"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for SanitizeError {}

/// Caller-supplied lookup addresses that do not match the transaction's lookup indexes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResolveError {
    /// A v0 transaction was resolved without loaded addresses (Agave requires them, even empty).
    MissingLoadedAddresses,
    /// The loaded address counts differ from the transaction's lookup index totals.
    LoadedAddressCountMismatch {
        /// Writable lookup indexes in the transaction.
        expected_writable: u16,
        /// Readonly lookup indexes in the transaction.
        expected_readonly: u16,
        /// Writable addresses supplied.
        supplied_writable: usize,
        /// Readonly addresses supplied.
        supplied_readonly: usize,
    },
}

impl ResolveError {
    /// The `agave-transaction-view` error kind: always `AddressLookupMismatch`.
    pub fn class(&self) -> ErrorClass {
        ErrorClass::AddressLookupMismatch
    }

    /// The rule's name in snake case.
    pub fn kind(&self) -> &'static str {
        match self {
            ResolveError::MissingLoadedAddresses => "missing_loaded_addresses",
            ResolveError::LoadedAddressCountMismatch { .. } => "loaded_address_count_mismatch",
        }
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} at {}", self.kind(), Field::LoadedAddresses)
    }
}

impl std::error::Error for ResolveError {}

/// Either step of [`crate::SanitizedTransactionView::try_new_sanitized`] failing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TransactionViewError {
    /// The packet does not frame as a transaction.
    Parse(ParseError),
    /// The transaction frames but breaks a sanitization rule.
    Sanitize(SanitizeError),
}

impl TransactionViewError {
    /// The `agave-transaction-view` error kind.
    pub fn class(&self) -> ErrorClass {
        match self {
            TransactionViewError::Parse(error) => error.class(),
            TransactionViewError::Sanitize(error) => error.class(),
        }
    }

    /// The rule's name in snake case.
    pub fn kind(&self) -> &'static str {
        match self {
            TransactionViewError::Parse(error) => error.kind(),
            TransactionViewError::Sanitize(error) => error.kind(),
        }
    }

    /// The field the rule is about.
    pub fn field(&self) -> Field {
        match self {
            TransactionViewError::Parse(error) => error.field(),
            TransactionViewError::Sanitize(error) => error.field(),
        }
    }
}

impl From<ParseError> for TransactionViewError {
    fn from(error: ParseError) -> Self {
        TransactionViewError::Parse(error)
    }
}

impl From<SanitizeError> for TransactionViewError {
    fn from(error: SanitizeError) -> Self {
        TransactionViewError::Sanitize(error)
    }
}

impl fmt::Display for TransactionViewError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransactionViewError::Parse(error) => error.fmt(formatter),
            TransactionViewError::Sanitize(error) => error.fmt(formatter),
        }
    }
}

impl std::error::Error for TransactionViewError {}

/// `ParseError::Truncated`, kept out of line so the happy path stays compact.
#[cold]
#[inline(never)]
pub(crate) fn truncated(field: Field, offset_bytes: usize) -> ParseError {
    ParseError::Truncated {
        field,
        offset_bytes,
    }
}

/// `ParseError::InvalidCompactU16`, kept out of line.
#[cold]
#[inline(never)]
pub(crate) fn invalid_compact_u16(field: Field, offset_bytes: usize) -> ParseError {
    ParseError::InvalidCompactU16 {
        field,
        offset_bytes,
    }
}

/// `ParseError::CountOutOfRange`, kept out of line.
#[cold]
#[inline(never)]
pub(crate) fn count_out_of_range(field: Field, offset_bytes: usize, count: u16) -> ParseError {
    ParseError::CountOutOfRange {
        field,
        offset_bytes,
        count,
    }
}
