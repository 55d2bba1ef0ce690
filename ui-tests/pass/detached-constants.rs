// Stepwise functions are refused on tracked values but accepted on detached ones, where the
// result is a constant: the rewrites the error messages suggest compile and give the
// expected slopes.
#![deny(warnings)]

use scalar_autodiff::differentiable;

/// `fract` with slope 1: the whole part is held constant.
#[differentiable]
fn sawtooth(x: f64) -> f64 {
    x - x.detach().trunc()
}

/// `a % b` with the quotient held constant: slopes 1 and -trunc(a / b).
#[differentiable]
fn wrap(a: f64, b: f64) -> f64 {
    a - b * (a / b).detach().trunc()
}

/// A rounded value used as a constant scale.
#[differentiable]
fn scaled(x: f64) -> f64 {
    x * x.detach().floor() + f64::signum(x.detach())
}

pub fn main() {
    let (value, [dx]) = sawtooth_grad(2.75).unwrap();
    assert_eq!((value, dx), (2.75f64.fract(), 1.0));

    let (value, [da, db]) = wrap_grad(7.5, 2.0).unwrap();
    assert_eq!(value, wrap(7.5, 2.0));
    assert_eq!((value, da, db), (1.5, 1.0, -3.0));

    let (value, [dx]) = scaled_grad(2.5).unwrap();
    assert_eq!((value, dx), (2.5 * 2.0 + 1.0, 2.0));
}
