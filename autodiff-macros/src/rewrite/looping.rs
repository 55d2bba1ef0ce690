//! Loops: `for` over ranges, data and parameter arrays, `while` on primal conditions, and
//! `loop`. The body is rewritten statement by statement; each iteration records its own
//! operations, so a loop builds the same graph as the loop unrolled by hand.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::quote_spanned;
use quote::{quote, ToTokens};
use syn::{Expr, ExprForLoop, ExprLoop, ExprMethodCall, ExprWhile, Ident, Pat};

use crate::rewrite::value::Value;

use crate::emit::plain::strip_detach_expr;
use crate::rewrite::unsupported;
use crate::rewrite::{unparenthesized, Binding, Rewriter};

/// What one iteration of a `for` loop over tracked values yields.
enum Item {
    /// Data, bound as written.
    Plain,
    /// An element of a parameter array, borrowed (`&V`).
    Tracked,
    /// A pair from `zip` or `enumerate`.
    Pair(Box<Item>, Box<Item>),
}

impl Rewriter<'_> {
    pub(crate) fn for_loop(&mut self, lp: &ExprForLoop) -> TokenStream {
        let scan = self.scan(&lp.expr);
        self.push_scope();
        let head = if scan.tracked {
            match self.iterator(&lp.expr) {
                Some((iter, item)) => match self.bind(&lp.pat, &item) {
                    Some(pat) => Some((pat, iter)),
                    None => {
                        self.errors.push(unsupported::loop_pattern(&lp.pat));
                        None
                    }
                },
                None => {
                    if scan.live {
                        self.errors.push(unsupported::tracked_iterator(&lp.expr));
                    }
                    None
                }
            }
        } else {
            let iter = self.untracked(&lp.expr, unsupported::tracked_iterator);
            self.declare_plain(&lp.pat);
            iter.map(|iter| (lp.pat.to_token_stream(), iter))
        };
        if head.is_none() {
            self.declare_rejected(&lp.pat);
        }
        let body = self.block_stmts(&lp.body);
        self.pop_scope();
        let Some((pat, iter)) = head else {
            self.rejected = true;
            return TokenStream::new();
        };
        let (label, for_token, in_token) = (&lp.label, &lp.for_token, &lp.in_token);
        quote!(#label #for_token #pat #in_token #iter #body)
    }

    pub(crate) fn while_loop(&mut self, lp: &ExprWhile) -> TokenStream {
        self.push_scope();
        let cond = self.condition(&lp.cond, "while let");
        let body = self.block_stmts(&lp.body);
        self.pop_scope();
        let (label, while_token) = (&lp.label, &lp.while_token);
        quote!(#label #while_token #cond #body)
    }

    pub(crate) fn loop_stmt(&mut self, lp: &ExprLoop) -> TokenStream {
        let body = self.block_stmts(&lp.body);
        let (label, loop_token) = (&lp.label, &lp.loop_token);
        quote!(#label #loop_token #body)
    }

    /// An iterator over parameter arrays (`w.iter()`, `w`, `&w`), possibly zipped with data
    /// or enumerated: its tokens in the generated body and the shape of its items.
    fn iterator(&mut self, expr: &Expr) -> Option<(TokenStream, Item)> {
        let expr = unparenthesized(expr);
        if self.is_tracked_place(expr) {
            let place = self.place(expr)?;
            return Some((quote!(#place.iter()), Item::Tracked));
        }
        match expr {
            Expr::Reference(reference)
                if reference.mutability.is_none() && self.is_tracked_place(&reference.expr) =>
            {
                let place = self.place(&reference.expr)?;
                Some((quote!(#place.iter()), Item::Tracked))
            }
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                let method = &call.method;
                let args: Vec<&Expr> = call.args.iter().collect();
                match (method.to_string().as_str(), args.as_slice()) {
                    ("iter", []) if self.is_tracked_place(&call.receiver) => {
                        let place = self.place(&call.receiver)?;
                        Some((quote!(#place.iter()), Item::Tracked))
                    }
                    ("zip", [other]) => {
                        let (left, left_item) = self.iterator(&call.receiver)?;
                        let (right, right_item) = self.iterator(other)?;
                        let item = Item::Pair(Box::new(left_item), Box::new(right_item));
                        Some((quote!(#left.#method(#right)), item))
                    }
                    ("enumerate", []) => {
                        let (inner, item) = self.iterator(&call.receiver)?;
                        let item = Item::Pair(Box::new(Item::Plain), Box::new(item));
                        Some((quote!(#inner.#method()), item))
                    }
                    ("copied" | "cloned" | "flatten", []) => {
                        // Over tracked values the items stay borrowed: a copy of a node is
                        // the node, and the rows of a nested array flatten into borrowed
                        // elements.
                        let (inner, item) = self.iterator(&call.receiver)?;
                        match item {
                            Item::Tracked if method != "flatten" => Some((inner, item)),
                            item => Some((quote!(#inner.#method()), item)),
                        }
                    }
                    ("rev", []) => {
                        let (inner, item) = self.iterator(&call.receiver)?;
                        Some((quote!(#inner.#method()), item))
                    }
                    ("skip" | "take" | "step_by", [count]) if self.scan(count).is_plain() => {
                        let (inner, item) = self.iterator(&call.receiver)?;
                        let count = strip_detach_expr(count);
                        Some((quote!(#inner.#method(#count)), item))
                    }
                    _ => self.data_iterator(expr),
                }
            }
            _ => self.data_iterator(expr),
        }
    }

    fn data_iterator(&self, expr: &Expr) -> Option<(TokenStream, Item)> {
        self.scan(expr)
            .is_plain()
            .then(|| (strip_detach_expr(expr).into_token_stream(), Item::Plain))
    }

    /// The loop pattern for items of shape `item`, declaring the names it binds; `None` if
    /// the pattern does not fit the items.
    fn bind(&mut self, pat: &Pat, item: &Item) -> Option<TokenStream> {
        match (item, pat) {
            (Item::Plain, pat) => {
                self.declare_plain(pat);
                Some(pat.to_token_stream())
            }
            (Item::Tracked, Pat::Ident(ident))
                if ident.by_ref.is_none()
                    && ident.mutability.is_none()
                    && ident.subpat.is_none() =>
            {
                self.declare(&ident.ident, Binding::Param);
                Some(ident.ident.to_token_stream())
            }
            (Item::Tracked, Pat::Reference(reference)) if reference.mutability.is_none() => {
                // `&w_i` copies an `f64` in the plain function; in the graph it is the
                // element itself.
                self.bind(&reference.pat, item)
            }
            (Item::Tracked, Pat::Wild(wild)) => Some(wild.to_token_stream()),
            (Item::Pair(first, second), Pat::Tuple(tuple)) if tuple.elems.len() == 2 => {
                let left = self.bind(&tuple.elems[0], first)?;
                let right = self.bind(&tuple.elems[1], second)?;
                Some(quote!((#left, #right)))
            }
            (_, Pat::Paren(paren)) => self.bind(&paren.pat, item),
            // A closure parameter's type (`|v: &f64|`) says what the plain function sees.
            (_, Pat::Type(typed)) => self.bind(&typed.pat, item),
            _ => None,
        }
    }
}

impl Rewriter<'_> {
    /// `.fold(start, |acc, item| body)` as plain Rust, if `body` is data with `acc` data;
    /// `None` (and nothing reported) if it is not.
    fn data_fold(
        &mut self,
        start: &TokenStream,
        closure: &syn::ExprClosure,
        iter: &TokenStream,
        item: &Item,
    ) -> Option<Value> {
        let (Some(Pat::Ident(acc)), Some(item_pat)) =
            (closure.inputs.first(), closure.inputs.last())
        else {
            return None;
        };
        let (saved_errors, saved_rejected) = (std::mem::take(&mut *self.errors), self.rejected);
        self.push_scope();
        self.declare(&acc.ident, Binding::Plain(None));
        let pattern = self.bind(item_pat, item);
        let value = self.expr(&closure.body);
        self.pop_scope();
        let attempt = std::mem::replace(&mut *self.errors, saved_errors);
        let rejected = std::mem::replace(&mut self.rejected, saved_rejected);
        let (Some(pattern), Value::Plain(body, _), true, false) =
            (pattern, value, attempt.is_empty(), rejected)
        else {
            return None;
        };
        let acc = &acc.ident;
        Some(Value::Plain(
            quote!({
                let mut #acc = #start;
                for #pattern in #iter {
                    #acc = #body;
                }
                #acc
            }),
            None,
        ))
    }
}

/// An iterator fold the rewrite records: `.sum()`, `.product()` (each optionally after one
/// `.map(|item| ..)`) and `.fold(init, |acc, item| ..)`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FoldKind {
    Sum,
    Product,
    Fold,
}

impl Rewriter<'_> {
    /// The kind of fold `call` is, if it is one.
    pub(crate) fn fold_kind(&self, call: &ExprMethodCall) -> Option<FoldKind> {
        let args = call.args.len();
        match (call.method.to_string().as_str(), args) {
            ("sum", 0) => Some(FoldKind::Sum),
            ("product", 0) => Some(FoldKind::Product),
            ("fold", 2) if call.turbofish.is_none() => match call.args.last() {
                Some(Expr::Closure(closure)) if closure.inputs.len() == 2 => Some(FoldKind::Fold),
                _ => None,
            },
            _ => None,
        }
    }

    /// A fold over tracked values (or over data, with a closure that uses tracked values),
    /// as the loop that computes it: each item's value is one more operand of a running
    /// sum, product or accumulator, in the iterator's order, as the plain function adds
    /// them.
    pub(crate) fn fold(&mut self, call: &ExprMethodCall) -> Value {
        let Some(kind) = self.fold_kind(call) else {
            return self.invalid();
        };
        let (source, closure, init) = match kind {
            FoldKind::Fold => match (call.args.first(), call.args.last()) {
                (Some(init), Some(Expr::Closure(closure))) => {
                    (&*call.receiver, Some(closure), Some(init))
                }
                _ => return self.invalid(),
            },
            _ => match unparenthesized(&call.receiver) {
                Expr::MethodCall(map) if map.method == "map" && map.args.len() == 1 => {
                    match map.args.first() {
                        Some(Expr::Closure(closure)) if closure.inputs.len() == 1 => {
                            (&*map.receiver, Some(closure), None)
                        }
                        _ => (&*call.receiver, None, None),
                    }
                }
                receiver => (receiver, None, None),
            },
        };
        if let Some(closure) = closure {
            if self.scan(&closure.body).returns {
                self.errors.push(unsupported::nested_return(&closure.body));
                return self.invalid();
            }
        }
        let start = init.map(|init| self.expr(init));
        let Some((iter, item)) = self.iterator(source) else {
            self.errors.push(unsupported::tracked_iterator(source));
            return self.invalid();
        };
        if let (Some(Value::Plain(start, None)), Some(closure)) = (&start, closure) {
            // A fold whose every step is data (`.fold(f64::NEG_INFINITY, |m, &z|
            // m.max(z.detach()))`) is data: its accumulator never holds a tracked value.
            if let Some(plain) = self.data_fold(start, closure, &iter, &item) {
                return plain;
            }
        }
        let start = match (start, init) {
            (Some(value), Some(init)) => Some(self.scalar_operand(value, init)),
            _ => None,
        };
        let backend = crate::rewrite::backend();
        let private = quote!(::scalar_autodiff::__private);
        let each = Ident::new("item", Span::mixed_site());
        let total = Ident::new("total", Span::mixed_site());
        self.push_scope();
        let inputs: Vec<&Pat> = closure
            .map(|closure| closure.inputs.iter().collect())
            .unwrap_or_default();
        let accumulator = match (kind, inputs.first()) {
            (FoldKind::Fold, Some(Pat::Ident(acc)))
                if acc.by_ref.is_none() && acc.subpat.is_none() =>
            {
                self.declare(&acc.ident, Binding::Local);
                Some(acc.ident.clone())
            }
            (FoldKind::Fold, input) => {
                if let Some(input) = input {
                    self.errors.push(unsupported::loop_pattern(input));
                }
                self.pop_scope();
                return self.invalid();
            }
            _ => None,
        };
        let item_pat = match kind {
            FoldKind::Fold => inputs.get(1).copied(),
            _ => inputs.first().copied(),
        };
        let pattern = match item_pat {
            Some(pat) => self.bind(pat, &item),
            None => {
                self.declare(&each, Binding::Param);
                Some(each.to_token_stream())
            }
        };
        let Some(pattern) = pattern else {
            if let Some(pat) = item_pat {
                self.errors.push(unsupported::loop_pattern(pat));
            }
            self.pop_scope();
            return self.invalid();
        };
        let value = match closure {
            Some(closure) => {
                let value = self.expr(&closure.body);
                self.scalar_operand(value, &closure.body)
            }
            None => match item {
                Item::Tracked => Value::Name(each.clone(), Binding::Param),
                _ => {
                    self.errors.push(unsupported::tracked_iterator(source));
                    self.invalid()
                }
            },
        };
        self.pop_scope();
        let valid = value.is_valid() && start.as_ref().is_none_or(Value::is_valid);
        if !valid {
            return self.invalid();
        }
        let owned = value.owned();
        let span = call.method.span();
        match (kind, accumulator, start) {
            (FoldKind::Fold, Some(acc), Some(start)) => {
                let start = start.owned();
                Value::Node(quote_spanned!(span=> {
                    let mut #acc = #start;
                    for #pattern in #iter {
                        #acc = #owned;
                    }
                    #acc
                }))
            }
            (FoldKind::Product, _, _) => Value::Node(quote_spanned!(span=> {
                let mut #total = #private::Fold::new();
                for #pattern in #iter {
                    #total.mul(#backend, #owned)?;
                }
                #total.product(#backend)?
            })),
            _ => Value::Node(quote_spanned!(span=> {
                let mut #total = #private::Fold::new();
                for #pattern in #iter {
                    #total.add(#backend, #owned)?;
                }
                #total.sum(#backend)?
            })),
        }
    }
}
