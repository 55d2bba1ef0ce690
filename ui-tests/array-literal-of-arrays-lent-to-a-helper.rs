// Lesson: an array literal lent to a helper (`energy(&[w, v])`) becomes a local array in the
// compiled sweeps whose elements are the rows' own scalars. Two scalars of one array
// lent together share their adjoints in the call, and only a helper whose differentiated
// parameters are `f64`s or arrays of them (not a slice, as here) takes shared adjoints:
// the error points at the call. Lend the rows as a field of rows (`energy(&p.rows)`),
// pass copies made by an operation, or say `#[differentiable(tape)]` to take the tape
// knowingly.
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
fn paired(w: [f64; 2], v: [f64; 2]) -> f64 {
    energy(&[w, v]) + w[0]
}

fn main() {
    let _ = paired_grad([0.5, 1.0], [0.25, 2.0]);
}
