// SPDX-License-Identifier: GPL-2.0

//! `#[pin_data]` and `#[vtable]` for the host build of the core.
//!
//! On the host nothing is pinned in place and no C table is filled: the
//! struct is the struct without its `#[pin]` markers, and the trait
//! implementation is the implementation.

use proc_macro::{Delimiter, Group, TokenStream, TokenTree};

/// The struct, without the `#[pin]` on its fields.
#[proc_macro_attribute]
pub fn pin_data(_attr: TokenStream, item: TokenStream) -> TokenStream {
    strip_pin(item)
}

/// The item as it is.
#[proc_macro_attribute]
pub fn vtable(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

fn strip_pin(ts: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut it = ts.into_iter().peekable();
    while let Some(t) = it.next() {
        match t {
            TokenTree::Punct(ref p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = it.peek() {
                    if g.delimiter() == Delimiter::Bracket && g.stream().to_string() == "pin" {
                        it.next();
                        continue;
                    }
                }
                out.push(t);
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), strip_pin(g.stream()));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            t => out.push(t),
        }
    }
    out.into_iter().collect()
}
