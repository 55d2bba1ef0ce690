//! `Parameters` and `#[derive(Parameters)]`: the order of the walk, tracked copies,
//! gradients read back in the struct's shape, and the flat and optimizer-step helpers.

use scalar_autodiff::{Parameters, Scalar, ScalarAutodiffError};

/// A dense layer from 2 inputs to 3 outputs.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Linear {
    w: [[f64; 2]; 3],
    b: [f64; 3],
}

/// Every kind of field: a scalar, a derived struct, a `Vec`, a nested array, a `Vec` of
/// derived structs.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Model {
    scale: f64,
    hidden: Linear,
    out: Vec<f64>,
    cube: [[[f64; 2]; 2]; 2],
    heads: Vec<Linear>,
}

/// A const-generic layer, `M` outputs of `N` inputs.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Layer<const N: usize, const M: usize> {
    w: [[f64; N]; M],
    b: [f64; M],
}

/// A tuple struct.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Pair(f64, Vec<f64>);

/// Two `Vec`s whose lengths can trade places at the same total.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct TwoVecs {
    a: Vec<f64>,
    b: Vec<f64>,
}

/// A struct declared by a `macro_rules!` macro.
macro_rules! declare {
    ($name:ident) => {
        #[derive(Parameters, Clone, Debug, PartialEq)]
        struct $name {
            first: [f64; 2],
            second: f64,
        }
    };
}
declare!(Declared);

mod elsewhere {
    /// Public fields of a public struct in another module.
    #[derive(scalar_autodiff::Parameters)]
    pub struct Public {
        pub a: f64,
        pub b: [f64; 2],
    }
}

fn linear(offset: f64) -> Linear {
    Linear {
        w: [
            [offset + 1.0, offset + 2.0],
            [offset + 3.0, offset + 4.0],
            [offset + 5.0, offset + 6.0],
        ],
        b: [offset + 7.0, offset + 8.0, offset + 9.0],
    }
}

/// A model whose scalars are 1, 2, 3, ... in walk order.
fn model() -> Model {
    Model {
        scale: 1.0,
        hidden: linear(1.0),
        out: vec![11.0, 12.0],
        cube: [[[13.0, 14.0], [15.0, 16.0]], [[17.0, 18.0], [19.0, 20.0]]],
        heads: vec![linear(20.0), linear(29.0)],
    }
}

/// 1.0, 2.0, ..., `n` as f64.
fn one_to(n: usize) -> Vec<f64> {
    (1..=n).map(|i| i as f64).collect()
}

#[test]
fn the_walk_is_in_field_order_and_row_major() {
    let model = model();
    assert_eq!(model.parameter_count(), 1 + 9 + 2 + 8 + 18);
    assert_eq!(model.to_flat(), one_to(38));
    let mut visited = Vec::new();
    model.visit(&mut |value| visited.push(value));
    assert_eq!(visited, one_to(38));

    let layer = Layer::<2, 3> {
        w: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        b: [7.0, 8.0, 9.0],
    };
    assert_eq!(layer.parameter_count(), 9);
    assert_eq!(layer.to_flat(), one_to(9));
    assert_eq!(linear(0.0).to_flat(), layer.to_flat());

    let pair = Pair(1.0, vec![2.0, 3.0]);
    assert_eq!((pair.parameter_count(), pair.to_flat()), (3, one_to(3)));
    let declared = Declared {
        first: [1.0, 2.0],
        second: 3.0,
    };
    assert_eq!(declared.to_flat(), one_to(3));
}

#[test]
fn visit_mut_reaches_every_scalar_in_order() {
    let mut model = model();
    let mut index = 0.0;
    model.visit_mut(&mut |value| {
        index += 1.0;
        *value = *value * 10.0 + index;
    });
    let expected: Vec<f64> = one_to(38).iter().map(|v| v * 11.0).collect();
    assert_eq!(model.to_flat(), expected);
    assert_eq!(model.hidden.w[2][1], 77.0);
    assert_eq!(model.heads[1].b[0], 36.0 * 11.0);
}

#[test]
fn try_track_puts_each_index_in_the_place_of_its_scalar() {
    let model = model();
    let flat = model.to_flat();
    let mut count = 0usize;
    let tracked = model.try_track(&mut |value| {
        assert_eq!(
            Some(&value),
            flat.get(count),
            "value {count} is out of order"
        );
        count += 1;
        Ok(count - 1)
    });
    let tracked = tracked.expect("the counter never fails");
    assert_eq!(count, 38);
    assert_eq!(tracked.scale, 0);
    assert_eq!(tracked.hidden.w, [[1, 2], [3, 4], [5, 6]]);
    assert_eq!(tracked.hidden.b, [7, 8, 9]);
    assert_eq!(tracked.out, vec![10, 11]);
    assert_eq!(tracked.cube, [[[12, 13], [14, 15]], [[16, 17], [18, 19]]]);
    assert_eq!(tracked.heads.len(), 2);
    assert_eq!(tracked.heads[0].w[0][0], 20);
    assert_eq!(tracked.heads[1].b, [35, 36, 37]);

    // `visit_tracked` walks the copy in the same order.
    let mut order = Vec::new();
    Model::visit_tracked(&tracked, &mut |index| order.push(*index));
    assert_eq!(order, (0..38).collect::<Vec<_>>());

    // The mirror is `Clone` and `Debug` (its fields are), and `Copy` when every field is.
    let copy = tracked.clone();
    assert_eq!(copy.heads[1].b, [35, 36, 37]);
    let shown = format!("{:?}", copy.hidden);
    assert_eq!(
        shown,
        "__AutodiffTrackedLinear { w: [[1, 2], [3, 4], [5, 6]], b: [7, 8, 9] }"
    );
    let hidden = copy.hidden;
    let moved = hidden;
    assert_eq!(hidden.b, moved.b);
}

#[test]
fn try_track_stops_at_the_first_error() {
    let model = model();
    let mut calls = 0;
    let tracked = model.try_track(&mut |_| {
        calls += 1;
        if calls == 4 {
            Err(ScalarAutodiffError::TapeUnavailable)
        } else {
            Ok(())
        }
    });
    assert_eq!(tracked.err(), Some(ScalarAutodiffError::TapeUnavailable));
    assert_eq!(calls, 4);
}

#[test]
fn tracked_copies_of_other_shapes() {
    let layer = Layer::<3, 2> {
        w: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
        b: [7.0, 8.0],
    };
    let doubled = layer
        .try_track(&mut |value| Ok(value * 2.0))
        .expect("never fails");
    assert_eq!(doubled.w, [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]);
    assert_eq!(doubled.b, [14.0, 16.0]);

    let pair = Pair(1.0, vec![2.0, 3.0]);
    let negated = pair
        .try_track(&mut |value| Ok(-value))
        .expect("never fails");
    assert_eq!((negated.0, &negated.1), (-1.0, &vec![-2.0, -3.0]));
    assert_eq!(
        format!("{negated:?}"),
        "__AutodiffTrackedPair(-1.0, [-2.0, -3.0])"
    );

    let public = elsewhere::Public {
        a: 1.0,
        b: [2.0, 3.0],
    };
    let tracked = public
        .try_track(&mut |value| Ok(value))
        .expect("never fails");
    assert_eq!((tracked.a, tracked.b), (1.0, [2.0, 3.0]));
}

/// `visit_runs` walks `visit`'s scalars in order, one run per field of side-by-side
/// numbers (a nested array or a `Vec<f64>` is one; a `Vec` of structs, each struct's
/// fields); `visit_runs_mut` writes through the same runs.
#[test]
fn runs_walk_the_scalars_in_order_a_field_of_numbers_at_a_time() {
    let mut model = model();
    let mut lengths = Vec::new();
    let mut walked = Vec::new();
    model.visit_runs(&mut |run| {
        lengths.push(run.len());
        walked.extend_from_slice(run);
    });
    assert_eq!(walked, one_to(38));
    // scale, hidden.w, hidden.b, out, cube, then each head's w and b.
    assert_eq!(lengths, [1, 6, 3, 2, 8, 6, 3, 6, 3]);
    let mut next = 100.0;
    model.visit_runs_mut(&mut |run| {
        for value in run {
            *value = next;
            next += 1.0;
        }
    });
    let expected: Vec<f64> = (100..138).map(f64::from).collect();
    assert_eq!(model.to_flat(), expected);
    assert_eq!(model.cube[1][1], [118.0, 119.0]);
    // Plain shapes: one run each.
    let mut runs = 0;
    [[1.0, 2.0], [3.0, 4.0]].visit_runs(&mut |run| {
        assert_eq!(run, [1.0, 2.0, 3.0, 4.0]);
        runs += 1;
    });
    vec![[5.0; 3]; 2].visit_runs(&mut |run| {
        assert_eq!(run, [5.0; 6]);
        runs += 1;
    });
    assert_eq!(runs, 2);
}

#[test]
fn gradient_from_round_trips_to_flat() {
    let model = model();
    let flat = model.to_flat();
    let mut values = flat.iter().copied();
    let gradient = model.gradient_from(&mut || values.next().unwrap_or(f64::NAN));
    assert_eq!(gradient, model);

    // From other scalars: the same shape, the scalars in walk order.
    let reversed: Vec<f64> = flat.iter().rev().copied().collect();
    let mut values = reversed.iter().copied();
    let gradient = model.gradient_from(&mut || values.next().unwrap_or(f64::NAN));
    assert_eq!(gradient.to_flat(), reversed);
    assert_eq!(gradient.scale, 38.0);
    assert_eq!(gradient.hidden.w[0], [37.0, 36.0]);
    assert_eq!(gradient.heads.len(), 2);
    assert_eq!(gradient.heads[1].b, [3.0, 2.0, 1.0]);

    let layer = Layer::<2, 1> {
        w: [[1.0, 2.0]],
        b: [3.0],
    };
    let mut values = [4.0, 5.0, 6.0].into_iter();
    let gradient = layer.gradient_from(&mut || values.next().unwrap_or(f64::NAN));
    assert_eq!(
        gradient,
        Layer {
            w: [[4.0, 5.0]],
            b: [6.0]
        }
    );
}

#[test]
fn read_flat_and_write_flat_need_exactly_parameter_count_scalars() {
    let mut model = model();
    let original = model.clone();
    let ones = vec![1.0; 38];

    let mut out = vec![0.0; 38];
    model.write_flat(&mut out).expect("the length fits");
    assert_eq!(out, one_to(38));

    model.read_flat(&ones).expect("the length fits");
    assert_eq!(model.to_flat(), ones);
    assert_eq!(model.hidden.w, [[1.0; 2]; 3]);
    model
        .read_flat(&original.to_flat())
        .expect("the length fits");
    assert_eq!(model, original);

    for length in [0, 37, 39] {
        let mismatch = Err(ScalarAutodiffError::LengthMismatch {
            expected: 38,
            found: length,
        });
        assert_eq!(model.read_flat(&vec![1.0; length]), mismatch);
        assert_eq!(model, original, "read_flat changed the model");
        let mut out = vec![-1.0; length];
        assert_eq!(model.write_flat(&mut out), mismatch);
        assert_eq!(out, vec![-1.0; length], "write_flat wrote");
    }
    let error = model.read_flat(&[]).err();
    assert_eq!(error.map(|error| error.kind()), Some("length-mismatch"));
}

#[test]
fn zip_mut_takes_an_optimizer_step() {
    let mut model = model();
    let mut gradient = model.clone();
    gradient.read_flat(&vec![2.0; 38]).expect("the length fits");
    // Walked side by side, without copying the gradient out.
    assert!(model.can_zip_in_place(&gradient));
    let mut pairs = 0;
    model
        .zip_mut(&gradient, |w, g| {
            pairs += 1;
            *w -= 0.5 * g;
        })
        .expect("the gradient has the model's shape");
    assert_eq!(pairs, 38);
    let expected: Vec<f64> = one_to(38).iter().map(|v| v - 1.0).collect();
    assert_eq!(model.to_flat(), expected);

    // The closure sees the gradient's scalar of the same place.
    let mut layer = Layer::<2, 2> {
        w: [[0.0; 2]; 2],
        b: [0.0; 2],
    };
    let step = Layer::<2, 2> {
        w: [[1.0, 2.0], [3.0, 4.0]],
        b: [5.0, 6.0],
    };
    layer.zip_mut(&step, |w, g| *w += g).expect("same shape");
    assert_eq!(layer, step);

    let mut pair = Pair(1.0, vec![1.0, 1.0]);
    pair.zip_mut(&Pair(1.0, vec![2.0, 3.0]), |w, g| *w *= g)
        .expect("same shape");
    assert_eq!(pair, Pair(1.0, vec![2.0, 3.0]));
}

#[test]
fn zip_mut_with_a_gradient_of_another_length_changes_nothing() {
    let mut model = model();
    let original = model.clone();
    let mut longer = model.clone();
    longer.out.push(1.0);
    assert_eq!(
        model.zip_mut(&longer, |w, g| *w -= g),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 38,
            found: 39
        })
    );
    assert_eq!(model, original);

    let mut fewer_heads = model.clone();
    fewer_heads.heads.pop();
    assert_eq!(
        model.zip_mut(&fewer_heads, |w, g| *w -= g),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 38,
            found: 29
        })
    );
    assert_eq!(model, original);

    let mut pair = Pair(1.0, vec![1.0]);
    let result = pair.zip_mut(&Pair(1.0, vec![]), |w, g| *w -= g);
    assert_eq!(
        result,
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 2,
            found: 1
        })
    );
    assert_eq!(pair, Pair(1.0, vec![1.0]));
}

#[test]
fn zip_mut_pairs_scalars_by_flat_place_when_only_the_shape_differs() {
    // Same total, `Vec` lengths swapped: no in-place walk, the flat fallback pairs the
    // scalars by their place in the flat order.
    let mut vecs = TwoVecs {
        a: vec![1.0, 2.0],
        b: vec![3.0],
    };
    let gradient = TwoVecs {
        a: vec![10.0],
        b: vec![20.0, 30.0],
    };
    assert!(!vecs.can_zip_in_place(&gradient));
    vecs.zip_mut(&gradient, |w, g| *w += g).expect("same total");
    assert_eq!(vecs.to_flat(), [11.0, 22.0, 33.0]);
    assert!(vecs.can_zip_in_place(&vecs.clone()));
}

#[test]
fn zip_mut_and_the_flat_helpers_on_plain_shapes() {
    let mut x = 1.0;
    x.zip_mut(&2.0, |w, g| *w -= g).expect("one scalar");
    assert_eq!(x, -1.0);

    let mut w = [[1.0, 2.0], [3.0, 4.0]];
    w.zip_mut(&[[1.0, 1.0], [2.0, 2.0]], |w, g| *w *= g)
        .expect("same shape");
    assert_eq!(w, [[1.0, 2.0], [6.0, 8.0]]);
    assert_eq!(w.to_flat(), [1.0, 2.0, 6.0, 8.0]);

    let mut v = vec![1.0, 2.0, 3.0];
    assert_eq!(
        v.zip_mut(&vec![1.0], |w, g| *w -= g),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 3,
            found: 1
        })
    );
    assert_eq!(v, [1.0, 2.0, 3.0]);

    // A slice's gradient is a `Vec`.
    let slice: &mut [f64] = &mut v;
    slice
        .zip_mut(&vec![1.0, 1.0, 1.0], |w, g| *w += g)
        .expect("same length");
    slice.read_flat(&[9.0, 8.0, 7.0]).expect("same length");
    assert_eq!(v, [9.0, 8.0, 7.0]);
    let mut out = [0.0; 3];
    v.as_slice().write_flat(&mut out).expect("same length");
    assert_eq!(out, [9.0, 8.0, 7.0]);
}

/// A hand-written implementation that keeps the default `can_zip_in_place`, so `zip_mut`
/// copies the gradient out.
#[derive(Debug, PartialEq)]
struct Handmade {
    values: Vec<f64>,
}

impl Parameters for Handmade {
    type Tracked<V> = Vec<V>;
    type Gradient = Vec<f64>;

    fn parameter_count(&self) -> usize {
        self.values.len()
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        self.values.iter().for_each(|value| f(*value));
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        self.values.iter_mut().for_each(f);
    }

    fn try_track<V>(
        &self,
        make: &mut impl FnMut(f64) -> Result<V, ScalarAutodiffError>,
    ) -> Result<Vec<V>, ScalarAutodiffError> {
        self.values.iter().map(|value| make(*value)).collect()
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> Vec<f64> {
        self.values.iter().map(|_| next()).collect()
    }

    fn visit_tracked<V>(tracked: &Vec<V>, f: &mut impl FnMut(&V)) {
        tracked.iter().for_each(f);
    }
}

#[test]
fn zip_mut_falls_back_to_a_flat_copy_for_shapes_without_an_in_place_walk() {
    let mut handmade = Handmade {
        values: vec![1.0, 2.0],
    };
    assert!(!handmade.can_zip_in_place(&vec![1.0, 1.0]));
    handmade
        .zip_mut(&vec![0.5, 1.5], |w, g| *w -= g)
        .expect("same length");
    assert_eq!(handmade.values, [0.5, 0.5]);
    assert_eq!(
        handmade.zip_mut(&vec![1.0; 3], |w, g| *w -= g),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 2,
            found: 3
        })
    );
    assert_eq!(handmade.values, [0.5, 0.5]);
}

#[test]
fn gradient_of_a_hand_built_graph_is_the_analytic_gradient() -> Result<(), ScalarAutodiffError> {
    // loss = scale * (out[0] + out[1]) + Σᵢ ½ rᵢ² + Σ cube², rᵢ = Σⱼ wᵢⱼ xⱼ + bᵢ;
    // `heads` take no part, so their gradient is 0.
    let model = Model {
        scale: 2.0,
        hidden: Linear {
            w: [[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]],
            b: [0.5, -1.0, 2.0],
        },
        out: vec![3.0, -4.0],
        cube: [[[1.0, -1.0], [0.5, 2.0]], [[0.0, 3.0], [-2.0, 1.5]]],
        heads: vec![linear(0.0)],
    };
    let x = [2.0, -2.0];
    let tracked = model.variables()?;

    let mut loss = tracked.scale.mul(&tracked.out[0].add(&tracked.out[1])?)?;
    for (row, bias) in tracked.hidden.w.iter().zip(&tracked.hidden.b) {
        let mut r = bias.clone();
        for (w, x) in row.iter().zip(x) {
            r = r.add(&w.mul(&Scalar::constant(x)?)?)?;
        }
        loss = loss.add(&Scalar::constant(0.5)?.mul(&r.mul(&r)?)?)?;
    }
    for value in tracked.cube.iter().flatten().flatten() {
        loss = loss.add(&value.mul(value)?)?;
    }
    loss.backward()?;
    let gradient = model.gradient_of(&tracked);

    // r = (1·2 + 0.5·-2 + 0.5, -1·2 + 2·-2 - 1, 0·2 + 1·-2 + 2) = (1.5, -7, 0)
    let r = [1.5, -7.0, 0.0];
    let expected = Model {
        scale: 3.0 - 4.0,
        hidden: Linear {
            w: r.map(|r| [r * x[0], r * x[1]]),
            b: r,
        },
        out: vec![2.0, 2.0],
        cube: model
            .cube
            .map(|plane| plane.map(|row| row.map(|v| 2.0 * v))),
        heads: vec![Linear {
            w: [[0.0; 2]; 3],
            b: [0.0; 3],
        }],
    };
    assert_eq!(gradient, expected);
    assert_eq!(
        loss.value(),
        2.0 * (3.0 - 4.0)
            + r.iter().map(|r| 0.5 * r * r).sum::<f64>()
            + model.to_flat()[12..20].iter().map(|v| v * v).sum::<f64>()
    );

    // An SGD step with that gradient.
    let mut stepped = model.clone();
    stepped.zip_mut(&gradient, |w, g| *w -= 0.5 * g)?;
    assert_eq!(stepped.scale, 2.5);
    assert_eq!(stepped.hidden.b, [-0.25, 2.5, 2.0]);
    assert_eq!(stepped.heads, model.heads);
    Ok(())
}
