// Lesson: a custom derivative rule is one operation on `f64` operands, recorded as one node
// wherever it is called, so it is a free function: the attribute writes items beside it
// (the rule's `static`), which an `impl` block cannot hold.
use scalar_autodiff::differentiable;

struct Curve {
    scale: f64,
}

impl Curve {
    #[differentiable(derivative = bend_slope)]
    fn bend(&self, x: f64) -> f64 {
        self.scale * x.sin()
    }
}

fn bend_slope(x: f64, _value: f64) -> f64 {
    x.cos()
}

fn main() {
    let curve = Curve { scale: 2.0 };
    let _ = curve.bend(1.0);
}
