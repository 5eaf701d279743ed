// SPDX-License-Identifier: GPL-2.0
//! What `slice --watch` and `taint-rules --watch` wait on: the family's
//! notifications and rtnetlink's link messages, each socket read by a
//! thread of its own into one queue.
//!
//! A wake takes every change queued behind the first one, so a burst
//! costs one new view, not one per message. The view is brought up to
//! date with what the changes name: the netdevs a link message or a
//! notification names are read again from sysfs (a link message gives
//! the netdev's kind itself), the ports are dumped
//! again only after a notification, and everything is read again only
//! after a socket overflowed (a message may be lost). A change to the
//! RDMA devices of a netdev the kernel module tracks comes as a
//! notification; one on a netdev it does not track shows at the next
//! notification.

use crate::attrs::NetDev;
use crate::discover::Cache;
use crate::genl::{overflowed, Client, Read};
use crate::rtnl::{self, LinkInfo};
use crate::state::PortState;
use anyhow::{anyhow, Context as _, Result};
use neli::consts::rtnl::{Ifla, RtAddrFamily, Rtm};
use neli::consts::socket::NlFamily;
use neli::nl::Nlmsghdr;
use neli::rtnl::Ifinfomsg;
use neli::socket::synchronous::NlSocketHandle;
use neli::utils::Groups;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::mpsc;

/// `RTNLGRP_LINK`: every `RTM_NEWLINK` and `RTM_DELLINK` of the namespace.
const RTNLGRP_LINK: u32 = 1;

/// What a link message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A netdev is new, renamed or changed, and now this (its name, its
    /// kind).
    Changed(LinkInfo),
    /// Netdev `index` left the namespace (deleted or moved).
    Gone(u32),
}

/// What one link message says: `None` for one that says nothing of a
/// netdev's own (a bridge's `AF_BRIDGE` messages about its ports: an
/// `RTM_DELLINK` of those is a port leaving the bridge, not the netdev
/// going), an error for one that cannot be read.
pub fn link_of(m: &Nlmsghdr<Rtm, Ifinfomsg>) -> Result<Option<Link>> {
    let Some(ifi) = m.get_payload() else {
        return Ok(None);
    };
    let Ok(index) = u32::try_from(*ifi.ifi_index()) else {
        return Ok(None);
    };
    if *ifi.ifi_family() != RtAddrFamily::Unspecified {
        return Ok(None);
    }
    match *m.nl_type() {
        Rtm::Newlink => {
            let attrs = ifi.rtattrs().get_attr_handle();
            let name = attrs
                .get_attr_payload_as_with_len::<String>(Ifla::Ifname)
                .map_err(|e| anyhow!("RTM_NEWLINK {index}: {e}"))?;
            let kind = match attrs.get_attribute(Ifla::Linkinfo) {
                Some(a) => rtnl::info_kind(a.rta_payload().as_ref())?,
                None => String::new(),
            };
            let master = attrs
                .get_attr_payload_as::<u32>(Ifla::Master)
                .ok()
                .filter(|m| *m != 0);
            Ok(Some(Link::Changed(LinkInfo {
                index,
                name,
                kind,
                master,
            })))
        }
        Rtm::Dellink => Ok(Some(Link::Gone(index))),
        _ => Ok(None),
    }
}

/// A socket on rtnetlink's link group.
pub struct Links {
    sock: NlSocketHandle,
}

impl Links {
    pub fn open() -> Result<Links> {
        let sock =
            NlSocketHandle::connect(NlFamily::Route, None, Groups::new_groups(&[RTNLGRP_LINK]))
                .context("rtnetlink socket on the link group")?;
        // A hint, capped by net.core.rmem_max; an overflow costs a rescan.
        sock.set_recv_buffer_size(1 << 20)
            .context("rtnetlink receive buffer")?;
        Ok(Links { sock })
    }

    /// The link messages of the next datagram (blocks). One it cannot read
    /// counts as lost, so the whole namespace is read again.
    pub fn read(&self) -> Result<Read<Link>> {
        let (msgs, _) = match self.sock.recv::<Rtm, Ifinfomsg>() {
            Ok(r) => r,
            Err(e) if overflowed(&e) => return Ok(Read::Lost),
            Err(e) => return Err(anyhow!("rtnetlink: {e}")),
        };
        let mut out = Vec::new();
        for m in msgs {
            let Ok(m) = m else {
                return Ok(Read::Lost);
            };
            match link_of(&m) {
                Ok(l) => out.extend(l),
                Err(_) => return Ok(Read::Lost),
            }
        }
        Ok(Read::Messages(out))
    }
}

enum Event {
    Ports(Read<PortState>),
    Links(Read<Link>),
    Failed(anyhow::Error),
}

/// Reads with `read` until it fails or nobody listens.
fn reader<T: Send + 'static>(
    tx: mpsc::Sender<Event>,
    read: impl Fn() -> Result<Read<T>> + Send + 'static,
    wrap: fn(Read<T>) -> Event,
) {
    std::thread::spawn(move || loop {
        let e = match read() {
            Ok(r) => wrap(r),
            Err(e) => {
                let _ = tx.send(Event::Failed(e));
                return;
            }
        };
        if tx.send(e).is_err() {
            return;
        }
    });
}

/// What one wake took in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wake {
    pub notifications: usize,
    pub links: usize,
    /// A socket overflowed: everything was read again.
    pub lost: bool,
}

/// The node's netdevs and ports, kept up to date by the changes.
pub struct Watch {
    client: Client,
    rx: mpsc::Receiver<Event>,
    cache: Cache,
    /// The links, by ifindex: their names and kinds.
    links: BTreeMap<u32, LinkInfo>,
    /// The ports of this namespace.
    ports: Vec<PortState>,
    /// With the host's view, the ports in other namespaces (each with its
    /// `netnsid`): those moved into pods.
    away: Vec<PortState>,
    host: bool,
}

/// The links of a dump, by ifindex.
fn by_index(links: Vec<LinkInfo>) -> BTreeMap<u32, LinkInfo> {
    links.into_iter().map(|l| (l.index, l)).collect()
}

impl Watch {
    /// Joins both groups, then reads everything: no change falls in
    /// between.
    pub fn start(sysfs: &Path) -> Result<Watch> {
        Watch::open(sysfs, false)
    }

    /// The same with the host's view: every namespace's ports, through
    /// `monitor-all` and `all-netns` dumps (the host's administrator, in
    /// the initial namespace).
    pub fn start_host(sysfs: &Path) -> Result<Watch> {
        Watch::open(sysfs, true)
    }

    fn open(sysfs: &Path, host: bool) -> Result<Watch> {
        let client = Client::connect()?;
        let monitor = if host {
            client.monitor_all()?
        } else {
            client.monitor()?
        };
        let links = Links::open()?;
        let (tx, rx) = mpsc::channel();
        reader(tx.clone(), move || monitor.read(), Event::Ports);
        reader(tx, move || links.read(), Event::Links);
        let cache = Cache::new(sysfs)?;
        let links = by_index(rtnl::links()?);
        let mut w = Watch {
            client,
            rx,
            cache,
            links,
            ports: Vec::new(),
            away: Vec::new(),
            host,
        };
        w.dump()?;
        Ok(w)
    }

    /// Reads the ports again.
    fn dump(&mut self) -> Result<()> {
        if self.host {
            (self.ports, self.away) = self
                .client
                .dump_all()?
                .into_iter()
                .partition(|p| p.netnsid.is_none());
        } else {
            self.ports = self.client.dump()?;
        }
        Ok(())
    }

    /// The netdevs, by interface name, with their RDMA devices and kinds.
    pub fn netdevs(&self) -> Vec<NetDev> {
        let mut devs = self.cache.netdevs();
        rtnl::set_kinds(&mut devs, self.links.values());
        devs
    }

    /// The ports of this namespace, as the last dump gave them.
    pub fn ports(&self) -> &[PortState] {
        &self.ports
    }

    /// With the host's view, the ports in other namespaces.
    pub fn away(&self) -> &[PortState] {
        &self.away
    }

    /// Blocks for the next change, takes every change queued behind it,
    /// and brings the view up to date.
    pub fn wait(&mut self) -> Result<Wake> {
        let first = self
            .rx
            .recv()
            .map_err(|_| anyhow!("watch: both sockets' readers ended"))?;
        let mut w = Wake::default();
        let (mut dump, mut rescan, mut left) = (false, false, false);
        let mut named = BTreeSet::new();
        for e in std::iter::once(first).chain(self.rx.try_iter()) {
            match e {
                Event::Failed(e) => return Err(e),
                Event::Ports(Read::Messages(ps)) => {
                    dump = true;
                    w.notifications += ps.len();
                    for p in ps {
                        if p.netnsid.is_none() {
                            named.insert(p.ifname);
                            continue;
                        }
                        // A port in another namespace: if it was here, its
                        // netdev left, maybe before its link message came.
                        left = true;
                        let was = self
                            .ports
                            .iter()
                            .find(|h| h.port_id.is_some() && h.port_id == p.port_id);
                        if let Some(h) = was {
                            named.insert(h.ifname.clone());
                        }
                    }
                }
                Event::Links(Read::Messages(ls)) => {
                    w.links += ls.len();
                    for l in ls {
                        match l {
                            Link::Changed(l) => {
                                self.cache.changed(l.index, &l.name);
                                self.links.insert(l.index, l);
                            }
                            Link::Gone(index) => {
                                self.cache.gone(index);
                                self.links.remove(&index);
                            }
                        }
                    }
                }
                Event::Ports(Read::Lost) => (dump, w.lost) = (true, true),
                Event::Links(Read::Lost) => (rescan, w.lost) = (true, true),
            }
        }
        if rescan {
            self.cache.rescan()?;
            self.links = by_index(rtnl::links()?);
        } else if dump {
            if left {
                // The move is done when the module announces it: the links
                // as they are now, not as the messages read so far say.
                self.links = by_index(rtnl::links()?);
            }
            for n in &named {
                self.cache.reread(n);
            }
            self.cache.refresh_rdma();
        }
        if dump || rescan {
            self.dump()?;
        }
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neli::FromBytes as _;
    use std::io::Cursor;

    const AF_BRIDGE: u8 = libc::AF_BRIDGE as u8;

    /// A link message as the kernel multicasts it: type, family, index,
    /// attributes.
    fn msg(ty: u16, family: u8, index: i32, attrs: &[(u16, &[u8])]) -> Nlmsghdr<Rtm, Ifinfomsg> {
        let mut ifi = [0u8; 16];
        ifi[0] = family;
        ifi[4..8].copy_from_slice(&index.to_ne_bytes());
        let b = rtnl::message_with(ty, 0, &ifi, attrs);
        Nlmsghdr::from_bytes(&mut Cursor::new(b)).unwrap()
    }

    #[test]
    fn link_messages_give_the_netdev_its_kind_and_bridges_change_nothing() {
        const RTM_NEWLINK: u16 = libc::RTM_NEWLINK;
        const RTM_DELLINK: u16 = libc::RTM_DELLINK;
        let name: &[u8] = b"v0\0";
        // IFLA_LINKINFO holding IFLA_INFO_KIND "veth".
        let info = [&8u16.to_ne_bytes()[..], &1u16.to_ne_bytes(), b"veth"].concat();
        let master = 7u32.to_ne_bytes();
        let attrs = [
            (libc::IFLA_IFNAME, name),
            (libc::IFLA_LINKINFO, &info[..]),
            (libc::IFLA_MASTER, &master[..]),
        ];
        let attrs: Vec<(u16, &[u8])> = attrs.iter().map(|(t, v)| (*t, *v)).collect();
        assert_eq!(
            link_of(&msg(RTM_NEWLINK, 0, 3, &attrs)).unwrap(),
            Some(Link::Changed(LinkInfo {
                index: 3,
                name: "v0".into(),
                kind: "veth".into(),
                master: Some(7),
            }))
        );
        // A NIC: no kind.
        let nic = link_of(&msg(RTM_NEWLINK, 0, 2, &[(libc::IFLA_IFNAME, b"eth0\0")])).unwrap();
        let Some(Link::Changed(l)) = nic else {
            panic!("{nic:?}")
        };
        assert_eq!(
            (l.name.as_str(), l.kind.as_str(), l.master),
            ("eth0", "", None)
        );
        assert_eq!(
            link_of(&msg(RTM_DELLINK, 0, 3, &attrs)).unwrap(),
            Some(Link::Gone(3))
        );
        // A bridge's word on its port: the port taken out of the bridge is
        // not gone, and its kind is not what the message lacks.
        assert_eq!(
            link_of(&msg(RTM_DELLINK, AF_BRIDGE, 3, &attrs[..1])).unwrap(),
            None
        );
        assert_eq!(
            link_of(&msg(RTM_NEWLINK, AF_BRIDGE, 3, &attrs[..1])).unwrap(),
            None
        );
        // A message without a name cannot be read.
        assert!(link_of(&msg(RTM_NEWLINK, 0, 3, &[])).is_err());
    }
}
