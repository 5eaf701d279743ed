// SPDX-License-Identifier: GPL-2.0

//! The RDMA client: which netdevs back RDMA devices.
//!
//! The RDMA core calls `add`, `remove` and `rename` without RTNL and without a context
//! of ours, so the client takes RTNL itself and reaches the bridge through
//! [`bridge::with`].

use crate::bridge;
use crate::net::rtnl::Rtnl;
use crate::rdma::{Client, Device};
use kernel::prelude::*;

/// The client.
pub(crate) struct RdmaPorts;

impl Client for RdmaPorts {
    const NAME: &'static CStr = c"macsec_bridge";

    fn add(ib: &Device) -> Result {
        let mut rtnl = Rtnl::lock();
        bridge::with(|b| b.rdma_add(&mut rtnl, ib)).unwrap_or(Ok(()))
    }

    fn remove(ib: &Device) {
        let mut rtnl = Rtnl::lock();
        bridge::with(|b| b.rdma_remove(&mut rtnl, ib));
    }

    fn rename(ib: &Device) {
        let mut rtnl = Rtnl::lock();
        bridge::with(|b| b.rdma_rename(&mut rtnl, ib));
    }
}
