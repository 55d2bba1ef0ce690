// Lesson: the compiled sweeps index `a[k]` going back by the number `k` had when the
// statement ran, kept for the reverse. A statement that also changes `k` inside its own
// operands (`{ k += 1; 0.0 }`) reads two different `k`s, which one kept number cannot
// follow, so it is a compile error rather than a gradient written to the wrong element:
// move `k += 1;` into a statement of its own. The same holds for an element lent to a
// helper beside an argument that changes its index.
use scalar_autodiff::differentiable;

#[differentiable]
fn shifted(x: f64, w: [f64; 3]) -> f64 {
    let mut a = [0.0f64; 3];
    let mut k = 0;
    while k < 2 {
        a[k] = w[k] * x + {
            k += 1;
            0.0
        };
    }
    a[0] + 10.0 * a[1] + 100.0 * a[2]
}

#[differentiable]
fn scaled(v: f64, k: usize) -> f64 {
    v * k as f64
}

#[differentiable]
fn lent(x: f64, w: [f64; 3]) -> f64 {
    let mut total = 0.0;
    let mut k = 0;
    while k < 2 {
        total += scaled(w[k] * x, k) + scaled(w[k], {
            k += 1;
            k
        });
    }
    total
}

fn main() {
    let _ = shifted_grad(1.0, [1.0, 2.0, 3.0]);
    let _ = lent_grad(1.0, [1.0, 2.0, 3.0]);
}
