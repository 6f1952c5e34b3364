//! Michelson lists: a persistent chain of segments, each a vector stored reversed (the head is
//! its last element).
//!
//! Why persistent: `DUP` of a list is a reference-count increment, and Octez's lists are OCaml
//! lists, so `DUP ; CONS` and `DUP ; IF_CONS` cost O(1) there and are charged as such. A list
//! that copied itself on the first write after a `DUP` would do O(n) work for that charge. Here a
//! list is a segment (an `Rc`'d vector of which it uses a prefix) in front of the rest of the
//! list (an `Rc`'d list): `CONS` pushes onto the segment when nothing else holds it (an amortised
//! O(1) push, as a plain vector) and otherwise starts a one-element segment whose rest is the
//! shared list; `IF_CONS` on a shared segment uses one element fewer of it instead of copying it.
//! The length is cached, so `SIZE` is O(1). Gas does not depend on the representation.

use crate::value::Value;
use std::rc::Rc;

/// A Michelson list of values.
#[derive(Clone)]
pub struct List {
    /// This list's first elements, reversed: `segment[..segment_count]`, head last. Elements
    /// past `segment_count` belong to another list sharing the vector.
    segment: Rc<Vec<Value>>,
    /// How many elements of `segment` this list uses; zero only when the list is empty.
    segment_count: usize,
    /// The elements after the segment's, if any.
    rest: Option<Rc<List>>,
    /// The number of elements.
    len: usize,
}

impl Default for List {
    fn default() -> List {
        List::from_reversed(Vec::new())
    }
}

impl List {
    /// A list of the given elements, the head last.
    pub fn from_reversed(segment: Vec<Value>) -> List {
        let len = segment.len();
        List {
            segment: Rc::new(segment),
            segment_count: len,
            rest: None,
            len,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `CONS`: puts `head` in front, in O(1) whether or not the list is shared.
    pub fn push(&mut self, head: Value) {
        if let Some(segment) = Rc::get_mut(&mut self.segment) {
            // Elements past the count were another list's, which has since let go of them.
            segment.truncate(self.segment_count);
            segment.push(head);
            self.segment_count += 1;
            self.len += 1;
            return;
        }
        let rest = std::mem::replace(self, List::from_reversed(vec![head]));
        self.len += rest.len;
        self.rest = (!rest.is_empty()).then(|| Rc::new(rest));
    }

    /// The `IF_CONS` split: removes and returns the head, in O(1) (a shared head is cloned, which
    /// for a compound value is a reference-count increment).
    pub fn pop(&mut self) -> Option<Value> {
        let index = self.segment_count.checked_sub(1)?;
        let head = match Rc::get_mut(&mut self.segment) {
            Some(segment) => {
                segment.truncate(self.segment_count);
                segment
                    .pop()
                    .expect("a non-empty list has a non-empty segment")
            }
            None => self.segment[index].clone(),
        };
        self.segment_count = index;
        self.len -= 1;
        if index == 0 {
            if let Some(rest) = self.rest.take() {
                *self = Rc::unwrap_or_clone(rest);
            }
        }
        Some(head)
    }

    /// The elements from the head on.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            segment: &self.segment[..self.segment_count],
            rest: self.rest.as_deref(),
            remaining: self.len,
        }
    }

    /// Appends the elements, head first, to `out`: a slice at a time, so a long list costs a
    /// copy per segment rather than a capacity check per element (the cost walks over values).
    pub fn append_to<'a>(&'a self, out: &mut Vec<&'a Value>) {
        out.reserve(self.len);
        let mut list = Some(self);
        while let Some(current) = list {
            out.extend(current.segment[..current.segment_count].iter().rev());
            list = current.rest.as_deref();
        }
    }

    /// The elements as a vector, the head last (what `ITER` and `MAP` pop from): the list's own
    /// vector when nothing else holds it.
    pub fn into_reversed_vec(mut self) -> Vec<Value> {
        if self.rest.is_none() {
            if let Some(segment) = Rc::get_mut(&mut self.segment) {
                let mut segment = std::mem::take(segment);
                segment.truncate(self.segment_count);
                return segment;
            }
        }
        let mut elements: Vec<Value> = self.iter().cloned().collect();
        elements.reverse();
        elements
    }
}

impl Drop for List {
    /// A chain of segments can be as long as the list (a loop of `DUP ; CONS` keeps every
    /// link): free it with a loop rather than host recursion.
    fn drop(&mut self) {
        let mut rest = self.rest.take();
        while let Some(link) = rest {
            rest = match Rc::try_unwrap(link) {
                Ok(mut list) => list.rest.take(),
                Err(_) => None,
            };
        }
    }
}

/// The elements of a [`List`] from the head on.
pub struct Iter<'a> {
    /// What is left of the current segment, head last.
    segment: &'a [Value],
    /// The segments after it.
    rest: Option<&'a List>,
    /// The number of elements left.
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;

    fn next(&mut self) -> Option<&'a Value> {
        loop {
            if let Some((head, others)) = self.segment.split_last() {
                self.segment = others;
                self.remaining -= 1;
                return Some(head);
            }
            let list = self.rest?;
            self.segment = &list.segment[..list.segment_count];
            self.rest = list.rest.as_deref();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(list: &List) -> Vec<String> {
        list.iter().map(Value::to_string).collect()
    }

    #[test]
    fn push_and_pop_on_a_shared_list_leave_the_other_copy_unchanged() {
        let mut original = List::default();
        for n in 0..5 {
            original.push(Value::nat(n));
        }
        let mut pushed = original.clone();
        pushed.push(Value::nat(9));
        let mut popped = original.clone();
        assert!(matches!(popped.pop(), Some(Value::Nat(_))));
        popped.push(Value::nat(7));
        assert_eq!(printed(&original), ["4", "3", "2", "1", "0"]);
        assert_eq!(printed(&pushed), ["9", "4", "3", "2", "1", "0"]);
        assert_eq!(printed(&popped), ["7", "3", "2", "1", "0"]);
        assert_eq!((original.len(), pushed.len(), popped.len()), (5, 6, 5));
        for list in [&original, &pushed, &popped] {
            let mut appended = vec![&Value::Unit];
            list.append_to(&mut appended);
            assert!(appended[1..].iter().copied().eq(list.iter()));
        }
        drop(original);
        // Now alone on its vector, the popped list reuses it.
        popped.push(Value::nat(8));
        assert_eq!(printed(&popped), ["8", "7", "3", "2", "1", "0"]);
        let mut all = Vec::new();
        while let Some(head) = pushed.pop() {
            all.push(head.to_string());
        }
        assert_eq!(all, ["9", "4", "3", "2", "1", "0"]);
        assert!(pushed.is_empty() && pushed.iter().next().is_none());
        assert_eq!(popped.into_reversed_vec().len(), 6);
    }

    #[test]
    fn a_chain_of_100_000_shared_segments_drops_without_recursion() {
        let mut list = List::default();
        let mut copies = Vec::new();
        for n in 0..100_000 {
            copies.push(list.clone());
            list.push(Value::nat(n));
        }
        drop(copies);
        assert_eq!(list.len(), 100_000);
        assert_eq!(list.iter().count(), 100_000);
        drop(list);
    }
}
