//! `ba`: bundle adjustment. Each of `p` observations projects a 3-D point through a
//! camera (a Rodrigues rotation, a translation, a perspective division, a radial
//! distortion, a focal length and a principal point: 11 numbers) and compares it with
//! the observed feature, weighted by `w`; each weight has its own error `1 - w²`. The
//! jacobian is sparse: each observation's two residuals depend on its camera, its point
//! and its weight alone (15 columns), each weight error on its weight.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::{json, Value};

use super::dispatch;
use crate::protocol::{measure, Evaluated, Runs, ToolError};

/// A camera's numbers: rotation (3), centre (3), focal length, principal point (2),
/// radial distortion (2).
pub const CAMERA: usize = 11;

/// One observation's two residuals, as the C++ reference computes them (its
/// `computeReprojError`, with `project`, `rodrigues_rotate_point` and `radial_distort`
/// written out).
#[differentiable]
pub fn reprojection(cam: [f64; CAMERA], x: [f64; 3], w: f64, feat: &[f64; 2]) -> [f64; 2] {
    let xo = [x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]];
    let sqtheta = cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2];
    let mut rotated = [0.0; 3];
    if sqtheta != 0.0 {
        let theta = sqtheta.sqrt();
        let (costheta, sintheta) = (theta.cos(), theta.sin());
        let theta_inverse = 1.0 / theta;
        let rw = [
            cam[0] * theta_inverse,
            cam[1] * theta_inverse,
            cam[2] * theta_inverse,
        ];
        let cross = [
            rw[1] * xo[2] - rw[2] * xo[1],
            rw[2] * xo[0] - rw[0] * xo[2],
            rw[0] * xo[1] - rw[1] * xo[0],
        ];
        let tmp = (rw[0] * xo[0] + rw[1] * xo[1] + rw[2] * xo[2]) * (1.0 - costheta);
        for i in 0..3 {
            rotated[i] = xo[i] * costheta + cross[i] * sintheta + rw[i] * tmp;
        }
    } else {
        let cross = [
            cam[1] * xo[2] - cam[2] * xo[1],
            cam[2] * xo[0] - cam[0] * xo[2],
            cam[0] * xo[1] - cam[1] * xo[0],
        ];
        for i in 0..3 {
            rotated[i] = xo[i] + cross[i];
        }
    }
    let mut proj = [rotated[0] / rotated[2], rotated[1] / rotated[2]];
    let rsq = proj[0] * proj[0] + proj[1] * proj[1];
    let distortion = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq;
    proj[0] *= distortion;
    proj[1] *= distortion;
    proj[0] = proj[0] * cam[6] + cam[7];
    proj[1] = proj[1] * cam[6] + cam[8];
    [w * (proj[0] - feat[0]), w * (proj[1] - feat[1])]
}

/// A weight's error, `1 - w²`.
#[differentiable]
pub fn weight_error(w: f64) -> f64 {
    1.0 - w * w
}

/// A problem as the eval describes it: `n` cameras, `m` points, `p` observations, the
/// `i`-th of camera `i % n` and point `i % m` (every camera, point, weight and feature
/// the same numbers, as the eval generates them).
pub struct Problem {
    n: usize,
    m: usize,
    cams: Vec<[f64; CAMERA]>,
    points: Vec<[f64; 3]>,
    weights: Vec<f64>,
    features: Vec<[f64; 2]>,
}

/// The jacobian in compressed rows: `rows[r]` is where row `r`'s entries start in `cols`
/// and `vals`.
pub struct Sparse {
    /// Row starts, and the total at the end.
    pub rows: Vec<usize>,
    /// Each entry's column.
    pub cols: Vec<usize>,
    /// Each entry's value.
    pub vals: Vec<f64>,
}

impl Problem {
    /// Every residual: two a observation, then one a weight.
    pub fn objective(&self) -> (Vec<f64>, Vec<f64>) {
        let p = self.weights.len();
        let mut reprojection_errors = Vec::with_capacity(2 * p);
        for i in 0..p {
            let (cam, point) = (&self.cams[i % self.n], &self.points[i % self.m]);
            reprojection_errors.extend(reprojection(
                *cam,
                *point,
                self.weights[i],
                &self.features[i],
            ));
        }
        let weight_errors = self.weights.iter().map(|&w| weight_error(w)).collect();
        (reprojection_errors, weight_errors)
    }

    /// The jacobian: one `reprojection_jacobian` (two rows of 15) an observation, one
    /// `weight_error_grad` a weight, placed in compressed rows as the C++ reference does.
    pub fn jacobian(&self) -> Result<Sparse, ToolError> {
        let (n, m, p) = (self.n, self.m, self.weights.len());
        let entries = (CAMERA + 4) * 2 * p + p;
        let mut sparse = Sparse {
            rows: Vec::with_capacity(3 * p + 1),
            cols: Vec::with_capacity(entries),
            vals: Vec::with_capacity(entries),
        };
        sparse.rows.push(0);
        for i in 0..p {
            let (camera, point) = (i % n, i % m);
            let (_, jacobian) = reprojection_jacobian(
                self.cams[camera],
                self.points[point],
                self.weights[i],
                &self.features[i],
            )?;
            for row in jacobian.iter() {
                let start = sparse.cols.len();
                sparse.rows.push(start + CAMERA + 4);
                sparse.cols.extend((0..CAMERA).map(|c| CAMERA * camera + c));
                sparse
                    .cols
                    .extend((0..3).map(|c| CAMERA * n + 3 * point + c));
                sparse.cols.push(CAMERA * n + 3 * m + i);
                sparse.vals.extend_from_slice(row);
            }
        }
        for i in 0..p {
            let (_, [slope]) = weight_error_grad(self.weights[i])?;
            sparse.rows.push(sparse.cols.len() + 1);
            sparse.cols.push(CAMERA * n + 3 * m + i);
            sparse.vals.push(slope);
        }
        Ok(sparse)
    }
}

#[derive(Deserialize)]
struct Input {
    n: usize,
    m: usize,
    p: usize,
    cam: Vec<f64>,
    x: Vec<f64>,
    w: f64,
    feat: Vec<f64>,
    #[serde(flatten)]
    runs: Runs,
}

/// The first `count` numbers of `all` and its last: what the eval compares (every
/// observation being the same, the rest repeat them).
fn repeated<T: Copy + Into<Value>>(all: &[T], count: usize) -> Vec<Value> {
    let mut out: Vec<Value> = all.iter().take(count).map(|&v| v.into()).collect();
    out.extend(all.last().map(|&v| v.into()));
    out
}

/// Runs `objective` or `jacobian`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["objective", "jacobian"],
        input,
        |input: Input| {
            let Input {
                n,
                m,
                p,
                cam,
                x,
                w,
                feat,
                runs,
            } = input;
            let (Ok(cam), Ok(x), Ok(feat)) = (
                <[f64; CAMERA]>::try_from(cam.as_slice()),
                <[f64; 3]>::try_from(x.as_slice()),
                <[f64; 2]>::try_from(feat.as_slice()),
            ) else {
                return Err(ToolError::Input(
                    "a camera of 11 numbers, a point of 3, a feature of 2".into(),
                ));
            };
            if n == 0 || m == 0 || p == 0 {
                return Err(ToolError::Input(
                    "at least one camera, point and observation".into(),
                ));
            }
            let problem = Problem {
                n,
                m,
                cams: vec![cam; n],
                points: vec![x; m],
                weights: vec![w; p],
                features: vec![feat; p],
            };
            Ok(match function {
                "objective" => {
                    let ((reprojection, weight), timings) =
                        measure(runs, || Ok(problem.objective()))?;
                    let output = json!({
                        "reproj_error": { "elements": &reprojection[..2], "repeated": p },
                        "w_err": { "element": weight[0], "repeated": p },
                    });
                    Evaluated { output, timings }
                }
                _ => {
                    let (sparse, timings) = measure(runs, || problem.jacobian())?;
                    let block = 2 * (CAMERA + 4);
                    let output = json!({
                        "rows": repeated(&sparse.rows, block),
                        "cols": repeated(&sparse.cols, block),
                        "vals": repeated(&sparse.vals, block),
                    });
                    Evaluated { output, timings }
                }
            })
        },
    )
}
