// SPDX-License-Identifier: GPL-2.0

//! Must not build: the right a notifier's event gives, taken by safe
//! code from an event it made up.

use kernel::net::{device::NetDevice, namespace::Net, notifier::NetdevEvent, rtnl::Rtnl};
use kernel::prelude::*;

module! {
    type: Probe,
    name: "event",
    authors: ["macsec_bridge developers"],
    description: "A build check of the kernel crate's feature writes",
    license: "GPL",
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let lo = NetDevice::get_by_index(Net::init_net(), 1).ok_or(ENODEV)?;
        let rtnl = Rtnl::lock();
        let ev = NetdevEvent::Up(&lo);
        let _lock = ev.features_lock(&rtnl);
        Ok(Probe)
    }
}
