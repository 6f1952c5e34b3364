//! `kestrel client --mode mockup [--base-dir DIR] …`: octez-client's stateful mockup commands
//! (`create mockup`, `originate contract`, `transfer`, `call`, `get balance for`, `get contract
//! storage for`, `list known contracts`, `show known contract`, `rpc get`) with octez-client's
//! syntax and output, so recorded octez-client mockup sessions replay unchanged.
//!
//! Map: [`wallet`] (the base directory and its aliases), [`chain`] (the state and the only calls
//! into the protocol layer), [`forge`] (building and signing operations), [`estimate`] (limits
//! and fees as octez-client sets them), [`trace`] (error traces). Output goes where octez-client sends it: messages and
//! answers to standard output, warnings and errors to standard error.

pub(crate) mod chain;
mod estimate;
mod forge;
mod trace;
mod wallet;

use super::grammar::Invocation;
use super::report::{ClientError, EXIT_FAILURE};
use chain::Chain;
use kestrel_crypto::{Destination, Entrypoint};
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::receipt::ContentsMetadata;
use kestrel_protocol::render::format_tez as tez_text;
use kestrel_protocol::ManagerKind;
use std::path::{Path, PathBuf};
use wallet::{BaseDirKind, Wallet};

/// octez-client's default base directory, under the home directory.
const DEFAULT_BASE_DIR: &str = ".tezos-client";

/// The warning octez-client prints when it cannot ask a node for its mempool filter (a mockup
/// has none), with the defaults it then uses (`injection.ml`).
const MEMPOOL_FILTER_WARNING: &str = "Failed to fetch mempool filter configuration from the node's RPC. Using defaults: 1000 nanotez/byte, 100 nanotez/gas_unit.\n";

/// Why a mockup command failed.
#[derive(Debug)]
pub enum MockupError {
    /// A file of the base directory could not be read or written.
    Io(String),
    /// A wallet file holds something that is not an alias list.
    Wallet(String),
    /// A name that is neither an alias nor an address.
    UnknownContract(String),
    /// An unknown alias.
    UnknownAlias(String),
    /// No secret key for the source.
    NoSecretKey(String),
    /// A contract alias that already exists (without `--force`).
    AliasExists {
        /// The alias.
        name: String,
        /// What it names now.
        value: String,
    },
    /// The operation could not be built.
    Forge(String),
    /// The base directory cannot hold a new mockup.
    BaseDir(String),
    /// The chain state could not be read or written.
    State(String),
    /// What octez-client reports as an error of the command itself.
    Command(String),
}

impl MockupError {
    fn io(path: &Path, error: &std::io::Error) -> MockupError {
        MockupError::Io(format!("{}: {error}", path.display()))
    }

    /// The error in octez-client's words, as printed under `Error:`.
    pub(crate) fn message(&self) -> String {
        match self {
            MockupError::Io(text)
            | MockupError::Wallet(text)
            | MockupError::Forge(text)
            | MockupError::State(text) => text.clone(),
            MockupError::UnknownContract(name) => format!(
                "Invalid contract notation \"{name}\"\nCannot find a contract alias or a key alias named {name}."
            ),
            MockupError::UnknownAlias(text) | MockupError::BaseDir(text) => text.clone(),
            MockupError::NoSecretKey(source) => {
                format!("no secret key is known for {source}")
            }
            MockupError::AliasExists { name, value } => format!(
                "The contract alias {name} already exists.\n  The current value is {value}.\n  Use --force to update"
            ),
            MockupError::Command(text) => text.clone(),
        }
    }

    fn into_client_error(self) -> ClientError {
        ClientError::message("mockup", &self.message())
    }
}

/// What a mockup command printed, in order, and how it exits.
#[derive(Default)]
pub struct Printed {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code.
    pub exit_code: u8,
}

/// Whether `command` is one of the mockup mode's stateful commands.
pub fn handles(command: &str) -> bool {
    super::grammar::MOCKUP_COMMANDS
        .iter()
        .any(|spec| spec.name == command)
}

/// Runs a mockup command.
pub fn run(invocation: &Invocation) -> Printed {
    let mut printed = Printed::default();
    let base_dir = base_dir(invocation);
    let result = match invocation.command.name {
        "create mockup" => create_mockup(&base_dir, invocation, &mut printed),
        name => Session::open(&base_dir, invocation)
            .and_then(|mut session| session.dispatch(name, invocation, &mut printed)),
    };
    if let Err(error) = result {
        printed.stderr.push_str(error.render());
        printed.exit_code = error.exit_code();
    }
    printed
}

/// `--base-dir`, else octez-client's default `$HOME/.tezos-client`.
fn base_dir(invocation: &Invocation) -> PathBuf {
    match invocation.globals.get("--base-dir") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(DEFAULT_BASE_DIR),
    }
}

/// `create mockup` (`Persistence.create_mockup`). With `--liquidity-baking-scripts DIR`
/// (`cpmm.tz` and `lqt.tz`, which Kestrel does not ship), genesis originates the
/// liquidity-baking contracts as Octez's does.
fn create_mockup(
    dir: &Path,
    invocation: &Invocation,
    printed: &mut Printed,
) -> Result<(), ClientError> {
    let liquidity_baking = invocation
        .option("--liquidity-baking-scripts")
        .map(|scripts| chain::read_liquidity_baking_scripts(Path::new(scripts)))
        .transpose()
        .map_err(MockupError::into_client_error)?;
    let shown = dir.display();
    match wallet::classify(dir) {
        BaseDirKind::Missing | BaseDirKind::Empty => {}
        BaseDirKind::File => {
            return Err(MockupError::BaseDir(format!("{shown} is a file")).into_client_error())
        }
        BaseDirKind::Mockup => {
            return Err(MockupError::BaseDir(format!(
                "{shown} is already initialized as a mockup directory"
            ))
            .into_client_error())
        }
        BaseDirKind::NonEmpty => {
            return Err(MockupError::BaseDir(format!(
                "{shown} is not empty, please specify a fresh base directory"
            ))
            .into_client_error())
        }
    }
    let mockup_dir = dir.join(wallet::MOCKUP_SUBDIRECTORY);
    std::fs::create_dir_all(&mockup_dir)
        .map_err(|error| MockupError::io(&mockup_dir, &error).into_client_error())?;
    printed
        .stdout
        .push_str(&format!("Created mockup client base dir in {shown}\n"));
    Wallet::create(dir).map_err(MockupError::into_client_error)?;
    Chain::create(&mockup_dir, liquidity_baking).map_err(MockupError::into_client_error)?;
    Ok(())
}

/// A mockup command's context: the wallet and the chain state.
struct Session {
    wallet: Wallet,
    chain: Option<Chain>,
    mockup_dir: Option<PathBuf>,
    wait_none: bool,
}

impl Session {
    fn open(dir: &Path, invocation: &Invocation) -> Result<Session, ClientError> {
        let persistent = wallet::classify(dir) == BaseDirKind::Mockup;
        let wallet = if persistent {
            Wallet::load(dir).map_err(MockupError::into_client_error)?
        } else {
            Wallet::bootstrap()
        };
        Ok(Session {
            wallet,
            chain: None,
            mockup_dir: persistent.then(|| dir.join(wallet::MOCKUP_SUBDIRECTORY)),
            wait_none: invocation.globals.get("--wait").map(String::as_str) == Some("none"),
        })
    }

    /// The chain state, opened on first use (the wallet's commands need none).
    fn chain(&mut self) -> Result<&mut Chain, ClientError> {
        if self.chain.is_none() {
            let chain =
                Chain::open(self.mockup_dir.as_deref()).map_err(MockupError::into_client_error)?;
            self.chain = Some(chain);
        }
        Ok(self.chain.as_mut().expect("opened above"))
    }

    fn dispatch(
        &mut self,
        name: &str,
        invocation: &Invocation,
        printed: &mut Printed,
    ) -> Result<(), ClientError> {
        match name {
            "list known contracts" => {
                for (alias, value) in self.wallet.known_contracts() {
                    printed.stdout.push_str(&format!("{alias}: {value}\n"));
                }
                Ok(())
            }
            "show known contract" => {
                let value = self
                    .wallet
                    .contract_alias(invocation.param("name"))
                    .map_err(MockupError::into_client_error)?;
                printed.stdout.push_str(&format!("{value}\n\n"));
                Ok(())
            }
            "get balance for" => {
                let contract = self.contract(invocation.param("src"))?;
                let balance = self
                    .chain()?
                    .balance(&contract.0)
                    .map_err(MockupError::into_client_error)?;
                printed
                    .stdout
                    .push_str(&format!("{} \u{a729}\n", tez_text(balance)));
                Ok(())
            }
            "get contract storage for" => {
                let contract = self.contract(invocation.param("src"))?;
                let storage = match contract.0 {
                    Destination::Originated(hash) => self.readable_storage(&hash)?,
                    _ => None,
                };
                let storage = storage.ok_or_else(|| {
                    MockupError::Command("This is not a smart contract.".into()).into_client_error()
                })?;
                printed.stdout.push_str(&super::text_line(&storage));
                Ok(())
            }
            "rpc get" => self.rpc_get(invocation.param("url"), printed),
            "run view" => self.run_view(invocation, printed),
            "originate contract" => self.originate(invocation, printed),
            "transfer" | "call" => self.transfer(invocation, printed),
            "bake for" => self.bake(invocation, printed),
            _ => Err(MockupError::Command(format!(
                "{name}: not available in kestrel's mockup mode yet"
            ))
            .into_client_error()),
        }
    }

    /// `bake for BAKER`: one block on the head ([`Chain::bake`]). The baker must be a known
    /// account; Octez's mockup lets any bootstrap account bake (each holds baking rights).
    fn bake(&mut self, invocation: &Invocation, printed: &mut Printed) -> Result<(), ClientError> {
        let baker = invocation.param("baker");
        if !matches!(self.contract(baker)?.0, Destination::Implicit(_)) {
            return Err(
                MockupError::Command(format!("{baker} is not an implicit account"))
                    .into_client_error(),
            );
        }
        let mut chain = self.chain.take().map_or_else(
            || Chain::open(self.mockup_dir.as_deref()).map_err(MockupError::into_client_error),
            Ok,
        )?;
        let level = chain.bake();
        chain
            .save(&format!("bake level {level}"))
            .map_err(MockupError::into_client_error)?;
        printed
            .stdout
            .push_str("Injected block at minimal timestamp\n");
        Ok(())
    }

    fn contract(&self, name: &str) -> Result<Contract, ClientError> {
        self.wallet
            .contract(name)
            .map_err(MockupError::into_client_error)
    }

    /// The storage of `contract` in readable form (addresses, keys and timestamps as strings),
    /// as the node's `…/storage` RPC answers; as stored when it does not typecheck alone (big
    /// maps, which are ids in the stored form).
    fn readable_storage(
        &mut self,
        contract: &kestrel_crypto::ContractHash,
    ) -> Result<Option<kestrel_micheline::Node>, ClientError> {
        let chain = self.chain()?;
        let fail = MockupError::into_client_error;
        let (Some(storage), Some(code)) = (
            chain.storage(contract).map_err(fail)?,
            chain.script(contract).map_err(fail)?,
        ) else {
            return Ok(None);
        };
        let checker = super::engine::Checker::new(true);
        let readable = storage_type(&code)
            .and_then(|ty| checker.parse_type(ty).ok())
            .and_then(|(ty, _)| checker.parse_data(&storage, &ty).ok())
            .map(|(typed, _)| {
                super::engine::unparse_typed(&typed, super::engine::UnparsingMode::Readable)
            });
        Ok(Some(readable.unwrap_or(storage)))
    }

    /// `run view VIEW on contract CONTRACT [with input INPUT]`: the view's result, readable
    /// unless `--unparsing-mode` says otherwise (`Client_proto_programs.print_view_result`).
    fn run_view(
        &mut self,
        invocation: &Invocation,
        printed: &mut Printed,
    ) -> Result<(), ClientError> {
        let fail = MockupError::into_client_error;
        let Destination::Originated(contract) = self.contract(invocation.param("contract"))?.0
        else {
            return Err(fail(MockupError::Command(format!(
                "{} is not a smart contract",
                invocation.param("contract")
            ))));
        };
        let input_text = match invocation.param("input") {
            "" => "Unit",
            text => text,
        };
        let input = kestrel_micheline::parse_expression(input_text)
            .map_err(|error| ClientError::parse_in("command line", input_text, &error))?;
        let input = expand(&input, "command line", input_text)?;
        let sender = invocation
            .option("--source")
            .map(|name| self.contract(name).map(|c| c.0))
            .transpose()?;
        let payer = match invocation.option("--payer") {
            Some(name) => match self.contract(name)?.0 {
                Destination::Implicit(hash) => Some(hash),
                _ => {
                    return Err(fail(MockupError::Command(format!(
                        "{name} is not an implicit account"
                    ))))
                }
            },
            None => None,
        };
        let gas_limit_milli = match invocation.option("--gas") {
            Some(text) => text
                .parse::<u64>()
                .ok()
                .and_then(|gas| gas.checked_mul(1000))
                .ok_or_else(|| ClientError::option("--gas", &format!("Invalid gas {text}.")))?,
            None => kestrel_michelson::HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        };
        let now_seconds = invocation
            .option("--now")
            .map(super::parse_now)
            .transpose()?;
        let level = invocation
            .option("--level")
            .map(|text| {
                text.parse::<u64>()
                    .map_err(|_| ClientError::option("--level", &format!("Invalid level {text}.")))
            })
            .transpose()?;
        let mode = match invocation.option("--unparsing-mode") {
            Some("Optimized") => kestrel_michelson::UnparsingMode::Optimized,
            Some("Optimized_legacy") => kestrel_michelson::UnparsingMode::OptimizedLegacy,
            _ => kestrel_michelson::UnparsingMode::Readable,
        };
        let result = self
            .chain()?
            .run_view(&chain::ViewRequest {
                contract: &contract,
                name: invocation.param("view"),
                input: &input,
                sender: sender.as_ref(),
                payer: payer.as_ref(),
                gas_limit_milli,
                now_seconds,
                level,
            })
            .map_err(fail)?;
        printed
            .stdout
            .push_str(&super::text_line(&kestrel_michelson::normalize(
                &result, mode,
            )));
        Ok(())
    }

    /// `rpc get`: the context RPCs the recorded sessions read.
    fn rpc_get(&mut self, url: &str, printed: &mut Printed) -> Result<(), ClientError> {
        let unknown = || {
            MockupError::Command(format!("No service found at this URL\n  {url}"))
                .into_client_error()
        };
        let path = url.trim_start_matches('/');
        let rest = path
            .strip_prefix("chains/main/blocks/head/context/contracts/")
            .ok_or_else(unknown)?;
        let (id, what) = rest.split_once('/').ok_or_else(unknown)?;
        let contract = self.contract(id)?;
        let answer = match (what, contract.0) {
            ("storage", Destination::Originated(hash)) => {
                let storage = self.readable_storage(&hash)?.ok_or_else(unknown)?;
                json_text(&kestrel_micheline::json::to_json_string(&storage))
            }
            ("balance", _) => {
                let balance = self
                    .chain()?
                    .balance(&contract.0)
                    .map_err(MockupError::into_client_error)?;
                format!("\"{balance}\"")
            }
            _ => return Err(unknown()),
        };
        printed.stdout.push_str(&answer);
        printed.stdout.push('\n');
        Ok(())
    }

    fn originate(
        &mut self,
        invocation: &Invocation,
        printed: &mut Printed,
    ) -> Result<(), ClientError> {
        let name = invocation.param("new");
        self.wallet
            .check_fresh_contract_alias(name, invocation.switch("--force"))
            .map_err(MockupError::into_client_error)?;
        let prepared = prepare(&self.wallet, invocation)?;
        let originated = self.inject(invocation, prepared, printed)?;
        if let Some(contract) = originated.first() {
            self.wallet
                .remember_contract(name, contract)
                .map_err(MockupError::into_client_error)?;
            printed
                .stdout
                .push_str(&format!("Contract memorized as {name}.\n"));
        }
        Ok(())
    }

    fn transfer(
        &mut self,
        invocation: &Invocation,
        printed: &mut Printed,
    ) -> Result<(), ClientError> {
        let prepared = prepare(&self.wallet, invocation)?;
        self.inject(invocation, prepared, printed)?;
        Ok(())
    }

    /// octez-client's injection (`Injection.inject_manager_operation` with `may_patch_limits`):
    /// simulate with the hard limits and no fee, report a failure, check the burn against
    /// `--burn-cap`, set the limits and the fee, sign, apply, print the receipt. Returns the
    /// originated contracts.
    fn inject(
        &mut self,
        invocation: &Invocation,
        prepared: Prepared,
        printed: &mut Printed,
    ) -> Result<Vec<kestrel_crypto::ContractHash>, ClientError> {
        let Prepared {
            source,
            kind,
            guardless,
        } = prepared;
        let source = &source;
        let burn_cap = match invocation.option("--burn-cap") {
            Some(text) => super::parse_tez("--burn-cap", text)?.unsigned_abs(),
            None => 0,
        };
        let fail = MockupError::into_client_error;
        let key = self.wallet.signer(source).map_err(fail)?.clone();
        let mut chain = match self.chain.take() {
            Some(chain) => chain,
            None => Chain::open(self.mockup_dir.as_deref()).map_err(fail)?,
        };
        let constants = *chain.constants();
        let counter = chain.counter(source).map_err(fail)? + 1;
        let branch = chain.branch();
        // `--gas-limit` and `--storage-limit` within the hard limits are kept; others are
        // estimated (`user_gas_limit_needs_patching`); a given `--fee` is kept.
        let limit = |name: &str, hard: u64| -> Result<Option<u64>, ClientError> {
            match invocation.option(name) {
                None => Ok(None),
                Some(text) => text
                    .parse::<u64>()
                    .map(|value| (value <= hard).then_some(value))
                    .map_err(|_| ClientError::option(name, &format!("Invalid {name} {text}."))),
            }
        };
        let user_gas = limit("--gas-limit", constants.hard_gas_limit_per_operation)?;
        let user_storage = limit(
            "--storage-limit",
            constants.hard_storage_limit_per_operation,
        )?;
        let user_fee = invocation
            .option("--fee")
            .map(|text| super::parse_tez("--fee", text).map(i64::unsigned_abs))
            .transpose()?;
        printed.stdout.push_str("Node is bootstrapped.\n");
        let (gas, storage_bytes) = match (user_gas, user_storage, user_fee) {
            (Some(gas), Some(storage), Some(_)) => (gas, storage),
            _ => {
                let estimated = self.estimate(
                    &mut chain,
                    &Estimation {
                        source,
                        counter,
                        kind: &kind,
                        fee: user_fee.unwrap_or(0),
                        gas: user_gas.unwrap_or(constants.hard_gas_limit_per_operation),
                        storage: user_storage.unwrap_or(constants.hard_storage_limit_per_operation),
                        guardless,
                        burn_cap,
                    },
                    printed,
                )?;
                let Some(limits) = estimated else {
                    return Ok(Vec::new());
                };
                (
                    user_gas.unwrap_or(limits.gas),
                    user_storage.unwrap_or(limits.storage_bytes),
                )
            }
        };
        let with_fee = |fee| {
            forge::operation(
                branch,
                forge::header(source, counter, fee, gas, storage_bytes),
                kind.clone(),
            )
        };
        let fee = user_fee.unwrap_or_else(|| {
            estimate::patch_fee(gas, |fee| forge::signed_size_bytes(&with_fee(fee)))
        });
        let signed = forge::sign(with_fee(fee), &key);
        let hash = signed.hash().to_b58check();
        let metadata = chain.inject(&signed).map_err(fail)?;
        let receipt = chain::render(&signed, &metadata);
        chain.save(&hash).map_err(fail)?;
        printed.stdout.push_str(&format!(
            "Operation successfully injected in the node.\nOperation hash is '{hash}'\n"
        ));
        if self.wait_none {
            printed.stdout.push_str(&format!(
                "NOT waiting for the operation to be included.\nUse command\n  octez-client wait for {hash} to be included --confirmations 1 --branch {}\nand/or an external block explorer to make sure that it has been included.\n",
                branch.to_b58check()
            ));
        }
        printed
            .stdout
            .push_str("This sequence of operations was run:\n");
        printed.stdout.push_str(&receipt);
        printed.stdout.push('\n');
        let originated = originated_contracts(&metadata);
        for contract in &originated {
            printed.stdout.push_str(&format!(
                "New contract {} originated.\n",
                contract.to_b58check()
            ));
        }
        printed.stderr.push_str(MEMPOOL_FILTER_WARNING);
        Ok(originated)
    }

    /// The simulation of `may_patch_limits`: runs the operation with the given (or hard)
    /// limits, prints a failure and its trace (then `None`), checks the burn against the burn
    /// cap, and prints and returns the estimated limits.
    fn estimate(
        &self,
        chain: &mut Chain,
        estimation: &Estimation<'_>,
        printed: &mut Printed,
    ) -> Result<Option<estimate::Limits>, ClientError> {
        let fail = MockupError::into_client_error;
        let constants = *chain.constants();
        let Estimation {
            source,
            counter,
            kind,
            guardless,
            burn_cap,
            ..
        } = *estimation;
        let is_origination = matches!(kind, ManagerKind::Origination(_));
        let trial = forge::operation(
            chain.branch(),
            forge::header(
                source,
                counter,
                estimation.fee,
                estimation.gas,
                estimation.storage,
            ),
            kind.clone(),
        );
        let simulated = chain.simulate(&trial).map_err(fail)?;
        let manager = match simulated.first() {
            Some(ContentsMetadata::Manager(manager)) => manager,
            _ => {
                return Err(fail(MockupError::State(
                    "the simulation gave no manager receipt".into(),
                )))
            }
        };
        let consumption = match estimate::consumption(manager, constants.origination_size_bytes) {
            Ok(consumption) => consumption,
            Err(estimate::Unestimated::Failed(errors)) => {
                printed.stdout.push_str("This simulation failed:\n");
                printed.stdout.push_str(&chain::render(&trial, &simulated));
                printed.stdout.push('\n');
                printed.stderr.push_str(MEMPOOL_FILTER_WARNING);
                let failed = match kind {
                    ManagerKind::Transaction(transaction) => match transaction.destination.0 {
                        Destination::Originated(hash) => chain
                            .script(&hash)
                            .map_err(fail)?
                            .map(|code| (hash.to_b58check(), code)),
                        _ => None,
                    },
                    _ => None,
                };
                printed.stderr.push_str(&trace::render(
                    &errors,
                    failed
                        .as_ref()
                        .map(|(address, code)| (address.as_str(), code)),
                ));
                let what = if is_origination {
                    "origination simulation failed"
                } else {
                    "transfer simulation failed"
                };
                printed
                    .stderr
                    .push_str(&format!("Fatal error:\n  {what}\n"));
                printed.exit_code = EXIT_FAILURE;
                return Ok(None);
            }
            Err(estimate::Unestimated::Kind(kind)) => {
                return Err(fail(MockupError::State(format!(
                    "cannot estimate a {kind:?} operation"
                ))))
            }
        };
        let burn = constants
            .cost_per_byte_mutez
            .saturating_mul(consumption.storage_bytes);
        if burn > burn_cap {
            printed.stderr.push_str(MEMPOOL_FILTER_WARNING);
            return Err(fail(MockupError::Command(format!(
                "The operation will burn \u{a729}{} which is higher than the configured burn cap (\u{a729}{}).\n Use `--burn-cap {}` to emit this operation.",
                tez_text(burn),
                tez_text(burn_cap),
                tez_text(burn)
            ))));
        }
        let guard = estimate::gas_guard(guardless);
        let limits = estimate::limits(
            consumption,
            guard,
            constants.hard_gas_limit_per_operation,
            constants.hard_storage_limit_per_operation,
        );
        if limits.gas == 0 {
            printed.stdout.push_str("Estimated gas: none\n");
        } else {
            printed.stdout.push_str(&format!(
                "Estimated gas: {} units (will add {guard} for safety)\n",
                kestrel_protocol::render::format_gas(kestrel_protocol::field::Milligas(
                    consumption.milligas
                )),
            ));
        }
        if limits.storage_bytes == 0 {
            printed
                .stdout
                .push_str("Estimated storage: no bytes added\n");
        } else {
            printed.stdout.push_str(&format!(
                "Estimated storage: {} bytes added (will add {} for safety)\n",
                consumption.storage_bytes,
                estimate::STORAGE_SAFETY_BYTES
            ));
        }
        Ok(Some(limits))
    }
}

/// What the simulation of an operation needs.
struct Estimation<'a> {
    source: &'a kestrel_crypto::PublicKeyHash,
    counter: u128,
    kind: &'a ManagerKind<'static>,
    /// The fee, gas limit and storage limit it is simulated with.
    fee: u64,
    gas: u64,
    storage: u64,
    /// Whether no gas safety guard is added.
    guardless: bool,
    /// `--burn-cap`, in mutez.
    burn_cap: u64,
}

/// The manager operation a command asks for, before its counter, limits and fee are known.
struct Prepared {
    /// The implicit account that signs and pays.
    source: kestrel_crypto::PublicKeyHash,
    /// What it does.
    kind: ManagerKind<'static>,
    /// Whether octez-client adds no gas safety guard (a transfer to an implicit account).
    guardless: bool,
}

/// Builds the operation of `originate contract`, `transfer` or `call` as
/// `Client_proto_context` does: the program and `--init` (default `Unit`) read with macros
/// expanded; `--arg` (default `Unit`) and `--entrypoint` (default `default`).
fn prepare(wallet: &Wallet, invocation: &Invocation) -> Result<Prepared, ClientError> {
    let contract = |name: &str| {
        wallet
            .contract(name)
            .map_err(MockupError::into_client_error)
    };
    let source = match contract(invocation.param("src"))?.0 {
        Destination::Implicit(hash) => hash,
        _ => {
            return Err(MockupError::Command(format!(
                "{} is an originated contract: only implicit accounts sign operations",
                invocation.param("src")
            ))
            .into_client_error())
        }
    };
    if invocation.command.name == "originate contract" {
        let balance = tez_param(invocation, "qty")?;
        let (origin, text) = super::script_text(invocation, "prg")?;
        let code = super::parse_script(&origin, &text)?;
        let code = expand(&code, &origin, &text)?;
        let storage = micheline_option(invocation, "--init")?;
        let delegate = match invocation.option("--delegate") {
            Some(name) => match contract(name)?.0 {
                Destination::Implicit(hash) => Some(hash),
                _ => {
                    return Err(
                        MockupError::Command(format!("{name} is not an implicit account"))
                            .into_client_error(),
                    )
                }
            },
            None => None,
        };
        let kind = forge::origination(balance, delegate, &code, &storage)
            .map_err(MockupError::into_client_error)?;
        return Ok(Prepared {
            source,
            kind,
            guardless: false,
        });
    }
    let amount = if invocation.command.name == "call" {
        0
    } else {
        tez_param(invocation, "qty")?
    };
    let destination = contract(invocation.param("dst"))?;
    let argument = micheline_option(invocation, "--arg")?;
    let entrypoint = match invocation.option("--entrypoint") {
        Some(name) => Entrypoint::try_new(name).map_err(|error| {
            MockupError::Command(format!("Invalid entrypoint {name}: {error}")).into_client_error()
        })?,
        None => Entrypoint::default_entrypoint(),
    };
    let guardless = matches!(destination.0, Destination::Implicit(_));
    let kind = forge::transaction(
        amount,
        destination,
        &forge::Call {
            entrypoint,
            argument,
        },
    )
    .map_err(MockupError::into_client_error)?;
    Ok(Prepared {
        source,
        kind,
        guardless,
    })
}

/// A Micheline option (`--init`, `--arg`), `Unit` when absent, macros expanded.
fn micheline_option(
    invocation: &Invocation,
    name: &str,
) -> Result<kestrel_micheline::Node, ClientError> {
    let text = invocation.option(name).unwrap_or("Unit");
    let node = kestrel_micheline::parse_expression(text)
        .map_err(|error| ClientError::parse_in("command line", text, &error))?;
    expand(&node, "command line", text)
}

/// The contracts an operation originated, directly or by its internal operations, in order
/// (`Injection.originated_contracts`).
fn originated_contracts(metadata: &[ContentsMetadata<'_>]) -> Vec<kestrel_crypto::ContractHash> {
    use kestrel_protocol::receipt::{ManagerResult, OperationResult, TransactionOutcome};
    let of = |result: &ManagerResult<'_>| -> Vec<kestrel_crypto::ContractHash> {
        match result {
            ManagerResult::Origination(OperationResult::Applied(r)) => {
                r.originated_contracts.clone()
            }
            ManagerResult::Transaction(OperationResult::Applied(TransactionOutcome::Contract(
                r,
            ))) => r.originated_contracts.clone(),
            _ => Vec::new(),
        }
    };
    let mut contracts = Vec::new();
    for content in metadata {
        if let ContentsMetadata::Manager(manager) = content {
            contracts.extend(of(&manager.operation_result));
            for internal in &manager.internal_operation_results {
                contracts.extend(of(&internal.result));
            }
        }
    }
    contracts
}

/// The `storage` type of a script's code (`{ parameter …; storage …; code … }`).
fn storage_type(code: &kestrel_micheline::Node) -> Option<&kestrel_micheline::Node> {
    let kestrel_micheline::NodeKind::Seq(sections) = &code.kind else {
        return None;
    };
    sections.iter().find_map(|section| match &section.kind {
        kestrel_micheline::NodeKind::Prim { name, args, .. } if name.as_str() == "storage" => {
            args.first()
        }
        _ => None,
    })
}

/// Expands the macros of Micheline read from `origin`.
fn expand(
    node: &kestrel_micheline::Node,
    origin: &str,
    text: &str,
) -> Result<kestrel_micheline::Node, ClientError> {
    super::engine::Checker::expand(node)
        .map_err(|failure| ClientError::typecheck(origin, text, &failure, "ill-formed script"))
}

/// A tez parameter (`transferring 1.5`), in mutez.
fn tez_param(invocation: &Invocation, name: &str) -> Result<u64, ClientError> {
    super::parse_tez(&format!("--{name}"), invocation.param(name)).map(i64::unsigned_abs)
}

/// JSON as octez-client's `rpc get` prints it: `{ "key": value }`, spaces inside braces and
/// brackets, one line.
fn json_text(compact: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(compact) else {
        return compact.to_string();
    };
    let mut out = String::new();
    let mut pending = vec![Piece::Value(&value)];
    while let Some(piece) = pending.pop() {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Value(serde_json::Value::Object(fields)) if !fields.is_empty() => {
                out.push_str("{ ");
                pending.push(Piece::Text(" }"));
                for (index, (key, value)) in fields.iter().enumerate().rev() {
                    pending.push(Piece::Value(value));
                    pending.push(Piece::Key(key));
                    if index > 0 {
                        pending.push(Piece::Text(", "));
                    }
                }
            }
            Piece::Value(serde_json::Value::Array(items)) if !items.is_empty() => {
                out.push_str("[ ");
                pending.push(Piece::Text(" ]"));
                for (index, item) in items.iter().enumerate().rev() {
                    pending.push(Piece::Value(item));
                    if index > 0 {
                        pending.push(Piece::Text(", "));
                    }
                }
            }
            Piece::Value(other) => out.push_str(&other.to_string()),
            Piece::Key(key) => {
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push_str(": ");
            }
        }
    }
    out
}

/// A step of [`json_text`]'s explicit stack.
enum Piece<'a> {
    Text(&'static str),
    Key(&'a String),
    Value(&'a serde_json::Value),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded value of `label` in a receipt's manager header (`Gas limit: 680`).
    fn recorded<'a>(output: &'a str, label: &str) -> Option<&'a str> {
        output
            .lines()
            .find_map(|line| line.trim_start().strip_prefix(label))
    }

    /// Every operation the recorded sessions injected, built from its recorded command line
    /// with the recorded counter and limits, gets the recorded fee: the fee is computed on the
    /// signed size, so this checks the forged bytes' length (script and argument encoding,
    /// macro expansion, parameters left out for `Unit`) against octez-client's.
    #[test]
    fn forged_operations_get_the_recorded_fees() {
        let (Some(receipts), Some(scripts)) = (
            kestrel_testdata::require("octez-protocol/receipts", "forged_operations_fees"),
            kestrel_testdata::require("michelson", "forged_operations_fees"),
        ) else {
            return;
        };
        let scripts = format!("{}/", scripts.display());
        let wallet = Wallet::bootstrap();
        let branch = chain::Chain::branch_hash();
        let mut checked = 0;
        for file in kestrel_testdata::files_with_suffix(&receipts, ".out") {
            let text = std::fs::read_to_string(&file).expect("readable");
            for command in kestrel_testdata::parse_session(&text).commands {
                let Some(fee) = recorded(&command.output, "Fee to the baker: \u{a729}") else {
                    continue;
                };
                if !command
                    .output
                    .contains("This sequence of operations was run:")
                {
                    continue;
                }
                let number = |label| {
                    recorded(&command.output, label)
                        .and_then(|v| v.trim_end_matches(" bytes").parse::<u64>().ok())
                        .expect("recorded number")
                };
                let (counter, gas, storage) = (
                    number("Expected counter: "),
                    number("Gas limit: "),
                    number("Storage limit: "),
                );
                let argv: Vec<String> = command
                    .argv
                    .iter()
                    .map(|word| {
                        word.replacen("michelson_test_scripts/", &scripts, 1)
                            .replace("[CONTRACT_HASH]", "KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW")
                            .replace("[PUBLIC_KEY_HASH]", "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN")
                            .replace("[TIMESTAMP]", "2024-01-01T00:00:00Z")
                    })
                    .collect();
                let invocation = super::super::grammar::parse(&argv).expect("recorded grammar");
                let prepared = prepare(&wallet, &invocation).expect("prepared");
                let size = |fee| {
                    forge::signed_size_bytes(&forge::operation(
                        branch,
                        forge::header(&prepared.source, u128::from(counter), fee, gas, storage),
                        prepared.kind.clone(),
                    ))
                };
                let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
                assert_eq!(
                    tez_text(estimate::patch_fee(gas, size)),
                    fee,
                    "{name:?}: {}",
                    command.line
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 55, "recorded injections");
    }

    #[test]
    fn rpc_json_prints_as_octez_client_prints_it() {
        assert_eq!(
            json_text(r#"{"string":"2024-01-01T00:00:00Z"}"#),
            r#"{ "string": "2024-01-01T00:00:00Z" }"#
        );
        assert_eq!(
            json_text(r#"{"prim":"Pair","args":[{"int":"1"},{"bytes":"00"}]}"#),
            r#"{ "prim": "Pair", "args": [ { "int": "1" }, { "bytes": "00" } ] }"#
        );
    }
}
