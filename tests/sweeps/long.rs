//! Long bodies, up to the 512 operations the sweeps compile: a recurrence written out step
//! by step (300 operations, recorded out of line on the tape) and one expression of 420
//! operations (rewritten flat, as a run of `let`s, on the tape). Both run compiled, with
//! `name_graph` + `backward`'s bits, and so do a function calling them and their
//! `name_hvp`.

use scalar_autodiff::differentiable;

use crate::cases::{graph_of, outcome, traces};
use crate::hvp::check_columns;
use crate::support::{long_sum, near, near_each, XorShift};

/// `h = (w[i] * h + x[j]).tanh();` once for every pair of indices, as a user who unrolled
/// a recurrence writes it.
macro_rules! steps {
    ($($i:literal $j:literal)*) => {
        /// A recurrence of 100 steps, written out.
        #[differentiable]
        fn steps(w: [f64; 4], x: [f64; 3]) -> f64 {
            let mut h = 0.0;
            $(h = (w[$i] * h + x[$j]).tanh();)*
            h
        }

        /// The same as a loop.
        fn looped(w: [f64; 4], x: [f64; 3]) -> f64 {
            let mut h: f64 = 0.0;
            for i in 0..100 {
                h = (w[i % 4] * h + x[i % 3]).tanh();
            }
            h
        }
    };
}

steps!(
    0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1
    3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0
    2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2
    1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1 0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0 0 1 1 2 2 0 3 1
    0 2 1 0 2 1 3 2 0 0 1 1 2 2 3 0
);

long_sum!(
    /// 30 times five terms, as one expression (as `tests/macros/long_sum.rs` writes it).
    #[differentiable]
    fn sum(x); [_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _] (0.5)
);

/// Both, called by another body: their halves.
#[differentiable]
fn both(x: [f64; 8], w: [f64; 4]) -> f64 {
    sum(x) * 0.01
        + steps(w, [x[0], x[1], x[2]]) * sum([x[7], x[6], x[5], x[4], x[3], x[2], x[1], x[0]]).sin()
}

#[test]
fn long_bodies_run_compiled_and_agree_with_the_graph_bit_for_bit() {
    let mut rng = XorShift::new(0x10_9b0d_5eed_0001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..20 {
        let w = [next(), next(), next(), next()];
        let x = [next(), next(), next()];
        let xs = [
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
            next(),
        ];

        let fast = outcome(steps_grad(w, x).map(|(v, g)| (v, g.to_vec())));
        let at = [w[0], w[1], w[2], w[3], x[0], x[1], x[2]];
        let checked = graph_of(&at, |t| {
            let w = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            steps_graph(&w, &[t[4].clone(), t[5].clone(), t[6].clone()])
        });
        assert_eq!(fast, checked, "steps, case {case}");
        assert_eq!(traces(|| drop(steps_grad(w, x))), 0, "steps, case {case}");
        let (value, gradient) = steps_grad(w, x).expect("finite");
        assert_eq!(
            value.to_bits(),
            looped(w, x).to_bits(),
            "steps, case {case}"
        );
        near_each(
            &gradient,
            |q| looped([q[0], q[1], q[2], q[3]], [q[4], q[5], q[6]]),
            &at,
            "steps",
        );

        let fast = outcome(sum_grad(xs).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&xs, sum_graph);
        assert_eq!(fast, checked, "sum, case {case}");
        assert_eq!(traces(|| drop(sum_grad(xs))), 0, "sum, case {case}");
        let (value, gradient) = sum_grad(xs).expect("finite");
        assert_eq!(value.to_bits(), sum(xs).to_bits(), "sum, case {case}");
        for k in 0..8 {
            let moved = |t: f64| {
                let mut q = xs;
                q[k] = t;
                sum(q)
            };
            near(gradient[k], moved, xs[k], "sum");
        }

        let fast = outcome(both_grad(xs, w).map(|(v, g)| (v, g.to_vec())));
        let at: Vec<f64> = xs.iter().chain(&w).copied().collect();
        let checked = graph_of(&at[..], |t| {
            let x: [_; 8] = std::array::from_fn(|k| t[k].clone());
            let w: [_; 4] = std::array::from_fn(|k| t[8 + k].clone());
            both_graph(&x, &w)
        });
        assert_eq!(fast, checked, "both, case {case}");
        assert_eq!(traces(|| drop(both_grad(xs, w))), 0, "both, case {case}");
    }
}

#[test]
fn long_bodies_hessian_vector_products_run_compiled() {
    let w = [0.4, -0.7, 0.9, 0.2];
    let xs = [0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.25, -0.35];
    let hvp = |v: &[f64]| {
        let tangent: [f64; 12] = v.try_into().expect("12 numbers");
        both_hvp(xs, w, tangent).map(|(value, g, p)| (value, g.to_vec(), p.to_vec()))
    };
    assert_eq!(traces(|| drop(hvp(&[1.0; 12]))), 0);
    let (value, gradient) = both_grad(xs, w).expect("finite");
    let (_, _, hessian) = both_hessian(xs, w).expect("finite");
    let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
    check_columns(12, hvp, &hessian, (value, &gradient)).expect("finite");
}
