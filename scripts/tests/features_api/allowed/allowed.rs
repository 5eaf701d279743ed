// SPDX-License-Identifier: GPL-2.0

//! The control: every way to the one write the kernel crate allows,
//! NETIF_F_HW_MACSEC through FeaturesLock::set_hw_macsec(), each with the
//! unsafe its contract asks for. It must build.

use kernel::net::{
    device::{Features, NetDevice},
    namespace::Net,
    notifier::{NetdevEvent, NetdevNotifier},
    rtnl::Rtnl,
};
use kernel::prelude::*;

module! {
    type: Probe,
    name: "allowed",
    authors: ["macsec_bridge developers"],
    description: "A build check of the kernel crate's feature writes",
    license: "GPL",
}

struct Probe;

// What a registered notifier would do (this module registers none: it is
// built, never loaded).
impl NetdevNotifier for Probe {
    fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>) {
        // SAFETY: `event` is the event this notifier was handed.
        if let Some(lock) = unsafe { event.features_lock(rtnl) } {
            let _ = lock.set_hw_macsec(false);
        }
    }
}

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let lo = NetDevice::get_by_index(Net::init_net(), 1).ok_or(ENODEV)?;
        let mut rtnl = Rtnl::lock();
        let on = lo.features().contains(Features::HW_MACSEC);
        lo.lock_features(&mut rtnl).set_hw_macsec(on)?;
        // SAFETY: RTNL was taken here, so this is no notifier.
        if let Some(lock) = unsafe { lo.features_lock_rtnl(&rtnl) } {
            lock.set_hw_macsec(on)?;
        }
        Ok(Probe)
    }
}
