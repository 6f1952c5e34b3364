//! Canonical locations: Octez numbers the nodes of an expression in prefix order, the root being
//! 0 and every node (int, string, bytes, application, sequence) adding one
//! (`Micheline.strip_locations`, `micheline.location` in the encoding's description). The
//! `location: N` of `--trace-stack` output and of typechecking errors are these numbers.
//!
//! The walk uses an explicit stack, so trees of any depth can be numbered.

use crate::node::Node;

/// The nodes of `root` with their canonical locations, in prefix order (location `n` is the
/// `n`-th item, counting from 0).
pub fn prefix_order(root: &Node) -> PrefixOrder<'_> {
    PrefixOrder {
        pending: vec![std::slice::from_ref(root)],
        next_location: 0,
    }
}

/// The node at canonical location `location` in `root`, if there are that many nodes.
pub fn node_at(root: &Node, location: usize) -> Option<&Node> {
    prefix_order(root).nth(location).map(|(_, node)| node)
}

/// The number of nodes in `root` (one more than its largest location).
pub fn node_count(root: &Node) -> usize {
    prefix_order(root).count()
}

/// Iterator over `(location, node)` pairs in prefix order; see [`prefix_order`].
pub struct PrefixOrder<'a> {
    /// The siblings still to visit at each open level, innermost last (one entry per level,
    /// not per node).
    pending: Vec<&'a [Node]>,
    next_location: usize,
}

impl<'a> Iterator for PrefixOrder<'a> {
    type Item = (usize, &'a Node);

    fn next(&mut self) -> Option<(usize, &'a Node)> {
        let node = loop {
            let siblings = self.pending.last_mut()?;
            if let Some((node, rest)) = siblings.split_first() {
                *siblings = rest;
                break node;
            }
            self.pending.pop();
        };
        if !node.children().is_empty() {
            self.pending.push(node.children());
        }
        let location = self.next_location;
        self.next_location += 1;
        Some((location, node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_toplevel;
    use crate::prim::Prim;

    #[test]
    fn locations_follow_octez_numbering() {
        // In the recorded trace of opcodes/add_bls12_381_fr.tz, CAR is at location 10, UNPAIR at 11,
        // ADD at 12, SOME at 13, NIL at 14 and PAIR at 16.
        let script = parse_toplevel(
            "parameter (pair bls12_381_fr bls12_381_fr);\nstorage (option bls12_381_fr);\n\
             code { CAR; UNPAIR; ADD; SOME; NIL operation; PAIR }",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let check = |location: usize, prim: Prim| {
            assert_eq!(
                node_at(&script, location).and_then(Node::known_prim),
                Some(prim),
                "location {location}"
            );
        };
        check(10, Prim::I_CAR);
        check(11, Prim::I_UNPAIR);
        check(12, Prim::I_ADD);
        check(13, Prim::I_SOME);
        check(14, Prim::I_NIL);
        check(16, Prim::I_PAIR);
        assert_eq!(node_count(&script), 17);
        assert!(node_at(&script, 17).is_none());
    }

    #[test]
    fn depth_100000() {
        let mut node = Node::int(0);
        for _ in 0..100_000 {
            node = Node::seq(vec![node]);
        }
        assert_eq!(node_count(&node), 100_001);
        assert!(matches!(
            node_at(&node, 100_000).map(|n| &n.kind),
            Some(crate::NodeKind::Int(_))
        ));
    }
}
