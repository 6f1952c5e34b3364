//! Blocks as the node makes them: a Tenderbake header (`Block_header_repr`) whose `context` is the
//! context store's commit of the block's state, signed by the baker, hashed as Octez hashes a
//! header (blake2b-256 of its binary form); the operations it includes with their receipts; and
//! the JSON the block RPCs answer.

use kestrel_crypto::hash::{blake2b_256, blake2b_256_parts};
use kestrel_crypto::{
    BlockHash, ChainId, ContextHash, OperationHash, PublicKeyHash, SecretKey, Signature,
    SignatureScheme,
};
use kestrel_encoding::Reader;
use kestrel_protocol::block_header::{
    BlockHeader, BlockHeaderContents, PerBlockVote, ShellHeader, Timestamp, UnsignedBlockHeader,
    PROOF_OF_WORK_NONCE_SIZE_BYTES,
};
use kestrel_protocol::crypto_fields::{BlockPayloadHash, OperationListListHash};
use kestrel_protocol::field::HexBytes;
use kestrel_protocol::Field;
use std::borrow::Cow;

use crate::accounts::Account;

/// Protocol 025's hash (`src/proto_025_PsUshuai/lib_protocol/TEZOS_PROTOCOL`).
pub const PROTOCOL_HASH: &str = "PsUshuai9QapM5TGj1JpuVGkdxz5GykdnEvS6Rh8SUVrARvZLCY";

/// The number of validation passes (consensus, voting, anonymous, manager).
pub const VALIDATION_PASSES: usize = 4;

/// The validation pass of manager operations.
pub const MANAGER_PASS: usize = 3;

/// The size of an ed25519 signature, the last bytes of a header the node signed.
const ED25519_SIGNATURE_BYTES: usize = 64;

/// The watermark of a block header's signature (`Signature.Block_header`, Tenderbake's `0x11`).
const BLOCK_HEADER_WATERMARK: u8 = 0x11;

/// Tenderbake's fitness version (`Fitness_repr`: version 02).
const FITNESS_VERSION: u8 = 2;

/// An operation included in a block.
#[derive(Debug, Clone)]
pub struct IncludedOperation {
    /// Its hash.
    pub hash: OperationHash,
    /// Its JSON as block RPCs show it: `{protocol, chain_id, hash, branch, contents (with
    /// metadata), signature}`.
    pub json: String,
}

/// A block of the node's chain.
#[derive(Debug, Clone)]
pub struct Block {
    /// Its hash.
    pub hash: BlockHash,
    /// Its header.
    pub header: BlockHeader<'static>,
    /// Its manager operations (the node makes no consensus, voting or anonymous ones).
    pub operations: Vec<IncludedOperation>,
    /// Who baked it.
    pub baker: PublicKeyHash,
}

/// What a new block is made of.
pub struct BlockInput<'a> {
    /// Its level.
    pub level: i32,
    /// Its predecessor (itself for genesis: `None`).
    pub predecessor: Option<BlockHash>,
    /// Its timestamp.
    pub timestamp: Timestamp,
    /// Its state's commit.
    pub context: ContextHash,
    /// Its operations.
    pub operations: Vec<IncludedOperation>,
    /// The baker's key.
    pub baker: &'a SecretKey,
    /// The chain (signed with the header).
    pub chain_id: Option<ChainId>,
}

impl Block {
    /// Makes, signs and hashes a block.
    pub fn new(input: BlockInput<'_>) -> Block {
        let hashes: Vec<&[u8]> = input
            .operations
            .iter()
            .map(|operation| operation.hash.as_bytes().as_slice())
            .collect();
        // The payload hash and the operations hash commit to the operations (Octez computes the
        // latter as a Merkle tree of the four passes' lists; clients do not recompute either).
        let operations_hash = blake2b_256_parts(&hashes);
        let predecessor_bytes = input.predecessor.map(|hash| *hash.as_bytes());
        let payload_hash = blake2b_256_parts(&[
            predecessor_bytes
                .as_ref()
                .map_or(&[][..], |bytes| &bytes[..]),
            &operations_hash,
        ]);
        let mut fitness_level = Vec::with_capacity(4);
        fitness_level.extend_from_slice(&input.level.to_be_bytes());
        let shell = ShellHeader {
            level: input.level,
            proto: 1,
            // Genesis is its own predecessor: zeros stand in until its hash is known.
            predecessor: input.predecessor.unwrap_or_else(zero_block_hash),
            timestamp: input.timestamp,
            validation_pass: VALIDATION_PASSES as u8,
            operations_hash: OperationListListHash(operations_hash),
            fitness: vec![
                HexBytes(Cow::Owned(vec![FITNESS_VERSION])),
                HexBytes(Cow::Owned(fitness_level)),
                HexBytes(Cow::Owned(Vec::new())),
                HexBytes(Cow::Owned(vec![0xff; 4])),
                HexBytes(Cow::Owned(vec![0; 4])),
            ],
            context: input.context,
        };
        let contents = BlockHeaderContents {
            payload_hash: BlockPayloadHash(payload_hash),
            payload_round: 0,
            proof_of_work_nonce: kestrel_protocol::field::FixedHex(
                [0; PROOF_OF_WORK_NONCE_SIZE_BYTES],
            ),
            seed_nonce_hash: None,
            liquidity_baking_toggle_vote: PerBlockVote::Pass,
        };
        let unsigned = UnsignedBlockHeader { shell, contents };
        let mut message = vec![BLOCK_HEADER_WATERMARK];
        if let Some(chain_id) = input.chain_id {
            message.extend_from_slice(chain_id.as_bytes());
        }
        unsigned.write(&mut message);
        let signature = input.baker.sign(&message);
        let header = BlockHeader {
            shell: unsigned.shell,
            contents: unsigned.contents,
            signature,
        };
        let mut bytes = Vec::new();
        header.write(&mut bytes);
        let hash = BlockHash::try_from_bytes(&blake2b_256(&bytes)).expect("a digest is 32 bytes");
        Block {
            hash,
            header,
            operations: input.operations,
            baker: input.baker.public_key().hash(),
        }
    }

    /// The block as one line of the chain's blocks file: `{"header": hex of its bytes,
    /// "operations": [{"hash", "json"}]}` and a newline.
    pub fn to_line(&self) -> String {
        let mut bytes = Vec::new();
        self.header.write(&mut bytes);
        let operations: Vec<serde_json::Value> = self
            .operations
            .iter()
            .map(|operation| {
                serde_json::json!({
                    "hash": operation.hash.to_b58check(),
                    "json": operation.json,
                })
            })
            .collect();
        let mut line =
            serde_json::json!({"header": hex::encode(bytes), "operations": operations}).to_string();
        line.push('\n');
        line
    }

    /// Reads a line [`Block::to_line`] wrote for a block `baker` baked; `None` when it does not
    /// read (a line torn by a crash).
    pub fn from_line(line: &str, baker: &Account) -> Option<Block> {
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        let bytes = hex::decode(value.get("header")?.as_str()?).ok()?;
        let mut reader = Reader::new(&bytes);
        let header = BlockHeader::read(&mut reader).ok()?;
        reader.finish().ok()?;
        let header = BlockHeader {
            shell: ShellHeader {
                fitness: header
                    .shell
                    .fitness
                    .into_iter()
                    .map(|part| HexBytes(Cow::Owned(part.0.into_owned())))
                    .collect(),
                ..header.shell
            },
            contents: header.contents,
            // The binary form does not say the scheme: the node's bakers sign with ed25519.
            signature: Signature::try_new(
                Some(SignatureScheme::Ed25519),
                bytes.get(bytes.len().checked_sub(ED25519_SIGNATURE_BYTES)?..)?,
            )
            .ok()?,
        };
        let operations = value
            .get("operations")?
            .as_array()?
            .iter()
            .map(|operation| {
                Some(IncludedOperation {
                    hash: OperationHash::from_b58check(operation.get("hash")?.as_str()?).ok()?,
                    json: operation.get("json")?.as_str()?.to_string(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let hash = BlockHash::try_from_bytes(&blake2b_256(&bytes)).ok()?;
        Some(Block {
            hash,
            header,
            operations,
            baker: baker.public_key_hash,
        })
    }

    /// Its level.
    pub fn level(&self) -> i32 {
        self.header.shell.level
    }

    /// Its state's commit.
    pub fn context(&self) -> ContextHash {
        self.header.shell.context
    }

    /// Its timestamp.
    pub fn timestamp(&self) -> Timestamp {
        self.header.shell.timestamp
    }

    /// The `…/header` answer (also one line of `/monitor/heads/main`).
    pub fn header_json(&self, chain_id: &ChainId) -> String {
        let mut header = String::new();
        self.header
            .write_json(&mut header)
            .expect("a header the node made has a JSON form");
        format!(
            "{{\"protocol\":\"{PROTOCOL_HASH}\",\"chain_id\":\"{}\",\"hash\":\"{}\",{}",
            chain_id.to_b58check(),
            self.hash.to_b58check(),
            header.strip_prefix('{').unwrap_or(&header)
        )
    }

    /// The `…/operation_hashes` answer: four lists of hashes, manager operations last.
    pub fn operation_hashes_json(&self) -> String {
        let hashes: Vec<String> = self
            .operations
            .iter()
            .map(|operation| format!("\"{}\"", operation.hash.to_b58check()))
            .collect();
        format!("[[],[],[],[{}]]", hashes.join(","))
    }

    /// The `…/operations` answer: four lists of operations with their receipts.
    pub fn operations_json(&self) -> String {
        let operations: Vec<&str> = self.operations.iter().map(|o| o.json.as_str()).collect();
        format!("[[],[],[],[{}]]", operations.join(","))
    }
}

/// The hash of zeros: the predecessor written in the genesis header.
fn zero_block_hash() -> BlockHash {
    BlockHash::try_from_bytes(&[0; 32]).expect("32 bytes")
}

/// The chain id Octez derives from a genesis block hash (`Chain_id.of_block_hash`: the first
/// four bytes of its blake2b-256).
pub fn chain_id_of_genesis(genesis: &BlockHash) -> ChainId {
    let digest = blake2b_256(genesis.as_bytes());
    ChainId::try_from_bytes(&digest[..4]).expect("4 bytes")
}
