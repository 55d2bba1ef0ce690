//! A developer's aid for refactoring the macro: every `#[differentiable]` item of a source
//! tree expanded through [`expand`](crate::expand::expand) into one file, so that two builds
//! of the macro can be compared byte for byte (`scripts/expansions.sh` does that against a
//! commit). Ignored: run only by that script.

use quote::ToTokens;
use syn::visit::Visit;

/// The attribute's arguments and the item without the attribute, for each
/// `#[differentiable]` function or method of a file.
#[derive(Default)]
struct Items(Vec<(proc_macro2::TokenStream, proc_macro2::TokenStream)>);

impl Items {
    fn take(
        &mut self,
        attrs: &[syn::Attribute],
        strip: impl Fn(usize) -> proc_macro2::TokenStream,
    ) {
        for (index, attr) in attrs.iter().enumerate() {
            let last = attr.path().segments.last();
            if last.is_some_and(|segment| segment.ident == "differentiable") {
                let args = match &attr.meta {
                    syn::Meta::List(list) => list.tokens.clone(),
                    _ => proc_macro2::TokenStream::new(),
                };
                self.0.push((args, strip(index)));
            }
        }
    }
}

impl<'a> Visit<'a> for Items {
    fn visit_item_fn(&mut self, item: &'a syn::ItemFn) {
        self.take(&item.attrs, |index| {
            let mut item = item.clone();
            item.attrs.remove(index);
            item.to_token_stream()
        });
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'a syn::ImplItemFn) {
        self.take(&item.attrs, |index| {
            let mut item = item.clone();
            item.attrs.remove(index);
            item.to_token_stream()
        });
        syn::visit::visit_impl_item_fn(self, item);
    }
}

/// Writes the expansions of the sources under `AUTODIFF_CORPUS` (default: this
/// repository) to the file `AUTODIFF_EXPANSIONS`, each after a line naming its file.
#[test]
#[ignore = "a developer's aid: run by scripts/expansions.sh"]
fn dump_expansions() {
    let root = std::env::var("AUTODIFF_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let Ok(target) = std::env::var("AUTODIFF_EXPANSIONS") else {
        panic!("set AUTODIFF_EXPANSIONS to the file to write");
    };
    let mut files = Vec::new();
    let mut dirs: Vec<_> = ["src", "tests", "ui-tests", "examples", "benches"]
        .iter()
        .map(|dir| root.join(dir))
        .collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = String::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable source");
        let Ok(parsed) = syn::parse_file(&text) else {
            continue;
        };
        let mut items = Items::default();
        items.visit_file(&parsed);
        let name = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (args, item) in items.0 {
            out.push_str(&format!(
                "== {name}\n{}\n",
                crate::expand::expand(args, item)
            ));
        }
    }
    std::fs::write(target, out).expect("the expansions file is writable");
}
