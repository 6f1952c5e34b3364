//! A script parsed and typechecked once into a reusable typed [`Script`]: its parameter type
//! and entrypoints, storage type, views, typed code, code size and what typechecking it cost
//! (which [`crate::execute`] charges, as Octez charges parsing a script on every call).

use crate::context::Lookup;
use crate::host::{Config, EmptyHost};
use crate::ir::Code;
use crate::typecheck::{entrypoints, TcError, TcErrorKind, Typechecker};
use crate::types::Type;
use kestrel_micheline::{Node, NodeKind, Prim};
use std::rc::Rc;

/// A typechecked script.
pub struct Script {
    typed: crate::typecheck::Script,
    legacy: bool,
    typecheck_gas_milli: u64,
}

/// Why script text did not become a [`Script`].
#[derive(Debug, Clone)]
pub enum ScriptError {
    /// The text is not valid Micheline (the message locates the error in the text).
    Parse(String),
    /// The script is ill-typed.
    IllTyped(TcError),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Parse(message) => write!(f, "{message}"),
            ScriptError::IllTyped(error) => write!(f, "Ill typed contract {error}"),
        }
    }
}

impl std::error::Error for ScriptError {}

/// A view's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewSignature {
    /// The view's name.
    pub name: String,
    /// Its input type.
    pub input_type: Type,
    /// Its output type.
    pub output_type: Type,
}

impl Script {
    /// Parses `text` (a whole script: `parameter`, `storage`, `code`, views) and typechecks it.
    pub fn parse(text: &str, config: &Config) -> Result<Script, ScriptError> {
        let node = kestrel_micheline::parse_toplevel(text)
            .map_err(|error| ScriptError::Parse(error.describe(text)))?;
        Script::typecheck(&node, config).map_err(ScriptError::IllTyped)
    }

    /// Typechecks a parsed script. Trace locations are the canonical locations of `node` after
    /// macro expansion, as Octez's.
    pub fn typecheck(node: &Node, config: &Config) -> Result<Script, TcError> {
        let expanded = crate::macros::expand_all(node)?;
        let unit;
        let self_param = match script_field(&expanded, Prim::K_parameter) {
            Some(parameter) => parameter,
            None => {
                unit = Node::prim(Prim::T_unit, vec![]);
                &unit
            }
        };
        let host = EmptyHost::default();
        let (typed, typecheck_gas_milli) =
            crate::context::with_default_self_address(|self_address| {
                let mut tc = Typechecker::new(Lookup {
                    self_address,
                    self_param,
                    host: &host,
                });
                tc.legacy = config.legacy;
                tc.gas_limit_milli = i64::try_from(config.gas_limit_milli).unwrap_or(i64::MAX);
                tc.record_locations = true;
                let typed = tc.typecheck_script(&expanded)?;
                Ok::<_, TcError>((typed, u64::try_from(tc.gas_consumed_milli).unwrap_or(0)))
            })?;
        if typecheck_gas_milli > config.gas_limit_milli {
            return Err(TcError::new(node.span, TcErrorKind::GasExhaustion));
        }
        Ok(Script {
            typed,
            legacy: config.legacy,
            typecheck_gas_milli,
        })
    }

    /// The parameter type.
    pub fn parameter_type(&self) -> &Type {
        &self.typed.param_type
    }

    /// The parameter type as written, with its entrypoint annotations.
    pub fn parameter_node(&self) -> &Node {
        &self.typed.param_node
    }

    /// The storage type.
    pub fn storage_type(&self) -> &Type {
        &self.typed.storage_type
    }

    /// The named entrypoints and their types, in the order of the parameter's `or` tree
    /// (`default` is the whole parameter unless a branch is so named).
    pub fn entrypoints(&self) -> Vec<(String, Type)> {
        entrypoints::all(&self.typed.param_node)
            .into_iter()
            .filter_map(|(name, node)| {
                let ty = crate::types::parse_type(node).ok()?;
                Some((name.to_string(), ty))
            })
            .collect()
    }

    /// The type of entrypoint `name` (`default` is the whole parameter unless a branch is so
    /// named), parsing only that entrypoint's type.
    pub fn entrypoint_type(&self, name: &str) -> Option<Type> {
        entrypoints::find(&self.typed.param_node, name)
    }

    /// The type of entrypoint `name` and the path (`true` = left) from the parameter's root.
    pub fn entrypoint(&self, name: &str) -> Option<(Type, Vec<bool>)> {
        entrypoints::find_with_path(&self.typed.param_node, name)
    }

    /// The views' signatures.
    pub fn views(&self) -> Vec<ViewSignature> {
        self.typed
            .views
            .iter()
            .map(|(name, input_type, output_type, _)| ViewSignature {
                name: name.clone(),
                input_type: input_type.clone(),
                output_type: output_type.clone(),
            })
            .collect()
    }

    /// A view's input type, output type and code.
    pub(crate) fn view(&self, name: &str) -> Option<(&Type, &Type, &Node)> {
        self.typed
            .views
            .iter()
            .find(|(view_name, ..)| view_name == name)
            .map(|(_, input, output, code)| (input, output, code))
    }

    /// The bytes Octez's script cache counts for this script with `storage` (Micheline of the
    /// storage type): `Script_ir_translator.script_size`, the typed code's size model plus the
    /// storage value's.
    pub fn cached_size_bytes(&self, storage: &Node) -> u64 {
        self.typed
            .code_size_bytes
            .saturating_add(crate::typecheck::ir_size::storage_bytes(
                &self.typed.storage_type,
                storage,
            ))
    }

    /// The nodes Octez's size model counts in `storage` (`Script_typed_ir_size.value_size`),
    /// which `script_size` charges for.
    pub fn storage_size_nodes(&self, storage: &Node) -> u64 {
        crate::typecheck::ir_size::storage_nodes(&self.typed.storage_type, storage)
    }

    /// Milligas Octez charges to parse and typecheck the script.
    pub fn typecheck_gas_milli(&self) -> u64 {
        self.typecheck_gas_milli
    }

    /// Whether the script was typechecked in legacy mode.
    pub fn legacy(&self) -> bool {
        self.legacy
    }

    /// The typed code.
    pub(crate) fn code(&self) -> &Rc<Code> {
        &self.typed.code
    }

    /// The location of the code's first instruction (a trace's first step).
    pub fn first_location(&self) -> u32 {
        self.typed.code.locations.first().copied().unwrap_or(0)
    }
}

/// The argument of toplevel field `field` (`parameter`, `storage`, `code`) of a script.
fn script_field(script: &Node, field: Prim) -> Option<&Node> {
    script.children().iter().find_map(|item| match &item.kind {
        NodeKind::Prim { name, args, .. } if name.known() == Some(field) && args.len() == 1 => {
            Some(&args[0])
        }
        _ => None,
    })
}
