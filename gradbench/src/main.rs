//! The GradBench tool: answers the eval's messages on stdin until it closes.

fn main() -> std::io::Result<()> {
    scalar_autodiff_gradbench::protocol::serve(std::io::stdin().lock(), std::io::stdout().lock())
}
