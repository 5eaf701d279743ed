// SPDX-License-Identifier: GPL-2.0

//! The transaction every change goes through: update the state under its
//! mutex, [`Bridge::finish`] (recompute the marked ports, collect
//! [`Effects`]), unlock, [`Bridge::apply`] them with the [`Locks`] the
//! context holds. Owns the effects; touches only the state it is given
//! and the ports' feature bits.
//!
//! Layer 4 (transaction), above `bridge.rs`, whose methods it adds. Owns
//! also the period of the re-read ([`REVALIDATE_MS`]). May use: layers 1-3
//! (`locks`, `model`, `trace`, `wire`, `platform`, `state`, `gids`, `secy`)
//! and `bridge`.

use crate::bridge::Bridge;
use crate::locks::Locks;
use crate::model::{Owner, Reader};
use crate::net::device::{Features, NetDevice};
use crate::net::namespace::Net;
use crate::net::netlink::{GenlMsg, NetlinkSkBuff, GENLMSG_DEFAULT_SIZE};
use crate::net::rtnl::{Rtnl, RtnlGuard};
use crate::state::{heapsort, State};
use crate::trace::{self, Cause};
use crate::workqueue;
use crate::{gids, platform, secy, wire};
use kernel::alloc::kvec::PushError;
use kernel::prelude::*;
use kernel::sync::aref::ARef;
use kernel::time::msecs_to_jiffies;

/// How often, at most, a TX SA deactivated by PN exhaustion goes unseen
/// while no one asks: the interval at which observed SecYs are read again
/// while a port advertises offload.
pub(crate) const REVALIDATE_MS: u32 = 1000;

/// Where a notification goes.
enum To {
    /// `monitor`, in the namespace of the port.
    Port(ARef<NetDevice>),
    /// `monitor-all`, in the initial namespace: the host's view.
    Host,
}

/// What a writer does once the state is unlocked.
pub(crate) struct Effects {
    /// Set (`true`) or clear `NETIF_F_HW_MACSEC` on a port: the state's
    /// reserved room ([`State::writes`]).
    features: KVec<(ARef<NetDevice>, bool)>,
    /// A write found no room: the deferred writer is to bring every bit to
    /// what the state says once memory allows.
    retry: bool,
    /// `dev-change-ntf` messages, in order, each with where it goes.
    notes: KVec<(To, GenlMsg)>,
    /// What the source of offloaded operations does once unlocked.
    pub(crate) offload: platform::Deferred,
    /// Whether a port rests on an offloaded SecY's state or on where its
    /// RDMA device is ([`Ports::watched`]): the SecYs are to be read again
    /// in [`REVALIDATE_MS`].
    ///
    /// [`Ports::watched`]: crate::state::Ports::watched
    revalidate: bool,
}

impl Effects {
    pub(crate) fn new() -> Effects {
        Effects {
            features: KVec::new(),
            notes: KVec::new(),
            offload: platform::Deferred::new(),
            revalidate: false,
            retry: false,
        }
    }
}

impl Bridge {
    /// Reads the observed SecYs again (see [`reread`]), then announces and
    /// applies what changed: the periodic re-read.
    ///
    /// [`reread`]: crate::secy::reread
    pub(crate) fn revalidate(&self, rtnl: &mut RtnlGuard, cause: Cause) {
        self.update(&mut Locks::Own(rtnl), (cause, 0, 0), |st, _, rtnl| {
            secy::reread(rtnl, st)
        });
    }

    /// Runs `f` on the state (with the proof of RTNL the context holds),
    /// then announces and applies what changed. `at` is what the trace
    /// reports: the cause, its code and device.
    pub(crate) fn update(
        &self,
        locks: &mut Locks<'_, '_>,
        at: (Cause, u32, i32),
        f: impl FnOnce(&mut State, &mut Effects, &Rtnl),
    ) {
        let mut span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let rtnl = locks.rtnl();
            let mut st = self.state.lock();
            span.locked();
            st.begin();
            if !st.closing {
                f(&mut st, &mut fx, rtnl);
            }
            self.finish(rtnl, &mut st, &mut fx);
            work = st.work();
        }
        span.unlocked();
        self.apply(locks, fx);
        span.end(at.0, at.1, at.2, work);
    }

    /// Recomputes the ports the update marked (in the order they were
    /// tracked), collects the feature changes and notifications they call
    /// for, and drops the ports that are gone.
    pub(crate) fn finish(&self, rtnl: &Rtnl, st: &mut State, fx: &mut Effects) {
        let State {
            ports,
            secys,
            uppers,
            clock,
            writes,
            visited,
            closing,
            ..
        } = st;
        let family = self.family;
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
                secy::relate(rtnl, e, secys, uppers);
            }
            let offload = !e.gone && e.port.advertised().protection.is_offload();
            e.offload = offload;
            if e.gone && e.last.is_none() {
                // Never announced (an RDMA device that could not be
                // tracked): nothing to retract.
                if e.watched {
                    ports.watched -= 1;
                }
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
                    if let Err(PushError((dev, set))) = fx
                        .features
                        .push_within_capacity((ARef::from(&*e.dev), want))
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
            gids::read_gids(e);
            // A moved port only while it would claim if its device came
            // back: one over a software SecY needs no re-read.
            let back = e.moved && e.port.carried().protection.is_offload();
            let watched = !e.gone && (offload || back || !e.gids.is_empty());
            if watched != e.watched {
                e.watched = watched;
                if watched {
                    ports.watched += 1;
                } else {
                    ports.watched -= 1;
                }
            }
            let view = e.current(rtnl, secys);
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
                    wire::protection(view.verdict.protection),
                    wire::reason(view.verdict.reason),
                );
                // Each reader as it sees the port: its namespace's, and the
                // host's.
                let port = (Reader::Port, e.dev.net(rtnl), wire::MCGRP_MONITOR);
                let host = (Reader::Host, Net::init_net(), wire::MCGRP_MONITOR_ALL);
                for (reader, net, group) in [port, host] {
                    if !family.has_listeners_in(net, group) {
                        continue;
                    }
                    if !view.named_by(reader) {
                        // The host has no id for the port's namespace (no
                        // memory for one): it cannot be told, so what it
                        // last heard of the port must not stand. It dumps
                        // again, which leaves the port out.
                        family.set_err_in(net, group, ENOBUFS);
                        continue;
                    }
                    let note = NetlinkSkBuff::new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL)
                        .and_then(|skb| skb.genlmsg_put(0, 0, family, wire::CMD_DEV_CHANGE_NTF))
                        .map_err(Error::from);
                    let fill = |mut m: GenlMsg| {
                        let o = e.object().ok_or(EINVAL)?;
                        wire::fill(&mut m, &o, reader).map(|()| m)
                    };
                    let to = match reader {
                        Reader::Port => To::Port(ARef::from(&*e.dev)),
                        Reader::Host => To::Host,
                    };
                    let sent = match note.and_then(fill) {
                        Ok(m) => fx.notes.push((to, m), GFP_KERNEL).is_ok(),
                        Err(_) => false,
                    };
                    if !sent {
                        // No memory for it: its listeners must not go on
                        // believing what it changed (a retraction, say).
                        // Their next read fails with ENOBUFS, and they dump
                        // again; that allocates nothing.
                        warn_ratelimited!("{}: notification dropped\n", e.dev.name());
                        family.set_err_in(net, group, ENOBUFS);
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
        // Never once unload began: the re-read is flushed after the last
        // update, and must not be queued again.
        fx.revalidate = ports.watched > 0 && !*closing;
    }

    /// Applies what [`Bridge::finish`] collected. Called with RTNL held and
    /// the state unlocked.
    pub(crate) fn apply(&self, locks: &mut Locks<'_, '_>, mut fx: Effects) {
        // Notifications first: a feature change re-enters the notifier, and
        // anything announced from there must come after what led to it.
        let rtnl = locks.rtnl();
        for (to, msg) in fx.notes.into_iter() {
            let (net, group) = match &to {
                To::Port(dev) => (dev.net(rtnl), wire::MCGRP_MONITOR),
                To::Host => (Net::init_net(), wire::MCGRP_MONITOR_ALL),
            };
            // A full socket buffer: netlink semantics.
            let _ = msg.multicast_netns(self.family, net, 0, group, GFP_KERNEL);
        }
        let mut deferred = fx.retry;
        for (dev, set) in fx.features.drain_all() {
            // Already written by an update nested in an earlier write (the
            // feature change re-enters the notifier, which brings every
            // port to the state).
            if dev.features().contains(Features::HW_MACSEC) == set {
                continue;
            }
            let Some(written) = locks.write(&dev, set) else {
                continue;
            };
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
        if let Some(left) = fx.offload.apply(locks) {
            self.state.lock().offload.keep(left);
        }
    }
}
