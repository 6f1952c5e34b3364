//! The protocol constants application reads, with the values Octez's mockup mode starts from
//! (`lib_parameters/default_parameters.ml`, `constants_mainnet`, which `create mockup` uses).

/// The constants of protocol 025 that application and validation read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constants {
    /// Mutez burnt per byte of storage a contract newly uses (`cost_per_byte`).
    pub cost_per_byte_mutez: u64,
    /// Bytes burnt for allocating an account or originating a contract (`origination_size`).
    pub origination_size_bytes: u64,
    /// Most gas one operation may declare (`hard_gas_limit_per_operation`).
    pub hard_gas_limit_per_operation: u64,
    /// Most gas one block may use (`hard_gas_limit_per_block`).
    pub hard_gas_limit_per_block: u64,
    /// Most storage one operation may declare (`hard_storage_limit_per_operation`).
    pub hard_storage_limit_per_operation: u64,
    /// `MIN_BLOCK_TIME`, seconds (`minimal_block_delay`).
    pub minimal_block_delay_seconds: u64,
}

/// Octez's mainnet (and mockup) values of [`Constants`].
pub const MOCKUP_CONSTANTS: Constants = Constants {
    cost_per_byte_mutez: 250,
    origination_size_bytes: 257,
    hard_gas_limit_per_operation: 1_040_000,
    hard_gas_limit_per_block: 1_040_000,
    hard_storage_limit_per_operation: 60_000,
    minimal_block_delay_seconds: 6,
};
