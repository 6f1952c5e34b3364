//! Errors: decoding errors (one kind per rule of the format, each with the byte offset where the
//! rule was broken), encoding errors (a value the encoding cannot represent) and build errors (a
//! combination of combinators data-encoding rejects when the encoding is built).
//!
//! Decoding errors: one kind per rule of the format, each carrying the byte offset where the rule
//! was broken, so callers (and differential tests) can compare reasons, not just failure.

use std::fmt;

/// Why a decode failed. The names follow data-encoding's `read_error` constructors.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeErrorKind {
    /// The input ended before the value did (`Not_enough_data`).
    NotEnoughData,
    /// Bytes remained after the value, inside a size-delimited region or at the end (`Extra_bytes`).
    ExtraBytes,
    /// A Zarith number ended with a zero byte, which no canonical encoder writes (`Trailing_zero`).
    TrailingZero,
    /// A list had more elements than its encoding allows (`List_too_long`).
    ListTooLong,
    /// A size prefix or size check exceeded its limit (`Size_limit_exceeded`).
    SizeLimitExceeded,
    /// A union or enum tag named no case (`Unexpected_tag`).
    UnexpectedTag(u32),
    /// A `string_enum` index named no case (`No_case_matched`).
    NoCaseMatched,
    /// An integer was outside its encoding's range (`Invalid_int`).
    InvalidInt {
        /// The smallest accepted value.
        min: i64,
        /// The decoded value.
        value: i64,
        /// The largest accepted value.
        max: i64,
    },
    /// A boolean byte was neither 0x00 nor 0xff (only for strict readers: data-encoding and
    /// this crate's `bool` read any non-zero byte as `true`).
    InvalidBool(u8),
    /// Bytes meant as a string were not UTF-8.
    InvalidUtf8,
    /// A value failed a user-supplied check (`conv_with_guard`), with its message.
    Invalid(String),
    /// A float was outside its `ranged_float` bounds (`Invalid_float`).
    InvalidFloat {
        /// The smallest accepted value.
        min: f64,
        /// The decoded value.
        value: f64,
        /// The largest accepted value.
        max: f64,
    },
    /// A recursive (`mu`) encoding nested deeper than its limit; see
    /// [`crate::recursive::DEFAULT_MAX_DEPTH`].
    DepthLimitExceeded {
        /// The limit that was exceeded.
        max_depth: usize,
    },
}

// `f64` fields are never NaN here (a NaN fails every range check, and is reported as such),
// so equality is an equivalence on the values this enum carries.
impl Eq for DecodeErrorKind {}

/// What a decode failure holds: the rule broken and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeErrorInfo {
    /// What rule the input broke.
    pub kind: DecodeErrorKind,
    /// The offset, in bytes from the start of the input, where it was detected.
    pub offset: usize,
}

/// A decode failure at a byte offset of the input; `error.kind` and `error.offset` read its
/// [`DecodeErrorInfo`]. It is one pointer, so that every `Result` on the decode path stays
/// small (a `Result<i32, DecodeError>` comes back in registers); errors are the cold path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(Box<DecodeErrorInfo>);

impl std::ops::Deref for DecodeError {
    type Target = DecodeErrorInfo;

    fn deref(&self) -> &DecodeErrorInfo {
        &self.0
    }
}

impl DecodeError {
    /// A new error of `kind` at `offset`.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError(Box::new(DecodeErrorInfo { kind, offset }))
    }

    /// The data-encoding name of the error kind, e.g. `Not_enough_data`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            DecodeErrorKind::NotEnoughData => "Not_enough_data",
            DecodeErrorKind::ExtraBytes => "Extra_bytes",
            DecodeErrorKind::TrailingZero => "Trailing_zero",
            DecodeErrorKind::ListTooLong => "List_too_long",
            DecodeErrorKind::SizeLimitExceeded => "Size_limit_exceeded",
            DecodeErrorKind::UnexpectedTag(_) => "Unexpected_tag",
            DecodeErrorKind::NoCaseMatched => "No_case_matched",
            DecodeErrorKind::InvalidInt { .. } => "Invalid_int",
            DecodeErrorKind::InvalidBool(_) => "Invalid_bool",
            DecodeErrorKind::InvalidUtf8 => "Invalid_string",
            DecodeErrorKind::Invalid(_) => "Invalid",
            DecodeErrorKind::InvalidFloat { .. } => "Invalid_float",
            DecodeErrorKind::DepthLimitExceeded { .. } => "Depth_limit_exceeded",
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DecodeErrorKind::UnexpectedTag(tag) => {
                write!(f, "unexpected tag {tag} at byte {}", self.offset)
            }
            DecodeErrorKind::InvalidInt { min, value, max } => write!(
                f,
                "integer {value} outside [{min}, {max}] at byte {}",
                self.offset
            ),
            DecodeErrorKind::InvalidBool(byte) => {
                write!(
                    f,
                    "invalid boolean byte 0x{byte:02x} at byte {}",
                    self.offset
                )
            }
            DecodeErrorKind::Invalid(message) => {
                write!(f, "invalid value at byte {}: {message}", self.offset)
            }
            DecodeErrorKind::InvalidFloat { min, value, max } => write!(
                f,
                "float {value} outside [{min}, {max}] at byte {}",
                self.offset
            ),
            DecodeErrorKind::DepthLimitExceeded { max_depth } => write!(
                f,
                "recursive value nested deeper than {max_depth} at byte {}",
                self.offset
            ),
            _ => write!(f, "{} at byte {}", self.kind_name(), self.offset),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a value could not be serialised. Names follow data-encoding's `write_error` constructors.
#[derive(Debug, Clone, PartialEq)]
pub enum EncodeErrorKind {
    /// An integer was outside its encoding's range (`Invalid_int`).
    InvalidInt {
        /// The smallest accepted value.
        min: i64,
        /// The value given.
        value: i64,
        /// The largest accepted value.
        max: i64,
    },
    /// A float was outside its `ranged_float` bounds, or NaN (`Invalid_float`).
    InvalidFloat {
        /// The smallest accepted value.
        min: f64,
        /// The value given.
        value: f64,
        /// The largest accepted value.
        max: f64,
    },
    /// A `Fixed` string, bytes or list had the wrong length (`Invalid_string_length`,
    /// `Invalid_bytes_length`).
    InvalidFixedLength {
        /// The length the encoding requires.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A serialised part was larger than its size header or `check_size` allows
    /// (`Size_limit_exceeded`).
    SizeLimitExceeded {
        /// The largest size allowed, in bytes.
        limit_bytes: usize,
        /// The size the value needed, in bytes.
        size_bytes: usize,
    },
    /// A list had more elements than its `max_length` (`List_too_long`).
    ListTooLong {
        /// The largest length allowed.
        max_length: usize,
        /// The length given.
        length: usize,
    },
    /// No case of a union matched the value (`No_case_matched`).
    NoCaseMatched,
    /// A value of a recursive encoding nested deeper than its limit.
    DepthLimitExceeded {
        /// The limit that was exceeded.
        max_depth: usize,
    },
}

// As for `DecodeErrorKind`: the floats carried are compared as values, never NaN-sensitive keys.
impl Eq for EncodeErrorKind {}

/// What a serialisation failure holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeErrorInfo {
    /// What the value broke.
    pub kind: EncodeErrorKind,
    /// How many bytes the output held when the failure was detected.
    pub offset: usize,
}

/// A serialisation failure; `error.kind` and `error.offset` read its [`EncodeErrorInfo`]. One
/// pointer, so that `Result<(), EncodeError>` is one word returned in a register on every
/// level of the write path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(Box<EncodeErrorInfo>);

impl std::ops::Deref for EncodeError {
    type Target = EncodeErrorInfo;

    fn deref(&self) -> &EncodeErrorInfo {
        &self.0
    }
}

impl EncodeError {
    /// A new error of `kind` at output `offset`.
    #[cold]
    pub fn new(kind: EncodeErrorKind, offset: usize) -> Self {
        EncodeError(Box::new(EncodeErrorInfo { kind, offset }))
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            EncodeErrorKind::InvalidInt { min, value, max } => {
                write!(f, "integer {value} outside [{min}, {max}]")?
            }
            EncodeErrorKind::InvalidFloat { min, value, max } => {
                write!(f, "float {value} outside [{min}, {max}]")?
            }
            EncodeErrorKind::InvalidFixedLength { expected, actual } => {
                write!(f, "length {actual} where exactly {expected} is required")?
            }
            EncodeErrorKind::SizeLimitExceeded {
                limit_bytes,
                size_bytes,
            } => write!(f, "size {size_bytes} bytes exceeds the limit {limit_bytes}")?,
            EncodeErrorKind::ListTooLong { max_length, length } => write!(
                f,
                "list of {length} elements exceeds max_length {max_length}"
            )?,
            EncodeErrorKind::NoCaseMatched => write!(f, "no union case matched the value")?,
            EncodeErrorKind::DepthLimitExceeded { max_depth } => {
                write!(f, "recursive value nested deeper than {max_depth}")?
            }
        }
        write!(f, " (output offset {})", self.offset)
    }
}

impl std::error::Error for EncodeError {}

/// Why an encoding could not be built: the combination is one data-encoding rejects (it raises
/// `Invalid_argument`), because its bytes could not be read back unambiguously.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// In an object or tuple, a variable-size element was followed by an element that is not of
    /// fixed size (`Kind.combine`): its end could not be found.
    VariableNotLast {
        /// The zero-based position of the variable-size element.
        position: usize,
    },
    /// A collection's elements are of variable size (`check_not_variable`): wrap them in
    /// `dynamic_size`.
    VariableElements,
    /// A collection's elements may be zero bytes long (`check_not_zeroable`), so their count
    /// could not be recovered.
    ZeroableElements,
    /// `option` of an encoding that can be JSON `null` (`cannot nest nullable encodings`).
    NullableOption,
    /// `option` of a zero-width encoding: the tag would carry all the information, use `bool`.
    OptionOfZeroWidth,
    /// `option` of a variable-size encoding: wrap it in `dynamic_size`.
    OptionOfVariable,
    /// A union with no case.
    EmptyUnion,
    /// Two cases of a union share a tag.
    DuplicateTag(u16),
    /// A union tag does not fit the union's tag size.
    TagOutOfRange(u16),
    /// A `string_enum` needs at least two cases (a single one is a `constant`).
    TooFewEnumCases,
    /// Two cases of a `string_enum` share a string.
    DuplicateEnumCase(String),
    /// `Fixed.add_padding` of an encoding that is not of fixed size.
    PaddingOfNonFixed,
    /// A fixed length, padding or size limit of zero.
    ZeroLength,
    /// `ranged_int` bounds outside the 31-bit range, or `ranged_float` bounds that are NaN.
    InvalidRange,
    /// A `max_length` larger than the length prefix can represent.
    MaxLengthTooLarge {
        /// The `max_length` given.
        max_length: usize,
        /// The largest length the prefix can represent.
        limit: usize,
    },
    /// A `dft` default value that its own encoding cannot serialise.
    InvalidDefault(EncodeError),
    /// `merge_objs` of an encoding that is not an object (`is_obj`).
    MergeOfNonObjects,
    /// `merge_tups` of an encoding that is not a tuple (`is_tup`).
    MergeOfNonTuples,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::VariableNotLast { position } => write!(
                f,
                "element {position} is of variable size but is followed by an element that is \
                 not of fixed size; wrap it in dynamic_size"
            ),
            BuildError::VariableElements => write!(
                f,
                "cannot insert variable length elements in a collection; wrap them in dynamic_size"
            ),
            BuildError::ZeroableElements => {
                write!(
                    f,
                    "cannot insert potentially zero-sized elements in a collection"
                )
            }
            BuildError::NullableOption => write!(f, "option cannot nest nullable encodings"),
            BuildError::OptionOfZeroWidth => write!(f, "option of a zero-width encoding"),
            BuildError::OptionOfVariable => {
                write!(
                    f,
                    "option of a variable-size encoding; wrap it in dynamic_size"
                )
            }
            BuildError::EmptyUnion => write!(f, "union with no case"),
            BuildError::DuplicateTag(tag) => write!(f, "the tag {tag} appears twice in a union"),
            BuildError::TagOutOfRange(tag) => write!(f, "the tag {tag} does not fit the tag size"),
            BuildError::TooFewEnumCases => write!(f, "string_enum needs at least two cases"),
            BuildError::DuplicateEnumCase(case) => {
                write!(f, "string_enum case {case:?} appears twice")
            }
            BuildError::PaddingOfNonFixed => write!(f, "cannot pad a non-fixed-size encoding"),
            BuildError::ZeroLength => {
                write!(f, "a fixed length, padding or limit must be positive")
            }
            BuildError::InvalidRange => write!(f, "invalid range bounds"),
            BuildError::MaxLengthTooLarge { max_length, limit } => write!(
                f,
                "max_length {max_length} exceeds what the length prefix can represent ({limit})"
            ),
            BuildError::InvalidDefault(error) => write!(f, "invalid default value: {error}"),
            BuildError::MergeOfNonObjects => write!(f, "merge_objs of a non-object encoding"),
            BuildError::MergeOfNonTuples => write!(f, "merge_tups of a non-tuple encoding"),
        }
    }
}

impl std::error::Error for BuildError {}
