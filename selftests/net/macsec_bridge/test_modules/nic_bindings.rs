// SPDX-License-Identifier: GPL-2.0

//! The model NIC's `bindings` on a kernel without the patch series, whose
//! own bindings lack net/macsec.h: the kernel's, and net/macsec.h bound
//! when the module is built (Kbuild, which builds the NIC's crate root
//! with this file in place of `kernel::bindings`).

// The lints the kernel allows in its own bindings.
#![allow(
    clippy::all,
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn
)]
#![cfg_attr(not(CONFIG_RUSTC_HAS_UNNECESSARY_TRANSMUTES), allow(unknown_lints))]
#![allow(unnecessary_transmutes)]
pub use kernel::bindings::*;
use kernel::ffi;
use pin_init::MaybeZeroable;
include!("nic_bindings_generated.rs");
