// Lesson: a union holds one of its fields at a time and does not record which, so there is
// no fixed list of scalars for #[derive(Parameters)] to walk. Use a struct.
use scalar_autodiff::Parameters;

#[derive(Parameters)]
union Bits {
    value: f64,
    raw: u64,
}

fn main() {}
