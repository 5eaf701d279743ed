// SPDX-License-Identifier: GPL-2.0

//! Carry the state of the MACsec SecY that protects an RDMA port onto that
//! port.
//!
//! For every netdev that backs an RDMA device, the module keeps
//! `NETIF_F_HW_MACSEC` and the `macsec_bridge` generic netlink family's
//! per-port object in lockstep with the real, offloaded SecY state. See
//! `Documentation/networking/macsec_bridge.rst`.

use kernel::net::{notifier, rtnl::Rtnl};
use kernel::prelude::*;
use kernel::rdma::ClientRegistration;
use kernel::sync::Arc;

mod bridge;
pub mod lockstep;
mod netlink;
mod ports;

module! {
    type: MacsecBridge,
    name: "macsec_bridge",
    author: "macsec_bridge developers",
    description: "Lockstep of RDMA netdev MACsec offload state",
    license: "GPL",
}

struct MacsecBridge {
    bridge: Arc<bridge::Bridge>,
    notifier: Option<Pin<KBox<notifier::Registration<bridge::Events>>>>,
    client: Option<Pin<KBox<ClientRegistration<ports::RdmaPorts>>>>,
}

impl kernel::Module for MacsecBridge {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let bridge = Arc::pin_init(bridge::Bridge::new(module), GFP_KERNEL)?;
        bridge::Bridge::publish(&bridge);
        // From here on, an error drops `this`, which undoes what was done.
        let mut this = MacsecBridge {
            bridge,
            notifier: None,
            client: None,
        };
        // Registering replays REGISTER and UP for every existing device:
        // offload-capable devices get interposed, MACsec netdevs tracked.
        this.notifier = Some(KBox::pin_init(
            notifier::Registration::new(bridge::Events(this.bridge.clone())),
            GFP_KERNEL,
        )?);
        // Registering adds every existing RDMA device: ports.
        this.client = Some(KBox::pin_init(ClientRegistration::new(), GFP_KERNEL)?);
        pr_info!("loaded\n");
        Ok(this)
    }
}

impl Drop for MacsecBridge {
    fn drop(&mut self) {
        // No more ports: each is retracted, its feature bit cleared.
        drop(self.client.take());
        {
            let rtnl = Rtnl::lock();
            self.bridge.shutdown(&rtnl);
        }
        // Unregistering replays DOWN and UNREGISTER; the bridge is closed and
        // ignores them.
        drop(self.notifier.take());
        bridge::Bridge::unpublish();
        pr_info!("unloaded\n");
        // `bridge` is dropped last: the family is unregistered.
    }
}
