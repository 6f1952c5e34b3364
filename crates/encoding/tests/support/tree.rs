//! A binary tree as a recursive union (`Leaf` of an `int64`, `Node` of two subtrees), shared by the
//! combinator tests, the property tests and the tree benchmark (`crates/bench/benches/encoding.rs`
//! includes this file by path), so all three check and measure the same definition.

// Each includer uses a part of this file.
#![allow(dead_code)]

use kestrel_encoding::{
    boxed, case, int64, mu, tup, union, BuildError, CaseTag, Mu, Tag, TagWidth, Uint8Tag,
};

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
    tree_encoding_with(Uint8Tag, Tag::<0>, Tag::<1>)
}

/// The tree's encoding with the given tag width and tags, fixed at run time or in the type.
pub fn tree_encoding_with(
    tag_size: impl TagWidth,
    leaf_tag: impl CaseTag,
    node_tag: impl CaseTag,
) -> Result<Mu<Tree>, BuildError> {
    mu("tree", |tree| {
        union(
            tag_size,
            (
                case(leaf_tag, "Leaf", int64(), leaf_of, Tree::Leaf),
                case(
                    node_tag,
                    "Node",
                    tup((boxed(tree), boxed(tree)))?,
                    children_of,
                    Tree::Node,
                ),
            ),
        )
    })
}

/// The value of a leaf.
pub fn leaf_of(tree: &Tree) -> Option<&i64> {
    match tree {
        Tree::Leaf(value) => Some(value),
        Tree::Node(_) => None,
    }
}

/// The children of a node.
pub fn children_of(tree: &Tree) -> Option<&(Box<Tree>, Box<Tree>)> {
    match tree {
        Tree::Node(children) => Some(children),
        Tree::Leaf(_) => None,
    }
}
