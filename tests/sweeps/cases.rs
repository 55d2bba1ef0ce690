//! Bodies in the compiled sweeps' forms, against `name_graph` + `backward`, bit for bit on
//! random inputs (the random programs of `sweep_bits_*` mostly exercise the checked path):
//! loops over ranges and data, branches in loops, local arrays, copies, `detach`, dead
//! code whose derivative overflows (the sweeps give up, the checked path decides), and
//! domains left unguarded so that some inputs fail (the same error on both paths).
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, Parameters, Scalar, ScalarAutodiffError};

use crate::support::{central, XorShift};

#[differentiable]
fn chain(x: f64, steps: usize) -> f64 {
    let mut v = x;
    for step in 0..steps {
        if step % 3 == 0 {
            v *= 1.25;
        } else if step % 3 == 1 {
            v += -0.1;
        } else {
            v = v.tanh();
        }
    }
    v
}

#[differentiable]
fn fit(w: [f64; 2], xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate().take(steps) {
        let guess = w[0] * x + w[1];
        let error = guess - (i as f64).sqrt();
        if error > 0.0 {
            total += error * error;
        } else {
            total -= error.powi(3) * 0.5;
        }
    }
    total.sqrt()
}

#[differentiable]
fn softmax(w: [[f64; 2]; 3], b: [f64; 3], xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate().take(steps) {
        let mut z = [0.0; 3];
        for k in 0..3 {
            let mut s = b[k];
            s += w[k][0] * x + w[k][1] * (i as f64);
            z[k] = s;
        }
        let mut m = z[0].detach();
        for k in 1..3 {
            m = m.max(z[k].detach());
        }
        let mut sum = 0.0;
        for k in 0..3 {
            sum += (z[k] - m).exp();
        }
        total += m + sum.ln() - z[i % 3];
    }
    total
}

#[differentiable]
fn unguarded(x: f64, y: f64, steps: usize) -> f64 {
    let s = x * y;
    let unused = (x * 1e-200).sqrt();
    let mut acc = s.ln();
    for _ in 0..steps {
        acc = acc * x + y.atan2(acc) + s.max(acc);
    }
    let copy = acc;
    copy / (y - 0.5) + unused.detach()
}

/// `continue` in a loop, with and without statements before it: the rest of the
/// iteration skipped, as an `else` of the `if` would skip it.
#[differentiable]
fn skipping(x: f64, y: f64, xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for (i, &v) in xs.iter().enumerate().take(steps) {
        if v < 0.0 {
            continue;
        }
        let t = x * v + y;
        if i % 2 == 1 {
            total += t.sin();
            continue;
        }
        total += t * t;
    }
    'rows: for row in ROWS.iter().take(steps) {
        for &r in row {
            total += r * x;
        }
        if row[0] > 1.0 {
            continue 'rows;
        }
        total *= y;
    }
    total
}

/// `match` on data, as a value and as a statement, with `|`, ranges and a guard.
#[differentiable]
fn arms(x: f64, y: f64, xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for (i, &v) in xs.iter().enumerate().take(steps) {
        let scale = match i % 3 {
            0 => 0.5,
            1 => v * y,
            _ => -1.0,
        };
        match i {
            0 | 1 => total += x * scale,
            2..=4 if v > 0.0 => {
                total = total * y + scale;
            }
            _ => total -= (x * v).sin(),
        }
    }
    total
}

#[differentiable]
fn relu_net(w: [f64; 3], xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for x in xs.iter().take(steps) {
        let z = w[0] * x + w[1];
        let h = if z > 0.0 { z } else { z * 0.01 };
        total += if h > w[2] {
            h * h
        } else if h < -0.5 {
            -h
        } else {
            h.exp()
        };
    }
    if total > 1.0 {
        total.ln()
    } else {
        total
    }
}

// Composition: callers whose compiled sweeps call their helpers' compiled halves.

/// A unit with a branch, called on rows of data.
#[differentiable]
fn unit(w: [f64; 3], x: &[f64; 2]) -> f64 {
    let z = w[0] * x[0] + w[1] * x[1] + w[2];
    if z > 0.0 {
        z.tanh()
    } else {
        0.1 * z
    }
}

/// Softplus, with a loop over data inside and a domain left unguarded.
#[differentiable]
fn soft(v: f64, xs: &[f64]) -> f64 {
    let mut acc = (1.0 + v.exp()).ln();
    for x in xs.iter().take(2) {
        acc += (v * x).sin() * 0.1;
    }
    acc.sqrt()
}

/// Returns a parameter as it is: called by another body, the tape copies the result into
/// a node of its own, as its halves hand it back (its compiled callers are in
/// `helpers.rs`); [`through`], written `tape`, records every call.
#[differentiable]
fn passes(x: f64) -> f64 {
    x
}

#[differentiable]
fn two_layer(w: [f64; 3], v: [f64; 2], rows: &[[f64; 2]], xs: &[f64], steps: usize) -> f64 {
    let mut total = 0.0;
    for row in rows.iter().take(steps) {
        let a = unit(w, row);
        let b = soft(a * v[0], xs) + soft(v[1], xs) * a;
        total += b * b;
    }
    total.sqrt() + soft(w[0] - v[1], xs) * unit(w, &[0.5, -0.5])
}

/// Helpers inside helpers' arguments, data for a differentiated parameter, and a
/// parameter lent twice to one call's two parameters... of two calls.
#[differentiable]
fn nested(x: f64, y: f64, xs: &[f64]) -> f64 {
    soft(soft(x, xs) * y, xs) - soft(1.5, xs) + soft(x, xs) * soft(y, xs)
}

/// Operations recorded before an `if` value in the same expression (spilled first).
#[differentiable]
fn spilled(x: f64, y: f64) -> f64 {
    x * y + if x > 0.0 { x.sin() } else { y * y } - (x - y).exp() * soft(y, &[0.5])
}

#[differentiable(tape)]
fn through(x: f64, y: f64) -> f64 {
    passes(x) * y + passes(y)
}

// Array-valued helpers: layers whose results the caller indexes, loops over and lends on.

/// A tanh layer of three units, with a fourth output never assigned (a constant).
#[differentiable]
fn layer(w: [[f64; 2]; 3], b: [f64; 3], x: &[f64; 2]) -> [f64; 4] {
    let mut out = [0.0; 4];
    for k in 0..3 {
        out[k] = (w[k][0] * x[0] + w[k][1] * x[1] + b[k]).tanh();
    }
    out
}

/// The outer product of a tracked pair with itself, 2 by 2.
#[differentiable]
fn outer(x: [f64; 2]) -> [[f64; 2]; 2] {
    let mut m = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            m[i][j] = x[i] * x[j];
        }
    }
    m
}

/// A readout of a layer's result, lent whole.
#[differentiable]
fn readout(v: [f64; 4], h: [f64; 4]) -> f64 {
    v[0] * h[0] + v[1] * h[1] + v[2] * h[2] + v[3] * h[3]
}

/// Softmax cross-entropy over the layer's scores, its detached maximum taken in a loop
/// over the result, the readout on it, and the outer product of two new values (an array
/// literal lent) summed row by row.
#[differentiable]
fn classify(
    w: [[f64; 2]; 3],
    b: [f64; 3],
    v: [f64; 4],
    rows: &[[f64; 2]],
    labels: &[usize],
) -> f64 {
    let mut total = 0.0;
    for (x, &label) in rows.iter().zip(labels) {
        let h = layer(w, b, x);
        let mut m = f64::NEG_INFINITY;
        for &z in h.iter() {
            m = m.max(z.detach());
        }
        let lse = m + h.iter().map(|z| (z - m).exp()).sum::<f64>().ln();
        total += lse - h[label] + 0.1 * readout(v, h) - 0.05 * readout(v, layer(w, b, x));
        let o = outer([h[0] - h[1], h[label] * 2.0]);
        for row in o.iter() {
            for &p in row.iter() {
                total += 0.01 * p;
            }
        }
    }
    total
}

// Parameter structs: fields read and lent to helpers, the whole struct lent, a `Vec`
// field walked by its length, and `#[param]` slices.

/// A two-layer network's parameters.
#[derive(Parameters, Clone, Debug)]
struct Net {
    w1: [[f64; 2]; 3],
    b1: [f64; 3],
    w2: [f64; 3],
    b2: f64,
    scale: Vec<f64>,
}

#[differentiable]
fn hidden(w: [[f64; 2]; 3], b: [f64; 3], x: &[f64; 2]) -> [f64; 3] {
    let mut h = [0.0; 3];
    for (o, row) in w.iter().enumerate() {
        // A copy of a parameter's element, then accumulated: versioned in the halves.
        let mut s = b[o];
        for (a, v) in row.iter().zip(x.iter()) {
            s += a * v;
        }
        h[o] = s.tanh();
    }
    h
}

/// Copies of parameters read several times before and after they change, with the
/// source read again, in branches and loops.
#[differentiable]
fn copies(w: [f64; 3], t: f64, n: usize) -> f64 {
    let mut a = w[0];
    let u = a * a + a * t;
    a = a * u + w[0];
    let mut c = t;
    for k in 0..n {
        if c > 0.5 {
            c = c * w[k % 3] - a;
        } else {
            c += c * 0.5;
        }
    }
    let mut d = w[2];
    if t > 0.0 {
        d = d * d;
    }
    a * c + d * w[2] + t
}

/// `copies` called with the caller's own uses of the same parameters around it.
#[differentiable]
fn copies_caller(w: [f64; 3], t: f64, n: usize) -> f64 {
    let first = w[0] * t;
    let mid = copies(w, t * first, n) + copies(w, first * 2.0, n);
    first * mid + w[0] * w[2] + t * t
}

/// Early returns: at the top level, nested in a branch that returns, after an `else`
/// chain, from a loop's neighbour, and a final `return` (as some users write it).
#[differentiable]
#[allow(clippy::needless_return)]
fn piecewise(x: f64, y: f64, n: usize) -> f64 {
    let a = x * y;
    if a > 1.5 {
        return a.ln() * x;
    }
    let mut total = a;
    for k in 0..n {
        total = total * 0.5 + (k as f64) * y;
    }
    if total < -1.0 {
        if y > 0.0 {
            return total * total;
        }
        return y - 0.5;
    } else if x < 0.0 {
        total += x.exp();
    } else {
        total -= y.tanh();
    }
    let b = total.sin();
    if n > 3 {
        return b * y + a;
    }
    return b * x;
}

/// `piecewise` through a helper's halves, the caller reading the same values around it.
#[differentiable]
fn piecewise_caller(x: f64, y: f64, n: usize) -> f64 {
    let first = x * y;
    first * piecewise(x, first, n) + piecewise(y, x, n) * y
}

/// Copies of locals (the source no longer assigned in the copy's scope) and of copies,
/// read along with their sources; and a local that starts as data.
#[differentiable]
fn local_copies(x: f64, y: f64, n: usize) -> f64 {
    let mut acc = x * y;
    acc += y.sin();
    let mut v = acc;
    let u = v * acc + acc;
    v *= u;
    let mut w = v;
    for k in 0..n {
        let mut c = w;
        c = c * acc + w;
        w += c * (k as f64);
    }
    let start = (n as f64) * 0.5;
    let mut d = start;
    d += acc * w;
    let e = d;
    acc * v + w * e + d * x
}

/// A layer's output read by every unit of the next and a scalar read in nested loops,
/// each in a row's loop (the reverse sweep reads them from one copy kept per row), and a
/// local of a branch.
#[differentiable]
fn reread_layer(w: [[f64; 2]; 3], v: [[f64; 3]; 2], rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        let mut h = [0.0; 3];
        for j in 0..3 {
            let mut s = 0.0;
            for i in 0..2 {
                s += w[j][i] * row[i];
            }
            h[j] = s.tanh();
        }
        let g = h[0] * h[2] + 0.5;
        let mut out = 0.0;
        for k in 0..2 {
            for j in 0..3 {
                out += v[k][j] * h[j] * g;
            }
        }
        if out > 0.0 {
            let q = g * out;
            total += q * g;
        } else {
            total -= out * g;
        }
    }
    total
}

/// Settings as data, with differentiable methods and associated functions.
struct Settings {
    scale: f64,
    target: f64,
}

impl Settings {
    /// A method: `self` is data.
    #[differentiable]
    fn fit(&self, w: [f64; 2], xs: &[f64]) -> f64 {
        let mut total = 0.0;
        for x in xs {
            let e = self.scale * (w[0] * x + w[1]) - self.target;
            total += e * e;
        }
        total + Self::ridge(w)
    }

    /// An associated function, called through `Self::` (and compiled through its halves).
    #[differentiable]
    fn ridge(w: [f64; 2]) -> f64 {
        0.1 * (w[0] * w[0] + w[1] * w[1])
    }

    /// A method calling a method, and an associated function as `Self::f(self, ..)`:
    /// compiled through their halves (closures, which see `self` as the body does).
    #[differentiable]
    fn twice(&self, w: [f64; 2], xs: &[f64]) -> f64 {
        self.fit(w, xs) * w[0] + Self::fit(self, w, &xs[..1]).sqrt()
    }
}

#[differentiable]
fn net_score(#[param] p: &Net, x: &[f64; 2]) -> f64 {
    let h = hidden(p.w1, p.b1, x);
    p.w2.iter().zip(h.iter()).map(|(a, v)| a * v).sum::<f64>() + p.b2 * p.scale[0]
}

#[differentiable]
fn penalty(#[param] p: &Net) -> f64 {
    p.w2.iter().map(|v| v * v).sum::<f64>() + p.scale.iter().map(|s| s * s).sum::<f64>()
}

#[differentiable]
fn net_loss(#[param] p: &Net, rows: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in rows.iter().zip(ys) {
        let d = net_score(p, x) - y;
        total += d * d;
    }
    total / ys.len() as f64 + 0.01 * penalty(p)
}

/// A struct and a scalar: the gradient is a tuple of both shapes.
#[differentiable]
fn mixed(#[param] p: &Net, t: f64, rows: &[[f64; 2]]) -> f64 {
    let mut total = t * t;
    for x in rows.iter() {
        total += (net_score(p, x) * t).sin();
    }
    total
}

/// A `#[param]` slice, read in a loop.
#[differentiable]
fn sliced(#[param] w: &[f64], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (a, x) in w.iter().zip(xs) {
        total += (a * x).exp();
    }
    total.ln()
}

/// Calls a helper with a `#[param]` slice, its own parameter passed as it is: compiled
/// through the helper's halves, which read the caller's slice in place both ways.
#[differentiable]
fn sliced_through(#[param] w: &[f64], xs: &[f64]) -> f64 {
    sliced(w, xs) * 2.0
}

/// A field's element copied into a running sum (`let mut s = p.b1[j];`): the field's
/// shape only rustc knows, and the sum read as a scalar proves the element one.
#[differentiable]
fn net_rows(#[param] p: &Net, rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for x in rows {
        for (j, row) in p.w1.iter().enumerate() {
            let mut s = p.b1[j];
            for (a, v) in row.iter().zip(x) {
                s += a * v;
            }
            total += s.tanh() * p.w2[j];
        }
    }
    total
}

/// The slice helper lent a `Vec` field of a parameter struct (`&p.scale`), as plain Rust
/// passes it where a slice is taken.
#[differentiable]
fn scaled(#[param] p: &Net, xs: &[f64]) -> f64 {
    sliced(&p.scale, xs) * p.b2 + sliced(&p.scale, &xs[1..])
}

/// The slice helper once per row of data, the loop over the rows by name.
#[differentiable]
fn sliced_rows(#[param] w: &[f64], rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        total += sliced(w, row).tanh();
    }
    total
}

/// The value and gradient bits, or the error's kind (node numbers differ between the paths).
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    Bits(Vec<u64>),
    Failed(&'static str),
}

pub(crate) fn outcome(result: Result<(f64, Vec<f64>), ScalarAutodiffError>) -> Outcome {
    match result {
        Ok((value, gradient)) => Outcome::Bits(
            std::iter::once(value)
                .chain(gradient)
                .map(f64::to_bits)
                .collect(),
        ),
        Err(error) => Outcome::Failed(error.kind()),
    }
}

/// `name_graph` + `backward` on fresh variables of the parameter shape `p`, with their
/// gradients flattened in order.
pub(crate) fn graph_of<P: Parameters + ?Sized>(
    p: &P,
    build: impl FnOnce(&P::Tracked<Scalar>) -> Result<Scalar, ScalarAutodiffError>,
) -> Outcome
where
    P::Gradient: Parameters,
{
    let run = || {
        let vars = p.variables()?;
        let out = build(&vars)?;
        if !out.tracks_gradient() {
            return Ok((out.value(), vec![0.0; p.parameter_count()]));
        }
        out.backward()?;
        Ok((out.value(), p.gradient_of(&vars).to_flat()))
    };
    outcome(run())
}

/// `name_graph` + `backward` on fresh variables `p`, read as `name_grad` reads it.
fn graph(
    p: &[f64],
    build: impl FnOnce(&[Scalar]) -> Result<Scalar, ScalarAutodiffError>,
) -> Outcome {
    let run = || {
        let vars = p
            .iter()
            .map(|&v| Scalar::variable(v))
            .collect::<Result<Vec<_>, _>>()?;
        let out = build(&vars)?;
        if !out.tracks_gradient() {
            return Ok((out.value(), vec![0.0; p.len()]));
        }
        out.backward()?;
        let gradient = vars.iter().map(|v| v.gradient().unwrap_or(0.0)).collect();
        Ok((out.value(), gradient))
    };
    outcome(run())
}

/// Rows for the composed cases.
const ROWS: [[f64; 2]; 6] = [
    [0.5, -1.0],
    [1.5, 2.0],
    [-0.3, 0.7],
    [0.0, 0.0],
    [2.0, -2.5],
    [-1.0, 0.25],
];

/// A network from nine numbers, reused and scaled.
fn net(p: &[f64]) -> Net {
    Net {
        w1: [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]],
        b1: [p[6], p[7], p[8]],
        w2: [p[8] - p[0], 2.0 * p[1], p[2] * p[3]],
        b2: p[4] + p[5],
        scale: vec![p[6] * 3.0, p[7] - p[8]],
    }
}

/// A label per row, for `classify`.
const LABELS: [usize; 6] = [0, 2, 1, 3, 1, 0];
/// Parameters for `classify`.
const W: [[f64; 2]; 3] = [[0.4, -0.3], [0.2, 0.9], [-0.6, 0.1]];
const B: [f64; 3] = [0.05, -0.1, 0.2];
const V: [f64; 4] = [0.3, -0.2, 0.5, 0.7];

/// How many traces `run` starts on this thread: none for a warm call that the compiled
/// sweeps finish (the checked path traces).
pub(crate) fn traces(run: impl FnOnce()) -> u64 {
    let before = scalar_autodiff::__private::traces();
    run();
    scalar_autodiff::__private::traces() - before
}

#[test]
fn warm_calls_run_the_compiled_sweeps_alone() {
    let xs = [0.3, -1.2, 0.0, 2.5, -0.7, 1.1];
    let (w, v) = ([0.4, -0.3, 0.2], [0.7, -0.2]);
    // Each twice: the first call on a thread may grow the stack (never a trace).
    for _ in 0..2 {
        assert_eq!(traces(|| drop(chain_grad(0.3, 50))), 0, "chain");
        assert_eq!(
            traces(|| drop(skipping_grad(0.3, -0.4, &xs, 6))),
            0,
            "skipping"
        );
        assert_eq!(traces(|| drop(arms_grad(0.3, -0.4, &xs, 6))), 0, "arms");
        assert_eq!(traces(|| drop(fit_grad([0.2, 0.1], &xs, 4))), 0, "fit");
        assert_eq!(traces(|| drop(relu_net_grad(w, &xs, 5))), 0, "relu_net");
        assert_eq!(
            traces(|| drop(two_layer_grad(w, v, &ROWS, &xs, 6))),
            0,
            "two_layer"
        );
        assert_eq!(traces(|| drop(nested_grad(0.3, -0.4, &xs))), 0, "nested");
        assert_eq!(traces(|| drop(spilled_grad(0.3, -0.4))), 0, "spilled");
        assert_eq!(
            traces(|| drop(classify_grad(W, B, V, &ROWS, &LABELS))),
            0,
            "classify"
        );
        let net = net(&[0.3, -0.2, 0.5, 0.1, -0.4, 0.7, 0.2, -0.1, 0.3]);
        let ys = [0.5, -0.5, 1.0, 0.0, 0.25, -1.0];
        assert_eq!(
            traces(|| drop(net_loss_grad(&net, &ROWS, &ys))),
            0,
            "net_loss"
        );
        assert_eq!(traces(|| drop(mixed_grad(&net, 0.7, &ROWS))), 0, "mixed");
        assert_eq!(traces(|| drop(scaled_grad(&net, &xs))), 0, "scaled");
        assert_eq!(traces(|| drop(net_rows_grad(&net, &ROWS))), 0, "net_rows");
        assert_eq!(traces(|| drop(sliced_grad(&xs[..4], &xs))), 0, "sliced");
        assert_eq!(
            traces(|| drop(copies_caller_grad([0.3, -0.2, 0.6], 0.7, 5))),
            0,
            "copies_caller"
        );
        assert_eq!(
            traces(|| drop(copies_grad([0.3, -0.2, 0.6], 0.7, 5))),
            0,
            "copies"
        );
        for (x, y) in [(2.0, 1.0), (0.3, -4.0), (0.3, 4.0), (-0.5, 0.2), (0.5, 0.2)] {
            for n in [0, 2, 5] {
                assert_eq!(traces(|| drop(piecewise_grad(x, y, n))), 0, "piecewise");
                assert_eq!(
                    traces(|| drop(piecewise_caller_grad(x, y, n))),
                    0,
                    "piecewise_caller"
                );
            }
        }
        assert_eq!(
            traces(|| drop(local_copies_grad(0.3, -0.4, 4))),
            0,
            "local_copies"
        );
        assert_eq!(
            traces(|| drop(reread_layer_grad(
                [[0.3, -0.2]; 3],
                [[0.5, 0.1, -0.4]; 2],
                &ROWS
            ))),
            0,
            "reread_layer"
        );
        let settings = Settings {
            scale: 1.5,
            target: 0.25,
        };
        assert_eq!(
            traces(|| drop(settings.fit_grad([0.3, -0.4], &xs))),
            0,
            "fit"
        );
        assert_eq!(
            traces(|| drop(Settings::ridge_grad([0.3, -0.4]))),
            0,
            "ridge"
        );
        assert_eq!(
            traces(|| drop(settings.twice_grad([0.3, -0.4], &xs))),
            0,
            "twice"
        );
    }
    let net = net(&[0.3, -0.2, 0.5, 0.1, -0.4, 0.7, 0.2, -0.1, 0.3]);
    let (_, gradient) = net_loss_grad(&net, &ROWS, &[0.5; 6]).expect("a finite loss");
    assert_eq!(gradient.scale.len(), 2);
    assert_eq!(
        traces(|| drop(sliced_through_grad(&xs[..4], &xs))),
        0,
        "sliced_through"
    );
    assert_eq!(
        traces(|| drop(sliced_rows_grad(&xs[..2], &ROWS))),
        0,
        "sliced_rows"
    );
    assert!(classify_grad(W, B, V, &ROWS, &LABELS).is_ok());
    assert!(two_layer_grad(w, v, &ROWS, &xs, 6).is_ok());
    // A helper without halves, and a failing call, keep the checked path.
    assert_eq!(traces(|| drop(through_grad(0.3, 0.4))), 1, "through");
    assert!(nested_grad(f64::MAX, 2.0, &xs).is_err());
    assert_eq!(
        traces(|| drop(nested_grad(f64::MAX, 2.0, &xs))),
        1,
        "nested, overflow"
    );
}

#[test]
fn sweeps_and_the_graph_agree_bit_for_bit() {
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    let xs = [0.3, -1.2, 0.0, 2.5, -0.7, 1.1];
    let (mut ok, mut failed) = (0, 0);
    for case in 0..600 {
        let steps = case % 7;
        let p: Vec<f64> = (0..9).map(|_| next()).collect();
        let pairs = [
            (
                outcome(chain_grad(p[0], steps * 40).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..1], |v| chain_graph(&v[0], steps * 40)),
            ),
            (
                outcome(fit_grad([p[0], p[1]], &xs, steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| {
                    fit_graph(&[v[0].clone(), v[1].clone()], &xs, steps)
                }),
            ),
            (
                outcome(
                    softmax_grad(
                        [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]],
                        [p[6], p[7], p[8]],
                        &xs,
                        steps,
                    )
                    .map(|(v, g)| (v, g.to_vec())),
                ),
                graph(&p, |v| {
                    let w = [
                        [v[0].clone(), v[1].clone()],
                        [v[2].clone(), v[3].clone()],
                        [v[4].clone(), v[5].clone()],
                    ];
                    softmax_graph(&w, &[v[6].clone(), v[7].clone(), v[8].clone()], &xs, steps)
                }),
            ),
            (
                outcome(skipping_grad(p[0], p[1], &xs, steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| skipping_graph(&v[0], &v[1], &xs, steps)),
            ),
            (
                outcome(arms_grad(p[0], p[1], &xs, steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| arms_graph(&v[0], &v[1], &xs, steps)),
            ),
            (
                outcome(unguarded_grad(p[0], p[1], steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| unguarded_graph(&v[0], &v[1], steps)),
            ),
            (
                outcome(
                    relu_net_grad([p[0], p[1], p[2]], &xs, steps).map(|(v, g)| (v, g.to_vec())),
                ),
                graph(&p[..3], |v| {
                    relu_net_graph(&[v[0].clone(), v[1].clone(), v[2].clone()], &xs, steps)
                }),
            ),
            (
                outcome(
                    two_layer_grad([p[0], p[1], p[2]], [p[3], p[4]], &ROWS, &xs, steps)
                        .map(|(v, g)| (v, g.to_vec())),
                ),
                graph(&p[..5], |v| {
                    let w = [v[0].clone(), v[1].clone(), v[2].clone()];
                    two_layer_graph(&w, &[v[3].clone(), v[4].clone()], &ROWS, &xs, steps)
                }),
            ),
            (
                outcome(nested_grad(p[0], p[1], &xs[..steps]).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| nested_graph(&v[0], &v[1], &xs[..steps])),
            ),
            (
                outcome(spilled_grad(p[0], p[1]).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| spilled_graph(&v[0], &v[1])),
            ),
            (
                outcome(through_grad(p[0], p[1]).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| through_graph(&v[0], &v[1])),
            ),
            (
                // Scaled so that some calls overflow.
                outcome(
                    classify_grad(
                        [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]],
                        [p[6], p[7], p[8]],
                        [p[0] * p[8], 300.0 * p[1], p[2], p[3] - p[4]],
                        &ROWS[..steps],
                        &LABELS[..steps],
                    )
                    .map(|(v, g)| (v, g.to_vec())),
                ),
                {
                    let v4 = [p[0] * p[8], 300.0 * p[1], p[2], p[3] - p[4]];
                    let mut all = p.clone();
                    all.extend(v4);
                    graph(&all, |v| {
                        let w = [
                            [v[0].clone(), v[1].clone()],
                            [v[2].clone(), v[3].clone()],
                            [v[4].clone(), v[5].clone()],
                        ];
                        let b = [v[6].clone(), v[7].clone(), v[8].clone()];
                        let v4 = [v[9].clone(), v[10].clone(), v[11].clone(), v[12].clone()];
                        classify_graph(&w, &b, &v4, &ROWS[..steps], &LABELS[..steps])
                    })
                },
            ),
            {
                let net = net(&p);
                let ys = [p[0], p[3], -p[6], 0.5, p[1] * p[2], 1.0];
                (
                    outcome(
                        net_loss_grad(&net, &ROWS[..steps], &ys[..steps])
                            .map(|(v, g)| (v, g.to_flat())),
                    ),
                    graph_of(&net, |tracked| {
                        net_loss_graph(tracked, &ROWS[..steps], &ys[..steps])
                    }),
                )
            },
            {
                let net = net(&p);
                (
                    outcome(net_rows_grad(&net, &ROWS[..steps]).map(|(v, g)| (v, g.to_flat()))),
                    graph_of(&net, |tracked| net_rows_graph(tracked, &ROWS[..steps])),
                )
            },
            {
                let net = net(&p);
                (
                    outcome(scaled_grad(&net, &xs[..steps]).map(|(v, g)| (v, g.to_flat()))),
                    graph_of(&net, |tracked| scaled_graph(tracked, &xs[..steps])),
                )
            },
            {
                let net = net(&p);
                let t = p[5] * 40.0;
                (
                    outcome(mixed_grad(&net, t, &ROWS[..steps]).map(|(v, (g, dt))| {
                        let mut flat = g.to_flat();
                        flat.push(dt);
                        (v, flat)
                    })),
                    {
                        let mut all = net.to_flat();
                        all.push(t);
                        // The struct's variables are the first ones, in order.
                        graph(&all, |v| {
                            let mut next = v.iter().cloned();
                            let rebuilt = net.try_track(&mut |_| {
                                next.next().ok_or(ScalarAutodiffError::TapeUnavailable)
                            })?;
                            mixed_graph(&rebuilt, &v[net.parameter_count()], &ROWS[..steps])
                        })
                    },
                )
            },
            {
                let w = [p[0] * 100.0, p[1], p[2], p[3]];
                (
                    outcome(sliced_grad(&w[..steps.min(4)], &xs)),
                    graph_of(&w[..steps.min(4)], |tracked| sliced_graph(tracked, &xs)),
                )
            },
            {
                let w = [p[0] * 30.0, p[1]];
                (
                    outcome(sliced_rows_grad(&w[..steps.min(2)], &ROWS[..steps])),
                    graph_of(&w[..steps.min(2)], |tracked| {
                        sliced_rows_graph(tracked, &ROWS[..steps])
                    }),
                )
            },
            {
                let w = [p[0], p[1], p[2] * 100.0, p[3]];
                (
                    outcome(sliced_through_grad(&w[..steps.min(4)], &xs)),
                    graph_of(&w[..steps.min(4)], |tracked| {
                        sliced_through_graph(tracked, &xs)
                    }),
                )
            },
            (
                outcome(copies_grad([p[0], p[1], p[2]], p[3], steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..4], |v| {
                    copies_graph(&[v[0].clone(), v[1].clone(), v[2].clone()], &v[3], steps)
                }),
            ),
            (
                outcome(
                    copies_caller_grad([p[0], p[1], p[2]], p[3], steps)
                        .map(|(v, g)| (v, g.to_vec())),
                ),
                graph(&p[..4], |v| {
                    copies_caller_graph(&[v[0].clone(), v[1].clone(), v[2].clone()], &v[3], steps)
                }),
            ),
            (
                outcome(piecewise_grad(p[0], p[1] * 2.0, steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&[p[0], p[1] * 2.0], |v| {
                    piecewise_graph(&v[0], &v[1], steps)
                }),
            ),
            (
                outcome(
                    piecewise_caller_grad(p[0], p[1] * 2.0, steps).map(|(v, g)| (v, g.to_vec())),
                ),
                graph(&[p[0], p[1] * 2.0], |v| {
                    piecewise_caller_graph(&v[0], &v[1], steps)
                }),
            ),
            (
                outcome(local_copies_grad(p[0], p[1], steps).map(|(v, g)| (v, g.to_vec()))),
                graph(&p[..2], |v| local_copies_graph(&v[0], &v[1], steps)),
            ),
            (
                outcome(
                    reread_layer_grad(
                        [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]],
                        [[p[6], p[7], p[8]], [p[1] * 3.0, p[2], -p[3]]],
                        &ROWS[..steps],
                    )
                    .map(|(v, g)| (v, g.to_vec())),
                ),
                {
                    let mut all = p.clone();
                    all.extend([p[1] * 3.0, p[2], -p[3]]);
                    graph(&all, |v| {
                        let w = [
                            [v[0].clone(), v[1].clone()],
                            [v[2].clone(), v[3].clone()],
                            [v[4].clone(), v[5].clone()],
                        ];
                        let u = [
                            [v[6].clone(), v[7].clone(), v[8].clone()],
                            [v[9].clone(), v[10].clone(), v[11].clone()],
                        ];
                        reread_layer_graph(&w, &u, &ROWS[..steps])
                    })
                },
            ),
            {
                let settings = Settings {
                    scale: p[2] * 10.0,
                    target: p[3],
                };
                (
                    outcome(
                        settings
                            .fit_grad([p[0], p[1]], &xs[..steps])
                            .map(|(v, g)| (v, g.to_vec())),
                    ),
                    graph(&p[..2], |v| {
                        settings.fit_graph(&[v[0].clone(), v[1].clone()], &xs[..steps])
                    }),
                )
            },
            {
                let settings = Settings {
                    scale: p[2] * 10.0,
                    target: p[3],
                };
                (
                    outcome(
                        settings
                            .twice_grad([p[0], p[1]], &xs[..steps.max(1)])
                            .map(|(v, g)| (v, g.to_vec())),
                    ),
                    graph(&p[..2], |v| {
                        settings.twice_graph(&[v[0].clone(), v[1].clone()], &xs[..steps.max(1)])
                    }),
                )
            },
        ];
        for (index, (fast, checked)) in pairs.into_iter().enumerate() {
            assert_eq!(
                fast, checked,
                "case {case}, function {index}, inputs {p:?}, steps {steps}"
            );
            match fast {
                Outcome::Bits(_) => ok += 1,
                Outcome::Failed(_) => failed += 1,
            }
        }
    }
    println!("{ok} agreed values, {failed} agreed errors");
    assert!(ok > 1000 && failed > 50, "{ok} values, {failed} errors");
}

/// `continue` reads as the rest of the iteration under an `else` (see `skipping`), and a
/// `match` on data as an `if` chain (see `arms`): the value is the plain function's, bit
/// for bit, and the gradient its central differences.
#[test]
fn continue_and_match_keep_the_plain_functions_meaning() {
    let xs = [0.3, -1.2, 0.0, 2.5, -0.7, 1.1];
    for steps in [0, 1, 3, 6] {
        for (x, y) in [(0.3, -0.4), (-1.1, 0.8), (0.05, 1.3)] {
            let (value, [dx, dy]) = arms_grad(x, y, &xs, steps).expect("finite");
            assert_eq!(value.to_bits(), arms(x, y, &xs, steps).to_bits());
            let nx = central(|x| arms(x, y, &xs, steps), x);
            let ny = central(|y| arms(x, y, &xs, steps), y);
            assert!(
                (dx - nx).abs() < 1e-7 * (1.0 + nx.abs()),
                "{steps} {x} {y}: {dx} {nx}"
            );
            assert!(
                (dy - ny).abs() < 1e-7 * (1.0 + ny.abs()),
                "{steps} {x} {y}: {dy} {ny}"
            );
            let (value, [dx, dy]) = skipping_grad(x, y, &xs, steps).expect("finite");
            assert_eq!(value.to_bits(), skipping(x, y, &xs, steps).to_bits());
            let nx = central(|x| skipping(x, y, &xs, steps), x);
            let ny = central(|y| skipping(x, y, &xs, steps), y);
            assert!(
                (dx - nx).abs() < 1e-7 * (1.0 + nx.abs()),
                "{steps} {x} {y}: {dx} {nx}"
            );
            assert!(
                (dy - ny).abs() < 1e-7 * (1.0 + ny.abs()),
                "{steps} {x} {y}: {dy} {ny}"
            );
        }
    }
}
