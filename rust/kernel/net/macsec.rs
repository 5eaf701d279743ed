// SPDX-License-Identifier: GPL-2.0

//! MACsec offload: read-only SecY views and a `macsec_ops` interposer.
//!
//! C header: [`include/net/macsec.h`](srctree/include/net/macsec.h)
//!
//! There is no notifier for SecY, SC or SA changes, and switching a SecY's
//! offload mode emits no event at all. What every offloaded change does go
//! through is the lower device's `struct macsec_ops`. An [`Interposer`]
//! replaces a device's `macsec_ops` with a copy whose `mdo_*` slots call an
//! [`Observer`] around the original operation (the way `vlan_dev.c` proxies
//! `macsec_ops` to its real device). NULL slots stay NULL, the non-function
//! fields are copied, and restoring puts the original pointer back and waits
//! for an RCU grace period before the copy is freed, because the MACsec RX
//! path reads the table without RTNL.
//!
//! Only MAC offload (`ctx->netdev`) is interposed; PHY offload tables live on
//! the `phy_device`.

use crate::{
    bindings,
    error::{to_result, VTABLE_DEFAULT_ERROR},
    net::{device::NetDevice, rtnl::Rtnl},
    prelude::*,
    sync::Arc,
    types::{ARef, Opaque},
};
use core::sync::atomic::{AtomicPtr, Ordering};
use ffi::c_int;

/// Key length of the 256-bit cipher suites (uapi `MACSEC_GCM_AES_256_SAK_LEN`).
const MACSEC_GCM_AES_256_SAK_LEN: u16 = 32;

/// Where a SecY's crypto runs (`enum macsec_offload`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Offload {
    /// In software, in `macsec.c`.
    Off,
    /// In the PHY.
    Phy,
    /// In the MAC (the lower netdev's `macsec_ops`).
    Mac,
}

impl Offload {
    fn from_raw(v: bindings::macsec_offload) -> Offload {
        match v {
            bindings::macsec_offload_MACSEC_OFFLOAD_PHY => Offload::Phy,
            bindings::macsec_offload_MACSEC_OFFLOAD_MAC => Offload::Mac,
            _ => Offload::Off,
        }
    }
}

/// The cipher suite of a SecY.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cipher {
    /// GCM-AES-128.
    GcmAes128,
    /// GCM-AES-256.
    GcmAes256,
    /// GCM-AES-XPN-128.
    GcmAesXpn128,
    /// GCM-AES-XPN-256.
    GcmAesXpn256,
}

/// A read-only view of a SecY (`struct macsec_secy`).
///
/// # Invariants
///
/// The SecY is valid for the lifetime of the reference, and RTNL (which
/// serialises every writer of the fields read here, PN wrap aside) is held:
/// views are only handed out inside [`Observer`] callbacks.
#[repr(transparent)]
pub struct SecY(Opaque<bindings::macsec_secy>);

impl SecY {
    fn raw(&self) -> &bindings::macsec_secy {
        // SAFETY: by the type invariant the SecY is valid and not written
        // concurrently (RTNL).
        unsafe { &*self.0.get() }
    }

    /// The MACsec netdev of this SecY.
    pub fn netdev(&self) -> &NetDevice {
        // SAFETY: a SecY's netdev outlives it.
        unsafe { NetDevice::from_raw(self.raw().netdev) }
    }

    /// The Secure Channel Identifier, as on the wire (big endian in memory).
    pub fn sci(&self) -> u64 {
        self.raw().sci
    }

    /// Whether the SecY is operational (`secy->operational`).
    pub fn operational(&self) -> bool {
        self.raw().operational
    }

    /// Whether outgoing frames are protected (`protect_frames`).
    pub fn protect_frames(&self) -> bool {
        self.raw().protect_frames
    }

    /// Whether the TX SC encrypts (`tx_sc.encrypt`).
    pub fn encrypt(&self) -> bool {
        self.raw().tx_sc.encrypt
    }

    /// The association number of the encoding SA (`tx_sc.encoding_sa`).
    pub fn encoding_sa(&self) -> u8 {
        self.raw().tx_sc.encoding_sa
    }

    /// Whether TX SA `an` exists and is active.
    pub fn tx_sa_active(&self, an: u8) -> bool {
        let sa = match self.raw().tx_sc.sa.get(an as usize) {
            Some(sa) => *sa,
            None => return false,
        };
        // SAFETY: under RTNL the TX SA pointers are stable
        // (`rtnl_dereference`); a non-null SA is valid.
        !sa.is_null() && unsafe { (*sa).active }
    }

    /// Whether the SecY uses extended packet numbering.
    pub fn xpn(&self) -> bool {
        self.raw().xpn
    }

    /// The cipher suite.
    pub fn cipher(&self) -> Cipher {
        let k256 = self.raw().key_len == MACSEC_GCM_AES_256_SAK_LEN;
        match (self.xpn(), k256) {
            (false, false) => Cipher::GcmAes128,
            (false, true) => Cipher::GcmAes256,
            (true, false) => Cipher::GcmAesXpn128,
            (true, true) => Cipher::GcmAesXpn256,
        }
    }
}

/// An offload operation (`mdo_*`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mdo {
    /// `mdo_dev_open`: the MACsec netdev is opened.
    DevOpen,
    /// `mdo_dev_stop`: the MACsec netdev is closed.
    DevStop,
    /// `mdo_add_secy`.
    AddSecy,
    /// `mdo_upd_secy`.
    UpdSecy,
    /// `mdo_del_secy`.
    DelSecy,
    /// `mdo_add_rxsc`.
    AddRxsc,
    /// `mdo_upd_rxsc`.
    UpdRxsc,
    /// `mdo_del_rxsc`.
    DelRxsc,
    /// `mdo_add_rxsa`.
    AddRxsa,
    /// `mdo_upd_rxsa`.
    UpdRxsa,
    /// `mdo_del_rxsa`.
    DelRxsa,
    /// `mdo_add_txsa`.
    AddTxsa,
    /// `mdo_upd_txsa`.
    UpdTxsa,
    /// `mdo_del_txsa`.
    DelTxsa,
    /// `mdo_get_dev_stats`.
    GetDevStats,
    /// `mdo_get_tx_sc_stats`.
    GetTxScStats,
    /// `mdo_get_tx_sa_stats`.
    GetTxSaStats,
    /// `mdo_get_rx_sc_stats`.
    GetRxScStats,
    /// `mdo_get_rx_sa_stats`.
    GetRxSaStats,
}

/// The argument of an offload operation (`struct macsec_context`).
///
/// # Invariants
///
/// The context is valid for the lifetime of the reference, RTNL is held, and
/// the offload is [`Offload::Mac`].
pub struct Context<'a> {
    ctx: &'a bindings::macsec_context,
}

impl<'a> Context<'a> {
    /// The lower device whose `macsec_ops` run the operation.
    pub fn lower(&self) -> &'a NetDevice {
        // SAFETY: for MAC offload the union holds the lower netdev, valid
        // for the call.
        unsafe { NetDevice::from_raw(self.ctx.__bindgen_anon_1.netdev) }
    }

    /// The offload mode the operation is for.
    pub fn offload(&self) -> Offload {
        Offload::from_raw(self.ctx.offload)
    }

    /// The SecY.
    pub fn secy(&self) -> &'a SecY {
        // SAFETY: every `mdo_*` gets a valid SecY; `SecY` is transparent.
        unsafe { &*self.ctx.secy.cast::<SecY>() }
    }

    /// For SA operations, the association number.
    pub fn assoc_num(&self) -> u8 {
        self.ctx.sa.assoc_num
    }

    /// For TX SA operations, whether the SA (being added or updated) is
    /// active.
    pub fn tx_sa_active(&self) -> bool {
        // SAFETY: for TX SA operations `sa.tx_sa` is valid; for others it
        // may be NULL, which is checked.
        unsafe {
            let sa = self.ctx.sa.__bindgen_anon_1.tx_sa;
            !sa.is_null() && (*sa).active
        }
    }
}

/// Called around every `mdo_*` of an interposed device.
#[vtable]
pub trait Observer: Send + Sync {
    /// Before the operation is forwarded to the original `macsec_ops`.
    fn before(&self, _rtnl: &Rtnl, _op: Mdo, _ctx: &Context<'_>) {
        crate::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// After the original operation returned `ret`.
    fn after(&self, _rtnl: &Rtnl, _op: Mdo, _ctx: &Context<'_>, _ret: Result) {
        crate::build_error(VTABLE_DEFAULT_ERROR)
    }
}

/// A device's `macsec_ops`, interposed.
///
/// # Invariants
///
/// While installed, `dev->macsec_ops == &ops`, `INTERPOSED[slot] == dev` (so
/// no other interposer is on `dev`), `orig` is the pointer it replaced
/// (valid: driver tables are static), and every non-NULL `mdo_*` slot
/// of `ops` is a trampoline of `Interposed<T>` whose original slot is
/// non-NULL.
#[repr(C)]
struct Interposed<T: Observer> {
    ops: bindings::macsec_ops,
    orig: *const bindings::macsec_ops,
    dev: ARef<NetDevice>,
    observer: Arc<T>,
    /// Our claim in [`INTERPOSED`].
    slot: usize,
}

/// An installed interposer; restore it with [`Installed::restore`].
///
/// Dropping an installed interposer restores it too, taking RTNL: it must not
/// be dropped with RTNL held.
pub struct Installed<T: Observer> {
    inner: Option<KBox<Interposed<T>>>,
}

// SAFETY: the table is only read by the MACsec core; `T` is `Send + Sync`.
unsafe impl<T: Observer> Send for Installed<T> {}
// SAFETY: `&Installed` exposes nothing mutable.
unsafe impl<T: Observer> Sync for Installed<T> {}

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
                    // Not observed (PHY offload, TX path): mirrored as is.
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
    mdo_get_dev_stats => GetDevStats,
    mdo_get_tx_sc_stats => GetTxScStats,
    mdo_get_tx_sa_stats => GetTxSaStats,
    mdo_get_rx_sc_stats => GetRxScStats,
    mdo_get_rx_sa_stats => GetRxSaStats,
}

type MdoFn = unsafe extern "C" fn(*mut bindings::macsec_context) -> c_int;

impl<T: Observer> Interposed<T> {
    /// Runs one interposed operation.
    ///
    /// # Safety
    ///
    /// `ctx` is a valid MAC-offload context passed by the MACsec core under
    /// RTNL, whose `netdev` has an `Interposed<T>` installed, and `slot`
    /// selects a slot that is non-NULL in the original table.
    unsafe fn call(
        ctx: *mut bindings::macsec_context,
        op: Mdo,
        slot: impl FnOnce(&bindings::macsec_ops) -> Option<MdoFn>,
    ) -> c_int {
        // SAFETY: the caller guarantees `ctx` and that the device's ops are
        // our table, the first field of a live `Interposed<T>` (`repr(C)`).
        let this = unsafe {
            let dev = (*ctx).__bindgen_anon_1.netdev;
            &*(*dev).macsec_ops.cast::<Interposed<T>>()
        };
        // SAFETY: the MACsec core calls `mdo_*` under RTNL.
        let rtnl = unsafe { Rtnl::assume_held() };
        // SAFETY: `ctx` is valid for the call.
        let ctx_ref = unsafe { &*ctx };
        // INVARIANT: valid context, RTNL held, MAC offload.
        let c = Context { ctx: ctx_ref };
        if T::HAS_BEFORE {
            this.observer.before(rtnl, op, &c);
        }
        // SAFETY: `orig` is a valid table (invariant).
        let ret = match slot(unsafe { &*this.orig }) {
            // SAFETY: forwarding the core's own arguments to the driver.
            Some(f) => unsafe { f(ctx) },
            None => 0,
        };
        if T::HAS_AFTER {
            this.observer.after(rtnl, op, &c, to_result(ret));
        }
        ret
    }
}

/// Most devices interposed at once.
const MAX_INTERPOSED: usize = 256;

/// The devices that carry an interposer, one slot each.
///
/// [`Interposed::call`] finds its table through `dev->macsec_ops`; that is
/// only sound if the table there belongs to the interposer being called, so
/// a device carries at most one interposer (of any observer type). Slots are
/// claimed and released under RTNL.
static INTERPOSED: [AtomicPtr<bindings::net_device>; MAX_INTERPOSED] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; MAX_INTERPOSED];

/// Installs [`Observer`]s on devices' `macsec_ops`.
///
/// A device carries at most one interposer: installing a second one fails
/// with `EBUSY`.
pub struct Interposer;

impl Interposer {
    /// Interposes `observer` on `dev`'s `macsec_ops`.
    ///
    /// Fails with `EOPNOTSUPP` when the device has no `macsec_ops`, `EBUSY`
    /// when it already carries an interposer and `ENOSPC` when too many
    /// devices do.
    pub fn install<T: Observer>(
        _rtnl: &Rtnl,
        dev: &NetDevice,
        observer: Arc<T>,
    ) -> Result<Installed<T>> {
        let raw = dev.as_raw();
        // SAFETY: the device is valid and RTNL, which serialises writers of
        // `macsec_ops`, is held.
        let orig = unsafe { (*raw).macsec_ops };
        if orig.is_null() {
            return Err(EOPNOTSUPP);
        }
        if INTERPOSED
            .iter()
            .any(|d| core::ptr::eq(d.load(Ordering::Relaxed), raw))
        {
            return Err(EBUSY);
        }
        // RTNL serialises installers: a free slot stays free until taken.
        let slot = INTERPOSED
            .iter()
            .position(|d| d.load(Ordering::Relaxed).is_null())
            .ok_or(ENOSPC)?;
        // SAFETY: a non-NULL `macsec_ops` is a valid table.
        let ops = Interposed::<T>::build(unsafe { &*orig });
        let inner = KBox::new(
            Interposed {
                ops,
                orig,
                dev: dev.into(),
                observer,
                slot,
            },
            GFP_KERNEL,
        )?;
        INTERPOSED[slot].store(raw, Ordering::Relaxed);
        // INVARIANT: the table is complete before it is published; readers
        // see either the old or the new pointer, both valid.
        // SAFETY: the device is valid, RTNL is held; a pointer-sized store is
        // atomic on every architecture the kernel supports, and the RX path
        // reads the pointer with `READ_ONCE` semantics under RCU.
        unsafe { core::ptr::write_volatile(&raw mut (*raw).macsec_ops, &raw const inner.ops) };
        Ok(Installed { inner: Some(inner) })
    }
}

impl<T: Observer> Installed<T> {
    /// The original `macsec_ops` this interposer replaced.
    pub fn original(&self) -> *const bindings::macsec_ops {
        self.inner.as_ref().map_or(core::ptr::null(), |i| i.orig)
    }

    /// The device this interposer is installed on.
    pub fn device(&self) -> Option<&NetDevice> {
        self.inner.as_ref().map(|i| &*i.dev)
    }

    /// Puts the original `macsec_ops` back, waits for readers of the copy to
    /// finish and frees it.
    pub fn restore(mut self, rtnl: &Rtnl) {
        self.restore_locked(rtnl);
    }

    fn restore_locked(&mut self, _rtnl: &Rtnl) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let raw = inner.dev.as_raw();
        // SAFETY: the device is valid (we hold a reference) and RTNL is held.
        unsafe {
            if core::ptr::eq((*raw).macsec_ops, &inner.ops) {
                core::ptr::write_volatile(&raw mut (*raw).macsec_ops, inner.orig);
            }
            // RX and TX paths may still hold the copy: wait them out.
            bindings::synchronize_net();
        }
        INTERPOSED[inner.slot].store(core::ptr::null_mut(), Ordering::Relaxed);
        drop(inner);
    }
}

impl<T: Observer> Drop for Installed<T> {
    fn drop(&mut self) {
        if self.inner.is_some() {
            let rtnl = Rtnl::lock();
            self.restore_locked(&rtnl);
        }
    }
}
