//! The typed intermediate representation the typechecker produces and the interpreter runs.
//!
//! A program is a flat array of instructions; structured control (`IF`, `LOOP`, `DIP`, `ITER`,
//! `MAP`) is compiled to jumps and to markers that push and pop frames of the interpreter's
//! explicit control stacks, so each instruction's continuation is the next index or its jump
//! target and running any program, however deeply nested, never recurses on the host stack
//! (DESIGN.md, "Interpreter"). Each instruction is already specialised to its operand types
//! (`AddNatNat`, `AddIntInt`, ...): the interpreter never re-checks types.

use crate::types::Type;
use crate::value::{Lambda, Value};
use std::rc::Rc;

/// A typechecked code block: instructions and, for each, the Micheline location it came from.
#[derive(Default)]
pub struct Code {
    /// The instructions; execution starts at index 0 and ends past the last one.
    pub instrs: Vec<Instr>,
    /// The canonical Micheline location of each instruction (for traces and errors).
    pub locations: Vec<u32>,
    /// The location of the block itself (a lambda's code): where the `PUSH` and `PAIR` that
    /// `APPLY` puts in front of a lambda are logged.
    pub location: u32,
}

/// What `ITER` iterates over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IterKind {
    /// A list.
    List,
    /// A set.
    Set,
    /// A map (each element is `Pair key value`).
    Map,
}

/// One instruction of the IR. Jump targets are indices into the same [`Code`].
#[allow(missing_docs)]
pub enum Instr {
    // Stack manipulation.
    Drop,
    DropN(usize),
    Dup,
    DupN(usize),
    Swap,
    Dig(usize),
    Dug(usize),
    Push(Value),
    Unit,
    // Control.
    /// Unconditional jump.
    Jump(usize),
    /// End of an `IF*` branch: jumps past the other branch (Octez's `IHalt` + `KCons`).
    BranchEnd(usize),
    /// Entry into `LOOP`/`LOOP_LEFT` (the instruction's own cost).
    LoopEnter,
    /// End of a loop body: back to the head (`IHalt`).
    LoopBack(usize),
    /// End of an `ITER` body: back to the head (`IHalt`).
    IterBack(usize),
    /// `IF`: pops a bool; jumps to the target (the else branch) when false.
    If(usize),
    /// `IF_NONE`: pops an option; on `Some x` pushes `x` and jumps to the target.
    IfNone(usize),
    /// `IF_LEFT`: pops an or; pushes its content; jumps to the target when `Right`.
    IfLeft(usize),
    /// `IF_CONS`: pops a list; when non-empty pushes tail and head; jumps when empty.
    IfCons(usize),
    /// Head of `LOOP`: pops a bool; jumps to the exit when false.
    LoopHead(usize),
    /// Head of `LOOP_LEFT`: pops an or; pushes the content; jumps to the exit when `Right`.
    LoopLeftHead(usize),
    /// Start of `DIP n`: moves the top `n` values to the dip stack.
    DipStart(usize),
    /// End of `DIP n`: moves them back.
    DipEnd(usize),
    /// Start of `ITER`: pops the collection and opens an iteration frame.
    IterStart(IterKind),
    /// Head of `ITER`: pushes the next element, or closes the frame and jumps to the exit.
    IterNext(usize),
    /// Start of `MAP`: pops the collection and opens a map frame.
    MapStart(IterKind),
    /// Head of `MAP`: pushes the next element, or closes the frame, pushes the result and jumps.
    MapNext(usize),
    /// End of a `MAP` body: pops the body's result into the frame.
    MapCollect,
    Failwith,
    Never,
    Exec,
    Apply,
    Lambda(Rc<Lambda>),
    // Arithmetic.
    AddNatNat,
    AddIntInt,
    AddTimestampInt,
    AddIntTimestamp,
    AddMutez,
    AddFr,
    AddG1,
    AddG2,
    SubInt,
    SubTimestampInt,
    SubTimestampTimestamp,
    SubMutez,
    SubMutezLegacy,
    MulNatNat,
    MulIntInt,
    MulMutezNat,
    MulNatMutez,
    MulG1Fr,
    MulG2Fr,
    MulFrFr,
    MulIntFr,
    MulFrInt,
    EdivNatNat,
    EdivIntInt,
    EdivMutezNat,
    EdivMutezMutez,
    Abs,
    IsNat,
    Int,
    IntFr,
    IntBytes,
    NatBytes,
    BytesInt,
    BytesNat,
    NegInt,
    NegFr,
    NegG1,
    NegG2,
    LslNat,
    LsrNat,
    LslBytes,
    LsrBytes,
    OrBool,
    OrNat,
    OrBytes,
    AndBool,
    AndNat,
    AndIntNat,
    AndBytes,
    XorBool,
    XorNat,
    XorBytes,
    NotBool,
    NotInt,
    NotBytes,
    Compare,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    // Strings and bytes.
    ConcatString,
    ConcatBytes,
    ConcatListString,
    ConcatListBytes,
    SizeString,
    SizeBytes,
    SizeList,
    SizeSet,
    SizeMap,
    SliceString,
    SliceBytes,
    Pack(Type),
    Unpack(Type),
    // Pairs, unions, options.
    Pair,
    PairN(usize),
    Unpair,
    UnpairN(usize),
    Car,
    Cdr,
    GetN(usize),
    UpdateN(usize),
    Left,
    Right,
    Some,
    None,
    // Collections.
    Nil,
    Cons,
    EmptySet,
    EmptyMap,
    EmptyBigMap(Type, Type),
    MemSet,
    MemMap,
    MemBigMap,
    GetMap,
    GetBigMap,
    UpdateSet,
    UpdateMap,
    UpdateBigMap,
    GetAndUpdateMap,
    GetAndUpdateBigMap,
    // Cryptography.
    HashKey,
    Blake2b,
    Sha256,
    Sha512,
    Keccak,
    Sha3,
    CheckSignature,
    PairingCheck,
    // Blockchain.
    Amount,
    Balance,
    Now,
    Level,
    Sender,
    Source,
    SelfAddress,
    /// `SELF`: the contract's own address with this entrypoint, and the entrypoint's type.
    Self_(Rc<str>, Type),
    ChainId,
    MinBlockTime,
    TotalVotingPower,
    VotingPower,
    Address,
    /// `CONTRACT %entrypoint t`.
    Contract(Rc<str>, Type),
    ImplicitAccount,
    TransferTokens,
    SetDelegate,
    /// `CREATE_CONTRACT`: the script and the storage type.
    CreateContract(Rc<crate::value::Lambda>, Type),
    /// `EMIT %tag t`: the tag and the type node as written.
    Emit(Rc<str>, Rc<kestrel_micheline::Node>, Type),
    /// `VIEW name t`.
    View(Rc<str>, Type),
    // Tickets.
    /// `TICKET`, with the content type.
    Ticket(Type),
    /// `TICKET_DEPRECATED`, with the content type.
    TicketDeprecated(Type),
    ReadTicket,
    SplitTicket,
    JoinTickets,
    IndexAddress,
    GetAddressIndex,
    IsImplicitAccount,
    /// A no-op kept so that traces and gas see an instruction (`CAST`, `RENAME`, empty `{}`).
    Nop,
}

/// An instruction's size on 64-bit targets: the interpreter fetches one per step and a script's
/// code is a vector of them, so growing it slows every step; a payload that would grow it
/// belongs behind a `Box`.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Instr>() == 56);

impl std::fmt::Debug for Instr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl Instr {
    /// A short name for debugging.
    pub fn name(&self) -> &'static str {
        match self {
            Instr::Jump(_) => "Jump",
            Instr::If(_) => "If",
            Instr::Push(_) => "Push",
            Instr::Lambda(_) => "Lambda",
            _ => "Instr",
        }
    }
}
