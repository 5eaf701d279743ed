// SPDX-License-Identifier: GPL-2.0

//! A model MACsec-offloading NIC for the macsec_bridge selftests: `mtn0`,
//! whose `macsec_ops` succeed, unless its interface alias names one of
//! them: with `ip link set mtn0 alias fail:mdo_dev_stop`, say, that
//! operation fails with `EIO` until the alias changes. A driver's refusal
//! is how the tests reach macsec.c's failure paths, which netdevsim never
//! takes: some undo the change (`mdo_upd_txsa`), others go on regardless
//! (`mdo_dev_stop`, `mdo_del_secy` on deletion).
//!
//! Every operation is recorded in the trace buffer as it starts and as it
//! returns (`macsec_test_nic: mdo_upd_txsa enter`, `... exit 0`).
//!
//! With the alias `pn-wrap`, each frame mtn0 sends exhausts the packet
//! numbers of the encoding SA of the SecY offloaded to it: the module calls
//! `macsec_pn_wrapped()`, as aquantia and cn10k do from their interrupt
//! paths, which clears the SA's `active` flag with no operation and no
//! event.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{bindings, prelude::*, str::CString, sync::rcu};

#[path = "nic_model.rs"]
mod nic_model;

module! {
    type: TestNic,
    name: "macsec_test_nic",
    authors: ["macsec_bridge developers"],
    description: "Model MACsec-offloading NIC for the macsec_bridge selftests",
    license: "GPL",
}

/// The SecY offloaded to mtn0, from a TX SA operation that succeeded until
/// `mdo_del_secy`, whatever that returns (macsec.c deletes the SecY
/// anyway). Only TX SA operations set it: they reach only a SecY that is
/// fully created, and none comes after `mdo_del_secy` (`mdo_dev_stop`
/// does, when an up SecY is deleted). The SecY lives in its MACsec netdev's
/// private data, freed only after the netdev is unregistered and an RCU
/// grace period has passed, after `mdo_del_secy`.
static SECY: AtomicPtr<bindings::macsec_secy> = AtomicPtr::new(core::ptr::null_mut());

/// Whether `dev` has an alias that `test` accepts.
///
/// # Safety
///
/// `dev` is a valid device.
unsafe fn alias_matches(dev: *mut bindings::net_device, test: impl FnOnce(&[u8]) -> bool) -> bool {
    // The alias is replaced under its own mutex, not RTNL, and freed after
    // a grace period.
    let _rcu = rcu::read_lock();
    // SAFETY: `dev` is valid; the pointer is read once, as
    // `rcu_dereference()` does.
    let alias = unsafe { core::ptr::read_volatile(&raw const (*dev).ifalias) };
    if alias.is_null() {
        return false;
    }
    // SAFETY: a published alias is a NUL-terminated string, valid while
    // the RCU read lock is held.
    let alias = unsafe { CStr::from_char_ptr((*alias).ifalias.as_ptr()) };
    test(alias.to_bytes())
}

/// Whether `dev`'s alias asks `op` to fail.
///
/// # Safety
///
/// `dev` is a valid device.
unsafe fn told_to_fail(dev: *mut bindings::net_device, op: &str) -> bool {
    // SAFETY: the caller's guarantee.
    unsafe { alias_matches(dev, |a| a.strip_prefix(b"fail:") == Some(op.as_bytes())) }
}

/// Writes `macsec_test_nic: <args>` into the trace buffer, where the
/// macsec_bridge module's events land too: the selftests read from there
/// in which order the driver and the module acted. Lost if the line cannot
/// be formatted (no memory).
fn record(args: core::fmt::Arguments<'_>) {
    if let Ok(line) = CString::try_from_fmt(fmt!("macsec_test_nic: {}", args)) {
        // SAFETY: `line` is a NUL-terminated string that outlives the call,
        // which copies it; any address will do as the caller's.
        unsafe { bindings::__trace_puts(record as usize, line.as_char_ptr()) };
    }
}

/// One operation, recorded as it starts and as it returns (see `record`).
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context.
unsafe fn mdo(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    record(fmt!("{} enter", op));
    // SAFETY: the caller's guarantee.
    let ret = unsafe { offload(op, ctx) };
    record(fmt!("{} exit {}", op, ret));
    ret
}

/// One operation: succeeds, or fails as the lower device's alias asks.
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context.
unsafe fn offload(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    if op == "mdo_del_secy" {
        SECY.store(core::ptr::null_mut(), Ordering::Release);
    }
    // SAFETY: for MAC offload the context holds the SecY's lower device,
    // valid for the call.
    let lower = unsafe { (*ctx).__bindgen_anon_1.netdev };
    // SAFETY: as above.
    if unsafe { told_to_fail(lower, op) } {
        pr_info!("{}: failing as told\n", op);
        return EIO.to_errno();
    }
    if op == "mdo_add_txsa" || op == "mdo_upd_txsa" {
        // SAFETY: every operation gets the SecY, valid for the call.
        SECY.store(unsafe { (*ctx).secy }, Ordering::Release);
    }
    0
}

/// Sends nothing; with the alias `pn-wrap`, first exhausts the encoding SA.
///
/// # Safety
///
/// Called by the core with a valid `skb` that this function then owns, for
/// mtn0, inside an RCU-bh read-side section (`dev_queue_xmit()`).
unsafe extern "C" fn xmit(
    skb: *mut bindings::sk_buff,
    dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // SAFETY: `dev` is valid for the call.
    let wrap = unsafe { alias_matches(dev, |a| a == b"pn-wrap") };
    let secy = SECY.load(Ordering::Acquire);
    if wrap && !secy.is_null() {
        // SAFETY: a published SecY stays allocated until a grace period
        // after its `mdo_del_secy` (see `SECY`), and this runs in an RCU
        // read-side section; its TX SAs are freed after a grace period too
        // (`queue_rcu_work`), so the pointer read once here stays valid.
        unsafe {
            let an = usize::from(core::ptr::read_volatile(
                &raw const (*secy).tx_sc.encoding_sa,
            ));
            let slots = &raw const (*secy).tx_sc.sa;
            if an < array_len(slots) {
                let sa =
                    core::ptr::read_volatile(slots.cast::<*mut bindings::macsec_tx_sa>().add(an));
                if !sa.is_null() {
                    bindings::macsec_pn_wrapped(secy, sa);
                }
            }
        }
    }
    // SAFETY: the skb is ours.
    unsafe { nic_model::consume(skb) }
}

/// The length of the array `_a` points to, read from its type.
fn array_len<T, const N: usize>(_a: *const [T; N]) -> usize {
    N
}

static NETDEV_OPS: nic_model::Table<bindings::net_device_ops> = nic_model::netdev_ops(xmit);

nic_model::macsec_ops_table!(MACSEC_OPS, mdo);

struct TestNic {
    _nic: nic_model::Nic,
}

impl kernel::Module for TestNic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(TestNic {
            _nic: nic_model::Nic::new(c"mtn%d", 2, &NETDEV_OPS, &MACSEC_OPS)?,
        })
    }
}
