//! Branches: every branch of piecewise functions against central differences away from the
//! switch points, the plain function and the graph agreeing bit for bit, and the branch
//! not taken recording nothing.

use scalar_autodiff::ScalarOperation::{self, *};
use scalar_autodiff::{differentiable, scalar_gradient_check, Scalar, ScalarAutodiffError};

/// Three pieces joined (not smoothly) at -1 and 2: a parabola, a line and a logarithm.
#[differentiable]
fn piecewise(x: f64) -> f64 {
    if x < -1.0 {
        x * x
    } else if x <= 2.0 {
        3.0 * x + 4.0
    } else {
        x.ln() * 5.0
    }
}

/// The statement form: an accumulator changed in some branches, a data threshold, and a
/// condition combining a tracked comparison with a data one.
#[differentiable]
fn soft_clip(x: f64, y: f64, #[constant] limit: f64) -> f64 {
    let mut out = x * y;
    if out > limit {
        out = limit + (out - limit).tanh();
    } else if out < -limit && y > 0.0 {
        out = -limit;
    }
    out
}

/// `match` on data choosing a formula; one arm is a block.
#[differentiable]
fn by_mode(x: f64, mode: u8) -> f64 {
    match mode {
        0 => x.sin(),
        1 | 2 => x.exp() * x,
        _ => {
            let s = x * x;
            s * s
        }
    }
}

/// A hinge loss: the condition reads a computed margin.
#[differentiable]
fn hinge(w: f64, b: f64, x: f64, #[constant] label: f64) -> f64 {
    let margin = label * (w * x + b);
    if 1.0 - margin > 0.0 {
        1.0 - margin
    } else {
        0.0
    }
}

/// Conditions with `!`, `||`, methods of tracked values and a comparison kept in a `bool`.
#[differentiable]
fn conditions(x: f64, y: f64) -> f64 {
    let near = (x - y).abs() < 0.5;
    if !near || x.sin() > 0.9 {
        x * y
    } else {
        x + y
    }
}

/// An early `return` from one branch.
#[differentiable]
fn early(x: f64) -> f64 {
    if x < 0.0 {
        return -x * 2.0;
    }
    x.sqrt()
}

fn check(analytic: f64, at: f64, f: impl Fn(f64) -> f64) {
    let check = scalar_gradient_check(at, analytic, 1e-6, 1e-6, f).expect("a finite check");
    assert!(check.passed, "{check:?}");
}

#[test]
fn each_piece_matches_central_differences_away_from_the_switch_points(
) -> Result<(), ScalarAutodiffError> {
    for x in [-3.0, -1.5, -0.5, 0.0, 1.5, 2.5, 4.0, 10.0] {
        let (value, [dx]) = piecewise_grad(x)?;
        assert_eq!(value.to_bits(), piecewise(x).to_bits(), "x = {x}");
        check(dx, x, piecewise);
    }
    // The exact slopes of each piece.
    assert_eq!(piecewise_grad(-3.0)?.1, [-6.0]);
    assert_eq!(piecewise_grad(0.5)?.1, [3.0]);
    assert_eq!(piecewise_grad(4.0)?.1, [5.0 / 4.0]);
    Ok(())
}

#[test]
fn statement_branches_match_central_differences_in_every_region() -> Result<(), ScalarAutodiffError>
{
    let limit = 1.0;
    // out > limit, out < -limit with y > 0, and the untouched middle.
    for (x, y) in [
        (2.0, 1.5),
        (-3.0, 0.5),
        (0.3, 0.7),
        (-0.5, -0.5),
        (3.0, -1.0),
    ] {
        let (value, [dx, dy]) = soft_clip_grad(x, y, limit)?;
        assert_eq!(value.to_bits(), soft_clip(x, y, limit).to_bits());
        check(dx, x, |v| soft_clip(v, y, limit));
        check(dy, y, |v| soft_clip(x, v, limit));
    }
    // Clipped to a constant: no gradient at all.
    assert_eq!(soft_clip_grad(-3.0, 0.5, limit)?, (-1.0, [0.0, 0.0]));
    Ok(())
}

#[test]
fn match_arms_on_data_match_central_differences() -> Result<(), ScalarAutodiffError> {
    for mode in 0..5 {
        for x in [-1.0, 0.25, 1.5] {
            let (value, [dx]) = by_mode_grad(x, mode)?;
            assert_eq!(value.to_bits(), by_mode(x, mode).to_bits());
            check(dx, x, |v| by_mode(v, mode));
        }
    }
    Ok(())
}

#[test]
fn a_hinge_loss_has_its_subgradient_on_each_side() -> Result<(), ScalarAutodiffError> {
    // Inside the margin: d/dw = -label * x, d/db = -label, d/dx = -label * w.
    let (value, gradient) = hinge_grad(0.5, 0.1, 1.0, 1.0)?;
    assert_eq!(value.to_bits(), hinge(0.5, 0.1, 1.0, 1.0).to_bits());
    assert_eq!(gradient, [-1.0, -1.0, -0.5]);
    // Beyond it: flat.
    assert_eq!(hinge_grad(2.0, 0.1, 1.0, 1.0)?, (0.0, [0.0, 0.0, 0.0]));
    for (w, b, x, label) in [
        (0.3, -0.2, 1.5, 1.0),
        (0.3, -0.2, 1.5, -1.0),
        (2.0, 0.0, 2.0, 1.0),
    ] {
        let (_, [dw, db, dx]) = hinge_grad(w, b, x, label)?;
        check(dw, w, |v| hinge(v, b, x, label));
        check(db, b, |v| hinge(w, v, x, label));
        check(dx, x, |v| hinge(w, b, v, label));
    }
    Ok(())
}

#[test]
fn boolean_conditions_and_early_returns() -> Result<(), ScalarAutodiffError> {
    for (x, y) in [(0.1, 0.2), (0.1, 2.0), (1.3, 1.2), (-2.0, -2.1)] {
        let (value, [dx, dy]) = conditions_grad(x, y)?;
        assert_eq!(value.to_bits(), conditions(x, y).to_bits());
        check(dx, x, |v| conditions(v, y));
        check(dy, y, |v| conditions(x, v));
    }
    assert_eq!(early_grad(-2.0)?, (early(-2.0), [-2.0]));
    assert_eq!(early_grad(4.0)?, (2.0, [0.25]));
    Ok(())
}

fn operations(output: &Scalar) -> Result<Vec<ScalarOperation>, ScalarAutodiffError> {
    let ledger = output.backward()?.ledger();
    Ok(ledger.nodes.iter().map(|node| node.operation).collect())
}

#[test]
fn the_branch_not_taken_records_nothing() -> Result<(), ScalarAutodiffError> {
    let x = Scalar::variable(-3.0)?;
    assert_eq!(operations(&piecewise_graph(&x)?)?, [Variable, Multiply]);
    let x = Scalar::variable(0.5)?;
    assert_eq!(
        operations(&piecewise_graph(&x)?)?,
        [Variable, Constant, Multiply, Constant, Add]
    );
    let x = Scalar::variable(4.0)?;
    assert_eq!(
        operations(&piecewise_graph(&x)?)?,
        [Variable, Ln, Constant, Multiply]
    );
    // The same holds on the tape: only the taken branch's nodes were recorded.
    let before = scalar_autodiff::tape_len();
    let x = Scalar::variable(-3.0)?;
    let output = piecewise_graph(&x)?;
    assert_eq!(scalar_autodiff::tape_len() - before, 2);
    drop((output, x));
    Ok(())
}
