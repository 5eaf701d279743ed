// SPDX-License-Identifier: GPL-2.0

//! The RDMA side of a port: where its RoCE leaves, as its RDMA devices'
//! GID tables say, and which GIDs its object lists. Reads the tables
//! under the state's mutex; changes only the port it is given, and the
//! ports of an RDMA device that goes away.
//!
//! Layer 3 (kernel readers), above `roce.rs`. Owns nothing. May use: layers
//! 1-2 (`lockstep`, `model`, `state`) and `roce`.

use crate::lockstep::{Knowledge, Offload, Scope};
use crate::model::{key, Gid, PortEntry, Reach, Relation, MAX_GIDS};
use crate::roce::{self, DeviceExt, GidExt};
use crate::state::State;
use kernel::prelude::*;

/// Reads where the RoCE of `self` or `bound` port `e` leaves, if its GID
/// tables or RDMA devices changed since it was last read; called by
/// [`relate`], under the state's mutex.
///
/// The port's own netdev is the root of its claim: for `self` the SecY
/// itself, for `bound` the device the binding says egresses through the
/// SecY. A GID on the root, or on a VLAN over it, leaves only through it
/// ([`GidExt::leaves_through`]); one on a bond, a team or any other
/// upper device may leave through another slave in the clear, and so may
/// routed IPv6 RoCE of an RXE device that follows routes around its GID's
/// netdev ([`DeviceExt::ipv6_may_stray`]).
///
/// [`relate`]: crate::secy::relate
pub(crate) fn read_reach(e: &mut PortEntry) {
    if e.reach.read {
        return;
    }
    let mut through = KVec::new();
    let mut escapes = false;
    let mut read = true;
    for r in e.rdma.iter() {
        // SAFETY: `r` is tracked, so its device's `remove` has not run:
        // that forgets it under the state's mutex, held here.
        let ib = unsafe { roce::device(r.id) };
        let stray = ib.ipv6_may_stray();
        let ret = ib.gids(r.port, |a| {
            match a.leaves_through(&e.dev) {
                // Routed around the root, if a route says so.
                Some(true) if stray && a.is_routed_ipv6() => escapes = true,
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
/// whose netdev is the SecY itself (and not routed IPv6 of an RXE device
/// that may route it elsewhere: [`DeviceExt::ipv6_may_stray`]), and if
/// its entry appeared while the SecY was known to be offloaded. mlx5, the
/// model of `upper`, protects only RoCE v2 GIDs, and only those its
/// `add_gid` saw while the SecY was offloaded: a GID made before (an
/// address kept across the SecY going down for its offload to change) is
/// never protected, and one that was there before the module knew the
/// SecY may not be. Such entries are [`PortEntry::stale`] until they leave
/// the table. RoCE on a VLAN over the SecY crosses it as well, but is not
/// claimed.
///
/// A `self` or `bound` port whose RoCE may leave around the SecY
/// (its scope is partial) lists, on the same condition, the GIDs on which
/// RoCE leaves only through it ([`Reach::through`]): the SecY sends every
/// frame it is given, so none is stale. One whose RoCE all crosses the
/// SecY lists none: it claims the whole port.
///
/// [`Bridge::finish`]: crate::bridge::Bridge::finish
/// [`Port::carried`]: crate::lockstep::Port::carried
pub(crate) fn read_gids(e: &mut PortEntry) {
    if !e.gone && matches!(e.relation, Some(Relation::SelfDev | Relation::Bound)) {
        let mut gids = KVec::new();
        let partial = e.port.scope() == Scope::Partial;
        let (listed, through) = (e.port.carried().protection.is_offload(), &e.reach.through);
        // An RDMA device that moved sends its RoCE out of its new netdev:
        // none of the GIDs read before crosses the SecY any more.
        let listed = listed && !e.moved;
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
            let ib = unsafe { roce::device(r.id) };
            let stray = ib.ipv6_may_stray();
            let ret = ib.gids(r.port, |a| {
                if a.is_roce_v2() && a.is_on(secy) && !(stray && a.is_routed_ipv6()) {
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
pub(crate) fn rdma_moved(e: &PortEntry) -> bool {
    e.rdma.iter().any(|r| {
        // SAFETY: `r` is tracked, so its device's `remove` has not run:
        // that forgets it under the state's mutex, held here.
        let ib = unsafe { roce::device(r.id) };
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
pub(crate) fn forget_rdma(st: &mut State, id: usize) {
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
