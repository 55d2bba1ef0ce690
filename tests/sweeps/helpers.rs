//! A model written the way a transformer's reader writes one: a parameter struct and
//! layer helpers, called with rows of its fields (`add(p.wte[tok], p.wpe[pos])`), a
//! helper's result stored into a row of a local array (`keys[pos] = linear(..)`), a
//! helper's result changed in place (`h[i] = h[i].max(0.0)`) and a helper that ends in
//! another helper's result; and folds written every way (`.fold` with or without `.map`,
//! in an expression, nested, over a helper's result, `*v` in the step). Every one of these
//! runs compiled, and its value and gradient are `name_graph` + `backward`'s, bit for bit.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, Parameters};

use crate::cases::{graph_of, outcome, traces, Outcome};
use crate::support::{central, near_each, XorShift};

const D: usize = 4;
const VOCAB: usize = 5;
const BLOCK: usize = 3;

/// A tiny language model's parameters.
#[derive(Parameters, Clone, Debug)]
struct Tiny {
    wte: [[f64; D]; VOCAB],
    wpe: [[f64; D]; BLOCK],
    wq: [[f64; D]; D],
    fc: [[f64; D]; D],
    head: [[f64; D]; VOCAB],
}

#[differentiable]
fn add(a: [f64; D], b: [f64; D]) -> [f64; D] {
    let mut out = [0.0; D];
    for i in 0..D {
        out[i] = a[i] + b[i];
    }
    out
}

#[differentiable]
fn linear(w: [[f64; D]; D], x: [f64; D]) -> [f64; D] {
    let mut out = [0.0; D];
    for o in 0..D {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}

#[differentiable]
fn logits(w: [[f64; D]; VOCAB], x: [f64; D]) -> [f64; VOCAB] {
    let mut out = [0.0; VOCAB];
    for o in 0..VOCAB {
        for i in 0..D {
            out[o] += w[o][i] * x[i];
        }
    }
    out
}

/// A helper's result made ReLU in place, then another helper's result returned as it is.
#[differentiable]
fn mlp(w: [[f64; D]; D], x: [f64; D]) -> [f64; D] {
    let mut h = linear(w, x);
    for i in 0..D {
        h[i] = h[i].max(0.0);
    }
    linear(w, h)
}

#[differentiable]
fn nll(l: [f64; VOCAB], target: usize) -> f64 {
    let mut total = 0.0;
    for v in l.iter() {
        total += v.exp();
    }
    total.ln() - l[target]
}

/// The loss over a sequence: rows of fields lent to helpers, and a helper's result stored
/// into a row that the next helper reads.
#[differentiable]
fn loss(#[param] p: &Tiny, tokens: &[usize]) -> f64 {
    let mut keys = [[0.0; D]; BLOCK];
    let mut total = 0.0;
    for pos in 0..tokens.len().saturating_sub(1) {
        let x = add(p.wte[tokens[pos]], p.wpe[pos]);
        keys[pos] = linear(p.wq, x);
        let h = mlp(p.fc, keys[pos]);
        total += nll(logits(p.head, h), tokens[pos + 1]);
    }
    // A row read, then overwritten by a helper that reads it.
    if tokens.len() > 2 {
        keys[1] = mlp(p.fc, keys[1]);
        keys[0] = linear(p.wq, keys[1]);
        total += nll(logits(p.head, keys[0]), tokens[0]) * keys[1][2];
    }
    total
}

#[differentiable]
fn doubled(x: [f64; D]) -> [f64; D] {
    let mut out = [0.0; D];
    for i in 0..D {
        out[i] = 2.0 * x[i];
    }
    out
}

/// Folds as people write them.
#[differentiable]
fn folds(w: [f64; D], xs: &[f64]) -> f64 {
    let spread = w.iter().fold(0.0, |acc, v| acc + v * v);
    let fit = (w.iter().zip(xs).fold(1.0, |acc: f64, (a, x)| {
        let d = a - x;
        acc + d * d
    }) / 3.0)
        .ln();
    let mapped = w.iter().map(|v| v.sin()).fold(0.5, |a, v| a * v);
    let top = w.iter().fold(-1.0e300_f64, |m, v| m.max(*v));
    let nested = w
        .iter()
        .fold(0.0, |a, v| a + xs.iter().fold(0.0, |b, x| b + v * x));
    let over_helper = doubled(w).iter().fold(0.0, |a, v| a + v.tanh());
    let summed = doubled(w).iter().map(|v| v * v).sum::<f64>();
    spread + fit + mapped + top * 0.1 + nested + over_helper - 0.01 * summed
}

#[differentiable]
fn spread(v: [f64; D]) -> f64 {
    v[0] * v[1] + v[2].sin() * v[0] - v[3] * v[3]
}

/// Array literals lending tracked scalars as they are: parameters, elements of a
/// parameter, a local, elements of a helper's result, each read again after the call.
#[differentiable]
fn lent_elements(w: [f64; D], x: f64, y: f64) -> f64 {
    let a = x * y;
    let first = spread([x, w[1], a, 0.5]);
    let whole = spread([w[0], w[1], w[2], w[3]]);
    let d = doubled([a, y, x, w[3]]);
    let third = spread([d[2], x, 1.0, d[0]]);
    first * x + whole + third + a * w[1] + d[1] * y
}

/// Local array literals: new values and constants, typed or not, in a loop, an element
/// changed after, and elements lent to a helper as they are.
#[differentiable]
fn local_literals(w: [f64; D], x: f64, xs: &[f64]) -> f64 {
    let a: [f64; 3] = [x * 2.0, w[0].sin(), 1.5];
    let mut total = a[0] * a[1] + a[2];
    for v in xs {
        let mut row = [w[1] * v, (w[2] + x) * 0.5, v * 1.0 + w[3]];
        row[2] = row[2].tanh();
        total += spread([row[0], row[1], row[2], a[0] * 2.0]) + row[2];
    }
    total
}

/// A helper over a slice of tracked values.
#[differentiable]
fn weighted(#[param] xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += x * x.sin();
    }
    total
}

/// A helper over a slice of rows.
#[differentiable]
fn energy(#[param] rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        total += row[0] * row[1].cos();
    }
    total
}

/// A row made of a scalar.
#[differentiable]
fn pair(a: f64, k: f64) -> [f64; 2] {
    [a * k, a + k]
}

/// Everything `slices` differentiates.
#[derive(Parameters, Clone, Debug)]
struct Lent {
    w: [f64; D],
    b: [[f64; 2]; 2],
    v: Vec<f64>,
    x: f64,
}

/// Helpers over slices lent what plain Rust coerces to one: a field that is an array
/// (twice in one expression), a row of one, a `Vec` field, a field of rows, and what the
/// body computes, a local array and a `Vec` of rows grown by `push` (which the helpers'
/// halves keep a copy of, the caller not passing them again).
#[differentiable]
fn slices(#[param] p: &Lent) -> f64 {
    let mut h = [0.0; 2];
    h[0] = p.x * p.w[1];
    h[1] = (p.w[2] * p.x).tanh();
    let mut keys: Vec<[f64; 2]> = Vec::new();
    for i in 0..3 {
        keys.push(pair(p.w[i], i as f64));
    }
    let twice = weighted(&p.w) * 2.0 + p.w[0] * weighted(&p.w);
    let rows = energy(&keys) * p.x + energy(&p.b);
    twice + weighted(&p.b[1]) * p.x + weighted(&p.v) + weighted(&h) * h[0] + rows
}

/// Parameters from a generator, scaled so that some ReLUs are off.
fn tiny(next: &mut impl FnMut() -> f64) -> Tiny {
    let mut row = || [next(), next(), next(), next()];
    Tiny {
        wte: [row(), row(), row(), row(), row()],
        wpe: [row(), row(), row()],
        wq: [row(), row(), row(), row()],
        fc: [row(), row(), row(), row()],
        head: [row(), row(), row(), row(), row()],
    }
}

const SEQUENCES: [&[usize]; 5] = [&[], &[2], &[0, 4], &[3, 1, 3], &[4, 4, 0, 2]];

#[test]
fn helper_forms_run_compiled_and_agree_with_the_graph_bit_for_bit() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    let mut compared = 0;
    for case in 0..60 {
        let p = tiny(&mut next);
        let tokens = SEQUENCES[case % SEQUENCES.len()];
        let fast = outcome(loss_grad(&p, tokens).map(|(v, g)| (v, g.to_flat())));
        let checked = graph_of(&p, |tracked| loss_graph(tracked, tokens));
        assert_eq!(fast, checked, "case {case}, tokens {tokens:?}");
        assert!(matches!(fast, Outcome::Bits(_)));
        compared += 1;
        // A warm call (the first may grow the value stack) starts no trace.
        assert_eq!(traces(|| drop(loss_grad(&p, tokens))), 0, "case {case}");
    }
    assert_eq!(compared, 60);
}

#[test]
fn helper_forms_have_the_plain_functions_value_and_derivatives() {
    let mut rng = XorShift::new(0x1234_5678_9abc_def1);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    let p = tiny(&mut next);
    let tokens: &[usize] = &[1, 3, 0, 2];
    let (value, gradient) = loss_grad(&p, tokens).expect("a finite loss");
    assert_eq!(value, loss(&p, tokens));
    let flat = gradient.to_flat();
    let at = p.to_flat();
    assert_eq!(flat.len(), at.len());
    // Every seventh parameter, across every matrix: the loss is piecewise smooth (the
    // ReLU), and these random weights keep each pre-activation away from its kink.
    for k in (0..at.len()).step_by(7) {
        let moved = |t: f64| {
            let mut q = at.clone();
            q[k] = t;
            let mut moved = p.clone();
            moved.read_flat(&q).expect("the same shape");
            loss(&moved, tokens)
        };
        let numeric = central(moved, at[k]);
        assert!(
            (flat[k] - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
            "parameter {k}: {} against {numeric}",
            flat[k]
        );
    }
}

#[test]
fn folds_run_compiled_and_agree_with_the_graph_and_the_plain_function() {
    let mut rng = XorShift::new(0x0bad_5eed_1234_5678);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    let xs = [0.3, -1.2, 0.7, 2.5];
    for case in 0..40 {
        let w = [next(), next(), next(), next()];
        let fast = outcome(folds_grad(w, &xs).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&w, |tracked| folds_graph(tracked, &xs));
        assert_eq!(fast, checked, "case {case}, w {w:?}");
        assert_eq!(traces(|| drop(folds_grad(w, &xs))), 0, "case {case}");
        let (value, gradient) = folds_grad(w, &xs).expect("a finite value");
        assert_eq!(value.to_bits(), folds(w, &xs).to_bits());
        for k in 0..D {
            let moved = |t: f64| {
                let mut q = w;
                q[k] = t;
                folds(q, &xs)
            };
            let numeric = central(moved, w[k]);
            assert!(
                (gradient[k] - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
                "case {case}, w[{k}]: {} against {numeric}",
                gradient[k]
            );
        }
    }
}

#[test]
fn array_literals_lend_tracked_scalars_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_0001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let w = [next(), next(), next(), next()];
        let (x, y) = (next(), next());
        let fast = outcome(lent_elements_grad(w, x, y).map(|(v, g)| (v, g.to_vec())));
        let at = [w[0], w[1], w[2], w[3], x, y];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            lent_elements_graph(&w, &t[4], &t[5])
        });
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(
            traces(|| drop(lent_elements_grad(w, x, y))),
            0,
            "case {case}"
        );
        let (value, gradient) = lent_elements_grad(w, x, y).expect("a finite value");
        assert_eq!(value.to_bits(), lent_elements(w, x, y).to_bits());
        near_each(
            &gradient,
            |q| lent_elements([q[0], q[1], q[2], q[3]], q[4], q[5]),
            &at,
            &format!("case {case}"),
        );
    }
}

#[test]
fn local_array_literals_run_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_0002);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let w = [next(), next(), next(), next()];
        let x = next();
        let xs: Vec<f64> = (0..case % 4).map(|_| next()).collect();
        let fast = outcome(local_literals_grad(w, x, &xs).map(|(v, g)| (v, g.to_vec())));
        let at = [w[0], w[1], w[2], w[3], x];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            local_literals_graph(&w, &t[4], &xs)
        });
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(
            traces(|| drop(local_literals_grad(w, x, &xs))),
            0,
            "case {case}"
        );
        let (value, gradient) = local_literals_grad(w, x, &xs).expect("a finite value");
        assert_eq!(value.to_bits(), local_literals(w, x, &xs).to_bits());
        near_each(
            &gradient,
            |q| local_literals([q[0], q[1], q[2], q[3]], q[4], &xs),
            &at,
            &format!("case {case}"),
        );
    }
}

#[test]
fn arrays_lent_to_slice_helpers_run_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_0003);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let p = Lent {
            w: [next(), next(), next(), next()],
            b: [[next(), next()], [next(), next()]],
            v: (0..case % 4).map(|_| next()).collect(),
            x: next(),
        };
        let fast = outcome(slices_grad(&p).map(|(v, g)| (v, g.to_flat())));
        let checked = graph_of(&p, slices_graph);
        assert_eq!(fast, checked, "case {case}");
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(traces(|| drop(slices_grad(&p))), 0, "case {case}");
        let (value, gradient) = slices_grad(&p).expect("a finite value");
        assert_eq!(value.to_bits(), slices(&p).to_bits());
        let (flat, at) = (gradient.to_flat(), p.to_flat());
        for k in 0..at.len() {
            let moved = |t: f64| {
                let mut q = at.clone();
                q[k] = t;
                let mut moved = p.clone();
                moved.read_flat(&q).expect("the same shape");
                slices(&moved)
            };
            let numeric = central(moved, at[k]);
            assert!(
                (flat[k] - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
                "case {case}, parameter {k}: {} against {numeric}",
                flat[k]
            );
        }
    }
}

/// Attention over a cache: a local vector sized by a `#[param]` slice's length (whose
/// halves once read that length from adjoints their forward half does not have).
#[differentiable]
fn attention(q: [f64; 2], #[param] keys: &[[f64; 2]]) -> [f64; 2] {
    let mut scores = vec![0.0; keys.len()];
    let mut total = 0.0;
    for t in 0..keys.len() {
        scores[t] = (q[0] * keys[t][0] + q[1] * keys[t][1]).exp();
        total += scores[t];
    }
    let mut out = [0.0; 2];
    for j in 0..2 {
        for t in 0..keys.len() {
            out[j] += scores[t] / total * keys[t][j];
        }
    }
    out
}

/// A cache grown by `push`, read by [`attention`] after each push.
#[differentiable]
fn attended(w: [f64; D], xs: &[f64]) -> f64 {
    let mut keys: Vec<[f64; 2]> = Vec::new();
    let mut total = 0.0;
    for &x in xs {
        keys.push(pair(w[0] * x, w[1]));
        let out = attention([w[2], w[3] * x], &keys);
        total += out[0] * out[1];
    }
    total
}

#[test]
fn locals_sized_by_a_slice_parameter_run_compiled_bit_for_bit() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_0004);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..30 {
        let w = [next(), next(), next(), next()];
        let xs: Vec<f64> = (0..case % 5).map(|_| next()).collect();
        let fast = outcome(attended_grad(w, &xs).map(|(v, g)| (v, g.to_flat())));
        let checked = graph_of(&w, |w| attended_graph(w, &xs));
        assert_eq!(fast, checked, "case {case}");
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(traces(|| drop(attended_grad(w, &xs))), 0, "case {case}");
        let (_, gradient) = attended_grad(w, &xs).expect("a finite value");
        near_each(
            &gradient,
            |w| attended(w.try_into().expect("four weights"), &xs),
            &w,
            &format!("case {case}"),
        );
    }
}

/// ReLU written the way a reader writes it: the parameter itself, or zero.
#[differentiable]
fn relu(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// The larger of two, by a copy assigned only when `y` wins.
#[differentiable]
fn larger(x: f64, y: f64) -> f64 {
    let mut m = x;
    if y > m {
        m = y;
    }
    m
}

/// The parameter itself.
#[differentiable]
fn itself(x: f64) -> f64 {
    x
}

/// A parameter returned as it is in an array literal, beside a new value.
#[differentiable]
fn as_is(x: f64, y: f64) -> [f64; 2] {
    [x, y * 2.0]
}

/// The first positive element, returned from inside the loop as it is.
#[differentiable]
fn first_positive(v: [f64; 3]) -> f64 {
    for i in 0..3 {
        if v[i] > 0.0 {
            return v[i];
        }
    }
    0.0
}

/// Helpers that return a parameter as it is, called with values read again after the
/// call: the trace copies a returned parameter into a node of its own, as the helper's
/// halves hand its sum back.
#[differentiable]
fn returned(w: [f64; 3], x: f64) -> f64 {
    let h = w[0] * x + w[1];
    let a = relu(h) * h + relu(x - 1.0) * relu(w[2]);
    let b = larger(x, w[1]) * w[1] + larger(h * 2.0, x) * x;
    let mut total = a + b * x + itself(x) * itself(w[0]) + itself(h);
    for k in 0..3 {
        total += relu(w[k] * x) * w[k] + larger(w[k], 0.25);
    }
    let pair = as_is(x, w[0] * 2.0);
    total * x + first_positive([w[2], x, w[0]]) * w[1] + pair[0] * pair[1] + pair[0]
}

/// [`returned`] on the tape: the reference.
#[differentiable(tape)]
fn returned_recorded(w: [f64; 3], x: f64) -> f64 {
    let h = w[0] * x + w[1];
    let a = relu(h) * h + relu(x - 1.0) * relu(w[2]);
    let b = larger(x, w[1]) * w[1] + larger(h * 2.0, x) * x;
    let mut total = a + b * x + itself(x) * itself(w[0]) + itself(h);
    for k in 0..3 {
        total += relu(w[k] * x) * w[k] + larger(w[k], 0.25);
    }
    let pair = as_is(x, w[0] * 2.0);
    total * x + first_positive([w[2], x, w[0]]) * w[1] + pair[0] * pair[1] + pair[0]
}

#[test]
fn helpers_returning_a_parameter_as_it_is_run_compiled_bit_for_bit(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0x2e1a_0001);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    for case in 0..40 {
        let (w, x) = ([next(), next(), next()], next());
        let fast = outcome(returned_grad(w, x).map(|(v, g)| (v, g.to_vec())));
        let twin = returned_recorded_grad(w, x).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(returned_grad(w, x))), 0, "case {case}");
        let (value, gradient) = returned_grad(w, x)?;
        assert_eq!(value.to_bits(), returned(w, x).to_bits());
        // Away from the kinks, central differences agree.
        let numeric = central(|t| returned(w, t), x);
        if (numeric - gradient[3]).abs() > 1e-5 * (1.0 + numeric.abs()) {
            let kinked = [
                w[0] * x + w[1],
                x - 1.0,
                w[2],
                w[0] * x,
                w[1] * x,
                w[2] * x,
                x,
            ]
            .iter()
            .any(|z| z.abs() < 1e-4);
            assert!(kinked, "case {case}: {} against {numeric}", gradient[3]);
        }
        let (_, _, hessian) = returned_hessian(w, x)?;
        let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
        crate::hvp::check_columns(
            4,
            |direction| {
                let tangent: [f64; 4] = direction.try_into().expect("four");
                let (value, gradient, product) = returned_hvp(w, x, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian,
            (value, &gradient),
        )?;
        assert_eq!(
            traces(|| drop(returned_hvp(w, x, [1.0, -0.5, 0.25, 2.0]))),
            0
        );
    }
    // An `if` valued by a name is a copy of it, called by itself too: one `copy` node,
    // slope 1.
    let x = scalar_autodiff::Scalar::variable(1.5)?;
    let before = scalar_autodiff::tape_len();
    let y = relu_graph(&x)?;
    assert_eq!(scalar_autodiff::tape_len(), before + 1);
    assert_eq!(y.value().to_bits(), 1.5f64.to_bits());
    let pass = y.backward()?;
    assert_eq!(x.gradient(), Some(1.0));
    let ledger = pass.ledger();
    assert_eq!(ledger.nodes.len(), 2);
    assert_eq!(ledger.edges.len(), 1);
    Ok(())
}

/// A ReLU unit over a row of inputs, `*p` in its loop.
#[differentiable]
fn unit_relu(w: [f64; 3], x: [f64; 2]) -> f64 {
    let mut s = w[2];
    for (wi, xi) in w.iter().zip(x.iter()) {
        s += *wi * *xi;
    }
    relu(s)
}

/// A two-layer net as a new reader writes it: a local row of data built in the loop and
/// lent to a helper in a `while` counting the units.
#[differentiable]
fn net(w: [[f64; 3]; 4], v: [f64; 4], data: &[[f64; 3]]) -> f64 {
    let mut total = 0.0;
    for row in data {
        let x = [row[0], row[1]];
        let mut out = 0.0;
        let mut j = 0;
        while j < 4 {
            out += v[j] * unit_relu(w[j], x);
            j += 1;
        }
        let err = out - row[2];
        total += err * err;
    }
    total / data.len() as f64
}

/// [`net`] on the tape: the reference.
#[differentiable(tape)]
fn net_recorded(w: [[f64; 3]; 4], v: [f64; 4], data: &[[f64; 3]]) -> f64 {
    let mut total = 0.0;
    for row in data {
        let x = [row[0], row[1]];
        let mut out = 0.0;
        let mut j = 0;
        while j < 4 {
            out += v[j] * unit_relu(w[j], x);
            j += 1;
        }
        let err = out - row[2];
        total += err * err;
    }
    total / data.len() as f64
}

#[test]
fn a_relu_net_written_plainly_runs_compiled_bit_for_bit() {
    let data = [
        [0.0, 0.0, 0.0],
        [0.0, 1.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 0.0],
    ];
    let mut rng = XorShift::new(0x2e1a_0002);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..20 {
        let w: [[f64; 3]; 4] = std::array::from_fn(|_| [next(), next(), next()]);
        let v: [f64; 4] = std::array::from_fn(|_| next());
        let fast = outcome(net_grad(w, v, &data).map(|(value, g)| (value, g.to_vec())));
        let twin = net_recorded_grad(w, v, &data).map(|(value, g)| (value, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(net_grad(w, v, &data))), 0, "case {case}");
        let (value, gradient) = net_grad(w, v, &data).expect("a finite loss");
        assert_eq!(value.to_bits(), net(w, v, &data).to_bits());
        // `v[1]`, away from a unit's kink.
        let numeric = central(
            |t| {
                let mut moved = v;
                moved[1] = t;
                net(w, moved, &data)
            },
            v[1],
        );
        assert!(
            (gradient[13] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "case {case}"
        );
    }
}

/// Elements of a `#[param]` slice of numbers copied (`let b = ps[0];`, `s = ps[k];`, in a
/// literal), read again after their source is read on: copies, since the slice's type
/// shows they are scalars.
#[differentiable]
fn slice_copies(#[param] ps: &[f64]) -> f64 {
    let mut acc = {
        let b = ps[0];
        b * ps[1] + b
    };
    let mut s = ps[1];
    for k in 0..ps.len() {
        if ps[k] > s {
            s = ps[k];
        }
        acc += s * ps[k];
    }
    let lit = [ps[0], acc, s];
    acc * s + lit[0] * lit[2] + ps[0] * s
}

/// Rows of a `#[param]` slice of rows: a row named (`let r = rows[1];`) stays the row, an
/// element copied is a copy; the rows lent to a helper.
#[differentiable]
fn row_copies(#[param] rows: &[[f64; 2]]) -> f64 {
    let r = rows[1];
    let mut m = rows[0][0];
    for k in 0..rows.len() {
        m = m * rows[k][1] + r[k % 2];
    }
    m * r[0] + energy(rows) * m
}

#[test]
fn copies_of_param_slice_elements_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_0009);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let ps: Vec<f64> = (0..2 + case % 4).map(|_| next()).collect();
        let fast = outcome(slice_copies_grad(&ps).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(fast, graph_of(&ps[..], slice_copies_graph), "case {case}");
        assert_eq!(traces(|| drop(slice_copies_grad(&ps))), 0, "case {case}");
        let (value, gradient) = slice_copies_grad(&ps).expect("finite");
        assert_eq!(value.to_bits(), slice_copies(&ps).to_bits());
        near_each(&gradient, slice_copies, &ps, &format!("case {case}"));

        let rows: Vec<[f64; 2]> = (0..2 + case % 3).map(|_| [next(), next()]).collect();
        let fast = outcome(row_copies_grad(&rows).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(fast, graph_of(&rows[..], row_copies_graph), "case {case}");
        assert_eq!(traces(|| drop(row_copies_grad(&rows))), 0, "case {case}");
        let (value, gradient) = row_copies_grad(&rows).expect("finite");
        assert_eq!(value.to_bits(), row_copies(&rows).to_bits());
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        let moved = |q: &[f64]| {
            let rows: Vec<[f64; 2]> = q.chunks(2).map(|c| [c[0], c[1]]).collect();
            row_copies(&rows)
        };
        near_each(&gradient.to_flat(), moved, &flat, &format!("case {case}"));
    }
}

#[differentiable]
fn times(x: f64, y: f64) -> f64 {
    x * y
}

/// A helper lent elements of a parameter struct's fields, its result compared in a
/// condition with an early `return` (the condition reads the elements' values, which
/// proves them scalars).
#[differentiable]
fn guarded(#[param] p: &Lent) -> f64 {
    if times(p.x, p.w[1]) < 0.0 {
        return p.x * 2.0;
    }
    let c = times(p.x, p.b[1][0]);
    if c > 0.25 {
        return c * p.w[2];
    }
    p.w[0] * c
}

#[test]
fn struct_elements_read_in_conditions_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x5eed_a11a_7e57_000a);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let p = Lent {
            w: [next(), next(), next(), next()],
            b: [[next(), next()], [next(), next()]],
            v: Vec::new(),
            x: next(),
        };
        let fast = outcome(guarded_grad(&p).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(fast, graph_of(&p, guarded_graph), "case {case}");
        assert_eq!(traces(|| drop(guarded_grad(&p))), 0, "case {case}");
        let (value, gradient) = guarded_grad(&p).expect("finite");
        assert_eq!(value.to_bits(), guarded(&p).to_bits());
        let moved = |q: &[f64]| {
            let mut moved = p.clone();
            moved.read_flat(q).expect("the same shape");
            guarded(&moved)
        };
        near_each(
            &gradient.to_flat(),
            moved,
            &p.to_flat(),
            &format!("case {case}"),
        );
    }
}

/// Helpers in a module of their own, imported by name.
mod layers {
    use scalar_autodiff::differentiable;

    /// One unit.
    #[differentiable]
    pub fn unit(w: [f64; 2], x: f64) -> f64 {
        (w[0] * x + w[1]).tanh()
    }

    /// Nested one level deeper.
    pub mod shapes {
        use scalar_autodiff::differentiable;

        /// Both of a pair, scaled.
        #[differentiable]
        pub fn scaled(v: [f64; 2], s: f64) -> [f64; 2] {
            [v[0] * s, v[1] * s.exp()]
        }
    }
}

#[differentiable]
use layers::{shapes::scaled as stretch, unit};

/// Calls of helpers imported by name (one renamed).
#[differentiable]
fn imported(w: [f64; 2], x: f64) -> f64 {
    let h = stretch([unit(w, x), x], w[1]);
    h[0] * h[1] + unit(w, h[0])
}

#[test]
fn helpers_imported_by_name_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x1e1e_5eed_0009);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let (w, x) = ([next(), next()], next());
        let fast = outcome(imported_grad(w, x).map(|(v, g)| (v, g.to_vec())));
        let slow = graph_of(&[w[0], w[1], x], |v| {
            imported_graph(&[v[0].clone(), v[1].clone()], &v[2])
        });
        assert_eq!(fast, slow, "case {case}");
        assert_eq!(traces(|| drop(imported_grad(w, x))), 0, "case {case}");
        let gradient = imported_grad(w, x).expect("finite").1;
        near_each(
            &gradient,
            |q| imported([q[0], q[1]], q[2]),
            &[w[0], w[1], x],
            &format!("case {case}"),
        );
    }
}
