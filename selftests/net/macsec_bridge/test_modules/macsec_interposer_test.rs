// SPDX-License-Identifier: GPL-2.0

//! Test module for the module's `macsec_ops` interposer (its
//! `interposer.rs`, built here against the test kernel, where the module
//! itself uses the MACsec core's offload notifier instead): interposes every
//! device that has `macsec_ops` and logs each `mdo_*` call around the
//! original, and every device it is refused on.
//!
//! A VLAN over netdevsim cannot offload MACsec: netdevsim's operations take
//! `netdev_priv(ctx->netdev)`, which for a VLAN is the VLAN's, so it keeps
//! `NETIF_F_HW_MACSEC` out of its `vlan_features`. mlx5 reads its private
//! data through `macsec_netdev_priv()` and offloads SecYs on VLANs. To reach
//! that path (`vlan_dev.c` forwarding to the real device's `macsec_ops`), the
//! module registers `mit_nic0`, a model NIC (`nic_model.rs`) whose
//! operations only log. It is never brought up.
//!
//! With `forget_guards=1` it forgets each guard (`mem::forget`, which safe
//! code may do) instead of keeping it: the interposer must then take every
//! table off at unload itself (`restore_all`), or the devices' `macsec_ops`
//! would point into the unloaded module.
//!
//! Driven by `macsec_interposer.sh` and `macsec_interposer_vlan.sh`, which
//! read the log.

use interposer::{Installed, Interposer};
use kernel::net::{
    device::NetDevice,
    macsec::{Context, Mdo, Observer},
    notifier::{NetdevEvent, NetdevNotifier, Registration},
    rtnl::Rtnl,
};
use kernel::{bindings, new_mutex, prelude::*, sync::Arc, sync::Mutex};
// `interposer.rs` names the kernel crate's as the module's own root does.
use kernel::net;

// The module's own files: the module uses all of the interposer, this test
// what a netdevice notifier uses.
#[allow(dead_code)]
#[path = "../../../../drivers/net/macsec_bridge/interposer.rs"]
mod interposer;
#[path = "nic_model.rs"]
mod nic_model;

module! {
    type: InterposerTest,
    name: "macsec_interposer_test",
    authors: ["macsec_bridge developers"],
    description: "Test module for the macsec_ops interposer abstraction",
    license: "GPL",
    params: {
        forget_guards: bool {
            default: false,
            description: "Forget each interposer's guard instead of keeping it",
        },
    },
}

struct Log;

#[vtable]
impl Observer for Log {
    fn before(&self, _rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>) {
        pr_info!(
            "before {:?} lower={} secy={}\n",
            op,
            ctx.lower().name(),
            ctx.secy().netdev().name()
        );
    }

    fn after(&self, _rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result) {
        pr_info!(
            "after {:?} lower={} ret={}\n",
            op,
            ctx.lower().name(),
            ret.err().map_or(0, |e| e.to_errno())
        );
    }
}

/// Each interposer, with the address of the table it replaced.
type Interposers = KVec<Option<(Installed, usize)>>;

struct Watcher {
    log: Arc<Log>,
    installed: Arc<Mutex<Interposers>>,
}

impl NetdevNotifier for Watcher {
    fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>) {
        match event {
            NetdevEvent::Register(dev) => self.install(rtnl, dev),
            NetdevEvent::Unregister(dev) => self.restore(rtnl, dev),
            _ => {}
        }
    }
}

impl Watcher {
    fn install(&self, rtnl: &Rtnl, dev: &NetDevice) {
        if dev.is_macsec() {
            return;
        }
        // SAFETY: `dev` is valid for the event and RTNL, which serialises
        // writers of the field, is held.
        let orig = unsafe { (*dev.as_raw()).macsec_ops }.addr();
        let ins = match Interposer::install(rtnl, dev, self.log.clone()) {
            Ok(ins) => ins,
            Err(e) => {
                pr_info!("not installed on {}: {}\n", dev.name(), e.to_errno());
                return;
            }
        };
        pr_info!("installed on {} orig={:#x}\n", dev.name(), orig);
        // A device carries one interposer at most.
        let again = Interposer::install(rtnl, dev, self.log.clone()).map(|_| ());
        pr_info!(
            "second install on {}: {}\n",
            dev.name(),
            again.err().map_or(0, |e| e.to_errno())
        );
        if module_parameters::forget_guards.value() {
            pr_info!("forgot the guard on {}\n", dev.name());
            core::mem::forget(ins);
            return;
        }
        if self
            .installed
            .lock()
            .push(Some((ins, orig)), GFP_KERNEL)
            .is_err()
        {
            pr_err!("out of memory tracking {}\n", dev.name());
        }
    }

    fn restore(&self, rtnl: &Rtnl, dev: &NetDevice) {
        let mut list = self.installed.lock();
        let Some((ins, orig)) = list
            .iter_mut()
            .find(|slot| {
                slot.as_ref()
                    .is_some_and(|(ins, _)| ins.device() == dev.as_raw() as usize)
            })
            .and_then(Option::take)
        else {
            return;
        };
        // SAFETY: RTNL is held, and this is the device's own
        // `NETDEV_UNREGISTER`, which no MACsec operation is in the middle of.
        unsafe { ins.restore_unlocked(rtnl) };
        // SAFETY: `dev` is valid for the event and RTNL is held.
        let now = unsafe { (*dev.as_raw()).macsec_ops }.addr();
        let same = if now == orig { "same" } else { "DIFFERENT" };
        pr_info!(
            "restored {} orig={:#x} now={:#x} {}\n",
            dev.name(),
            orig,
            now,
            same
        );
    }
}

/// Logs one operation of the NIC model and succeeds.
///
/// # Safety
///
/// `ctx` is a valid context passed by the MACsec core (or a VLAN forwarding
/// for it) for MAC offload.
unsafe fn fake_mdo(name: &str, ctx: *mut bindings::macsec_context) -> c_int {
    // SAFETY: for MAC offload the context holds the SecY's lower device,
    // valid for the call.
    let lower = unsafe { NetDevice::from_raw((*ctx).__bindgen_anon_1.netdev) };
    pr_info!("nic {} lower={}\n", name, lower.name());
    0
}

nic_model::macsec_ops_table!(FAKE_MACSEC_OPS, fake_mdo);

struct InterposerTest {
    // Dropped first (`drop`): every interposer is restored before the NIC
    // goes.
    watch: Option<Pin<KBox<Registration<Watcher>>>>,
    _nic: nic_model::Nic,
}

impl Drop for InterposerTest {
    fn drop(&mut self) {
        // Unregistering replays each device's UNREGISTER: every guard kept
        // is restored there.
        drop(self.watch.take());
        // What is left is what a forgotten guard left.
        let rtnl = Rtnl::lock();
        let left = interposer::restore_all(&rtnl);
        pr_info!("left installed at unload: {}\n", left);
    }
}

impl kernel::Module for InterposerTest {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let watcher = Watcher {
            log: Arc::new(Log, GFP_KERNEL)?,
            installed: Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?,
        };
        let watch = KBox::pin_init(Registration::new(watcher), GFP_KERNEL)?;
        let nic = nic_model::Nic::new(c"mit_nic%d", 1, &nic_model::NETDEV_OPS, &FAKE_MACSEC_OPS)?;
        Ok(InterposerTest {
            watch: Some(watch),
            _nic: nic,
        })
    }
}
