//! What the tests replaying `octez-client --mode mockup` sessions share: the mockup's bootstrap
//! keys, its genesis block and chain, and signed manager operations built as octez-client builds
//! them.

use kestrel_crypto::{BlockHash, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_protocol::field::BoundedNat;
use kestrel_protocol::manager::ManagerHeader;
use kestrel_protocol::script::LazyExpr;
use kestrel_protocol::{Contents, ManagerKind, ManagerOperation, Mutez, Operation};

/// The mockup's bootstrap accounts' secret keys, bootstrap1 first.
pub const SECRET_KEYS: [&str; 5] = [
    "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh",
    "edsk39qAm1fiMjgmPkw1EgQYkMzkJezLNewd7PLNHTkr6w9XA2zdfo",
    "edsk4ArLQgBTLWG5FJmnGnT689VKoqhXwmDPBuGx3z4cvwU9MmrPZZ",
    "edsk2uqQB9AY4FvioK2YMdfmyMrer5R8mGFyuaLLFfSRo8EoyNdht3",
    "edsk4QLrcijEffxV31gGdN2HU7UpyJjA8drFoNcmnB28n89YjPNRFm",
];

/// The branch the operations name.
pub const BRANCH: &str = "BLockGenesisGenesisGenesisGenesisGenesisf79b5d1CoW2";

/// The mockup's chain.
pub const CHAIN_ID: &str = "NetXdQprcVkpaWU";

/// A manager operation's fee (mutez), counter, gas limit and storage limit, as recorded.
pub type Limits = (u64, u128, u128, u128);

/// Bootstrap account `index` (0-based).
pub fn bootstrap_key_hash(index: usize) -> PublicKeyHash {
    kestrel_crypto::SecretKey::from_b58check(SECRET_KEYS[index])
        .expect("secret key")
        .public_key()
        .hash()
}

/// `kind` from bootstrap `source` (0-based) with `header`, signed: the operation's bytes.
pub fn signed_bytes(
    source: usize,
    (fee, counter, gas_limit, storage_limit): Limits,
    kind: ManagerKind<'static>,
) -> Vec<u8> {
    let secret = kestrel_crypto::SecretKey::from_b58check(SECRET_KEYS[source]).expect("secret key");
    let operation = Operation {
        branch: BlockHash::from_b58check(BRANCH).expect("branch"),
        contents: vec![Contents::Manager(ManagerOperation {
            header: ManagerHeader {
                source: secret.public_key().hash(),
                fee: Mutez(fee),
                counter: BoundedNat(counter),
                gas_limit: BoundedNat(gas_limit),
                storage_limit: BoundedNat(storage_limit),
            },
            operation: kind,
        })],
        signature: None,
    };
    let mut bytes = operation.encode_unsigned();
    let mut message = vec![3];
    message.extend_from_slice(&bytes);
    bytes.extend_from_slice(secret.sign(&message).as_bytes());
    bytes
}

/// A script or value with its macros expanded.
pub fn expand(node: Node) -> Node {
    kestrel_michelson::expand_macros(&node).expect("macros expand")
}

/// `node` as an operation's lazy expression.
pub fn lazy(node: &Node) -> LazyExpr<'static> {
    LazyExpr(std::borrow::Cow::Owned(
        kestrel_micheline::binary::encode(node).expect("encodes"),
    ))
}
