// SPDX-License-Identifier: GPL-2.0

//! What each source does to the state: the netdevice notifier's events,
//! the offload operations (as the module's platform sees them: the MACsec
//! core's offload notifier), the RDMA client's devices, and the family's
//! requests.
//! Each runs one update ([`Bridge::update`]); none touches a device itself.
//!
//! Layer 5 (event sources). Owns: the bridge's offload [`Observer`], the
//! netdevice notifier's [`Events`], and the `Bridge`'s handlers of the
//! RDMA client's devices and of the family's requests (`rdma_add`,
//! `rdma_remove`, `rdma_rename`, `bind`, `unbind`, `shutdown`), which
//! `ports.rs`, `netlink.rs` and the module call. May use: layers 1-4 (`lockstep`,
//! `locks`, `model`, `trace`, `wire`, `state`, `roce`, `gids`, `secy`,
//! `bridge`, `update`); no other event source.

use crate::bridge::Bridge;
use crate::locks::Locks;
use crate::lockstep::{self, Knowledge, Offload, Op, SecyState};
use crate::model::{key, BindError, Binding, Ingress, RdmaDev};
use crate::net::device::NetDevice;
use crate::net::macsec::{Context, Mdo, Observer};
use crate::net::notifier::{NetdevEvent, NetdevNotifier};
use crate::net::rtnl::{Rtnl, RtnlGuard};
use crate::roce::DeviceExt;
use crate::secy::{
    lost_sight, lower_up, op_of, reach, real_dev, snapshot, stacked_over, unobserved,
};
use crate::state::{mark, Ports, State};
use crate::trace::{self, Cause};
use crate::update::Effects;
use crate::{gids::forget_rdma, rdma, wire};
use kernel::prelude::*;
use kernel::sync::Arc;

impl Bridge {
    /// A device appeared: the source of offloaded operations sees it, and
    /// it is tracked if it is a MACsec netdev.
    fn registered(this: &Arc<Bridge>, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        this.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx, _| {
            if !st.offload.registered(rtnl, dev, this, &mut fx.offload) {
                lost_sight(st, rtnl, dev);
            }
            if dev.is_macsec() && st.secy(dev).is_none() {
                let lower = real_dev(dev);
                let known = unobserved(rtnl, dev, lower.as_deref());
                if st.add_secy(dev, lower, known).is_err() {
                    warn_ratelimited!("{}: out of memory, SecY not tracked\n", dev.name());
                }
            }
            st.touch_around(dev);
        });
    }

    /// A device is being unregistered, or leaves its namespace.
    fn unregistered(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx, _| {
            let d = key(dev);
            st.offload.unregistered(rtnl, dev, &mut fx.offload);
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
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _, _| {
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
                        // Many MAC drivers detach their PHY when they stop
                        // and attach it again when they open, and a PHY
                        // may lose what it offloaded on the way (mscc
                        // initialises its MACsec engine afresh in
                        // `config_init`): unreachable once the PHY is
                        // gone, unsettled from then on.
                        if !going {
                            k = reach(rtnl, k, dev);
                        }
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

    /// `dev`'s features changed: a stripped feature bit of a port is put
    /// back by `finish`; a SecY offloaded to `dev` may have become
    /// unreachable (`dev` lost `NETIF_F_HW_MACSEC`: `ethtool -K`, or
    /// mlx5e's `fix_features` in switchdev mode), or reachable again.
    /// The change is already made (`NETDEV_FEAT_CHANGE` follows it), and
    /// no operation can reach the driver before this runs: RTNL is held
    /// from the one to the other.
    fn features(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _, _| {
            st.touch_around(dev);
            let State {
                ports,
                secys,
                uppers,
                ..
            } = &mut *st;
            let d = key(dev);
            for s in uppers.seconds(d) {
                let Some(s) = secys.get_mut(&s) else {
                    continue;
                };
                let Knowledge::Known(k) = s.known else {
                    continue;
                };
                let now = reach(rtnl, k, dev);
                if now == k {
                    continue;
                }
                let known = Knowledge::Known(now);
                s.known = known;
                ports.of_secy(key(&s.dev), Some(d), |e| {
                    e.port.observe(known);
                });
            }
        });
    }

    /// An RDMA device appeared: track the netdevs of its ports.
    pub(crate) fn rdma_add(
        &self,
        rtnl: &mut RtnlGuard,
        ib: &rdma::Device,
        listed: &rdma::DevicesLocked,
    ) -> Result {
        let mut ret = Ok(());
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 0, 0), |st, _, rtnl| {
            // On failure the RDMA core will not call `rdma_remove`: nothing
            // of the device may stay.
            ret = (|| -> Result {
                for p in ib.ports() {
                    let Some(dev) = ib.netdev(p) else { continue };
                    let serial = match st.ports.live.get(&key(&dev)) {
                        Some(&s) => s,
                        None => st.add_port(rtnl, &dev)?,
                    };
                    let Some(e) = st.ports.all.get_mut(&serial) else {
                        return Err(EINVAL);
                    };
                    if !e.rdma.iter().any(|r| r.id == ib.id()) {
                        let mut name = KVec::new();
                        name.extend_from_slice(ib.name(listed).to_bytes(), GFP_KERNEL)?;
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
        self.update(&mut Locks::Own(rtnl), at, |st, _, _| {
            forget_rdma(st, ib.id())
        });
    }

    /// An RDMA device was renamed: its ports report the new name. Every
    /// port is looked at (see [`forget_rdma`]).
    pub(crate) fn rdma_rename(
        &self,
        rtnl: &mut RtnlGuard,
        ib: &rdma::Device,
        listed: &rdma::DevicesLocked,
    ) {
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 2, 0), |st, _, _| {
            let Ports { all, dirty, .. } = &mut st.ports;
            for (_, e) in all.iter_mut() {
                let mut renamed = false;
                for RdmaDev { name, .. } in e.rdma.iter_mut().filter(|r| r.id == ib.id()) {
                    let mut new = KVec::new();
                    if new
                        .extend_from_slice(ib.name(listed).to_bytes(), GFP_KERNEL)
                        .is_err()
                    {
                        // The old name stays: stale, but not wrong about
                        // protection.
                        warn_ratelimited!(
                            "out of memory: RDMA device {:?} renamed\n",
                            ib.name(listed)
                        );
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
        let at = (Cause::Request, wire::CMD_BIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _, rtnl| {
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
                    secy: Some(secy.hold(GFP_KERNEL)),
                };
                let serial = match live {
                    Some(s) => s,
                    None => st.add_port(rtnl, dev).map_err(|_| BindError::NoMemory)?,
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
        let at = (Cause::Request, wire::CMD_UNBIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _, _| {
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
            if !wanted {
                // Forgotten with its binding: its last notification must
                // not name the binding this request just took away.
                e.relation = None;
                e.secy = None;
            }
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

    /// Retracts everything, leaves what the platform put on devices to the
    /// module's exit and ignores events from now on.
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
            self.finish(rtnl, &mut st, &mut fx);
            st.offload.leave_all();
            work = st.work();
            st.uppers.clear();
            st.observed.clear();
            st.secys.clear();
        }
        span.unlocked();
        self.apply(&mut Locks::Own(rtnl), fx);
        span.end(Cause::Unload, 0, 0, work);
    }
}

#[vtable]
impl Observer for Bridge {
    fn before(&self, rtnl: &Rtnl, mdo: Mdo, ctx: &Context<'_>) {
        let op = op_of(mdo, ctx);
        if op == Op::Other {
            return;
        }
        let seen = snapshot(rtnl, ctx);
        let next = Knowledge::Known(lockstep::in_flight(seen, op));
        let secy = ctx.secy().netdev();
        let lower = key(ctx.lower());
        // `macsec.c` changed `validate_frames` already (an update): until
        // the operation succeeds, the weaker of before and now holds.
        let now = Ingress::of(rtnl, ctx.secy(), ctx.offload(), ctx.lower());
        let at = (Cause::OpBefore, mdo as u32, secy.ifindex());
        self.update(&mut Locks::Observer(rtnl, mdo), at, |st, _, _| {
            if let Some(s) = st.secys.get_mut(&key(secy)) {
                if other_offloader(&s.known, &seen, op, true) {
                    return;
                }
                s.ingress = Some(s.ingress.map_or(now, |i| i.weaker(now)));
            }
            st.ports.of_secy(key(secy), Some(lower), |e| {
                e.port.before(&next);
            });
        });
    }

    fn after(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result) {
        if op == Mdo::UpdOffload {
            // A change of the offload mode: the SecY operations it made
            // (on a switch between MAC and PHY, the new offloader's
            // `mdo_add_secy`, then the old one's `mdo_del_secy`) were
            // announced on their own, and this context holds the mode of
            // the first of them, the new offloader's (the old one's, for a
            // change to none), whether or not the change took.
            return;
        }
        // Every operation shows the whole SecY, which is how a SecY
        // configured before the module loaded gets known (unsettled until
        // an operation settles the driver: see `lockstep::learn`);
        // statistics requests are not announced, so `ip macsec show` is
        // not one. On failure macsec.c puts the
        // SecY back as it was, except where it goes on regardless; the
        // driver's state is unsettled either way.
        let lop = op_of(op, ctx);
        let ok = ret.is_ok();
        let seen = snapshot(rtnl, ctx);
        let secy = ctx.secy();
        let dev = secy.netdev();
        let lower = key(ctx.lower());
        let at = (Cause::OpAfter, op as u32, dev.ifindex());
        self.update(&mut Locks::Observer(rtnl, op), at, |st, _, _| {
            let State {
                ports,
                secys,
                observed,
                observed_lost,
                ..
            } = st;
            let tracked = secys.get_mut(&key(dev));
            let half = tracked
                .as_ref()
                .is_some_and(|s| other_offloader(&s.known, &seen, lop, ok));
            let Some(s) = tracked.filter(|_| !half) else {
                // Not tracked (no memory when it appeared), or the other
                // offloader's half of a switch: nothing is learnt, but its
                // ports are no longer held down by the operation (an
                // operation with no `before` held none).
                if lop != Op::Other {
                    ports.of_secy(key(dev), Some(lower), |e| {
                        let known = e.port.known();
                        e.port.after(known);
                    });
                }
                return;
            };
            let id = Some((secy.sci(), secy.cipher()));
            let ingress = Ingress::of(rtnl, secy, ctx.offload(), ctx.lower());
            let known = lockstep::learn(s.known, seen, lop, ok);
            let same = s.known == known && s.id == id && s.ingress == Some(ingress);
            if lop == Op::Other && (!ok || (same && s.view.is_some())) {
                // Nothing learnt and nothing in flight: an RX operation
                // costs this lookup.
                return;
            }
            s.known = known;
            if ok || lop.done_even_if_failed() {
                s.id = id;
                // On failure `macsec.c` puts back what it changed, with
                // no event: what the `before` left (no more than either)
                // stays.
                s.ingress = Some(ingress);
                if s.view.is_none() {
                    s.view = Some(secy.to_ref(GFP_KERNEL));
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

/// Whether operation `op` (`ok`: it succeeded, or may yet), seen as
/// `seen`, on a SecY known as `known`, is the other offloader's half of a
/// switch between MAC and PHY offload (`macsec_update_offload()`): the new
/// offloader's `mdo_add_secy` that failed, or the old one's `mdo_del_secy`
/// once the new one has the SecY. Neither moves the SecY: it stays where
/// it is known to be, and the switch's outcome shows in the operations of
/// the offloader it is on.
fn other_offloader(known: &Knowledge, seen: &SecyState, op: Op, ok: bool) -> bool {
    let Knowledge::Known(k) = known else {
        return false;
    };
    let elsewhere =
        k.offload != Offload::Off && seen.offload != Offload::Off && k.offload != seen.offload;
    elsewhere && (op == Op::DelSecy || (op == Op::AddSecy && !ok))
}

/// What the trace reports of an event: its `NETDEV_*` number and device.
fn at(ev: &NetdevEvent<'_>) -> (Cause, u32, i32) {
    (Cause::Event, ev.cmd(), ev.dev().ifindex())
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
                b.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _, _| {
                    st.touch_around(dev);
                    st.touch_around(upper);
                })
            }
            NetdevEvent::ChangeName(dev) => {
                b.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _, _| {
                    st.touch_around(dev)
                })
            }
            NetdevEvent::FeatChange(dev) => b.features(rtnl, ev, dev),
            NetdevEvent::Other(..) => {}
        }
    }
}
