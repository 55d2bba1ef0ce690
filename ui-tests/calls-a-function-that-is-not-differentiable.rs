// Lesson: an attribute sees only the tokens of the function it is attached to, so a call
// with tracked values builds into the graph only if the callee is `#[differentiable]` too:
// the call goes to its generated `differentiable_helper`. Here `helper` is a plain function,
// so rustc cannot find `differentiable_helper`. Put `#[differentiable]` on `helper` (or
// write its math inline); a plain function of data alone may still be called freely. (A
// `#[differentiable]` helper imported by name needs the attribute on its `use` too,
// `#[differentiable] use crate::layers::helper;`, which imports `differentiable_helper`.)
use scalar_autodiff::differentiable;

fn helper(v: f64) -> f64 {
    v * v
}

#[differentiable]
fn outer(x: f64) -> f64 {
    helper(x) + 1.0
}

fn main() {
    let _ = helper(1.0);
    let _ = outer(1.5);
    let _ = outer_grad(1.5);
}
