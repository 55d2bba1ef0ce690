//! Const generic helpers: one `linear` for every shape a model needs (`[[f64; I]; O]`),
//! inferred at each call from its arguments, generic helpers calling generic helpers, a
//! generic scalar loss with its own `name_grad`, and a generic parameter struct; and the
//! argument forms a reader writes around them (sizes turbofished in a body, a literal of
//! rows, a helper's elements in a literal, `*v` in a `.map` and `*p` of `.zip` pairs, in a
//! fold and in `for` loops, a
//! helper's result changed in place and returned, generic methods called with sizes).
//! Each runs compiled, and its value and gradient are `name_graph` + `backward`'s, bit
//! for bit.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, Parameters, Scalar};

use crate::cases::{graph_of, outcome, traces, Outcome};
use crate::support::{central, XorShift};

const E: usize = 4;
const H: usize = 6;
const VOCAB: usize = 5;

#[derive(Parameters, Clone, Debug)]
struct Model {
    wte: [[f64; E]; VOCAB],
    fc1: [[f64; E]; H],
    fc2: [[f64; H]; E],
    head: [[f64; E]; VOCAB],
}

#[differentiable]
fn linear<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut out = [0.0; O];
    for o in 0..O {
        for i in 0..I {
            out[o] += w[o][i] * x[i];
        }
    }
    out
}

#[differentiable]
fn rmsnorm<const N: usize>(x: [f64; N]) -> [f64; N] {
    let mut ms = 0.0;
    for v in x.iter() {
        ms += v * v;
    }
    let scale = (ms / N as f64 + 1e-5).powf(-0.5);
    let mut out = [0.0; N];
    for i in 0..N {
        out[i] = x[i] * scale;
    }
    out
}

/// A generic helper calling generic helpers at its own sizes.
#[differentiable]
fn block<const D: usize, const F: usize>(
    fc1: [[f64; D]; F],
    fc2: [[f64; F]; D],
    x: [f64; D],
) -> [f64; D] {
    let mut h = linear(fc1, rmsnorm(x));
    for i in 0..F {
        h[i] = h[i].max(0.0);
    }
    let y = linear(fc2, h);
    let mut out = [0.0; D];
    for i in 0..D {
        out[i] = x[i] + y[i];
    }
    out
}

/// An array literal of locals and new values returned as it is.
#[differentiable]
fn moments<const N: usize>(x: [f64; N]) -> [f64; 2] {
    let mut sum = 0.0;
    let mut squares = 0.0;
    for v in x.iter() {
        sum += v;
        squares += v * v;
    }
    let spread = squares.sqrt() + 0.5 * sum;
    [sum, spread]
}

/// A copy of a parameter changed in place through `iter_mut`, and `enumerate`d.
#[differentiable]
fn scaled<const N: usize>(w: f64, x: [f64; N]) -> [f64; N] {
    let mut out = [0.0; N];
    for (i, v) in out.iter_mut().enumerate() {
        *v = x[i] * w;
    }
    for v in out.iter_mut() {
        *v += 0.5 * *v * *v;
    }
    out
}

/// A generic function with a scalar result: `nll_grad` gives the gradient in the
/// parameter's shape.
#[differentiable]
fn nll<const N: usize>(logits: [f64; N], target: usize) -> f64 {
    let mut top = logits[0].detach();
    for i in 1..N {
        top = top.max(logits[i].detach());
    }
    let mut total = 0.0;
    for v in logits.iter() {
        total += (v - top).exp();
    }
    total.ln() + top - logits[target]
}

#[differentiable]
fn loss(#[param] p: &Model, tokens: &[usize]) -> f64 {
    let mut total = 0.0;
    for pos in 0..tokens.len().saturating_sub(1) {
        let x = block(p.fc1, p.fc2, p.wte[tokens[pos]]);
        // A helper's result indexed as it is; data indexed through a method, assigned to.
        let mut scale = vec![0.0; 2];
        scale.as_mut_slice()[1] = 0.125;
        total +=
            nll(linear(p.head, x), tokens[pos + 1]) + scale[1] * linear(p.head, x)[pos % VOCAB];
        // An array literal of new values and constants lent to a helper.
        total += 0.5 * nll([x[0] * 0.5, 1.0, x[1] + 0.25, 0.25, -2.0], pos % VOCAB);
        // A loop over data alone, through `iter_mut`.
        let mut weights = [1.0, 0.5];
        for weight in weights.iter_mut() {
            *weight *= 0.5;
        }
        let s = scaled(0.25, x);
        total += s[0] * s[3] * weights[1];
        let m = moments(x);
        total += m[0] * m[1] * 0.1 + m[0] * 0.01 - m[1] * m[1] * 0.02;
    }
    total
}

/// A parameter struct with a size of its own.
#[derive(Parameters, Clone, Debug)]
struct Layer<const N: usize> {
    w: [[f64; N]; N],
    b: [f64; N],
}

#[differentiable]
fn layer<const N: usize>(#[param] l: &Layer<N>, x: [f64; N]) -> f64 {
    let h = linear(l.w, x);
    let mut total = 0.0;
    for i in 0..N {
        total += (h[i] + l.b[i]).tanh();
    }
    total
}

/// A helper's result changed in place, then returned as it is.
#[differentiable]
fn relu_linear<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut h = linear(w, x);
    for o in 0..O {
        h[o] = h[o].max(0.0);
    }
    h
}

/// Calls written the ways a reader writes them around generic helpers.
#[differentiable]
fn forms(w: [[f64; E]; 2], v: [f64; E], x: f64) -> f64 {
    // Sizes given by a turbofish.
    let h = linear::<E, 2>(w, rmsnorm::<E>(v));
    // A literal of rows: new values, constants, a helper's elements and whole rows.
    let rows = linear([[x * 0.5, h[0], 1.0, h[1]], v, w[1]], v);
    let out = relu_linear(w, v);
    // A helper's elements in a literal of scalars.
    let mut total = nll([h[0], x, rows[2]], 1);
    // `*v` in a `.map` over a tracked array.
    total += v.iter().map(|e| *e * *e * x).sum::<f64>();
    // `*p` of pairs: `.zip` of two tracked arrays, `.enumerate`, in a `.map` and a fold.
    total += v.iter().zip(w[0].iter()).map(|(p, q)| *p * *q).sum::<f64>()
        + v.iter()
            .enumerate()
            .fold(0.0, |acc, (i, e)| acc + *e * i as f64);
    // `*p` in `for` loops: over `.iter()` and `&v`, pairs of `.zip` (of a chain too)
    // and `.enumerate`, nested.
    for (i, (p, q)) in v.iter().zip(w[1].iter()).enumerate() {
        total += *p * *q * i as f64;
    }
    for (p, (i, q)) in v.iter().rev().zip(w[0].iter().enumerate()) {
        total += *p * q.sin() + i as f64 * *q;
    }
    for (p, q) in v.iter().zip(&w[1]) {
        total = total * 0.5 + *p * *q;
    }
    for p in &v {
        total += (*p * x).tanh();
    }
    for (p, q) in v.iter().step_by(2).zip(w[0].iter().skip(1)) {
        total += *p * *q;
    }
    total + rows[0] * out[1]
}

/// [`forms`] on the tape: the reference.
#[differentiable(tape)]
fn forms_recorded(w: [[f64; E]; 2], v: [f64; E], x: f64) -> f64 {
    let h = linear::<E, 2>(w, rmsnorm::<E>(v));
    let rows = linear([[x * 0.5, h[0], 1.0, h[1]], v, w[1]], v);
    let out = relu_linear(w, v);
    let mut total = nll([h[0], x, rows[2]], 1);
    total += v.iter().map(|e| *e * *e * x).sum::<f64>();
    // `*p` of pairs: `.zip` of two tracked arrays, `.enumerate`, in a `.map` and a fold.
    total += v.iter().zip(w[0].iter()).map(|(p, q)| *p * *q).sum::<f64>()
        + v.iter()
            .enumerate()
            .fold(0.0, |acc, (i, e)| acc + *e * i as f64);
    for (i, (p, q)) in v.iter().zip(w[1].iter()).enumerate() {
        total += *p * *q * i as f64;
    }
    for (p, (i, q)) in v.iter().rev().zip(w[0].iter().enumerate()) {
        total += *p * q.sin() + i as f64 * *q;
    }
    for (p, q) in v.iter().zip(&w[1]) {
        total = total * 0.5 + *p * *q;
    }
    for p in &v {
        total += (*p * x).tanh();
    }
    for (p, q) in v.iter().step_by(2).zip(w[0].iter().skip(1)) {
        total += *p * *q;
    }
    total + rows[0] * out[1]
}

fn model(next: &mut impl FnMut() -> f64) -> Model {
    Model {
        wte: std::array::from_fn(|_| std::array::from_fn(|_| next())),
        fc1: std::array::from_fn(|_| std::array::from_fn(|_| next())),
        fc2: std::array::from_fn(|_| std::array::from_fn(|_| next())),
        head: std::array::from_fn(|_| std::array::from_fn(|_| next())),
    }
}

const SEQUENCES: [&[usize]; 4] = [&[1], &[0, 4], &[3, 1, 3], &[4, 4, 0, 2, 1]];

#[test]
fn const_generic_helpers_run_compiled_and_agree_with_the_graph_bit_for_bit() {
    let mut rng = XorShift::new(0x51_7cc1_b727_220a);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..40 {
        let p = model(&mut next);
        let tokens = SEQUENCES[case % SEQUENCES.len()];
        let fast = outcome(loss_grad(&p, tokens).map(|(v, g)| (v, g.to_flat())));
        let checked = graph_of(&p, |tracked| loss_graph(tracked, tokens));
        assert_eq!(fast, checked, "case {case}, tokens {tokens:?}");
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(traces(|| drop(loss_grad(&p, tokens))), 0, "case {case}");
    }
}

#[test]
fn const_generic_helpers_have_the_plain_functions_derivatives() {
    let mut rng = XorShift::new(7);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    let p = model(&mut next);
    let tokens = [2, 0, 3, 1];
    let (value, gradient) = loss_grad(&p, &tokens).unwrap();
    assert_eq!(value, loss(&p, &tokens));
    let flat = p.to_flat();
    let gradient = gradient.to_flat();
    for k in (0..flat.len()).step_by(5) {
        let numeric = central(
            |v| {
                let mut moved = flat.clone();
                moved[k] = v;
                let mut q = p.clone();
                q.read_flat(&moved).unwrap();
                loss(&q, &tokens)
            },
            flat[k],
        );
        assert!(
            (gradient[k] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "parameter {k}: {} against {numeric}",
            gradient[k]
        );
    }
}

#[test]
fn a_generic_scalar_function_has_its_gradient_in_its_parameters_shape() {
    let logits = [0.5, -1.0, 2.0, 0.25, 0.0];
    // Sizes inferred, or given by a turbofish.
    let (value, gradient) = nll_grad(logits, 2).unwrap();
    assert_eq!(nll_grad::<5>(logits, 2).unwrap(), (value, gradient));
    assert_eq!(value, nll(logits, 2));
    // d/dl_i = softmax_i - [i == target]
    let total: f64 = logits.iter().map(|l| l.exp()).sum();
    for i in 0..5 {
        let expected = logits[i].exp() / total - f64::from(u8::from(i == 2));
        assert!((gradient[i] - expected).abs() < 1e-12, "{i}");
    }
    // The same function at another size.
    let (_, small) = nll_grad([1.0, 1.0], 0).unwrap();
    assert_eq!(small, [-0.5, 0.5]);
}

#[test]
fn a_generic_parameter_struct_runs_compiled_at_each_size() {
    let three = Layer::<3> {
        w: [[0.1, 0.2, 0.3], [0.4, -0.5, 0.6], [0.7, 0.8, -0.9]],
        b: [0.1, 0.2, 0.3],
    };
    let two = Layer::<2> {
        w: [[0.5, -0.25], [1.5, 0.75]],
        b: [-0.1, 0.2],
    };
    let x3 = [0.5, 0.25, 1.0];
    let x2 = [-0.5, 2.0];
    let fast = outcome(layer_grad(&three, x3).map(|(v, (g, _))| (v, g.to_flat())));
    assert_eq!(
        fast,
        graph_of(&three, |l| layer_graph(l, &x3.map(constant)))
    );
    let fast = outcome(layer_grad(&two, x2).map(|(v, (g, _))| (v, g.to_flat())));
    assert_eq!(fast, graph_of(&two, |l| layer_graph(l, &x2.map(constant))));
    assert_eq!(traces(|| drop(layer_grad(&three, x3))), 0);
    assert_eq!(traces(|| drop(layer_grad(&two, x2))), 0);
    // d/db_i = 1 - tanh(h_i + b_i)^2, d/dx_j = sum_i that * w_ij
    let (_, (g, dx)) = layer_grad(&two, x2).unwrap();
    for i in 0..2 {
        let h = two.w[i][0] * x2[0] + two.w[i][1] * x2[1] + two.b[i];
        assert!((g.b[i] - (1.0 - h.tanh().powi(2))).abs() < 1e-15);
    }
    let slope = |i: usize| {
        let h = two.w[i][0] * x2[0] + two.w[i][1] * x2[1] + two.b[i];
        1.0 - h.tanh().powi(2)
    };
    for j in 0..2 {
        let expected = slope(0) * two.w[0][j] + slope(1) * two.w[1][j];
        assert!((dx[j] - expected).abs() < 1e-15);
    }
}

#[test]
fn a_generic_helpers_graph_form_takes_the_sizes_from_a_turbofish() {
    let w = [[1.0, 2.0, 0.5], [3.0, 4.0, -1.0]].map(|row| row.map(variable));
    let x = [0.5, 0.25, 1.0].map(variable);
    let out = linear_graph::<3, 2>(&w, &x).unwrap();
    assert_eq!(out.each_ref().map(|o| o.value()), [1.5, 1.5]);
    out[1].backward().unwrap();
    assert_eq!(
        w[1].each_ref().map(|s| s.gradient()),
        [Some(0.5), Some(0.25), Some(1.0)]
    );
    assert_eq!(
        x.each_ref().map(|s| s.gradient()),
        [Some(3.0), Some(4.0), Some(-1.0)]
    );
}

fn variable(value: f64) -> Scalar {
    Scalar::variable(value).unwrap()
}

fn constant(value: f64) -> Scalar {
    Scalar::constant(value).unwrap()
}

#[test]
fn argument_forms_around_generic_helpers_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x0a7e_5f0c_0d1e);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..30 {
        let w: [[f64; E]; 2] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let v: [f64; E] = std::array::from_fn(|_| next());
        let x = next();
        let flat = |(value, gradient): (f64, [f64; 2 * E + E + 1])| (value, gradient.to_vec());
        let fast = outcome(forms_grad(w, v, x).map(flat));
        // (The twin records every call on the tape: `name_graph` + `backward`.)
        assert_eq!(
            fast,
            outcome(forms_recorded_grad(w, v, x).map(flat)),
            "case {case}"
        );
        assert!(traces(|| drop(forms_recorded_grad(w, v, x))) > 0);
        assert_eq!(traces(|| drop(forms_grad(w, v, x))), 0, "case {case}");
        // The gradient is flat, in parameter order: `w`, `v`, then `x`.
        let (value, gradient) = forms_grad(w, v, x).unwrap();
        let (gv, gx) = (&gradient[2 * E..3 * E], gradient[3 * E]);
        assert_eq!(value.to_bits(), forms(w, v, x).to_bits());
        let numeric = central(|t| forms(w, v, t), x);
        assert!(
            (gx - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "{gx} against {numeric}"
        );
        let numeric = central(
            |t| {
                let mut moved = v;
                moved[2] = t;
                forms(w, moved, x)
            },
            v[2],
        );
        assert!(
            (gv[2] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "{} against {numeric}",
            gv[2]
        );
    }
}

/// Settings whose methods are generic over a size.
struct Norm {
    eps: f64,
}

impl Norm {
    #[differentiable]
    fn energy<const N: usize>(&self, v: [f64; N]) -> f64 {
        let mut total = self.eps;
        for e in v.iter() {
            total += e * e;
        }
        total.sqrt()
    }

    /// Sizes turbofished on a method call and on `Self::`, and inferred; one value
    /// repeated into an array (`[x; 3]`).
    #[differentiable]
    fn mixed(&self, v: [f64; E], x: f64) -> f64 {
        let repeated = self.energy([x * 2.0; 2]) - self.energy::<2>([v[1]; 2]);
        self.energy::<E>(v) * x
            + Self::energy::<2>(self, [v[0], x])
            + self.energy([x; 3])
            + repeated
    }

    /// [`Norm::mixed`] on the tape: the reference.
    #[differentiable(tape)]
    fn mixed_recorded(&self, v: [f64; E], x: f64) -> f64 {
        let repeated = self.energy([x * 2.0; 2]) - self.energy::<2>([v[1]; 2]);
        self.energy::<E>(v) * x
            + Self::energy::<2>(self, [v[0], x])
            + self.energy([x; 3])
            + repeated
    }
}

#[test]
fn generic_methods_called_with_sizes_run_compiled_and_agree() {
    let norm = Norm { eps: 0.25 };
    let mut rng = XorShift::new(0x6e0e_1a57);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..20 {
        let v: [f64; E] = std::array::from_fn(|_| next());
        let x = next();
        let fast = outcome(norm.mixed_grad(v, x).map(|(value, g)| (value, g.to_vec())));
        let twin = norm.mixed_recorded_grad(v, x);
        assert_eq!(
            fast,
            outcome(twin.map(|(value, g)| (value, g.to_vec()))),
            "case {case}"
        );
        assert_eq!(traces(|| drop(norm.mixed_grad(v, x))), 0, "case {case}");
        let (value, gradient) = norm.mixed_grad(v, x).unwrap();
        assert_eq!(value.to_bits(), norm.mixed(v, x).to_bits());
        let numeric = central(|t| norm.mixed(v, t), x);
        let gx = gradient[E];
        assert!(
            (gx - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "{gx} against {numeric}"
        );
    }
}
