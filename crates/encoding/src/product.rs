//! Products (tutorial, Part 3 "ADT combinators: records"): tuples (`tupN`) and objects (`objN`)
//! of 1 to 16 members (a Rust tuple of encodings or of fields), `merge_objs`/`merge_tups` for
//! any larger arity (as data-encoding builds them), the fields `req`, `opt`, `varopt` and `dft`,
//! and `option`.
//!
//! The size classes are combined when the product is built (`Kind.combine`): a variable-size
//! element may only be followed by fixed-size ones, whose total size is then subtracted from the
//! region while the variable element is read (`read_variable_pair`).

use crate::describe::{Desc, DescribeContext, FieldDesc, Presence};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::recursive::RecursionContext;
use crate::writer::Writer;
use crate::Encoding;

/// How a product is read, worked out when it is built.
#[derive(Debug, Clone, Copy)]
struct Plan {
    layout: Layout,
    /// The element of variable size followed by fixed-size elements, and their total size.
    split: Option<(usize, usize)>,
}

impl Plan {
    /// Checks, for a product of fixed size, that the whole product is there (one bounds check
    /// for all its members).
    #[inline(always)]
    fn ensure_fixed(&self, reader: &Reader<'_>) -> Result<(), DecodeError> {
        match self.layout.size {
            SizeClass::Fixed(size_bytes) => reader.ensure(size_bytes),
            _ => Ok(()),
        }
    }
}

fn plan(layouts: &[Layout]) -> Result<Plan, BuildError> {
    let mut size = SizeClass::Fixed(0);
    let mut variable_position = None;
    for (position, layout) in layouts.iter().enumerate() {
        if let Some(variable) = variable_position {
            if !matches!(layout.size, SizeClass::Fixed(_)) {
                return Err(BuildError::VariableNotLast { position: variable });
            }
        }
        if layout.size == SizeClass::Variable {
            variable_position = Some(position);
        }
        size = match (size, layout.size) {
            (SizeClass::Fixed(left), SizeClass::Fixed(right)) => SizeClass::Fixed(left + right),
            (SizeClass::Variable, _) | (_, SizeClass::Variable) => SizeClass::Variable,
            _ => SizeClass::Dynamic,
        };
    }
    let split = variable_position.and_then(|position| {
        let suffix: usize = layouts[position + 1..]
            .iter()
            .filter_map(|layout| layout.size.fixed_bytes())
            .sum();
        (suffix > 0).then_some((position, suffix))
    });
    Ok(Plan {
        layout: Layout {
            size,
            zeroable: layouts.iter().all(|layout| layout.zeroable),
            nullable: false,
        },
        split,
    })
}

/// Reads element `position` of a product, shortening the region if it is the split element.
#[inline(always)]
fn read_split<'a, T>(
    split: Option<(usize, usize)>,
    position: usize,
    reader: &mut Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match split {
        Some((split_position, suffix_bytes)) if split_position == position => {
            let saved = reader.enter_prefix(suffix_bytes)?;
            let value = read(reader)?;
            if reader.remaining_bytes() != 0 {
                return Err(reader.error(DecodeErrorKind::ExtraBytes));
            }
            reader.leave_prefix(saved);
            Ok(value)
        }
        _ => read(reader),
    }
}

/// A tuple of encodings that [`tup`] accepts (Rust tuples of 1 to 16 encodings).
pub trait Elements {
    /// The layouts of the elements, in order.
    fn layouts(&self) -> Vec<Layout>;
}

/// A tuple of fields that [`obj`] accepts (Rust tuples of 1 to 16 fields).
pub trait Fields {
    /// The layouts of the fields, in order.
    fn layouts(&self) -> Vec<Layout>;
}

/// `tupN`: the elements one after another; a JSON array.
#[derive(Debug, Clone)]
pub struct Tup<T> {
    elements: T,
    plan: Plan,
}

/// `objN`: the fields one after another; a JSON object.
#[derive(Debug, Clone)]
pub struct Obj<T> {
    fields: T,
    plan: Plan,
}

/// `tupN e1 ... eN`: a tuple of encodings, checked for readability.
pub fn tup<T: Elements>(elements: T) -> Result<Tup<T>, BuildError> {
    let plan = plan(&elements.layouts())?;
    Ok(Tup { elements, plan })
}

/// `objN f1 ... fN`: an object of fields, checked for readability.
pub fn obj<T: Fields>(fields: T) -> Result<Obj<T>, BuildError> {
    let plan = plan(&fields.layouts())?;
    Ok(Obj { fields, plan })
}

/// One field of an object.
pub trait Field {
    /// The field's value type.
    type Value<'a>;
    /// The binary layout of the field (including a presence byte).
    fn layout(&self) -> Layout;
    /// Reads the field.
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError>;
    /// Writes the field.
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError>;
    crate::recursion_context_defaults!();
    /// Describes the field.
    fn describe(&self, context: &mut DescribeContext) -> FieldDesc;
}

/// `req name e`: a required field.
#[derive(Debug, Clone)]
pub struct Req<E> {
    name: String,
    encoding: E,
}

/// `req name e`: a required field.
pub fn req<E: Encoding>(name: &str, encoding: E) -> Req<E> {
    Req {
        name: name.to_owned(),
        encoding,
    }
}

impl<E: Encoding> Field for Req<E> {
    type Value<'a> = E::Value<'a>;

    #[inline]
    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        self.encoding.read(reader)
    }

    #[inline(always)]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encoding.write(value, writer)
    }

    crate::forward_in_context!(self => self.encoding);

    fn describe(&self, context: &mut DescribeContext) -> FieldDesc {
        FieldDesc {
            name: self.name.clone(),
            presence: Presence::Required,
            desc: self.encoding.describe(context),
        }
    }
}

/// `opt name e` / `varopt name e`: an optional field (`Option` value).
#[derive(Debug, Clone)]
pub struct Opt<E> {
    name: String,
    encoding: E,
    variable: bool,
}

/// `opt name e`: an optional field, with a presence byte (0x00 absent, 0xff present) unless `e`
/// is of variable size, in which case the field is present iff bytes remain.
pub fn opt<E: Encoding>(name: &str, encoding: E) -> Opt<E> {
    let variable = encoding.layout().size == SizeClass::Variable;
    Opt {
        name: name.to_owned(),
        encoding,
        variable,
    }
}

/// `varopt name e`: an optional field without presence byte (present iff bytes remain), so the
/// object becomes of variable size.
pub fn varopt<E: Encoding>(name: &str, encoding: E) -> Opt<E> {
    Opt {
        name: name.to_owned(),
        encoding,
        variable: true,
    }
}

impl<E: Encoding> Field for Opt<E> {
    type Value<'a> = Option<E::Value<'a>>;

    fn layout(&self) -> Layout {
        if self.variable {
            Layout::variable(true)
        } else {
            Layout::dynamic()
        }
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let present = if self.variable {
            reader.remaining_bytes() != 0
        } else {
            // data-encoding reads the presence byte as a `bool`: any non-zero byte is present.
            reader.take_u8()? != 0
        };
        if present {
            Ok(Some(self.encoding.read(reader)?))
        } else {
            Ok(None)
        }
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        match value {
            None => {
                if !self.variable {
                    writer.put_u8(0x00);
                }
                Ok(())
            }
            Some(value) => {
                if !self.variable {
                    writer.put_u8(0xff);
                }
                self.encoding.write(value, writer)
            }
        }
    }

    fn describe(&self, context: &mut DescribeContext) -> FieldDesc {
        FieldDesc {
            name: self.name.clone(),
            presence: Presence::Optional {
                variable: self.variable,
            },
            desc: self.encoding.describe(context),
        }
    }
}

/// `dft name e default`: a field always present in binary, omitted from JSON when equal to the
/// default.
#[derive(Debug, Clone)]
pub struct Dft<E> {
    name: String,
    encoding: E,
    default_binary: Vec<u8>,
}

/// `dft name e default`; the default must be serialisable by `e`.
pub fn dft<E: Encoding>(
    name: &str,
    encoding: E,
    default: &E::Value<'_>,
) -> Result<Dft<E>, BuildError> {
    let default_binary = encoding
        .encode(default)
        .map_err(BuildError::InvalidDefault)?;
    Ok(Dft {
        name: name.to_owned(),
        encoding,
        default_binary,
    })
}

impl<E: Encoding> Field for Dft<E> {
    type Value<'a> = E::Value<'a>;

    #[inline]
    fn layout(&self) -> Layout {
        self.encoding.layout()
    }

    #[inline(always)]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        self.encoding.read(reader)
    }

    #[inline(always)]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encoding.write(value, writer)
    }

    crate::forward_in_context!(self => self.encoding);

    fn describe(&self, context: &mut DescribeContext) -> FieldDesc {
        FieldDesc {
            name: self.name.clone(),
            presence: Presence::Default(self.default_binary.clone()),
            desc: self.encoding.describe(context),
        }
    }
}

/// The `Encoding` of a product (`Tup` or `Obj`) of one arity: `$members` is the field of the
/// struct holding the members, `$Member` the trait they implement, `$Desc` the description's
/// variant.
macro_rules! product_encoding {
    ($Product:ident, $members:ident, $Member:ident, $Desc:ident; $($index:tt $T:ident),+) => {
        impl<$($T: $Member),+> Encoding for $Product<($($T,)+)> {
            type Value<'a> = ($($T::Value<'a>,)+);

            #[inline]
            fn layout(&self) -> Layout {
                self.plan.layout
            }

            crate::read_write_outside_recursion!();

            #[inline(always)]
            fn read_in<'a, X: RecursionContext>(
                &self,
                reader: &mut Reader<'a>,
                context: &X,
            ) -> Result<Self::Value<'a>, DecodeError> {
                self.plan.ensure_fixed(reader)?;
                let split = self.plan.split;
                if split.is_none() && X::RECURSIVE {
                    // Inside a recursive body a member may run the body again with the reader,
                    // so a local copy (below) would be copied in and out at every level: read
                    // in place.
                    return Ok(($(self.$members.$index.read_in(reader, context)?,)+));
                }
                if split.is_none() {
                    // The common case: no member is read in a shortened region. The members
                    // read from a local copy of the reader, written back at the end: the split
                    // path below passes the reader to an out-of-line closure, which would
                    // otherwise keep every offset update in memory.
                    let mut local = *reader;
                    let value = ($(self.$members.$index.read_in(&mut local, context)?,)+);
                    *reader = local;
                    return Ok(value);
                }
                Ok(($(
                    read_split(split, $index, reader, |reader| self.$members.$index.read_in(reader, context))?,
                )+))
            }

            #[inline(always)]
            fn write_in<X: RecursionContext>(
                &self,
                value: &Self::Value<'_>,
                writer: &mut Writer<'_>,
                context: &X,
            ) -> Result<(), EncodeError> {
                $(self.$members.$index.write_in(&value.$index, writer, context)?;)+
                Ok(())
            }

            #[inline(always)]
            fn write_tail<'v, X: RecursionContext>(
                &self,
                value: &'v Self::Value<'_>,
                writer: &mut Writer<'_>,
                context: &X,
            ) -> Result<Option<&'v X::Value>, EncodeError>
            where
                Self: 'v,
            {
                // Only the last member may hand back a tail; the comparisons are on constants.
                const LAST: usize = [$($index),+].len() - 1;
                let mut tail = None;
                $(if $index == LAST {
                    tail = self.$members.$index.write_tail(&value.$index, writer, context)?;
                } else {
                    self.$members.$index.write_in(&value.$index, writer, context)?;
                })+
                Ok(tail)
            }

            fn describe(&self, context: &mut DescribeContext) -> Desc {
                Desc::$Desc(vec![$(self.$members.$index.describe(context)),+])
            }
        }
    };
}

/// Tuples and objects of one arity: the member lists and the two `Encoding`s.
macro_rules! products {
    ($($index:tt $T:ident),+) => {
        impl<$($T: Encoding),+> Elements for ($($T,)+) {
            fn layouts(&self) -> Vec<Layout> {
                vec![$(self.$index.layout()),+]
            }
        }

        impl<$($T: Field),+> Fields for ($($T,)+) {
            fn layouts(&self) -> Vec<Layout> {
                vec![$(self.$index.layout()),+]
            }
        }

        product_encoding!(Tup, elements, Encoding, Tup; $($index $T),+);
        product_encoding!(Obj, fields, Field, Obj; $($index $T),+);
    };
}

crate::for_each_arity!(products);

/// What a [`Merged`] product joins: two objects or two tuples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MergeKind {
    Objects,
    Tuples,
}

/// `merge_objs o1 o2` / `merge_tups t1 t2`: the fields (or elements) of `left` then those of
/// `right`, as one object (or tuple). Binary: `left`'s bytes then `right`'s, the region shortened
/// for a variable-size `left` as in any product (data-encoding's `Objs`/`Tups`); JSON and schema:
/// one object (or array) holding both sides' members. The value is the pair of both sides'
/// values, so objects and tuples of any arity are built by nesting merges of up to 16-member
/// ones.
#[derive(Debug, Clone)]
pub struct Merged<A, B> {
    left: A,
    right: B,
    kind: MergeKind,
    plan: Plan,
}

/// Whether `encoding` describes as an object (`is_obj`: an object, a merge of objects, a
/// conversion of one, or a zero-width `empty`/`unit`), with its fields.
fn object_fields<E: Encoding>(encoding: &E) -> Option<Vec<FieldDesc>> {
    match encoding.describe(&mut DescribeContext::new()) {
        Desc::Obj(fields) => Some(fields),
        Desc::Empty | Desc::Unit => Some(Vec::new()),
        _ => None,
    }
}

/// `merge_objs left right`: both must be objects (an `obj`, another merge, or a conversion of
/// one, or `empty`/`unit`; data-encoding's `is_obj`), and the product must be readable (a
/// variable-size `left` needs a fixed-size `right`).
pub fn merge_objs<A: Encoding, B: Encoding>(left: A, right: B) -> Result<Merged<A, B>, BuildError> {
    if object_fields(&left).is_none() || object_fields(&right).is_none() {
        return Err(BuildError::MergeOfNonObjects);
    }
    merged(left, right, MergeKind::Objects)
}

/// `merge_tups left right`: both must be tuples (a `tup`, another merge, or a conversion of
/// one; data-encoding's `is_tup`), and the product must be readable.
pub fn merge_tups<A: Encoding, B: Encoding>(left: A, right: B) -> Result<Merged<A, B>, BuildError> {
    let is_tuple = |desc: Desc| matches!(desc, Desc::Tup(_));
    if !is_tuple(left.describe(&mut DescribeContext::new()))
        || !is_tuple(right.describe(&mut DescribeContext::new()))
    {
        return Err(BuildError::MergeOfNonTuples);
    }
    merged(left, right, MergeKind::Tuples)
}

fn merged<A: Encoding, B: Encoding>(
    left: A,
    right: B,
    kind: MergeKind,
) -> Result<Merged<A, B>, BuildError> {
    let plan = plan(&[left.layout(), right.layout()])?;
    Ok(Merged {
        left,
        right,
        kind,
        plan,
    })
}

impl<A: Encoding, B: Encoding> Encoding for Merged<A, B> {
    type Value<'a> = (A::Value<'a>, B::Value<'a>);

    #[inline]
    fn layout(&self) -> Layout {
        self.plan.layout
    }

    crate::read_write_outside_recursion!();

    #[inline(always)]
    fn read_in<'a, X: RecursionContext>(
        &self,
        reader: &mut Reader<'a>,
        context: &X,
    ) -> Result<Self::Value<'a>, DecodeError> {
        self.plan.ensure_fixed(reader)?;
        let split = self.plan.split;
        let left = read_split(split, 0, reader, |reader| {
            self.left.read_in(reader, context)
        })?;
        let right = self.right.read_in(reader, context)?;
        Ok((left, right))
    }

    #[inline(always)]
    fn write_in<X: RecursionContext>(
        &self,
        value: &Self::Value<'_>,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Result<(), EncodeError> {
        self.left.write_in(&value.0, writer, context)?;
        self.right.write_in(&value.1, writer, context)
    }

    #[inline(always)]
    fn write_tail<'v, X: RecursionContext>(
        &self,
        value: &'v Self::Value<'_>,
        writer: &mut Writer<'_>,
        context: &X,
    ) -> Result<Option<&'v X::Value>, EncodeError>
    where
        Self: 'v,
    {
        self.left.write_in(&value.0, writer, context)?;
        self.right.write_tail(&value.1, writer, context)
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        let left = self.left.describe(context);
        let right = self.right.describe(context);
        match (self.kind, left, right) {
            (MergeKind::Tuples, Desc::Tup(mut elements), Desc::Tup(more)) => {
                elements.extend(more);
                Desc::Tup(elements)
            }
            (MergeKind::Objects, left, right) => {
                let mut fields = match left {
                    Desc::Obj(fields) => fields,
                    // `empty` or `unit`, checked when built.
                    _ => Vec::new(),
                };
                if let Desc::Obj(more) = right {
                    fields.extend(more);
                }
                Desc::Obj(fields)
            }
            // Checked when built: both sides of a tuple merge describe as tuples.
            (MergeKind::Tuples, left, right) => Desc::Tup(vec![left, right]),
        }
    }
}

/// `option e`: a tag byte (0 for none, 1 for some) then the value; `null` or the value in JSON.
#[derive(Debug, Clone)]
pub struct OptionOf<E> {
    encoding: E,
    layout: Layout,
}

/// `option e`. Rejected when `e` can be JSON `null` (data-encoding's nesting rule), is
/// zero-width (the tag would be all there is: use `bool`), or is of variable size (wrap it in
/// `dynamic_size`).
pub fn option<E: Encoding>(encoding: E) -> Result<OptionOf<E>, BuildError> {
    let inner = encoding.layout();
    if inner.nullable {
        return Err(BuildError::NullableOption);
    }
    let size = match inner.size {
        SizeClass::Fixed(0) => return Err(BuildError::OptionOfZeroWidth),
        SizeClass::Variable => return Err(BuildError::OptionOfVariable),
        _ => SizeClass::Dynamic,
    };
    Ok(OptionOf {
        encoding,
        layout: Layout {
            size,
            zeroable: false,
            nullable: true,
        },
    })
}

impl<E: Encoding> Encoding for OptionOf<E> {
    type Value<'a> = Option<E::Value<'a>>;

    #[inline]
    fn layout(&self) -> Layout {
        self.layout
    }

    #[inline]
    fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
        let offset = reader.offset();
        match reader.take_u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.encoding.read(reader)?)),
            tag => Err(DecodeError::new(
                DecodeErrorKind::UnexpectedTag(tag.into()),
                offset,
            )),
        }
    }

    #[inline]
    fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        match value {
            None => {
                writer.put_u8(0);
                Ok(())
            }
            Some(value) => {
                writer.put_u8(1);
                self.encoding.write(value, writer)
            }
        }
    }

    fn describe(&self, context: &mut DescribeContext) -> Desc {
        Desc::Option(Box::new(self.encoding.describe(context)))
    }
}
