//! `lstm`: a stacked LSTM of `l` layers of width `b` reads a text of `c` one-hot
//! characters and predicts each next one; the objective is the mean cross-entropy (with
//! the reference's `+ 2` inside its log-sum-exp), the jacobian its gradient in the main
//! parameters then the extra ones.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, shaped, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// The objective, as the C++ reference computes it. `main` holds each layer's weights
/// and biases (forget, input, output gate, change: `b` each, weights first); `extra` the
/// input weights, output weights and output biases; `state` each layer's hidden and cell
/// state at the start (data: a copy evolves); `sequence` the `c` characters, `b` numbers
/// each.
#[differentiable]
pub fn objective(
    #[param] main: &[f64],
    #[param] extra: &[f64],
    state: &[f64],
    sequence: &[f64],
    b: usize,
) -> f64 {
    let l = main.len() / (8 * b);
    let c = sequence.len() / b;
    let mut hidden = vec![0.0; l * b];
    let mut cell = vec![0.0; l * b];
    for layer in 0..l {
        for i in 0..b {
            hidden[layer * b + i] = state[2 * b * layer + i];
            cell[layer * b + i] = state[2 * b * layer + b + i];
        }
    }
    let mut input = vec![0.0; b];
    let mut prediction = vec![0.0; b];
    let mut total = 0.0;
    let mut count = 0;
    for t in 0..c - 1 {
        for i in 0..b {
            input[i] = sequence[t * b + i] * extra[i];
        }
        for layer in 0..l {
            let (w, bias) = (8 * b * layer, 8 * b * layer + 4 * b);
            for i in 0..b {
                let h = layer * b + i;
                let forget = 1.0 / (1.0 + (-(input[i] * main[w + i] + main[bias + i])).exp());
                let ingate =
                    1.0 / (1.0 + (-(hidden[h] * main[w + b + i] + main[bias + b + i])).exp());
                let outgate = 1.0
                    / (1.0 + (-(input[i] * main[w + 2 * b + i] + main[bias + 2 * b + i])).exp());
                let change = (hidden[h] * main[w + 3 * b + i] + main[bias + 3 * b + i]).tanh();
                cell[h] = cell[h] * forget + ingate * change;
                hidden[h] = outgate * cell[h].tanh();
            }
            // The next layer reads this one's hidden state.
            for i in 0..b {
                input[i] = hidden[layer * b + i];
            }
        }
        for i in 0..b {
            prediction[i] = input[i] * extra[b + i] + extra[2 * b + i];
        }
        let mut sum = 0.0;
        for i in 0..b {
            sum += prediction[i].exp();
        }
        sum += 2.0;
        let lse = sum.ln();
        for i in 0..b {
            total += sequence[(t + 1) * b + i] * (prediction[i] - lse);
        }
        count += b;
    }
    -total / count as f64
}

#[derive(Deserialize)]
struct Input {
    main_params: Vec<Vec<f64>>,
    extra_params: Vec<Vec<f64>>,
    state: Vec<Vec<f64>>,
    sequence: Vec<Vec<f64>>,
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
            let Input {
                main_params,
                extra_params,
                state,
                sequence,
                runs,
            } = input;
            let b = main_params.first().map_or(0, Vec::len) / 4;
            let l = main_params.len() / 2;
            if b == 0
                || l == 0
                || sequence.len() < 2
                || !shaped(&main_params, 2 * l, 4 * b)
                || !shaped(&extra_params, 3, b)
                || !shaped(&state, 2 * l, b)
                || !shaped(&sequence, sequence.len(), b)
            {
                return Err(ToolError::Input(
                    "an LSTM's parameters, state and a sequence of two characters or more, shaped \
                 as the eval sends them"
                        .into(),
                ));
            }
            let (main, extra) = (main_params.concat(), extra_params.concat());
            let (state, sequence) = (state.concat(), sequence.concat());
            match function {
                "objective" => timed(runs, || Ok(objective(&main, &extra, &state, &sequence, b))),
                _ => timed(runs, || {
                    let (_, (main, extra)) = objective_grad(&main, &extra, &state, &sequence, b)?;
                    Ok([main, extra].concat())
                }),
            }
        },
    )
}
