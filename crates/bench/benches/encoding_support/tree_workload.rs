//! The tree workload shared by the criterion bench (`encoding.rs`) and the experiment driver
//! (`encoding_tree_driver.rs`): the tree as the bench builds it and the hand-written baseline
//! codec, so both measure the same definition.

// Each includer uses a part of this module.
#![allow(dead_code)]

use super::tree::Tree;

/// A complete tree of `2^levels - 1` nodes.
pub fn build_tree(levels: u32, next_leaf: &mut i64) -> Tree {
    if levels == 1 {
        *next_leaf += 1;
        return Tree::Leaf(*next_leaf);
    }
    Tree::Node((
        Box::new(build_tree(levels - 1, next_leaf)),
        Box::new(build_tree(levels - 1, next_leaf)),
    ))
}

/// The hand-written baseline: the same bytes, written directly for this one type.
pub mod baseline {
    use super::Tree;

    /// The same depth limit as Kestrel's default, checked the same way.
    const MAX_DEPTH: usize = kestrel_encoding::recursive::DEFAULT_MAX_DEPTH;

    #[derive(Debug)]
    pub enum Error {
        NotEnoughData,
        UnexpectedTag,
        TooDeep,
        ExtraBytes,
    }

    pub fn encode(tree: &Tree, out: &mut Vec<u8>) {
        match tree {
            Tree::Leaf(value) => {
                out.push(0);
                out.extend_from_slice(&value.to_be_bytes());
            }
            Tree::Node((left, right)) => {
                out.push(1);
                encode(left, out);
                encode(right, out);
            }
        }
    }

    fn read(input: &[u8], offset: &mut usize, depth: usize) -> Result<Tree, Error> {
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        let tag = *input.get(*offset).ok_or(Error::NotEnoughData)?;
        *offset += 1;
        match tag {
            0 => {
                let bytes = input
                    .get(*offset..*offset + 8)
                    .ok_or(Error::NotEnoughData)?;
                *offset += 8;
                let mut array = [0u8; 8];
                array.copy_from_slice(bytes);
                Ok(Tree::Leaf(i64::from_be_bytes(array)))
            }
            1 => {
                // Each child is boxed as soon as it is read, as Kestrel's `boxed` does: holding
                // both children on the stack and boxing them together afterwards changes the
                // allocation order (and so the memory layout of the tree the next drop walks).
                let left = Box::new(read(input, offset, depth + 1)?);
                let right = Box::new(read(input, offset, depth + 1)?);
                Ok(Tree::Node((left, right)))
            }
            _ => Err(Error::UnexpectedTag),
        }
    }

    pub fn decode(input: &[u8]) -> Result<Tree, Error> {
        let mut offset = 0;
        let tree = read(input, &mut offset, 0)?;
        if offset != input.len() {
            return Err(Error::ExtraBytes);
        }
        Ok(tree)
    }
}
