//! The protocol's state — accounts, contracts, big maps, tickets — as paths in a
//! [`kestrel_context::Tree`] (`docs/formats/protocol-state.md`). [`Ledger`] reads and writes one
//! value at a time: a big map is never loaded whole. Values are stored in Octez's encodings
//! (data-encoding naturals for amounts and counters, binary Micheline for code, storage, types
//! and big-map values).
//!
//! Callers persist [`Ledger::tree`] in a `kestrel_context::Store` and resume with
//! [`Ledger::from_tree`] and the store as the object source.

mod clock;
mod constants;
mod genesis;
mod key_cache;
pub(crate) mod paths;

use std::sync::Arc;

use kestrel_context::{ContextError, InMemory, ObjectSource, Tree};
use kestrel_crypto::{ContractHash, Destination, PublicKey, PublicKeyHash};
use kestrel_encoding::Reader;
use kestrel_micheline::Node;

use crate::field::{BoundedNat, Field, Mutez, Zarith};
pub(crate) use clock::{ApplyStage, StageClock};
pub use constants::{Constants, MOCKUP_CONSTANTS};
pub use genesis::{
    BootstrapAccount, Genesis, LiquidityBakingScripts, BOOTSTRAP_BALANCE_MUTEZ,
    BOOTSTRAP_STAKED_MUTEZ, MOCKUP_BOOTSTRAP_KEYS,
};
use num_bigint::BigInt;
use paths::Path;

/// Why the state could not be read or written.
#[derive(Debug)]
pub enum LedgerError {
    /// The context tree failed (a stored object could not be loaded).
    Context(ContextError),
    /// A stored value does not decode as what its path holds.
    Corrupt {
        /// The path, names joined by `/`.
        path: String,
        /// What was expected there.
        expected: &'static str,
    },
    /// A value does not encode (Micheline beyond the binary encoding's limits).
    Unencodable {
        /// The path it was meant for.
        path: String,
    },
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerError::Context(error) => write!(f, "context: {error}"),
            LedgerError::Corrupt { path, expected } => {
                write!(f, "{path}: stored value is not {expected}")
            }
            LedgerError::Unencodable { path } => write!(f, "{path}: value does not encode"),
        }
    }
}

impl std::error::Error for LedgerError {}

impl From<ContextError> for LedgerError {
    fn from(error: ContextError) -> LedgerError {
        LedgerError::Context(error)
    }
}

/// How an account's key is recorded (`Manager_repr`): its hash until it is revealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manager {
    /// Not revealed: only the hash is known.
    Hash(PublicKeyHash),
    /// Revealed.
    PublicKey(Box<PublicKey>),
}

/// The protocol state in a context tree, with the constants it runs under.
#[derive(Clone)]
pub struct Ledger {
    tree: Tree,
    source: Arc<dyn ObjectSource + Send + Sync>,
    constants: Constants,
    /// Temporary big maps handed out since the last cleanup (ids -1 to -n), which live in the
    /// tree until [`Ledger::remove_temporary_big_maps`] (Octez keeps their count in its
    /// `Raw_context`, outside the stored state).
    temporary_big_maps: i64,
    /// What each write since the oldest open [`Checkpoint`] replaced, oldest first; `None` when
    /// no checkpoint is open.
    undo: Option<Vec<Undo>>,
    /// Where application time goes, when timed (the tree's reads and writes switch it).
    clock: StageClock,
}

/// The ticket table's byte counts (`Storage.Ticket_balance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketTableBytes {
    /// `used_bytes`: what the table's entries take.
    Used,
    /// `paid_bytes`: the most it has taken, paid for by storage burns.
    Paid,
}

impl TicketTableBytes {
    fn name(self) -> &'static str {
        match self {
            TicketTableBytes::Used => "used_bytes",
            TicketTableBytes::Paid => "paid_bytes",
        }
    }
}

/// A path as it was before a write: its subtree, or nothing.
#[derive(Clone)]
struct Undo {
    path: Path,
    previous: Option<Tree>,
}

/// A point [`Ledger::rollback`] returns the state to (see [`Ledger::checkpoint`]).
#[must_use]
pub(crate) struct Checkpoint {
    /// The undo records before it.
    records: usize,
    temporary_big_maps: i64,
    /// Whether it opened the undo log (and closes it when released).
    outermost: bool,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").field("tree", &self.tree).finish()
    }
}

impl Ledger {
    /// The state at activation: `genesis`'s accounts allocated, revealed and self-delegated.
    pub fn genesis(genesis: &Genesis) -> Result<Ledger, LedgerError> {
        let mut ledger = Ledger::from_tree(Tree::empty(), Arc::new(InMemory), genesis.constants);
        ledger.set_global_counter(0)?;
        ledger.set_next_big_map_id(0)?;
        for account in &genesis.accounts {
            let key_hash = account.public_key.hash();
            let contract = Destination::Implicit(key_hash);
            ledger.allocate_implicit(&key_hash)?;
            ledger.set_balance(&contract, account.balance_mutez)?;
            ledger.set_staked(&key_hash, account.staked_mutez)?;
            ledger.set_manager(
                &key_hash,
                &Manager::PublicKey(Box::new(account.public_key.clone())),
            )?;
            ledger.set_delegate(&contract, Some(&key_hash))?;
        }
        ledger.set_listings(genesis.accounts.iter().map(|account| {
            (
                account.public_key.hash(),
                account.balance_mutez.saturating_add(account.staked_mutez),
            )
        }))?;
        if let Some(scripts) = &genesis.liquidity_baking {
            crate::apply::originate_liquidity_baking(&mut ledger, scripts)?;
        }
        Ok(ledger)
    }

    /// A ledger over `tree`, whose stored objects `source` loads.
    pub fn from_tree(
        tree: Tree,
        source: Arc<dyn ObjectSource + Send + Sync>,
        constants: Constants,
    ) -> Ledger {
        Ledger {
            tree,
            source,
            constants,
            temporary_big_maps: 0,
            undo: None,
            clock: StageClock::default(),
        }
    }

    /// The state as a context tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The constants the state runs under.
    pub fn constants(&self) -> &Constants {
        &self.constants
    }

    /// Times the stages of each operation's application from now on (`true`) or not
    /// ([`crate::apply::StageTimings`]); each timed switch reads the clock once.
    pub fn time_stages(&mut self, enabled: bool) {
        self.clock.enable(enabled);
    }

    /// The clock of the application's stages.
    pub(crate) fn clock(&self) -> &StageClock {
        &self.clock
    }

    // Accounts and contracts.

    /// Whether `contract` exists (has a balance entry, as `Contract_storage.allocated`).
    pub fn is_allocated(&self, contract: &Destination) -> Result<bool, LedgerError> {
        Ok(self
            .tree
            .mem(&*self.source, &paths::contract(contract, "balance"))?)
    }

    /// The spendable balance of `contract`, mutez (0 if it does not exist).
    pub fn balance(&self, contract: &Destination) -> Result<u64, LedgerError> {
        self.read_mutez(&paths::contract(contract, "balance"))
            .map(Option::unwrap_or_default)
    }

    /// Sets the spendable balance of `contract`.
    pub fn set_balance(&mut self, contract: &Destination, mutez: u64) -> Result<(), LedgerError> {
        self.write_field(&paths::contract(contract, "balance"), &Mutez(mutez))
    }

    /// The staked balance of `delegate`, mutez.
    pub fn staked(&self, delegate: &PublicKeyHash) -> Result<u64, LedgerError> {
        let path = paths::contract(&Destination::Implicit(*delegate), "own_staked");
        self.read_mutez(&path).map(Option::unwrap_or_default)
    }

    fn set_staked(&mut self, delegate: &PublicKeyHash, mutez: u64) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Implicit(*delegate), "own_staked");
        self.write_field(&path, &Mutez(mutez))
    }

    /// The counter of implicit account `account`; `None` if it is not allocated.
    pub fn counter(&self, account: &PublicKeyHash) -> Result<Option<u128>, LedgerError> {
        self.read_n(&paths::contract(
            &Destination::Implicit(*account),
            "counter",
        ))
    }

    /// Sets the counter of `account`.
    pub fn set_counter(
        &mut self,
        account: &PublicKeyHash,
        counter: u128,
    ) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Implicit(*account), "counter");
        self.write_field(&path, &BoundedNat(counter))
    }

    /// The last counter handed out (`Global_counter`): new accounts start from it.
    pub fn global_counter(&self) -> Result<u128, LedgerError> {
        self.read_n(&paths::global_counter())
            .map(Option::unwrap_or_default)
    }

    /// Sets the global counter.
    pub fn set_global_counter(&mut self, counter: u128) -> Result<(), LedgerError> {
        self.write_field(&paths::global_counter(), &BoundedNat(counter))
    }

    /// Creates implicit account `account` with no tez, its counter the global counter and its
    /// key unrevealed (`Contract_storage.create_implicit`).
    pub fn allocate_implicit(&mut self, account: &PublicKeyHash) -> Result<(), LedgerError> {
        let counter = self.global_counter()?;
        self.set_counter(account, counter)?;
        self.set_balance(&Destination::Implicit(*account), 0)?;
        self.set_manager(account, &Manager::Hash(*account))
    }

    /// Removes an emptied implicit account (`Contract_storage.delete`).
    pub fn delete_implicit(&mut self, account: &PublicKeyHash) -> Result<(), LedgerError> {
        let path = paths::contract_directory(&Destination::Implicit(*account));
        self.remove(&path)
    }

    /// How `account`'s key is recorded; `None` if it is not allocated.
    pub fn manager(&self, account: &PublicKeyHash) -> Result<Option<Manager>, LedgerError> {
        let path = paths::contract(&Destination::Implicit(*account), "manager");
        let Some(bytes) = self.read(&path)? else {
            return Ok(None);
        };
        let corrupt = || corrupt(&path, "a manager");
        match bytes.split_first() {
            Some((0, hash)) => PublicKeyHash::try_from_bytes(hash)
                .map(|hash| Some(Manager::Hash(hash)))
                .map_err(|_| corrupt()),
            Some((1, key)) => key_cache::parsed(key)
                .map(|key| Some(Manager::PublicKey(Box::new(key))))
                .map_err(|_| corrupt()),
            _ => Err(corrupt()),
        }
    }

    /// Whether `account`'s revealed key is `key` (compared as stored: no key is parsed).
    pub fn is_manager_key(
        &self,
        account: &PublicKeyHash,
        key: &PublicKey,
    ) -> Result<bool, LedgerError> {
        let path = paths::contract(&Destination::Implicit(*account), "manager");
        Ok(match self.read(&path)? {
            Some(bytes) => bytes.split_first() == Some((&1, key.to_bytes().as_slice())),
            None => false,
        })
    }

    /// The revealed key of `account`, if any.
    pub fn manager_key(&self, account: &PublicKeyHash) -> Result<Option<PublicKey>, LedgerError> {
        Ok(match self.manager(account)? {
            Some(Manager::PublicKey(key)) => Some(*key),
            _ => None,
        })
    }

    /// Records `account`'s key (tag 0 and the hash, or tag 1 and the key).
    pub fn set_manager(
        &mut self,
        account: &PublicKeyHash,
        manager: &Manager,
    ) -> Result<(), LedgerError> {
        let mut bytes = Vec::with_capacity(40);
        match manager {
            Manager::Hash(hash) => {
                bytes.push(0);
                bytes.extend_from_slice(&hash.to_bytes());
            }
            Manager::PublicKey(key) => {
                bytes.push(1);
                key.write_bytes(&mut bytes);
            }
        }
        let path = paths::contract(&Destination::Implicit(*account), "manager");
        self.write(&path, &bytes)
    }

    /// The delegate of `contract`, if any.
    pub fn delegate(&self, contract: &Destination) -> Result<Option<PublicKeyHash>, LedgerError> {
        let path = paths::contract(contract, "delegate");
        match self.read(&path)? {
            None => Ok(None),
            Some(bytes) => PublicKeyHash::try_from_bytes(&bytes)
                .map(Some)
                .map_err(|_| corrupt(&path, "a key hash")),
        }
    }

    /// Sets or removes the delegate of `contract`.
    pub fn set_delegate(
        &mut self,
        contract: &Destination,
        delegate: Option<&PublicKeyHash>,
    ) -> Result<(), LedgerError> {
        let path = paths::contract(contract, "delegate");
        match delegate {
            Some(delegate) => self.write(&path, &delegate.to_bytes()),
            None => self.remove(&path),
        }
    }

    /// The code of originated contract `contract` (`parameter`, `storage`, `code`, views).
    pub fn script(&self, contract: &ContractHash) -> Result<Option<Node>, LedgerError> {
        self.read_micheline(&paths::contract(
            &Destination::Originated(*contract),
            "code",
        ))
    }

    /// The code of originated contract `contract` as stored (binary Micheline), undecoded.
    pub fn script_bytes(&self, contract: &ContractHash) -> Result<Option<Arc<[u8]>>, LedgerError> {
        self.read(&paths::contract(
            &Destination::Originated(*contract),
            "code",
        ))
    }

    /// The storage of originated contract `contract` as stored (binary Micheline), undecoded.
    pub fn storage_bytes(&self, contract: &ContractHash) -> Result<Option<Arc<[u8]>>, LedgerError> {
        self.read(&paths::contract(
            &Destination::Originated(*contract),
            "storage",
        ))
    }

    /// The storage of originated contract `contract`.
    pub fn storage(&self, contract: &ContractHash) -> Result<Option<Node>, LedgerError> {
        self.read_micheline(&paths::contract(
            &Destination::Originated(*contract),
            "storage",
        ))
    }

    /// Sets the code of `contract`.
    pub fn set_script(&mut self, contract: &ContractHash, code: &Node) -> Result<(), LedgerError> {
        self.write_micheline(
            &paths::contract(&Destination::Originated(*contract), "code"),
            code,
        )
    }

    /// Sets the storage of `contract`.
    pub fn set_storage(
        &mut self,
        contract: &ContractHash,
        storage: &Node,
    ) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "storage");
        self.write_micheline(&path, storage)
    }

    /// Sets the storage of `contract` to `bytes`, its binary Micheline (encoded by the caller,
    /// who needs the bytes too).
    pub fn set_storage_encoded(
        &mut self,
        contract: &ContractHash,
        bytes: &[u8],
    ) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "storage");
        self.write(&path, bytes)
    }

    /// The bytes of storage `contract` has paid for (`paid_bytes`).
    pub fn paid_bytes(&self, contract: &ContractHash) -> Result<u128, LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "paid_bytes");
        self.read_n(&path).map(Option::unwrap_or_default)
    }

    /// Sets the bytes `contract` has paid for.
    pub fn set_paid_bytes(
        &mut self,
        contract: &ContractHash,
        bytes: u128,
    ) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "paid_bytes");
        self.write_field(&path, &BoundedNat(bytes))
    }

    /// The bytes of storage `contract` uses (`used_bytes`: code, storage and its big maps').
    pub fn used_bytes(&self, contract: &ContractHash) -> Result<u128, LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "used_bytes");
        self.read_n(&path).map(Option::unwrap_or_default)
    }

    /// Sets the bytes `contract` uses.
    pub fn set_used_bytes(
        &mut self,
        contract: &ContractHash,
        bytes: u128,
    ) -> Result<(), LedgerError> {
        let path = paths::contract(&Destination::Originated(*contract), "used_bytes");
        self.write_field(&path, &BoundedNat(bytes))
    }

    // Big maps.

    /// The index `INDEX_ADDRESS` gave `address`, if it registered it
    /// (`Storage.Address_registry.Registry`).
    pub fn address_index(&self, address: &Destination) -> Result<Option<u128>, LedgerError> {
        self.read_n(&paths::address_index(address))
    }

    /// The index of `address`, registering it under the next one when it has none
    /// (`Script_address_registry.index`).
    pub fn register_address(&mut self, address: &Destination) -> Result<u128, LedgerError> {
        if let Some(index) = self.address_index(address)? {
            return Ok(index);
        }
        let next_path = paths::address_registry_next();
        let next = self.read_n(&next_path)?.unwrap_or_default();
        self.write_field(&paths::address_index(address), &BoundedNat(next))?;
        self.write_field(&next_path, &BoundedNat(next.saturating_add(1)))?;
        Ok(next)
    }

    /// The next fresh big-map id.
    pub fn next_big_map_id(&self) -> Result<i64, LedgerError> {
        let path = paths::next_big_map_id();
        let next = self.read_n(&path)?.unwrap_or_default();
        i64::try_from(next).map_err(|_| corrupt(&path, "a big-map id"))
    }

    /// Sets the next fresh big-map id.
    pub fn set_next_big_map_id(&mut self, id: i64) -> Result<(), LedgerError> {
        let id = u128::try_from(id).unwrap_or_default();
        self.write_field(&paths::next_big_map_id(), &BoundedNat(id))
    }

    /// The voting listings of the period (`Vote_storage.update_listings`, at activation): each
    /// delegate's voting power — its full staking balance, mutez
    /// (`Full_staking_balance_repr.voting_weight`) — and their total.
    pub fn set_listings(
        &mut self,
        listings: impl IntoIterator<Item = (PublicKeyHash, u64)>,
    ) -> Result<(), LedgerError> {
        let mut total = 0u128;
        for (delegate, power) in listings {
            self.write_field(
                &paths::vote_listing(&delegate),
                &BoundedNat(u128::from(power)),
            )?;
            total = total.saturating_add(u128::from(power));
        }
        self.write_field(&paths::total_voting_power(), &BoundedNat(total))
    }

    /// `delegate`'s voting power in the listings (0 when not listed).
    pub fn voting_power(&self, delegate: &PublicKeyHash) -> Result<u128, LedgerError> {
        self.read_n(&paths::vote_listing(delegate))
            .map(Option::unwrap_or_default)
    }

    /// The listings' total voting power.
    pub fn total_voting_power(&self) -> Result<u128, LedgerError> {
        self.read_n(&paths::total_voting_power())
            .map(Option::unwrap_or_default)
    }

    /// A fresh temporary big-map id: -1, -2, ... until the next cleanup.
    pub fn fresh_temporary_big_map_id(&mut self) -> i64 {
        self.temporary_big_maps += 1;
        -self.temporary_big_maps
    }

    /// Deletes the temporary big maps and starts their ids again from -1
    /// (`Lazy_storage.cleanup_temporaries`, once a batch of operations has applied).
    pub fn remove_temporary_big_maps(&mut self) -> Result<(), LedgerError> {
        for id in 1..=self.temporary_big_maps {
            self.remove_big_map(-id)?;
        }
        self.temporary_big_maps = 0;
        Ok(())
    }

    /// The key and value types of big map `id`, if it exists.
    pub fn big_map_types(&self, id: i64) -> Result<Option<(Node, Node)>, LedgerError> {
        let key = self.read_micheline(&paths::big_map(id, "key_type"))?;
        let value = self.read_micheline(&paths::big_map(id, "value_type"))?;
        Ok(key.zip(value))
    }

    /// Creates the empty big map `id` of the given types.
    pub fn create_big_map(
        &mut self,
        id: i64,
        key_type: &Node,
        value_type: &Node,
    ) -> Result<(), LedgerError> {
        self.write_micheline(&paths::big_map(id, "key_type"), key_type)?;
        self.write_micheline(&paths::big_map(id, "value_type"), value_type)?;
        self.set_big_map_total_bytes(id, 0)
    }

    /// Makes big map `to` a copy of big map `from` (types, bindings, size).
    pub fn copy_big_map(&mut self, from: i64, to: i64) -> Result<(), LedgerError> {
        let from = paths::big_map_directory(from);
        let left = self.clock.switch(ApplyStage::StateReads);
        let copy = self.tree.find_tree(&*self.source, &from);
        self.clock.switch(left);
        if let Some(copy) = copy? {
            self.put_tree(&paths::big_map_directory(to), &copy)?;
        }
        Ok(())
    }

    /// Deletes big map `id`.
    pub fn remove_big_map(&mut self, id: i64) -> Result<(), LedgerError> {
        let path = paths::big_map_directory(id);
        self.remove(&path)
    }

    /// The value bound in big map `id` to the key whose `expr…` hash is `key_hash`.
    pub fn big_map_get(&self, id: i64, key_hash: &[u8; 32]) -> Result<Option<Node>, LedgerError> {
        Ok(self.big_map_binding(id, key_hash)?.map(|(value, _)| value))
    }

    /// The number of top-level directories of the state (`big_maps`, `contracts`, ...).
    pub fn root_entries(&self) -> Result<u64, LedgerError> {
        let root: [&[u8]; 0] = [];
        Ok(self.tree.length(&*self.source, &root)?)
    }

    /// The hashes of the keys bound in big map `id`, in order (what `Big_map.list_key_values`
    /// walks; [`Ledger::big_map_binding`] reads each binding).
    pub fn big_map_key_hashes(&self, id: i64) -> Result<Vec<[u8; 32]>, LedgerError> {
        let directory = paths::big_map_contents(id);
        let left = self.clock.switch(ApplyStage::StateReads);
        let entries = self.tree.list(&*self.source, &directory);
        self.clock.switch(left);
        entries?
            .iter()
            .map(|(name, _)| {
                let mut key_hash = [0u8; 32];
                hex::decode_to_slice(name, &mut key_hash)
                    .map_err(|_| corrupt(&directory, "hex key hashes"))?;
                Ok(key_hash)
            })
            .collect()
    }

    /// [`Ledger::big_map_get`] with the bytes the value is stored in.
    pub fn big_map_binding(
        &self,
        id: i64,
        key_hash: &[u8; 32],
    ) -> Result<Option<(Node, usize)>, LedgerError> {
        let path = paths::big_map_value(id, key_hash);
        match self.read(&path)? {
            None => Ok(None),
            Some(bytes) => kestrel_micheline::binary::decode(&bytes)
                .map(|value| Some((value, bytes.len())))
                .map_err(|_| corrupt(&path, "binary Micheline")),
        }
    }

    /// The stored size of the binding of `key_hash` in big map `id`, bytes, if bound.
    pub fn big_map_value_size(
        &self,
        id: i64,
        key_hash: &[u8; 32],
    ) -> Result<Option<usize>, LedgerError> {
        Ok(self
            .read(&paths::big_map_value(id, key_hash))?
            .map(|bytes| bytes.len()))
    }

    /// Binds (`Some`) or unbinds (`None`) `key_hash` in big map `id`.
    pub fn big_map_set(
        &mut self,
        id: i64,
        key_hash: &[u8; 32],
        value: Option<&Node>,
    ) -> Result<(), LedgerError> {
        let path = paths::big_map_value(id, key_hash);
        match value {
            Some(value) => self.write_micheline(&path, value),
            None => self.remove(&path),
        }
    }

    /// Binds `key_hash` in big map `id` to `bytes`, a value's binary Micheline (encoded by the
    /// caller, who needs the bytes too).
    pub fn big_map_set_encoded(
        &mut self,
        id: i64,
        key_hash: &[u8; 32],
        bytes: &[u8],
    ) -> Result<(), LedgerError> {
        self.write(&paths::big_map_value(id, key_hash), bytes)
    }

    /// The bytes big map `id` holds (`total_bytes`).
    pub fn big_map_total_bytes(&self, id: i64) -> Result<u128, LedgerError> {
        self.read_n(&paths::big_map(id, "total_bytes"))
            .map(Option::unwrap_or_default)
    }

    /// Sets the bytes big map `id` holds.
    pub fn set_big_map_total_bytes(&mut self, id: i64, bytes: u128) -> Result<(), LedgerError> {
        self.write_field(&paths::big_map(id, "total_bytes"), &BoundedNat(bytes))
    }

    // Tickets.

    /// The amount of a ticket an owner holds, by Octez's ticket hash, with the bytes it is
    /// stored in; `None` when the owner holds none.
    pub fn ticket_balance(
        &self,
        ticket_hash: &[u8; 32],
    ) -> Result<Option<(BigInt, usize)>, LedgerError> {
        let path = paths::ticket_balance(ticket_hash);
        let Some(bytes) = self.read(&path)? else {
            return Ok(None);
        };
        let mut reader = Reader::new(&bytes);
        match Zarith::read(&mut reader) {
            Ok(Zarith(amount)) if reader.remaining_bytes() == 0 => Ok(Some((amount, bytes.len()))),
            _ => Err(corrupt(&path, "an integer")),
        }
    }

    /// Sets a ticket balance (`Some`), or removes it (`None`): the bytes now stored (0 when
    /// removed).
    pub fn set_ticket_balance(
        &mut self,
        ticket_hash: &[u8; 32],
        amount: Option<&BigInt>,
    ) -> Result<usize, LedgerError> {
        let path = paths::ticket_balance(ticket_hash);
        match amount {
            None => self.remove(&path).map(|()| 0),
            Some(amount) => {
                let mut bytes = Vec::with_capacity(10);
                Zarith(amount.clone()).write(&mut bytes);
                self.write(&path, &bytes)?;
                Ok(bytes.len())
            }
        }
    }

    /// The ticket table's bytes, `used` or `paid` for (`ticket_balance/used_bytes`,
    /// `paid_bytes`; absent reads 0).
    pub fn ticket_table_bytes(&self, field: TicketTableBytes) -> Result<BigInt, LedgerError> {
        let path = paths::ticket_table_bytes(field.name());
        let Some(bytes) = self.read(&path)? else {
            return Ok(BigInt::default());
        };
        let mut reader = Reader::new(&bytes);
        match Zarith::read(&mut reader) {
            Ok(Zarith(value)) if reader.remaining_bytes() == 0 => Ok(value),
            _ => Err(corrupt(&path, "an integer")),
        }
    }

    /// Sets the ticket table's `used` or `paid` bytes.
    pub fn set_ticket_table_bytes(
        &mut self,
        field: TicketTableBytes,
        bytes: &BigInt,
    ) -> Result<(), LedgerError> {
        self.write_field(
            &paths::ticket_table_bytes(field.name()),
            &Zarith(bytes.clone()),
        )
    }

    // Encodings.

    fn read(&self, path: &Path) -> Result<Option<Arc<[u8]>>, LedgerError> {
        let left = self.clock.switch(ApplyStage::StateReads);
        let found = self.tree.find(&*self.source, path);
        self.clock.switch(left);
        Ok(found?)
    }

    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
        self.timed_write(|ledger| {
            ledger.record(path)?;
            Ok(ledger.tree.add_in_place(&*ledger.source, path, bytes)?)
        })
    }

    fn remove(&mut self, path: &Path) -> Result<(), LedgerError> {
        self.timed_write(|ledger| {
            ledger.record(path)?;
            Ok(ledger.tree.remove_in_place(&*ledger.source, path)?)
        })
    }

    fn put_tree(&mut self, path: &Path, subtree: &Tree) -> Result<(), LedgerError> {
        self.timed_write(|ledger| {
            ledger.record(path)?;
            Ok(ledger
                .tree
                .add_tree_in_place(&*ledger.source, path, subtree)?)
        })
    }

    /// `change` timed as [`ApplyStage::StateWrites`].
    fn timed_write<T>(
        &mut self,
        change: impl FnOnce(&mut Ledger) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let left = self.clock.switch(ApplyStage::StateWrites);
        let result = change(self);
        self.clock.switch(left);
        result
    }

    // Checkpoints: an operation's changes undone without a snapshot of the tree. A snapshot
    // (a clone) shares every directory, so each write after it copies the directories on its
    // path and dropping the snapshot frees the old ones; an undo record costs one lookup.

    /// Starts recording what writes replace, so that [`Ledger::rollback`] can return here.
    /// Checkpoints nest; each is released or rolled back, innermost first.
    pub(crate) fn checkpoint(&mut self) -> Checkpoint {
        let outermost = self.undo.is_none();
        let records = self.undo.get_or_insert_with(Vec::new).len();
        Checkpoint {
            records,
            temporary_big_maps: self.temporary_big_maps,
            outermost,
        }
    }

    /// Keeps the changes since `checkpoint` (an enclosing checkpoint can still undo them).
    pub(crate) fn release(&mut self, checkpoint: Checkpoint) {
        if checkpoint.outermost {
            self.undo = None;
        }
    }

    /// Undoes every change since `checkpoint`, newest first. The paths undone were just written,
    /// so their directories are in memory: nothing is loaded from the store.
    pub(crate) fn rollback(&mut self, checkpoint: Checkpoint) -> Result<(), LedgerError> {
        self.timed_write(|ledger| ledger.undo_to(checkpoint))
    }

    fn undo_to(&mut self, checkpoint: Checkpoint) -> Result<(), LedgerError> {
        let undone = match &mut self.undo {
            Some(undo) => undo.split_off(checkpoint.records.min(undo.len())),
            None => Vec::new(),
        };
        for record in undone.into_iter().rev() {
            let result = match &record.previous {
                Some(previous) => {
                    self.tree
                        .add_tree_in_place(&*self.source, &record.path, previous)
                }
                None => self.tree.remove_in_place(&*self.source, &record.path),
            };
            result?;
        }
        self.temporary_big_maps = checkpoint.temporary_big_maps;
        self.release(checkpoint);
        Ok(())
    }

    /// Notes what `path` holds before a write, when a checkpoint is open.
    fn record(&mut self, path: &Path) -> Result<(), LedgerError> {
        if self.undo.is_some() {
            let previous = self.tree.find_tree(&*self.source, path)?;
            if let Some(undo) = &mut self.undo {
                undo.push(Undo {
                    path: *path,
                    previous,
                });
            }
        }
        Ok(())
    }

    fn write_field<'a>(&mut self, path: &Path, value: &impl Field<'a>) -> Result<(), LedgerError> {
        let mut bytes = Vec::with_capacity(10);
        value.write(&mut bytes);
        self.write(path, &bytes)
    }

    fn read_n(&self, path: &Path) -> Result<Option<u128>, LedgerError> {
        let Some(bytes) = self.read(path)? else {
            return Ok(None);
        };
        let mut reader = Reader::new(&bytes);
        match BoundedNat::read(&mut reader) {
            Ok(value) if reader.remaining_bytes() == 0 => Ok(Some(value.0)),
            _ => Err(corrupt(path, "a natural")),
        }
    }

    fn read_mutez(&self, path: &Path) -> Result<Option<u64>, LedgerError> {
        let Some(bytes) = self.read(path)? else {
            return Ok(None);
        };
        let mut reader = Reader::new(&bytes);
        match Mutez::read(&mut reader) {
            Ok(value) if reader.remaining_bytes() == 0 => Ok(Some(value.0)),
            _ => Err(corrupt(path, "an amount of mutez")),
        }
    }

    fn read_micheline(&self, path: &Path) -> Result<Option<Node>, LedgerError> {
        match self.read(path)? {
            None => Ok(None),
            Some(bytes) => kestrel_micheline::binary::decode(&bytes)
                .map(Some)
                .map_err(|_| corrupt(path, "binary Micheline")),
        }
    }

    fn write_micheline(&mut self, path: &Path, node: &Node) -> Result<(), LedgerError> {
        let bytes =
            kestrel_micheline::binary::encode(node).map_err(|_| LedgerError::Unencodable {
                path: path_text(path),
            })?;
        self.write(path, &bytes)
    }
}

fn corrupt(path: &Path, expected: &'static str) -> LedgerError {
    LedgerError::Corrupt {
        path: path_text(path),
        expected,
    }
}

fn path_text(path: &Path) -> String {
    path.iter()
        .map(|name| String::from_utf8_lossy(name.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bootstrap(index: usize) -> PublicKeyHash {
        PublicKey::from_b58check(MOCKUP_BOOTSTRAP_KEYS[index])
            .unwrap()
            .hash()
    }

    #[test]
    fn genesis_matches_mockup() {
        let ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let bootstrap1 = bootstrap(0);
        assert_eq!(
            bootstrap1.to_b58check(),
            "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx"
        );
        let contract = Destination::Implicit(bootstrap1);
        assert_eq!(ledger.balance(&contract).unwrap(), 3_800_000_000_000);
        assert_eq!(ledger.staked(&bootstrap1).unwrap(), 200_000_000_000);
        assert_eq!(ledger.counter(&bootstrap1).unwrap(), Some(0));
        assert!(ledger.manager_key(&bootstrap1).unwrap().is_some());
        assert_eq!(ledger.delegate(&contract).unwrap(), Some(bootstrap1));
        assert_eq!(ledger.global_counter().unwrap(), 0);
        assert_eq!(ledger.next_big_map_id().unwrap(), 0);
    }

    #[test]
    fn registered_addresses_keep_their_index() {
        let mut ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let (first, second) = (
            Destination::Implicit(bootstrap(0)),
            Destination::Implicit(bootstrap(1)),
        );
        assert_eq!(ledger.address_index(&first).unwrap(), None);
        assert_eq!(ledger.register_address(&first).unwrap(), 0);
        assert_eq!(ledger.register_address(&second).unwrap(), 1);
        assert_eq!(ledger.register_address(&first).unwrap(), 0);
        assert_eq!(ledger.address_index(&second).unwrap(), Some(1));
    }

    #[test]
    fn unknown_account_is_empty() {
        let ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let stranger =
            PublicKeyHash::from_b58check("tz1ddb9NMYHZi5UzPdzTZMYQQZoMub195zgv").unwrap();
        assert!(ledger
            .is_allocated(&Destination::Implicit(stranger))
            .unwrap());
        let mut unknown = stranger.to_bytes();
        unknown[20] ^= 1;
        let unknown = PublicKeyHash::try_from_bytes(&unknown).unwrap();
        assert!(!ledger
            .is_allocated(&Destination::Implicit(unknown))
            .unwrap());
        assert_eq!(ledger.counter(&unknown).unwrap(), None);
        assert_eq!(ledger.balance(&Destination::Implicit(unknown)).unwrap(), 0);
    }

    #[test]
    fn big_map_bindings_round_trip() {
        let mut ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let nat = kestrel_micheline::parse_expression("nat").unwrap();
        let value = kestrel_micheline::parse_expression("Pair 1 \"a\"").unwrap();
        ledger.create_big_map(3, &nat, &nat).unwrap();
        ledger.big_map_set(3, &[1; 32], Some(&value)).unwrap();
        let encoded =
            |node: Option<Node>| node.map(|node| kestrel_micheline::binary::encode(&node).unwrap());
        let expected = encoded(Some(value));
        assert_eq!(encoded(ledger.big_map_get(3, &[1; 32]).unwrap()), expected);
        ledger.copy_big_map(3, 4).unwrap();
        ledger.big_map_set(3, &[1; 32], None).unwrap();
        assert!(ledger.big_map_get(3, &[1; 32]).unwrap().is_none());
        assert_eq!(encoded(ledger.big_map_get(4, &[1; 32]).unwrap()), expected);
        ledger.remove_big_map(4).unwrap();
        assert!(ledger.big_map_types(4).unwrap().is_none());
        assert!(ledger.big_map_types(3).unwrap().is_some());
    }

    #[test]
    fn rollbacks_return_to_their_checkpoint_and_releases_keep_changes() {
        let mut ledger = Ledger::genesis(&Genesis::mockup()).unwrap();
        let nat = kestrel_micheline::parse_expression("nat").unwrap();
        let value = kestrel_micheline::parse_expression("7").unwrap();
        ledger.create_big_map(3, &nat, &nat).unwrap();
        let account = Destination::Implicit(bootstrap(0));
        let genesis_hash = ledger.tree().hash();
        let outer = ledger.checkpoint();
        ledger.set_balance(&account, 1).unwrap();
        ledger.big_map_set(3, &[1; 32], Some(&value)).unwrap();
        let after_outer_writes = ledger.tree().hash();
        // Inner changes: new paths, a removed account, a copied big map, a temporary id.
        let inner = ledger.checkpoint();
        ledger.copy_big_map(3, 4).unwrap();
        ledger.big_map_set(3, &[1; 32], None).unwrap();
        ledger.big_map_set(3, &[2; 32], Some(&value)).unwrap();
        ledger.delete_implicit(&bootstrap(1)).unwrap();
        assert_eq!(ledger.fresh_temporary_big_map_id(), -1);
        assert_ne!(ledger.tree().hash(), after_outer_writes);
        ledger.rollback(inner).unwrap();
        assert_eq!(ledger.tree().hash(), after_outer_writes);
        assert_eq!(ledger.fresh_temporary_big_map_id(), -1);
        // A released inner checkpoint's changes go with the outer one.
        let inner = ledger.checkpoint();
        ledger.set_balance(&account, 2).unwrap();
        ledger.release(inner);
        ledger.rollback(outer).unwrap();
        assert_eq!(ledger.tree().hash(), genesis_hash);
        assert!(ledger.undo.is_none());
        // Released outermost: the changes stay and nothing is recorded any more.
        let outer = ledger.checkpoint();
        ledger.set_balance(&account, 3).unwrap();
        ledger.release(outer);
        assert!(ledger.undo.is_none());
        assert_eq!(ledger.balance(&account).unwrap(), 3);
    }
}
