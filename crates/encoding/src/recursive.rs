//! Recursive encodings (`mu`, tutorial Part 3 "Recursive combinator").
//!
//! **Depth policy: a named limit, not an iterative decoder.** A recursive value is read by
//! host recursion through the typed combinators (one virtual call per level, so every level's
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

/// The type-erased body of a recursive encoding over owned values `T`.
trait DynBody<T>: Send + Sync {
    fn read_dyn<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError>;
    /// Writes `value` at the level the caller entered; the body's own tail occurrences of
    /// `recursion` are written by a loop here, each counted as one more level, so that a
    /// value too deep to decode is too deep to encode too.
    fn write_dyn(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
        max_depth: usize,
    ) -> Result<(), EncodeError>;
    fn describe_dyn(&self, context: &mut DescribeContext) -> Desc;
}

impl<T: 'static, E> DynBody<T> for E
where
    E: for<'a> Encoding<Value<'a> = T> + Send + Sync + 'static,
{
    #[inline]
    fn read_dyn<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        self.read(reader)
    }

    fn write_dyn(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
        max_depth: usize,
    ) -> Result<(), EncodeError> {
        let mut current = value;
        let mut tail_levels = 0;
        let result = loop {
            match self.write_tail::<T>(current, writer, recursion) {
                Ok(None) => break Ok(()),
                Ok(Some(next)) => {
                    if let Err(error) = writer.enter_recursion(max_depth) {
                        break Err(error);
                    }
                    tail_levels += 1;
                    current = next;
                }
                Err(error) => break Err(error),
            }
        };
        writer.leave_recursion_levels(tail_levels);
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
        let value = self.body().read_dyn(reader)?;
        reader.leave_recursion();
        Ok(value)
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        writer.enter_recursion(self.cell.max_depth)?;
        let result = self
            .body()
            .write_dyn(value, writer, self.id(), self.cell.max_depth);
        writer.leave_recursion();
        result
    }

    #[inline(always)]
    fn write_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Result<Option<&'v U>, EncodeError>
    where
        Self: 'v,
    {
        if self.id() == recursion {
            // The same cell means the same `T`, so this always succeeds; the type test folds
            // away when the body is compiled.
            if let Some(value) = (value as &dyn std::any::Any).downcast_ref::<U>() {
                return Ok(Some(value));
            }
        }
        self.write(value, writer)?;
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
