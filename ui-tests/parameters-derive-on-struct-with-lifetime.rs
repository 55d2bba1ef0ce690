// Lesson: parameters own their scalars, so that an optimizer step can update them and a
// gradient can be a value of the struct. A borrowed field cannot; own the values
// (`Vec<f64>`) and pass borrowed data to the function as a separate argument.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
struct Borrowed<'a> {
    w: &'a [f64],
}

fn main() {}
