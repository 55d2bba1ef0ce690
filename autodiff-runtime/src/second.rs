//! Second order on a recorded trace: Hessian-vector products by forward over reverse.
//!
//! After the validated first-order pass, each direction `v` takes two more sweeps over the
//! nodes the output reaches: forward, the tangent of every node along `v` (the sum of its
//! local derivatives times its operands' tangents); then backward, every node's adjoint
//! together with its tangent. An edge with local derivative `d` passes on `ā·d`, and the
//! tangent of that, `ȧ·d + ā·ḋ`, where `ḋ` (the derivative of the local derivative along
//! `v`) comes from the same formula run on [`Dual`]s. The tangents of the variables'
//! adjoints are `H·v`. A Hessian is one such pair of sweeps per variable, on one recording.

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::tape::Tape;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// The nodes from `base` to `output` that the output reaches, and their adjoints.
struct Reached {
    base: usize,
    reached: Vec<bool>,
    adjoints: Vec<f64>,
}

/// The tracked operands of node `index` in slot order, as (slot, tape index).
fn tracked_operands(tape: &Tape, index: u32) -> impl Iterator<Item = (usize, u32)> + '_ {
    (0..tape.node(index).op.arity()).filter_map(move |slot| {
        match (tape.operand_tracked(index, slot), tape.operand(index, slot)) {
            (true, Some(operand)) => Some((slot, operand)),
            _ => None,
        }
    })
}

/// Which nodes the output reaches, with first-order adjoints (the pass already validated
/// them: every number here is finite).
fn reach(tape: &Tape, base: usize, output: u32) -> Reached {
    let len = output as usize + 1 - base;
    let mut reached = vec![false; len];
    let mut adjoints = vec![0.0; len];
    reached[len - 1] = true;
    adjoints[len - 1] = 1.0;
    for index in (base..=output as usize).rev() {
        let local = index - base;
        if !reached[local] {
            continue;
        }
        let index = index as u32;
        for (slot, operand) in tracked_operands(tape, index) {
            let Some(at) = (operand as usize).checked_sub(base) else {
                continue;
            };
            let contribution = adjoints[local] * tape.local_derivative(index, slot);
            adjoints[at] += contribution;
            reached[at] = true;
        }
    }
    Reached {
        base,
        reached,
        adjoints,
    }
}

/// `H·v` for one direction `v` over the first `count` nodes from `base` (the
/// variables), written into `product`.
fn product(
    tape: &Tape,
    reached: &Reached,
    count: usize,
    direction: &[f64],
    product: &mut [f64],
) -> Result<()> {
    let base = reached.base;
    let len = reached.reached.len();
    let mut tangents = vec![0.0; len];
    tangents[..count.min(len)].copy_from_slice(&direction[..count.min(len)]);
    // Forward: every reached operation's tangent; leaves keep their seeds (0 for constants).
    for local in count.min(len)..len {
        if !reached.reached[local] {
            continue;
        }
        let index = (base + local) as u32;
        let mut tangent = 0.0;
        for (slot, operand) in tracked_operands(tape, index) {
            if let Some(at) = (operand as usize).checked_sub(base) {
                tangent += tape.local_derivative(index, slot) * tangents[at];
            }
        }
        if !tangent.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteTangent {
                operation: tape.node(index).op,
                operands: tape.operands_of(index),
                tangent,
            });
        }
        tangents[local] = tangent;
    }
    // Backward: adjoints' tangents.
    let mut seconds = vec![0.0; len];
    for local in (0..len).rev() {
        if !reached.reached[local] {
            continue;
        }
        let index = (base + local) as u32;
        let node = tape.node(index);
        if node.op.arity() == 0 {
            continue;
        }
        let values = tape.operand_values(index);
        let mut operands = values.map(Dual::constant);
        for (slot, operand) in tracked_operands(tape, index) {
            if let Some(at) = (operand as usize).checked_sub(base) {
                operands[slot] = Dual::variable(values[slot], tangents[at]);
            }
        }
        let value = Dual::variable(node.value, tangents[local]);
        let (adjoint, second) = (reached.adjoints[local], seconds[local]);
        for (slot, operand) in tracked_operands(tape, index) {
            let Some(at) = (operand as usize).checked_sub(base) else {
                continue;
            };
            let slope = node.op.slope(slot, operands, value, tape.exponent(index));
            let contribution = second * slope.value + adjoint * slope.tangent;
            let sum = seconds[at] + contribution;
            if let Some(bad) = [slope.tangent, contribution, sum]
                .into_iter()
                .find(|number| !number.is_finite())
            {
                return Err(ScalarAutodiffError::NonFiniteSecondOrder {
                    operation: node.op,
                    operands: tape.operands_of(index),
                    operand: slot,
                    value: bad,
                });
            }
            seconds[at] = sum;
        }
    }
    for (slot, second) in product.iter_mut().zip(&seconds) {
        // Stored as 0 + sum, as gradients are: never -0.0.
        *slot = 0.0 + second;
    }
    Ok(())
}

/// `H·v` for each direction: `directions` and `products` hold one row of `count`
/// scalars per direction.
pub(crate) fn products(
    tape: &Tape,
    base: usize,
    output: u32,
    count: usize,
    directions: &[f64],
    products: &mut [f64],
) -> Result<()> {
    let reached = reach(tape, base, output);
    for (direction, row) in directions.chunks(count).zip(products.chunks_mut(count)) {
        product(tape, &reached, count, direction, row)?;
    }
    Ok(())
}

/// The Hessian over the first `count` nodes from `base`, row-major into `hessian`
/// (`count * count` scalars), exactly symmetric: column `j` is `H·e_j`, and both
/// `h[i][j]` and `h[j][i]` are `(H·e_j)[i] / 2 + (H·e_i)[j] / 2`. Floating-point addition
/// commutes, so the two are the same bits; where the two products differ in their last
/// digits, the entry is their mean (halved first, so that it cannot overflow).
pub(crate) fn hessian(
    tape: &Tape,
    base: usize,
    output: u32,
    count: usize,
    hessian: &mut [f64],
) -> Result<()> {
    let reached = reach(tape, base, output);
    let mut direction = vec![0.0; count];
    let mut columns = vec![0.0; count * count];
    for (j, column) in columns.chunks_mut(count.max(1)).enumerate().take(count) {
        direction[j] = 1.0;
        product(tape, &reached, count, &direction, column)?;
        direction[j] = 0.0;
    }
    for i in 0..count {
        for j in 0..count {
            let mean = columns[j * count + i] * 0.5 + columns[i * count + j] * 0.5;
            hessian[i * count + j] = 0.0 + mean;
        }
    }
    Ok(())
}
