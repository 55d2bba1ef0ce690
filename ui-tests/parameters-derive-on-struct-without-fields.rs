// Lesson: the parameters of a struct are the scalars of its fields, so a struct without
// fields has nothing to differentiate. Each of these is rejected: a unit struct, empty
// braces and empty parentheses.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
struct Marker;

#[derive(Parameters)]
struct Empty {}

#[derive(Parameters)]
struct Nothing();

fn main() {}
