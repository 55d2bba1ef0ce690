//! Copies of tracked scalars that are read again later: `let prev = h;` before `h` is
//! assigned again (a recurrence), `second = best; best = v;` (a running maximum), a swap
//! through a temporary, states kept in an array's elements (`hs[t] = h;`), an element of
//! a parameter array copied out (`best = w[i];`), a local array copied whole (`let prev =
//! h;`, then `h` changed or given a helper's result), and in helpers: a parameter copied
//! and computed with (`m = y; m * m`), a parameter array's elements in a returned literal
//! (`[v[2], v[0] * y]`), a copy lent beside its source; branches valued by names. A
//! statement or a branch's arm copying a scalar records a `copy` node on the tape, a
//! variable of its own as in the sweeps, and so does each element of a whole local array
//! that changes later (`let prev = h;` of a `let mut h`); another copied array is the same
//! nodes under another name, which the sweeps follow by giving its scalars node numbers
//! and one adjoint cell per node. Tuple `let`s and swaps are one `let` per name. Each body
//! runs compiled, with
//! `name_graph` + `backward`'s bits, the plain function's value and central differences'
//! derivatives.

use scalar_autodiff::{differentiable, Parameters, ScalarOperation};

use crate::aliasing;
use crate::cases::{graph_of, outcome, traces};
use crate::support::{near, near_each, XorShift};

/// A recurrence that keeps the previous state.
#[differentiable]
fn rnn(w: f64, h0: f64, xs: &[f64]) -> f64 {
    let mut h = h0;
    let mut out = 0.0;
    for x in xs {
        let prev = h;
        h = (w * h + x).tanh();
        out += prev * h + prev * 0.5;
    }
    out + h
}

/// The largest of a few products and the one before it.
#[differentiable]
fn largest(w: [f64; 4], x: f64) -> f64 {
    let mut best = w[0] * x;
    let mut second = best;
    for wi in w.iter().skip(1) {
        let v = wi * x;
        if v > best {
            second = best;
            best = v;
        }
    }
    best * second + best + x
}

/// A swap through a temporary, and a parameter read after its copies.
#[differentiable]
fn swap(x: f64, y: f64, n: usize) -> f64 {
    let mut a = x;
    let mut b = y;
    for _ in 0..n {
        let t = a;
        a = b;
        b = b * 0.5 + t * a;
    }
    a * b + x * a
}

/// States kept in an array's elements, the state read again after each copy.
#[differentiable]
fn states(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut hs = [0.0; 4];
    let mut h = 0.0;
    for t in 0..4.min(xs.len()) {
        h = (w[0] * h + w[1] * xs[t]).tanh();
        hs[t] = h;
        h = h * 0.9 + hs[t] * 0.1;
    }
    let mut total = 0.0;
    for state in hs.iter() {
        total += state * h;
    }
    total
}

/// The parameter whose product with `x` is largest, copied out of the array and read
/// with it again.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn pick(w: [f64; 3], x: f64) -> f64 {
    let mut best = w[0];
    for i in 1..3 {
        if w[i] * x > best * x {
            best = w[i];
        }
    }
    best * w[1] + best * x + w[0]
}

/// `[value; 4]`: a copy of the value in every element, one element then assigned anew.
#[differentiable]
fn repeated(x: f64, y: f64) -> f64 {
    let mut a = [x.sin() * y; 4];
    a[1] *= x;
    a[0] * a[1] + a[2] * a[3] + y
}

/// A local array copied whole, then changed element by element: the copy's elements are
/// the same nodes.
#[differentiable]
fn array_copy(w: [f64; 3]) -> f64 {
    let mut a = [w[0] * 2.0, w[1], w[2].sin()];
    let b = a;
    a[0] *= b[1];
    a[0] + b[0] + b[2] * a[2]
}

#[differentiable]
fn cell(w: [f64; 2], h: [f64; 2], x: f64) -> [f64; 2] {
    [(w[0] * h[0] + x).tanh(), (w[1] * h[1] - x).tanh()]
}

/// A local array changed and lent with the parameter; a helper's whole result as a row
/// of a literal.
#[differentiable]
fn param_copy(w: [f64; 2], x: f64) -> f64 {
    let mut a = [w[0] * 1.0, w[1] * 1.0];
    a[0] *= x;
    let h = cell(w, a, x);
    aliasing::det2([h, a]) + aliasing::det2([w, h]) * a[1] + w[0]
}

/// A recurrent network's state kept whole before a helper replaces it, read again after.
#[differentiable]
fn recurrent(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut h = [0.5, -0.25];
    for x in xs {
        let prev = h;
        h = cell(w, prev, *x);
        h[0] += prev[1] * 0.5;
        h[1] = h[1].mul_add(prev[0], w[0]);
    }
    h[0] + h[1]
}

/// The same state written element by element.
#[differentiable]
fn recurrent_inline(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut h = [0.5, -0.25];
    for x in xs {
        let prev = h;
        h[0] = (w[0] * prev[0] + x).tanh();
        h[1] = (w[1] * prev[1] - x).tanh() + prev[0] * h[0];
    }
    h[0] + h[1]
}

#[test]
fn copies_read_again_run_compiled_and_agree_with_the_graph_bit_for_bit() {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let (w, h0, x, y) = (next(), next(), next(), next());
        let xs: Vec<f64> = (0..case % 6).map(|_| next() * 2.0).collect();
        let n = case % 5;

        let fast = outcome(rnn_grad(w, h0, &xs).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[w, h0], |t| rnn_graph(&t[0], &t[1], &xs));
        assert_eq!(fast, checked, "rnn, case {case}");
        assert_eq!(traces(|| drop(rnn_grad(w, h0, &xs))), 0, "rnn, case {case}");
        let (value, [dw, dh]) = rnn_grad(w, h0, &xs).expect("finite");
        assert_eq!(value.to_bits(), rnn(w, h0, &xs).to_bits());
        near(dw, |t| rnn(t, h0, &xs), w, "rnn d/dw");
        near(dh, |t| rnn(w, t, &xs), h0, "rnn d/dh0");

        let ws = [next(), next(), next(), next()];
        let fast = outcome(largest_grad(ws, x).map(|(v, g)| (v, g.to_vec())));
        let at = [ws[0], ws[1], ws[2], ws[3], x];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            largest_graph(&w, &t[4])
        });
        assert_eq!(fast, checked, "largest, case {case}");
        assert_eq!(
            traces(|| drop(largest_grad(ws, x))),
            0,
            "largest, case {case}"
        );
        let (value, gradient) = largest_grad(ws, x).expect("finite");
        assert_eq!(value.to_bits(), largest(ws, x).to_bits());
        near_each(
            &gradient,
            |q| largest([q[0], q[1], q[2], q[3]], q[4]),
            &at,
            "largest",
        );

        let fast = outcome(swap_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| swap_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "swap, case {case}");
        assert_eq!(traces(|| drop(swap_grad(x, y, n))), 0, "swap, case {case}");
        let (value, [dx, dy]) = swap_grad(x, y, n).expect("finite");
        assert_eq!(value.to_bits(), swap(x, y, n).to_bits());
        near(dx, |t| swap(t, y, n), x, "swap d/dx");
        near(dy, |t| swap(x, t, n), y, "swap d/dy");
    }
}

#[test]
fn copies_into_and_out_of_elements_run_compiled_and_agree() {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0002);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let w = [next(), next() * 1.5];
        let xs: Vec<f64> = (0..case % 6).map(|_| next()).collect();
        let fast = outcome(states_grad(w, &xs).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&w, |t| states_graph(t, &xs));
        assert_eq!(fast, checked, "states, case {case}");
        assert_eq!(
            traces(|| drop(states_grad(w, &xs))),
            0,
            "states, case {case}"
        );
        let (value, gradient) = states_grad(w, &xs).expect("finite");
        assert_eq!(value.to_bits(), states(w, &xs).to_bits());
        for k in 0..2 {
            let moved = |t: f64| {
                let mut q = w;
                q[k] = t;
                states(q, &xs)
            };
            near(gradient[k], moved, w[k], "states");
        }

        let (ws, x) = ([next(), next(), next()], next());
        let fast = outcome(pick_grad(ws, x).map(|(v, g)| (v, g.to_vec())));
        let at = [ws[0], ws[1], ws[2], x];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone()];
            pick_graph(&w, &t[3])
        });
        assert_eq!(fast, checked, "pick, case {case}");
        assert_eq!(traces(|| drop(pick_grad(ws, x))), 0, "pick, case {case}");
        let (value, gradient) = pick_grad(ws, x).expect("finite");
        assert_eq!(value.to_bits(), pick(ws, x).to_bits());
        near_each(&gradient, |q| pick([q[0], q[1], q[2]], q[3]), &at, "pick");
    }
}

#[test]
fn repeated_arrays_run_compiled_and_agree() {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0003);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    for case in 0..40 {
        let (x, y) = (next(), next());
        let fast = outcome(repeated_grad(x, y).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| repeated_graph(&t[0], &t[1]));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(repeated_grad(x, y))), 0, "case {case}");
        let (value, [dx, dy]) = repeated_grad(x, y).expect("finite");
        assert_eq!(value.to_bits(), repeated(x, y).to_bits());
        near(dx, |t| repeated(t, y), x, "d/dx");
        near(dy, |t| repeated(x, t), y, "d/dy");
    }
}

#[test]
fn arrays_copied_whole_run_compiled_and_agree() -> Result<(), scalar_autodiff::ScalarAutodiffError>
{
    let mut rng = XorShift::new(0xc0_91e5_5eed_0004);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let w3 = [next(), next(), next()];
        let fast = outcome(array_copy_grad(w3).map(|(v, g)| (v, g.to_vec())));
        assert_eq!(fast, graph_of(&w3, array_copy_graph), "case {case}");
        assert_eq!(traces(|| drop(array_copy_grad(w3))), 0, "case {case}");
        let (w2, x) = ([w3[0], w3[1]], w3[2]);
        let fast = outcome(param_copy_grad(w2, x).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&w3, |t| {
            param_copy_graph(&[t[0].clone(), t[1].clone()], &t[2])
        });
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(param_copy_grad(w2, x))), 0, "case {case}");
        let (_, gradient) = param_copy_grad(w2, x)?;
        near(gradient[2], |t| param_copy(w2, t), x, "d/dx");
        near(gradient[0], |t| param_copy([t, w2[1]], x), w2[0], "d/dw0");
        let w = [next(), next()];
        let xs: Vec<f64> = (0..case % 6).map(|_| next()).collect();
        for (name, grad, graph, plain) in [
            (
                "recurrent",
                recurrent_grad as fn([f64; 2], &[f64]) -> _,
                recurrent_graph as fn(&[scalar_autodiff::Scalar; 2], &[f64]) -> _,
                recurrent as fn([f64; 2], &[f64]) -> f64,
            ),
            (
                "recurrent_inline",
                recurrent_inline_grad,
                recurrent_inline_graph,
                recurrent_inline,
            ),
        ] {
            let fast = outcome(grad(w, &xs).map(|(v, g)| (v, g.to_vec())));
            assert_eq!(fast, graph_of(&w, |t| graph(t, &xs)), "{name}, case {case}");
            assert_eq!(traces(|| drop(grad(w, &xs))), 0, "{name}, case {case}");
            let (value, gradient) = grad(w, &xs)?;
            assert_eq!(value.to_bits(), plain(w, &xs).to_bits());
            for k in 0..2 {
                let moved = |t: f64| {
                    let mut q = w;
                    q[k] = t;
                    plain(q, &xs)
                };
                near(gradient[k], moved, w[k], name);
            }
        }
        // Second order: the state's copies on (value, tangent) pairs too.
        let (_, gradient, hessian) = recurrent_hessian(w, &xs)?;
        let (value, grad) = recurrent_grad(w, &xs)?;
        assert_eq!(gradient, grad);
        crate::hvp::check_columns(
            2,
            |direction| {
                let tangent: [f64; 2] = direction.try_into().expect("two");
                let (value, gradient, product) = recurrent_hvp(w, &xs, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
        assert_eq!(traces(|| drop(recurrent_hvp(w, &xs, [1.0, -0.5]))), 0);
    }
    Ok(())
}

/// A copy read again after its source changed, and the source read after.
#[differentiable]
fn stale(x: f64, y: f64) -> f64 {
    let mut v = x;
    let w = v;
    v *= y;
    w * v + x * w
}

/// A running maximum that computes with the copy: the parameter assigned to a local.
#[differentiable]
fn max_squared(x: f64, y: f64) -> f64 {
    let mut m = x;
    if y > m {
        m = y;
    }
    m * m + x
}

/// A branch valued by names (`if x > y { x } else { y }`), each read again after.
#[differentiable]
fn picked(x: f64, y: f64) -> f64 {
    let m = if x > y { x } else { y };
    let n = if x > 0.5 {
        y
    } else if x > 0.0 {
        m
    } else {
        x * y
    };
    m * x + y * m + n * m
}

/// A parameter array's elements returned in a literal, one of them read again.
#[differentiable]
fn ends(v: [f64; 3], y: f64) -> [f64; 2] {
    [v[2], v[0] * y]
}

#[differentiable]
fn linear2(w: [[f64; 2]; 2], x: [f64; 2]) -> [f64; 2] {
    [
        w[0][0] * x[0] + w[0][1] * x[1],
        w[1][0] * x[0] + w[1][1] * x[1],
    ]
}

/// The helpers above called, copies lent beside their sources (`max_squared(c, s)`, a
/// literal `[[s, 1.0], [x, 0.5]]` with `s` a copy of `x`).
#[differentiable]
fn helped(v: [f64; 3], x: f64) -> f64 {
    let mut s = x;
    let r = linear2([[s, 1.0], [x, 0.5]], [v[0], v[1]]);
    s = r[0] + r[1] * s;
    let c = s;
    let e = ends(v, c);
    max_squared(c, s) + max_squared(x * 2.0, v[1]) * e[0] + e[1] * e[0] + c * v[2]
}

#[test]
fn copies_in_helpers_and_literals_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0005);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let (x, y) = (next(), next());
        for (name, grad, graph, plain) in [
            (
                "stale",
                stale_grad as fn(f64, f64) -> _,
                stale_graph as fn(&scalar_autodiff::Scalar, &scalar_autodiff::Scalar) -> _,
                stale as fn(f64, f64) -> f64,
            ),
            (
                "max_squared",
                max_squared_grad,
                max_squared_graph,
                max_squared,
            ),
            ("picked", picked_grad, picked_graph, picked),
        ] {
            let fast = outcome(grad(x, y).map(|(v, g)| (v, g.to_vec())));
            assert_eq!(
                fast,
                graph_of(&[x, y], |t| graph(&t[0], &t[1])),
                "{name}, case {case}"
            );
            assert_eq!(traces(|| drop(grad(x, y))), 0, "{name}, case {case}");
            let (value, [dx, dy]) = grad(x, y)?;
            assert_eq!(value.to_bits(), plain(x, y).to_bits());
            near(dx, |t| plain(t, y), x, name);
            near(dy, |t| plain(x, t), y, name);
        }

        let v = [next(), next(), next()];
        let at = [v[0], v[1], v[2], x];
        let fast = outcome(helped_grad(v, x).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&at, |t| {
            helped_graph(&[t[0].clone(), t[1].clone(), t[2].clone()], &t[3])
        });
        assert_eq!(fast, checked, "helped, case {case}");
        assert_eq!(traces(|| drop(helped_grad(v, x))), 0, "helped, case {case}");
        let (value, gradient) = helped_grad(v, x)?;
        assert_eq!(value.to_bits(), helped(v, x).to_bits());
        near_each(
            &gradient,
            |q| helped([q[0], q[1], q[2]], q[3]),
            &at,
            "helped",
        );
        // Second order, through the helpers' halves on (value, tangent) pairs.
        let (_, gradient, hessian) = helped_hessian(v, x)?;
        let (value, grad) = helped_grad(v, x)?;
        assert_eq!(gradient, grad);
        crate::hvp::check_columns(
            4,
            |direction| {
                let tangent: [f64; 4] = direction.try_into().expect("four");
                let (value, gradient, product) = helped_hvp(v, x, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
        assert_eq!(traces(|| drop(helped_hvp(v, x, [1.0, -0.5, 0.25, 2.0]))), 0);
    }
    Ok(())
}

/// A helper returning a literal of names (`[.., x]`, each a copy) and reading a repeated
/// value (`[x * m; 3]`, a copy in each element).
#[differentiable]
fn spread(x: f64, y: f64) -> [f64; 3] {
    let m = f64::min(x, y);
    let r = [x * m; 3];
    [m + r[2].tanh(), m * y, x]
}

#[differentiable]
fn weigh(v: [f64; 2], #[param] p: &Pair) -> f64 {
    p.a * v[0] + p.w[0] * v[1] * v[0] + p.w[1]
}

#[derive(scalar_autodiff::Parameters, Clone, Debug)]
struct Pair {
    a: f64,
    w: [f64; 2],
    x: f64,
    y: f64,
}

/// The helpers called: a literal lending one name twice beside a parameter struct.
#[differentiable]
fn spread_weighed(#[param] p: &Pair) -> f64 {
    let x = p.x * 1.0;
    let y = p.y * 1.0;
    let s = spread(x, y);
    s[0] * s[2] + s[1] + weigh([x, x], p) * y
}

#[test]
fn literals_of_names_and_repeats_in_helpers_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0006);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let p = Pair {
            a: next(),
            w: [next(), next()],
            x: next(),
            y: next(),
        };
        let fast = outcome(spread_weighed_grad(&p).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(fast, graph_of(&p, spread_weighed_graph), "case {case}");
        assert_eq!(traces(|| drop(spread_weighed_grad(&p))), 0, "case {case}");
        let (value, gradient) = spread_weighed_grad(&p)?;
        assert_eq!(value.to_bits(), spread_weighed(&p).to_bits());
        let at = p.to_flat();
        near_each(
            &gradient.to_flat(),
            |q| {
                let mut moved = p.clone();
                moved.read_flat(q).expect("the same shape");
                spread_weighed(&moved)
            },
            &at,
            &format!("case {case}"),
        );
    }
    // `[x * 2.0; 2]` records the product once and a copy of it per element.
    let x = scalar_autodiff::Scalar::variable(1.5)?;
    let out = doubled_graph(&x)?;
    let pass = out.backward()?;
    assert_eq!(x.gradient(), Some(8.0 * 1.5));
    let ledger = pass.ledger();
    let copies = ledger
        .nodes
        .iter()
        .filter(|node| node.operation == ScalarOperation::Copy);
    assert_eq!(copies.count(), 2);
    Ok(())
}

#[differentiable]
fn doubled(x: f64) -> f64 {
    let a = [x * 2.0; 2];
    a[0] * a[1]
}

/// Two numbers, for the helpers below to reorder.
#[differentiable]
fn pair_of(x: f64, y: f64) -> [f64; 2] {
    [x * y, x.sin() + y]
}

/// A call's result reordered: each element held as it is, its own node.
#[differentiable]
fn flip(x: f64, y: f64) -> [f64; 2] {
    let a = pair_of(x, y);
    [a[1], a[0]]
}

/// Elements of two calls' results held beside a new value that reads their others.
#[differentiable]
fn interleave(x: f64, y: f64) -> [f64; 3] {
    let a = pair_of(x, y);
    let m = pair_of(y, a[0]);
    [a[1], m[0] * a[0], m[1]]
}

/// Elements of one array lent to one call at distinct constant indices (each its own
/// node: disjoint adjoints, no shared ones), to helpers that lend both on together.
#[differentiable]
fn reordered(p: [f64; 2]) -> f64 {
    let s = interleave(p[0], p[1]);
    let t = flip(s[0], s[2]);
    s[0] * t[0] + s[1] - t[1] * s[2]
}

#[test]
fn reordered_results_and_elements_lent_together_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0009);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let p = [next(), next()];
        let fast = outcome(reordered_grad(p).map(|(v, g)| (v, g.to_vec())));
        assert_eq!(fast, graph_of(&p, reordered_graph), "case {case}");
        assert_eq!(traces(|| drop(reordered_grad(p))), 0, "case {case}");
        let (value, gradient) = reordered_grad(p)?;
        assert_eq!(value.to_bits(), reordered(p).to_bits());
        near_each(
            &gradient,
            |q| reordered([q[0], q[1]]),
            &p,
            &format!("case {case}"),
        );
        // `name_hvp`'s sweeps lend them so too: H against the recorded Hessian's columns.
        let (_, _, hessian) = reordered_hessian(p)?;
        let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
        crate::hvp::check_columns(
            2,
            |direction| {
                let tangent: [f64; 2] = direction.try_into().expect("two");
                let (value, gradient, product) = reordered_hvp(p, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian,
            (value, &gradient),
        )?;
        assert_eq!(traces(|| drop(reordered_hvp(p, [1.0, -0.5]))), 0);
    }
    Ok(())
}

/// The weights of [`recur`]'s cell, and a bias.
#[derive(scalar_autodiff::Parameters, Clone, Debug)]
struct Cell {
    w: [[f64; 3]; 2],
    b: f64,
}

/// A recurrent helper keeping its previous state whole (`let prev = h;` of a `let mut h`):
/// each element a `copy` of its own, which its halves follow.
#[differentiable]
fn recur(w: [[f64; 3]; 2], xs: &[f64]) -> [f64; 2] {
    let mut h = [0.0; 2];
    for x in xs {
        let prev = h;
        for i in 0..2 {
            h[i] = (w[i][0] * prev[0] + w[i][1] * prev[1] + w[i][2] * x).tanh();
        }
    }
    h
}

/// Another helper's result copied whole under a name read by index, and returned by
/// element beside a local array's.
#[differentiable]
fn regrouped(x: f64, y: f64) -> [f64; 3] {
    let h = recur([[x, y, 0.5], [y, x, -0.5]], &[0.25, -1.0]);
    let a = h;
    let m = [x * y, y.exp()];
    let _unread = a[1];
    [a[1] * 1.0, m[0] * a[0], m[1]]
}

/// The helpers called, and an element of the parameter struct assigned into a variable.
#[differentiable]
fn kept_states(#[param] p: &Cell, xs: &[f64]) -> f64 {
    let h = recur(p.w, xs);
    let mut acc = p.b * 2.0;
    let r = regrouped(h[0], acc);
    acc = p.b;
    acc * r[0] + r[1] * h[1] - r[2] * acc
}

#[test]
fn whole_copies_of_changing_arrays_and_results_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0007);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let p = Cell {
            w: [[next(), next(), next()], [next(), next(), next()]],
            b: next(),
        };
        let xs = [next(), next(), next()];
        let fast = outcome(kept_states_grad(&p, &xs).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(
            fast,
            graph_of(&p, |p| kept_states_graph(p, &xs)),
            "case {case}"
        );
        assert_eq!(traces(|| drop(kept_states_grad(&p, &xs))), 0, "case {case}");
        let (value, gradient) = kept_states_grad(&p, &xs)?;
        assert_eq!(value.to_bits(), kept_states(&p, &xs).to_bits());
        near_each(
            &gradient.to_flat(),
            |q| {
                let mut moved = p.clone();
                moved.read_flat(q).expect("the same shape");
                kept_states(&moved, &xs)
            },
            &p.to_flat(),
            &format!("case {case}"),
        );
    }
    // `let prev = h;` records a copy of each of `h`'s two elements at every step.
    let w = [[0.5, -0.25, 1.0], [0.75, 0.5, -1.0]].variables()?;
    let out = recur_graph(&w, &[0.5, -1.0, 2.0])?;
    let pass = out[0].add(&out[1])?.backward()?;
    let copies = pass
        .ledger()
        .nodes
        .iter()
        .filter(|node| node.operation == ScalarOperation::Copy)
        .count();
    assert_eq!(copies, 2 * 3);
    Ok(())
}

/// Tuple `let`s and a destructuring swap: one `let` (or assignment) per name, the swap's
/// values read before either name changes.
#[differentiable]
fn tuple_swaps(x: f64, y: f64) -> f64 {
    let (mut a, mut b) = (x * 2.0, y);
    for _ in 0..3 {
        (a, b) = (b, a);
        let (a2, b2) = (b, a * 0.5);
        a = a2 + 1.0;
        b = b2;
    }
    let (p, _, q) = (a.sin(), 3.0, b * a);
    p * q
}

/// [`tuple_swaps`] written one name at a time, on the tape.
#[allow(clippy::manual_swap)]
#[differentiable(tape)]
fn tuple_swaps_by_name(x: f64, y: f64) -> f64 {
    let mut a = x * 2.0;
    let mut b = y;
    for _ in 0..3 {
        let t = b;
        b = a;
        a = t;
        let a2 = b;
        let b2 = a * 0.5;
        a = a2 + 1.0;
        b = b2;
    }
    let p = a.sin();
    let q = b * a;
    p * q
}

#[test]
fn tuple_lets_and_swaps_run_compiled_and_agree() {
    let mut rng = XorShift::new(0xc0_91e5_5eed_0008);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let (x, y) = (next(), next());
        let fast = outcome(tuple_swaps_grad(x, y).map(|(v, g)| (v, g.to_vec())));
        assert_eq!(
            fast,
            graph_of(&[x, y], |v| tuple_swaps_graph(&v[0], &v[1])),
            "case {case}"
        );
        // (The same operations as the names one at a time, bit for bit.)
        let named = tuple_swaps_by_name_grad(x, y).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(named), "case {case}");
        assert_eq!(traces(|| drop(tuple_swaps_grad(x, y))), 0, "case {case}");
        assert_eq!(
            tuple_swaps(x, y).to_bits(),
            tuple_swaps_by_name(x, y).to_bits()
        );
        let gradient = tuple_swaps_grad(x, y).expect("finite").1;
        near_each(
            &gradient,
            |q| tuple_swaps(q[0], q[1]),
            &[x, y],
            &format!("case {case}"),
        );
    }
}
