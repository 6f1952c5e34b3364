//! A binary tree as a recursive union (`Leaf` of an `int64`, `Node` of two subtrees), shared by the
//! combinator tests, the property tests and the tree benchmark (`crates/bench/benches/encoding.rs`
//! includes this file by path), so all three check and measure the same definition.

use kestrel_encoding::{boxed, case, int64, mu, tup, union, BuildError, Mu, Tag, Uint8Tag};

/// A binary tree with `int64` leaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// A leaf holding a value.
    Leaf(i64),
    /// An inner node with its two subtrees.
    Node((Box<Tree>, Box<Tree>)),
}

/// The tree's encoding: tag 0 and a big-endian `int64` for a leaf, tag 1 and both subtrees for a node.
/// The tag width and the tags are fixed in the encoding's type (`Uint8Tag`, `Tag::<N>`), so the
/// union's dispatch compiles to compares against constants.
pub fn tree_encoding() -> Result<Mu<Tree>, BuildError> {
    mu("tree", |tree| {
        union(
            Uint8Tag,
            (
                case(
                    Tag::<0>,
                    "Leaf",
                    int64(),
                    |t: &Tree| match t {
                        Tree::Leaf(value) => Some(value),
                        Tree::Node(_) => None,
                    },
                    Tree::Leaf,
                ),
                case(
                    Tag::<1>,
                    "Node",
                    tup((boxed(tree), boxed(tree)))?,
                    |t: &Tree| match t {
                        Tree::Node(children) => Some(children),
                        Tree::Leaf(_) => None,
                    },
                    Tree::Node,
                ),
            ),
        )
    })
}
