//! Balance updates (`receipt_repr.ml`): which balance moved (an account, an accumulator, a
//! freezer, a mint or a burn — every category of Octez's `balance`), by how much (a signed
//! `int64` in mutez, or in staking pseudotokens for the two `staking` categories), and why
//! (`update_origin`).
//!
//! Binary: the balance's one-byte tag and fields, the change (`int64`), the origin's one-byte
//! tag (and an operation hash for delayed operations). JSON: `{"kind", "category", fields…,
//! "change", "origin"}` with the change as a decimal string.

use kestrel_crypto::{OperationHash, PublicKeyHash, SmartRollupAddress};
use kestrel_encoding::Reader;
use serde_json::{Map, Value};

use crate::crypto_fields::{BlindedPublicKeyHash, Contract};
use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::Field;
use crate::json::{self, write_string, ObjectWriter};

/// Whose frozen deposits (`Frozen_staker_repr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrozenStaker {
    /// One staker's share (tag 0).
    Single {
        /// The staker.
        contract: Contract,
        /// Its delegate.
        delegate: PublicKeyHash,
    },
    /// All the stakers of a delegate (tag 1).
    Shared {
        /// The delegate.
        delegate: PublicKeyHash,
    },
    /// The baker's own stake (tag 2).
    Baker(PublicKeyHash),
    /// The baker's edge on its stakers' rewards (tag 3).
    BakerEdge(PublicKeyHash),
}

/// Whose unstaked deposits (`Unstaked_frozen_staker_repr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnstakedStaker {
    /// One staker (tag 0).
    Single {
        /// The staker.
        contract: Contract,
        /// Its delegate.
        delegate: PublicKeyHash,
    },
    /// All the stakers of a delegate (tag 1).
    Shared {
        /// The delegate.
        delegate: PublicKeyHash,
    },
}

/// A balance that an update moves (`Receipt_repr.balance`), with its binary tag in comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Balance {
    /// An account's spendable balance (0, `contract`).
    Contract(Contract),
    /// The block's fee accumulator (2, `accumulator` / `block fees`).
    BlockFees,
    /// Frozen deposits (4, `freezer` / `deposits`).
    Deposits(FrozenStaker),
    /// Nonce revelation rewards (5, `minted`).
    NonceRevelationRewards,
    /// Attesting rewards (7, `minted`).
    AttestingRewards,
    /// Baking rewards (8, `minted`).
    BakingRewards,
    /// Baking bonuses (9, `minted`).
    BakingBonuses,
    /// Storage fees (11, `burned` / `storage fees`).
    StorageFees,
    /// Double signing punishments (12, `burned` / `punishments`).
    DoubleSigningPunishments,
    /// Attesting rewards lost (13, `burned`).
    LostAttestingRewards {
        /// The delegate that lost them.
        delegate: PublicKeyHash,
        /// Whether for insufficient participation.
        participation: bool,
        /// Whether for a missing nonce revelation.
        revelation: bool,
    },
    /// Liquidity baking subsidies (14, `minted` / `subsidy`).
    LiquidityBakingSubsidies,
    /// Burned tez (15, `burned` / `burned`).
    Burned,
    /// A fundraiser commitment (16, `commitment`).
    Commitments(BlindedPublicKeyHash),
    /// Bootstrap balances (17, `minted`).
    Bootstrap,
    /// Invoices (18, `minted`).
    Invoice,
    /// Initial commitments (19, `minted` / `commitment`).
    InitialCommitments,
    /// Minted tez (20, `minted` / `minted`).
    Minted,
    /// Smart rollup bonds (21, `freezer` / `bonds`).
    FrozenBonds {
        /// The bond's owner.
        contract: Contract,
        /// The rollup bonded (`Bond_id_repr`, its only case, tag 1).
        smart_rollup: SmartRollupAddress,
    },
    /// Smart rollup refutation punishments (24, `burned`).
    SmartRollupRefutationPunishments,
    /// Smart rollup refutation rewards (25, `minted`).
    SmartRollupRefutationRewards,
    /// Unstaked deposits (26, `freezer` / `unstaked_deposits`).
    UnstakedDeposits {
        /// Whose.
        staker: UnstakedStaker,
        /// The cycle of the unstake request.
        cycle: i32,
    },
    /// A delegator's staking pseudotokens (27, `staking` / `delegator_numerator`).
    StakingDelegatorNumerator(Contract),
    /// A delegate's total staking pseudotokens (28, `staking` / `delegate_denominator`).
    StakingDelegateDenominator(PublicKeyHash),
    /// DAL attesting rewards (29, `minted`).
    DalAttestingRewards,
    /// DAL attesting rewards lost (30, `burned`).
    LostDalAttestingRewards(PublicKeyHash),
    /// Staked-tez token deposits (31, `freezer` / `stez_deposits`).
    StezDeposits,
    /// Redeemed staked-tez token deposits (32, `freezer` / `stez_redeemed_deposits`).
    StezRedeemedDeposits {
        /// The redeemer.
        staker: Contract,
        /// The cycle of the request.
        cycle: i32,
    },
}

/// The field-less balances: tag, Octez's `kind` and `category`, and the value.
const PLAIN_BALANCES: [(u8, &str, &str, Balance); 17] = [
    (2, "accumulator", "block fees", Balance::BlockFees),
    (
        5,
        "minted",
        "nonce revelation rewards",
        Balance::NonceRevelationRewards,
    ),
    (7, "minted", "attesting rewards", Balance::AttestingRewards),
    (8, "minted", "baking rewards", Balance::BakingRewards),
    (9, "minted", "baking bonuses", Balance::BakingBonuses),
    (11, "burned", "storage fees", Balance::StorageFees),
    (
        12,
        "burned",
        "punishments",
        Balance::DoubleSigningPunishments,
    ),
    (14, "minted", "subsidy", Balance::LiquidityBakingSubsidies),
    (15, "burned", "burned", Balance::Burned),
    (17, "minted", "bootstrap", Balance::Bootstrap),
    (18, "minted", "invoice", Balance::Invoice),
    (19, "minted", "commitment", Balance::InitialCommitments),
    (20, "minted", "minted", Balance::Minted),
    (
        24,
        "burned",
        "smart_rollup_refutation_punishments",
        Balance::SmartRollupRefutationPunishments,
    ),
    (
        25,
        "minted",
        "smart_rollup_refutation_rewards",
        Balance::SmartRollupRefutationRewards,
    ),
    (
        29,
        "minted",
        "DAL attesting rewards",
        Balance::DalAttestingRewards,
    ),
    (31, "freezer", "stez_deposits", Balance::StezDeposits),
];

/// The binary tag of a contract's balance (its JSON has no `category`).
const CONTRACT_TAG: u8 = 0;

/// The tag, JSON `kind` and JSON `category` of the balances that carry fields (besides
/// contracts), which the binary and JSON readers dispatch on by tag.
const FIELD_BALANCES: [(u8, &str, &str); 9] = [
    (4, "freezer", "deposits"),
    (13, "burned", "lost attesting rewards"),
    (16, "commitment", "commitment"),
    (21, "freezer", "bonds"),
    (26, "freezer", "unstaked_deposits"),
    (27, "staking", "delegator_numerator"),
    (28, "staking", "delegate_denominator"),
    (30, "burned", "lost DAL attesting rewards"),
    (32, "freezer", "stez_redeemed_deposits"),
];

impl Balance {
    /// The binary tag, JSON `kind` and JSON `category` (`None` for contracts, which have none).
    pub fn tag_kind_category(&self) -> (u8, &'static str, Option<&'static str>) {
        if let Some((tag, kind, category, _)) =
            PLAIN_BALANCES.iter().find(|(_, _, _, plain)| plain == self)
        {
            return (*tag, kind, Some(category));
        }
        let tag = match self {
            Self::Contract(_) => return (CONTRACT_TAG, "contract", None),
            Self::Deposits(_) => 4,
            Self::LostAttestingRewards { .. } => 13,
            Self::Commitments(_) => 16,
            Self::FrozenBonds { .. } => 21,
            Self::UnstakedDeposits { .. } => 26,
            Self::StakingDelegatorNumerator(_) => 27,
            Self::StakingDelegateDenominator(_) => 28,
            Self::LostDalAttestingRewards(_) => 30,
            Self::StezRedeemedDeposits { .. } => 32,
            _ => unreachable!("every field-less balance is in PLAIN_BALANCES"),
        };
        let (_, kind, category) = FIELD_BALANCES
            .iter()
            .find(|entry| entry.0 == tag)
            .copied()
            .unwrap_or((tag, "", ""));
        (tag, kind, Some(category))
    }

    /// Whether the change is counted in staking pseudotokens rather than mutez.
    pub fn is_pseudotoken(&self) -> bool {
        matches!(
            self,
            Self::StakingDelegatorNumerator(_) | Self::StakingDelegateDenominator(_)
        )
    }
}

/// Why a balance moved (`update_origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UpdateOrigin {
    /// Applying a block (tag 0, `block`).
    #[default]
    Block,
    /// A protocol migration (tag 1, `migration`).
    Migration,
    /// The liquidity baking subsidy (tag 2, `subsidy`).
    Subsidy,
    /// A simulation (tag 3, `simulation`).
    Simulation,
    /// An operation applied later, such as a delayed slashing (tag 4, `delayed_operation`).
    DelayedOperation(OperationHash),
}

/// One balance update: the balance, the signed change, the origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BalanceUpdate {
    /// Which balance.
    pub balance: Balance,
    /// The change: mutez, or staking pseudotokens for the `staking` categories; negative for a
    /// debit.
    pub change: i64,
    /// Why.
    pub origin: UpdateOrigin,
}

fn unknown(what: &'static str, tag: u8, offset: usize) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::UnknownTag {
            what,
            tag: u16::from(tag),
        },
        offset,
    )
}

impl<'a> Field<'a> for FrozenStaker {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::Single {
                contract: Contract::read(reader)?,
                delegate: PublicKeyHash::read(reader)?,
            },
            1 => Self::Shared {
                delegate: PublicKeyHash::read(reader)?,
            },
            2 => Self::Baker(PublicKeyHash::read(reader)?),
            3 => Self::BakerEdge(PublicKeyHash::read(reader)?),
            tag => return Err(unknown("frozen staker", tag, offset)),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Single { contract, delegate } => {
                out.push(0);
                contract.write(out);
                delegate.write(out);
            }
            Self::Shared { delegate } => {
                out.push(1);
                delegate.write(out);
            }
            Self::Baker(baker) => {
                out.push(2);
                baker.write(out);
            }
            Self::BakerEdge(baker) => {
                out.push(3);
                baker.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        match self {
            Self::Single { contract, delegate } => {
                contract.write_json(object.key("contract"))?;
                delegate.write_json(object.key("delegate"))?;
            }
            Self::Shared { delegate } => delegate.write_json(object.key("delegate"))?,
            Self::Baker(baker) => baker.write_json(object.key("baker_own_stake"))?,
            Self::BakerEdge(baker) => baker.write_json(object.key("baker_edge"))?,
        }
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        if let Some(baker) = object.get("baker_own_stake") {
            return PublicKeyHash::read_json(baker, &json::child(path, "baker_own_stake"))
                .map(Self::Baker);
        }
        if let Some(baker) = object.get("baker_edge") {
            return PublicKeyHash::read_json(baker, &json::child(path, "baker_edge"))
                .map(Self::BakerEdge);
        }
        let delegate = read_member::<PublicKeyHash>(object, path, "delegate")?;
        match object.get("contract") {
            Some(contract) => Ok(Self::Single {
                contract: Contract::read_json(contract, &json::child(path, "contract"))?,
                delegate,
            }),
            None => Ok(Self::Shared { delegate }),
        }
    }
}

impl<'a> Field<'a> for UnstakedStaker {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::Single {
                contract: Contract::read(reader)?,
                delegate: PublicKeyHash::read(reader)?,
            },
            1 => Self::Shared {
                delegate: PublicKeyHash::read(reader)?,
            },
            tag => return Err(unknown("unstaked frozen staker", tag, offset)),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Single { contract, delegate } => {
                out.push(0);
                contract.write(out);
                delegate.write(out);
            }
            Self::Shared { delegate } => {
                out.push(1);
                delegate.write(out);
            }
        }
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        if let Self::Single { contract, .. } = self {
            contract.write_json(object.key("contract"))?;
        }
        let (Self::Single { delegate, .. } | Self::Shared { delegate }) = self;
        delegate.write_json(object.key("delegate"))?;
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        let delegate = read_member::<PublicKeyHash>(object, path, "delegate")?;
        match object.get("contract") {
            Some(contract) => Ok(Self::Single {
                contract: Contract::read_json(contract, &json::child(path, "contract"))?,
                delegate,
            }),
            None => Ok(Self::Shared { delegate }),
        }
    }
}

/// Reads the required member `name` of a JSON object.
pub(crate) fn read_member<'a, T: Field<'a>>(
    object: &Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<T, JsonError> {
    let value = object
        .get(name)
        .ok_or_else(|| JsonError::new(path, format!("missing field \"{name}\"")))?;
    T::read_json(value, &json::child(path, name))
}

/// The tag of the only `Bond_id_repr` case, a smart rollup bond.
const SMART_ROLLUP_BOND_TAG: u8 = 1;

impl Balance {
    fn read(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        if let Some((_, _, _, plain)) = PLAIN_BALANCES.iter().find(|entry| entry.0 == tag) {
            return Ok(*plain);
        }
        Ok(match tag {
            CONTRACT_TAG => Self::Contract(Contract::read(reader)?),
            4 => Self::Deposits(FrozenStaker::read(reader)?),
            13 => Self::LostAttestingRewards {
                delegate: PublicKeyHash::read(reader)?,
                participation: bool::read(reader)?,
                revelation: bool::read(reader)?,
            },
            16 => Self::Commitments(BlindedPublicKeyHash::read(reader)?),
            21 => {
                let contract = Contract::read(reader)?;
                let bond_offset = reader.offset();
                match reader.take_u8()? {
                    SMART_ROLLUP_BOND_TAG => Self::FrozenBonds {
                        contract,
                        smart_rollup: SmartRollupAddress::read(reader)?,
                    },
                    tag => return Err(unknown("bond id", tag, bond_offset)),
                }
            }
            26 => Self::UnstakedDeposits {
                staker: UnstakedStaker::read(reader)?,
                cycle: i32::read(reader)?,
            },
            27 => Self::StakingDelegatorNumerator(Contract::read(reader)?),
            28 => Self::StakingDelegateDenominator(PublicKeyHash::read(reader)?),
            30 => Self::LostDalAttestingRewards(PublicKeyHash::read(reader)?),
            32 => Self::StezRedeemedDeposits {
                staker: Contract::read(reader)?,
                cycle: i32::read(reader)?,
            },
            tag => return Err(unknown("balance", tag, offset)),
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.tag_kind_category().0);
        match self {
            Self::Contract(contract) | Self::StakingDelegatorNumerator(contract) => {
                contract.write(out)
            }
            Self::Deposits(staker) => staker.write(out),
            Self::LostAttestingRewards {
                delegate,
                participation,
                revelation,
            } => {
                delegate.write(out);
                participation.write(out);
                revelation.write(out);
            }
            Self::Commitments(committer) => committer.write(out),
            Self::FrozenBonds {
                contract,
                smart_rollup,
            } => {
                contract.write(out);
                out.push(SMART_ROLLUP_BOND_TAG);
                smart_rollup.write(out);
            }
            Self::UnstakedDeposits { staker, cycle } => {
                staker.write(out);
                cycle.write(out);
            }
            Self::StakingDelegateDenominator(delegate)
            | Self::LostDalAttestingRewards(delegate) => delegate.write(out),
            Self::StezRedeemedDeposits { staker, cycle } => {
                staker.write(out);
                cycle.write(out);
            }
            _ => {}
        }
    }

    fn write_json_fields(&self, object: &mut ObjectWriter<'_>) -> Result<(), JsonError> {
        let (_, kind, category) = self.tag_kind_category();
        write_string(object.key("kind"), kind);
        if let Some(category) = category {
            write_string(object.key("category"), category);
        }
        match self {
            Self::Contract(contract) => contract.write_json(object.key("contract"))?,
            Self::Deposits(staker) => staker.write_json(object.key("staker"))?,
            Self::LostAttestingRewards {
                delegate,
                participation,
                revelation,
            } => {
                delegate.write_json(object.key("delegate"))?;
                participation.write_json(object.key("participation"))?;
                revelation.write_json(object.key("revelation"))?;
            }
            Self::Commitments(committer) => committer.write_json(object.key("committer"))?,
            Self::FrozenBonds {
                contract,
                smart_rollup,
            } => {
                contract.write_json(object.key("contract"))?;
                let mut bond = ObjectWriter::new(object.key("bond_id"));
                smart_rollup.write_json(bond.key("smart_rollup"))?;
                bond.end();
            }
            Self::UnstakedDeposits { staker, cycle } => {
                staker.write_json(object.key("staker"))?;
                cycle.write_json(object.key("cycle"))?;
            }
            Self::StakingDelegatorNumerator(delegator) => {
                delegator.write_json(object.key("delegator"))?
            }
            Self::StakingDelegateDenominator(delegate)
            | Self::LostDalAttestingRewards(delegate) => {
                delegate.write_json(object.key("delegate"))?
            }
            Self::StezRedeemedDeposits { staker, cycle } => {
                staker.write_json(object.key("staker"))?;
                cycle.write_json(object.key("cycle"))?;
            }
            _ => {}
        }
        Ok(())
    }

    fn read_json_fields(object: &Map<String, Value>, path: &str) -> Result<Self, JsonError> {
        let kind = member_str(object, path, "kind")?;
        if kind == "contract" {
            return read_member(object, path, "contract").map(Self::Contract);
        }
        let category = member_str(object, path, "category")?;
        if let Some((_, _, _, plain)) = PLAIN_BALANCES
            .iter()
            .find(|entry| entry.1 == kind && entry.2 == category)
        {
            return Ok(*plain);
        }
        let member = |name: &str| read_member_any(object, path, name);
        let tag = FIELD_BALANCES
            .iter()
            .find(|entry| entry.1 == kind && entry.2 == category)
            .map(|entry| entry.0);
        Ok(match tag {
            Some(4) => Self::Deposits(read_member(object, path, "staker")?),
            Some(13) => Self::LostAttestingRewards {
                delegate: read_member(object, path, "delegate")?,
                participation: read_member(object, path, "participation")?,
                revelation: read_member(object, path, "revelation")?,
            },
            Some(16) => Self::Commitments(read_member(object, path, "committer")?),
            Some(21) => {
                let bond_path = json::child(path, "bond_id");
                let bond = json::as_object(member("bond_id")?, &bond_path)?;
                Self::FrozenBonds {
                    contract: read_member(object, path, "contract")?,
                    smart_rollup: read_member(bond, &bond_path, "smart_rollup")?,
                }
            }
            Some(26) => Self::UnstakedDeposits {
                staker: read_member(object, path, "staker")?,
                cycle: read_member(object, path, "cycle")?,
            },
            Some(27) => Self::StakingDelegatorNumerator(read_member(object, path, "delegator")?),
            Some(28) => Self::StakingDelegateDenominator(read_member(object, path, "delegate")?),
            Some(30) => Self::LostDalAttestingRewards(read_member(object, path, "delegate")?),
            Some(32) => Self::StezRedeemedDeposits {
                staker: read_member(object, path, "staker")?,
                cycle: read_member(object, path, "cycle")?,
            },
            _ => {
                return Err(JsonError::new(
                    path,
                    format!("unknown balance {kind} / {category}"),
                ))
            }
        })
    }
}

/// The value of the required member `name`.
pub(crate) fn read_member_any<'v>(
    object: &'v Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<&'v Value, JsonError> {
    object
        .get(name)
        .ok_or_else(|| JsonError::new(path, format!("missing field \"{name}\"")))
}

/// The string value of the required member `name`.
pub(crate) fn member_str<'v>(
    object: &'v Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<&'v str, JsonError> {
    json::as_str(
        read_member_any(object, path, name)?,
        &json::child(path, name),
    )
}

/// The origin names of JSON, by tag.
const ORIGINS: [&str; 5] = [
    "block",
    "migration",
    "subsidy",
    "simulation",
    "delayed_operation",
];

impl UpdateOrigin {
    fn tag(&self) -> u8 {
        match self {
            Self::Block => 0,
            Self::Migration => 1,
            Self::Subsidy => 2,
            Self::Simulation => 3,
            Self::DelayedOperation(_) => 4,
        }
    }

    fn read(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        Ok(match reader.take_u8()? {
            0 => Self::Block,
            1 => Self::Migration,
            2 => Self::Subsidy,
            3 => Self::Simulation,
            4 => Self::DelayedOperation(OperationHash::read(reader)?),
            tag => return Err(unknown("update origin", tag, offset)),
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.tag());
        if let Self::DelayedOperation(hash) = self {
            hash.write(out);
        }
    }

    fn write_json_fields(&self, object: &mut ObjectWriter<'_>) -> Result<(), JsonError> {
        write_string(object.key("origin"), ORIGINS[usize::from(self.tag())]);
        if let Self::DelayedOperation(hash) = self {
            hash.write_json(object.key("delayed_operation_hash"))?;
        }
        Ok(())
    }

    fn read_json_fields(object: &Map<String, Value>, path: &str) -> Result<Self, JsonError> {
        Ok(match member_str(object, path, "origin")? {
            "block" => Self::Block,
            "migration" => Self::Migration,
            "subsidy" => Self::Subsidy,
            "simulation" => Self::Simulation,
            "delayed_operation" => {
                Self::DelayedOperation(read_member(object, path, "delayed_operation_hash")?)
            }
            other => {
                return Err(JsonError::new(
                    &json::child(path, "origin"),
                    format!("unknown origin {other}"),
                ))
            }
        })
    }
}

impl<'a> Field<'a> for BalanceUpdate {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            balance: Balance::read(reader)?,
            change: i64::read(reader)?,
            origin: UpdateOrigin::read(reader)?,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.balance.write(out);
        self.change.write(out);
        self.origin.write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        let mut object = ObjectWriter::new(out);
        self.balance.write_json_fields(&mut object)?;
        self.change.write_json(object.key("change"))?;
        self.origin.write_json_fields(&mut object)?;
        object.end();
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let object = json::as_object(value, path)?;
        Ok(Self {
            balance: Balance::read_json_fields(object, path)?,
            change: read_member(object, path, "change")?,
            origin: UpdateOrigin::read_json_fields(object, path)?,
        })
    }
}
