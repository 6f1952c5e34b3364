//! A [`Host`] over fixtures held in memory: the contracts, big maps, voting powers and address
//! registry a TZT test declares (or none, for `run script`), with fresh big map ids and
//! placeholder origination addresses counted from given starting points.

use kestrel_micheline::Node;
use kestrel_michelson::{
    Address, BigMapTypes, Destination, FreshIds, Host, HostView, Int, KeyHash, StoredRead, Type,
};
use std::collections::{BTreeMap, HashMap};

/// The address the registry of `INDEX_ADDRESS` holds at index 0, in TZT's environment and in
/// octez-client's mockup (whose recorded `INDEX_ADDRESS` of a new address gives 1).
pub const REGISTERED_ADDRESS: &str = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";

/// A contract assumed to exist.
pub struct FixtureContract {
    /// Its parameter type, with its entrypoint annotations.
    pub parameter: Node,
    /// Its storage type and value, if declared (views need them).
    pub storage: Option<(Type, Node)>,
    /// Its views.
    pub views: Vec<FixtureView>,
    /// Its balance, mutez.
    pub balance_mutez: i64,
}

/// A view of a [`FixtureContract`].
pub struct FixtureView {
    /// Its name.
    pub name: String,
    /// Its input type.
    pub input_type: Type,
    /// Its output type.
    pub output_type: Type,
    /// Its code, macros expanded.
    pub code: Node,
}

/// A stored big map.
pub struct FixtureBigMap {
    /// Its types.
    pub types: BigMapTypes,
    /// Its values by key hash.
    pub values: HashMap<[u8; 32], Node>,
}

/// The fixtures.
pub struct FixtureHost {
    /// Contracts by address.
    pub contracts: BTreeMap<Destination, FixtureContract>,
    /// Big maps by id.
    pub big_maps: BTreeMap<Int, FixtureBigMap>,
    /// `VOTING_POWER` by delegate.
    pub voting_powers: BTreeMap<KeyHash, u64>,
    /// `TOTAL_VOTING_POWER`.
    pub total_voting_power: u64,
    /// The address registry of `INDEX_ADDRESS`.
    pub address_registry: BTreeMap<Destination, u64>,
    /// Fresh big map ids and origination addresses.
    pub fresh: FreshIds,
}

impl FixtureHost {
    /// No fixtures but the registered address; fresh big map ids start at `first_big_map_id`.
    pub fn new(first_big_map_id: i64) -> FixtureHost {
        let registered = Address::from_string(REGISTERED_ADDRESS)
            .expect("constant address is valid")
            .destination;
        FixtureHost {
            contracts: BTreeMap::new(),
            big_maps: BTreeMap::new(),
            voting_powers: BTreeMap::new(),
            total_voting_power: 0,
            address_registry: BTreeMap::from([(registered, 0)]),
            fresh: FreshIds::new(first_big_map_id),
        }
    }

    /// The contract at `address`, created with a `unit` parameter if not yet declared.
    pub fn contract_mut(&mut self, address: Destination) -> &mut FixtureContract {
        self.contracts
            .entry(address)
            .or_insert_with(|| FixtureContract {
                parameter: Node::prim(kestrel_micheline::Prim::T_unit, vec![]),
                storage: None,
                views: Vec::new(),
                balance_mutez: 0,
            })
    }
}

impl Host for FixtureHost {
    fn big_map_types(&self, id: &Int) -> StoredRead<Option<BigMapTypes>> {
        StoredRead::free(self.big_maps.get(id).map(|map| map.types.clone()))
    }

    /// Fixtures are not a carbonated store: reads are free.
    fn big_map_value(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<Option<Node>> {
        StoredRead::free(
            self.big_maps
                .get(id)
                .and_then(|map| map.values.get(key_hash).cloned()),
        )
    }

    fn big_map_mem(&self, id: &Int, key_hash: &[u8; 32]) -> StoredRead<bool> {
        StoredRead::free(
            self.big_maps
                .get(id)
                .is_some_and(|map| map.values.contains_key(key_hash)),
        )
    }

    fn contract_parameter(&self, contract: &Destination) -> Option<Node> {
        self.contracts
            .get(contract)
            .map(|contract| contract.parameter.clone())
    }

    fn view(&self, contract: &Destination, name: &str) -> Option<HostView> {
        let contract = self.contracts.get(contract)?;
        let view = contract.views.iter().find(|view| view.name == name)?;
        let (storage_type, storage) = contract.storage.clone()?;
        Some(HostView {
            input_type: view.input_type.clone(),
            output_type: view.output_type.clone(),
            code: view.code.clone(),
            storage_type,
            storage,
            balance_mutez: contract.balance_mutez,
        })
    }

    fn voting_power(&self, delegate: &KeyHash) -> u64 {
        self.voting_powers.get(delegate).copied().unwrap_or(0)
    }

    fn total_voting_power(&self) -> u64 {
        self.total_voting_power
    }

    fn address_index(&self, address: &Destination) -> Option<u64> {
        self.address_registry.get(address).copied()
    }

    fn index_address(&mut self, address: &Destination) -> u64 {
        let next = self.address_registry.len() as u64;
        *self.address_registry.entry(*address).or_insert(next)
    }

    fn fresh_big_map_id(&mut self) -> Int {
        self.fresh.big_map_id()
    }
    fn fresh_temporary_big_map_id(&mut self) -> Int {
        self.fresh.temporary_big_map_id()
    }

    fn fresh_contract_address(&mut self) -> Destination {
        self.fresh.contract_address()
    }
}
