// SPDX-License-Identifier: GPL-2.0

//! A SecY as the kernel shows it: its real device, what is known of it
//! before any operation, an operation's snapshot, the periodic re-read;
//! and which SecY each port follows ([`relate`]). Changes what is known
//! of SecYs, and the ports that follow them.
//!
//! Layer 3 (kernel readers), above `gids.rs`. Owns nothing. May use: layers
//! 1-2 (`index`, `lockstep`, `model`, `platform`, `state`) and `gids`.

use crate::gids::{rdma_moved, read_reach};
use crate::index::Index;
use crate::lockstep::{self, Knowledge, Offload, Op, Scope, SecyState, NUM_AN};
use crate::model::{key, PortEntry, Relation, Secy, Secys};
use crate::net::device::{Features, NetDevice, NetDeviceRef};
use crate::net::macsec::{self, Context, Mdo, SecY};
use crate::net::rtnl::Rtnl;
use crate::platform;
use crate::state::{mark, Ports, State};
use kernel::alloc::flags::GFP_KERNEL;

/// The real device of MACsec netdev `dev`, held.
pub(crate) fn real_dev(dev: &NetDevice) -> Option<NetDeviceRef> {
    dev.macsec_real_dev().map(|real| real.hold(GFP_KERNEL))
}

/// Whether `upper` is stacked over `dev` at any depth (on it, or on a VLAN
/// or bond over it, and so on), in whatever namespaces they are.
pub(crate) fn stacked_over(rtnl: &Rtnl, upper: &NetDevice, dev: &NetDevice) -> bool {
    dev.has_upper_dev(rtnl, upper)
}

/// The offload operations of `dev` cannot be observed (the platform could
/// not watch it at its REGISTER, after a namespace move say; the offload
/// notifier's never fails, as it allocates nothing per device): every SecY
/// stacked over it, whose operations reach its `macsec_ops` (a VLAN's
/// forward there), is unknown from now on, and its ports claim nothing. An
/// operation on such a SecY is seen again only once `dev` is watched again
/// (at a later REGISTER), and leaves it unsettled until one settles it (see
/// [`lockstep::learn`]). O(S) SecYs, on a failure.
pub(crate) fn lost_sight(st: &mut State, rtnl: &Rtnl, dev: &NetDevice) {
    let State { ports, secys, .. } = st;
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

/// What is known of MACsec netdev `dev` without having observed it.
///
/// A software SecY is fully described by its netdev states (nothing else of
/// it is observable, see [`lockstep::evaluate`]). An offloaded one existed
/// before the module loaded, or was created while its operations went
/// unseen: its SAs and flags are unknown until an offload operation shows them.
pub(crate) fn unobserved(rtnl: &Rtnl, dev: &NetDevice, lower: Option<&NetDevice>) -> Knowledge {
    if dev.macsec_is_offloaded(rtnl) {
        return Knowledge::Unknown;
    }
    Knowledge::Known(links(
        Offload::Off,
        dev.is_up(),
        lower.is_some_and(lower_up),
    ))
}

/// A SecY in offload mode `offload` whose netdev and real device are up as
/// said, with no flag set and no TX SA: what the links alone tell.
fn links(offload: Offload, secy_up: bool, lower_up: bool) -> SecyState {
    SecyState {
        offload,
        secy_up,
        lower_up,
        protect: false,
        encrypt: false,
        encoding_sa: 0,
        tx_sa: [None; NUM_AN],
        unsettled: false,
        doubt: 0,
        // An operation shows the SecY only once `macsec.c` found its
        // driver's operations; a software SecY has none to reach.
        reachable: true,
    }
}

/// Whether `macsec.c` can reach the operations of a SecY offloaded as
/// `offload` to real device `real`, as `macsec_check_offload()` decides
/// before every operation: for MAC offload, `real` has `macsec_ops` and
/// `NETIF_F_HW_MACSEC`; for PHY offload, `real`'s PHY has `macsec_ops`.
///
/// Where PHY offload is not followed (see [`platform::FOLLOWS_PHY`]), no
/// SecY is known as offloaded to a PHY, and a SecY known as offloaded to the MAC
/// of a device whose PHY can offload too is not vouched for either: a
/// switch to PHY offload (`ip link set macsec0 type macsec offload phy`)
/// would leave the module's view at MAC offload while the PHY gets every
/// later operation unseen.
fn reaches(rtnl: &Rtnl, offload: Offload, real: &NetDevice) -> bool {
    match offload {
        Offload::Off => true,
        Offload::Mac if !platform::FOLLOWS_PHY && real.has_phy_macsec_ops(rtnl) => false,
        Offload::Mac => real.has_macsec_ops() && real.features().contains(Features::HW_MACSEC),
        Offload::Phy => platform::FOLLOWS_PHY && real.has_phy_macsec_ops(rtnl),
    }
}

/// What is known of SecY `k` over real device `real`, once whether
/// `macsec.c` reaches its driver was read again.
pub(crate) fn reach(rtnl: &Rtnl, k: SecyState, real: &NetDevice) -> SecyState {
    lockstep::reach(k, reaches(rtnl, k.offload, real))
}

/// Whether real device `dev` carries: up, with its carrier.
pub(crate) fn lower_up(dev: &NetDevice) -> bool {
    dev.is_up() && dev.carrier_ok()
}

/// The SecY as an offload operation sees it at this instant. `macsec.c`
/// reached the driver to call it, but whether the module may vouch for
/// what the driver holds is [`reaches`]'s to say (a MAC offload seen where
/// PHY offload is not followed, on a device whose PHY could take the SecY
/// unseen).
pub(crate) fn snapshot(rtnl: &Rtnl, ctx: &Context<'_>) -> SecyState {
    let secy = ctx.secy();
    let offload = match ctx.offload() {
        macsec::Offload::Off => Offload::Off,
        macsec::Offload::Phy => Offload::Phy,
        macsec::Offload::Mac => Offload::Mac,
    };
    let real = ctx.lower();
    let seen = SecyState {
        reachable: reaches(rtnl, offload, real),
        ..links(offload, secy.netdev().is_up(), lower_up(real))
    };
    with_flags(seen, secy)
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
pub(crate) fn reread(rtnl: &Rtnl, st: &mut State) {
    let State {
        ports,
        secys,
        observed,
        observed_lost,
        ..
    } = st;
    if ports.watched > 0 {
        // A `self` or `bound` port that claims or lists GIDs whose RDMA
        // device moved with no event at all, and one partial for that move
        // whose device came back. (An `upper` port's RoCE never crosses the
        // SecY but on the SecY's own addresses, wherever the device is.)
        let Ports { all, dirty, .. } = ports;
        for (_, e) in all.iter_mut() {
            let whole = matches!(e.relation, Some(Relation::SelfDev | Relation::Bound));
            let rests = e.offload || e.moved || !e.gids.is_empty();
            if !e.gone && whole && rests && rdma_moved(e) != e.moved {
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
    if !s.dev.macsec_is_offloaded(rtnl) {
        now.offload = Offload::Off;
    }
    // A real device whose features changed with no event (a driver that
    // writes them directly).
    if let Some(real) = &s.lower {
        now = reach(rtnl, now, real);
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
pub(crate) fn op_of(op: Mdo, ctx: &Context<'_>) -> Op {
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
pub(crate) fn relate(
    rtnl: &Rtnl,
    e: &mut PortEntry,
    secys: &Secys,
    uppers: &Index<(usize, usize), ()>,
) {
    let (relation, secy): (_, Option<&NetDevice>) = if let Some(b) = &e.binding {
        // An administrator's word beats what the topology suggests.
        (Some(Relation::Bound), b.secy.as_deref())
    } else if e.dev.is_macsec() {
        (Some(Relation::SelfDev), Some(&*e.dev))
    } else {
        // The real device of one or more MACsec netdevs (netdevsim allows
        // three): the one in the oldest namespace (the lowest cookie) is
        // named, and within it the lowest ifindex. Ifindexes of different
        // namespaces are never compared.
        match uppers
            .seconds(key(&e.dev))
            .filter_map(|d| secys.get(&d))
            .min_by_key(|s| (s.dev.net(rtnl).cookie(), s.dev.ifindex()))
        {
            Some(s) => (Some(Relation::Upper), Some(&*s.dev)),
            None => (None, None),
        }
    };
    e.relation = relation;
    // A new reference only for a new SecY: each takes a tracker.
    if e.secy.as_deref() != secy {
        e.secy = secy.map(|d| d.hold(GFP_KERNEL));
    }
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
    e.moved = false;
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
            e.moved = moved;
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
