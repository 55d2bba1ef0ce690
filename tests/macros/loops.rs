//! Loops against the same functions unrolled by hand: the same operations in the same
//! order, so values, gradients and ledgers agree exactly.

use scalar_autodiff::{differentiable, scalar_gradient_check, Scalar, ScalarAutodiffError};

const EXTRA: usize = 2;

/// `x` to the power `n + 1` by a loop over `0..n`.
#[differentiable]
fn power_loop(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y *= x;
    }
    y
}

/// The same for `n = 3`, unrolled.
#[differentiable]
fn power_unrolled(x: f64) -> f64 {
    let mut y = x;
    y *= x;
    y *= x;
    y *= x;
    y
}

/// A residual sum of squares over data, in every loop shape.
#[differentiable]
fn rss_loops(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        let err = w * xs[i] + b - ys[i];
        total += err * err;
    }
    for (x, y) in xs.iter().zip(ys) {
        let err = w * x + b - y;
        total += err * err;
    }
    for (i, &x) in xs.iter().enumerate() {
        total += w * x * (i as f64 * 0.5);
    }
    for i in 0..=EXTRA {
        total -= b * (i as f64);
    }
    total
}

/// `rss_loops` for three points, unrolled by hand.
#[differentiable]
fn rss_unrolled(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    let err = w * xs[0] + b - ys[0];
    total += err * err;
    let err = w * xs[1] + b - ys[1];
    total += err * err;
    let err = w * xs[2] + b - ys[2];
    total += err * err;
    let err = w * xs[0] + b - ys[0];
    total += err * err;
    let err = w * xs[1] + b - ys[1];
    total += err * err;
    let err = w * xs[2] + b - ys[2];
    total += err * err;
    total += w * xs[0] * (0.0 * 0.5);
    total += w * xs[1] * (1.0 * 0.5);
    total += w * xs[2] * (2.0 * 0.5);
    total -= b * 0.0;
    total -= b * 1.0;
    total -= b * 2.0;
    total
}

/// Growth until a primal threshold, with a `while` loop and a data counter.
#[differentiable]
fn grow(x: f64, #[constant] threshold: f64) -> f64 {
    let mut v = x;
    let mut steps = 0;
    while v < threshold {
        v = v * 1.5 + 0.25;
        steps += 1;
    }
    v + steps as f64
}

/// A dot product over a parameter array with `zip`, and `loop` with labelled `break`s.
#[differentiable]
fn array_loops(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (w_i, x) in w.iter().zip(xs) {
        total += w_i * x;
    }
    for &w_i in w.iter().rev().skip(1) {
        total *= w_i;
    }
    let mut round = 0;
    'outer: loop {
        for (i, w_i) in w.iter().enumerate() {
            if i + round >= 2 {
                break 'outer;
            }
            total += w_i;
        }
        round += 1;
    }
    total
}

/// `array_loops` unrolled.
#[differentiable]
fn array_unrolled(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    total += w[0] * xs[0];
    total += w[1] * xs[1];
    total += w[2] * xs[2];
    total *= w[1];
    total *= w[0];
    total += w[0];
    total += w[1];
    total
}

/// A long loop: 1,000 iterations, each using `x` once.
#[differentiable]
fn long_sum(x: f64, n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        total += x * (i as f64);
    }
    total
}

#[test]
fn a_power_loop_equals_its_unrolled_form() -> Result<(), ScalarAutodiffError> {
    for x in [-1.5, 0.5, 2.0] {
        assert_eq!(power_loop_grad(x, 3)?, power_unrolled_grad(x)?);
        assert_eq!(power_loop(x, 3).to_bits(), power_unrolled(x).to_bits());
    }
    // The same graph: 5 nodes, 7 edges (`let mut y = x;` is a `copy` of `x`, and each
    // multiplication uses `y` and `x`).
    let x = Scalar::variable(2.0)?;
    let looped = power_loop_graph(&x, 3)?.backward()?.ledger();
    let unrolled = power_unrolled_graph(&x)?.backward()?.ledger();
    assert_eq!(looped.nodes.len(), 5);
    assert_eq!(looped.nodes.len(), unrolled.nodes.len());
    assert_eq!(looped.edges.len(), 7);
    assert_eq!(looped.edges.len(), unrolled.edges.len());
    // No iterations: the parameter itself.
    assert_eq!(power_loop_grad(2.0, 0)?, (2.0, [1.0]));
    Ok(())
}

#[test]
fn loops_over_data_equal_their_unrolled_form() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = ([1.0, 2.0, 3.0], [2.5, 4.0, 7.5]);
    for (w, b) in [(0.5, 0.1), (2.0, -1.0)] {
        let looped = rss_loops_grad(w, b, &xs, &ys)?;
        let unrolled = rss_unrolled_grad(w, b, &xs, &ys)?;
        assert_eq!(looped.0.to_bits(), unrolled.0.to_bits());
        assert_eq!(looped.1.map(f64::to_bits), unrolled.1.map(f64::to_bits));
        assert_eq!(looped.0.to_bits(), rss_loops(w, b, &xs, &ys).to_bits());
        assert_eq!(looped.0.to_bits(), rss_unrolled(w, b, &xs, &ys).to_bits());
        let check =
            scalar_gradient_check(w, looped.1[0], 1e-6, 1e-7, |v| rss_loops(v, b, &xs, &ys))?;
        assert!(check.passed, "{check:?}");
    }
    Ok(())
}

#[test]
fn loops_over_parameter_arrays_equal_their_unrolled_form() -> Result<(), ScalarAutodiffError> {
    let xs = [0.5, -1.0, 2.0];
    for w in [[1.0, 2.0, 3.0], [-0.5, 0.25, 1.5]] {
        let looped = array_loops_grad(w, &xs)?;
        let unrolled = array_unrolled_grad(w, &xs)?;
        assert_eq!(looped.0.to_bits(), unrolled.0.to_bits());
        assert_eq!(looped.1.map(f64::to_bits), unrolled.1.map(f64::to_bits));
        assert_eq!(looped.0.to_bits(), array_loops(w, &xs).to_bits());
        assert_eq!(looped.0.to_bits(), array_unrolled(w, &xs).to_bits());
    }
    Ok(())
}

#[test]
fn a_while_loop_on_a_primal_condition() -> Result<(), ScalarAutodiffError> {
    // From 1.0: 1.75, 2.875, 4.5625, 7.09375, 10.890625 (five steps past 10).
    let (value, [dx]) = grow_grad(1.0, 10.0)?;
    assert_eq!(value.to_bits(), grow(1.0, 10.0).to_bits());
    assert_eq!(value, 10.890625 + 5.0);
    assert_eq!(dx, 1.5f64.powi(5));
    // Already past the threshold: no iterations.
    assert_eq!(grow_grad(20.0, 10.0)?, (20.0, [1.0]));
    Ok(())
}

#[test]
fn a_thousand_iterations() -> Result<(), ScalarAutodiffError> {
    let (value, [dx]) = long_sum_grad(0.5, 1000)?;
    assert_eq!(value.to_bits(), long_sum(0.5, 1000).to_bits());
    assert_eq!(dx, (0..1000).map(f64::from).sum::<f64>());
    Ok(())
}
