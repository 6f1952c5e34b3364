//! Where protocol 025's state lives in the context tree (`docs/formats/protocol-state.md`): the
//! paths of Octez's `storage.ml`, built as lists of names. Contracts are indexed by the hex of
//! their 22-byte binary form (`Contract_repr.Index`), big maps by their decimal id
//! (`Lazy_storage_kind.Big_map.Id`), big-map keys and tickets by the hex of their hash, one
//! segment (`Path_encoding.Make_hex`).

use kestrel_crypto::{Destination, PublicKeyHash};

/// A path in the tree: one name per level.
pub type Path = Vec<Vec<u8>>;

/// `contracts/global_counter`: the last counter handed out.
pub fn global_counter() -> Path {
    names(&["contracts", "global_counter"])
}

/// `contracts/index/<hex contract>/<field>`.
pub fn contract(contract: &Destination, field: &str) -> Path {
    let mut path = contract_directory(contract);
    path.push(field.as_bytes().to_vec());
    path
}

/// `contracts/index/<hex contract>`: everything about one contract.
pub fn contract_directory(contract: &Destination) -> Path {
    let mut path = names(&["contracts", "index"]);
    path.push(hex_name(&contract.to_bytes()));
    path
}

/// `address_registry/next`: the index `INDEX_ADDRESS` gives the next address it registers.
pub fn address_registry_next() -> Path {
    names(&["address_registry", "next"])
}

/// `address_registry/addresses/<hex destination>`: the index of one registered address.
pub fn address_index(destination: &Destination) -> Path {
    let mut path = names(&["address_registry", "addresses"]);
    path.push(hex_name(&destination.to_bytes()));
    path
}

/// `big_maps/next`: the next fresh big-map id.
pub fn next_big_map_id() -> Path {
    names(&["big_maps", "next"])
}

/// `big_maps/index/<id>`: everything about one big map.
pub fn big_map_directory(id: i64) -> Path {
    let mut path = names(&["big_maps", "index"]);
    path.push(id.to_string().into_bytes());
    path
}

/// `big_maps/index/<id>/<field>` (`key_type`, `value_type`, `total_bytes`).
pub fn big_map(id: i64, field: &str) -> Path {
    let mut path = big_map_directory(id);
    path.push(field.as_bytes().to_vec());
    path
}

/// `big_maps/index/<id>/contents/<hex key hash>/data`: one binding.
pub fn big_map_value(id: i64, key_hash: &[u8; 32]) -> Path {
    let mut path = big_map_directory(id);
    path.push(b"contents".to_vec());
    path.push(hex_name(key_hash));
    path.push(b"data".to_vec());
    path
}

/// `ticket_balance/table/<hex ticket hash>`: the amount of one ticket an owner holds, keyed by
/// Octez's ticket hash (ticketer, contents type, contents, owner).
pub fn ticket_balance(ticket_hash: &[u8; 32]) -> Path {
    let mut path = names(&["ticket_balance", "table"]);
    path.push(hex_name(ticket_hash));
    path
}

/// `votes/listings/<hex key hash>`: a delegate's voting power in the current period's listings.
pub fn vote_listing(delegate: &PublicKeyHash) -> Path {
    let mut path = names(&["votes", "listings"]);
    path.push(hex_name(&delegate.to_bytes()));
    path
}

/// `votes/voting_power_in_listings`: the listings' total voting power.
pub fn total_voting_power() -> Path {
    names(&["votes", "voting_power_in_listings"])
}

fn names(names: &[&str]) -> Path {
    names.iter().map(|name| name.as_bytes().to_vec()).collect()
}

/// Lowercase hex of `bytes` as a path name (a table lookup per nibble: every state access
/// builds one).
fn hex_name(bytes: &[u8]) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut name = Vec::with_capacity(2 * bytes.len());
    for byte in bytes {
        name.push(DIGITS[usize::from(byte >> 4)]);
        name.push(DIGITS[usize::from(byte & 0x0f)]);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &Path) -> String {
        path.iter()
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect::<Vec<_>>()
            .join("/")
    }

    #[test]
    fn paths_follow_octez_layout() {
        let bootstrap1 =
            Destination::from_b58check("tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx").unwrap();
        assert_eq!(
            text(&contract(&bootstrap1, "balance")),
            "contracts/index/000002298c03ed7d454a101eb7022bc95f7e5f41ac78/balance"
        );
        assert_eq!(
            text(&big_map_value(7, &[0xab; 32])),
            format!("big_maps/index/7/contents/{}/data", "ab".repeat(32))
        );
    }
}
