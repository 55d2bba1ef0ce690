//! Reverse-mode gradients of plain Rust `f64` functions: a validated scalar graph
//! ([`Scalar`]) and the [`#[differentiable]`](macro@differentiable) attribute that writes
//! the graph-building code for you; [`Parameters`](trait@Parameters) (with
//! [`#[derive(Parameters)]`](derive@Parameters) for structs) walks the parameters of a model
//! for tracking, gradients and optimizer steps.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use autodiff_runtime::*;

// Generated code names this crate `::scalar_autodiff`, also inside it (`special`).
extern crate self as scalar_autodiff;

#[cfg(feature = "libm")]
#[cfg_attr(docsrs, doc(cfg(feature = "libm")))]
pub mod special;

#[cfg(feature = "argmin")]
#[cfg_attr(docsrs, doc(cfg(feature = "argmin")))]
pub mod argmin;
#[cfg(feature = "rayon")]
#[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
pub mod parallel;

/// Differentiates a plain Rust function of `f64` values: keeps it, and generates
/// `name_graph` and `name_grad` beside it (and `name_jvp`, `name_hvp`, `name_hessian`;
/// `name_jacobian` for an array result, `name_vjp` for a `Vec<f64>`).
///
/// For `#[differentiable] fn name(a: f64, w: [f64; 2], xs: &[f64]) -> f64 { ... }` it
/// emits, with the function's own visibility (parameter structs, slices, methods and
/// array-valued helpers are below):
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
/// # Parameters and what `name_grad` returns
///
/// What a parameter is to the gradient comes from its type, or the user says it; a type
/// that could be either is a compile error on that parameter, never a guess (a guess could
/// silently train only part of a model):
///
/// - **differentiated**: `f64`; arrays of `f64` by value, nested to any depth (`[f64; K]`,
///   `[[f64; N]; M]`, with `K` a literal or a constant); and any parameter marked
///   `#[param]`, by value or by shared reference, whose type implements
///   [`Parameters`](trait@Parameters): a struct with
///   [`#[derive(Parameters)]`](derive@Parameters), a slice `&[f64]`, a `Vec<f64>`;
/// - **data**, passed through untouched: shared references to slices and arrays (`&[f64]`,
///   `&[[f64; 2]]`, `&[f64; 3]`), integers, `bool`, `char`, `&str`, a method's receiver
///   (`&self`, `self`), and any parameter marked `#[constant]` (a learning rate, a
///   `&Vec<f64>`, an `Option<f64>`).
///
/// `name_grad` returns `Result<(f64, G), ScalarAutodiffError>` where `G` is
///
/// - `[f64; N]` when every differentiated parameter is an `f64` or an array: the partial
///   derivatives flattened in parameter order, arrays row-major;
/// - the parameter's own gradient type when there is one differentiated parameter and it is
///   `#[param]`: `Mlp` for `#[param] p: &Mlp`, `Vec<f64>` for `#[param] w: &[f64]`;
/// - otherwise a tuple of each differentiated parameter's gradient in its own shape, in
///   parameter order: `(f64, [f64; 2], Mlp)` for `(a: f64, w: [f64; 2], #[param] p: &Mlp)`.
///
/// `name_graph` takes `&Scalar` for an `f64`, arrays of `Scalar` for arrays, and
/// `&<T as Parameters>::Tracked<Scalar>` for a `#[param]` parameter (make one with
/// [`Parameters::variables`] and read its gradients with [`Parameters::gradient_of`]).
///
/// A function may also return `[f64; M]` (nested to any depth): an array-valued helper such
/// as a dense layer, callable from other differentiable functions, with a `name_graph` that
/// returns the `Scalar` outputs. It has no `name_grad` (calling one is a compile error that
/// says so); it has `name_jacobian` instead (below).
///
/// # Forward mode, Hessians and Jacobians
///
/// A function returning `f64` also gets, with `tangent` of the gradient's type `G`:
///
/// - `fn name_jvp(args.., tangent: G) -> Result<(f64, f64), ScalarAutodiffError>`: the value
///   and the directional derivative (the gradient dotted with `tangent`), in one forward
///   sweep on (value, tangent) pairs, with no tape;
/// - `fn name_hvp(args.., tangent: G) -> Result<(f64, G, G), ScalarAutodiffError>`: the
///   value, the gradient (the bits `name_grad` returns) and the Hessian times `tangent`, by
///   forward over reverse: `name_grad`'s compiled sweeps (and the helpers' halves) on
///   (value, tangent) pairs, with no tape; a call they give up on (a non-finite number,
///   a form the README lists) is recorded once, and after the validated reverse pass a
///   tangent sweep and a reverse sweep of the adjoints' tangents give the product;
/// - `fn name_hessian(args..)`: the value, the gradient and the Hessian, one product per
///   parameter on one recording. With only `f64` and arrays it returns
///   `(f64, [f64; N], Box<[[f64; N]; N]>)` (boxed: a thousand parameters' Hessian would not
///   fit a thread's stack); with a `#[param]` parameter, `(f64, Vec<f64>, Vec<Vec<f64>>)`
///   flattened in parameter order. It is exactly symmetric: `h[i][j]` and `h[j][i]` are
///   both `(H e_j)[i] / 2 + (H e_i)[j] / 2`, the same bits since addition commutes.
///
/// A function returning `[f64; M]` gets `fn name_jacobian(args..) -> Result<([f64; M], J),
/// ScalarAutodiffError>`, `J` being `Box<[[f64; N]; M]>` (or `Vec<Vec<f64>>` with a
/// `#[param]` parameter): row `i` is output `i`'s gradient. It runs one forward sweep per
/// parameter scalar when there are fewer of them than outputs, else one reverse pass per
/// output: the compiled halves (forward half, then the reverse half seeded at that
/// output) for a free function with a one-dimensional result and numbers or arrays as
/// parameters, one recording on the tape otherwise.
///
/// Every number is checked as in `name_grad`: a non-finite value, derivative, tangent or
/// second-order number is a typed error naming the operation
/// ([`ScalarAutodiffError::NonFiniteSlope`], [`ScalarAutodiffError::NonFiniteTangent`],
/// [`ScalarAutodiffError::NonFiniteSecondOrder`] besides the reverse pass's own), and
/// nothing half-computed is returned. Forward mode checks every operation on a parameter's
/// path, including ones the result does not use (a reverse pass skips those).
///
/// ```
/// use scalar_autodiff::differentiable;
///
/// #[differentiable]
/// fn energy(x: f64, y: f64) -> f64 {
///     x * x * y + y.sin()
/// }
///
/// let (value, slope) = energy_jvp(1.0, 2.0, [1.0, 0.0])?; // d/dx = 2xy
/// assert_eq!((value, slope), (2.0 + 2f64.sin(), 4.0));
/// let (_, gradient, h) = energy_hessian(1.0, 2.0)?;
/// assert_eq!(gradient, [4.0, 1.0 + 2f64.cos()]);
/// assert_eq!(*h, [[4.0, 2.0], [2.0, -(2f64.sin())]]);
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// # Vectors of run-time length
///
/// A function may return `Vec<f64>` (an ODE's solution, one residual per data point):
/// its body builds the vector in a local and ends with that local's name. It keeps the
/// plain function and gets `fn name_vjp(args.., cotangent: &[f64]) -> Result<(Vec<f64>,
/// G), ScalarAutodiffError>`: the vector and the gradient of `cotangent · name(args..)`
/// in `name_grad`'s shape `G` (a vector-Jacobian product, one compiled reverse sweep;
/// with `cotangent` the `k`-th unit vector, the bits `name_grad` gives a function
/// returning element `k`). A cotangent of another length is
/// [`ScalarAutodiffError::LengthMismatch`].
///
/// ```
/// use scalar_autodiff::differentiable;
///
/// #[differentiable]
/// fn running_products(#[param] x: &[f64]) -> Vec<f64> {
///     let mut y = vec![0.0; x.len()];
///     let mut product = 1.0;
///     for i in 0..x.len() {
///         product *= x[i];
///         y[i] = product;
///     }
///     y
/// }
///
/// let (y, gradient) = running_products_vjp(&[2.0, 3.0, 4.0], &[0.0, 0.0, 1.0])?;
/// assert_eq!(y, [2.0, 6.0, 24.0]);
/// assert_eq!(gradient, [12.0, 8.0, 6.0]); // d(x0 x1 x2)
///
/// // Forward mode: the vector and the Jacobian times a tangent (here along x1).
/// let (y, along) = running_products_jvp(&[2.0, 3.0, 4.0], vec![0.0, 1.0, 0.0])?;
/// assert_eq!(along, [0.0, 2.0, 8.0]); // column 1 of the Jacobian
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// It also gets `fn name_jvp(args.., tangent: G) -> Result<(Vec<f64>, Vec<f64>),
/// ScalarAutodiffError>`: the vector and its directional derivative along `tangent` (a
/// Jacobian-vector product: one forward sweep on (value, tangent) pairs, no tape). With
/// unit tangents it gives the Jacobian column by column, which is the cheaper way when
/// the vector is longer than the inputs are many; a tangent that is 1 on several inputs
/// that no element depends on together (each data point's own coordinates, say) gives all
/// their columns in one sweep. A tangent with the wrong number of scalars is
/// [`ScalarAutodiffError::LengthMismatch`]. For many columns, `fn name_jvps(args..,
/// tangents: &[G]) -> Result<(Vec<f64>, Vec<Vec<f64>>), ScalarAutodiffError>` carries
/// eight tangents a sweep (each operation's value, local derivatives and checks computed
/// once for the eight; a custom rule's once a tangent), the same numbers as `name_jvp` on
/// each, bit for bit:
///
/// ```
/// # use scalar_autodiff::differentiable;
/// # #[differentiable]
/// # fn running_products(#[param] x: &[f64]) -> Vec<f64> {
/// #     let mut y = vec![0.0; x.len()];
/// #     let mut product = 1.0;
/// #     for i in 0..x.len() {
/// #         product *= x[i];
/// #         y[i] = product;
/// #     }
/// #     y
/// # }
/// let x = [2.0, 3.0, 4.0];
/// let units: Vec<Vec<f64>> = (0..3).map(|j| (0..3).map(|i| f64::from(u8::from(i == j))).collect()).collect();
/// let (_, columns) = running_products_jvps(&x, &units)?; // the whole Jacobian, one sweep
/// assert_eq!(columns[2], [0.0, 0.0, 6.0]);
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// # Custom derivative rules
///
/// An operation the attribute cannot see through (a `libm` special function, a solver, a
/// table lookup) gets its derivative from you:
/// `#[differentiable(derivative = slope)] fn op(x: f64, ..) -> f64 { .. }`, with one to
/// three `f64` operands. The body is kept as the value and not differentiated; `slope`
/// takes the operands and the value and returns the local derivative: `fn slope(x: f64,
/// value: f64) -> f64` for one operand, `-> [f64; K]` (one per operand) for `K` of them.
/// Inside any `#[differentiable]` body, `op(x)` then records one node named `op` whose
/// local derivatives are `slope`'s: `name_graph` (and its ledger), `name_grad` and
/// `name_jvp` all use them, and a non-finite slope on a parameter's path is the same typed
/// error as a built-in operation's. ([`CustomRule`] is the same thing for hand-built
/// [`Scalar`] graphs.)
///
/// `name_hvp` and `name_hessian` differentiate the slope too, so they need `slope` to be
/// `#[differentiable]` itself, defined or imported under its plain name beside `op` (its
/// hidden body `differentiable_slope` must be in scope there). When it is not, they return
/// [`ScalarAutodiffError::NoSecondDerivative`] naming `op`. (A compile error would be
/// kinder, but the attribute on `op` cannot see whether `slope` is differentiable, and a
/// post-monomorphization error would not show in `cargo check`.)
///
/// ```
/// use scalar_autodiff::differentiable;
///
/// /// `ln(1 + e^x)`, written so that it never overflows.
/// #[differentiable(derivative = softplus_slope)]
/// fn softplus(x: f64) -> f64 {
///     x.max(0.0) + (-x.abs()).exp().ln_1p()
/// }
///
/// /// Its derivative, the logistic sigmoid; differentiable, so Hessians work.
/// #[differentiable]
/// fn softplus_slope(x: f64, _value: f64) -> f64 {
///     1.0 / (1.0 + (-x).exp())
/// }
///
/// #[differentiable]
/// fn loss(w: f64) -> f64 {
///     softplus(3.0 * w) + softplus(-w)
/// }
///
/// let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
/// let (_, gradient) = loss_grad(0.25)?;
/// assert!((gradient[0] - (3.0 * sig(0.75) - sig(-0.25))).abs() < 1e-15);
/// let (_, _, h) = loss_hessian(0.25)?;
/// let second = 9.0 * sig(0.75) * sig(-0.75) + sig(-0.25) * sig(0.25);
/// assert!((h[0][0] - second).abs() < 1e-15);
/// // The ledger shows the rule by name.
/// let w = scalar_autodiff::Scalar::variable(0.25)?;
/// let pass = loss_graph(&w)?.backward()?;
/// assert!(pass.ledger().to_string().contains("softplus"));
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// With the default `libm` feature, [`special`] ships `erf`, `erfc`, `ln_gamma`, `digamma`
/// and `sigmoid` written this way.
///
/// On methods (`&self`, `self`) and associated functions in an `impl`, the generated
/// functions are methods and associated functions too: `model.loss_grad(w)`,
/// `Model::loss_grad(w)`. (A receiver-less associated function whose body has more than
/// 256 operations must mention `Self` or take `self`, for the generated code to know it is
/// in an `impl`.)
///
/// Sizes may be generic (`fn dense<const I: usize, const O: usize>(w: [[f64; I]; O], x:
/// [f64; I]) -> [f64; O]`): each call from another body infers them from its arguments, as
/// does a direct call (or give them: `dense_graph::<3, 2>(..)`), and the compiled sweeps
/// cover such helpers at every size. A generic function's `name_grad` gives each
/// parameter's gradient in its own shape, since stable Rust cannot write a flat
/// `[f64; I * O + I]`; for the same reason it has no `name_hvp`, `name_hessian`,
/// `name_jvp` or `name_jacobian` (a function with concrete sizes that calls it has them).
/// Type parameters (`T: Float`, `f32`) are a compile error.
///
/// The plain function and the graph compute the same value bit for bit: the rewrite keeps
/// every operation, its operands' order and its association as written. (One exception:
/// `max` and `min` of two equal zeros, where `f64::max` may return either zero and the
/// graph always returns `0.0` for `max` and `-0.0` for `min`.)
///
/// # How `name_grad` computes
///
/// `name_grad` runs the body as generated straight Rust first: a forward sweep on plain
/// `f64`s that keeps, inside loops, exactly the values the local derivatives will read (on
/// one thread-local stack, reused: a warm call allocates nothing), then a reverse sweep
/// that walks the statements backwards (loops reversed, branches replayed) and adds each
/// operand's contribution into its adjoint. It calls the runtime's own value and slope
/// functions and adds the same contributions in the same order as `name_graph` followed by
/// `backward`, so the value and every gradient component are the same bits. The sweeps
/// decide no error: when a value or a gradient component is not finite, they give up and
/// the checked path (the graph on this thread's tape, with its validated pass) runs the
/// call and returns exactly its result or its typed error. They check a value where no
/// later check would see it: an operand that the operation carries into a non-finite
/// result (`inf * 0` is NaN) is seen by that result's check, and a running sum in a loop
/// is checked once after the loop; a value that a condition or other plain code reads is
/// checked at once, so plain code never sees a number the tape would have refused.
///
/// The sweeps cover straight-line code, `let`/`let mut` and compound assignments, blocks,
/// `if` / `else if` / `else` as statements and values, `if let` and `match` on data (arms
/// that bind names too), `return` from branches (what follows the `if` becomes its `else`)
/// and from inside loops, `for` loops over ranges, data slices and tracked arrays (with
/// `.iter()` or `&w`, `.zip` of data or of another tracked array's chain, `.enumerate`,
/// `.rev`, `.skip`, `.take`, `.step_by`, nested: `for (p, (i, q)) in
/// v.iter().zip(w.iter().enumerate())`),
/// `while` and `loop`, `break`, `continue` and `return` at any depth of `if`s
/// and blocks (labelled `break` and `continue` out of a nested loop too: the forward sweep
/// keeps the flags and trip counts the reverse sweep needs), folds (`.sum()`,
/// `.product()`, `.fold(..)`, with or without `.map`), `f64`, array and `#[param]`
/// parameters (structs with `#[derive(Parameters)]`, their fields, `Vec` fields and slices
/// walked by their length), `mut` scalar parameters, local arrays (`[0.0; N]` indexed by
/// loop variables, array literals `[x * 2.0, y.sin(), 1.0]`, and local vectors sized at
/// run time, `vec![[0.0; D]; n]`), a KV cache grown by `push` at the body's top level
/// (`keys.push(linear(p.wk, x))`, read by `keys[t][j]` and `keys.len()`; its adjoints grow
/// with it going forward and give each row back going back), `.detach()`, and calls of
/// other `#[differentiable]` functions and methods, const generic ones too, their sizes
/// inferred or turbofished (`linear::<16, 64>(w, x)`, `self.norm::<4>(v)`)
/// (`self.helper(x)`, `Self::helper(self, x)`, helpers with `mut` scalar parameters),
/// returning `f64` or
/// arrays (layers, another helper's result changed in place and returned), with
/// tracked values, arrays, rows and fields of parameter structs, whole parameter structs,
/// arrays, rows and `Vec`s (fields, or computed by the body) lent to a slice parameter
/// (`dot(&p.w, xs)`, `energy(&keys)` for `#[param] rows: &[[f64; 2]]`) or array literals as
/// arguments (`g([x, w[1], a * b, 1.0])`, `g([x; 3])`, rows too: `linear([[x, 1.0], w], v)`,
/// `[w, m[1]]`, `[[x, y], [0.5; 2]]`, a helper's whole result `[h, w]`, elements of a
/// helper's result, `[h[0], x]`: a tracked value as it is starts its element's
/// adjoint at the value's and takes it back after the call; `dot([1.0, 2.0, 3.0], v)`:
/// data for a differentiated parameter, whose adjoints are spares, as for `f(SCALE, x)`
/// of a constant or `f(if k > 2 { 0.5 } else { 1.0 }, x)`), data that changes before the
/// call's reverse sweep (a loop's counter, `f(x, k)` in a `while`, or data read from
/// tracked values, `f(x.detach().ceil(), y)`: a number, kept on the value stack for the
/// reverse; inside a helper, whose halves are two functions, one whose type the body
/// shows: a float literal, `as f64`, `.detach()`, an integer counter, a local or data
/// parameter declared so, `ts[k]` of a data slice), helpers returning an array
/// literal (`[a * b, s.sqrt()]`, scalar locals as they are too), loops through
/// `iter_mut()` (`for v in out.iter_mut() { *v *= w; }`, read as a loop over indices),
/// `*v` in a `.map` or a `for` loop over `.iter()` (`w.iter().map(|v| *v * *v).sum::<f64>()`,
/// `for p in w.iter() { s += *p; }`, pairs of `.zip` and `.enumerate` too: `.map(|(p, q)|
/// *p * *q)`), elements and rows read by an index that changes later (`let e = w[j];`,
/// `let r = m[j];`, `g(y, w[j % 3])`, `rows[j] = g(..)` in a `while` counting `j`: the
/// index is kept on the value stack), a helper's result handed back to it (`h = g(x,
/// h);`), and loops over data alone. A helper call stays compiled: the caller's sweeps call the
/// callee's own compiled halves (through its hidden body, so a call of a function that is
/// not differentiable is still one compile error), which add the callee's contributions
/// straight into the caller's adjoints, in the trace's order (a `#[param]` slice is read in
/// place when the caller lends its own, and kept as a copy when the caller computed it);
/// a helper without compiled halves (one written
/// `#[differentiable(tape)]`, or one whose halves do not cover its body: its own error
/// says where) makes a caller whose sweeps would call it a compile error at the call. A
/// helper may return a parameter as it is (`if x > 0.0 { x } else { 0.0 }`,
/// `let mut m = x; if y > m { m = y; } m`, `return v[i];` from a loop, `[x, y * 2.0]`,
/// `[v[2], v[0] * y]`, or another call's result reordered, `[a[1], a[0]]`): called by
/// another body, the tape copies such a result into a `copy` node of its own, whose sum
/// reaches the argument as one term, as the helper's halves hand it back.
///
/// A statement that copies a tracked scalar (`let v = y;`, `v = y;`, `a[i] = y;`, an arm
/// of an `if` or `match` valued by a name, a name or an element of a parameter array in
/// an array literal, `[x, v[2], 1.0]`, a repeated value, `[x * 2.0; 3]`, once per
/// element) records a `copy`
/// node on the tape: `v` is a variable of its own, as in the compiled sweeps, so what
/// reads `v` sums into `v`'s adjoint and reaches `y` as one term (slope 1). The gradient
/// is the same number the chain rule gives either way; the copy is what makes the tape's
/// order of additions, and so its bits, the sweeps' own, however `y` and `v` are read
/// and reassigned later. (An element of a `#[param]` struct, whose shape the attribute
/// cannot see, and a row stay other names of the same nodes; an element of a `#[param]`
/// slice of `f64`s, `let b = ps[k];`, is a copy, its type showing it is a scalar.)
/// One value lent to a helper twice (`dot(v, v)`, `mul(x, x)`, `mix([x, y, x])`, or
/// parts of one array, `mul(w[i], w[j])`, `scale(w, w[1])`) is compiled too: the tape's
/// node receives both parameters' edges, so the call shares their adjoints: the caller
/// copies the adjoints of each array it lends from into one buffer, hands the helper each
/// argument's positions there, and copies the sums back after the helper's reverse half
/// has added into them, in the trace's order. A helper takes one value twice when its
/// differentiated parameters are `f64`s or arrays of them and it lends none of them on
/// beside another; a call of any other with one value twice is a compile error at the
/// call, and so is one value lent twice beside a whole parameter struct (in an array
/// literal, `g([x, x], p)`, each element is a copy of its own, so that one compiles).
/// Elements of one array at distinct constant indices (`g(s[0], s[2])`) are different
/// nodes: the call borrows their adjoints apart and shares nothing, so any helper takes
/// them.
/// A helper returning an array may `return` early (`return [x, y * 2.0];`, `return h;`,
/// `return other(h);`), from branches and loops.
/// Copies of tracked scalars read again later (`let prev = h; h = f(h);`,
/// `second = best; best = v;`, `hs[t] = h;`, `best = w[i];`, also in helpers: `m = y;
/// m * m`) are `copy` operations on both paths (see above). Local arrays of a known
/// length copied whole (`let prev = h;` before `h = cell(w, prev, x);`) are the same
/// nodes under another name on the tape, which the sweeps follow with node numbers: each
/// element carries the number of the node it holds, and the reverse sweep adds every read
/// into that node's cell, in the trace's order (a helper lent such an array whole, or
/// returning into it, is called element by element). Other bodies (a `break`, `continue` or `return`
/// inside an expression, a `mut` parameter that is not a scalar, a `push` of anything but
/// a helper's result or onto a vector declared inside a loop or a helper, a loop over a
/// vector's length that pushes to it, `.flatten()`, an `if` whose value is a helper's
/// array (`let mut h = [0.0; N];` assigned `h = f(..);` in each branch compiles), a
/// `#[param]` struct's or slice's element or a row named by a `let` and read again in an
/// order the sweeps do not follow (`let v = p.w[0] * 1.0;`, a new value, always is),
/// bodies of more than 512
/// operations as written, whose sweeps would take rustc tens of seconds) are a compile
/// error that points
/// at the first thing the sweeps do not follow: a slow path is never silent. Rewrite that
/// part, move it into a helper, or write `#[differentiable(tape)]` to run `name_grad` on
/// the checked path alone knowingly (and the function then has no compiled halves for
/// its callers either): same results, at the speed of the tape.
///
/// ```compile_fail
/// use scalar_autodiff::differentiable;
///
/// #[differentiable] // error: `squares_grad` would run on the tape (at `.flatten()`)
/// fn squares(w: [[f64; 2]; 2]) -> f64 {
///     w.iter().flatten().map(|v| v * v).sum::<f64>()
/// }
/// ```
///
/// ```
/// use scalar_autodiff::differentiable;
///
/// #[differentiable(tape)] // chosen: every call is recorded on the tape
/// fn squares(w: [[f64; 2]; 2]) -> f64 {
///     w.iter().flatten().map(|v| v * v).sum::<f64>()
/// }
///
/// // The sum of squares, and its gradient 2w, row-major.
/// let (value, gradient) = squares_grad([[1.0, 2.0], [3.0, 4.0]])?;
/// assert_eq!(value, 30.0);
/// assert_eq!(gradient, [2.0, 4.0, 6.0, 8.0]);
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
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
/// - elements and fields of differentiated parameters (`w[i]`, `w[i][j]`, `p.w1[i]`,
///   `p.layer.b`), with data indices, and `.len()` of them;
/// - local arrays of tracked values: `let mut h = [0.0; H];` (a local assigned a tracked
///   value anywhere is tracked from its declaration), `h[i] = z;`, `h[i] += z;`, nested
///   arrays, array literals `[a, b, c]` and `[z; N]`;
/// - iterator folds over tracked arrays and data: `.iter().sum::<f64>()`,
///   `.iter().map(|v| ..).sum()`, `.iter().zip(xs).map(|(a, b)| a * b).sum()`,
///   `.enumerate()`, `.product()`, `.fold(0.0, |acc, v| ..)`; the closure follows the rules
///   of a loop body;
/// - values computed only from data, constants and `.detach()`ed values, which are plain
///   data: `let mut m = f64::NEG_INFINITY; m = m.max(z.detach());` is ordinary Rust;
/// - `if` / `else if` / `else` as statements and values, whose conditions compare primal
///   values (`x > 0.0 && n < 3`; the branch not taken records nothing), and `match`,
///   `if let` and `while let` on data;
/// - `for` loops over ranges (`0..n`, `0..=xs.len()`), data (`for &x in xs`,
///   `xs.iter().zip(ys)`, `.enumerate()`) and parameter arrays (`w.iter()`), `while` on a
///   primal condition, `loop`, `break` and `continue` (with labels);
/// - calls of other `#[differentiable]` functions (also by path, `layers::dense(w, x)`,
///   or imported by name with the attribute on the `use`, `#[differentiable] use
///   layers::dense;`, which imports what a caller's body calls beside `dense`) and methods (`self.helper(x)`, `Self::helper(x)`), which record into the same graph;
///   arguments may be scalars, arrays, elements, fields and whole parameters
///   (`dense(p.w1, p.b1, x)`), and data for a differentiated parameter becomes constants.
///
/// Anything else on a tracked value (`%`, casts, integer arithmetic, closures outside a
/// fold, macro calls, references, unknown methods, `match` on a tracked value, a tracked
/// index or loop bound, a sub-slice `w[0..4]`, a tracked value written into data,
/// `loop` with `break value`, and signatures with a parameter whose role is unclear,
/// without a differentiated parameter, or with a result other than `f64` or an array of
/// it) is a compile error on the offending tokens, saying what is unsupported, why, and
/// what to write instead. Every offending spot of a function is
/// reported in one compile. A call with tracked arguments to a function that is not
/// `#[differentiable]` fails with rustc's "cannot find function `differentiable_name`".
///
/// # Examples
///
/// ```
/// use scalar_autodiff::differentiable;
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
/// let x = scalar_autodiff::Scalar::variable(2.0)?;
/// let pass = loss_graph(&x)?.backward()?;
/// assert_eq!(x.gradient(), Some(8.0));
/// assert_eq!(pass.ledger().nodes.len(), 3); // x, s, loss
/// assert_eq!(pass.ledger().edges.len(), 4); // two per use of x and of s
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// A small model: data, a hyperparameter, a loop and a branch.
///
/// ```
/// use scalar_autodiff::differentiable;
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
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// A rejected construct is a compile error on the offending tokens:
///
/// ```compile_fail
/// #[scalar_autodiff::differentiable]
/// fn step(x: f64) -> f64 {
///     x.floor() // error: `floor` cannot be differentiated
/// }
/// ```
///
pub use autodiff_macros::differentiable;

/// Derives [`Parameters`](trait@Parameters) for a struct whose fields are parameter shapes:
/// `f64`, arrays `[f64; K]` (nested to any depth), `Vec<f64>`, and other structs with
/// `#[derive(Parameters)]`.
///
/// The struct's scalars are its fields' scalars, fields in declaration order (elements in
/// index order, row-major for nested arrays): the order of [`Parameters::visit`],
/// [`Parameters::to_flat`] and of a flat gradient. The struct's gradient has the struct's
/// own type (`type Gradient = Self`), so an optimizer step pairs each weight with its
/// derivative by [`Parameters::zip_mut`].
///
/// Its tracked copy, `Parameters::Tracked<V>`, is a generated struct with the same field
/// names and visibilities, each field the field's own tracked shape (`[[V; 2]; 3]` for
/// `[[f64; 2]; 3]`, `Vec<V>` for `Vec<f64>`), so that `tracked.w[i][j]` reads it; it is
/// `Clone`, `Copy` and `Debug` when its fields are. Its name is not part of the API: write
/// `<Linear as Parameters>::Tracked<Scalar>`.
///
/// Const generic parameters are supported (`struct Layer<const N: usize> { w: [f64; N] }`).
/// Type parameters, lifetimes, enums, unions, structs without fields and slice fields are
/// compile errors that say why. A field whose type is not a parameter shape (such as
/// `usize`; keep data out of the parameters) is rustc's error on that type, since the
/// generated impl is bounded on every field type implementing `Parameters` with itself as
/// its gradient.
///
/// # Examples
///
/// One step of gradient descent over a small layer:
///
/// ```
/// use scalar_autodiff::{Parameters, ScalarAutodiffError};
///
/// /// `y = w x + b`, from 2 inputs to 3 outputs.
/// #[derive(Parameters)]
/// struct Linear {
///     w: [[f64; 2]; 3],
///     b: [f64; 3],
/// }
///
/// let mut layer = Linear {
///     w: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
///     b: [0.5, 0.5, 0.5],
/// };
/// assert_eq!(layer.parameter_count(), 9);
/// // `w` row by row, then `b`:
/// let saved = layer.to_flat();
/// assert_eq!(saved, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.5, 0.5, 0.5]);
///
/// // A gradient of `Linear` is a `Linear` (made by hand here; `gradient_of` reads one
/// // from a graph).
/// let gradient = Linear {
///     w: [[2.0, 0.0], [0.0, 2.0], [-2.0, 0.0]],
///     b: [1.0, 0.0, -1.0],
/// };
/// let rate = 0.5;
/// layer.zip_mut(&gradient, |w, g| *w -= rate * g)?;
/// assert_eq!(layer.w, [[0.0, 2.0], [3.0, 3.0], [6.0, 6.0]]);
/// assert_eq!(layer.b, [0.0, 0.5, 1.0]);
///
/// // Undo the step from the saved scalars; a list of the wrong length changes nothing.
/// let short = layer.read_flat(&saved[..8]);
/// let mismatch = ScalarAutodiffError::LengthMismatch { expected: 9, found: 8 };
/// assert_eq!(short, Err(mismatch));
/// assert_eq!(layer.b, [0.0, 0.5, 1.0]);
/// layer.read_flat(&saved)?;
/// assert_eq!(layer.to_flat(), saved);
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// The gradient from a graph: [`Parameters::variables`] makes the tracked copy, whose fields
/// are read like the struct's, and [`Parameters::gradient_of`] reads the gradient back in
/// the struct's shape after [`Scalar::backward`].
///
/// ```
/// use scalar_autodiff::{Parameters, Scalar};
///
/// #[derive(Parameters)]
/// struct Line {
///     w: [f64; 2],
///     b: f64,
/// }
///
/// let line = Line { w: [3.0, -1.0], b: 0.5 };
/// let x = [2.0, 4.0];
/// let tracked = line.variables()?;
/// // loss = w[0] x[0] + w[1] x[1] + b
/// let mut loss = tracked.b.clone();
/// for (w, x) in tracked.w.iter().zip(x) {
///     loss = loss.add(&w.mul(&Scalar::constant(x)?)?)?;
/// }
/// assert_eq!(loss.value(), 2.5);
/// loss.backward()?;
/// let gradient: Line = line.gradient_of(&tracked);
/// assert_eq!((gradient.w, gradient.b), ([2.0, 4.0], 1.0));
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// A field that is not a parameter shape is a compile error on its type:
///
/// ```compile_fail
/// #[derive(scalar_autodiff::Parameters)]
/// struct Model {
///     w: [f64; 3],
///     steps: usize, // error: `usize` is not a parameter shape
/// }
/// ```
pub use autodiff_macros::Parameters;

/// Support for the code `#[differentiable]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use autodiff_runtime::__private::*;
}

/// The README's Rust examples, compiled and run as doctests so it keeps telling the truth.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
