// Lesson: no syntax tells a struct of weights from a struct of data, and a wrong guess
// would silently train the wrong model. `f64` and arrays of `f64` are differentiated;
// references to slices and arrays, integers, `bool`, `char` and `&str` are data. Any other
// type says which it is: `#[param]` to differentiate it (it must implement
// `scalar_autodiff::Parameters`), `#[constant]` to pass it as data.
use scalar_autodiff::differentiable;

pub struct Layer {
    pub w: [f64; 2],
}

#[differentiable]
fn loss(layer: &Layer, pair: (f64, f64), history: Vec<f64>, bias: f64) -> f64 {
    layer.w[0] * pair.0 + history[0] * bias
}

fn main() {}
