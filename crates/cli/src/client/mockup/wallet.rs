//! The mockup base directory as octez-client keeps it (`src/lib_mockup/persistence.ml`,
//! `src/lib_client_base/client_aliases.ml`): the wallet's alias files at the top
//! (`public_key_hashs`, `public_keys`, `secret_keys`, `contracts`, each a JSON list of
//! `{"name", "value"}` sorted by name) and the chain state under `mockup/`.
//!
//! A base directory is a mockup one when its `mockup/` directory exists. Any other directory
//! (missing, empty, not a mockup one) gets octez-client's in-memory mockup: the bootstrap
//! accounts, nothing read from or written to disk (`Client_main_run.setup_mockup_rpc_client_config`).

use kestrel_crypto::{ContractHash, PublicKey, PublicKeyHash, SecretKey};
use kestrel_protocol::crypto_fields::Contract;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use super::MockupError;

/// The subdirectory that makes a base directory a mockup one (`Files.mockup_subdirectory`).
pub const MOCKUP_SUBDIRECTORY: &str = "mockup";

/// The wallet file of contract aliases.
const CONTRACTS_FILE: &str = "contracts";
/// The wallet file of key-hash aliases (octez-client's spelling).
const PUBLIC_KEY_HASHS_FILE: &str = "public_key_hashs";
/// The wallet file of public keys.
const PUBLIC_KEYS_FILE: &str = "public_keys";
/// The wallet file of secret keys.
const SECRET_KEYS_FILE: &str = "secret_keys";

/// The bootstrap accounts of Octez's mockup and sandbox: alias, public key, secret key
/// (`../shared/specs/tezos-node.md`, section 1; `src/lib_mockup/mockup_wallet.ml` names them).
pub const BOOTSTRAP_ACCOUNTS: [(&str, &str, &str); 5] = [
    (
        "bootstrap1",
        "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav",
        "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh",
    ),
    (
        "bootstrap2",
        "edpktzNbDAUjUk697W7gYg2CRuBQjyPxbEg8dLccYYwKSKvkPvjtV9",
        "edsk39qAm1fiMjgmPkw1EgQYkMzkJezLNewd7PLNHTkr6w9XA2zdfo",
    ),
    (
        "bootstrap3",
        "edpkuTXkJDGcFd5nh6VvMz8phXxU3Bi7h6hqgywNFi1vZTfQNnS1RV",
        "edsk4ArLQgBTLWG5FJmnGnT689VKoqhXwmDPBuGx3z4cvwU9MmrPZZ",
    ),
    (
        "bootstrap4",
        "edpkuFrRoDSEbJYgxRtLx2ps82UdaYc1WwfS9sE11yhauZt5DgCHbU",
        "edsk2uqQB9AY4FvioK2YMdfmyMrer5R8mGFyuaLLFfSRo8EoyNdht3",
    ),
    (
        "bootstrap5",
        "edpkv8EUUH68jmo3f7Um5PezmfGrRF24gnfLpH3sVNwJnV5bVCxL2n",
        "edsk4QLrcijEffxV31gGdN2HU7UpyJjA8drFoNcmnB28n89YjPNRFm",
    ),
];

/// What a base directory is (`Persistence.classify_base_dir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseDirKind {
    /// Nothing at that path.
    Missing,
    /// A file, not a directory.
    File,
    /// An empty directory.
    Empty,
    /// A directory with a `mockup/` subdirectory.
    Mockup,
    /// A directory with other files.
    NonEmpty,
}

/// Classifies `path` as octez-client does before running a mockup command.
pub fn classify(path: &Path) -> BaseDirKind {
    if !path.exists() {
        BaseDirKind::Missing
    } else if !path.is_dir() {
        BaseDirKind::File
    } else if path.join(MOCKUP_SUBDIRECTORY).is_dir() {
        BaseDirKind::Mockup
    } else if std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none()) {
        BaseDirKind::Empty
    } else {
        BaseDirKind::NonEmpty
    }
}

/// One alias list: names to values, sorted by name as octez-client writes them.
type Aliases = Vec<(String, String)>;

/// The wallet: key and contract aliases, read from a mockup base directory or, in memory, the
/// bootstrap accounts alone.
pub struct Wallet {
    /// Where it is saved; `None` for the in-memory mockup.
    dir: Option<PathBuf>,
    keys: Vec<Key>,
    contracts: Aliases,
}

/// A key alias with its keys.
struct Key {
    name: String,
    public_key_hash: PublicKeyHash,
    public_key: Option<PublicKey>,
    secret_key: Option<SecretKey>,
}

impl Wallet {
    /// The bootstrap accounts alone.
    pub fn bootstrap() -> Wallet {
        let keys = BOOTSTRAP_ACCOUNTS
            .iter()
            .map(|(name, public, secret)| {
                let public_key =
                    PublicKey::from_b58check(public).expect("the bootstrap keys are valid");
                Key {
                    name: (*name).to_string(),
                    public_key_hash: public_key.hash(),
                    public_key: Some(public_key),
                    secret_key: Some(
                        SecretKey::from_b58check(secret).expect("the bootstrap keys are valid"),
                    ),
                }
            })
            .collect();
        Wallet {
            dir: None,
            keys,
            contracts: Vec::new(),
        }
    }

    /// Writes a fresh wallet holding the bootstrap accounts into `dir` (`create mockup`).
    pub fn create(dir: &Path) -> Result<Wallet, MockupError> {
        let mut wallet = Wallet::bootstrap();
        wallet.dir = Some(dir.to_path_buf());
        wallet.save_keys()?;
        wallet.save_contracts()?;
        Ok(wallet)
    }

    /// Reads the wallet of the mockup base directory `dir`.
    pub fn load(dir: &Path) -> Result<Wallet, MockupError> {
        let hashes = read_aliases(&dir.join(PUBLIC_KEY_HASHS_FILE))?;
        let public = read_aliases(&dir.join(PUBLIC_KEYS_FILE))?;
        let secret = read_aliases(&dir.join(SECRET_KEYS_FILE))?;
        let mut keys = Vec::new();
        for (name, hash) in hashes {
            let bad = |what: &str| MockupError::Wallet(format!("{what} of alias {name}"));
            let public_key_hash =
                PublicKeyHash::from_b58check(&hash).map_err(|_| bad("public key hash"))?;
            let public_key = match lookup(&public, &name) {
                Some(value) => Some(
                    PublicKey::from_b58check(value.trim_start_matches("unencrypted:"))
                        .map_err(|_| bad("public key"))?,
                ),
                None => None,
            };
            let secret_key = match lookup(&secret, &name) {
                Some(value) => Some(
                    SecretKey::from_b58check(value.trim_start_matches("unencrypted:"))
                        .map_err(|_| bad("secret key"))?,
                ),
                None => None,
            };
            keys.push(Key {
                name,
                public_key_hash,
                public_key,
                secret_key,
            });
        }
        Ok(Wallet {
            dir: Some(dir.to_path_buf()),
            keys,
            contracts: read_aliases(&dir.join(CONTRACTS_FILE))?,
        })
    }

    /// The contract a command names: a contract alias, a key alias, or an address
    /// (`Client_proto_contracts.Contract_alias.find_destination`, with its `alias:`, `key:` and
    /// `text:` prefixes).
    pub fn contract(&self, name: &str) -> Result<Contract, MockupError> {
        let unknown = || MockupError::UnknownContract(name.to_string());
        if let Some(text) = name.strip_prefix("text:") {
            return parse_contract(text).ok_or_else(unknown);
        }
        if let Some(alias) = name.strip_prefix("alias:") {
            return lookup(&self.contracts, alias)
                .and_then(parse_contract)
                .ok_or_else(unknown);
        }
        if let Some(alias) = name.strip_prefix("key:") {
            return self.key(alias).map(|key| implicit(&key.public_key_hash));
        }
        if let Some(value) = lookup(&self.contracts, name) {
            return parse_contract(value).ok_or_else(unknown);
        }
        if let Ok(key) = self.key(name) {
            return Ok(implicit(&key.public_key_hash));
        }
        parse_contract(name).ok_or_else(unknown)
    }

    /// The key alias `name`, or the key whose hash `name` is.
    fn key(&self, name: &str) -> Result<&Key, MockupError> {
        self.keys
            .iter()
            .find(|key| key.name == name || key.public_key_hash.to_b58check() == name)
            .ok_or_else(|| MockupError::UnknownContract(name.to_string()))
    }

    /// The secret key that signs for `source` (an implicit account).
    pub fn signer(&self, source: &PublicKeyHash) -> Result<&SecretKey, MockupError> {
        self.keys
            .iter()
            .find(|key| key.public_key_hash == *source)
            .and_then(|key| key.secret_key.as_ref())
            .ok_or_else(|| MockupError::NoSecretKey(source.to_b58check()))
    }

    /// Fails as `Raw_contract_alias.of_fresh` does when `name` is taken and `force` is off.
    pub fn check_fresh_contract_alias(&self, name: &str, force: bool) -> Result<(), MockupError> {
        match lookup(&self.contracts, name) {
            Some(value) if !force => Err(MockupError::AliasExists {
                name: name.to_string(),
                value: value.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Memorizes `name` for `contract` (replacing an old value, as after `--force`) and saves
    /// the contract aliases when the wallet is on disk.
    pub fn remember_contract(
        &mut self,
        name: &str,
        contract: &ContractHash,
    ) -> Result<(), MockupError> {
        let value = contract.to_b58check();
        match self.contracts.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value,
            None => {
                self.contracts.push((name.to_string(), value));
                self.contracts.sort();
            }
        }
        self.save_contracts()
    }

    /// `list known contracts`: contract aliases, then key aliases (`key:` in front of a key
    /// alias that is also a contract alias), as `Client_proto_contracts.list_contracts` lists.
    pub fn known_contracts(&self) -> Vec<(String, String)> {
        let mut listed: Vec<(String, String)> = self.contracts.clone();
        for key in &self.keys {
            let prefix = if lookup(&self.contracts, &key.name).is_some() {
                "key:"
            } else {
                ""
            };
            listed.push((
                format!("{prefix}{}", key.name),
                key.public_key_hash.to_b58check(),
            ));
        }
        listed
    }

    /// The value of contract alias `name` (`show known contract`).
    pub fn contract_alias(&self, name: &str) -> Result<&str, MockupError> {
        lookup(&self.contracts, name)
            .ok_or_else(|| MockupError::UnknownAlias(format!("no contract alias named {name}")))
    }

    fn save_keys(&self) -> Result<(), MockupError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let mut keys: Vec<&Key> = self.keys.iter().collect();
        keys.sort_by(|a, b| a.name.cmp(&b.name));
        let hashes: Vec<Value> = keys
            .iter()
            .map(|k| json!({"name": k.name, "value": k.public_key_hash.to_b58check()}))
            .collect();
        let public: Vec<Value> = keys
            .iter()
            .filter_map(|k| {
                let key = k.public_key.as_ref()?.to_b58check();
                Some(json!({"name": k.name, "value": {"locator": format!("unencrypted:{key}"), "key": key}}))
            })
            .collect();
        let secret: Vec<Value> = keys
            .iter()
            .filter_map(|k| {
                let key = k.secret_key.as_ref()?.to_b58check();
                Some(json!({"name": k.name, "value": format!("unencrypted:{key}")}))
            })
            .collect();
        write_json(&dir.join(PUBLIC_KEY_HASHS_FILE), &Value::Array(hashes))?;
        write_json(&dir.join(PUBLIC_KEYS_FILE), &Value::Array(public))?;
        write_json(&dir.join(SECRET_KEYS_FILE), &Value::Array(secret))
    }

    fn save_contracts(&self) -> Result<(), MockupError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let list: Vec<Value> = self
            .contracts
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        write_json(&dir.join(CONTRACTS_FILE), &Value::Array(list))
    }
}

fn implicit(hash: &PublicKeyHash) -> Contract {
    Contract(kestrel_crypto::Destination::Implicit(*hash))
}

/// A `tz…` or `KT1…` address (no entrypoint).
fn parse_contract(text: &str) -> Option<Contract> {
    if let Ok(hash) = ContractHash::from_b58check(text) {
        return Some(Contract(kestrel_crypto::Destination::Originated(hash)));
    }
    PublicKeyHash::from_b58check(text)
        .ok()
        .map(|h| implicit(&h))
}

fn lookup<'a>(aliases: &'a Aliases, name: &str) -> Option<&'a str> {
    aliases
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.as_str())
}

/// Reads one alias file; a missing file is an empty list, as in octez-client.
fn read_aliases(path: &Path) -> Result<Aliases, MockupError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(MockupError::io(path, &error)),
    };
    let bad = || MockupError::Wallet(format!("{} is not a wallet file", path.display()));
    let value: Value = serde_json::from_str(&text).map_err(|_| bad())?;
    let mut aliases = Vec::new();
    for entry in value.as_array().ok_or_else(bad)? {
        let name = entry.get("name").and_then(Value::as_str).ok_or_else(bad)?;
        let value = match entry.get("value") {
            Some(Value::String(text)) => text.clone(),
            // Public keys: `{"locator": "unencrypted:edpk…", "key": "edpk…"}`.
            Some(Value::Object(fields)) => fields
                .get("key")
                .or_else(|| fields.get("locator"))
                .and_then(Value::as_str)
                .ok_or_else(bad)?
                .to_string(),
            _ => return Err(bad()),
        };
        aliases.push((name.to_string(), value));
    }
    Ok(aliases)
}

fn write_json(path: &Path, value: &Value) -> Result<(), MockupError> {
    let text = serde_json::to_string_pretty(value).expect("JSON values print");
    std::fs::write(path, text).map_err(|error| MockupError::io(path, &error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_aliases_resolve_and_round_trip_through_the_files() {
        let dir = std::env::temp_dir().join(format!("kestrel-wallet-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let mut wallet = Wallet::create(&dir).expect("created");
        let contract =
            ContractHash::from_b58check("KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW").expect("valid");
        wallet
            .remember_contract("counter", &contract)
            .expect("saved");
        let wallet = Wallet::load(&dir).expect("loaded");
        let bootstrap2 = wallet.contract("bootstrap2").expect("known");
        assert_eq!(
            bootstrap2.0.to_string(),
            "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"
        );
        assert_eq!(
            wallet.contract("counter").expect("known").0.to_string(),
            "KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW"
        );
        assert!(wallet.check_fresh_contract_alias("counter", false).is_err());
        assert!(wallet.check_fresh_contract_alias("counter", true).is_ok());
        assert!(wallet.contract("nobody").is_err());
        let listed = wallet.known_contracts();
        assert_eq!(listed.len(), 6);
        assert_eq!(listed[0].0, "counter");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
