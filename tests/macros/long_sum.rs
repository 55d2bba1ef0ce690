//! A body far longer than the compiled sweeps take: a sum of 500 terms written out as one
//! expression (1,500 operations), as a code generator or a computer algebra system writes
//! them.
//!
//! Such a body is emitted as a run of short statements rather than one call nested 1,500
//! deep (which took rustc 45 s and 1.9 GB of memory at 4,000 operations, against 4.6 s and
//! 0.6 GB now): these tests check that the split changes nothing a user can see, the
//! value, the gradient and the ledger's order of nodes, against the same sum built by hand
//! on `Scalar`s in the order Rust evaluates it.

use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError};

use crate::support::long_sum;

long_sum!(
    /// 100 times five terms, as one expression.
    // (Longer than the sweeps compile: on the tape, as chosen.)
    #[differentiable(tape)]
    fn long_sum(x); [
    _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
    _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
] (0.5));

const REPEATS: usize = 100;

/// The same sum on `Scalar`s, one operation at a time, in Rust's order of evaluation.
fn by_hand(x: &[Scalar; 8]) -> Result<Scalar, ScalarAutodiffError> {
    let c = Scalar::constant;
    let mut total = c(0.5)?;
    for _ in 0..REPEATS {
        let product = c(1.5)?.mul(&x[0])?.mul(&x[3])?;
        total = total.add(&product)?;
        let power = x[1].sub(&c(0.5)?)?.powi(2)?;
        total = total.sub(&power)?;
        let sine = x[2].mul(&x[5])?.sin()?.neg()?;
        total = total.add(&sine)?;
        let exponential = x[4].exp()?.div(&c(3.0)?)?;
        total = total.add(&exponential)?;
        let fused = x[6].mul_add(&x[7], &c(0.25)?)?;
        total = total.add(&fused)?;
    }
    Ok(total)
}

const POINT: [f64; 8] = [0.3, -0.7, 1.1, 0.4, -0.2, 0.9, 1.3, -0.6];

fn variables() -> Result<[Scalar; 8], ScalarAutodiffError> {
    let x: Vec<Scalar> = POINT
        .iter()
        .map(|&v| Scalar::variable(v))
        .collect::<Result<_, _>>()?;
    Ok(std::array::from_fn(|i| x[i].clone()))
}

#[test]
fn the_graph_is_the_one_built_by_hand_node_for_node() -> Result<(), ScalarAutodiffError> {
    let x = variables()?;
    let ours = long_sum_graph(&x)?.backward()?.ledger();
    let y = variables()?;
    let theirs = by_hand(&y)?.backward()?.ledger();
    assert_eq!(ours.nodes.len(), theirs.nodes.len());
    assert_eq!(ours.to_string(), theirs.to_string());
    for (a, b) in x.iter().zip(&y) {
        assert_eq!(
            a.gradient().map(f64::to_bits),
            b.gradient().map(f64::to_bits)
        );
    }
    Ok(())
}

#[test]
fn the_gradient_is_exact() -> Result<(), ScalarAutodiffError> {
    let (value, gradient) = long_sum_grad(POINT)?;
    assert_eq!(value.to_bits(), long_sum(POINT).to_bits());
    let [x0, x1, x2, x3, x4, x5, x6, x7] = POINT;
    let r = REPEATS as f64;
    let expected = [
        r * 1.5 * x3,
        -r * 2.0 * (x1 - 0.5),
        -r * (x2 * x5).cos() * x5,
        r * 1.5 * x0,
        r * x4.exp() / 3.0,
        -r * (x2 * x5).cos() * x2,
        r * x7,
        r * x6,
    ];
    for (got, want) in gradient.iter().zip(expected) {
        approx::assert_relative_eq!(*got, want, max_relative = 1e-12);
    }
    Ok(())
}
