//! A function of 500 operations in one expression chain.
//!
//! `chain!` nests `(previous.sin() * 0.9 + x * 0.1)` 125 times, four operations per level
//! (`sin`, two `*`, `+`), and hands the whole function to `#[differentiable]` as one
//! expression, close to the 128 levels a body may nest. The parameter is passed in from the
//! call site so that every `x` in the expansion names it.

use std::hint::black_box;

use approx::assert_relative_eq;
use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError, ScalarOperation};

macro_rules! chain {
    ($x:ident; [] ($($inner:tt)*)) => {
        /// 125 nested levels of `previous.sin() * 0.9 + x * 0.1`, starting from `x`.
        // (Longer than the sweeps compile: on the tape, as chosen.)
        #[differentiable(tape)]
        fn chain($x: f64) -> f64 {
            $($inner)*
        }
    };
    ($x:ident; [$_level:tt $($rest:tt)*] $previous:tt) => {
        chain!($x; [$($rest)*] ($previous.sin() * 0.9 + $x * 0.1));
    };
}

chain!(x; [
    _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
    _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
    _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
] x);

const LEVELS: usize = 125;

/// The chain's value and derivative by a loop, in the same order of operations.
fn by_loop(x: f64) -> (f64, f64) {
    let (mut value, mut slope) = (x, 1.0);
    for _ in 0..LEVELS {
        slope = value.cos() * slope * 0.9 + 0.1;
        value = value.sin() * 0.9 + x * 0.1;
    }
    (value, slope)
}

#[test]
fn a_five_hundred_operation_chain() -> Result<(), ScalarAutodiffError> {
    for x in [-2.0, -0.3, 0.0, 0.7, 1.5, 4.0] {
        let x = black_box(x);
        let (value, [dx]) = chain_grad(x)?;
        let (loop_value, loop_slope) = by_loop(x);
        assert_eq!(value.to_bits(), chain(x).to_bits());
        assert_eq!(value.to_bits(), loop_value.to_bits());
        assert_relative_eq!(dx, loop_slope, epsilon = 1e-14, max_relative = 1e-12);
    }
    Ok(())
}

#[test]
fn the_chain_records_exactly_five_hundred_operations() -> Result<(), ScalarAutodiffError> {
    let x = Scalar::variable(0.7)?;
    let ledger = chain_graph(&x)?.backward()?.ledger();
    let operations = ledger
        .nodes
        .iter()
        .filter(|node| {
            !matches!(
                node.operation,
                ScalarOperation::Variable | ScalarOperation::Constant
            )
        })
        .count();
    assert_eq!(operations, 4 * LEVELS);
    assert_eq!(4 * LEVELS, 500);
    // x feeds the first `sin` and every level's `x * 0.1`.
    let x_edges = ledger.edges.iter().filter(|edge| edge.parent == 0).count();
    assert_eq!(x_edges, LEVELS + 1);
    Ok(())
}
