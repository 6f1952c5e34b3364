//! On-chain views run off-chain, as the `run_script_view` RPC (and octez-client's mockup `run
//! view`) runs them: on a copy of the state, `SENDER` the contract itself and `SOURCE` the zero
//! key hash unless given, at the block's level and time unless given, with a gas limit.

use kestrel_crypto::{ChainId, ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_protocol::{Ledger, LedgerError};

/// The Ed25519 key hash of zeros (`Signature.Public_key_hash.zero`): the `SOURCE` of a view run
/// without a payer.
pub const ZERO_KEY_HASH: &str = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";

/// What a view run asks.
pub struct ViewRequest<'a> {
    /// The contract.
    pub contract: &'a ContractHash,
    /// The view's name.
    pub name: &'a str,
    /// Its input.
    pub input: &'a Node,
    /// `SENDER`.
    pub sender: Option<&'a Destination>,
    /// `SOURCE` (the payer).
    pub payer: Option<&'a PublicKeyHash>,
    /// The gas limit.
    pub gas_limit_milli: u64,
    /// `NOW`, when not the block's.
    pub now_seconds: Option<i64>,
    /// `LEVEL`, when not the block's.
    pub level: Option<u64>,
}

/// The block a view runs in by default.
pub struct ViewBlock {
    /// Its level.
    pub level: u64,
    /// Its time, seconds since the epoch.
    pub now_seconds: i64,
    /// The chain.
    pub chain_id: ChainId,
}

/// Why a view did not run to a result.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The contract has no script.
    #[error("{0} has no script")]
    NoScript(String),
    /// The contract's script does not typecheck.
    #[error("ill-typed contract: {0}")]
    IllTyped(String),
    /// The view failed (no such view, ill-typed input, `FAILWITH`, gas).
    #[error("{0}")]
    Execution(kestrel_michelson::ExecutionError),
    /// The state could not be read.
    #[error("ledger: {0}")]
    Ledger(#[from] LedgerError),
}

/// Runs view `request.name` of `request.contract` on its input with the contract's storage and
/// balance in `ledger` (copied: nothing is written); returns the view's result.
pub fn run_view(
    ledger: &Ledger,
    request: &ViewRequest<'_>,
    block: &ViewBlock,
) -> Result<kestrel_michelson::Value, ViewError> {
    let contract = request.contract;
    let missing = || ViewError::NoScript(contract.to_b58check());
    let code = ledger.script(contract)?.ok_or_else(missing)?;
    let storage = ledger.storage(contract)?.ok_or_else(missing)?;
    let balance = ledger.balance(&Destination::Originated(*contract))?;
    let config = kestrel_michelson::Config {
        legacy: true,
        gas_limit_milli: request.gas_limit_milli,
    };
    let script = kestrel_michelson::Script::typecheck(&code, &config)
        .map_err(|error| ViewError::IllTyped(error.to_string()))?;
    let address = |destination: &Destination| {
        kestrel_michelson::Address::new(kestrel_protocol::host::vm_destination(destination))
    };
    let self_address = address(&Destination::Originated(*contract));
    let zero = PublicKeyHash::from_b58check(ZERO_KEY_HASH).expect("the zero key hash is valid");
    let (sender, source) = match (request.sender, request.payer) {
        (None, None) => (self_address.clone(), Destination::Implicit(zero)),
        (Some(sender), None) => (address(sender), Destination::Implicit(zero)),
        (None, Some(payer)) => (
            address(&Destination::Implicit(*payer)),
            Destination::Implicit(*payer),
        ),
        (Some(sender), Some(payer)) => (address(sender), Destination::Implicit(*payer)),
    };
    let environment = kestrel_michelson::Environment {
        amount_mutez: 0,
        balance_mutez: i64::try_from(balance).unwrap_or(i64::MAX),
        now_seconds: request.now_seconds.unwrap_or(block.now_seconds),
        level: request.level.unwrap_or(block.level),
        min_block_time_seconds: ledger.constants().minimal_block_delay_seconds,
        source: address(&source),
        sender,
        self_address,
        chain_id: *block.chain_id.as_bytes(),
    };
    let mut ledger = ledger.clone();
    let mut nonce = kestrel_protocol::apply::OriginationNonce::new([0; 32]);
    let mut host = kestrel_protocol::host::LedgerHost::new(&mut ledger, &mut nonce);
    let execution = kestrel_michelson::run_view(
        &script,
        request.name,
        request.input,
        &storage,
        &environment,
        &mut host,
        request.gas_limit_milli,
    )
    .map_err(ViewError::Execution)?;
    Ok(execution.result)
}
