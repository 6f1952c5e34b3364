//! Recursive encodings (`mu`, tutorial Part 3 "Recursive combinator").
//!
//! **Static dispatch inside the body.** A `Mu`'s body is stored type-erased in its cell, so that
//! the handle can be named (`Mu<T>`) while the body, which holds the handle, is still being
//! built. Only the entry into a recursive value goes through that cell, once per `read` or
//! `write` from outside: the body is then run with a [`RecursionContext`] holding a typed
//! reference to it ([`Within`]), which the combinators pass down (`Encoding::read_in`,
//! `write_in`, `write_tail`), so that each occurrence of the same `Mu` inside the body is a
//! direct call of the body's monomorphised code, which the compiler sees and optimises as
//! ordinary recursion (with no identity test when the body reaches no other `mu`, and, when
//! writing, four levels compiled into each call). An occurrence reached through a combinator
//! that does not pass the context on (the default of `read_in`/`write_in`) still works: it
//! enters through the cell again.
//!
//! **Depth policy: a named limit, not an iterative decoder.** A recursive value is read by
//! host recursion through the typed combinators (a direct call per level, so every level's
//! codec stays monomorphised and inlined), and every level entered counts against the
//! encoding's depth limit, [`DEFAULT_MAX_DEPTH`] unless set with [`mu_with_max_depth`]. Input
//! nested deeper fails with `DecodeErrorKind::DepthLimitExceeded` (and a value built deeper
//! fails to encode with `EncodeErrorKind::DepthLimitExceeded`) before the stack is at risk.
//! An iterative decoder for arbitrary user types would need an explicit continuation machine
//! with boxed frames, costing a heap allocation or dynamic dispatch per combinator rather than
//! per level; the limit keeps the fast path and bounds the stack.
//!
//! A recursive encoding's body is allocated once and never freed (`Box::leak`): it refers to
//! itself, encodings are built once per program (DESIGN principle 3: data-encoding memoises its
//! fixpoint the same way), and a plain `&'static` keeps the recursion free of reference
//! counting.

use crate::describe::{Desc, DescribeContext, MuDesc};
use crate::error::{BuildError, DecodeError, EncodeError};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The default nesting limit of a recursive encoding. Each level takes a few hundred bytes of
/// stack in an optimised build (more in a debug build); 512 levels stay far below the 2 MiB
/// of a spawned thread's default stack in every profile, while exceeding the depth of the
/// Tezos structures that recurse (Micheline expressions are bounded separately by their own
/// crate; tree-shaped P2P and RPC values are a few levels deep).
pub const DEFAULT_MAX_DEPTH: usize = 512;

/// The identity of one recursive encoding (the address of its cell), with which a body tells
/// its own recursive occurrences from those of another `mu` over the same type
/// ([`Encoding::write_tail`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecursionId(usize);

/// The recursive encoding a body is being run in, passed down the combinators
/// ([`Encoding::read_in`], [`Encoding::write_in`], [`Encoding::write_tail`]) so that an occurrence
/// of that recursion reaches its body by a direct call. Implemented by [`NoRecursion`] (outside
/// any body) and [`Within`] (inside one).
pub trait RecursionContext {
    /// The value type of the innermost recursive encoding.
    type Value: 'static;

    /// Whether this is inside a recursive body (where a product reads in place rather than
    /// from a local copy of the reader, which every level would copy in and out).
    const RECURSIVE: bool;

    /// Whether `id` is the innermost recursive encoding.
    fn is_recursion(&self, id: RecursionId) -> bool;

    /// Gives `writer` the number of recursion levels this context is inside, before a write
    /// that may enter a recursive encoding through its cell (which counts on from the writer's
    /// depth). Outside any body there is nothing to give.
    fn publish_depth(&self, writer: &mut Writer<'_>);

    /// Writes `value` with the recursive encoding `mu`, counting one level.
    fn write_recursive<T: 'static>(
        &self,
        mu: &Mu<T>,
        value: &T,
        writer: &mut Writer<'_>,
    ) -> Result<(), EncodeError>;

    /// Reads a value with the recursive encoding `mu`, counting one level.
    fn read_recursive<T: 'static>(
        &self,
        mu: &Mu<T>,
        reader: &mut Reader<'_>,
    ) -> Result<T, DecodeError>;
}

/// How many levels of the encode recursion one call covers (1 to 4; see [`Within`]): the
/// measured best of the four on the benchmark tree.
const LEVELS_PER_CALL: u8 = 4;

/// The context outside any recursive body: every occurrence enters through its `Mu`'s cell.
#[derive(Debug, Clone, Copy)]
pub struct NoRecursion;

impl RecursionContext for NoRecursion {
    type Value = ();
    const RECURSIVE: bool = false;

    #[inline(always)]
    fn is_recursion(&self, _id: RecursionId) -> bool {
        false
    }

    #[inline(always)]
    fn publish_depth(&self, _writer: &mut Writer<'_>) {}

    #[inline(always)]
    fn write_recursive<T: 'static>(
        &self,
        mu: &Mu<T>,
        value: &T,
        writer: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        mu.write(value, writer)
    }

    #[inline(always)]
    fn read_recursive<T: 'static>(
        &self,
        mu: &Mu<T>,
        reader: &mut Reader<'_>,
    ) -> Result<T, DecodeError> {
        mu.read(reader)
    }
}

/// The context inside the body `E` of the recursive encoding `id`: an occurrence of that same
/// recursion runs `E`'s code directly (the type tests on `T` fold away when compiled).
/// `SELF_ONLY` is set when the body holds no recursive encoding but its own (found once, when the
/// `mu` is built, from the body's description): every occurrence of a `Mu<T>` inside is then
/// this one, and the identity test is compiled out.
///
/// `LEVEL` (0 to 3) is the place of a level among the four that one call of the encode
/// recursion covers: the code of levels 1 to 3 is inlined into the function of level 0, so that
/// most children that end the recursion (leaves) cost no call. The body's code is compiled once
/// per level ([`LEVELS_PER_CALL`] of them). On the benchmark tree (2^20 − 1 nodes, callgrind),
/// with the depth in the context and a leaf's tag and number written as one run, one to four
/// levels per call take 33.5 (one level, before the run), 23.25, 20.17 and 20.12 instructions
/// per node, and in time, alternated with the hand-written baseline in one process, two and
/// three levels take 1.02-1.10× its time and four 0.90-1.04× (BENCHMARKS.md, `## encoding`).
///
/// `depth` is the number of recursion levels entered around the body being run (this one
/// included). When writing it is counted here, in a value the compiler keeps in a register and
/// passes to the next call as an argument, rather than in the writer's memory: an encode walk of
/// a large value is bound by how many node loads it keeps in flight, and a load and a store of
/// the writer's depth per level cost that (BENCHMARKS.md, `## encoding`). The writer is given
/// the depth only where a write may enter a recursive encoding through its cell
/// ([`RecursionContext::publish_depth`]). When reading, the reader counts depth as before and
/// this field is not used.
#[derive(Debug)]
pub struct Within<'e, E, const SELF_ONLY: bool, const LEVEL: u8 = 0> {
    body: &'e E,
    id: RecursionId,
    max_depth: usize,
    depth: usize,
}

impl<'e, E, const SELF_ONLY: bool, const LEVEL: u8> Within<'e, E, SELF_ONLY, LEVEL> {
    /// The same context at another level (`LEVEL`) of the encode recursion.
    #[inline(always)]
    fn at_level<const NEXT: u8>(&self) -> Within<'e, E, SELF_ONLY, NEXT> {
        Within {
            body: self.body,
            id: self.id,
            max_depth: self.max_depth,
            depth: self.depth,
        }
    }
}

impl<'e, T: 'static, E, const SELF_ONLY: bool, const LEVEL: u8> RecursionContext
    for Within<'e, E, SELF_ONLY, LEVEL>
where
    E: for<'a> Encoding<Value<'a> = T>,
{
    type Value = T;
    const RECURSIVE: bool = true;

    #[inline(always)]
    fn is_recursion(&self, id: RecursionId) -> bool {
        SELF_ONLY || id == self.id
    }

    #[inline(always)]
    fn publish_depth(&self, writer: &mut Writer<'_>) {
        writer.restore_depth(self.depth);
    }

    #[inline]
    fn write_recursive<U: 'static>(
        &self,
        mu: &Mu<U>,
        value: &U,
        writer: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        if self.is_recursion(mu.id()) {
            // The same cell means the same value type, so the downcast succeeds.
            if let Some(value) = (value as &dyn Any).downcast_ref::<T>() {
                // The levels after the first of a call (up to `LEVELS_PER_CALL`) are inlined into
                // its function; the next is a call.
                return match LEVEL {
                    0 if LEVELS_PER_CALL > 1 => {
                        write_levels_inline(value, writer, &self.at_level::<1>())
                    }
                    1 if LEVELS_PER_CALL > 2 => {
                        write_levels_inline(value, writer, &self.at_level::<2>())
                    }
                    2 if LEVELS_PER_CALL > 3 => {
                        write_levels_inline(value, writer, &self.at_level::<3>())
                    }
                    _ => write_levels::<T, E, SELF_ONLY>(
                        value,
                        writer,
                        self.body,
                        self.id,
                        self.max_depth,
                        self.depth,
                    ),
                };
            }
        }
        // Another recursive encoding, entered through its cell: it counts on from the writer.
        self.publish_depth(writer);
        mu.write(value, writer)
    }

    #[inline]
    fn read_recursive<U: 'static>(
        &self,
        mu: &Mu<U>,
        reader: &mut Reader<'_>,
    ) -> Result<U, DecodeError> {
        if self.is_recursion(mu.id()) {
            let mut slot: Option<U> = None;
            // The same cell means the same value type, so the downcast succeeds.
            if let Some(typed) = (&mut slot as &mut dyn Any).downcast_mut::<Option<T>>() {
                reader.enter_recursion(self.max_depth)?;
                *typed = Some(self.body.read_in(reader, self)?);
                reader.leave_recursion();
            }
            if let Some(value) = slot {
                return Ok(value);
            }
        }
        mu.read(reader)
    }
}

/// Writes `value` with `body` as one more level of recursion inside `depth` levels; the body's
/// own tail occurrences of the recursion are written by this loop, each counted as one more
/// level, so that a value too deep to decode is too deep to encode too. The context's parts are
/// passed as scalars, in registers, and the context rebuilt here, where its address does not
/// escape, so that the depth stays in a register through the four levels of the function.
#[inline(never)]
fn write_levels<T: 'static, E, const SELF_ONLY: bool>(
    value: &T,
    writer: &mut Writer<'_>,
    body: &E,
    id: RecursionId,
    max_depth: usize,
    depth: usize,
) -> Result<(), EncodeError>
where
    E: for<'a> Encoding<Value<'a> = T>,
{
    let context = Within::<E, SELF_ONLY, 0> {
        body,
        id,
        max_depth,
        depth,
    };
    write_levels_inline(value, writer, &context)
}

/// [`write_levels`], inlined into its caller (a level 1 to 3 of the function of a level 0).
/// `outer` is the context of the level around this one.
#[inline(always)]
fn write_levels_inline<T: 'static, E, const SELF_ONLY: bool, const LEVEL: u8>(
    value: &T,
    writer: &mut Writer<'_>,
    outer: &Within<'_, E, SELF_ONLY, LEVEL>,
) -> Result<(), EncodeError>
where
    E: for<'a> Encoding<Value<'a> = T>,
{
    let (body, max_depth) = (outer.body, outer.max_depth);
    let mut depth = outer.depth;
    let mut current = value;
    loop {
        if depth >= max_depth {
            return Err(writer.depth_limit_exceeded(max_depth));
        }
        depth += 1;
        let context = Within::<E, SELF_ONLY, LEVEL> {
            body,
            id: outer.id,
            max_depth,
            depth,
        };
        match body.write_tail(current, writer, &context)? {
            None => return Ok(()),
            Some(next) => current = next,
        }
    }
}

/// The type-erased body of a recursive encoding over owned values `T`: the entry from outside.
trait DynBody<T>: Send + Sync {
    fn read_dyn(
        &self,
        reader: &mut Reader<'_>,
        recursion: RecursionId,
        max_depth: usize,
        self_only: bool,
    ) -> Result<T, DecodeError>;
    fn write_dyn(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
        max_depth: usize,
        self_only: bool,
    ) -> Result<(), EncodeError>;
    fn describe_dyn(&self, context: &mut DescribeContext) -> Desc;
}

impl<T: 'static, E> DynBody<T> for E
where
    E: for<'a> Encoding<Value<'a> = T> + Send + Sync + 'static,
{
    fn read_dyn(
        &self,
        reader: &mut Reader<'_>,
        recursion: RecursionId,
        max_depth: usize,
        self_only: bool,
    ) -> Result<T, DecodeError> {
        if self_only {
            let context = Within::<E, true> {
                body: self,
                id: recursion,
                max_depth,
                depth: 0,
            };
            self.read_in(reader, &context)
        } else {
            let context = Within::<E, false> {
                body: self,
                id: recursion,
                max_depth,
                depth: 0,
            };
            self.read_in(reader, &context)
        }
    }

    fn write_dyn(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
        max_depth: usize,
        self_only: bool,
    ) -> Result<(), EncodeError> {
        // Published depths inside the value are the writer's until this entry returns.
        let depth = writer.depth();
        let result = if self_only {
            write_levels::<T, E, true>(value, writer, self, recursion, max_depth, depth)
        } else {
            write_levels::<T, E, false>(value, writer, self, recursion, max_depth, depth)
        };
        writer.restore_depth(depth);
        result
    }

    fn describe_dyn(&self, context: &mut DescribeContext) -> Desc {
        self.describe(context)
    }
}

struct MuCell<T: 'static> {
    name: String,
    max_depth: usize,
    /// The size class assumed for the recursive occurrences (data-encoding's precursor kind).
    layout: Layout,
    body: OnceLock<Box<dyn DynBody<T>>>,
    /// Whether the body holds no recursive encoding but this one ([`Within`]'s `SELF_ONLY`);
    /// set once, after the body.
    self_only: AtomicBool,
}

/// A recursive encoding, and the handle its body uses to refer to itself. Copying it is free.
pub struct Mu<T: 'static> {
    cell: &'static MuCell<T>,
}

impl<T: 'static> Clone for Mu<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: 'static> Copy for Mu<T> {}

impl<T: 'static> std::fmt::Debug for Mu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mu").field("name", &self.cell.name).finish()
    }
}

/// `mu name body` with [`DEFAULT_MAX_DEPTH`].
pub fn mu<T, E, F>(name: &str, body: F) -> Result<Mu<T>, BuildError>
where
    T: 'static,
    E: for<'a> Encoding<Value<'a> = T> + Send + Sync + 'static,
    F: Fn(Mu<T>) -> Result<E, BuildError>,
{
    mu_with_max_depth(name, DEFAULT_MAX_DEPTH, body)
}

/// `mu name body` with a nesting limit of `max_depth` levels. `body` receives the recursive
/// handle; it may be called twice, as data-encoding does, to find the size class (first
/// assuming `Dynamic`, then `Variable` if the body turns out to be of variable size).
pub fn mu_with_max_depth<T, E, F>(
    name: &str,
    max_depth: usize,
    body: F,
) -> Result<Mu<T>, BuildError>
where
    T: 'static,
    E: for<'a> Encoding<Value<'a> = T> + Send + Sync + 'static,
    F: Fn(Mu<T>) -> Result<E, BuildError>,
{
    let attempt = |size: SizeClass| -> Result<(Mu<T>, E), BuildError> {
        let cell: &'static MuCell<T> = Box::leak(Box::new(MuCell {
            name: name.to_owned(),
            max_depth,
            layout: Layout {
                size,
                zeroable: size == SizeClass::Variable,
                nullable: false,
            },
            body: OnceLock::new(),
            self_only: AtomicBool::new(false),
        }));
        let handle = Mu { cell };
        let encoding = body(handle)?;
        Ok((handle, encoding))
    };
    let (mut handle, mut encoding) = attempt(SizeClass::Dynamic)?;
    if encoding.layout().size == SizeClass::Variable {
        (handle, encoding) = attempt(SizeClass::Variable)?;
    }
    // The cell is fresh, so this first `set` succeeds.
    let _ = handle.cell.body.set(Box::new(encoding));
    // The description visits every sub-encoding, registering each recursive encoding once: if
    // this is the only one, every `Mu<T>` the body reaches is this one.
    let mut description = DescribeContext::new();
    let _ = handle.describe(&mut description);
    handle
        .cell
        .self_only
        .store(description.recursive_count() == 1, Ordering::Relaxed);
    Ok(handle)
}

impl<T: 'static> Mu<T> {
    #[inline]
    fn body(&self) -> &dyn DynBody<T> {
        match self.cell.body.get() {
            Some(body) => body.as_ref(),
            // Only reachable if a body runs its own handle while it is being built.
            None => panic!(
                "recursive encoding `{}` used before it was built",
                self.cell.name
            ),
        }
    }

    /// The nesting limit.
    pub fn max_depth(&self) -> usize {
        self.cell.max_depth
    }

    /// This recursive encoding's identity.
    #[inline(always)]
    fn id(&self) -> RecursionId {
        RecursionId(self.cell as *const MuCell<T> as usize)
    }
}

impl<T: 'static> Encoding for Mu<T> {
    type Value<'a> = T;

    #[inline]
    fn layout(&self) -> Layout {
        self.cell.layout
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        reader.enter_recursion(self.cell.max_depth)?;
        let value = self.body().read_dyn(
            reader,
            self.id(),
            self.cell.max_depth,
            self.cell.self_only.load(Ordering::Relaxed),
        )?;
        reader.leave_recursion();
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        // `write_levels` counts this level.
        self.body().write_dyn(
            value,
            writer,
            self.id(),
            self.cell.max_depth,
            self.cell.self_only.load(Ordering::Relaxed),
        )
    }

    #[inline(always)]
    fn read_in<'a, X: RecursionContext>(
        &self,
        reader: &mut Reader<'a>,
        context: &X,
    ) -> Result<T, DecodeError> {
        context.read_recursive(self, reader)
    }

    #[inline(always)]
    fn write_in<X: RecursionContext>(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Result<(), EncodeError> {
        context.write_recursive(self, value, writer)
    }

    #[inline(always)]
    fn write_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Result<Option<&'v X::Value>, EncodeError>
    where
        Self: 'v,
    {
        if context.is_recursion(self.id()) {
            // The same cell means the same `T`, so this always succeeds; the type test folds
            // away when the body is compiled.
            if let Some(value) = (value as &dyn Any).downcast_ref::<X::Value>() {
                return Ok(Some(value));
            }
        }
        context.write_recursive(self, value, writer)?;
        Ok(None)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        let identity = self.id().0;
        let (index, needs_body) = context.register_recursive(identity);
        if needs_body {
            let body = self.body().describe_dyn(context);
            context.define_recursive(
                index,
                MuDesc {
                    name: self.cell.name.clone(),
                    body,
                    variable: self.cell.layout.size == SizeClass::Variable,
                    max_depth: self.cell.max_depth,
                },
            );
        }
        Desc::Mu(index)
    }
}
