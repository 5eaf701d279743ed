// SPDX-License-Identifier: GPL-2.0

//! Carry the state of the MACsec SecY that protects an RDMA port onto that
//! port.
//!
//! For every netdev that backs an RDMA device, the module keeps
//! `NETIF_F_HW_MACSEC` and the `macsec-bridge` generic netlink family's
//! per-port object in lockstep with the real, offloaded SecY state. See
//! `Documentation/networking/macsec_bridge.rst`.
//!
//! Layer 6 (module): declares every file, and registers and unregisters the
//! event sources in order. May use: every layer.

use crate::net::{notifier, rtnl::Rtnl};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::time::{Instant, Monotonic};
use kernel::{net, rdma, workqueue};

/// `pr_warn!`, as often as the networking stack's limit allows (C's
/// `net_warn_ratelimited()`). Every warning an event can print goes
/// through it: events come from every namespace, and the root of a user
/// namespace makes them at will (netdevs appear, flap and go), so under
/// memory pressure an unlimited warning per event would let an
/// unprivileged user flood the kernel log.
macro_rules! warn_ratelimited {
    ($($arg:tt)*) => {
        if crate::net::ratelimit::allow() {
            kernel::pr_warn!($($arg)*);
        }
    };
}

mod bridge;
mod events;
mod gids;
mod index;
mod locks;
pub mod lockstep;
mod model;
mod netlink;
mod platform;
mod ports;
mod roce;
mod secy;
mod state;
mod trace;
mod update;
mod wire;
mod work;

module! {
    type: MacsecBridge,
    name: "macsec_bridge",
    authors: ["macsec_bridge developers"],
    description: "Lockstep of RDMA netdev MACsec offload state",
    license: "GPL",
}

struct MacsecBridge {
    bridge: Arc<bridge::Bridge>,
    family: Option<crate::net::netlink::Registration>,
    /// Where offloaded operations come from.
    offload: Option<platform::Source<events::Events>>,
    notifier: Option<Pin<KBox<notifier::Registration<events::Events>>>>,
    client: Option<Pin<KBox<rdma::ClientRegistration<ports::RdmaPorts>>>>,
}

impl kernel::Module for MacsecBridge {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let t0 = Instant::<Monotonic>::now();
        let bridge = bridge::Bridge::new(&netlink::FAMILY)?;
        bridge::Bridge::publish(&bridge);
        // From here on, an error drops `this`, which undoes what was done.
        let mut this = MacsecBridge {
            bridge,
            family: None,
            offload: None,
            notifier: None,
            client: None,
        };
        this.family = Some(netlink::FAMILY.register()?);
        // Before any SecY is tracked: an operation on a SecY that is not
        // tracked yet teaches nothing and holds nothing down.
        let observer = events::Events(this.bridge.clone());
        this.offload = Some(platform::Source::register(observer)?);
        // Registering replays REGISTER and UP for every existing device:
        // MACsec netdevs get tracked (and the source of offloaded
        // operations sees every device).
        this.notifier = Some(KBox::pin_init(
            notifier::Registration::new(events::Events(this.bridge.clone())),
            GFP_KERNEL,
        )?);
        // Registering adds every existing RDMA device: ports.
        this.client = Some(KBox::pin_init(rdma::ClientRegistration::new(), GFP_KERNEL)?);
        let us = t0.elapsed().as_nanos() / 1000;
        let (ports, secys) = this.bridge.counts();
        let seen = platform::SOURCE;
        pr_info!("loaded: {ports} ports, {secys} SecYs, in {us} us; offload seen through {seen}\n");
        Ok(this)
    }
}

impl Drop for MacsecBridge {
    fn drop(&mut self) {
        // No more ports: each is retracted, its feature bit cleared.
        drop(self.client.take());
        {
            let mut rtnl = Rtnl::lock();
            self.bridge.shutdown(&mut rtnl);
            // Before the netdevice notifier goes: the source leaves
            // nothing on any device.
            if let Some(offload) = &self.offload {
                offload.unloading(&rtnl);
            }
        }
        // Unregistering replays DOWN and UNREGISTER; the bridge is closed and
        // ignores them, as it ignores offloaded operations from now on.
        drop(self.notifier.take());
        self.offload = None;
        // The bridge is closed: no update queues the periodic re-read or
        // the feature writer again, and a run of either finds nothing to do.
        // Both take RTNL, so they are waited for without it.
        self.bridge.flush_revalidate();
        self.bridge.flush_deferred();
        // No device's GID handler is left to queue a re-read of GIDs.
        self.bridge.flush_gids();
        bridge::Bridge::unpublish();
        // Unregistering the family waits for requests in flight; the
        // module's own reference keeps the bridge alive until then.
        drop(self.family.take());
        pr_info!("unloaded\n");
    }
}
