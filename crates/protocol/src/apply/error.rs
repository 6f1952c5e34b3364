//! Why an operation that passed validation fails when applied (it keeps its fee; its batch is
//! backtracked): Octez's error ids, turned into the receipts' [`ProtocolError`]s.

use kestrel_crypto::{Destination, PublicKeyHash, ScriptExprHash};
use kestrel_michelson::ExecutionError;
use num_bigint::BigInt;
use serde_json::{json, Map, Value};

use crate::receipt::ProtocolError;

/// Octez's prefix of protocol 025's error ids.
pub const ERROR_ID_PREFIX: &str = "proto.025-PsUshuai.";

/// Why an operation failed.
#[derive(Debug, Clone)]
pub enum ApplyError {
    /// Out of gas (`gas_exhausted.operation`).
    GasExhausted,
    /// Not enough tez (`contract.balance_too_low`).
    BalanceTooLow {
        /// Who pays.
        contract: Destination,
        /// Its balance, mutez.
        balance: u64,
        /// What it must pay, mutez.
        amount: u64,
    },
    /// A balance would overflow (`tez.addition_overflow`).
    BalanceOverflow,
    /// Zero tez to an implicit account (`contract.empty_transaction`).
    EmptyTransaction(Destination),
    /// The destination contract does not exist (`contract.non_existing_contract`).
    NonExistingContract(Destination),
    /// A parameter other than `Unit` to an implicit account (`michelson_v1.bad_contract_parameter`).
    BadContractParameter(Destination),
    /// More storage than the operation's limit (`storage_exhausted.operation`).
    StorageExhausted,
    /// An entrypoint of an implicit account that this model does not implement (staking).
    UnsupportedEntrypoint(String),
    /// A manager operation kind that this model does not apply.
    UnsupportedKind(&'static str),
    /// The script or storage does not parse or typecheck (`michelson_v1.ill_typed_contract`).
    IllTypedContract(String),
    /// A big-map id in an operation's storage or argument (`michelson_v1.unexpected_forged_value`):
    /// only contracts may pass stored big maps.
    UnexpectedForgedValue,
    /// A big-map id or a ticket written in an origination's storage or an implicit account's
    /// argument, met while parsing it (Octez's trace: `ill_typed_data` for a storage or
    /// `bad_contract_parameter` for an argument, `invalid_constant` of the whole value,
    /// `unexpected_forged_value` at the id).
    ForgedLazyStorageId(Box<ForgedValue>),
    /// The run failed (`michelson_v1.script_rejected`, `runtime_error`, …).
    Execution(ExecutionError),
    /// Delegation to an account that is not a registered delegate
    /// (`contract.manager.unregistered_delegate`).
    UnregisteredDelegate(PublicKeyHash),
    /// A registered delegate changing its delegate (`delegate.no_deletion`).
    NoDeletion(PublicKeyHash),
    /// Delegation to the current delegate (`delegate.unchanged`).
    CurrentDelegate,
    /// Self-delegation of an active registered delegate (`delegate.already_active`).
    ActiveDelegate,
    /// A tz5 account as a delegate (`delegate.tz5_cannot_be_a_delegate`).
    Tz5CannotBeADelegate(PublicKeyHash),
    /// Increase of paid storage by a non-positive amount (`contract.negative_storage_input`).
    NegativeStorageInput,
    /// A ticket balance would go negative (`Negative_ticket_balance`): more of a ticket sent
    /// than the sender holds.
    NegativeTicketBalance {
        /// The balance's key in the table.
        key: ScriptExprHash,
        /// The balance it would have.
        balance: BigInt,
    },
    /// A contract gained a ticket it did not create, or sent more of one than it gave up
    /// (`invalid_ticket_transfer`).
    InvalidTicketTransfer {
        /// The ticket's creator.
        ticketer: Destination,
        /// The amount.
        amount: BigInt,
    },
    /// The ticket table would free more than it holds (`Used_storage_underflow`).
    TicketStorageUnderflow,
    /// An entrypoint that does not exist (`michelson_v1.no_such_entrypoint`): a ticket sent to
    /// an implicit account's entrypoint other than `default`.
    NoSuchEntrypoint(String),
    /// A ticket's contents that are not a value of its type, or a type that is not comparable
    /// (`michelson_v1.invalid_constant`).
    InvalidTicketContents(String),
}

/// Where a big-map id or a ticket was written ([`ApplyError::ForgedLazyStorageId`]).
#[derive(Debug, Clone)]
pub struct ForgedValue {
    /// The id's location (prefix order) in `expression`.
    pub location: u32,
    /// The storage or argument.
    pub expression: kestrel_micheline::Node,
    /// Its expected type, as Micheline.
    pub expected_type: kestrel_micheline::Node,
    /// The contract called, for an argument; `None` for a storage.
    pub called: Option<Destination>,
}

impl ApplyError {
    /// The errors the receipt shows, outermost first, ids prefixed.
    pub fn to_protocol_errors(&self) -> Vec<ProtocolError> {
        if let Self::ForgedLazyStorageId(forged) = self {
            return forged_trace(forged);
        }
        let (id, fields) = self.id_and_fields();
        let mut error = ProtocolError::permanent(format!("{ERROR_ID_PREFIX}{id}"), fields);
        // Octez registers these as temporary (`script_interpreter.ml`, `gas_limit_repr.ml`,
        // `delegate_storage.ml`).
        if id.starts_with("gas_exhausted")
            || id == "michelson_v1.script_rejected"
            || id == "michelson_v1.runtime_error"
            || matches!(self, Self::CurrentDelegate | Self::ActiveDelegate)
        {
            error.category = "temporary".to_owned();
        }
        if matches!(self, Self::Tz5CannotBeADelegate(_)) {
            error.category = "branch".to_owned();
        }
        vec![error]
    }

    fn id_and_fields(&self) -> (&'static str, Map<String, Value>) {
        let object = |value: Value| match value {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        match self {
            Self::GasExhausted => ("gas_exhausted.operation", Map::new()),
            Self::BalanceTooLow {
                contract,
                balance,
                amount,
            } => (
                "contract.balance_too_low",
                object(json!({"contract": contract.to_b58check(),
                    "balance": balance.to_string(), "amount": amount.to_string()})),
            ),
            Self::BalanceOverflow => ("tez.addition_overflow", Map::new()),
            Self::EmptyTransaction(contract) => (
                "contract.empty_transaction",
                object(json!({"contract": contract.to_b58check()})),
            ),
            Self::NonExistingContract(contract) => (
                "contract.non_existing_contract",
                object(json!({"contract": contract.to_b58check()})),
            ),
            Self::BadContractParameter(contract) => (
                "michelson_v1.bad_contract_parameter",
                object(json!({"contract": contract.to_b58check()})),
            ),
            Self::StorageExhausted => ("storage_exhausted.operation", Map::new()),
            Self::UnsupportedEntrypoint(_) | Self::UnsupportedKind(_) => {
                ("operation.not_supported", Map::new())
            }
            Self::IllTypedContract(_) => ("michelson_v1.ill_typed_contract", Map::new()),
            Self::UnexpectedForgedValue | Self::ForgedLazyStorageId(_) => {
                ("michelson_v1.unexpected_forged_value", Map::new())
            }
            Self::Execution(error) => execution_error(error),
            Self::NegativeStorageInput => ("contract.negative_storage_input", Map::new()),
            Self::NegativeTicketBalance { key, balance } => (
                "Negative_ticket_balance",
                object(json!({"key": key.to_b58check(), "balance": balance.to_string()})),
            ),
            Self::InvalidTicketTransfer { ticketer, amount } => (
                "invalid_ticket_transfer",
                object(json!({"ticketer": ticketer.to_b58check(), "amount": amount.to_string()})),
            ),
            Self::TicketStorageUnderflow => ("Used_storage_underflow", Map::new()),
            Self::NoSuchEntrypoint(name) => (
                "michelson_v1.no_such_entrypoint",
                object(json!({"entrypoint": name})),
            ),
            Self::InvalidTicketContents(_) => ("michelson_v1.invalid_constant", Map::new()),
            Self::UnregisteredDelegate(account) => (
                "contract.manager.unregistered_delegate",
                object(json!({"hash": account.to_b58check()})),
            ),
            Self::NoDeletion(account) => (
                "delegate.no_deletion",
                object(json!({"delegate": account.to_b58check()})),
            ),
            Self::CurrentDelegate => ("delegate.unchanged", Map::new()),
            Self::ActiveDelegate => ("delegate.already_active", Map::new()),
            Self::Tz5CannotBeADelegate(account) => (
                "delegate.tz5_cannot_be_a_delegate",
                object(json!({"delegate": account.to_b58check()})),
            ),
        }
    }
}

/// The trace of [`ApplyError::ForgedLazyStorageId`], outermost first.
fn forged_trace(forged: &ForgedValue) -> Vec<ProtocolError> {
    let ForgedValue {
        location,
        expression,
        expected_type,
        called,
    } = forged;
    let json = |node: &kestrel_micheline::Node| {
        serde_json::from_str(&kestrel_micheline::json::to_json_string(node)).unwrap_or(Value::Null)
    };
    let error = |id: &str, fields: Value| {
        let fields = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        ProtocolError::permanent(format!("{ERROR_ID_PREFIX}{id}"), fields)
    };
    let outer = match called {
        Some(contract) => error(
            "michelson_v1.bad_contract_parameter",
            json!({"contract": contract.to_b58check()}),
        ),
        None => error(
            "michelson_v1.ill_typed_data",
            json!({"expected_type": json(expected_type), "ill_typed_expression": json(expression)}),
        ),
    };
    vec![
        outer,
        error(
            "michelson_v1.invalid_constant",
            json!({"location": 0, "expected_type": json(expected_type),
                "wrong_expression": json(expression)}),
        ),
        error(
            "michelson_v1.unexpected_forged_value",
            json!({ "location": location }),
        ),
    ]
}

fn execution_error(error: &ExecutionError) -> (&'static str, Map<String, Value>) {
    match error {
        ExecutionError::Failed { value, location } => {
            let with =
                kestrel_michelson::normalize(value, kestrel_michelson::UnparsingMode::Optimized);
            let mut fields = Map::new();
            fields.insert("location".into(), json!(location));
            fields.insert(
                "with".into(),
                serde_json::from_str(&kestrel_micheline::json::to_json_string(&with))
                    .unwrap_or(Value::Null),
            );
            ("michelson_v1.script_rejected", fields)
        }
        ExecutionError::GasExhaustion => ("gas_exhausted.operation", Map::new()),
        ExecutionError::NoSuchEntrypoint(_) => ("michelson_v1.no_such_entrypoint", Map::new()),
        ExecutionError::IllTypedData(_) => ("michelson_v1.bad_contract_parameter", Map::new()),
        ExecutionError::Overflow | ExecutionError::MutezUnderflow => {
            ("michelson_v1.script_overflow", Map::new())
        }
        _ => ("michelson_v1.runtime_error", Map::new()),
    }
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Execution(error) => write!(f, "{error}"),
            Self::IllTypedContract(message) => write!(f, "ill-typed contract: {message}"),
            other => f.write_str(other.id_and_fields().0),
        }
    }
}

impl std::error::Error for ApplyError {}
