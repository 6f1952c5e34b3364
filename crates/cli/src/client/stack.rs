//! Typed stacks as `normalize stack` reads them: `{ Stack_elt TYPE VALUE ; ... }`, with
//! octez-client's two errors (the whole stack, then the first bad item).

use crate::client::report::ClientError;
use kestrel_micheline::{Node, NodeKind, Span};

/// The primitive naming one item of a typed stack (outside Michelson's primitive table).
pub const STACK_ELT: &str = "Stack_elt";

/// Why a stack is not `{ Stack_elt TYPE VALUE ; ... }`.
#[derive(Debug)]
pub struct StackFormatError {
    /// The whole stack's span and single-line text.
    stack: (Span, String),
    /// The first malformed item's span and text, when the stack is a sequence.
    item: Option<(Span, String)>,
}

impl StackFormatError {
    /// octez-client's report of this error; `text` is the stack as given.
    pub fn into_client_error(self, text: &str) -> ClientError {
        let mut lines = vec![
            crate::client::report::at(text, self.stack.0) + ",",
            format!(
                "Unexpected format for a typed stack. Expected a sequence of Stack_elt <ty> <value>; got {}.",
                self.stack.1
            ),
        ];
        if let Some((span, item)) = self.item {
            lines.push(crate::client::report::at(text, span) + ",");
            lines.push(format!(
                "Unexpected format for an item in a typed stack. Expected: Stack_elt <ty> <value>; got {item}."
            ));
        }
        ClientError::lines("stack", lines, Some(self.stack.0))
    }
}

/// The (type, value) pairs of a typed stack, top first.
pub fn stack_items(node: &Node) -> Result<Vec<(&Node, &Node)>, StackFormatError> {
    let one = kestrel_micheline::print::to_text_single_line;
    let NodeKind::Seq(items) = &node.kind else {
        return Err(StackFormatError {
            stack: (node.span, one(node)),
            item: None,
        });
    };
    items
        .iter()
        .map(|item| match &item.kind {
            NodeKind::Prim { name, args, annots }
                if name.as_str() == STACK_ELT && args.len() == 2 && annots.is_empty() =>
            {
                Ok((&args[0], &args[1]))
            }
            _ => Err(StackFormatError {
                stack: (node.span, one(node)),
                item: Some((item.span, one(item))),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_a_sequence_of_two_argument_stack_elts() {
        let node =
            kestrel_micheline::parse_expression("{Stack_elt nat 0; Stack_elt}").expect("parses");
        let error = stack_items(&node).expect_err("the second item lacks its arguments");
        assert_eq!(
            error.item.map(|(span, _)| (span.start, span.end)),
            Some((18, 27))
        );
        let node = kestrel_micheline::parse_expression("{Stack_elt nat 0; Stack_elt int -1}")
            .expect("parses");
        assert_eq!(stack_items(&node).map(|items| items.len()).ok(), Some(2));
    }
}
