//! Size classes (data-encoding's `classify`: `Fixed n`, `Dynamic`, `Variable`) and the other
//! static properties the combinators check when an encoding is built (`is_zeroable`,
//! `is_nullable`). They are computed once per combinator, at construction, never per value.

/// How the binary size of an encoding's values is known (`Data_encoding.classify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeClass {
    /// Every value takes exactly this many bytes.
    Fixed(usize),
    /// The size is found in the data itself (a size header, a terminator bit, a tag).
    Dynamic,
    /// The size is not known from the data: the value runs to the end of its enclosing region.
    Variable,
}

impl SizeClass {
    /// The fixed size, if any.
    pub fn fixed_bytes(self) -> Option<usize> {
        match self {
            SizeClass::Fixed(size_bytes) => Some(size_bytes),
            _ => None,
        }
    }

    /// `Kind.merge` of data-encoding: the class of a choice between two classes (union cases).
    pub fn merge(self, other: SizeClass) -> SizeClass {
        match (self, other) {
            (SizeClass::Fixed(left), SizeClass::Fixed(right)) if left == right => {
                SizeClass::Fixed(left)
            }
            (SizeClass::Variable, _) | (_, SizeClass::Variable) => SizeClass::Variable,
            _ => SizeClass::Dynamic,
        }
    }
}

/// The static properties of an encoding that combinators check when they are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The size class.
    pub size: SizeClass,
    /// Whether some value may serialise to zero bytes (`is_zeroable`): such encodings cannot be
    /// collection elements.
    pub zeroable: bool,
    /// Whether some value is JSON `null` (`is_nullable`): such encodings cannot be under `option`.
    pub nullable: bool,
}

impl Layout {
    /// A fixed-size, non-zeroable, non-nullable layout (the atoms).
    pub const fn fixed(size_bytes: usize) -> Self {
        Layout {
            size: SizeClass::Fixed(size_bytes),
            zeroable: size_bytes == 0,
            nullable: false,
        }
    }

    /// A dynamic-size layout that never takes zero bytes.
    pub const fn dynamic() -> Self {
        Layout {
            size: SizeClass::Dynamic,
            zeroable: false,
            nullable: false,
        }
    }

    /// A variable-size layout.
    pub const fn variable(zeroable: bool) -> Self {
        Layout {
            size: SizeClass::Variable,
            zeroable,
            nullable: false,
        }
    }
}
