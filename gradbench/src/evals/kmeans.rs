//! `kmeans`: the cost of `k` centroids for `n` points in `d` dimensions (each point's
//! squared distance to its closest centroid, summed), and `dir`, a Newton step's
//! direction: the gradient over the Hessian's diagonal, element by element (the Hessian
//! of this cost is diagonal: a coordinate of one centroid meets no other).

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, rows, shaped, timed};
use crate::protocol::{measure, Evaluated, Runs, ToolError};

/// The cost, as the C++ reference computes it (each distance a sum of squared
/// differences in coordinate order, the closest kept by `min`), `centroids` and `points`
/// flat in row-major order.
#[differentiable]
pub fn cost(#[param] centroids: &[f64], points: &[f64], d: usize) -> f64 {
    let k = centroids.len() / d;
    let n = points.len() / d;
    let mut cost = 0.0;
    for i in 0..n {
        let mut closest = 0.0;
        for j in 0..k {
            let mut distance = 0.0;
            for l in 0..d {
                let difference = points[i * d + l] - centroids[j * d + l];
                distance += difference * difference;
            }
            // (The reference starts from infinity: the first distance is the same start.)
            closest = if j == 0 {
                distance
            } else {
                closest.min(distance)
            };
        }
        cost += closest;
    }
    cost
}

/// The gradient over the Hessian's diagonal: one Hessian-vector product along all ones
/// (`cost_hvp`, forward over reverse), which for a diagonal Hessian is its diagonal.
pub fn dir(centroids: &[f64], points: &[f64], d: usize) -> Result<Vec<f64>, ToolError> {
    let ones = vec![1.0; centroids.len()];
    let (_, gradient, diagonal) = cost_hvp(centroids, points, d, ones)?;
    Ok(gradient.iter().zip(&diagonal).map(|(g, h)| g / h).collect())
}

#[derive(Deserialize)]
struct Input {
    points: Vec<Vec<f64>>,
    centroids: Vec<Vec<f64>>,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `cost` or `dir`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(function, &["cost", "dir"], input, |input: Input| {
        let Input {
            points,
            centroids,
            runs,
        } = input;
        let d = centroids.first().map_or(0, Vec::len);
        if d == 0
            || points.is_empty()
            || !shaped(&points, points.len(), d)
            || !shaped(&centroids, centroids.len(), d)
        {
            return Err(ToolError::Input(
                "points and centroids of one dimension, at least one of each".into(),
            ));
        }
        let (points, flat): (Vec<f64>, Vec<f64>) = (points.concat(), centroids.concat());
        match function {
            "cost" => timed(runs, || Ok(cost(&flat, &points, d))),
            // (The rows are made after the runs: the timings are the computation's.)
            _ => {
                let (output, timings) = measure(runs, || dir(&flat, &points, d))?;
                Ok(Evaluated {
                    output: rows(&output, d).into(),
                    timings,
                })
            }
        }
    })
}
