//! The state a chain starts from, as Octez's mockup mode makes it (`octez-client create mockup`):
//! the five bootstrap accounts of `tezos-node.md` §1, each revealed, its own delegate, with
//! 4,000,000 tez of which 5 % is staked (the `rpc get …/contracts/<bootstrap>` and
//! `…/delegates/<bootstrap>` answers recorded in `testdata/octez-protocol/rpc/`), and the
//! liquidity-baking contracts when their scripts are given (`apply::activation`; Kestrel does
//! not ship Octez's scripts, the caller reads them).

use kestrel_crypto::PublicKey;
use kestrel_micheline::Node;

use super::constants::{Constants, MOCKUP_CONSTANTS};

/// Octez's default bootstrap balance (`Parameters.bootstrap_balance`), mutez.
pub const BOOTSTRAP_BALANCE_MUTEZ: u64 = 4_000_000_000_000;
/// The part of it staked at activation (`own_staked` in the delegates RPC: 5 %), mutez.
pub const BOOTSTRAP_STAKED_MUTEZ: u64 = BOOTSTRAP_BALANCE_MUTEZ / 20;

/// The public keys of Octez's sandbox accounts `bootstrap1` … `bootstrap5`.
pub const MOCKUP_BOOTSTRAP_KEYS: [&str; 5] = [
    "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav",
    "edpktzNbDAUjUk697W7gYg2CRuBQjyPxbEg8dLccYYwKSKvkPvjtV9",
    "edpkuTXkJDGcFd5nh6VvMz8phXxU3Bi7h6hqgywNFi1vZTfQNnS1RV",
    "edpkuFrRoDSEbJYgxRtLx2ps82UdaYc1WwfS9sE11yhauZt5DgCHbU",
    "edpkv8EUUH68jmo3f7Um5PezmfGrRF24gnfLpH3sVNwJnV5bVCxL2n",
];

/// One account present at activation: revealed, delegating to itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapAccount {
    /// Its key (its hash is the account).
    pub public_key: PublicKey,
    /// Its spendable balance, mutez.
    pub balance_mutez: u64,
    /// What it has staked, mutez (not spendable).
    pub staked_mutez: u64,
}

/// What the chain starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Genesis {
    /// The accounts present at activation.
    pub accounts: Vec<BootstrapAccount>,
    /// The protocol constants.
    pub constants: Constants,
    /// The scripts of the liquidity-baking contracts to originate at activation, if any.
    pub liquidity_baking: Option<LiquidityBakingScripts>,
}

/// The scripts Octez originates the liquidity-baking contracts with
/// (`Liquidity_baking_cpmm.script`, `Liquidity_baking_lqt.script`; the test token runs the
/// liquidity token's script).
#[derive(Debug, Clone, PartialEq)]
pub struct LiquidityBakingScripts {
    /// The CPMM's script.
    pub cpmm: Node,
    /// The liquidity token's script (an FA1.2 token).
    pub lqt: Node,
}

impl Genesis {
    /// Octez's mockup genesis: `bootstrap1` … `bootstrap5` and the mainnet constants.
    pub fn mockup() -> Genesis {
        let accounts = MOCKUP_BOOTSTRAP_KEYS
            .iter()
            .map(|key| BootstrapAccount {
                public_key: PublicKey::from_b58check(key).expect("constant key is valid"),
                balance_mutez: BOOTSTRAP_BALANCE_MUTEZ - BOOTSTRAP_STAKED_MUTEZ,
                staked_mutez: BOOTSTRAP_STAKED_MUTEZ,
            })
            .collect();
        Genesis {
            accounts,
            constants: MOCKUP_CONSTANTS,
            liquidity_baking: None,
        }
    }

    /// This genesis, originating the liquidity-baking contracts with `scripts`.
    pub fn with_liquidity_baking(self, scripts: LiquidityBakingScripts) -> Genesis {
        Genesis {
            liquidity_baking: Some(scripts),
            ..self
        }
    }
}
