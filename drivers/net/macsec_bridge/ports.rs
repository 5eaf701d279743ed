// SPDX-License-Identifier: GPL-2.0

//! The RDMA client: which netdevs back RDMA devices.
//!
//! The RDMA core calls `add`, `remove` and `rename` without RTNL and without a context
//! of ours, so the client takes RTNL itself and reaches the bridge through
//! [`bridge::with`]. It also follows each device's GID tables, outside RTNL
//! (see [`bridge::Bridge::follow_gids`]).
//!
//! Layer 5 (event sources). Owns: the client ([`RdmaPorts`]). May use: layer
//! 4 (`bridge`), and the handlers `events.rs` defines on the `Bridge`
//! (`rdma_add`, `rdma_remove`, `rdma_rename`); no other event source's
//! names.

use crate::bridge;
use crate::net::rtnl::Rtnl;
use crate::rdma::{Client, Device, DevicesLocked};
use kernel::prelude::*;

/// The client.
pub(crate) struct RdmaPorts;

impl Client for RdmaPorts {
    const NAME: &'static CStr = c"macsec_bridge";

    fn add(ib: &Device, listed: &DevicesLocked) -> Result {
        bridge::with(|b| {
            // SAFETY: `ib` is being added; `remove` unfollows it, and so
            // does a failure here.
            unsafe { b.follow_gids(ib) }?;
            let mut rtnl = Rtnl::lock();
            let ret = b.rdma_add(&mut rtnl, ib, listed);
            drop(rtnl);
            if ret.is_err() {
                b.unfollow_gids(ib);
            }
            ret
        })
        .unwrap_or(Ok(()))
    }

    fn remove(ib: &Device) {
        bridge::with(|b| {
            // No more GID changes are told of, before the device goes.
            b.unfollow_gids(ib);
            let mut rtnl = Rtnl::lock();
            b.rdma_remove(&mut rtnl, ib);
        });
    }

    fn rename(ib: &Device, listed: &DevicesLocked) {
        let mut rtnl = Rtnl::lock();
        bridge::with(|b| b.rdma_rename(&mut rtnl, ib, listed));
    }
}
