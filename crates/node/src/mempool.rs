//! The mempool of a node that bakes on a timer (`--block-time`): operations validated and
//! applied, in order, on a copy of head's state, waiting for the next block; and the
//! `mempool/pending_operations` answer that lists them in Octez's shape
//! (`shared/testdata/octez-protocol/rpc/rpc-mempool.out`: `validated` entries are
//! `{hash, branch, contents, signature}`, without receipts).

use kestrel_protocol::Ledger;

use crate::block::IncludedOperation;

/// An operation waiting for a block.
#[derive(Debug, Clone)]
pub struct PendingOperation {
    /// Its `pending_operations` entry: `{hash, branch, contents, signature}`.
    pub json: String,
    /// What the block will include: its hash and its JSON with receipts.
    pub included: IncludedOperation,
}

/// The operations waiting for the next block, and the state after them.
#[derive(Debug, Default)]
pub struct Mempool {
    ledger: Option<Ledger>,
    operations: Vec<PendingOperation>,
}

impl Mempool {
    /// How many operations wait.
    pub fn len(&self) -> usize {
        self.operations.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    /// The state after the waiting operations: `head`'s when none waits.
    pub fn ledger<'a>(&'a self, head: &'a Ledger) -> &'a Ledger {
        self.ledger.as_ref().unwrap_or(head)
    }

    /// Sets the state the next block will commit.
    pub fn set_ledger(&mut self, ledger: Ledger) {
        self.ledger = Some(ledger);
    }

    /// Adds `operation`, applied: `ledger` is the state after it.
    pub fn push(&mut self, ledger: Ledger, operation: PendingOperation) {
        self.ledger = Some(ledger);
        self.operations.push(operation);
    }

    /// Empties the mempool: the state after its operations (`None`: head's) and what a block
    /// includes of them.
    pub fn take(&mut self) -> (Option<Ledger>, Vec<IncludedOperation>) {
        let operations = std::mem::take(&mut self.operations)
            .into_iter()
            .map(|operation| operation.included)
            .collect();
        (self.ledger.take(), operations)
    }

    /// The `mempool/pending_operations` answer: every waiting operation `validated`, the other
    /// lists empty (an operation that does not validate is refused at injection, not kept).
    pub fn pending_operations_json(&self) -> String {
        let validated: Vec<&str> = self.operations.iter().map(|o| o.json.as_str()).collect();
        format!(
            "{{\"validated\":[{}],\"refused\":[],\"outdated\":[],\"branch_refused\":[],\"branch_delayed\":[],\"unprocessed\":[]}}",
            validated.join(",")
        )
    }
}
