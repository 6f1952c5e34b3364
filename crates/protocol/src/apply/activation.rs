//! The liquidity-baking contracts Octez originates when protocol 025 starts a test chain
//! (`Liquidity_baking_migration.init`, which the mockup's and the sandbox's genesis run): a
//! test FA1.2 token administered by `bootstrap1`'s key (`first_bootstrap_account`, tzBTC's
//! stand-in), the CPMM exchanging it for
//! tez, and the CPMM's liquidity token. Their addresses come from a fixed origination nonce,
//! their big maps take the first ids (0 and 1 for the token, 2 and 3 for the liquidity token),
//! their balances are minted by the subsidy and their storage is prepaid.

use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::{ChainId, ContractHash, Destination, PublicKey};
use kestrel_micheline::{Node, Prim};
use kestrel_michelson::{Config, Script};

use super::gas::GasMeter;
use super::originate::{self, NewContract};
use super::{BlockContext, Env, Fault, OriginationNonce};
use crate::ledger::{Ledger, LedgerError, LiquidityBakingScripts, MOCKUP_BOOTSTRAP_KEYS};
use crate::receipt::UpdateOrigin;

/// What the migration's origination nonce hashes (`Operation_hash.hash_string`).
const NONCE_PREIMAGE: &[u8] = b"Drip, drip, drip.";
/// The CPMM's balance: the 100 mutez of its initial liquidity.
const CPMM_BALANCE_MUTEZ: u64 = 100;
/// The test token's balance (`originate_test_fa12`): 1 tez.
const TOKEN_BALANCE_MUTEZ: u64 = 1_000_000;
/// The test token's total supply (`test_fa12_init_storage`).
const TOKEN_TOTAL_SUPPLY: i64 = 10_000;
/// The CPMM's initial pools: 1 token unit against 100 mutez, 100 liquidity tokens
/// (`cpmm_init_storage`), all held by the null address (`lqt_init_storage`).
const CPMM_TOKEN_POOL: i64 = 1;
const CPMM_XTZ_POOL: i64 = 100;
const CPMM_LQT_TOTAL: i64 = 100;
/// The null address holding the initial liquidity: 22 zero bytes (`null_address`).
const NULL_ADDRESS: [u8; 22] = [0; 22];

/// The three contracts at their addresses: `(cpmm, lqt, token)`.
pub fn addresses() -> (ContractHash, ContractHash, ContractHash) {
    let mut nonce = OriginationNonce::new(blake2b_256(NONCE_PREIMAGE));
    let cpmm = nonce.next_contract();
    let lqt = nonce.next_contract();
    let token = nonce.next_contract();
    (cpmm, lqt, token)
}

/// Originates the three contracts in Octez's order (the token first).
pub(crate) fn originate_liquidity_baking(
    ledger: &mut Ledger,
    scripts: &LiquidityBakingScripts,
) -> Result<(), LedgerError> {
    let token_admin = PublicKey::from_b58check(MOCKUP_BOOTSTRAP_KEYS[0])
        .map_err(|_| LedgerError::Corrupt {
            path: "genesis/liquidity_baking/token_admin".into(),
            expected: "a public key",
        })?
        .hash();
    let (cpmm, lqt, token) = addresses();
    let kt1 = |hash: ContractHash| Node::string(Destination::Originated(hash).to_b58check());
    let pair = |items: Vec<Node>| Node::prim(Prim::D_Pair, items);
    let token_storage = pair(vec![
        Node::seq(Vec::new()),
        Node::seq(Vec::new()),
        Node::string(Destination::Implicit(token_admin).to_b58check()),
        Node::int(TOKEN_TOTAL_SUPPLY),
    ]);
    let cpmm_storage = pair(vec![
        Node::int(CPMM_TOKEN_POOL),
        Node::int(CPMM_XTZ_POOL),
        Node::int(CPMM_LQT_TOTAL),
        kt1(token),
        kt1(lqt),
    ]);
    let lqt_storage = pair(vec![
        Node::seq(vec![Node::prim(
            Prim::D_Elt,
            vec![
                Node::bytes(NULL_ADDRESS.to_vec()),
                Node::int(CPMM_LQT_TOTAL),
            ],
        )]),
        Node::seq(Vec::new()),
        kt1(cpmm),
        Node::int(CPMM_LQT_TOTAL),
    ]);
    let mut env = Env {
        ledger,
        block: BlockContext {
            level: 0,
            timestamp_seconds: 0,
            chain_id: ChainId::new([0; 4]),
            payload_producer: token_admin,
        },
        nonce: OriginationNonce::new(blake2b_256(NONCE_PREIMAGE)),
        origin: UpdateOrigin::Migration,
        payer: token_admin,
        next_internal_nonce: 0,
        script_cache: super::gas::ScriptCacheView::at_start(0),
    };
    for (name, address, code, storage, balance) in [
        (
            "token",
            token,
            &scripts.lqt,
            &token_storage,
            TOKEN_BALANCE_MUTEZ,
        ),
        (
            "cpmm",
            cpmm,
            &scripts.cpmm,
            &cpmm_storage,
            CPMM_BALANCE_MUTEZ,
        ),
        ("lqt", lqt, &scripts.lqt, &lqt_storage, 0),
    ] {
        originate_prepaid(&mut env, address, code, storage, balance).map_err(
            |fault| match fault {
                Fault::Ledger(error) => error,
                Fault::Operation(_) => LedgerError::Corrupt {
                    path: format!("genesis/liquidity_baking/{name}"),
                    expected: "a well-typed script and storage",
                },
            },
        )?;
    }
    Ok(())
}

/// `Liquidity_baking_migration.originate`: typechecked in legacy mode, written, credited with
/// minted tez, its storage prepaid (`~prepaid_bootstrap_storage:true`). Gas is not counted.
fn originate_prepaid(
    env: &mut Env<'_>,
    address: ContractHash,
    code: &Node,
    storage: &Node,
    balance_mutez: u64,
) -> Result<(), Fault> {
    let mut meter = GasMeter::new(u64::MAX);
    let config = Config {
        legacy: true,
        gas_limit_milli: u64::MAX,
    };
    let script = Script::typecheck(code, &config)
        .map_err(|error| super::ApplyError::IllTypedContract(error.to_string()))?;
    let storage = originate::typecheck_storage(env, &script, storage, &mut meter)?;
    let contract = NewContract {
        address,
        sender: Destination::Originated(address),
        code,
        storage: &storage,
        storage_type: script.storage_type(),
        delegate: None,
        credit: 0,
    };
    originate::write(env, &mut meter, &contract)?;
    let destination = Destination::Originated(address);
    env.ledger.set_balance(&destination, balance_mutez)?;
    let used = env.ledger.used_bytes(&address)?;
    env.ledger.set_paid_bytes(&address, used)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_octez_mockup_ones() {
        // The CPMM and liquidity token of every Octez test chain (`rpc get
        // /chains/main/blocks/head/context/liquidity_baking/cpmm_address` in the mockup).
        let (cpmm, lqt, _) = addresses();
        assert_eq!(
            Destination::Originated(cpmm).to_b58check(),
            "KT1TxqZ8QtKvLu3V3JH7Gx58n7Co8pgtpQU5"
        );
        assert_eq!(
            Destination::Originated(lqt).to_b58check(),
            "KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo"
        );
    }
}
