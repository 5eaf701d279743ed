// SPDX-License-Identifier: GPL-2.0

//! The state: every port and SecY the module tracks, and the indexes that
//! make an update cost what it touches. Only the core's rooms change it,
//! under RTNL and its mutex; readers borrow published objects from it.
//!
//! Layer 2 (state), above the platform. Owns: the [`State`] and its
//! [`Ports`]. May use: layer 1 (`index`, `lockstep`, `model`, `trace`) and
//! `platform`.

use crate::index::Index;
use crate::lockstep::Knowledge;
use crate::model::{key, Binding, Object, PortEntry, Secy, Secys, GROW};
use crate::net::device::{NetDevice, NetDeviceRef};
use crate::net::rtnl::Rtnl;
use crate::platform;
use crate::trace;
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};
use kernel::sync::aref::ARef;

/// The ports and their indexes.
pub(crate) struct Ports {
    /// Every port, by serial. A gone port stays until the next
    /// [`Bridge::finish`]. Each in its own allocation: the table's slots,
    /// half of them free, stay small.
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) all: Index<u64, KBox<PortEntry>>,
    /// The serials of [`Ports::all`] by the namespace each port was last
    /// published in (its cookie), then in the order the ports were
    /// tracked in: a dump walks its namespace's alone, and resumes after
    /// the last serial it sent.
    pub(crate) order: RBTree<(u64, u64), ()>,
    /// The serial of each port that is not gone, by its netdev.
    pub(crate) live: Index<usize, u64>,
    /// (MACsec netdev, serial) of each binding that names one: the ports
    /// bound to a SecY.
    pub(crate) bound: Index<(usize, u64), ()>,
    /// The serials of the ports the current update may have changed, each
    /// once: [`Bridge::finish`] recomputes these and no other. Room for
    /// every port is reserved when it is added, so touching one never
    /// allocates.
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) dirty: KVec<u64>,
    /// How many ports rest on what is known of an offloaded SecY, or on
    /// where their RDMA device is ([`PortEntry::watched`]): while any
    /// does, the SecYs and those devices are read again every
    /// [`REVALIDATE_MS`], for what changes with no event (a TX SA that PN
    /// exhaustion stopped, a device that `ib_device_set_netdev()` moved).
    ///
    /// [`PortEntry::watched`]: crate::model::PortEntry::watched
    /// [`REVALIDATE_MS`]: crate::update::REVALIDATE_MS
    pub(crate) watched: usize,
}

impl Ports {
    /// The port of `dev`, if it is tracked and not gone.
    pub(crate) fn of(&self, dev: &NetDevice) -> Option<&PortEntry> {
        self.all.get(self.live.get(&key(dev))?).map(|e| &**e)
    }

    /// Marks port `serial` for the next [`Bridge::finish`].
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) fn touch(&mut self, serial: u64) {
        if let Some(e) = self.all.get_mut(&serial) {
            mark(e, &mut self.dirty);
        }
    }

    /// Runs `f` on every live port whose SecY is the MACsec netdev keyed
    /// `secy` (`lower` keys its real device), and marks every port that
    /// may have it: its own port, its real device's, and the ports bound
    /// to it. O(1) per such port.
    pub(crate) fn of_secy(
        &mut self,
        secy: usize,
        lower: Option<usize>,
        mut f: impl FnMut(&mut PortEntry),
    ) {
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
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) fn retire(&mut self, serial: u64) {
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
/// allocation: a heapsort. `core`'s `sort_unstable` leaves a function
/// that objtool finds falling through to the next (rustc 1.85), and the
/// kernel's `sort()` is not in the bindings.
pub(crate) fn heapsort(v: &mut [u64]) {
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
///
/// [`Bridge::finish`]: crate::bridge::Bridge::finish
pub(crate) fn mark(e: &mut PortEntry, dirty: &mut KVec<u64>) {
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

/// Everything the bridge knows.
///
/// An update costs what it touches: ports, SecYs and real devices are
/// indexed by netdev (hash tables: [`Index`]), and only the ports an
/// update marked are recomputed. An event on a netdev that is none of
/// these costs a few O(1) lookups.
pub(crate) struct State {
    /// Set at unload: events are ignored from then on.
    pub(crate) closing: bool,
    /// The last generation handed out. Generations are shared by all ports
    /// and start from the monotonic clock (in ns) at load, so they only
    /// grow, across ports, re-created ports and module reloads alike.
    pub(crate) clock: u64,
    /// The last serial handed to a port (its `port-id`). Serials start
    /// from the monotonic clock at load as generations do, so a serial
    /// names one port across module reloads too.
    pub(crate) serial: u64,
    /// The ports.
    pub(crate) ports: Ports,
    /// Every MACsec netdev, in every namespace, by netdev.
    pub(crate) secys: Secys,
    /// (real device, MACsec netdev) of each SecY that has a real device.
    pub(crate) uppers: Index<(usize, usize), ()>,
    /// The SecYs an offload operation showed ([`Secy::view`]): what
    /// [`reread`] reads again.
    ///
    /// [`reread`]: crate::secy::reread
    pub(crate) observed: Index<usize, ()>,
    /// A SecY was shown when [`State::observed`] could not grow:
    /// [`reread`] walks every SecY instead.
    ///
    /// [`reread`]: crate::secy::reread
    pub(crate) observed_lost: bool,
    /// What the source of offloaded operations keeps of devices.
    pub(crate) offload: platform::Devices,
    /// Room for one feature write per port, reserved when a port is added:
    /// a retraction's bit is written even when nothing can be allocated
    /// (at unload, nothing would write it later). Lent to [`Effects`] by
    /// [`Bridge::finish`] and given back, empty, by [`Bridge::apply`].
    ///
    /// [`Effects`]: crate::update::Effects
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    /// [`Bridge::apply`]: crate::bridge::Bridge::apply
    pub(crate) writes: KVec<(ARef<NetDevice>, bool)>,
    /// Port objects the current update recomputed (for the trace).
    pub(crate) visited: u32,
    /// [`State::probes`] when the current update began.
    pub(crate) probes_at_begin: u64,
}

impl State {
    /// A state that tracks nothing, whose generations and serials start at
    /// `now` (the monotonic clock, in ns).
    pub(crate) fn new(now: u64) -> State {
        State {
            closing: false,
            clock: now,
            serial: now,
            ports: Ports {
                all: Index::new(GROW),
                order: RBTree::new(),
                live: Index::new(GROW),
                bound: Index::new(GROW),
                dirty: KVec::new(),
                watched: 0,
            },
            secys: Index::new(GROW),
            uppers: Index::new(GROW),
            observed: Index::new(GROW),
            observed_lost: false,
            offload: platform::Devices::new(),
            writes: KVec::new(),
            visited: 0,
            probes_at_begin: 0,
        }
    }

    /// The slots every index has examined so far (wrapping).
    fn probes(&self) -> u64 {
        [
            self.ports.all.probes(),
            self.ports.live.probes(),
            self.ports.bound.probes(),
            self.secys.probes(),
            self.uppers.probes(),
            self.observed.probes(),
            self.offload.probes(),
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

    /// The object of `dev`'s port as published in the namespace whose
    /// cookie is `ns`: a port that just moved there is not yet.
    pub(crate) fn published(&self, dev: &NetDevice, ns: u64) -> Option<Object<'_>> {
        self.ports
            .of(dev)
            .and_then(PortEntry::object)
            .filter(|o| o.view.netns == ns)
    }

    /// Runs `f` on each port kept under the namespace whose cookie is
    /// `ns` and whose serial is above `after`, in serial order, with its
    /// object (`None` for one not yet published), until `f` fails. The
    /// first is found in O(log N); the ports of other namespaces are not
    /// walked.
    pub(crate) fn published_in(
        &mut self,
        ns: u64,
        after: u64,
        mut f: impl FnMut(u64, Option<Object<'_>>) -> Result,
    ) -> Result {
        let Ports { order, all, .. } = &mut self.ports;
        // Only a mutable cursor moves (7.3's `Cursor` only peeks).
        let mut cursor = order.cursor_lower_bound_mut(&(ns, after.saturating_add(1)));
        while let Some(c) = cursor {
            let (at, serial) = *c.current().0;
            if at != ns {
                break;
            }
            f(serial, all.get(&serial).and_then(|e| e.object()))?;
            cursor = c.move_next();
        }
        Ok(())
    }

    /// Runs `f` on each port whose (namespace cookie, serial) is above
    /// `after`, in that order, with its object (`None` for one not yet
    /// published), until `f` fails: every namespace's, for the host's
    /// view. The first is found in O(log N).
    pub(crate) fn published_all(
        &mut self,
        after: (u64, u64),
        mut f: impl FnMut((u64, u64), Option<Object<'_>>) -> Result,
    ) -> Result {
        let Ports { order, all, .. } = &mut self.ports;
        let (ns, serial) = after;
        let mut cursor = order.cursor_lower_bound_mut(&(ns, serial.saturating_add(1)));
        while let Some(c) = cursor {
            let at = *c.current().0;
            f(at, all.get(&at.1).and_then(|e| e.object()))?;
            cursor = c.move_next();
        }
        Ok(())
    }

    /// Tracks `dev` as a port, after every other, and returns its serial;
    /// fails if there is no memory (of the caller's memory cgroup: see
    /// [`GROW`]).
    pub(crate) fn add_port(&mut self, rtnl: &Rtnl, dev: &NetDevice) -> Result<u64> {
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
        e.ns = dev.net(rtnl).cookie();
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

    /// Tracks MACsec netdev `dev`, over real device `lower` (held), as
    /// `known` (what is known of it before any operation); fails if there
    /// is no memory.
    pub(crate) fn add_secy(
        &mut self,
        dev: &NetDevice,
        lower: Option<NetDeviceRef>,
        known: Knowledge,
    ) -> Result {
        self.secys.reserve(1)?;
        let up = lower.as_deref().map(|l| (key(l), key(dev)));
        if up.is_some() {
            self.uppers.reserve(1)?;
        }
        let secy = KBox::new(
            Secy {
                dev: dev.hold(GFP_KERNEL),
                lower,
                known,
                id: None,
                view: None,
                ingress: None,
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

    /// Marks every port that an event on `dev` may change: its own, and if
    /// it is a SecY or the real device of some, every port of those.
    pub(crate) fn touch_around(&mut self, dev: &NetDevice) {
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
    pub(crate) fn touch_all(&mut self) {
        let Ports { all, dirty, .. } = &mut self.ports;
        for (_, e) in all.iter_mut() {
            mark(e, dirty);
        }
    }
}
