//! `Sgd` and `Adam` against PyTorch: five steps of nine configurations must give PyTorch's
//! parameters to the last bit, and the optimizers step every parameter shape a
//! `#[differentiable]` function returns a gradient for.
//!
//! The reference numbers come from torch 2.15.0 on x86-64 (AVX-512 kernels), float64, the
//! single-tensor path (`foreach=False`, `fused=False`), from `p0 = [0.5, -1.5, 2.0, 0.0]`
//! and the gradients of [`gradient`]: each step sets `p.grad` and calls `opt.step()`, and
//! the parameters are printed with `repr` (the shortest decimal that reads back to the same
//! bits). Its CPU kernels round `add(alpha=)`, `addcmul` and `lerp` as fused multiply-adds;
//! with unfused arithmetic five of the SGD numbers differ by up to 7 ulp.

use scalar_autodiff::{differentiable, Adam, Parameters, ScalarAutodiffError, Sgd};

/// The gradient of step `t` (1-based), computed as the reference script did in Python.
fn gradient(step: u32) -> [f64; 4] {
    let sign = if step.is_multiple_of(2) { 1.0 } else { -1.0 };
    let t = f64::from(step);
    [0.3 * t - 1.0, 0.7 - 0.2 * t * t, sign * 0.45, 1.25 / t]
}

enum Optimizer {
    Sgd(Sgd),
    Adam(Adam),
}

impl Optimizer {
    fn step<P, G>(&mut self, params: &mut P, gradient: &G) -> Result<(), ScalarAutodiffError>
    where
        P: Parameters + ?Sized,
        G: Parameters + ?Sized,
    {
        match self {
            Self::Sgd(sgd) => sgd.step(params, gradient),
            Self::Adam(adam) => adam.step(params, gradient),
        }
    }
}

struct Case {
    torch: &'static str,
    optimizer: Optimizer,
    after: [[f64; 4]; 5],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            torch: "SGD(lr=0.1)",
            optimizer: Optimizer::Sgd(Sgd::new(0.1)),
            after: [
                [0.57, -1.55, 2.045, -0.125],
                [0.61, -1.54, 2.0, -0.1875],
                [0.62, -1.43, 2.045, -0.22916666666666666],
                [0.6, -1.18, 2.0, -0.2604166666666667],
                [
                    0.5499999999999999,
                    -0.7499999999999999,
                    2.045,
                    -0.2854166666666667,
                ],
            ],
        },
        Case {
            torch: "SGD(lr=0.1, momentum=0.9)",
            optimizer: Optimizer::Sgd(Sgd::new(0.1).momentum(0.9)),
            after: [
                [0.57, -1.55, 2.045, -0.125],
                [0.6729999999999999, -1.585, 2.0404999999999998, -0.3],
                [0.7757, -1.5065, 2.08145, -0.49916666666666665],
                [
                    0.8481299999999999,
                    -1.1858499999999998,
                    2.073305,
                    -0.7096666666666667,
                ],
                [
                    0.863317,
                    -0.46726499999999976,
                    2.1109744999999998,
                    -0.9241166666666667,
                ],
            ],
        },
        Case {
            torch: "SGD(lr=0.1, momentum=0.9, weight_decay=0.01)",
            optimizer: Optimizer::Sgd(Sgd::new(0.1).momentum(0.9).weight_decay(0.01)),
            after: [
                [0.5695, -1.5485, 2.043, -0.125],
                [0.6714805, -1.5806015, 2.034657, -0.299875],
                [
                    0.7725914695,
                    -1.4979122485,
                    2.070113643,
                    -0.4986292916666667,
                ],
                [
                    0.8428187505805,
                    -1.1719940099015,
                    2.054954508057,
                    -0.7082595248750001,
                ],
                [
                    0.8551804848023695,
                    -0.44749560115294845,
                    2.084256332100243,
                    -0.9212184752376251,
                ],
            ],
        },
        Case {
            torch: "SGD(lr=0.1, momentum=0.9, nesterov=True)",
            optimizer: Optimizer::Sgd(Sgd::new(0.1).momentum(0.9).nesterov(true)),
            after: [
                [0.633, -1.595, 2.0855, -0.23750000000000002],
                [0.7657, -1.6165, 2.0364500000000003, -0.4575000000000001],
                [
                    0.8681300000000001,
                    -1.43585,
                    2.1183050000000003,
                    -0.6784166666666668,
                ],
                [0.913317, -0.897265, 2.0659745000000003, -0.8991166666666668],
                [
                    0.8769853000000001,
                    0.17946150000000008,
                    2.1448770500000003,
                    -1.1171216666666668,
                ],
            ],
        },
        Case {
            torch: "SGD(lr=0.1, momentum=0.9, dampening=0.5)",
            optimizer: Optimizer::Sgd(Sgd::new(0.1).momentum(0.9).dampening(0.5)),
            after: [
                [0.57, -1.55, 2.045, -0.125],
                [0.6529999999999999, -1.59, 2.0629999999999997, -0.26875],
                [
                    0.7326999999999999,
                    -1.571,
                    2.1016999999999997,
                    -0.4189583333333333,
                ],
                [
                    0.79443,
                    -1.4288999999999998,
                    2.1140299999999996,
                    -0.5697708333333333,
                ],
                [
                    0.824987,
                    -1.0860099999999997,
                    2.1476269999999995,
                    -0.7180020833333334,
                ],
            ],
        },
        Case {
            torch: "Adam(lr=0.01) [betas=(0.9,0.999), eps=1e-8, wd=0]",
            optimizer: Optimizer::Adam(Adam::new(0.01)),
            after: [
                [
                    0.5099999998571428,
                    -1.5099999998,
                    2.009999999777778,
                    -0.00999999992,
                ],
                [
                    0.5195103628226078,
                    -1.5151102604300677,
                    2.009473684,
                    -0.01932179621376992,
                ],
                [
                    0.5275929026801183,
                    -1.5109734992514783,
                    2.012831617504715,
                    -0.028053381393429437,
                ],
                [
                    0.5326302293725259,
                    -1.5042661589396302,
                    2.0123053017269372,
                    -0.036265769855622396,
                ],
                [
                    0.5334813042763104,
                    -1.4966082325581767,
                    2.014349452007511,
                    -0.04401460849166959,
                ],
            ],
        },
        Case {
            torch: "Adam(lr=0.01, betas=(0.8,0.99), eps=1e-6, weight_decay=0.1) [L2, coupled]",
            optimizer: Optimizer::Adam(
                Adam::new(0.01)
                    .betas(0.8, 0.99)
                    .epsilon(1e-6)
                    .l2_penalty(0.1),
            ),
            after: [
                [
                    0.5099999846154083,
                    -1.5099999714286532,
                    2.00999996000016,
                    -0.0099999920000064,
                ],
                [
                    0.5192671206250277,
                    -1.5105294108315144,
                    2.0049282271091142,
                    -0.01914657311697516,
                ],
                [
                    0.5264312202812094,
                    -1.5039690969773492,
                    2.003861550659604,
                    -0.027522525927244308,
                ],
                [
                    0.5294112927179634,
                    -1.4957132809898668,
                    1.9987885729433008,
                    -0.03520626500973483,
                ],
                [
                    0.5274668639406183,
                    -1.4866338455316102,
                    1.9965552837344542,
                    -0.04226631003722624,
                ],
            ],
        },
        Case {
            torch: "AdamW(lr=0.01, weight_decay=0.01) [betas=(0.9,0.999), eps=1e-8]",
            optimizer: Optimizer::Adam(Adam::new(0.01).weight_decay(0.01)),
            after: [
                [
                    0.5099499998571428,
                    -1.5098499998,
                    2.009799999777778,
                    -0.00999999992,
                ],
                [
                    0.519409367822622,
                    -1.5148092754300877,
                    2.0090727040000225,
                    -0.01932079621377792,
                ],
                [
                    0.5274399667433503,
                    -1.5105210333239554,
                    2.0122297302343375,
                    -0.028050449313816058,
                ],
                [
                    0.5324245494390836,
                    -1.503662640908775,
                    2.0115021914835363,
                    -0.036260032731077634,
                ],
                [
                    0.5332223818879241,
                    -1.4958543482632305,
                    2.013345191544962,
                    -0.04400524536385172,
                ],
            ],
        },
        Case {
            torch: "AdamW(lr=0.05, betas=(0.5,0.9), eps=1e-8, weight_decay=0.2)",
            optimizer: Optimizer::Adam(
                Adam::new(0.05)
                    .betas(0.5, 0.9)
                    .epsilon(1e-8)
                    .weight_decay(0.2),
            ),
            after: [
                [
                    0.5449999992857143,
                    -1.5349999989999998,
                    2.029999998888889,
                    -0.049999999600000004,
                ],
                [
                    0.5840007976414792,
                    -1.5338671593481175,
                    1.9930333326037037,
                    -0.09234563829123038,
                ],
                [
                    0.6082612969539284,
                    -1.4780925957034385,
                    1.9945315702300477,
                    -0.12803405836964168,
                ],
                [
                    0.6047121242543839,
                    -1.4090200085816529,
                    1.957919588231451,
                    -0.1582736223576867,
                ],
                [
                    0.5692947411575415,
                    -1.3346065954172899,
                    1.9560823274387422,
                    -0.1842066829665458,
                ],
            ],
        },
    ]
}

#[test]
fn five_steps_match_pytorch_to_the_last_bit() {
    for mut case in cases() {
        let mut p = [0.5, -1.5, 2.0, 0.0];
        for (t, expected) in (1..=5).zip(case.after) {
            case.optimizer.step(&mut p, &gradient(t)).unwrap();
            assert_eq!(
                p.map(f64::to_bits),
                expected.map(f64::to_bits),
                "{} after step {t}: {p:?} != {expected:?}",
                case.torch
            );
        }
    }
}

/// The same steps on a `Vec<f64>`, a slice and a derived struct give the same bits as on
/// an array: the shape only decides the order of the scalars.
#[test]
fn every_parameter_shape_steps_the_same() {
    #[derive(Parameters, Clone, Debug, PartialEq)]
    struct Split {
        head: f64,
        tail: [f64; 2],
        last: Vec<f64>,
    }
    for case in cases() {
        let mut optimizers = (0..4).map(|_| match &case.optimizer {
            Optimizer::Sgd(sgd) => Optimizer::Sgd(sgd.clone()),
            Optimizer::Adam(adam) => Optimizer::Adam(adam.clone()),
        });
        let (mut on_vec, mut on_slice, mut on_struct, mut flat_to_struct) = (
            optimizers.next().unwrap(),
            optimizers.next().unwrap(),
            optimizers.next().unwrap(),
            optimizers.next().unwrap(),
        );
        let mut vec = vec![0.5, -1.5, 2.0, 0.0];
        let mut slice = [0.5, -1.5, 2.0, 0.0];
        let mut split = Split {
            head: 0.5,
            tail: [-1.5, 2.0],
            last: vec![0.0],
        };
        // A flat gradient steps a struct too, paired by place.
        let mut from_flat = split.clone();
        for t in 1..=5 {
            let g = gradient(t);
            flat_to_struct.step(&mut from_flat, &g).unwrap();
            on_vec.step(&mut vec, &g.to_vec()).unwrap();
            on_slice.step(&mut slice[..], &g.to_vec()).unwrap();
            let g = Split {
                head: g[0],
                tail: [g[1], g[2]],
                last: vec![g[3]],
            };
            on_struct.step(&mut split, &g).unwrap();
        }
        let expected = case.after[4].map(f64::to_bits);
        assert_eq!(
            vec.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            expected,
            "{}",
            case.torch
        );
        assert_eq!(slice.map(f64::to_bits), expected, "{}", case.torch);
        assert_eq!(from_flat, split, "{}", case.torch);
        assert_eq!(
            split
                .to_flat()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            expected
        );
    }
}

/// Logistic regression on a separable toy set, trained with `name_grad` and each
/// optimizer: the loss falls by orders of magnitude and the classes come out right.
#[test]
fn optimizers_train_a_differentiated_model() {
    #[derive(Parameters, Clone, Debug)]
    struct Logistic {
        w: [f64; 2],
        b: f64,
    }

    #[differentiable]
    fn loss(#[param] p: &Logistic, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for (x, y) in xs.iter().zip(ys) {
            let z = p.w[0] * x[0] + p.w[1] * x[1] + p.b;
            // -log sigmoid(z) for y = 1, -log(1 - sigmoid(z)) for y = 0, written stably.
            let margin = if *y > 0.5 { z } else { -z };
            total += (1.0 + (-margin).exp()).ln();
        }
        total / ys.len() as f64
    }

    let xs = [
        [0.0, 1.0],
        [1.0, 2.0],
        [2.0, 0.5],
        [3.0, 1.5],
        [-1.0, 0.0],
        [0.5, -1.0],
    ];
    let ys = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    let start = Logistic {
        w: [0.0, 0.0],
        b: 0.0,
    };
    let first = loss(&start, &xs, &ys);
    let mut optimizers = [
        Optimizer::Sgd(Sgd::new(0.5).momentum(0.9)),
        Optimizer::Adam(Adam::new(0.1)),
        Optimizer::Adam(Adam::new(0.1).weight_decay(1e-3)),
    ];
    for optimizer in &mut optimizers {
        let mut p = start.clone();
        for _ in 0..500 {
            let (_, gradient) = loss_grad(&p, &xs, &ys).unwrap();
            optimizer.step(&mut p, &gradient).unwrap();
        }
        let last = loss(&p, &xs, &ys);
        assert!(last < 0.05 * first, "{first} -> {last}");
        for (x, y) in xs.iter().zip(ys) {
            let z = p.w[0] * x[0] + p.w[1] * x[1] + p.b;
            assert_eq!(z > 0.0, y > 0.5, "{x:?} is classified wrongly by {p:?}");
        }
    }
}

/// PyTorch's first-step rules, written out: SGD's momentum buffer starts as the gradient
/// (no dampening on the first step), and Adam's first step moves every parameter by about
/// `lr` against the sign of its gradient, since `m̂ / √v̂ = g / |g|`.
#[test]
fn first_steps_follow_the_documented_rules() {
    let mut p = [1.0, -2.0];
    Sgd::new(0.1)
        .momentum(0.9)
        .dampening(0.5)
        .step(&mut p, &[1.0, -4.0])
        .unwrap();
    assert_eq!(p, [1.0 - 0.1, -2.0 + 0.4]);

    let mut p = [1.0, -2.0, 3.0];
    Adam::new(0.01)
        .epsilon(0.0)
        .step(&mut p, &[0.25, -8.0, 1e-3])
        .unwrap();
    for (after, before) in p.iter().zip([1.0 - 0.01, -2.0 + 0.01, 3.0 - 0.01]) {
        approx::assert_relative_eq!(*after, before, max_relative = 1e-15);
    }
}
