//! Why the rewrite rejects a construct, worded for a learner.
//!
//! [`expr`] and [`stmt`] are called only from the catch-all arms of the rewrite in
//! `rewrite.rs`: every construct without a supported arm there ends up here, and gets a
//! message saying what is unsupported, why, and what to write instead.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{BinOp, Block, Expr, ExprCall, ExprMethodCall, Item, Lit, Local, Pat, Stmt, UnOp};

use crate::lesson::lesson;
use crate::ops::{self, Shape};
use crate::rewrite::f64_function;

/// What a body may contain, for the `help:` line of a generic rejection.
const WHAT_WORKS: &str = "write the math with `f64` literals, the parameters, `let` bindings, \
     `+ - * /`, unary `-` and the `f64` methods the runtime differentiates";

/// Why a branch or loop is rejected.
const NOT_YET: &str = "the rewrite handles straight-line code only: branches (`if`, `match`) \
     and loops are planned for a later version";

/// Why an expression cannot be rewritten.
pub(crate) fn expr(expr: &Expr) -> syn::Error {
    match expr {
        Expr::Lit(lit) => literal(&lit.lit),
        Expr::MethodCall(call) => method(call),
        Expr::Call(call) => function(call),
        Expr::Binary(binary) => operator(&binary.op, expr),
        Expr::Unary(unary) => match unary.op {
            UnOp::Deref(_) => lesson(
                expr,
                "dereferencing (`*`) is not supported by #[differentiable]",
                "in the generated graph function every `f64` value is a graph node, not a \
                 number in memory, so there is nothing to dereference",
                "use the value directly: write `x` instead of `*x`",
            ),
            _ => lesson(
                expr,
                "the `!` operator is not supported by #[differentiable]",
                "it works on integers and booleans, which carry no gradient",
                WHAT_WORKS,
            ),
        },
        Expr::Reference(_) | Expr::RawAddr(_) => lesson(
            expr,
            "references (`&`) are not supported by #[differentiable]",
            "in the generated graph function every `f64` value is a graph node, and the \
             rewrite already passes nodes by reference for you",
            "use the value directly: write `x` instead of `&x`",
        ),
        Expr::Cast(cast) => lesson(
            quote!(#cast),
            "`as` casts are not supported by #[differentiable]",
            "a cast leaves the `f64` graph: a cast to an integer truncates (derivative 0 almost \
             everywhere), and no other numeric type carries a gradient",
            "keep every value `f64`; for a whole-number constant write a float literal such as \
             `3.0` instead of `3 as f64`",
        ),
        Expr::Closure(closure) => {
            let (begin, inputs, end) =
                (&closure.inputs_begin, &closure.inputs, &closure.inputs_end);
            lesson(
                quote!(#begin #inputs #end),
                "closures are not supported inside a #[differentiable] function",
                "the rewrite turns this function's own expressions into graph operations and \
                 cannot follow values into a closure body",
                "write the computation inline; a `let` binding can hold a value used many times",
            )
        }
        Expr::Macro(mac) => macro_call(&mac.mac),
        Expr::If(branch) => lesson(
            branch.if_token,
            "`if` is not supported by #[differentiable] yet",
            NOT_YET,
            "for a smooth choice use `max`, `min` or `abs` (`x.max(0.0)` is a ReLU)",
        ),
        Expr::Match(branch) => lesson(
            branch.match_token,
            "`match` is not supported by #[differentiable] yet",
            NOT_YET,
            "for a smooth choice use `max`, `min` or `abs` (`x.max(0.0)` is a ReLU)",
        ),
        Expr::ForLoop(lp) => not_yet_loop(lp.for_token, "`for` loops"),
        Expr::While(lp) => not_yet_loop(lp.while_token, "`while` loops"),
        Expr::Loop(lp) => not_yet_loop(lp.loop_token, "`loop`"),
        Expr::Break(_) | Expr::Continue(_) => not_yet_loop(expr, "`break` and `continue`"),
        Expr::Return(ret) if ret.expr.is_none() => lesson(
            expr,
            "`return` needs the function's `f64` result",
            "a #[differentiable] function always returns the `f64` it differentiates",
            "write `return value;`",
        ),
        Expr::Return(_) => lesson(
            expr,
            "`return` is supported only as a statement or as the final expression",
            "the rewrite turns `return value` into returning the graph node of `value`, which \
             it can do only where the `return` stands on its own",
            "write `return value;` as its own statement",
        ),
        Expr::Assign(_) => lesson(
            expr,
            "an assignment cannot be used as a value",
            "assignments produce `()`, not an `f64`",
            "write the assignment as its own statement, ending with `;`",
        ),
        Expr::Block(block) if block.label.is_some() => generic(expr, "labeled blocks"),
        Expr::Block(block) => missing_value(&block.block),
        Expr::Unsafe(block) => lesson(
            block.unsafe_token,
            "`unsafe` blocks are not supported by #[differentiable]",
            "`f64` arithmetic never needs `unsafe`",
            "remove the `unsafe` block",
        ),
        Expr::Path(_) => generic(expr, "qualified paths and generic arguments"),
        Expr::Array(_) | Expr::Repeat(_) => generic(expr, "arrays"),
        Expr::Tuple(_) => generic(expr, "tuples"),
        Expr::Index(_) => generic(expr, "indexing"),
        Expr::Field(_) => generic(expr, "field accesses"),
        Expr::Struct(_) => generic(expr, "struct literals"),
        Expr::Range(_) => generic(expr, "ranges"),
        Expr::Try(_) => generic(expr, "the `?` operator"),
        Expr::Await(_) | Expr::Async(_) => generic(expr, "`async` and `.await`"),
        _ => generic(expr, "expressions of this kind"),
    }
}

/// Why a statement cannot be rewritten.
pub(crate) fn stmt(stmt: &Stmt) -> syn::Error {
    match stmt {
        Stmt::Local(local) => binding(local),
        Stmt::Macro(mac) => macro_call(&mac.mac),
        Stmt::Item(Item::Fn(item)) => lesson(
            &item.sig,
            "nested functions are not supported inside a #[differentiable] function",
            "the rewrite cannot see a nested function as differentiable, so calls to it could \
             not be recorded in the graph",
            "write the math inline, or make it a separate #[differentiable] function",
        ),
        Stmt::Item(item) => lesson(
            item,
            "this item is not supported inside a #[differentiable] function",
            "only `const` items and `use` declarations are copied into the generated functions",
            "move the item out of the function",
        ),
        Stmt::Expr(e, _) => expr(e),
    }
}

/// Why the left side of an assignment is not something the rewrite can rebind.
pub(crate) fn assignment_target(target: &Expr) -> syn::Error {
    lesson(
        target,
        "#[differentiable] can only assign to a local `f64` variable declared `mut`",
        "an assignment rebinds a name to a new graph node, so the name must be a `let mut` \
         local or a `mut` parameter",
        "declare it with `let mut name = ...;` (or `mut name: f64` for a parameter), as plain \
         Rust requires too",
    )
}

/// Why a computed value that nothing uses is rejected.
pub(crate) fn discarded(expr: &Expr) -> syn::Error {
    lesson(
        expr,
        "this value is computed and then thrown away",
        "the result of an expression statement is discarded, so nothing in the graph could \
         depend on it",
        "bind it with `let name = ...;`, assign it to a `let mut` variable, or make it the \
         final expression",
    )
}

/// Why a body without a final value (and without `return`) is rejected.
pub(crate) fn missing_result(block: &Block) -> syn::Error {
    match block.stmts.last() {
        Some(Stmt::Expr(_, Some(semi))) => lesson(
            semi,
            "the body of a #[differentiable] function must end with its `f64` result",
            "this `;` turns the final expression into a statement whose value is thrown away",
            "remove the `;` after the final expression",
        ),
        _ => lesson_at(
            block.brace_token.span.close(),
            "the body of a #[differentiable] function must end with its `f64` result",
            "the final expression (written without a trailing `;`) or a `return` is the value \
             that gets differentiated",
            "end the body with the result, e.g. `s + 1.0` without a `;`",
        ),
    }
}

fn missing_value(block: &Block) -> syn::Error {
    lesson_at(
        block.brace_token.span.close(),
        "this block has no final `f64` value",
        "a block used as a value produces its last expression, written without a trailing `;`",
        "end the block with its value, e.g. `{ let t = x * x; t + 1.0 }`",
    )
}

fn lesson_at(span: Span, what: &str, why: &str, instead: &str) -> syn::Error {
    syn::Error::new(span, format!("{what}\nnote: {why}\nhelp: {instead}"))
}

fn literal(lit: &Lit) -> syn::Error {
    match lit {
        Lit::Int(int) => lesson(
            int,
            &format!("integer literal `{int}` where an `f64` is needed"),
            "integer arithmetic cannot carry a gradient, and Rust does not mix integers with \
             `f64` (an integer is accepted only as the exponent of `powi`)",
            &format!("write it as a float literal: `{}.0`", int.base10_digits()),
        ),
        Lit::Float(float) => lesson(
            float,
            &format!("`{float}` is not an `f64` literal"),
            "a #[differentiable] function computes in `f64` only",
            &format!("drop the suffix: `{}`", float.base10_digits()),
        ),
        _ => lesson(
            lit,
            "this literal is not an `f64`",
            "only `f64` values can carry a gradient",
            WHAT_WORKS,
        ),
    }
}

fn method(call: &ExprMethodCall) -> syn::Error {
    let name = call.method.to_string();
    let mut tokens = call.method.to_token_stream();
    if let Some(turbofish) = &call.turbofish {
        turbofish.to_tokens(&mut tokens);
    }
    call.paren_token
        .surround(&mut tokens, |inner: &mut TokenStream| {
            call.args.to_tokens(inner)
        });
    let receiver = match &*call.receiver {
        Expr::Path(path) if path.path.get_ident().is_some() => quote!(#path).to_string(),
        _ => "value".to_owned(),
    };
    let exponent = call.args.first();
    operation(
        &name,
        tokens,
        call.args.len() + 1,
        &receiver,
        exponent,
        true,
    )
}

fn function(call: &ExprCall) -> syn::Error {
    let func = &call.func;
    let Some(name) = f64_function(call) else {
        let path = quote!(#func).to_string().replace(' ', "");
        return lesson(
            func,
            &format!("cannot differentiate through the call to `{path}`"),
            &format!(
                "#[differentiable] sees only this function's tokens, not what `{path}` \
                 computes, so it cannot record its operations in the graph"
            ),
            "write its math inline here; `f64` methods are accepted in either form, `x.exp()` \
             or `f64::exp(x)`",
        );
    };
    let mut tokens = func.to_token_stream();
    call.paren_token
        .surround(&mut tokens, |inner: &mut TokenStream| {
            call.args.to_tokens(inner)
        });
    let name = name.to_string();
    operation(
        &name,
        tokens,
        call.args.len(),
        "x",
        call.args.iter().nth(1),
        false,
    )
}

/// Why a method (or its `f64::name(x, ..)` form) with `operands` operands is rejected.
fn operation(
    name: &str,
    tokens: TokenStream,
    operands: usize,
    receiver: &str,
    exponent: Option<&Expr>,
    method_form: bool,
) -> syn::Error {
    match ops::shape(name) {
        Some(Shape::Stepwise) if operands == 1 => stepwise(name, tokens, receiver),
        Some(Shape::Detach) if !method_form => unknown(name, tokens),
        Some(shape) if operands != shape.operands() => {
            let expected = shape.operands() - usize::from(method_form);
            let found = operands - usize::from(method_form);
            let plural = if expected == 1 { "" } else { "s" };
            lesson(
                tokens,
                &format!("`{name}` takes {expected} argument{plural} here, found {found}"),
                &format!(
                    "`{name}` is recorded as the graph operation `Scalar::{name}`, with {} \
                     operand{}",
                    shape.operands(),
                    if shape.operands() == 1 { "" } else { "s" }
                ),
                &format!("call it as `{}`", shape.example(name)),
            )
        }
        Some(Shape::Powi) => lesson(
            exponent.map_or(tokens, ToTokens::into_token_stream),
            "the exponent of `powi` must be an integer known without the tracked values",
            "`powi` records its `i32` exponent as part of the operation, so only the base \
             carries a gradient",
            "pass an integer such as `3` or `-2` (or an integer `const`); for an `f64` or \
             tracked exponent use `powf`",
        ),
        _ => unknown(name, tokens),
    }
}

fn unknown(name: &str, tokens: TokenStream) -> syn::Error {
    lesson(
        tokens,
        &format!("`{name}` is not an operation #[differentiable] can differentiate"),
        "the rewrite records each `f64` method as a graph operation with a known derivative, \
         and knows no operation by this name",
        &format!(
            "use the supported methods: {}, and `detach()` for a stop-gradient",
            ops::SUPPORTED
        ),
    )
}

fn stepwise(name: &str, tokens: TokenStream, receiver: &str) -> syn::Error {
    let what = format!("`{name}` cannot be differentiated");
    let constant = format!(
        "if you meant the result as a constant, say so with `detach()`: \
         `{receiver}.detach().{name}()` is a constant with no gradient"
    );
    let shape = match name {
        "floor" => "rounds down to a whole number",
        "ceil" => "rounds up to a whole number",
        "round" | "round_ties_even" => "rounds to the nearest whole number",
        "trunc" => "drops the fractional part",
        "signum" => {
            return lesson(
                tokens,
                &what,
                "it is -1, 0 or 1: flat (derivative 0) everywhere except a jump at 0, so every \
                 gradient through it would silently be 0",
                &constant,
            );
        }
        _ => {
            return lesson(
                tokens,
                &what,
                "it is `x - x.trunc()`: its slope is 1 between whole numbers, but it jumps at \
                 every one, and the `trunc` inside is flat (derivative 0) almost everywhere",
                &format!(
                    "write `{receiver} - {receiver}.detach().trunc()` for slope 1 with the whole \
                     part held constant, or `{receiver}.detach().fract()` for a constant"
                ),
            );
        }
    };
    lesson(
        tokens,
        &what,
        &format!(
            "it {shape}: flat (derivative 0) almost everywhere and jumping at whole numbers, so \
             every gradient through it would silently be 0"
        ),
        &constant,
    )
}

fn operator(op: &BinOp, expr: &Expr) -> syn::Error {
    let symbol = quote!(#op).to_string();
    match op {
        BinOp::Rem(_) | BinOp::RemAssign(_) => lesson(
            op,
            "the remainder operator `%` cannot be differentiated",
            "`a % b` is `a - b * (a / b).trunc()`: it jumps wherever `a / b` crosses a whole \
             number, and the `trunc` inside is flat (derivative 0) almost everywhere",
            "to keep the slopes with the whole quotient held constant, write \
             `a - b * (a / b).detach().trunc()`",
        ),
        BinOp::AddAssign(_) | BinOp::SubAssign(_) | BinOp::MulAssign(_) | BinOp::DivAssign(_) => {
            lesson(
                expr,
                "a compound assignment cannot be used as a value",
                "assignments produce `()`, not an `f64`",
                "write the assignment as its own statement, ending with `;`",
            )
        }
        BinOp::Eq(_) | BinOp::Ne(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) => {
            lesson(
                op,
                &format!("the comparison `{symbol}` is not supported by #[differentiable]"),
                "a comparison yields a `bool`, which carries no gradient, and branching on it \
                 (`if`, `match`) is not supported yet",
                "for a smooth choice use `max`, `min` or `abs` (`x.max(0.0)` is a ReLU)",
            )
        }
        BinOp::And(_) | BinOp::Or(_) => lesson(
            op,
            &format!("the boolean operator `{symbol}` is not supported by #[differentiable]"),
            "booleans carry no gradient, and branches are not supported yet",
            "for a smooth choice use `max`, `min` or `abs`",
        ),
        BinOp::BitXor(_) | BinOp::BitXorAssign(_) => lesson(
            op,
            "`^` is bitwise exclusive or, not a power, and is not supported by #[differentiable]",
            "bitwise operators work on integers and booleans, which carry no gradient",
            "for a power write `x.powi(2)` (integer exponent) or `x.powf(y)`",
        ),
        _ => lesson(
            op,
            &format!("the bitwise operator `{symbol}` is not supported by #[differentiable]"),
            "bitwise operators work on integers and booleans, which carry no gradient",
            WHAT_WORKS,
        ),
    }
}

fn macro_call(mac: &syn::Macro) -> syn::Error {
    let path = &mac.path;
    let bang = &mac.bang_token;
    let name = quote!(#path).to_string().replace(' ', "");
    lesson(
        quote!(#path #bang),
        &format!(
            "macro calls such as `{name}!` are not supported inside a #[differentiable] function"
        ),
        &format!(
            "macros expand after this attribute has rewritten the body, so it cannot see or \
             differentiate the code `{name}!` produces"
        ),
        "write the arithmetic out without the macro; print results from the caller instead",
    )
}

fn not_yet_loop(tokens: impl ToTokens, what: &str) -> syn::Error {
    lesson(
        tokens,
        &format!("{what} are not supported by #[differentiable] yet")
            .replace("`loop` are", "`loop` is"),
        NOT_YET,
        "unroll a short loop by hand into `let` statements for now",
    )
}

fn binding(local: &Local) -> syn::Error {
    if let Some(init) = &local.init {
        if let Some((else_token, _)) = &init.diverge {
            return lesson(
                else_token,
                "`let ... else` is not supported by #[differentiable]",
                "it is a pattern match, and a plain `f64` binding cannot fail to match",
                "write `let name = value;`",
            );
        }
    }
    let pat = match &local.pat {
        Pat::Type(typed) => {
            if !crate::signature::is_f64(&typed.ty) {
                return lesson(
                    &typed.ty,
                    "a local variable of a #[differentiable] function must be an `f64`",
                    "every local becomes a graph node, and gradients exist only for `f64` values",
                    "write `let name: f64 = ...;` or leave out the type",
                );
            }
            &*typed.pat
        }
        pat => pat,
    };
    match pat {
        Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => lesson(
            local,
            "a `let` without a value is not supported by #[differentiable]",
            "each `let` becomes a graph node, which needs its value where it is declared",
            "give the value in the declaration: `let name = value;` (and `let mut` to change it \
             later)",
        ),
        _ => lesson(
            pat,
            "`let` patterns are not supported by #[differentiable]",
            "each `let` binds one `f64` value, which becomes one graph node",
            "bind one name per `let`: `let name = value;`",
        ),
    }
}

fn generic(tokens: impl ToTokens, kind: &str) -> syn::Error {
    lesson(
        tokens,
        &format!("{kind} are not supported by #[differentiable]"),
        &format!(
            "the rewrite turns `f64` arithmetic into graph operations, and {kind} have no such \
             operation"
        ),
        WHAT_WORKS,
    )
}
