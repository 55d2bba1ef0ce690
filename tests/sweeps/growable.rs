//! A KV cache built position by position, as attention is written: a local vector sized
//! at run time (`vec![[0.0; D]; n]`, rows stored as `keys[pos] = linear(..)`), and a
//! growable one (`Vec::new()` and `keys.push(linear(..))`, read by `keys.len()`, with a
//! local sized by it). Both run compiled, and agree with `name_graph` + `backward` bit for
//! bit, with each other, and with central differences of the plain function.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, Parameters};

use crate::cases::{graph_of, outcome, traces, Outcome};
use crate::support::{central, near_each, XorShift};

const D: usize = 3;
const VOCAB: usize = 4;

#[derive(Parameters, Clone, Debug)]
struct Attention {
    wte: [[f64; D]; VOCAB],
    wq: [[f64; D]; D],
    wk: [[f64; D]; D],
    wv: [[f64; D]; D],
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

/// The cache as a vector of the sequence's length, its rows stored as they are computed.
#[differentiable]
fn sized(#[param] p: &Attention, tokens: &[usize]) -> f64 {
    let mut keys = vec![[0.0; D]; tokens.len()];
    let mut values = vec![[0.0; D]; tokens.len()];
    let mut total = 0.0;
    for (pos, &tok) in tokens.iter().enumerate() {
        let x = p.wte[tok];
        let q = linear(p.wq, x);
        keys[pos] = linear(p.wk, x);
        values[pos] = linear(p.wv, x);
        let mut weights = vec![0.0; pos + 1];
        let mut sum = 0.0;
        for t in 0..=pos {
            let mut s = 0.0;
            for j in 0..D {
                s += q[j] * keys[t][j];
            }
            weights[t] = s.exp();
            sum += weights[t];
        }
        for t in 0..=pos {
            for j in 0..D {
                total += weights[t] / sum * values[t][j];
            }
        }
    }
    for t in 0..tokens.len() {
        total += 0.125 * linear(p.wq, keys[t])[t % D];
    }
    total
}

/// The same cache grown by `push`, read by its length (one vector typed, one inferred).
#[differentiable]
fn pushed(#[param] p: &Attention, tokens: &[usize]) -> f64 {
    let mut keys: Vec<[f64; D]> = Vec::new();
    let mut values = Vec::with_capacity(tokens.len());
    let mut total = 0.0;
    for &tok in tokens {
        let x = p.wte[tok];
        let q = linear(p.wq, x);
        keys.push(linear(p.wk, x));
        values.push(linear(p.wv, x));
        let mut weights = vec![0.0; keys.len()];
        let mut sum = 0.0;
        for t in 0..keys.len() {
            let mut s = 0.0;
            for j in 0..D {
                s += q[j] * keys[t][j];
            }
            weights[t] = s.exp();
            sum += weights[t];
        }
        for t in 0..values.len() {
            for j in 0..D {
                total += weights[t] / sum * values[t][j];
            }
        }
    }
    // Rows lent to a helper, after the loop that pushed them.
    for t in 0..keys.len() {
        total += 0.125 * linear(p.wq, keys[t])[t % D];
    }
    total
}

fn attention(next: &mut impl FnMut() -> f64) -> Attention {
    let mut matrix = || std::array::from_fn(|_| std::array::from_fn(|_| next()));
    Attention {
        wte: std::array::from_fn(|_| std::array::from_fn(|_| 0.0)),
        wq: matrix(),
        wk: matrix(),
        wv: matrix(),
    }
}

const SEQUENCES: [&[usize]; 4] = [&[2], &[0, 3], &[3, 1, 3], &[1, 0, 2, 2, 3]];

#[test]
fn both_caches_run_compiled_and_agree_with_the_graph() {
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..24 {
        let mut p = attention(&mut next);
        p.wte = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let tokens = SEQUENCES[case % SEQUENCES.len()];
        let fast = outcome(sized_grad(&p, tokens).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(
            fast,
            graph_of(&p, |t| sized_graph(t, tokens)),
            "case {case}"
        );
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(traces(|| drop(sized_grad(&p, tokens))), 0, "case {case}");
        // The growable cache: the same numbers, on the checked path.
        let grown = outcome(pushed_grad(&p, tokens).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(
            grown,
            graph_of(&p, |t| pushed_graph(t, tokens)),
            "case {case}"
        );
        assert_eq!(grown, fast, "case {case}");
    }
}

#[test]
fn both_caches_have_the_plain_functions_derivatives() {
    let mut rng = XorShift::new(11);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    let mut p = attention(&mut next);
    p.wte = std::array::from_fn(|_| std::array::from_fn(|_| next()));
    let tokens = [3, 0, 1, 3];
    let (value, gradient) = sized_grad(&p, &tokens).unwrap();
    assert_eq!(value, sized(&p, &tokens));
    assert_eq!(value, pushed(&p, &tokens));
    let flat = p.to_flat();
    let gradient = gradient.to_flat();
    for k in 0..flat.len() {
        let numeric = central(
            |v| {
                let mut moved = flat.clone();
                moved[k] = v;
                let mut q = p.clone();
                q.read_flat(&moved).unwrap();
                pushed(&q, &tokens)
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

/// GradBench's ODE (four Runge-Kutta stages a step): work vectors sized by a local of
/// the body, `let n = x.len();`, whose adjoints the sweeps once declared before `n` was
/// in scope (rustc's "cannot find value `n`").
#[differentiable]
fn ode_last(#[param] x: &[f64], steps: usize) -> f64 {
    let n = x.len();
    let h = 2.0 / steps as f64;
    let mut y = vec![0.0; n];
    let mut k = vec![0.0; n];
    let mut sum = vec![0.0; n];
    for _ in 0..steps {
        for i in 0..n {
            sum[i] = 0.0;
        }
        for stage in 0..4 {
            let (scale, weight) = match stage {
                0 => (0.0, 1.0),
                1 | 2 => (0.5, 2.0),
                _ => (1.0, 1.0),
            };
            let mut previous = 0.0;
            for i in 0..n {
                let input = if i == 0 {
                    1.0
                } else {
                    y[i - 1] + h * scale * previous
                };
                previous = k[i];
                k[i] = x[i] * input;
                sum[i] += weight * k[i];
            }
        }
        for i in 0..n {
            y[i] += h * sum[i] / 6.0;
        }
    }
    y[n - 1]
}

#[test]
fn vectors_sized_by_a_local_run_compiled() {
    let x = [0.7, -0.4, 1.3, 0.2, 0.9];
    for steps in [1, 3] {
        let fast = outcome(ode_last_grad(&x, steps));
        assert_eq!(
            fast,
            graph_of(&x[..], |t| ode_last_graph(t, steps)),
            "{steps} steps"
        );
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(
            traces(|| drop(ode_last_grad(&x, steps))),
            0,
            "{steps} steps"
        );
        let (value, gradient) = ode_last_grad(&x, steps).unwrap();
        assert_eq!(value, ode_last(&x, steps));
        near_each(&gradient, |x| ode_last(x, steps), &x, "ode");
        // The dual sweeps declare the same adjoints: `name_hvp` runs compiled too.
        let tangent = vec![1.0, 0.0, 0.0, 0.0, -1.0];
        let (_, hvp_gradient, _) = ode_last_hvp(&x, steps, tangent.clone()).unwrap();
        assert_eq!(hvp_gradient, gradient);
        assert_eq!(
            traces(|| drop(ode_last_hvp(&x, steps, tangent.clone()))),
            0,
            "{steps} steps"
        );
    }
}

/// `is_empty()` of a slice parameter and of an array, the form clippy asks for rather
/// than `len() == 0`: data the sweeps read again, compiled.
#[differentiable]
fn weighted(#[param] x: &[f64], w: [f64; 2]) -> f64 {
    let mut total = w[0] * w[1];
    if !x.is_empty() && !w.is_empty() {
        for i in 0..x.len() {
            total += (x[i] * w[i % 2]).sin();
        }
    }
    total
}

#[test]
fn is_empty_of_a_parameter_runs_compiled() {
    for x in [vec![], vec![0.3, -1.2, 0.8]] {
        let w = [0.4, 1.7];
        let fast = outcome(weighted_grad(&x, w).map(|(value, (gx, gw))| {
            let gradient: Vec<f64> = gx.iter().chain(&gw).copied().collect();
            (value, gradient)
        }));
        let all: Vec<f64> = x.iter().chain(&w).copied().collect();
        let n = x.len();
        let taped = graph_of(&all[..], |t| {
            weighted_graph(&t[..n].to_vec(), &[t[n].clone(), t[n + 1].clone()])
        });
        assert_eq!(fast, taped, "{} elements", x.len());
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(traces(|| drop(weighted_grad(&x, w))), 0);
    }
}

/// Pushes the compiled sweeps do not follow (a push inside a loop over the vector's own
/// length, a local sized by the vector and then outgrown, a vector declared in a loop, a
/// pushed local rather than a call's result) and a vector of data beside a tracked one:
/// on the tape, as chosen.
#[differentiable(tape)]
fn unusual(#[param] p: &Attention, tokens: &[usize]) -> f64 {
    let mut keys = Vec::new();
    let mut seen = Vec::new();
    let mut total = 0.0;
    for &tok in tokens {
        seen.push(tok);
        keys.push(linear(p.wk, p.wte[tok]));
        let mut scores = vec![0.0; keys.len()];
        for t in 0..keys.len() {
            scores[t] = keys[t][0] * keys[keys.len() - 1][1];
        }
        if tok == 3 {
            // Outgrows `scores` and pushes inside a loop over its own length.
            for _ in 0..keys.len() {
                keys.push(linear(p.wq, p.wte[tok]));
            }
        }
        let mut rows = Vec::new();
        let k = linear(p.wv, p.wte[tok]);
        rows.push(k);
        total += rows[0][2] * scores[0] + seen.len() as f64 * 0.01;
    }
    total
}

/// A vector of data in a body that runs compiled.
#[differentiable]
fn data_vector(w: [f64; D], tokens: &[usize]) -> f64 {
    let mut seen = Vec::new();
    let mut total = 0.0;
    for &tok in tokens {
        seen.push(tok);
        total += w[tok % D] * seen.len() as f64;
    }
    total
}

#[test]
fn pushes_outside_the_sweeps_agree_with_the_graph() {
    let mut rng = XorShift::new(5);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..12 {
        let mut p = attention(&mut next);
        p.wte = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let tokens = SEQUENCES[case % SEQUENCES.len()];
        let fast = outcome(unusual_grad(&p, tokens).map(|(v, g)| (v, g.to_flat())));
        assert_eq!(
            fast,
            graph_of(&p, |t| unusual_graph(t, tokens)),
            "case {case}"
        );
        assert!(matches!(fast, Outcome::Bits(_)));
        assert_eq!(unusual_grad(&p, tokens).unwrap().0, unusual(&p, tokens));
    }
    let w = [0.5, -1.5, 2.0];
    let (value, gradient) = data_vector_grad(w, &[0, 2, 2, 1]).unwrap();
    assert_eq!(value, data_vector(w, &[0, 2, 2, 1]));
    assert_eq!(gradient, [1.0, 4.0, 5.0]);
    assert_eq!(traces(|| drop(data_vector_grad(w, &[0, 2, 2, 1]))), 0);
}

/// `name_hvp` through both caches: compiled (no trace on a warm call), the gradient's
/// bits `name_grad`'s, the two caches' products the same bits, and the product a central
/// difference of the gradient along the direction.
#[test]
fn both_caches_hvp_run_compiled() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..8 {
        let mut p = attention(&mut next);
        p.wte = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let mut direction = attention(&mut next);
        direction.wte = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let tokens = SEQUENCES[case % SEQUENCES.len()];
        let run = || pushed_hvp(&p, tokens, direction.clone()).expect("finite");
        let _ = run();
        assert_eq!(
            traces(|| {
                run();
            }),
            0,
            "case {case}"
        );
        let (value, gradient, product) = run();
        let (sized_value, sized_gradient, sized_product) =
            sized_hvp(&p, tokens, direction.clone()).expect("finite");
        let (grad_value, grad_gradient) = pushed_grad(&p, tokens).expect("finite");
        assert_eq!(value.to_bits(), grad_value.to_bits(), "case {case}");
        assert_eq!(gradient.to_flat(), grad_gradient.to_flat(), "case {case}");
        assert_eq!(
            (
                sized_value,
                sized_gradient.to_flat(),
                sized_product.to_flat()
            ),
            (value, gradient.to_flat(), product.to_flat()),
            "case {case}"
        );
        let (flat, along) = (p.to_flat(), direction.to_flat());
        let moved = |step: f64| {
            let shifted: Vec<f64> = flat.iter().zip(&along).map(|(x, d)| x + step * d).collect();
            let mut q = p.clone();
            q.read_flat(&shifted).expect("same length");
            pushed_grad(&q, tokens).expect("finite").1.to_flat()
        };
        let (up, down) = (moved(1e-6), moved(-1e-6));
        for (k, product) in product.to_flat().iter().enumerate() {
            let numeric = (up[k] - down[k]) / 2e-6;
            assert!(
                (product - numeric).abs() < 1e-5 * (1.0 + numeric.abs()),
                "case {case}, parameter {k}: {product} against {numeric}"
            );
        }
    }
}

/// A cache's length, and a parameter array's, read as data in expressions and in a `let`
/// at the top of the body.
#[differentiable]
fn counted(w: [[f64; D]; D], xs: [f64; D]) -> f64 {
    let mut keys: Vec<[f64; D]> = Vec::new();
    let mut total = 0.0;
    for k in 0..D {
        keys.push(linear(w, [xs[k], 1.0, 0.5]));
        total += keys[k][0] * keys.len() as f64 + xs.len() as f64 * keys[k][1];
    }
    let n = keys.len();
    total * n as f64 + keys[n - 1][2]
}

/// [`counted`] on the tape: the reference.
#[differentiable(tape)]
fn counted_recorded(w: [[f64; D]; D], xs: [f64; D]) -> f64 {
    let mut keys: Vec<[f64; D]> = Vec::new();
    let mut total = 0.0;
    for k in 0..D {
        keys.push(linear(w, [xs[k], 1.0, 0.5]));
        total += keys[k][0] * keys.len() as f64 + xs.len() as f64 * keys[k][1];
    }
    let n = keys.len();
    total * n as f64 + keys[n - 1][2]
}

#[test]
fn a_caches_length_read_as_data_runs_compiled_and_agrees() {
    let mut rng = XorShift::new(0x1e9e_7b05);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..20 {
        let w: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let xs: [f64; D] = std::array::from_fn(|_| next());
        let flat = |(v, g): (f64, [f64; D * D + D])| (v, g.to_vec());
        let fast = outcome(counted_grad(w, xs).map(flat));
        assert_eq!(
            fast,
            outcome(counted_recorded_grad(w, xs).map(flat)),
            "case {case}"
        );
        assert_eq!(traces(|| drop(counted_grad(w, xs))), 0, "case {case}");
        let (_, gradient) = counted_grad(w, xs).unwrap();
        let dxs = &gradient[D * D..];
        let numeric = central(
            |t| {
                let mut moved = xs;
                moved[1] = t;
                counted(w, moved)
            },
            xs[1],
        );
        assert!(
            (dxs[1] - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
            "{} against {numeric}",
            dxs[1]
        );
    }
}
