//! How deep an item nests, measured on its tokens before syn parses them.
//!
//! syn's parser recurses, on the compiler's own stack, into every bracket, brace and
//! parenthesis, every list of generic arguments, and every operator still waiting for its
//! right-hand side: a prefix operator (`-`, `!`, `&`, `*`), a `return`, `break` or closure
//! taking the rest of the expression, and each step up the precedence ladder (`a | b ^ c &
//! d << e + f * g` keeps six operators pending; `a + b + c` keeps one, however long). The
//! sweeps parse the rewritten body again, deeper still. Built for debug, the default for
//! proc macros, this costs some 3 KiB of stack a prefix operator, 5 KiB a pending binary
//! operator, 9 KiB a parenthesis, 23 KiB a square bracket of a type, 30 KiB a block and
//! 38 KiB a list of generic arguments: a few hundred levels overflow the 8 MiB rustc runs
//! macros on, and rustc reports that as a crash naming no line. [`too_deep`] counts
//! levels with an explicit stack instead, a block, a square bracket or a list of generic
//! arguments as two, and reports the first token past [`LIMIT`].

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};

use crate::lesson::lesson_at;

/// The most levels an item may nest: far beyond what anyone writes by hand, and under half
/// of the stack where it overflows. Measured on rustc 1.95 with this crate built for debug,
/// without this limit the first overflows come at 224 nested blocks, 178 nested
/// `Option<..>`, 293 nested array types `[[f64; 1]; 1]` in a derive, 332 levels of Horner's
/// scheme `1.0 + x * (2.0 + x * (..))`, 728 nested parentheses, 150 levels of `n | n ^ n &
/// n << n + n * -(..)` and 2432 `-` in a row; with it, the most each may nest is 64, 64,
/// 64, 42, 128, 16 and 128.
pub(crate) const LIMIT: usize = 128;

/// The error on the first token of `tokens` nested deeper than [`LIMIT`] levels, if any:
/// `item` names what nests (`"the function"`), `instead` says what to write.
pub(crate) fn too_deep(tokens: &TokenStream, item: &str, instead: &str) -> Option<syn::Error> {
    let span = past_limit(tokens)?;
    Some(lesson_at(
        span,
        &format!("{item} nests deeper than {LIMIT} levels here"),
        "the macro parses it recursively on the compiler's stack: a level for every \
         parenthesis and every operator still waiting for its right-hand side, two for a \
         block, a square bracket or a list of generic arguments; much deeper, it would \
         overflow that stack, which rustc reports as a crash rather than an error",
        instead,
    ))
}

/// How a pending operator binds, from loosest to tightest, as in syn's parser. An operator
/// stays pending (and keeps its parser frames on the stack) until one that binds as loosely
/// or more loosely ends its right-hand side.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Binding {
    /// `return`, `break`, `yield` and closures: they take everything up to the next `,`
    /// or `;`.
    Rest,
    Assign,
    Range,
    Or,
    And,
    Compare,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Sum,
    Product,
    Cast,
    Prefix,
}

/// One group being read: the levels around it and the operators pending inside it.
struct Level {
    tokens: std::iter::Peekable<proc_macro2::token_stream::IntoIter>,
    /// The levels around the group's tokens.
    depth: usize,
    /// The operators waiting for their right-hand side (or operand), loosest first.
    pending: Vec<Binding>,
    /// Whether the next token starts an operand (so `-`, `&`, `*`, `!` or `|` is a prefix).
    operand_next: bool,
    /// Whether the tokens are a closure's parameters, between its `|`s.
    parameters: bool,
    /// Whether a `let`, `const` or `type` waits for its `=`, which is no operator.
    declaration: bool,
    /// The generic argument lists open, such as the two of `Option<Vec<` (each two levels).
    angles: usize,
    /// Whether the last token may name a generic type or function: `::` or a capitalized
    /// name (`Vec`), so that a `<` after it opens generic arguments rather than compares.
    path: bool,
}

impl Level {
    fn new(tokens: TokenStream, depth: usize) -> Self {
        Level {
            tokens: tokens.into_iter().peekable(),
            depth,
            pending: Vec::new(),
            operand_next: true,
            parameters: false,
            declaration: false,
            angles: 0,
            path: false,
        }
    }

    /// The levels a token read now stands at.
    fn levels(&self) -> usize {
        self.depth + self.pending.len() + 2 * self.angles
    }

    /// Records an infix operator: it ends the right-hand sides of the pending operators
    /// that bind at least as tightly (`=` groups to the right, so not another `=`).
    fn infix(&mut self, binding: Binding) {
        while let Some(&top) = self.pending.last() {
            if top > binding || (top == binding && binding != Binding::Assign) {
                self.pending.pop();
            } else {
                break;
            }
        }
        self.pending.push(binding);
        self.operand_next = true;
    }

    /// Records an operator that binds the operand after it.
    fn prefix(&mut self, binding: Binding) {
        self.pending.push(binding);
        self.operand_next = true;
    }

    /// Takes the punctuation starting with `first`: the longest operator it begins (`<<=`,
    /// `&&`, `..`), or the single character.
    fn punct(&mut self, first: char, joint: bool) -> String {
        let mut op = first.to_string();
        let mut joint = joint;
        while joint {
            let Some(TokenTree::Punct(next)) = self.tokens.peek() else {
                break;
            };
            let longer = format!("{op}{}", next.as_char());
            if !OPERATORS.contains(&longer.as_str()) {
                break;
            }
            joint = next.spacing() == Spacing::Joint;
            op = longer;
            self.tokens.next();
        }
        op
    }
}

/// The operators of more than one character.
const OPERATORS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=",
    "<<=", ">>=", "..", "..=", "...", "::", "->", "=>",
];

/// The span of the first token nested deeper than [`LIMIT`] levels: of an opening bracket,
/// or of an operator.
fn past_limit(tokens: &TokenStream) -> Option<Span> {
    let mut stack = vec![Level::new(tokens.clone(), 0)];
    loop {
        let top = stack.len() == 1;
        // An empty stack: every group read, none too deep.
        let level = stack.last_mut()?;
        let Some(token) = level.tokens.next() else {
            stack.pop();
            continue;
        };
        match token {
            TokenTree::Group(group) => {
                // The item's own brackets (its parameters, its body) are level 0.
                let depth = match group.delimiter() {
                    _ if top => 0,
                    Delimiter::Brace | Delimiter::Bracket => level.levels() + 2,
                    Delimiter::Parenthesis | Delimiter::None => level.levels() + 1,
                };
                level.operand_next = false;
                level.path = false;
                if group.delimiter() == Delimiter::Brace {
                    // A block ends a statement: a `<` before it (`if N < M {`) compared.
                    level.angles = 0;
                }
                if depth > LIMIT {
                    return Some(match group.delimiter() {
                        Delimiter::None => group.span(),
                        _ => group.span_open(),
                    });
                }
                stack.push(Level::new(group.stream(), depth));
            }
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                level.path = word.starts_with(|c: char| c.is_ascii_uppercase());
                match word.as_str() {
                    "return" | "break" | "yield" => level.prefix(Binding::Rest),
                    "as" => level.infix(Binding::Cast),
                    "let" | "const" | "type" => {
                        level.declaration = true;
                        level.operand_next = true;
                    }
                    // The token after these starts an operand: `&mut -x`, `if !done`.
                    "mut" | "in" | "if" | "while" | "match" | "else" | "move" | "static"
                    | "async" | "box" | "raw" | "dyn" | "impl" => {
                        level.operand_next = true;
                    }
                    _ => level.operand_next = false,
                }
                if level.levels() > LIMIT {
                    return Some(ident.span());
                }
            }
            TokenTree::Literal(_) => {
                level.operand_next = false;
                level.path = false;
            }
            // Each `>` of `Option<Vec<f64>>` closes generic arguments.
            TokenTree::Punct(punct) if punct.as_char() == '>' && level.angles > 0 => {
                level.angles -= 1;
                level.operand_next = false;
                level.path = false;
            }
            TokenTree::Punct(punct) => {
                let span = punct.span();
                let joint = punct.spacing() == Spacing::Joint;
                let op = level.punct(punct.as_char(), joint);
                let path = std::mem::replace(&mut level.path, op == "::");
                match (op.as_str(), level.operand_next) {
                    // The end of a closure's parameters: its body follows.
                    ("|", _) if level.parameters => {
                        level.parameters = false;
                        level.operand_next = true;
                    }
                    // `|x||y| ..`: the first closure's body is the second closure.
                    ("||", _) if level.parameters => level.prefix(Binding::Rest),
                    (_, _) if level.parameters => {}
                    // Generic arguments: `Vec<`, `collect::<`, or `<T as Trait>::` in place
                    // of an operand.
                    ("<", operand) if operand || path => {
                        level.angles += 1;
                        level.operand_next = true;
                    }
                    // A new generic argument, expression, element or arm.
                    ("," | ";" | "=>", _) => {
                        level.pending.clear();
                        if op != "," {
                            level.angles = 0;
                        }
                        level.declaration = false;
                        level.operand_next = true;
                    }
                    // The value of a `let`, `const` or `type`.
                    ("=", _) if level.declaration => {
                        level.declaration = false;
                        level.operand_next = true;
                    }
                    ("-" | "!" | "*" | "&", true) => level.prefix(Binding::Prefix),
                    ("&&", true) => {
                        level.prefix(Binding::Prefix);
                        level.prefix(Binding::Prefix);
                    }
                    ("|", true) => {
                        level.prefix(Binding::Rest);
                        level.parameters = true;
                    }
                    ("||", true) => level.prefix(Binding::Rest),
                    (".." | "..=", true) => level.prefix(Binding::Range),
                    // A macro call's `!`, a method call's `.`, a path's `::`, the `?`
                    // operator, a lifetime's `'`, an attribute's `#`: no operator pending.
                    ("!" | "." | "::" | "?" | "'" | "#" | "$" | "@" | "->" | ":" | "~", _) => {
                        level.operand_next = op != "?" && op != "'";
                    }
                    (op, _) => match infix_binding(op) {
                        Some(binding) => level.infix(binding),
                        None => level.operand_next = true,
                    },
                }
                if level.levels() > LIMIT {
                    return Some(span);
                }
            }
        }
    }
}

/// How an infix operator binds.
fn infix_binding(op: &str) -> Option<Binding> {
    Some(match op {
        "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=" | "&=" | "|=" | "<<=" | ">>=" => {
            Binding::Assign
        }
        ".." | "..=" => Binding::Range,
        "||" => Binding::Or,
        "&&" => Binding::And,
        "==" | "!=" | "<" | ">" | "<=" | ">=" => Binding::Compare,
        "|" => Binding::BitOr,
        "^" => Binding::BitXor,
        "&" => Binding::BitAnd,
        "<<" | ">>" => Binding::Shift,
        "+" | "-" => Binding::Sum,
        "*" | "/" | "%" => Binding::Product,
        _ => return None,
    })
}
