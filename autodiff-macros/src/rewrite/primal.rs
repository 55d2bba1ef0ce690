//! Primal contexts: conditions, match guards and `.detach()`ed values, evaluated as ordinary
//! Rust on the primal values of tracked names.
//!
//! No gradient flows through a comparison or a detached value, so such an expression is the
//! user's own Rust with every tracked name `x` replaced by its value,
//! `__backend.value(&x)`, and every `.detach()` removed: exactly what the plain function
//! computes, bit for bit.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, ExprMethodCall, Item, Macro};

use crate::rewrite::mentions::{macro_mentions, Scan, Tracked};
use crate::rewrite::unsupported;
use crate::rewrite::{backend, Binding, Rewriter};

impl Rewriter<'_> {
    /// `expr` evaluated on primal values; `None` if something in it was rejected (and
    /// reported).
    pub(crate) fn primal(&mut self, expr: &Expr, scan: &Scan) -> Option<TokenStream> {
        if scan.returns {
            self.errors.push(unsupported::nested_return(expr));
            return None;
        }
        if scan.shadows && !scan.is_plain() {
            self.errors.push(unsupported::shadowed_in_primal(expr));
            return None;
        }
        let mut expr = expr.clone();
        let mut substitute = Substitute {
            rewriter: self,
            failed: false,
        };
        substitute.visit_expr_mut(&mut expr);
        if substitute.failed {
            self.rejected = true;
            None
        } else {
            Some(expr.into_token_stream())
        }
    }
}

struct Substitute<'r, 'a> {
    rewriter: &'r mut Rewriter<'a>,
    failed: bool,
}

fn is_detach(call: &ExprMethodCall) -> bool {
    call.method == "detach" && call.args.is_empty() && call.turbofish.is_none()
}

impl Substitute<'_, '_> {
    /// The primal value of the tracked name or element `tokens` bound as `binding`.
    fn value(&mut self, tokens: TokenStream, binding: Binding, span: proc_macro2::Span) -> Expr {
        let backend = backend();
        let reference = match binding {
            Binding::Param => quote!(),
            _ => quote!(&),
        };
        Expr::Verbatim(quote_spanned!(span=> #backend.value(#reference #tokens)))
    }
}

impl Substitute<'_, '_> {
    /// Substitutes inside the indices of a place, leaving the place itself as written.
    fn visit_indices(&mut self, place: &mut Expr) {
        match place {
            Expr::Index(index) => {
                self.visit_expr_mut(&mut index.index);
                self.visit_indices(&mut index.expr);
            }
            Expr::Field(field) => self.visit_indices(&mut field.base),
            Expr::Paren(paren) => self.visit_indices(&mut paren.expr),
            _ => {}
        }
    }
}

impl VisitMut for Substitute<'_, '_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        loop {
            let receiver = match expr {
                Expr::MethodCall(call) if is_detach(call) => {
                    std::mem::replace(&mut *call.receiver, Expr::Verbatim(TokenStream::new()))
                }
                _ => break,
            };
            *expr = receiver;
        }
        match expr {
            Expr::Path(path) => {
                let Some((ident, binding)) = self.rewriter.local_name(path) else {
                    return;
                };
                match binding {
                    Binding::Plain(_) => {}
                    Binding::Rejected => self.failed = true,
                    Binding::Array => {
                        self.rewriter.errors.push(unsupported::whole_array(path));
                        self.failed = true;
                    }
                    Binding::Param | Binding::Local | Binding::Fixed => {
                        let span = ident.span();
                        *expr = self.value(ident.into_token_stream(), binding, span);
                    }
                }
            }
            Expr::Index(_) | Expr::Field(_) if self.rewriter.is_tracked_place(expr) => {
                // `w[i][j]`, `p.w1[i]`: the element's primal value, its indices data.
                self.visit_indices(expr);
                let span = expr.span();
                *expr = self.value(expr.to_token_stream(), Binding::Fixed, span);
            }
            Expr::MethodCall(call)
                if (call.method == "len" || call.method == "is_empty")
                    && call.args.is_empty()
                    && self.rewriter.is_tracked_place(&call.receiver) =>
            {
                // The length of a tracked array is data.
                self.visit_indices(&mut call.receiver);
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut Macro) {
        let rewriter = &*self.rewriter;
        let live = |name: &str| {
            rewriter
                .tracked_name(name)
                .filter(|kind| *kind != Tracked::Rejected)
        };
        if macro_mentions(&mac.tokens, &live) {
            self.rewriter.errors.push(unsupported::macro_call(mac));
            self.failed = true;
        } else if macro_mentions(&mac.tokens, &|name| rewriter.tracked_name(name)) {
            self.failed = true;
        }
    }

    fn visit_item_mut(&mut self, _item: &mut Item) {}
}
