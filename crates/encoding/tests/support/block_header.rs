//! The Tezos shell block header as a `kestrel-encoding` encoding, shared by the combinator tests
//! and the block-header benchmark (`crates/bench/benches/encoding.rs` includes this file by path),
//! so both measure and check the same definition.

use kestrel_encoding::{
    bytes, convert, fixed_bytes_ref, int32, int64, list_inline, obj, req, uint8, variable_bytes,
    BuildError, Convert, Encoding, InlineList,
};
use std::borrow::Cow;

/// How many fitness components are kept inline: Tenderbake's fitness has five (version, level,
/// locked round, predecessor round, round), Emmy's had two; a longer one goes to the heap.
pub const FITNESS_INLINE_LENGTH: usize = 5;

/// The fitness: byte strings borrowed from the input, without allocation up to five.
pub type Fitness<'a> = InlineList<&'a [u8], FITNESS_INLINE_LENGTH>;

/// The shell block header (Octez `Block_header.shell_header_encoding` followed by the protocol
/// data): the layout given in `encoding/p2p/README.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockHeader<'a> {
    pub level: i32,
    pub proto: u8,
    pub predecessor: &'a [u8; 32],
    pub timestamp: i64,
    pub validation_pass: u8,
    pub operations_hash: &'a [u8; 32],
    pub fitness: Fitness<'a>,
    pub context: &'a [u8; 32],
    pub protocol_data: &'a [u8],
}

type BlockHeaderRepr<'a> = (
    i32,
    u8,
    &'a [u8; 32],
    i64,
    u8,
    &'a [u8; 32],
    Cow<'a, Fitness<'a>>,
    &'a [u8; 32],
    &'a [u8],
);

struct BlockHeaderConvert;

impl<R> Convert<R> for BlockHeaderConvert
where
    R: for<'a> Encoding<Value<'a> = BlockHeaderRepr<'a>>,
{
    type Value<'a> = BlockHeader<'a>;

    fn from_repr<'a>(repr: BlockHeaderRepr<'a>) -> Result<BlockHeader<'a>, String>
    where
        Self: 'a,
    {
        let (level, proto, predecessor, timestamp, validation_pass, operations_hash) =
            (repr.0, repr.1, repr.2, repr.3, repr.4, repr.5);
        Ok(BlockHeader {
            level,
            proto,
            predecessor,
            timestamp,
            validation_pass,
            operations_hash,
            fitness: repr.6.into_owned(),
            context: repr.7,
            protocol_data: repr.8,
        })
    }

    fn to_repr<'r>(header: &'r BlockHeader<'_>) -> BlockHeaderRepr<'r> {
        (
            header.level,
            header.proto,
            header.predecessor,
            header.timestamp,
            header.validation_pass,
            header.operations_hash,
            // Borrowed: encoding does not copy the list.
            Cow::Borrowed(&header.fitness),
            header.context,
            header.protocol_data,
        )
    }
}

pub fn block_header_encoding(
) -> Result<impl for<'a> Encoding<Value<'a> = BlockHeader<'a>>, BuildError> {
    let repr = obj((
        req("level", int32()),
        req("proto", uint8()),
        req("predecessor", fixed_bytes_ref::<32>()),
        req("timestamp", int64()),
        req("validation_pass", uint8()),
        req("operations_hash", fixed_bytes_ref::<32>()),
        req("fitness", list_inline::<FITNESS_INLINE_LENGTH, _>(bytes())?),
        req("context", fixed_bytes_ref::<32>()),
        req("protocol_data", variable_bytes()),
    ))?;
    Ok(convert::<BlockHeaderConvert, _>(repr))
}
