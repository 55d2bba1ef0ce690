// Lesson: a loop over a parameter array binds each element by name (`w_i` or `&w_i`), and
// `zip` or `enumerate` make pairs. A pattern of another shape cannot name the elements'
// graph nodes.
use scalar_autodiff::differentiable;

#[differentiable]
fn pairs(w: [f64; 4]) -> f64 {
    let mut total = 0.0;
    for [a, b] in w.iter() {
        total += a * b;
    }
    total
}

fn main() {
    let _ = pairs([1.0, 2.0, 3.0, 4.0]);
    let _ = pairs_grad([1.0, 2.0, 3.0, 4.0]);
}
