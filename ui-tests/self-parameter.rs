// Lesson: #[differentiable] differentiates free functions of f64 parameters. A `self`
// receiver is not an f64 that can become a graph variable: make the method a free function
// and pass the values it needs (for example the model's weights) as f64 parameters.
use autodiff::differentiable;

struct Model {
    weight: f64,
}

impl Model {
    #[differentiable]
    fn predict(&self, x: f64) -> f64 {
        x * 2.0
    }
}

fn main() {
    let model = Model { weight: 1.0 };
    let _ = model.weight;
    let _ = model.predict(1.5);
}
