// The chapter's reused square as an annotated function: `s = x * x` is one node with two
// edges to `x`, and `s + s` has two edges to `s`. At x = 2 the value is 8 and the gradient 8.
#![deny(warnings)]

use scalar_autodiff::differentiable;

#[differentiable]
fn loss(x: f64) -> f64 {
    let s = x * x;
    s + s
}

pub fn main() -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    assert_eq!(loss(2.0), 8.0);
    let (value, [dx]) = loss_grad(2.0)?;
    assert_eq!((value, dx), (8.0, 8.0));

    let x = scalar_autodiff::Scalar::variable(2.0)?;
    let y = loss_graph(&x)?;
    let ledger = y.backward()?.ledger();
    assert_eq!((ledger.nodes.len(), ledger.edges.len()), (3, 4));
    assert_eq!(x.gradient(), Some(8.0));
    Ok(())
}
