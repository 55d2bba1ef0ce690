//! Optimizers for training loops: [`Sgd`] (with momentum) and [`Adam`] (bias-corrected,
//! with decoupled weight decay as AdamW). Each steps any parameter shape, a `[f64; N]`, a
//! `Vec<f64>` or a `#[derive(Parameters)]` struct, with the gradient `name_grad` returned
//! for it.
//!
//! The update rules are PyTorch's (`torch.optim.SGD`, `Adam`, `AdamW`), in the order of
//! operations of its single-tensor CPU path, with a fused multiply-add wherever its CPU
//! kernels fuse one (`add` with `alpha`, `addcmul`, `lerp`): a step gives PyTorch's numbers
//! to the last bit (`tests/models/optimizers.rs` checks five steps of nine configurations).
//!
//! A step is all or nothing, as a backward pass is: the gradient, every new parameter and
//! every new state value is checked to be finite before anything is written.

use crate::error::ScalarAutodiffError;
use crate::parameters::Parameters;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// Stochastic gradient descent, with optional momentum (heavy-ball or Nesterov), dampening
/// and L2 weight decay: PyTorch's `torch.optim.SGD`.
///
/// With learning rate `lr`, momentum `μ`, dampening `τ` and weight decay `λ`, one step on a
/// parameter `θ` with gradient `g` at step `t` is
///
/// ```text
/// g ← g + λ θ                          (if λ ≠ 0)
/// b ← g                                (t = 1)
/// b ← μ b + (1 − τ) g                  (t > 1)        } if μ ≠ 0
/// g ← g + μ b  (Nesterov)  or  g ← b                  }
/// θ ← θ − lr g
/// ```
///
/// ```
/// use autodiff_runtime::Sgd;
///
/// // Minimise (w0 - 3)^2 + (w1 + 1)^2 by its gradient.
/// let mut w = [0.0, 0.0];
/// let mut sgd = Sgd::new(0.1).momentum(0.9);
/// for _ in 0..400 {
///     let gradient = [2.0 * (w[0] - 3.0), 2.0 * (w[1] + 1.0)];
///     sgd.step(&mut w, &gradient)?;
/// }
/// assert!((w[0] - 3.0).abs() < 1e-6 && (w[1] + 1.0).abs() < 1e-6);
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sgd {
    learning_rate: f64,
    momentum: f64,
    dampening: f64,
    nesterov: bool,
    weight_decay: f64,
    /// The momentum buffer `b`, empty before the first step.
    buffer: Vec<f64>,
    scratch: Scratch,
}

impl Sgd {
    /// Plain gradient descent with this learning rate: no momentum, no weight decay.
    pub fn new(learning_rate: f64) -> Self {
        Self {
            learning_rate,
            momentum: 0.0,
            dampening: 0.0,
            nesterov: false,
            weight_decay: 0.0,
            buffer: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// Momentum `μ` in `[0, 1)` (PyTorch's `momentum`; 0.9 is usual).
    #[must_use]
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.momentum = momentum;
        self
    }

    /// Dampening `τ` in `[0, 1]`: the new gradient enters the momentum buffer scaled by
    /// `1 − τ` (after the first step).
    #[must_use]
    pub fn dampening(mut self, dampening: f64) -> Self {
        self.dampening = dampening;
        self
    }

    /// Nesterov momentum: step along `g + μ b` rather than `b`. Needs a momentum in
    /// `(0, 1)` and no dampening.
    #[must_use]
    pub fn nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }

    /// L2 weight decay `λ ≥ 0`: `λ θ` is added to the gradient before the momentum.
    #[must_use]
    pub fn weight_decay(mut self, weight_decay: f64) -> Self {
        self.weight_decay = weight_decay;
        self
    }

    /// The learning rate.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }

    /// Changes the learning rate for the next steps (a schedule); the momentum is kept.
    pub fn set_learning_rate(&mut self, learning_rate: f64) {
        self.learning_rate = learning_rate;
    }

    /// Forgets the momentum: the next step is a first step again.
    pub fn reset(&mut self) {
        self.buffer.clear();
    }

    /// One step: updates `params` in place from `gradient`, its gradient (the second half
    /// of what `name_grad` returns). The two are paired scalar by scalar in the order of a
    /// flat gradient, so `gradient` may have the shape of `params` or be flat: a
    /// `[f64; N]` from `name_grad` steps a `#[derive(Parameters)]` struct whose fields
    /// list the same parameters in the same order.
    ///
    /// # Errors
    ///
    /// Nothing is changed, neither the parameters nor the momentum, when
    ///
    /// - a setting is out of range: [`ScalarAutodiffError::InvalidHyperparameter`];
    /// - `gradient` does not have the parameters' number of scalars, or the parameters do
    ///   not have the number the momentum was built for (call [`Sgd::reset`] to start over
    ///   with another shape): [`ScalarAutodiffError::LengthMismatch`];
    /// - the gradient holds a non-finite number, or a new parameter or momentum value would
    ///   be one: [`ScalarAutodiffError::NonFiniteStep`].
    pub fn step<P, G>(&mut self, params: &mut P, gradient: &G) -> Result<()>
    where
        P: Parameters + ?Sized,
        G: Parameters + ?Sized,
    {
        self.check()?;
        let n = self.scratch.load("Sgd", &*params, gradient)?;
        let first = self.buffer.is_empty();
        let momentum = self.momentum != 0.0;
        if momentum && !first {
            state_length(self.buffer.len(), n)?;
        }
        let (lr, mu, wd) = (self.learning_rate, self.momentum, self.weight_decay);
        let Scratch {
            params: theta,
            gradient: grad,
            next,
        } = &mut self.scratch;
        next.clear();
        for (i, (theta, &g)) in theta.iter_mut().zip(grad.iter()).enumerate() {
            let mut g = if wd != 0.0 { wd.mul_add(*theta, g) } else { g };
            if momentum {
                let b = if first {
                    g
                } else {
                    (1.0 - self.dampening).mul_add(g, self.buffer[i] * mu)
                };
                next.push(b);
                g = if self.nesterov { mu.mul_add(b, g) } else { b };
            }
            *theta = (-lr).mul_add(g, *theta);
        }
        all_finite("Sgd", "new momentum", next)?;
        all_finite("Sgd", "new parameter", theta)?;
        params.read_flat(theta)?;
        if momentum {
            std::mem::swap(&mut self.buffer, next);
        }
        Ok(())
    }

    fn check(&self) -> Result<()> {
        let sgd = Setting::new("Sgd");
        sgd.at_least_zero("learning_rate", self.learning_rate)?;
        sgd.fraction("momentum", self.momentum)?;
        sgd.in_range(
            "dampening",
            self.dampening,
            (0.0..=1.0).contains(&self.dampening),
            "in [0, 1]",
        )?;
        sgd.at_least_zero("weight_decay", self.weight_decay)?;
        if self.nesterov {
            sgd.in_range(
                "momentum",
                self.momentum,
                self.momentum > 0.0,
                "in (0, 1) with nesterov",
            )?;
            sgd.in_range(
                "dampening",
                self.dampening,
                self.dampening == 0.0,
                "0 with nesterov",
            )?;
        }
        Ok(())
    }
}

/// Adam: bias-corrected first and second moment estimates, with weight decay either
/// decoupled (AdamW, [`Adam::weight_decay`]) or added to the gradient as an L2 penalty
/// ([`Adam::l2_penalty`]): PyTorch's `torch.optim.AdamW` and `torch.optim.Adam`.
///
/// With learning rate `lr`, moment decay rates `β₁, β₂`, `ε`, and step `t = 1, 2, …`, one
/// step on a parameter `θ` with gradient `g` is
///
/// ```text
/// θ ← θ (1 − lr λ)                     (weight_decay λ: AdamW, decoupled)
/// g ← g + λ θ                          (l2_penalty λ: Adam's weight_decay)
/// m ← β₁ m + (1 − β₁) g                (m₀ = 0)
/// v ← β₂ v + (1 − β₂) g²               (v₀ = 0)
/// θ ← θ − (lr / (1 − β₁ᵗ)) m / (√v / √(1 − β₂ᵗ) + ε)
/// ```
///
/// Defaults are PyTorch's: `β₁ = 0.9`, `β₂ = 0.999`, `ε = 1e-8`, no weight decay. AMSGrad
/// and `maximize` are not offered.
///
/// ```
/// use autodiff_runtime::Adam;
///
/// let mut w = vec![0.0, 0.0];
/// let mut adam = Adam::new(0.05).weight_decay(1e-4);
/// for _ in 0..2000 {
///     let gradient = vec![2.0 * (w[0] - 3.0), 2.0 * (w[1] + 1.0)];
///     adam.step(&mut w, &gradient)?;
/// }
/// assert!((w[0] - 3.0).abs() < 1e-2 && (w[1] + 1.0).abs() < 1e-2);
/// assert_eq!(adam.steps(), 2000);
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Adam {
    learning_rate: f64,
    beta1: f64,
    beta2: f64,
    epsilon: f64,
    decay: Decay,
    steps: u64,
    /// The first moment `m`, empty before the first step.
    first: Vec<f64>,
    /// The second moment `v`, empty before the first step.
    second: Vec<f64>,
    scratch: Scratch,
    next_second: Vec<f64>,
}

/// How Adam's weight decay enters: the last of `weight_decay` and `l2_penalty` set wins.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Decay {
    /// `θ ← θ (1 − lr λ)` before the moments (AdamW).
    Decoupled(f64),
    /// `g ← g + λ θ` (Adam's L2 penalty).
    Coupled(f64),
}

impl Adam {
    /// Adam with this learning rate and PyTorch's defaults: `β = (0.9, 0.999)`,
    /// `ε = 1e-8`, no weight decay.
    pub fn new(learning_rate: f64) -> Self {
        Self {
            learning_rate,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            decay: Decay::Decoupled(0.0),
            steps: 0,
            first: Vec::new(),
            second: Vec::new(),
            scratch: Scratch::default(),
            next_second: Vec::new(),
        }
    }

    /// The decay rates `β₁, β₂` of the moment estimates, each in `[0, 1)`.
    #[must_use]
    pub fn betas(mut self, beta1: f64, beta2: f64) -> Self {
        self.beta1 = beta1;
        self.beta2 = beta2;
        self
    }

    /// `ε ≥ 0` (PyTorch's `eps`), added to the denominator for stability.
    #[must_use]
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// Decoupled weight decay `λ ≥ 0` (AdamW): each step first shrinks every parameter by
    /// the factor `1 − lr λ`, outside the moment estimates. PyTorch's `AdamW` uses 0.01 by
    /// default; this replaces an [`Adam::l2_penalty`].
    #[must_use]
    pub fn weight_decay(mut self, weight_decay: f64) -> Self {
        self.decay = Decay::Decoupled(weight_decay);
        self
    }

    /// An L2 penalty `λ ≥ 0` added to the gradient (`g + λ θ`) before the moment estimates:
    /// what `torch.optim.Adam` calls `weight_decay`. This replaces an
    /// [`Adam::weight_decay`].
    #[must_use]
    pub fn l2_penalty(mut self, penalty: f64) -> Self {
        self.decay = Decay::Coupled(penalty);
        self
    }

    /// The learning rate.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }

    /// Changes the learning rate for the next steps (a schedule); the moments are kept.
    pub fn set_learning_rate(&mut self, learning_rate: f64) {
        self.learning_rate = learning_rate;
    }

    /// The number of steps taken so far (`t` of the last step).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Forgets the moments and the step count: the next step is a first step again.
    pub fn reset(&mut self) {
        self.first.clear();
        self.second.clear();
        self.steps = 0;
    }

    /// One step: updates `params` in place from `gradient`, its gradient (the second half
    /// of what `name_grad` returns). The two are paired scalar by scalar in the order of a
    /// flat gradient, so `gradient` may have the shape of `params` or be flat: a
    /// `[f64; N]` from `name_grad` steps a `#[derive(Parameters)]` struct whose fields
    /// list the same parameters in the same order.
    ///
    /// # Errors
    ///
    /// Nothing is changed, neither the parameters nor the moments nor the step count, when
    ///
    /// - a setting is out of range: [`ScalarAutodiffError::InvalidHyperparameter`];
    /// - `gradient` does not have the parameters' number of scalars, or the parameters do
    ///   not have the number the moments were built for (call [`Adam::reset`] to start over
    ///   with another shape): [`ScalarAutodiffError::LengthMismatch`];
    /// - the gradient holds a non-finite number, or a new parameter or moment would be one:
    ///   [`ScalarAutodiffError::NonFiniteStep`].
    pub fn step<P, G>(&mut self, params: &mut P, gradient: &G) -> Result<()>
    where
        P: Parameters + ?Sized,
        G: Parameters + ?Sized,
    {
        self.check()?;
        let n = self.scratch.load("Adam", &*params, gradient)?;
        if self.steps > 0 {
            state_length(self.first.len(), n)?;
        }
        let t = (self.steps + 1) as f64;
        let (lr, beta1, beta2, eps) = (self.learning_rate, self.beta1, self.beta2, self.epsilon);
        // Scalars first, as PyTorch computes them (powers as `beta ** float(step)`).
        let bias_correction1 = 1.0 - beta1.powf(t);
        let bias_correction2 = 1.0 - beta2.powf(t);
        let step_size = lr / bias_correction1;
        let bias_correction2_sqrt = bias_correction2.sqrt();
        let (weight1, weight2) = (1.0 - beta1, 1.0 - beta2);
        let Scratch {
            params: theta,
            gradient: grad,
            next: next_first,
        } = &mut self.scratch;
        let next_second = &mut self.next_second;
        // The moments start at zero.
        if self.steps == 0 {
            for moment in [&mut self.first, &mut self.second] {
                moment.clear();
                moment.resize(n, 0.0);
            }
        }
        // Weight decay first, in its own pass, so that the update below is one loop
        // without branches.
        match self.decay {
            Decay::Decoupled(wd) if wd != 0.0 => {
                let shrink = 1.0 - lr * wd;
                theta.iter_mut().for_each(|theta| *theta *= shrink);
            }
            Decay::Coupled(wd) if wd != 0.0 => {
                for (g, theta) in grad.iter_mut().zip(theta.iter()) {
                    *g = wd.mul_add(*theta, *g);
                }
            }
            _ => {}
        }
        next_first.clear();
        next_first.resize(n, 0.0);
        next_second.clear();
        next_second.resize(n, 0.0);
        // Every slice cut to `n`, so that the loop indexes them without bounds checks.
        let theta = &mut theta[..n];
        let (grad, first, second) = (&grad[..n], &self.first[..n], &self.second[..n]);
        let (next_m, next_v) = (&mut next_first[..n], &mut next_second[..n]);
        // What is stored is checked as it is made (which number failed is found below): a
        // sum of `x * 0.0` stays zero while every `x` is finite. (One sum: the loop's
        // `fma` calls would spill wider accumulators.)
        let mut finite = 0.0;
        for i in 0..n {
            let g = grad[i];
            let m = lerp(first[i], g, weight1);
            let v = (weight2 * g).mul_add(g, second[i] * beta2);
            let denom = v.sqrt() / bias_correction2_sqrt + eps;
            theta[i] += (-step_size * m) / denom;
            next_m[i] = m;
            next_v[i] = v;
            finite += (m + v + theta[i]) * 0.0;
        }
        if finite != 0.0 {
            all_finite("Adam", "new first moment", next_first)?;
            all_finite("Adam", "new second moment", next_second)?;
            all_finite("Adam", "new parameter", theta)?;
        }
        params.read_flat(theta)?;
        std::mem::swap(&mut self.first, next_first);
        std::mem::swap(&mut self.second, next_second);
        self.steps += 1;
        Ok(())
    }

    fn check(&self) -> Result<()> {
        let adam = Setting::new("Adam");
        adam.at_least_zero("learning_rate", self.learning_rate)?;
        adam.fraction("beta1", self.beta1)?;
        adam.fraction("beta2", self.beta2)?;
        adam.at_least_zero("epsilon", self.epsilon)?;
        match self.decay {
            Decay::Decoupled(wd) => adam.at_least_zero("weight_decay", wd),
            Decay::Coupled(wd) => adam.at_least_zero("l2_penalty", wd),
        }
    }
}

/// PyTorch's `lerp` on the CPU: `start + w (end − start)`, from the nearer end, fused.
fn lerp(start: f64, end: f64, weight: f64) -> f64 {
    let diff = end - start;
    if weight.abs() < 0.5 {
        weight.mul_add(diff, start)
    } else {
        (-diff).mul_add(1.0 - weight, end)
    }
}

/// Flat copies of the parameters and the gradient, and the next state, kept between steps
/// so a step allocates nothing once the shapes are known.
#[derive(Clone, Debug, Default)]
struct Scratch {
    params: Vec<f64>,
    gradient: Vec<f64>,
    next: Vec<f64>,
}

impl Scratch {
    /// Copies `params` and `gradient` flat; checks they have the same number of scalars and
    /// that the gradient is finite. Returns the number.
    fn load<P, G>(&mut self, optimizer: &'static str, params: &P, gradient: &G) -> Result<usize>
    where
        P: Parameters + ?Sized,
        G: Parameters + ?Sized,
    {
        let n = params.parameter_count();
        let found = gradient.parameter_count();
        if found != n {
            return Err(ScalarAutodiffError::LengthMismatch { expected: n, found });
        }
        // A run of side-by-side scalars at a time (a field of arrays is one copy).
        self.params.clear();
        params.visit_runs(&mut |run| self.params.extend_from_slice(run));
        self.gradient.clear();
        gradient.visit_runs(&mut |run| self.gradient.extend_from_slice(run));
        all_finite(optimizer, "gradient entry", &self.gradient)?;
        Ok(n)
    }
}

/// The state was built for `expected` scalars; the parameters now have `found`.
fn state_length(expected: usize, found: usize) -> Result<()> {
    match expected == found {
        true => Ok(()),
        false => Err(ScalarAutodiffError::LengthMismatch { expected, found }),
    }
}

fn all_finite(optimizer: &'static str, what: &'static str, values: &[f64]) -> Result<()> {
    // Sums of `x * 0.0` first (no branch per number); the search only on a failure.
    let mut finite = crate::sweep::Finite::default();
    values.iter().for_each(|&value| finite.add(value));
    if finite.all() {
        return Ok(());
    }
    match values.iter().position(|value| !value.is_finite()) {
        None => Ok(()),
        Some(index) => Err(ScalarAutodiffError::NonFiniteStep {
            optimizer,
            what,
            index,
            value: values[index],
        }),
    }
}

/// Range checks of one optimizer's settings.
struct Setting {
    optimizer: &'static str,
}

impl Setting {
    fn new(optimizer: &'static str) -> Self {
        Self { optimizer }
    }

    fn in_range(
        &self,
        setting: &'static str,
        value: f64,
        ok: bool,
        expected: &'static str,
    ) -> Result<()> {
        match ok {
            true => Ok(()),
            false => Err(ScalarAutodiffError::InvalidHyperparameter {
                optimizer: self.optimizer,
                setting,
                value,
                expected,
            }),
        }
    }

    fn at_least_zero(&self, setting: &'static str, value: f64) -> Result<()> {
        let ok = value.is_finite() && value >= 0.0;
        self.in_range(setting, value, ok, "finite and at least 0")
    }

    fn fraction(&self, setting: &'static str, value: f64) -> Result<()> {
        self.in_range(setting, value, (0.0..1.0).contains(&value), "in [0, 1)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_step_changes_nothing() {
        let mut w = [1.0, 2.0];
        let mut adam = Adam::new(0.1);
        adam.step(&mut w, &[0.5, -0.5]).unwrap();
        let (kept, moments) = (w, adam.first.clone());
        let error = adam.step(&mut w, &[0.5, f64::NAN]).unwrap_err();
        assert_eq!(error.kind(), "non-finite-step");
        assert_eq!(
            error.to_string(),
            "Adam step refused: gradient entry 1 is NaN; no parameter or state was changed"
        );
        assert!(matches!(
            error,
            ScalarAutodiffError::NonFiniteStep {
                index: 1,
                what: "gradient entry",
                ..
            }
        ));
        assert_eq!((w, &adam.first, adam.steps()), (kept, &moments, 1));

        // A step that overflows a parameter is refused after computing, before writing.
        let mut big = [f64::MAX];
        let mut sgd = Sgd::new(1.0).momentum(0.5);
        let error = sgd.step(&mut big, &[-f64::MAX]).unwrap_err();
        assert!(matches!(
            error,
            ScalarAutodiffError::NonFiniteStep {
                what: "new parameter",
                index: 0,
                ..
            }
        ));
        assert_eq!(big, [f64::MAX]);
        assert!(sgd.buffer.is_empty(), "the momentum was not stored");
    }

    #[test]
    fn settings_out_of_range_are_typed_errors() {
        let mut w = [1.0];
        for (mut sgd, setting) in [
            (Sgd::new(f64::NAN), "learning_rate"),
            (Sgd::new(0.1).momentum(1.0), "momentum"),
            (Sgd::new(0.1).dampening(1.5), "dampening"),
            (Sgd::new(0.1).weight_decay(-1.0), "weight_decay"),
            (Sgd::new(0.1).nesterov(true), "momentum"),
            (
                Sgd::new(0.1).momentum(0.9).dampening(0.1).nesterov(true),
                "dampening",
            ),
        ] {
            let error = sgd.step(&mut w, &[1.0]).unwrap_err();
            assert!(
                matches!(error, ScalarAutodiffError::InvalidHyperparameter { setting: s, .. } if s == setting),
                "{error}"
            );
        }
        let error = Adam::new(0.1)
            .betas(0.9, 1.0)
            .step(&mut w, &[1.0])
            .unwrap_err();
        assert_eq!(error.to_string(), "Adam: beta2 1.0 must be in [0, 1)");
        let error = Adam::new(0.1)
            .l2_penalty(f64::INFINITY)
            .step(&mut w, &[1.0])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Adam: l2_penalty inf must be finite and at least 0"
        );
        assert_eq!(w, [1.0]);
    }

    #[test]
    fn a_new_shape_needs_a_reset() {
        let mut adam = Adam::new(0.1);
        adam.step(&mut vec![1.0, 2.0], &vec![1.0, 1.0]).unwrap();
        let mut three = vec![1.0, 2.0, 3.0];
        let error = adam.step(&mut three, &vec![1.0; 3]).unwrap_err();
        assert_eq!(
            error,
            ScalarAutodiffError::LengthMismatch {
                expected: 2,
                found: 3
            }
        );
        let error = adam.step(&mut three, &vec![1.0; 2]).unwrap_err();
        assert_eq!(
            error,
            ScalarAutodiffError::LengthMismatch {
                expected: 3,
                found: 2
            }
        );
        adam.reset();
        adam.step(&mut three, &vec![1.0; 3]).unwrap();
        assert_eq!(adam.steps(), 1);
    }
}
