//! The lessons of fan-out, with numbers: a node used twice gets the sum of both paths'
//! gradients, a tied weight gets both of its contributions, cutting one path changes the
//! gradient (and a central-difference check notices), and one update along the summed
//! gradient is not two updates, one per head.
//!
//! Run with `cargo run --release --example shared_trunk`.

use scalar_autodiff::{differentiable, scalar_gradient_check, ScalarAutodiffError};

/// The shared trunk: one feature of the input, `tanh(t x)`.
#[differentiable]
pub fn trunk(t: f64, #[constant] x: f64) -> f64 {
    (t * x).tanh()
}

/// One head's squared error on the trunk's feature `h`: `(a h - y)²`.
#[differentiable]
pub fn head(a: f64, h: f64, #[constant] y: f64) -> f64 {
    let err = a * h - y;
    err * err
}

/// Two heads on one trunk: the trunk's output is one node used by both heads.
#[differentiable]
pub fn both_heads(t: f64, a: f64, b: f64, #[constant] x: f64, #[constant] y: [f64; 2]) -> f64 {
    let h = trunk(t, x);
    head(a, h, y[0]) + head(b, h, y[1])
}

/// Head A alone on the trunk.
#[differentiable]
pub fn head_a_only(t: f64, a: f64, #[constant] x: f64, #[constant] y: f64) -> f64 {
    head(a, trunk(t, x), y)
}

/// Head B alone on the trunk.
#[differentiable]
pub fn head_b_only(t: f64, b: f64, #[constant] x: f64, #[constant] y: f64) -> f64 {
    head(b, trunk(t, x), y)
}

/// A tied weight: `w` embeds the input and, read a second time, projects it back out.
#[differentiable]
pub fn tied(w: f64, #[constant] x: f64, #[constant] y: f64) -> f64 {
    let embedded = (w * x).tanh();
    let err = w * embedded - y;
    err * err
}

/// The same model with two separate weights, one per read.
#[differentiable]
pub fn untied(w_in: f64, w_out: f64, #[constant] x: f64, #[constant] y: f64) -> f64 {
    let embedded = (w_in * x).tanh();
    let err = w_out * embedded - y;
    err * err
}

/// `tied` with the output path severed: the projection reads a detached copy of `w`. The
/// plain function is the same as `tied` (detach is the identity on values).
#[differentiable]
pub fn severed(w: f64, #[constant] x: f64, #[constant] y: f64) -> f64 {
    let embedded = (w * x).tanh();
    let err = w.detach() * embedded - y;
    err * err
}

/// The input and the two heads' targets used throughout.
pub const X: f64 = 0.8;
/// Targets of head A and head B.
pub const Y: [f64; 2] = [0.5, -0.3];
/// Trunk and head parameters `(t, a, b)` at the start.
pub const START: (f64, f64, f64) = (0.9, 1.2, -0.7);
/// The tied weight, and the target of the tied model.
pub const TIED: (f64, f64) = (0.6, 0.25);

/// Everything the example shows.
#[derive(Debug)]
pub struct Lessons {
    /// The trunk parameter's gradient from the two-head loss.
    pub trunk_both: f64,
    /// The trunk parameter's gradients from head A alone and head B alone.
    pub trunk_single: [f64; 2],
    /// The tied weight's gradient.
    pub tied: f64,
    /// The untied model's gradients `[w_in, w_out]` at `w_in = w_out = w`.
    pub untied: [f64; 2],
    /// The gradient with the output path severed.
    pub severed: f64,
    /// Central-difference checks of the tied and the severed gradients.
    pub checks: [(f64, bool); 2],
    /// For each step size: the trunk parameter after one update along the summed gradient,
    /// and after two sequential updates (head A, then head B).
    pub updates: Vec<(f64, f64, f64)>,
}

/// One update of `(t, a, b)` along the gradient of both heads at once.
fn joint_update(rate: f64) -> Result<(f64, f64, f64), ScalarAutodiffError> {
    let (t, a, b) = START;
    let (_, [dt, da, db]) = both_heads_grad(t, a, b, X, Y)?;
    Ok((t - rate * dt, a - rate * da, b - rate * db))
}

/// Two updates: one for head A's loss, then one for head B's from where the first left.
fn sequential_updates(rate: f64) -> Result<(f64, f64, f64), ScalarAutodiffError> {
    let (t, a, b) = START;
    let (_, [dt, da]) = head_a_only_grad(t, a, X, Y[0])?;
    let (t, a) = (t - rate * dt, a - rate * da);
    let (_, [dt, db]) = head_b_only_grad(t, b, X, Y[1])?;
    Ok((t - rate * dt, a, b - rate * db))
}

/// Computes every number the example prints.
pub fn lessons() -> Result<Lessons, ScalarAutodiffError> {
    let (t, a, b) = START;
    let (_, [trunk_both, _, _]) = both_heads_grad(t, a, b, X, Y)?;
    let (_, [trunk_a, _]) = head_a_only_grad(t, a, X, Y[0])?;
    let (_, [trunk_b, _]) = head_b_only_grad(t, b, X, Y[1])?;

    let (w, y) = TIED;
    let (_, [tied_grad]) = tied_grad(w, X, y)?;
    let (_, untied_grad) = untied_grad(w, w, X, y)?;
    let (_, [severed_grad]) = severed_grad(w, X, y)?;
    // The numerical derivative perturbs the plain function, so it sees every path.
    let check = |analytic| scalar_gradient_check(w, analytic, 1e-6, 1e-6, |v| tied(v, X, y));
    let tied_check = check(tied_grad)?;
    let severed_check = check(severed_grad)?;

    let mut updates = Vec::new();
    for rate in [0.01, 0.1, 0.5] {
        updates.push((rate, joint_update(rate)?.0, sequential_updates(rate)?.0));
    }
    Ok(Lessons {
        trunk_both,
        trunk_single: [trunk_a, trunk_b],
        tied: tied_grad,
        untied: untied_grad,
        severed: severed_grad,
        checks: [
            (tied_check.scaled_error, tied_check.passed),
            (severed_check.scaled_error, severed_check.passed),
        ],
        updates,
    })
}

fn main() -> Result<(), ScalarAutodiffError> {
    let lessons = lessons()?;
    let [trunk_a, trunk_b] = lessons.trunk_single;
    println!("1. A shared trunk gets the sum of its heads' gradients:");
    println!("   d(both heads)/dt = {:+.15}", lessons.trunk_both);
    println!("   d(head A)/dt     = {trunk_a:+.15}");
    println!("   d(head B)/dt     = {trunk_b:+.15}");
    println!(
        "   sum of the two   = {:+.15} (difference {:.1e})",
        trunk_a + trunk_b,
        lessons.trunk_both - (trunk_a + trunk_b)
    );
    let [w_in, w_out] = lessons.untied;
    println!("2. A tied weight read twice gets both contributions:");
    println!("   d(tied)/dw = {:+.15}", lessons.tied);
    println!(
        "   untied: d/dw_in = {w_in:+.15}, d/dw_out = {w_out:+.15}, sum {:+.15}",
        w_in + w_out
    );
    println!("3. Severing the output path with detach() changes the gradient:");
    println!(
        "   d(severed)/dw = {:+.15} (only the embedding's contribution)",
        lessons.severed
    );
    let [(tied_error, tied_passed), (severed_error, severed_passed)] = lessons.checks;
    println!(
        "   central differences vs tied:    scaled error {tied_error:.1e}, pass={tied_passed}"
    );
    println!(
        "   central differences vs severed: scaled error {severed_error:.1e}, pass={severed_passed}"
    );
    println!("4. One update along the summed gradient is not two per-head updates:");
    for (rate, joint, sequential) in &lessons.updates {
        println!(
            "   step {rate:<4}: trunk after one joint update {joint:+.9}, after head A then \
             head B {sequential:+.9} (apart by {:.1e})",
            (joint - sequential).abs()
        );
    }
    Ok(())
}
