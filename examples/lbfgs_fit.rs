//! Fits a logistic growth curve `y = K / (1 + exp(-r (t - t0)))` to 31 daily counts with
//! argmin's L-BFGS, on the exact gradient `#[differentiable]` writes, printing every
//! iteration.
//!
//! The counts are the curve itself at K = 1000, r = 0.35, t0 = 14 (rounded to whole
//! counts it would still be a fine fit, but then the minimum is not known to the last
//! digit), so the fit must find those three numbers from the start (600, 0.2, 10). The
//! data is captured by the closures handed to `scalar_autodiff::argmin::Problem`; the
//! model is ordinary Rust.
//!
//! Run with `cargo run --release --features argmin --example lbfgs_fit`.

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{Error, Executor, State, TerminationStatus, KV};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use scalar_autodiff::argmin::Problem;
use scalar_autodiff::differentiable;

/// The curve the data comes from: capacity `K`, rate `r`, midpoint `t0`.
pub const TRUTH: [f64; 3] = [1000.0, 0.35, 14.0];
/// Where the fit starts.
pub const START: [f64; 3] = [600.0, 0.2, 10.0];

/// The logistic curve at time `t`.
pub fn logistic([k, r, t0]: [f64; 3], t: f64) -> f64 {
    k / (1.0 + (-r * (t - t0)).exp())
}

/// Days 0 to 30 and the counts on them.
pub fn data() -> (Vec<f64>, Vec<f64>) {
    let days: Vec<f64> = (0..=30).map(f64::from).collect();
    let counts = days.iter().map(|&t| logistic(TRUTH, t)).collect();
    (days, counts)
}

/// Mean squared error of the curve with parameters `w = [K, r, t0]`, in units of the
/// capacity (divided by 1000^2), so the loss starts near 1 rather than near 10^5.
#[differentiable]
pub fn loss(#[param] w: &[f64], days: &[f64], counts: &[f64]) -> f64 {
    let mut total = 0.0;
    for (t, y) in days.iter().zip(counts) {
        let fit = w[0] / (1.0 + (-w[1] * (t - w[2])).exp());
        total += (fit - y) * (fit - y);
    }
    total / (days.len() as f64 * 1.0e6)
}

/// Prints one line per L-BFGS iteration.
struct Printer;

impl<I> Observe<I> for Printer
where
    I: State<Param = Vec<f64>, Float = f64>,
{
    fn observe_iter(&mut self, state: &I, _kv: &KV) -> Result<(), Error> {
        if let Some(w) = state.get_param() {
            println!(
                "iteration {:>2}: loss {:.3e}  K {:>10.4}  r {:.6}  t0 {:.5}",
                state.get_iter(),
                state.get_cost(),
                w[0],
                w[1],
                w[2]
            );
        }
        Ok(())
    }
}

/// The fitted parameters, the final loss and the number of iterations.
pub fn fit(print: bool) -> Result<([f64; 3], f64, u64), Error> {
    let (days, counts) = data();
    let problem = Problem::new(
        |w: &Vec<f64>| loss(w, &days, &counts),
        |w: &Vec<f64>| loss_grad(w, &days, &counts),
    );
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-14)?
        .with_tolerance_cost(0.0)?;
    let mut executor = Executor::new(problem, solver)
        .configure(|state| state.param(START.to_vec()).max_iters(200));
    if print {
        executor = executor.add_observer(Printer, ObserverMode::Always);
    }
    let result = executor.run()?;
    let state = result.state();
    if let TerminationStatus::Terminated(reason) = state.get_termination_status() {
        if print {
            println!("stopped: {reason}");
        }
    }
    let best = state
        .get_best_param()
        .ok_or_else(|| Error::msg("L-BFGS returned no parameters"))?;
    Ok((
        [best[0], best[1], best[2]],
        state.get_best_cost(),
        state.get_iter(),
    ))
}

fn main() -> Result<(), Error> {
    let (w, cost, iterations) = fit(true)?;
    println!(
        "fitted after {iterations} iterations: K = {:.9}, r = {:.12}, t0 = {:.10} (loss {cost:.3e}); the data came from K = 1000, r = 0.35, t0 = 14",
        w[0], w[1], w[2]
    );
    Ok(())
}
