// Lesson: `#[param]` differentiates an `scalar_autodiff::Parameters` shape: a struct with
// `#[derive(scalar_autodiff::Parameters)]`, a slice `&[f64]`, arrays. A tuple has no field names
// and no derive, so its scalars have no declared order: use a struct.
use scalar_autodiff::differentiable;

#[differentiable]
fn loss(#[param] pair: (f64, f64)) -> f64 {
    pair.0 * pair.1
}

fn main() {}
