// SPDX-License-Identifier: GPL-2.0

//! Netdevice notifiers.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`Registration`] puts a [`NetdevNotifier`] on the global netdevice
//! notifier chain, which sees the devices of every network namespace. It
//! registers in place (the `notifier_block` is pinned inside it) and
//! unregisters when dropped. Registering replays `Register` and `Up` for
//! every existing device; unregistering replays `Down` and `Unregister`.
//!
//! # Examples
//!
//! A notifier sees a device come and go:
//!
//! ```
//! use core::sync::atomic::{AtomicU32, Ordering};
//! use kernel::net::{device::NetDevice, notifier::*, rtnl::Rtnl};
//! use kernel::{bindings, c_str, prelude::*};
//!
//! struct Watch {
//!     dev: *mut bindings::net_device,
//!     registered: AtomicU32,
//!     unregistered: AtomicU32,
//! }
//! // SAFETY: `dev` is only compared, never dereferenced.
//! unsafe impl Send for Watch {}
//! // SAFETY: as above.
//! unsafe impl Sync for Watch {}
//!
//! impl NetdevNotifier for Watch {
//!     fn event(&self, _rtnl: &Rtnl, event: NetdevEvent<'_>) {
//!         let (counter, dev) = match event {
//!             NetdevEvent::Register(dev) => (&self.registered, dev),
//!             NetdevEvent::Unregister(dev) => (&self.unregistered, dev),
//!             _ => return,
//!         };
//!         if dev.as_raw() == self.dev {
//!             counter.fetch_add(1, Ordering::Relaxed);
//!         }
//!     }
//! }
//!
//! // A bare Ethernet device, like `dummy` without a driver: it is never
//! // opened, so it needs no operations.
//! // SAFETY: all-zero is a valid, empty `net_device_ops`.
//! static OPS: bindings::net_device_ops = unsafe { core::mem::zeroed() };
//! // SAFETY: `ether_setup` is a valid setup function; the name is a C string.
//! let dev = unsafe {
//!     bindings::alloc_netdev_mqs(
//!         0,
//!         c_str!("rstest%d").as_char_ptr(),
//!         bindings::NET_NAME_ENUM as u8,
//!         Some(bindings::ether_setup),
//!         1,
//!         1,
//!     )
//! };
//! assert!(!dev.is_null());
//! // SAFETY: `dev` is a fresh, unregistered device.
//! unsafe { (*dev).netdev_ops = &OPS };
//!
//! let watch = KBox::pin_init(
//!     Registration::new(Watch {
//!         dev,
//!         registered: AtomicU32::new(0),
//!         unregistered: AtomicU32::new(0),
//!     }),
//!     GFP_KERNEL,
//! )?;
//! // SAFETY: `dev` was allocated above and is not registered yet.
//! assert_eq!(unsafe { bindings::register_netdev(dev) }, 0);
//! assert_eq!(watch.data().registered.load(Ordering::Relaxed), 1);
//! // SAFETY: `dev` is registered; after unregistering, nothing else uses it.
//! unsafe {
//!     bindings::unregister_netdev(dev);
//!     bindings::free_netdev(dev);
//! }
//! assert_eq!(watch.data().unregistered.load(Ordering::Relaxed), 1);
//! drop(watch);
//! # Ok::<(), Error>(())
//! ```

use crate::{
    bindings,
    error::to_result,
    init,
    net::{device::NetDevice, rtnl::Rtnl},
    prelude::*,
    types::Opaque,
};
use ffi::{c_int, c_ulong, c_void};

/// A netdevice event, with the device it concerns.
///
/// Only the events a tracker of device state needs are spelled out; the
/// rest arrive as [`NetdevEvent::Other`] with their `NETDEV_*` number.
pub enum NetdevEvent<'a> {
    /// `NETDEV_REGISTER`: the device was registered, or moved into a
    /// namespace.
    Register(&'a NetDevice),
    /// `NETDEV_UNREGISTER`: the device is being unregistered, or moved out
    /// of its namespace (then [`NetDevice::is_registered`] is still true).
    Unregister(&'a NetDevice),
    /// `NETDEV_UP`: the device was opened.
    Up(&'a NetDevice),
    /// `NETDEV_GOING_DOWN`: the device is about to close.
    GoingDown(&'a NetDevice),
    /// `NETDEV_DOWN`: the device was closed.
    Down(&'a NetDevice),
    /// `NETDEV_CHANGE`: carrier or other state changed.
    Change(&'a NetDevice),
    /// `NETDEV_FEAT_CHANGE`: `dev->features` changed.
    FeatChange(&'a NetDevice),
    /// `NETDEV_CHANGENAME`: the device was renamed.
    ChangeName(&'a NetDevice),
    /// `NETDEV_CHANGEUPPER`: `upper` was linked on top of `dev`, or unlinked.
    ChangeUpper {
        /// The lower device.
        dev: &'a NetDevice,
        /// The upper device.
        upper: &'a NetDevice,
        /// Link (`true`) or unlink (`false`).
        linking: bool,
    },
    /// Any other `NETDEV_*` event.
    Other(u32, &'a NetDevice),
}

/// A receiver of netdevice events.
pub trait NetdevNotifier: Send + Sync {
    /// Handles one event. Called with RTNL held, from process context.
    fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>);
}

/// A [`NetdevNotifier`] registered on the global netdevice notifier chain.
///
/// # Invariants
///
/// `nb` is registered with `register_netdevice_notifier` for as long as the
/// registration exists, and its callback is [`Registration::callback`].
#[pin_data(PinnedDrop)]
pub struct Registration<T: NetdevNotifier> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    data: T,
}

// SAFETY: the `notifier_block` is only touched by the notifier core, under
// its own locking; `T` is `Send`.
unsafe impl<T: NetdevNotifier> Send for Registration<T> {}
// SAFETY: `&Registration` only exposes `&T`, and `T` is `Sync`.
unsafe impl<T: NetdevNotifier> Sync for Registration<T> {}

impl<T: NetdevNotifier> Registration<T> {
    /// Registers `data` as a netdevice notifier, in place.
    ///
    /// Takes RTNL; must not be called with it held.
    pub fn new(data: T) -> impl PinInit<Self, Error> {
        // SAFETY: the closure initialises every field of `Self` before
        // returning `Ok`, and on error leaves nothing initialised (it drops
        // `data` itself and the `notifier_block` needs no cleanup).
        unsafe {
            init::pin_init_from_closure(move |slot: *mut Self| {
                // SAFETY: `slot` is valid for writes and pinned.
                core::ptr::addr_of_mut!((*slot).data).write(data);
                let nb = Opaque::raw_get(core::ptr::addr_of!((*slot).nb));
                nb.write(bindings::notifier_block {
                    notifier_call: Some(Self::callback),
                    next: core::ptr::null_mut(),
                    priority: 0,
                });
                // SAFETY: `nb` is initialised and pinned for as long as the
                // registration lives (it unregisters on drop).
                let ret = to_result(bindings::register_netdevice_notifier(nb));
                if ret.is_err() {
                    // SAFETY: `data` was written above and is not used again.
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).data));
                }
                // INVARIANT: on success `nb` is registered, with `callback`.
                ret
            })
        }
    }

    /// The notifier's data.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// # Safety
    ///
    /// Called by the notifier chain with `nb` the `notifier_block` of a live
    /// `Registration<T>` and `ptr` a `struct netdev_notifier_info`, under
    /// RTNL.
    unsafe extern "C" fn callback(
        nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        // SAFETY: `nb` is the `nb` field of a `Registration<T>` (type
        // invariant), which is alive while registered.
        let this = unsafe { &*crate::container_of!(nb, Self, nb) };
        let info = ptr.cast::<bindings::netdev_notifier_info>();
        // SAFETY: netdevice notifiers always pass a valid info whose device
        // is alive for the call.
        let dev = unsafe { NetDevice::from_raw((*info).dev) };
        // SAFETY: the netdevice notifier chain is always called under RTNL.
        let rtnl = unsafe { Rtnl::assume_held() };
        let event = event as u32;
        let ev = match event {
            bindings::netdev_cmd_NETDEV_REGISTER => NetdevEvent::Register(dev),
            bindings::netdev_cmd_NETDEV_UNREGISTER => NetdevEvent::Unregister(dev),
            bindings::netdev_cmd_NETDEV_UP => NetdevEvent::Up(dev),
            bindings::netdev_cmd_NETDEV_GOING_DOWN => NetdevEvent::GoingDown(dev),
            bindings::netdev_cmd_NETDEV_DOWN => NetdevEvent::Down(dev),
            bindings::netdev_cmd_NETDEV_CHANGE => NetdevEvent::Change(dev),
            bindings::netdev_cmd_NETDEV_FEAT_CHANGE => NetdevEvent::FeatChange(dev),
            bindings::netdev_cmd_NETDEV_CHANGENAME => NetdevEvent::ChangeName(dev),
            bindings::netdev_cmd_NETDEV_CHANGEUPPER => {
                let cu = info.cast::<bindings::netdev_notifier_changeupper_info>();
                // SAFETY: for CHANGEUPPER the info is the first member of a
                // `netdev_notifier_changeupper_info`, whose upper device is
                // alive for the call.
                let upper = unsafe { NetDevice::from_raw((*cu).upper_dev) };
                // SAFETY: as above, `cu` is a valid changeupper info.
                let linking = unsafe { (*cu).linking };
                NetdevEvent::ChangeUpper {
                    dev,
                    upper,
                    linking,
                }
            }
            other => NetdevEvent::Other(other, dev),
        };
        this.data.event(rtnl, ev);
        bindings::NOTIFY_DONE as c_int
    }
}

#[pinned_drop]
impl<T: NetdevNotifier> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `nb` was registered in `new` (type invariant) and has not
        // moved since.
        unsafe { bindings::unregister_netdevice_notifier(self.nb.get()) };
    }
}
