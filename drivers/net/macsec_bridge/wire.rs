// SPDX-License-Identifier: GPL-2.0

//! The `macsec-bridge` family's messages: its commands, attributes and
//! values, and the port object as it goes on the wire ([`fill`]). Below
//! the core: it reads a published [`Object`] and nothing else.
//!
//! Based on: `Documentation/netlink/specs/macsec_bridge.yaml` (the values
//! below are those of `include/uapi/linux/macsec_bridge.h`, generated from
//! it; a selftest checks the two against each other through `ynl`).
//!
//! Layer 1 (types and leaves). Owns: the family's numbers and how an object
//! is written. May use: layer 1 (`lockstep`, `model`).

use crate::lockstep::{Protection, Reason};
use crate::model::{Object, Owner, Reader, Relation};
use crate::net::macsec::{Cipher, Validate};
use crate::net::namespace::Net;
use crate::net::netlink::{Attrs, GenlMsg, MsgBuffer};
use kernel::prelude::*;

/// `dev-get`.
pub(crate) const CMD_DEV_GET: u8 = 1;
/// `dev-change-ntf`.
pub(crate) const CMD_DEV_CHANGE_NTF: u8 = 2;
pub(crate) const CMD_BIND: u8 = 3;
pub(crate) const CMD_UNBIND: u8 = 4;
/// The `monitor` group (index into the family's groups).
pub(crate) const MCGRP_MONITOR: u32 = 0;
/// The `monitor-all` group.
pub(crate) const MCGRP_MONITOR_ALL: u32 = 1;

pub(crate) const A_DEV_IFINDEX: u16 = 1;
const A_DEV_IFNAME: u16 = 2;
const A_DEV_RDMA_DEV: u16 = 3;
const A_DEV_PROTECTION: u16 = 4;
const A_DEV_REASON: u16 = 5;
const A_DEV_RELATION: u16 = 6;
pub(crate) const A_DEV_SECY_IFINDEX: u16 = 7;
const A_DEV_SCI: u16 = 8;
const A_DEV_CIPHER: u16 = 9;
const A_DEV_ENCRYPT: u16 = 10;
const A_DEV_FEATURE_OWNER: u16 = 11;
const A_DEV_GENERATION: u16 = 12;
const A_DEV_PAD: u16 = 13;
pub(crate) const A_DEV_SECY_NETNSID: u16 = 14;
pub(crate) const A_DEV_SECY_NETNS_FD: u16 = 15;
const A_DEV_PROTECTED_GID: u16 = 16;
const A_DEV_VALIDATE: u16 = 17;
const A_DEV_RX_PLAINTEXT: u16 = 18;
const A_DEV_PORT_ID: u16 = 19;
const A_DEV_NETNSID: u16 = 20;
pub(crate) const A_DEV_ALL_NETNS: u16 = 21;

const A_GID_RDMA_DEV: u16 = 1;
const A_GID_INDEX: u16 = 2;
const A_GID_GID: u16 = 3;

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
        Some(Reason::OffloadUnreachable) => 12,
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

fn validate(v: Validate) -> u32 {
    match v {
        Validate::Disabled => 0,
        Validate::Check => 1,
        Validate::Strict => 2,
    }
}

fn owner(o: Owner) -> u32 {
    match o {
        Owner::Bridge => 0,
        Owner::Driver => 1,
    }
}

/// Writes port object `o` as `reader` sees it: from the port's namespace,
/// or the host's view from the initial one, which names the port's
/// namespace (`netnsid`) and the SecY's relative to itself. Fails with
/// `ENOENT` for a port the reader cannot name ([`View::named_by`]). Called
/// under the state's mutex, with or without RTNL: it reads no netdev,
/// whose names, ifindexes and namespaces change under RTNL alone.
///
/// [`View::named_by`]: crate::model::View::named_by
pub(crate) fn fill<B: MsgBuffer>(msg: &mut GenlMsg<B>, o: &Object<'_>, reader: Reader) -> Result {
    let p = o.view;
    if !p.named_by(reader) {
        return Err(ENOENT);
    }
    // The reader's namespace, and its id for the SecY's.
    let (here, secy_netnsid) = match reader {
        Reader::Port => (p.netns, p.secy_netnsid),
        Reader::Host => (Net::init_net().cookie(), p.host_secy_netnsid),
    };
    let mut attrs = msg.attrs();
    attrs.put_u32(A_DEV_IFINDEX.into(), p.ifindex as u32)?;
    // IFNAMSIZ counts the NUL: a name is NUL-terminated within its 16 bytes.
    let len = p.name.iter().position(|&b| b == 0).ok_or(EINVAL)?;
    let name = CStr::from_bytes_with_nul(&p.name[..=len]).map_err(|_| EINVAL)?;
    attrs.put_string(A_DEV_IFNAME.into(), name)?;
    for r in o.rdma {
        put_name(&mut attrs, A_DEV_RDMA_DEV, &r.name)?;
    }
    attrs.put_u32(A_DEV_PROTECTION.into(), protection(p.verdict.protection))?;
    attrs.put_u32(A_DEV_REASON.into(), reason(p.verdict.reason))?;
    if let Some(r) = p.relation {
        attrs.put_u32(A_DEV_RELATION.into(), relation(r))?;
    }
    // An ifindex in a namespace the reader has no id for would name a
    // device of its own: none then (no memory for the id, or the SecY's
    // namespace dying).
    let named = p.secy_netns == here || secy_netnsid >= 0;
    if let Some(secy) = p.secy.filter(|_| named) {
        attrs.put_u32(A_DEV_SECY_IFINDEX.into(), secy as u32)?;
        // Relative to the reader, as IFLA_LINK_NETNSID.
        if p.secy_netns != here {
            attrs.put_s32(A_DEV_SECY_NETNSID.into(), secy_netnsid)?;
        }
        if let Some((sci, c)) = p.id {
            // Already in network byte order, as the spec says.
            attrs.put_u64(A_DEV_SCI.into(), sci, A_DEV_PAD.into())?;
            attrs.put_u32(A_DEV_CIPHER.into(), cipher(c))?;
        }
        if let Some(enc) = p.encrypt {
            attrs.put_uint(A_DEV_ENCRYPT.into(), enc.into())?;
        }
        if let Some(i) = p.ingress {
            attrs.put_u32(A_DEV_VALIDATE.into(), validate(i.validate))?;
            attrs.put_uint(A_DEV_RX_PLAINTEXT.into(), i.plaintext.into())?;
        }
    }
    for g in o.gids {
        attrs.nest(A_DEV_PROTECTED_GID.into(), |m| {
            if let Some(r) = o.rdma.iter().find(|r| r.id == g.rdma) {
                put_name(m, A_GID_RDMA_DEV, &r.name)?;
            }
            m.put_uint(A_GID_INDEX.into(), g.index.into())?;
            let text = gid_text(&g.gid);
            let text = CStr::from_bytes_with_nul(&text).map_err(|_| EINVAL)?;
            m.put_string(A_GID_GID.into(), text)
        })?;
    }
    attrs.put_u32(A_DEV_FEATURE_OWNER.into(), owner(p.owner))?;
    attrs.put_uint(A_DEV_GENERATION.into(), o.generation)?;
    attrs.put_uint(A_DEV_PORT_ID.into(), o.serial)?;
    if p.netns != here {
        attrs.put_s32(A_DEV_NETNSID.into(), p.host_netnsid)?;
    }
    Ok(())
}

/// Puts `name` (no NUL) as a string attribute.
fn put_name(attrs: &mut Attrs<'_>, kind: u16, name: &[u8]) -> Result {
    let mut z = KVec::new();
    z.extend_from_slice(name, GFP_KERNEL)?;
    z.push(0, GFP_KERNEL)?;
    let cstr = CStr::from_bytes_with_nul(&z).map_err(|_| EINVAL)?;
    attrs.put_string(kind.into(), cstr)
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
