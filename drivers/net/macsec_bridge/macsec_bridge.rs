// SPDX-License-Identifier: GPL-2.0

//! Carry the state of the MACsec SecY that protects an RDMA port onto that
//! port.
//!
//! For every netdev that backs an RDMA device, the module keeps
//! `NETIF_F_HW_MACSEC` and the `macsec_bridge` generic netlink family's
//! per-port object in lockstep with the real, offloaded SecY state.  See
//! `Documentation/networking/macsec_bridge.rst`.

use kernel::prelude::*;

pub mod lockstep;

module! {
    type: MacsecBridge,
    name: "macsec_bridge",
    author: "macsec_bridge developers",
    description: "Lockstep of RDMA netdev MACsec offload state",
    license: "GPL",
}

struct MacsecBridge;

impl kernel::Module for MacsecBridge {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded\n");
        Ok(MacsecBridge)
    }
}

impl Drop for MacsecBridge {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
