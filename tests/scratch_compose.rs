use autodiff::{differentiable, Scalar};

#[differentiable]
fn neuron(w: [f64; 3], x: &[f64; 2]) -> f64 {
    (w[0] * x[0] + w[1] * x[1] + w[2]).tanh()
}

#[differentiable]
fn square(v: f64) -> f64 {
    v * v
}

#[differentiable]
fn loss(w: [f64; 3], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let p = neuron(w, x);
        total += square(p - y);
    }
    total / xs.len() as f64
}

#[test]
fn composed() {
    let xs = [[0.5, -1.0], [1.5, 2.0], [-0.3, 0.7]];
    let ys = [0.1, -0.4, 0.9];
    let w = [0.3, -0.2, 0.1];
    let (v, g) = loss_grad(w, &xs, &ys).unwrap();
    let before = autodiff::__private::traces();
    let (v2, g2) = loss_grad(w, &xs, &ys).unwrap();
    let after = autodiff::__private::traces();
    assert_eq!(before, after, "warm call traced");
    let vars = w.map(|w| Scalar::variable(w).unwrap());
    let out = loss_graph(&vars, &xs, &ys).unwrap();
    out.backward().unwrap();
    assert_eq!(v.to_bits(), out.value().to_bits());
    assert_eq!(v2.to_bits(), v.to_bits());
    for (i, var) in vars.iter().enumerate() {
        assert_eq!(g[i].to_bits(), var.gradient().unwrap().to_bits(), "{i}");
        assert_eq!(g2[i].to_bits(), g[i].to_bits());
    }
}
