// SPDX-License-Identifier: GPL-2.0

//! Network devices.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! # Examples
//!
//! ```
//! use kernel::net::{device::*, namespace::Net, rtnl::Rtnl};
//!
//! // The loopback device of the initial namespace always exists.
//! let lo = NetDevice::get_by_index(Net::init_net(), 1).expect("lo");
//! assert_eq!(lo.name().as_bytes(), b"lo");
//! assert!(*lo.net() == *Net::init_net());
//! assert!(!lo.is_macsec());
//!
//! let rtnl = Rtnl::lock();
//! assert!(lo.lower_devs(&rtnl)?.is_empty());
//! assert!(lo.upper_devs(&rtnl)?.is_empty());
//! // Feature changes need RTNL and are announced; setting a bit that is
//! // already in the set changes nothing.
//! let before = lo.features();
//! assert!(!lo.change_features(&rtnl, before, Features(0)));
//! assert_eq!(lo.features(), before);
//! # Ok::<(), Error>(())
//! ```

use crate::{
    bindings,
    error::Result,
    net::{namespace::Net, rtnl::Rtnl},
    prelude::*,
    str::CStr,
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::NonNull;

/// A set of netdev feature bits (`netdev_features_t`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Features(pub u64);

impl Features {
    /// `NETIF_F_HW_MACSEC`, ethtool's `macsec-hw-offload`.
    pub const HW_MACSEC: Features = Features(bindings::NETIF_F_HW_MACSEC);

    /// Whether every bit of `other` is set in `self`.
    pub fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A network device (`struct net_device`).
///
/// # Invariants
///
/// The inner `struct net_device` is valid for as long as a reference to this
/// type exists: every `&NetDevice` is backed by a reference count (an
/// [`ARef<NetDevice>`], i.e. `dev_hold`) or by a context in which the core
/// keeps the device alive (a notifier call, RTNL held while the device is
/// registered).
#[repr(transparent)]
pub struct NetDevice(Opaque<bindings::net_device>);

// SAFETY: `struct net_device` is used from any thread; the fields this type
// reads are either immutable after registration or read with the locking the
// methods document.
unsafe impl Send for NetDevice {}
// SAFETY: see `Send`; `&self` methods are safe to call concurrently.
unsafe impl Sync for NetDevice {}

// SAFETY: `dev_hold`/`dev_put` keep the device's memory alive until the count
// drops to zero, and every `net_device` is reference counted.
unsafe impl AlwaysRefCounted for NetDevice {
    fn inc_ref(&self) {
        // SAFETY: by the type invariant the device is valid.
        unsafe { bindings::dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns an increment taken by `inc_ref`.
        unsafe { bindings::dev_put(obj.cast().as_ptr()) };
    }
}

impl NetDevice {
    /// Creates a reference to a `NetDevice` from a pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `struct net_device` that stays alive for
    /// `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a NetDevice {
        // SAFETY: `NetDevice` is `repr(transparent)` over the C struct, and
        // the caller guarantees validity for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw `struct net_device` pointer.
    pub fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Looks up a device by ifindex in `net`, taking a reference.
    pub fn get_by_index(net: &Net, ifindex: i32) -> Option<ARef<NetDevice>> {
        // SAFETY: `net` is valid; `dev_get_by_index` returns a held device or
        // NULL.
        let ptr = unsafe { bindings::dev_get_by_index(net.as_raw(), ifindex) };
        // SAFETY: a non-null result carries a reference we now own.
        NonNull::new(ptr).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// The device's name (`dev->name`).
    ///
    /// Names change under RTNL; read it under RTNL for a stable answer.
    pub fn name(&self) -> &CStr {
        // SAFETY: `dev->name` is a NUL-terminated array inside the valid
        // device.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The device's interface index.
    pub fn ifindex(&self) -> i32 {
        // SAFETY: the device is valid; `ifindex` is an integer field.
        unsafe { (*self.as_raw()).ifindex }
    }

    /// The `IFF_*` flags (`dev->flags`).
    pub fn flags(&self) -> u32 {
        // SAFETY: the device is valid.
        unsafe { (*self.as_raw()).flags }
    }

    /// Whether the device is administratively up (`IFF_UP`).
    pub fn is_up(&self) -> bool {
        self.flags() & bindings::net_device_flags_IFF_UP != 0
    }

    /// Whether the device has carrier.
    pub fn carrier_ok(&self) -> bool {
        // SAFETY: the device is valid.
        unsafe { bindings::netif_carrier_ok(self.as_raw()) }
    }

    /// RFC 2863 operational state (`IF_OPER_*`).
    pub fn operstate(&self) -> u32 {
        // SAFETY: the device is valid.
        unsafe { (*self.as_raw()).operstate }
    }

    /// Whether the device is registered (not yet unregistering).
    pub fn is_registered(&self) -> bool {
        // SAFETY: the device is valid.
        let state = unsafe { (*self.as_raw()).reg_state };
        u32::from(state) == bindings::netdev_reg_state_NETREG_REGISTERED
    }

    /// The device's active features (`dev->features`).
    pub fn features(&self) -> Features {
        // SAFETY: the device is valid.
        Features(unsafe { (*self.as_raw()).features })
    }

    /// The features a user may toggle (`dev->hw_features`).
    pub fn hw_features(&self) -> Features {
        // SAFETY: the device is valid.
        Features(unsafe { (*self.as_raw()).hw_features })
    }

    /// Sets and clears bits of `dev->features` and, if anything changed,
    /// announces it with `netdev_features_change()` (`NETDEV_FEAT_CHANGE`,
    /// `RTM_NEWLINK`, `ETHTOOL_MSG_FEATURES_NTF`).
    ///
    /// Returns whether the features changed. Writing `dev->features`
    /// requires RTNL.
    pub fn change_features(&self, _rtnl: &Rtnl, set: Features, clear: Features) -> bool {
        let dev = self.as_raw();
        // SAFETY: the device is valid and RTNL, which serialises writers of
        // `features`, is held (`_rtnl`).
        let changed = unsafe {
            let old = (*dev).features;
            (*dev).features = (old | set.0) & !clear.0;
            old != (*dev).features
        };
        if changed {
            // SAFETY: the device is valid and RTNL is held, as
            // `netdev_features_change` requires.
            unsafe { bindings::netdev_features_change(dev) };
        }
        changed
    }

    /// The network namespace the device is in.
    ///
    /// A device only moves between namespaces under RTNL: the answer is
    /// stable while the caller holds it.
    pub fn net(&self) -> &Net {
        // SAFETY: the device is valid, and a device pins its namespace.
        unsafe { Net::from_raw(bindings::dev_net(self.as_raw())) }
    }

    /// Whether this is a MACsec netdev (`IFF_MACSEC`).
    pub fn is_macsec(&self) -> bool {
        // SAFETY: the device is valid.
        unsafe { bindings::netif_is_macsec(self.as_raw()) }
    }

    /// The lower devices of this device, nearest first (all of them, not
    /// only the adjacent ones), each with a reference.
    pub fn lower_devs(&self, rtnl: &Rtnl) -> Result<KVec<ARef<NetDevice>>> {
        self.walk(rtnl, bindings::netdev_walk_all_lower_dev)
    }

    /// The upper devices of this device (all of them, not only the adjacent
    /// ones), each with a reference.
    ///
    /// The "RCU" walker also accepts RTNL instead of the RCU read lock
    /// (`netdev_next_upper_dev_rcu`), so the callback may sleep.
    pub fn upper_devs(&self, rtnl: &Rtnl) -> Result<KVec<ARef<NetDevice>>> {
        self.walk(rtnl, bindings::netdev_walk_all_upper_dev_rcu)
    }

    fn walk(&self, _rtnl: &Rtnl, walker: WalkFn) -> Result<KVec<ARef<NetDevice>>> {
        let mut out = Walk {
            devs: KVec::new(),
            err: None,
        };
        let mut nested = bindings::netdev_nested_priv {
            flags: 0,
            data: (&raw mut out).cast(),
        };
        // SAFETY: the device is valid, RTNL is held as both walkers accept,
        // and `nested` and `out` outlive the call.
        unsafe { walker(self.as_raw(), Some(walk_cb), &mut nested) };
        match out.err {
            Some(e) => Err(e),
            None => Ok(out.devs),
        }
    }
}

/// `netdev_walk_all_lower_dev` and `netdev_walk_all_upper_dev_rcu`.
type WalkFn = unsafe extern "C" fn(
    *mut bindings::net_device,
    Option<
        unsafe extern "C" fn(*mut bindings::net_device, *mut bindings::netdev_nested_priv) -> i32,
    >,
    *mut bindings::netdev_nested_priv,
) -> i32;

impl PartialEq for NetDevice {
    fn eq(&self, other: &NetDevice) -> bool {
        core::ptr::eq(self.as_raw(), other.as_raw())
    }
}

impl Eq for NetDevice {}

/// State of an upper/lower walk.
struct Walk {
    devs: KVec<ARef<NetDevice>>,
    err: Option<Error>,
}

/// # Safety
///
/// Called by the upper/lower walkers, under RTNL, with a valid device and the
/// private data `lower_devs`/`upper_devs` passed.
unsafe extern "C" fn walk_cb(
    dev: *mut bindings::net_device,
    priv_: *mut bindings::netdev_nested_priv,
) -> i32 {
    // SAFETY: `priv_` is the `netdev_nested_priv` the walker was given; its
    // `data` is the `Walk` passed by `lower_devs`/`upper_devs`.
    let walk = unsafe { &mut *(*priv_).data.cast::<Walk>() };
    // SAFETY: the walker hands out valid devices for the duration of the
    // callback; `ARef::from` takes a reference of our own.
    let dev = ARef::from(unsafe { NetDevice::from_raw(dev) });
    match walk.devs.push(dev, GFP_KERNEL) {
        Ok(()) => 0,
        Err(_) => {
            walk.err = Some(ENOMEM);
            1
        }
    }
}
