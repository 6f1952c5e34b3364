//! The accounts a node starts with: Octez's five sandbox accounts `bootstrap1` … `bootstrap5`
//! (their keys are public: `tezos-node.md` §1), then any number of generated ones whose ed25519
//! seeds are derived from their index, so every run of the node has the same accounts.

use kestrel_crypto::base58::{encode_check, ED25519_SEED};
use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::{PublicKey, PublicKeyHash, SecretKey};
use kestrel_protocol::ledger::BootstrapAccount;
use kestrel_protocol::{JsonError, Operation};

/// The secret keys of Octez's sandbox accounts, in order (`tezos-node.md` §1).
const SANDBOX_SECRET_KEYS: [&str; 5] = [
    "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh",
    "edsk39qAm1fiMjgmPkw1EgQYkMzkJezLNewd7PLNHTkr6w9XA2zdfo",
    "edsk4ArLQgBTLWG5FJmnGnT689VKoqhXwmDPBuGx3z4cvwU9MmrPZZ",
    "edsk2uqQB9AY4FvioK2YMdfmyMrer5R8mGFyuaLLFfSRo8EoyNdht3",
    "edsk4QLrcijEffxV31gGdN2HU7UpyJjA8drFoNcmnB28n89YjPNRFm",
];

/// Most accounts generated beyond the sandbox's five: each is a context entry written at
/// genesis, and the list is printed at start.
pub const MAX_GENERATED_ACCOUNTS: usize = 1_000;

/// The share of an account's balance staked at activation, as Octez's mockup genesis stakes
/// 5 % (`kestrel_protocol::ledger::genesis`).
const STAKED_DIVISOR: u64 = 20;

/// One account present at genesis, with its keys.
#[derive(Debug, Clone)]
pub struct Account {
    /// Its name: `bootstrap1` … `bootstrap5`, then `account6`, `account7`, ….
    pub alias: String,
    /// Its secret key.
    pub secret_key: SecretKey,
    /// Its public key.
    pub public_key: PublicKey,
    /// Its address.
    pub public_key_hash: PublicKeyHash,
}

impl Account {
    fn new(alias: String, secret_key: SecretKey) -> Account {
        let public_key = secret_key.public_key();
        Account {
            alias,
            public_key_hash: public_key.hash(),
            public_key,
            secret_key,
        }
    }

    /// Its transfer of `amount_mutez` to `destination` (an address in base58) with `counter`,
    /// branched on the block `branch` (a block hash in base58), signed with its key. The fee
    /// (1,000 mutez) and limits (3,000 gas, 300 bytes) cover a transfer to any implicit
    /// account, a new one included. Fails, naming the field, on a branch or destination that is
    /// not base58 of its kind.
    pub fn signed_transfer(
        &self,
        branch: &str,
        destination: &str,
        counter: u64,
        amount_mutez: u64,
    ) -> Result<Operation<'static>, JsonError> {
        let mut operation = Operation::from_json(&serde_json::json!({
            "branch": branch,
            "contents": [{
                "kind": "transaction", "source": self.public_key_hash.to_b58check(),
                "fee": "1000", "counter": counter.to_string(), "gas_limit": "3000",
                "storage_limit": "300", "amount": amount_mutez.to_string(),
                "destination": destination,
            }],
        }))?;
        operation.signature = Some(self.secret_key.sign(&operation.signing_message()));
        Ok(operation)
    }
}

/// The sandbox's five accounts, then `generated` more (at most [`MAX_GENERATED_ACCOUNTS`]).
pub fn accounts(generated: usize) -> Vec<Account> {
    let mut accounts: Vec<Account> = SANDBOX_SECRET_KEYS
        .iter()
        .enumerate()
        .map(|(index, key)| {
            let secret_key = SecretKey::from_b58check(key).expect("a sandbox secret key is valid");
            Account::new(format!("bootstrap{}", index + 1), secret_key)
        })
        .collect();
    for index in 0..generated.min(MAX_GENERATED_ACCOUNTS) {
        let number = SANDBOX_SECRET_KEYS.len() + index + 1;
        let seed = blake2b_256(format!("kestrel node account {number}").as_bytes());
        let secret_key = SecretKey::from_b58check(&encode_check(ED25519_SEED, &seed))
            .expect("a 32-byte seed is an ed25519 secret key");
        accounts.push(Account::new(format!("account{number}"), secret_key));
    }
    accounts
}

/// The genesis entries of `accounts`, each holding `balance_mutez` of which 5 % is staked.
pub fn bootstrap_accounts(accounts: &[Account], balance_mutez: u64) -> Vec<BootstrapAccount> {
    let staked_mutez = balance_mutez / STAKED_DIVISOR;
    accounts
        .iter()
        .map(|account| BootstrapAccount {
            public_key: account.public_key.clone(),
            balance_mutez: balance_mutez - staked_mutez,
            staked_mutez,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_keys_match_their_published_addresses() {
        let accounts = accounts(2);
        assert_eq!(accounts.len(), 7);
        assert_eq!(
            accounts[0].public_key_hash.to_b58check(),
            "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx"
        );
        assert_eq!(
            accounts[4].public_key.to_b58check(),
            "edpkv8EUUH68jmo3f7Um5PezmfGrRF24gnfLpH3sVNwJnV5bVCxL2n"
        );
        assert_eq!(accounts[5].alias, "account6");
        assert_ne!(accounts[5].public_key_hash, accounts[6].public_key_hash);
    }
}
