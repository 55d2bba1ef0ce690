//! Branches: `if` / `else if` / `else` and `match`, as statements and as values.
//!
//! They keep their shape in the generated body: conditions and guards are read on primal
//! values (`primal.rs`), a scrutinee must be data, and only the branch taken runs, so the
//! branch not taken records nothing. A branch used as a value is tracked if any arm's value
//! is; its plain arms then become constants.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{BinOp, Expr, ExprIf, ExprMatch};

use crate::desugar;
use crate::emit::plain::strip_detach_expr;
use crate::rewrite::mentions::split_guard;
use crate::rewrite::unsupported;
use crate::rewrite::value::Value;
use crate::rewrite::Rewriter;

impl Rewriter<'_> {
    /// An `if` in statement position.
    pub(crate) fn if_stmt(&mut self, branch: &ExprIf) -> TokenStream {
        self.push_scope();
        let cond = self.condition(&branch.cond, "if let");
        let then = self.block_stmts(&branch.then_branch);
        self.pop_scope();
        let if_token = &branch.if_token;
        let otherwise = match &branch.else_branch {
            None => TokenStream::new(),
            Some((else_token, expr)) => {
                let expr = match &**expr {
                    Expr::If(inner) => self.if_stmt(inner),
                    Expr::Block(block) => self.block_stmts(&block.block),
                    expr => self.stmt(&syn::Stmt::Expr(expr.clone(), None)),
                };
                quote!(#else_token #expr)
            }
        };
        quote!(#if_token #cond #then #otherwise)
    }

    /// The condition of an `if` or `while`, on primal values; the names a `let` in it binds
    /// are declared (as data) in the current scope.
    pub(crate) fn condition(&mut self, cond: &Expr, keyword: &str) -> TokenStream {
        if let Some((scrutinee, pat)) = desugar::arm_test(cond) {
            // An arm of a `match` read as an `if` chain (`desugar`): its scrutinee is data,
            // as a `match`'s must be.
            let value = self.untracked(&scrutinee, |expr| {
                unsupported::tracked_scrutinee(expr, "match")
            });
            // The scans are cached by address, and `scrutinee` is about to be dropped.
            self.forget_scans();
            return value.map_or_else(TokenStream::new, |value| {
                quote!(::core::matches!(#value, #pat))
            });
        }
        match cond {
            Expr::Let(binding) => {
                let value = self.untracked(&binding.expr, |expr| {
                    unsupported::tracked_scrutinee(expr, keyword)
                });
                let (let_token, pat, eq) = (&binding.let_token, &binding.pat, &binding.eq_token);
                match value {
                    Some(value) => {
                        self.declare_plain(pat);
                        quote!(#let_token #pat #eq #value)
                    }
                    None => {
                        self.declare_rejected(pat);
                        TokenStream::new()
                    }
                }
            }
            Expr::Binary(binary)
                if matches!(binary.op, BinOp::And(_))
                    && (has_let(cond) || desugar::arm_test(&binary.left).is_some()) =>
            {
                let left = self.condition(&binary.left, keyword);
                let right = self.condition(&binary.right, keyword);
                let op = &binary.op;
                quote!(#left #op #right)
            }
            _ => {
                let scan = self.scan(cond);
                if scan.is_plain() {
                    strip_detach_expr(cond).into_token_stream()
                } else {
                    self.primal(cond, &scan).unwrap_or_default()
                }
            }
        }
    }

    /// A `match` in statement position.
    pub(crate) fn match_stmt(&mut self, branch: &ExprMatch) -> TokenStream {
        let scrutinee = self.untracked(&branch.expr, |expr| {
            unsupported::tracked_scrutinee(expr, "match")
        });
        let mut arms = TokenStream::new();
        for arm in &branch.arms {
            self.push_scope();
            let (pat, guard) = split_guard(&arm.pat);
            self.declare_plain(pat);
            let guard = guard.map(|(if_token, guard)| {
                let guard = self.condition(guard, "if let");
                quote!(#if_token #guard)
            });
            let body = match &*arm.body {
                Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                    self.block_stmts(&block.block)
                }
                body => {
                    let stmt = self.stmt(&syn::Stmt::Expr(body.clone(), None));
                    quote!({ #stmt })
                }
            };
            self.pop_scope();
            let (attrs, arrow) = (&arm.attrs, &arm.fat_arrow_token);
            arms.extend(quote!(#(#attrs)* #pat #guard #arrow #body,));
        }
        match scrutinee {
            Some(scrutinee) => {
                let match_token = &branch.match_token;
                quote!(#match_token #scrutinee { #arms })
            }
            None => TokenStream::new(),
        }
    }

    /// An `if` with an `else` in value position.
    pub(crate) fn if_value(&mut self, branch: &ExprIf) -> Value {
        let mut heads = Vec::new();
        let mut bodies = Vec::new();
        let mut current = branch;
        loop {
            self.push_scope();
            let cond = self.condition(&current.cond, "if let");
            let body = self.value_block(&current.then_branch);
            self.pop_scope();
            let if_token = &current.if_token;
            heads.push(quote!(#if_token #cond));
            bodies.push(body);
            match current.else_branch.as_ref().map(|(_, expr)| &**expr) {
                Some(Expr::If(inner)) if inner.else_branch.is_some() => current = inner,
                Some(Expr::Block(block)) => {
                    heads.push(TokenStream::new());
                    bodies.push(self.value_block(&block.block));
                    break;
                }
                Some(expr) => {
                    self.errors.push(unsupported::expr(expr));
                    return self.invalid();
                }
                None => {
                    self.errors
                        .push(unsupported::expr(&Expr::If(current.clone())));
                    return self.invalid();
                }
            }
        }
        let Some((tails, kind)) = self.merge(bodies.iter().map(|(_, tail)| tail)) else {
            return self.invalid();
        };
        let mut tokens = TokenStream::new();
        for (index, ((head, (stmts, _)), tail)) in heads.iter().zip(&bodies).zip(tails).enumerate()
        {
            if index > 0 {
                tokens.extend(quote!(else));
            }
            tokens.extend(quote!(#head { #stmts #tail }));
        }
        kind.value(tokens)
    }

    /// A `match` in value position.
    pub(crate) fn match_value(&mut self, branch: &ExprMatch) -> Value {
        let scrutinee = self.untracked(&branch.expr, |expr| {
            unsupported::tracked_scrutinee(expr, "match")
        });
        let mut heads = Vec::new();
        let mut bodies = Vec::new();
        for arm in &branch.arms {
            self.push_scope();
            let (pat, guard) = split_guard(&arm.pat);
            self.declare_plain(pat);
            let guard = guard.map(|(if_token, guard)| {
                let guard = self.condition(guard, "if let");
                quote!(#if_token #guard)
            });
            let body = match &*arm.body {
                Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                    self.value_block(&block.block)
                }
                body => (TokenStream::new(), self.expr(body)),
            };
            self.pop_scope();
            let (attrs, arrow) = (&arm.attrs, &arm.fat_arrow_token);
            heads.push(quote!(#(#attrs)* #pat #guard #arrow));
            bodies.push(body);
        }
        let Some(scrutinee) = scrutinee else {
            return self.invalid();
        };
        let Some((tails, kind)) = self.merge(bodies.iter().map(|(_, tail)| tail)) else {
            return self.invalid();
        };
        let mut arms = TokenStream::new();
        for ((head, (stmts, _)), tail) in heads.iter().zip(&bodies).zip(tails) {
            arms.extend(quote!(#head { #stmts #tail },));
        }
        let match_token = &branch.match_token;
        kind.value(quote!(#match_token #scrutinee { #arms }))
    }

    /// The tails of a branch's arms, all of one kind: tracked if any is (plain ones become
    /// constants), otherwise plain, or diverging if every arm leaves. `None` if any was
    /// rejected.
    fn merge<'v>(
        &mut self,
        tails: impl Iterator<Item = &'v Value> + Clone,
    ) -> Option<(Vec<TokenStream>, Merged)> {
        if !tails.clone().all(Value::is_valid) {
            return None;
        }
        if tails.clone().any(Value::is_tracked) {
            let mut out = Vec::new();
            for tail in tails {
                let tracked = match tail {
                    Value::Plain(plain, error) => {
                        self.track(Value::Plain(plain.clone(), error.clone()))
                    }
                    Value::Diverge(tokens) => Value::Diverge(tokens.clone()),
                    // (A name or an element as it is: a copy, as a statement's.)
                    tail => Value::Node(self.copy_of(tail)),
                };
                if !tracked.is_valid() {
                    return None;
                }
                out.push(tracked.owned());
            }
            return Some((out, Merged::Tracked));
        }
        let kind = if tails.clone().all(|tail| matches!(tail, Value::Diverge(_))) {
            Merged::Diverge
        } else {
            Merged::Plain
        };
        Some((tails.map(Value::plain).collect(), kind))
    }
}

/// What a branch's arms merge into.
enum Merged {
    Tracked,
    Plain,
    Diverge,
}

impl Merged {
    fn value(self, tokens: TokenStream) -> Value {
        match self {
            Merged::Tracked => Value::Node(tokens),
            Merged::Plain => Value::Plain(tokens, None),
            Merged::Diverge => Value::Diverge(tokens),
        }
    }
}

/// Whether a condition contains a `let` (an `if let` chain).
fn has_let(cond: &Expr) -> bool {
    match cond {
        Expr::Let(_) => true,
        Expr::Binary(binary) if matches!(binary.op, BinOp::And(_)) => {
            has_let(&binary.left) || has_let(&binary.right)
        }
        _ => false,
    }
}
