// SPDX-License-Identifier: GPL-2.0

//! What a kernel without the series gives the module (a distribution's,
//! with the DKMS package: Kbuild's `MACSEC_BRIDGE_COMPAT=y` builds this
//! file as the module's `platform`, in place of `platform.rs`).
//!
//! Such a kernel has no MACsec offload notifier: each device that has
//! `macsec_ops` is interposed at its `NETDEV_REGISTER` ([`registered`],
//! `interposer.rs`) and restored at its `NETDEV_UNREGISTER`
//! ([`unregistered`]), and whatever is left at unload goes with one wait
//! for the RX and TX paths ([`Source::unloading`]). Its RXE routes IPv6
//! RoCE around the GID's netdev.
//!
//! Owns: the interposed devices' guards ([`Devices`]) and the restores an
//! update defers ([`Deferred`]). Touches: the SecYs' and ports' knowledge,
//! when a device cannot be observed ([`lost_sight`]).

use crate::bridge::Bridge;
use crate::index::Index;
use crate::interposer::{restore_all, Installed, Interposer};
use crate::locks::Locks;
use crate::lockstep::Knowledge;
use crate::model::{key, GROW};
use crate::net::device::NetDevice;
use crate::net::rtnl::{Rtnl, RtnlGuard};
use crate::secy::stacked_over;
use crate::state::State;
use crate::update::Effects;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Whether the module sees the operations of PHY offload: the interposer
/// replaces only a device's own `macsec_ops`, not its PHY's.
pub(crate) const FOLLOWS_PHY: bool = false;

/// Whether RXE sends IPv6 RoCE only through the GID's netdev: without the
/// series' RXE patch it takes the GID's netdev as a mere preference (see
/// `roce::DeviceExt::ipv6_may_stray`).
pub(crate) const RXE_ROUTES_IPV6_STRICTLY: bool = false;

/// Where offloaded operations come from, for the load message.
pub(crate) const SOURCE: &str = "interposed macsec_ops";

/// The interposed devices, in the [`State`].
pub(crate) struct Devices {
    /// Each interposer's guard, by netdev.
    lowers: Index<usize, Installed>,
}

impl Devices {
    pub(crate) fn new() -> Devices {
        Devices {
            lowers: Index::new(GROW),
        }
    }

    /// The slots its index examined so far (wrapping).
    pub(crate) fn probes(&self) -> u64 {
        self.lowers.probes()
    }

    /// The module is unloading and its bridge closed: every interposer is
    /// left installed, observed by a closed bridge that ignores it, until
    /// the module's exit takes them all off at once ([`Source::unloading`]):
    /// one wait for the RX and TX paths at unload, not one per device
    /// under RTNL.
    pub(crate) fn leave_all(&mut self) {
        for (_, i) in self.lowers.drain() {
            i.leave();
        }
    }

    /// Records interposer `i` by its device; gives it back if there is no
    /// memory (it must not be dropped under RTNL: see
    /// [`Deferred::restore`]).
    fn record(&mut self, i: Installed) -> Result<(), Installed> {
        let d = i.device();
        // One interposer per device (`Interposer::install` refuses a
        // second, and UNREGISTER takes it off): were one there, `i` goes
        // back.
        if self.lowers.get(&d).is_some() {
            return Err(i);
        }
        self.lowers.insert(d, i).map(|_| ()).map_err(|(_, i)| i)
    }
}

/// Interposers to take off once the state is unlocked.
pub(crate) struct Deferred {
    restore: KVec<Installed>,
}

impl Deferred {
    pub(crate) fn new() -> Deferred {
        Deferred {
            restore: KVec::new(),
        }
    }

    /// Takes `i` off once the state is unlocked, or at once if there is
    /// no memory to remember it (an `Installed` must not be dropped under
    /// RTNL: its `Drop` takes RTNL).
    ///
    /// # Safety
    ///
    /// As [`Installed::restore_unlocked`]: RTNL is held, and the caller is
    /// not between two MACsec operations through `i`'s table (it runs in a
    /// notifier for `i`'s own device).
    unsafe fn restore(&mut self, rtnl: &Rtnl, i: Installed) {
        if self.restore.reserve(1, GFP_KERNEL).is_ok() {
            // Cannot fail: capacity is reserved.
            let _ = self.restore.push(i, GFP_KERNEL);
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { i.restore_unlocked(rtnl) };
        }
    }

    /// Takes the interposers off, in `locks`' context.
    pub(crate) fn apply(self, bridge: &Bridge, locks: &mut Locks<'_, '_>) {
        for installed in self.restore.into_iter() {
            match locks {
                Locks::Own(rtnl) => installed.restore(rtnl),
                // SAFETY: only the notifier for the interposed device itself
                // (its registration failing to be recorded, or its
                // unregistration) queues a restore (`Deferred::restore`).
                Locks::Event(rtnl, _) => unsafe { installed.restore_unlocked(rtnl) },
                // Observers never queue one; were one queued, it stays
                // installed, and recorded, until the device goes away, or
                // failing that until unload (`interposer::restore_all`).
                Locks::Observer(..) => {
                    if let Err(i) = bridge.state.lock().offload.record(installed) {
                        pr_err!("interposer dropped under RTNL: kept until unload\n");
                        i.leave();
                    }
                }
            }
        }
    }
}

/// `dev` appeared, in an update of a notifier's `NETDEV_REGISTER`: its
/// `macsec_ops`, if it has any, are interposed.
pub(crate) fn registered(
    this: &Arc<Bridge>,
    rtnl: &Rtnl,
    dev: &NetDevice,
    st: &mut State,
    fx: &mut Effects,
) {
    match Interposer::install(rtnl, dev, this.clone()) {
        Ok(i) => {
            if let Err(i) = st.offload.record(i) {
                warn_ratelimited!("{}: out of memory, offload not observed\n", dev.name());
                // SAFETY: this is the device's own REGISTER, and its table
                // was installed just now.
                unsafe { fx.offload.restore(rtnl, i) };
                lost_sight(st, rtnl, dev);
            }
        }
        Err(e) if e == EOPNOTSUPP => {}
        Err(e) => {
            warn_ratelimited!(
                "{}: cannot observe its MACsec offload ({:?}): its SecYs are unknown\n",
                dev.name(),
                e
            );
            lost_sight(st, rtnl, dev);
        }
    }
}

/// `dev` is being unregistered or leaves its namespace, in an update of a
/// notifier's `NETDEV_UNREGISTER`: its interposer, if any, comes off.
pub(crate) fn unregistered(rtnl: &Rtnl, dev: &NetDevice, st: &mut State, fx: &mut Effects) {
    if let Some(i) = st.offload.lowers.remove(&key(dev)) {
        // SAFETY: this is the device's own UNREGISTER.
        unsafe { fx.offload.restore(rtnl, i) };
    }
}

/// The offload operations of `dev` cannot be observed (interposing it
/// failed at its REGISTER, after a namespace move say): every SecY stacked
/// over it, whose operations reach its `macsec_ops` (a VLAN's forward
/// there), is unknown from now on, and its ports claim nothing. An
/// operation on such a SecY is seen again only once `dev` is interposed
/// again (at a later REGISTER), and leaves it unsettled until one settles
/// it (see [`lockstep::learn`]). O(S) SecYs, on a failure.
///
/// [`lockstep::learn`]: crate::lockstep::learn
fn lost_sight(st: &mut State, rtnl: &Rtnl, dev: &NetDevice) {
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

/// No registration: the interposers are put on devices as their
/// notifier sees them.
pub(crate) struct Source;

impl Source {
    pub(crate) fn register(_bridge: &Arc<Bridge>) -> Result<Source> {
        Ok(Source)
    }

    /// The bridge has shut down, under RTNL the module's exit took: every
    /// interposer it left (and any a lost guard left) goes now, with one
    /// wait for the RX and TX paths (the trampolines are this module's
    /// text). Before the netdevice notifier goes: each holds its device,
    /// and a namespace dismantled meanwhile would wait for that reference
    /// holding `pernet_ops_rwsem`, which unregistering the notifier takes.
    pub(crate) fn unloading(&self, rtnl: &RtnlGuard) {
        restore_all(rtnl);
    }
}
