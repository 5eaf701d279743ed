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
//! An [`EventHandler`] follows a device's GID table: the core calls
//! [`Events::gid_change`] after every change of a RoCE port's table, which
//! [`Device::gids`] reads (not for other ports: `cache.c` changes an iWARP
//! port's table without an event).
//!
//! This lives in the module, not in the kernel crate: distributions build
//! the RDMA core as a module (`INFINIBAND=m`), and a non-generic function
//! of the kernel crate, compiled into vmlinux, could not call into
//! `ib_core.ko`. Here the calls resolve when the module loads, and modpost
//! makes `ib_core` a dependency of this module.

use crate::bindings;
use crate::net::device::NetDevice;
use crate::platform;
use crate::vlan::vlan_real_dev;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::error::{from_err_ptr, from_result, to_result};
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::aref::ARef;
use kernel::sync::rcu;
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

    /// Whether RoCE over IPv6 on this device's GIDs may leave through
    /// another netdev than the GID's. RXE routes every packet itself
    /// (`rxe_find_route6()`), and a kernel without the series' RXE patch
    /// takes the GID's netdev as a mere preference unless the destination
    /// is link-local, loopback or multicast: a more specific route through
    /// another device (one router advertisement installs it) wins. IPv4
    /// routes leave through the GID's netdev alone. Hardware RoCE does not
    /// route per packet: its frames leave through the device's own port,
    /// and a route only picked the next hop's MAC address when an address
    /// handle was made.
    pub(crate) fn ipv6_may_stray(&self) -> bool {
        // SAFETY: the device is valid; its `ops` are set before it is
        // registered (`ib_set_device_ops()`) and never change after.
        let id = unsafe { (*self.raw()).ops.driver_id };
        !platform::RXE_ROUTES_IPV6_STRICTLY && id == bindings::rdma_driver_id_RDMA_DRIVER_RXE
    }

    /// An identity usable as a map key while the device is alive.
    pub(crate) fn id(&self) -> usize {
        self.raw() as usize
    }

    /// The device whose [`Device::id`] is `id`.
    ///
    /// # Safety
    ///
    /// `id` is the identity of a device that was added to a [`Client`] and
    /// whose `remove` has not returned, and stays so for `'a`.
    pub(crate) unsafe fn from_id<'a>(id: usize) -> &'a Device {
        // SAFETY: the device is valid for `'a` (the caller's guarantee).
        unsafe { Device::from_raw(id as *mut bindings::ib_device) }
    }

    /// Calls `f` with each valid entry of `port`'s GID table, in index
    /// order, and stops at the first error `f` returns. Each entry is
    /// read under the table's rwlock and held for the call; the last
    /// reference's release only queues the entry's freeing.
    pub(crate) fn gids(&self, port: u32, mut f: impl FnMut(&GidAttr) -> Result) -> Result {
        for index in 0..=c_int::MAX {
            // SAFETY: the device is valid; the call checks the port number
            // and the index, and returns a held entry or an error pointer.
            let ptr = unsafe { rdma_get_gid_attr(self.raw().cast(), port, index) };
            match from_err_ptr(ptr.cast::<bindings::ib_gid_attr>().cast_mut()) {
                // `index` is past the table (or the port has none).
                Err(e) if e == EINVAL => break,
                // An empty entry.
                Err(_) => continue,
                Ok(attr) => {
                    // INVARIANT: a valid entry, held until the guard drops.
                    let attr = GidAttr(attr);
                    f(&attr)?;
                }
            }
        }
        Ok(())
    }
}

// `rdma/ib_cache.h`, which the kernel's `bindings` do not include. The
// pointers are untyped: `improper_ctypes` cannot see that a pointer to
// `ib_device` (whose fields include empty structs) is FFI-safe.
extern "C" {
    fn rdma_get_gid_attr(device: *mut c_void, port_num: u32, index: c_int) -> *const c_void;
    fn rdma_put_gid_attr(attr: *const c_void);
    fn rdma_read_gid_attr_ndev_rcu(attr: *const c_void) -> *mut c_void;
}

/// One entry of a port's GID table (`struct ib_gid_attr`), held.
///
/// # Invariants
///
/// `self.0` is a valid entry on which this holds a reference
/// (`rdma_get_gid_attr`), given back when it drops.
pub(crate) struct GidAttr(*mut bindings::ib_gid_attr);

impl GidAttr {
    /// The entry's index in its port's table.
    pub(crate) fn index(&self) -> u32 {
        // SAFETY: the entry is valid (type invariant); `index` does not
        // change while it is held.
        unsafe { (*self.0).index }.into()
    }

    /// The GID, in network byte order.
    pub(crate) fn gid(&self) -> [u8; 16] {
        // SAFETY: as for `index`. `union ib_gid` is its 16 bytes in network
        // order (`raw`); read through a cast, as bindgen may render the
        // union as a struct of marker fields.
        unsafe { (&raw const (*self.0).gid).cast::<[u8; 16]>().read() }
    }

    /// Whether the entry is a RoCE v2 GID (`IB_GID_TYPE_ROCE_UDP_ENCAP`).
    pub(crate) fn is_roce_v2(&self) -> bool {
        // SAFETY: as for `index`.
        unsafe { (*self.0).gid_type == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP }
    }

    /// Whether RoCE on the entry is routed IPv6: a RoCE v2 GID whose
    /// address is neither IPv4-mapped (`rdma_gid_attr_network_type()`) nor
    /// link-local (`fe80::/10`, the default GID's). RoCE from a link-local
    /// GID to a routed destination is routed as loosely, and RDMA CM sends
    /// it when a program binds a link-local address; counting those GIDs
    /// is a limit of the claim on kernels without the RXE patch, which the
    /// documentation states.
    pub(crate) fn is_routed_ipv6(&self) -> bool {
        let g = self.gid();
        let v4_mapped = g[..10] == [0; 10] && g[10..12] == [0xff; 2];
        let link_local = g[0] == 0xfe && g[1] & 0xc0 == 0x80;
        self.is_roce_v2() && !v4_mapped && !link_local
    }

    /// The entry's netdev, valid while `_rcu` is held: it was read while
    /// the entry was valid, under the table's rwlock, and deleting the entry
    /// drops its reference on the netdev only after a grace period
    /// (`del_gid()` clears `attr.ndev` and frees through `call_rcu()`).
    /// `None` for an entry being deleted, or one without a netdev.
    fn ndev(&self, _rcu: &rcu::Guard) -> Option<*mut bindings::net_device> {
        // SAFETY: the entry is valid and the RCU read lock is held, as the
        // call requires. It returns the netdev, or an error pointer (never
        // NULL).
        let ndev = unsafe { rdma_read_gid_attr_ndev_rcu(self.0.cast()) };
        from_err_ptr(ndev.cast::<bindings::net_device>()).ok()
    }

    /// Whether the entry's netdev is `dev`: RoCE on this GID leaves
    /// through `dev`.
    pub(crate) fn is_on(&self, dev: &NetDevice) -> bool {
        let rcu = rcu::read_lock();
        self.ndev(&rcu)
            .is_some_and(|d| core::ptr::eq(d, dev.as_raw()))
    }

    /// Whether the entry's netdev sends only through `root`: it is `root`,
    /// or a VLAN whose real device (below every VLAN:
    /// `vlan_dev_real_dev()`) is `root` (a VLAN sends through its real
    /// device alone, which it keeps for life). Any other netdev (a bond, a
    /// team, a macvlan, a VLAN over a VLAN root) may send elsewhere. `None`
    /// for an entry being deleted, or one without a netdev, on which no
    /// RoCE leaves.
    pub(crate) fn leaves_through(&self, root: &NetDevice) -> Option<bool> {
        let rcu = rcu::read_lock();
        let dev = self.ndev(&rcu)?;
        if core::ptr::eq(dev, root.as_raw()) {
            return Some(true);
        }
        // SAFETY: `dev` is valid while `rcu` is held ([`GidAttr::ndev`]),
        // and a VLAN holds its real device until it is freed itself
        // (`vlan_dev_free()`).
        let real = unsafe { vlan_real_dev(dev) };
        Some(real.is_some_and(|r| core::ptr::eq(r, root.as_raw())))
    }
}

impl Drop for GidAttr {
    fn drop(&mut self) {
        // SAFETY: the reference is ours (type invariant), and dropped once.
        unsafe { rdma_put_gid_attr(self.0.cast()) };
    }
}

/// What a device's [`EventHandler`] is told.
pub(crate) trait Events: 'static {
    /// `port`'s GID table changed. Called from process context with the
    /// device's event handler lock held for reading, and depending on the
    /// path with the table's mutex, RTNL (the RDMA core's address
    /// tracking) or the core's device list lock held: take none of them,
    /// nor anything held while waiting for them.
    fn gid_change(dev: &Device, port: u32);
}

/// A handler of a device's asynchronous events (`ib_event_handler`).
///
/// # Invariants
///
/// `handler` is registered with the RDMA core while this exists, and its
/// device outlives it.
#[pin_data(PinnedDrop)]
pub(crate) struct EventHandler<T: Events> {
    #[pin]
    handler: Opaque<bindings::ib_event_handler>,
    _t: PhantomData<T>,
}

// SAFETY: the handler is only used by the RDMA core, under the device's
// event handler lock; dropping it from another thread unregisters it.
unsafe impl<T: Events> Send for EventHandler<T> {}
// SAFETY: `&EventHandler` exposes nothing.
unsafe impl<T: Events> Sync for EventHandler<T> {}

impl<T: Events> EventHandler<T> {
    /// Registers a handler of `dev`'s events, in place.
    ///
    /// # Safety
    ///
    /// `dev` outlives the handler: it is dropped before the `remove` of
    /// the [`Client`] that was given `dev` returns.
    pub(crate) unsafe fn new(dev: &Device) -> impl PinInit<Self> + '_ {
        // SAFETY: every field is initialised; registration cannot fail.
        unsafe {
            pin_init::pin_init_from_closure(move |slot: *mut Self| {
                let h = Opaque::cast_into(&raw const (*slot).handler);
                // SAFETY: all-zero is a valid, unlinked handler.
                let mut handler: bindings::ib_event_handler = core::mem::zeroed();
                handler.device = dev.raw();
                handler.handler = Some(Self::callback);
                h.write(handler);
                // INVARIANT: registered; the caller keeps `dev` alive.
                bindings::ib_register_event_handler(h);
                Ok(())
            })
        }
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a valid event of the handler's device.
    unsafe extern "C" fn callback(
        _h: *mut bindings::ib_event_handler,
        event: *mut bindings::ib_event,
    ) {
        // SAFETY: the event is valid for the call.
        let e = unsafe { &*event };
        if e.event == bindings::ib_event_type_IB_EVENT_GID_CHANGE {
            // SAFETY: a GID change names a port (`dispatch_gid_change_event`
            // sets `port_num`, the union's member for port events, which
            // starts it); read through a cast, as for `GidAttr::gid`.
            let port = unsafe { (&raw const e.element).cast::<u32>().read() };
            // SAFETY: the device outlives its registered handlers.
            T::gid_change(unsafe { Device::from_raw(e.device) }, port);
        }
    }
}

#[pinned_drop]
impl<T: Events> PinnedDrop for EventHandler<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new`, for a device that is still valid
        // (type invariants); this waits for a running callback.
        unsafe { bindings::ib_unregister_event_handler(self.handler.get()) };
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
