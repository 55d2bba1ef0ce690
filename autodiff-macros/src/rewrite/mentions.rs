//! Which tracked names an expression mentions: the classification behind the rewrite.
//!
//! An expression that mentions no tracked name (no parameter being differentiated, no local
//! computed from one) is plain Rust over data: it is emitted as written. One that does is
//! rewritten into graph operations, or rejected. The scan follows Rust's scoping inside the
//! expression, so a closure parameter or an inner `let` that reuses a tracked name hides
//! it, and it looks into macro tokens (and their format strings) for tracked names.

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{
    Block, Expr, ExprAsync, ExprClosure, ExprForLoop, ExprIf, ExprLet, ExprMatch, ExprMethodCall,
    ExprPath, ExprReturn, ExprWhile, Ident, Item, Local, Macro, Pat, PatIdent, Stmt,
};

/// What a tracked name in scope is, as far as the scan is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tracked {
    /// A tracked value: a scalar, or an array, slice or struct of them.
    Value,
    /// A binding that was rejected (and reported): treated as tracked, so that its uses
    /// are rewritten (and silently dropped) rather than emitted as plain code.
    Rejected,
}

/// The outcome of a scan.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Scan {
    /// A tracked name is used outside any `.detach()` receiver, or inside a macro call.
    pub(crate) tracked: bool,
    /// A tracked name is used inside a `.detach()` receiver.
    pub(crate) detached: bool,
    /// A tracked name appears in a macro call's tokens, where it cannot be rewritten.
    pub(crate) in_macro: bool,
    /// The expression contains a `return` of the function (not of a closure).
    pub(crate) returns: bool,
    /// The expression binds a name that is tracked outside it.
    pub(crate) shadows: bool,
    /// A tracked name other than a rejected binding is used.
    pub(crate) live: bool,
}

impl Scan {
    /// What scanning both `self`'s expression and `other`'s finds: the scan of `a + b` from
    /// those of `a` and `b`.
    pub(crate) fn or(self, other: Scan) -> Scan {
        Scan {
            tracked: self.tracked || other.tracked,
            detached: self.detached || other.detached,
            in_macro: self.in_macro || other.in_macro,
            returns: self.returns || other.returns,
            shadows: self.shadows || other.shadows,
            live: self.live || other.live,
        }
    }

    /// Mentions nothing tracked and returns nothing: ordinary Rust, emitted as written.
    pub(crate) fn is_plain(&self) -> bool {
        !self.tracked && !self.detached && !self.returns
    }

    /// Its tracked names all sit inside `.detach()`: it can be evaluated as ordinary Rust
    /// on their primal values.
    pub(crate) fn is_primal(&self) -> bool {
        !self.tracked && !self.returns
    }
}

/// Scans `expr`; `lookup` says whether a name (as spelled) is tracked in the enclosing
/// scope.
pub(crate) fn scan_expr(expr: &Expr, lookup: &dyn Fn(&str) -> Option<Tracked>) -> Scan {
    let mut scanner = Scanner::new(lookup);
    scanner.visit_expr(expr);
    scanner.scan
}

/// A match arm's pattern and its guard (`pattern if guard`), if any.
pub(crate) fn split_guard(pat: &Pat) -> (&Pat, Option<(&syn::Token![if], &Expr)>) {
    match pat {
        Pat::Guard(guarded) => (&guarded.pat, Some((&guarded.if_token, &guarded.guard))),
        pat => (pat, None),
    }
}

/// Every name a pattern binds (conservatively: a unit variant also counts).
pub(crate) fn pattern_names(pat: &Pat) -> Vec<Ident> {
    struct Names(Vec<Ident>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, pat: &'ast PatIdent) {
            self.0.push(pat.ident.clone());
            visit::visit_pat_ident(self, pat);
        }
        fn visit_expr(&mut self, _expr: &'ast Expr) {
            // Constants in range and literal patterns bind nothing.
        }
    }
    let mut names = Names(Vec::new());
    names.visit_pat(pat);
    names.0
}

/// The tracked names mentioned by the tokens of a macro call, including format-string
/// captures such as `"{x}"`.
pub(crate) fn macro_mentions(
    tokens: &TokenStream,
    lookup: &dyn Fn(&str) -> Option<Tracked>,
) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    tokens.iter().enumerate().any(|(at, token)| match token {
        // `name.len()` is data, as outside a macro (`vec![0.0; keys.len()]`).
        TokenTree::Ident(_) if is_length(&tokens[at + 1..]) => false,
        TokenTree::Ident(ident) => lookup(&ident.to_string()).is_some(),
        TokenTree::Group(group) => macro_mentions(&group.stream(), lookup),
        TokenTree::Literal(literal) => {
            let text = literal.to_string();
            text.starts_with(['"', 'r']) && captures(&text).any(|name| lookup(name).is_some())
        }
        TokenTree::Punct(_) => false,
    })
}

/// Whether `rest` starts with `.len()` or `.is_empty()`.
fn is_length(rest: &[TokenTree]) -> bool {
    match rest {
        [TokenTree::Punct(dot), TokenTree::Ident(method), TokenTree::Group(args), ..] => {
            dot.as_char() == '.'
                && (method == "len" || method == "is_empty")
                && args.delimiter() == proc_macro2::Delimiter::Parenthesis
                && args.stream().is_empty()
        }
        _ => false,
    }
}

/// The names captured by a format string: `{name}` and `{name:...}`.
fn captures(text: &str) -> impl Iterator<Item = &str> {
    text.split('{').skip(1).filter_map(|rest| {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        let starts_well = name.starts_with(|c: char| c.is_alphabetic() || c == '_');
        let closes = rest[end..].starts_with(['}', ':']);
        (starts_well && closes).then_some(name)
    })
}

struct Scanner<'a> {
    lookup: &'a dyn Fn(&str) -> Option<Tracked>,
    /// Names bound inside the scanned code, innermost scope last.
    bound: Vec<Vec<String>>,
    /// How many `.detach()` receivers enclose the current position.
    detached: usize,
    /// How many closures or async blocks enclose the current position.
    closures: usize,
    scan: Scan,
}

impl<'a> Scanner<'a> {
    fn new(lookup: &'a dyn Fn(&str) -> Option<Tracked>) -> Self {
        Scanner {
            lookup,
            bound: vec![Vec::new()],
            detached: 0,
            closures: 0,
            scan: Scan::default(),
        }
    }

    /// The kind of `name` if it is tracked here (not bound inside the scanned code).
    fn tracked(&self, name: &str) -> Option<Tracked> {
        if self
            .bound
            .iter()
            .any(|scope| scope.iter().any(|n| n == name))
        {
            return None;
        }
        (self.lookup)(name)
    }

    /// Whether `expr` is a place `name`, `name[i]`, `name.field`.
    fn is_place(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
            Expr::Index(index) => self.is_place(&index.expr),
            Expr::Field(field) => self.is_place(&field.base),
            Expr::Paren(paren) => self.is_place(&paren.expr),
            _ => false,
        }
    }

    /// Scans the indices of a place, not the place.
    fn visit_indices(&mut self, expr: &Expr) {
        match expr {
            Expr::Index(index) => {
                self.visit_expr(&index.index);
                self.visit_indices(&index.expr);
            }
            Expr::Field(field) => self.visit_indices(&field.base),
            Expr::Paren(paren) => self.visit_indices(&paren.expr),
            _ => {}
        }
    }

    fn mention(&mut self, kind: Tracked) {
        if kind != Tracked::Rejected {
            self.scan.live = true;
        }
        if self.detached > 0 {
            self.scan.detached = true;
        } else {
            self.scan.tracked = true;
        }
    }

    fn bind(&mut self, pat: &Pat) {
        for name in pattern_names(pat) {
            let name = name.to_string();
            if self.tracked(&name).is_some() {
                self.scan.shadows = true;
            }
            if let Some(scope) = self.bound.last_mut() {
                scope.push(name);
            }
        }
    }

    fn local_init(&mut self, local: &Local) {
        if let Some(init) = &local.init {
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
    }

    fn scoped(&mut self, body: impl FnOnce(&mut Self)) {
        self.bound.push(Vec::new());
        body(self);
        self.bound.pop();
    }
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_expr_path(&mut self, path: &'ast ExprPath) {
        if path.qself.is_none() {
            if let Some(ident) = path.path.get_ident() {
                if let Some(kind) = self.tracked(&ident.to_string()) {
                    self.mention(kind);
                }
            }
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if call.method == "detach" && call.args.is_empty() {
            self.detached += 1;
            self.visit_expr(&call.receiver);
            self.detached -= 1;
            return;
        }
        if (call.method == "len" || call.method == "is_empty")
            && call.args.is_empty()
            && self.is_place(&call.receiver)
        {
            // The length of an array, slice or vector is data, tracked elements or not (an
            // `f64` has no `len`); only its indices are scanned.
            self.visit_indices(&call.receiver);
            return;
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        let bound = &self.bound;
        let lookup = self.lookup;
        let free = |name: &str| {
            if bound.iter().any(|scope| scope.iter().any(|n| n == name)) {
                None
            } else {
                lookup(name)
            }
        };
        if macro_mentions(&mac.tokens, &free) {
            self.scan.tracked = true;
            self.scan.in_macro = true;
            self.scan.live = true;
        }
    }

    fn visit_block(&mut self, block: &'ast Block) {
        self.scoped(|scanner| {
            for stmt in &block.stmts {
                match stmt {
                    Stmt::Local(local) => {
                        scanner.local_init(local);
                        scanner.bind(&local.pat);
                    }
                    Stmt::Item(_) => {}
                    stmt => scanner.visit_stmt(stmt),
                }
            }
        });
    }

    fn visit_expr_closure(&mut self, closure: &'ast ExprClosure) {
        self.scoped(|scanner| {
            for input in &closure.inputs {
                scanner.bind(input);
            }
            scanner.closures += 1;
            scanner.visit_expr(&closure.body);
            scanner.closures -= 1;
        });
    }

    fn visit_expr_async(&mut self, block: &'ast ExprAsync) {
        self.closures += 1;
        self.visit_block(&block.block);
        self.closures -= 1;
    }

    fn visit_expr_return(&mut self, ret: &'ast ExprReturn) {
        if self.closures == 0 {
            self.scan.returns = true;
        }
        visit::visit_expr_return(self, ret);
    }

    fn visit_expr_let(&mut self, expr: &'ast ExprLet) {
        self.visit_expr(&expr.expr);
        self.bind(&expr.pat);
    }

    fn visit_expr_if(&mut self, expr: &'ast ExprIf) {
        self.scoped(|scanner| {
            scanner.visit_expr(&expr.cond);
            scanner.visit_block(&expr.then_branch);
        });
        if let Some((_, else_branch)) = &expr.else_branch {
            self.visit_expr(else_branch);
        }
    }

    fn visit_expr_while(&mut self, expr: &'ast ExprWhile) {
        self.scoped(|scanner| {
            scanner.visit_expr(&expr.cond);
            scanner.visit_block(&expr.body);
        });
    }

    fn visit_expr_for_loop(&mut self, expr: &'ast ExprForLoop) {
        self.visit_expr(&expr.expr);
        self.scoped(|scanner| {
            scanner.bind(&expr.pat);
            scanner.visit_block(&expr.body);
        });
    }

    fn visit_expr_match(&mut self, expr: &'ast ExprMatch) {
        self.visit_expr(&expr.expr);
        for arm in &expr.arms {
            self.scoped(|scanner| {
                let (pat, guard) = split_guard(&arm.pat);
                scanner.bind(pat);
                if let Some((_, guard)) = guard {
                    scanner.visit_expr(guard);
                }
                scanner.visit_expr(&arm.body);
            });
        }
    }

    fn visit_item(&mut self, _item: &'ast Item) {
        // Items cannot see the function's locals.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_captures_are_found() {
        let names: Vec<&str> = captures("\"a {x} b {y:.3} {{ {} {0} {z\"").collect();
        assert_eq!(names, ["x", "y"]);
    }
}
