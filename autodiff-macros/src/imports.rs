//! `#[differentiable] use path::{dense, relu};`: a helper imported by name. A call of
//! `dense` in another `#[differentiable]` body goes to `dense`'s generated companions
//! (`differentiable_dense` and the check its compiled sweeps call), which a `use` of the
//! name alone does not bring into scope (a glob import or a path, `layers::dense(..)`,
//! does). The attribute on the `use` imports each name with its companions.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemUse, UseGroup, UseName, UseRename, UseTree};

use crate::emit::{body_ident, callable_ident};

/// The `use` as written, and beside it a `use` of each name's companions, whose unused
/// names are no warning (a caller on the tape calls no check, say).
pub(crate) fn companions(item: ItemUse) -> TokenStream {
    let mut beside = item.clone();
    beside.attrs.retain(|attr| !attr.path().is_ident("doc"));
    to_companions(&mut beside.tree);
    quote! {
        #item
        #[allow(unused_imports)]
        #[doc(hidden)]
        #beside
    }
}

/// `tree` with every name `g` (or `g as h`) its companions instead (`differentiable_g`,
/// and the check). A glob or `self` becomes an empty group, `{}`.
fn to_companions(tree: &mut UseTree) {
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
                let names = [body_ident(ident), callable_ident(ident)];
                names
                    .into_iter()
                    .map(|ident| UseTree::Name(UseName { ident }))
                    .collect()
            }
            UseTree::Rename(UseRename { ident, rename, .. }) if ident != "self" => {
                let pairs = [
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
            _ => Default::default(),
        };
        *tree = UseTree::Group(UseGroup {
            brace_token: Default::default(),
            items: group,
        });
    }
}
