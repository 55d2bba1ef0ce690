//! Fits a line `y = w x + b` to 200 generated points by plain gradient descent on the
//! gradient `#[differentiable]` writes, printing the loss as it falls.
//!
//! Run with `cargo run --release --example linear_regression`.

use scalar_autodiff::{differentiable, ScalarAutodiffError};

/// The slope the points are generated with.
pub const TRUE_W: f64 = 2.5;
/// The intercept the points are generated with.
pub const TRUE_B: f64 = -1.0;

/// Mean squared error of the line `w x + b` over the points `(xs[i], ys[i])`.
///
/// `w` and `b` are differentiated; the data slices are passed through untouched.
#[differentiable]
pub fn loss(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let err = w * x + b - y;
        total += err * err;
    }
    total / xs.len() as f64
}

/// 200 points on the line, `x` evenly spread over `[-1, 1)`: no randomness, so every run
/// (and the test) sees the same data.
pub fn points() -> (Vec<f64>, Vec<f64>) {
    let xs: Vec<f64> = (0..200).map(|i| f64::from(i) / 100.0 - 1.0).collect();
    let ys = xs.iter().map(|x| TRUE_W * x + TRUE_B).collect();
    (xs, ys)
}

/// The outcome of a fit.
#[derive(Debug)]
pub struct Fit {
    /// The fitted slope.
    pub w: f64,
    /// The fitted intercept.
    pub b: f64,
    /// `(step, loss)` before the update of every `report_every`-th step, and after the last.
    pub history: Vec<(usize, f64)>,
}

/// Gradient descent from `w = b = 0`: `steps` updates of size `rate` along `-loss_grad`.
pub fn fit(steps: usize, rate: f64, report_every: usize) -> Result<Fit, ScalarAutodiffError> {
    let (xs, ys) = points();
    let (mut w, mut b) = (0.0, 0.0);
    let mut history = Vec::new();
    for step in 0..steps {
        let (value, [dw, db]) = loss_grad(w, b, &xs, &ys)?;
        if step % report_every == 0 {
            history.push((step, value));
        }
        w -= rate * dw;
        b -= rate * db;
    }
    history.push((steps, loss(w, b, &xs, &ys)));
    Ok(Fit { w, b, history })
}

fn main() -> Result<(), ScalarAutodiffError> {
    let fit = fit(80, 0.5, 10)?;
    for (step, value) in &fit.history {
        println!("step {step:>3}: loss {value:.3e}");
    }
    println!(
        "fitted w = {:.9} (true {TRUE_W}), b = {:.9} (true {TRUE_B})",
        fit.w, fit.b
    );
    Ok(())
}
