//! `gmm`: the negative log-likelihood of `n` points under a mixture of `k` Gaussians in
//! `d` dimensions, with a Wishart prior on the precisions; and its gradient. Each
//! component's precision is `Q Qᵀ` with `Q` lower triangular: its diagonal `exp(q)`, its
//! strictly lower part `l` (column by column), so that every parameter is free.

use scalar_autodiff::{differentiable, Parameters};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{dispatch, rows, shaped, timed};
use crate::protocol::{measure, Evaluated, Runs, ToolError};

/// The parameters, flat in row-major order: weights `alpha` (`k`), means `mu` (`k` by
/// `d`), log-diagonals `q` (`k` by `d`), and the strictly lower triangles `l` (`k` by
/// `d(d-1)/2`).
#[derive(Parameters, Clone, Debug, PartialEq)]
pub struct Gmm {
    /// The components' weights, before a softmax.
    pub alpha: Vec<f64>,
    /// The means.
    pub mu: Vec<f64>,
    /// The logarithms of `Q`'s diagonals.
    pub q: Vec<f64>,
    /// `Q`'s strictly lower triangles.
    pub l: Vec<f64>,
}

/// `log Γ_p(a)`, the multivariate log-gamma function (data: the prior's constant).
fn log_gamma_distrib(a: f64, p: usize) -> f64 {
    let mut out = 0.25 * p as f64 * (p as f64 - 1.0) * std::f64::consts::PI.ln();
    for j in 1..=p {
        out += libm::lgamma(a + 0.5 * (1.0 - j as f64));
    }
    out
}

/// The objective, as the C++ reference computes it: for each point and component the
/// centred point times `Q`, its squared norm, a log-sum-exp over components around their
/// largest term; then the weights' log-sum-exp and the Wishart prior (`gamma`, `m`).
#[allow(clippy::too_many_arguments)]
#[differentiable]
pub fn objective(
    #[param] p: &Gmm,
    x: &[f64],
    d: usize,
    k: usize,
    #[constant] gamma: f64,
    m: usize,
) -> f64 {
    let n = x.len() / d;
    let l_size = d * (d - 1) / 2;
    let constant = -((n * d) as f64) * 0.5 * (2.0 * std::f64::consts::PI).ln();
    let mut q_diagonals = vec![0.0; k * d];
    for i in 0..k * d {
        q_diagonals[i] = p.q[i].exp();
    }
    let mut sum_qs = vec![0.0; k];
    for i in 0..k {
        for j in 0..d {
            sum_qs[i] += p.q[i * d + j];
        }
    }
    let mut centred = vec![0.0; d];
    let mut q_centred = vec![0.0; d];
    let mut main_term = vec![0.0; k];
    let mut slse = 0.0;
    for ix in 0..n {
        for ik in 0..k {
            for id in 0..d {
                centred[id] = x[ix * d + id] - p.mu[ik * d + id];
            }
            for id in 0..d {
                q_centred[id] = q_diagonals[ik * d + id] * centred[id];
            }
            // `l` holds Q's strictly lower part column by column: (j, i) for i < j.
            for i in 0..d {
                for j in i + 1..d {
                    let at = ik * l_size + i * d - i * (i + 1) / 2 + (j - i - 1);
                    q_centred[j] += p.l[at] * centred[i];
                }
            }
            let mut norm = q_centred[0] * q_centred[0];
            for id in 1..d {
                norm += q_centred[id] * q_centred[id];
            }
            main_term[ik] = p.alpha[ik] + sum_qs[ik] - 0.5 * norm;
        }
        // (The largest term is detached, as in `lse`: the value does not depend on it.)
        let mut largest = main_term[0].detach();
        for ik in 1..k {
            largest = largest.max(main_term[ik].detach());
        }
        let mut sum = 0.0;
        for ik in 0..k {
            sum += (main_term[ik] - largest).exp();
        }
        slse += sum.ln() + largest;
    }
    let mut largest = p.alpha[0].detach();
    for ik in 1..k {
        largest = largest.max(p.alpha[ik].detach());
    }
    let mut sum = 0.0;
    for ik in 0..k {
        sum += (p.alpha[ik] - largest).exp();
    }
    let lse_alpha = sum.ln() + largest;
    let err = constant + slse - n as f64 * lse_alpha;
    // The Wishart prior.
    let wn = d + m + 1;
    let c =
        (wn * d) as f64 * (gamma.ln() - 0.5 * 2f64.ln()) - log_gamma_distrib(0.5 * wn as f64, d);
    let mut out = 0.0;
    for ik in 0..k {
        let mut frobenius = q_diagonals[ik * d] * q_diagonals[ik * d];
        for id in 1..d {
            frobenius += q_diagonals[ik * d + id] * q_diagonals[ik * d + id];
        }
        if l_size > 0 {
            let mut lower = p.l[ik * l_size] * p.l[ik * l_size];
            for i in 1..l_size {
                lower += p.l[ik * l_size + i] * p.l[ik * l_size + i];
            }
            frobenius += lower;
        }
        out += 0.5 * gamma * gamma * frobenius - m as f64 * sum_qs[ik];
    }
    err + (-out + k as f64 * c)
}

#[derive(Deserialize)]
struct Input {
    d: usize,
    k: usize,
    n: usize,
    x: Vec<Vec<f64>>,
    m: usize,
    gamma: f64,
    alpha: Vec<f64>,
    mu: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    l: Vec<Vec<f64>>,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `objective` or `jacobian`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["objective", "jacobian"],
        input,
        |input: Input| {
            let Input {
                d,
                k,
                n,
                x,
                m,
                gamma,
                alpha,
                mu,
                q,
                l,
                runs,
            } = input;
            let l_size = d * d.saturating_sub(1) / 2;
            if d == 0
                || k == 0
                || n == 0
                || alpha.len() != k
                || !shaped(&x, n, d)
                || !shaped(&mu, k, d)
                || !shaped(&q, k, d)
                || !shaped(&l, k, l_size)
            {
                return Err(ToolError::Input(format!(
                    "a mixture of {k} components in {d} dimensions over {n} points, shaped so"
                )));
            }
            let p = Gmm {
                alpha,
                mu: mu.concat(),
                q: q.concat(),
                l: l.concat(),
            };
            let x = x.concat();
            match function {
                "objective" => timed(runs, || Ok(objective(&p, &x, d, k, gamma, m))),
                // (The rows are made after the runs: the timings are the computation's.)
                _ => {
                    let (gradient, timings) =
                        measure(runs, || Ok(objective_grad(&p, &x, d, k, gamma, m)?.1))?;
                    let output = json!({
                        "alpha": gradient.alpha,
                        "mu": rows(&gradient.mu, d),
                        "q": rows(&gradient.q, d),
                        "l": rows(&gradient.l, l_size),
                    });
                    Ok(Evaluated { output, timings })
                }
            }
        },
    )
}
