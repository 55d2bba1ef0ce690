//! Valid but unusual bodies: each compiles and matches its plain function bit for bit.
//! Debug builds only: the point is the macro, and the deep and long bodies would cost
//! minutes of LLVM time in the release run for nothing.
#![cfg(debug_assertions)]
#![allow(non_snake_case, clippy::just_underscores_and_digits)]

use std::hint::black_box;

use approx::assert_relative_eq;
use scalar_autodiff::differentiable;

use crate::support::central;

type Result<T = ()> = std::result::Result<T, scalar_autodiff::ScalarAutodiffError>;

#[differentiable]
fn nested_blocks(x: f64) -> f64 {
    let a = {
        let b = {
            let c = x * 2.0;
            c + 1.0
        };
        b * b
    };
    {
        a - x
    }
}

#[differentiable]
fn shadowed_inside(x: f64) -> f64 {
    let y = x * 3.0;
    let z = {
        let y = y.sin(); // shadows the outer y in this block only
        let x = y * x; // and x too
        x + y
    };
    z + y + x
}

/// Builds `((((x) * 1.001 + 0.001) * 1.001 + 0.001) ...)`, one step (two parentheses) per
/// token.
macro_rules! deep {
    ($x:ident [$($acc:tt)*]) => {
        #[differentiable]
        fn deep($x: f64) -> f64 {
            $($acc)*
        }
    };
    ($x:ident [$($acc:tt)*] $head:tt $($rest:tt)*) => {
        deep!($x [(($($acc)*) * 1.001 + 0.001)] $($rest)*);
    };
}

// 64 tokens, 64 steps: two parentheses a step, 128 levels, the most a body may nest (one
// more is a compile error, `ui-tests/nesting-too-deep.rs`).
deep!(x [x]
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
);

/// 5,000 operations: 2,500 statements `t = t * 1.0001 + 0.0001`.
macro_rules! long {
    ($t:ident [$($stmts:tt)*]) => {
        // (Longer than the sweeps compile: on the tape, as chosen.)
        #[differentiable(tape)]
        fn long(x: f64) -> f64 {
            let mut $t = x;
            $($stmts)*
            $t
        }
    };
    ($t:ident [$($stmts:tt)*] $head:tt $($rest:tt)*) => {
        long!($t [$($stmts)*
            $t = $t * 1.0001 + 0.0001;
            $t = $t * 1.0001 + 0.0001;
            $t = $t * 1.0001 + 0.0001;
            $t = $t * 1.0001 + 0.0001;
            $t = $t * 1.0001 + 0.0001;
        ] $($rest)*);
    };
}

// 500 tokens × 5 statements = 2,500 statements, 5,000 operations.
long!(t []
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
);

#[differentiable]
fn helper(t: f64) -> f64 {
    t.tanh() * 2.0
}

/// 260 operations, then a call: a body this long calls its operations out of line, and the
/// function it calls runs on that same out-of-line backend.
macro_rules! long_then_call {
    ($t:ident [$($stmts:tt)*]) => {
        #[differentiable(tape)]
        fn long_then_call(x: f64) -> f64 {
            let mut $t = x;
            $($stmts)*
            helper($t)
        }
    };
    ($t:ident [$($stmts:tt)*] $head:tt $($rest:tt)*) => {
        long_then_call!($t [$($stmts)* $t = $t * 1.0001 + 0.0001;] $($rest)*);
    };
}

// 130 tokens, 130 statements.
long_then_call!(t []
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
);

#[differentiable]
fn r#match(r#type: f64, r#fn: f64) -> f64 {
    r#type * r#fn + r#type
}

#[differentiable]
fn größe(länge: f64, breite: f64) -> f64 {
    let fläche = länge * breite;
    fläche.sqrt()
}

/// Parameters and locals named like the runtime's items and the generated temporaries.
#[differentiable]
fn clashing(Scalar: f64, tape: f64, graph: f64) -> f64 {
    let output = Scalar * tape;
    let variables = output + graph;
    let __backend = variables * 2.0;
    let B = __backend - tape;
    B * output
}

mod inner {
    use scalar_autodiff::differentiable;

    /// Visible to the crate only, with its docs.
    #[differentiable]
    pub(crate) fn in_module(x: f64) -> f64 {
        x.exp() - x
    }
}

#[test]
fn nested_blocks_and_inner_shadowing() -> Result {
    for x in [0.3, -1.7, 2.5] {
        let x = black_box(x);
        let (value, [dx]) = nested_blocks_grad(x)?;
        assert_eq!(value.to_bits(), nested_blocks(x).to_bits());
        assert_eq!(dx, 8.0 * x + 4.0 - 1.0);
        let (value, [dx]) = shadowed_inside_grad(x)?;
        assert_eq!(value.to_bits(), shadowed_inside(x).to_bits());
        assert_relative_eq!(dx, central(shadowed_inside, x), max_relative = 1e-7);
    }
    Ok(())
}

#[test]
fn an_expression_nested_as_deep_as_allowed() -> Result {
    let x = black_box(0.25);
    let (value, [dx]) = deep_grad(x)?;
    assert_eq!(value.to_bits(), deep(x).to_bits());
    assert_relative_eq!(dx, 1.001f64.powi(64), max_relative = 1e-12);
    Ok(())
}

#[test]
fn a_body_of_5000_operations() -> Result {
    // Unoptimized, the generated function keeps every temporary of its 5,000 operations in
    // its own stack slot: more than a test thread's 2 MiB, so it runs on an 8 MiB thread
    // like a program's main thread. (Optimized builds reuse the slots.)
    let run = || -> Result<(f64, f64, f64)> {
        let x = black_box(0.5);
        let (value, [dx]) = long_grad(x)?;
        Ok((value, long(x), dx))
    };
    let outcome = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(run)
        .map(|handle| handle.join());
    let Ok(Ok(result)) = outcome else {
        panic!("the 5,000-operation body did not run");
    };
    let (value, plain, dx) = result?;
    assert_eq!(value.to_bits(), plain.to_bits());
    assert_relative_eq!(dx, 1.0001f64.powi(2500), max_relative = 1e-12);
    Ok(())
}

#[test]
fn a_long_body_calls_another_differentiable_function() -> Result {
    let x = black_box(0.5);
    let (value, [dx]) = long_then_call_grad(x)?;
    assert_eq!(value.to_bits(), long_then_call(x).to_bits());
    // t = 1.0001^130 x + ..., and helper'(t) = 2 (1 - tanh² t).
    let mut t = x;
    for _ in 0..130 {
        t = t * 1.0001 + 0.0001;
    }
    let expected = 1.0001f64.powi(130) * 2.0 * (1.0 - t.tanh().powi(2));
    assert_relative_eq!(dx, expected, max_relative = 1e-12);
    assert_relative_eq!(dx, central(long_then_call, x), max_relative = 1e-7);
    Ok(())
}

#[test]
fn raw_and_non_ascii_identifiers() -> Result {
    let (value, [d_type, d_fn]) = r#match_grad(black_box(2.0), black_box(3.0))?;
    assert_eq!((value, d_type, d_fn), (r#match(2.0, 3.0), 4.0, 2.0));
    let (value, [d_länge, d_breite]) = größe_grad(black_box(4.0), black_box(9.0))?;
    assert_eq!(value, größe(4.0, 9.0));
    assert_relative_eq!(d_länge, 9.0 / (2.0 * 6.0), max_relative = 1e-15);
    assert_relative_eq!(d_breite, 4.0 / (2.0 * 6.0), max_relative = 1e-15);
    Ok(())
}

#[test]
fn names_like_generated_ones_do_not_clash() -> Result {
    let (s, t, g) = (black_box(1.5), black_box(-0.5), black_box(2.0));
    let (value, gradient) = clashing_grad(s, t, g)?;
    assert_eq!(value.to_bits(), clashing(s, t, g).to_bits());
    // B * output with output = s t, B = 2 (s t + g) - t.
    let output = s * t;
    let b = 2.0 * (output + g) - t;
    let expected = [
        2.0 * t * output + b * t,
        (2.0 * s - 1.0) * output + b * s,
        2.0 * output,
    ];
    for (got, want) in gradient.iter().zip(expected) {
        assert_relative_eq!(*got, want, max_relative = 1e-15);
    }
    Ok(())
}

#[test]
fn functions_in_modules_and_inside_functions() -> Result {
    #[differentiable]
    fn local(x: f64) -> f64 {
        x * x * x
    }
    assert_eq!(local_grad(black_box(2.0))?, (local(2.0), [12.0]));
    let (value, [dx]) = inner::in_module_grad(black_box(1.0))?;
    assert_eq!(value, inner::in_module(1.0));
    assert_eq!(dx, 1f64.exp() - 1.0);
    Ok(())
}
