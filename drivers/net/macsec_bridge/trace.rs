// SPDX-License-Identifier: GPL-2.0

//! The module's tracepoints, `events/macsec_bridge/` (see `trace.h`).
//!
//! `TRACE_EVENT` is a C macro, and the kernel crate's `declare_trace!` only
//! reaches tracepoints that the kernel's own bindings declare, so the
//! events live in `trace.c` behind plain functions.

use kernel::ffi::c_int;

extern "C" {
    fn macsec_bridge_trace_announce(ifindex: c_int, generation: u64, protection: u32, reason: u32);
    fn macsec_bridge_trace_feature(ifindex: c_int, on: bool, written: bool);
}

/// A port's object changed: `generation` is its new generation,
/// `protection` and `reason` the uAPI values it now reports.
pub(crate) fn announce(ifindex: i32, generation: u64, protection: u32, reason: u32) {
    // SAFETY: the function takes plain values and may be called in any
    // context a tracepoint may fire in.
    unsafe { macsec_bridge_trace_announce(ifindex, generation, protection, reason) }
}

/// `NETIF_F_HW_MACSEC` on the port was set (`on`) or cleared, or, when
/// `written` is false, the write was left to the deferred writer.
pub(crate) fn feature(ifindex: i32, on: bool, written: bool) {
    // SAFETY: as for `announce`.
    unsafe { macsec_bridge_trace_feature(ifindex, on, written) }
}
