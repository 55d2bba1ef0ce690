//! `#[differentiable] use path::{dense, relu};`: a helper imported by name. A call of
//! `dense` in another `#[differentiable]` body goes to `dense`'s generated companions
//! (`differentiable_dense` and the check its compiled sweeps call), which a `use` of the
//! name alone does not bring into scope (a glob import or a path, `layers::dense(..)`,
//! does). The attribute on the `use` imports each name with its companions.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemUse, UseGroup, UseName, UseRename, UseTree};

use crate::emit::{body_ident, callable_ident};

/// The `use` with each name's companions imported beside it.
pub(crate) fn companions(mut item: ItemUse) -> TokenStream {
    with_companions(&mut item.tree);
    quote!(#item)
}

/// `tree` with every name `g` (or `g as h`) a group of `g` and its companions. A
/// glob, `self` and `super` are left as written.
fn with_companions(tree: &mut UseTree) {
    // (A work list rather than recursion: groups nest as deep as the user writes them.)
    let mut pending = vec![tree];
    while let Some(tree) = pending.pop() {
        let group = match tree {
            UseTree::Path(path) => {
                pending.push(&mut path.tree);
                continue;
            }
            UseTree::Group(group) => {
                pending.extend(group.items.iter_mut());
                continue;
            }
            UseTree::Name(UseName { ident }) if ident != "self" => {
                let names = [ident.clone(), body_ident(ident), callable_ident(ident)];
                names
                    .into_iter()
                    .map(|ident| UseTree::Name(UseName { ident }))
                    .collect()
            }
            UseTree::Rename(UseRename { ident, rename, .. }) if ident != "self" => {
                let pairs = [
                    (ident.clone(), rename.clone()),
                    (body_ident(ident), body_ident(rename)),
                    (callable_ident(ident), callable_ident(rename)),
                ];
                pairs
                    .into_iter()
                    .map(|(ident, rename)| {
                        UseTree::Rename(UseRename {
                            ident,
                            as_token: Default::default(),
                            rename,
                        })
                    })
                    .collect()
            }
            _ => continue,
        };
        *tree = UseTree::Group(UseGroup {
            brace_token: Default::default(),
            items: group,
        });
    }
}
