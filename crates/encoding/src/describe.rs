//! The dynamic description of an encoding: a plain tree ([`Desc`]) that every typed combinator
//! produces once, on request. The JSON mapping (`json.rs`) and the schemas (`schema.rs`) are
//! interpreters of this tree, so the typed fast path carries no JSON or documentation code.
//! Recursive encodings appear once, in [`Schema::recursive`], and are referred to by index, so
//! the tree is finite.

use crate::layout::SizeClass;
use std::collections::HashMap;

/// The integer atoms of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKind {
    /// Signed 8-bit.
    Int8,
    /// Unsigned 8-bit.
    Uint8,
    /// Signed 16-bit, big-endian.
    Int16,
    /// Unsigned 16-bit, big-endian.
    Uint16,
    /// Signed 31-bit, on 4 bytes.
    Int31,
    /// Signed 32-bit.
    Int32,
    /// Signed 64-bit (a decimal string in JSON).
    Int64,
    /// Unsigned 30-bit, on 4 bytes (size headers).
    Uint30,
}

impl IntKind {
    /// The size in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            IntKind::Int8 | IntKind::Uint8 => 1,
            IntKind::Int16 | IntKind::Uint16 => 2,
            IntKind::Int31 | IntKind::Int32 | IntKind::Uint30 => 4,
            IntKind::Int64 => 8,
        }
    }

    /// The inclusive range.
    pub fn range(self) -> (i64, i64) {
        match self {
            IntKind::Int8 => (i8::MIN.into(), i8::MAX.into()),
            IntKind::Uint8 => (0, u8::MAX.into()),
            IntKind::Int16 => (i16::MIN.into(), i16::MAX.into()),
            IntKind::Uint16 => (0, u16::MAX.into()),
            IntKind::Int31 => (-(1 << 30), (1 << 30) - 1),
            IntKind::Int32 => (i32::MIN.into(), i32::MAX.into()),
            IntKind::Int64 => (i64::MIN, i64::MAX),
            IntKind::Uint30 => (0, (1 << 30) - 1),
        }
    }

    /// The wording of data-encoding's binary schema (`pp_int`).
    pub fn schema_name(self) -> &'static str {
        match self {
            IntKind::Int8 => "signed 8-bit integer",
            IntKind::Uint8 => "unsigned 8-bit integer",
            IntKind::Int16 => "signed 16-bit integer",
            IntKind::Uint16 => "unsigned 16-bit integer",
            IntKind::Int31 => "signed 31-bit integer",
            IntKind::Int32 => "signed 32-bit integer",
            IntKind::Int64 => "signed 64-bit integer",
            IntKind::Uint30 => "unsigned 30-bit integer",
        }
    }
}

/// The kind of a size or length header (`` `Uint30 | `Uint16 | `Uint8 | `N ``).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthKind {
    /// 4 bytes, up to 2^30 - 1.
    Uint30,
    /// 2 bytes, up to 65535.
    Uint16,
    /// 1 byte, up to 255.
    Uint8,
    /// A Zarith natural (`uint_like_n`), up to 2^30 - 1.
    N,
}

impl LengthKind {
    /// The largest value the header can hold.
    pub fn max_value(self) -> usize {
        match self {
            LengthKind::Uint30 | LengthKind::N => (1 << 30) - 1,
            LengthKind::Uint16 => u16::MAX as usize,
            LengthKind::Uint8 => u8::MAX as usize,
        }
    }

    /// The smallest fixed-width kind holding `max` (data-encoding's `Bounded` rule).
    pub fn for_bound(max: usize) -> LengthKind {
        if max <= u8::MAX as usize {
            LengthKind::Uint8
        } else if max <= u16::MAX as usize {
            LengthKind::Uint16
        } else {
            LengthKind::Uint30
        }
    }
}

/// The size of a union tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSize {
    /// One byte (the default).
    Uint8,
    /// Two bytes, big-endian.
    Uint16,
}

impl TagSize {
    /// The size in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            TagSize::Uint8 => 1,
            TagSize::Uint16 => 2,
        }
    }

    /// The largest tag.
    pub fn max_tag(self) -> u16 {
        match self {
            TagSize::Uint8 => u8::MAX.into(),
            TagSize::Uint16 => u16::MAX,
        }
    }
}

/// How a string or bytes value appears in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRepr {
    /// A JSON string holding the text (`Plain`).
    Plain,
    /// A JSON string of hexadecimal digits (`Hex`).
    Hex,
}

/// One node of the dynamic description.
#[derive(Debug, Clone, PartialEq)]
pub enum Desc {
    /// `unit`: no bytes; any JSON on input, `{}` on output.
    Unit,
    /// `null`: no bytes; JSON `null`.
    Null,
    /// `empty`: no bytes; JSON `{}`.
    Empty,
    /// `constant s`: no bytes; the JSON string `s`.
    Constant(String),
    /// `bool`: one byte.
    Bool,
    /// An integer atom.
    Int(IntKind),
    /// `ranged_int`.
    RangedInt {
        /// Inclusive lower bound.
        minimum: i32,
        /// Inclusive upper bound.
        maximum: i32,
    },
    /// `float`: IEEE 754 double, big-endian.
    Float,
    /// `ranged_float`.
    RangedFloat {
        /// Inclusive lower bound.
        minimum: f64,
        /// Inclusive upper bound.
        maximum: f64,
    },
    /// Zarith natural.
    N,
    /// Zarith integer.
    Z,
    /// Raw bytes: `Fixed` (with a size) or `Variable` (to the end of the region).
    Bytes {
        /// The fixed size, or `None` for variable.
        fixed_bytes: Option<usize>,
        /// String (`Plain`) or bytes (`Hex`) in JSON.
        json: JsonRepr,
    },
    /// `Fixed.add_padding`: the inner value followed by ignored bytes.
    Padded {
        /// The padded encoding.
        inner: Box<Desc>,
        /// The padding size.
        padding_bytes: usize,
    },
    /// `string_enum`: an index, a string in JSON.
    StringEnum {
        /// The strings, by index.
        cases: Vec<String>,
    },
    /// `Variable.list`: elements to the end of the region.
    List {
        /// The most elements allowed.
        max_length: Option<usize>,
        /// The element encoding.
        element: Box<Desc>,
    },
    /// `list_with_length`: an element count, then the elements.
    ListWithLength {
        /// The count header.
        kind: LengthKind,
        /// The most elements allowed.
        max_length: Option<usize>,
        /// The element encoding.
        element: Box<Desc>,
    },
    /// `Fixed.list`: exactly `length` elements.
    FixedList {
        /// The element count.
        length: usize,
        /// The element encoding.
        element: Box<Desc>,
    },
    /// An object: fields one after another; a JSON object.
    Obj(Vec<FieldDesc>),
    /// A tuple: elements one after another; a JSON array.
    Tup(Vec<Desc>),
    /// `option`: a tag byte (0 none, 1 some); JSON `null` or the value.
    Option(Box<Desc>),
    /// `union`: a tag, then the case's payload; the untagged payload in JSON.
    Union {
        /// The tag size.
        tag_size: TagSize,
        /// The cases.
        cases: Vec<CaseDesc>,
    },
    /// `dynamic_size`: a size header, then exactly that many bytes of the inner encoding.
    DynamicSize {
        /// The size header.
        kind: LengthKind,
        /// The inner encoding.
        inner: Box<Desc>,
    },
    /// `check_size`: the inner encoding, at most `limit_bytes` long.
    CheckSize {
        /// The limit.
        limit_bytes: usize,
        /// The inner encoding.
        inner: Box<Desc>,
    },
    /// A recursive encoding: index into [`Schema::recursive`].
    Mu(usize),
}

/// How a field is present in an object.
#[derive(Debug, Clone, PartialEq)]
pub enum Presence {
    /// `req`: always there.
    Required,
    /// `opt`: a presence byte (`Dynamic`), or, for a variable-size last field, present iff bytes
    /// remain (`Variable`); omitted from JSON when absent.
    Optional {
        /// Whether the field uses the `Variable` form (no presence byte).
        variable: bool,
    },
    /// `dft`: always there in binary; omitted from JSON when equal to the default, whose binary
    /// form is kept here.
    Default(Vec<u8>),
}

/// One field of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDesc {
    /// The JSON key.
    pub name: String,
    /// How it is present.
    pub presence: Presence,
    /// Its encoding.
    pub desc: Desc,
}

/// One case of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDesc {
    /// The binary tag.
    pub tag: u16,
    /// The title (documentation only).
    pub title: String,
    /// The payload encoding.
    pub desc: Desc,
}

/// A recursive encoding's body.
#[derive(Debug, Clone, PartialEq)]
pub struct MuDesc {
    /// The name given to `mu`.
    pub name: String,
    /// The unfolded body (containing [`Desc::Mu`] references to itself).
    pub body: Desc,
    /// Whether the body's size class is `Variable` (otherwise `Dynamic`).
    pub variable: bool,
    /// The nesting limit of the recursive encoding.
    pub max_depth: usize,
}

/// A complete description: the root and every recursive encoding it reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// The described encoding.
    pub root: Desc,
    /// The recursive encodings, referred to by [`Desc::Mu`].
    pub recursive: Vec<MuDesc>,
}

/// Collects recursive encodings while a description is produced.
#[derive(Debug, Default)]
pub struct DescribeContext {
    recursive: Vec<Option<MuDesc>>,
    index_by_identity: HashMap<usize, usize>,
}

impl DescribeContext {
    /// An empty context.
    pub fn new() -> Self {
        DescribeContext::default()
    }

    /// The index of the recursive encoding with `identity`, and whether it still needs its body
    /// described (it is registered, as a placeholder, on first sight).
    pub fn register_recursive(&mut self, identity: usize) -> (usize, bool) {
        if let Some(&index) = self.index_by_identity.get(&identity) {
            return (index, false);
        }
        let index = self.recursive.len();
        self.recursive.push(None);
        self.index_by_identity.insert(identity, index);
        (index, true)
    }

    /// The number of distinct recursive encodings registered so far.
    pub fn recursive_count(&self) -> usize {
        self.recursive.len()
    }

    /// Fills in the body of the recursive encoding registered at `index`.
    pub fn define_recursive(&mut self, index: usize, body: MuDesc) {
        self.recursive[index] = Some(body);
    }

    /// The finished schema with `root`.
    pub fn finish(self, root: Desc) -> Schema {
        let recursive = self
            .recursive
            .into_iter()
            .map(|body| {
                // Every registered body is defined before `describe` of its `mu` returns.
                body.unwrap_or(MuDesc {
                    name: String::new(),
                    body: Desc::Null,
                    variable: false,
                    max_depth: 0,
                })
            })
            .collect();
        Schema { root, recursive }
    }
}

impl Schema {
    /// The size class of `desc` within this schema.
    pub fn size_class(&self, desc: &Desc) -> SizeClass {
        match desc {
            Desc::Unit | Desc::Null | Desc::Empty | Desc::Constant(_) => SizeClass::Fixed(0),
            Desc::Bool => SizeClass::Fixed(1),
            Desc::Int(kind) => SizeClass::Fixed(kind.size_bytes()),
            Desc::RangedInt { minimum, maximum } => SizeClass::Fixed(
                crate::primitive::range_to_int_kind(*minimum, *maximum).size_bytes(),
            ),
            Desc::Float | Desc::RangedFloat { .. } => SizeClass::Fixed(8),
            Desc::N | Desc::Z => SizeClass::Dynamic,
            Desc::Bytes { fixed_bytes, .. } => match fixed_bytes {
                Some(size) => SizeClass::Fixed(*size),
                None => SizeClass::Variable,
            },
            Desc::Padded {
                inner,
                padding_bytes,
            } => match self.size_class(inner) {
                SizeClass::Fixed(size) => SizeClass::Fixed(size + padding_bytes),
                other => other,
            },
            Desc::StringEnum { cases } => {
                SizeClass::Fixed(crate::union::enum_tag_kind(cases.len()).size_bytes())
            }
            Desc::List { .. } => SizeClass::Variable,
            Desc::ListWithLength { .. } => SizeClass::Dynamic,
            Desc::FixedList { length, element } => match self.size_class(element) {
                SizeClass::Fixed(size) => SizeClass::Fixed(size * length),
                other => other,
            },
            Desc::Obj(fields) => self.combine(fields.iter().map(|field| match field.presence {
                Presence::Optional { variable: true } => SizeClass::Variable,
                Presence::Optional { variable: false } => match self.size_class(&field.desc) {
                    SizeClass::Variable => SizeClass::Variable,
                    _ => SizeClass::Dynamic,
                },
                _ => self.size_class(&field.desc),
            })),
            Desc::Tup(elements) => self.combine(elements.iter().map(|e| self.size_class(e))),
            Desc::Option(inner) => match self.size_class(inner) {
                SizeClass::Fixed(0) => SizeClass::Fixed(1),
                _ => SizeClass::Dynamic,
            },
            Desc::Union { tag_size, cases } => {
                let mut merged: Option<SizeClass> = None;
                for case in cases {
                    let class = self.size_class(&case.desc);
                    merged = Some(merged.map_or(class, |m| m.merge(class)));
                }
                match merged {
                    Some(SizeClass::Fixed(size)) => SizeClass::Fixed(size + tag_size.size_bytes()),
                    Some(SizeClass::Variable) => SizeClass::Variable,
                    _ => SizeClass::Dynamic,
                }
            }
            Desc::DynamicSize { .. } => SizeClass::Dynamic,
            Desc::CheckSize { inner, .. } => self.size_class(inner),
            Desc::Mu(index) => match self.recursive.get(*index) {
                Some(mu) if mu.variable => SizeClass::Variable,
                _ => SizeClass::Dynamic,
            },
        }
    }

    fn combine(&self, classes: impl Iterator<Item = SizeClass>) -> SizeClass {
        let mut result = SizeClass::Fixed(0);
        for class in classes {
            result = match (result, class) {
                (SizeClass::Fixed(left), SizeClass::Fixed(right)) => SizeClass::Fixed(left + right),
                (SizeClass::Variable, _) | (_, SizeClass::Variable) => SizeClass::Variable,
                _ => SizeClass::Dynamic,
            };
        }
        result
    }
}
