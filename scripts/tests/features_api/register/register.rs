// SPDX-License-Identifier: GPL-2.0

//! Must not build: the right to write features under RTNL alone, taken
//! by safe code, which could be a notifier handling the device's
//! NETDEV_REGISTER.

use kernel::net::{device::NetDevice, namespace::Net, rtnl::Rtnl};
use kernel::prelude::*;

module! {
    type: Probe,
    name: "register",
    authors: ["macsec_bridge developers"],
    description: "A build check of the kernel crate's feature writes",
    license: "GPL",
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let lo = NetDevice::get_by_index(Net::init_net(), 1).ok_or(ENODEV)?;
        let rtnl = Rtnl::lock();
        let _lock = lo.features_lock_rtnl(&rtnl);
        Ok(Probe)
    }
}
