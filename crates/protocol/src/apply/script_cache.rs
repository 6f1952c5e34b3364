//! Typechecked scripts kept across operations (DESIGN.md principle 7), keyed by the code's
//! binary form as stored (shared with the state, not copied): a contract called again is not typechecked again. This only saves
//! time — the gas charged is Octez's for loading and typechecking the script (a mockup block's
//! script cache holds only the liquidity-baking CPMM, see `mod.rs`), whether or not the script
//! came from here.
//!
//! Beside them, the `parameter` sections of codes that `CONTRACT` and `contract` values look up
//! (the liquidity-baking CPMM's `xtzToToken` looks up its token's on every call): a lookup does
//! not decode the other contract's code again. Gas is unchanged there too: Octez charges the
//! read and decoding of the code by its length, which is the stored bytes' length.
//!
//! Scripts share structure with `Rc`, so the cache is per thread; it holds at most
//! [`CACHED_SCRIPTS_MAX`] scripts (and as many parameter sections) and is emptied when full.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;

use kestrel_micheline::Node;
use kestrel_michelson::{Config, Script};

use super::{ApplyError, Fault};
use crate::bounded_cache::BoundedCache;

/// Scripts kept per thread before the cache is emptied.
pub const CACHED_SCRIPTS_MAX: usize = 1024;

thread_local! {
    static SCRIPTS: RefCell<BoundedCache<Code, Rc<CachedScript>>> =
        RefCell::new(BoundedCache::new(CACHED_SCRIPTS_MAX));
    static PARAMETERS: RefCell<BoundedCache<Code, Option<Option<Node>>>> =
        RefCell::new(BoundedCache::new(CACHED_SCRIPTS_MAX));
}

/// A typechecked script, with what its calls ask of its types on every call.
pub struct CachedScript {
    /// The script.
    pub script: Script,
    /// Whether its parameter type holds a ticket (`Ticket_scanner.type_has_tickets`).
    pub parameter_has_tickets: bool,
    /// Whether its storage type holds a ticket.
    pub storage_has_tickets: bool,
}

impl std::ops::Deref for CachedScript {
    type Target = Script;

    fn deref(&self) -> &Script {
        &self.script
    }
}

/// A script's stored code, compared in full but hashed by its length and ends only: hashing all
/// of a 10 kB script on every call cost more than running an FA1.2 transfer, and codes that
/// share length and ends only share a bucket.
#[derive(PartialEq, Eq)]
struct Code(Arc<[u8]>);

/// Bytes hashed at each end of a code.
const HASHED_END_BYTES: usize = 64;

impl Hash for Code {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let bytes = &self.0[..];
        let end = bytes.len().min(HASHED_END_BYTES);
        bytes.len().hash(state);
        bytes[..end].hash(state);
        bytes[bytes.len() - end..].hash(state);
    }
}

/// The typechecked code whose binary form is `code_bytes` (legacy mode, as Octez loads stored
/// scripts), from the cache when it was typechecked before with at least as much gas as it needs;
/// otherwise `decode` gives the code to typecheck (a cached script is not decoded at all).
pub fn typechecked(
    code_bytes: &Arc<[u8]>,
    gas_limit_milli: u64,
    decode: impl FnOnce() -> Result<Node, Fault>,
) -> Result<Rc<CachedScript>, Fault> {
    let key = Code(Arc::clone(code_bytes));
    let cached = SCRIPTS.with(|scripts| scripts.borrow().get(&key));
    if let Some(script) = cached.filter(|script| script.typecheck_gas_milli() <= gas_limit_milli) {
        return Ok(script);
    }
    let config = Config {
        legacy: true,
        gas_limit_milli,
    };
    let script = Script::typecheck(&decode()?, &config)
        .map_err(|error| ApplyError::IllTypedContract(error.to_string()))?;
    let script = Rc::new(CachedScript {
        parameter_has_tickets: script.parameter_type().has_ticket(),
        storage_has_tickets: script.storage_type().has_ticket(),
        script,
    });
    SCRIPTS.with(|scripts| scripts.borrow_mut().insert(key, Rc::clone(&script)));
    Ok(script)
}

/// The parameter type (as Micheline) of the code whose binary form is `code_bytes`, from the
/// cache when it was looked up before; otherwise `parameter` gives it. `None` when the code does
/// not decode, `Some(None)` when it has no parameter section; both are kept too.
pub fn parameter(
    code_bytes: &Arc<[u8]>,
    parameter: impl FnOnce() -> Option<Option<Node>>,
) -> Option<Option<Node>> {
    let key = Code(Arc::clone(code_bytes));
    if let Some(found) = PARAMETERS.with(|parameters| parameters.borrow().get(&key)) {
        return found;
    }
    let found = parameter();
    PARAMETERS.with(|parameters| parameters.borrow_mut().insert(key, found.clone()));
    found
}
