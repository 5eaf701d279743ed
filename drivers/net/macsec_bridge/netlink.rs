// SPDX-License-Identifier: GPL-2.0

//! The `macsec-bridge` generic netlink family and its requests: above the
//! core, which they reach through [`bridge::with`]. What goes on the wire
//! is `wire.rs`'s.
//!
//! Layer 5 (event sources). Owns: the family ([`FAMILY`]) and its requests.
//! May use: layers 1-4 (`model`, `trace`, `wire`, `bridge`), and the
//! handlers `events.rs` defines on the `Bridge` (`bind`, `unbind`); no
//! other event source's names.

use crate::bridge;
use crate::model::{BindError, Object, Reader};
use crate::net::device::NetDevice;
use crate::net::namespace::Net;
use crate::net::netlink::{
    AttrPolicy, DoHandler, Dump, DumpHandler, Family, Info, MulticastGroup, Operation, Permission,
};
use crate::net::rtnl::Rtnl;
use crate::trace::{Cause, Span, Work};
use crate::wire::{
    self, A_DEV_ALL_NETNS, A_DEV_IFINDEX, A_DEV_SECY_IFINDEX, A_DEV_SECY_NETNSID,
    A_DEV_SECY_NETNS_FD, CMD_BIND, CMD_DEV_GET, CMD_UNBIND,
};
use kernel::prelude::*;
use kernel::sync::aref::ARef;

/// An ifindex in a request (one past `i32::MAX` names no device).
const IFINDEX: AttrPolicy = AttrPolicy::u32_min(1);

/// `dev-get`'s request: one port, by ifindex.
static DEV_GET_POLICY: [AttrPolicy; 2] = [AttrPolicy::reject(), IFINDEX];
/// Its dump's: `all-netns` alone.
static DEV_DUMP_POLICY: [AttrPolicy; A_DEV_ALL_NETNS as usize + 1] = {
    const REJECT: AttrPolicy = AttrPolicy::reject();
    let mut p = [REJECT; A_DEV_ALL_NETNS as usize + 1];
    p[A_DEV_ALL_NETNS as usize] = AttrPolicy::flag();
    p
};
/// `unbind`'s request: the port.
static UNBIND_POLICY: [AttrPolicy; 2] = [AttrPolicy::reject(), IFINDEX];
/// `bind`'s request: the port, the SecY and its namespace; everything else
/// of the object is a reply's.
static BIND_POLICY: [AttrPolicy; 16] = [
    AttrPolicy::reject(),
    IFINDEX,
    // ifname ... relation
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    // secy-ifindex
    IFINDEX,
    // sci ... pad
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    AttrPolicy::reject(),
    // secy-netnsid: negative ids are "none", which names nothing.
    AttrPolicy::s32(),
    // secy-netns-fd
    AttrPolicy::u32(),
];

/// `dev-get`, one port.
struct DevGet;

impl DoHandler for DevGet {
    const POLICY: &'static [AttrPolicy] = &DEV_GET_POLICY;

    /// The port as last published, under the state's mutex alone: no
    /// RTNL, nothing re-read, nothing written or announced. What a reader
    /// gets is what the feature bit and the last notification say.
    fn doit(info: &mut Info<'_>) -> Result {
        let ifindex = info.require(A_DEV_IFINDEX)?.as_u32();
        let mut reply = info.reply(CMD_DEV_GET)?;
        let here = info.net().cookie();
        // `dev_get_by_index()`: under RCU, with a reference of its own.
        let dev = NetDevice::get_by_index(info.net(), ifindex as i32);
        let found = bridge::with(|b| -> Result<bool> {
            let Some(dev) = dev else {
                return Ok(false);
            };
            let st = b.state.lock();
            // Published in this namespace: one just moved here is not yet.
            let Some(o) = st.published(&dev, here) else {
                return Ok(false);
            };
            wire::fill(&mut reply, &o, Reader::Port)?;
            Ok(true)
        })
        .unwrap_or(Ok(false))?;
        if !found {
            info.set_err_msg(
                Some(A_DEV_IFINDEX),
                c"no RDMA port with this ifindex in this namespace",
            );
            return Err(ENODEV);
        }
        reply.reply(info)
    }
}

impl DumpHandler for DevGet {
    const POLICY: &'static [AttrPolicy] = &DEV_DUMP_POLICY;
    /// Where the last port sent was kept, (namespace cookie, serial), each
    /// low half first: four `u32`s, since a `u64` may be more aligned than
    /// the dump's context (a `long`'s, on 32-bit architectures).
    type State = [u32; 4];

    /// The ports published in the caller's namespace, in the order they
    /// were tracked, resuming after the last one sent; with `all-netns`,
    /// every namespace's in the host's view, namespace by namespace. Under
    /// the state's mutex alone, as `dev-get`; a round of the caller's
    /// namespace walks its ports only
    /// ([`published_in`](crate::state::State::published_in)), whatever the
    /// others hold. Any change of any object between two rounds moves the
    /// clock, and the next message carries `NLM_F_DUMP_INTR`.
    fn dumpit(dump: &mut Dump<'_, [u32; 4]>) -> Result {
        let all = dump.info().attr(A_DEV_ALL_NETNS).is_some();
        if all {
            host_view(dump.info())?;
        }
        let here = dump.info().net().cookie();
        bridge::with(|b| -> Result {
            let span = Span::start();
            let mut st = b.state.lock();
            st.begin();
            // Zero would turn the check off.
            dump.set_generation((st.clock as u32).max(1));
            let [ns_lo, ns_hi, lo, hi] = *dump.state();
            let after = (
                u64::from(ns_lo) | (u64::from(ns_hi) << 32),
                u64::from(lo) | (u64::from(hi) << 32),
            );
            let mut sent = 0;
            let mut visited = 0;
            let mut one = |(ns, serial): (u64, u64), o: Option<Object<'_>>, reader| {
                visited += 1;
                if let Some(o) = o.filter(|o| o.view.named_by(reader)) {
                    let mut msg = dump.message(CMD_DEV_GET)?;
                    wire::fill(&mut msg, &o, reader)?;
                    msg.commit();
                    sent += 1;
                }
                *dump.state() = [
                    ns as u32,
                    (ns >> 32) as u32,
                    serial as u32,
                    (serial >> 32) as u32,
                ];
                Ok(())
            };
            let ret = if all {
                st.published_all(after, |at, o| one(at, o, Reader::Host))
            } else {
                st.published_in(here, after.1, |serial, o| {
                    one((here, serial), o, Reader::Port)
                })
            };
            let work = Work {
                visited,
                ..st.work()
            };
            drop(st);
            span.end(Cause::Dump, sent, 0, work);
            ret
        })
        .unwrap_or(Ok(()))
    }
}

/// Whether a dump request may have the host's view, every namespace's
/// ports: from the initial namespace (whose ids it carries), by its
/// administrator (as `bind`, see [`host_authority`]). Ports in a pod's
/// namespace, their names and GIDs, are the host's to see, not another
/// pod's.
fn host_view(info: &Info<'_>) -> Result {
    if info.net().cookie() != Net::init_net().cookie() {
        info.set_err_msg(
            Some(A_DEV_ALL_NETNS),
            c"all-netns is the host's view: ask from the initial network namespace",
        );
        return Err(EINVAL);
    }
    if !info.net_admin_capable(Net::init_net()) {
        info.set_err_msg(
            Some(A_DEV_ALL_NETNS),
            c"CAP_NET_ADMIN in the initial user namespace is needed for every namespace's ports",
        );
        return Err(EPERM);
    }
    Ok(())
}

/// `bind`.
struct Bind;

impl DoHandler for Bind {
    const POLICY: &'static [AttrPolicy] = &BIND_POLICY;

    fn doit(info: &mut Info<'_>) -> Result {
        bind(info)
    }
}

/// `unbind`.
struct Unbind;

impl DoHandler for Unbind {
    const POLICY: &'static [AttrPolicy] = &UNBIND_POLICY;

    fn doit(info: &mut Info<'_>) -> Result {
        unbind(info)
    }
}

/// The family's operations, sorted by command. `bind` and `unbind` are
/// checked over the caller's namespace here, and `bind` over the SecY's
/// as well.
static OPS: [Operation; 4] = [
    Operation::doit::<DevGet>(CMD_DEV_GET, Permission::Anyone),
    Operation::dumpit::<DevGet>(CMD_DEV_GET, Permission::Anyone),
    Operation::doit::<Bind>(CMD_BIND, Permission::NetnsAdmin),
    Operation::doit::<Unbind>(CMD_UNBIND, Permission::NetnsAdmin),
];

/// `monitor`, the ports of the listener's namespace, for anyone there;
/// `monitor-all`, every port in the host's view, multicast in the initial
/// namespace alone, for its administrator (as an `all-netns` dump).
static GROUPS: [MulticastGroup; 2] = [
    MulticastGroup::const_new(c"monitor"),
    MulticastGroup::const_new(c"monitor-all").net_admin_only(),
];

/// The family.
pub(crate) static FAMILY: Family = Family::const_new_with_ops(
    kernel::module::this_module::<crate::LocalModule>(),
    b"macsec-bridge\0",
    1,
    &GROUPS,
    &OPS,
);

/// The device `kind` names in `net`, or an extack error.
fn device(info: &Info<'_>, net: &Net, kind: u16, what: &'static CStr) -> Result<ARef<NetDevice>> {
    let ifindex = info.require(kind)?.as_u32() as i32;
    NetDevice::get_by_index(net, ifindex).ok_or_else(|| {
        info.set_err_msg(Some(kind), what);
        ENODEV
    })
}

/// Reports a refused `bind` or `unbind`.
fn refused(info: &Info<'_>, e: BindError) -> Error {
    let (kind, msg, err) = match e {
        BindError::ToItself => (
            A_DEV_SECY_IFINDEX,
            c"cannot bind a MACsec netdev to itself",
            EINVAL,
        ),
        BindError::PortIsSecy => (
            A_DEV_IFINDEX,
            c"port is a MACsec netdev: it has its own SecY",
            EINVAL,
        ),
        BindError::NotSecy => (A_DEV_SECY_IFINDEX, c"target is not a MACsec netdev", EINVAL),
        BindError::AlreadyBound => (
            A_DEV_IFINDEX,
            c"port is already bound; unbind it first",
            EEXIST,
        ),
        BindError::NotBound => (A_DEV_IFINDEX, c"port is not bound", ENOENT),
        BindError::Loop => (
            A_DEV_SECY_IFINDEX,
            c"the SecY runs over the port: the port's own traffic does not cross it",
            EINVAL,
        ),
        BindError::Unloading => {
            info.set_err_msg(None, c"the module is unloading");
            return ENODEV;
        }
        BindError::NoMemory => return ENOMEM,
    };
    info.set_err_msg(Some(kind), msg);
    err
}

/// `bind`: port `ifindex` (caller's namespace) follows SecY `secy-ifindex`
/// in the namespace `secy-netns-fd` or `secy-netnsid` names (default: the
/// caller's).
fn bind(info: &Info<'_>) -> Result {
    host_authority(info)?;
    let fd = info.attr(A_DEV_SECY_NETNS_FD);
    let id = info.attr(A_DEV_SECY_NETNSID);
    // The caller's namespace is borrowed for the request; another one is
    // held by a reference of its own.
    let held;
    let net: &Net = match (fd, id) {
        (Some(_), Some(_)) => {
            info.set_err_msg(
                Some(A_DEV_SECY_NETNSID),
                c"give secy-netns-fd or secy-netnsid, not both",
            );
            return Err(EINVAL);
        }
        (Some(fd), None) => {
            // The policy cannot bound a u32 by `i32::MAX` (its bounds are
            // 16-bit): an fd is an int.
            let fd = i32::try_from(fd.as_u32()).map_err(|_| {
                info.set_err_msg(Some(A_DEV_SECY_NETNS_FD), c"integer out of range");
                ERANGE
            })?;
            held = Net::get_by_fd(fd).inspect_err(|_| {
                info.set_err_msg(
                    Some(A_DEV_SECY_NETNS_FD),
                    c"not an open network namespace file descriptor",
                )
            })?;
            &held
        }
        (None, Some(id)) => {
            held = info.net().get_by_id(id.as_s32()).ok_or_else(|| {
                info.set_err_msg(
                    Some(A_DEV_SECY_NETNSID),
                    c"no network namespace with this id",
                );
                EINVAL
            })?;
            &held
        }
        (None, None) => info.net(),
    };
    let mut rtnl = Rtnl::lock();
    let dev = device(info, info.net(), A_DEV_IFINDEX, c"no such port")?;
    let secy = device(
        info,
        net,
        A_DEV_SECY_IFINDEX,
        c"no such device in the SecY's namespace",
    )?;
    bridge::with(|b| b.bind(&mut rtnl, &dev, &secy))
        .ok_or(ENODEV)?
        .map_err(|e| refused(info, e))
}

/// Whether the request carries the host's authority: `CAP_NET_ADMIN` in the
/// initial user namespace, of the sender and of the socket's opener. The
/// genl core only checked it over the caller's own network namespace
/// (`GENL_UNS_ADMIN_PERM`), which a pod's root holds when the pod has a user
/// namespace of its own.
///
/// A binding is a claim the module cannot check: that the port's traffic
/// leaves through the SecY (on a DPU, through its uplink). Made by a pod's
/// root, over a VF it was given and a SecY it offloaded in its own
/// namespace, it would be a forged claim the scheduler trusts. So only the
/// host's administrator binds, and unbinds: a port moved into a pod is not
/// the pod's to unbind, nor to bind anew.
fn host_authority(info: &Info<'_>) -> Result {
    if info.net_admin_capable(Net::init_net()) {
        return Ok(());
    }
    info.set_err_msg(
        None,
        c"CAP_NET_ADMIN in the initial user namespace is needed: a binding is the host's claim",
    );
    Err(EPERM)
}

/// `unbind`: port `ifindex` (caller's namespace) is no longer bound. Whoever
/// may bind may unbind (see [`host_authority`]).
fn unbind(info: &Info<'_>) -> Result {
    host_authority(info)?;
    let mut rtnl = Rtnl::lock();
    let dev = device(info, info.net(), A_DEV_IFINDEX, c"no such port")?;
    bridge::with(|b| b.unbind(&mut rtnl, &dev).map_err(|e| refused(info, e))).ok_or(ENODEV)?
}
