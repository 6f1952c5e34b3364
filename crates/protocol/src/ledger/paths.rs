//! Where protocol 025's state lives in the context tree (`docs/formats/protocol-state.md`): the
//! paths of Octez's `storage.ml`, built as lists of names. Contracts are indexed by the hex of
//! their 22-byte binary form (`Contract_repr.Index`), big maps by their decimal id
//! (`Lazy_storage_kind.Big_map.Id`), big-map keys and tickets by the hex of their hash, one
//! segment (`Path_encoding.Make_hex`).

use kestrel_crypto::{Destination, PublicKeyHash};

/// The most names a path has (`big_maps/index/<id>/contents/<hex key hash>/data`).
const PATH_NAMES_MAX: usize = 6;

/// The longest name built from data: the hex of a 32-byte hash (a contract's 22 bytes take 44,
/// a big-map id at most 20 decimal digits).
const BUILT_NAME_BYTES_MAX: usize = 64;

/// One name of a path: a fixed name, or one built from a contract, an id or a hash, kept inline
/// (every state access builds a path: none allocates).
#[derive(Clone, Copy)]
pub enum Name {
    /// A name of the layout.
    Fixed(&'static [u8]),
    /// The first `length` bytes of `bytes`.
    Built {
        bytes: [u8; BUILT_NAME_BYTES_MAX],
        length: u8,
    },
}

impl AsRef<[u8]> for Name {
    fn as_ref(&self) -> &[u8] {
        match self {
            Name::Fixed(name) => name,
            Name::Built { bytes, length } => &bytes[..usize::from(*length)],
        }
    }
}

/// A path in the tree: one name per level (read as a slice of names).
#[derive(Clone, Copy)]
pub struct Path {
    names: [Name; PATH_NAMES_MAX],
    length: usize,
}

impl std::ops::Deref for Path {
    type Target = [Name];

    fn deref(&self) -> &[Name] {
        &self.names[..self.length]
    }
}

impl Path {
    fn of(names: &[&'static str]) -> Path {
        let mut path = Path {
            names: [Name::Fixed(b""); PATH_NAMES_MAX],
            length: 0,
        };
        for name in names {
            path.push(Name::Fixed(name.as_bytes()));
        }
        path
    }

    /// Appends `name`; the layout's paths are at most [`PATH_NAMES_MAX`] long.
    fn push(&mut self, name: Name) {
        self.names[self.length] = name;
        self.length += 1;
    }
}

/// `contracts/global_counter`: the last counter handed out.
pub fn global_counter() -> Path {
    Path::of(&["contracts", "global_counter"])
}

/// `contracts/index/<hex contract>/<field>`.
pub fn contract(contract: &Destination, field: &'static str) -> Path {
    let mut path = contract_directory(contract);
    path.push(Name::Fixed(field.as_bytes()));
    path
}

/// `contracts/index/<hex contract>`: everything about one contract.
pub fn contract_directory(contract: &Destination) -> Path {
    let mut path = Path::of(&["contracts", "index"]);
    path.push(hex_name(&contract.to_bytes()));
    path
}

/// `address_registry/next`: the index `INDEX_ADDRESS` gives the next address it registers.
pub fn address_registry_next() -> Path {
    Path::of(&["address_registry", "next"])
}

/// `address_registry/addresses/<hex destination>`: the index of one registered address.
pub fn address_index(destination: &Destination) -> Path {
    let mut path = Path::of(&["address_registry", "addresses"]);
    path.push(hex_name(&destination.to_bytes()));
    path
}

/// `big_maps/next`: the next fresh big-map id.
pub fn next_big_map_id() -> Path {
    Path::of(&["big_maps", "next"])
}

/// `big_maps/index/<id>`: everything about one big map.
pub fn big_map_directory(id: i64) -> Path {
    let mut path = Path::of(&["big_maps", "index"]);
    let mut bytes = [0; BUILT_NAME_BYTES_MAX];
    let mut digits = std::io::Cursor::new(&mut bytes[..]);
    // An i64 has at most 20 characters: the write always fits.
    let _ = std::io::Write::write_fmt(&mut digits, format_args!("{id}"));
    let length = digits.position() as u8;
    path.push(Name::Built { bytes, length });
    path
}

/// `big_maps/index/<id>/<field>` (`key_type`, `value_type`, `total_bytes`).
pub fn big_map(id: i64, field: &'static str) -> Path {
    let mut path = big_map_directory(id);
    path.push(Name::Fixed(field.as_bytes()));
    path
}

/// `big_maps/index/<id>/contents/<hex key hash>/data`: one binding.
pub fn big_map_value(id: i64, key_hash: &[u8; 32]) -> Path {
    let mut path = big_map_directory(id);
    path.push(Name::Fixed(b"contents"));
    path.push(hex_name(key_hash));
    path.push(Name::Fixed(b"data"));
    path
}

/// `big_maps/index/<id>/contents`: the directory of the bindings, one per key hash.
pub fn big_map_contents(id: i64) -> Path {
    let mut path = big_map_directory(id);
    path.push(Name::Fixed(b"contents"));
    path
}

/// `ticket_balance/table/<hex ticket hash>/data`: the amount of one ticket an owner holds, keyed
/// by Octez's ticket hash (ticketer, contents type, contents, owner).
pub fn ticket_balance(ticket_hash: &[u8; 32]) -> Path {
    let mut path = Path::of(&["ticket_balance", "table"]);
    path.push(hex_name(ticket_hash));
    path.push(Name::Fixed(b"data"));
    path
}

/// `ticket_balance/<field>` (`used_bytes`, `paid_bytes`): the ticket table's size, and what
/// was paid for.
pub fn ticket_table_bytes(field: &'static str) -> Path {
    Path::of(&["ticket_balance", field])
}

/// `votes/listings/<hex key hash>`: a delegate's voting power in the current period's listings.
pub fn vote_listing(delegate: &PublicKeyHash) -> Path {
    let mut path = Path::of(&["votes", "listings"]);
    path.push(hex_name(&delegate.to_bytes()));
    path
}

/// `votes/voting_power_in_listings`: the listings' total voting power.
pub fn total_voting_power() -> Path {
    Path::of(&["votes", "voting_power_in_listings"])
}

/// Lowercase hex of `bytes` (at most 32 of them) as a path name.
fn hex_name(bytes: &[u8]) -> Name {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut name = [0; BUILT_NAME_BYTES_MAX];
    for (pair, byte) in name.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
    Name::Built {
        bytes: name,
        length: (2 * bytes.len().min(BUILT_NAME_BYTES_MAX / 2)) as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &Path) -> String {
        path.iter()
            .map(|name| String::from_utf8_lossy(name.as_ref()).into_owned())
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
        assert_eq!(
            text(&big_map(i64::MIN, "total_bytes")),
            "big_maps/index/-9223372036854775808/total_bytes"
        );
    }
}
