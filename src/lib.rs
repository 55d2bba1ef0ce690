//! Reverse-mode gradients of plain Rust `f64` functions: a validated scalar graph
//! ([`Scalar`]) and the [`#[differentiable]`](macro@differentiable) attribute that writes
//! the graph-building code for you.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use autodiff_runtime::*;

/// Differentiates a plain Rust function of `f64` values: keeps it, and generates
/// `name_graph` and `name_grad` beside it.
///
/// For `#[differentiable] fn name(a: f64, w: [f64; 2], xs: &[f64]) -> f64 { ... }` it
/// emits, with the function's own visibility:
///
/// - `fn name(a: f64, w: [f64; 2], xs: &[f64]) -> f64`: the function as written
///   (`.detach()` calls removed, as detach is the identity on values);
/// - `fn name_graph(a: &Scalar, w: &[Scalar; 2], xs: &[f64]) -> Result<Scalar, ScalarAutodiffError>`:
///   the same computation recorded on the caller's nodes, one edge per operand occurrence;
/// - `fn name_grad(a: f64, w: [f64; 2], xs: &[f64]) -> Result<(f64, [f64; 3]), ScalarAutodiffError>`:
///   the value and the gradient, flattened in parameter order (`a`, `w[0]`, `w[1]`), from
///   fresh variables and one reverse pass (a result that depends on no parameter has
///   gradient zero).
///
/// `f64` parameters and parameter arrays `[f64; K]` (`K` a literal or a constant) are
/// differentiated. Every other parameter is data, passed through untouched and left out of
/// the gradient (`&[f64]`, `&[[f64; 2]]`, `usize`, `bool`, ...), and so is an `f64`
/// parameter marked `#[constant]` (a hyperparameter such as a learning rate).
///
/// The plain function and the graph compute the same value bit for bit: the rewrite keeps
/// every operation, its operands' order and its association as written.
///
/// # What the body may contain
///
/// An expression that uses no differentiated value (no parameter, no local computed from
/// one) is ordinary Rust over data, evaluated as written: casts, closures, method calls,
/// macros and calls of any function; where its `f64` result meets a tracked value, it
/// enters the graph as a constant. Tracked values may use:
///
/// - `f64` literals and constants, `let` / `let mut` (a local assigned a tracked value
///   anywhere is tracked from its declaration), shadowing, `+ - * /` and their compound
///   assignments, unary `-`, blocks, `return`, `.detach()`, and these `f64` methods in
///   either form (`x.exp()` or `f64::exp(x)`): exp, exp2, exp_m1, ln, ln_1p, log, log2,
///   log10, sqrt, cbrt, powi, powf, recip, sin, cos, tan, asin, acos, atan, atan2, sinh,
///   cosh, tanh, asinh, acosh, atanh, abs, max, min, hypot, mul_add; `floor`, `ceil`,
///   `round`, `trunc`, `fract` and `signum` only on a detached value, where the result is
///   a constant;
/// - elements of parameter arrays, `w[i]` with a data index;
/// - `if` / `else if` / `else` as statements and values, whose conditions compare primal
///   values (`x > 0.0 && n < 3`; the branch not taken records nothing), and `match`,
///   `if let` and `while let` on data;
/// - `for` loops over ranges (`0..n`, `0..=xs.len()`), data (`for &x in xs`,
///   `xs.iter().zip(ys)`, `.enumerate()`) and parameter arrays (`w.iter()`), `while` on a
///   primal condition, `loop`, `break` and `continue` (with labels);
/// - calls of other `#[differentiable]` functions (also by path, `layers::dense(w, x)`),
///   which record into the same graph.
///
/// Anything else on a tracked value (`%`, casts, integer arithmetic, closures, macro
/// calls, references, unknown methods, `match` on a tracked value, a tracked index or loop
/// bound, `loop` with `break value`, and signatures without a differentiated parameter or
/// with a result other than `f64`) is a compile error on the offending tokens, saying what
/// is unsupported, why, and what to write instead. Every offending spot of a function is
/// reported in one compile. A call with tracked arguments to a function that is not
/// `#[differentiable]` fails with rustc's "cannot find function `differentiable_name`".
///
/// # Examples
///
/// ```
/// use autodiff::differentiable;
///
/// /// The chapter's reused square: `s = x²`, `loss = s + s`.
/// #[differentiable]
/// fn loss(x: f64) -> f64 {
///     let s = x * x;
///     s + s
/// }
///
/// // The plain function is still there,
/// assert_eq!(loss(2.0), 8.0);
/// // `loss_grad` returns the value and the gradient in parameter order,
/// let (value, [dx]) = loss_grad(2.0)?;
/// assert_eq!((value, dx), (8.0, 8.0));
/// // and `loss_graph` builds the graph on your own nodes.
/// let x = autodiff::Scalar::variable(2.0)?;
/// let pass = loss_graph(&x)?.backward()?;
/// assert_eq!(x.gradient(), Some(8.0));
/// assert_eq!(pass.ledger().nodes.len(), 3); // x, s, loss
/// assert_eq!(pass.ledger().edges.len(), 4); // two per use of x and of s
/// # Ok::<(), autodiff::ScalarAutodiffError>(())
/// ```
///
/// A small model: data, a hyperparameter, a loop and a branch.
///
/// ```
/// use autodiff::differentiable;
///
/// /// Mean Huber loss of the line `w x + b`.
/// #[differentiable]
/// fn huber(w: f64, b: f64, xs: &[f64], ys: &[f64], #[constant] delta: f64) -> f64 {
///     let mut total = 0.0;
///     for (x, y) in xs.iter().zip(ys) {
///         let r = w * x + b - y;
///         if r.abs() <= delta {
///             total += 0.5 * r * r;
///         } else {
///             total += delta * (r.abs() - 0.5 * delta);
///         }
///     }
///     total / xs.len() as f64
/// }
///
/// let (xs, ys) = ([1.0, 2.0], [1.0, 5.0]);
/// let (value, [dw, db]) = huber_grad(1.0, 0.0, &xs, &ys, 1.0)?; // residuals 0 and -3
/// assert_eq!(value, huber(1.0, 0.0, &xs, &ys, 1.0));
/// assert_eq!((value, dw, db), (1.25, -1.0, -0.5));
/// # Ok::<(), autodiff::ScalarAutodiffError>(())
/// ```
///
/// A rejected construct is a compile error on the offending tokens:
///
/// ```compile_fail
/// #[autodiff::differentiable]
/// fn step(x: f64) -> f64 {
///     x.floor() // error: `floor` cannot be differentiated
/// }
/// ```
///
pub use autodiff_macros::differentiable;

/// Support for the code `#[differentiable]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use autodiff_runtime::__private::*;
}

/// The README's Rust examples, compiled and run as doctests so it keeps telling the truth.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
