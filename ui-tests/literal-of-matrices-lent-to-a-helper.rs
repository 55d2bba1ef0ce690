// Lesson: a literal of rows lent to a helper (`dense([w, v], x)`, `[[a, b], [c, d]]`)
// runs compiled, each row's scalars seeded into a local matrix. A literal whose elements
// are themselves matrices (`[m, n]` of `[[f64; 2]; 2]`s, a cube) is not followed yet: the
// error points at the call. Pass the cube as a parameter of its own, or say
// `#[differentiable(tape)]` to take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn total(t: [[[f64; 2]; 2]; 2]) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            s += t[i][j][0] * t[i][j][1];
        }
    }
    s
}

#[differentiable]
fn cube(m: [[f64; 2]; 2], n: [[f64; 2]; 2]) -> f64 {
    total([m, n])
}

fn main() {
    let _ = cube_grad([[1.0, 2.0], [3.0, 4.0]], [[0.5, 0.25], [1.0, 2.0]]);
}
