// SPDX-License-Identifier: GPL-2.0
//! The `macsec-bridge` generic netlink family, through `neli`.
//!
//! Attribute numbers and enum values are those of the YNL spec
//! (`Documentation/netlink/specs/macsec_bridge.yaml`); a test checks the
//! tables below against it.

use crate::state::PortState;
use anyhow::{anyhow, Context as _, Result};
use neli::attr::Attribute;
use neli::consts::nl::NlmsgerrAttr;
use neli::consts::{
    nl::{NlmF, Nlmsg},
    socket::NlFamily,
};
use neli::genl::{
    AttrTypeBuilder, Genlmsghdr, GenlmsghdrBuilder, Nlattr, NlattrBuilder, NoUserHeader,
};
use neli::nl::{NlPayload, Nlmsghdr, NlmsghdrBuilder};
use neli::router::synchronous::{NlRouter, NlRouterReceiverHandle};
use neli::socket::synchronous::NlSocketHandle;
use neli::types::{Buffer, GenlBuffer};
use neli::utils::Groups;

pub const FAMILY: &str = "macsec-bridge";
pub const MCGRP_MONITOR: &str = "monitor";
/// Every namespace's ports, in the host's view (its administrator's).
pub const MCGRP_MONITOR_ALL: &str = "monitor-all";
pub const CMD_DEV_GET: u8 = 1;
pub const CMD_DEV_CHANGE_NTF: u8 = 2;
pub const CMD_BIND: u8 = 3;
pub const CMD_UNBIND: u8 = 4;

/// The enums of the spec, in value order.
pub const PROTECTION: &[&str] = &["none", "software", "offload-mac", "offload-phy"];
pub const REASON: &[&str] = &[
    "none",
    "unknown",
    "binding-stale",
    "no-secy",
    "secy-down",
    "lower-down",
    "no-active-tx-sa",
    "protect-off",
    "encrypt-off",
    "offload-off",
    "partial",
    "unsettled",
    "offload-unreachable",
];
pub const RELATION: &[&str] = &["self", "upper", "bound"];
pub const CIPHER: &[&str] = &[
    "gcm-aes-128",
    "gcm-aes-256",
    "gcm-aes-xpn-128",
    "gcm-aes-xpn-256",
];
pub const FEATURE_OWNER: &[&str] = &["bridge", "driver"];
pub const VALIDATE: &[&str] = &["disabled", "check", "strict"];

/// Attribute numbers of the `dev` set.
pub mod attr {
    pub const IFINDEX: u16 = 1;
    pub const IFNAME: u16 = 2;
    pub const RDMA_DEV: u16 = 3;
    pub const PROTECTION: u16 = 4;
    pub const REASON: u16 = 5;
    pub const RELATION: u16 = 6;
    pub const SECY_IFINDEX: u16 = 7;
    pub const SCI: u16 = 8;
    pub const CIPHER: u16 = 9;
    pub const ENCRYPT: u16 = 10;
    pub const FEATURE_OWNER: u16 = 11;
    pub const GENERATION: u16 = 12;
    pub const SECY_NETNSID: u16 = 14;
    pub const SECY_NETNS_FD: u16 = 15;
    pub const PROTECTED_GID: u16 = 16;
    pub const VALIDATE: u16 = 17;
    pub const RX_PLAINTEXT: u16 = 18;
    pub const PORT_ID: u16 = 19;
    pub const NETNSID: u16 = 20;
    pub const ALL_NETNS: u16 = 21;
    /// In a `protected-gid` nest.
    pub const GID_GID: u16 = 3;
}

/// A request the kernel refused: its errno and extack message.
#[derive(Debug)]
pub struct Refused {
    pub errno: i32,
    pub msg: Option<String>,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", std::io::Error::from_raw_os_error(self.errno))?;
        if let Some(m) = &self.msg {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refused {}

fn u32_attr(t: u16, v: u32) -> Result<Nlattr<u16, Buffer>> {
    Ok(NlattrBuilder::default()
        .nla_type(AttrTypeBuilder::default().nla_type(t).build()?)
        .nla_payload(v)
        .build()?)
}

type Msg = Nlmsghdr<u16, Genlmsghdr<u8, u16>>;

fn name_of(table: &[&str], v: u32) -> String {
    table
        .get(v as usize)
        .map_or_else(|| format!("unknown-{v}"), |s| s.to_string())
}

/// The value of a `uint` attribute (`NLA_UINT`): 4 bytes, or 8 when the
/// value does not fit them, in host order. Any other length is refused.
fn uint(t: u16, b: &[u8]) -> Result<u64> {
    match b.len() {
        4 => Ok(u32::from_ne_bytes(b.try_into()?).into()),
        8 => Ok(u64::from_ne_bytes(b.try_into()?)),
        n => Err(anyhow!("attribute {t}: a uint of {n} bytes")),
    }
}

/// A port object from a `dev-get` reply or a `dev-change-ntf`.
pub fn parse(g: &Genlmsghdr<u8, u16>) -> Result<PortState> {
    let mut p = PortState::default();
    let handle = g.attrs().get_attr_handle();
    for a in handle.iter() {
        let t = *a.nla_type().nla_type();
        let u32_ = || {
            a.get_payload_as::<u32>()
                .map_err(|e| anyhow!("attribute {t}: {e}"))
        };
        let uint = || uint(t, a.nla_payload().as_ref());
        match t {
            attr::IFINDEX => p.ifindex = u32_()?,
            attr::IFNAME => p.ifname = a.get_payload_as_with_len::<String>()?,
            attr::RDMA_DEV => p.rdma_dev.push(a.get_payload_as_with_len::<String>()?),
            attr::PROTECTION => p.protection = name_of(PROTECTION, u32_()?),
            attr::REASON => p.reason = name_of(REASON, u32_()?),
            attr::RELATION => p.relation = Some(name_of(RELATION, u32_()?)),
            attr::SECY_IFINDEX => p.secy_ifindex = Some(u32_()?),
            // In network byte order on the wire.
            attr::SCI => p.sci = Some(u64::from_be(a.get_payload_as::<u64>()?)),
            attr::CIPHER => p.cipher = Some(name_of(CIPHER, u32_()?)),
            attr::ENCRYPT => p.encrypt = Some(u8::try_from(uint()?)?),
            attr::VALIDATE => p.validate = Some(name_of(VALIDATE, u32_()?)),
            attr::RX_PLAINTEXT => p.rx_plaintext = Some(u8::try_from(uint()?)?),
            attr::FEATURE_OWNER => p.feature_owner = Some(name_of(FEATURE_OWNER, u32_()?)),
            attr::GENERATION => p.generation = uint()?,
            attr::SECY_NETNSID => p.secy_netnsid = Some(a.get_payload_as::<i32>()?),
            attr::PORT_ID => p.port_id = Some(uint()?),
            attr::NETNSID => p.netnsid = Some(a.get_payload_as::<i32>()?),
            attr::PROTECTED_GID => {
                for g in a.get_attr_handle::<u16>()?.iter() {
                    if *g.nla_type().nla_type() == attr::GID_GID {
                        p.protected_gids
                            .push(g.get_payload_as_with_len::<String>()?);
                    }
                }
            }
            // Newer attributes: ignored, as netlink wants.
            _ => {}
        }
    }
    Ok(p)
}

/// A connection to the family, in the caller's network namespace.
///
/// Dumps use a socket of their own, read by the thread that sends the
/// request. The router's socket is read by a background thread, and a
/// netlink socket whose dump is being started by one thread while another
/// thread receives from it can fail with `EINVAL`: the receiver sees the dump
/// still running, tries to continue it after the sender finished it, and
/// `netlink_recvmsg()` reports that as a socket error.
pub struct Client {
    router: NlRouter,
    mcast: NlRouterReceiverHandle<u16, Genlmsghdr<u8, u16, NoUserHeader>>,
    dumps: NlSocketHandle,
    seq: u32,
    family: u16,
}

impl Client {
    pub fn connect() -> Result<Client> {
        let (router, mcast) = NlRouter::connect(NlFamily::Generic, None, Groups::empty())
            .context("generic netlink socket")?;
        let family = router
            .resolve_genl_family(FAMILY)
            .map_err(|e| anyhow!("family {FAMILY} not found ({e}): is macsec_bridge loaded?"))?;
        let dumps = NlSocketHandle::connect(NlFamily::Generic, None, Groups::empty())
            .context("generic netlink socket")?;
        dumps.enable_ext_ack(true).context("NETLINK_EXT_ACK")?;
        Ok(Client {
            router,
            mcast,
            dumps,
            seq: 0,
            family,
        })
    }

    /// Sends `cmd` with `flags` and `attrs`, hands every reply payload to
    /// `each`, and returns at the acknowledgement or the end of the dump.
    /// A refusal is a [`Refused`] with the kernel's extack message.
    fn exchange(
        &mut self,
        cmd: u8,
        flags: NlmF,
        attrs: GenlBuffer<u16, Buffer>,
        mut each: impl FnMut(&Genlmsghdr<u8, u16>) -> Result<()>,
    ) -> Result<()> {
        self.seq = self.seq.wrapping_add(1);
        let genl = GenlmsghdrBuilder::<u8, u16, NoUserHeader>::default()
            .cmd(cmd)
            .version(1)
            .attrs(attrs)
            .build()?;
        let req = NlmsghdrBuilder::default()
            .nl_type(self.family)
            .nl_flags(NlmF::REQUEST | flags)
            .nl_seq(self.seq)
            .nl_payload(NlPayload::Payload(genl))
            .build()?;
        self.dumps.send(&req).map_err(|e| anyhow!("send: {e}"))?;
        loop {
            let (msgs, _) = self
                .dumps
                .recv::<u16, Genlmsghdr<u8, u16>>()
                .map_err(|e| anyhow!("receive: {e}"))?;
            for m in msgs {
                let m: Msg = m.map_err(|e| anyhow!("receive: {e}"))?;
                if *m.nl_seq() != self.seq {
                    continue;
                }
                let (errno, ext_ack) = match m.nl_payload() {
                    NlPayload::Payload(g) => {
                        each(g)?;
                        continue;
                    }
                    NlPayload::Ack(_) => return Ok(()),
                    NlPayload::Err(e) => (*e.error(), Some(e.ext_ack())),
                    NlPayload::DumpExtAck(e) => (*e.error(), Some(e.ext_ack())),
                    NlPayload::Empty => (0, None),
                };
                if errno != 0 {
                    let msg = ext_ack.into_iter().flat_map(|x| x.iter()).find_map(|a| {
                        (*a.nla_type().nla_type() == NlmsgerrAttr::Msg).then(|| {
                            String::from_utf8_lossy(a.nla_payload().as_ref())
                                .trim_end_matches('\0')
                                .to_string()
                        })
                    });
                    return Err(Refused {
                        errno: errno.saturating_neg(),
                        msg,
                    }
                    .into());
                }
                if Nlmsg::from(*m.nl_type()) == Nlmsg::Done {
                    return Ok(());
                }
            }
        }
    }

    /// Every port in this namespace (`dev-get` dump).
    pub fn dump(&mut self) -> Result<Vec<PortState>> {
        let mut out = Vec::new();
        self.exchange(CMD_DEV_GET, NlmF::DUMP, GenlBuffer::new(), |g| {
            out.push(parse(g)?);
            Ok(())
        })
        .context("dev-get dump")?;
        Ok(out)
    }

    /// Every port of every namespace, in the host's view (`dev-get` dump
    /// with `all-netns`): from the initial namespace, with `CAP_NET_ADMIN`
    /// in the initial user namespace.
    pub fn dump_all(&mut self) -> Result<Vec<PortState>> {
        let mut attrs = GenlBuffer::new();
        attrs.push(
            NlattrBuilder::default()
                .nla_type(
                    AttrTypeBuilder::default()
                        .nla_type(attr::ALL_NETNS)
                        .build()?,
                )
                .nla_payload(Buffer::from(Vec::new()))
                .build()?,
        );
        let mut out = Vec::new();
        self.exchange(CMD_DEV_GET, NlmF::DUMP, attrs, |g| {
            out.push(parse(g)?);
            Ok(())
        })
        .context("dev-get dump, all-netns")?;
        Ok(out)
    }

    /// Port `ifindex` of this namespace (`dev-get` do), or `None` when the
    /// family tracks no port there.
    pub fn get(&mut self, ifindex: u32) -> Result<Option<PortState>> {
        let mut attrs = GenlBuffer::new();
        attrs.push(u32_attr(attr::IFINDEX, ifindex)?);
        let mut out = None;
        let r = self.exchange(CMD_DEV_GET, NlmF::ACK, attrs, |g| {
            out = Some(parse(g)?);
            Ok(())
        });
        match r {
            Err(e) if e.downcast_ref::<Refused>().map(|r| r.errno) == Some(libc::ENODEV) => {
                Ok(None)
            }
            Err(e) => Err(e.context("dev-get")),
            Ok(()) => Ok(out),
        }
    }

    /// `bind`: port `ifindex` (this namespace) follows SecY `secy_ifindex`
    /// in the namespace of the open file `netns` (this one if `None`).
    pub fn bind(&mut self, ifindex: u32, secy_ifindex: u32, netns: Option<i32>) -> Result<()> {
        let mut attrs = GenlBuffer::new();
        attrs.push(u32_attr(attr::IFINDEX, ifindex)?);
        attrs.push(u32_attr(attr::SECY_IFINDEX, secy_ifindex)?);
        if let Some(fd) = netns {
            attrs.push(u32_attr(attr::SECY_NETNS_FD, fd as u32)?);
        }
        self.exchange(CMD_BIND, NlmF::ACK, attrs, |_| Ok(()))
    }

    /// `unbind`: port `ifindex` (this namespace) is no longer bound.
    pub fn unbind(&mut self, ifindex: u32) -> Result<()> {
        let mut attrs = GenlBuffer::new();
        attrs.push(u32_attr(attr::IFINDEX, ifindex)?);
        self.exchange(CMD_UNBIND, NlmF::ACK, attrs, |_| Ok(()))
    }

    /// Joins the `monitor` group: from now on, [`Client::next_change`]
    /// returns every `dev-change-ntf`.
    pub fn subscribe(&self) -> Result<()> {
        let id = self
            .router
            .resolve_nl_mcast_group(FAMILY, MCGRP_MONITOR)
            .map_err(|e| anyhow!("group {MCGRP_MONITOR}: {e}"))?;
        self.router
            .add_mcast_membership(Groups::new_groups(&[id]))?;
        Ok(())
    }

    /// A socket of its own on the `monitor` group, for a thread that only
    /// reads notifications.
    pub fn monitor(&self) -> Result<Monitor> {
        self.monitor_group(MCGRP_MONITOR)
    }

    /// The same on `monitor-all`: every namespace's ports, in the host's
    /// view (joining needs `CAP_NET_ADMIN`).
    pub fn monitor_all(&self) -> Result<Monitor> {
        self.monitor_group(MCGRP_MONITOR_ALL)
    }

    fn monitor_group(&self, group: &str) -> Result<Monitor> {
        let id = self
            .router
            .resolve_nl_mcast_group(FAMILY, group)
            .map_err(|e| anyhow!("group {group}: {e}"))?;
        let sock = NlSocketHandle::connect(NlFamily::Generic, None, Groups::empty())
            .context("generic netlink socket")?;
        sock.add_mcast_membership(Groups::new_groups(&[id]))
            .with_context(|| format!("joining the {group} group"))?;
        Ok(Monitor {
            sock,
            family: self.family,
        })
    }

    /// The next notification (blocks).
    pub fn next_change(&mut self) -> Result<PortState> {
        loop {
            let m = self
                .mcast
                .next_typed::<u16, Genlmsghdr<u8, u16>>()
                .ok_or_else(|| anyhow!("netlink socket closed"))?
                .map_err(|e| anyhow!("monitor: {e}"))?;
            if let Some(g) = m.get_payload() {
                if *g.cmd() == CMD_DEV_CHANGE_NTF {
                    return parse(g);
                }
            }
        }
    }
}

/// A socket on the `monitor` group (see [`Client::monitor`]).
pub struct Monitor {
    sock: NlSocketHandle,
    family: u16,
}

/// What one read of a [`Monitor`] or a [`crate::watch::Links`] socket gave.
#[derive(Debug)]
pub enum Read<T> {
    /// The messages of one read, in order.
    Messages(Vec<T>),
    /// The socket overflowed (`ENOBUFS`): messages were lost, and only a
    /// fresh read of everything is the truth now.
    Lost,
}

/// `ENOBUFS` from a netlink socket: the kernel dropped messages.
pub(crate) fn overflowed(e: &neli::err::SocketError) -> bool {
    matches!(e, neli::err::SocketError::Io(io) if io.raw_os_error() == Some(libc::ENOBUFS))
}

impl Monitor {
    /// The notifications of the next datagram (blocks).
    pub fn read(&self) -> Result<Read<PortState>> {
        let (msgs, _) = match self.sock.recv::<u16, Genlmsghdr<u8, u16>>() {
            Ok(r) => r,
            Err(e) if overflowed(&e) => return Ok(Read::Lost),
            Err(e) => return Err(anyhow!("monitor: {e}")),
        };
        let mut out = Vec::new();
        for m in msgs {
            let m: Msg = m.map_err(|e| anyhow!("monitor: {e}"))?;
            if *m.nl_type() != self.family {
                continue;
            }
            if let NlPayload::Payload(g) = m.nl_payload() {
                if *g.cmd() == CMD_DEV_CHANGE_NTF {
                    out.push(parse(g)?);
                }
            }
        }
        Ok(Read::Messages(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nla(t: u16, payload: impl Into<Buffer>) -> Nlattr<u16, Buffer> {
        NlattrBuilder::default()
            .nla_type(AttrTypeBuilder::default().nla_type(t).build().unwrap())
            .nla_payload(payload.into())
            .build()
            .unwrap()
    }

    fn string(s: &str) -> Vec<u8> {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        v
    }

    /// A `protected-gid` nest as the kernel puts it: device, index, GID.
    fn gid(index: u32, g: &str) -> Nlattr<u16, Buffer> {
        nla(attr::PROTECTED_GID, Vec::new())
            .nest(&nla(1, string("mb_rxe2")))
            .unwrap()
            .nest(&nla(2, index.to_ne_bytes().to_vec()))
            .unwrap()
            .nest(&nla(attr::GID_GID, string(g)))
            .unwrap()
    }

    /// `parse()` of a `dev-change-ntf` carrying `attrs`.
    fn parsed(attrs: Vec<Nlattr<u16, Buffer>>) -> Result<PortState> {
        let mut b = GenlBuffer::new();
        for a in attrs {
            b.push(a);
        }
        let g = GenlmsghdrBuilder::<u8, u16, NoUserHeader>::default()
            .cmd(CMD_DEV_CHANGE_NTF)
            .version(1)
            .attrs(b)
            .build()
            .unwrap();
        parse(&g)
    }

    #[test]
    fn uints_are_read_in_both_widths_and_nothing_else() {
        let wide = (1u64 << 40) + 3;
        let p = parsed(vec![
            nla(attr::ENCRYPT, 1u32.to_ne_bytes().to_vec()),
            nla(attr::RX_PLAINTEXT, 0u32.to_ne_bytes().to_vec()),
            nla(attr::GENERATION, wide.to_ne_bytes().to_vec()),
            nla(attr::PORT_ID, 7u32.to_ne_bytes().to_vec()),
        ])
        .unwrap();
        assert_eq!(
            (p.encrypt, p.rx_plaintext, p.generation, p.port_id),
            (Some(1), Some(0), wide, Some(7))
        );
        // The fixed-width encodings of the family's first version are not
        // uints: a one-byte flag, say.
        assert!(parsed(vec![nla(attr::ENCRYPT, vec![1u8])]).is_err());
        assert!(parsed(vec![nla(attr::ENCRYPT, 256u32.to_ne_bytes().to_vec())]).is_err());
    }

    #[test]
    fn protected_gids_are_read_from_their_nests() {
        let v4 = "0000:0000:0000:0000:0000:ffff:c000:0201";
        let v6 = "fe80:0000:0000:0000:0000:00ff:fe00:0001";
        let p = parsed(vec![
            nla(attr::IFNAME, string("mtn0")),
            nla(attr::PROTECTION, 0u32.to_ne_bytes().to_vec()),
            gid(3, v4),
            gid(4, v6),
        ])
        .unwrap();
        assert_eq!(p.ifname, "mtn0");
        assert_eq!(p.protection, "none");
        assert_eq!(p.protected_gids, [v4, v6]);
    }
}
