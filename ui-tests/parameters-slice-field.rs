// Lesson: a slice has no size known at compile time, but a struct's gradient is a value of
// the struct itself, so every field of a #[derive(Parameters)] struct must be sized. Own the
// scalars in a `Vec<f64>`, or write the length in the type: `[f64; K]`.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
struct Weights {
    scale: f64,
    values: [f64],
}

fn main() {}
