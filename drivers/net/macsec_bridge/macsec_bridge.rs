// SPDX-License-Identifier: GPL-2.0

//! Carry the state of the MACsec SecY that protects an RDMA port onto that
//! port.
//!
//! For every netdev that backs an RDMA device, the module keeps
//! `NETIF_F_HW_MACSEC` and the `macsec_bridge` generic netlink family's
//! per-port object in lockstep with the real, offloaded SecY state. See
//! `Documentation/networking/macsec_bridge.rst`.
//!
//! This version tracks the ports (through an RDMA client) and serves them
//! over the family; the SecY observation that moves them out of
//! `reason unknown` is not wired yet.

use kernel::prelude::*;

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
    // Dropped first: no request runs once the family is gone.
    _family: Pin<KBox<kernel::net::genetlink::Registration<netlink::Family>>>,
    _ports: ports::Tracking,
}

impl kernel::Module for MacsecBridge {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let ports = ports::Tracking::start()?;
        let family = KBox::pin_init(
            kernel::net::genetlink::Registration::new(module, netlink::Family),
            GFP_KERNEL,
        )?;
        pr_info!("loaded\n");
        Ok(MacsecBridge {
            _family: family,
            _ports: ports,
        })
    }
}

impl Drop for MacsecBridge {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
