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
use crate::recursive::RecursionId;
use crate::writer::Writer;
use crate::Encoding;
use std::marker::PhantomData;

/// One case of a union over values of type `T`.
pub trait UnionCase<T> {
    /// The binary tag.
    fn tag(&self) -> u16;
    /// The payload layout.
    fn layout(&self) -> Layout;
    /// Reads the payload and injects it into `T`.
    fn read_payload<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError>;
    /// If the case accepts `value`, writes the tag and payload and returns `Some`.
    fn try_write(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>>;
    /// As `try_write`, passing on the payload's tail occurrence of `recursion`
    /// ([`Encoding::write_tail`]).
    fn try_write_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
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

/// How a case finds its payload in a value of type `T`: by reference ([`case`]) or by value
/// ([`case_with`]).
pub trait Projection<T, E: Encoding> {
    /// If the value belongs to the case, writes `tag` and the payload.
    fn write_projected(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>>;
    /// As `write_projected`, passing on the payload's tail occurrence of `recursion` where the
    /// payload is held by the value (a payload built by the projection is written whole).
    fn write_projected_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
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
    fn write_projected(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>> {
        let payload = (self.0)(value)?;
        write_tag(tag, tag_size, writer);
        Some(encoding.write(payload, writer))
    }

    #[inline(always)]
    fn write_projected_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
    where
        E: 'v,
    {
        let payload = (self.0)(value)?;
        write_tag(tag, tag_size, writer);
        Some(encoding.write_tail::<U>(payload, writer, recursion))
    }
}

impl<T, E, P> Projection<T, E> for ByValue<P>
where
    E: Encoding,
    P: for<'r> Fn(&'r T) -> Option<E::Value<'r>>,
{
    #[inline(always)]
    fn write_projected(
        &self,
        value: &T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>> {
        let payload = (self.0)(value)?;
        write_tag(tag, tag_size, writer);
        Some(encoding.write(&payload, writer))
    }

    #[inline(always)]
    fn write_projected_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        encoding: &E,
        tag: u16,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        _recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
    where
        E: 'v,
    {
        // The payload is a temporary: nothing in it may outlive this call.
        self.write_projected(value, encoding, tag, tag_size, writer)
            .map(|result| result.map(|()| None))
    }
}

/// One case of a union: a tag, a title, the payload encoding and the two conversions.
pub struct Case<E, P, I> {
    tag: u16,
    title: String,
    encoding: E,
    project: P,
    inject: I,
}

impl<E: std::fmt::Debug, P, I> std::fmt::Debug for Case<E, P, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("tag", &self.tag)
            .field("title", &self.title)
            .field("encoding", &self.encoding)
            .finish()
    }
}

/// `case ~title (Tag tag) e project inject` where `project` returns a reference to the payload
/// held in the value (e.g. `|t| match t { Tree::Leaf(x) => Some(x), _ => None }`).
pub fn case<T, E, P, I>(
    tag: u16,
    title: &str,
    encoding: E,
    project: P,
    inject: I,
) -> Case<E, ByReference<P>, I>
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
pub fn case_with<T, E, P, I>(
    tag: u16,
    title: &str,
    encoding: E,
    project: P,
    inject: I,
) -> Case<E, ByValue<P>, I>
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

impl<T, E, P, I> UnionCase<T> for Case<E, P, I>
where
    E: Encoding,
    P: Projection<T, E>,
    I: for<'a> Fn(E::Value<'a>) -> T,
{
    #[inline(always)]
    fn tag(&self) -> u16 {
        self.tag
    }

    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline(always)]
    fn read_payload<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        Ok((self.inject)(self.encoding.read(reader)?))
    }

    #[inline(always)]
    fn try_write(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>> {
        self.project
            .write_projected(value, &self.encoding, self.tag, tag_size, writer)
    }

    #[inline(always)]
    fn try_write_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
    where
        Self: 'v,
    {
        self.project.write_projected_tail::<U>(
            value,
            &self.encoding,
            self.tag,
            tag_size,
            writer,
            recursion,
        )
    }

    fn describe(&self, context: &mut DescribeContext) -> CaseDesc {
        CaseDesc {
            tag: self.tag,
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
    fn read_case<'a>(&self, tag: u16, reader: &mut Reader<'a>) -> Option<Result<T, DecodeError>>;
    /// Writes `value` with the first case that accepts it.
    fn write_case(
        &self,
        value: &T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
    ) -> Option<Result<(), EncodeError>>;
    /// As `write_case`, passing on the payload's tail occurrence of `recursion`.
    fn write_case_tail<'v, U: 'static>(
        &self,
        value: &'v T,
        tag_size: TagSize,
        writer: &mut Writer<'_>,
        recursion: RecursionId,
    ) -> Option<Result<Option<&'v U>, EncodeError>>
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
            fn read_case<'a>(&self, tag: u16, reader: &mut Reader<'a>) -> Option<Result<T, DecodeError>> {
                $(if tag == self.$index.tag() {
                    return Some(self.$index.read_payload(reader));
                })+
                None
            }

            #[inline(always)]
            fn write_case(
                &self,
                value: &T,
                tag_size: TagSize,
                writer: &mut Writer<'_>,
            ) -> Option<Result<(), EncodeError>> {
                $(if let Some(result) = self.$index.try_write(value, tag_size, writer) {
                    return Some(result);
                })+
                None
            }

            #[inline(always)]
            fn write_case_tail<'v, U: 'static>(
                &self,
                value: &'v T,
                tag_size: TagSize,
                writer: &mut Writer<'_>,
                recursion: RecursionId,
            ) -> Option<Result<Option<&'v U>, EncodeError>>
    where
        Self: 'v, {
                $(if let Some(result) = self.$index.try_write_tail::<U>(value, tag_size, writer, recursion) {
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

/// `union ?tag_size cases`: values of type `T`, tagged.
pub struct Union<T, C> {
    tag_size: TagSize,
    cases: C,
    layout: Layout,
    value: PhantomData<fn() -> T>,
}

impl<T, C: std::fmt::Debug> std::fmt::Debug for Union<T, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Union")
            .field("tag_size", &self.tag_size)
            .field("cases", &self.cases)
            .finish()
    }
}

/// `union ~tag_size cases`: checks that the tags are distinct and fit the tag size, and
/// computes the size class (`Kind.merge_list`).
pub fn union<T, C: Cases<T>>(tag_size: TagSize, cases: C) -> Result<Union<T, C>, BuildError> {
    let signatures = cases.signatures();
    let mut seen = std::collections::HashSet::new();
    let mut merged: Option<SizeClass> = None;
    let mut nullable = false;
    for (tag, layout) in &signatures {
        if *tag > tag_size.max_tag() {
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
        Some(SizeClass::Fixed(size_bytes)) => SizeClass::Fixed(size_bytes + tag_size.size_bytes()),
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

impl<T, C: Cases<T>> Encoding for Union<T, C> {
    type Value<'a> = T;

    #[inline]
    fn layout(&self) -> Layout {
        self.layout
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<T, DecodeError> {
        let offset = reader.offset();
        let tag = match self.tag_size {
            TagSize::Uint8 => u16::from(reader.take_u8()?),
            TagSize::Uint16 => u16::from_be_bytes(reader.take_array::<2>()?),
        };
        match self.cases.read_case(tag, reader) {
            Some(result) => result,
            None => Err(DecodeError::new(
                DecodeErrorKind::UnexpectedTag(tag.into()),
                offset,
            )),
        }
    }

    #[inline]
    fn write(&self, value: &T, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self.cases.write_case(value, self.tag_size, writer) {
            Some(result) => result,
            None => Err(writer.error(EncodeErrorKind::NoCaseMatched)),
        }
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
        match self
            .cases
            .write_case_tail::<U>(value, self.tag_size, writer, recursion)
        {
            Some(result) => result,
            None => Err(writer.error(EncodeErrorKind::NoCaseMatched)),
        }
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::Union {
            tag_size: self.tag_size,
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

    fn describe(&self, _context: &mut DescribeContext) -> Desc {
        Desc::StringEnum {
            cases: self.cases.iter().map(|(name, _)| name.clone()).collect(),
        }
    }
}
