//! Loops: `for` over ranges, data and parameter arrays, `while` on primal conditions, and
//! `loop`. The body is rewritten statement by statement; each iteration records its own
//! operations, so a loop builds the same graph as the loop unrolled by hand.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Expr, ExprForLoop, ExprLoop, ExprWhile, Pat};

use crate::plain::strip_detach_expr;
use crate::rewrite::{unparenthesized, Binding, Rewriter};
use crate::unsupported;

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
        if self.is_array(expr) {
            return Some((quote!(#expr.iter()), Item::Tracked));
        }
        match expr {
            Expr::Reference(reference)
                if reference.mutability.is_none() && self.is_array(&reference.expr) =>
            {
                let array = &reference.expr;
                Some((quote!(#array.iter()), Item::Tracked))
            }
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                let method = &call.method;
                let args: Vec<&Expr> = call.args.iter().collect();
                match (method.to_string().as_str(), args.as_slice()) {
                    ("iter", []) if self.is_array(&call.receiver) => {
                        Some((expr.to_token_stream(), Item::Tracked))
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
            _ => None,
        }
    }
}
