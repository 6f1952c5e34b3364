//! Ticket receipts (`ticket_receipt.ml`): for each ticket token an operation moved (ticketer,
//! content type, content), the signed change of each account's balance of it.

use crate::crypto_fields::Contract;
use crate::field::Zarith;
use crate::internal::{MichelineExpr, TransactionDestination};
use crate::record::record;

record! {
    /// A ticket token (`Ticket_token.unparsed_token_encoding`).
    pub struct TicketToken<'a> {
        /// The contract that created the ticket.
        ticketer: Contract => "ticketer",
        /// The content's type.
        content_type: MichelineExpr<'a> => "content_type",
        /// The content.
        content: MichelineExpr<'a> => "content",
    }
}

record! {
    /// One account's change of a ticket balance.
    pub struct TicketUpdate {
        /// The account (implicit, originated or smart rollup).
        account: TransactionDestination => "account",
        /// The signed change.
        amount: Zarith => "amount",
    }
}

record! {
    /// The changes of one ticket token.
    pub struct TicketReceiptItem<'a> {
        /// The token.
        ticket_token: TicketToken<'a> => "ticket_token",
        /// The changes.
        updates: Vec<TicketUpdate> => "updates",
    }
}
