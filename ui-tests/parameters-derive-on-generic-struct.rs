// Lesson: #[derive(Parameters)] needs concrete field types, so that the struct's gradient is
// a value of the struct itself. A type parameter leaves the shape open; a const generic for
// a size is fine: `struct Layer<const N: usize> { w: [f64; N] }`.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
struct Layer<T> {
    w: T,
    b: f64,
}

fn main() {}
