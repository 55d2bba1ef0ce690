//! `ht`: hand tracking. A hand model of 22 bones skins its 544 vertices by a pose of 26
//! numbers (a global rotation and translation, four angles a finger); each data point's
//! three residuals compare it with a vertex (the "simple" variant) or with a point inside a
//! triangle of vertices, at barycentric coordinates `us` that are differentiated too (the
//! "complicated" one). The jacobian is dense in the pose (26 columns) and, in the
//! complicated variant, has two more: each point's residuals depend on its own two
//! coordinates alone, so all the first coordinates share a column, as all the second do.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, rows, timed};
use crate::protocol::{measure, Evaluated, Runs, ToolError};

/// The pose's numbers.
pub const THETA: usize = 26;
/// The bones of the hand model the pose is written for.
pub const BONES: usize = 22;

/// The hand model, as the eval sends it (each matrix row by row).
#[derive(Deserialize)]
pub struct Model {
    /// Each bone's parent, earlier in the order, or -1 for the root.
    parents: Vec<i64>,
    /// Each bone's transform relative to its parent at rest.
    base_relatives: Vec<[[f64; 4]; 4]>,
    /// The inverse of each bone's absolute transform at rest.
    inverse_base_absolutes: Vec<[[f64; 4]; 4]>,
    /// Each vertex at rest, homogeneous.
    base_positions: Vec<[f64; 4]>,
    /// `weights[v][b]`: how much bone `b` moves vertex `v`.
    weights: Vec<Vec<f64>>,
    /// The mesh's triangles, three vertices each.
    triangles: Vec<[usize; 3]>,
    /// A left hand: the model's `x` is negated.
    is_mirrored: bool,
}

/// The model and the data points, each with the vertex or triangle it corresponds to.
#[derive(Deserialize)]
pub struct Data {
    model: Model,
    correspondences: Vec<usize>,
    points: Vec<[f64; 3]>,
}

/// The rotation of an angle-axis vector (Rodrigues' formula), the identity for a very
/// small angle, as the C++ reference computes it.
#[differentiable]
pub fn angle_axis_to_rotation_matrix(angle_axis: [f64; 3]) -> [[f64; 3]; 3] {
    let norm = (angle_axis[0] * angle_axis[0]
        + angle_axis[1] * angle_axis[1]
        + angle_axis[2] * angle_axis[2])
        .sqrt();
    // (The reference returns the identity early; one result written once is the form
    // the compiled sweeps follow.)
    let mut r = [[0.0; 3]; 3];
    if norm < 0.0001 {
        for i in 0..3 {
            r[i][i] = 1.0;
        }
    } else {
        let x = angle_axis[0] / norm;
        let y = angle_axis[1] / norm;
        let z = angle_axis[2] / norm;
        let s = norm.sin();
        let c = norm.cos();
        r[0][0] = x * x + (1.0 - x * x) * c;
        r[0][1] = x * y * (1.0 - c) - z * s;
        r[0][2] = x * z * (1.0 - c) + y * s;
        r[1][0] = x * y * (1.0 - c) + z * s;
        r[1][1] = y * y + (1.0 - y * y) * c;
        r[1][2] = y * z * (1.0 - c) - x * s;
        r[2][0] = x * z * (1.0 - c) - y * s;
        r[2][1] = z * y * (1.0 - c) + x * s;
        r[2][2] = z * z + (1.0 - z * z) * c;
    }
    r
}

/// The rotation of Euler angles given in the order x, z, y: `Rz Ry Rx`.
#[differentiable]
pub fn euler_angles_to_rotation_matrix(xzy: [f64; 3]) -> [[f64; 3]; 3] {
    let (tx, ty, tz) = (xzy[0], xzy[2], xzy[1]);
    let (cx, sx) = (tx.cos(), tx.sin());
    let (cy, sy) = (ty.cos(), ty.sin());
    let (cz, sz) = (tz.cos(), tz.sin());
    let mut rx = [[0.0; 3]; 3];
    rx[0][0] = 1.0;
    rx[1][1] = cx;
    rx[2][1] = sx;
    rx[1][2] = -sx;
    rx[2][2] = cx;
    let mut ry = [[0.0; 3]; 3];
    ry[1][1] = 1.0;
    ry[0][0] = cy;
    ry[0][2] = sy;
    ry[2][0] = -sy;
    ry[2][2] = cy;
    let mut rz = [[0.0; 3]; 3];
    rz[2][2] = 1.0;
    rz[0][0] = cz;
    rz[1][0] = sz;
    rz[0][1] = -sz;
    rz[1][1] = cz;
    rotations_times(rotations_times(rz, ry), rx)
}

/// `a b` for 3x3 rotations.
#[differentiable]
pub fn rotations_times(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                out[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    out
}

/// A bone's posed transform relative to its parent: its rest transform times the
/// rotation `r` (a 4x4 transform with no translation).
#[differentiable]
pub fn posed_relative(base: &[[f64; 4]; 4], r: [[f64; 3]; 3]) -> [[f64; 4]; 4] {
    let mut out = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..3 {
            for k in 0..3 {
                out[i][j] += base[i][k] * r[k][j];
            }
        }
        out[i][3] = base[i][3];
    }
    out
}

/// `a b` for 4x4 transforms.
#[differentiable]
pub fn mat_mult(a: [[f64; 4]; 4], b: [[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut out = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                out[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    out
}

/// `a b` for a transform `a` and a data transform `b` (apart from `mat_mult`: `b` is the
/// model's, and the reverse half keeps no adjoints for it).
#[differentiable]
pub fn mat_mult_data(a: [[f64; 4]; 4], b: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut out = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                out[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    out
}

/// Every residual: the data points minus the skinned model's points, three a point, as
/// the C++ reference computes them (its `objective`, with `to_pose_params`,
/// `get_skinned_vertex_positions` and `apply_global_transform` written out). `us` is
/// empty for the simple variant, two barycentric coordinates a point otherwise.
#[differentiable]
pub fn objective(theta: [f64; THETA], #[param] us: &[f64], #[constant] data: &Data) -> Vec<f64> {
    let model = &data.model;
    // The pose by columns: global rotation, scale (ones), global translation, then three
    // angles a bone (the wrist's and each finger's last bone stay zero).
    let mut pose = [[0.0; 3]; BONES + 3];
    for k in 0..3 {
        pose[0][k] = theta[k];
        pose[1][k] = 1.0;
        pose[2][k] = theta[3 + k];
    }
    let mut i_theta = 6;
    let mut i_pose = 5;
    for _finger in 0..5 {
        for i in 2..5 {
            pose[i_pose][0] = theta[i_theta];
            i_theta += 1;
            if i == 2 {
                pose[i_pose][1] = theta[i_theta];
                i_theta += 1;
            }
            i_pose += 1;
        }
        i_pose += 1;
    }
    // Each bone's absolute transform, through its parent's, then from rest.
    let mut absolutes: Vec<[[f64; 4]; 4]> = Vec::new();
    let mut transforms: Vec<[[f64; 4]; 4]> = Vec::new();
    for b in 0..BONES {
        let r = euler_angles_to_rotation_matrix(pose[b + 3]);
        let parent = model.parents[b];
        if parent < 0 {
            absolutes.push(posed_relative(&model.base_relatives[b], r));
        } else {
            let relative = posed_relative(&model.base_relatives[b], r);
            absolutes.push(mat_mult(absolutes[parent as usize], relative));
        }
        transforms.push(mat_mult_data(
            absolutes[b],
            &model.inverse_base_absolutes[b],
        ));
    }
    // Every vertex, moved by every bone in proportion to its weight.
    let verts = model.base_positions.len();
    let mut positions = vec![[0.0; 3]; verts];
    for b in 0..BONES {
        for v in 0..verts {
            let rest = model.base_positions[v];
            for i in 0..3 {
                let mut moved = 0.0;
                for k in 0..4 {
                    moved += transforms[b][i][k] * rest[k];
                }
                positions[v][i] += moved * model.weights[v][b];
            }
        }
    }
    if model.is_mirrored {
        for v in 0..verts {
            positions[v][0] = -positions[v][0];
        }
    }
    // The global rotation (its columns scaled by the pose's ones) and translation.
    let global = angle_axis_to_rotation_matrix(pose[0]);
    let mut placed = vec![[0.0; 3]; verts];
    for v in 0..verts {
        for i in 0..3 {
            let mut rotated = 0.0;
            for k in 0..3 {
                rotated += global[i][k] * pose[1][k] * positions[v][k];
            }
            placed[v][i] = rotated + pose[2][i];
        }
    }
    let n = data.correspondences.len();
    let mut err = vec![0.0; 3 * n];
    for i in 0..n {
        let point = data.points[i];
        if us.is_empty() {
            let vertex = data.correspondences[i];
            for j in 0..3 {
                err[3 * i + j] = point[j] - placed[vertex][j];
            }
        } else {
            let corners = model.triangles[data.correspondences[i]];
            let (u0, u1) = (us[2 * i], us[2 * i + 1]);
            for j in 0..3 {
                let hand = u0 * placed[corners[0]][j]
                    + u1 * placed[corners[1]][j]
                    + (1.0 - u0 - u1) * placed[corners[2]][j];
                err[3 * i + j] = point[j] - hand;
            }
        }
    }
    err
}

/// A checked instance: the pose, the coordinates (empty for the simple variant) and the
/// data.
pub struct Problem {
    theta: [f64; THETA],
    us: Vec<f64>,
    data: Data,
}

impl Problem {
    /// The residuals.
    pub fn objective(&self) -> Vec<f64> {
        objective(self.theta, &self.us, &self.data)
    }

    /// The jacobian, columns from `objective_jvps` (several a forward sweep): in the
    /// complicated variant first the two columns of the coordinates (every point's first
    /// coordinate at once, then every second: no residual depends on two points'
    /// coordinates), then one a pose number. Returned flat, row by row, with its width.
    pub fn jacobian(&self) -> Result<(Vec<f64>, usize), ToolError> {
        let mut tangents = Vec::with_capacity(THETA + 2);
        let zeros = vec![0.0; self.us.len()];
        if !self.us.is_empty() {
            for parity in 0..2 {
                let along: Vec<f64> = (0..self.us.len())
                    .map(|k| if k % 2 == parity { 1.0 } else { 0.0 })
                    .collect();
                tangents.push(([0.0; THETA], along));
            }
        }
        for j in 0..THETA {
            let mut unit = [0.0; THETA];
            unit[j] = 1.0;
            tangents.push((unit, zeros.clone()));
        }
        let (_, columns) = objective_jvps(self.theta, &self.us, &self.data, &tangents)?;
        let (width, height) = (columns.len(), 3 * self.data.correspondences.len());
        let mut flat = vec![0.0; width * height];
        for (c, column) in columns.iter().enumerate() {
            for (r, &value) in column.iter().enumerate() {
                flat[r * width + c] = value;
            }
        }
        Ok((flat, width))
    }

    /// The instance, if its sizes agree: a pose of 26, the 22 bones' matrices, weights
    /// and parents, vertices and triangles that the correspondences and triangles name,
    /// a point a correspondence, and no coordinates or two a point.
    fn checked(input: Input) -> Result<(Problem, Runs), ToolError> {
        let Input {
            theta,
            data,
            us,
            runs,
        } = input;
        let bad = |what: &str| Err(ToolError::Input(what.into()));
        let Ok(theta) = <[f64; THETA]>::try_from(theta.as_slice()) else {
            return bad("a pose of 26 numbers");
        };
        let model = &data.model;
        let verts = model.base_positions.len();
        let bones = [
            model.parents.len(),
            model.base_relatives.len(),
            model.inverse_base_absolutes.len(),
        ];
        if bones != [BONES; 3] {
            return bad("22 bones, each with a parent and two matrices");
        }
        let parents_earlier = model
            .parents
            .iter()
            .enumerate()
            .all(|(b, &p)| p == -1 || (p >= 0 && (p as usize) < b));
        if !parents_earlier {
            return bad("each bone's parent earlier in the order, or -1");
        }
        if model.weights.len() != verts || model.weights.iter().any(|w| w.len() != BONES) {
            return bad("one weight a bone for each vertex");
        }
        if model.triangles.iter().flatten().any(|&v| v >= verts) {
            return bad("triangles of the model's vertices");
        }
        let n = data.correspondences.len();
        if data.points.len() != n {
            return bad("one point a correspondence");
        }
        let named = if us.is_empty() {
            verts
        } else {
            model.triangles.len()
        };
        if data.correspondences.iter().any(|&c| c >= named) {
            return bad("correspondences naming vertices (or triangles, with coordinates)");
        }
        if !(us.is_empty() || us.len() == n) || us.iter().any(|u| u.len() != 2) {
            return bad("no coordinates, or two a point");
        }
        let us = us.concat();
        Ok((Problem { theta, us, data }, runs))
    }
}

#[derive(Deserialize)]
struct Input {
    theta: Vec<f64>,
    data: Data,
    us: Vec<Vec<f64>>,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `objective` or `jacobian`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["objective", "jacobian"],
        input,
        |input: Input| {
            let (problem, runs) = Problem::checked(input)?;
            match function {
                "objective" => timed(runs, || Ok(problem.objective())),
                _ => {
                    let ((flat, width), timings) = measure(runs, || problem.jacobian())?;
                    Ok(Evaluated {
                        output: rows(&flat, width).into(),
                        timings,
                    })
                }
            }
        },
    )
}
