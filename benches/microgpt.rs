//! Karpathy's microgpt (`examples/microgpt/`) timed on one name: the plain loss
//! (`plain`), `loss_grad` (`grad`), the same gradient by a reverse sweep written by hand
//! (`hand`: a forward sweep keeping what it needs, then the reverse, plain `f64`: the
//! floor), a whole training step (`step`: `loss_grad` and `Adam::step`), and Adam alone
//! (`adam`) beside the same update written as a plain loop over the 4,192 numbers
//! (`adam_loop`). Before timing, the hand-written gradient is checked against `loss_grad`
//! (to 1e-12: the two add in different orders) and `loss_grad` against `loss_graph` +
//! `backward` bit for bit. With the `rayon` feature, `microgpt_batch16` times a step over
//! 16 names (the mean loss, `parallel::batch_grad` over two chunks) on one and two threads.
//!
//! Run with `cargo bench --bench microgpt` (`--features rayon` for the batch).

// The sweeps index their arrays as the formulas do.
#![allow(clippy::needless_range_loop)]

#[allow(dead_code)]
#[path = "../examples/microgpt/main.rs"]
mod microgpt;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use microgpt::model::{
    loss, loss_grad, loss_graph, tokens, Gpt, BLOCK, EMBED, HEAD, HEADS, HIDDEN, VOCAB,
};
use microgpt::{adam, start, train_step, NAMES};
use scalar_autodiff::Parameters;

/// `y = w x`.
fn matvec<const I: usize, const O: usize>(w: &[[f64; I]; O], x: &[f64; I]) -> [f64; O] {
    std::array::from_fn(|o| w[o].iter().zip(x).map(|(a, b)| a * b).sum())
}

/// `dx += wᵀ dy` and `dw += dy xᵀ`, the reverse of [`matvec`].
fn matvec_back<const I: usize, const O: usize>(
    w: &[[f64; I]; O],
    x: &[f64; I],
    dy: &[f64; O],
    dw: &mut [[f64; I]; O],
    dx: &mut [f64; I],
) {
    for o in 0..O {
        for i in 0..I {
            dw[o][i] += dy[o] * x[i];
            dx[i] += w[o][i] * dy[o];
        }
    }
}

/// RMSNorm and its scale `s = (mean(x²) + 1e-5)^-1/2`.
fn rmsnorm(x: &[f64; EMBED]) -> ([f64; EMBED], f64) {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / EMBED as f64;
    let s = (ms + 1e-5).powf(-0.5);
    (x.map(|v| v * s), s)
}

/// `dx += s dy − (s³/N) x (x · dy)`, the reverse of [`rmsnorm`].
fn rmsnorm_back(x: &[f64; EMBED], s: f64, dy: &[f64; EMBED], dx: &mut [f64; EMBED]) {
    let dot: f64 = x.iter().zip(dy).map(|(a, b)| a * b).sum();
    let c = s * s * s / EMBED as f64 * dot;
    for i in 0..EMBED {
        dx[i] += s * dy[i] - c * x[i];
    }
}

/// What one position's forward keeps for the reverse.
#[derive(Clone, Copy)]
struct Kept {
    e: [f64; EMBED],
    s0: f64,
    x0: [f64; EMBED],
    s1: f64,
    xn: [f64; EMBED],
    q: [f64; EMBED],
    /// Each head's attention weights over positions 0..=pos.
    a: [[f64; BLOCK]; HEADS],
    att: [f64; EMBED],
    x1: [f64; EMBED],
    s2: f64,
    xm: [f64; EMBED],
    hidden: [f64; HIDDEN],
    x2: [f64; EMBED],
    probs: [f64; VOCAB],
}

/// The loss and its gradient by hand: the forward sweep keeps each position's
/// activations, the reverse walks the positions backwards (a later position's attention
/// adds into earlier keys' and values' adjoints before their own reverse).
fn hand(p: &Gpt, tokens: &[usize], g: &mut Gpt) -> f64 {
    g.visit_mut(&mut |v| *v = 0.0);
    let n = tokens.len() - 1;
    let zero = [0.0; EMBED];
    let (mut keys, mut values) = ([zero; BLOCK], [zero; BLOCK]);
    let mut kept = [Kept {
        e: zero,
        s0: 0.0,
        x0: zero,
        s1: 0.0,
        xn: zero,
        q: zero,
        a: [[0.0; BLOCK]; HEADS],
        att: zero,
        x1: zero,
        s2: 0.0,
        xm: zero,
        hidden: [0.0; HIDDEN],
        x2: zero,
        probs: [0.0; VOCAB],
    }; BLOCK];
    let mut total = 0.0;
    for pos in 0..n {
        let k = &mut kept[pos];
        k.e = std::array::from_fn(|i| p.wte[tokens[pos]][i] + p.wpe[pos][i]);
        (k.x0, k.s0) = rmsnorm(&k.e);
        (k.xn, k.s1) = rmsnorm(&k.x0);
        k.q = matvec(&p.wq, &k.xn);
        keys[pos] = matvec(&p.wk, &k.xn);
        values[pos] = matvec(&p.wv, &k.xn);
        for h in 0..HEADS {
            let hs = h * HEAD;
            let mut max = f64::NEG_INFINITY;
            for t in 0..=pos {
                let s: f64 = (0..HEAD).map(|j| k.q[hs + j] * keys[t][hs + j]).sum();
                k.a[h][t] = s / (HEAD as f64).sqrt();
                max = max.max(k.a[h][t]);
            }
            let mut z = 0.0;
            for t in 0..=pos {
                k.a[h][t] = (k.a[h][t] - max).exp();
                z += k.a[h][t];
            }
            for t in 0..=pos {
                k.a[h][t] /= z;
            }
            for j in 0..HEAD {
                k.att[hs + j] = (0..=pos).map(|t| k.a[h][t] * values[t][hs + j]).sum();
            }
        }
        let o = matvec(&p.wo, &k.att);
        k.x1 = std::array::from_fn(|i| k.x0[i] + o[i]);
        (k.xm, k.s2) = rmsnorm(&k.x1);
        k.hidden = matvec(&p.fc1, &k.xm).map(|v| v.max(0.0));
        let m = matvec(&p.fc2, &k.hidden);
        k.x2 = std::array::from_fn(|i| k.x1[i] + m[i]);
        let logits = matvec(&p.lm_head, &k.x2);
        let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps = logits.map(|l| (l - max).exp());
        let z: f64 = exps.iter().sum();
        k.probs = exps.map(|e| e / z);
        total -= k.probs[tokens[pos + 1]].ln();
    }
    let (mut dkeys, mut dvalues) = ([zero; BLOCK], [zero; BLOCK]);
    for pos in (0..n).rev() {
        let k = &kept[pos];
        // -ln softmax: (p - onehot) / n.
        let mut dlogits = k.probs.map(|v| v / n as f64);
        dlogits[tokens[pos + 1]] -= 1.0 / n as f64;
        let mut dx2 = zero;
        matvec_back(&p.lm_head, &k.x2, &dlogits, &mut g.lm_head, &mut dx2);
        let mut dhidden = [0.0; HIDDEN];
        matvec_back(&p.fc2, &k.hidden, &dx2, &mut g.fc2, &mut dhidden);
        for i in 0..HIDDEN {
            if k.hidden[i] <= 0.0 {
                dhidden[i] = 0.0;
            }
        }
        let mut dxm = zero;
        matvec_back(&p.fc1, &k.xm, &dhidden, &mut g.fc1, &mut dxm);
        let mut dx1 = dx2;
        rmsnorm_back(&k.x1, k.s2, &dxm, &mut dx1);
        let mut datt = zero;
        matvec_back(&p.wo, &k.att, &dx1, &mut g.wo, &mut datt);
        let mut dq = zero;
        for h in 0..HEADS {
            let hs = h * HEAD;
            let mut da = [0.0; BLOCK];
            let mut weighted = 0.0;
            for t in 0..=pos {
                for j in 0..HEAD {
                    dvalues[t][hs + j] += k.a[h][t] * datt[hs + j];
                    da[t] += datt[hs + j] * values[t][hs + j];
                }
                weighted += k.a[h][t] * da[t];
            }
            for t in 0..=pos {
                let ds = k.a[h][t] * (da[t] - weighted) / (HEAD as f64).sqrt();
                for j in 0..HEAD {
                    dq[hs + j] += ds * keys[t][hs + j];
                    dkeys[t][hs + j] += ds * k.q[hs + j];
                }
            }
        }
        let mut dxn = zero;
        matvec_back(&p.wq, &k.xn, &dq, &mut g.wq, &mut dxn);
        matvec_back(&p.wk, &k.xn, &dkeys[pos], &mut g.wk, &mut dxn);
        matvec_back(&p.wv, &k.xn, &dvalues[pos], &mut g.wv, &mut dxn);
        let mut dx0 = dx1;
        rmsnorm_back(&k.x0, k.s1, &dxn, &mut dx0);
        let mut de = zero;
        rmsnorm_back(&k.e, k.s0, &dx0, &mut de);
        for i in 0..EMBED {
            g.wte[tokens[pos]][i] += de[i];
            g.wpe[pos][i] += de[i];
        }
    }
    total / n as f64
}

/// The same Adam update as `Adam::step` (PyTorch's: the first moment a fused `lerp`, the
/// second a fused multiply-add, the bias corrections as scalars) written as a plain loop
/// over flat numbers, without `Adam::step`'s copies in and out and finiteness checks.
struct PlainAdam {
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl PlainAdam {
    fn step(&mut self, theta: &mut [f64], g: &[f64], lr: f64) {
        let (beta1, beta2, eps) = (0.85f64, 0.99f64, 1e-8);
        self.t += 1;
        let step_size = lr / (1.0 - beta1.powf(f64::from(self.t)));
        let bc2_sqrt = (1.0 - beta2.powf(f64::from(self.t))).sqrt();
        for i in 0..theta.len() {
            let m = (1.0 - beta1).mul_add(g[i] - self.m[i], self.m[i]);
            let v = ((1.0 - beta2) * g[i]).mul_add(g[i], self.v[i] * beta2);
            theta[i] += (-step_size * m) / (v.sqrt() / bc2_sqrt + eps);
            (self.m[i], self.v[i]) = (m, v);
        }
    }
}

fn microgpt(c: &mut Criterion) {
    let (_, docs, p) = start(NAMES);
    // A seven-position name (the mean name has 6.1 letters, 7.1 positions).
    let name = "olivia";
    let tokens = tokens(name).expect("letters");
    // Checks: the graph's bits, then the hand-written sweep to rounding.
    let (value, gradient) = loss_grad(&p, &tokens, false).expect("a finite loss");
    let vars = p.variables().expect("finite weights");
    let out = loss_graph(&vars, &tokens, false).expect("a finite loss");
    out.backward().expect("a finite gradient");
    assert_eq!(value.to_bits(), out.value().to_bits(), "the graph's value");
    let graph = p.gradient_of(&vars).to_flat();
    assert!(graph
        .iter()
        .zip(gradient.to_flat())
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let mut by_hand = p.clone();
    let hand_value = hand(&p, &tokens, &mut by_hand);
    assert!(
        (hand_value - value).abs() <= 1e-14 * value.abs(),
        "{hand_value} against {value}"
    );
    for (k, (a, b)) in by_hand.to_flat().iter().zip(gradient.to_flat()).enumerate() {
        assert!(
            (a - b).abs() <= 1e-12 * (1e-3 + b.abs()),
            "entry {k}: {a} by hand, {b}"
        );
    }

    let mut group = c.benchmark_group("microgpt");
    group.bench_function("plain", |b| {
        b.iter(|| loss(black_box(&p), black_box(&tokens), false))
    });
    group.bench_function("grad", |b| {
        b.iter(|| loss_grad(black_box(&p), black_box(&tokens), false))
    });
    let mut scratch = p.clone();
    group.bench_function("hand", |b| {
        b.iter(|| hand(black_box(&p), black_box(&tokens), &mut scratch))
    });
    // Whole training steps over the reference's names, from its start.
    let (mut q, mut optimizer, mut step) = (p.clone(), adam(), 0usize);
    group.bench_function("step", |b| {
        b.iter(|| {
            let name = docs[step % docs.len()];
            let loss = train_step(&mut q, &mut optimizer, name, (step % 1000, 1000), false);
            step += 1;
            loss
        })
    });
    let flat_gradient = gradient.to_flat();
    let (mut q, mut optimizer) = (p.clone(), adam());
    group.bench_function("adam", |b| {
        b.iter(|| optimizer.step(&mut q, black_box(&flat_gradient)))
    });
    let mut theta = p.to_flat();
    let mut plain = PlainAdam {
        m: vec![0.0; theta.len()],
        v: vec![0.0; theta.len()],
        t: 0,
    };
    group.bench_function("adam_loop", |b| {
        b.iter(|| plain.step(&mut theta, black_box(&flat_gradient), 0.01))
    });
    group.finish();
}

/// A batched step: the mean loss over `B` = 16 names, its gradient summed over chunks of
/// names on rayon's pool (`parallel::batch_grad`: the same bits on any number of threads),
/// then one Adam step; timed on a pool of one thread and of two.
#[cfg(feature = "rayon")]
fn batched(c: &mut Criterion) {
    use scalar_autodiff::parallel::{self, rayon};
    const BATCH: usize = 16;
    let (_, docs, p) = start(NAMES);
    let names: Vec<Vec<usize>> = docs[..BATCH]
        .iter()
        .map(|name| tokens(name).expect("letters"))
        .collect();
    // The chunk's summed loss and gradient, name by name.
    let chunk_grad = |p: &Gpt, chunk: &[Vec<usize>]| {
        let (mut total, mut sum) = loss_grad(p, &chunk[0], false)?;
        for tokens in &chunk[1..] {
            let (loss, gradient) = loss_grad(p, tokens, false)?;
            total += loss;
            sum.zip_mut(&gradient, |s, g| *s += g)?;
        }
        Ok((total, sum))
    };
    let step = |p: &mut Gpt, optimizer: &mut scalar_autodiff::Adam| {
        let (total, mut gradient) =
            parallel::batch_grad(&names, BATCH / 2, |chunk| chunk_grad(p, chunk))?;
        gradient.visit_mut(&mut |g| *g /= BATCH as f64);
        optimizer.step(p, &gradient)?;
        Ok::<f64, scalar_autodiff::ScalarAutodiffError>(total / BATCH as f64)
    };
    let mut group = c.benchmark_group("microgpt_batch16");
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool");
        let (mut q, mut optimizer) = (p.clone(), adam());
        group.bench_function(format!("step_{threads}_threads"), |b| {
            b.iter(|| pool.install(|| step(&mut q, &mut optimizer)))
        });
    }
    group.finish();
}

#[cfg(feature = "rayon")]
criterion_group!(benches, microgpt, batched);
#[cfg(not(feature = "rayon"))]
criterion_group!(benches, microgpt);
criterion_main!(benches);
