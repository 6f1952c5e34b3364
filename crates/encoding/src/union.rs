//! Unions (tutorial, Part 3 "ADT combinators: variants") and `string_enum`. A union reads a
//! `uint8` or `uint16` tag and dispatches to the case with that tag; it writes the first case
//! whose projection accepts the value. In JSON the payload appears untagged, as data-encoding
//! does: decoding tries the cases in order.
//!
//! Cases are a Rust tuple of [`case`]s (up to 16), so dispatch is a chain of compares on
//! constants the compiler sees, with each payload codec inlined.

use crate::describe::{CaseDesc, Desc, DescribeContext, IntKind, TagSize};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::recursive::RecursionContext;
use crate::writer::Writer;
use crate::Encoding;
use std::marker::PhantomData;

/// One case of a union over values of type `T`.
pub trait UnionCase<T> {
    /// The binary tag.
    fn tag(&self) -> u16;
    /// The payload layout.
    fn layout(&self) -> Layout;
    /// Reads the payload and injects it into `T` (inside the recursion of `context`, see
    /// [`Encoding::read_in`]).
    fn read_payload<X: RecursionContext>(
        &self,
        reader: &mut Reader<'_>,
        context: &X,
    ) -> Result<T, DecodeError>;
    /// If the case accepts `value`, writes the tag and payload and returns `Some`.
    fn try_write<X: RecursionContext>(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>>;
    /// As `try_write`, passing on the payload's tail occurrence of the recursion of `context`
    /// ([`Encoding::write_tail`]).
    fn try_write_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        Self: 'v;
    /// Describes the case.
    fn describe(&self, context: &mut DescribeContext) -> CaseDesc;
}

#[inline(always)]
fn write_tag(tag: u16, tag_size: TagSize, writer: &mut Writer<'_>) {
    match tag_size {
        TagSize::Uint8 => writer.put_u8(tag as u8),
        TagSize::Uint16 => writer.put(&tag.to_be_bytes()),
    }
}

/// The longest payload [`write_tag_and_fixed_run`] puts beside its tag (bytes): a fixed-width
/// number is at most 8 bytes; the bound keeps the staging array small.
const MAX_FIXED_RUN_BYTES: usize = 16;

/// Writes the tag and a payload of fixed size ([`Encoding::FIXED_RUN_BYTES`]) as one run: both
/// are put into a small array on the stack, appended with one capacity check and one length
/// update instead of one each (DESIGN principle 3). Returns `false`, having written nothing,
/// when the payload's encoding has no fixed run.
#[inline(always)]
fn write_tag_and_fixed_run<E: Encoding>(
    tag: u16,
    tag_size: TagSize,
    encoding: &E,
    payload: &E::Value<'_>,
    writer: &mut Writer<'_>,
) -> bool {
    let Some(payload_bytes) = E::FIXED_RUN_BYTES else {
        return false;
    };
    if payload_bytes > MAX_FIXED_RUN_BYTES {
        return false;
    }
    let mut run = [0u8; 2 + MAX_FIXED_RUN_BYTES];
    let tag_bytes = match tag_size {
        TagSize::Uint8 => {
            run[0] = tag as u8;
            1
        }
        TagSize::Uint16 => {
            run[..2].copy_from_slice(&tag.to_be_bytes());
            2
        }
    };
    encoding.write_fixed_run(payload, &mut run[tag_bytes..tag_bytes + payload_bytes]);
    writer.put(&run[..tag_bytes + payload_bytes]);
    true
}

/// How a case finds its payload in a value of type `T`: by reference ([`case`]) or by value
/// ([`case_with`]).
pub trait Projection<T, E: Encoding> {
    /// If the value belongs to the case, writes `tag` and the payload.
    fn write_projected<X: RecursionContext>(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>>;
    /// As `write_projected`, passing on the payload's tail occurrence of the recursion of
    /// `context` where the payload is held by the value (a payload built by the projection is
    /// written whole).
    fn write_projected_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        E: 'v;
}

/// A projection returning a reference to the payload held in the value.
#[derive(Debug, Clone, Copy)]
pub struct ByReference<P>(P);

/// A projection returning the payload by value (which may borrow from the value).
#[derive(Debug, Clone, Copy)]
pub struct ByValue<P>(P);

impl<T, E, P> Projection<T, E> for ByReference<P>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> Option<&'r E::Value<'r>>,
{
    #[inline(always)]
    fn write_projected<X: RecursionContext>(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>> {
        let payload = (self.0)(value)?;
        if write_tag_and_fixed_run(tag, tag_size, encoding, payload, writer) {
            return Some(Ok(()));
        }
        write_tag(tag, tag_size, writer);
        Some(encoding.write_in(payload, writer, context))
    }

    #[inline(always)]
    fn write_projected_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        E: 'v,
    {
        let payload = (self.0)(value)?;
        if write_tag_and_fixed_run(tag, tag_size, encoding, payload, writer) {
            return Some(Ok(None));
        }
        write_tag(tag, tag_size, writer);
        Some(encoding.write_tail(payload, writer, context))
    }
}

impl<T, E, P> Projection<T, E> for ByValue<P>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> Option<E::Value<'r>>,
{
    #[inline(always)]
    fn write_projected<X: RecursionContext>(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>> {
        let payload = (self.0)(value)?;
        if write_tag_and_fixed_run(tag, tag_size, encoding, &payload, writer) {
            return Some(Ok(()));
        }
        write_tag(tag, tag_size, writer);
        Some(encoding.write_in(&payload, writer, context))
    }

    #[inline(always)]
    fn write_projected_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        E: 'v,
    {
        // The payload is a temporary: nothing in it may outlive this call.
        self.write_projected(value, encoding, tag, tag_size, writer, context)
            .map(|result| result.map(|()| None))
    }
}

/// A property of a union or case chosen either at run time (a value of `$RunTime`) or at
/// compile time (a zero-sized type): the trait, with its one method, and its run-time impl.
macro_rules! run_time_or_static {
    ($(#[$doc:meta])* $Trait:ident::$method:ident -> $Out:ty, for $RunTime:ty) => {
        $(#[$doc])*
        pub trait $Trait: Copy + Send + Sync + 'static {
            /// The value.
            fn $method(&self) -> $Out;
        }

        impl $Trait for $RunTime {
            #[inline(always)]
            fn $method(&self) -> $Out {
                *self
            }
        }
    };
}

/// A zero-sized type implementing `$Trait::$method` with the constant `$value`.
macro_rules! static_value {
    ($(#[$doc:meta])* $Type:ident: $Trait:ident::$method:ident -> $Out:ty = $value:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $Type;

        impl $Trait for $Type {
            #[inline(always)]
            fn $method(&self) -> $Out {
                $value
            }
        }
    };
}

run_time_or_static!(
    /// A case's tag: a `u16` chosen at run time, or [`Tag<N>`] fixed in the case's type, so
    /// that the union's dispatch compares against a constant the compiler sees (a `match` on
    /// immediates) instead of a tag loaded from the encoding.
    CaseTag::tag -> u16, for u16
);

/// The case tag `N`, fixed at compile time (`case(Tag::<3>, ...)` writes the same bytes as
/// `case(3, ...)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tag<const N: u16>;

impl<const N: u16> CaseTag for Tag<N> {
    #[inline(always)]
    fn tag(&self) -> u16 {
        N
    }
}

/// One case of a union: a tag, a title, the payload encoding and the two conversions.
pub struct Case<E, P, I, G = u16> {
    tag: G,
    title: String,
    encoding: E,
    project: P,
    inject: I,
}

impl<E: std::fmt::Debug, P, I, G: CaseTag> std::fmt::Debug for Case<E, P, I, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("tag", &self.tag.tag())
            .field("title", &self.title)
            .field("encoding", &self.encoding)
            .finish()
    }
}

/// `case ~title (Tag tag) e project inject` where `project` returns a reference to the payload
/// held in the value (e.g. `|t| match t { Tree::Leaf(x) => Some(x), _ => None }`).
pub fn case<T, E, P, I, G: CaseTag>(
    tag: G,
    title: &str,
    encoding: E,
    project: P,
    inject: I,
) -> Case<E, ByReference<P>, I, G>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> Option<&'r E::Value<'r>>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    Case {
        tag,
        title: title.to_owned(),
        encoding,
        project: ByReference(project),
        inject,
    }
}

/// `case` with a projection returning the payload by value (e.g. a tuple of a struct
/// variant's fields), which may borrow from the value.
pub fn case_with<T, E, P, I, G: CaseTag>(
    tag: G,
    title: &str,
    encoding: E,
    project: P,
    inject: I,
) -> Case<E, ByValue<P>, I, G>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> Option<E::Value<'r>>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    Case {
        tag,
        title: title.to_owned(),
        encoding,
        project: ByValue(project),
        inject,
    }
}

impl<T, E, P, I, G: CaseTag> UnionCase<T> for Case<E, P, I, G>
where
    E: Encoding,
    P: Projection<T, E>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    #[inline(always)]
    fn tag(&self) -> u16 {
        self.tag.tag()
    }

    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline(always)]
    fn read_payload<X: RecursionContext>(
        &self,
        reader: &mut Reader<'_>,
        context: &X,
    ) -> Result<T, DecodeError> {
        Ok((self.inject)(self.encoding.read_in(reader, context)?))
    }

    #[inline(always)]
    fn try_write<X: RecursionContext>(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>> {
        self.project.write_projected(
            value,
            &self.encoding,
            self.tag.tag(),
            tag_size,
            writer,
            context,
        )
    }

    #[inline(always)]
    fn try_write_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        Self: 'v,
    {
        self.project.write_projected_tail(
            value,
            &self.encoding,
            self.tag.tag(),
            tag_size,
            writer,
            context,
        )
    }

    fn describe(&self, context: &mut DescribeContext) -> CaseDesc {
        CaseDesc {
            tag: self.tag.tag(),
            title: self.title.clone(),
            desc: self.encoding.describe(context),
        }
    }
}

/// The cases of a union: a Rust tuple of 1 to 16 [`UnionCase`]s.
pub trait Cases<T> {
    /// The tags and payload layouts, in order.
    fn signatures(&self) -> Vec<(u16, Layout)>;
    /// Reads the payload of the case tagged `tag`.
    fn read_case<X: RecursionContext>(
        &self,
        tag: u16,
        reader: &mut Reader<'_>,
        context: &X,
    ) -> Option<Result<T, DecodeError>>;
    /// Writes `value` with the first case that accepts it.
    fn write_case<X: RecursionContext>(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<(), EncodeError>>;
    /// As `write_case`, passing on the payload's tail occurrence of the recursion of `context`.
    fn write_case_tail<'v, X: RecursionContext>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
    where
        Self: 'v;
    /// Describes the cases.
    fn describe(&self, context: &mut DescribeContext) -> Vec<CaseDesc>;
}

macro_rules! cases {
    ($($index:tt $C:ident),+) => {
        impl<T, $($C: UnionCase<T>),+> Cases<T> for ($($C,)+) {
            fn signatures(&self) -> Vec<(u16, Layout)> {
                vec![$((self.$index.tag(), self.$index.layout())),+]
            }

            #[inline(always)]
            fn read_case<X: RecursionContext>(
                &self,
                tag: u16,
                reader: &mut Reader<'_>,
                context: &X,
            ) -> Option<Result<T, DecodeError>> {
                $(if tag == self.$index.tag() {
                    return Some(self.$index.read_payload(reader, context));
                })+
                None
            }

            #[inline(always)]
            fn write_case<X: RecursionContext>(
                &self,
                value: &T,
                tag_size: TagSize,
                writer: &mut Writer<'_>,
                context: &X,
            ) -> Option<Result<(), EncodeError>> {
                $(if let Some(result) = self.$index.try_write(value, tag_size, writer, context) {
                    return Some(result);
                })+
                None
            }

            #[inline(always)]
            fn write_case_tail<'v, X: RecursionContext>(
                &self,
                value: &'v T,
                tag_size: TagSize,
                writer: &mut Writer<'_>,
                context: &X,
            ) -> Option<Result<Option<&'v X::Value>, EncodeError>>
            where
                Self: 'v,
            {
                $(if let Some(result) = self.$index.try_write_tail(value, tag_size, writer, context) {
                    return Some(result);
                })+
                None
            }

            fn describe(&self, context: &mut DescribeContext) -> Vec<CaseDesc> {
                vec![$(self.$index.describe(context)),+]
            }
        }
    };
}

crate::for_each_arity!(cases);

run_time_or_static!(
    /// The width of a union's tag: [`TagSize`] chosen at run time, or [`Uint8Tag`] /
    /// [`Uint16Tag`] fixed in the union's type, so that reading and writing the tag compiles to
    /// one load or store of a known width with no test of the width (a recursive union runs
    /// that test once per node).
    TagWidth::tag_size -> TagSize, for TagSize
);

static_value!(
    /// A one-byte tag fixed in the union's type (`~tag_size:`Uint8`, data-encoding's default).
    Uint8Tag: TagWidth::tag_size -> TagSize = TagSize::Uint8
);

static_value!(
    /// A two-byte, big-endian tag fixed in the union's type (`~tag_size:`Uint16`).
    Uint16Tag: TagWidth::tag_size -> TagSize = TagSize::Uint16
);

/// `union ?tag_size cases`: values of type `T`, tagged; `S` is the [`TagWidth`].
pub struct Union<T, C, S = TagSize> {
    tag_size: S,
    cases: C,
    layout: Layout,
    value: PhantomData<fn() -> T>,
}

impl<T, C: std::fmt::Debug, S: TagWidth> std::fmt::Debug for Union<T, C, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Union")
            .field("tag_size", &self.tag_size.tag_size())
            .field("cases", &self.cases)
            .finish()
    }
}

/// `union ~tag_size cases`: checks that the tags are distinct and fit the tag size, and
/// computes the size class (`Kind.merge_list`). `tag_size` is a [`TagSize`] or, to fix the width
/// at compile time, [`Uint8Tag`] or [`Uint16Tag`]; the bytes are the same.
pub fn union<T, C: Cases<T>, S: TagWidth>(
    tag_size: S,
    cases: C,
) -> Result<Union<T, C, S>, BuildError> {
    let width = tag_size.tag_size();
    let signatures = cases.signatures();
    let mut seen = std::collections::HashSet::new();
    let mut merged: Option<SizeClass> = None;
    let mut nullable = false;
    for (tag, layout) in &signatures {
        if *tag > width.max_tag() {
            return Err(BuildError::TagOutOfRange(*tag));
        }
        if !seen.insert(*tag) {
            return Err(BuildError::DuplicateTag(*tag));
        }
        merged = Some(merged.map_or(layout.size, |size| size.merge(layout.size)));
        nullable |= layout.nullable;
    }
    let size = match merged {
        None => return Err(BuildError::EmptyUnion),
        Some(SizeClass::Fixed(size_bytes)) => SizeClass::Fixed(size_bytes + width.size_bytes()),
        Some(other) => other,
    };
    Ok(Union {
        tag_size,
        cases,
        layout: Layout {
            size,
            zeroable: false,
            nullable,
        },
        value: PhantomData,
    })
}

impl<T, C: Cases<T>, S: TagWidth> Encoding for Union<T, C, S> {
    type Value<'a> = T;

    #[inline]
    fn layout(&self) -> Layout {
        self.layout
    }

    crate::read_write_outside_recursion!();

    #[inline(always)]
    fn read_in<'a, X: RecursionContext>(
        &self,
        reader: &mut Reader<'a>,
        context: &X,
    ) -> Result<T, DecodeError> {
        let offset = reader.offset();
        let tag = match self.tag_size.tag_size() {
            TagSize::Uint8 => u16::from(reader.take_u8()?),
            TagSize::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?),
        };
        match self.cases.read_case(tag, reader, context) {
            Some(result) => result,
            None => Err(DecodeError::new(
                DecodeErrorKind::UnexpectedTag(tag.into()),
                offset,
            )),
        }
    }

    #[inline(always)]
    fn write_in<X: RecursionContext>(
        &self,
        value: &T,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Result<(), EncodeError> {
        match self
            .cases
            .write_case(value, self.tag_size.tag_size(), writer, context)
        {
            Some(result) => result,
            None => Err(writer.error(EncodeErrorKind::NoCaseMatched)),
        }
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
        match self
            .cases
            .write_case_tail(value, self.tag_size.tag_size(), writer, context)
        {
            Some(result) => result,
            None => Err(writer.error(EncodeErrorKind::NoCaseMatched)),
        }
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::Union {
            tag_size: self.tag_size.tag_size(),
            cases: self.cases.describe(context),
        }
    }
}

/// The index size of a `string_enum` of `count` cases (`Binary_size.enum_size`).
pub fn enum_tag_kind(count: usize) -> IntKind {
    if count <= u8::MAX as usize {
        IntKind::Uint8
    } else if count <= u16::MAX as usize {
        IntKind::Uint16
    } else {
        IntKind::Uint30
    }
}

/// `string_enum cases`: an index in binary, the case's string in JSON.
#[derive(Debug, Clone)]
pub struct StringEnum<T> {
    cases: Vec<(String, T)>,
    kind: IntKind,
}

/// `string_enum cases`: at least two cases, with distinct strings.
pub fn string_enum<T: Clone + PartialEq>(
    cases: Vec<(&str, T)>,
) -> Result<StringEnum<T>, BuildError> {
    if cases.len() < 2 {
        return Err(BuildError::TooFewEnumCases);
    }
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &cases {
        if !seen.insert(*name) {
            return Err(BuildError::DuplicateEnumCase((*name).to_owned()));
        }
    }
    let kind = enum_tag_kind(cases.len());
    Ok(StringEnum {
        cases: cases
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
        kind,
    })
}

impl<T: Clone + PartialEq> Encoding for StringEnum<T> {
    type Value<'a> = T;

    fn layout(&self) -> Layout {
        Layout::fixed(self.kind.size_bytes())
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        let offset = reader.offset();
        let index = match self.kind {
            IntKind::Uint8 => usize::from(reader.take_u8()?),
            IntKind::Uint16 => usize::from(u16::from_be_bytes(reader.take_array::<2>()?)),
            _ => u32::from_be_bytes(reader.take_array::<4>()?) as usize,
        };
        match self.cases.get(index) {
            Some((_, value)) => Ok(value.clone()),
            None => Err(DecodeError::new(DecodeErrorKind::NoCaseMatched, offset)),
        }
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        let Some(index) = self.cases.iter().position(|(_, case)| case == value) else {
            return Err(writer.error(EncodeErrorKind::NoCaseMatched));
        };
        match self.kind {
            IntKind::Uint8 => writer.put_u8(index as u8),
            IntKind::Uint16 => writer.put(&(index as u16).to_be_bytes()),
            _ => writer.put(&(index as u32).to_be_bytes()),
        }
        Ok(())
    }

    crate::leaf_in_context!();

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::StringEnum {
            cases: self.cases.iter().map(|(name, _)| name.clone()).collect(),
        }
    }
}
