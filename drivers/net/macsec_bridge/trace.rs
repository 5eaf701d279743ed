// SPDX-License-Identifier: GPL-2.0

//! The module's tracepoints, `events/macsec_bridge/` (see `trace.h`).
//!
//! `TRACE_EVENT` is a C macro, and the kernel crate's `declare_trace!` only
//! reaches tracepoints that the kernel's own bindings declare, so the
//! events live in `trace.c` behind plain functions.
//!
//! Layer 1 (types and leaves). Owns: the events' arguments ([`Cause`],
//! [`Work`]) and the timing of an update ([`Span`]). May use: nothing of the
//! driver.

use kernel::ffi::c_int;
use kernel::time::{ClockSource, Monotonic};

extern "C" {
    fn macsec_bridge_trace_announce(ifindex: c_int, generation: u64, protection: u32, reason: u32);
    fn macsec_bridge_trace_feature(ifindex: c_int, on: bool, written: bool);
    fn macsec_bridge_trace_update_enabled() -> bool;
    fn macsec_bridge_trace_update(
        cause: u32,
        code: u32,
        ifindex: c_int,
        ns: u64,
        state_ns: u64,
        apply_ns: u64,
        visited: u32,
        probes: u64,
        ports: u32,
        secys: u32,
    );
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

/// What entered the bridge (`macsec_bridge_update`'s `cause`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cause {
    /// A netdev event; the code is its `NETDEV_*` number.
    Event = 0,
    /// An offload operation, before the driver; the code is its
    /// [`crate::net::macsec::Mdo`] index.
    OpBefore = 1,
    /// An offload operation, after the driver.
    OpAfter = 2,
    /// A generic netlink request (`bind`, `unbind`).
    Request = 3,
    /// The RDMA client: a device added (code 0), removed (1) or renamed
    /// (2), or a re-read of GIDs after a GID table changed (3).
    Rdma = 4,
    /// The periodic re-read of the SecYs.
    Revalidate = 5,
    /// The deferred writer of feature bits.
    Deferred = 6,
    /// Unload.
    Unload = 7,
    /// A round of a `dev-get` dump; the code is the messages it put.
    Dump = 8,
}

/// What an entry into the bridge did, for `macsec_bridge_update`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Work {
    /// Port objects recomputed.
    pub(crate) visited: u32,
    /// Slots of the state's hash tables examined ([`crate::index::Index::probes`]).
    pub(crate) probes: u64,
    /// Ports tracked.
    pub(crate) ports: u32,
    /// SecYs tracked.
    pub(crate) secys: u32,
}

/// Times one entry into the bridge, in the kernel, while
/// `macsec_bridge_update` is enabled (otherwise it costs one call): the
/// whole, and within it the time the state was locked and the time its
/// effects took once unlocked (notifications sent, feature bits written,
/// with what the core does for them).
pub(crate) struct Span {
    t0: Option<u64>,
    locked: u64,
    unlocked: u64,
}

impl Span {
    /// Starts timing if the event is enabled.
    pub(crate) fn start() -> Span {
        // SAFETY: the function takes nothing and may be called anywhere.
        let on = unsafe { macsec_bridge_trace_update_enabled() };
        Span {
            t0: on.then(now),
            locked: 0,
            unlocked: 0,
        }
    }

    /// The state's mutex is now held.
    pub(crate) fn locked(&mut self) {
        if self.t0.is_some() {
            self.locked = now();
        }
    }

    /// The state's mutex was released; its effects are applied next.
    pub(crate) fn unlocked(&mut self) {
        if self.t0.is_some() {
            self.unlocked = now();
        }
    }

    /// Emits `macsec_bridge_update` for what started with [`Span::start`].
    pub(crate) fn end(self, cause: Cause, code: u32, ifindex: i32, work: Work) {
        let Some(t0) = self.t0 else { return };
        let t = now();
        let ns = t.saturating_sub(t0);
        let (state_ns, apply_ns) = match (self.locked, self.unlocked) {
            (0, _) | (_, 0) => (0, 0),
            (l, u) => (u.saturating_sub(l), t.saturating_sub(u)),
        };
        // SAFETY: the event takes plain values.
        unsafe {
            macsec_bridge_trace_update(
                cause as u32,
                code,
                ifindex,
                ns,
                state_ns,
                apply_ns,
                work.visited,
                work.probes,
                work.ports,
                work.secys,
            )
        }
    }
}

/// The monotonic clock, in ns.
fn now() -> u64 {
    // Never negative (`ClockSource`).
    Monotonic::ktime_get() as u64
}
