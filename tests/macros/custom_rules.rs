//! Custom derivative rules, `#[differentiable(derivative = slope)]`: one node named by the
//! rule on every path, the rule's slopes as its local derivatives, second order through a
//! differentiable slope, and the special functions of `scalar_autodiff::special` against central
//! differences over their domains.

// A glob brings each function's hidden body too (`differentiable_erf`), which bodies that
// call it need; or call by path, `special::erf(x)`.
use scalar_autodiff::special;
use scalar_autodiff::special::*;
use scalar_autodiff::{differentiable, scalar_gradient_check, Scalar, ScalarAutodiffError};

type Result = std::result::Result<(), ScalarAutodiffError>;

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[differentiable(derivative = sig_slope)]
fn sig(x: f64) -> f64 {
    logistic(x)
}

#[differentiable]
fn sig_slope(_x: f64, value: f64) -> f64 {
    value * (1.0 - value)
}

/// A rule whose slope function is plain Rust: first order only.
#[differentiable(derivative = opaque_slope)]
fn opaque(x: f64) -> f64 {
    x.sin() * 2.0
}

fn opaque_slope(x: f64, _value: f64) -> f64 {
    2.0 * x.cos()
}

/// A second rule with the same plain slope as [`opaque`]: their stand-ins for a hidden
/// body of `opaque_slope` are one item, so the two glob imports do not clash.
#[differentiable(derivative = opaque_slope)]
fn opaque_again(x: f64) -> f64 {
    2.0 * x.sin()
}

/// Two operands, slopes as an array, differentiable: `x^2 y + e^y`.
#[differentiable(derivative = mix_slopes)]
fn mix(x: f64, y: f64) -> f64 {
    x * x * y + y.exp()
}

#[differentiable]
fn mix_slopes(x: f64, y: f64, _value: f64) -> [f64; 2] {
    [2.0 * x * y, x * x + y.exp()]
}

/// Three operands: `x y z`.
#[differentiable(derivative = triple_slopes)]
fn triple(x: f64, y: f64, z: f64) -> f64 {
    x * y * z
}

#[differentiable]
fn triple_slopes(x: f64, y: f64, z: f64, _value: f64) -> [f64; 3] {
    [y * z, x * z, x * y]
}

/// `cbrt`, whose slope at 0 is infinite.
#[differentiable(derivative = root_slope)]
fn root(x: f64) -> f64 {
    x.cbrt()
}

#[differentiable]
fn root_slope(_x: f64, value: f64) -> f64 {
    1.0 / (3.0 * value * value)
}

#[differentiable]
fn loss(w: f64, b: f64) -> f64 {
    let y = sig(w * 1.5 + b);
    y * y + opaque(w)
}

// (`triple(2.0, c, c)` lends `c` twice, which a compiled caller leaves to the tape.)
#[differentiable(tape)]
fn model(a: f64, b: f64, c: f64) -> f64 {
    mix(a, b) + triple(a, b, c) * mix(c, 0.5) + triple(2.0, c, c)
}

/// [`model`] without the repeated operand (`triple(2.0, c, c)` lends `c` twice, which a
/// compiled caller leaves to the tape).
#[differentiable]
fn spread(a: f64, b: f64, c: f64) -> f64 {
    mix(a, b) + triple(a, b, c) * mix(c, 0.5)
}

#[differentiable]
fn summed(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        let mut row = 0.0;
        for wj in w {
            row += sig(wj * x) * wj;
        }
        total += special::erf(row) + ln_gamma(1.5 + row * row);
    }
    total
}

#[differentiable]
fn through_root(x: f64) -> f64 {
    root(x) * 2.0
}

#[differentiable]
fn only_constants(x: f64) -> f64 {
    x * sig(0.0) + mix(1.0, 2.0)
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn one_node_named_by_the_rule_on_every_path() -> Result {
    let (value, gradient) = loss_grad(0.3, -0.2)?;
    let s = logistic(0.3 * 1.5 - 0.2);
    assert_eq!(value, s * s + 0.3f64.sin() * 2.0);
    let ds = s * (1.0 - s);
    let dw = 2.0 * s * ds * 1.5 + 2.0 * 0.3f64.cos();
    let db = 2.0 * s * ds;
    assert!(close(gradient[0], dw, 1e-15), "{gradient:?} {dw}");
    assert!(close(gradient[1], db, 1e-15), "{gradient:?} {db}");

    // The graph form: the same bits, and the ledger names the rules.
    let w = Scalar::variable(0.3)?;
    let b = Scalar::variable(-0.2)?;
    let out = loss_graph(&w, &b)?;
    assert_eq!(out.value(), value);
    let pass = out.backward()?;
    assert_eq!(w.gradient(), Some(gradient[0]));
    assert_eq!(b.gradient(), Some(gradient[1]));
    let ledger = pass.ledger().to_string();
    assert!(
        ledger.contains(" sig#") && ledger.contains(" opaque#"),
        "{ledger}"
    );

    // Forward mode: the gradient dotted with the tangent.
    let (jvp_value, slope) = loss_jvp(0.3, -0.2, [0.7, -1.1])?;
    assert_eq!(jvp_value, value);
    assert!(close(slope, 0.7 * gradient[0] - 1.1 * gradient[1], 1e-14));
    Ok(())
}

#[test]
fn a_rule_s_own_generated_functions() -> Result {
    // `name_grad` of the rule itself: the slope, through the same node.
    let (value, gradient) = sig_grad(0.4)?;
    assert_eq!(
        (value, gradient),
        (logistic(0.4), [sig_slope(0.4, logistic(0.4))])
    );
    let (value, gradient) = mix_grad(1.5, -0.5)?;
    assert_eq!(
        (value, gradient),
        (mix(1.5, -0.5), mix_slopes(1.5, -0.5, value))
    );
    let (value, gradient) = triple_grad(2.0, 3.0, 5.0)?;
    assert_eq!((value, gradient), (30.0, [15.0, 10.0, 6.0]));
    let (_, slope) = triple_jvp(2.0, 3.0, 5.0, [1.0, -1.0, 0.5])?;
    assert_eq!(slope, 15.0 - 10.0 + 3.0);
    let x = Scalar::variable(1.5)?;
    let y = Scalar::variable(-0.5)?;
    let out = mix_graph(&x, &y)?;
    out.backward()?;
    assert_eq!(out.operation().as_str(), "mix");
    assert_eq!(
        [x.gradient(), y.gradient()],
        gradient_of_mix(1.5, -0.5).map(Some)
    );
    Ok(())
}

fn gradient_of_mix(x: f64, y: f64) -> [f64; 2] {
    mix_slopes(x, y, mix(x, y))
}

#[test]
fn rules_of_two_and_three_operands() -> Result {
    let (a, b, c) = (0.7, -0.4, 1.3);
    let (value, g) = model_grad(a, b, c)?;
    let plain = model(a, b, c);
    assert_eq!(value, plain);
    // Central differences of the plain function, one parameter at a time.
    let point = [a, b, c];
    for (i, &analytic) in g.iter().enumerate() {
        let check = scalar_gradient_check(point[i], analytic, 1e-6, 1e-8, |t| {
            let mut p = point;
            p[i] = t;
            model(p[0], p[1], p[2])
        })?;
        assert!(check.passed, "{i}: {check:?}");
    }
    // Analytic second derivatives of the whole model, by hand.
    let (_, gradient, h) = model_hessian(a, b, c)?;
    assert_eq!(gradient, g);
    let m = |x: f64, y: f64| x * x * y + y.exp();
    let half = 0.5f64;
    let mc = m(c, half);
    // model = m(a,b) + a b c m(c, ½) + 2 c²
    let expected = [
        [2.0 * b, 2.0 * a + c * mc, b * mc + b * c * 2.0 * c * half],
        [2.0 * a + c * mc, b.exp(), a * mc + a * c * 2.0 * c * half],
        [
            b * mc + b * c * 2.0 * c * half,
            a * mc + a * c * 2.0 * c * half,
            3.0 * a * b * c + 4.0,
        ],
    ];
    for i in 0..3 {
        for j in 0..3 {
            assert!(
                close(h[i][j], expected[i][j], 1e-14),
                "h[{i}][{j}] = {}, expected {}",
                h[i][j],
                expected[i][j]
            );
            assert_eq!(h[i][j].to_bits(), h[j][i].to_bits());
        }
    }
    Ok(())
}

#[test]
fn grad_and_graph_agree_bit_for_bit_in_loops() -> Result {
    let xs = [0.5, -1.25, 2.0];
    for w in [[0.1, -0.3, 0.8], [1.5, 0.25, -2.0], [0.0, 0.0, 0.0]] {
        let (value, gradient) = summed_grad(w, &xs)?;
        let tracked = [
            Scalar::variable(w[0])?,
            Scalar::variable(w[1])?,
            Scalar::variable(w[2])?,
        ];
        let out = summed_graph(&tracked, &xs)?;
        assert_eq!(out.value().to_bits(), value.to_bits());
        out.backward()?;
        for (variable, expected) in tracked.iter().zip(gradient) {
            assert_eq!(
                variable.gradient().map(f64::to_bits),
                Some(expected.to_bits())
            );
        }
        // And against central differences.
        for i in 0..3 {
            let check = scalar_gradient_check(w[i], gradient[i], 1e-6, 1e-7, |t| {
                let mut p = w;
                p[i] = t;
                summed(p, &xs)
            })?;
            assert!(check.passed, "{w:?} {i}: {check:?}");
        }
        // Hessian-vector products through erf, ln_gamma and sig against central
        // differences of the gradient.
        // The rules' halves on duals: a warm call records no trace.
        let tangent = [0.3, -0.7, 1.1];
        let _ = summed_hvp(w, &xs, tangent)?;
        let before = scalar_autodiff::__private::traces();
        let (_, hvp_gradient, product) = summed_hvp(w, &xs, tangent)?;
        assert_eq!(scalar_autodiff::__private::traces(), before, "{w:?}");
        assert_eq!(hvp_gradient, gradient);
        let step = 1e-5;
        let shifted = |sign: f64| -> std::result::Result<[f64; 3], ScalarAutodiffError> {
            let p = [0, 1, 2].map(|i| w[i] + sign * step * tangent[i]);
            Ok(summed_grad(p, &xs)?.1)
        };
        let (up, down) = (shifted(1.0)?, shifted(-1.0)?);
        for i in 0..3 {
            let numerical = (up[i] - down[i]) / (2.0 * step);
            assert!(
                close(product[i], numerical, 1e-6),
                "{w:?} {i}: {} vs {numerical}",
                product[i]
            );
        }
    }
    Ok(())
}

/// The value and gradient bits of `name_grad` and of `name_graph` + `backward`.
fn both_paths<const N: usize>(
    grad: impl Fn(&[f64; N]) -> std::result::Result<(f64, [f64; N]), ScalarAutodiffError>,
    graph: impl Fn(&[Scalar; N]) -> std::result::Result<Scalar, ScalarAutodiffError>,
    point: [f64; N],
) -> std::result::Result<(u64, Vec<u64>), ScalarAutodiffError> {
    let (value, gradient) = grad(&point)?;
    let variables = point.map(|p| Scalar::variable(p).expect("finite"));
    let out = graph(&variables)?;
    out.backward()?;
    assert_eq!(out.value().to_bits(), value.to_bits(), "value at {point:?}");
    for (variable, expected) in variables.iter().zip(gradient) {
        let found = variable.gradient().map(f64::to_bits);
        assert_eq!(found, Some(expected.to_bits()), "gradient at {point:?}");
    }
    Ok((
        value.to_bits(),
        gradient.iter().map(|g| g.to_bits()).collect(),
    ))
}

#[test]
fn callers_of_rules_run_compiled_sweeps_with_the_tape_s_bits() -> Result {
    use scalar_autodiff::__private::traces;
    for point in [[0.3, -0.2], [2.0, 1.0], [-4.0, 0.0]] {
        let loss_both = |p: &[f64; 2]| loss_grad(p[0], p[1]);
        both_paths(loss_both, |v| loss_graph(&v[0], &v[1]), point)?;
        let before = traces();
        loss_grad(point[0], point[1])?;
        assert_eq!(traces(), before, "loss_grad{point:?} traced");
    }
    for point in [[0.7, -0.4, 1.3], [0.0, 2.0, -1.0]] {
        let model_both = |p: &[f64; 3]| model_grad(p[0], p[1], p[2]);
        both_paths(model_both, |v| model_graph(&v[0], &v[1], &v[2]), point)?;
        let spread_both = |p: &[f64; 3]| spread_grad(p[0], p[1], p[2]);
        both_paths(spread_both, |v| spread_graph(&v[0], &v[1], &v[2]), point)?;
        let before = traces();
        spread_grad(point[0], point[1], point[2])?;
        assert_eq!(traces(), before, "spread_grad{point:?} traced");
    }
    // Loops over data calling rules by path and by name.
    let xs = [0.5, -1.25, 2.0];
    summed_grad([0.1, -0.3, 0.8], &xs)?;
    let before = traces();
    summed_grad([0.1, -0.3, 0.8], &xs)?;
    assert_eq!(traces(), before, "summed_grad traced");
    // An infinite slope in a compiled caller: its sweep gives up, the tape names the rule.
    let before = traces();
    let error = through_root_grad(0.0).unwrap_err();
    assert!(traces() > before);
    assert_eq!(error.kind(), "non-finite-derivative");
    assert!(error.to_string().starts_with("root(0.0)"), "{error}");
    Ok(())
}

#[test]
fn constant_operands_fold_or_become_leaves() -> Result {
    let (value, gradient) = only_constants_grad(2.0)?;
    assert_eq!(value, 2.0 * 0.5 + mix(1.0, 2.0));
    assert_eq!(gradient, [0.5]);
    let x = Scalar::variable(2.0)?;
    let out = only_constants_graph(&x)?;
    out.backward()?;
    assert_eq!(x.gradient(), Some(0.5));
    Ok(())
}

#[test]
fn a_non_finite_slope_is_the_same_typed_error_as_a_built_in_one() -> Result {
    // Away from 0, the rule's slope.
    let (_, gradient) = through_root_grad(8.0)?;
    assert!(close(gradient[0], 2.0 / 12.0, 1e-15));
    // At 0 the slope is infinite: every path says so, naming the rule.
    let error = through_root_grad(0.0).unwrap_err();
    match &error {
        ScalarAutodiffError::NonFiniteDerivative {
            operation,
            derivative,
            ..
        } => {
            assert_eq!(operation.as_str(), "root");
            assert_eq!(*derivative, f64::INFINITY);
        }
        other => panic!("expected a non-finite derivative, got {other:?}"),
    }
    let x = Scalar::variable(0.0)?;
    let graph_error = through_root_graph(&x)?.backward().unwrap_err();
    assert_eq!(graph_error.kind(), "non-finite-derivative");
    assert!(
        graph_error.to_string().contains("root(0.0)"),
        "{graph_error}"
    );
    assert_eq!(x.gradient(), Some(0.0), "a failed pass stores nothing");
    let jvp_error = through_root_jvp(0.0, [1.0]).unwrap_err();
    match jvp_error {
        ScalarAutodiffError::NonFiniteSlope { operation, .. } => {
            assert_eq!(operation.as_str(), "root")
        }
        other => panic!("expected a non-finite slope, got {other:?}"),
    }
    // A non-finite value is refused as a built-in operation's is.
    let pole = ln_gamma_grad(0.0).unwrap_err();
    match pole {
        ScalarAutodiffError::NonFiniteResult {
            operation,
            operands,
            value,
            ..
        } => {
            assert_eq!(operation.as_str(), "ln_gamma");
            assert_eq!(operands.as_slice(), [0.0]);
            assert_eq!(value, f64::INFINITY);
        }
        other => panic!("expected a non-finite result, got {other:?}"),
    }
    Ok(())
}

#[test]
fn second_order_needs_a_differentiable_slope() -> Result {
    let (_, g, h) = sig_hessian(0.4)?;
    let s = logistic(0.4);
    assert!(close(g[0], s * (1.0 - s), 1e-16));
    assert!(close(h[0][0], s * (1.0 - s) * (1.0 - 2.0 * s), 1e-15));
    // `opaque_slope` is plain Rust: first order works, second order is a typed error.
    assert!(close(opaque_grad(0.4)?.1[0], 2.0 * 0.4f64.cos(), 1e-16));
    assert_eq!(opaque_again_grad(0.4)?.1, [opaque_slope(0.4, 0.0)]);
    let again = opaque_again_hessian(0.4).unwrap_err();
    assert!(again.to_string().starts_with("opaque_again has"), "{again}");
    for error in [
        opaque_hessian(0.4).unwrap_err(),
        loss_hvp(0.3, -0.2, [1.0, 0.0]).unwrap_err(),
    ] {
        assert_eq!(error.kind(), "no-second-derivative");
        assert!(
            error
                .to_string()
                .starts_with("opaque has a custom derivative"),
            "{error}"
        );
    }
    Ok(())
}

/// A generated `name_grad` and `name_hessian` of one `f64`.
type Grad = fn(f64) -> std::result::Result<(f64, [f64; 1]), ScalarAutodiffError>;
type Hessian =
    fn(f64) -> std::result::Result<(f64, [f64; 1], Box<[[f64; 1]; 1]>), ScalarAutodiffError>;

/// `f` against a central difference of `plain` at each point, and the Hessian of `f`
/// (through its differentiable slope) against a central difference of its gradient.
fn check_special(
    name: &str,
    plain: fn(f64) -> f64,
    grad: Grad,
    hessian: Hessian,
    points: impl Iterator<Item = f64>,
) -> Result {
    let mut count = 0;
    for x in points {
        let (value, [slope]) = grad(x)?;
        assert_eq!(value.to_bits(), plain(x).to_bits(), "{name}({x})");
        let step = 1e-6 * x.abs().max(1.0);
        let check = scalar_gradient_check(x, slope, step, 1e-7, plain)?;
        assert!(check.passed, "{name}'({x}): {check:?}");
        let (_, _, h) = hessian(x)?;
        let numerical = (grad(x + step)?.1[0] - grad(x - step)?.1[0]) / (2.0 * step);
        assert!(
            close(h[0][0], numerical, 1e-6),
            "{name}''({x}): {} vs {numerical}",
            h[0][0]
        );
        count += 1;
    }
    assert!(count > 50, "{name}: only {count} points");
    Ok(())
}

#[differentiable]
fn erf_of(x: f64) -> f64 {
    erf(x)
}

#[differentiable]
fn erfc_of(x: f64) -> f64 {
    erfc(x)
}

#[differentiable]
fn sigmoid_of(x: f64) -> f64 {
    sigmoid(x)
}

#[differentiable]
fn ln_gamma_of(x: f64) -> f64 {
    ln_gamma(x)
}

/// `n` points evenly over `[lo, hi]`.
fn grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| lo + (hi - lo) * i as f64 / (n - 1) as f64)
}

#[test]
fn special_functions_match_central_differences_over_their_domains() -> Result {
    check_special(
        "erf",
        erf,
        erf_of_grad,
        erf_of_hessian,
        grid(-5.0, 5.0, 101),
    )?;
    check_special(
        "erfc",
        erfc,
        erfc_of_grad,
        erfc_of_hessian,
        grid(-5.0, 5.0, 101),
    )?;
    check_special(
        "sigmoid",
        sigmoid,
        sigmoid_of_grad,
        sigmoid_of_hessian,
        grid(-30.0, 30.0, 121),
    )?;
    // ln Γ on both sides of 0, avoiding the poles at the non-positive integers.
    let positive = grid(0.05, 40.0, 100);
    let negative = grid(-5.95, -0.05, 60).filter(|x| (x - x.round()).abs() > 0.04);
    check_special(
        "ln_gamma",
        ln_gamma,
        ln_gamma_of_grad,
        ln_gamma_of_hessian,
        positive.chain(negative),
    )?;
    Ok(())
}

#[test]
fn special_functions_at_known_points() -> Result {
    // ψ(1) = -γ, ψ'(1) = π²/6, ψ(1/2) = -γ - 2 ln 2, ψ(-1/2) = ψ(1/2) + 2,
    // ψ'(1/2) = π²/2; sigmoid never overflows.
    let euler = 0.577_215_664_901_532_9;
    let pi2 = std::f64::consts::PI.powi(2);
    assert!(
        close(digamma(1.0), -euler, 1e-14),
        "{}",
        digamma(1.0) + euler
    );
    assert!(close(digamma(0.5), -euler - 2.0 * 2f64.ln(), 1e-14));
    assert!(close(digamma(-0.5), -euler - 2.0 * 2f64.ln() + 2.0, 1e-14));
    assert!(close(digamma(100.0), 4.600_161_852_738_087, 1e-15));
    let (_, _, h) = ln_gamma_of_hessian(1.0)?;
    assert!(close(h[0][0], pi2 / 6.0, 1e-14));
    let (_, _, h) = ln_gamma_of_hessian(0.5)?;
    assert!(close(h[0][0], pi2 / 2.0, 1e-14));
    assert_eq!(sigmoid(-1000.0), 0.0);
    assert_eq!(sigmoid(1000.0), 1.0);
    assert_eq!(sigmoid_of_grad(-1000.0)?.1, [0.0]);
    // erfc keeps its digits where 1 - erf would not.
    assert!(close(
        erfc_of_grad(10.0)?.0,
        2.088_487_583_762_545e-45,
        1e-14
    ));
    let (_, slope) = erfc_of_grad(10.0)?;
    assert!(close(
        slope[0],
        -std::f64::consts::FRAC_2_SQRT_PI * (-100f64).exp(),
        1e-15
    ));
    // A third derivative of ln Γ would differentiate trigamma, which has no rule.
    Ok(())
}

#[test]
fn hand_built_rules_on_scalars() -> Result {
    use scalar_autodiff::CustomRule;
    fn hypot3(x: f64, y: f64, z: f64) -> f64 {
        (x * x + y * y + z * z).sqrt()
    }
    fn hypot3_slopes(x: f64, y: f64, z: f64, value: f64) -> [f64; 3] {
        [x / value, y / value, z / value]
    }
    static HYPOT3: CustomRule = CustomRule::ternary("hypot3", hypot3, hypot3_slopes);
    let x = Scalar::variable(1.0)?;
    let y = Scalar::variable(2.0)?;
    let z = Scalar::constant(2.0)?;
    let r = x.custom(&HYPOT3, &[&y, &z])?;
    assert_eq!(r.value(), 3.0);
    let reused = r.mul(&r)?;
    reused.backward()?;
    // d(r²)/dx = 2x, d(r²)/dy = 2y.
    assert_eq!(x.gradient(), Some(2.0));
    assert_eq!(y.gradient(), Some(4.0));
    assert_eq!(r.operation().as_str(), "hypot3");
    let wrong = x.custom(&HYPOT3, &[&y]).unwrap_err();
    assert_eq!(
        wrong,
        ScalarAutodiffError::LengthMismatch {
            expected: 3,
            found: 2
        }
    );
    Ok(())
}
