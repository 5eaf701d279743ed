// SPDX-License-Identifier: GPL-2.0

//! Test module for `kernel::net::macsec`: interposes every device that has
//! `macsec_ops` and logs each `mdo_*` call around the original.
//!
//! Driven by `macsec_interposer.sh`, which reads the log.

use kernel::net::{
    device::NetDevice,
    macsec::{Context, Installed, Interposer, Mdo, Observer},
    notifier::{NetdevEvent, NetdevNotifier, Registration},
    rtnl::Rtnl,
};
use kernel::{new_mutex, prelude::*, sync::Arc, sync::Mutex};

module! {
    type: InterposerTest,
    name: "macsec_interposer_test",
    author: "macsec_bridge developers",
    description: "Test module for the macsec_ops interposer abstraction",
    license: "GPL",
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

struct Watcher {
    log: Arc<Log>,
    installed: Arc<Mutex<KVec<Option<Installed<Log>>>>>,
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
        let Ok(ins) = Interposer::install(rtnl, dev, self.log.clone()) else {
            return;
        };
        pr_info!("installed on {} orig={:p}\n", dev.name(), ins.original());
        // A device carries one interposer at most.
        let again = Interposer::install(rtnl, dev, self.log.clone()).map(|_| ());
        pr_info!(
            "second install on {}: {}\n",
            dev.name(),
            again.err().map_or(0, |e| e.to_errno())
        );
        if self.installed.lock().push(Some(ins), GFP_KERNEL).is_err() {
            pr_err!("out of memory tracking {}\n", dev.name());
        }
    }

    fn restore(&self, rtnl: &Rtnl, dev: &NetDevice) {
        let mut list = self.installed.lock();
        let Some(ins) = list
            .iter_mut()
            .find(|slot| slot.as_ref().and_then(|ins| ins.device()) == Some(dev))
            .and_then(Option::take)
        else {
            return;
        };
        let orig = ins.original();
        ins.restore(rtnl);
        // SAFETY: `dev` is valid for the event and RTNL is held.
        let now = unsafe { (*dev.as_raw()).macsec_ops };
        pr_info!(
            "restored {} orig={:p} now={:p} {}\n",
            dev.name(),
            orig,
            now,
            if core::ptr::eq(now, orig) {
                "same"
            } else {
                "DIFFERENT"
            }
        );
    }
}

struct InterposerTest {
    _watch: Pin<KBox<Registration<Watcher>>>,
}

impl kernel::Module for InterposerTest {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let watcher = Watcher {
            log: Arc::new(Log, GFP_KERNEL)?,
            installed: Arc::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?,
        };
        let watch = KBox::pin_init(Registration::new(watcher), GFP_KERNEL)?;
        Ok(InterposerTest { _watch: watch })
    }
}
