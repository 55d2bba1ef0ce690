pub use autodiff_runtime::*;
