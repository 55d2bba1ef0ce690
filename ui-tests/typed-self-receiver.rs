// Lesson: a method's receiver is data for #[differentiable]: `&self` or `self` is passed on
// to the generated `_graph` and `_grad` methods as it is. A typed receiver such as
// `self: Box<Self>` is not: write `&self`, or take the value as a parameter.
use scalar_autodiff::differentiable;

struct Model {
    weight: f64,
}

impl Model {
    #[differentiable]
    fn predict(self: Box<Self>, x: f64) -> f64 {
        x * self.weight
    }
}

fn main() {
    let model = Box::new(Model { weight: 1.0 });
    let _ = model.predict(1.5);
}
