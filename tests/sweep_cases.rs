//! Bodies in the compiled sweeps' forms, against `name_graph` + `backward`, bit for bit on
//! random inputs (the random programs of `sweep_bits` mostly exercise the checked path):
//! loops over ranges and data, branches in loops, local arrays, copies, `detach`, dead
//! code whose derivative overflows (the sweeps give up, the checked path decides), and
//! domains left unguarded so that some inputs fail (the same error on both paths).
#![allow(clippy::needless_range_loop)]

use autodiff::{differentiable, Scalar, ScalarAutodiffError};

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

/// The value and gradient bits, or the error's kind (node numbers differ between the paths).
#[derive(Debug, PartialEq)]
enum Outcome {
    Bits(Vec<u64>),
    Failed(&'static str),
}

fn outcome(result: Result<(f64, Vec<f64>), ScalarAutodiffError>) -> Outcome {
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

#[test]
fn sweeps_and_the_graph_agree_bit_for_bit() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    };
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
