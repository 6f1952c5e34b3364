//! Michelson primitive names and their binary tags.
//!
//! The binary Micheline format writes a primitive as one byte, its index in the protocol's
//! primitive table (`michelson_v1_primitives.ml`, in order of addition). Text and JSON Micheline
//! accept any identifier; names outside the table (TZT's `Stack_elt`, `input`, ...) are kept as
//! [`PrimName::Other`] and cannot be written in binary.

macro_rules! primitives {
    ($($variant:ident = $name:literal,)*) => {
        /// A primitive of the Michelson table; the discriminant is its binary tag.
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Prim {
            $($variant,)*
        }

        /// Every primitive, indexed by binary tag.
        pub const ALL_PRIMS: &[Prim] = &[$(Prim::$variant,)*];

        impl Prim {
            /// The primitive's source name, e.g. `"PUSH"`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Prim::$variant => $name,)*
                }
            }

            /// The primitive named `name`, if it is in the table.
            pub fn from_name(name: &str) -> Option<Prim> {
                // An open-addressing hash table built once: a `match` on 158 string literals (or
                // a binary search) compares names one by one, which dominated the text parser's
                // profile; here one hash and usually one comparison suffice.
                static TABLE: std::sync::OnceLock<[u8; NAME_TABLE_SIZE]> =
                    std::sync::OnceLock::new();
                let table = TABLE.get_or_init(|| {
                    let mut table = [EMPTY_SLOT; NAME_TABLE_SIZE];
                    for prim in ALL_PRIMS {
                        let mut slot = name_hash(prim.name()) & (NAME_TABLE_SIZE - 1);
                        while table[slot] != EMPTY_SLOT {
                            slot = (slot + 1) & (NAME_TABLE_SIZE - 1);
                        }
                        table[slot] = prim.tag();
                    }
                    table
                });
                let mut slot = name_hash(name) & (NAME_TABLE_SIZE - 1);
                loop {
                    let prim = Prim::from_tag(table[slot])?;
                    if prim.name() == name {
                        return Some(prim);
                    }
                    slot = (slot + 1) & (NAME_TABLE_SIZE - 1);
                }
            }
        }
    };
}

primitives! {
    K_parameter = "parameter",
    K_storage = "storage",
    K_code = "code",
    D_False = "False",
    D_Elt = "Elt",
    D_Left = "Left",
    D_None = "None",
    D_Pair = "Pair",
    D_Right = "Right",
    D_Some = "Some",
    D_True = "True",
    D_Unit = "Unit",
    I_PACK = "PACK",
    I_UNPACK = "UNPACK",
    I_BLAKE2B = "BLAKE2B",
    I_SHA256 = "SHA256",
    I_SHA512 = "SHA512",
    I_ABS = "ABS",
    I_ADD = "ADD",
    I_AMOUNT = "AMOUNT",
    I_AND = "AND",
    I_BALANCE = "BALANCE",
    I_CAR = "CAR",
    I_CDR = "CDR",
    I_CHECK_SIGNATURE = "CHECK_SIGNATURE",
    I_COMPARE = "COMPARE",
    I_CONCAT = "CONCAT",
    I_CONS = "CONS",
    I_CREATE_ACCOUNT = "CREATE_ACCOUNT",
    I_CREATE_CONTRACT = "CREATE_CONTRACT",
    I_IMPLICIT_ACCOUNT = "IMPLICIT_ACCOUNT",
    I_DIP = "DIP",
    I_DROP = "DROP",
    I_DUP = "DUP",
    I_EDIV = "EDIV",
    I_EMPTY_MAP = "EMPTY_MAP",
    I_EMPTY_SET = "EMPTY_SET",
    I_EQ = "EQ",
    I_EXEC = "EXEC",
    I_FAILWITH = "FAILWITH",
    I_GE = "GE",
    I_GET = "GET",
    I_GT = "GT",
    I_HASH_KEY = "HASH_KEY",
    I_IF = "IF",
    I_IF_CONS = "IF_CONS",
    I_IF_LEFT = "IF_LEFT",
    I_IF_NONE = "IF_NONE",
    I_INT = "INT",
    I_LAMBDA = "LAMBDA",
    I_LE = "LE",
    I_LEFT = "LEFT",
    I_LOOP = "LOOP",
    I_LSL = "LSL",
    I_LSR = "LSR",
    I_LT = "LT",
    I_MAP = "MAP",
    I_MEM = "MEM",
    I_MUL = "MUL",
    I_NEG = "NEG",
    I_NEQ = "NEQ",
    I_NIL = "NIL",
    I_NONE = "NONE",
    I_NOT = "NOT",
    I_NOW = "NOW",
    I_OR = "OR",
    I_PAIR = "PAIR",
    I_PUSH = "PUSH",
    I_RIGHT = "RIGHT",
    I_SIZE = "SIZE",
    I_SOME = "SOME",
    I_SOURCE = "SOURCE",
    I_SENDER = "SENDER",
    I_SELF = "SELF",
    I_STEPS_TO_QUOTA = "STEPS_TO_QUOTA",
    I_SUB = "SUB",
    I_SWAP = "SWAP",
    I_TRANSFER_TOKENS = "TRANSFER_TOKENS",
    I_SET_DELEGATE = "SET_DELEGATE",
    I_UNIT = "UNIT",
    I_UPDATE = "UPDATE",
    I_XOR = "XOR",
    I_ITER = "ITER",
    I_LOOP_LEFT = "LOOP_LEFT",
    I_ADDRESS = "ADDRESS",
    I_CONTRACT = "CONTRACT",
    I_ISNAT = "ISNAT",
    I_CAST = "CAST",
    I_RENAME = "RENAME",
    T_bool = "bool",
    T_contract = "contract",
    T_int = "int",
    T_key = "key",
    T_key_hash = "key_hash",
    T_lambda = "lambda",
    T_list = "list",
    T_map = "map",
    T_big_map = "big_map",
    T_nat = "nat",
    T_option = "option",
    T_or = "or",
    T_pair = "pair",
    T_set = "set",
    T_signature = "signature",
    T_string = "string",
    T_bytes = "bytes",
    T_mutez = "mutez",
    T_timestamp = "timestamp",
    T_unit = "unit",
    T_operation = "operation",
    T_address = "address",
    I_SLICE = "SLICE",
    I_DIG = "DIG",
    I_DUG = "DUG",
    I_EMPTY_BIG_MAP = "EMPTY_BIG_MAP",
    I_APPLY = "APPLY",
    T_chain_id = "chain_id",
    I_CHAIN_ID = "CHAIN_ID",
    I_LEVEL = "LEVEL",
    I_SELF_ADDRESS = "SELF_ADDRESS",
    T_never = "never",
    I_NEVER = "NEVER",
    I_UNPAIR = "UNPAIR",
    I_VOTING_POWER = "VOTING_POWER",
    I_TOTAL_VOTING_POWER = "TOTAL_VOTING_POWER",
    I_KECCAK = "KECCAK",
    I_SHA3 = "SHA3",
    I_PAIRING_CHECK = "PAIRING_CHECK",
    T_bls12_381_g1 = "bls12_381_g1",
    T_bls12_381_g2 = "bls12_381_g2",
    T_bls12_381_fr = "bls12_381_fr",
    T_sapling_state = "sapling_state",
    T_sapling_transaction_deprecated = "sapling_transaction_deprecated",
    I_SAPLING_EMPTY_STATE = "SAPLING_EMPTY_STATE",
    I_SAPLING_VERIFY_UPDATE = "SAPLING_VERIFY_UPDATE",
    T_ticket = "ticket",
    I_TICKET_DEPRECATED = "TICKET_DEPRECATED",
    I_READ_TICKET = "READ_TICKET",
    I_SPLIT_TICKET = "SPLIT_TICKET",
    I_JOIN_TICKETS = "JOIN_TICKETS",
    I_GET_AND_UPDATE = "GET_AND_UPDATE",
    T_chest = "chest",
    T_chest_key = "chest_key",
    I_OPEN_CHEST = "OPEN_CHEST",
    I_VIEW = "VIEW",
    K_view = "view",
    H_constant = "constant",
    I_SUB_MUTEZ = "SUB_MUTEZ",
    T_tx_rollup_l2_address = "tx_rollup_l2_address",
    I_MIN_BLOCK_TIME = "MIN_BLOCK_TIME",
    T_sapling_transaction = "sapling_transaction",
    I_EMIT = "EMIT",
    D_Lambda_rec = "Lambda_rec",
    I_LAMBDA_REC = "LAMBDA_REC",
    I_TICKET = "TICKET",
    I_BYTES = "BYTES",
    I_NAT = "NAT",
    D_Ticket = "Ticket",
    I_IS_IMPLICIT_ACCOUNT = "IS_IMPLICIT_ACCOUNT",
    I_INDEX_ADDRESS = "INDEX_ADDRESS",
    I_GET_ADDRESS_INDEX = "GET_ADDRESS_INDEX",
}

/// Slots of the name lookup table: a power of two above twice the primitive count, so probes stay
/// short and an empty slot always ends a probe.
const NAME_TABLE_SIZE: usize = 512;

/// Marks an empty slot of the name table (no primitive has this tag).
const EMPTY_SLOT: u8 = u8::MAX;

/// FNV-1a over the name's bytes.
fn name_hash(name: &str) -> usize {
    let mut hash: u32 = 0x811c_9dc5;
    for &byte in name.as_bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash as usize
}

impl Prim {
    /// The primitive's binary tag (its index in the table).
    pub const fn tag(self) -> u8 {
        self as u8
    }

    /// The primitive whose binary tag is `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<Prim> {
        ALL_PRIMS.get(usize::from(tag)).copied()
    }
}

/// The name of a primitive application: a table primitive, or any other identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimName {
    /// A primitive of the Michelson table.
    Known(Prim),
    /// Any other identifier (only text and JSON forms can carry it).
    Other(Box<str>),
}

impl PrimName {
    /// The name for `name`: the table primitive when there is one.
    pub fn new(name: &str) -> PrimName {
        match Prim::from_name(name) {
            Some(prim) => PrimName::Known(prim),
            None => PrimName::Other(name.into()),
        }
    }

    /// The source text of the name.
    pub fn as_str(&self) -> &str {
        match self {
            PrimName::Known(prim) => prim.name(),
            PrimName::Other(name) => name,
        }
    }

    /// The table primitive, if this is one.
    pub fn known(&self) -> Option<Prim> {
        match self {
            PrimName::Known(prim) => Some(*prim),
            PrimName::Other(_) => None,
        }
    }
}

impl From<Prim> for PrimName {
    fn from(prim: Prim) -> Self {
        PrimName::Known(prim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for (index, prim) in ALL_PRIMS.iter().enumerate() {
            assert_eq!(usize::from(prim.tag()), index);
            assert_eq!(Prim::from_tag(prim.tag()), Some(*prim));
            assert_eq!(Prim::from_name(prim.name()), Some(*prim));
        }
        assert_eq!(Prim::I_PACK.tag(), 12);
        assert_eq!(Prim::D_Pair.tag(), 7);
        assert_eq!(Prim::T_address.tag(), 110);
        assert_eq!(Prim::I_NAT.tag(), 156);
        // Tags seen in packed data everywhere: `PUSH int 0` is 0743035b00, `nat` is 0x62.
        assert_eq!(Prim::D_Unit.tag(), 0x0b);
        assert_eq!(Prim::I_DROP.tag(), 0x20);
        assert_eq!(Prim::I_PUSH.tag(), 0x43);
        assert_eq!(Prim::T_int.tag(), 0x5b);
        assert_eq!(Prim::T_nat.tag(), 0x62);
        assert_eq!(Prim::T_unit.tag(), 0x6c);
        assert_eq!(Prim::D_Ticket.tag(), 157);
        // The newest instructions, used by the recorded protocol's traces.
        assert_eq!(Prim::I_IS_IMPLICIT_ACCOUNT.tag(), 158);
        assert_eq!(Prim::I_GET_ADDRESS_INDEX.tag(), 160);
        assert_eq!(ALL_PRIMS.len(), 161);
        assert_eq!(Prim::from_name("Stack_elt"), None);
        assert_eq!(Prim::from_name(""), None);
        assert_eq!(Prim::from_name("pair"), Some(Prim::T_pair));
        assert_eq!(Prim::from_name("PAIR"), Some(Prim::I_PAIR));
    }
}
