// SPDX-License-Identifier: GPL-2.0

//! The `macsec_bridge` generic netlink family.
//!
//! Based on: `Documentation/netlink/specs/macsec_bridge.yaml` (the values
//! below are those of `include/uapi/linux/macsec_bridge.h`, generated from
//! it; a selftest checks the two against each other through `ynl`).

use crate::bridge::{self, BindError, Owner, PortEntry, Relation, Secys};
use crate::lockstep::{Protection, Reason};
use crate::net::device::NetDevice;
use crate::net::macsec::Cipher;
use crate::net::namespace::Net;
use crate::net::netlink::{
    AttrPolicy, DoHandler, Dump, DumpHandler, Family, Info, MsgAttrs, MulticastGroup, Operation,
    Permission,
};
use crate::net::rtnl::Rtnl;
use crate::trace::{Cause, Span, Work};
use kernel::prelude::*;
use kernel::sync::aref::ARef;

const CMD_DEV_GET: u8 = 1;
/// `dev-change-ntf`.
pub(crate) const CMD_DEV_CHANGE_NTF: u8 = 2;
pub(crate) const CMD_BIND: u8 = 3;
pub(crate) const CMD_UNBIND: u8 = 4;
/// The `monitor` group (index into the family's groups).
pub(crate) const MCGRP_MONITOR: u32 = 0;

const A_DEV_IFINDEX: u16 = 1;
const A_DEV_IFNAME: u16 = 2;
const A_DEV_RDMA_DEV: u16 = 3;
const A_DEV_PROTECTION: u16 = 4;
const A_DEV_REASON: u16 = 5;
const A_DEV_RELATION: u16 = 6;
const A_DEV_SECY_IFINDEX: u16 = 7;
const A_DEV_SCI: u16 = 8;
const A_DEV_CIPHER: u16 = 9;
const A_DEV_ENCRYPT: u16 = 10;
const A_DEV_FEATURE_OWNER: u16 = 11;
const A_DEV_GENERATION: u16 = 12;
const A_DEV_PAD: u16 = 13;
const A_DEV_SECY_NETNSID: u16 = 14;
const A_DEV_SECY_NETNS_FD: u16 = 15;
const A_DEV_PROTECTED_GID: u16 = 16;

const A_GID_RDMA_DEV: u16 = 1;
const A_GID_INDEX: u16 = 2;
const A_GID_GID: u16 = 3;

/// An ifindex in a request (one past `i32::MAX` names no device).
const IFINDEX: AttrPolicy = AttrPolicy::u32_min(1);

pub(crate) fn protection(p: Protection) -> u32 {
    match p {
        Protection::None => 0,
        Protection::Software => 1,
        Protection::OffloadMac => 2,
        Protection::OffloadPhy => 3,
    }
}

pub(crate) fn reason(r: Option<Reason>) -> u32 {
    match r {
        None => 0,
        Some(Reason::Unknown) => 1,
        Some(Reason::BindingStale) => 2,
        Some(Reason::NoSecy) => 3,
        Some(Reason::SecyDown) => 4,
        Some(Reason::LowerDown) => 5,
        Some(Reason::NoActiveTxSa) => 6,
        Some(Reason::ProtectOff) => 7,
        Some(Reason::EncryptOff) => 8,
        Some(Reason::OffloadOff) => 9,
        Some(Reason::Partial) => 10,
        Some(Reason::Unsettled) => 11,
    }
}

fn relation(r: Relation) -> u32 {
    match r {
        Relation::SelfDev => 0,
        Relation::Upper => 1,
        Relation::Bound => 2,
    }
}

fn cipher(c: Cipher) -> u32 {
    match c {
        Cipher::GcmAes128 => 0,
        Cipher::GcmAes256 => 1,
        Cipher::GcmAesXpn128 => 2,
        Cipher::GcmAesXpn256 => 3,
    }
}

fn owner(o: Owner) -> u32 {
    match o {
        Owner::Bridge => 0,
        Owner::Driver => 1,
    }
}

/// Writes one port object as published ([`PortEntry::published`]), as seen
/// from the port's namespace; `secys` is where its SecY's details are.
/// Called under the state's mutex, with or without RTNL: it reads no
/// netdev, whose names, ifindexes and namespaces change under RTNL alone.
pub(crate) fn fill(msg: &MsgAttrs, e: &PortEntry, secys: &Secys) -> Result {
    let Some(p) = e.published() else {
        return Err(EINVAL);
    };
    msg.put_u32(A_DEV_IFINDEX.into(), p.ifindex as u32)?;
    // IFNAMSIZ counts the NUL: a name is NUL-terminated within its 16 bytes.
    let len = p.name.iter().position(|&b| b == 0).ok_or(EINVAL)?;
    let name = CStr::from_bytes_with_nul(&p.name[..=len]).map_err(|_| EINVAL)?;
    msg.put_string(A_DEV_IFNAME.into(), name)?;
    for r in e.rdma.iter() {
        put_name(msg, A_DEV_RDMA_DEV, &r.name)?;
    }
    let v = e.port.advertised();
    msg.put_u32(A_DEV_PROTECTION.into(), protection(v.protection))?;
    msg.put_u32(A_DEV_REASON.into(), reason(v.reason))?;
    if let Some(r) = e.relation {
        msg.put_u32(A_DEV_RELATION.into(), relation(r))?;
    }
    // An ifindex in a namespace the reader has no id for would name a
    // device of its own: none then (no memory for the id, or the SecY's
    // namespace dying).
    let named = p.secy_netns == p.netns || p.secy_netnsid >= 0;
    if let Some(d) = e.secy.as_ref().filter(|_| named) {
        msg.put_u32(A_DEV_SECY_IFINDEX.into(), p.secy as u32)?;
        // Relative to the reader, as IFLA_LINK_NETNSID.
        if p.secy_netns != p.netns {
            msg.put_s32(A_DEV_SECY_NETNSID.into(), p.secy_netnsid)?;
        }
        if let Some(s) = secys.get(&bridge::key(d)) {
            if let Some((sci, c)) = s.id {
                // Already in network byte order, as the spec says.
                msg.put_u64(A_DEV_SCI.into(), sci, A_DEV_PAD.into())?;
                msg.put_u32(A_DEV_CIPHER.into(), cipher(c))?;
            }
            if let Some(enc) = bridge::advertised_encrypt(e, s) {
                msg.put_u8(A_DEV_ENCRYPT.into(), enc.into())?;
            }
        }
    }
    for g in e.gids.iter() {
        msg.nest(A_DEV_PROTECTED_GID.into(), |m| {
            if let Some(r) = e.rdma.iter().find(|r| r.id == g.rdma) {
                put_name(m, A_GID_RDMA_DEV, &r.name)?;
            }
            m.put_u32(A_GID_INDEX.into(), g.index)?;
            let text = gid_text(&g.gid);
            let text = CStr::from_bytes_with_nul(&text).map_err(|_| EINVAL)?;
            m.put_string(A_GID_GID.into(), text)
        })?;
    }
    msg.put_u32(A_DEV_FEATURE_OWNER.into(), owner(e.owner))?;
    msg.put_u64(A_DEV_GENERATION.into(), e.generation, A_DEV_PAD.into())?;
    Ok(())
}

/// Puts `name` (no NUL) as a string attribute.
fn put_name(msg: &MsgAttrs, kind: u16, name: &[u8]) -> Result {
    let mut z = KVec::new();
    z.extend_from_slice(name, GFP_KERNEL)?;
    z.push(0, GFP_KERNEL)?;
    let cstr = CStr::from_bytes_with_nul(&z).map_err(|_| EINVAL)?;
    msg.put_string(kind.into(), cstr)
}

/// A GID as sysfs shows it (`%pI6`: eight groups of four lowercase hex
/// digits), NUL-terminated.
fn gid_text(gid: &[u8; 16]) -> [u8; 40] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [0u8; 40];
    for (i, b) in gid.iter().enumerate() {
        // Two digits per byte, a colon after every second byte but the last.
        let at = i * 2 + i / 2;
        t[at] = HEX[usize::from(b >> 4)];
        t[at + 1] = HEX[usize::from(b & 0xf)];
        if i % 2 == 1 && i < 15 {
            t[at + 2] = b':';
        }
    }
    t
}

/// `dev-get`'s request: one port, by ifindex. Its dump takes nothing.
static DEV_GET_POLICY: [AttrPolicy; 2] = [AttrPolicy::reject(), IFINDEX];
static DEV_DUMP_POLICY: [AttrPolicy; 1] = [AttrPolicy::reject()];
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
        let reply = info.reply(CMD_DEV_GET)?;
        let here = info.net().cookie();
        // `dev_get_by_index()`: under RCU, with a reference of its own.
        let dev = NetDevice::get_by_index(info.net(), ifindex as i32);
        let found = bridge::with(|b| -> Result<bool> {
            let Some(dev) = dev else {
                return Ok(false);
            };
            let st = b.state.lock();
            // Published in this namespace: one just moved here is not yet.
            let Some(e) = st
                .ports
                .of(&dev)
                .filter(|e| e.published().is_some_and(|v| v.netns == here))
            else {
                return Ok(false);
            };
            fill(&reply, e, &st.secys)?;
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

    /// The ports published in the caller's namespace, in the order they
    /// were tracked, resuming after the serial of the last one sent (kept
    /// in two words of the dump's state, 32 bits each). Under the state's
    /// mutex alone, as `dev-get`; a round walks the caller's namespace's
    /// ports only ([`bridge::Ports::order`]), whatever the others hold.
    /// Any change of any object between two rounds moves the clock, and
    /// the next message carries `NLM_F_DUMP_INTR`.
    fn dumpit(dump: &mut Dump<'_>) -> Result {
        let here = dump.info().net().cookie();
        bridge::with(|b| -> Result {
            let span = Span::start();
            let mut st = b.state.lock();
            st.begin();
            // Zero would turn the check off.
            dump.set_generation((st.clock as u32).max(1));
            let [lo, hi, ..] = *dump.state();
            let after = (lo as u64 & 0xffff_ffff) | ((hi as u64 & 0xffff_ffff) << 32);
            let mut sent = 0;
            let mut visited = 0;
            let (order, ports, secys) = st.ports_and_secys();
            let ret = (|| -> Result {
                // The first port after the last one sent: O(log N).
                let from = (here, after.saturating_add(1));
                let mut cursor = order.cursor_lower_bound_mut(&from);
                while let Some(c) = cursor {
                    let (ns, serial) = *c.current().0;
                    if ns != here {
                        break;
                    }
                    visited += 1;
                    if let Some(e) = ports.get(&serial).filter(|e| e.published().is_some()) {
                        let msg = dump.message(CMD_DEV_GET)?;
                        fill(&msg, e, secys)?;
                        msg.commit();
                        sent += 1;
                    }
                    let state = dump.state();
                    state[0] = (serial & 0xffff_ffff) as isize;
                    state[1] = (serial >> 32) as isize;
                    cursor = c.move_next();
                }
                Ok(())
            })();
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

static GROUPS: [MulticastGroup; 1] = [MulticastGroup::const_new(c"monitor")];

/// The family.
pub(crate) static FAMILY: Family = Family::const_new_with_ops(
    kernel::module::this_module::<crate::LocalModule>(),
    b"macsec_bridge\0",
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
