//! The Micheline text parser: integers, strings with escapes, `0x` bytes, primitives with
//! annotations, parenthesised applications, `{ ; }` sequences, `#` and `/* */` comments.
//!
//! Nesting is tracked on an explicit stack of open frames, never by host recursion, and bounded
//! by [`Limits`]; every error carries the byte span where it was found.
//!
//! As Octez's `Micheline_parser` does by default, the parser also enforces Micheline's layout rule
//! (`do_check` there): a node may not end at or left of the column it starts in; a sequence's first
//! item and an application's first argument start right of the node; and every later item either
//! ends on the line where the item before it started or starts in the first item's column.
//! Columns count characters, lines count `\n`.

use crate::node::{position_of, Node, NodeKind, Span};
use crate::prim::PrimName;
use num_bigint::BigInt;
use std::fmt;

/// Bounds on what one parse may build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of sequences, parentheses and applications accepted.
    pub max_depth: usize,
    /// The most nodes one parse may build.
    pub max_node_count: usize,
}

/// Depth allowed by default: deep enough for every real contract and the depth-100,000
/// regression tests DESIGN.md asks for, small enough that frames stay a few MiB.
pub const DEFAULT_MAX_DEPTH: usize = 100_000;

/// Nodes allowed by default: far above any contract that fits Tezos' 32 KiB operation-size limit
/// yet bounding memory for hostile input.
pub const DEFAULT_MAX_NODE_COUNT: usize = 10_000_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_node_count: DEFAULT_MAX_NODE_COUNT,
        }
    }
}

/// What went wrong while parsing text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A character that starts no token.
    UnexpectedCharacter(char),
    /// A string literal without its closing quote (or broken by a newline or carriage return).
    UnterminatedString,
    /// A backslash escape other than `\\ \" \n \t \r \b`.
    InvalidEscape(char),
    /// A `/*` comment without its `*/`.
    UnterminatedComment,
    /// `0x` followed by an odd number of hex digits or a non-hex character.
    InvalidBytes,
    /// A malformed integer such as `-` alone or `12ab`.
    InvalidInt,
    /// A token where the grammar allows none of its kind.
    UnexpectedToken(String),
    /// The input ended inside an open sequence or parenthesis.
    UnexpectedEnd,
    /// An annotation after a primitive's arguments or on a non-primitive.
    MisplacedAnnotation,
    /// An annotation longer than [`crate::binary::MAX_ANNOTATION_LENGTH_BYTES`] (255) bytes.
    AnnotationTooLong,
    /// Nesting deeper than [`Limits::max_depth`].
    TooDeep,
    /// More nodes than [`Limits::max_node_count`].
    TooManyNodes,
    /// An expression was expected but the input (or parenthesis) was empty.
    Empty,
    /// A node laid out against Micheline's indentation rule (see the module documentation); the
    /// span is the node's, as Octez locates it.
    Misaligned,
}

/// A parse failure and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// The bytes of the source it concerns.
    pub span: Span,
}

impl ParseError {
    fn new(kind: ParseErrorKind, span: Span) -> ParseError {
        ParseError { kind, span }
    }

    /// The error with its line and column in `source`, the way octez-client reports positions
    /// (a character is located at a point: `At line 1 character 4`).
    pub fn describe(&self, source: &str) -> String {
        let place = match self.kind {
            ParseErrorKind::UnexpectedCharacter(_) => {
                Span::new(self.span.start as usize, self.span.start as usize).location_text(source)
            }
            _ => self.span.location_text(source),
        };
        format!("{place}, {}", self.kind)
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Octez prints the character as it is.
            ParseErrorKind::UnexpectedCharacter(c) => write!(f, "unexpected character {c}"),
            ParseErrorKind::UnterminatedString => f.write_str("unterminated string"),
            ParseErrorKind::InvalidEscape(c) => write!(f, "invalid escape sequence \\{c}"),
            ParseErrorKind::UnterminatedComment => f.write_str("unterminated comment"),
            ParseErrorKind::InvalidBytes => f.write_str("invalid bytes literal"),
            ParseErrorKind::InvalidInt => f.write_str("invalid integer literal"),
            ParseErrorKind::UnexpectedToken(token) => write!(f, "unexpected {token}"),
            ParseErrorKind::UnexpectedEnd => f.write_str("unexpected end of input"),
            ParseErrorKind::MisplacedAnnotation => f.write_str("misplaced annotation"),
            ParseErrorKind::AnnotationTooLong => f.write_str("annotation longer than 255 bytes"),
            ParseErrorKind::TooDeep => f.write_str("expression nested too deeply"),
            ParseErrorKind::TooManyNodes => f.write_str("expression has too many nodes"),
            ParseErrorKind::Empty => f.write_str("empty expression"),
            ParseErrorKind::Misaligned => f.write_str("misaligned expression"),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at bytes {}..{}",
            self.kind, self.span.start, self.span.end
        )
    }
}

impl std::error::Error for ParseError {}

impl std::str::FromStr for Node {
    type Err = ParseError;

    /// Parses one expression with default limits, as [`parse_expression`].
    fn from_str(source: &str) -> Result<Node, ParseError> {
        parse_expression(source)
    }
}

/// Parses one expression, e.g. `Pair 1 "a"` or `{ DROP ; UNIT }`, with default limits.
pub fn parse_expression(source: &str) -> Result<Node, ParseError> {
    parse_expression_with(source, Limits::default())
}

/// Parses one expression with the given limits.
pub fn parse_expression_with(source: &str, limits: Limits) -> Result<Node, ParseError> {
    Parser::new(source, limits, true).run(Frame::Paren {
        content: None,
        closed_by_paren: false,
        open: None,
    })
}

/// Parses a toplevel sequence without braces, e.g. a script's `parameter ..; storage ..; code ..`,
/// with default limits. The result is a [`NodeKind::Seq`] node.
pub fn parse_toplevel(source: &str) -> Result<Node, ParseError> {
    parse_toplevel_with(source, Limits::default())
}

/// Parses a toplevel sequence with the given limits.
///
/// As in Octez's `Micheline_parser.parse_toplevel`, a toplevel made of one braced sequence
/// (`{ parameter ..; storage ..; code .. }`, the form `octez-client` prints scripts in) stands for
/// that sequence's items, so both spellings of a script give the same tree.
pub fn parse_toplevel_with(source: &str, limits: Limits) -> Result<Node, ParseError> {
    parse_toplevel_in(source, limits, true)
}

/// Parses a toplevel sequence with default limits, without Micheline's layout rule (Octez's
/// `~check:false`): for formats whose corpora do not follow it, such as TZT files.
pub fn parse_toplevel_any_layout(source: &str) -> Result<Node, ParseError> {
    parse_toplevel_in(source, Limits::default(), false)
}

fn parse_toplevel_in(source: &str, limits: Limits, check_layout: bool) -> Result<Node, ParseError> {
    let mut toplevel = Parser::new(source, limits, check_layout).run(Frame::Seq {
        start: 0,
        items: Vec::new(),
        needs_separator: false,
        may_separate: false,
        braced: false,
        open: Point {
            offset: 0,
            line: 1,
            column: 0,
        },
        alignment: Alignment::default(),
    })?;
    if let NodeKind::Seq(items) = &mut toplevel.kind {
        if items.len() == 1 && matches!(items[0].kind, NodeKind::Seq(_)) {
            if let Some(inner) = items.pop() {
                return Ok(inner);
            }
        }
    }
    Ok(toplevel)
}

/// Every character of `source` that starts no token, outside strings and comments, in order.
///
/// Octez's lexer records such a character, skips it and goes on (`Unexpected_character` in
/// `Micheline_parser.tokenize`), so octez-client reports them all where [`parse_expression`] stops
/// at the first; a caller reporting an [`ParseErrorKind::UnexpectedCharacter`] lists these. The
/// scan stops at the first other lexical error, after which Octez's lexer resumes differently.
pub fn unexpected_characters(source: &str) -> Vec<ParseError> {
    let mut lexer = Parser::new(source, Limits::default(), false);
    let mut errors = Vec::new();
    loop {
        match lexer.next_token() {
            Ok((Token::End, _)) => return errors,
            Ok(_) => {}
            Err(error) if matches!(error.kind, ParseErrorKind::UnexpectedCharacter(_)) => {
                lexer.position = error.span.end as usize;
                errors.push(error);
            }
            Err(_) => return errors,
        }
    }
}

/// A lexical token.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(BigInt),
    String(String),
    Bytes(Vec<u8>),
    /// A primitive name, looked up in the table as it is lexed (no allocation for table names).
    Ident(PrimName),
    Annot(String),
    OpenBrace,
    CloseBrace,
    OpenParen,
    CloseParen,
    Semicolon,
    End,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Int(value) => format!("integer {value}"),
            Token::String(_) => "string".to_string(),
            Token::Bytes(_) => "bytes".to_string(),
            Token::Ident(name) => format!("primitive {}", name.as_str()),
            Token::Annot(annot) => format!("annotation {annot}"),
            Token::OpenBrace => "'{'".to_string(),
            Token::CloseBrace => "'}'".to_string(),
            Token::OpenParen => "'('".to_string(),
            Token::CloseParen => "')'".to_string(),
            Token::Semicolon => "';'".to_string(),
            Token::End => "end of input".to_string(),
        }
    }
}

/// A place in the source: byte offset, 1-based line and 0-based column in characters (the
/// `point` of Octez's parser).
#[derive(Debug, Clone, Copy)]
struct Point {
    offset: usize,
    line: usize,
    column: usize,
}

/// Where a node starts and stops as Octez's parser locates it: an application from its name (or
/// the parenthesis before it) to the end of its last argument (its name when it has none, the
/// annotations not included), a sequence from `{` to `}`, a literal over its token.
#[derive(Debug, Clone, Copy)]
struct Location {
    start: Point,
    stop: Point,
}

impl Location {
    fn span(&self) -> Span {
        Span::new(self.start.offset, self.stop.offset)
    }
}

/// The layout rule's bookkeeping for the children of one open sequence or application.
#[derive(Default)]
struct Alignment {
    /// Where the first child starts.
    first: Option<Point>,
    /// The line the latest child started on.
    previous_start_line: usize,
    /// Where the latest child stops.
    last_stop: Option<Point>,
    /// The first child that is neither aligned with the first nor on the line of its elder.
    misaligned: Option<Location>,
}

impl Alignment {
    fn add(&mut self, child: Location) {
        match self.first {
            None => self.first = Some(child.start),
            Some(first) => {
                let aligned = child.stop.line == self.previous_start_line
                    || child.start.column == first.column;
                if !aligned && self.misaligned.is_none() {
                    self.misaligned = Some(child);
                }
            }
        }
        self.previous_start_line = child.start.line;
        self.last_stop = Some(child.stop);
    }

    /// The misaligned node, if any, of a finished node at `node` holding these children: the
    /// node itself when it ends at or left of its start column or (`toplevel` aside) starts at
    /// or right of its first child, else the first misaligned child. Childless applications are
    /// never misaligned; an empty sequence is when it ends at or left of its start column.
    fn check(&self, node: Location, toplevel: bool, sequence: bool) -> Result<(), ParseError> {
        let misaligned =
            |location: Location| ParseError::new(ParseErrorKind::Misaligned, location.span());
        let Some(first) = self.first else {
            if sequence && node.start.column >= node.stop.column {
                return Err(misaligned(node));
            }
            return Ok(());
        };
        if node.start.column >= node.stop.column || (!toplevel && node.start.column >= first.column)
        {
            return Err(misaligned(node));
        }
        match self.misaligned {
            Some(child) => Err(misaligned(child)),
            None => Ok(()),
        }
    }
}

/// Line and column of byte offsets met in increasing order, each byte scanned once.
struct Cursor {
    point: Point,
}

impl Cursor {
    fn point_at(&mut self, bytes: &[u8], offset: usize) -> Point {
        match bytes.get(self.point.offset..offset) {
            Some(run) => {
                for &byte in run {
                    if byte == b'\n' {
                        self.point.line += 1;
                        self.point.column = 0;
                    } else if byte & 0xC0 != 0x80 {
                        // Not a UTF-8 continuation byte: a character starts here.
                        self.point.column += 1;
                    }
                }
                self.point.offset = offset;
                self.point
            }
            // Never reached (tokens come in order); stay correct anyway.
            None => {
                let source = std::str::from_utf8(bytes).unwrap_or_default();
                let (line, column) = position_of(source, offset);
                Point {
                    offset,
                    line,
                    column,
                }
            }
        }
    }
}

/// An open construct waiting for its end.
enum Frame {
    /// A sequence, braced or toplevel.
    Seq {
        start: usize,
        items: Vec<Node>,
        needs_separator: bool,
        may_separate: bool,
        braced: bool,
        /// Where its `{` starts (the input's start for the toplevel).
        open: Point,
        alignment: Alignment,
    },
    /// A parenthesised expression, or the whole input for [`parse_expression`].
    Paren {
        content: Option<(Node, Location)>,
        closed_by_paren: bool,
        /// Where its `(` starts (`None` for the whole input).
        open: Option<Point>,
    },
    /// A primitive application collecting annotations and arguments.
    App {
        start: usize,
        end: usize,
        name: PrimName,
        annots: Vec<String>,
        args: Vec<Node>,
        /// Where Octez locates it: its name, or the parenthesis right before its name.
        location_start: Point,
        /// Where its name stops.
        name_stop: Point,
        alignment: Alignment,
    },
}

struct Parser<'a> {
    source: &'a str,
    bytes: &'a [u8],
    position: usize,
    limits: Limits,
    node_count: usize,
    cursor: Cursor,
    /// Whether misaligned nodes are errors.
    check_layout: bool,
}

impl<'a> Parser<'a> {
    fn new(source: &'a str, limits: Limits, check_layout: bool) -> Parser<'a> {
        Parser {
            source,
            bytes: source.as_bytes(),
            position: 0,
            limits,
            node_count: 0,
            check_layout,
            cursor: Cursor {
                point: Point {
                    offset: 0,
                    line: 1,
                    column: 0,
                },
            },
        }
    }

    fn count_node(&mut self, span: Span) -> Result<(), ParseError> {
        self.node_count += 1;
        if self.node_count > self.limits.max_node_count {
            return Err(ParseError::new(ParseErrorKind::TooManyNodes, span));
        }
        Ok(())
    }

    fn check_layout(
        &self,
        alignment: &Alignment,
        node: Location,
        toplevel: bool,
        sequence: bool,
    ) -> Result<(), ParseError> {
        if self.check_layout {
            alignment.check(node, toplevel, sequence)
        } else {
            Ok(())
        }
    }

    fn next_located_token(&mut self) -> Result<(Token, Span, Location), ParseError> {
        let (token, span) = self.next_token()?;
        let start = self.cursor.point_at(self.bytes, span.start as usize);
        let stop = self.cursor.point_at(self.bytes, span.end as usize);
        Ok((token, span, Location { start, stop }))
    }

    fn run(mut self, root: Frame) -> Result<Node, ParseError> {
        let mut stack = vec![root];
        // A token read but not yet consumed (it closed an application and belongs to the parent).
        let mut lookahead: Option<(Token, Span, Location)> = None;
        loop {
            let (token, span, location) = match lookahead.take() {
                Some(pending) => pending,
                None => self.next_located_token()?,
            };
            let Some(top) = stack.last_mut() else {
                unreachable!("the root frame stays on the stack until the parse returns")
            };
            // What the token does to the top frame: nothing more, open a frame, finish the frame.
            let mut open: Option<Frame> = None;
            let mut finish = false;
            let mut atom: Option<Node> = None;
            match top {
                Frame::App { annots, args, .. } => match token {
                    Token::Annot(annot) if args.is_empty() => annots.push(annot),
                    Token::Annot(_) => {
                        return Err(ParseError::new(ParseErrorKind::MisplacedAnnotation, span))
                    }
                    Token::Ident(name) => {
                        atom = Some(Node::new(NodeKind::Prim {
                            name,
                            args: Vec::new(),
                            annots: Vec::new(),
                        }))
                    }
                    Token::Int(_) | Token::String(_) | Token::Bytes(_) => {
                        atom = Some(Self::leaf(token))
                    }
                    Token::OpenBrace => open = Some(Self::open_seq(span, location)),
                    Token::OpenParen => open = Some(Self::open_paren(location)),
                    Token::Semicolon | Token::CloseBrace | Token::CloseParen | Token::End => {
                        finish = true;
                        lookahead = Some((token, span, location));
                    }
                },
                Frame::Seq {
                    needs_separator,
                    may_separate,
                    braced,
                    ..
                } => match token {
                    Token::Semicolon if *may_separate => {
                        *needs_separator = false;
                        *may_separate = false;
                    }
                    Token::CloseBrace if *braced => finish = true,
                    Token::End if !*braced => finish = true,
                    Token::End => return Err(ParseError::new(ParseErrorKind::UnexpectedEnd, span)),
                    _ if *needs_separator => return Err(Self::unexpected(&token, span)),
                    Token::Int(_) | Token::String(_) | Token::Bytes(_) => {
                        atom = Some(Self::leaf(token))
                    }
                    Token::Ident(name) => open = Some(Self::open_app(name, span, location, None)),
                    Token::OpenBrace => open = Some(Self::open_seq(span, location)),
                    Token::OpenParen => open = Some(Self::open_paren(location)),
                    Token::Annot(_) => {
                        return Err(ParseError::new(ParseErrorKind::MisplacedAnnotation, span))
                    }
                    _ => return Err(Self::unexpected(&token, span)),
                },
                Frame::Paren {
                    content,
                    closed_by_paren,
                    open: paren_open,
                } => match token {
                    Token::CloseParen if *closed_by_paren && content.is_some() => finish = true,
                    Token::End if !*closed_by_paren && content.is_some() => finish = true,
                    Token::End if !*closed_by_paren => {
                        return Err(ParseError::new(ParseErrorKind::Empty, span))
                    }
                    Token::End => return Err(ParseError::new(ParseErrorKind::UnexpectedEnd, span)),
                    Token::CloseParen if *closed_by_paren => {
                        return Err(ParseError::new(ParseErrorKind::Empty, span))
                    }
                    _ if content.is_some() => return Err(Self::unexpected(&token, span)),
                    Token::Int(_) | Token::String(_) | Token::Bytes(_) => {
                        atom = Some(Self::leaf(token))
                    }
                    Token::Ident(name) => {
                        open = Some(Self::open_app(name, span, location, *paren_open))
                    }
                    Token::OpenBrace => open = Some(Self::open_seq(span, location)),
                    Token::OpenParen => open = Some(Self::open_paren(location)),
                    Token::Annot(_) => {
                        return Err(ParseError::new(ParseErrorKind::MisplacedAnnotation, span))
                    }
                    _ => return Err(Self::unexpected(&token, span)),
                },
            }
            if let Some(node) = atom {
                self.count_node(span)?;
                Self::deliver(&mut stack, node.with_span(span), location);
            } else if let Some(frame) = open {
                if stack.len() >= self.limits.max_depth {
                    return Err(ParseError::new(ParseErrorKind::TooDeep, span));
                }
                stack.push(frame);
            } else if finish {
                let Some(frame) = stack.pop() else {
                    unreachable!("finish applies to the frame just inspected")
                };
                let (node, node_location) = match frame {
                    Frame::Seq {
                        start,
                        items,
                        braced,
                        open,
                        alignment,
                        ..
                    } => {
                        let (span, node_location) = if braced {
                            let node_location = Location {
                                start: open,
                                stop: location.stop,
                            };
                            self.check_layout(&alignment, node_location, false, true)?;
                            (Span::new(start, span.end as usize), node_location)
                        } else {
                            let node_location = Location {
                                start: alignment.first.unwrap_or(open),
                                stop: alignment.last_stop.unwrap_or(open),
                            };
                            // Octez's parser checks an empty toplevel too (and finds it
                            // misaligned at line 0); it is left to the caller to reject.
                            if alignment.first.is_some() {
                                self.check_layout(&alignment, node_location, true, true)?;
                            }
                            (Span::new(0, self.source.len()), node_location)
                        };
                        self.count_node(span)?;
                        (
                            Node::new(NodeKind::Seq(items)).with_span(span),
                            node_location,
                        )
                    }
                    Frame::Paren { content, .. } => match content {
                        Some(located) => located,
                        None => unreachable!("a parenthesis finishes only with content"),
                    },
                    Frame::App {
                        start,
                        end,
                        name,
                        annots,
                        args,
                        location_start,
                        name_stop,
                        alignment,
                    } => {
                        let node_location = Location {
                            start: location_start,
                            stop: alignment.last_stop.unwrap_or(name_stop),
                        };
                        self.check_layout(&alignment, node_location, false, false)?;
                        let end = args.last().map(|arg| arg.span.end as usize).unwrap_or(end);
                        let span = Span::new(start, end);
                        self.count_node(span)?;
                        (
                            Node::new(NodeKind::Prim { name, args, annots }).with_span(span),
                            node_location,
                        )
                    }
                };
                if stack.is_empty() {
                    return Ok(node);
                }
                Self::deliver(&mut stack, node, node_location);
            } else if let Some(Frame::App { end, .. }) = stack.last_mut() {
                // An annotation extends the application's span.
                *end = span.end as usize;
            }
        }
    }

    fn open_seq(span: Span, location: Location) -> Frame {
        Frame::Seq {
            start: span.start as usize,
            items: Vec::new(),
            needs_separator: false,
            may_separate: false,
            braced: true,
            open: location.start,
            alignment: Alignment::default(),
        }
    }

    fn open_paren(location: Location) -> Frame {
        Frame::Paren {
            content: None,
            closed_by_paren: true,
            open: Some(location.start),
        }
    }

    /// An application named at `location`; `paren` is where the parenthesis right before its
    /// name starts, if there is one (Octez's location starts there).
    fn open_app(name: PrimName, span: Span, location: Location, paren: Option<Point>) -> Frame {
        Frame::App {
            start: span.start as usize,
            end: span.end as usize,
            name,
            annots: Vec::new(),
            args: Vec::new(),
            location_start: paren.unwrap_or(location.start),
            name_stop: location.stop,
            alignment: Alignment::default(),
        }
    }

    fn leaf(token: Token) -> Node {
        match token {
            Token::Int(value) => Node::new(NodeKind::Int(value)),
            Token::String(value) => Node::new(NodeKind::String(value)),
            Token::Bytes(value) => Node::new(NodeKind::Bytes(value)),
            _ => unreachable!("only literal tokens are leaves"),
        }
    }

    fn unexpected(token: &Token, span: Span) -> ParseError {
        let kind = match token {
            Token::End => ParseErrorKind::UnexpectedEnd,
            _ => ParseErrorKind::UnexpectedToken(token.describe()),
        };
        ParseError::new(kind, span)
    }

    /// Hands a finished node, located at `location`, to the frame below it.
    fn deliver(stack: &mut [Frame], node: Node, location: Location) {
        match stack.last_mut() {
            Some(Frame::App {
                args, alignment, ..
            }) => {
                alignment.add(location);
                args.push(node);
            }
            Some(Frame::Seq {
                items,
                needs_separator,
                may_separate,
                alignment,
                ..
            }) => {
                // Octez accepts a braced sequence followed by the next item without `;`
                // (`{ ... } SWAP`), so only other items require a separator.
                *needs_separator = !matches!(node.kind, NodeKind::Seq(_));
                *may_separate = true;
                alignment.add(location);
                items.push(node);
            }
            Some(Frame::Paren { content, .. }) => *content = Some((node, location)),
            None => unreachable!("a node is delivered only while a frame is open"),
        }
    }

    fn peek_byte(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.position + offset).copied()
    }

    /// Skips whitespace and comments. As in Octez's lexer, whitespace is a space or `\n` only:
    /// a tab or `\r` outside a string or comment is an unexpected character.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek_byte(0) {
                Some(b' ' | b'\n') => self.position += 1,
                Some(b'#') => {
                    while let Some(byte) = self.peek_byte(0) {
                        if byte == b'\n' {
                            break;
                        }
                        self.position += 1;
                    }
                }
                Some(b'/') if self.peek_byte(1) == Some(b'*') => {
                    let start = self.position;
                    self.position += 2;
                    // Block comments nest, as in Octez's lexer: `/* a /* b */ c */` is one comment.
                    let mut open_count = 1usize;
                    while open_count > 0 {
                        match self.peek_byte(0) {
                            None => {
                                return Err(ParseError::new(
                                    ParseErrorKind::UnterminatedComment,
                                    Span::new(start, self.position),
                                ))
                            }
                            Some(b'*') if self.peek_byte(1) == Some(b'/') => {
                                self.position += 2;
                                open_count -= 1;
                            }
                            Some(b'/') if self.peek_byte(1) == Some(b'*') => {
                                self.position += 2;
                                open_count += 1;
                            }
                            Some(_) => self.position += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<(Token, Span), ParseError> {
        self.skip_trivia()?;
        let start = self.position;
        let Some(byte) = self.peek_byte(0) else {
            return Ok((Token::End, Span::new(start, start)));
        };
        let simple = match byte {
            b'{' => Some(Token::OpenBrace),
            b'}' => Some(Token::CloseBrace),
            b'(' => Some(Token::OpenParen),
            b')' => Some(Token::CloseParen),
            b';' => Some(Token::Semicolon),
            _ => None,
        };
        if let Some(token) = simple {
            self.position += 1;
            return Ok((token, Span::new(start, self.position)));
        }
        let token = match byte {
            b'"' => self.lex_string()?,
            b'0' if self.peek_byte(1) == Some(b'x') => self.lex_bytes()?,
            b'-' | b'0'..=b'9' => self.lex_int()?,
            // Octez's lexer starts annotations with any of these seven sigils.
            b'@' | b':' | b'%' | b'$' | b'&' | b'!' | b'?' => {
                self.position += 1;
                self.take_while(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%' | b'@')
                });
                if self.position - start > crate::binary::MAX_ANNOTATION_LENGTH_BYTES {
                    return Err(ParseError::new(
                        ParseErrorKind::AnnotationTooLong,
                        Span::new(start, self.position),
                    ));
                }
                Token::Annot(self.source[start..self.position].to_string())
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
                Token::Ident(PrimName::new(&self.source[start..self.position]))
            }
            _ => {
                let character = self.source[start..].chars().next().unwrap_or('\u{fffd}');
                return Err(ParseError::new(
                    ParseErrorKind::UnexpectedCharacter(character),
                    Span::new(start, start + character.len_utf8()),
                ));
            }
        };
        Ok((token, Span::new(start, self.position)))
    }

    fn take_while(&mut self, accept: impl Fn(u8) -> bool) {
        while let Some(byte) = self.peek_byte(0) {
            if !accept(byte) {
                break;
            }
            self.position += 1;
        }
    }

    /// Whether the byte at the cursor would glue onto the previous token (e.g. `12ab`).
    fn glued(&self) -> bool {
        matches!(self.peek_byte(0), Some(b) if b.is_ascii_alphanumeric() || b == b'_' || b == b'"')
    }

    fn lex_int(&mut self) -> Result<Token, ParseError> {
        let start = self.position;
        if self.peek_byte(0) == Some(b'-') {
            self.position += 1;
        }
        let digits_start = self.position;
        self.take_while(|b| b.is_ascii_digit());
        if self.position == digits_start || self.glued() {
            self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
            return Err(ParseError::new(
                ParseErrorKind::InvalidInt,
                Span::new(start, self.position),
            ));
        }
        let text = &self.source[start..self.position];
        // Most literals fit an i64; parsing them directly skips BigInt's general radix parser.
        if self.position - digits_start <= 18 {
            if let Ok(small) = text.parse::<i64>() {
                return Ok(Token::Int(BigInt::from(small)));
            }
        }
        crate::decimal::parse_decimal(text)
            .map(Token::Int)
            .ok_or_else(|| {
                ParseError::new(ParseErrorKind::InvalidInt, Span::new(start, self.position))
            })
    }

    fn lex_bytes(&mut self) -> Result<Token, ParseError> {
        let start = self.position;
        self.position += 2;
        let digits_start = self.position;
        self.take_while(|b| b.is_ascii_hexdigit());
        let digits = &self.bytes[digits_start..self.position];
        if !digits.len().is_multiple_of(2) || self.glued() {
            self.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
            return Err(ParseError::new(
                ParseErrorKind::InvalidBytes,
                Span::new(start, self.position),
            ));
        }
        let value = digits
            .chunks_exact(2)
            .map(|pair| (hex_value(pair[0]) << 4) | hex_value(pair[1]))
            .collect();
        Ok(Token::Bytes(value))
    }

    fn lex_string(&mut self) -> Result<Token, ParseError> {
        let start = self.position;
        self.position += 1;
        let mut value = String::new();
        loop {
            let Some(byte) = self.peek_byte(0) else {
                return Err(ParseError::new(
                    ParseErrorKind::UnterminatedString,
                    Span::new(start, self.position),
                ));
            };
            match byte {
                b'"' => {
                    self.position += 1;
                    return Ok(Token::String(value));
                }
                // Octez's lexer ends a string at a raw line feed or carriage return.
                b'\n' | b'\r' => {
                    return Err(ParseError::new(
                        ParseErrorKind::UnterminatedString,
                        Span::new(start, self.position),
                    ))
                }
                b'\\' => {
                    let escaped = self.peek_byte(1);
                    let decoded = match escaped {
                        Some(b'\\') => '\\',
                        Some(b'"') => '"',
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        Some(b'b') => '\u{8}',
                        _ => {
                            let character = self.source[self.position + 1..]
                                .chars()
                                .next()
                                .unwrap_or(' ');
                            return Err(ParseError::new(
                                ParseErrorKind::InvalidEscape(character),
                                Span::new(self.position, self.position + 1 + character.len_utf8()),
                            ));
                        }
                    };
                    value.push(decoded);
                    self.position += 2;
                }
                _ => {
                    // Copy the run of ordinary characters at once (it is valid UTF-8: it is a
                    // slice of a `str` between ASCII delimiters).
                    let run_start = self.position;
                    self.take_while(|b| !matches!(b, b'"' | b'\\' | b'\n' | b'\r'));
                    value.push_str(&self.source[run_start..self.position]);
                }
            }
        }
    }
}

fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        b'A'..=b'F' => digit - b'A' + 10,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::Prim;

    fn check(source: &str, expected: Node) {
        let parsed = parse_expression(source).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(parsed, expected, "{source}");
    }

    fn check_error(source: &str, expected: ParseErrorKind) {
        let error = parse_expression(source).expect_err(source);
        assert_eq!(error.kind, expected, "{source}");
    }

    #[test]
    fn literals() {
        check("42", Node::int(42));
        check("-7", Node::int(-7));
        check("\"a\\\"b\\n\"", Node::string("a\"b\n"));
        check("0xdeadBEEF", Node::bytes(vec![0xde, 0xad, 0xbe, 0xef]));
        check("0x", Node::bytes(vec![]));
        check(
            "123456789012345678901234567890",
            Node::int(
                "123456789012345678901234567890"
                    .parse::<BigInt>()
                    .unwrap_or_default(),
            ),
        );
    }

    #[test]
    fn applications_sequences_and_annotations() {
        check(
            "Pair 1 (Some \"x\")",
            Node::prim(
                Prim::D_Pair,
                vec![
                    Node::int(1),
                    Node::prim(Prim::D_Some, vec![Node::string("x")]),
                ],
            ),
        );
        check(
            "{ DROP ; PUSH nat 1 ; }",
            Node::seq(vec![
                Node::prim(Prim::I_DROP, vec![]),
                Node::prim(
                    Prim::I_PUSH,
                    vec![Node::prim(Prim::T_nat, vec![]), Node::int(1)],
                ),
            ]),
        );
        let annotated = parse_expression("CAR @x %y").unwrap_or_else(|e| panic!("{e}"));
        match &annotated.kind {
            NodeKind::Prim { annots, .. } => assert_eq!(annots, &["@x", "%y"]),
            _ => panic!("not a primitive: {annotated:?}"),
        }
        check("{}", Node::seq(vec![]));
        check(
            "# comment\n/* block */ Unit",
            Node::prim(Prim::D_Unit, vec![]),
        );
        check(
            "/* outer /* inner */ still a comment */ Unit",
            Node::prim(Prim::D_Unit, vec![]),
        );
    }

    #[test]
    fn toplevel_script() {
        let script =
            parse_toplevel("parameter unit;\nstorage unit;\ncode { CDR ; NIL operation ; PAIR }")
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(script.children().len(), 3);
        assert_eq!(script.children()[2].known_prim(), Some(Prim::K_code));
        let braced = parse_toplevel(
            "{ parameter unit;\n  storage unit;\n  code { CDR ; NIL operation ; PAIR } }",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(braced, script);
    }

    #[test]
    fn errors_with_positions() {
        check_error("\"abc", ParseErrorKind::UnterminatedString);
        check_error("/* a /* b */ Unit", ParseErrorKind::UnterminatedComment);
        check_error("0xabc", ParseErrorKind::InvalidBytes);
        check_error("12ab", ParseErrorKind::InvalidInt);
        check_error("{ DROP DROP", ParseErrorKind::UnexpectedEnd);
        check_error(
            "{ 1 2 }",
            ParseErrorKind::UnexpectedToken("integer 2".into()),
        );
        check_error("", ParseErrorKind::Empty);
        check_error("()", ParseErrorKind::Empty);
        check_error("\"\\q\"", ParseErrorKind::InvalidEscape('q'));
        check_error("Pair 1 @x", ParseErrorKind::MisplacedAnnotation);
        check_error(
            &format!("CAR @{}", "a".repeat(255)),
            ParseErrorKind::AnnotationTooLong,
        );
        assert!(parse_expression(&format!("CAR @{}", "a".repeat(254))).is_ok());
        assert!(parse_expression("CAR $a &b !c ?d").is_ok());
        let error = parse_expression("{ DROP ;\n  ~ }").expect_err("bad char");
        assert_eq!(
            error.describe("{ DROP ;\n  ~ }"),
            "At line 2 character 2, unexpected character ~"
        );
    }

    /// Octez's lexer skips only spaces and line feeds: a tab or carriage return between tokens
    /// is an unexpected character, a raw carriage return ends a string, and both are fine in
    /// comments and (a tab) inside strings.
    #[test]
    fn tabs_and_carriage_returns_are_lexed_as_octez_lexes_them() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "{ 1 ;\t2 }",
                Some("At line 1 character 5, unexpected character \t"),
            ),
            (
                "Unit\r\n",
                Some("At line 1 character 4, unexpected character \r"),
            ),
            (
                "\"a\rb\"",
                Some("At line 1 characters 0 to 2, unterminated string"),
            ),
            ("\"a\tb\"", None),
            ("{ 1 ; # a\ttab\r\n  2 }", None),
            ("/* \t\r */ Unit", None),
        ];
        for (source, expected) in cases {
            let words = parse_expression(source).err().map(|e| e.describe(source));
            assert_eq!(words.as_deref(), *expected, "{source:?}");
        }
    }

    /// Each unexpected character is found, as Octez's lexer finds them all; the scan stops at
    /// another kind of lexical error.
    #[test]
    fn every_unexpected_character_is_listed() {
        let source = "{ 1 ;\t2 ; \"\t\" ; # \t\n  ~ ;\r\n  3 }";
        let found: Vec<String> = unexpected_characters(source)
            .iter()
            .map(|e| e.describe(source))
            .collect();
        assert_eq!(
            found,
            [
                "At line 1 character 5, unexpected character \t",
                "At line 2 character 2, unexpected character ~",
                "At line 2 character 5, unexpected character \r",
            ]
        );
        assert!(unexpected_characters("{ 1 ; 2 }").is_empty());
        let stopped = unexpected_characters("~ \"\\q\" ~");
        assert_eq!(stopped.len(), 1);
    }

    /// Octez's layout rule, as data: (source, `None` when it parses, else the error's words).
    #[test]
    fn misaligned_layouts_are_refused_as_octez_refuses_them() {
        let cases: &[(&str, Option<&str>)] = &[
            // `ill_typed/badly_indented.tz`: toplevel fields must start in one column.
            (
                "parameter string;\n  storage string;\n code {CAR; NIL operation; PAIR}",
                Some("At line 2 characters 2 to 16, misaligned expression"),
            ),
            (
                "parameter unit;\nstorage unit;\ncode { CAR ;\n       IF_LEFT\n         { DROP }\n         { DROP } ;\n       NIL operation ; PAIR }",
                None,
            ),
            ("Pair 1\n     2", None),
            // A parenthesised argument starts at its parenthesis.
            ("Pair 1\n     (Some 2)", None),
            ("Pair 1\n  2", Some("At line 2 characters 2 to 3, misaligned expression")),
            // Items after the first may share the line their elder starts on.
            ("{ DROP ; DROP ;\n  DROP }", None),
            ("{ DROP ;\n   DROP }", Some("At line 2 characters 3 to 7, misaligned expression")),
            // The first argument starts right of the application.
            (
                "  PUSH\n nat 1",
                Some("From line 1 character 2 to line 2 character 6, misaligned expression"),
            ),
            // A node ends right of the column it starts in.
            ("{ DROP ;\n}", None),
            (
                "  { DROP ;\n}",
                Some("From line 1 character 2 to line 2 character 1, misaligned expression"),
            ),
            (
                "  {\n }",
                Some("From line 1 character 2 to line 2 character 2, misaligned expression"),
            ),
            // Columns count characters, not bytes.
            ("Pair \"\u{e9}\" 1\n     2", None),
        ];
        for (source, expected) in cases {
            let got = parse_toplevel(source)
                .err()
                .map(|error| error.describe(source));
            assert_eq!(got.as_deref(), *expected, "{source:?}");
        }
    }

    #[test]
    fn depth_100000_parses_without_recursion_and_limit_applies() {
        let depth = 100_000 - 1;
        let source = format!("{}{}", "{ ".repeat(depth), "}".repeat(depth));
        let node = parse_expression(&source).unwrap_or_else(|e| panic!("{e}"));
        drop(node);
        let limited = Limits {
            max_depth: 10,
            ..Limits::default()
        };
        let error = parse_expression_with(&"{".repeat(20), limited).expect_err("too deep");
        assert_eq!(error.kind, ParseErrorKind::TooDeep);
    }
}
