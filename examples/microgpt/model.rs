//! The model of Karpathy's microgpt, written as a reader of his blog post would write it:
//! the parameters as one `#[derive(Parameters)]` struct, the layers as small
//! `#[differentiable]` helpers, the loss over one name as one `#[differentiable]` function
//! with a KV cache grown position by position. `loss_grad` is its exact gradient, compiled.

// The bodies index their arrays as the formulas do.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::{differentiable, Parameters};

use super::pyrandom::PyRandom;

/// The vocabulary: the 26 letters (ids 0-25) and BOS (26), which starts and ends a name.
pub const VOCAB: usize = 27;
/// The boundary token.
pub const BOS: usize = 26;
/// The embedding width.
pub const EMBED: usize = 16;
/// The longest sequence (positions 0-15).
pub const BLOCK: usize = 16;
/// Attention heads.
pub const HEADS: usize = 4;
/// Each head's width.
pub const HEAD: usize = EMBED / HEADS;
/// The MLP's hidden width.
pub const HIDDEN: usize = 4 * EMBED;

/// The 4,192 parameters, in the reference's order (its `state_dict`): embeddings, the
/// output head, then the layer's attention and MLP. No biases, no norm gains.
#[derive(Parameters, Clone, Debug)]
pub struct Gpt {
    /// Token embeddings, one row per token.
    pub wte: [[f64; EMBED]; VOCAB],
    /// Position embeddings, one row per position.
    pub wpe: [[f64; EMBED]; BLOCK],
    /// The output head: one row of logit weights per token.
    pub lm_head: [[f64; EMBED]; VOCAB],
    /// Queries.
    pub wq: [[f64; EMBED]; EMBED],
    /// Keys.
    pub wk: [[f64; EMBED]; EMBED],
    /// Values.
    pub wv: [[f64; EMBED]; EMBED],
    /// The attention's output projection.
    pub wo: [[f64; EMBED]; EMBED],
    /// The MLP's first layer, 16 to 64.
    pub fc1: [[f64; EMBED]; HIDDEN],
    /// The MLP's second layer, 64 to 16.
    pub fc2: [[f64; HIDDEN]; EMBED],
}

impl Gpt {
    /// Every weight drawn from `random.gauss(0, 0.08)`, matrix by matrix and row by row in
    /// the reference's order (which is the struct's field order).
    pub fn init(rng: &mut PyRandom) -> Gpt {
        let mut p = Gpt {
            wte: [[0.0; EMBED]; VOCAB],
            wpe: [[0.0; EMBED]; BLOCK],
            lm_head: [[0.0; EMBED]; VOCAB],
            wq: [[0.0; EMBED]; EMBED],
            wk: [[0.0; EMBED]; EMBED],
            wv: [[0.0; EMBED]; EMBED],
            wo: [[0.0; EMBED]; EMBED],
            fc1: [[0.0; EMBED]; HIDDEN],
            fc2: [[0.0; HIDDEN]; EMBED],
        };
        p.visit_mut(&mut |w| *w = rng.gauss(0.0, 0.08));
        p
    }
}

/// `w x`: one linear layer without bias, at any shape.
#[differentiable]
pub fn linear<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut y = [0.0; O];
    for o in 0..O {
        y[o] = w[o].iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    }
    y
}

/// `a + b`, element by element.
#[differentiable]
pub fn add<const N: usize>(a: [f64; N], b: [f64; N]) -> [f64; N] {
    let mut y = [0.0; N];
    for i in 0..N {
        y[i] = a[i] + b[i];
    }
    y
}

/// RMSNorm without a gain: `x / sqrt(mean(x²) + 1e-5)`.
#[differentiable]
pub fn rmsnorm<const N: usize>(x: [f64; N]) -> [f64; N] {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / N as f64;
    let scale = (ms + 1e-5).powf(-0.5);
    let mut y = [0.0; N];
    for i in 0..N {
        y[i] = x[i] * scale;
    }
    y
}

/// Causal self-attention of one position: each head's scores against every cached key,
/// scaled by `1/sqrt(head width)`, a softmax (its maximum subtracted as a constant), and
/// the weighted sum of the cached values.
#[differentiable]
pub fn attend(
    q: [f64; EMBED],
    #[param] keys: &[[f64; EMBED]],
    #[param] values: &[[f64; EMBED]],
) -> [f64; EMBED] {
    let mut out = [0.0; EMBED];
    for h in 0..HEADS {
        let hs = h * HEAD;
        let mut scores = vec![0.0; keys.len()];
        let mut max = f64::NEG_INFINITY;
        for t in 0..keys.len() {
            let mut s = 0.0;
            for j in 0..HEAD {
                s += q[hs + j] * keys[t][hs + j];
            }
            scores[t] = s / (HEAD as f64).sqrt();
            max = max.max(scores[t].detach());
        }
        let mut total = 0.0;
        for t in 0..keys.len() {
            scores[t] = (scores[t] - max).exp();
            total += scores[t];
        }
        for j in 0..HEAD {
            let mut sum = 0.0;
            for t in 0..values.len() {
                sum += scores[t] / total * values[t][hs + j];
            }
            out[hs + j] = sum;
        }
    }
    out
}

/// The rest of the layer after the attention's heads: the output projection and its
/// residual, then the MLP (norm, 16 to 64, ReLU, 64 to 16) and its residual.
#[differentiable]
pub fn mlp_block(#[param] p: &Gpt, x: [f64; EMBED], heads: [f64; EMBED]) -> [f64; EMBED] {
    let x = add(x, linear(p.wo, heads));
    let mut h = linear(p.fc1, rmsnorm(x));
    for i in 0..HIDDEN {
        h[i] = h[i].max(0.0);
    }
    add(x, linear(p.fc2, h))
}

/// `-ln softmax(logits)[target]`, the maximum subtracted as a constant.
#[differentiable]
pub fn nll(logits: [f64; VOCAB], target: usize) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for i in 0..VOCAB {
        max = max.max(logits[i].detach());
    }
    let mut total = 0.0;
    for i in 0..VOCAB {
        total += (logits[i] - max).exp();
    }
    -((logits[target] - max).exp() / total).ln()
}

/// The mean over positions of `-ln p(next token)`, for `tokens` = BOS, a name's letters,
/// BOS (at most [`BLOCK`] + 1 of them): the model runs position by position, each
/// position's key and value appended to the cache its attention reads. With `tie`, the
/// logits are scored by the token embeddings `wte` themselves (weight tying: one matrix
/// both looks tokens up and scores them) and `lm_head` is not used.
#[differentiable]
pub fn loss(#[param] p: &Gpt, tokens: &[usize], tie: bool) -> f64 {
    let n = tokens.len() - 1;
    let mut keys: Vec<[f64; EMBED]> = Vec::new();
    let mut values: Vec<[f64; EMBED]> = Vec::new();
    let mut total = 0.0;
    for pos in 0..n {
        let x = rmsnorm(add(p.wte[tokens[pos]], p.wpe[pos]));
        let xn = rmsnorm(x);
        keys.push(linear(p.wk, xn));
        values.push(linear(p.wv, xn));
        let heads = attend(linear(p.wq, xn), &keys, &values);
        let x = mlp_block(p, x, heads);
        if tie {
            total += nll(linear(p.wte, x), tokens[pos + 1]);
        } else {
            total += nll(linear(p.lm_head, x), tokens[pos + 1]);
        }
    }
    total / n as f64
}

/// The model run forward on plain numbers for sampling: `token` at `pos`, its key and
/// value appended to the caches, the next token's logits returned (the same helpers the
/// loss calls, as plain functions).
pub fn next_logits(
    p: &Gpt,
    token: usize,
    pos: usize,
    keys: &mut Vec<[f64; EMBED]>,
    values: &mut Vec<[f64; EMBED]>,
    tie: bool,
) -> [f64; VOCAB] {
    let x = rmsnorm(add(p.wte[token], p.wpe[pos]));
    let xn = rmsnorm(x);
    keys.push(linear(p.wk, xn));
    values.push(linear(p.wv, xn));
    let heads = attend(linear(p.wq, xn), keys, values);
    let x = mlp_block(p, x, heads);
    match tie {
        true => linear(p.wte, x),
        false => linear(p.lm_head, x),
    }
}

/// One name drawn from the model at `temperature`: from BOS until BOS or [`BLOCK`]
/// tokens, each token `random.choices` of the softmax of the logits over the temperature.
pub fn sample(p: &Gpt, rng: &mut PyRandom, temperature: f64, tie: bool) -> String {
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    let mut token = BOS;
    let mut name = String::new();
    for pos in 0..BLOCK {
        let logits = next_logits(p, token, pos, &mut keys, &mut values, tie);
        let scaled = logits.map(|l| l / temperature);
        let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps = scaled.map(|l| (l - max).exp());
        let total: f64 = exps.iter().sum();
        let probs = exps.map(|e| e / total);
        token = rng.choice(&probs);
        if token == BOS {
            break;
        }
        name.push(char::from(b'a' + token as u8));
    }
    name
}

/// A name as tokens: BOS, its letters (`a` is 0), BOS; cut to [`BLOCK`] + 1 tokens (the
/// last position predicts the last token kept). `None` if a character is not `a`-`z`.
pub fn tokens(name: &str) -> Option<Vec<usize>> {
    let mut tokens = vec![BOS];
    for c in name.bytes() {
        if !c.is_ascii_lowercase() {
            return None;
        }
        tokens.push(usize::from(c - b'a'));
    }
    tokens.push(BOS);
    tokens.truncate(BLOCK + 1);
    Some(tokens)
}
