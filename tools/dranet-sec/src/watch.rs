// SPDX-License-Identifier: GPL-2.0
//! What `slice --watch` and `taint-rules --watch` wait on: the family's
//! notifications and rtnetlink's link messages, each socket read by a
//! thread of its own into one queue.
//!
//! A wake takes every change queued behind the first one, so a burst
//! costs one new view, not one per message. The view is brought up to
//! date with what the changes name: the netdevs a link message or a
//! notification names are read again from sysfs, the ports are dumped
//! again only after a notification, and everything is read again only
//! after a socket overflowed (a message may be lost). A change to the
//! RDMA devices of a netdev the kernel module tracks comes as a
//! notification; one on a netdev it does not track shows at the next
//! notification.

use crate::attrs::NetDev;
use crate::discover::Cache;
use crate::genl::{overflowed, Client, Read};
use crate::state::PortState;
use anyhow::{anyhow, Context as _, Result};
use neli::consts::rtnl::{Ifla, Rtm};
use neli::consts::socket::NlFamily;
use neli::rtnl::Ifinfomsg;
use neli::socket::synchronous::NlSocketHandle;
use neli::utils::Groups;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::mpsc;

/// `RTNLGRP_LINK`: every `RTM_NEWLINK` and `RTM_DELLINK` of the namespace.
const RTNLGRP_LINK: u32 = 1;

/// What a link message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Netdev `index` is new, renamed or changed, and now called `name`.
    Changed { index: u32, name: String },
    /// Netdev `index` left the namespace (deleted or moved).
    Gone(u32),
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
            let Some(ifi) = m.get_payload() else {
                continue;
            };
            let Ok(index) = u32::try_from(*ifi.ifi_index()) else {
                continue;
            };
            match *m.nl_type() {
                Rtm::Newlink => {
                    let name = ifi
                        .rtattrs()
                        .get_attr_handle()
                        .get_attr_payload_as_with_len::<String>(Ifla::Ifname);
                    match name {
                        Ok(name) => out.push(Link::Changed { index, name }),
                        Err(_) => return Ok(Read::Lost),
                    }
                }
                Rtm::Dellink => out.push(Link::Gone(index)),
                _ => {}
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
    ports: Vec<PortState>,
}

impl Watch {
    /// Joins both groups, then reads everything: no change falls in
    /// between.
    pub fn start(sysfs: &Path) -> Result<Watch> {
        let mut client = Client::connect()?;
        let monitor = client.monitor()?;
        let links = Links::open()?;
        let (tx, rx) = mpsc::channel();
        reader(tx.clone(), move || monitor.read(), Event::Ports);
        reader(tx, move || links.read(), Event::Links);
        let cache = Cache::new(sysfs)?;
        let ports = client.dump()?;
        Ok(Watch {
            client,
            rx,
            cache,
            ports,
        })
    }

    /// The netdevs, by interface name, with their RDMA devices.
    pub fn netdevs(&self) -> Vec<NetDev> {
        self.cache.netdevs()
    }

    /// The ports, as the last dump gave them.
    pub fn ports(&self) -> &[PortState] {
        &self.ports
    }

    /// Blocks for the next change, takes every change queued behind it,
    /// and brings the view up to date.
    pub fn wait(&mut self) -> Result<Wake> {
        let first = self
            .rx
            .recv()
            .map_err(|_| anyhow!("watch: both sockets' readers ended"))?;
        let mut w = Wake::default();
        let (mut dump, mut rescan) = (false, false);
        let mut named = BTreeSet::new();
        for e in std::iter::once(first).chain(self.rx.try_iter()) {
            match e {
                Event::Failed(e) => return Err(e),
                Event::Ports(Read::Messages(ps)) => {
                    dump = true;
                    w.notifications += ps.len();
                    named.extend(ps.into_iter().map(|p| p.ifname));
                }
                Event::Links(Read::Messages(ls)) => {
                    w.links += ls.len();
                    for l in ls {
                        match l {
                            Link::Changed { index, name } => self.cache.changed(index, &name),
                            Link::Gone(index) => self.cache.gone(index),
                        }
                    }
                }
                Event::Ports(Read::Lost) => (dump, w.lost) = (true, true),
                Event::Links(Read::Lost) => (rescan, w.lost) = (true, true),
            }
        }
        if rescan {
            self.cache.rescan()?;
        } else if dump {
            for n in &named {
                self.cache.reread(n);
            }
            self.cache.refresh_rdma();
        }
        if dump || rescan {
            self.ports = self.client.dump()?;
        }
        Ok(w)
    }
}
