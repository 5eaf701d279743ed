// SPDX-License-Identifier: GPL-2.0

//! What a kernel without the series gives the module (a distribution's,
//! with the DKMS package: Kbuild's `MACSEC_BRIDGE_COMPAT=y` builds this
//! file as the module's `platform`, in place of `platform.rs`).
//!
//! Such a kernel has no MACsec offload notifier: each device that has
//! `macsec_ops` is interposed at its `NETDEV_REGISTER`
//! ([`Devices::registered`], `interposer.rs`) and restored at its
//! `NETDEV_UNREGISTER` ([`Devices::unregistered`]), and whatever is left
//! at unload goes with one wait for the RX and TX paths
//! ([`Source::unloading`]). Its RXE routes IPv6 RoCE around the GID's
//! netdev.
//!
//! Owns: the interposed devices' guards ([`Devices`]) and the restores an
//! update defers ([`Deferred`]). Touches: nothing else; a device it cannot
//! interpose it reports to its caller, which forgets what is known of the
//! SecYs over it ([`lost_sight`]).
//!
//! Layer 2 (state), below `state.rs`, which keeps its [`Devices`]. May use:
//! layer 1 (`index`, `interposer`, `locks`, `model`).
//!
//! [`lost_sight`]: crate::secy::lost_sight

use crate::index::Index;
use crate::interposer::{restore_all, Installed, Interposer};
use crate::locks::Locks;
use crate::model::{key, GROW};
use crate::net::device::NetDevice;
use crate::net::macsec::Observer;
use crate::net::rtnl::{Rtnl, RtnlGuard};
use core::marker::PhantomData;
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
///
/// [`State`]: crate::state::State
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

    /// `dev` appeared, in an update of a notifier's `NETDEV_REGISTER`: its
    /// `macsec_ops`, if it has any, are interposed, with `observer`.
    /// `false` if they could not be: its offload operations, and those of
    /// every SecY stacked over it, go unseen.
    pub(crate) fn registered<T: Observer + 'static>(
        &mut self,
        rtnl: &Rtnl,
        dev: &NetDevice,
        observer: &Arc<T>,
        fx: &mut Deferred,
    ) -> bool {
        match Interposer::install(rtnl, dev, observer.clone()) {
            Ok(i) => {
                if let Err(i) = self.record(i) {
                    warn_ratelimited!("{}: out of memory, offload not observed\n", dev.name());
                    // SAFETY: this is the device's own REGISTER, and its table
                    // was installed just now.
                    unsafe { fx.restore(rtnl, i) };
                    return false;
                }
                true
            }
            Err(e) if e == EOPNOTSUPP => true,
            Err(e) => {
                warn_ratelimited!(
                    "{}: cannot observe its MACsec offload ({:?}): its SecYs are unknown\n",
                    dev.name(),
                    e
                );
                false
            }
        }
    }

    /// `dev` is being unregistered or leaves its namespace, in an update
    /// of a notifier's `NETDEV_UNREGISTER`: its interposer, if any, comes
    /// off.
    pub(crate) fn unregistered(&mut self, rtnl: &Rtnl, dev: &NetDevice, fx: &mut Deferred) {
        if let Some(i) = self.lowers.remove(&key(dev)) {
            // SAFETY: this is the device's own UNREGISTER.
            unsafe { fx.restore(rtnl, i) };
        }
    }

    /// Keeps the interposers [`Deferred::apply`] handed back, with the
    /// state locked: each stays installed, and recorded, until its device
    /// goes away, or failing that until unload
    /// (`interposer::restore_all`).
    pub(crate) fn keep(&mut self, left: Deferred) {
        for installed in left.restore.into_iter() {
            if let Err(i) = self.record(installed) {
                pr_err!("interposer dropped under RTNL: kept until unload\n");
                i.leave();
            }
        }
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

    /// Takes the interposers off, in `locks`' context; hands back those
    /// it may not take off there, for [`Devices::keep`].
    pub(crate) fn apply(self, locks: &mut Locks<'_, '_>) -> Option<Deferred> {
        match locks {
            Locks::Own(rtnl) => {
                for installed in self.restore.into_iter() {
                    installed.restore(rtnl);
                }
            }
            Locks::Event(rtnl, _) => {
                for installed in self.restore.into_iter() {
                    // SAFETY: only the notifier for the interposed device
                    // itself (its registration failing to be recorded, or
                    // its unregistration) queues a restore
                    // (`Deferred::restore`).
                    unsafe { installed.restore_unlocked(rtnl) };
                }
            }
            // Observers never queue one; were one queued, it is handed back
            // to be kept (`Devices::keep`).
            Locks::Observer(..) if !self.restore.is_empty() => return Some(self),
            Locks::Observer(..) => {}
        }
        None
    }
}

/// No registration: the interposers are put on devices as their
/// notifier sees them.
pub(crate) struct Source<T: Observer>(PhantomData<T>);

impl<T: Observer> Source<T> {
    pub(crate) fn register(_observer: T) -> Result<Source<T>> {
        Ok(Source(PhantomData))
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
