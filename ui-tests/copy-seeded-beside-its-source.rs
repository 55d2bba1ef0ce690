// Lesson: `let mut s = x;` makes `s` the same node as `x` until `s` is assigned. Lent
// together in one array literal (`[[s, 1.0], [x, 0.5]]`), both elements would start from
// that one node's sum in the compiled sweeps, and one would overwrite the other's. The
// sweeps do not follow this yet, so it is a compile error rather than a lost gradient:
// lend a new value (`let s = x * 1.0;`), or say `#[differentiable(tape)]`.
use scalar_autodiff::differentiable;

#[differentiable]
fn linear<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O] {
    let mut out = [0.0; O];
    for o in 0..O {
        for i in 0..I {
            out[o] += w[o][i] * x[i];
        }
    }
    out
}

#[differentiable]
fn mixed(x: f64, v: [f64; 2]) -> f64 {
    let mut s = x;
    let r = linear([[s, 1.0], [x, 0.5]], v);
    s = r[0] + r[1];
    s
}

fn main() {
    let _ = mixed_grad(0.7, [0.3, -0.1]);
}
