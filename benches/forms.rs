//! The forms a user writes, each beside a twin: for every form (`continue` in a `for`, a
//! `.fold(..)`, `.map(..).fold(..)`, a counted `while`, `loop` left by `break`, `return`
//! from inside a `for`, a helper lent rows of a parameter struct, a helper's result stored
//! into a row of a local array, a helper's result changed in place, `self.helper(..)` from a
//! method, exits nested in `if`s, a copy read again later, an array literal lent as it is,
//! one value lent to a helper twice, 100 steps of a recurrence written out, a ReLU helper
//! returning its parameter as it is),
//! `form_grad` of the
//! function written that way against `twin_grad` of the same computation written in a form
//! the compiled sweeps ran before (`if` instead of `continue`, a `for` loop instead of a
//! fold, `.sum()` instead of `.fold(..)`, `for` instead of `while`, the method inline,
//! `dot(h, h)` written out, the steps as a loop, `x.max(0.0)`, and so on). One group per
//! form, named after it, with the ids `form` and `twin`: their ratio is what the form costs
//! over the way the library already knew, about 1 when the form runs compiled.
//!
//! Before anything is timed, every pair is checked: the plain functions, the values and every
//! gradient component are the same bits (the two bodies do the same arithmetic in the same
//! order), so a fast wrong answer fails the run. Each group also prints whether a warm call
//! of `form_grad` and of `twin_grad` ran its compiled sweeps alone ("compiled") or started
//! traces on the checked path ("traced", with the number of traces per call): a traced form
//! is timed all the same, at the tape's speed.
//!
//! Run with `cargo bench --bench forms`; `-- --quick` for a shorter run.

// The bodies index their arrays as the formulas do.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError};

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// The width of every row and layer below.
const WIDTH: usize = 16;

// ---------------------------------------------------------------- checks and the group

/// Panics unless `form` and `twin` give the same value and gradient, bit for bit, and the
/// plain functions' values (`plain`: the form's, then the twin's) are those bits too.
fn check_same<G: Parameters>(
    case: &str,
    plain: [f64; 2],
    form: &Result<(f64, G)>,
    twin: &Result<(f64, G)>,
) {
    let flat = |variant: &str, r: &Result<(f64, G)>| match r {
        Ok((value, gradient)) => (*value, gradient.to_flat()),
        Err(e) => panic!("{case}/{variant}: the gradient failed: {e}"),
    };
    let (form, twin) = (flat("form", form), flat("twin", twin));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert!(
        form.1.iter().any(|g| *g != 0.0),
        "{case}: a gradient of zeros checks nothing"
    );
    assert_eq!(
        plain[0].to_bits(),
        plain[1].to_bits(),
        "{case}: the plain functions differ: form {}, twin {}",
        plain[0],
        plain[1]
    );
    assert_eq!(
        form.0.to_bits(),
        plain[0].to_bits(),
        "{case}/form: the value {} is not the plain function's {}",
        form.0,
        plain[0]
    );
    assert_eq!(
        twin.0.to_bits(),
        plain[1].to_bits(),
        "{case}/twin: the value {} is not the plain function's {}",
        twin.0,
        plain[1]
    );
    assert_eq!(
        bits(&form.1),
        bits(&twin.1),
        "{case}: the gradients differ: form {:?}, twin {:?}",
        form.1,
        twin.1
    );
}

/// Whether a warm call of `f` runs its compiled sweeps alone: `Ok(())` when a second call
/// starts no trace, else `Err` with the number of traces it started.
fn warm_traces<R>(f: &impl Fn() -> R) -> std::result::Result<(), u64> {
    black_box(f());
    let before = scalar_autodiff::__private::traces();
    black_box(f());
    match scalar_autodiff::__private::traces() - before {
        0 => Ok(()),
        traces => Err(traces),
    }
}

/// What [`warm_traces`] found, in words.
fn status(found: std::result::Result<(), u64>) -> String {
    match found {
        Ok(()) => "compiled".to_string(),
        Err(traces) => format!("traced ({traces} traces per warm call)"),
    }
}

/// Checks a form against its twin ([`check_same`]), prints whether each runs compiled
/// ([`warm_traces`]), and times both in a group named `case`, ids `form` and `twin`.
fn pair<G: Parameters>(
    c: &mut Criterion,
    case: &str,
    plain: [f64; 2],
    form: impl Fn() -> Result<(f64, G)>,
    twin: impl Fn() -> Result<(f64, G)>,
) {
    check_same(case, plain, &form(), &twin());
    println!(
        "{case}: form {}, twin {}",
        status(warm_traces(&form)),
        status(warm_traces(&twin))
    );
    let mut group = c.benchmark_group(case);
    group.bench_function("form", |b| b.iter(|| form().ok()));
    group.bench_function("twin", |b| b.iter(|| twin().ok()));
    group.finish();
}

/// A tiny LCG (Knuth's MMIX constants): the top 53 bits as a number in [0, 1).
fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// `n` numbers uniform in [-1, 1), from `seed`.
fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    (0..n).map(|_| 2.0 * lcg(&mut state) - 1.0).collect()
}

/// `n` rows of [`WIDTH`] numbers uniform in [-1, 1), from `seed`.
fn rows(seed: u64, n: usize) -> Vec<[f64; WIDTH]> {
    let mut state = seed;
    (0..n)
        .map(|_| std::array::from_fn(|_| 2.0 * lcg(&mut state) - 1.0))
        .collect()
}

/// A `[f64; WIDTH]` of weights uniform in ±`scale`, from `seed`.
fn weights(seed: u64, scale: f64) -> [f64; WIDTH] {
    let mut state = seed;
    std::array::from_fn(|_| scale * (2.0 * lcg(&mut state) - 1.0))
}

/// A `WIDTH` by `WIDTH` matrix uniform in ±1/sqrt(WIDTH), from `seed`.
fn matrix(seed: u64) -> [[f64; WIDTH]; WIDTH] {
    let mut state = seed;
    std::array::from_fn(|_| std::array::from_fn(|_| 0.25 * (2.0 * lcg(&mut state) - 1.0)))
}

// ---------------------------------------------------------------- continue in a for

/// `sin(w x)` summed over the non-negative `x`s, skipping the others with `continue`.
#[differentiable]
fn continue_in_for(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        if x < 0.0 {
            continue;
        }
        total += (w * x).sin();
    }
    total
}

/// [`continue_in_for`] with the rest of the body under `if x >= 0.0`.
#[differentiable]
fn continue_in_for_twin(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        if x >= 0.0 {
            total += (w * x).sin();
        }
    }
    total
}

/// `continue_in_for` over 256 numbers in [-1, 1) (about half of them skipped).
fn continue_case(c: &mut Criterion) {
    let xs = uniform(0xc0_471e, 256);
    let w = 0.7;
    pair(
        c,
        "continue_in_for",
        [continue_in_for(w, &xs), continue_in_for_twin(w, &xs)],
        || continue_in_for_grad(black_box(w), black_box(&xs)),
        || continue_in_for_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- folds

/// `tanh(w · x)` summed over rows, the dot product a `.fold(..)` of `w.iter().zip(x)`.
#[differentiable]
fn fold(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let s = w.iter().zip(x).fold(0.0, |acc, (a, v)| acc + a * v);
        total += s.tanh();
    }
    total
}

/// [`fold`] with the dot product an explicit `for` loop.
#[differentiable]
fn fold_twin(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let mut s = 0.0;
        for (a, v) in w.iter().zip(x) {
            s += a * v;
        }
        total += s.tanh();
    }
    total
}

/// [`fold`] with the products made by `.map(..)` and added by `.fold(..)`.
#[differentiable]
fn map_fold(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let s = w
            .iter()
            .zip(x)
            .map(|(a, v)| a * v)
            .fold(0.0, |acc, p| acc + p);
        total += s.tanh();
    }
    total
}

/// [`map_fold`] with `.sum::<f64>()` in place of the `.fold(..)`.
#[differentiable]
fn map_fold_twin(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let s = w.iter().zip(x).map(|(a, v)| a * v).sum::<f64>();
        total += s.tanh();
    }
    total
}

/// `fold` and `map_fold` over 32 rows of 16.
fn fold_cases(c: &mut Criterion) {
    let xs = rows(0xf01d, 32);
    let w = weights(0x3e1, 0.25);
    pair(
        c,
        "fold",
        [fold(w, &xs), fold_twin(w, &xs)],
        || fold_grad(black_box(w), black_box(&xs)),
        || fold_twin_grad(black_box(w), black_box(&xs)),
    );
    pair(
        c,
        "map_fold",
        [map_fold(w, &xs), map_fold_twin(w, &xs)],
        || map_fold_grad(black_box(w), black_box(&xs)),
        || map_fold_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- while and loop

/// `y ← y x + 1/4`, `n` times, counted by a `while`.
#[differentiable]
fn while_counter(x: f64, n: usize) -> f64 {
    let mut y = 1.0;
    let mut k = 0;
    while k < n {
        y = y * x + 0.25;
        k += 1;
    }
    y
}

/// [`while_counter`] counted by a `for` over `0..n`.
#[differentiable]
fn while_counter_twin(x: f64, n: usize) -> f64 {
    let mut y = 1.0;
    for _ in 0..n {
        y = y * x + 0.25;
    }
    y
}

/// The most terms [`loop_break_twin`] walks; [`loop_break`] needs fewer (checked: the two
/// agree only if it stops before).
const SERIES_CAP: usize = 64;

/// `a eˣ` by its Taylor series, summed until a term no longer changes the sum: a `loop`
/// left by `break` in the middle of the body, its trip count set by the value.
#[differentiable]
fn loop_break(a: f64, x: f64) -> f64 {
    let mut term = a;
    let mut total = a;
    let mut k = 1.0;
    loop {
        term = term * x / k;
        total += term;
        if term.abs() <= 1e-17 * total.abs() {
            break;
        }
        k += 1.0;
    }
    total
}

/// [`loop_break`] as a `for` over [`SERIES_CAP`] steps that does nothing once a data flag
/// `done` is set (where the `loop` breaks).
#[differentiable]
fn loop_break_twin(a: f64, x: f64) -> f64 {
    let mut term = a;
    let mut total = a;
    let mut k = 1.0;
    let mut done = false;
    for _ in 0..SERIES_CAP {
        if !done {
            term = term * x / k;
            total += term;
            if term.abs() <= 1e-17 * total.abs() {
                done = true;
            } else {
                k += 1.0;
            }
        }
    }
    total
}

/// How many terms [`loop_break`] adds at `a` and `x`: its trip count.
fn series_terms(a: f64, x: f64) -> usize {
    let (mut term, mut total, mut k) = (a, a, 1.0);
    loop {
        term = term * x / k;
        total += term;
        if term.abs() <= 1e-17 * total.abs() {
            return k as usize;
        }
        k += 1.0;
    }
}

/// `while_counter` with n = 200 at x = 0.5 (y stays near its fixed point 0.5), and
/// `loop_break` at x = 3 (28 terms; its twin walks 64 steps).
fn loop_cases(c: &mut Criterion) {
    let (x, n) = (0.5, 200);
    pair(
        c,
        "while_counter",
        [while_counter(x, n), while_counter_twin(x, n)],
        || while_counter_grad(black_box(x), black_box(n)),
        || while_counter_twin_grad(black_box(x), black_box(n)),
    );
    let (a, x) = (0.75, 3.0);
    let terms = series_terms(a, x);
    assert!(
        terms < SERIES_CAP,
        "loop_break: {terms} terms, the twin stops at {SERIES_CAP}"
    );
    pair(
        c,
        "loop_break",
        [loop_break(a, x), loop_break_twin(a, x)],
        || loop_break_grad(black_box(a), black_box(x)),
        || loop_break_twin_grad(black_box(a), black_box(x)),
    );
}

// ---------------------------------------------------------------- return in a for

/// The first `x` above it ends the sum.
const LIMIT: f64 = 1.5;

/// `w x` summed until an `x` above [`LIMIT`], where the function returns `t w` from inside
/// the loop.
#[differentiable]
fn return_in_for(w: f64, xs: &[f64]) -> f64 {
    let mut t = 0.0;
    for i in 0..xs.len() {
        if xs[i] > LIMIT {
            return t * w;
        }
        t += w * xs[i];
    }
    t
}

/// [`return_in_for`] leaving the loop by `break` with a data flag, the result computed
/// after it.
#[differentiable]
fn return_in_for_twin(w: f64, xs: &[f64]) -> f64 {
    let mut t = 0.0;
    let mut over = false;
    for i in 0..xs.len() {
        if xs[i] > LIMIT {
            over = true;
            break;
        }
        t += w * xs[i];
    }
    if over {
        t * w
    } else {
        t
    }
}

/// `return_in_for` over 256 numbers in [-1, 1) with a 2 at index 200: the loop returns
/// after 200 steps.
fn return_case(c: &mut Criterion) {
    let mut xs = uniform(0x2e7, 256);
    xs[200] = 2.0;
    let w = 0.9;
    pair(
        c,
        "return_in_for",
        [return_in_for(w, &xs), return_in_for_twin(w, &xs)],
        || return_in_for_grad(black_box(w), black_box(&xs)),
        || return_in_for_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- helpers lent rows

/// Token and position embeddings: 27 tokens, 16 positions, 16 wide.
#[derive(Parameters, Clone)]
struct Emb {
    wte: [[f64; WIDTH]; 27],
    wpe: [[f64; WIDTH]; 16],
}

/// Two rows added element by element.
#[differentiable]
fn add(a: [f64; WIDTH], b: [f64; WIDTH]) -> [f64; WIDTH] {
    let mut out = [0.0; WIDTH];
    for i in 0..WIDTH {
        out[i] = a[i] + b[i];
    }
    out
}

/// The sum of squares of each token's embedding plus its position's, the rows added by
/// the helper [`add`] lent `p.wte[tok]` and `p.wpe[pos]`.
#[differentiable]
fn helper_rows(#[param] p: &Emb, tokens: &[usize]) -> f64 {
    let mut total = 0.0;
    for (pos, &tok) in tokens.iter().enumerate() {
        let x = add(p.wte[tok], p.wpe[pos]);
        for i in 0..WIDTH {
            total += x[i] * x[i];
        }
    }
    total
}

/// [`helper_rows`] with the rows added inline, element by element.
#[differentiable]
fn helper_rows_twin(#[param] p: &Emb, tokens: &[usize]) -> f64 {
    let mut total = 0.0;
    for (pos, &tok) in tokens.iter().enumerate() {
        for i in 0..WIDTH {
            let v = p.wte[tok][i] + p.wpe[pos][i];
            total += v * v;
        }
    }
    total
}

/// `helper_rows` over an 8-token sequence.
fn helper_rows_case(c: &mut Criterion) {
    let mut state = 0xe3b;
    let mut emb = || std::array::from_fn(|_| 0.1 * (2.0 * lcg(&mut state) - 1.0));
    let p = Emb {
        wte: std::array::from_fn(|_| emb()),
        wpe: std::array::from_fn(|_| emb()),
    };
    let tokens = [3, 17, 0, 26, 9, 9, 14, 5];
    pair(
        c,
        "helper_rows",
        [helper_rows(&p, &tokens), helper_rows_twin(&p, &tokens)],
        || helper_rows_grad(black_box(&p), black_box(&tokens)),
        || helper_rows_twin_grad(black_box(&p), black_box(&tokens)),
    );
}

// ---------------------------------------------------------------- helpers' results kept

/// A projection and a query, for [`store_row`].
#[derive(Parameters, Clone)]
struct Proj {
    w: [[f64; WIDTH]; WIDTH],
    q: [f64; WIDTH],
}

/// `w x`: a 16-wide linear layer without bias.
#[differentiable]
fn linear(w: [[f64; WIDTH]; WIDTH], x: [f64; WIDTH]) -> [f64; WIDTH] {
    let mut y = [0.0; WIDTH];
    for j in 0..WIDTH {
        let mut s = 0.0;
        for i in 0..WIDTH {
            s += w[j][i] * x[i];
        }
        y[j] = s;
    }
    y
}

/// `max(w x, 0)`: [`linear`] with the ReLU applied inside the helper.
#[differentiable]
fn linear_relu(w: [[f64; WIDTH]; WIDTH], x: [f64; WIDTH]) -> [f64; WIDTH] {
    let mut y = [0.0; WIDTH];
    for j in 0..WIDTH {
        let mut s = 0.0;
        for i in 0..WIDTH {
            s += w[j][i] * x[i];
        }
        y[j] = s.max(0.0);
    }
    y
}

/// Keys `w x` of 8 positions stored as rows of a local array (`keys[pos] = linear(..)`),
/// then each read back and scored against the query: the sum of `tanh(q · key)`.
#[differentiable]
fn store_row(#[param] p: &Proj, xs: &[[f64; WIDTH]; 8]) -> f64 {
    let mut keys = [[0.0; WIDTH]; 8];
    for (pos, &x) in xs.iter().enumerate() {
        keys[pos] = linear(p.w, x);
    }
    let mut total = 0.0;
    for pos in 0..8 {
        let mut s = 0.0;
        for j in 0..WIDTH {
            s += keys[pos][j] * p.q[j];
        }
        total += s.tanh();
    }
    total
}

/// [`store_row`] scoring each key as it is made, from `let k = linear(..)`.
#[differentiable]
fn store_row_twin(#[param] p: &Proj, xs: &[[f64; WIDTH]; 8]) -> f64 {
    let mut total = 0.0;
    for &x in xs.iter() {
        let k = linear(p.w, x);
        let mut s = 0.0;
        for j in 0..WIDTH {
            s += k[j] * p.q[j];
        }
        total += s.tanh();
    }
    total
}

/// A layer's ReLU applied in place to the helper's result, then summed over rows.
#[differentiable]
fn relu_in_place(w: [[f64; WIDTH]; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let mut h = linear(w, x);
        for i in 0..WIDTH {
            h[i] = h[i].max(0.0);
        }
        for i in 0..WIDTH {
            total += h[i];
        }
    }
    total
}

/// [`relu_in_place`] with the ReLU inside the helper, [`linear_relu`].
#[differentiable]
fn relu_in_place_twin(w: [[f64; WIDTH]; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let h = linear_relu(w, x);
        for i in 0..WIDTH {
            total += h[i];
        }
    }
    total
}

/// `store_row` over 8 positions, `relu_in_place` over 16 rows.
fn layer_cases(c: &mut Criterion) {
    let p = Proj {
        w: matrix(0x5707e),
        q: weights(0x9, 0.5),
    };
    let xs: [[f64; WIDTH]; 8] = rows(0x4e75, 8).try_into().expect("8 rows");
    pair(
        c,
        "store_row",
        [store_row(&p, &xs), store_row_twin(&p, &xs)],
        || store_row_grad(black_box(&p), black_box(&xs)),
        || store_row_twin_grad(black_box(&p), black_box(&xs)),
    );
    let w = matrix(0x4e1);
    let xs = rows(0x1a7e, 16);
    pair(
        c,
        "relu_in_place",
        [relu_in_place(w, &xs), relu_in_place_twin(w, &xs)],
        || relu_in_place_grad(black_box(w), black_box(&xs)),
        || relu_in_place_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- self.helper

/// A model as data: a slope and a shift, with its layers as methods.
struct Unit {
    slope: f64,
    shift: f64,
}

impl Unit {
    /// One unit: `tanh(slope w x + shift)`.
    #[differentiable]
    fn unit(&self, w: f64, x: f64) -> f64 {
        (self.slope * w * x + self.shift).tanh()
    }

    /// The squared units over `xs`, each through `self.unit(..)`.
    #[differentiable]
    fn self_helper(&self, w: f64, xs: &[f64]) -> f64 {
        let mut total = 0.0;
        for x in xs {
            let u = self.unit(w, *x);
            total += u * u;
        }
        total
    }

    /// [`Unit::self_helper`] with the unit written inline.
    #[differentiable]
    fn self_helper_twin(&self, w: f64, xs: &[f64]) -> f64 {
        let mut total = 0.0;
        for x in xs {
            let u = (self.slope * w * x + self.shift).tanh();
            total += u * u;
        }
        total
    }
}

/// `self_helper` over 256 numbers.
fn self_helper_case(c: &mut Criterion) {
    let model = Unit {
        slope: 0.8,
        shift: -0.1,
    };
    let xs = uniform(0x5e1f, 256);
    let w = 0.7;
    pair(
        c,
        "self_helper",
        [model.self_helper(w, &xs), model.self_helper_twin(w, &xs)],
        || model.self_helper_grad(black_box(w), black_box(&xs)),
        || model.self_helper_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- exits nested in `if`s

/// [`continue_in_for`] with the `continue` one `if` deeper, and a `break` two deep (as a
/// user nests them).
#[allow(clippy::collapsible_if)]
#[differentiable]
fn deep_exits(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        if x < 0.0 {
            if x < -0.5 {
                continue;
            }
            total += (w * x).cos();
        }
        if total > 1.0e6 {
            if x > 2.0 {
                break;
            }
        }
        total += (w * x).sin();
    }
    total
}

/// [`deep_exits`] with `if`s and `else`s alone (the data never breaks).
#[differentiable]
fn deep_exits_twin(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        if x < -0.5 {
        } else {
            if x < 0.0 {
                total += (w * x).cos();
            }
            total += (w * x).sin();
        }
    }
    total
}

/// `deep_exits` over 256 numbers in [-1, 1).
fn deep_exits_case(c: &mut Criterion) {
    let xs = uniform(0xdee9_e817, 256);
    let w = 0.7;
    pair(
        c,
        "deep_exits",
        [deep_exits(w, &xs), deep_exits_twin(w, &xs)],
        || deep_exits_grad(black_box(w), black_box(&xs)),
        || deep_exits_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- copies read again

/// A recurrence that keeps the previous state (`let prev = h;` before `h` changes): the
/// copy and its source share a node.
#[differentiable]
fn kept_state(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut h = 0.0;
    let mut out = 0.0;
    for x in xs {
        let prev = h;
        h = (w[0] * h + w[1] * x).tanh();
        out += prev * h;
    }
    out
}

/// [`kept_state`] with the new state computed into a local first.
#[differentiable]
fn kept_state_twin(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut h = 0.0;
    let mut out = 0.0;
    for x in xs {
        let next = (w[0] * h + w[1] * x).tanh();
        out += h * next;
        h = next;
    }
    out
}

/// `kept_state` over 256 numbers.
fn kept_state_case(c: &mut Criterion) {
    let xs = uniform(0x5747_e001, 256);
    let w = [0.6, 0.9];
    pair(
        c,
        "kept_state",
        [kept_state(w, &xs), kept_state_twin(w, &xs)],
        || kept_state_grad(black_box(w), black_box(&xs)),
        || kept_state_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- array literals

#[differentiable]
fn mix(v: [f64; 4]) -> f64 {
    (v[0] * v[1] + v[2]).tanh() * v[3]
}

#[differentiable]
fn mix_scalars(a: f64, b: f64, c: f64, d: f64) -> f64 {
    (a * b + c).tanh() * d
}

/// A helper lent an array literal of tracked values as they are and a constant.
#[differentiable]
fn lent_literal(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let z = w[0] * x;
        total += mix([z, w[1], x * 0.5, 1.5]);
    }
    total
}

/// [`lent_literal`] through a helper with four scalar parameters.
#[differentiable]
fn lent_literal_twin(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let z = w[0] * x;
        total += mix_scalars(z, w[1], x * 0.5, 1.5);
    }
    total
}

/// `lent_literal` over 256 numbers.
fn lent_literal_case(c: &mut Criterion) {
    let xs = uniform(0x0011_e4a1, 256);
    let w = [0.8, -0.3];
    pair(
        c,
        "lent_literal",
        [lent_literal(w, &xs), lent_literal_twin(w, &xs)],
        || lent_literal_grad(black_box(w), black_box(&xs)),
        || lent_literal_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- one value lent twice

#[differentiable]
fn dot(a: [f64; WIDTH], b: [f64; WIDTH]) -> f64 {
    let mut s = 0.0;
    for k in 0..WIDTH {
        s += a[k] * b[k];
    }
    s
}

/// A squared norm through `dot(h, h)`: the call shares its parameters' adjoints.
#[differentiable]
fn lent_twice(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let mut h = [0.0; WIDTH];
        for k in 0..WIDTH {
            h[k] = (w[k] * x[k]).tanh();
        }
        total += dot(h, h);
    }
    total
}

/// [`lent_twice`] with the dot product written out.
#[differentiable]
fn lent_twice_twin(w: [f64; WIDTH], xs: &[[f64; WIDTH]]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let mut h = [0.0; WIDTH];
        for k in 0..WIDTH {
            h[k] = (w[k] * x[k]).tanh();
        }
        let mut s = 0.0;
        for k in 0..WIDTH {
            s += h[k] * h[k];
        }
        total += s;
    }
    total
}

/// `lent_twice` over 64 rows.
fn lent_twice_case(c: &mut Criterion) {
    let xs = rows(0x0011_7a1c, 64);
    let w = weights(0x0011_7a1d, 0.5);
    pair(
        c,
        "lent_twice",
        [lent_twice(w, &xs), lent_twice_twin(w, &xs)],
        || lent_twice_grad(black_box(w), black_box(&xs)),
        || lent_twice_twin_grad(black_box(w), black_box(&xs)),
    );
}

// ---------------------------------------------------------------- steps written out

/// `h = (w[i] * h + x[j]).tanh();` once for every pair of indices.
macro_rules! unrolled {
    ($($i:literal $j:literal)*) => {
        /// 100 steps of a recurrence written out one by one (300 operations).
        #[differentiable]
        fn unrolled(w: [f64; 4], x: [f64; 3]) -> f64 {
            let mut h = 0.0;
            $(h = (w[$i] * h + x[$j]).tanh();)*
            h
        }
    };
}

unrolled!(
    0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1
    0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0
    0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2
    0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1
    0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0
);

/// [`unrolled`] as a loop.
#[differentiable]
fn unrolled_twin(w: [f64; 4], x: [f64; 3]) -> f64 {
    let mut h = 0.0;
    for i in 0..100 {
        h = (w[i % 4] * h + x[i % 3]).tanh();
    }
    h
}

/// `unrolled` at one point.
fn unrolled_case(c: &mut Criterion) {
    let (w, x) = ([0.5, -0.3, 0.8, 0.1], [0.2, 0.4, -0.1]);
    pair(
        c,
        "unrolled",
        [unrolled(w, x), unrolled_twin(w, x)],
        || unrolled_grad(black_box(w), black_box(x)),
        || unrolled_twin_grad(black_box(w), black_box(x)),
    );
}

/// ReLU written the way a reader writes it: the parameter itself, or zero.
#[differentiable]
fn relu_as_is(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// ReLU as one operation.
#[differentiable]
fn relu_max(x: f64) -> f64 {
    x.max(0.0)
}

/// Eight units of four inputs through [`relu_as_is`], a helper returning its parameter.
#[differentiable]
fn returned(w: [[f64; 4]; 8], x: [f64; 4]) -> f64 {
    let mut total = 0.0;
    for j in 0..8 {
        let mut s = 0.0;
        for k in 0..4 {
            s += w[j][k] * x[k];
        }
        total += relu_as_is(s) * s;
    }
    total
}

/// [`returned`] through [`relu_max`].
#[differentiable]
fn returned_twin(w: [[f64; 4]; 8], x: [f64; 4]) -> f64 {
    let mut total = 0.0;
    for j in 0..8 {
        let mut s = 0.0;
        for k in 0..4 {
            s += w[j][k] * x[k];
        }
        total += relu_max(s) * s;
    }
    total
}

/// `returned` at one point.
fn returned_case(c: &mut Criterion) {
    let v = uniform(0x2e1a, 36);
    let w: [[f64; 4]; 8] = std::array::from_fn(|j| std::array::from_fn(|k| v[4 * j + k]));
    let x = [v[32], v[33], v[34], v[35]];
    pair(
        c,
        "returned",
        [returned(w, x), returned_twin(w, x)],
        || returned_grad(black_box(w), black_box(x)),
        || returned_twin_grad(black_box(w), black_box(x)),
    );
}

criterion_group!(
    benches,
    continue_case,
    fold_cases,
    loop_cases,
    return_case,
    helper_rows_case,
    layer_cases,
    self_helper_case,
    deep_exits_case,
    kept_state_case,
    lent_literal_case,
    lent_twice_case,
    unrolled_case,
    returned_case
);
criterion_main!(benches);
