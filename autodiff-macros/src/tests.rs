//! Unit tests of the expansion, run without rustc.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::quote;

use crate::expand::expand;

/// The messages of the `compile_error!`s in an expansion, in order.
fn errors(output: &TokenStream) -> Vec<String> {
    fn walk(tokens: TokenStream, found: &mut Vec<String>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (index, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Ident(ident) if ident == "compile_error" => {
                    if let Some(TokenTree::Group(group)) = tokens.get(index + 2) {
                        let message: syn::LitStr =
                            syn::parse2(group.stream()).expect("a string literal");
                        found.push(message.value());
                    }
                }
                TokenTree::Group(group) => walk(group.stream(), found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(output.clone(), &mut found);
    found
}

/// The names of the functions an expansion defines (but the check a compiled caller makes
/// before it calls the halves, `__autodiff_callable_name`, which every expansion has).
fn functions(output: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(output.clone()).expect("the expansion parses as items");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(item) => Some(item.sig.ident.to_string()),
            _ => None,
        })
        .filter(|name| !name.starts_with("__autodiff_callable_"))
        .collect()
}

/// The generated generic body (`differentiable_name`, behind `_graph` and `_grad`), as one
/// string.
fn graph_body(output: &TokenStream) -> String {
    let file: syn::File = syn::parse2(output.clone()).expect("the expansion parses as items");
    file.items
        .iter()
        .find_map(|item| match item {
            syn::Item::Fn(item) if item.sig.ident.to_string().starts_with("differentiable_") => {
                Some(quote!(#item).to_string())
            }
            _ => None,
        })
        .expect("a generic body function")
}

/// The expansion of an accepted function, with `tape` so that a body the compiled sweeps
/// do not cover is accepted too (see `a_body_the_sweeps_do_not_cover_needs_the_tape`).
fn accepted(item: TokenStream) -> TokenStream {
    let output = expand(quote!(tape), item);
    assert_eq!(errors(&output), Vec::<String>::new());
    output
}

#[test]
fn a_body_the_sweeps_do_not_cover_needs_the_tape() {
    // An iterator chain over a tracked matrix's rows, flattened.
    let item = quote! {
        fn nested(w: [[f64; 2]; 2]) -> f64 {
            w.iter().flatten().map(|v| v * v).sum::<f64>()
        }
    };
    let messages = errors(&expand(TokenStream::new(), item.clone()));
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].starts_with(
        "#[differentiable] cannot compile the gradient of `nested` yet: `nested_grad` would run \
         on the tape\nnote: the compiled sweeps do not yet follow this loop's iterator chain"
    ));
    assert!(messages[0].contains("`#[differentiable(tape)]`"));
    // With `tape`, the same body is accepted and `nested_grad` runs on the tape.
    assert_eq!(errors(&expand(quote!(tape), item)), Vec::<String>::new());
    // A body the sweeps cover needs nothing.
    let covered = quote! { fn f(x: f64) -> f64 { x * x } };
    assert_eq!(
        errors(&expand(TokenStream::new(), covered)),
        Vec::<String>::new()
    );
    // `tape` twice is an error of its own.
    let twice = errors(&expand(
        quote!(tape, tape),
        quote! { fn f(x: f64) -> f64 { x } },
    ));
    assert_eq!(twice.len(), 1);
    assert!(twice[0].starts_with("`tape` is given twice"));
}

#[test]
fn an_accepted_function_becomes_its_derivative_functions() {
    let output = accepted(quote! {
        /// Docs stay on the plain function.
        pub(crate) fn loss(x: f64) -> f64 {
            let s = x * x;
            s + s
        }
    });
    assert_eq!(
        functions(&output),
        [
            "loss",
            "differentiable_loss",
            "loss_graph",
            "loss_grad",
            "loss_jvp",
            "loss_hvp",
            "loss_hessian"
        ]
    );
    let text = output.to_string();
    assert!(text.contains("pub (crate) fn loss_graph"), "{text}");
    assert!(text.contains("pub (crate) fn loss_grad"), "{text}");
    assert!(text.contains("[:: core :: primitive :: f64 ; 1]"), "{text}");
    // A short free function runs its body inline in `_graph` and `_grad`.
    assert!(text.contains(
        "let __backend = & :: scalar_autodiff :: __private :: Handles ; let x = :: scalar_autodiff :: __private :: Tracked (x) ;"
    ), "{text}");
    assert!(text.contains("value_and_gradients"), "{text}");
}

#[test]
fn only_long_bodies_call_operations_out_of_line() {
    let body = |statements: usize| {
        let statements = (0..statements).map(|_| quote!(t = t * 1.5 + 0.5;));
        graph_body(&accepted(quote! {
            fn long(x: f64) -> f64 {
                let mut t = x;
                #(#statements)*
                t
            }
        }))
    };
    let outlined = "let __backend = & :: scalar_autodiff :: __private :: Outlined (__backend) ;";
    // Two backend calls a statement: 256 calls are inlined, 258 are not.
    assert!(!body(128).contains(outlined));
    let long = body(129);
    assert!(long.contains(outlined));
    // After the arguments became nodes of the caller's backend, before any operation.
    let (before, after) = long.split_once(outlined).unwrap_or_default();
    assert!(
        before.contains("Argument < '_ , _ , f64 > > :: lend"),
        "{before}"
    );
    assert!(after.starts_with(" 'body : { let mut t ="), "{after}");
}

/// The most backend calls one statement of `body` nests (`__backend.op(` inside another's
/// parentheses; a block's statements count afresh).
fn deepest_call(body: &TokenStream) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(body.clone(), 0)];
    while let Some((tokens, depth)) = stack.pop() {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (index, token) in tokens.iter().enumerate() {
            if let TokenTree::Group(group) = token {
                let call = index >= 3
                    && matches!(&tokens[index - 3], TokenTree::Ident(i) if i == "__backend")
                    && group.delimiter() == Delimiter::Parenthesis;
                let depth = depth + usize::from(call);
                deepest = deepest.max(depth);
                // A block starts its statements afresh.
                let depth = if group.delimiter() == Delimiter::Brace {
                    0
                } else {
                    depth
                };
                stack.push((group.stream(), depth));
            }
        }
    }
    deepest
}

#[test]
fn only_bodies_too_long_for_the_sweeps_are_split_into_statements() {
    let sum = |terms: usize| {
        let terms = (0..terms).map(|i| {
            let (a, b) = (i % 4, (i + 1) % 4);
            quote!(+ 1.5 * x[#a] * x[#b])
        });
        let item = quote! {
            fn f(x: [f64; 4]) -> f64 { 0.5 #(#terms)* }
        };
        let body: TokenStream = graph_body(&accepted(item)).parse().expect("tokens");
        body
    };
    // 40 terms, 120 operations: the sweeps read it, nested as written (40 `add`s deep,
    // and two `mul`s in the last).
    let short = sum(40);
    assert!(!short.to_string().contains("__part_"));
    assert_eq!(deepest_call(&short), 42);
    // 400 terms, 1,200 operations: a run of `let`s, each nesting at most 64 operations
    // (here 21 or 22 `add`s and the `mul`s of their last term).
    let long = sum(400);
    let text = long.to_string();
    assert!(text.contains("let __part_"), "{text}");
    let depth = deepest_call(&long);
    assert!((16..=64).contains(&depth), "{depth}");
}

#[test]
fn operands_are_references_to_one_node_per_name() {
    let body = graph_body(&accepted(quote! {
        fn loss(x: f64) -> f64 {
            let s = x * x;
            s + s
        }
    }));
    // A parameter is already a `&V`; a local is borrowed; nothing is copied.
    assert!(body.contains("let s = __backend . mul (x , x) ?"), "{body}");
    // The last call's `Result` is the function's result: no `Ok(..?)`.
    assert!(body.contains("__backend . add (& s , & s) }"), "{body}");
    assert!(
        !body.contains(":: variables (") && !body.contains(". variable ("),
        "{body}"
    );
}

#[test]
fn evaluation_structure_is_preserved() {
    let body = graph_body(&accepted(quote! {
        fn f(x: f64, y: f64) -> f64 {
            x * 2.0 - 2.0 * y + -3.0 / (x - y) - -x
        }
    }));
    let expected = ":: scalar_autodiff :: __private :: constant (__backend , - 3.0) ?";
    assert!(body.contains(expected), "{body}");
    // Operand order and association as written: ((x*2 - 2*y) + (-3 / (x - y))) - (-x).
    let order = [
        "__backend . sub (& __backend . add (& __backend . sub (& __backend . mul (x , & :: scalar_autodiff :: __private :: constant (__backend , 2.0) ?) ? ,",
        "& __backend . mul (& :: scalar_autodiff :: __private :: constant (__backend , 2.0) ? , y) ?) ? ,",
        "& __backend . div (& :: scalar_autodiff :: __private :: constant (__backend , - 3.0) ? , & __backend . sub (x , y) ?) ?) ? ,",
        "& __backend . neg (x) ?) }",
    ];
    let mut rest = body.as_str();
    for part in order {
        let at = rest
            .find(part)
            .unwrap_or_else(|| panic!("{part} in {body}"));
        rest = &rest[at + part.len()..];
    }
}

#[test]
fn methods_in_both_forms_become_runtime_calls() {
    let body = graph_body(&accepted(quote! {
        fn f(x: f64, y: f64) -> f64 {
            x.exp() + f64::ln(y) + x.powi(-2) + f64::powf(x, 1.5) + x.mul_add(y, 1.0)
                + f64::max(x, 0.0) + x.detach() + y.detach().floor()
        }
    }));
    for part in [
        "__backend . exp (x) ?",
        "__backend . ln (y) ?",
        "__backend . powi (x , - 2) ?",
        "__backend . powf (x , & :: scalar_autodiff :: __private :: constant (__backend , 1.5) ?) ?",
        "__backend . mul_add (x , y , & :: scalar_autodiff :: __private :: constant (__backend , 1.0) ?) ?",
        "__backend . max (x , & :: scalar_autodiff :: __private :: constant (__backend , 0.0) ?) ?",
        // A detached value, and anything computed from it alone, is data: the plain
        // function's own arithmetic on primal values.
        ":: scalar_autodiff :: __private :: constant (__backend , __backend . value (x)) ?",
        ":: scalar_autodiff :: __private :: constant (__backend , __backend . value (y) . floor ()) ?",
    ] {
        assert!(body.contains(part), "{part} in {body}");
    }
}

#[test]
fn detach_is_removed_from_the_plain_function() {
    let output = accepted(quote! {
        fn f(x: f64) -> f64 {
            x * x + x.detach() * 3.0 + (x * 2.0).detach().floor()
        }
    });
    let file: syn::File = syn::parse2(output).expect("items");
    let plain = &file.items[0];
    let text = quote!(#plain).to_string();
    assert!(!text.contains("detach"), "{text}");
    assert!(
        text.contains("x * x + x * 3.0 + (x * 2.0) . floor ()"),
        "{text}"
    );
}

#[test]
fn mutable_parameters_are_rebound_to_an_owned_handle() {
    let body = graph_body(&accepted(quote! {
        fn f(mut x: f64) -> f64 {
            x += 1.0;
            x
        }
    }));
    assert!(
        body.contains("let mut x = :: core :: clone :: Clone :: clone (& * lent_0) ;"),
        "{body}"
    );
    assert!(
        body.contains(
            "x = __backend . add (& x , & :: scalar_autodiff :: __private :: constant (__backend , 1.0) ?) ? ;"
        ),
        "{body}"
    );
}

#[test]
fn every_error_of_a_function_is_reported_at_once() {
    let output = expand(
        quote!(order = 2),
        quote! {
            async fn messy<T>(x: f64, steps: i32, (a, b): (f64, f64), #[constant] xs: &[f64], extra: Vec<f64>) -> f32 {
                let wrapped = x % 1.0;
                let rounded = x.round();
                let scaled = x * (x as i32 + steps) as f64;
                println!("{x}");
                let clipped = match x { v if v > 1.0 => 1.0, v => v };
                for _ in 0..(x as usize) {}
                let (p, q) = if x > 0.0 { (x, x) } else { (x, x) };
                #[constant]
                let unused = xs[x as usize];
                wrapped + rounded + scaled + clipped + p + q + unused
            }
        },
    );
    let messages = errors(&output);
    let headlines: Vec<&str> = messages
        .iter()
        .map(|m| m.lines().next().unwrap_or(""))
        .collect();
    assert_eq!(
        headlines,
        [
            "unknown argument `order`: #[differentiable] takes no arguments but `derivative = slope_function` and `tape`",
            "an `async fn` cannot be #[differentiable]",
            "only const generic parameters, such as `const N: usize`, can appear on a #[differentiable] function",
            "parameter patterns are not supported by #[differentiable]",
            "#[differentiable] cannot tell whether `extra: Vec<f64>` is differentiated or data",
            "the return type of a #[differentiable] function must be `f64`, an array of `f64` or `Vec<f64>`",
            "`#[constant]` marks a parameter of a #[differentiable] function, and cannot appear here",
            "the remainder operator `%` cannot be differentiated",
            "`round` cannot be differentiated",
            "`as` casts of tracked values are not supported by #[differentiable]",
            "macro calls such as `println!` cannot use tracked values in a #[differentiable] function",
            "`match` on a tracked value is not supported by #[differentiable]",
            "a loop or fold cannot run over this tracked value",
            "`let` patterns cannot bind tracked values in a #[differentiable] function",
            "a tracked value cannot be used as an index",
        ]
    );
    // Every message teaches: what, why, and what to write instead.
    for message in &messages {
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(lines.len(), 3, "{message}");
        assert!(
            lines[1].starts_with("note: ") && lines[2].starts_with("help: "),
            "{message}"
        );
    }
    // Stand-ins keep the user's calls resolving.
    assert_eq!(
        functions(&output),
        ["messy", "differentiable_messy", "messy_graph", "messy_grad"]
    );
}

#[test]
fn an_accumulator_assigned_a_tracked_value_is_tracked_from_its_declaration() {
    let body = graph_body(&accepted(quote! {
        fn f(w: f64, xs: &[f64]) -> f64 {
            let mut total = 0.0;
            let mut last;
            let count = xs.len() as f64;
            for x in xs {
                last = w * x;
                total += last;
            }
            total / count
        }
    }));
    // Promoted by the fixpoint: both hold graph nodes, the first from a constant.
    assert!(
        body.contains(
            "let mut total = :: scalar_autodiff :: __private :: constant (__backend , 0.0) ? ;"
        ),
        "{body}"
    );
    assert!(body.contains("let mut last ;"), "{body}");
    // Plain Rust over data stays as written, and meets the graph as a constant.
    assert!(body.contains("let count = xs . len () as f64 ;"), "{body}");
    assert!(body.contains("for x in xs {"), "{body}");
    assert!(
        body.contains("last = __backend . mul (w , & :: scalar_autodiff :: __private :: constant (__backend , x) ?) ? ;"),
        "{body}"
    );
    assert!(
        body.contains("__backend . div (& total , & :: scalar_autodiff :: __private :: constant (__backend , count) ?)"),
        "{body}"
    );
}

#[test]
fn conditions_read_primal_values_and_branches_keep_their_shape() {
    let body = graph_body(&accepted(quote! {
        fn f(x: f64, w: [f64; 2], n: usize) -> f64 {
            let big = x.abs() > 1.0 && w[n] <= x.detach();
            if big {
                x * w[0]
            } else if n == 0 {
                w[1]
            } else {
                2.0
            }
        }
    }));
    assert!(
        body.contains(
            "let big = __backend . value (x) . abs () > 1.0 && __backend . value (& w [n]) <= __backend . value (x) ;"
        ),
        "{body}"
    );
    assert!(body.contains("if big {"), "{body}");
    assert!(body.contains("__backend . mul (x , & w [0]) ?"), "{body}");
    assert!(
        body.contains(
            "else if n == 0 { :: scalar_autodiff :: __private :: copied (__backend , & w [1]) ? }"
        ),
        "{body}"
    );
    assert!(
        body.contains("else { :: scalar_autodiff :: __private :: constant (__backend , 2.0) ? }"),
        "{body}"
    );
}

#[test]
fn calls_to_differentiable_functions_lend_tracked_values_and_pass_data() {
    let body = graph_body(&accepted(quote! {
        fn f(x: f64, w: [f64; 2], xs: &[f64]) -> f64 {
            layers::dense(w, xs) + square(x * 2.0) + square(1.5)
        }
    }));
    for part in [
        "layers :: differentiable_dense (__backend , :: scalar_autodiff :: __private :: Tracked (w) , xs) ?",
        "differentiable_square (__backend , :: scalar_autodiff :: __private :: Tracked (& __backend . mul (x ,",
    ] {
        assert!(body.contains(part), "{part} in {body}");
    }
    // A call on data alone is plain Rust: the plain function, evaluated as written.
    assert!(
        body.contains("constant (__backend , square (1.5)) ?"),
        "{body}"
    );
}

#[test]
fn data_parameters_and_arrays_shape_the_generated_signatures() {
    let output = accepted(quote! {
        pub fn loss(w: [f64; K], b: f64, xs: &[f64], #[constant] rate: f64) -> f64 {
            w[0] * xs[0] + b * rate
        }
    });
    let text = output.to_string();
    // `#[constant]` is the attribute's own: rustc never sees it.
    assert!(!text.contains("constant ]"), "{text}");
    for part in [
        "pub fn loss (w : [f64 ; K] , b : f64 , xs : & [f64] , rate : f64) -> f64",
        "pub fn loss_graph (w : & [:: scalar_autodiff :: Scalar ; K] , b : & :: scalar_autodiff :: Scalar , xs : & [f64] , rate : f64)",
        "[:: core :: primitive :: f64 ; 1 + (K)]",
        "let tracked_0 = :: scalar_autodiff :: __private :: variables (tape , & w) ? ;",
        "w : impl :: scalar_autodiff :: __private :: Argument < 'lent , __AutodiffBackend , [f64 ; K] >",
        "tape . value_and_gradients (output , count ,",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
}

#[test]
fn a_rejected_binding_is_reported_once() {
    let output = expand(
        TokenStream::new(),
        quote! {
            fn f(x: f64) -> f64 {
                let square = |v: f64| v * v;
                let r = &x;
                square(x) + r * square(r) + r
            }
        },
    );
    assert_eq!(errors(&output).len(), 2, "{:#?}", errors(&output));
}

#[test]
fn not_a_function_is_reported_and_the_item_kept() {
    let output = expand(
        TokenStream::new(),
        quote!(
            pub struct Point {
                x: f64,
            }
        ),
    );
    assert_eq!(errors(&output).len(), 1);
    assert!(output.to_string().contains("pub struct Point"));
}

/// Runs `work` on a thread with the 8 MiB of stack rustc runs macros on (a test thread has
/// 2 MiB).
fn on_compiler_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(work)
        .expect("a thread")
        .join()
        .expect("the work returns")
}

/// The error messages of expanding `source` and, if there are any, the names of the
/// functions beside them.
fn expand_on_compiler_stack(source: String) -> (Vec<String>, Vec<String>) {
    on_compiler_stack(move || {
        let item: TokenStream = source.parse().expect("the test writes valid Rust");
        let output = expand(quote!(tape), item);
        let messages = errors(&output);
        let names = if messages.is_empty() {
            Vec::new()
        } else {
            functions(&output)
        };
        (messages, names)
    })
}

#[test]
fn a_body_nested_too_deep_is_one_error_beside_stand_ins() {
    let limit = crate::parse::nesting::LIMIT;
    let parens = |n: usize| {
        format!(
            "fn deep(x: f64) -> f64 {{ {}x{} }}",
            "(".repeat(n),
            ") + 1.0".repeat(n)
        )
    };
    // At the limit the body is rewritten as usual.
    assert_eq!(
        expand_on_compiler_stack(parens(limit)),
        (Vec::new(), Vec::new())
    );
    let (messages, names) = expand_on_compiler_stack(parens(limit + 1));
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].starts_with(&format!(
            "the function nests deeper than {limit} levels here\nnote: "
        )),
        "{}",
        messages[0]
    );
    assert_eq!(messages[0].lines().count(), 3, "{}", messages[0]);
    // Stand-ins keep the user's calls resolving.
    assert_eq!(
        names[..4],
        ["deep", "differentiable_deep", "deep_graph", "deep_grad"]
    );
}

#[test]
fn blocks_operators_and_generic_arguments_are_levels_too() {
    let limit = crate::parse::nesting::LIMIT;
    let depth = |body: String| {
        let source = format!("fn f(x: f64, n: i64) -> f64 {{ {body} }}");
        expand_on_compiler_stack(source).0.len()
    };
    // A block is two levels.
    let blocks = |n: usize| format!("{}x{}", "{ ".repeat(n), " }".repeat(n));
    assert_eq!(depth(blocks(limit / 2)), 0);
    assert_eq!(depth(blocks(limit / 2 + 1)), 1);
    // Each prefix operator waits for its operand.
    assert_eq!(depth(format!("{}x", "- ".repeat(limit))), 0);
    assert_eq!(depth(format!("{}x", "- ".repeat(limit + 1))), 1);
    // Each step up the precedence ladder keeps an operator waiting: seven, and the
    // parenthesis, are eight levels a step.
    let ladder = |steps: usize| {
        let open = "n | n ^ n & n << n + n * -(".repeat(steps);
        format!("let k: i64 = {open}n{}; x + k as f64", ")".repeat(steps))
    };
    assert_eq!(depth(ladder(limit / 8)), 0);
    assert_eq!(depth(ladder(limit / 8 + 1)), 1);
    // A list of generic arguments is two levels.
    let generic = |n: usize| {
        let open = "Option<".repeat(n);
        format!("let v: {open}f64{} = None; x", ">".repeat(n))
    };
    assert_eq!(depth(generic(limit / 2)), 0);
    assert_eq!(depth(generic(limit / 2 + 1)), 1);
    // A comparison is no generic argument list, even after a capitalized name.
    let compared = "if N < 2 { s += x; } ".repeat(200);
    assert_eq!(
        depth(format!("const N: i64 = 1; let mut s = 0.0; {compared} s")),
        0
    );
    // Operators that bind alike end each other's right-hand sides: one level however long.
    assert_eq!(depth(vec!["x"; 1000].join(" + ")), 0);
    assert_eq!(depth(vec!["(x * x)"; 1000].join(" - ")), 0);
}

#[test]
fn a_derive_nested_too_deep_is_one_error() {
    let limit = crate::parse::nesting::LIMIT;
    let array = |n: usize| {
        let open = "[".repeat(n);
        format!("struct P {{ w: {open}f64{} }}", "; 1]".repeat(n))
    };
    let messages = |source: String| {
        on_compiler_stack(move || {
            let item: TokenStream = source.parse().expect("the test writes valid Rust");
            errors(&crate::derive::derive(item))
        })
    };
    // A square bracket is two levels.
    assert_eq!(messages(array(limit / 2)), Vec::<String>::new());
    let found = messages(array(limit / 2 + 1));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with(&format!(
        "the struct nests deeper than {limit} levels here\nnote: "
    )));
}

/// A deterministic xorshift generator, so the fuzz tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A random expression mixing supported and (unless `clean`) unsupported constructs.
fn random_expr(rng: &mut Rng, depth: usize, clean: bool) -> String {
    if depth == 0 {
        let leaves: &[&str] = if clean {
            &["x", "y", "t", "2.0", "PI", "-1.5", "1e-3"]
        } else {
            &[
                "x", "y", "t", "2.0", "3", "PI", "0.5f32", "-1.5", "true", "N",
            ]
        };
        return rng.pick(leaves).to_owned();
    }
    let a = random_expr(rng, depth - 1, clean);
    let b = random_expr(rng, depth - 1, clean);
    let c = random_expr(rng, depth - 1, clean);
    if clean {
        return match rng.below(10) {
            0 => format!("({a})"),
            1 => format!("-{a}"),
            2 | 3 => format!("{a} {} {b}", rng.pick(&["+", "-", "*", "/"])),
            4 => format!(
                "({a}).{}()",
                rng.pick(&["exp", "sin", "detach", "tanh", "abs"])
            ),
            5 => format!("({a}).{}({b})", rng.pick(&["powf", "max", "log", "hypot"])),
            6 => format!("f64::mul_add({a}, {b}, {c})"),
            7 => format!("{{ let t = {a}; t * {b} }}"),
            8 => format!(
                "(({a}).detach()).{}()",
                rng.pick(&["round", "signum", "fract"])
            ),
            _ => format!("({a}).powi({})", rng.pick(&["2", "-3", "N", "N + 1"])),
        };
    }
    match rng.below(20) {
        0 => format!("({a})"),
        1 => format!("-{a}"),
        2 => format!(
            "{a} {} {b}",
            rng.pick(&["+", "-", "*", "/", "%", "<", "^", "&&"])
        ),
        3 => format!(
            "({a}).{}()",
            rng.pick(&["exp", "floor", "detach", "sin", "foo", "ln"])
        ),
        4 => format!(
            "({a}).{}({b})",
            rng.pick(&["powf", "max", "powi", "log", "bar"])
        ),
        5 => format!("({a}).mul_add({b}, {c})"),
        6 => format!(
            "f64::{}({a})",
            rng.pick(&["exp", "floor", "detach", "tanh", "fract"])
        ),
        7 => format!(
            "f64::{}({a}, {b})",
            rng.pick(&["powi", "hypot", "min", "atan2"])
        ),
        8 => format!("helper({a})"),
        9 => format!("(|v: f64| v * {a})({b})"),
        10 => format!("&{a}"),
        11 => format!("*{a}"),
        12 => format!("{a} as i32"),
        13 => format!("if {a} {{ {b} }} else {{ {c} }}"),
        14 => format!("{{ let t = {a}; t * {b} }}"),
        15 => format!("println!(\"{{}}\", {a})"),
        16 => format!(
            "(({a}).detach()).{}()",
            rng.pick(&["round", "signum", "trunc"])
        ),
        17 => format!("[{a}, {b}][0]"),
        18 => format!("({a}, {b}).0"),
        _ => format!(
            "({a}).powi({})",
            rng.pick(&["2", "-3", "N", "x", "2.0", "N + 1"])
        ),
    }
}

fn random_stmt(rng: &mut Rng, clean: bool) -> String {
    let e = random_expr(rng, 2, clean);
    match rng.below(if clean { 6 } else { 9 }) {
        0 => format!("let t = {e};"),
        1 => format!("let mut t = {e};"),
        2 => format!("t += {e};"),
        3 => format!("x = {e};"),
        4 => format!("{{ let t = {e}; x -= t; }}"),
        5 => "const N: i32 = 2;".to_owned(),
        6 => format!("return {e};"),
        7 => format!("{e};"),
        _ => format!("let (t, _) = ({e}, 1.0);"),
    }
}

#[test]
fn random_bodies_never_panic_and_accepted_ones_are_well_formed() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut accepted_count, mut rejected_count) = (0, 0);
    for _ in 0..3000 {
        let clean = rng.below(2) == 0;
        let stmts: Vec<String> = (0..rng.below(4))
            .map(|_| random_stmt(&mut rng, clean))
            .collect();
        let tail = random_expr(&mut rng, 3, clean);
        let source = format!(
            "fn f(mut x: f64, y: f64) -> f64 {{ let mut t = x; const N: i32 = 1; {} {tail} }}",
            stmts.join(" ")
        );
        // Only sources rustc could hand to the attribute: valid function syntax.
        if syn::parse_str::<syn::ItemFn>(&source).is_err() {
            continue;
        }
        let Ok(item) = source.parse::<TokenStream>() else {
            continue;
        };
        let output = expand(TokenStream::new(), item);
        let messages = errors(&output);
        assert!(
            messages.iter().all(|m| !m.contains("internal error")),
            "{source}: {messages:#?}"
        );
        assert!(
            syn::parse2::<syn::File>(output.clone()).is_ok(),
            "{source}\n{output}"
        );
        assert_eq!(
            functions(&output),
            [
                "f",
                "differentiable_f",
                "f_graph",
                "f_grad",
                "f_jvp",
                "f_hvp",
                "f_hessian"
            ],
            "{source}"
        );
        if messages.is_empty() {
            accepted_count += 1;
            let body = graph_body(&output);
            // No rejected (empty) operand slipped into an accepted expansion.
            assert!(
                !body.contains("(& )") && !body.contains(". ("),
                "{source}\n{body}"
            );
        } else {
            rejected_count += 1;
        }
    }
    assert!(accepted_count > 1000, "{accepted_count} accepted");
    assert!(rejected_count > 1000, "{rejected_count} rejected");
}

/// A random statement with branches, loops, data and calls, mixing supported and
/// unsupported forms.
fn random_control(rng: &mut Rng, depth: usize) -> String {
    let clean = rng.below(3) > 0;
    let e = random_expr(rng, 2, clean);
    let data = rng.pick(&["xs[i]", "n as f64", "xs.len() as f64", "w[0]", "w[i]", "k"]);
    let cond = rng.pick(&[
        "x > 0.0",
        "t <= y && n > 2",
        "!(w[1] < x) || k > 1.0",
        "x.abs().sqrt() > 1.0",
        "xs.iter().any(|v| *v > x)",
        "x.detach() as usize > n",
        "let Some(v) = xs.first()",
        "println!(\"{x}\") == ()",
    ]);
    let inner = if depth == 0 {
        format!("t += {e} * {data};")
    } else {
        random_control(rng, depth - 1)
    };
    match rng.below(12) {
        0 => format!("if {cond} {{ {inner} }} else {{ t = {data}; }}"),
        1 => format!("let u = if {cond} {{ {e} }} else {{ {data} }}; t += u;"),
        2 => format!("for i in 0..n {{ {inner} }}"),
        3 => format!("for (i, w_i) in w.iter().enumerate() {{ t += w_i * {data}; {inner} }}"),
        4 => format!("for &v in xs {{ t = t * v + {e}; }}"),
        5 => format!("while {cond} {{ {inner} break; }}"),
        6 => format!("match n {{ 0 => {{ {inner} }} 1 | 2 => t = {e}, _ => {{}} }}"),
        7 => format!("t += helper({e}, xs) + other::g(w, {data});"),
        8 => format!("let mut acc = 0.0; for v in xs.iter() {{ acc += {e} * v; }} t += acc;"),
        9 => format!("'outer: loop {{ {inner} if {cond} {{ break 'outer; }} }}"),
        10 => format!("if {cond} {{ return {e}; }}"),
        _ => format!("let q = match n {{ 0 => {e}, _ => {data} }}; t -= q;"),
    }
}

#[test]
fn random_control_flow_never_panics_and_accepted_bodies_are_well_formed() {
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let (mut accepted_count, mut rejected_count) = (0, 0);
    for _ in 0..1500 {
        let stmts: Vec<String> = (0..1 + rng.below(3))
            .map(|_| {
                let depth = rng.below(3);
                random_control(&mut rng, depth)
            })
            .collect();
        let source = format!(
            "fn f(mut x: f64, y: f64, w: [f64; 3], xs: &[f64], n: usize, #[constant] k: f64) -> f64 {{ \
             let mut t = x; const N: i32 = 1; let i = 0; {} t }}",
            stmts.join(" ")
        );
        if syn::parse_str::<syn::ItemFn>(&source).is_err() {
            continue;
        }
        let Ok(item) = source.parse::<TokenStream>() else {
            continue;
        };
        let output = expand(TokenStream::new(), item);
        let messages = errors(&output);
        assert!(
            messages.iter().all(|m| !m.contains("internal error")),
            "{source}: {messages:#?}"
        );
        assert!(
            syn::parse2::<syn::File>(output.clone()).is_ok(),
            "{source}\n{output}"
        );
        assert_eq!(
            functions(&output),
            [
                "f",
                "differentiable_f",
                "f_graph",
                "f_grad",
                "f_jvp",
                "f_hvp",
                "f_hessian"
            ],
            "{source}"
        );
        if messages.is_empty() {
            accepted_count += 1;
            let body = graph_body(&output);
            assert!(
                !body.contains("(& )") && !body.contains(". (") && !body.contains("( ,"),
                "{source}\n{body}"
            );
        } else {
            rejected_count += 1;
        }
    }
    assert!(accepted_count > 300, "{accepted_count} accepted");
    assert!(rejected_count > 300, "{rejected_count} rejected");
}

#[test]
fn random_token_streams_never_panic() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    fn random_tokens(rng: &mut Rng, depth: usize) -> TokenStream {
        let mut tokens = TokenStream::new();
        for _ in 0..rng.below(8) {
            let token: TokenTree = match rng.below(6) {
                0 => Ident::new(
                    rng.pick(&[
                        "fn", "f", "x", "f64", "let", "pub", "detach", "async", "self",
                    ]),
                    Span::call_site(),
                )
                .into(),
                1 => Punct::new(
                    rng.pick(&["+", "-", "*", ":", ";", ",", "#", "&", "!", "="])
                        .chars()
                        .next()
                        .unwrap_or('+'),
                    Spacing::Alone,
                )
                .into(),
                2 => Literal::f64_unsuffixed(1.5).into(),
                3 => Literal::i32_unsuffixed(2).into(),
                _ if depth > 0 => {
                    let delimiter = [Delimiter::Parenthesis, Delimiter::Brace, Delimiter::Bracket]
                        [rng.below(3)];
                    Group::new(delimiter, random_tokens(rng, depth - 1)).into()
                }
                _ => Ident::new("x", Span::call_site()).into(),
            };
            tokens.extend([token]);
        }
        tokens
    }
    for _ in 0..3000 {
        let args = random_tokens(&mut rng, 1);
        let mut item: TokenStream = quote!(fn f);
        item.extend(random_tokens(&mut rng, 3));
        if rng.below(2) == 0 {
            item = random_tokens(&mut rng, 3);
        }
        let output = expand(args, item);
        assert!(!output.is_empty() || errors(&output).is_empty());
    }
}
/// The items an expansion of `#[derive(Parameters)]` defines, as `kind name` strings
/// (`struct __AutodiffTrackedLinear`, `impl Parameters for Linear`).
fn derived_items(output: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(output.clone()).expect("the expansion parses as items");
    file.items
        .iter()
        .map(|item| match item {
            syn::Item::Struct(item) => format!("struct {}", item.ident),
            syn::Item::Impl(item) => {
                let (path, _) = item.trait_.as_ref().expect("a trait impl");
                let name = path
                    .segments
                    .last()
                    .expect("a trait name")
                    .ident
                    .to_string();
                let self_ty = &item.self_ty;
                format!(
                    "impl {name} for {}",
                    quote!(#self_ty).to_string().replace(' ', "")
                )
            }
            other => panic!("unexpected item {}", quote!(#other)),
        })
        .collect()
}

#[test]
fn a_derived_struct_gets_a_tracked_mirror_and_an_impl() {
    let output = crate::derive::derive(quote! {
        pub struct Mlp<const H: usize> { pub w: [[f64; 2]; H], b: Vec<f64> }
    });
    assert_eq!(errors(&output), Vec::<String>::new());
    assert_eq!(
        derived_items(&output),
        [
            "struct __AutodiffTrackedMlp",
            "impl Clone for __AutodiffTrackedMlp<V,H>",
            "impl Copy for __AutodiffTrackedMlp<V,H>",
            "impl Debug for __AutodiffTrackedMlp<V,H>",
            "impl Untracked for Mlp<H>",
            "impl Untracked for __AutodiffTrackedMlp<V,H>",
            "impl Parameters for Mlp<H>",
            "impl Argument for Mlp<H>",
            "impl Argument for &Mlp<H>",
        ]
    );
    let text = output.to_string();
    assert!(text.contains("pub struct __AutodiffTrackedMlp < V , const H : usize >"));
    assert!(text.contains(
        "pub w : < [[f64 ; 2] ; H] as :: scalar_autodiff :: Parameters > :: Tracked < V >"
    ));
    assert!(text.contains("type Tracked < V > = __AutodiffTrackedMlp < V , H >"));
    assert!(text.contains("type Gradient = Self"));

    // A tuple struct is built with parentheses.
    let output = crate::derive::derive(quote!(
        struct Pair(f64, pub [f64; 2]);
    ));
    assert_eq!(errors(&output), Vec::<String>::new());
    let text = output.to_string();
    assert!(text.contains("struct __AutodiffTrackedPair < V > (< f64 as"));
    assert!(text.contains("Self (:: scalar_autodiff :: Parameters :: gradient_from (& self . 0"));
}

#[test]
fn the_value_parameter_avoids_names_the_struct_uses() {
    let output = crate::derive::derive(quote! {
        struct Layer<const V: usize> { w: [f64; V], v0: [f64; V0] }
    });
    assert_eq!(errors(&output), Vec::<String>::new());
    assert!(output
        .to_string()
        .contains("struct __AutodiffTrackedLayer < V1 , const V : usize >"));
}

#[test]
fn every_rejection_of_a_derive_is_reported_at_once() {
    let output = crate::derive::derive(quote! {
        struct Borrowed<'a, T, const N: usize> { w: &'a [T; N], xs: [f64] }
    });
    let found = errors(&output);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].starts_with("#[derive(Parameters)] does not support lifetime parameters"));
    assert!(found[1].starts_with("#[derive(Parameters)] does not support type parameters"));
    assert!(found[2].starts_with("a slice field cannot be part of #[derive(Parameters)]"));
    for found in &found {
        assert!(
            found.contains("\nnote: ") && found.contains("\nhelp: "),
            "{found}"
        );
    }

    for (item, headline) in [
        (
            quote!(
                enum E {
                    A(f64),
                }
            ),
            "cannot be used on an enum",
        ),
        (quote!(union U { a: f64 }), "cannot be used on a union"),
        (
            quote!(
                struct Unit;
            ),
            "needs a struct with at least one field",
        ),
        (
            quote!(
                struct Braces {}
            ),
            "needs a struct with at least one field",
        ),
        (
            quote!(
                struct Parens();
            ),
            "needs a struct with at least one field",
        ),
    ] {
        let found = errors(&crate::derive::derive(item));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains(headline), "{found:?}");
    }
}

#[test]
fn a_derive_on_something_else_is_a_parse_error_not_a_panic() {
    for item in [
        quote!(
            fn f() {}
        ),
        quote!(),
        quote!(struct),
    ] {
        let output = crate::derive::derive(item);
        assert_eq!(errors(&output).len(), 1);
    }
}

#[test]
fn random_structs_never_panic_and_accepted_ones_expand_to_items() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let types = [
        "f64",
        "[f64; 2]",
        "[[f64; N]; 3]",
        "Vec<f64>",
        "Linear",
        "usize",
        "[f64]",
        "&'a f64",
        "T",
        "crate::Linear",
    ];
    let generics = [
        "",
        "<const N: usize>",
        "<'a>",
        "<T>",
        "<const N: usize = 2>",
    ];
    let visibilities = ["", "pub", "pub(crate)", "pub(super)"];
    for _ in 0..2000 {
        let count = rng.below(4);
        let tuple = rng.below(3) == 0;
        let fields: Vec<String> = (0..count)
            .map(|index| {
                let (vis, ty) = (rng.pick(&visibilities), rng.pick(&types));
                if tuple {
                    format!("{vis} {ty}")
                } else {
                    format!("{vis} f{index}: {ty}")
                }
            })
            .collect();
        let (vis, generics) = (rng.pick(&visibilities), rng.pick(&generics));
        let source = match rng.below(8) {
            0 => format!("{vis} enum E{generics} {{ A({}) }}", fields.join(",")),
            1 if tuple => format!("{vis} struct S{generics};"),
            _ if tuple => format!("{vis} struct S{generics}({});", fields.join(",")),
            _ => format!("{vis} struct S{generics} {{ {} }}", fields.join(",")),
        };
        let item: TokenStream = source.parse().expect("the generator writes valid Rust");
        let output = crate::derive::derive(item);
        if errors(&output).is_empty() {
            let file: syn::File =
                syn::parse2(output).unwrap_or_else(|error| panic!("{source}: {error}"));
            assert_eq!(file.items.len(), 9, "{source}");
        }
    }
}

/// Whether `name_grad` got compiled sweeps (else it runs the trace alone).
fn compiled(item: TokenStream) -> bool {
    // In `name_grad`, not in the hidden body's halves (without `tape`: an uncovered body
    // is an error, and `tape` records every call).
    let output = expand(TokenStream::new(), item);
    if !errors(&output).is_empty() {
        return false;
    }
    let expanded = output.to_string();
    let grad = expanded.split_once("_grad (").map_or("", |(_, grad)| grad);
    grad.contains(":: scalar_autodiff :: __private :: value (")
        || grad.contains(":: scalar_autodiff :: __private :: Halves :: forward (")
}

#[test]
fn loops_branches_and_arrays_get_compiled_sweeps() {
    assert!(compiled(quote! {
        fn reused(x: f64) -> f64 { let s = x * x; s + s }
    }));
    assert!(compiled(quote! {
        fn chain(x: f64, steps: usize) -> f64 {
            let mut v = x;
            for step in 0..steps {
                if step % 3 == 0 { v *= 1.5; } else if step % 3 == 1 { v += 0.25; } else { v = v.tanh(); }
            }
            v
        }
    }));
    assert!(compiled(quote! {
        fn layer(w: [[f64; 3]; 4], bias: [f64; 4], rows: &[[f64; 3]]) -> f64 {
            let mut total = 0.0;
            for row in rows {
                let mut hidden = [0.0; 4];
                for j in 0..4 {
                    let mut sum = bias[j];
                    for k in 0..3 { sum += w[j][k] * row[k]; }
                    hidden[j] = sum.tanh();
                }
                for j in 0..4 { total += hidden[j] * hidden[j].detach(); }
            }
            total
        }
    }));
}

#[test]
fn if_values_get_compiled_sweeps() {
    assert!(compiled(quote! {
        fn relu(w: [f64; 2], xs: &[f64]) -> f64 {
            let mut total = 0.0;
            for x in xs {
                let z = w[0] * x + w[1];
                let h = if z > 0.0 { z } else { z * 0.01 };
                total += if h > 1.0 { h * h } else { h.exp() };
            }
            if total > 1.0 { total.ln() } else { total }
        }
    }));
}

#[test]
fn bodies_outside_the_sweeps_keep_the_trace() {
    // A `return` inside a loop is compiled (as a flag and a result local), at any depth
    // of `if`s; so are `break` and `continue` nested deeper than the body's own level.
    assert!(compiled(quote! {
        fn early(x: f64, n: usize) -> f64 {
            for k in 0..n { if x > k as f64 { return x * 2.0; } }
            x.exp()
        }
    }));
    assert!(compiled(quote! {
        fn early(x: f64, n: usize) -> f64 {
            for k in 0..n { if x > 0.0 { if x > k as f64 { return x * 2.0; } } }
            x.exp()
        }
    }));
    assert!(compiled(quote! {
        fn nested(x: f64, n: usize) -> f64 {
            let mut s = x;
            for k in 0..n {
                if k > 2 { if s > 10.0 { break; } }
                if k % 2 == 1 { if s < 0.0 { continue; } s = s + 1.0; }
                s = s * x;
            }
            s
        }
    }));
    // An array of one tracked value repeated: its elements are copies of the node.
    assert!(compiled(quote! {
        fn repeated(x: f64) -> f64 { let a = [x * 2.0; 3]; a[0] * a[1] + a[2] }
    }));
    // One tracked value lent twice (in an array literal, or as two arguments) is
    // compiled: an array literal holds a copy of each name, and two arguments share the
    // parameters' adjoints.
    assert!(compiled(quote! {
        fn twice(x: f64) -> f64 { helper([x, x]) + x }
    }));
    assert!(compiled(quote! {
        fn twice(v: [f64; 3], i: usize) -> f64 { dot(v, v) + mul(v[i], v[0]) }
    }));
    assert!(compiled(quote! {
        fn twice(x: f64, #[param] p: &Layer) -> f64 { helper([x, x], p) }
    }));
    // Two arguments beside a parameter struct lent whole are not (a struct's adjoints do
    // not copy into the call's buffer).
    assert!(!compiled(quote! {
        fn twice(x: f64, #[param] p: &Layer) -> f64 { helper(x, x, p) }
    }));
    // Early returns from branches are compiled: what follows is the `else`.
    assert!(compiled(quote! {
        fn early(x: f64) -> f64 { if x > 0.0 { return x * 2.0; } x.exp() }
    }));
    assert!(compiled(quote! {
        fn early(x: f64) -> f64 {
            if x > 0.0 { if x > 1.0 { return x * 2.0; } return x; } else if x < -1.0 { return -x; }
            return x.exp();
        }
    }));
    // A method's call, as `self.helper(..)` or `Self::helper(self, ..)`, is compiled
    // through the method's halves.
    assert!(compiled(quote! {
        fn method(&self, x: f64) -> f64 { self.helper(x) * 2.0 + Self::helper(self, x) }
    }));
    // A call of a helper returning `f64` or an array is compiled (through the helper's
    // halves), and so is a loop over an array result, whose length only the helper knows.
    assert!(compiled(quote! {
        fn composed(x: f64) -> f64 { helper(x) * 2.0 + helper(helper(x) * x) }
    }));
    assert!(compiled(quote! {
        fn layered(x: f64) -> f64 { let h = layer(x); h[0] * h[1] }
    }));
    assert!(compiled(quote! {
        fn summed(x: f64) -> f64 {
            let h = layer(x);
            let mut total = 0.0;
            for &v in h.iter() { total += v * v; }
            total
        }
    }));
    // Parameter structs: fields read and lent (two at once), the whole struct lent.
    assert!(compiled(quote! {
        fn score(#[param] p: &Mlp, x: &[f64; 2]) -> f64 {
            let h1 = dense_in(p.w1, p.b1, *x);
            p.w3.iter().zip(h1.iter()).map(|(a, v)| a * v).sum::<f64>() + p.b3
        }
    }));
    assert!(compiled(quote! {
        fn loss(#[param] p: &Mlp, xs: &[[f64; 2]]) -> f64 {
            let mut total = 0.0;
            for x in xs.iter() { total += score(p, x); }
            total
        }
    }));
    // A call's result copied as a scalar that nothing proves is one keeps the trace; a
    // copy read as a scalar (here the output, and `g = x`) proves its source one.
    assert!(!compiled(quote! {
        fn unproven(x: f64) -> f64 { let h = layer(x); let mut g = h; other(g) }
    }));
    assert!(compiled(quote! {
        fn proven(x: f64) -> f64 { let h = layer(x); let mut g = h; g = x; g }
    }));
    // A call's result changed in place is the call's result itself: compiled.
    assert!(compiled(quote! {
        fn in_place(x: f64) -> f64 { let mut h = layer(x); h = h * x; h }
    }));
    // A copy of a parameter whose source is read again is versioned: compiled; so is a
    // copy of a local not assigned while the copy may still be its node. A local
    // assigned then, and an assignment that copies a value read again, are not.
    assert!(compiled(quote! {
        fn reread(x: f64, n: usize) -> f64 {
            let mut v = x;
            for _ in 0..n { v = v * x; }
            v
        }
    }));
    assert!(compiled(quote! {
        fn reread_local(x: f64, n: usize) -> f64 {
            let y = x * 2.0;
            let mut v = y;
            for _ in 0..n { v = v * y; }
            v
        }
    }));
    // A copy whose source is assigned again while it is read: the scalars share nodes.
    assert!(compiled(quote! {
        fn reassigned(x: f64) -> f64 {
            let mut y = x * 2.0;
            let v = y;
            y = y * 3.0;
            v * y + y
        }
    }));
    // A copy into an array's element, read again: the element shares the node too.
    assert!(compiled(quote! {
        fn assigned_copy(x: f64) -> f64 {
            let y = x * 2.0;
            let mut a = [0.0; 2];
            a[0] = y;
            a[0] * y + y
        }
    }));
}

#[test]
fn folds_and_loops_over_tracked_arrays_get_compiled_sweeps() {
    assert!(compiled(quote! {
        fn loss(w: [[f64; 4]; 3], b: [f64; 3], xs: &[[f64; 4]], labels: &[usize]) -> f64 {
            let mut total = 0.0;
            for (x, &label) in xs.iter().zip(labels) {
                let mut z = [0.0; 3];
                for k in 0..3 {
                    z[k] = w[k].iter().zip(x).map(|(wj, xj)| wj * xj).sum::<f64>() + b[k];
                }
                let mut m = f64::NEG_INFINITY;
                for &zk in z.iter() {
                    m = m.max(zk.detach());
                }
                total += m + z.iter().map(|zk| (zk - m).exp()).sum::<f64>().ln() - z[label];
            }
            total
        }
    }));
    assert!(compiled(quote! {
        fn product(w: [f64; 3]) -> f64 { 2.0 * w.iter().map(|v| v * v).product::<f64>() }
    }));
    assert!(compiled(quote! {
        fn folded(w: [f64; 3]) -> f64 { w.iter().sum() }
    }));
}

#[test]
fn a_use_imports_each_name_with_its_companions() {
    let written = quote!(
        pub use crate::layers::{dense, shapes::scaled as stretch, more::*, self};
    );
    let output = expand(TokenStream::new(), written.clone());
    let beside = quote!(
        #[allow(unused_imports)]
        #[doc(hidden)]
        pub use crate::layers::{
            {differentiable_dense, __autodiff_callable_dense},
            shapes::{
                differentiable_scaled as differentiable_stretch,
                __autodiff_callable_scaled as __autodiff_callable_stretch,
            },
            more::{},
            {},
        };
    );
    let file: syn::File = syn::parse2(output).expect("two uses");
    let expected: syn::File = syn::parse2(quote!(#written #beside)).expect("two uses");
    // (Trailing commas aside.)
    let text = |file: &syn::File| quote!(#file).to_string().replace(" , }", " }");
    assert_eq!(text(&file), text(&expected));
    // (Arguments mean nothing on a `use`.)
    let output = expand(
        quote!(tape),
        quote!(
            use crate::layers::dense;
        ),
    );
    let errors = errors(&output);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("`#[differentiable]` on a `use` takes no arguments\n"));
}
