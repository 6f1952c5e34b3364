//! Sizes and limits of the Solana wire formats, each citing its source. Derived limits are computed
//! from the ones they follow from, so they cannot drift apart.
//!
//! Sources: `solana-packet` (`PACKET_DATA_SIZE`), `solana-message` (`MESSAGE_VERSION_PREFIX`,
//! `v1::MAX_TRANSACTION_SIZE`), `agave-transaction-view` 6.1.0 (the per-packet count limits), and
//! SIMD-0160 / SIMD-0296 / SIMD-0385 / SIMD-0406 in `../shared/specs`.

/// Bytes in an ed25519 signature.
pub const SIGNATURE_BYTES: usize = 64;
/// Bytes in an account address (an ed25519 public key or a program-derived address).
pub const ADDRESS_BYTES: usize = 32;
/// Bytes in a blockhash (v1: the lifetime specifier).
pub const HASH_BYTES: usize = 32;

/// Largest legacy or v0 transaction: an IPv6 minimum MTU of 1280 bytes less a 40-byte IPv6 header
/// and an 8-byte UDP header (`solana_packet::PACKET_DATA_SIZE`).
pub const PACKET_DATA_SIZE: usize = 1280 - 40 - 8;
/// Largest v1 transaction (SIMD-0296, SIMD-0385 "Transaction Constraints";
/// `solana_message::v1::MAX_TRANSACTION_SIZE`).
pub const MAX_TRANSACTION_SIZE_V1: usize = 4096;

/// Top bit of the first message byte: set for versioned messages (`MESSAGE_VERSION_PREFIX`).
pub const MESSAGE_VERSION_PREFIX: u8 = 0x80;
/// The v1 version byte (SIMD-0385 "VersionByte": 129).
pub const V1_VERSION_BYTE: u8 = MESSAGE_VERSION_PREFIX | 1;

/// Most signatures a packet can carry: each needs a signature and a key
/// (agave-transaction-view `MAX_SIGNATURES_PER_PACKET`; also the v1 limit of SIMD-0385).
pub const MAX_SIGNATURES_PER_PACKET: u8 =
    (PACKET_DATA_SIZE / (SIGNATURE_BYTES + ADDRESS_BYTES)) as u8;
/// Most static keys a legacy or v0 packet can carry (agave-transaction-view
/// `LEGACY_OR_V0_MAX_STATIC_ACCOUNTS_PER_PACKET`).
pub const MAX_STATIC_ACCOUNTS_PER_PACKET: u8 = (PACKET_DATA_SIZE / ADDRESS_BYTES) as u8;

/// Smallest valid address table lookup: a key, two one-byte counts and one index
/// (agave-transaction-view `MIN_SIZED_ATL`).
pub const MIN_ADDRESS_TABLE_LOOKUP_BYTES: usize = ADDRESS_BYTES + 1 + 1 + 1;
/// Smallest v0 packet with lookups: one signature, prefix, header, one key, blockhash, zero
/// instructions and the lookup count (agave-transaction-view `MIN_SIZED_PACKET_WITH_ATLS`).
pub const MIN_PACKET_WITH_ADDRESS_TABLE_LOOKUPS_BYTES: usize =
    1 + SIGNATURE_BYTES + 1 + 3 + 1 + ADDRESS_BYTES + HASH_BYTES + 1 + 1;
/// Most address table lookups a packet can carry (agave-transaction-view `MAX_ATLS_PER_PACKET`).
pub const MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET: u8 = ((PACKET_DATA_SIZE
    - MIN_PACKET_WITH_ADDRESS_TABLE_LOOKUPS_BYTES)
    / MIN_ADDRESS_TABLE_LOOKUP_BYTES) as u8;

/// Most accounts a legacy or v0 transaction may reference: account indexes are u8
/// (agave-transaction-view `sanitize_account_access`).
pub const MAX_ACCOUNTS_LEGACY_AND_V0: u16 = 256;
/// Most addresses a v1 transaction may reference (SIMD-0385 "Transaction Constraints").
pub const MAX_ACCOUNTS_V1: u16 = 64;

/// Bytes of the v1 fixed prefix: version, 3 header bytes, config mask, lifetime specifier,
/// instruction count and address count (SIMD-0385).
pub const V1_FIXED_PREFIX_BYTES: usize = 1 + 3 + 4 + HASH_BYTES + 1 + 1;
/// Bytes of one v1 instruction header `(u8 program, u8 account count, u16 LE data length)`.
pub const V1_INSTRUCTION_HEADER_BYTES: usize = 4;
/// Bytes of one v1 config value word.
pub const V1_CONFIG_VALUE_BYTES: usize = 4;
/// The config mask bits SIMD-0385 defines (priority fee 0-1, compute-unit limit 2,
/// loaded-accounts-data-size limit 3, heap size 4).
pub const V1_ALLOWED_CONFIG_MASK: u32 = 0b1_1111;

/// The upgradeable BPF loader's address (`BPFLoaderUpgradeab1e11111111111111111111111`): a program
/// account may be writable only when this loader is among the transaction's accounts.
pub const BPF_LOADER_UPGRADEABLE_ID: [u8; ADDRESS_BYTES] = [
    2, 168, 246, 145, 78, 136, 161, 176, 226, 16, 21, 62, 247, 99, 174, 43, 0, 194, 185, 61, 22,
    193, 36, 210, 192, 83, 122, 16, 4, 128, 0, 0,
];

const _: () = assert!(MAX_SIGNATURES_PER_PACKET == 12);
const _: () = assert!(MAX_STATIC_ACCOUNTS_PER_PACKET == 38);
const _: () = assert!(MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET == 31);
const _: () = assert!(V1_FIXED_PREFIX_BYTES == 42);
// Counts read as one byte must not have the compact-u16 continuation bit.
const _: () = assert!(MAX_SIGNATURES_PER_PACKET & MESSAGE_VERSION_PREFIX == 0);
const _: () = assert!(MAX_STATIC_ACCOUNTS_PER_PACKET & MESSAGE_VERSION_PREFIX == 0);
const _: () = assert!(MAX_ADDRESS_TABLE_LOOKUPS_PER_PACKET & MESSAGE_VERSION_PREFIX == 0);
