// SPDX-License-Identifier: GPL-2.0

//! What the kernel around the module gives it: how offloaded MACsec
//! operations are seen, and what RXE does with IPv6 RoCE.
//!
//! The MACsec core announces every offloaded operation on its offload
//! notifier, PHY offload's included, whatever namespace the device is in:
//! the module registers one observer there ([`Source`]) and puts nothing
//! on any device. The hooks the core calls when a device appears or goes
//! and when the module unloads ([`Devices::registered`],
//! [`Devices::unregistered`], [`Devices::leave_all`], [`Deferred::apply`])
//! have nothing to do.
//!
//! Owns: the offload notifier's registration. Touches: nothing else.
//!
//! Layer 2 (state), below `state.rs`, which keeps its [`Devices`]. May use:
//! layer 1 (`locks`).

use crate::locks::Locks;
use crate::net::device::NetDevice;
use crate::net::macsec::Observer;
use crate::net::macsec_notifier;
use crate::net::rtnl::{Rtnl, RtnlGuard};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Whether the module sees the operations of PHY offload: the offload
/// notifier announces them as it announces MAC offload's.
pub(crate) const FOLLOWS_PHY: bool = true;

/// Whether RXE sends IPv6 RoCE only through the GID's netdev, as the
/// kernel's RXE does (`rxe_find_route6()` binds the route lookup to it).
pub(crate) const RXE_ROUTES_IPV6_STRICTLY: bool = true;

/// Where offloaded operations come from, for the load message.
pub(crate) const SOURCE: &str = "the MACsec offload notifier";

/// What the source keeps of devices, in the [`State`]: nothing.
///
/// [`State`]: crate::state::State
pub(crate) struct Devices;

impl Devices {
    pub(crate) fn new() -> Devices {
        Devices
    }

    /// The slots its indexes examined so far: it has none.
    pub(crate) fn probes(&self) -> u64 {
        0
    }

    /// The module is unloading and its bridge closed: nothing is left on
    /// any device.
    pub(crate) fn leave_all(&mut self) {}

    /// `dev` appeared, in an update of a notifier's `NETDEV_REGISTER`: the
    /// offload notifier already announces its operations to the observer,
    /// so sight of them is never lost (`true`).
    pub(crate) fn registered<T: Observer + 'static>(
        &mut self,
        _rtnl: &Rtnl,
        _dev: &NetDevice,
        _observer: &Arc<T>,
        _fx: &mut Deferred,
    ) -> bool {
        true
    }

    /// `dev` is being unregistered or leaves its namespace, in an update
    /// of a notifier's `NETDEV_UNREGISTER`: nothing is on it.
    pub(crate) fn unregistered(&mut self, _rtnl: &Rtnl, _dev: &NetDevice, _fx: &mut Deferred) {}

    /// Keeps what [`Deferred::apply`] handed back: it never hands back
    /// anything.
    pub(crate) fn keep(&mut self, _left: Deferred) {}
}

/// What an update leaves the source to do once the state is unlocked:
/// nothing.
pub(crate) struct Deferred;

impl Deferred {
    pub(crate) fn new() -> Deferred {
        Deferred
    }

    /// Does it, in `locks`' context; hands back what is left for
    /// [`Devices::keep`]: nothing.
    pub(crate) fn apply(self, _locks: &mut Locks<'_, '_>) -> Option<Deferred> {
        None
    }
}

/// The module's observer on the offload notifier, registered before any
/// SecY is tracked (an operation on a SecY not tracked yet teaches
/// nothing) and unregistered after the netdevice notifier.
pub(crate) struct Source<T: Observer> {
    _registration: Pin<KBox<macsec_notifier::Registration<T>>>,
}

impl<T: Observer> Source<T> {
    pub(crate) fn register(observer: T) -> Result<Source<T>> {
        Ok(Source {
            _registration: KBox::pin_init(
                macsec_notifier::Registration::new(observer),
                GFP_KERNEL,
            )?,
        })
    }

    /// The bridge has shut down, under RTNL the module's exit took:
    /// nothing is on any device to take off.
    pub(crate) fn unloading(&self, _rtnl: &RtnlGuard) {}
}
