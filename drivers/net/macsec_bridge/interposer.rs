// SPDX-License-Identifier: GPL-2.0

//! The `macsec_ops` interposer: how the module sees offloaded MACsec
//! operations on a kernel without the MACsec core's offload notifier (a
//! distribution's, with the DKMS package: `MACSEC_BRIDGE_COMPAT`).
//!
//! An [`Interposer`] replaces a device's `macsec_ops` with a copy whose
//! `mdo_*` slots call an [`Observer`] around the original operation. NULL
//! slots stay NULL, the non-function fields are copied, the copy is
//! published with release semantics (the RX path reads it without RTNL, on
//! any architecture), and restoring puts the original pointer back and
//! waits for an RCU grace period before the copy is freed.
//!
//! A VLAN has `macsec_ops` of its own that forward every operation to its
//! real device's table with `ctx->netdev` still the VLAN (`vlan_dev.c`). So
//! a VLAN is never interposed (its real device is), and a trampoline never
//! takes its table from `ctx->netdev`: it looks the table up in the
//! registry of interposed devices, from `ctx->netdev` down through VLANs to
//! their real device. Nothing is read through a pointer that might be
//! another driver's table, and no operation can come back to itself.
//!
//! Only MAC offload (`ctx->netdev`) is interposed; PHY offload tables live on
//! the `phy_device`, and a module that carries this file vouches for no
//! SecY a PHY could take (`secy.rs`).
//!
//! What no code outside `macsec.c` can fix: the MACsec core reads
//! `real_dev->macsec_ops` with plain loads, without RTNL, on the RX and TX
//! paths, so publishing the copy races those loads by the kernel's memory
//! model. The offload notifier has no such race, and a kernel that has it
//! never builds this file into the module.
//!
//! The trampolines are the module's text, so no table may stay installed
//! once the module is gone, whatever became of its [`Installed`] guard
//! (`mem::forget` is safe): the registry owns every table and the device
//! it is on, and a module that carries this file calls [`restore_all`] in
//! its exit.
//!
//! Owns: the registry of interposed devices and their tables. Touches:
//! `dev->macsec_ops` of the devices it is installed on, nothing else.
//!
//! Layer 1 (types and leaves), built only with `platform_compat.rs`. May
//! use: nothing of the driver.

use crate::bindings;
use crate::net::{
    device::{NetDevice, NetDeviceRef},
    macsec::{Context, Mdo, Observer, Offload},
    rtnl::{Rtnl, RtnlGuard},
};
use core::cell::UnsafeCell;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::sync::{
    atomic::{Atomic, Relaxed, Release},
    Arc,
};

/// A device's `macsec_ops`, interposed: the table, first in the
/// allocation, and what its trampolines need.
///
/// # Invariants
///
/// `orig` is the table `ops` replaced (valid: driver tables are static),
/// and every non-NULL `mdo_*` slot of `ops` is a trampoline of
/// `Interposed<T>` whose original slot is non-NULL.
#[repr(C)]
struct Interposed<T: Observer> {
    ops: bindings::macsec_ops,
    orig: *const bindings::macsec_ops,
    observer: Arc<T>,
}

/// An installed interposer; restore it with [`Installed::restore`].
///
/// Dropping an installed interposer restores it too, taking RTNL: it must not
/// be dropped with RTNL held. Forgetting one leaves its table installed
/// until [`restore_all`].
///
/// It does not name its observer's type: the registry owns the table, and
/// frees it with the function of that type it was given
/// ([`Interposer::install`]).
///
/// # Invariants
///
/// `id` is the [`Entry::id`] of the interposer it was returned for, or 0
/// once restored; ids are never reused.
pub(crate) struct Installed {
    id: u64,
    /// The device, by address: who it is on, not a reference to it (the
    /// registry holds the device).
    dev: usize,
}

macro_rules! trampolines {
    ($($slot:ident => $op:ident),* $(,)?) => {
        impl<T: Observer> Interposed<T> {
            fn build(orig: &bindings::macsec_ops) -> bindings::macsec_ops {
                bindings::macsec_ops {
                    $($slot: orig.$slot.map(|_| {
                        /// # Safety
                        ///
                        /// Called by the MACsec core, under RTNL, for a device
                        /// whose `macsec_ops` is an `Interposed<T>`.
                        unsafe extern "C" fn tramp<T: Observer>(
                            ctx: *mut bindings::macsec_context,
                        ) -> c_int {
                            // SAFETY: as documented above; `$slot` was
                            // non-NULL in the original table (invariant).
                            unsafe {
                                Interposed::<T>::call(ctx, Mdo::$op, |o| o.$slot)
                            }
                        }
                        tramp::<T> as unsafe extern "C" fn(*mut bindings::macsec_context) -> c_int
                    }),)*
                    // Not observed (statistics, which the MACsec core does
                    // not announce either, and the TX path): mirrored as is.
                    mdo_get_dev_stats: orig.mdo_get_dev_stats,
                    mdo_get_tx_sc_stats: orig.mdo_get_tx_sc_stats,
                    mdo_get_tx_sa_stats: orig.mdo_get_tx_sa_stats,
                    mdo_get_rx_sc_stats: orig.mdo_get_rx_sc_stats,
                    mdo_get_rx_sa_stats: orig.mdo_get_rx_sa_stats,
                    mdo_insert_tx_tag: orig.mdo_insert_tx_tag,
                    needed_headroom: orig.needed_headroom,
                    needed_tailroom: orig.needed_tailroom,
                    rx_uses_md_dst: orig.rx_uses_md_dst,
                }
            }
        }
    };
}

trampolines! {
    mdo_dev_open => DevOpen,
    mdo_dev_stop => DevStop,
    mdo_add_secy => AddSecy,
    mdo_upd_secy => UpdSecy,
    mdo_del_secy => DelSecy,
    mdo_add_rxsc => AddRxsc,
    mdo_upd_rxsc => UpdRxsc,
    mdo_del_rxsc => DelRxsc,
    mdo_add_rxsa => AddRxsa,
    mdo_upd_rxsa => UpdRxsa,
    mdo_del_rxsa => DelRxsa,
    mdo_add_txsa => AddTxsa,
    mdo_upd_txsa => UpdTxsa,
    mdo_del_txsa => DelTxsa,
}

impl<T: Observer> Interposed<T> {
    /// Runs one interposed operation.
    ///
    /// # Safety
    ///
    /// `ctx` is a valid MAC-offload context passed by the MACsec core under
    /// RTNL to a trampoline of an `Interposed<T>` table, and `slot` selects a
    /// slot that is non-NULL in the original table.
    unsafe fn call(
        ctx: *mut bindings::macsec_context,
        op: Mdo,
        slot: impl FnOnce(&bindings::macsec_ops) -> Option<MdoFn>,
    ) -> c_int {
        // SAFETY: the MACsec core calls `mdo_*` under RTNL; the rest is the
        // caller's guarantee.
        unsafe { Rtnl::assume_held(|rtnl| Self::call_locked(rtnl, ctx, op, slot)) }
    }

    /// [`Interposed::call`], with the proof of RTNL.
    ///
    /// # Safety
    ///
    /// As [`Interposed::call`].
    unsafe fn call_locked(
        rtnl: &Rtnl,
        ctx: *mut bindings::macsec_context,
        op: Mdo,
        slot: impl FnOnce(&bindings::macsec_ops) -> Option<MdoFn>,
    ) -> c_int {
        // SAFETY: `ctx` is valid for the call.
        if unsafe { (*ctx).offload } != bindings::macsec_offload_MACSEC_OFFLOAD_MAC {
            return EOPNOTSUPP.to_errno();
        }
        // SAFETY: `ctx` is valid, and for MAC offload its union holds the
        // SecY's lower device.
        let lower = unsafe { (*ctx).__bindgen_anon_1.netdev };
        // The table this trampoline was called through is the only
        // interposed one from `ctx->netdev` down through VLANs: VLANs are
        // never interposed, and each forwards to its real device.
        let Some(table) = REGISTRY.find_from(rtnl, lower) else {
            return EOPNOTSUPP.to_errno();
        };
        // Take what the call needs out of the table now: an observer may
        // restore, and so free, the interposer before the operation ends.
        let (orig, observer) = {
            // SAFETY: a trampoline of `Interposed<T>` was called through this
            // table, so it is the `ops` field, first in the `repr(C)`
            // struct, of a live `Interposed<T>` (type invariant), which
            // nothing frees while this block runs.
            let this = unsafe { &*table.cast::<Interposed<T>>() };
            // SAFETY: `orig` is a valid table (type invariant).
            (slot(unsafe { &*this.orig }), this.observer.clone())
        };
        if T::HAS_BEFORE {
            // SAFETY: `ctx` is the valid MAC-offload context the core passed
            // to `op`, under RTNL (`rtnl`), and `lower` its `netdev`.
            observer.before(rtnl, op, &unsafe { told(ctx, op, lower) });
        }
        let ret = match orig {
            // SAFETY: forwarding the core's own arguments to the driver.
            Some(f) => unsafe { f(ctx) },
            None => 0,
        };
        if T::HAS_AFTER {
            // SAFETY: as above; the context is valid until the core's call
            // returns.
            observer.after(rtnl, op, &unsafe { told(ctx, op, lower) }, to_result(ret));
        }
        ret
    }
}

/// What the MACsec core would tell an observer of operation `op` on `ctx`
/// (`macsec_offload_info`): copies of the context's fields, never the
/// context, which holds the key of an SA operation.
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context the MACsec core passed to `op`,
/// under RTNL, held for `'a`, and `lower` is `ctx->netdev`.
unsafe fn told<'a>(
    ctx: *const bindings::macsec_context,
    op: Mdo,
    lower: *const bindings::net_device,
) -> Context<'a> {
    let tx_sa = matches!(op, Mdo::AddTxsa | Mdo::UpdTxsa | Mdo::DelTxsa);
    // SAFETY: `ctx` is valid (the caller's guarantee); for the TX SA
    // operations the MACsec core sets `sa.tx_sa` to the SA being added,
    // updated or deleted, valid for the call, and otherwise the union holds
    // an RX SA or nothing: its pointer is read but not followed. `active`
    // is read once: PN exhaustion clears it from the datapath without RTNL
    // (`macsec_pn_wrapped()`).
    let (secy, an, active) = unsafe {
        let sa = (*ctx).sa.__bindgen_anon_1.tx_sa;
        let active = tx_sa && !sa.is_null() && core::ptr::read_volatile(&raw const (*sa).active);
        ((*ctx).secy, (*ctx).sa.assoc_num, active)
    };
    // SAFETY: RTNL is held for `'a`; the core passes `op` the SecY of a
    // MACsec netdev, valid for the call, and for MAC offload the SecY's
    // real device is `ctx->netdev` (`__macsec_get_ops()`), `lower`.
    // No offload change reaches a driver's table as one operation.
    unsafe { Context::new(op, Offload::Mac, secy, lower, an, active, Offload::Off) }
}

/// An interposed device and its table, owned by the registry.
///
/// # Invariants
///
/// `table` is the `ops` of an `Interposed<T>` allocated by
/// [`Interposer::install`], freed only by `free` (for that `T`), and
/// installed on `dev` from its publication until [`Entry::take_off`];
/// `orig` is the table it replaced.
struct Entry {
    /// The installation's identity (never 0, never reused).
    id: u64,
    /// The device, held while the entry exists.
    dev: NetDeviceRef,
    table: *const bindings::macsec_ops,
    orig: *const bindings::macsec_ops,
    free: unsafe fn(*const bindings::macsec_ops),
}

impl Entry {
    /// Puts the original table back on the device, if this entry's table
    /// is still the one on it.
    ///
    /// # Safety
    ///
    /// RTNL is held, and no MACsec operation through the table is in
    /// progress.
    unsafe fn take_off(&self) {
        let raw = self.dev.as_raw();
        // SAFETY: the device is valid (the entry holds it) and RTNL, which
        // serialises writers of the field, is held.
        unsafe {
            if core::ptr::eq(ops_field(raw).load(Relaxed), self.table) {
                publish(raw, self.orig);
            }
        }
    }

    /// Frees the table and lets go of the device.
    ///
    /// # Safety
    ///
    /// [`Entry::take_off`] ran, and an RCU grace period passed since.
    unsafe fn free(self) {
        // SAFETY: the table is no longer installed and has no reader left
        // (the caller's guarantee); `free` is its own type's (invariant),
        // and the entry is consumed, so it runs once.
        unsafe { (self.free)(self.table) };
    }
}

/// The interposed devices, each with the table installed on it.
struct Interposers {
    list: KVec<Entry>,
    /// The last [`Entry::id`] handed out.
    last_id: u64,
}

impl Interposers {
    /// Takes entry `id` out of the registry, if it is there.
    fn take(&mut self, id: u64) -> Option<Entry> {
        let at = self.list.iter().position(|e| e.id == id)?;
        let e = self.list.remove(at).ok()?;
        // A static is never dropped: with no device interposed, the
        // registry holds no memory (so none outlives a module that
        // carries this file and is unloaded).
        if self.list.is_empty() {
            self.list = KVec::new();
        }
        Some(e)
    }
}

/// The registry.
///
/// # Invariants
///
/// It is only accessed with RTNL held, and no reference to its contents
/// outlives a method call.
struct Registry(UnsafeCell<Interposers>);

// SAFETY: every access happens under RTNL (type invariant), which
// serialises them; the raw table pointers are only dereferenced under it.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry(UnsafeCell::new(Interposers {
    list: KVec::new(),
    last_id: 0,
}));

impl Registry {
    fn with<R>(&self, _rtnl: &Rtnl, f: impl FnOnce(&mut Interposers) -> R) -> R {
        // SAFETY: RTNL is held (`_rtnl`), and `f` cannot reach the registry
        // again: it is private to this file and its callers pass closures
        // that only touch its contents.
        f(unsafe { &mut *self.0.get() })
    }

    fn contains(&self, rtnl: &Rtnl, dev: *const bindings::net_device) -> bool {
        self.with(rtnl, |r| {
            r.list
                .iter()
                .any(|e| core::ptr::eq(e.dev.as_raw().cast_const(), dev))
        })
    }

    /// The table interposed on `dev`, or on the device a VLAN `dev` (or a
    /// stack of them) forwards its MACsec operations to.
    fn find_from(
        &self,
        rtnl: &Rtnl,
        mut dev: *mut bindings::net_device,
    ) -> Option<*const bindings::macsec_ops> {
        loop {
            let found = self.with(rtnl, |r| {
                r.list
                    .iter()
                    .find(|e| core::ptr::eq(e.dev.as_raw(), dev))
                    .map(|e| e.table)
            });
            if found.is_some() {
                return found;
            }
            // SAFETY: `dev` is a registered device (a SecY's lower, or the
            // real device of one), valid under RTNL.
            dev = unsafe { NetDevice::from_raw(dev) }
                .vlan_real_dev()?
                .as_raw();
        }
    }
}

type MdoFn = unsafe extern "C" fn(*mut bindings::macsec_context) -> c_int;

/// Points `dev->macsec_ops` at `ops`, with release semantics (as
/// `rcu_assign_pointer()`): the RX path reads the pointer without RTNL, and
/// whoever sees the new pointer must see the table's contents
/// (`rx_uses_md_dst`, ...) too, on weakly ordered architectures as well.
///
/// # Safety
///
/// `dev` must be valid, RTNL held (it serialises every writer of the
/// pointer), and `ops` a valid table that outlives its use by the device.
unsafe fn publish(dev: *mut bindings::net_device, ops: *const bindings::macsec_ops) {
    // SAFETY: `dev` is valid (the caller's guarantee). Writers of the field
    // are serialised by RTNL. Readers load it with plain C loads, as they
    // load any pointer published with `rcu_assign_pointer()`; the address
    // dependency orders their reads of the table after the load.
    unsafe { ops_field(dev) }.store(ops, Release);
}

/// `dev->macsec_ops`, as the atomic pointer it is used as.
///
/// The cast keeps the field's pointee the `struct macsec_ops` of these
/// bindings even where `struct net_device` was bound without
/// `<net/macsec.h>`, which leaves the field's own pointee opaque.
///
/// # Safety
///
/// `dev` must be valid for `'a`.
unsafe fn ops_field<'a>(dev: *mut bindings::net_device) -> &'a Atomic<*const bindings::macsec_ops> {
    // SAFETY: the field is valid and aligned for `'a` (the caller's
    // guarantee), and every pointer to it has the same layout.
    unsafe { Atomic::from_ptr((&raw mut (*dev).macsec_ops).cast()) }
}

/// Installs [`Observer`]s on devices' `macsec_ops`.
///
/// A device carries at most one interposer: installing a second one fails
/// with `EBUSY`. VLANs are not interposed (`EOPNOTSUPP`): their operations
/// reach their real device's table, and its observer.
pub(crate) struct Interposer;

impl Interposer {
    /// Interposes `observer` on `dev`'s `macsec_ops`.
    ///
    /// Fails with `EOPNOTSUPP` when the device has no `macsec_ops` or is a
    /// VLAN, `EBUSY` when it already carries an interposer, and `ENOMEM`.
    /// The observer is `'static`: it lives in the table, which the registry
    /// keeps, past the guard, until the table is taken off.
    pub(crate) fn install<T: Observer + 'static>(
        rtnl: &Rtnl,
        dev: &NetDevice,
        observer: Arc<T>,
    ) -> Result<Installed> {
        let raw = dev.as_raw();
        // SAFETY: the device is valid and RTNL, which serialises writers of
        // `macsec_ops`, is held.
        let orig = unsafe { ops_field(raw) }.load(Relaxed);
        if orig.is_null() || dev.vlan_real_dev().is_some() {
            return Err(EOPNOTSUPP);
        }
        if REGISTRY.contains(rtnl, raw) {
            return Err(EBUSY);
        }
        REGISTRY.with(rtnl, |r| r.list.reserve(1, GFP_KERNEL))?;
        // SAFETY: a non-NULL `macsec_ops` is a valid table.
        let ops = Interposed::<T>::build(unsafe { &*orig });
        let table = KBox::into_raw(KBox::new(
            Interposed {
                ops,
                orig,
                observer,
            },
            GFP_KERNEL,
        )?);
        // `ops` is first in the `repr(C)` struct: the table's address is
        // the allocation's.
        let table: *const bindings::macsec_ops = table.cast_const().cast();
        let id = REGISTRY.with(rtnl, |r| {
            r.last_id += 1;
            let entry = Entry {
                id: r.last_id,
                dev: dev.hold(GFP_KERNEL),
                table,
                orig,
                free: free_table::<T>,
            };
            // Cannot fail: room is reserved.
            let _ = r.list.push(entry, GFP_KERNEL);
            r.last_id
        });
        // INVARIANT: the table is complete, and registered, before it is
        // published.
        // SAFETY: the device is valid and RTNL is held; the registry owns
        // the table until it is taken off the device.
        unsafe { publish(raw, table) };
        Ok(Installed {
            id,
            dev: raw as usize,
        })
    }
}

/// Frees the `Interposed<T>` whose table is `table`.
///
/// # Safety
///
/// `table` came from [`Interposer::install`] for this `T`, is no longer
/// installed on any device, no reader of it is left (an RCU grace period
/// passed since it was taken off), and it is freed once.
unsafe fn free_table<T: Observer>(table: *const bindings::macsec_ops) {
    // SAFETY: `table` is the first field of an `Interposed<T>` allocated by
    // `KBox` in `install`, and nothing uses it any more (the caller's
    // guarantee).
    drop(unsafe { KBox::from_raw(table.cast_mut().cast::<Interposed<T>>()) });
}

/// Takes every table still installed off its device and frees it, with one
/// wait for the RX and TX paths; returns how many there were. A module
/// that carries this file calls it in its exit, after everything that may
/// install has stopped: what is left is what a forgotten [`Installed`]
/// left.
///
/// Takes an [`RtnlGuard`], as [`Installed::restore`] does, for the same
/// reason.
pub(crate) fn restore_all(rtnl: &RtnlGuard) -> usize {
    let list = REGISTRY.with(rtnl, |r| core::mem::take(&mut r.list));
    for e in list.iter() {
        // SAFETY: RTNL is held, and the caller took it itself.
        unsafe { e.take_off() };
    }
    let n = list.len();
    if n > 0 {
        // SAFETY: called from process context.
        unsafe { bindings::synchronize_net() };
    }
    for e in list {
        // SAFETY: taken off above, and a grace period passed since.
        unsafe { e.free() };
    }
    n
}

impl Installed {
    /// The address of the device it is on: an identity, not a reference.
    pub(crate) fn device(&self) -> usize {
        self.dev
    }

    /// Leaves the table installed, for [`restore_all`] to take off with the
    /// others: what unload does, to wait for the RX and TX paths once rather
    /// than once per device.
    pub(crate) fn leave(self) {
        core::mem::forget(self);
    }

    /// Puts the original `macsec_ops` back, waits for readers of the copy to
    /// finish and frees it.
    ///
    /// It takes an [`RtnlGuard`], RTNL the caller took itself: inside an
    /// [`Observer`] callback the MACsec core is in the middle of a sequence
    /// of operations through the table, and reads it again after the
    /// callback returns (`macsec_update_offload()` calls `mdo_del_secy`
    /// after a failed `mdo_add_secy`), so the table must not be freed there.
    pub(crate) fn restore(mut self, rtnl: &RtnlGuard) {
        self.restore_locked(rtnl);
    }

    /// As [`Installed::restore`], under RTNL the caller did not take
    /// itself, as in a netdevice notifier.
    ///
    /// # Safety
    ///
    /// RTNL must be held, and no MACsec operation through this device's
    /// table may be in progress: the caller is not an [`Observer`] callback,
    /// nor anything the MACsec core calls between two operations (the
    /// `NETDEV_UNREGISTER` of the device itself, for example, qualifies).
    pub(crate) unsafe fn restore_unlocked(mut self, rtnl: &Rtnl) {
        self.restore_locked(rtnl);
    }

    fn restore_locked(&mut self, rtnl: &Rtnl) {
        // Restored already, by `restore_all` or here: ids are never reused.
        let id = core::mem::take(&mut self.id);
        let Some(e) = REGISTRY.with(rtnl, |r| r.take(id)) else {
            return;
        };
        // SAFETY: RTNL is held, and no operation through the table is in
        // progress (the callers' guarantee).
        unsafe { e.take_off() };
        // RX and TX paths may still hold the copy: wait them out. A
        // trampoline running under RTNL took what it needs from it already.
        // SAFETY: called from process context.
        unsafe { bindings::synchronize_net() };
        // SAFETY: taken off above, and a grace period passed since.
        unsafe { e.free() };
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if self.id != 0 {
            let rtnl = Rtnl::lock();
            self.restore_locked(&rtnl);
        }
    }
}
