//! Fixed-size hashes with one base58check prefix each: chain ids, block, operation, protocol,
//! script-expression and context hashes, originated contract hashes (`KT1`) and smart rollup
//! addresses (`sr1`). Their binary form (PACK, optimized Michelson form) is the raw hash bytes.
//!
//! Any bytes of the right size are a valid hash: constructors only check sizes and base58check.

use std::fmt;
use std::str::FromStr;

use crate::base58::{self, Prefix};
use crate::error::CryptoError;

macro_rules! fixed_hash {
    ($(#[$doc:meta])* $name:ident, $prefix:path, $size:expr, $what:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name([u8; $size]);

        impl $name {
            /// The size of the binary form in bytes.
            pub const SIZE_BYTES: usize = $size;
            /// The base58check prefix of the text form.
            pub const PREFIX: Prefix = $prefix;

            /// Wraps raw hash bytes.
            pub const fn new(bytes: [u8; $size]) -> Self {
                Self(bytes)
            }

            /// Reads the binary form: exactly [`Self::SIZE_BYTES`] bytes.
            pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
                <[u8; $size]>::try_from(bytes)
                    .map(Self)
                    .map_err(|_| CryptoError::length($what, $size, bytes.len()))
            }

            /// Reads the base58check text form.
            pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
                let decoded = base58::decode_check_raw(text)
                    .map_err(|error| CryptoError::base58($what, error))?;
                let (_, payload) = base58::split_prefix(&decoded, &[$prefix])
                    .map_err(|error| CryptoError::base58($what, error))?;
                Self::try_from_bytes(payload)
            }

            /// The base58check text form.
            pub fn to_b58check(&self) -> String {
                base58::encode_check($prefix, &self.0)
            }

            /// The binary form.
            pub fn as_bytes(&self) -> &[u8; $size] {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_b58check())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.to_b58check())
            }
        }

        impl FromStr for $name {
            type Err = CryptoError;

            fn from_str(text: &str) -> Result<Self, CryptoError> {
                Self::from_b58check(text)
            }
        }
    };
}

fixed_hash!(
    /// A chain identifier (`Net...`, 4 bytes), Michelson's `chain_id`.
    ChainId, base58::CHAIN_ID, 4, "chain id"
);
fixed_hash!(
    /// A block hash (`B...`, 32 bytes).
    BlockHash, base58::BLOCK_HASH, 32, "block hash"
);
fixed_hash!(
    /// An operation hash (`o...`, 32 bytes).
    OperationHash, base58::OPERATION_HASH, 32, "operation hash"
);
fixed_hash!(
    /// A protocol hash (`P...`, 32 bytes).
    ProtocolHash, base58::PROTOCOL_HASH, 32, "protocol hash"
);
fixed_hash!(
    /// A script-expression hash (`expr...`, 32 bytes): blake2b-256 of PACKed data, the key of a
    /// big map entry.
    ScriptExprHash, base58::SCRIPT_EXPR_HASH, 32, "script expression hash"
);
fixed_hash!(
    /// A context hash (`Co...`, 32 bytes).
    ContextHash, base58::CONTEXT_HASH, 32, "context hash"
);
fixed_hash!(
    /// An originated contract hash (`KT1...`, 20 bytes).
    ContractHash, base58::CONTRACT_HASH, 20, "contract hash"
);
fixed_hash!(
    /// A smart rollup address (`sr1...`, 20 bytes).
    SmartRollupAddress, base58::SMART_ROLLUP_ADDRESS, 20, "smart rollup address"
);

impl ScriptExprHash {
    /// The hash of already PACKed bytes (`0x05 ‖ binary Micheline`).
    pub fn of_packed(packed: &[u8]) -> Self {
        Self(crate::hash::blake2b_256(packed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base58::Base58Error;

    #[test]
    fn chain_id_from_tzt_pack_vector() {
        // pack_chainid_00.tzt: PACK "NetXyuzvDo2Ugzb" = 0x050a00000004f49af95b.
        let Some(path) = kestrel_testdata::require("tzt/pack_chainid_00.tzt", "chain_id") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap();
        let chain_id = ChainId::from_b58check("NetXyuzvDo2Ugzb").unwrap();
        assert!(text.contains("\"NetXyuzvDo2Ugzb\""));
        assert!(text.contains(&format!(
            "0x050a00000004{}",
            hex::encode(chain_id.as_bytes())
        )));
        assert_eq!(chain_id.to_string(), "NetXyuzvDo2Ugzb");
    }

    /// Every base58 word of `length` characters starting with `prefix` in `text`.
    fn words<'a>(text: &'a str, prefix: &str, length: usize) -> Vec<&'a str> {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|word| word.starts_with(prefix) && word.len() == length)
            .collect()
    }

    fn check_round_trip<T: FromStr<Err = CryptoError> + fmt::Display>(file: &str, word: &str) {
        let value: T = word
            .parse()
            .unwrap_or_else(|error| panic!("{file}: {word}: {error}"));
        assert_eq!(value.to_string(), word, "{file}");
    }

    #[test]
    fn real_hashes_in_test_data_round_trip() {
        type Check = fn(&str, &str);
        let cases: [(&str, &str, usize, Check); 4] = [
            (
                "michelson/mini_scenarios/constant_unit.tz",
                "expr",
                54,
                check_round_trip::<ScriptExprHash>,
            ),
            (
                "context/nodes.json",
                "Co",
                52,
                check_round_trip::<ContextHash>,
            ),
            (
                "michelson-regression/opcodes/chain_id_store--storage921624073--input125992234.out",
                "Net",
                15,
                check_round_trip::<ChainId>,
            ),
            (
                "michelson-regression/opcodes/chain_id_store--storage921624073--input125992234.out",
                "Proto",
                51,
                check_round_trip::<ProtocolHash>,
            ),
        ];
        for (file, prefix, length, check) in cases {
            let Some(text) = crate::testing::read(file, "real_hashes_in_test_data_round_trip")
            else {
                return;
            };
            let found = words(&text, prefix, length);
            assert!(!found.is_empty(), "{file}: no {prefix} hash");
            for word in found.iter().take(200) {
                check(file, word);
            }
        }
    }

    #[test]
    fn hashes_round_trip_through_text() {
        for bytes in [[0u8; 32], [0xff; 32], [7; 32]] {
            for text in [
                BlockHash::new(bytes).to_b58check(),
                OperationHash::new(bytes).to_b58check(),
                ProtocolHash::new(bytes).to_b58check(),
                ContextHash::new(bytes).to_b58check(),
                ScriptExprHash::new(bytes).to_b58check(),
            ] {
                let first = text.chars().next().unwrap();
                assert!("BoPCe".contains(first), "{text}");
            }
            assert_eq!(
                BlockHash::from_b58check(&BlockHash::new(bytes).to_b58check()),
                Ok(BlockHash::new(bytes))
            );
        }
    }

    #[test]
    fn rejections_carry_the_rule() {
        assert_eq!(
            BlockHash::from_b58check("NetXyuzvDo2Ugzb"),
            Err(CryptoError::Base58 {
                what: "block hash",
                error: Base58Error::WrongPrefix
            })
        );
        assert_eq!(
            ChainId::try_from_bytes(&[1, 2, 3]),
            Err(CryptoError::WrongLength {
                what: "chain id",
                expected: 4,
                found: 3
            })
        );
        assert!(matches!(
            ChainId::from_b58check("NetXyuzvDo2Ugzc"),
            Err(CryptoError::Base58 {
                error: Base58Error::InvalidChecksum,
                ..
            })
        ));
        assert!(matches!(
            ChainId::from_b58check("Net0"),
            Err(CryptoError::Base58 {
                error: Base58Error::InvalidCharacter,
                ..
            })
        ));
    }
}
