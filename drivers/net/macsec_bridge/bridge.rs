// SPDX-License-Identifier: GPL-2.0

//! What the module knows, what each port advertises, and every path that
//! changes either.
//!
//! Three sources feed the [`State`], all under RTNL: every offloaded
//! operation (the only synchronous view of an offloaded SecY), announced
//! by the MACsec core's offload notifier or, on a kernel without it, seen
//! through the interposed `macsec_ops` of every device that has them; the
//! netdevice notifier (devices appearing, going away, up and down, feature
//! changes); and the RDMA client (which takes RTNL itself). RTNL serialises every writer; the state's mutex is taken
//! inside it. Readers (`dev-get`, dumps: anyone, from any namespace) take
//! the state's mutex alone and report each port as it was last published
//! ([`PortEntry::published`]): what a writer read of netdevs under RTNL.
//! They re-read nothing, write no bit and announce nothing, so a loop of
//! reads from a container cannot hold RTNL, and a dump walks only its own
//! namespace's ports.
//!
//! A fourth source tells the GIDs of the ports: the RDMA core's event on a
//! change of a GID table ([`GidWork`]).
//!
//! One change reaches no source: PN exhaustion, which clears a TX SA's
//! `active` flag from the datapath (`macsec_pn_wrapped()`). Every SecY an
//! operation showed is read again every [`REVALIDATE_MS`] while a port
//! advertises offload ([`Revalidate`]), on the module's schedule alone.
//!
//! A feature change re-enters the notifier (`NETDEV_FEAT_CHANGE`), so no
//! writer touches a device with the mutex held: it updates the state,
//! collects [`Effects`], unlocks, then applies them, still under RTNL.
//!
//! Writing an ops-locked device's features (netdevsim, mlx5e) also needs
//! its instance lock. [`Locks`] says what the context of an update holds:
//! a request, the RDMA client and unload took RTNL themselves, and an
//! offload operation's observer runs under RTNL alone: they take the
//! instance lock. A notifier has it for the event's device and some
//! events, and may run inside another device's locked section. A write
//! that cannot be made where it arises (a notifier for one device that
//! changes an ops-locked port) is left to a work item, which takes both
//! locks and brings every port's bit to what the state says.

use crate::bindings;
use crate::index::Index;
#[cfg(MACSEC_BRIDGE_COMPAT)]
use crate::interposer::{Installed, Interposer};
use crate::lockstep::{self, Knowledge, Offload, Op, Port, Scope, SecyState, Verdict, NUM_AN};
use crate::net::device::{Features, NetDevice};
use crate::net::macsec::{self, Context, Mdo, Observer, SecY, SecYRef};
use crate::net::netlink::{GenlMsg, NetlinkSkBuff, GENLMSG_DEFAULT_SIZE};
use crate::net::notifier::{NetdevEvent, NetdevNotifier};
use crate::net::rtnl::{Rtnl, RtnlGuard};
use crate::trace::{self, Cause};
use crate::{netlink, rdma};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::kvec::PushError;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};
use kernel::sync::{aref::ARef, Arc, Mutex};
use kernel::time::msecs_to_jiffies;
use kernel::workqueue::{self, DelayedWork, Work, WorkItem};
use kernel::{
    impl_has_delayed_work, impl_has_work, new_delayed_work, new_mutex, new_work, prelude::*,
};

/// How often, at most, a TX SA deactivated by PN exhaustion goes unseen
/// while no one asks: the interval at which observed SecYs are read again
/// while a port advertises offload.
pub(crate) const REVALIDATE_MS: u32 = 1000;

/// The most GIDs a `partial` port's object lists: with RDMA device names
/// of the longest, the object still fits a default-sized message.
pub(crate) const MAX_GIDS: usize = 16;

/// Where a port's SecY comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Relation {
    /// The port is the MACsec netdev.
    SelfDev,
    /// The port is the real device of the MACsec netdev.
    Upper,
    /// An administrator bound the port to the MACsec netdev, which may be
    /// in another namespace (the DPU split).
    Bound,
}

/// A `bound` port's binding. It holds the MACsec netdev itself, not its
/// ifindex: it follows the device through namespace moves, and a later
/// device with the same ifindex has nothing to do with it.
pub(crate) struct Binding {
    /// The MACsec netdev; `None` once it was unregistered (the binding is
    /// stale until unbound).
    secy: Option<ARef<NetDevice>>,
}

/// Why a `bind` or `unbind` was refused. Nothing changed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BindError {
    /// The port and the SecY are one device.
    ToItself,
    /// The port is a MACsec netdev: it has its own SecY.
    PortIsSecy,
    /// The target is not a MACsec netdev.
    NotSecy,
    /// The port is already bound.
    AlreadyBound,
    /// The port is not bound.
    NotBound,
    /// No memory to track the port.
    NoMemory,
    /// The SecY runs over the port (the port is one of its lower devices,
    /// at any depth): the port's own traffic does not cross it.
    Loop,
    /// The module is unloading: it binds nothing any more.
    Unloading,
}

/// Who owns `NETIF_F_HW_MACSEC` on a port.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Owner {
    /// This module: set iff the port advertises offload.
    Bridge,
    /// The port's driver: never touched.
    Driver,
}

impl Owner {
    /// Who owns `dev`'s bit. On a device with `macsec_ops` (a MACsec-capable
    /// NIC, and every VLAN) the bit says whether the MACsec core may offload
    /// a SecY to it, and the receive path of an offloaded SecY reads it: set
    /// by the module, it would allow offload the driver never allowed;
    /// cleared, it would leave offloaded SecYs without their operations.
    /// Nor is a bit the driver lets users toggle the module's. Anywhere else
    /// the bit is the module's, whoever set it before (a previous load).
    ///
    /// Asked again at every update: nothing is assumed from the moment the
    /// port appeared.
    fn of(dev: &NetDevice) -> Owner {
        if dev.has_macsec_ops() || dev.hw_features().contains(Features::HW_MACSEC) {
            Owner::Driver
        } else {
            Owner::Bridge
        }
    }
}

/// A MACsec netdev.
pub(crate) struct Secy {
    /// The MACsec netdev.
    pub(crate) dev: ARef<NetDevice>,
    /// Its real device.
    lower: Option<ARef<NetDevice>>,
    /// What is known of the SecY.
    pub(crate) known: Knowledge,
    /// SCI (as on the wire) and cipher, once an offload operation showed
    /// them.
    pub(crate) id: Option<(u64, macsec::Cipher)>,
    /// The SecY itself, once an offload operation showed it: read again
    /// for what changes unseen.
    view: Option<SecYRef>,
}

/// The SecYs by netdev, each in its own allocation: a lookup that finds
/// nothing (most events) probes slots of 16 bytes, and tracking a SecY
/// always allocates, so no SecY is tracked without its memory charged.
pub(crate) type Secys = Index<usize, KBox<Secy>>;

/// An RDMA device on a port.
pub(crate) struct RdmaDev {
    /// Its [`rdma::Device::id`]: the device is valid while this is
    /// tracked (it goes in the client's `remove`).
    pub(crate) id: usize,
    /// The device's port that the netdev backs.
    pub(crate) port: u32,
    /// Its name.
    pub(crate) name: KVec<u8>,
}

/// A GID of a port on which RoCE crosses the port's SecY.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gid {
    /// The RDMA device whose table holds it ([`RdmaDev::id`]).
    pub(crate) rdma: usize,
    /// Its index in the table.
    pub(crate) index: u32,
    /// The GID.
    pub(crate) gid: [u8; 16],
}

/// Where the RoCE of a port's RDMA devices leaves, as their GID tables say
/// ([`read_reach`]): what a `self` or `bound` port may claim. The RDMA core
/// gives a port the GIDs of the addresses of every upper device of its
/// netdev (`roce_gid_mgmt.c`: a bond or team it is a slave of, unless it is
/// an inactive one, a VLAN, a macvlan), and RoCE on such a GID leaves
/// through that device (`rxe_net.c`, mlx5's `ib_get_eth_speed` path alike),
/// which may send it around the port's own egress.
#[derive(Default)]
struct Reach {
    /// Read since the port's GID tables or RDMA devices last changed.
    read: bool,
    /// Some RoCE of the port may leave other than through the port's own
    /// netdev: a GID on a device that can send elsewhere, or tables that
    /// could not be read. (An RDMA device whose netdev is no longer the
    /// port's is looked for on every recompute: [`rdma_moved`].)
    escapes: bool,
    /// The GIDs on which RoCE leaves only through the port's own netdev, at
    /// most [`MAX_GIDS`].
    through: KVec<Gid>,
}

/// A port: a netdev that backs an RDMA device.
pub(crate) struct PortEntry {
    /// The netdev.
    pub(crate) dev: ARef<NetDevice>,
    /// The RDMA devices on it.
    pub(crate) rdma: KVec<RdmaDev>,
    /// For a port whose SecY protects what it carries but not all of the
    /// port's RoCE: the GIDs on which RoCE crosses it, read by
    /// [`Bridge::finish`] ([`read_gids`]). Empty otherwise.
    pub(crate) gids: KVec<Gid>,
    /// The RoCE v2 GIDs on the SecY that were there while it was not known
    /// to be offloaded (or when they were first read): never listed.
    stale: KVec<Gid>,
    /// The SecY [`PortEntry::stale`] is about, if it is complete.
    stale_of: Option<usize>,
    /// How many times [`PortEntry::gids`] changed.
    gid_changes: u32,
    /// Where its RoCE leaves, for a `self` or `bound` port.
    reach: Reach,
    /// How many times one of them was renamed (a rename changes the object).
    renames: u32,
    /// The advertised state.
    pub(crate) port: Port,
    /// Where its SecY comes from, if it has one.
    pub(crate) relation: Option<Relation>,
    /// The MACsec netdev of its SecY.
    pub(crate) secy: Option<ARef<NetDevice>>,
    /// Who owns the feature bit.
    pub(crate) owner: Owner,
    /// The binding, for a `bound` port. A bound port stays tracked while
    /// it has no RDMA device (RXE cannot follow its netdev into another
    /// namespace).
    pub(crate) binding: Option<Binding>,
    /// The object's generation: the bridge's clock when it last changed.
    pub(crate) generation: u64,
    /// When the port was tracked: ports are kept by serial in
    /// [`Ports::all`], and a dump resumes after the last serial it sent.
    pub(crate) serial: u64,
    /// The cookie of the namespace it is kept under in [`Ports::order`]:
    /// its published one.
    pub(crate) ns: u64,
    /// The object as last announced (`None` before the first notification).
    last: Option<View>,
    /// Retracted: the next [`Bridge::finish`] announces that, if it changes
    /// the object, then drops the port.
    gone: bool,
    /// In [`Ports::dirty`]: the next [`Bridge::finish`] recomputes it.
    dirty: bool,
    /// Whether it advertised offload when last recomputed (counted in
    /// [`Ports::offloading`]).
    offload: bool,
}

/// The parts of a port's object that a notification reports (and the
/// generation stands for). The last one computed is what readers get
/// ([`PortEntry::published`]): what it says of netdevs (names, ifindexes,
/// namespaces) was read under RTNL, which readers do not take.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct View {
    verdict: Verdict,
    relation: Option<Relation>,
    /// The SecY's ifindex, 0 without one.
    pub(crate) secy: i32,
    id: Option<(u64, macsec::Cipher)>,
    encrypt: Option<bool>,
    owner: Owner,
    pub(crate) ifindex: i32,
    /// The port's name, NUL-padded.
    pub(crate) name: [u8; 16],
    /// The cookies of the port's and the SecY's namespaces: a move changes
    /// the object (its ifindex and `secy-netnsid` are per namespace).
    pub(crate) netns: u64,
    pub(crate) secy_netns: u64,
    /// The id the port's namespace has for the SecY's, if that is another
    /// (allocated when there is none, as rtnetlink does for
    /// `IFLA_LINK_NETNSID`); negative otherwise.
    pub(crate) secy_netnsid: i32,
    /// The RDMA devices on the port: how many, and the sum of their
    /// identities (a device replaced by another changes it).
    rdma: (usize, usize),
    /// Renames of the port's RDMA devices.
    renames: u32,
    /// Changes of the port's protected GIDs.
    gid_changes: u32,
}

impl PortEntry {
    /// The object as last computed (under RTNL): what readers, which take
    /// only the state's mutex, report. Every port has one once the update
    /// that tracked it finished.
    pub(crate) fn published(&self) -> Option<&View> {
        self.last.as_ref()
    }

    /// A port for `dev`, not related to anything yet.
    fn new(dev: &NetDevice) -> PortEntry {
        PortEntry {
            dev: dev.into(),
            rdma: KVec::new(),
            gids: KVec::new(),
            stale: KVec::new(),
            stale_of: None,
            gid_changes: 0,
            reach: Reach::default(),
            renames: 0,
            port: Port::new(Knowledge::Unknown),
            relation: None,
            secy: None,
            owner: Owner::of(dev),
            binding: None,
            generation: 0,
            serial: 0,
            ns: 0,
            last: None,
            gone: false,
            dirty: false,
            offload: false,
        }
    }

    /// Whether the port is still tracked: it backs an RDMA device or is
    /// bound.
    fn wanted(&self) -> bool {
        !self.rdma.is_empty() || self.binding.is_some()
    }
}

/// A netdev's key in the state's indexes: its address. Each index entry's
/// netdev is held by what the entry leads to (a port, a SecY, a binding,
/// an interposer) and the entry goes when that lets go of it, so the
/// address names one device for as long as the entry exists.
pub(crate) fn key(dev: &NetDevice) -> usize {
    dev.as_raw() as usize
}

/// The ports and their indexes.
pub(crate) struct Ports {
    /// Every port, by serial. A gone port stays until the next
    /// [`Bridge::finish`]. Each in its own allocation: the table's slots,
    /// half of them free, stay small.
    pub(crate) all: Index<u64, KBox<PortEntry>>,
    /// The serials of [`Ports::all`] by the namespace each port was last
    /// published in (its cookie), then in the order the ports were
    /// tracked in: a dump walks its namespace's alone, and resumes after
    /// the last serial it sent.
    pub(crate) order: RBTree<(u64, u64), ()>,
    /// The serial of each port that is not gone, by its netdev.
    live: Index<usize, u64>,
    /// (MACsec netdev, serial) of each binding that names one: the ports
    /// bound to a SecY.
    bound: Index<(usize, u64), ()>,
    /// The serials of the ports the current update may have changed, each
    /// once: [`Bridge::finish`] recomputes these and no other. Room for
    /// every port is reserved when it is added, so touching one never
    /// allocates.
    dirty: KVec<u64>,
    /// How many ports advertise offload: while any does, the SecYs are
    /// read again every [`REVALIDATE_MS`].
    offloading: usize,
}

impl Ports {
    /// The port of `dev`, if it is tracked and not gone.
    pub(crate) fn of(&self, dev: &NetDevice) -> Option<&PortEntry> {
        self.all.get(self.live.get(&key(dev))?).map(|e| &**e)
    }

    /// Marks port `serial` for the next [`Bridge::finish`].
    fn touch(&mut self, serial: u64) {
        if let Some(e) = self.all.get_mut(&serial) {
            mark(e, &mut self.dirty);
        }
    }

    /// Runs `f` on every live port whose SecY is the MACsec netdev keyed
    /// `secy` (`lower` keys its real device), and marks every port that
    /// may have it: its own port, its real device's, and the ports bound
    /// to it. O(1) per such port.
    fn of_secy(&mut self, secy: usize, lower: Option<usize>, mut f: impl FnMut(&mut PortEntry)) {
        let Ports {
            all,
            live,
            bound,
            dirty,
            ..
        } = self;
        let mut visit = |serial: u64| {
            if let Some(e) = all.get_mut(&serial) {
                if !e.gone && e.secy.as_deref().map(key) == Some(secy) {
                    f(e);
                }
                mark(e, dirty);
            }
        };
        for d in [Some(secy), lower].into_iter().flatten() {
            if let Some(&s) = live.get(&d) {
                visit(s);
            }
        }
        for s in bound.seconds(secy) {
            visit(s);
        }
    }

    /// Retracts port `serial` and takes it out of the indexes; the next
    /// [`Bridge::finish`] announces that once more and forgets it.
    fn retire(&mut self, serial: u64) {
        let Some(e) = self.all.get_mut(&serial) else {
            return;
        };
        e.port.observe(Knowledge::Unknown);
        e.gone = true;
        let d = key(&e.dev);
        if self.live.get(&d) == Some(&serial) {
            self.live.remove(&d);
        }
        if let Some(Binding { secy: Some(s) }) = &e.binding {
            self.bound.remove(&(key(s), serial));
        }
        mark(e, &mut self.dirty);
    }
}

/// Sorts `v` in place, in O(n log n) with no recursion and no
/// allocation (a heapsort: the core sort's code is more than objtool can
/// follow).
fn heapsort(v: &mut [u64]) {
    fn sift(v: &mut [u64], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift(v, root, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift(v, 0, end);
    }
}

/// Marks `e` for the next [`Bridge::finish`], in the room it reserved.
fn mark(e: &mut PortEntry, dirty: &mut KVec<u64>) {
    if e.dirty {
        return;
    }
    if dirty.push_within_capacity(e.serial).is_ok() {
        e.dirty = true;
    } else {
        // Cannot happen: every port reserved its room when it was added.
        warn_ratelimited!("{}: port not recomputed (no room)\n", e.dev.name());
    }
}

/// The serials in order, the ports and the SecYs ([`State::ports_and_secys`]).
pub(crate) type InOrder<'a> = (
    &'a mut RBTree<(u64, u64), ()>,
    &'a Index<u64, KBox<PortEntry>>,
    &'a Secys,
);

/// Everything the bridge knows.
///
/// An update costs what it touches: ports, SecYs, real devices and
/// interposed devices are indexed by netdev (hash tables: [`Index`]), and
/// only the ports an update marked are recomputed. An event on a netdev
/// that is none of these costs a few O(1) lookups.
pub(crate) struct State {
    /// Set at unload: events are ignored from then on.
    closing: bool,
    /// The last generation handed out. Generations are shared by all ports
    /// and start from the monotonic clock (in ns) at load, so they only
    /// grow, across ports, re-created ports and module reloads alike.
    pub(crate) clock: u64,
    /// The last serial handed to a port.
    serial: u64,
    /// The ports.
    pub(crate) ports: Ports,
    /// Every MACsec netdev, in every namespace, by netdev.
    pub(crate) secys: Secys,
    /// (real device, MACsec netdev) of each SecY that has a real device.
    uppers: Index<(usize, usize), ()>,
    /// The SecYs an offload operation showed ([`Secy::view`]): what
    /// [`reread`] reads again.
    observed: Index<usize, ()>,
    /// A SecY was shown when [`State::observed`] could not grow:
    /// [`reread`] walks every SecY instead.
    observed_lost: bool,
    /// The interposed devices, by netdev.
    #[cfg(MACSEC_BRIDGE_COMPAT)]
    lowers: Index<usize, Installed<Bridge>>,
    /// Room for one feature write per port, reserved when a port is added:
    /// a retraction's bit is written even when nothing can be allocated
    /// (at unload, nothing would write it later). Lent to [`Effects`] by
    /// [`Bridge::finish`] and given back, empty, by [`Bridge::apply`].
    writes: KVec<(ARef<NetDevice>, bool)>,
    /// Port objects the current update recomputed (for the trace).
    visited: u32,
    /// [`State::probes`] when the current update began.
    probes_at_begin: u64,
}

impl State {
    /// The slots every index has examined so far (wrapping).
    fn probes(&self) -> u64 {
        [
            self.ports.all.probes(),
            self.ports.live.probes(),
            self.ports.bound.probes(),
            self.secys.probes(),
            self.uppers.probes(),
            self.observed.probes(),
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            self.lowers.probes(),
        ]
        .into_iter()
        .fold(0, u64::wrapping_add)
    }

    /// An update begins: what [`State::work`] reports counts from here.
    pub(crate) fn begin(&mut self) {
        self.visited = 0;
        self.probes_at_begin = self.probes();
    }

    /// What the current update did, for the trace.
    pub(crate) fn work(&self) -> trace::Work {
        trace::Work {
            visited: self.visited,
            probes: self.probes().wrapping_sub(self.probes_at_begin),
            ports: self.ports.all.len() as u32,
            secys: self.secys.len() as u32,
        }
    }

    /// The SecY of MACsec netdev `dev`.
    pub(crate) fn secy(&self, dev: &NetDevice) -> Option<&Secy> {
        self.secys.get(&key(dev)).map(|s| &**s)
    }

    /// How many ports and SecYs are tracked.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.ports.all.len(), self.secys.len())
    }

    /// The serials in order, the ports and the SecYs: a dump walks the
    /// serials with a cursor, and only a mutable cursor moves (7.3's
    /// `Cursor` only peeks).
    pub(crate) fn ports_and_secys(&mut self) -> InOrder<'_> {
        (&mut self.ports.order, &self.ports.all, &self.secys)
    }

    /// Tracks `dev` as a port, after every other, and returns its serial;
    /// fails if there is no memory (of the caller's memory cgroup: see
    /// [`GROW`]).
    fn add_port(&mut self, dev: &NetDevice) -> Result<u64> {
        let n = self.ports.all.len() + 1;
        let p = &mut self.ports;
        p.dirty.reserve(n.saturating_sub(p.dirty.len()), GROW)?;
        self.writes.reserve(n, GROW)?;
        let in_order = RBTreeNodeReservation::new(GROW)?;
        p.all.reserve(1)?;
        p.live.reserve(1)?;
        let mut e = KBox::new(PortEntry::new(dev), GROW)?;
        self.serial += 1;
        let serial = self.serial;
        e.serial = serial;
        e.ns = dev.net().cookie();
        let ns = e.ns;
        // Neither insertion allocates: the room is reserved.
        if p.all.insert(serial, e).is_err() {
            return Err(ENOMEM);
        }
        let _ = p.live.insert(key(dev), serial);
        p.order.insert(in_order.into_node((ns, serial), ()));
        p.touch(serial);
        Ok(serial)
    }

    /// Tracks MACsec netdev `dev`; fails if there is no memory.
    fn add_secy(&mut self, dev: &NetDevice) -> Result {
        let lower = real_dev(dev);
        self.secys.reserve(1)?;
        let up = lower.as_deref().map(|l| (key(l), key(dev)));
        if up.is_some() {
            self.uppers.reserve(1)?;
        }
        let known = unobserved(dev, lower.as_deref());
        let secy = KBox::new(
            Secy {
                dev: dev.into(),
                lower,
                known,
                id: None,
                view: None,
            },
            GROW,
        )?;
        // Neither insertion allocates: the room is reserved.
        if self.secys.insert(key(dev), secy).is_err() {
            return Err(ENOMEM);
        }
        if let Some(up) = up {
            let _ = self.uppers.insert(up, ());
        }
        Ok(())
    }

    /// The offload operations of `dev` cannot be observed (interposing it
    /// failed at its REGISTER, after a namespace move say): every SecY
    /// stacked over it, whose operations reach its `macsec_ops` (a VLAN's
    /// forward there), is unknown from now on, and its ports claim
    /// nothing. An operation on such a SecY is seen again only once `dev`
    /// is interposed again (at a later REGISTER), and leaves it unsettled
    /// until one settles it (see [`lockstep::learn`]). O(S) SecYs, on a
    /// failure.
    #[cfg(MACSEC_BRIDGE_COMPAT)]
    fn lost_sight(&mut self, rtnl: &Rtnl, dev: &NetDevice) {
        let State { ports, secys, .. } = self;
        for (&d, s) in secys.iter_mut() {
            if !stacked_over(rtnl, &s.dev, dev) {
                continue;
            }
            s.known = Knowledge::Unknown;
            ports.of_secy(d, s.lower.as_deref().map(key), |e| {
                e.port.observe(Knowledge::Unknown);
            });
        }
    }

    /// Marks every port that an event on `dev` may change: its own, and if
    /// it is a SecY or the real device of some, every port of those.
    fn touch_around(&mut self, dev: &NetDevice) {
        let d = key(dev);
        // Its own port and the ports bound to it, tracked as a SecY or not
        // (no memory when it appeared: a bound port still holds it).
        let lower = self.secys.get(&d).and_then(|s| s.lower.as_deref().map(key));
        self.ports.of_secy(d, lower, |_| {});
        for s in self.uppers.seconds(d) {
            self.ports.of_secy(s, Some(d), |_| {});
        }
    }

    /// Marks every port, for what is not tied to one device.
    fn touch_all(&mut self) {
        let Ports { all, dirty, .. } = &mut self.ports;
        for (_, e) in all.iter_mut() {
            mark(e, dirty);
        }
    }
}

/// How the state grows: charged to the memory cgroup of the task whose
/// action made it grow. A SecY is tracked, and a port bound, from the
/// context of whoever created or bound it, and the root of a user
/// namespace may do both at will. The arrays are shared: a growth charges
/// the whole new array to that task's cgroup, so the charge is coarse,
/// but what a container makes the state grow by is never free to it.
const GROW: kernel::alloc::Flags = GFP_KERNEL_ACCOUNT;

/// What a writer does once the state is unlocked.
struct Effects {
    /// Set (`true`) or clear `NETIF_F_HW_MACSEC` on a port: the state's
    /// reserved room ([`State::writes`]).
    features: KVec<(ARef<NetDevice>, bool)>,
    /// A write found no room: the deferred writer is to bring every bit to
    /// what the state says once memory allows.
    retry: bool,
    /// `dev-change-ntf` messages, with the port whose namespace gets them.
    notes: KVec<(ARef<NetDevice>, GenlMsg)>,
    /// Interposers to take off.
    #[cfg(MACSEC_BRIDGE_COMPAT)]
    restore: KVec<Installed<Bridge>>,
    /// Whether a port advertises offload: the SecYs are to be read again
    /// in [`REVALIDATE_MS`].
    revalidate: bool,
}

impl Effects {
    fn new() -> Effects {
        Effects {
            features: KVec::new(),
            notes: KVec::new(),
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            restore: KVec::new(),
            revalidate: false,
            retry: false,
        }
    }

    #[cfg(MACSEC_BRIDGE_COMPAT)]
    /// Takes `i` off once the state is unlocked, or at once if there is no
    /// memory to remember it (an `Installed` must not be dropped under
    /// RTNL: its `Drop` takes RTNL).
    ///
    /// # Safety
    ///
    /// As [`Installed::restore_unlocked`]: RTNL is held, and the caller is
    /// not between two MACsec operations through `i`'s table (it runs in a
    /// notifier for `i`'s own device, or at unload).
    unsafe fn restore(&mut self, rtnl: &Rtnl, i: Installed<Bridge>) {
        if self.restore.reserve(1, GFP_KERNEL).is_ok() {
            // Cannot fail: capacity is reserved.
            let _ = self.restore.push(i, GFP_KERNEL);
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { i.restore_unlocked(rtnl) };
        }
    }
}

/// What the context of an update holds, hence how it may write a port's
/// features and take an interposer off.
pub(crate) enum Locks<'a, 'e> {
    /// RTNL that the caller took itself (a request, the RDMA client, unload,
    /// the deferred writer): it may take one device's instance lock at a
    /// time, and restore interposers.
    Own(&'a mut RtnlGuard),
    /// A netdevice notifier: the core holds RTNL and, for some events, the
    /// event device's instance lock.
    Event(&'a Rtnl, &'a NetdevEvent<'e>),
    /// An offload operation's observer, for operation `Mdo`: the MACsec
    /// core holds RTNL. For every operation but `mdo_upd_secy` it holds no
    /// instance lock: `macsec.c` calls them from generic netlink requests,
    /// rtnetlink operations on the MACsec netdev (which is not ops-locked),
    /// its open and close, and its real device's `NETDEV_UNREGISTER`, which
    /// the core sends with RTNL only. `mdo_upd_secy` also comes from the
    /// MACsec netdev's `ndo_set_mac_address`, which a bond failing over to
    /// it calls, possibly inside the rename of another slave that holds
    /// that slave's instance lock: it is treated as a notifier is.
    Observer(&'a Rtnl, Mdo),
}

impl Locks<'_, '_> {
    /// Sets or clears `NETIF_F_HW_MACSEC` on `dev` if the locks that takes
    /// are held or may be taken here; `false` if the write must be made
    /// elsewhere.
    fn write(&mut self, dev: &NetDevice, set: bool) -> bool {
        let none = Features(0);
        let (s, c) = if set {
            (Features::HW_MACSEC, none)
        } else {
            (none, Features::HW_MACSEC)
        };
        let lock = match self {
            Locks::Own(rtnl) => Some(dev.lock_features(rtnl)),
            Locks::Observer(rtnl, op) if *op != Mdo::UpdSecy => {
                // SAFETY: no instance lock is held for this operation (see
                // `Observer`).
                Some(unsafe { dev.lock_features_unlocked(rtnl) })
            }
            Locks::Observer(rtnl, _) => dev.features_lock_rtnl(rtnl),
            // The event's proof covers the event's device only. A notifier
            // may run inside another device's locked section, so any other
            // device is written here only if RTNL is all it needs.
            Locks::Event(rtnl, ev) if *ev.dev() == *dev => ev.features_lock(rtnl),
            Locks::Event(rtnl, _) => dev.features_lock_rtnl(rtnl),
        };
        lock.map(|l| l.change(s, c)).is_some()
    }
}

/// The deferred writer of feature bits: a work item that takes RTNL and
/// each device's instance lock itself.
#[pin_data]
pub(crate) struct Deferred {
    #[pin]
    work: Work<Deferred>,
}

impl_has_work! {
    impl HasWork<Self> for Deferred { self.work }
}

impl WorkItem for Deferred {
    type Pointer = Arc<Deferred>;

    fn run(_this: Arc<Deferred>) {
        let mut rtnl = Rtnl::lock();
        // Nothing to announce: the state did not change. `finish`, made to
        // look at every port, finds the bits that differ from it, and
        // `apply` writes them.
        with(|b| {
            b.update(
                &mut Locks::Own(&mut rtnl),
                (Cause::Deferred, 0, 0),
                |st, _| st.touch_all(),
            )
        });
    }
}

/// Reads the observed SecYs again every [`REVALIDATE_MS`] while a port
/// advertises offload: a work item that takes RTNL.
#[pin_data]
pub(crate) struct Revalidate {
    #[pin]
    work: DelayedWork<Revalidate>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Revalidate { self.work }
}

impl WorkItem for Revalidate {
    type Pointer = Arc<Revalidate>;

    fn run(_this: Arc<Revalidate>) {
        let mut rtnl = Rtnl::lock();
        // Queues itself again while a port advertises offload.
        with(|b| b.revalidate(&mut rtnl, Cause::Revalidate));
    }
}

/// Reads the GIDs of the ports whose GID tables changed: a work item that
/// takes RTNL. The RDMA core tells of a change with its table's mutex held,
/// and sometimes RTNL ([`rdma::Events::gid_change`]), so the handler only
/// notes the device and queues this.
#[pin_data]
pub(crate) struct GidWork {
    #[pin]
    work: Work<GidWork>,
    /// The devices whose tables changed since the work last took them. A
    /// leaf lock: taken by the event handler (under the table's mutex and
    /// the device's event rwsem, sometimes RTNL) and by the work before it
    /// takes RTNL.
    #[pin]
    changed: Mutex<GidChanges>,
}

/// The RDMA devices whose GID tables changed, by identity.
pub(crate) struct GidChanges {
    ids: KVec<usize>,
    /// A change could not be noted (no memory): every port is read again.
    all: bool,
}

impl GidChanges {
    const fn new() -> GidChanges {
        GidChanges {
            ids: KVec::new(),
            all: false,
        }
    }

    /// Notes that device `id`'s table changed.
    fn note(&mut self, id: usize) {
        if !self.all && !self.ids.contains(&id) && self.ids.push(id, GFP_KERNEL).is_err() {
            self.all = true;
        }
    }

    fn has(&self, r: &RdmaDev) -> bool {
        self.all || self.ids.contains(&r.id)
    }
}

impl_has_work! {
    impl HasWork<Self> for GidWork { self.work }
}

impl WorkItem for GidWork {
    type Pointer = Arc<GidWork>;

    fn run(this: Arc<GidWork>) {
        // A change noted after this queues the work again.
        let changed = core::mem::replace(&mut *this.changed.lock(), GidChanges::new());
        let mut rtnl = Rtnl::lock();
        with(|b| {
            b.update(&mut Locks::Own(&mut rtnl), (Cause::Rdma, 3, 0), |st, _| {
                // Ports are not indexed by RDMA device (see `forget_rdma`):
                // the walk reads no table, only the ports of a changed one do.
                let Ports { all, dirty, .. } = &mut st.ports;
                for (_, e) in all.iter_mut() {
                    if e.rdma.iter().any(|r| changed.has(r)) {
                        e.reach.read = false;
                        mark(e, dirty);
                    }
                }
            })
        });
    }
}

/// The RDMA core's events, for the bridge.
pub(crate) struct GidEvents;

impl rdma::Events for GidEvents {
    fn gid_change(dev: &rdma::Device, _port: u32) {
        with(|b| {
            b.gid_work.changed.lock().note(dev.id());
            // Already queued: that run reads the change too.
            let _ = workqueue::system().enqueue(b.gid_work.clone());
        });
    }
}

/// Reads where the RoCE of `self` or `bound` port `e` leaves, if its GID
/// tables or RDMA devices changed since it was last read; called by
/// [`relate`], under the state's mutex.
///
/// The port's own netdev is the root of its claim: for `self` the SecY
/// itself, for `bound` the device the binding says egresses through the
/// SecY. A GID on the root, or on a VLAN over it, leaves only through it
/// ([`rdma::GidAttr::leaves_through`]); one on a bond, a team or any other
/// upper device may leave through another slave in the clear.
fn read_reach(e: &mut PortEntry) {
    if e.reach.read {
        return;
    }
    let mut through = KVec::new();
    let mut escapes = false;
    let mut read = true;
    for r in e.rdma.iter() {
        // SAFETY: `r` is tracked, so its device's `remove` has not run:
        // that forgets it under the state's mutex, held here.
        let ib = unsafe { rdma::Device::from_id(r.id) };
        let ret = ib.gids(r.port, |a| {
            match a.leaves_through(&e.dev) {
                Some(true) if through.len() < MAX_GIDS => {
                    let g = Gid {
                        rdma: r.id,
                        index: a.index(),
                        gid: a.gid(),
                    };
                    through.push(g, GFP_KERNEL)?;
                }
                Some(false) => escapes = true,
                _ => {}
            }
            Ok(())
        });
        if ret.is_err() {
            read = false;
            break;
        }
    }
    if !read {
        // Unread GIDs may leave anywhere; the next change reads again.
        warn_ratelimited!("{}: out of memory, GIDs not read\n", e.dev.name());
        e.reach = Reach {
            read: false,
            escapes: true,
            through: KVec::new(),
        };
        return;
    }
    e.reach = Reach {
        read: true,
        escapes,
        through,
    };
}

/// Reads again the GIDs on which RoCE crosses port `e`'s SecY, if `e` is
/// an `upper` port, and lists those that are protected; called by
/// [`Bridge::finish`], under the state's mutex, for every port it
/// recomputes.
///
/// A GID is listed while what the SecY carries is protected (as far as the
/// operation in flight allows: [`Port::carried`]), if it is a RoCE v2 GID
/// whose netdev is the SecY itself, and if its entry appeared while the
/// SecY was known to be offloaded. mlx5, the model of `upper`, protects
/// only RoCE v2 GIDs, and only those its `add_gid` saw while the SecY was
/// offloaded: a GID made before (an address kept across the SecY going
/// down for its offload to change) is never protected, and one that was
/// there before the module knew the SecY may not be. Such entries are
/// [`PortEntry::stale`] until they leave the table. RoCE on a VLAN over the
/// SecY crosses it as well, but is not claimed.
///
/// A `self` or `bound` port whose RoCE may leave around the SecY
/// (its scope is partial) lists, on the same condition, the GIDs on which
/// RoCE leaves only through it ([`Reach::through`]): the SecY sends every
/// frame it is given, so none is stale. One whose RoCE all crosses the
/// SecY lists none: it claims the whole port.
fn read_gids(e: &mut PortEntry) {
    if !e.gone && matches!(e.relation, Some(Relation::SelfDev | Relation::Bound)) {
        let mut gids = KVec::new();
        let partial = e.port.scope() == Scope::Partial;
        let (listed, through) = (e.port.carried().protection.is_offload(), &e.reach.through);
        if partial && listed && gids.extend_from_slice(through, GFP_KERNEL).is_err() {
            warn_ratelimited!("{}: out of memory, GIDs not listed\n", e.dev.name());
            gids.clear();
        }
        e.stale = KVec::new();
        e.stale_of = None;
        list_gids(e, gids);
        return;
    }
    let mut on_secy = KVec::new();
    let mut read = true;
    let secy = match (e.gone, e.relation, &e.secy) {
        (false, Some(Relation::Upper), Some(secy)) => Some(secy),
        _ => None,
    };
    if let Some(secy) = secy {
        for r in e.rdma.iter() {
            // SAFETY: `r` is tracked, so its device's `remove` has not
            // run: that forgets it under the state's mutex, held here.
            let ib = unsafe { rdma::Device::from_id(r.id) };
            let ret = ib.gids(r.port, |a| {
                if a.is_roce_v2() && a.is_on(secy) {
                    let g = Gid {
                        rdma: r.id,
                        index: a.index(),
                        gid: a.gid(),
                    };
                    on_secy.push(g, GFP_KERNEL)?;
                }
                Ok(())
            });
            if ret.is_err() {
                read = false;
                break;
            }
        }
    }
    let offloaded = matches!(e.port.known(), Knowledge::Known(s) if s.offload != Offload::Off);
    let mut gids = KVec::new();
    match secy.map(|d| key(d)) {
        _ if !read => {
            // Listing nothing claims nothing; what appears meanwhile is
            // not known to be new.
            warn_ratelimited!("{}: out of memory, GIDs not listed\n", e.dev.name());
            e.stale_of = None;
        }
        None => {
            e.stale = KVec::new();
            e.stale_of = None;
        }
        Some(d) if !offloaded || e.stale_of != Some(d) => {
            e.stale = on_secy;
            e.stale_of = Some(d);
        }
        Some(_) => {
            e.stale.retain(|g| on_secy.contains(g));
            if e.port.carried().protection.is_offload() {
                for g in on_secy
                    .iter()
                    .filter(|g| !e.stale.contains(g))
                    .take(MAX_GIDS)
                {
                    if gids.push(*g, GFP_KERNEL).is_err() {
                        warn_ratelimited!("{}: out of memory, GIDs not listed\n", e.dev.name());
                        gids.clear();
                        break;
                    }
                }
            }
        }
    }
    list_gids(e, gids);
}

/// Whether an RDMA device of port `e` has another netdev now (mlx5's LAG,
/// MANA on a change of uppers, mlx4 on a bond's failover: all by
/// `ib_device_set_netdev()` or their `get_netdev`, which tell clients
/// nothing): its RoCE then leaves through that one. One spinlock per
/// device; called under the state's mutex.
fn rdma_moved(e: &PortEntry) -> bool {
    e.rdma.iter().any(|r| {
        // SAFETY: `r` is tracked, so its device's `remove` has not run:
        // that forgets it under the state's mutex, held here.
        let ib = unsafe { rdma::Device::from_id(r.id) };
        ib.netdev(r.port).as_deref().map(key) != Some(key(&e.dev))
    })
}

/// Makes `gids` port `e`'s listed GIDs; a change changes the object.
fn list_gids(e: &mut PortEntry, gids: KVec<Gid>) {
    if gids[..] != e.gids[..] {
        e.gids = gids;
        e.gid_changes = e.gid_changes.wrapping_add(1);
    }
}

/// Forgets RDMA device `id` on every port, and the ports it alone kept.
/// Every port is looked at: ports are not indexed by RDMA device, which
/// come and go far more rarely than netdev events.
fn forget_rdma(st: &mut State, id: usize) {
    let p = &mut st.ports;
    let mut from = (0, 0);
    while let Some((ns, s)) = p.order.cursor_lower_bound(&from).map(|c| *c.current().0) {
        from = (ns, s + 1);
        let Some(e) = p.all.get_mut(&s) else { break };
        let n = e.rdma.len();
        // In place: nothing to allocate, so nothing else is lost.
        e.rdma.retain(|r| r.id != id);
        if e.rdma.len() != n {
            e.reach.read = false;
        }
        if !e.wanted() && !e.gone {
            // Also a port `rdma_add` made for `id` and could not fill.
            p.retire(s);
        } else if e.rdma.len() != n {
            p.touch(s);
        }
    }
}

/// The real device of MACsec netdev `dev`.
fn real_dev(dev: &NetDevice) -> Option<ARef<NetDevice>> {
    if !dev.is_macsec() {
        return None;
    }
    // SAFETY: `dev` is a valid MACsec netdev, whose private data
    // `macsec_get_real_dev` reads; the result is valid for as long as `dev`
    // holds it, and is turned into a reference of our own at once.
    let raw = unsafe { bindings::macsec_get_real_dev(dev.as_raw()) };
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-null and valid, as above.
    Some(unsafe { NetDevice::from_raw(raw) }.into())
}

/// Whether `upper` is stacked over `dev` at any depth (on it, or on a VLAN
/// or bond over it, and so on), in whatever namespaces they are.
fn stacked_over(_rtnl: &Rtnl, upper: &NetDevice, dev: &NetDevice) -> bool {
    // SAFETY: both devices are valid (the caller's references), and RTNL is
    // held (`_rtnl`), which `netdev_has_upper_dev()` asserts while it walks
    // the adjacency lists of `dev`'s upper devices.
    unsafe { bindings::netdev_has_upper_dev(dev.as_raw(), upper.as_raw()) }
}

/// What is known of MACsec netdev `dev` without having observed it.
///
/// A software SecY is fully described by its netdev states (nothing else of
/// it is observable, see [`lockstep::evaluate`]). An offloaded one existed
/// before the module loaded, or was created under another interposer: its
/// SAs and flags are unknown until an offload operation shows them.
fn unobserved(dev: &NetDevice, lower: Option<&NetDevice>) -> Knowledge {
    // SAFETY: `dev` is a valid MACsec netdev (the caller checked
    // `is_macsec`).
    if unsafe { bindings::macsec_netdev_is_offloaded(dev.as_raw()) } {
        return Knowledge::Unknown;
    }
    Knowledge::Known(SecyState {
        offload: Offload::Off,
        secy_up: dev.is_up(),
        lower_up: lower.is_some_and(lower_up),
        protect: false,
        encrypt: false,
        encoding_sa: 0,
        tx_sa: [None; NUM_AN],
        unsettled: false,
        doubt: 0,
    })
}

fn lower_up(dev: &NetDevice) -> bool {
    dev.is_up() && dev.carrier_ok()
}

/// The SecY as an offload operation sees it at this instant.
fn snapshot(ctx: &Context<'_>) -> SecyState {
    let secy = ctx.secy();
    let links = SecyState {
        offload: match ctx.offload() {
            macsec::Offload::Off => Offload::Off,
            macsec::Offload::Phy => Offload::Phy,
            macsec::Offload::Mac => Offload::Mac,
        },
        secy_up: secy.netdev().is_up(),
        lower_up: lower_up(ctx.lower()),
        protect: false,
        encrypt: false,
        encoding_sa: 0,
        tx_sa: [None; NUM_AN],
        unsettled: false,
        doubt: 0,
    };
    with_flags(links, secy)
}

/// `s` with the flags and TX SAs `secy` has now; its offload mode and
/// links are not the SecY's to say.
fn with_flags(s: SecyState, secy: &SecY) -> SecyState {
    let mut tx_sa = [None; NUM_AN];
    for (an, sa) in tx_sa.iter_mut().enumerate() {
        // An inactive SA counts as absent: only the encoding SA being
        // active matters.
        if secy.tx_sa_active(an as u8) {
            *sa = Some(true);
        }
    }
    SecyState {
        protect: secy.protect_frames(),
        encrypt: secy.encrypt(),
        encoding_sa: secy.encoding_sa(),
        tx_sa,
        ..s
    }
}

/// Reads every observed, offloaded SecY again and lets its ports converge
/// on what changed unseen (a TX SA deactivated by PN exhaustion).
/// O(observed), or O(S) once [`State::observed_lost`].
fn reread(rtnl: &Rtnl, st: &mut State) {
    let State {
        ports,
        secys,
        observed,
        observed_lost,
        ..
    } = st;
    if ports.offloading > 0 {
        // A claiming port whose RDMA device moved with no event at all.
        let Ports { all, dirty, .. } = ports;
        for (_, e) in all.iter_mut() {
            if e.offload && !e.gone && rdma_moved(e) {
                mark(e, dirty);
            }
        }
    }
    if *observed_lost {
        for (&d, s) in secys.iter_mut() {
            reread_one(rtnl, ports, d, s);
        }
    } else {
        for (&d, ()) in observed.iter() {
            if let Some(s) = secys.get_mut(&d) {
                reread_one(rtnl, ports, d, s);
            }
        }
    }
}

/// [`reread`] of SecY `s`, keyed `d`: its flags and TX SAs, and whether it
/// is still offloaded (an offload turned off where the module could not
/// see it, its real device not observed).
fn reread_one(rtnl: &Rtnl, ports: &mut Ports, d: usize, s: &mut Secy) {
    let (Some(view), Knowledge::Known(k)) = (&s.view, s.known) else {
        return;
    };
    if k.offload == Offload::Off {
        return;
    }
    let mut now = with_flags(k, view.get(rtnl));
    // SAFETY: `s.dev` is a MACsec netdev (a tracked SecY), valid by its
    // reference; its offload mode changes only under RTNL, which is held.
    if !unsafe { bindings::macsec_netdev_is_offloaded(s.dev.as_raw()) } {
        now.offload = Offload::Off;
    }
    if now == k {
        return;
    }
    let known = Knowledge::Known(now);
    s.known = known;
    ports.of_secy(d, s.lower.as_deref().map(key), |e| {
        e.port.observe(known);
    });
}

/// The lockstep view of an offload operation.
fn op_of(op: Mdo, ctx: &Context<'_>) -> Op {
    match op {
        Mdo::DevOpen => Op::DevOpen,
        Mdo::DevStop => Op::DevStop,
        Mdo::AddSecy => Op::AddSecy,
        Mdo::UpdSecy => Op::UpdSecy,
        Mdo::DelSecy => Op::DelSecy,
        Mdo::AddTxsa => Op::AddTxsa {
            an: ctx.assoc_num(),
            active: ctx.tx_sa_active(),
        },
        Mdo::UpdTxsa => Op::UpdTxsa {
            an: ctx.assoc_num(),
            active: ctx.tx_sa_active(),
        },
        Mdo::DelTxsa => Op::DelTxsa {
            an: ctx.assoc_num(),
        },
        _ => Op::Other,
    }
}

/// Points port `e` at its SecY and lets it converge on what is known of
/// that SecY.
fn relate(e: &mut PortEntry, secys: &Secys, uppers: &Index<(usize, usize), ()>) {
    let (relation, secy) = if let Some(b) = &e.binding {
        // An administrator's word beats what the topology suggests.
        (Some(Relation::Bound), b.secy.clone())
    } else if e.dev.is_macsec() {
        (Some(Relation::SelfDev), Some(e.dev.clone()))
    } else {
        // The real device of one or more MACsec netdevs (netdevsim allows
        // three): the one in the oldest namespace (the lowest cookie) is
        // named, and within it the lowest ifindex. Ifindexes of different
        // namespaces are never compared.
        match uppers
            .seconds(key(&e.dev))
            .filter_map(|d| secys.get(&d))
            .min_by_key(|s| (s.dev.net().cookie(), s.dev.ifindex()))
        {
            Some(s) => (Some(Relation::Upper), Some(s.dev.clone())),
            None => (None, None),
        }
    };
    e.relation = relation;
    e.secy = secy;
    let known = match &e.secy {
        None if e.binding.is_some() => Knowledge::Stale,
        None => Knowledge::NoSecy,
        Some(d) => secys.get(&key(d)).map_or(Knowledge::Unknown, |s| s.known),
    };
    // An upper SecY carries only the traffic on its own addresses: the
    // RDMA core always gives the port GIDs of its own (the default GID from
    // its MAC), and RoCE on those never crosses the SecY. Any other carries
    // the port's whole egress, which is all of its RoCE unless a GID leaves
    // through a device that can send around it.
    let scope = match e.relation {
        Some(Relation::Upper) => Scope::Partial,
        Some(_) => {
            // Kept while the port advertises offload (a change of its GID
            // tables reads them again: `GidWork`), read afresh whenever a
            // claim may rise: none rests on what the tables held before
            // their last change reached the module. A port partial on what
            // it read stays so. An RDMA device's netdev changes with no
            // event at all: looked for on every recompute.
            let moved = rdma_moved(e);
            let may_rise = lockstep::judge(&known, Scope::Whole)
                .protection
                .is_offload();
            if may_rise && !e.offload && !e.reach.escapes && !moved {
                e.reach.read = false;
            }
            read_reach(e);
            if e.reach.escapes || moved {
                Scope::Partial
            } else {
                Scope::Whole
            }
        }
        None => Scope::Whole,
    };
    e.port.observe_in(known, scope);
}

/// The bridge.
#[pin_data]
pub(crate) struct Bridge {
    #[pin]
    pub(crate) state: Mutex<State>,
    /// The writer of the feature bits no update could write itself.
    deferred: Arc<Deferred>,
    /// The periodic re-read of the SecYs.
    revalidate: Arc<Revalidate>,
    /// The re-read of GIDs after a GID table changed.
    gid_work: Arc<GidWork>,
    /// The handler of each tracked RDMA device's events, by its identity.
    /// Taken without RTNL: registering and unregistering a handler waits
    /// for running handlers, which the RDMA core may call with RTNL held.
    #[pin]
    handlers: Mutex<RBTree<usize, Pin<KBox<rdma::EventHandler<GidEvents>>>>>,
}

/// The bridge, published for the RDMA client and the family, whose
/// callbacks get no context of their own.
static BRIDGE: AtomicPtr<Bridge> = AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the published bridge, if any.
pub(crate) fn with<R>(f: impl FnOnce(&Bridge) -> R) -> Option<R> {
    let ptr = BRIDGE.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-null `BRIDGE` holds a reference from `Arc::into_raw`
    // (`publish`). `unpublish` releases it only after the RDMA client is
    // unregistered (with it every device's GID event handler) and the
    // deferred writer, the periodic re-read and the re-read of GIDs are
    // flushed (no port or handler is left to queue them again), and the
    // module's own reference outlives every family request (the family is
    // unregistered before `state` is dropped).
    Some(f(unsafe { &*ptr }))
}

impl Bridge {
    /// A bridge that tracks nothing yet.
    pub(crate) fn new() -> Result<Arc<Bridge>> {
        let deferred = Arc::pin_init(
            pin_init!(Deferred {
                work <- new_work!("macsec_bridge:deferred"),
            }),
            GFP_KERNEL,
        )?;
        let revalidate = Arc::pin_init(
            pin_init!(Revalidate {
                work <- new_delayed_work!("macsec_bridge:revalidate"),
            }),
            GFP_KERNEL,
        )?;
        let gid_work = Arc::pin_init(
            pin_init!(GidWork {
                work <- new_work!("macsec_bridge:gids"),
                changed <- new_mutex!(GidChanges::new(), "macsec_bridge:gid_changes"),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `ktime_get` has no preconditions.
        let now = unsafe { bindings::ktime_get() };
        Arc::pin_init(
            pin_init!(Bridge {
                state <- new_mutex!(
                    State {
                        closing: false,
                        clock: now as u64,
                        serial: 0,
                        ports: Ports {
                            all: Index::new(GROW),
                            order: RBTree::new(),
                            live: Index::new(GROW),
                            bound: Index::new(GROW),
                            dirty: KVec::new(),
                            offloading: 0,
                        },
                        secys: Index::new(GROW),
                        uppers: Index::new(GROW),
                        observed: Index::new(GROW),
                        observed_lost: false,
                        #[cfg(MACSEC_BRIDGE_COMPAT)]
                        lowers: Index::new(GROW),
                        writes: KVec::new(),
                        visited: 0,
                        probes_at_begin: 0,
                    },
                    "macsec_bridge:state"
                ),
                deferred,
                revalidate,
                gid_work,
                handlers <- new_mutex!(RBTree::new(), "macsec_bridge:handlers"),
            }),
            GFP_KERNEL,
        )
    }

    /// Makes `this` reachable from [`with`].
    pub(crate) fn publish(this: &Arc<Bridge>) {
        let raw = Arc::into_raw(this.clone());
        BRIDGE.store(raw.cast_mut(), Ordering::Release);
    }

    /// Undoes [`Bridge::publish`].
    pub(crate) fn unpublish() {
        let raw = BRIDGE.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: `raw` came from `Arc::into_raw` in `publish`.
            drop(unsafe { Arc::from_raw(raw) });
        }
    }

    /// Follows the GID tables of RDMA device `ib`, which is being added.
    /// Called without RTNL, before [`Bridge::rdma_add`]: a change made after
    /// the latter read the tables is then told.
    ///
    /// # Safety
    ///
    /// `ib` was given to the RDMA client's `add`, and [`Bridge::unfollow_gids`]
    /// is called for it before its `remove` returns, or before `add`
    /// returns failure.
    pub(crate) unsafe fn follow_gids(&self, ib: &rdma::Device) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?;
        // SAFETY: the handler goes in `unfollow_gids`, before `ib` does
        // (the caller's guarantee).
        let h = KBox::pin_init(unsafe { rdma::EventHandler::new(ib) }, GFP_KERNEL)?;
        let old = self.handlers.lock().insert(node.into_node(ib.id(), h));
        // Not there before: `add` comes once per device.
        drop(old);
        Ok(())
    }

    /// Stops following `ib`'s GID tables. Called without RTNL.
    pub(crate) fn unfollow_gids(&self, ib: &rdma::Device) {
        let h = self.handlers.lock().remove(&ib.id());
        // Unregistered here, outside the lock: this waits for a running
        // handler.
        drop(h);
    }

    /// Waits for a re-read of GIDs, queued or running, to finish. Called
    /// without RTNL, which it takes, once no device's handler is left to
    /// queue it again.
    pub(crate) fn flush_gids(&self) {
        // SAFETY: the work item is valid and initialised (it lives in an
        // `Arc` that `self` holds), and `flush_work` may sleep: the caller
        // is in process context without RTNL.
        unsafe { bindings::flush_work(Work::raw_get(&self.gid_work.work)) };
    }

    /// Waits for a deferred feature write, queued or running, to finish.
    /// Called without RTNL, which the writer takes.
    pub(crate) fn flush_deferred(&self) {
        // SAFETY: the work item is valid and initialised (it lives in an
        // `Arc` that `self` holds), and `flush_work` may sleep: the caller
        // is in process context without RTNL.
        unsafe { bindings::flush_work(Work::raw_get(&self.deferred.work)) };
    }

    /// Runs a queued periodic re-read now and waits for it, or for one
    /// that is running. Called without RTNL, which the re-read takes, once
    /// the bridge is closed: the run finds no port and queues itself no
    /// more. (Flushed, not cancelled: a queued item holds a reference to
    /// its `Arc` that only its run gives back.)
    pub(crate) fn flush_revalidate(&self) {
        let dwork: *const DelayedWork<Revalidate> = &self.revalidate.work;
        // SAFETY: `dwork` is a valid, initialised delayed work item (it
        // lives in an `Arc` that `self` holds), so its `work_struct` is the
        // `work` of a `delayed_work`; the caller is in process context
        // without RTNL, as the wait for a running re-read needs.
        unsafe {
            let work = Work::raw_get(DelayedWork::raw_as_work(dwork));
            bindings::flush_delayed_work(kernel::container_of!(work, bindings::delayed_work, work));
        }
    }

    /// Reads the observed SecYs again (see [`reread`]), then announces and
    /// applies what changed: the periodic re-read.
    pub(crate) fn revalidate(&self, rtnl: &mut RtnlGuard, cause: Cause) {
        let mut span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            span.locked();
            st.begin();
            if !st.closing {
                reread(rtnl, &mut st);
            }
            self.finish(&mut st, &mut fx);
            work = st.work();
        }
        span.unlocked();
        self.apply(&mut Locks::Own(rtnl), fx);
        span.end(cause, 0, 0, work);
    }

    /// Runs `f` on the state, then announces and applies what changed.
    /// `at` is what the trace reports: the cause, its code and device.
    fn update(
        &self,
        locks: &mut Locks<'_, '_>,
        at: (Cause, u32, i32),
        f: impl FnOnce(&mut State, &mut Effects),
    ) {
        let mut span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            span.locked();
            st.begin();
            if !st.closing {
                f(&mut st, &mut fx);
            }
            self.finish(&mut st, &mut fx);
            work = st.work();
        }
        span.unlocked();
        self.apply(locks, fx);
        span.end(at.0, at.1, at.2, work);
    }

    /// Recomputes the ports the update marked (in the order they were
    /// tracked), collects the feature changes and notifications they call
    /// for, and drops the ports that are gone.
    fn finish(&self, st: &mut State, fx: &mut Effects) {
        let State {
            ports,
            secys,
            uppers,
            clock,
            writes,
            visited,
            ..
        } = st;
        fx.features = core::mem::take(writes);
        let mut dirty = core::mem::take(&mut ports.dirty);
        heapsort(&mut dirty);
        for &serial in dirty.iter() {
            let Some(e) = ports.all.get_mut(&serial) else {
                continue;
            };
            *visited += 1;
            e.dirty = false;
            if !e.gone {
                relate(e, secys, uppers);
            }
            let offload = !e.gone && e.port.advertised().protection.is_offload();
            if offload != e.offload {
                e.offload = offload;
                if offload {
                    ports.offloading += 1;
                } else {
                    ports.offloading -= 1;
                }
            }
            if e.gone && e.last.is_none() {
                // Never announced (an RDMA device that could not be
                // tracked): nothing to retract.
                ports.order.remove(&(e.ns, serial));
                ports.all.remove(&serial);
                continue;
            }
            e.owner = Owner::of(&e.dev);
            if e.owner == Owner::Bridge && e.dev.is_registered() {
                let want = offload;
                if want != e.dev.features().contains(Features::HW_MACSEC) {
                    // Within the reserved room; past it only if a port
                    // could not reserve its share, which then costs a
                    // retry, never a bit left set.
                    if let Err(PushError((dev, set))) =
                        fx.features.push_within_capacity((e.dev.clone(), want))
                    {
                        if fx.features.push((dev, set), GFP_KERNEL).is_err() {
                            warn_ratelimited!(
                                "{}: out of memory, feature bit deferred\n",
                                e.dev.name()
                            );
                            fx.retry = true;
                        }
                    }
                }
            }
            read_gids(e);
            let view = view(e, secys);
            if view.netns != e.ns {
                // It moved: dumps in its new namespace list it from now on.
                // The node is reused: nothing to allocate.
                if let Some(n) = ports.order.remove_node(&(e.ns, serial)) {
                    let n = n.into_reservation().into_node((view.netns, serial), ());
                    ports.order.insert(n);
                }
                e.ns = view.netns;
            }
            if e.last != Some(view) {
                *clock += 1;
                e.generation = *clock;
                e.last = Some(view);
                trace::announce(
                    view.ifindex,
                    e.generation,
                    netlink::protection(view.verdict.protection),
                    netlink::reason(view.verdict.reason),
                );
                if netlink::FAMILY.has_listeners_in(e.dev.net(), netlink::MCGRP_MONITOR) {
                    let note = NetlinkSkBuff::new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL)
                        .and_then(|skb| {
                            skb.genlmsg_put(0, 0, &netlink::FAMILY, netlink::CMD_DEV_CHANGE_NTF)
                        })
                        .map_err(Error::from);
                    let fill = |m: GenlMsg| netlink::fill(&m, e, secys).map(|()| m);
                    let sent = match note.and_then(fill) {
                        Ok(m) => fx.notes.push((e.dev.clone(), m), GFP_KERNEL).is_ok(),
                        Err(_) => false,
                    };
                    if !sent {
                        // No memory for it: its listeners must not go on
                        // believing what it changed (a retraction, say).
                        // Their next read fails with ENOBUFS, and they dump
                        // again; that allocates nothing.
                        warn_ratelimited!("{}: notification dropped\n", e.dev.name());
                        netlink::FAMILY.set_err_in(e.dev.net(), netlink::MCGRP_MONITOR, ENOBUFS);
                    }
                }
            }
            if e.gone {
                ports.order.remove(&(e.ns, serial));
                ports.all.remove(&serial);
            }
        }
        // The room goes back, empty, for the next update.
        dirty.clear();
        ports.dirty = dirty;
        fx.revalidate = ports.offloading > 0;
    }

    /// Applies what [`Bridge::finish`] collected. Called with RTNL held and
    /// the state unlocked.
    fn apply(&self, locks: &mut Locks<'_, '_>, mut fx: Effects) {
        // Notifications first: a feature change re-enters the notifier, and
        // anything announced from there must come after what led to it.
        for (dev, msg) in fx.notes.into_iter() {
            // A full socket buffer: netlink semantics.
            let _ = msg.multicast_netns(
                &netlink::FAMILY,
                dev.net(),
                0,
                netlink::MCGRP_MONITOR,
                GFP_KERNEL,
            );
        }
        let mut deferred = fx.retry;
        for (dev, set) in fx.features.drain_all() {
            // Already written by an update nested in an earlier write (the
            // feature change re-enters the notifier, which brings every
            // port to the state).
            if dev.features().contains(Features::HW_MACSEC) == set {
                continue;
            }
            let written = locks.write(&dev, set);
            trace::feature(dev.ifindex(), set, written);
            deferred |= !written;
        }
        // The room goes back, empty, for the next update.
        let mut st = self.state.lock();
        if fx.features.capacity() > st.writes.capacity() {
            st.writes = core::mem::take(&mut fx.features);
        }
        drop(st);
        if deferred {
            // Already queued: that run writes this bit too.
            let _ = workqueue::system().enqueue(self.deferred.clone());
        }
        if fx.revalidate {
            // Already queued: that run comes soon enough.
            let _ = workqueue::system()
                .enqueue_delayed(self.revalidate.clone(), msecs_to_jiffies(REVALIDATE_MS));
        }
        #[cfg(MACSEC_BRIDGE_COMPAT)]
        for installed in fx.restore.into_iter() {
            match locks {
                Locks::Own(rtnl) => installed.restore(rtnl),
                // SAFETY: only the notifier for the interposed device itself
                // (its registration failing to be recorded, or its
                // unregistration) queues a restore (`Effects::restore`).
                Locks::Event(rtnl, _) => unsafe { installed.restore_unlocked(rtnl) },
                // Observers never queue one; were one queued, it stays
                // installed, and recorded, until the device goes away.
                Locks::Observer(..) => {
                    if let Err(i) = record(&mut self.state.lock().lowers, installed) {
                        pr_err!("interposer dropped under RTNL: leaked\n");
                        core::mem::forget(i);
                    }
                }
            }
        }
    }

    /// A device appeared: observe its `macsec_ops` (on a kernel without the
    /// offload notifier), and track it if it is a MACsec netdev.
    fn registered(this: &Arc<Bridge>, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        this.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx| {
            // The offload notifier announces every device's operations.
            #[cfg(not(MACSEC_BRIDGE_COMPAT))]
            let _ = fx;
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            match Interposer::install(rtnl, dev, this.clone()) {
                Ok(i) => {
                    if let Err(i) = record(&mut st.lowers, i) {
                        warn_ratelimited!("{}: out of memory, offload not observed\n", dev.name());
                        // SAFETY: this is the device's own REGISTER, and
                        // its table was installed just now.
                        unsafe { fx.restore(rtnl, i) };
                        st.lost_sight(rtnl, dev);
                    }
                }
                Err(e) if e == EOPNOTSUPP => {}
                Err(e) => {
                    warn_ratelimited!(
                        "{}: cannot observe its MACsec offload ({:?}): its SecYs are unknown\n",
                        dev.name(),
                        e
                    );
                    st.lost_sight(rtnl, dev);
                }
            }
            if dev.is_macsec() && st.secy(dev).is_none() && st.add_secy(dev).is_err() {
                warn_ratelimited!("{}: out of memory, SecY not tracked\n", dev.name());
            }
            st.touch_around(dev);
        });
    }

    /// A device is being unregistered, or leaves its namespace.
    fn unregistered(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx| {
            let d = key(dev);
            // With the offload notifier nothing is on the device to take off.
            #[cfg(not(MACSEC_BRIDGE_COMPAT))]
            let _ = fx;
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            if let Some(i) = st.lowers.remove(&d) {
                // SAFETY: this is the device's own UNREGISTER.
                unsafe { fx.restore(rtnl, i) };
            }
            // Before the indexes forget the device: its ports.
            st.touch_around(dev);
            // A device leaving for another namespace keeps its identity:
            // a port stays tracked, a SecY stays known and bound. One going
            // away is forgotten, and no reference to it is kept.
            if !dev.is_registered() {
                if let Some(s) = st.secys.remove(&d) {
                    st.observed.remove(&d);
                    if let Some(l) = &s.lower {
                        st.uppers.remove(&(key(l), d));
                    }
                }
                if let Some(&serial) = st.ports.live.get(&d) {
                    st.ports.retire(serial);
                }
                let p = &mut st.ports;
                while let Some(serial) = p.bound.first(d) {
                    p.bound.remove(&(d, serial));
                    if let Some(b) = p.all.get_mut(&serial).and_then(|e| e.binding.as_mut()) {
                        b.secy = None;
                    }
                    p.touch(serial);
                }
            }
        });
    }

    /// `dev` changed state: is it a SecY or the real device of one?
    /// `going` is for `NETDEV_GOING_DOWN`: retract now, the state follows
    /// with `NETDEV_DOWN`.
    fn link(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice, going: bool) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _| {
            let d = key(dev);
            st.touch_around(dev);
            // The SecY itself, then each SecY it is the real device of.
            let State {
                ports,
                secys,
                uppers,
                ..
            } = &mut *st;
            for s in Iterator::chain(core::iter::once(d), uppers.seconds(d)) {
                let Some(s) = secys.get_mut(&s) else {
                    continue;
                };
                if let Knowledge::Known(mut k) = s.known {
                    if *s.dev == *dev {
                        k.secy_up = !going && dev.is_up();
                    } else {
                        k.lower_up = !going && lower_up(dev);
                    }
                    let k = Knowledge::Known(k);
                    if !going {
                        s.known = k;
                    }
                    // GOING_DOWN opens a teardown, DOWN (or anything else)
                    // closes it.
                    ports.of_secy(key(&s.dev), s.lower.as_deref().map(key), |e| {
                        if going {
                            e.port.before(&k);
                        } else {
                            e.port.after(k);
                        }
                    });
                }
            }
        });
    }

    /// An RDMA device appeared: track the netdevs of its ports.
    pub(crate) fn rdma_add(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) -> Result {
        let mut ret = Ok(());
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 0, 0), |st, _| {
            // On failure the RDMA core will not call `rdma_remove`: nothing
            // of the device may stay.
            ret = (|| -> Result {
                for p in ib.ports() {
                    let Some(dev) = ib.netdev(p) else { continue };
                    let serial = match st.ports.live.get(&key(&dev)) {
                        Some(&s) => s,
                        None => st.add_port(&dev)?,
                    };
                    let Some(e) = st.ports.all.get_mut(&serial) else {
                        return Err(EINVAL);
                    };
                    if !e.rdma.iter().any(|r| r.id == ib.id()) {
                        let mut name = KVec::new();
                        name.extend_from_slice(ib.name().to_bytes(), GFP_KERNEL)?;
                        let r = RdmaDev {
                            id: ib.id(),
                            port: p,
                            name,
                        };
                        e.rdma.push(r, GFP_KERNEL)?;
                        e.reach.read = false;
                    }
                    st.ports.touch(serial);
                }
                Ok(())
            })();
            if ret.is_err() {
                forget_rdma(st, ib.id());
            }
        });
        ret
    }

    /// An RDMA device goes away.
    pub(crate) fn rdma_remove(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) {
        let at = (Cause::Rdma, 1, 0);
        self.update(&mut Locks::Own(rtnl), at, |st, _| forget_rdma(st, ib.id()));
    }

    /// An RDMA device was renamed: its ports report the new name. Every
    /// port is looked at (see [`forget_rdma`]).
    pub(crate) fn rdma_rename(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) {
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 2, 0), |st, _| {
            let Ports { all, dirty, .. } = &mut st.ports;
            for (_, e) in all.iter_mut() {
                let mut renamed = false;
                for RdmaDev { name, .. } in e.rdma.iter_mut().filter(|r| r.id == ib.id()) {
                    let mut new = KVec::new();
                    if new
                        .extend_from_slice(ib.name().to_bytes(), GFP_KERNEL)
                        .is_err()
                    {
                        // The old name stays: stale, but not wrong about
                        // protection.
                        warn_ratelimited!("out of memory: RDMA device {:?} renamed\n", ib.name());
                        continue;
                    }
                    *name = new;
                    renamed = true;
                }
                if renamed {
                    e.renames = e.renames.wrapping_add(1);
                    mark(e, dirty);
                }
            }
        });
    }

    /// Binds port `dev` to MACsec netdev `secy` (relation `bound`). The
    /// caller checked that it holds the host's authority.
    pub(crate) fn bind(
        &self,
        rtnl: &mut RtnlGuard,
        dev: &NetDevice,
        secy: &NetDevice,
    ) -> Result<(), BindError> {
        if dev == secy {
            return Err(BindError::ToItself);
        }
        if dev.is_macsec() {
            return Err(BindError::PortIsSecy);
        }
        if !secy.is_macsec() {
            return Err(BindError::NotSecy);
        }
        if stacked_over(rtnl, secy, dev) {
            return Err(BindError::Loop);
        }
        // Left so if the bridge is closing (the update then runs nothing).
        let mut ret = Err(BindError::Unloading);
        let at = (Cause::Request, netlink::CMD_BIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _| {
            ret = (|| {
                let live = st.ports.live.get(&key(dev)).copied();
                if live
                    .and_then(|s| st.ports.all.get(&s))
                    .is_some_and(|e| e.binding.is_some())
                {
                    return Err(BindError::AlreadyBound);
                }
                st.ports.bound.reserve(1).map_err(|_| BindError::NoMemory)?;
                let binding = Binding {
                    secy: Some(secy.into()),
                };
                let serial = match live {
                    Some(s) => s,
                    None => st.add_port(dev).map_err(|_| BindError::NoMemory)?,
                };
                let p = &mut st.ports;
                let e = p.all.get_mut(&serial).ok_or(BindError::NoMemory)?;
                e.binding = Some(binding);
                // Does not allocate: the room is reserved.
                let _ = p.bound.insert((key(secy), serial), ());
                p.touch(serial);
                Ok(())
            })();
        });
        ret
    }

    /// Undoes [`Bridge::bind`]: the port falls back to what the topology
    /// says, or is forgotten if it backs no RDMA device.
    pub(crate) fn unbind(&self, rtnl: &mut RtnlGuard, dev: &NetDevice) -> Result<(), BindError> {
        // Left so if the bridge is closing (the update then runs nothing).
        let mut ret = Err(BindError::Unloading);
        let at = (Cause::Request, netlink::CMD_UNBIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _| {
            ret = Err(BindError::NotBound);
            let p = &mut st.ports;
            let Some(&serial) = p.live.get(&key(dev)) else {
                return;
            };
            let Some(e) = p.all.get_mut(&serial) else {
                return;
            };
            let Some(b) = e.binding.take() else {
                return;
            };
            ret = Ok(());
            let wanted = e.wanted();
            if let Some(s) = &b.secy {
                p.bound.remove(&(key(s), serial));
            }
            if wanted {
                p.touch(serial);
            } else {
                p.retire(serial);
            }
        });
        ret
    }

    /// Retracts everything, takes every interposer off and ignores events
    /// from now on.
    pub(crate) fn shutdown(&self, rtnl: &mut RtnlGuard) {
        let mut span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            span.locked();
            st.begin();
            st.closing = true;
            let mut from = (0, 0);
            while let Some((ns, s)) = st
                .ports
                .order
                .cursor_lower_bound(&from)
                .map(|c| *c.current().0)
            {
                st.ports.retire(s);
                from = (ns, s + 1);
            }
            self.finish(&mut st, &mut fx);
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            for (_, i) in st.lowers.drain() {
                // SAFETY: RTNL is held, and no MACsec operation is in
                // progress: this is unload, not an observer.
                unsafe { fx.restore(rtnl, i) };
            }
            work = st.work();
            st.uppers = Index::new(GROW);
            st.observed = Index::new(GROW);
            st.secys = Index::new(GROW);
        }
        span.unlocked();
        self.apply(&mut Locks::Own(rtnl), fx);
        span.end(Cause::Unload, 0, 0, work);
    }

    /// How many ports and SecYs are tracked.
    pub(crate) fn counts(&self) -> (usize, usize) {
        self.state.lock().counts()
    }
}

#[cfg(MACSEC_BRIDGE_COMPAT)]
/// Records interposer `i` by its device; gives it back if there is no
/// memory (it must not be dropped under RTNL: see [`Effects::restore`]).
fn record(
    lowers: &mut Index<usize, Installed<Bridge>>,
    i: Installed<Bridge>,
) -> Result<(), Installed<Bridge>> {
    let Some(d) = i.device().map(key) else {
        return Err(i);
    };
    // One interposer per device (`Interposer::install` refuses a second,
    // and UNREGISTER takes it off): were one there, `i` goes back.
    if lowers.get(&d).is_some() {
        return Err(i);
    }
    lowers.insert(d, i).map(|_| ()).map_err(|(_, i)| i)
}

/// The port's object as a notification would report it.
fn view(e: &PortEntry, secys: &Secys) -> View {
    let secy = e.secy.as_ref().and_then(|d| secys.get(&key(d)));
    let mut name = [0u8; 16];
    let n = e.dev.name().to_bytes();
    let len = n.len().min(name.len() - 1);
    name[..len].copy_from_slice(&n[..len]);
    View {
        verdict: e.port.advertised(),
        relation: e.relation,
        secy: e.secy.as_ref().map_or(0, |d| d.ifindex()),
        id: secy.and_then(|s| s.id),
        encrypt: secy.and_then(|s| advertised_encrypt(e, s)),
        owner: e.owner,
        ifindex: e.dev.ifindex(),
        name,
        netns: e.dev.net().cookie(),
        rdma: e
            .rdma
            .iter()
            .fold((0, 0), |(n, sum), r| (n + 1, sum.wrapping_add(r.id))),
        renames: e.renames,
        gid_changes: e.gid_changes,
        secy_netns: e.secy.as_ref().map_or(0, |d| d.net().cookie()),
        // Readers are always in the port's namespace (a dump lists the
        // caller's, `dev-get` looks its ifindex up there).
        secy_netnsid: e.secy.as_ref().map_or(-1, |d| e.dev.net().peer_id(d.net())),
    }
}

/// `encrypt` of an observed, offloaded SecY.
pub(crate) fn encrypt(k: &Knowledge) -> Option<bool> {
    match k {
        Knowledge::Known(s) if s.offload != Offload::Off => Some(s.encrypt),
        _ => None,
    }
}

/// `encrypt` as port `e`'s object reports it, `s` being its SecY: no more
/// than the operation in flight leads to, as for the verdict. `encrypt
/// off` reads off, and an offload being taken away reads as none, from the
/// retraction on: the object never says encrypt-off (or offload-off) and
/// encrypt true at once, and the operation's success changes nothing more.
pub(crate) fn advertised_encrypt(e: &PortEntry, s: &Secy) -> Option<bool> {
    let known = encrypt(&s.known);
    match e.port.pending() {
        Some(p) => known.zip(encrypt(&p)).map(|(k, p)| k && p),
        None => known,
    }
}

#[vtable]
impl Observer for Bridge {
    fn before(&self, rtnl: &Rtnl, mdo: Mdo, ctx: &Context<'_>) {
        let op = op_of(mdo, ctx);
        if op == Op::Other {
            return;
        }
        let next = Knowledge::Known(lockstep::in_flight(snapshot(ctx), op));
        let secy = ctx.secy().netdev();
        let lower = key(ctx.lower());
        let at = (Cause::OpBefore, mdo as u32, secy.ifindex());
        self.update(&mut Locks::Observer(rtnl, mdo), at, |st, _| {
            st.ports.of_secy(key(secy), Some(lower), |e| {
                e.port.before(&next);
            });
        });
    }

    fn after(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result) {
        if op == Mdo::UpdOffload {
            // A change of the offload mode: the SecY operation it made was
            // announced on its own, and this context holds the mode that
            // operation ran in, not the one now in force.
            return;
        }
        // Also for statistics requests (`ip macsec show`): every operation
        // shows the whole SecY, which is how a SecY configured before the
        // module loaded gets known (unsettled until an operation settles
        // the driver: see `lockstep::learn`). On failure macsec.c puts the
        // SecY back as it was, except where it goes on regardless; the
        // driver's state is unsettled either way.
        let lop = op_of(op, ctx);
        let ok = ret.is_ok();
        let seen = snapshot(ctx);
        let secy = ctx.secy();
        let dev = secy.netdev();
        let lower = key(ctx.lower());
        let at = (Cause::OpAfter, op as u32, dev.ifindex());
        self.update(&mut Locks::Observer(rtnl, op), at, |st, _| {
            let State {
                ports,
                secys,
                observed,
                observed_lost,
                ..
            } = st;
            let Some(s) = secys.get_mut(&key(dev)) else {
                // Not tracked (no memory when it appeared): nothing is
                // learnt, but its ports are no longer held down by the
                // operation (an operation with no `before` held none).
                if lop != Op::Other {
                    ports.of_secy(key(dev), Some(lower), |e| {
                        let known = e.port.known();
                        e.port.after(known);
                    });
                }
                return;
            };
            let id = Some((secy.sci(), secy.cipher()));
            let known = lockstep::learn(s.known, seen, lop, ok);
            if lop == Op::Other && (!ok || (s.known == known && s.id == id && s.view.is_some())) {
                // Nothing learnt and nothing in flight: a statistics
                // request costs this lookup.
                return;
            }
            s.known = known;
            if ok || lop.done_even_if_failed() {
                s.id = id;
                if s.view.is_none() {
                    s.view = Some(secy.to_ref());
                    if observed.insert(key(dev), ()).is_err() {
                        warn_ratelimited!(
                            "{}: out of memory, every SecY read again from now on\n",
                            dev.name()
                        );
                        *observed_lost = true;
                    }
                }
            }
            ports.of_secy(key(dev), Some(lower), |e| {
                e.port.after(known);
            });
        });
    }
}

/// What the trace reports of an event: its `NETDEV_*` number and device.
fn at(ev: &NetdevEvent<'_>) -> (Cause, u32, i32) {
    let code = match ev {
        NetdevEvent::Register(_) => bindings::netdev_cmd_NETDEV_REGISTER,
        NetdevEvent::Unregister(_) => bindings::netdev_cmd_NETDEV_UNREGISTER,
        NetdevEvent::Up(_) => bindings::netdev_cmd_NETDEV_UP,
        NetdevEvent::GoingDown(_) => bindings::netdev_cmd_NETDEV_GOING_DOWN,
        NetdevEvent::Down(_) => bindings::netdev_cmd_NETDEV_DOWN,
        NetdevEvent::Change(_) => bindings::netdev_cmd_NETDEV_CHANGE,
        NetdevEvent::FeatChange(_) => bindings::netdev_cmd_NETDEV_FEAT_CHANGE,
        NetdevEvent::ChangeName(_) => bindings::netdev_cmd_NETDEV_CHANGENAME,
        NetdevEvent::ChangeUpper { .. } => bindings::netdev_cmd_NETDEV_CHANGEUPPER,
        NetdevEvent::Other(code, _) => *code,
    };
    (Cause::Event, code, ev.dev().ifindex())
}

/// The netdevice notifier's side of the bridge.
pub(crate) struct Events(pub(crate) Arc<Bridge>);

/// The MACsec core's offload notifier delivers to the bridge.
#[vtable]
impl Observer for Events {
    fn before(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>) {
        self.0.before(rtnl, op, ctx)
    }

    fn after(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result) {
        self.0.after(rtnl, op, ctx, ret)
    }
}

impl NetdevNotifier for Events {
    fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>) {
        let b = &self.0;
        let ev = &event;
        match event {
            NetdevEvent::Register(dev) => Bridge::registered(b, rtnl, ev, dev),
            NetdevEvent::Unregister(dev) => b.unregistered(rtnl, ev, dev),
            NetdevEvent::GoingDown(dev) => b.link(rtnl, ev, dev, true),
            NetdevEvent::Up(dev) | NetdevEvent::Down(dev) | NetdevEvent::Change(dev) => {
                b.link(rtnl, ev, dev, false)
            }
            // The port's name or its SecY may have changed; a stripped
            // feature bit is put back by `finish`.
            NetdevEvent::ChangeUpper { dev, upper, .. } => {
                b.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _| {
                    st.touch_around(dev);
                    st.touch_around(upper);
                })
            }
            NetdevEvent::ChangeName(dev) | NetdevEvent::FeatChange(dev) => {
                b.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _| {
                    st.touch_around(dev)
                })
            }
            NetdevEvent::Other(..) => {}
        }
    }
}
