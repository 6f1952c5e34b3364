//! Products (tutorial, Part 3 "ADT combinators: records"): tuples (`tupN`) and objects (`objN`)
//! of any arity up to 16 (a Rust tuple of encodings or of fields), the fields `req`, `opt`,
//! `varopt` and `dft`, and `option`.
//!
//! The size classes are combined when the product is built (`Kind.combine`): a variable-size
//! element may only be followed by fixed-size ones, whose total size is then subtracted from the
//! region while the variable element is read (`read_variable_pair`).

use crate::describe::{Desc, DescribeContext, FieldDesc, Presence};
use crate::error::{BuildError, DecodeError, DecodeErrorKind, EncodeError};
use crate::layout::{Layout, SizeClass};
use crate::reader::Reader;
use crate::writer::Writer;
use crate::Encoding;

/// How a product is read, worked out when it is built.
#[derive(Debug, Clone, Copy)]
struct Plan {
    layout: Layout,
    /// The element of variable size followed by fixed-size elements, and their total size.
    split: Option<(usize, usize)>,
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

    fn describe(&self, context: &mut DescribeContext) -> FieldDesc {
        FieldDesc {
            name: self.name.clone(),
            presence: Presence::Default(self.default_binary.clone()),
            desc: self.encoding.describe(context),
        }
    }
}

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

        impl<$($T: Encoding),+> Encoding for Tup<($($T,)+)> {
            type Value<'a> = ($($T::Value<'a>,)+);

            #[inline]
            fn layout(&self) -> Layout {
                self.plan.layout
            }

            #[inline]
            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
                if let SizeClass::Fixed(size_bytes) = self.plan.layout.size {
                    reader.ensure(size_bytes)?;
                }
                let split = self.plan.split;
                if split.is_none() {
                    // The common case: no element is read in a shortened region.
                    return Ok(($(self.elements.$index.read(reader)?,)+));
                }
                Ok(($(
                    read_split(split, $index, reader, |reader| self.elements.$index.read(reader))?,
                )+))
            }

            #[inline]
            fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                $(self.elements.$index.write(&value.$index, writer)?;)+
                Ok(())
            }

            fn describe(&self, context: &mut DescribeContext) -> Desc {
                Desc::Tup(vec![$(self.elements.$index.describe(context)),+])
            }
        }

        impl<$($T: Field),+> Encoding for Obj<($($T,)+)> {
            type Value<'a> = ($($T::Value<'a>,)+);

            #[inline]
            fn layout(&self) -> Layout {
                self.plan.layout
            }

            #[inline]
            fn read<'a>(&self, reader: &mut Reader<'a>) -> Result<Self::Value<'a>, DecodeError> {
                if let SizeClass::Fixed(size_bytes) = self.plan.layout.size {
                    reader.ensure(size_bytes)?;
                }
                let split = self.plan.split;
                if split.is_none() {
                    // The common case: no element is read in a shortened region.
                    return Ok(($(self.fields.$index.read(reader)?,)+));
                }
                Ok(($(
                    read_split(split, $index, reader, |reader| self.fields.$index.read(reader))?,
                )+))
            }

            #[inline]
            fn write(&self, value: &Self::Value<'_>, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
                $(self.fields.$index.write(&value.$index, writer)?;)+
                Ok(())
            }

            fn describe(&self, context: &mut DescribeContext) -> Desc {
                Desc::Obj(vec![$(self.fields.$index.describe(context)),+])
            }
        }
    };
}

products!(0 A);
products!(0 A, 1 B);
products!(0 A, 1 B, 2 C);
products!(0 A, 1 B, 2 C, 3 D);
products!(0 A, 1 B, 2 C, 3 D, 4 E);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O);
products!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O, 15 P);

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
