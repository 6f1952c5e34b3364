//! The interpreter's call stack: where lambdas and views return to (Octez's `KReturn` /
//! `KView_exit` continuations), kept small enough for the deepest recursion gas allows.
//!
//! Octez bounds the depth of a recursion only by gas (one `EXEC`, 10 milligas, per level: about
//! 10^8 levels within the operation limit). A recursion calls from the same code with the same
//! stack base level after level, so calls are grouped: a [`CallFrame`] holds the caller's code
//! and base once for a run of consecutive calls made from them, and each call of the run adds
//! only its return address — a 4-byte word of [`CallStack::returns`], a repeated address
//! counted in a second word rather than stored again. A recursion through one call site
//! (`LAMBDA_REC int int { EXEC }`) only counts, whatever its depth; one alternating between
//! two call sites keeps 4 bytes per level (it kept a 24-byte frame per level, 833 MB at the
//! operation gas limit, most of its time spent writing and faulting them in).
//!
//! Frames and words are kept in chunks rather than one vector each: growing a vector of
//! hundreds of megabytes copies it, and with mimalloc (the `kestrel` binary's allocator) the
//! old and new copies were both resident, doubling the peak.

use crate::interpret::RunError;
use crate::ir::Code;
use crate::literals::Address;
use std::rc::Rc;

/// What a view call changes in the context while it runs, restored when it returns.
pub(crate) struct SavedContext {
    pub self_address: Address,
    pub sender: Address,
    pub balance: i64,
    pub amount: i64,
}

/// A run of consecutive calls made from the same code with the same stack base.
struct CallFrame {
    /// The callers' code.
    code: Rc<Code>,
    /// The length of the value stack below the callee's part.
    base: u32,
    /// How many words of [`CallStack::returns`] are this run's return addresses (the innermost
    /// ones), the innermost frame's innermost address ([`CallStack::pc`]) apart.
    words: u32,
    /// Whether this is a view call (alone in its frame), whose saved context is the last of
    /// [`CallStack::views`].
    view: bool,
}

/// A word of [`CallStack::returns`] with this bit set counts how many more times the word
/// under it (a return address) was called from; without it, the word is a return address (the
/// caller's next instruction).
const REPEAT: u32 = 1 << 31;

/// Entries per chunk (1.5 MB of frames, 256 KB of words); the first chunk grows up to it as a
/// vector does, so shallow calls allocate little.
const CHUNK: usize = 1 << 16;

/// A stack kept in chunks of [`CHUNK`] entries.
struct Chunked<T> {
    /// Full chunks, then the innermost one (never empty: an emptied chunk moves to `spare`).
    chunks: Vec<Vec<T>>,
    /// An emptied chunk kept for the next one needed, so that calls and returns across a chunk
    /// boundary do not allocate each time.
    spare: Option<Vec<T>>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            spare: None,
        }
    }
}

impl<T> Chunked<T> {
    /// Pushes `entry`, in a new chunk if the innermost one has [`CHUNK`] entries.
    #[inline(always)]
    fn push(&mut self, entry: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(entry),
            _ => self.push_in_new_chunk(entry),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_in_new_chunk(&mut self, entry: T) {
        let mut chunk = match self.spare.take() {
            Some(spare) => spare,
            None if self.chunks.is_empty() => Vec::new(),
            None => Vec::with_capacity(CHUNK),
        };
        chunk.push(entry);
        self.chunks.push(chunk);
    }

    /// Removes the innermost entry.
    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        let chunk = self.chunks.last_mut()?;
        let entry = chunk.pop();
        if chunk.is_empty() {
            self.spare = self.chunks.pop();
        }
        entry
    }
}

/// The calls in progress, innermost last. The innermost frame and its innermost return address
/// (with its repeat count) are kept apart, so that a call or return of a recursion through one
/// call site only counts.
#[derive(Default)]
pub(crate) struct CallStack {
    /// The innermost frame.
    top: Option<CallFrame>,
    /// The innermost call's return address (when `top` is set).
    pc: u32,
    /// How many more calls from the innermost frame return to `pc`.
    repeats: u32,
    /// The frames around `top`, innermost last.
    frames: Chunked<CallFrame>,
    /// The frames' other return addresses, innermost last.
    returns: Chunked<u32>,
    views: Vec<SavedContext>,
}

/// A return address as [`CallStack::pop`] gives it back: code, next instruction, base of the
/// callee's part of the value stack, and for a view the caller's context to restore.
pub(crate) type Return = (Rc<Code>, usize, usize, Option<SavedContext>);

impl CallStack {
    /// Enters `callee` from `code`, which is to continue at `pc` with its values from `base`
    /// (a lambda call, `EXEC`): `code` becomes `callee`. A call from the code and base of the
    /// innermost one only adds its return address (or counts it again), and a call of the
    /// running code keeps `code` as it is, so a recursion's level touches no reference count.
    #[inline(always)]
    pub fn call(
        &mut self,
        code: &mut Rc<Code>,
        callee: &Rc<Code>,
        pc: usize,
        base: usize,
    ) -> Result<(), RunError> {
        if let Some(top) = &mut self.top {
            if !top.view && top.base as usize == base && Rc::ptr_eq(&top.code, code) {
                if self.pc as usize == pc && self.repeats < REPEAT - 1 {
                    self.repeats += 1;
                } else if pc < REPEAT as usize && top.words < u32::MAX - 2 {
                    top.words += spill(&mut self.returns, self.pc, self.repeats);
                    self.pc = pc as u32;
                    self.repeats = 0;
                } else {
                    return self.push(std::mem::replace(code, callee.clone()), pc, base, None);
                }
                if !Rc::ptr_eq(code, callee) {
                    *code = callee.clone();
                }
                return Ok(());
            }
        }
        self.push(std::mem::replace(code, callee.clone()), pc, base, None)
    }

    /// Records a call that returns to `pc` in `code`, the callee's values starting at `base`,
    /// in a frame of its own (for a view, with the caller's context to restore).
    #[cold]
    #[inline(never)]
    pub fn push(
        &mut self,
        code: Rc<Code>,
        pc: usize,
        base: usize,
        view: Option<SavedContext>,
    ) -> Result<(), RunError> {
        let (Some(pc), Ok(base)) = (
            u32::try_from(pc).ok().filter(|pc| pc & REPEAT == 0),
            u32::try_from(base),
        ) else {
            return Err(RunError::Other(
                "call beyond 2^31 instructions or 2^32 values".into(),
            ));
        };
        let view_call = view.is_some();
        self.views.extend(view);
        let frame = CallFrame {
            code,
            base,
            words: 0,
            view: view_call,
        };
        if let Some(mut outer) = self.top.replace(frame) {
            outer.words += spill(&mut self.returns, self.pc, self.repeats);
            self.frames.push(outer);
        }
        self.pc = pc;
        self.repeats = 0;
        Ok(())
    }

    /// The innermost call's return address, removed.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Return> {
        let top = self.top.as_mut()?;
        let returning = self.pc as usize;
        if self.repeats > 0 {
            self.repeats -= 1;
            return Some((top.code.clone(), returning, top.base as usize, None));
        }
        if top.words > 0 {
            let (pc, repeats, words) = reload(&mut self.returns);
            (self.pc, self.repeats) = (pc, repeats);
            top.words -= words;
            return Some((top.code.clone(), returning, top.base as usize, None));
        }
        self.pop_frame()
    }

    /// The innermost frame's last call, removed with the frame.
    #[cold]
    #[inline(never)]
    fn pop_frame(&mut self) -> Option<Return> {
        let frame = self.top.take()?;
        let returning = self.pc as usize;
        if let Some(mut outer) = self.frames.pop() {
            let (pc, repeats, words) = reload(&mut self.returns);
            (self.pc, self.repeats) = (pc, repeats);
            outer.words -= words;
            self.top = Some(outer);
        }
        let view = if frame.view { self.views.pop() } else { None };
        Some((frame.code, returning, frame.base as usize, view))
    }
}

/// Takes the innermost stored return address off `returns`: the address, how many more times it
/// was called from, and how many words that removed.
#[inline(always)]
fn reload(returns: &mut Chunked<u32>) -> (u32, u32, u32) {
    match returns.pop() {
        Some(count) if count & REPEAT != 0 => match returns.pop() {
            Some(pc) => (pc, count & !REPEAT, 2),
            None => unreachable!("a repeat count is stored over its address"),
        },
        Some(pc) => (pc, 0, 1),
        None => unreachable!("a frame's words are on the stack"),
    }
}

/// Stores a frame's innermost return address `pc`, called `repeats` more times; how many words
/// that took.
#[inline(always)]
fn spill(returns: &mut Chunked<u32>, pc: u32, repeats: u32) -> u32 {
    returns.push(pc);
    if repeats == 0 {
        return 1;
    }
    returns.push(REPEAT | repeats);
    2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call's frame and return address comes back in reverse order, through runs, repeats
    /// and chunk boundaries, against a plain vector of the calls.
    #[test]
    fn returns_come_back_in_reverse_order() {
        let codes = [Rc::new(Code::default()), Rc::new(Code::default())];
        let mut calls = CallStack::default();
        let mut expected: Vec<(usize, usize, usize)> = Vec::new();
        // A deterministic mix: long repeats, alternations, changes of code and base, and
        // returns in between, crossing several chunks.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for step in 0..600_000usize {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let phase = (step / 50_000) % 4;
            let pop = match phase {
                0 => false,
                3 => !seed.is_multiple_of(3),
                _ => seed.is_multiple_of(5),
            };
            if pop {
                let got = calls.pop().map(|(code, pc, base, view)| {
                    assert!(view.is_none());
                    let which = usize::from(Rc::ptr_eq(&code, &codes[1]));
                    (which, pc, base)
                });
                assert_eq!(got, expected.pop());
                continue;
            }
            let (which, pc, base) = match phase {
                0 => (0, 7, 3),
                1 => (0, 7 + (step % 2) * 5, 3),
                _ => (
                    (seed >> 8) as usize % 2,
                    (seed >> 16) as usize % 3,
                    (seed >> 24) as usize % 2,
                ),
            };
            let mut code = codes[which].clone();
            let callee = codes[1 - which].clone();
            calls
                .call(&mut code, &callee, pc, base)
                .expect("small addresses");
            assert!(Rc::ptr_eq(&code, &callee));
            expected.push((which, pc, base));
        }
        while let Some(entry) = expected.pop() {
            let (code, pc, base, _) = calls.pop().expect("a call in progress");
            assert_eq!((usize::from(Rc::ptr_eq(&code, &codes[1])), pc, base), entry);
        }
        assert!(calls.pop().is_none());
    }

    /// A recursion through one call site keeps one frame and no word at any depth.
    #[test]
    fn one_call_site_stays_constant() {
        let code = Rc::new(Code::default());
        let mut calls = CallStack::default();
        for _ in 0..1_000_000 {
            let mut running = code.clone();
            calls
                .call(&mut running, &code, 4, 2)
                .expect("small addresses");
        }
        assert!(calls.top.is_some());
        assert!(calls.frames.chunks.is_empty());
        assert!(calls.returns.chunks.is_empty());
        for _ in 0..1_000_000 {
            assert_eq!(calls.pop().map(|(_, pc, base, _)| (pc, base)), Some((4, 2)));
        }
        assert!(calls.pop().is_none());
    }

    #[test]
    fn call_frames_stay_small() {
        assert_eq!(std::mem::size_of::<CallFrame>(), 24);
    }
}
