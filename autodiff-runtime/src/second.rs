//! Second order on a recorded trace: Hessian-vector products by forward over reverse.
//!
//! After the validated first-order pass, one walk down the nodes the output reaches keeps,
//! per reached node, its adjoint `ā`, the local derivative `d_k` of each tracked operand
//! and the local second derivatives `∂d_k/∂x_j` (the same table's formulas run on
//! [`Dual`]s: no second table). Each direction `v` then takes two cheap sweeps: forward,
//! every node's tangent `ṫ = Σ d_k ṫ_k`; backward, every adjoint's tangent, an edge
//! passing on `ȧ·d_k + ā·ḋ_k` with `ḋ_k = Σ_j ∂d_k/∂x_j ṫ_j`. The variables' adjoint
//! tangents are `H·v`. A Hessian is one pair of sweeps per variable on one recording.

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::operation::ScalarOperation;
use crate::tape::Tape;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// A reached operation with its tracked operands.
struct Node {
    /// The node's place from the trace's base.
    at: usize,
    /// Its tracked operands: how many, their places, their local derivatives, and the
    /// local second derivatives `second[k][j] = ∂d_k/∂x_j` among them.
    len: usize,
    parents: [usize; 3],
    slots: [usize; 3],
    slopes: [f64; 3],
    second: [[f64; 3]; 3],
}

/// What every direction's sweeps share.
struct Recording {
    /// Reached operations, from the output down.
    nodes: Vec<Node>,
    /// First-order adjoints by place.
    adjoints: Vec<f64>,
}

/// Walks down from `output`: the reached operations with their first and second local
/// derivatives, and the first-order adjoints (the validated pass made every first-order
/// number here finite).
///
/// The recording covers every place up to the output and at least the `count` variables:
/// an output that is a variable, or made before the last variable (`fn f(x, y) { x }`),
/// precedes places the sweeps still read and write.
fn record(tape: &Tape, base: usize, output: u32, count: usize) -> Result<Recording> {
    let out = output as usize - base;
    let len = (out + 1).max(count);
    let mut reached = vec![false; len];
    let mut adjoints = vec![0.0; len];
    reached[out] = true;
    adjoints[out] = 1.0;
    let mut nodes = Vec::new();
    for at in (0..=out).rev() {
        let index = (base + at) as u32;
        let op = tape.node(index).op;
        if !reached[at] || op.arity() == 0 {
            continue;
        }
        let mut node = Node {
            at,
            len: 0,
            parents: [0; 3],
            slots: [0; 3],
            slopes: [0.0; 3],
            second: [[0.0; 3]; 3],
        };
        for slot in 0..op.arity() {
            let parent = match (tape.operand_tracked(index, slot), tape.operand(index, slot)) {
                (true, Some(operand)) => (operand as usize).checked_sub(base),
                _ => None,
            };
            if let Some(parent) = parent {
                let slope = tape.local_derivative(index, slot);
                adjoints[parent] += adjoints[at] * slope;
                reached[parent] = true;
                node.parents[node.len] = parent;
                node.slots[node.len] = slot;
                node.slopes[node.len] = slope;
                node.len += 1;
            }
        }
        seconds(tape, index, &mut node).inspect_err(|_| tape.blame(index))?;
        nodes.push(node);
    }
    Ok(Recording { nodes, adjoints })
}

/// The local second derivatives of `node`: for each tracked operand `j`, the formulas run
/// on duals whose only tangent is `x_j`'s (and the result's, `d_j`).
fn seconds(tape: &Tape, index: u32, node: &mut Node) -> Result<()> {
    let op = tape.node(index).op;
    let values = tape.operand_values(index);
    let value = tape.node(index).value;
    let exponent = tape.exponent(index);
    let rule = match op {
        ScalarOperation::Custom(custom) => Some(custom.rule().ok_or(
            ScalarAutodiffError::NoSecondDerivative {
                operation: custom.name(),
                location: None,
            },
        )?),
        _ => None,
    };
    for j in 0..node.len {
        let mut operands = values.map(Dual::constant);
        operands[node.slots[j]] = Dual::variable(values[node.slots[j]], 1.0);
        let result = Dual::variable(value, node.slopes[j]);
        // A custom rule's slopes, differentiated through its slope function's body.
        let custom = match rule {
            Some(rule) => Some(rule.dual_slopes(operands, result)?),
            None => None,
        };
        for k in 0..node.len {
            let second = match custom {
                Some(slopes) => slopes[node.slots[k]].tangent,
                None => dual_slope(op, node.slots[k], operands, result, exponent).tangent,
            };
            if !second.is_finite() {
                return Err(ScalarAutodiffError::NonFiniteSecondOrder {
                    operation: op,
                    operands: tape.operands_of(index),
                    operand: node.slots[k],
                    value: second,
                    location: None,
                });
            }
            node.second[k][j] = second;
        }
    }
    Ok(())
}

/// [`ScalarOperation::slope`] on duals, dispatched once: in each arm the operation is a
/// constant, so only its own formula is compiled there. Through one generic dispatch,
/// LLVM computed `sin`, `cos` and `ln` for every node before choosing the formula (the
/// math intrinsics are speculatable), a third of the Hessian's time.
#[inline(never)]
fn dual_slope(op: ScalarOperation, slot: usize, a: [Dual; 3], value: Dual, exponent: i32) -> Dual {
    macro_rules! each {
        ($($name:ident)*) => {
            match op {
                $(ScalarOperation::$name => ScalarOperation::$name.slope(slot, a, value, exponent),)*
                // A custom rule's come from its slope function (see `seconds`).
                ScalarOperation::Custom(_) => Dual::constant(f64::NAN),
            }
        };
    }
    each! {
        Variable Constant Detached Add Subtract Multiply Divide Negate Copy Recip Powi Powf Sqrt
        Cbrt Exp Exp2 ExpM1 Ln Ln1p Log Log2 Log10 Sin Cos Tan Asin Acos Atan Atan2 Sinh Cosh
        Tanh Asinh Acosh Atanh Abs Max Min Hypot MulAdd
    }
}

/// How many directions one pair of sweeps carries: each node's numbers are loaded once
/// for all of them, and the arithmetic over directions is contiguous (vectorized).
const BLOCK: usize = 8;

/// `H·v` for up to `B` directions `v` (rows of `count` scalars; missing ones are 0)
/// over the first `count` places (the variables), into the rows of `products`.
/// `tangents` and `seconds` are scratch of `B` times the recording's length.
///
/// The sweeps run unchecked: a non-finite number stays in the scratch it was stored in (a
/// sum with infinity or NaN never becomes finite again), so one scan at the end decides,
/// and only then are the sweeps repeated with a check at every step to name the
/// operation.
fn block<const B: usize>(
    tape: &Tape,
    base: usize,
    recording: &Recording,
    (count, directions): (usize, &[f64]),
    products: &mut [f64],
    (tangents, seconds): (&mut [f64], &mut [f64]),
) -> Result<()> {
    sweeps::<B, false>(
        tape,
        base,
        recording,
        (count, directions),
        (tangents, seconds),
    )?;
    if !finite::<B>(tangents) || !finite::<B>(seconds) {
        sweeps::<B, true>(
            tape,
            base,
            recording,
            (count, directions),
            (tangents, seconds),
        )?;
    }
    for (row, product) in products.chunks_mut(count.max(1)).enumerate() {
        for (variable, slot) in product.iter_mut().enumerate() {
            // Stored as 0 + sum, as gradients are: never -0.0.
            *slot = 0.0 + seconds[variable * B + row];
        }
    }
    Ok(())
}

/// Whether every number of `numbers` (a multiple of [`B`] long) is finite: `x * 0` is
/// 0 for finite `x` and NaN otherwise, summed lane by lane so that it vectorizes.
fn finite<const B: usize>(numbers: &[f64]) -> bool {
    let mut lanes = [0.0; B];
    for chunk in numbers.chunks_exact(B) {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane += value * 0.0;
        }
    }
    lanes.iter().all(|lane| *lane == 0.0)
}

/// The two sweeps of [`block`]; `CHECKED` names the first non-finite number. Place `p`'s
/// numbers for the block's directions are `[p * B .. (p + 1) * B]`.
#[inline(always)]
fn sweeps<const B: usize, const CHECKED: bool>(
    tape: &Tape,
    base: usize,
    recording: &Recording,
    (count, directions): (usize, &[f64]),
    (tangents, seconds): (&mut [f64], &mut [f64]),
) -> Result<()> {
    tangents.fill(0.0);
    seconds.fill(0.0);
    for (row, direction) in directions.chunks(count.max(1)).enumerate().take(B) {
        for (variable, &value) in direction.iter().enumerate().take(count) {
            if let Some(slot) = tangents.get_mut(variable * B + row) {
                *slot = value;
            }
        }
    }
    let lanes = |place: usize| place * B..(place + 1) * B;
    // Forward, oldest first: every reached operation's tangents.
    for node in recording.nodes.iter().rev() {
        let mut tangent = [0.0; B];
        for (slope, &parent) in node.slopes.iter().zip(&node.parents).take(node.len) {
            for (lane, from) in tangent.iter_mut().zip(&tangents[lanes(parent)]) {
                *lane += slope * from;
            }
        }
        if CHECKED {
            if let Some(&bad) = tangent.iter().find(|v| !v.is_finite()) {
                let index = (base + node.at) as u32;
                tape.blame(index);
                return Err(ScalarAutodiffError::NonFiniteTangent {
                    operation: tape.node(index).op,
                    operands: tape.operands_of(index),
                    tangent: bad,
                    location: None,
                });
            }
        }
        tangents[lanes(node.at)].copy_from_slice(&tangent);
    }
    // Backward, from the output: the adjoints' tangents.
    for node in &recording.nodes {
        let adjoint = recording.adjoints[node.at];
        let mut second = [0.0; B];
        second.copy_from_slice(&seconds[lanes(node.at)]);
        for k in 0..node.len {
            let mut contribution = [0.0; B];
            for (lane, upstream) in contribution.iter_mut().zip(&second) {
                *lane = upstream * node.slopes[k];
            }
            for (j, &parent) in node.parents.iter().enumerate().take(node.len) {
                let weight = adjoint * node.second[k][j];
                for (lane, tangent) in contribution.iter_mut().zip(&tangents[lanes(parent)]) {
                    *lane += weight * tangent;
                }
            }
            let parent = node.parents[k];
            for (sum, lane) in seconds[lanes(parent)].iter_mut().zip(&contribution) {
                *sum += lane;
            }
            if CHECKED {
                let sums = &seconds[lanes(parent)];
                if let Some(&bad) = contribution.iter().chain(sums).find(|v| !v.is_finite()) {
                    let index = (base + node.at) as u32;
                    tape.blame(index);
                    return Err(ScalarAutodiffError::NonFiniteSecondOrder {
                        operation: tape.node(index).op,
                        operands: tape.operands_of(index),
                        operand: node.slots[k],
                        value: bad,
                        location: None,
                    });
                }
            }
        }
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
    let recording = record(tape, base, output, count)?;
    // One direction (`name_hvp`) takes single-lane sweeps; more go [`BLOCK`] at a time.
    if directions.len() <= count {
        return blocks::<1>(tape, base, &recording, (count, directions), products);
    }
    blocks::<BLOCK>(tape, base, &recording, (count, directions), products)
}

/// [`block`] over every `B` rows of `directions`.
fn blocks<const B: usize>(
    tape: &Tape,
    base: usize,
    recording: &Recording,
    (count, directions): (usize, &[f64]),
    products: &mut [f64],
) -> Result<()> {
    let len = recording.adjoints.len() * B;
    let (mut tangents, mut seconds) = (vec![0.0; len], vec![0.0; len]);
    let rows = count.max(1) * B;
    for (directions, products) in directions.chunks(rows).zip(products.chunks_mut(rows)) {
        let scratch = (tangents.as_mut_slice(), seconds.as_mut_slice());
        block::<B>(
            tape,
            base,
            recording,
            (count, directions),
            products,
            scratch,
        )?;
    }
    Ok(())
}

/// The Hessian over the first `count` places from `base`, row-major into `hessian`
/// (`count * count` scalars): column `j` is `H·e_j`, assembled exactly symmetric by
/// [`symmetrize`].
pub(crate) fn hessian(
    tape: &Tape,
    base: usize,
    output: u32,
    count: usize,
    hessian: &mut [f64],
) -> Result<()> {
    let mut identity = vec![0.0; count * count];
    for j in 0..count {
        identity[j * count + j] = 1.0;
    }
    let mut columns = vec![0.0; count * count];
    products(tape, base, output, count, &identity, &mut columns)?;
    symmetrize(&columns, count, hessian);
    Ok(())
}

/// The Hessian (`count` by `count`, row-major, into `hessian`) from its columns
/// `columns[j * count..]` = `H e_j`, exactly symmetric: both `h[i][j]` and `h[j][i]` are
/// `(H e_j)[i] / 2 + (H e_i)[j] / 2`. Floating-point addition commutes, so the two are
/// the same bits; where the two products differ in their last digits, the entry is their
/// mean (halved first, so that it cannot overflow), stored as `0 + mean`: never -0.0.
fn symmetrize(columns: &[f64], count: usize, hessian: &mut [f64]) {
    for i in 0..count {
        for j in 0..count {
            let (Some(&below), Some(&above)) =
                (columns.get(j * count + i), columns.get(i * count + j))
            else {
                continue;
            };
            if let Some(slot) = hessian.get_mut(i * count + j) {
                *slot = 0.0 + (below * 0.5 + above * 0.5);
            }
        }
    }
}
