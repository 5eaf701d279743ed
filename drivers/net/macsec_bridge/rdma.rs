// SPDX-License-Identifier: GPL-2.0

//! RDMA devices and clients, as much of them as the module needs.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A [`ClientRegistration`] registers an `ib_client`: the RDMA core calls
//! [`Client::add`] for every existing and future RDMA device and
//! [`Client::remove`] when one goes away (or the client is unregistered).
//! The core does not pass the client to `add`, so a client is a type with
//! associated functions; state lives where the type puts it.
//!
//! This lives in the module, not in the kernel crate: distributions build
//! the RDMA core as a module (`INFINIBAND=m`), and a non-generic function
//! of the kernel crate, compiled into vmlinux, could not call into
//! `ib_core.ko`. Here the calls resolve when the module loads, and modpost
//! makes `ib_core` a dependency of this module.

use crate::bindings;
use crate::net::device::NetDevice;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::error::{from_result, to_result};
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::aref::ARef;
use kernel::types::Opaque;

/// An RDMA device (`struct ib_device`).
///
/// # Invariants
///
/// The device is valid for the lifetime of the reference: references are only
/// handed out inside [`Client`] callbacks, during which the core holds it.
#[repr(transparent)]
pub(crate) struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// # Safety
    ///
    /// `ptr` must be a valid `ib_device` for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Device {
        // SAFETY: transparent wrapper; validity is the caller's guarantee.
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The device's name (e.g. `rxe0`).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array in the valid device, which
        // outlives the reference.
        unsafe { CStr::from_char_ptr((*self.raw()).name.as_ptr()) }
    }

    /// The device's port numbers.
    pub(crate) fn ports(&self) -> core::ops::RangeInclusive<u32> {
        // SAFETY: the device is valid.
        unsafe { bindings::rdma_start_port(self.raw())..=bindings::rdma_end_port(self.raw()) }
    }

    /// The netdev backing `port`, if any (RoCE, iWARP), with a reference.
    pub(crate) fn netdev(&self, port: u32) -> Option<ARef<NetDevice>> {
        // SAFETY: the device is valid; the call returns a held netdev or
        // NULL, and checks the port number itself.
        let ptr = unsafe { bindings::ib_device_get_netdev(self.raw(), port) };
        // SAFETY: a non-null result carries a reference we now own.
        NonNull::new(ptr).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// An identity usable as a map key while the device is alive.
    pub(crate) fn id(&self) -> usize {
        self.raw() as usize
    }
}

/// An RDMA client.
pub(crate) trait Client: Send + Sync + 'static {
    /// The client's name.
    const NAME: &'static CStr;

    /// A device appeared (or existed when the client registered). Called
    /// from process context, without RTNL.
    fn add(dev: &Device) -> Result;

    /// A device added with success goes away. Called from process context,
    /// without RTNL.
    fn remove(dev: &Device);

    /// A device added with success was renamed (`rdma dev set X name Y`).
    /// Called from process context, without RTNL, with the core's device
    /// list held for reading, as for `add`.
    fn rename(dev: &Device);
}

/// A registered [`Client`].
///
/// # Invariants
///
/// `client` is registered with `ib_register_client` while this exists.
#[pin_data(PinnedDrop)]
pub(crate) struct ClientRegistration<T: Client> {
    #[pin]
    client: Opaque<bindings::ib_client>,
    _t: PhantomData<T>,
}

// SAFETY: the C client is only used by the RDMA core with its own locking.
unsafe impl<T: Client> Send for ClientRegistration<T> {}
// SAFETY: `&ClientRegistration` exposes nothing.
unsafe impl<T: Client> Sync for ClientRegistration<T> {}

impl<T: Client> ClientRegistration<T> {
    /// Registers the client, in place. `add` runs for existing devices
    /// before this returns.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        // SAFETY: on success every field is initialised; on error nothing
        // needs cleanup (the client was not registered).
        unsafe {
            pin_init::pin_init_from_closure(move |slot: *mut Self| {
                let c = Opaque::cast_into(&raw const (*slot).client);
                // SAFETY: all-zero is a valid, empty `ib_client`.
                let mut client: bindings::ib_client = core::mem::zeroed();
                client.name = T::NAME.as_char_ptr();
                client.add = Some(Self::add_callback);
                client.remove = Some(Self::remove_callback);
                client.rename = Some(Self::rename_callback);
                client.set_no_kverbs_req(1);
                c.write(client);
                // INVARIANT: registered on success.
                to_result(bindings::ib_register_client(c))
            })
        }
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a valid device.
    unsafe extern "C" fn add_callback(dev: *mut bindings::ib_device) -> c_int {
        from_result(|| {
            // SAFETY: the core holds the device for the call.
            T::add(unsafe { Device::from_raw(dev) })?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a valid device that was added.
    unsafe extern "C" fn remove_callback(dev: *mut bindings::ib_device, _data: *mut c_void) {
        // SAFETY: the core holds the device for the call.
        T::remove(unsafe { Device::from_raw(dev) });
    }
}

impl<T: Client> ClientRegistration<T> {
    /// # Safety
    ///
    /// Called by the RDMA core with a valid device that was added.
    unsafe extern "C" fn rename_callback(dev: *mut bindings::ib_device, _data: *mut c_void) {
        // SAFETY: the core holds the device for the call.
        T::rename(unsafe { Device::from_raw(dev) });
    }
}

#[pinned_drop]
impl<T: Client> PinnedDrop for ClientRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new` (type invariant); `remove` runs for
        // every added device before this returns.
        unsafe { bindings::ib_unregister_client(self.client.get()) };
    }
}
