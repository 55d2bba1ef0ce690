//! Reverse-mode gradients of plain Rust `f64` functions: a validated scalar graph
//! ([`Scalar`]) and the [`#[differentiable]`](macro@differentiable) attribute that writes
//! the graph-building code for you.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use autodiff_runtime::*;

/// Differentiates a plain `f64` function: keeps it, and generates `name_graph` and
/// `name_grad` beside it.
///
/// For `#[differentiable] fn name(a: f64, b: f64) -> f64 { ... }` it emits, with the
/// function's own visibility:
///
/// - `fn name(a: f64, b: f64) -> f64`: the function as written (`.detach()` calls removed,
///   as detach is the identity on values);
/// - `fn name_graph(a: &Scalar, b: &Scalar) -> Result<Scalar, ScalarAutodiffError>`: the
///   same computation recorded on the caller's nodes, one edge per operand occurrence;
/// - `fn name_grad(a: f64, b: f64) -> Result<(f64, [f64; 2]), ScalarAutodiffError>`: the
///   value and the gradient in parameter order, from fresh variables and one reverse pass
///   (a result that depends on no parameter has gradient zero).
///
/// The plain function and the graph compute the same value bit for bit: the rewrite keeps
/// every operation, its operands' order and its association as written.
///
/// The body may use `f64` literals and constants, the parameters, `let` / `let mut`
/// bindings (shadowing and reassignment included), `+ - * /` and their compound
/// assignments, unary `-`, nested blocks, `return`, `.detach()`, and these `f64` methods
/// in either form (`x.exp()` or `f64::exp(x)`): exp, exp2, exp_m1, ln, ln_1p, log, log2,
/// log10, sqrt, cbrt, powi (with an integer exponent), powf, recip, sin, cos, tan, asin,
/// acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh, abs, max, min, hypot, mul_add.
/// `floor`, `ceil`, `round`, `trunc`, `fract` and `signum` are accepted only on a detached
/// value (`x.detach().floor()`), where the result is a constant.
///
/// Anything else (`%`, casts, integer arithmetic, closures, macro calls, references,
/// unknown methods and functions, `if`, `match` and loops, and signatures other than
/// `f64` parameters to an `f64` result) is a compile error on the offending tokens, saying
/// what is unsupported, why, and what to write instead. Every offending spot of a function
/// is reported in one compile.
///
/// # Example
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
