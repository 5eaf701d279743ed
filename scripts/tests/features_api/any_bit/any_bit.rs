// SPDX-License-Identifier: GPL-2.0

//! Must not build: safe code writing any feature bit it likes.

use kernel::net::{
    device::{Features, NetDevice},
    namespace::Net,
    rtnl::Rtnl,
};
use kernel::prelude::*;

module! {
    type: Probe,
    name: "any_bit",
    authors: ["macsec_bridge developers"],
    description: "A build check of the kernel crate's feature writes",
    license: "GPL",
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let lo = NetDevice::get_by_index(Net::init_net(), 1).ok_or(ENODEV)?;
        let mut rtnl = Rtnl::lock();
        lo.lock_features(&mut rtnl)
            .change(Features(0), Features::HW_MACSEC);
        Ok(Probe)
    }
}
