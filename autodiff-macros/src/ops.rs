//! The `f64` methods the runtime can record, by the shape of their operands.

/// How a supported method is called and recorded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Shape {
    /// `x.exp()`: the receiver only.
    Unary,
    /// `x.powf(y)`: the receiver and one `f64` operand.
    Binary,
    /// `x.powi(3)`: the receiver and an `i32` exponent that is not a graph node.
    Powi,
    /// `x.mul_add(a, b)`: the receiver and two `f64` operands.
    MulAdd,
    /// `x.detach()`: a stop-gradient (method form only).
    Detach,
    /// `x.floor()` and its kin: flat almost everywhere, accepted only on a detached value,
    /// where the result is a constant.
    Stepwise,
}

impl Shape {
    /// The number of `f64`-or-exponent operands, the receiver included.
    pub(crate) fn operands(self) -> usize {
        match self {
            Shape::Unary | Shape::Detach | Shape::Stepwise => 1,
            Shape::Binary | Shape::Powi => 2,
            Shape::MulAdd => 3,
        }
    }

    /// A call of this shape, for messages.
    pub(crate) fn example(self, name: &str) -> String {
        match self {
            Shape::Unary | Shape::Detach | Shape::Stepwise => format!("x.{name}()"),
            Shape::Binary => format!("x.{name}(y)"),
            Shape::Powi => "x.powi(3)".to_owned(),
            Shape::MulAdd => "x.mul_add(a, b)".to_owned(),
        }
    }
}

/// Unary operations of the runtime, each named as the `f64` method that computes its value.
const UNARY: &[&str] = &[
    "recip", "sqrt", "cbrt", "exp", "exp2", "exp_m1", "ln", "ln_1p", "log2", "log10", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs",
];

/// Binary operations of the runtime, named as their `f64` methods.
const BINARY: &[&str] = &["powf", "log", "atan2", "max", "min", "hypot"];

/// Methods with derivative 0 almost everywhere and jumps elsewhere.
const STEPWISE: &[&str] = &[
    "floor",
    "ceil",
    "round",
    "round_ties_even",
    "trunc",
    "fract",
    "signum",
];

/// Every method the rewrite records, for messages.
pub(crate) const SUPPORTED: &str = "exp, exp2, exp_m1, ln, ln_1p, log, log2, log10, sqrt, cbrt, \
     powi, powf, recip, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, \
     atanh, abs, max, min, hypot, mul_add";

/// The shape of the method `name`, or `None` if the rewrite does not know it.
pub(crate) fn shape(name: &str) -> Option<Shape> {
    if UNARY.contains(&name) {
        Some(Shape::Unary)
    } else if BINARY.contains(&name) {
        Some(Shape::Binary)
    } else if STEPWISE.contains(&name) {
        Some(Shape::Stepwise)
    } else {
        match name {
            "powi" => Some(Shape::Powi),
            "mul_add" => Some(Shape::MulAdd),
            "detach" => Some(Shape::Detach),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_operation_has_a_shape() {
        for name in SUPPORTED.split(", ") {
            let shape = shape(name);
            assert!(
                matches!(
                    shape,
                    Some(Shape::Unary | Shape::Binary | Shape::Powi | Shape::MulAdd)
                ),
                "{name}: {shape:?}"
            );
        }
        assert_eq!(
            SUPPORTED.split(", ").count(),
            UNARY.len() + BINARY.len() + 2
        );
    }
}
