//! Collections (tutorial, Part 3 "Simple combinators" and "Sizing variants"): `Variable.list`
//! (elements to the end of the region), `list`/`array` (the same under a `uint30`
//! `dynamic_size`), `list_with_length` (an element count first) and `Fixed.list`. Values are
//! `Vec`s. Elements may be neither of variable size nor possibly zero bytes long
//! (`check_not_variable`, `check_not_zeroable`), checked when the collection is built.
//!
//! Capacity reserved ahead of reading is bounded by the bytes actually present, so a forged
//! count cannot make the decoder allocate more than the input justifies.

use crate::bytes::{read_length, write_length};
use crate::describe::{Desc, DescribeContext, LengthKind};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::size::{dynamic_size, DynamicSize};
use crate::writer::Writer;
use crate::Encoding;
use std::borrow::Cow;

fn check_element(layout: Layout) -> Result<(), BuildError> {
    if layout.size == SizeClass::Variable {
        return Err(BuildError::VariableElements);
    }
    if layout.zeroable {
        return Err(BuildError::ZeroableElements);
    }
    Ok(())
}

/// How many elements of unknown size to reserve room for at most, before reading them: a
/// guess, so that a forged count or a few bytes cannot reserve much memory.
const SPECULATIVE_CAPACITY_MAX: usize = 1024;

/// A capacity for `count` elements that the remaining input can actually hold.
#[inline]
fn bounded_capacity(count: usize, element: Layout, reader: &Reader<'_>) -> usize {
    match element.size {
        // Exact: the remaining bytes hold at most this many fixed-size elements.
        SizeClass::Fixed(size_bytes) if size_bytes > 0 => {
            count.min(reader.remaining_bytes() / size_bytes)
        }
        _ => count
            .min(reader.remaining_bytes())
            .min(SPECULATIVE_CAPACITY_MAX),
    }
}

/// `Variable.list ?max_length e`: elements one after another to the end of the region.
#[derive(Debug, Clone)]
pub struct VariableList<E> {
    element: E,
    max_length: usize,
}

/// `Variable.list e`.
pub fn variable_list<E: Encoding>(element: E) -> Result<VariableList<E>, BuildError> {
    check_element(element.layout())?;
    Ok(VariableList {
        element,
        max_length: usize::MAX,
    })
}

/// `Variable.list ~max_length e`.
pub fn variable_list_max<E: Encoding>(
    max_length: usize,
    element: E,
) -> Result<VariableList<E>, BuildError> {
    Ok(VariableList {
        max_length,
        ..variable_list(element)?
    })
}

/// `list e` (and `array e`): a `uint30` byte size, then the elements.
pub fn list<E: Encoding>(element: E) -> Result<DynamicSize<VariableList<E>>, BuildError> {
    Ok(dynamic_size(variable_list(element)?))
}

/// `list ~max_length e`.
pub fn list_max<E: Encoding>(
    max_length: usize,
    element: E,
) -> Result<DynamicSize<VariableList<E>>, BuildError> {
    Ok(dynamic_size(variable_list_max(max_length, element)?))
}

impl<E: Encoding> VariableList<E> {
    /// Writes the elements of `values` (shared by the `Vec` and `Cow` value forms).
    #[inline]
    fn write_slice(
        &self,
        values: &[E::Value<'_>],
        writer: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        if values.len() > self.max_length {
            return Err(writer.error(EncodeErrorKind::ListTooLong {
                max_length: self.max_length,
                length: values.len(),
            }));
        }
        for element in values {
            self.element.write(element, writer)?;
        }
        Ok(())
    }
}

impl<E: Encoding> Encoding for VariableList<E> {
    type Value<'a> = Vec<E::Value<'a>>;

    #[inline]
    fn layout(&self) -> Layout {
        Layout::variable(true)
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let element = self.element.layout();
        let mut values = Vec::with_capacity(bounded_capacity(usize::MAX, element, reader));
        while reader.remaining_bytes() != 0 {
            if values.len() == self.max_length {
                return Err(reader.error(DecodeErrorKind::ListTooLong));
            }
            values.push(self.element.read(reader)?);
        }
        Ok(values)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.write_slice(value, writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::List {
            max_length: (self.max_length != usize::MAX).then_some(self.max_length),
            element: Box::new(self.element.describe(context)),
        }
    }
}

/// `Variable.list e` with values as [`Cow`] slices: decoding yields `Cow::Owned`, while a value
/// to encode may be `Cow::Borrowed` from the caller's own vector, so a
/// [`Convert::to_repr`](crate::Convert::to_repr) or a projection can hand over a list field
/// without cloning it. The binary form, limits and description are those of [`VariableList`].
#[derive(Debug, Clone)]
pub struct VariableCowList<E> {
    list: VariableList<E>,
}

/// `Variable.list e` with [`Cow`] slice values (see [`VariableCowList`]).
pub fn variable_list_cow<E: Encoding>(element: E) -> Result<VariableCowList<E>, BuildError> {
    Ok(VariableCowList {
        list: variable_list(element)?,
    })
}

/// `list e` (a `uint30` size header, then the elements) with [`Cow`] slice values.
pub fn list_cow<E>(element: E) -> Result<DynamicSize<VariableCowList<E>>, BuildError>
where
    E: Encoding,
    for<'a> E::Value<'a>: Clone + 'a,
{
    Ok(dynamic_size(variable_list_cow(element)?))
}

impl<E> Encoding for VariableCowList<E>
where
    E: Encoding,
    for<'a> E::Value<'a>: Clone + 'a,
{
    type Value<'a> = Cow<'a, [E::Value<'a>]>;

    #[inline]
    fn layout(&self) -> Layout {
        self.list.layout()
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        Ok(Cow::Owned(self.list.read(reader)?))
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.list.write_slice(value, writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.list.describe(context)
    }
}

/// A list that keeps up to `N` elements inline and moves to the heap only beyond: the value of
/// [`list_inline`], for short lists of small `Copy` elements (a block header's fitness: a few
/// byte strings borrowed from the input), so that decoding them allocates nothing.
#[derive(Clone)]
pub enum InlineList<T, const N: usize> {
    /// At most `N` elements, the first `length` of `elements`.
    Inline {
        /// How many of `elements` are in the list.
        length: usize,
        /// The storage; elements from `length` on are unused defaults.
        elements: [T; N],
    },
    /// More than `N` elements.
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> InlineList<T, N> {
    /// An empty list.
    pub fn new() -> Self {
        InlineList::Inline {
            length: 0,
            elements: [T::default(); N],
        }
    }

    /// Appends `value`, moving the list to the heap when it outgrows `N`.
    #[inline]
    pub fn push(&mut self, value: T) {
        match self {
            InlineList::Inline { length, elements } => {
                if let Some(slot) = elements.get_mut(*length) {
                    *slot = value;
                    *length += 1;
                } else {
                    let mut heap = Vec::with_capacity(N.saturating_mul(2).max(4));
                    heap.extend_from_slice(elements);
                    heap.push(value);
                    *self = InlineList::Heap(heap);
                }
            }
            InlineList::Heap(heap) => heap.push(value),
        }
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineList<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> InlineList<T, N> {
    /// The elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match self {
            InlineList::Inline { length, elements } => &elements[..*length],
            InlineList::Heap(heap) => heap,
        }
    }
}

impl<T, const N: usize> std::ops::Deref for InlineList<T, N> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for InlineList<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut list = Self::new();
        for value in iter {
            list.push(value);
        }
        list
    }
}

impl<T: PartialEq, const N: usize> PartialEq for InlineList<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: std::fmt::Debug, const N: usize> std::fmt::Debug for InlineList<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// `Variable.list e` with [`InlineList`] values, as [`Cow`]s: decoding yields `Cow::Owned`
/// (inline up to `N` elements, so without allocation), while a value to encode may be
/// `Cow::Borrowed` from the caller's own list. The binary form, limits and description are
/// those of [`VariableList`].
#[derive(Debug, Clone)]
pub struct VariableInlineList<E, const N: usize> {
    list: VariableList<E>,
}

/// `Variable.list e` with [`InlineList`] values (see [`VariableInlineList`]).
pub fn variable_list_inline<const N: usize, E: Encoding>(
    element: E,
) -> Result<VariableInlineList<E, N>, BuildError> {
    Ok(VariableInlineList {
        list: variable_list(element)?,
    })
}

/// `list e` (a `uint30` size header, then the elements) with [`InlineList`] values.
pub fn list_inline<const N: usize, E>(
    element: E,
) -> Result<DynamicSize<VariableInlineList<E, N>>, BuildError>
where
    E: Encoding,
    for<'a> E::Value<'a>: Copy + Default + 'a,
{
    Ok(dynamic_size(variable_list_inline(element)?))
}

impl<E, const N: usize> Encoding for VariableInlineList<E, N>
where
    E: Encoding,
    for<'a> E::Value<'a>: Copy + Default + 'a,
{
    type Value<'a> = Cow<'a, InlineList<E::Value<'a>, N>>;

    #[inline]
    fn layout(&self) -> Layout {
        self.list.layout()
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let mut values = InlineList::new();
        let mut length = 0;
        while reader.remaining_bytes() != 0 {
            if length == self.list.max_length {
                return Err(reader.error(DecodeErrorKind::ListTooLong));
            }
            values.push(self.list.element.read(reader)?);
            length += 1;
        }
        Ok(Cow::Owned(values))
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.list.write_slice(value, writer)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        self.list.describe(context)
    }
}

/// `list_with_length kind e`: an element count of `kind`, then the elements.
#[derive(Debug, Clone)]
pub struct ListWithLength<E> {
    kind: LengthKind,
    element: E,
    max_length: usize,
}

/// `list_with_length ?max_length kind e`; `max_length` (default: the most `kind` holds) may not
/// exceed what `kind` holds.
pub fn list_with_length<E: Encoding>(
    kind: LengthKind,
    max_length: Option<usize>,
    element: E,
) -> Result<ListWithLength<E>, BuildError> {
    check_element(element.layout())?;
    let limit = kind.max_value();
    let max_length = max_length.unwrap_or(limit);
    if max_length > limit {
        return Err(BuildError::MaxLengthTooLarge { max_length, limit });
    }
    Ok(ListWithLength {
        kind,
        element,
        max_length,
    })
}

impl<E: Encoding> Encoding for ListWithLength<E> {
    type Value<'a> = Vec<E::Value<'a>>;

    #[inline]
    fn layout(&self) -> Layout {
        Layout::dynamic()
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let start = reader.offset();
        let length = read_length(self.kind, reader)?;
        if length > self.max_length {
            return Err(DecodeError::new(DecodeErrorKind::ListTooLong, start));
        }
        let mut values =
            Vec::with_capacity(bounded_capacity(length, self.element.layout(), reader));
        for _ in 0..length {
            values.push(self.element.read(reader)?);
        }
        Ok(values)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        if value.len() > self.max_length {
            return Err(writer.error(EncodeErrorKind::ListTooLong {
                max_length: self.max_length,
                length: value.len(),
            }));
        }
        write_length(self.kind, value.len(), writer);
        for element in value {
            self.element.write(element, writer)?;
        }
        Ok(())
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::ListWithLength {
            kind: self.kind,
            max_length: (self.max_length != self.kind.max_value()).then_some(self.max_length),
            element: Box::new(self.element.describe(context)),
        }
    }
}

/// `Fixed.list n e`: exactly `n` elements, no header.
#[derive(Debug, Clone)]
pub struct FixedList<E> {
    length: usize,
    element: E,
}

/// `Fixed.list n e`; `n` must be positive and `e` not of variable size.
pub fn fixed_list<E: Encoding>(length: usize, element: E) -> Result<FixedList<E>, BuildError> {
    if length == 0 {
        return Err(BuildError::ZeroLength);
    }
    if element.layout().size == SizeClass::Variable {
        return Err(BuildError::VariableElements);
    }
    Ok(FixedList { length, element })
}

impl<E: Encoding> Encoding for FixedList<E> {
    type Value<'a> = Vec<E::Value<'a>>;

    fn layout(&self) -> Layout {
        let element = self.element.layout();
        Layout {
            size: match element.size {
                SizeClass::Fixed(size) => SizeClass::Fixed(size * self.length),
                other => other,
            },
            zeroable: element.zeroable,
            nullable: false,
        }
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let mut values =
            Vec::with_capacity(bounded_capacity(self.length, self.element.layout(), reader));
        for _ in 0..self.length {
            values.push(self.element.read(reader)?);
        }
        Ok(values)
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        if value.len() != self.length {
            return Err(writer.error(EncodeErrorKind::InvalidFixedLength {
                expected: self.length,
                actual: value.len(),
            }));
        }
        for element in value {
            self.element.write(element, writer)?;
        }
        Ok(())
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::FixedList {
            length: self.length,
            element: Box::new(self.element.describe(context)),
        }
    }
}
