//! One value lent to a helper twice (`dot(w, w)`, `mul(x, x)`, `mix([x, .., x])`, or two
//! elements that may be one, `mul(w[i], w[j])`): on the tape the helper's nodes have edges
//! from both parameters to one node, whose adjoint sums them one by one. The compiled
//! sweeps share the parameters' adjoints in one buffer, so the sum is the same, bit for
//! bit, and no call records a trace; `name_hvp` too.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, ScalarAutodiffError};

use crate::cases::{graph_of, outcome, traces};
use crate::hvp::check_columns;
use crate::support::{central, near_each, XorShift};

#[differentiable]
fn dot(a: [f64; 4], b: [f64; 4]) -> f64 {
    let mut s = 0.0;
    for k in 0..4 {
        s += a[k] * b[k];
    }
    s
}

#[differentiable]
fn mul(a: f64, b: f64) -> f64 {
    a * b.sin() + b * a.exp()
}

#[differentiable]
fn mix(v: [f64; 3]) -> f64 {
    v[0] * v[1].tanh() + v[2] * v[0]
}

#[differentiable]
fn scale(v: [f64; 4], s: f64) -> [f64; 4] {
    let mut out = [0.0; 4];
    for k in 0..4 {
        out[k] = v[k] * s;
    }
    out
}

/// Its own halves lend its parameter twice.
#[differentiable]
fn norm(v: [f64; 4]) -> f64 {
    dot(v, v).sqrt()
}

#[differentiable]
fn aliased(w: [f64; 4], x: f64, i: usize, j: usize) -> f64 {
    let mut total = dot(w, w) + mul(x, x) + mix([x, w[0].exp(), x]);
    // Two elements that are one where `i == j`.
    total += mul(w[i], w[j]);
    // An array and one of its elements; an array and a literal of its elements.
    let scaled = scale(w, w[1]);
    total += dot(w, [w[2], w[2], w[0], x]);
    for k in 0..4 {
        total += mul(scaled[k], scaled[k]) * 0.1;
    }
    total + norm(w) * x
}

/// Copies read again (`b = a;`, a swap) make scalars share nodes: `mul(a, b)` lends two
/// that are one node on some iterations and two on others, and literals of rows lend
/// them beside rows of data. (The swap is written out: it is the form under test.)
#[differentiable]
#[allow(clippy::manual_swap)]
fn copies_lent(x: f64, y: f64, n: usize) -> f64 {
    let mut a = x * 2.0;
    let mut b = y;
    let mut total = 0.0;
    for k in 0..n {
        if k % 3 == 0 {
            b = a;
        } else {
            a += b * 0.5;
        }
        total += mul(a, b) + mix([b, a, x]);
        // A row of data beside a row holding a copy; a row of data named, and one
        // computed.
        let row = [k as f64, 0.5];
        total += det2([[a, 1.0], [2.0, 0.5]]) + det2([[b, x], [0.5; 2]]);
        total += det2([row, [a, b]]) + det2([[x, b], basis(k)]);
        let prev = a;
        a = b;
        b = prev;
    }
    total
}

/// A row of data, computed.
fn basis(k: usize) -> [f64; 2] {
    [(k % 2) as f64, 1.0]
}

/// A 2x2 determinant: the helper the sweeps' tests lend literals of rows to.
#[differentiable]
pub(crate) fn det2(m: [[f64; 2]; 2]) -> f64 {
    m[0][0] * m[1][1] - m[0][1] * m[1][0]
}

#[differentiable]
fn mul3(a: f64, b: f64, c: f64) -> f64 {
    a * b.sin() + c * a.exp() * b
}

/// Data lent for differentiated parameters: an array literal of data (`dot([1.0, 2.0,
/// k as f64, 0.5], v)`), a constant beside one value lent twice (`mul3(x, x, 2.0)`,
/// whose spare adjoints go at the end of the shared buffer), named constants, a static,
/// a data `if`, and data computed from tracked values' primals (bound first, at the top of
/// the body).
#[differentiable]
fn with_data(v: [f64; 4], x: f64, k: usize) -> f64 {
    let lent = dot([1.0, 2.0, k as f64, 0.5], v) + dot([0.25; 4], v) + mul3(x, x, 2.0);
    // Constants, a static and a data `if` lent for differentiated parameters.
    lent + mul(SCALE, x)
        + mul(v[1], RATE) * mul(f64::EPSILON, x)
        + mul(if k > 2 { 0.75 } else { SCALE }, v[0])
        // Data computed from tracked values' primals: a detached value and a data `if`
        // on them.
        + mul(x.detach().ceil(), v[2])
        + mul(if v[3].detach() > 0.0 || (x * x).ln_1p() < 0.1 { 0.5 } else { -2.0 }, x)
}

const SCALE: f64 = 0.75;
static RATE: f64 = 0.5;

fn inputs(next: &mut impl FnMut() -> f64) -> ([f64; 4], f64) {
    ([next(), next(), next(), next()], next())
}

#[test]
fn one_value_lent_twice_runs_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0xa11a_5ed0_0000_0001);
    let mut next = move || rng.unit() * 1.6 - 0.8;
    for case in 0..40 {
        let (w, x) = inputs(&mut next);
        let (i, j) = (case % 4, (case / 4) % 4);
        let fast = outcome(aliased_grad(w, x, i, j).map(|(v, g)| (v, g.to_vec())));
        let at = [w[0], w[1], w[2], w[3], x];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            aliased_graph(&w, &t[4], i, j)
        });
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(aliased_grad(w, x, i, j))), 0, "case {case}");
        let (value, gradient) = aliased_grad(w, x, i, j).expect("a finite value");
        assert_eq!(value.to_bits(), aliased(w, x, i, j).to_bits());
        near_each(
            &gradient,
            |q| aliased([q[0], q[1], q[2], q[3]], q[4], i, j),
            &at,
            &format!("case {case}"),
        );
    }
}

#[test]
fn one_value_lent_twice_hvp_is_the_recorded_hessian() -> Result<(), ScalarAutodiffError> {
    let mut rng = XorShift::new(0xa11a_5ed0_0000_0002);
    let mut next = move || rng.unit() * 1.6 - 0.8;
    for (i, j) in [(0, 0), (1, 3), (2, 2)] {
        let (w, x) = inputs(&mut next);
        let (_, gradient, hessian) = aliased_hessian(w, x, i, j)?;
        let (value, grad) = aliased_grad(w, x, i, j)?;
        assert_eq!(gradient, grad);
        check_columns(
            5,
            |direction| {
                let tangent: [f64; 5] = direction.try_into().expect("five");
                let (value, gradient, product) = aliased_hvp(w, x, i, j, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
        let tangent = [1.0, -0.5, 0.25, 2.0, 0.75];
        assert_eq!(traces(|| drop(aliased_hvp(w, x, i, j, tangent))), 0);
    }
    Ok(())
}

#[test]
fn scalars_sharing_nodes_lent_together_run_compiled_bit_for_bit() -> Result<(), ScalarAutodiffError>
{
    let mut rng = XorShift::new(0xa11a_5ed0_0000_0003);
    let mut next = move || rng.unit() * 1.2 - 0.6;
    for case in 0..30 {
        let (x, y, n) = (next(), next(), case % 7);
        let fast = outcome(copies_lent_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| copies_lent_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(copies_lent_grad(x, y, n))), 0, "case {case}");
        let (_, gradient, hessian) = copies_lent_hessian(x, y, n)?;
        let (value, grad) = copies_lent_grad(x, y, n)?;
        assert_eq!(gradient, grad);
        check_columns(
            2,
            |direction| {
                let tangent: [f64; 2] = direction.try_into().expect("two");
                let (value, gradient, product) = copies_lent_hvp(x, y, n, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
        assert_eq!(traces(|| drop(copies_lent_hvp(x, y, n, [1.0, -0.5]))), 0);
    }
    Ok(())
}

#[test]
fn data_lent_for_tracked_parameters_runs_compiled_bit_for_bit() -> Result<(), ScalarAutodiffError> {
    let mut rng = XorShift::new(0xa11a_5ed0_0000_0004);
    let mut next = move || rng.unit() * 1.6 - 0.8;
    for k in 0..5 {
        let (v, x) = inputs(&mut next);
        let fast = outcome(with_data_grad(v, x, k).map(|(value, g)| (value, g.to_vec())));
        let at = [v[0], v[1], v[2], v[3], x];
        let checked = graph_of(&at, |t| {
            let v = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            with_data_graph(&v, &t[4], k)
        });
        assert_eq!(fast, checked, "k = {k}");
        assert_eq!(traces(|| drop(with_data_grad(v, x, k))), 0);
        let (_, gradient, hessian) = with_data_hessian(v, x, k)?;
        let (value, grad) = with_data_grad(v, x, k)?;
        assert_eq!(gradient, grad);
        check_columns(
            5,
            |direction| {
                let tangent: [f64; 5] = direction.try_into().expect("five");
                let (value, gradient, product) = with_data_hvp(v, x, k, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
        let tangent = [0.5, 1.0, -1.0, 0.25, 2.0];
        assert_eq!(traces(|| drop(with_data_hvp(v, x, k, tangent))), 0);
    }
    Ok(())
}

/// A row of data a literal lends beside tracked rows.
const ROW: [f64; 2] = [0.25, -1.0];

/// Data beside tracked values in literals lent to helpers: a named row, a constant row and
/// a computed row beside a parameter's rows; data scalars of every spelling beside tracked
/// ones (a parameter, a local, a negation, a cast, literals).
#[differentiable]
fn data_rows(m: [[f64; 2]; 3], x: f64, c: f64, n: usize) -> f64 {
    let r = [0.5, 2.0];
    let s = 1.5 * c;
    let mut t = 0.0;
    for k in 0..n {
        t += det2([r, m[k % 3]]) + det2([ROW, [x, m[0][0]]]) + det2([m[1], basis(k)]);
        t += dot([x, s, c, -c], [m[0][1], 2.0 * 1.5, -0.5, t])
            + dot([x, 1.0, k as f64, t], [t, t, x, x]);
    }
    let a = [x * t, s, -c];
    t + a[1] * a[0] - a[2]
}

/// [`data_rows`] on the tape: the reference.
#[differentiable(tape)]
fn data_rows_recorded(m: [[f64; 2]; 3], x: f64, c: f64, n: usize) -> f64 {
    let r = [0.5, 2.0];
    let s = 1.5 * c;
    let mut t = 0.0;
    for k in 0..n {
        t += det2([r, m[k % 3]]) + det2([ROW, [x, m[0][0]]]) + det2([m[1], basis(k)]);
        t += dot([x, s, c, -c], [m[0][1], 2.0 * 1.5, -0.5, t])
            + dot([x, 1.0, k as f64, t], [t, t, x, x]);
    }
    let a = [x * t, s, -c];
    t + a[1] * a[0] - a[2]
}

#[test]
fn data_rows_beside_tracked_rows_run_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0xda7a_0001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..20 {
        let m: [[f64; 2]; 3] = std::array::from_fn(|_| [next(), next()]);
        let (x, c, n) = (next(), next(), case % 4);
        let fast = outcome(data_rows_grad(m, x, c, n).map(|(v, g)| (v, g.to_vec())));
        let twin = data_rows_recorded_grad(m, x, c, n).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(
            traces(|| drop(data_rows_grad(m, x, c, n))),
            0,
            "case {case}"
        );
        let (value, gradient) = data_rows_grad(m, x, c, n).expect("a finite value");
        assert_eq!(value.to_bits(), data_rows(m, x, c, n).to_bits());
        // The gradient is flat: `m`'s six entries, `x`, then `c`.
        let numeric = central(|t| data_rows(m, t, c, n), x);
        assert!(
            (gradient[6] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "case {case}"
        );
        let numeric = central(
            |t| {
                let mut moved = m;
                moved[1][0] = t;
                data_rows(moved, x, c, n)
            },
            m[1][0],
        );
        assert!(
            (gradient[2] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "case {case}"
        );
    }
}
