// SPDX-License-Identifier: GPL-2.0

//! Deferred work, as each item runs: the feature writer no update could
//! be, the periodic re-read of the SecYs, and the re-read of GIDs after
//! the RDMA core tells of a change. Each item takes RTNL itself and runs
//! an update. The items themselves are the bridge's (`bridge.rs`), which
//! holds and flushes them.
//!
//! Layer 5 (event sources). Owns: the items' runs (`WorkItem`) and what the
//! GID event handler ([`GidEvents`], the bridge's) does. May use: layers
//! 1-4 (`locks`, `trace`, `state`, `roce`, `bridge`); no other event
//! source.

use crate::bridge::{with, Deferred, GidEvents, GidWork, Revalidate};
use crate::locks::Locks;
use crate::net::rtnl::Rtnl;
use crate::rdma;
use crate::roce::DeviceExt;
use crate::state::{mark, Ports};
use crate::trace::Cause;
use crate::workqueue::{self, WorkItem};
use kernel::sync::Arc;

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

impl WorkItem for Revalidate {
    type Pointer = Arc<Revalidate>;

    fn run(_this: Arc<Revalidate>) {
        let mut rtnl = Rtnl::lock();
        // Queues itself again while a port advertises offload.
        with(|b| b.revalidate(&mut rtnl, Cause::Revalidate));
    }
}

impl WorkItem for GidWork {
    type Pointer = Arc<GidWork>;

    fn run(this: Arc<GidWork>) {
        // A change noted after this queues the work again.
        let changed = this.take();
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

impl rdma::Events for GidEvents {
    fn gid_change(dev: &rdma::Device, _port: u32) {
        with(|b| {
            b.gid_work.note(dev.id());
            // Already queued: that run reads the change too.
            let _ = workqueue::system().enqueue(b.gid_work.clone());
        });
    }
}
