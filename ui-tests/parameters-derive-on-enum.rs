// Lesson: a parameter shape has one fixed list of scalars, the same for every value, so
// #[derive(Parameters)] applies to structs only. An enum's variants hold different scalars;
// keep the choice between them as data outside the parameters.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
enum Activation {
    Relu,
    Leaky { slope: f64 },
}

fn main() {}
