//! The interpreter's value stacks (the main stack and `DIP`'s), shaped so that the run loop keeps
//! them in registers.
//!
//! A `Vec<Value>` local of the run loop lived in memory: its growth path (`RawVec::grow_one`) and
//! every out-of-line helper took it by `&mut`, so its address escaped and each push and pop
//! loaded and stored the length and buffer through the loop's frame (BENCHMARKS.md, "Michelson:
//! the tight loop's stack in registers"). A [`ValueStack`] is the same buffer, length and
//! capacity, but nothing that is not inlined ever sees its address: growth takes and returns the
//! three words by value, and operations that need a real vector ([`ValueStack::with_vec`]) hand
//! one over by value and take it back. LLVM can then split the struct into three scalars.
//!
//! Invariant (kept by every method, which is why the fields are private): `ptr`, `len` and `cap`
//! are the raw parts of a `Vec<Value>` — `ptr` came from such a vector with capacity `cap`, the
//! first `len` slots are initialised values owned by the stack, `len <= cap`.

#![allow(unsafe_code)]

use crate::value::Value;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// A stack of values: a `Vec<Value>` taken apart (see the module documentation).
pub(crate) struct ValueStack {
    ptr: NonNull<Value>,
    len: usize,
    cap: usize,
}

impl ValueStack {
    /// Takes over `values` (the top of the stack is the last element).
    #[inline(always)]
    pub fn from_vec(values: Vec<Value>) -> ValueStack {
        let mut values = ManuallyDrop::new(values);
        ValueStack {
            // A vector's pointer is never null, even unallocated (then dangling and aligned).
            ptr: NonNull::from(values.as_mut_slice()).cast(),
            len: values.len(),
            cap: values.capacity(),
        }
    }

    /// The values as a vector.
    #[inline(always)]
    pub fn into_vec(self) -> Vec<Value> {
        let stack = ManuallyDrop::new(self);
        // SAFETY: the fields are a vector's raw parts (the module's invariant), and `stack` is not
        // dropped, so the vector is the only owner of the buffer and its values.
        unsafe { Vec::from_raw_parts(stack.ptr.as_ptr(), stack.len, stack.cap) }
    }

    /// Runs `f` on the values as a vector (for the operations a stack has no fast path for).
    #[inline(always)]
    pub fn with_vec<R>(&mut self, f: impl FnOnce(&mut Vec<Value>) -> R) -> R {
        // The stack is left empty while `f` owns the values, so that a panic in `f` drops them
        // once (with the vector), not twice.
        let mut values = std::mem::replace(self, ValueStack::from_vec(Vec::new())).into_vec();
        let result = f(&mut values);
        *self = ValueStack::from_vec(values);
        result
    }

    /// Pushes `value` on top.
    #[inline(always)]
    pub fn push(&mut self, value: Value) {
        if self.len == self.cap {
            (self.ptr, self.cap) = grown(self.ptr, self.len, self.cap);
        }
        // SAFETY: `len < cap` now, so slot `len` is inside the buffer and holds no value.
        unsafe { self.ptr.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }

    /// Removes the top value. The typechecker guarantees every pop a value: an empty stack is a
    /// bug, which stops the program.
    #[inline(always)]
    pub fn pop(&mut self) -> Value {
        if self.len == 0 {
            underflow();
        }
        self.len -= 1;
        // SAFETY: slot `len` (the old top) holds an initialised value, which the stack no longer
        // counts as its own, so it is moved out exactly once.
        unsafe { self.ptr.as_ptr().add(self.len).read() }
    }

    /// Removes the top value without dropping it: for a value the caller has just read and knows
    /// owns nothing (a bool, an `i64` int), whose drop would call `Value`'s out-of-line glue.
    /// (Forgetting a value that owns memory would only leak it.)
    #[inline(always)]
    pub fn forget_top(&mut self) {
        if self.len == 0 {
            underflow();
        }
        self.len -= 1;
    }

    /// Drops the values above the first `len`.
    #[inline(always)]
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let dropped = self.len - len;
        // The length is lowered first, so that a panicking drop cannot drop a value twice.
        self.len = len;
        // SAFETY: slots `len..len + dropped` held initialised values that the stack no longer
        // counts, so they are dropped exactly once.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr().add(len),
                dropped,
            ));
        }
    }
}

/// A pop from an empty stack: the typechecker rules it out.
#[cold]
#[inline(never)]
fn underflow() -> ! {
    unreachable!("the typechecker guarantees the stack's depth")
}

/// The buffer and capacity after growing a full stack of `len` values (a vector's growth).
#[cold]
#[inline(never)]
fn grown(ptr: NonNull<Value>, len: usize, cap: usize) -> (NonNull<Value>, usize) {
    // SAFETY: the caller passes a stack's raw parts (the module's invariant); the rebuilt vector
    // owns them until it is taken apart again below, and the stack takes the new parts back.
    let mut values = ManuallyDrop::new(unsafe { Vec::from_raw_parts(ptr.as_ptr(), len, cap) });
    values.reserve(1);
    (
        NonNull::from(values.as_mut_slice()).cast(),
        values.capacity(),
    )
}

impl Drop for ValueStack {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the fields are a vector's raw parts; the stack is not used after this.
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, self.cap) });
    }
}

impl std::ops::Deref for ValueStack {
    type Target = [Value];

    #[inline(always)]
    fn deref(&self) -> &[Value] {
        // SAFETY: the first `len` slots are initialised values owned by the stack.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for ValueStack {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Value] {
        // SAFETY: as for `deref`, borrowed mutably through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::int::Int;

    fn ints(stack: &ValueStack) -> Vec<i64> {
        stack
            .iter()
            .map(|value| match value {
                Value::Int(Int::Small(n)) => *n,
                _ => panic!("not a small int"),
            })
            .collect()
    }

    #[test]
    fn push_pop_truncate_and_vector_round_trip() {
        let mut stack = ValueStack::from_vec(Vec::new());
        // Past several growths, with values that own memory (strings) among them.
        for n in 0..100 {
            stack.push(Value::Int(Int::Small(n)));
            stack.push(Value::String("owned".into()));
            assert!(matches!(stack.pop(), Value::String(_)));
        }
        assert_eq!(ints(&stack), (0..100).collect::<Vec<_>>());
        stack.push(Value::Bool(true));
        stack.forget_top();
        stack.push(Value::String("dropped by truncate".into()));
        stack.truncate(10);
        stack.truncate(20);
        assert_eq!(ints(&stack), (0..10).collect::<Vec<_>>());
        let moved = stack.with_vec(|values| values.remove(0));
        assert!(matches!(moved, Value::Int(Int::Small(0))));
        stack.push(Value::Int(Int::Small(10)));
        assert_eq!(stack.into_vec().len(), 10);
    }
}
