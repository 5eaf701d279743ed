// SPDX-License-Identifier: GPL-2.0

//! Test module: the kernel crate's networking API used as any Rust driver
//! could use it, with the module under test nowhere. At load it does one
//! of two things and writes one line to the kernel log.
//!
//! With `ifindex` set, it flips the `NETIF_F_HW_MACSEC` of that device (in
//! the initial namespace) through the one safe write there is,
//! `FeaturesLock::set_hw_macsec()`:
//!
//! ```text
//! crate_api_probe: ifindex=I ops=B before=B ret=R after=B
//! ```
//!
//! `ops` is whether the device has `macsec_ops`, `before` and `after` the
//! bit around the write, `R` `1` if the write changed the bit, `0` if it
//! did not, or a negative errno.
//!
//! With `unheld=1`, it breaks `Rtnl::assume_held()`'s contract on purpose,
//! asking for the proof without holding RTNL, which lockdep is to report:
//!
//! ```text
//! crate_api_probe: assume_held without RTNL
//! ```
//!
//! The load itself succeeds either way. Driven by `crate_api.sh`.

use kernel::net::{
    device::{Features, NetDevice},
    namespace::Net,
    rtnl::Rtnl,
};
use kernel::prelude::*;

module! {
    type: Probe,
    name: "crate_api_probe",
    authors: ["macsec_bridge developers"],
    description: "Uses the kernel crate's networking API as a driver would",
    license: "GPL",
    params: {
        ifindex: i32 {
            default: 0,
            description: "The device whose NETIF_F_HW_MACSEC to flip",
        },
        unheld: i32 {
            default: 0,
            description: "1: ask for the proof of RTNL without holding it",
        },
    },
}

struct Probe;

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        if module_parameters::unheld.value() == 1 {
            // SAFETY: RTNL is not held, against the contract, on purpose:
            // lockdep is to report it. The closure ignores the proof, so
            // nothing relies on the lock.
            unsafe { Rtnl::assume_held(|_| ()) };
            pr_info!("assume_held without RTNL\n");
            return Ok(Probe);
        }
        let ifindex = module_parameters::ifindex.value();
        let dev = NetDevice::get_by_index(Net::init_net(), ifindex).ok_or(ENODEV)?;
        let mut rtnl = Rtnl::lock();
        let before = dev.features().contains(Features::HW_MACSEC);
        let ret = dev.lock_features(&mut rtnl).set_hw_macsec(!before);
        let after = dev.features().contains(Features::HW_MACSEC);
        drop(rtnl);
        let ret = match ret {
            Ok(changed) => i32::from(changed),
            Err(e) => e.to_errno(),
        };
        pr_info!(
            "ifindex={} ops={} before={} ret={} after={}\n",
            ifindex,
            u8::from(dev.has_macsec_ops()),
            u8::from(before),
            ret,
            u8::from(after)
        );
        Ok(Probe)
    }
}
