//! Michelson types (`specs/michelson.rst`, "Core data types and notations") and their
//! properties: comparable, passable, storable, pushable, packable, duplicable, big-map value.
//!
//! Types carry no annotations: the current protocol ignores them except for entrypoints, which
//! the typechecker reads from the parameter's Micheline. Type size is bounded by
//! [`MAX_TYPE_SIZE`], so the recursive helpers here are bounded too; parsing a right comb with
//! many arguments (`pair a b c ...`) builds it with a loop.

use kestrel_micheline::{Node, NodeKind, Prim};
use std::fmt;
use std::rc::Rc;

/// Octez's `michelson_maximum_type_size` (protocol constants): the most nodes a type may have.
pub const MAX_TYPE_SIZE: usize = 2001;

/// The pending nodes of a walk over a type, a value or Micheline: held inline up to a depth
/// that covers ordinary types and values, so the walks the typechecker runs per instruction
/// (sizes, dupable checks, forbidden-type checks) allocate nothing; deeper input spills to
/// the heap.
pub(crate) type WorkStack<T> = smallvec::SmallVec<[T; 32]>;

/// A Michelson type.
#[derive(Clone, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Type {
    Unit,
    Never,
    Bool,
    Int,
    Nat,
    String,
    ChainId,
    Bytes,
    Mutez,
    KeyHash,
    Key,
    Signature,
    Timestamp,
    Address,
    Operation,
    Bls12381Fr,
    Bls12381G1,
    Bls12381G2,
    Chest,
    ChestKey,
    Option(Rc<Type>),
    List(Rc<Type>),
    Set(Rc<Type>),
    Contract(Rc<Type>),
    Ticket(Rc<Type>),
    Pair(Rc<Type>, Rc<Type>),
    Or(Rc<Type>, Rc<Type>),
    Lambda(Rc<Type>, Rc<Type>),
    Map(Rc<Type>, Rc<Type>),
    BigMap(Rc<Type>, Rc<Type>),
    /// `sapling_state n`: accepted by the parser, refused by the typechecker as unsupported.
    SaplingState(u16),
    /// `sapling_transaction n`: as above.
    SaplingTransaction(u16),
}

/// Why a Micheline node is not a valid type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeError {
    /// The node is not a type primitive.
    NotAType(String),
    /// A type primitive with the wrong number of arguments.
    WrongArity(&'static str),
    /// A type that must be comparable is not.
    NotComparable(String),
    /// The type has more than [`MAX_TYPE_SIZE`] nodes.
    TooBig,
    /// A sapling size that is not a valid `u16`.
    BadSaplingSize,
    /// A badly formed annotation.
    BadAnnotation(String),
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeError::NotAType(what) => write!(f, "not a type: {what}"),
            TypeError::WrongArity(prim) => write!(f, "wrong number of arguments to {prim}"),
            TypeError::NotComparable(what) => write!(f, "type {what} is not comparable"),
            TypeError::TooBig => write!(f, "type exceeds the maximum size {MAX_TYPE_SIZE}"),
            TypeError::BadSaplingSize => write!(f, "invalid sapling memo size"),
            TypeError::BadAnnotation(annot) => write!(f, "invalid annotation {annot}"),
        }
    }
}

impl Type {
    /// `pair a b`.
    pub fn pair(a: Type, b: Type) -> Type {
        Type::Pair(Rc::new(a), Rc::new(b))
    }
    /// `or a b`.
    pub fn or(a: Type, b: Type) -> Type {
        Type::Or(Rc::new(a), Rc::new(b))
    }
    /// `option t`.
    pub fn option(t: Type) -> Type {
        Type::Option(Rc::new(t))
    }
    /// `list t`.
    pub fn list(t: Type) -> Type {
        Type::List(Rc::new(t))
    }
    /// `lambda a b`.
    pub fn lambda(a: Type, b: Type) -> Type {
        Type::Lambda(Rc::new(a), Rc::new(b))
    }

    /// Whether the type has type arguments (`option`, `pair`, `map`, ...).
    pub(crate) fn is_compound(&self) -> bool {
        matches!(
            self,
            Type::Option(_)
                | Type::List(_)
                | Type::Set(_)
                | Type::Contract(_)
                | Type::Ticket(_)
                | Type::Pair(..)
                | Type::Or(..)
                | Type::Lambda(..)
                | Type::Map(..)
                | Type::BigMap(..)
        )
    }

    /// The number of nodes of the type (Octez's type size).
    pub fn size(&self) -> usize {
        // Most types the typechecker measures (for Octez's `ty_eq` costs) are scalars: answer
        // those without allocating the walk's stack.
        if !self.is_compound() {
            return 1;
        }
        let mut count = 0;
        self.for_each_node(|_| count += 1);
        count
    }

    /// Calls `visit` on every node of the type, with an explicit work stack (no recursion).
    pub(crate) fn for_each_node(&self, mut visit: impl FnMut(&Type)) {
        let mut pending: WorkStack<&Type> = smallvec::smallvec![self];
        while let Some(t) = pending.pop() {
            visit(t);
            match t {
                Type::Option(a)
                | Type::List(a)
                | Type::Set(a)
                | Type::Contract(a)
                | Type::Ticket(a) => pending.push(a),
                Type::Pair(a, b)
                | Type::Or(a, b)
                | Type::Lambda(a, b)
                | Type::Map(a, b)
                | Type::BigMap(a, b) => {
                    pending.push(a);
                    pending.push(b);
                }
                _ => {}
            }
        }
    }

    /// Whether values of the type can be compared (`COMPARE`, set elements, map keys).
    pub fn is_comparable(&self) -> bool {
        match self {
            Type::Unit
            | Type::Never
            | Type::Bool
            | Type::Int
            | Type::Nat
            | Type::String
            | Type::ChainId
            | Type::Bytes
            | Type::Mutez
            | Type::KeyHash
            | Type::Key
            | Type::Signature
            | Type::Timestamp
            | Type::Address => true,
            Type::Option(a) => a.is_comparable(),
            Type::Pair(a, b) | Type::Or(a, b) => a.is_comparable() && b.is_comparable(),
            _ => false,
        }
    }

    /// Whether the type contains a part satisfying `forbidden`, looking through everything but
    /// what `opaque` says to skip (lambdas hide their argument and result types).
    fn contains(&self, forbidden: impl Fn(&Type) -> bool, see_through_lambda: bool) -> bool {
        // Most types the typechecker checks (`DUP`, `PUSH`, `FAILWITH`) are scalars: answer
        // those without the walk's stack.
        if !self.is_compound() {
            return forbidden(self);
        }
        let mut pending: WorkStack<&Type> = smallvec::smallvec![self];
        while let Some(t) = pending.pop() {
            if forbidden(t) {
                return true;
            }
            match t {
                Type::Option(a) | Type::List(a) | Type::Set(a) | Type::Ticket(a) => pending.push(a),
                Type::Contract(_) => {}
                Type::Lambda(a, b) if see_through_lambda => {
                    pending.push(a);
                    pending.push(b);
                }
                Type::Lambda(..) => {}
                Type::Pair(a, b) | Type::Or(a, b) | Type::Map(a, b) | Type::BigMap(a, b) => {
                    pending.push(a);
                    pending.push(b);
                }
                _ => {}
            }
        }
        false
    }

    /// Whether a value of the type may be pushed with `PUSH` (no operation, big_map, contract,
    /// ticket, sapling state).
    pub fn is_pushable(&self) -> bool {
        !self.contains(
            |t| {
                matches!(
                    t,
                    Type::Operation
                        | Type::BigMap(..)
                        | Type::Contract(_)
                        | Type::Ticket(_)
                        | Type::SaplingState(_)
                )
            },
            false,
        )
    }

    /// Whether the type may appear in a contract's storage (no operation, contract).
    pub fn is_storable(&self) -> bool {
        !self.contains(|t| matches!(t, Type::Operation | Type::Contract(_)), false)
    }

    /// Whether the type may be a contract parameter (no operation).
    pub fn is_passable(&self) -> bool {
        !self.contains(|t| matches!(t, Type::Operation), false)
    }

    /// Whether values may be packed (no operation, big_map, ticket, sapling state).
    pub fn is_packable(&self) -> bool {
        !self.contains(
            |t| {
                matches!(
                    t,
                    Type::Operation | Type::BigMap(..) | Type::Ticket(_) | Type::SaplingState(_)
                )
            },
            false,
        )
    }

    /// Whether values may be duplicated with `DUP` (no ticket).
    pub fn is_duplicable(&self) -> bool {
        !self.contains(|t| matches!(t, Type::Ticket(_)), false)
    }

    /// Whether the type may be the value type of a big map (no operation, big_map, sapling state).
    pub fn is_big_map_value(&self) -> bool {
        !self.contains(
            |t| {
                matches!(
                    t,
                    Type::Operation | Type::BigMap(..) | Type::SaplingState(_)
                )
            },
            false,
        )
    }

    /// Whether the type contains a big_map (for storage diffs).
    pub fn has_big_map(&self) -> bool {
        self.contains(|t| matches!(t, Type::BigMap(..)), false)
    }

    /// Whether the type contains a lambda (whose values are code, with macros to expand).
    pub fn has_lambda(&self) -> bool {
        self.contains(|t| matches!(t, Type::Lambda(..)), false)
    }

    /// Whether the type contains a ticket.
    pub fn has_ticket(&self) -> bool {
        self.contains(|t| matches!(t, Type::Ticket(_)), false)
    }

    /// The Micheline form of the type, without annotations.
    pub fn to_node(&self) -> Node {
        let leaf = |prim: Prim| Node::prim(prim, Vec::new());
        match self {
            Type::Unit => leaf(Prim::T_unit),
            Type::Never => leaf(Prim::T_never),
            Type::Bool => leaf(Prim::T_bool),
            Type::Int => leaf(Prim::T_int),
            Type::Nat => leaf(Prim::T_nat),
            Type::String => leaf(Prim::T_string),
            Type::ChainId => leaf(Prim::T_chain_id),
            Type::Bytes => leaf(Prim::T_bytes),
            Type::Mutez => leaf(Prim::T_mutez),
            Type::KeyHash => leaf(Prim::T_key_hash),
            Type::Key => leaf(Prim::T_key),
            Type::Signature => leaf(Prim::T_signature),
            Type::Timestamp => leaf(Prim::T_timestamp),
            Type::Address => leaf(Prim::T_address),
            Type::Operation => leaf(Prim::T_operation),
            Type::Bls12381Fr => leaf(Prim::T_bls12_381_fr),
            Type::Bls12381G1 => leaf(Prim::T_bls12_381_g1),
            Type::Bls12381G2 => leaf(Prim::T_bls12_381_g2),
            Type::Chest => leaf(Prim::T_chest),
            Type::ChestKey => leaf(Prim::T_chest_key),
            Type::SaplingState(n) => Node::prim(Prim::T_sapling_state, vec![Node::int(*n)]),
            Type::SaplingTransaction(n) => {
                Node::prim(Prim::T_sapling_transaction, vec![Node::int(*n)])
            }
            Type::Option(a) => Node::prim(Prim::T_option, vec![a.to_node()]),
            Type::List(a) => Node::prim(Prim::T_list, vec![a.to_node()]),
            Type::Set(a) => Node::prim(Prim::T_set, vec![a.to_node()]),
            Type::Contract(a) => Node::prim(Prim::T_contract, vec![a.to_node()]),
            Type::Ticket(a) => Node::prim(Prim::T_ticket, vec![a.to_node()]),
            Type::Pair(a, b) => {
                // Octez folds right combs: `pair a (pair b c)` is written `pair a b c`.
                let mut args = vec![a.to_node()];
                let mut rest: &Type = b;
                while let Type::Pair(x, y) = rest {
                    args.push(x.to_node());
                    rest = y;
                }
                args.push(rest.to_node());
                Node::prim(Prim::T_pair, args)
            }
            Type::Or(a, b) => Node::prim(Prim::T_or, vec![a.to_node(), b.to_node()]),
            Type::Lambda(a, b) => Node::prim(Prim::T_lambda, vec![a.to_node(), b.to_node()]),
            Type::Map(a, b) => Node::prim(Prim::T_map, vec![a.to_node(), b.to_node()]),
            Type::BigMap(a, b) => Node::prim(Prim::T_big_map, vec![a.to_node(), b.to_node()]),
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", crate::print::node_to_string(&self.to_node()))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", crate::print::node_to_string(&self.to_node()))
    }
}

/// Checks an annotation list's syntax: `@`, `:` or `%` followed by identifier characters.
pub fn check_annotations(annots: &[String]) -> Result<(), TypeError> {
    for annot in annots {
        let mut chars = annot.chars();
        let sigil = chars.next();
        if !matches!(sigil, Some('@' | ':' | '%')) {
            return Err(TypeError::BadAnnotation(annot.clone()));
        }
        let rest = &annot[1..];
        // Octez accepts `@%`, `@%%`, `%@` and identifiers made of [a-zA-Z0-9_.%@].
        let valid = rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%' | '@'));
        if !valid {
            return Err(TypeError::BadAnnotation(annot.clone()));
        }
        if let Some(first) = rest.chars().next() {
            if !(first.is_ascii_alphanumeric() || first == '_' || first == '%' || first == '@') {
                return Err(TypeError::BadAnnotation(annot.clone()));
            }
        }
    }
    Ok(())
}

/// Parses a Micheline type; `None`-free result or a [`TypeError`].
pub fn parse_type(node: &Node) -> Result<Type, TypeError> {
    parse_type_visiting(node, &mut |_| {})
}

/// [`parse_type`], calling `visit` once on every node of the parsed type as it is built
/// (children before their parent): the typechecker measures each type it parses (gas, typed-IR
/// size), and doing so here spares a walk of the finished type.
pub(crate) fn parse_type_visiting(
    node: &Node,
    visit: &mut impl FnMut(&Type),
) -> Result<Type, TypeError> {
    let mut nodes = 0usize;
    let t = parse_type_inner(node, 0, &mut |t: &Type| {
        nodes += 1;
        visit(t);
    })?;
    if nodes > MAX_TYPE_SIZE {
        return Err(TypeError::TooBig);
    }
    Ok(t)
}

fn parse_type_inner(
    node: &Node,
    depth: usize,
    visit: &mut impl FnMut(&Type),
) -> Result<Type, TypeError> {
    let t = parse_type_node(node, depth, visit)?;
    visit(&t);
    Ok(t)
}

/// One node of [`parse_type_inner`]: its arguments are visited, and the pairs a comb
/// (`pair a b c`) adds below the returned one.
fn parse_type_node(
    node: &Node,
    depth: usize,
    visit: &mut impl FnMut(&Type),
) -> Result<Type, TypeError> {
    // A type deeper than its size limit is refused before recursing further, so recursion here
    // is bounded by MAX_TYPE_SIZE whatever the Micheline depth.
    if depth > MAX_TYPE_SIZE {
        return Err(TypeError::TooBig);
    }
    let depth = depth + 1;
    let (prim, args, annots) = match &node.kind {
        NodeKind::Prim { name, args, annots } => match name.known() {
            Some(prim) => (prim, args, annots),
            None => return Err(TypeError::NotAType(name.as_str().to_string())),
        },
        _ => return Err(TypeError::NotAType(crate::print::node_to_string(node))),
    };
    check_annotations(annots)?;
    let arity = |n: usize| -> Result<(), TypeError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(TypeError::WrongArity(prim.name()))
        }
    };
    let leaf = |t: Type| -> Result<Type, TypeError> {
        arity(0)?;
        Ok(t)
    };
    let one = |make: fn(Rc<Type>) -> Type, visit: &mut _| -> Result<Type, TypeError> {
        arity(1)?;
        Ok(make(Rc::new(parse_type_inner(&args[0], depth, visit)?)))
    };
    let two = |make: fn(Rc<Type>, Rc<Type>) -> Type, visit: &mut _| -> Result<Type, TypeError> {
        arity(2)?;
        Ok(make(
            Rc::new(parse_type_inner(&args[0], depth, visit)?),
            Rc::new(parse_type_inner(&args[1], depth, visit)?),
        ))
    };
    let comparable = |t: Type| -> Result<Type, TypeError> {
        if t.is_comparable() {
            Ok(t)
        } else {
            Err(TypeError::NotComparable(t.to_string()))
        }
    };
    match prim {
        Prim::T_unit => leaf(Type::Unit),
        Prim::T_never => leaf(Type::Never),
        Prim::T_bool => leaf(Type::Bool),
        Prim::T_int => leaf(Type::Int),
        Prim::T_nat => leaf(Type::Nat),
        Prim::T_string => leaf(Type::String),
        Prim::T_chain_id => leaf(Type::ChainId),
        Prim::T_bytes => leaf(Type::Bytes),
        Prim::T_mutez => leaf(Type::Mutez),
        Prim::T_key_hash => leaf(Type::KeyHash),
        Prim::T_key => leaf(Type::Key),
        Prim::T_signature => leaf(Type::Signature),
        Prim::T_timestamp => leaf(Type::Timestamp),
        Prim::T_address => leaf(Type::Address),
        Prim::T_operation => leaf(Type::Operation),
        Prim::T_bls12_381_fr => leaf(Type::Bls12381Fr),
        Prim::T_bls12_381_g1 => leaf(Type::Bls12381G1),
        Prim::T_bls12_381_g2 => leaf(Type::Bls12381G2),
        Prim::T_chest => leaf(Type::Chest),
        Prim::T_chest_key => leaf(Type::ChestKey),
        Prim::T_sapling_state | Prim::T_sapling_transaction => {
            arity(1)?;
            let size = match &args[0].kind {
                NodeKind::Int(n) => u16::try_from(n).map_err(|_| TypeError::BadSaplingSize)?,
                _ => return Err(TypeError::BadSaplingSize),
            };
            Ok(if prim == Prim::T_sapling_state {
                Type::SaplingState(size)
            } else {
                Type::SaplingTransaction(size)
            })
        }
        Prim::T_option => one(Type::Option, visit),
        Prim::T_list => one(Type::List, visit),
        Prim::T_set => {
            arity(1)?;
            Ok(Type::Set(Rc::new(comparable(parse_type_inner(
                &args[0], depth, visit,
            )?)?)))
        }
        Prim::T_contract => one(Type::Contract, visit),
        Prim::T_ticket => {
            arity(1)?;
            Ok(Type::Ticket(Rc::new(comparable(parse_type_inner(
                &args[0], depth, visit,
            )?)?)))
        }
        Prim::T_or => two(Type::Or, visit),
        Prim::T_lambda => two(Type::Lambda, visit),
        Prim::T_map | Prim::T_big_map => {
            arity(2)?;
            let key = comparable(parse_type_inner(&args[0], depth, visit)?)?;
            let value = parse_type_inner(&args[1], depth, visit)?;
            Ok(if prim == Prim::T_map {
                Type::Map(Rc::new(key), Rc::new(value))
            } else {
                Type::BigMap(Rc::new(key), Rc::new(value))
            })
        }
        Prim::T_pair => {
            if args.len() < 2 {
                return Err(TypeError::WrongArity("pair"));
            }
            if args.len() > MAX_TYPE_SIZE {
                return Err(TypeError::TooBig);
            }
            let mut parts = Vec::with_capacity(args.len());
            for arg in args {
                parts.push(parse_type_inner(arg, depth, visit)?);
            }
            let mut result = parts.pop().ok_or(TypeError::WrongArity("pair"))?;
            while let Some(left) = parts.pop() {
                result = Type::Pair(Rc::new(left), Rc::new(result));
                if !parts.is_empty() {
                    // The outermost pair is visited by `parse_type_inner`.
                    visit(&result);
                }
            }
            Ok(result)
        }
        _ => Err(TypeError::NotAType(prim.name().to_string())),
    }
}
