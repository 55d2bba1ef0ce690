//! The note on fan-out: copy in the forward pass, add in the backward pass.

use approx::assert_relative_eq;
use autodiff_runtime::{Scalar, ScalarAutodiffError};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

#[test]
fn a_node_with_k_consumers_receives_the_sum_of_k_contributions() -> Result {
    for k in 1..=6 {
        let x = Scalar::variable(0.7)?;
        let shared = x.sin()?;
        // Consumer j computes shared * (j + 1); the loss sums them all.
        let mut loss = Scalar::constant(0.0)?;
        let mut expected = 0.0;
        for j in 0..k {
            let weight = (j + 1) as f64;
            loss = loss.add(&shared.mul(&Scalar::constant(weight)?)?)?;
            expected += weight;
        }
        let pass = loss.backward()?;
        assert_eq!(shared.gradient(), Some(expected), "k = {k}");
        assert_relative_eq!(
            x.gradient().unwrap_or(f64::NAN),
            expected * 0.7f64.cos(),
            max_relative = 1e-15
        );
        // Every use is its own edge into `shared`.
        let ledger = pass.ledger();
        let shared_rank = ledger
            .nodes
            .iter()
            .position(|n| n.node == 1)
            .unwrap_or(usize::MAX);
        let into_shared = ledger
            .edges
            .iter()
            .filter(|e| e.parent == shared_rank)
            .count();
        assert_eq!(into_shared, k);
    }
    Ok(())
}

#[test]
fn the_same_node_twice_in_one_operation_is_two_edges() -> Result {
    for (name, build, slope) in [
        (
            "x*x",
            Scalar::mul as fn(&Scalar, &Scalar) -> Result<Scalar>,
            2.0 * 1.5,
        ),
        ("x+x", Scalar::add, 2.0),
        ("x-x", Scalar::sub, 0.0),
        ("x/x", Scalar::div, 0.0),
        ("hypot(x,x)", Scalar::hypot, std::f64::consts::SQRT_2),
        ("max(x,x)", Scalar::max, 1.0),
    ] {
        let x = Scalar::variable(1.5)?;
        let y = build(&x, &x)?;
        let pass = y.backward()?;
        assert_relative_eq!(
            x.gradient().unwrap_or(f64::NAN),
            slope,
            max_relative = 1e-15
        );
        assert_eq!(pass.ledger().edges.len(), 2, "{name}");
    }
    Ok(())
}

/// trunk(w) = tanh(w * x); head a = (trunk - 1)^2; head b = 3 * trunk.
fn heads(w: &Scalar, use_a: bool, use_b: bool) -> Result<Scalar> {
    let trunk = w.mul(&Scalar::constant(0.8)?)?.tanh()?;
    let a = trunk.sub(&Scalar::constant(1.0)?)?.powi(2)?;
    let b = trunk.mul(&Scalar::constant(3.0)?)?;
    let zero = Scalar::constant(0.0)?;
    let loss_a = if use_a { a } else { zero.clone() };
    let loss_b = if use_b { b } else { zero };
    loss_a.add(&loss_b)
}

fn gradient_of(use_a: bool, use_b: bool) -> Result<f64> {
    let w = Scalar::variable(0.4)?;
    heads(&w, use_a, use_b)?.backward()?;
    Ok(w.gradient().unwrap_or(f64::NAN))
}

#[test]
fn a_shared_trunk_gets_the_sum_of_its_heads_gradients() -> Result {
    let both = gradient_of(true, true)?;
    let only_a = gradient_of(true, false)?;
    let only_b = gradient_of(false, true)?;
    assert!(only_a != 0.0 && only_b != 0.0);
    assert_relative_eq!(both, only_a + only_b, max_relative = 1e-15);
    // Analytic: t = tanh(0.32); d/dw = 0.8 (1 - t^2) (2 (t - 1) + 3).
    let t = 0.32f64.tanh();
    assert_relative_eq!(
        both,
        0.8 * (1.0 - t * t) * (2.0 * (t - 1.0) + 3.0),
        max_relative = 1e-14
    );
    Ok(())
}

#[test]
fn a_tied_weight_read_twice_gets_both_contributions() -> Result {
    // Embedding-style read (w * x) and projection-style read (w * h) of one weight.
    let w = Scalar::variable(0.6)?;
    let x = Scalar::constant(1.3)?;
    let embedded = w.mul(&x)?.tanh()?;
    let projected = w.mul(&embedded)?;
    projected.backward()?;
    let e = (0.6f64 * 1.3).tanh();
    let expected = e + 0.6 * (1.0 - e * e) * 1.3;
    assert_relative_eq!(
        w.gradient().unwrap_or(f64::NAN),
        expected,
        max_relative = 1e-15
    );
    Ok(())
}
