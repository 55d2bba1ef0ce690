//! Forward mode on several tangents at once: a value with `K` tangents, the number of
//! `name_jvps`. One sweep over the body computes each operation's value, local
//! derivatives and checks once, and its `K` tangents in a loop the compiler vectorizes:
//! a Jacobian with many columns costs a few sweeps, not one per column.

use crate::dual::{refused, Dual};
use crate::error::ScalarAutodiffError;
use crate::operation::ScalarOperation;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// A value, its directional derivatives along `K` tangents, and whether it depends on a
/// differentiated input at all (see [`Dual`]).
///
/// Hidden (`__private`): generated code makes and reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lanes<const K: usize> {
    /// The primal value.
    pub value: f64,
    /// The directional derivatives, one a tangent.
    pub tangents: [f64; K],
    /// Whether some differentiated input reaches it: its local derivatives are then
    /// checked, whatever the tangents.
    pub tracked: bool,
}

impl<const K: usize> Lanes<K> {
    /// A constant: no tangents, not tracked.
    #[inline]
    pub fn constant(value: f64) -> Self {
        Lanes {
            value,
            tangents: [0.0; K],
            tracked: false,
        }
    }

    /// A differentiated input with its tangents.
    #[inline]
    pub fn variable(value: f64, tangents: [f64; K]) -> Self {
        Lanes {
            value,
            tangents,
            tracked: true,
        }
    }

    /// Tangent `lane` as a [`Dual`] (for an error's report and for custom rules).
    #[inline]
    fn lane(&self, lane: usize) -> Dual {
        Dual {
            value: self.value,
            tangent: self.tangents[lane],
            tracked: self.tracked,
        }
    }

    /// `op` on `a` with the tangents of the chain rule, checked as [`Dual`]'s are: a
    /// non-finite value, a tracked operand's non-finite local derivative or a non-finite
    /// tangent in any lane is an error naming the operation. Always inlined, as
    /// `Dual::checked` is, so that its `match`es fold to the caller's operation.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn checked(op: ScalarOperation, a: [&Self; 3], exponent: i32) -> Result<Self> {
        // (At least one lane: an error reports one, and a custom rule runs once a lane.)
        const { assert!(K > 0) };
        let primals = a.map(|operand| operand.value);
        let value = op.apply(primals, exponent);
        let mut slopes = [0.0; 3];
        let mut tangents = [0.0; K];
        let mut tracked = false;
        for slot in 0..op.arity() {
            if a[slot].tracked {
                let slope = op.slope(slot, primals, value, exponent);
                slopes[slot] = slope;
                for (tangent, along) in tangents.iter_mut().zip(&a[slot].tangents) {
                    *tangent += slope * along;
                }
                tracked = true;
            }
        }
        // A non-finite number has every exponent bit set: or-ing that test over the lanes
        // checks them all without a branch a lane (integer code the compiler vectorizes).
        const EXPONENT: u64 = 0x7ff0_0000_0000_0000;
        let probe = tangents.iter().fold(0u64, |bad, t| {
            bad | u64::from(t.to_bits() & EXPONENT == EXPONENT)
        });
        if value.is_finite() && probe == 0 {
            return Ok(Lanes {
                value,
                tangents,
                tracked,
            });
        }
        let lane = tangents.iter().position(|t| !t.is_finite()).unwrap_or(0);
        let out = Dual {
            value,
            tangent: tangents.get(lane).copied().unwrap_or(0.0),
            tracked,
        };
        let duals = a.map(|operand| operand.lane(lane.min(K.saturating_sub(1))));
        Err(refused(op, duals, exponent, out, slopes).at(std::panic::Location::caller()))
    }

    /// A custom rule on lanes: the rule's forward mode once a lane.
    pub(crate) fn custom(
        rule: &'static crate::custom::CustomRule,
        operands: &[&Self],
    ) -> Result<Self> {
        const { assert!(K > 0) };
        let mut out = Lanes::constant(0.0);
        for lane in 0..K {
            let duals: Vec<Dual> = operands.iter().map(|o| o.lane(lane)).collect();
            let refs: Vec<&Dual> = duals.iter().collect();
            let dual = crate::custom::forward(rule, &refs)?;
            out.value = dual.value;
            out.tangents[lane] = dual.tangent;
            out.tracked = dual.tracked;
        }
        Ok(out)
    }
}

/// The value (a primal read in data code).
impl<const K: usize> From<Lanes<K>> for f64 {
    #[inline(always)]
    fn from(lanes: Lanes<K>) -> f64 {
        lanes.value
    }
}

/// Runs a generated body on [`Lanes`]: the backend of `name_jvps`. Nothing is recorded.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForwardLanes<const K: usize>;

/// How many tangents one sweep of `name_jvps` carries.
pub const LANES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane of an operation equals [`Dual`]'s tangent along that lane's direction,
    /// bit for bit, and a non-finite lane is the error `Dual` gives for it.
    #[test]
    fn each_lane_is_duals_tangent() {
        use ScalarOperation as Op;
        let cases: &[(Op, [f64; 3])] = &[
            (Op::Add, [0.3, -1.2, 0.0]),
            (Op::Multiply, [0.3, -1.2, 0.0]),
            (Op::Divide, [0.3, -1.2, 0.0]),
            (Op::Powf, [1.3, 0.7, 0.0]),
            (Op::Atan2, [0.4, -0.9, 0.0]),
            (Op::MulAdd, [0.4, -0.9, 1.5]),
            (Op::Sin, [0.4, 0.0, 0.0]),
            (Op::Tanh, [0.4, 0.0, 0.0]),
        ];
        let directions = [[0.7, -0.4, 0.25], [0.0, 1.0, 0.0], [2.0, 0.5, -3.0]];
        for &(op, at) in cases {
            let lanes = [0, 1, 2].map(|slot| {
                Lanes::<3>::variable(at[slot], directions.map(|direction| direction[slot]))
            });
            let got = Lanes::checked(op, [&lanes[0], &lanes[1], &lanes[2]], 0).unwrap();
            for (lane, direction) in directions.iter().enumerate() {
                let duals = [0, 1, 2].map(|slot| Dual::variable(at[slot], direction[slot]));
                let dual = Dual::checked(op, duals, 0).unwrap();
                assert_eq!(got.value.to_bits(), dual.value.to_bits(), "{op}");
                assert_eq!(got.tangents[lane].to_bits(), dual.tangent.to_bits(), "{op}");
            }
        }
        // ln at 0: an infinite value, refused whatever the lanes.
        let zero = Lanes::<4>::variable(0.0, [0.0, 1.0, 0.0, 0.0]);
        let none = Lanes::constant(0.0);
        let error = Lanes::checked(Op::Ln, [&zero, &none, &none], 0).unwrap_err();
        assert_eq!(error.kind(), "non-finite-result");
        // sqrt at 0: a finite value with an infinite slope, refused even where every
        // tangent is 0 (infinity times 0 is NaN in each lane), the error `Dual` gives.
        let still = Lanes::<4>::variable(0.0, [0.0; 4]);
        let error = Lanes::checked(Op::Sqrt, [&still, &none, &none], 0).unwrap_err();
        let dual = Dual::variable(0.0, 0.0);
        let zero_dual = Dual::constant(0.0);
        let expected = Dual::checked(Op::Sqrt, [dual, zero_dual, zero_dual], 0).unwrap_err();
        assert_eq!(error.kind(), "non-finite-slope");
        // (The same words; each at its own line of this test.)
        let words = |error: ScalarAutodiffError| {
            let text = error.to_string();
            text.split(" at ").next().map(str::to_owned)
        };
        assert_eq!(words(error), words(expected));
        // A tangent that overflows in one lane only.
        let big = Lanes::<4>::variable(2.0, [1.0, f64::MAX, 0.0, 1.0]);
        let error = Lanes::checked(Op::Multiply, [&big, &big, &none], 0).unwrap_err();
        assert_eq!(error.kind(), "non-finite-tangent");
    }
}
