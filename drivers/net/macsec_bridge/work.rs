// SPDX-License-Identifier: GPL-2.0

//! Deferred work: the feature writer no update could be, the periodic
//! re-read of the SecYs, and the re-read of GIDs after the RDMA core tells
//! of a change. Each item takes RTNL itself and runs an update.

use crate::bindings;
use crate::bridge::{with, Bridge};
use crate::locks::Locks;
use crate::model::RdmaDev;
use crate::net::rtnl::Rtnl;
use crate::rdma;
use crate::roce::DeviceExt;
use crate::state::{mark, Ports};
use crate::trace::Cause;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::workqueue::{self, DelayedWork, Work, WorkItem};
use kernel::{impl_has_delayed_work, impl_has_work, new_delayed_work, new_mutex, new_work};

/// The deferred writer of feature bits: a work item that takes RTNL and
/// each device's instance lock itself.
#[pin_data]
pub(crate) struct Deferred {
    #[pin]
    work: Work<Deferred>,
}

impl_has_work! {
    impl HasWork<Self> for Deferred { self.work }
}

impl Deferred {
    /// The writer, idle.
    pub(crate) fn new() -> Result<Arc<Deferred>> {
        Arc::pin_init(
            pin_init!(Deferred {
                work <- new_work!("macsec_bridge:deferred"),
            }),
            GFP_KERNEL,
        )
    }
}

impl WorkItem for Deferred {
    type Pointer = Arc<Deferred>;

    fn run(_this: Arc<Deferred>) {
        let mut rtnl = Rtnl::lock();
        // Nothing to announce: the state did not change. `finish`, made to
        // look at every port, finds the bits that differ from it, and
        // `apply` writes them.
        with(|b| {
            b.update(
                &mut Locks::Own(&mut rtnl),
                (Cause::Deferred, 0, 0),
                |st, _, _| st.touch_all(),
            )
        });
    }
}

/// Reads the observed SecYs again every [`REVALIDATE_MS`] while a port
/// advertises offload: a work item that takes RTNL.
///
/// [`REVALIDATE_MS`]: crate::update::REVALIDATE_MS
#[pin_data]
pub(crate) struct Revalidate {
    #[pin]
    work: DelayedWork<Revalidate>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Revalidate { self.work }
}

impl Revalidate {
    /// The re-read, not queued.
    pub(crate) fn new() -> Result<Arc<Revalidate>> {
        Arc::pin_init(
            pin_init!(Revalidate {
                work <- new_delayed_work!("macsec_bridge:revalidate"),
            }),
            GFP_KERNEL,
        )
    }
}

impl WorkItem for Revalidate {
    type Pointer = Arc<Revalidate>;

    fn run(_this: Arc<Revalidate>) {
        let mut rtnl = Rtnl::lock();
        // Queues itself again while a port advertises offload.
        with(|b| b.revalidate(&mut rtnl, Cause::Revalidate));
    }
}

/// Reads the GIDs of the ports whose GID tables changed: a work item that
/// takes RTNL. The RDMA core tells of a change with its table's mutex held,
/// and sometimes RTNL ([`rdma::Events::gid_change`]), so the handler only
/// notes the device and queues this.
#[pin_data]
pub(crate) struct GidWork {
    #[pin]
    work: Work<GidWork>,
    /// The devices whose tables changed since the work last took them. A
    /// leaf lock: taken by the event handler (under the table's mutex and
    /// the device's event rwsem, sometimes RTNL) and by the work before it
    /// takes RTNL.
    #[pin]
    changed: Mutex<GidChanges>,
}

/// The RDMA devices whose GID tables changed, by identity.
pub(crate) struct GidChanges {
    ids: KVec<usize>,
    /// A change could not be noted (no memory): every port is read again.
    all: bool,
}

impl GidChanges {
    const fn new() -> GidChanges {
        GidChanges {
            ids: KVec::new(),
            all: false,
        }
    }

    /// Notes that device `id`'s table changed.
    fn note(&mut self, id: usize) {
        if !self.all && !self.ids.contains(&id) && self.ids.push(id, GFP_KERNEL).is_err() {
            self.all = true;
        }
    }

    fn has(&self, r: &RdmaDev) -> bool {
        self.all || self.ids.contains(&r.id)
    }
}

impl_has_work! {
    impl HasWork<Self> for GidWork { self.work }
}

impl GidWork {
    /// The re-read of GIDs, with no change noted.
    pub(crate) fn new() -> Result<Arc<GidWork>> {
        Arc::pin_init(
            pin_init!(GidWork {
                work <- new_work!("macsec_bridge:gids"),
                changed <- new_mutex!(GidChanges::new(), "macsec_bridge:gid_changes"),
            }),
            GFP_KERNEL,
        )
    }
}

impl WorkItem for GidWork {
    type Pointer = Arc<GidWork>;

    fn run(this: Arc<GidWork>) {
        // A change noted after this queues the work again.
        let changed = core::mem::replace(&mut *this.changed.lock(), GidChanges::new());
        let mut rtnl = Rtnl::lock();
        with(|b| {
            b.update(
                &mut Locks::Own(&mut rtnl),
                (Cause::Rdma, 3, 0),
                |st, _, _| {
                    // Ports are not indexed by RDMA device (see `forget_rdma`):
                    // the walk reads no table, only the ports of a changed one do.
                    let Ports { all, dirty, .. } = &mut st.ports;
                    for (_, e) in all.iter_mut() {
                        if e.rdma.iter().any(|r| changed.has(r)) {
                            e.reach.read = false;
                            mark(e, dirty);
                        }
                    }
                },
            )
        });
    }
}

/// The RDMA core's events, for the bridge.
pub(crate) struct GidEvents;

impl rdma::Events for GidEvents {
    fn gid_change(dev: &rdma::Device, _port: u32) {
        with(|b| {
            b.gid_work.changed.lock().note(dev.id());
            // Already queued: that run reads the change too.
            let _ = workqueue::system().enqueue(b.gid_work.clone());
        });
    }
}

impl Bridge {
    /// Waits for a re-read of GIDs, queued or running, to finish. Called
    /// without RTNL, which it takes, once no device's handler is left to
    /// queue it again.
    pub(crate) fn flush_gids(&self) {
        // SAFETY: the work item is valid and initialised (it lives in an
        // `Arc` that `self` holds), and `flush_work` may sleep: the caller
        // is in process context without RTNL.
        unsafe { bindings::flush_work(Work::raw_get(&self.gid_work.work)) };
    }

    /// Waits for a deferred feature write, queued or running, to finish.
    /// Called without RTNL, which the writer takes.
    pub(crate) fn flush_deferred(&self) {
        // SAFETY: the work item is valid and initialised (it lives in an
        // `Arc` that `self` holds), and `flush_work` may sleep: the caller
        // is in process context without RTNL.
        unsafe { bindings::flush_work(Work::raw_get(&self.deferred.work)) };
    }

    /// Runs a queued periodic re-read now and waits for it, or for one
    /// that is running. Called without RTNL, which the re-read takes, once
    /// the bridge is closed: the run finds no port and queues itself no
    /// more. (Flushed, not cancelled: a queued item holds a reference to
    /// its `Arc` that only its run gives back.)
    pub(crate) fn flush_revalidate(&self) {
        let dwork: *const DelayedWork<Revalidate> = &self.revalidate.work;
        // SAFETY: `dwork` is a valid, initialised delayed work item (it
        // lives in an `Arc` that `self` holds), so its `work_struct` is the
        // `work` of a `delayed_work`; the caller is in process context
        // without RTNL, as the wait for a running re-read needs.
        unsafe {
            let work = Work::raw_get(DelayedWork::raw_as_work(dwork));
            bindings::flush_delayed_work(kernel::container_of!(work, bindings::delayed_work, work));
        }
    }
}
