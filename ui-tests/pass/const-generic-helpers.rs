// Sizes can be generic: one `dense` layer serves every shape (`const I: usize, const O:
// usize`), each call infers them from its arguments, and a direct call takes them from
// the arguments or a turbofish. A generic function's `name_grad` gives each parameter's
// gradient in its own shape. A helper's result can be indexed as it is (`dense(w, h)[0]`).
#![deny(warnings)]

use scalar_autodiff::differentiable;

/// `w x`: `O` outputs from `I` inputs.
#[differentiable]
pub fn dense<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut out = [0.0; O];
    for o in 0..O {
        for i in 0..I {
            out[o] += w[o][i] * x[i];
        }
    }
    out
}

/// The sum of squares of any number of values.
#[differentiable]
pub fn sum_sq<const N: usize>(x: [f64; N]) -> f64 {
    let mut total = 0.0;
    for v in x.iter() {
        total += v * v;
    }
    total
}

/// Two layers of different shapes through the same helper.
#[differentiable]
fn net(w1: [[f64; 3]; 2], w2: [[f64; 2]; 1], x: [f64; 3]) -> f64 {
    let h = dense(w1, x);
    dense(w2, h)[0] + 0.5 * sum_sq(h)
}

/// Checks the gradients (`pub` so that `tests/sweeps/guard.rs` can run it too).
pub fn main() {
    let w1 = [[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]];
    let w2 = [[3.0, -1.0]];
    let x = [1.0, 2.0, 0.5];
    // h = [2, 1.5], y = 3 * 2 - 1.5 = 4.5, value = 4.5 + 0.5 * (4 + 2.25)
    let (value, gradient) = net_grad(w1, w2, x).unwrap();
    assert_eq!(value, 7.625);
    assert_eq!(value, net(w1, w2, x));
    // d/dh = w2[0] + h = [5, 0.5]; d/dw1[o][i] = d/dh[o] * x[i]; d/dw2 = h
    assert_eq!(&gradient[..6], &[5.0, 10.0, 2.5, 0.5, 1.0, 0.25]);
    assert_eq!(&gradient[6..8], &[2.0, 1.5]);
    // d/dx = w1^T d/dh
    assert_eq!(&gradient[8..], &[5.0, 0.5, 9.5]);

    // A generic function called directly: sizes inferred, or given.
    let (total, slope) = sum_sq_grad([1.0, -2.0]).unwrap();
    assert_eq!((total, slope), (5.0, [2.0, -4.0]));
    assert_eq!(sum_sq_grad::<3>([1.0, 1.0, 1.0]).unwrap(), (3.0, [2.0; 3]));
}
