//! Why the rewrite rejects a construct, worded for a learner.
//!
//! [`expr`] and [`stmt`] are called only from the catch-all arms of the rewrite in
//! `rewrite/mod.rs`: every construct without a supported arm there ends up here, and gets a
//! message saying what is unsupported, why, and what to write instead.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{BinOp, Block, Expr, ExprCall, ExprMethodCall, Item, Lit, Local, Pat, Stmt, UnOp};

use crate::lesson::{lesson, lesson_at};
use crate::ops::{self, Shape};
use crate::rewrite::f64_function;

/// What a body may contain, for the `help:` line of a generic rejection.
const WHAT_WORKS: &str = "write the math with `f64` literals, the parameters, `let` bindings, \
     `+ - * /`, unary `-` and the `f64` methods the runtime differentiates";

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
            "`as` casts of tracked values are not supported by #[differentiable]",
            "a cast leaves the `f64` graph: a cast to an integer truncates (derivative 0 almost \
             everywhere), and no other numeric type carries a gradient",
            "keep tracked values `f64`; if you need the number without its gradient, cast a \
             detached value: `x.detach() as i32` (casts of data, such as `n as f64`, are fine)",
        ),
        Expr::Closure(closure) => {
            let (begin, inputs, end) =
                (&closure.inputs_begin, &closure.inputs, &closure.inputs_end);
            lesson(
                quote!(#begin #inputs #end),
                "closures cannot use tracked values inside a #[differentiable] function",
                "the rewrite turns this function's own expressions into graph operations and \
                 cannot follow values into a closure body (closures over data alone are fine)",
                "write the computation inline, use a loop, or make it a separate \
                 #[differentiable] function",
            )
        }
        Expr::Macro(mac) => macro_call(&mac.mac),
        Expr::If(branch) => lesson(
            branch.if_token,
            "an `if` without `else` has no value",
            "an `if` used as a value must produce one on every path, so the value of a tracked \
             computation is defined whichever branch runs",
            "add an `else` branch, or write the `if` as a statement that assigns a `let mut` \
             variable",
        ),
        Expr::ForLoop(lp) => loop_value(lp.for_token),
        Expr::While(lp) => loop_value(lp.while_token),
        Expr::Loop(lp) => lesson(
            lp.loop_token,
            "a `loop` that produces a value with `break value` is not supported by \
             #[differentiable]",
            "the rewrite keeps loops as statements: each iteration records its own operations, \
             and a tracked value leaves a loop through a variable",
            "declare `let mut result = 0.0;` before the loop, assign it inside, and `break;`",
        ),
        Expr::Break(_) => lesson(
            expr,
            "`break` with a tracked value is not supported by #[differentiable]",
            "the rewrite keeps loops as statements: a tracked value leaves a loop through a \
             variable",
            "assign the value to a `let mut` variable declared before the loop, then `break;`",
        ),
        Expr::Range(_) => lesson(
            expr,
            "a range cannot be bounded by a tracked value",
            "a bound is a whole number: the loop count (or slice) would jump as the value \
             moves, a step with derivative 0 almost everywhere",
            "bound ranges by data (`0..n`, `0..xs.len()`); if you mean the number without its \
             gradient, detach it: `0..(x.detach() as usize)`",
        ),
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
        Expr::Index(_) => generic(
            expr,
            "indexes into tracked values other than parameter arrays",
        ),
        Expr::Field(_) => generic(expr, "field accesses"),
        Expr::Struct(_) => generic(expr, "struct literals"),
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

/// Why a block used as a value without a final value is rejected.
pub(crate) fn missing_value(block: &Block) -> syn::Error {
    lesson_at(
        block.brace_token.span.close(),
        "this block has no final `f64` value",
        "a block used as a value produces its last expression, written without a trailing `;`",
        "end the block with its value, e.g. `{ let t = x * x; t + 1.0 }`",
    )
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

/// Why a macro call that mentions tracked values is rejected.
pub(crate) fn macro_call(mac: &syn::Macro) -> syn::Error {
    let path = &mac.path;
    let bang = &mac.bang_token;
    let name = quote!(#path).to_string().replace(' ', "");
    lesson(
        quote!(#path #bang),
        &format!(
            "macro calls such as `{name}!` cannot use tracked values in a #[differentiable] \
             function"
        ),
        &format!(
            "macros expand after this attribute has rewritten the body, so it cannot see or \
             differentiate the code `{name}!` produces from tracked values (macros over data \
             alone are fine)"
        ),
        "write the arithmetic out without the macro; print results from the caller instead",
    )
}

fn loop_value(tokens: impl ToTokens) -> syn::Error {
    lesson(
        tokens,
        "a loop has no value",
        "`for` and `while` loops produce `()`; a tracked value leaves a loop through a variable",
        "declare `let mut total = 0.0;` before the loop and accumulate into it",
    )
}

/// Why a `let` cannot be rewritten: a tracked value bound with a pattern, or with a type
/// other than `f64`.
pub(crate) fn binding(local: &Local) -> syn::Error {
    if let Pat::Type(typed) = &local.pat {
        if !crate::parse::signature::is_f64(&typed.ty) {
            return lesson(
                &typed.ty,
                "a local variable holding a tracked value must be an `f64`",
                "it becomes a graph node, and gradients exist only for `f64` values",
                "write `let name: f64 = ...;` or leave out the type",
            );
        }
    }
    let pat = match &local.pat {
        Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    lesson(
        pat,
        "`let` patterns cannot bind tracked values in a #[differentiable] function",
        "each tracked `let` binds one `f64` value, which becomes one graph node (patterns over \
         data alone are fine, and a tuple of names over a tuple literal is one `let` per name)",
        "bind one name per `let` (`let name = value;`), or destructure a tuple literal: \
         `let (a, b) = (y, x);`",
    )
}

/// Why an expression holding a `return` of the function inside it is rejected.
pub(crate) fn nested_return(expr: &Expr) -> syn::Error {
    lesson(
        expr,
        "`return` is supported only as a statement, as a final expression, or as the value of \
         a branch",
        "the rewrite turns `return value` into returning the graph node of `value`, which it \
         can do only where the `return` stands on its own",
        "write `return value;` as its own statement",
    )
}

/// Why a condition (or detached value) that rebinds a tracked name is rejected.
pub(crate) fn shadowed_in_primal(expr: &Expr) -> syn::Error {
    lesson(
        expr,
        "this condition binds a name that is also a tracked value outside it",
        "a condition is evaluated on the primal values of tracked names, and the rewrite \
         cannot tell the two apart where one hides the other",
        "rename the inner binding (a closure parameter or a `let`)",
    )
}

/// Why a parameter array used as a whole is rejected.
pub(crate) fn whole_array(tokens: impl ToTokens) -> syn::Error {
    lesson(
        tokens,
        "a parameter array is used element by element in a #[differentiable] function",
        "each element is its own graph variable; the array itself is not a value the graph \
         can compute with",
        "read elements with `w[i]`, loop with `for i in 0..w.len()` or `for w_i in w.iter()`, \
         or pass the whole array to another #[differentiable] function",
    )
}

/// Why assigning to a parameter array (or an element of one) is rejected.
pub(crate) fn array_assignment(target: &Expr) -> syn::Error {
    lesson(
        target,
        "the elements of a parameter array cannot be assigned",
        "each element is a graph variable the gradient is taken for; replacing it would cut \
         it out of the graph",
        "copy the element into a `let mut` local and change that",
    )
}

/// Why calling a local (such as a closure) with tracked values is rejected.
pub(crate) fn local_call(call: &ExprCall) -> syn::Error {
    let func = &call.func;
    lesson(
        func,
        "a closure cannot be called with tracked values in a #[differentiable] function",
        "the rewrite cannot follow values into a closure body, so it could not record what \
         the closure computes",
        "write the computation inline, or make it a separate #[differentiable] function and \
         call that",
    )
}

/// Why indexing with a tracked value is rejected.
pub(crate) fn tracked_index(index: &Expr) -> syn::Error {
    lesson(
        index,
        "a tracked value cannot be used as an index",
        "an index is a whole number: the element chosen would jump as the value moves, a step \
         with derivative 0 almost everywhere",
        "index with data (`xs[i]` for a loop counter `i`); if you mean the number without its \
         gradient, detach it: `xs[x.detach() as usize]`",
    )
}

/// Why a `match` (or `if let`, `while let`, `let ... else`) on a tracked value is rejected.
pub(crate) fn tracked_scrutinee(scrutinee: &Expr, keyword: &str) -> syn::Error {
    lesson(
        scrutinee,
        &format!("`{keyword}` on a tracked value is not supported by #[differentiable]"),
        "patterns compare and bind the value itself, and a name bound by a pattern would be a \
         plain copy without its gradient",
        "branch with `if` on comparisons (`if x > 1.0 { .. } else { .. }`); `match` works on \
         data such as integers",
    )
}

/// Why a plain variable (data, or a name bound by a pattern) cannot hold a tracked value.
pub(crate) fn plain_holds_tracked(target: &Expr) -> syn::Error {
    lesson(
        target,
        "this place holds data, and cannot be assigned a tracked value",
        "a data parameter (a slice of data, a `#[constant]`), a loop variable or a name \
         bound by a pattern stays data, so a gradient could not flow through what is written \
         into it; a local declared in the body with `let mut` (a number or an array such as \
         `[0.0; N]`) becomes tracked when it is assigned a tracked value",
        "write the tracked values into a local of the body: `let mut out = [0.0; N];` then \
         `out[i] = value;`",
    )
}

/// Why indexing a tracked array with a range (a sub-slice) is rejected.
pub(crate) fn tracked_sub_slice(index: &syn::ExprIndex) -> syn::Error {
    lesson(
        index,
        "a sub-slice of a tracked array cannot be taken in a #[differentiable] function",
        "a helper's differentiated parameter has a fixed shape, and a slice of tracked values \
         has no shape the rewrite can check",
        "split the parameters into arrays of their own (or fields of a \
         `#[derive(scalar_autodiff::Parameters)]` struct) and pass those, or index elements with \
         `w[i]`",
    )
}

/// Why a `for` loop over tracked values is rejected.
pub(crate) fn tracked_iterator(iter: &Expr) -> syn::Error {
    lesson(
        iter,
        "a loop or fold cannot run over this tracked value",
        "a `for` loop or an iterator fold runs over data (a range, a slice, an iterator) or \
         over the elements of a tracked array; a range bound or a collection computed from \
         tracked values would change the loop as the value moves, a step with derivative 0 \
         almost everywhere, and other iterator adapters are not followed",
        "loop over `0..n`, `xs.iter()`, `w.iter()` (a tracked array), or these with \
         `.zip(..)`, `.enumerate()`, `.rev()`, `.skip(n)`, `.take(n)`, `.step_by(n)`, \
         `.flatten()`, `.copied()`; fold with one `.map(|v| ..)` closure written in place",
    )
}

/// Why a loop pattern does not fit the items of a loop over parameter arrays.
pub(crate) fn loop_pattern(pat: &Pat) -> syn::Error {
    lesson(
        pat,
        "this pattern does not fit a loop over a parameter array",
        "each element of a parameter array is bound by name (as `w_i` or `&w_i`), and each \
         `zip` or `enumerate` makes a pair",
        "write `for w_i in w.iter()`, `for (w_i, x) in w.iter().zip(xs)` or `for (i, w_i) in \
         w.iter().enumerate()`",
    )
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
