//! Addresses of the programs the compute budget, the cost model and the fee rules single out.
//!
//! Source: `solana-sdk-ids` 3.1; the builtin list is `solana-builtins-default-costs` 4.0.0
//! (`NON_MIGRATING_BUILTINS_COSTS` and `MIGRATING_BUILTINS_COSTS`: vote migrates only under a
//! feature that mainnet has not activated, so it counts as a builtin). A test checks each against
//! its base58 name.

use kestrel_txview::Address;

/// `ComputeBudget111111111111111111111111111111`.
pub const COMPUTE_BUDGET: Address = [
    3, 6, 70, 111, 229, 33, 23, 50, 255, 236, 173, 186, 114, 195, 155, 231, 188, 140, 229, 187,
    197, 247, 18, 107, 44, 67, 155, 58, 64, 0, 0, 0,
];
/// `11111111111111111111111111111111` (the system program).
pub const SYSTEM: Address = [0; 32];
/// `Vote111111111111111111111111111111111111111`.
pub const VOTE: Address = [
    7, 97, 72, 29, 53, 116, 116, 187, 124, 77, 118, 36, 235, 211, 189, 179, 216, 53, 94, 115, 209,
    16, 67, 252, 13, 163, 83, 128, 0, 0, 0, 0,
];
/// `BPFLoaderUpgradeab1e11111111111111111111111`.
pub const BPF_LOADER_UPGRADEABLE: Address = kestrel_txview::limits::BPF_LOADER_UPGRADEABLE_ID;
/// `BPFLoader1111111111111111111111111111111111` (deprecated loader).
pub const BPF_LOADER_DEPRECATED: Address = [
    2, 168, 246, 145, 78, 136, 161, 107, 189, 35, 149, 133, 95, 100, 4, 217, 180, 244, 86, 183,
    130, 27, 176, 20, 87, 73, 66, 140, 0, 0, 0, 0,
];
/// `BPFLoader2111111111111111111111111111111111`.
pub const BPF_LOADER: Address = [
    2, 168, 246, 145, 78, 136, 161, 110, 57, 90, 225, 40, 148, 143, 250, 105, 86, 147, 55, 104, 24,
    221, 71, 67, 82, 33, 243, 198, 0, 0, 0, 0,
];
/// `LoaderV411111111111111111111111111111111111`.
pub const LOADER_V4: Address = [
    5, 18, 180, 17, 81, 81, 227, 122, 173, 10, 139, 197, 211, 136, 46, 123, 127, 218, 76, 243, 210,
    192, 40, 200, 207, 131, 54, 24, 0, 0, 0, 0,
];
/// `KeccakSecp256k11111111111111111111111111111` (secp256k1 precompile).
pub const SECP256K1: Address = [
    4, 198, 252, 32, 240, 80, 204, 240, 85, 132, 215, 33, 28, 159, 140, 245, 158, 193, 71, 133,
    187, 22, 106, 30, 40, 48, 232, 18, 32, 0, 0, 0,
];
/// `Ed25519SigVerify111111111111111111111111111` (ed25519 precompile).
pub const ED25519: Address = [
    3, 125, 70, 214, 124, 147, 251, 190, 18, 249, 66, 143, 131, 141, 64, 255, 5, 112, 116, 73, 39,
    244, 138, 100, 252, 202, 112, 68, 128, 0, 0, 0,
];
/// `Secp256r1SigVerify1111111111111111111111111` (secp256r1 precompile, SIMD-0075).
pub const SECP256R1: Address = [
    6, 146, 13, 236, 47, 234, 113, 181, 183, 35, 129, 77, 116, 45, 169, 3, 28, 131, 231, 95, 219,
    121, 93, 86, 142, 117, 71, 128, 32, 0, 0, 0,
];

/// `AddressLookupTab1e1111111111111111111111111`.
pub const ADDRESS_LOOKUP_TABLE: Address = [
    2, 119, 166, 175, 151, 51, 155, 122, 200, 141, 24, 146, 201, 4, 70, 245, 0, 2, 48, 146, 102,
    246, 46, 83, 193, 24, 36, 73, 130, 0, 0, 0,
];
/// `Config1111111111111111111111111111111111111`.
pub const CONFIG: Address = [
    3, 6, 74, 163, 0, 47, 116, 220, 200, 110, 67, 49, 15, 12, 5, 42, 248, 197, 218, 39, 246, 16,
    64, 25, 163, 35, 239, 160, 0, 0, 0, 0,
];
/// `Feature111111111111111111111111111111111111`.
pub const FEATURE: Address = [
    3, 192, 160, 205, 203, 6, 210, 218, 239, 174, 130, 209, 111, 238, 122, 207, 97, 236, 115, 123,
    35, 72, 27, 33, 148, 106, 118, 112, 0, 0, 0, 0,
];
/// `StakeConfig11111111111111111111111111111111`.
pub const STAKE_CONFIG: Address = [
    6, 161, 216, 23, 165, 2, 5, 11, 104, 7, 145, 230, 206, 109, 184, 142, 30, 91, 113, 80, 246, 31,
    198, 121, 10, 78, 180, 209, 0, 0, 0, 0,
];
/// `Stake11111111111111111111111111111111111111`.
pub const STAKE: Address = [
    6, 161, 216, 23, 145, 55, 84, 42, 152, 52, 55, 189, 254, 42, 122, 178, 85, 127, 83, 92, 138,
    120, 114, 43, 104, 164, 157, 192, 0, 0, 0, 0,
];
/// `ZkE1Gama1Proof11111111111111111111111111111`.
pub const ZK_ELGAMAL_PROOF: Address = [
    8, 99, 117, 172, 226, 174, 234, 40, 26, 107, 55, 77, 104, 27, 167, 106, 83, 204, 246, 56, 192,
    116, 85, 147, 108, 5, 208, 101, 64, 0, 0, 0,
];
/// `ZkTokenProof1111111111111111111111111111111`.
pub const ZK_TOKEN_PROOF: Address = [
    8, 99, 186, 141, 217, 196, 194, 251, 23, 74, 5, 203, 162, 126, 42, 44, 214, 35, 87, 61, 121,
    233, 11, 53, 181, 121, 252, 13, 0, 0, 0, 0,
];
/// `SysvarC1ock11111111111111111111111111111111`.
pub const SYSVAR_CLOCK: Address = [
    6, 167, 213, 23, 24, 199, 116, 201, 40, 86, 99, 152, 105, 29, 94, 182, 139, 94, 184, 163, 155,
    75, 109, 92, 115, 85, 91, 33, 0, 0, 0, 0,
];
/// `SysvarEpochRewards1111111111111111111111111`.
pub const SYSVAR_EPOCH_REWARDS: Address = [
    6, 167, 213, 23, 24, 220, 63, 238, 2, 165, 88, 191, 131, 206, 102, 225, 68, 66, 42, 28, 52,
    149, 11, 39, 193, 134, 155, 90, 156, 0, 0, 0,
];
/// `SysvarEpochSchedu1e111111111111111111111111`.
pub const SYSVAR_EPOCH_SCHEDULE: Address = [
    6, 167, 213, 23, 24, 220, 63, 238, 2, 211, 228, 127, 1, 0, 248, 176, 84, 247, 148, 46, 96, 89,
    30, 63, 80, 135, 25, 168, 5, 0, 0, 0,
];
/// `SysvarFees111111111111111111111111111111111`.
pub const SYSVAR_FEES: Address = [
    6, 167, 213, 23, 24, 226, 90, 141, 131, 80, 60, 37, 26, 122, 240, 113, 38, 253, 114, 0, 223,
    111, 196, 237, 82, 106, 156, 144, 0, 0, 0, 0,
];
/// `Sysvar1nstructions1111111111111111111111111`.
pub const SYSVAR_INSTRUCTIONS: Address = [
    6, 167, 213, 23, 24, 123, 209, 102, 53, 218, 212, 4, 85, 253, 194, 192, 193, 36, 198, 143, 33,
    86, 117, 165, 219, 186, 203, 95, 8, 0, 0, 0,
];
/// `SysvarLastRestartS1ot1111111111111111111111`.
pub const SYSVAR_LAST_RESTART_SLOT: Address = [
    6, 167, 213, 23, 25, 6, 221, 225, 205, 63, 148, 125, 202, 180, 200, 244, 244, 245, 27, 173, 15,
    152, 19, 184, 0, 210, 137, 71, 31, 192, 0, 0,
];
/// `SysvarRecentB1ockHashes11111111111111111111`.
pub const SYSVAR_RECENT_BLOCKHASHES: Address = [
    6, 167, 213, 23, 25, 44, 86, 142, 224, 138, 132, 95, 115, 210, 151, 136, 207, 3, 92, 49, 69,
    178, 26, 179, 68, 216, 6, 46, 169, 64, 0, 0,
];
/// `SysvarRent111111111111111111111111111111111`.
pub const SYSVAR_RENT: Address = [
    6, 167, 213, 23, 25, 44, 92, 81, 33, 140, 201, 76, 61, 74, 241, 127, 88, 218, 238, 8, 155, 161,
    253, 68, 227, 219, 217, 138, 0, 0, 0, 0,
];
/// `SysvarRewards111111111111111111111111111111`.
pub const SYSVAR_REWARDS: Address = [
    6, 167, 213, 23, 25, 44, 97, 55, 206, 224, 146, 217, 182, 146, 62, 225, 204, 214, 25, 3, 250,
    130, 184, 161, 97, 145, 87, 141, 128, 0, 0, 0,
];
/// `SysvarS1otHashes111111111111111111111111111`.
pub const SYSVAR_SLOT_HASHES: Address = [
    6, 167, 213, 23, 25, 47, 10, 175, 198, 242, 101, 227, 251, 119, 204, 122, 218, 130, 197, 41,
    208, 190, 59, 19, 110, 45, 0, 85, 32, 0, 0, 0,
];
/// `SysvarS1otHistory11111111111111111111111111`.
pub const SYSVAR_SLOT_HISTORY: Address = [
    6, 167, 213, 23, 25, 47, 10, 175, 200, 117, 226, 225, 132, 87, 124, 80, 105, 207, 200, 70, 73,
    227, 235, 146, 120, 47, 149, 141, 72, 0, 0, 0,
];
/// `SysvarStakeHistory1111111111111111111111111`.
pub const SYSVAR_STAKE_HISTORY: Address = [
    6, 167, 213, 23, 25, 53, 132, 208, 254, 237, 155, 179, 67, 29, 19, 32, 107, 229, 68, 40, 27,
    87, 184, 86, 108, 197, 55, 95, 244, 0, 0, 0,
];
/// `NativeLoader1111111111111111111111111111111`.
pub const NATIVE_LOADER: Address = [
    5, 135, 132, 191, 20, 139, 164, 40, 47, 176, 18, 87, 72, 136, 169, 241, 83, 160, 125, 173, 247,
    101, 192, 69, 92, 154, 151, 3, 128, 0, 0, 0,
];
/// `Sysvar1111111111111111111111111111111111111`.
pub const SYSVAR: Address = [
    6, 167, 213, 23, 24, 117, 247, 41, 199, 61, 147, 64, 143, 33, 97, 32, 6, 126, 216, 140, 118,
    224, 140, 40, 127, 193, 148, 96, 0, 0, 0, 0,
];

/// Reserved account keys: never locked writable, whatever a transaction asks
/// (`solana-reserved-account-keys` 2.2.2 `RESERVED_ACCOUNTS`, with the keys pending on
/// `add_new_reserved_account_keys` and `enable_secp256r1_precompile`, both active on mainnet).
pub const RESERVED: [Address; 31] = [
    ADDRESS_LOOKUP_TABLE,
    BPF_LOADER,
    BPF_LOADER_DEPRECATED,
    BPF_LOADER_UPGRADEABLE,
    COMPUTE_BUDGET,
    CONFIG,
    ED25519,
    FEATURE,
    LOADER_V4,
    SECP256K1,
    SECP256R1,
    STAKE_CONFIG,
    STAKE,
    SYSTEM,
    VOTE,
    ZK_ELGAMAL_PROOF,
    ZK_TOKEN_PROOF,
    SYSVAR_CLOCK,
    SYSVAR_EPOCH_REWARDS,
    SYSVAR_EPOCH_SCHEDULE,
    SYSVAR_FEES,
    SYSVAR_INSTRUCTIONS,
    SYSVAR_LAST_RESTART_SLOT,
    SYSVAR_RECENT_BLOCKHASHES,
    SYSVAR_RENT,
    SYSVAR_REWARDS,
    SYSVAR_SLOT_HASHES,
    SYSVAR_SLOT_HISTORY,
    SYSVAR_STAKE_HISTORY,
    NATIVE_LOADER,
    SYSVAR,
];

/// A 256-entry table: whether some key of `keys` starts with that byte.
const fn first_bytes<const N: usize>(keys: &[Address; N]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut index = 0;
    while index < N {
        table[keys[index][0] as usize] = true;
        index += 1;
    }
    table
}

/// Whether `address` is a reserved account key (a first-byte table filters most addresses in one
/// load).
#[inline]
pub fn is_reserved(address: &Address) -> bool {
    const MAYBE_RESERVED: [bool; 256] = first_bytes(&RESERVED);
    MAYBE_RESERVED[usize::from(address[0])] && RESERVED.contains(address)
}

/// Programs whose instructions get the builtin default of 3,000 compute units.
pub const BUILTINS: [Address; 9] = [
    VOTE,
    SYSTEM,
    COMPUTE_BUDGET,
    BPF_LOADER_UPGRADEABLE,
    BPF_LOADER_DEPRECATED,
    BPF_LOADER,
    LOADER_V4,
    SECP256K1,
    ED25519,
];

/// Whether `program` is a builtin (a first-byte table filters most programs in one load, as
/// Agave's `MAYBE_BUILTIN_KEY` does).
#[inline]
pub fn is_builtin(program: &Address) -> bool {
    const MAYBE_BUILTIN: [bool; 256] = first_bytes(&BUILTINS);
    MAYBE_BUILTIN[usize::from(program[0])] && BUILTINS.contains(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(address: &Address, name: &str) {
        assert_eq!(bs58::encode(address).into_string(), name);
    }

    #[test]
    fn addresses_match_their_names() {
        check(
            &COMPUTE_BUDGET,
            "ComputeBudget111111111111111111111111111111",
        );
        check(&SYSTEM, "11111111111111111111111111111111");
        check(&VOTE, "Vote111111111111111111111111111111111111111");
        check(
            &BPF_LOADER_UPGRADEABLE,
            "BPFLoaderUpgradeab1e11111111111111111111111",
        );
        check(
            &BPF_LOADER_DEPRECATED,
            "BPFLoader1111111111111111111111111111111111",
        );
        check(&BPF_LOADER, "BPFLoader2111111111111111111111111111111111");
        check(&LOADER_V4, "LoaderV411111111111111111111111111111111111");
        check(&SECP256K1, "KeccakSecp256k11111111111111111111111111111");
        check(&ED25519, "Ed25519SigVerify111111111111111111111111111");
        check(&SECP256R1, "Secp256r1SigVerify1111111111111111111111111");
        check(
            &ADDRESS_LOOKUP_TABLE,
            "AddressLookupTab1e1111111111111111111111111",
        );
        check(&CONFIG, "Config1111111111111111111111111111111111111");
        check(&FEATURE, "Feature111111111111111111111111111111111111");
        check(&STAKE_CONFIG, "StakeConfig11111111111111111111111111111111");
        check(&STAKE, "Stake11111111111111111111111111111111111111");
        check(
            &ZK_ELGAMAL_PROOF,
            "ZkE1Gama1Proof11111111111111111111111111111",
        );
        check(
            &ZK_TOKEN_PROOF,
            "ZkTokenProof1111111111111111111111111111111",
        );
        check(&SYSVAR_CLOCK, "SysvarC1ock11111111111111111111111111111111");
        check(
            &SYSVAR_EPOCH_REWARDS,
            "SysvarEpochRewards1111111111111111111111111",
        );
        check(
            &SYSVAR_EPOCH_SCHEDULE,
            "SysvarEpochSchedu1e111111111111111111111111",
        );
        check(&SYSVAR_FEES, "SysvarFees111111111111111111111111111111111");
        check(
            &SYSVAR_INSTRUCTIONS,
            "Sysvar1nstructions1111111111111111111111111",
        );
        check(
            &SYSVAR_LAST_RESTART_SLOT,
            "SysvarLastRestartS1ot1111111111111111111111",
        );
        check(
            &SYSVAR_RECENT_BLOCKHASHES,
            "SysvarRecentB1ockHashes11111111111111111111",
        );
        check(&SYSVAR_RENT, "SysvarRent111111111111111111111111111111111");
        check(
            &SYSVAR_REWARDS,
            "SysvarRewards111111111111111111111111111111",
        );
        check(
            &SYSVAR_SLOT_HASHES,
            "SysvarS1otHashes111111111111111111111111111",
        );
        check(
            &SYSVAR_SLOT_HISTORY,
            "SysvarS1otHistory11111111111111111111111111",
        );
        check(
            &SYSVAR_STAKE_HISTORY,
            "SysvarStakeHistory1111111111111111111111111",
        );
        check(
            &NATIVE_LOADER,
            "NativeLoader1111111111111111111111111111111",
        );
        check(&SYSVAR, "Sysvar1111111111111111111111111111111111111");
    }

    #[test]
    fn builtins_are_recognized() {
        for builtin in BUILTINS {
            assert!(is_builtin(&builtin));
        }
        assert!(!is_builtin(&SECP256R1));
        assert!(!is_builtin(&[7; 32]));
    }

    #[test]
    fn reserved_keys_are_recognized() {
        for key in RESERVED {
            assert!(is_reserved(&key));
        }
        assert!(!is_reserved(&[7; 32]));
        assert!(!is_reserved(&[3; 32]));
    }
}
