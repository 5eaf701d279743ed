// SPDX-License-Identifier: GPL-2.0

//! What the core reaches outside itself, for its host build: the kernel
//! crate ([`kernel`], which this crate also is), the network abstractions
//! ([`net`]), and the module's own C-facing parts (bindings, the family's
//! `fill`, the RDMA client, the trace), with the log of what reached user
//! space.

pub mod kernel;
pub mod net;

use crate::lockstep::{Protection, Reason};
use crate::model::{Owner, Relation};
use crate::net::macsec::Cipher;
use std::cell::RefCell;

/// A port object as a `dev-change-ntf` carried it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Note {
    /// The port's netdev (its address: its identity across moves).
    pub dev: usize,
    pub ifindex: i32,
    pub name: String,
    pub netns: u64,
    pub protection: Protection,
    pub reason: Option<Reason>,
    pub relation: Option<Relation>,
    pub secy: i32,
    pub secy_netns: u64,
    pub id: Option<(u64, Cipher)>,
    pub encrypt: Option<bool>,
    /// `validate` and `rx-plaintext`.
    pub ingress: Option<(crate::net::macsec::Validate, bool)>,
    pub owner: Owner,
    pub rdma: Vec<String>,
    /// The indexes of the listed GIDs.
    pub gids: Vec<u32>,
    pub generation: u64,
    pub port_id: u64,
    /// The host's view (`monitor-all`): `netnsid`, where the port is not
    /// in the initial namespace; `secy_id`, the id of the SecY's namespace
    /// relative to the reader, where it is not the reader's.
    pub host: bool,
    pub netnsid: Option<i32>,
    pub secy_id: Option<i32>,
}

impl Note {
    /// The object without its generation: two notifications of a port in
    /// a row never carry the same.
    pub(crate) fn object(&self) -> Note {
        Note {
            generation: 0,
            ..self.clone()
        }
    }
}

/// What reached user space, or the driver, in order.
#[derive(Clone, Debug)]
pub(crate) enum Rec {
    /// A `dev-change-ntf` to `monitor`.
    Note(Note),
    /// One to `monitor-all`: the host's view.
    HostNote(Note),
    /// `NETIF_F_HW_MACSEC` written on a netdev.
    Feature { dev: usize, on: bool },
    /// The listeners in namespace `netns` were told they missed a
    /// notification (`genl_set_err()`, ENOBUFS): they dump again.
    SetErr { netns: u64, host: bool },
    /// The driver ran an `mdo_*` for the SecY of netdev `secy`.
    Mdo {
        secy: usize,
        op: crate::net::macsec::Mdo,
        ok: bool,
    },
}

thread_local! {
    static LOG: RefCell<Vec<Rec>> = const { RefCell::new(Vec::new()) };
    static WARNINGS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn record(r: Rec) {
    LOG.with(|l| l.borrow_mut().push(r));
}

/// Takes the log.
pub(crate) fn take_log() -> Vec<Rec> {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

pub fn log_warning(s: String) {
    WARNINGS.with(|w| w.borrow_mut().push(s));
}

/// Takes the warnings the bridge printed.
pub fn take_warnings() -> Vec<String> {
    WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// The C functions and types the core names.
#[allow(non_camel_case_types, non_upper_case_globals)]
pub mod bindings {
    pub use crate::net::device::NetDevice as net_device;

    /// # Safety
    ///
    /// None.
    pub unsafe fn ktime_get() -> i64 {
        // The monotonic clock: one second per read, so that a reload starts
        // its generations later, as the kernel's does.
        thread_local! {
            static NOW: core::cell::Cell<i64> = const { core::cell::Cell::new(0) };
        }
        NOW.with(|n| {
            n.set(n.get() + 1_000_000_000);
            n.get()
        })
    }

    pub const netdev_cmd_NETDEV_UP: u32 = 1;
    pub const netdev_cmd_NETDEV_DOWN: u32 = 2;
    pub const netdev_cmd_NETDEV_CHANGE: u32 = 4;
    pub const netdev_cmd_NETDEV_REGISTER: u32 = 5;
    pub const netdev_cmd_NETDEV_UNREGISTER: u32 = 6;
    pub const netdev_cmd_NETDEV_GOING_DOWN: u32 = 10;
    pub const netdev_cmd_NETDEV_CHANGENAME: u32 = 11;
    pub const netdev_cmd_NETDEV_FEAT_CHANGE: u32 = 12;
    pub const netdev_cmd_NETDEV_CHANGEUPPER: u32 = 21;
}

/// The family's messages (`wire.rs`), as far as the core uses them:
/// `fill` records the object.
pub mod wire {
    use super::*;
    use crate::kernel::error::code::ENOENT;
    use crate::kernel::error::Result;
    use crate::model::{Object, Reader};
    use crate::net::namespace::Net;
    use crate::net::netlink::GenlMsg;

    pub const CMD_DEV_CHANGE_NTF: u8 = 2;
    pub const CMD_BIND: u8 = 3;
    pub const CMD_UNBIND: u8 = 4;
    pub const MCGRP_MONITOR: u32 = 0;
    pub const MCGRP_MONITOR_ALL: u32 = 1;

    pub fn protection(p: Protection) -> u32 {
        p.rank().into()
    }

    pub fn reason(r: Option<Reason>) -> u32 {
        r.map_or(0, |r| r as u32 + 1)
    }

    /// Object `o`, as the real `fill` writes it. It names its port by
    /// ifindex, as on the wire: the world resolves that to the device.
    pub(crate) fn fill(msg: &mut GenlMsg, o: &Object<'_>, reader: Reader) -> Result {
        crate::kernel::alloc::charge()?;
        let v = o.view;
        if !v.named_by(reader) {
            return Err(ENOENT);
        }
        let host = reader == Reader::Host;
        let (here, secy_id) = if host {
            (Net::init_net().cookie(), v.host_secy_netnsid)
        } else {
            (v.netns, v.secy_netnsid)
        };
        let len = v.name.iter().position(|&b| b == 0).unwrap_or(v.name.len());
        let note = Note {
            dev: 0,
            ifindex: v.ifindex,
            name: String::from_utf8_lossy(&v.name[..len]).into_owned(),
            netns: v.netns,
            protection: v.verdict.protection,
            reason: v.verdict.reason,
            relation: v.relation,
            secy: v.secy.unwrap_or(0),
            secy_netns: v.secy_netns,
            id: v.id,
            encrypt: v.encrypt,
            ingress: v.ingress.map(|i| (i.validate, i.plaintext)),
            owner: v.owner,
            rdma: o
                .rdma
                .iter()
                .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                .collect(),
            gids: o.gids.iter().map(|g| g.index).collect(),
            generation: o.generation,
            port_id: o.serial,
            host,
            netnsid: (v.netns != here).then_some(v.host_netnsid),
            secy_id: (v.secy.is_some() && v.secy_netns != here).then_some(secy_id),
        };
        msg.note = Some(note);
        Ok(())
    }
}

/// `kernel::rdma`: a device with one port, on one netdev.
pub mod rdma {
    use crate::host::kernel::str::CStr;
    use crate::kernel::error::Result;
    use crate::net::device::NetDevice;
    use crate::sync::aref::ARef;
    use crate::sync::rcu;
    use std::cell::Cell;
    use std::marker::PhantomData;

    pub struct Device {
        pub name: Cell<&'static CStr>,
        pub netdev: &'static NetDevice,
        /// The GID table beyond the port's own GIDs: each entry's netdev
        /// (a bond's over the port, say). Empty unless a test fills it.
        pub table: std::cell::RefCell<Vec<&'static NetDevice>>,
        /// The netdev `ib_device_set_netdev()` gave the port since, telling
        /// no client (mlx5's LAG), if any.
        pub moved: Cell<Option<&'static NetDevice>>,
        /// An RXE device (whose routed IPv6 RoCE may leave around its
        /// GID's netdev on a kernel without the series' RXE patch).
        pub rxe: Cell<bool>,
    }

    /// The device list lock: the test world holds it where the core would.
    pub struct DevicesLocked;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DriverId(u32);

    impl DriverId {
        pub const RXE: DriverId = DriverId(1);
        const OTHER: DriverId = DriverId(0);
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct GidType(u32);

    impl GidType {
        pub const ROCE_UDP_ENCAP: GidType = GidType(2);
    }

    // SAFETY: single-threaded host world.
    unsafe impl Sync for Device {}

    impl Device {
        pub fn as_raw(&self) -> *mut Device {
            self as *const Device as *mut Device
        }

        /// # Safety
        ///
        /// `ptr` is a world device's.
        pub unsafe fn from_raw<'a>(ptr: *mut Device) -> &'a Device {
            // SAFETY: the caller's guarantee; world devices are leaked.
            unsafe { &*ptr }
        }

        pub fn driver_id(&self) -> DriverId {
            if self.rxe.get() {
                DriverId::RXE
            } else {
                DriverId::OTHER
            }
        }

        pub fn name(&self, _listed: &DevicesLocked) -> &CStr {
            self.name.get()
        }

        pub fn ports(&self) -> impl Iterator<Item = u32> {
            1..=1
        }

        pub fn netdev(&self, _port: u32) -> Option<ARef<NetDevice>> {
            Some(self.moved.get().unwrap_or(self.netdev).into())
        }

        /// The port's default GID, on its netdev, at index 0 (link-local,
        /// as the RDMA core makes it), then the test's [`Device::table`]
        /// (routed IPv6), each a RoCE v2 GID whose last byte is its index.
        pub fn gids(&self, _port: u32, mut f: impl FnMut(&GidAttr) -> Result) -> Result {
            let table = self.table.borrow().clone();
            for (index, ndev) in core::iter::once(self.netdev).chain(table).enumerate() {
                f(&GidAttr {
                    index: index as u32,
                    ndev,
                })?;
            }
            Ok(())
        }
    }

    pub struct GidAttr {
        index: u32,
        ndev: &'static NetDevice,
    }

    impl GidAttr {
        pub fn gid_type(&self) -> GidType {
            GidType::ROCE_UDP_ENCAP
        }

        pub fn netdev<'a>(&'a self, _rcu: &'a rcu::Guard) -> Option<&'a NetDevice> {
            Some(self.ndev)
        }

        pub fn index(&self) -> u32 {
            self.index
        }

        pub fn gid(&self) -> [u8; 16] {
            let mut g = [0; 16];
            if self.index == 0 {
                g[..2].copy_from_slice(&[0xfe, 0x80]);
            } else {
                g[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            }
            g[15] = self.index as u8;
            g
        }
    }

    pub trait Events {
        fn gid_change(dev: &Device, port: u32);
    }

    pub struct EventHandler<T>(PhantomData<T>);

    impl<T> EventHandler<T> {
        /// # Safety
        ///
        /// None on the host.
        pub unsafe fn new(_ib: &Device) -> Result<Self> {
            Ok(EventHandler(PhantomData))
        }
    }
}

/// The C side of `trace.rs` (`trace.c`): the host has no tracepoints, and
/// `macsec_bridge_update` is never enabled.
mod trace_c {
    use core::ffi::c_int;

    #[no_mangle]
    extern "C" fn macsec_bridge_trace_announce(
        _ifindex: c_int,
        _generation: u64,
        _protection: u32,
        _reason: u32,
    ) {
    }

    #[no_mangle]
    extern "C" fn macsec_bridge_trace_feature(_ifindex: c_int, _on: bool, _written: bool) {}

    #[no_mangle]
    extern "C" fn macsec_bridge_trace_update_enabled() -> bool {
        false
    }

    #[no_mangle]
    extern "C" fn macsec_bridge_trace_update(
        _cause: u32,
        _code: u32,
        _ifindex: c_int,
        _ns: u64,
        _state_ns: u64,
        _apply_ns: u64,
        _visited: u32,
        _probes: u64,
        _ports: u32,
        _secys: u32,
    ) {
    }
}
