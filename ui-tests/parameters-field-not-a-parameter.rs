// Lesson: every field of a #[derive(Parameters)] struct is part of the parameters, so its
// type must be a parameter shape: `f64`, `[f64; K]`, `Vec<f64>` or another derived struct.
// A count such as `steps: usize` carries no gradient; keep it outside the parameters. The
// error is reported once, on the field's type.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
struct Model {
    w: [f64; 3],
    steps: usize,
    b: f64,
}

fn main() {}
