//! The shared-trunk example's claims: a shared trunk gets the sum of its heads' gradients,
//! a tied weight gets both contributions, a severed path changes the gradient and a
//! central-difference check catches it, and a joint update differs from sequential ones,
//! more so for larger steps. Every loss gradient matches central differences.

#[allow(dead_code)]
#[path = "../../examples/shared_trunk.rs"]
pub(crate) mod shared_trunk;

use scalar_autodiff::{scalar_gradient_check, ScalarAutodiffError};
use shared_trunk::*;

#[test]
fn the_lessons_hold() -> Result<(), ScalarAutodiffError> {
    let lessons = lessons()?;
    let [trunk_a, trunk_b] = lessons.trunk_single;
    // 1. The sum of both paths (here bit for bit; in general up to rounding).
    assert!(
        (lessons.trunk_both - (trunk_a + trunk_b)).abs() <= 4.0 * f64::EPSILON,
        "{lessons:?}"
    );
    assert!(trunk_a != 0.0 && trunk_b != 0.0);
    // 2. The tied weight's gradient is the untied model's two gradients added.
    let [w_in, w_out] = lessons.untied;
    assert!((lessons.tied - (w_in + w_out)).abs() <= 4.0 * f64::EPSILON);
    // 3. Severing the output path leaves only the embedding's contribution, and the
    //    numerical derivative (which sees every path) rejects it.
    assert_eq!(lessons.severed, w_in);
    assert!(lessons.severed != lessons.tied);
    assert_eq!(lessons.checks.map(|(_, passed)| passed), [true, false]);
    // 4. Joint and sequential updates differ, and the gap grows with the step size.
    let gaps: Vec<f64> = lessons
        .updates
        .iter()
        .map(|(_, joint, sequential)| (joint - sequential).abs())
        .collect();
    assert!(
        gaps[0] > 0.0 && gaps.windows(2).all(|pair| pair[1] > pair[0]),
        "{gaps:?}"
    );
    Ok(())
}

fn check(at: f64, analytic: f64, f: impl Fn(f64) -> f64) -> Result<(), ScalarAutodiffError> {
    let check = scalar_gradient_check(at, analytic, 1e-6, 1e-7, f)?;
    assert!(check.passed, "{check:?}");
    Ok(())
}

#[test]
fn every_loss_gradient_matches_central_differences() -> Result<(), ScalarAutodiffError> {
    let (t, a, b) = START;
    let (_, [dt, da, db]) = both_heads_grad(t, a, b, X, Y)?;
    check(t, dt, |v| both_heads(v, a, b, X, Y))?;
    check(a, da, |v| both_heads(t, v, b, X, Y))?;
    check(b, db, |v| both_heads(t, a, v, X, Y))?;
    let (_, [dt, da]) = head_a_only_grad(t, a, X, Y[0])?;
    check(t, dt, |v| head_a_only(v, a, X, Y[0]))?;
    check(a, da, |v| head_a_only(t, v, X, Y[0]))?;
    let (_, [dt, db]) = head_b_only_grad(t, b, X, Y[1])?;
    check(t, dt, |v| head_b_only(v, b, X, Y[1]))?;
    check(b, db, |v| head_b_only(t, v, X, Y[1]))?;
    let (w, y) = TIED;
    let (_, [dw]) = tied_grad(w, X, y)?;
    check(w, dw, |v| tied(v, X, y))?;
    let (_, [dw_in, dw_out]) = untied_grad(w, 0.4, X, y)?;
    check(w, dw_in, |v| untied(v, 0.4, X, y))?;
    check(0.4, dw_out, |v| untied(w, v, X, y))?;
    // `severed` differs from its plain function on purpose: that is lesson 3.
    assert_eq!(severed(w, X, y), tied(w, X, y));
    Ok(())
}
