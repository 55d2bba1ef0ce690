//! Calls to other `#[differentiable]` functions: `g(a, xs)` with a tracked argument records
//! `g`'s operations into the same graph, through `g`'s hidden generic body.
//!
//! The attribute sees only this function's tokens, so it cannot know whether `g` is
//! differentiable. It calls `differentiable_g` (see `emit::body_ident`), which exists only
//! beside a `#[differentiable] fn g`; for any other function, rustc's own error then reads
//! "cannot find function `differentiable_g`", pointing at the call. Each tracked argument is
//! lent as `Tracked(&value)`, and data is passed as written; `g`'s signature decides what
//! each becomes (`__private::ScalarArgument`, `ArrayArgument`), so an argument reused across
//! calls is one node whose every use is an edge.

use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprCall};

use crate::emit::body_ident;
use crate::rewrite::{backend, f64_function, unparenthesized, Rewriter};
use crate::value::Value;

impl Rewriter<'_> {
    /// Whether `call` names a function by a path, as a `#[differentiable]` callee would be.
    pub(crate) fn composable(&self, call: &ExprCall) -> bool {
        if f64_function(call).is_some() {
            return false;
        }
        let Expr::Path(path) = unparenthesized(&call.func) else {
            return false;
        };
        // A local (such as a closure) is not a function the attribute could have seen.
        let local = self.local_name(path).is_some();
        path.qself.is_none()
            && !local
            && path
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.arguments.is_none())
    }

    /// The call of `g`'s hidden generic body on this function's backend.
    pub(crate) fn compose(&mut self, call: &ExprCall) -> Value {
        let Expr::Path(path) = unparenthesized(&call.func) else {
            return self.invalid();
        };
        let mut callee = path.path.clone();
        if let Some(last) = callee.segments.last_mut() {
            // Spanned on the user's callee, so that rustc's error points at the call.
            last.ident = body_ident(&last.ident);
        }
        let private = quote!(::autodiff::__private);
        let mut args = Vec::new();
        let mut valid = true;
        for arg in &call.args {
            let value = self.expr(arg);
            if value.is_tracked() {
                let operand = value.operand();
                args.push(quote!(#private::Tracked(#operand)));
            } else if value.is_valid() {
                args.push(value.plain());
            } else {
                valid = false;
            }
        }
        if !valid {
            return self.invalid();
        }
        let backend = backend();
        let span = call.func.span();
        Value::Node(quote_spanned!(span=> #callee(#backend #(, #args)*)?))
    }
}
