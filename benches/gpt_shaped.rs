//! A microgpt-shaped loss, the workload issue 30 sets a target on: one transformer layer
//! (16-wide embeddings, 4 heads of 4, block 16, an MLP of 64, 27 tokens: 4,192 parameters)
//! written as a reader of Karpathy's blog post would, with a `#[derive(Parameters)]` struct,
//! layer helpers (`linear`, `rmsnorm`, `add`, `nll`) and a KV cache built position by
//! position in fixed arrays; the loss over one 7-step sequence. The group times the plain
//! function (`plain`) and `loss_grad` (`grad`): their ratio is what a gradient costs over a
//! forward pass; and `grad_natural`, the same loss with one const generic `linear` for
//! every shape and a KV cache grown by `push`. Before timing, `loss_grad` is checked
//! against `loss_graph` + `backward` bit for bit, the natural form against it, and warm
//! calls must start no trace.
//!
//! Run with `cargo bench --bench gpt_shaped`.

// The bodies index their arrays as the formulas do.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use scalar_autodiff::{differentiable, Parameters};

/// The vocabulary: 26 letters and a boundary token.
const V: usize = 27;
/// The embedding width.
const E: usize = 16;
/// The block (the longest sequence).
const B: usize = 16;
/// Attention heads.
const H: usize = 4;
/// Each head's width.
const HD: usize = 4;
/// The MLP's hidden width.
const F: usize = 64;

/// The parameters: 4,192 of them.
#[derive(Parameters, Clone)]
pub struct Gpt {
    wte: [[f64; E]; V],
    wpe: [[f64; E]; B],
    wq: [[f64; E]; E],
    wk: [[f64; E]; E],
    wv: [[f64; E]; E],
    wo: [[f64; E]; E],
    fc1: [[f64; E]; F],
    fc2: [[f64; F]; E],
    head: [[f64; E]; V],
}

/// `w x` for a 16-by-16 `w`.
#[differentiable]
fn linear_e(w: [[f64; E]; E], x: [f64; E]) -> [f64; E] {
    let mut out = [0.0; E];
    for o in 0..E {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}
/// `w x`, 16 to 64.
#[differentiable]
fn linear_up(w: [[f64; E]; F], x: [f64; E]) -> [f64; F] {
    let mut out = [0.0; F];
    for o in 0..F {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}
/// `w x`, 64 to 16.
#[differentiable]
fn linear_down(w: [[f64; F]; E], x: [f64; F]) -> [f64; E] {
    let mut out = [0.0; E];
    for o in 0..E {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}
/// The logits, 16 to 27.
#[differentiable]
fn logits_of(w: [[f64; E]; V], x: [f64; E]) -> [f64; V] {
    let mut out = [0.0; V];
    for o in 0..V {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}
/// RMSNorm without a gain.
#[differentiable]
fn rmsnorm(x: [f64; E]) -> [f64; E] {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / E as f64;
    let scale = (ms + 1e-5).powf(-0.5);
    let mut out = [0.0; E];
    for i in 0..E {
        out[i] = x[i] * scale;
    }
    out
}
/// Elementwise sum (a residual).
#[differentiable]
fn add(a: [f64; E], b: [f64; E]) -> [f64; E] {
    let mut out = [0.0; E];
    for i in 0..E {
        out[i] = a[i] + b[i];
    }
    out
}
/// `-ln softmax(l)[target]`, the maximum subtracted as a constant.
#[differentiable]
fn nll(l: [f64; V], target: usize) -> f64 {
    let m = l.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v.detach()));
    let total: f64 = l.iter().map(|v| (v - m).exp()).sum();
    total.ln() + m - l[target]
}

/// The mean next-token loss over `tokens`.
#[differentiable]
fn loss(#[param] p: &Gpt, tokens: &[usize]) -> f64 {
    let n = tokens.len() - 1;
    let mut keys = [[0.0; E]; B];
    let mut values = [[0.0; E]; B];
    let mut total = 0.0;
    for pos in 0..n {
        let x = rmsnorm(add(p.wte[tokens[pos]], p.wpe[pos]));
        let xn = rmsnorm(x);
        let q = linear_e(p.wq, xn);
        keys[pos] = linear_e(p.wk, xn);
        values[pos] = linear_e(p.wv, xn);
        let mut att = [0.0; E];
        for h in 0..H {
            let mut scores = [0.0; B];
            let mut m = f64::NEG_INFINITY;
            for t in 0..=pos {
                let mut s = 0.0;
                for j in 0..HD {
                    s += q[h * HD + j] * keys[t][h * HD + j];
                }
                scores[t] = s / (HD as f64).sqrt();
                m = m.max(scores[t].detach());
            }
            let mut z = 0.0;
            for t in 0..=pos {
                scores[t] = (scores[t] - m).exp();
                z += scores[t];
            }
            for t in 0..=pos {
                for j in 0..HD {
                    att[h * HD + j] += scores[t] / z * values[t][h * HD + j];
                }
            }
        }
        let x = add(x, linear_e(p.wo, att));
        let mut hidden = linear_up(p.fc1, rmsnorm(x));
        for i in 0..F {
            hidden[i] = hidden[i].max(0.0);
        }
        let x = add(x, linear_down(p.fc2, hidden));
        total += nll(logits_of(p.head, x), tokens[pos + 1]);
    }
    total / n as f64
}

/// `w x` at any size: the one layer helper the natural form needs.
#[differentiable]
fn linear<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut out = [0.0; O];
    for o in 0..O {
        out[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    out
}

/// The same loss as the blog writes it: one generic `linear` for every shape, and the KV
/// cache grown by `push` (`keys.append(k)`), its scores sized by its length.
#[differentiable]
fn loss_natural(#[param] p: &Gpt, tokens: &[usize]) -> f64 {
    let n = tokens.len() - 1;
    let mut keys: Vec<[f64; E]> = Vec::new();
    let mut values: Vec<[f64; E]> = Vec::new();
    let mut total = 0.0;
    for pos in 0..n {
        let x = rmsnorm(add(p.wte[tokens[pos]], p.wpe[pos]));
        let xn = rmsnorm(x);
        let q = linear(p.wq, xn);
        keys.push(linear(p.wk, xn));
        values.push(linear(p.wv, xn));
        let mut att = [0.0; E];
        for h in 0..H {
            let mut scores = vec![0.0; keys.len()];
            let mut m = f64::NEG_INFINITY;
            for t in 0..keys.len() {
                let mut s = 0.0;
                for j in 0..HD {
                    s += q[h * HD + j] * keys[t][h * HD + j];
                }
                scores[t] = s / (HD as f64).sqrt();
                m = m.max(scores[t].detach());
            }
            let mut z = 0.0;
            for t in 0..keys.len() {
                scores[t] = (scores[t] - m).exp();
                z += scores[t];
            }
            for t in 0..values.len() {
                for j in 0..HD {
                    att[h * HD + j] += scores[t] / z * values[t][h * HD + j];
                }
            }
        }
        let x = add(x, linear(p.wo, att));
        let mut hidden = linear(p.fc1, rmsnorm(x));
        for i in 0..F {
            hidden[i] = hidden[i].max(0.0);
        }
        let x = add(x, linear(p.fc2, hidden));
        total += nll(linear(p.head, x), tokens[pos + 1]);
    }
    total / n as f64
}

/// A deterministic generator for the weights (std 0.08-ish, like the reference's).
fn lcg(s: &mut u64) -> f64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.16
}

/// The weights.
fn start() -> Gpt {
    let mut s = 42u64;
    let mut p = Gpt {
        wte: [[0.0; E]; V],
        wpe: [[0.0; E]; B],
        wq: [[0.0; E]; E],
        wk: [[0.0; E]; E],
        wv: [[0.0; E]; E],
        wo: [[0.0; E]; E],
        fc1: [[0.0; E]; F],
        fc2: [[0.0; F]; E],
        head: [[0.0; E]; V],
    };
    p.visit_mut(&mut |v| *v = lcg(&mut s));
    p
}

/// "emma" between boundary tokens, and more.
const TOKENS: [usize; 8] = [26, 4, 12, 12, 0, 26, 3, 1];

fn gpt_shaped(c: &mut Criterion) {
    let p = start();
    let vars = p.variables().expect("finite weights");
    let out = loss_graph(&vars, &TOKENS).expect("a finite loss");
    out.backward().expect("a finite gradient");
    let want = p.gradient_of(&vars).to_flat();
    let (value, got) = loss_grad(&p, &TOKENS).expect("a finite loss");
    assert_eq!(value.to_bits(), out.value().to_bits(), "the value");
    assert_eq!(
        value.to_bits(),
        loss(&p, &TOKENS).to_bits(),
        "the plain value"
    );
    let got = got.to_flat();
    assert_eq!(got.len(), 4192);
    for (k, (a, b)) in want.iter().zip(&got).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "gradient {k}: {a} against {b}");
    }
    // The natural form: the same bits.
    let (natural, natural_gradient) = loss_natural_grad(&p, &TOKENS).expect("a finite loss");
    assert_eq!(
        natural.to_bits(),
        value.to_bits(),
        "the natural form's value"
    );
    for (k, (a, b)) in got.iter().zip(natural_gradient.to_flat()).enumerate() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "natural gradient {k}: {a} against {b}"
        );
    }
    let before = scalar_autodiff::__private::traces();
    let _ = loss_grad(&p, &TOKENS);
    let _ = loss_natural_grad(&p, &TOKENS);
    let traces = scalar_autodiff::__private::traces() - before;
    println!("gpt_shaped: warm calls of both forms start {traces} traces");
    assert_eq!(traces, 0, "both forms run compiled");
    let mut group = c.benchmark_group("gpt_shaped");
    group.bench_function("plain", |b| {
        b.iter(|| loss(black_box(&p), black_box(&TOKENS)))
    });
    group.bench_function("grad", |b| {
        b.iter(|| loss_grad(black_box(&p), black_box(&TOKENS)))
    });
    group.bench_function("grad_natural", |b| {
        b.iter(|| loss_natural_grad(black_box(&p), black_box(&TOKENS)))
    });
    group.finish();
}

criterion_group!(benches, gpt_shaped);
criterion_main!(benches);
