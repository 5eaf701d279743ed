// SPDX-License-Identifier: GPL-2.0

//! The lock context of an update: what its caller holds (RTNL it took, a
//! netdevice notifier's, an offload operation's observer's), hence how a
//! port's feature bit may be written and what the platform put on a device
//! undone.
//!
//! Layer 1 (types and leaves). Owns: [`Locks`]; writes only
//! `NETIF_F_HW_MACSEC`, when asked. May use: nothing of the driver.

use crate::net::device::NetDevice;
use crate::net::macsec::Mdo;
use crate::net::notifier::NetdevEvent;
use crate::net::rtnl::{Rtnl, RtnlGuard};

/// What the context of an update holds, hence how it may write a port's
/// features and undo what the platform put on a device.
pub(crate) enum Locks<'a, 'e> {
    /// RTNL that the caller took itself (a request, the RDMA client, unload,
    /// the deferred writer): it may take one device's instance lock at a
    /// time, and undo what the platform put on a device.
    Own(&'a mut RtnlGuard),
    /// A netdevice notifier: the core holds RTNL and, for some events, the
    /// event device's instance lock. The event is the one the core handed
    /// the notifier, never one made here.
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
    /// The proof of RTNL, which every context holds.
    pub(crate) fn rtnl(&self) -> &Rtnl {
        match self {
            Locks::Own(g) => g,
            Locks::Event(rtnl, _) | Locks::Observer(rtnl, _) => rtnl,
        }
    }

    /// Sets or clears `NETIF_F_HW_MACSEC` on `dev` if the locks that takes
    /// are held or may be taken here: `Some(true)` if written, `Some(false)`
    /// if the write must be made elsewhere, `None` if the bit turned out
    /// not to be the module's (`FeaturesLock::set_hw_macsec` refused it:
    /// the device gained `macsec_ops` or a user toggle since the update
    /// found it the module's, which that update's successor sees).
    pub(crate) fn write(&mut self, dev: &NetDevice, set: bool) -> Option<bool> {
        let lock = match self {
            Locks::Own(rtnl) => Some(dev.lock_features(rtnl)),
            Locks::Observer(rtnl, op) if *op != Mdo::UpdSecy => {
                // SAFETY: no instance lock is held for this operation (see
                // `Observer`), and an offload operation is no netdevice
                // notifier.
                Some(unsafe { dev.lock_features_unlocked(rtnl) })
            }
            // SAFETY: an offload operation is no netdevice notifier.
            Locks::Observer(rtnl, _) => unsafe { dev.features_lock_rtnl(rtnl) },
            // The event's proof covers the event's device only. A notifier
            // may run inside another device's locked section, so any other
            // device is written here only if RTNL is all it needs.
            // SAFETY: `ev` is the event the core handed the notifier
            // (`Locks::Event`).
            Locks::Event(rtnl, ev) if *ev.dev() == *dev => unsafe { ev.features_lock(rtnl) },
            // SAFETY: the notifier handles an event of another device, so
            // not this one's `NETDEV_REGISTER`.
            Locks::Event(rtnl, _) => unsafe { dev.features_lock_rtnl(rtnl) },
        };
        match lock.map(|l| l.set_hw_macsec(set)) {
            None => Some(false),
            Some(Ok(_)) => Some(true),
            Some(Err(_)) => None,
        }
    }
}
