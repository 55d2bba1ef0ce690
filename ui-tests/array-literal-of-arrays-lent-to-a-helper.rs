// Lesson: an array literal lent to a helper (`energy(&[w, w])`) becomes a local array in the
// compiled sweeps, each element a scalar of its own. An element that is itself an array
// (here `w`, twice) is not followed yet, so the error points at the call that would run on
// the tape: lend the rows as a field of rows (`energy(&p.rows)`), grow them with `push`,
// or say `#[differentiable(tape)]` to take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn energy(#[param] rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        total += row[0] * row[1].cos();
    }
    total
}

#[differentiable]
fn paired(w: [f64; 2]) -> f64 {
    energy(&[w, w]) + w[0]
}

fn main() {
    let _ = paired_grad([0.5, 1.0]);
}
