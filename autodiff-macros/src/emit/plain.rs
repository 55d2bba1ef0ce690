//! The plain function: the user's body with `.detach()` removed (detach is the identity on
//! values).

use std::mem;

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Block, Expr, ExprMethodCall, Item, Signature, Visibility};

use quote::quote;

/// The plain function: the user's, without `#[constant]` and with `.detach()` removed.
pub(crate) fn function(
    attrs: &[Attribute],
    vis: &Visibility,
    sig: &Signature,
    block: Block,
) -> TokenStream {
    let sig = crate::parse::signature::without_constant(sig);
    let block = strip_detach(block);
    quote! {
        // Calling only `name_grad` or `name_graph` uses the function: no dead-code warning.
        #[allow(dead_code)]
        #(#attrs)*
        #vis #sig #block
    }
}

/// The body with every `value.detach()` replaced by `value`.
///
/// A `VisitMut` in place rather than a `Fold`: folding moves every expression by value
/// through the recursion, which needs several times the stack on deep expressions.
pub(crate) fn strip_detach(mut block: Block) -> Block {
    StripDetach.visit_block_mut(&mut block);
    block
}

/// `expr` with every `value.detach()` replaced by `value`.
pub(crate) fn strip_detach_expr(expr: &Expr) -> Expr {
    let mut expr = expr.clone();
    StripDetach.visit_expr_mut(&mut expr);
    expr
}

struct StripDetach;

fn is_detach(call: &ExprMethodCall) -> bool {
    call.method == "detach" && call.args.is_empty() && call.turbofish.is_none()
}

impl VisitMut for StripDetach {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        loop {
            let receiver = match expr {
                // A method receiver is already a postfix expression: it needs no parentheses.
                Expr::MethodCall(call) if is_detach(call) => {
                    mem::replace(&mut *call.receiver, Expr::Verbatim(TokenStream::new()))
                }
                _ => break,
            };
            *expr = receiver;
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_item_mut(&mut self, _item: &mut Item) {
        // Items inside the body are copied as written.
    }
}
