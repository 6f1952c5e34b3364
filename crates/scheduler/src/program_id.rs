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
    const MAYBE_BUILTIN: [bool; 256] = {
        let mut table = [false; 256];
        let mut index = 0;
        while index < BUILTINS.len() {
            table[BUILTINS[index][0] as usize] = true;
            index += 1;
        }
        table
    };
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
    }

    #[test]
    fn builtins_are_recognized() {
        for builtin in BUILTINS {
            assert!(is_builtin(&builtin));
        }
        assert!(!is_builtin(&SECP256R1));
        assert!(!is_builtin(&[7; 32]));
    }
}
