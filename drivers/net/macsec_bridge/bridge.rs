// SPDX-License-Identifier: GPL-2.0

//! The bridge: what the module knows, what each port advertises, and
//! every path that changes either. This file holds the bridge itself, the
//! work items it owns, and the map; the rooms below hold the rest.
//!
//! Three sources feed the [`State`], all under RTNL: every offloaded
//! operation (the only synchronous view of an offloaded SecY), announced
//! by the MACsec core's offload notifier; the netdevice notifier (devices
//! appearing, going away, up and down, feature changes); and the RDMA
//! client (which takes RTNL itself). RTNL
//! serialises every writer; the state's mutex is taken inside it. Readers
//! (`dev-get`, dumps: anyone, from any namespace) take the state's mutex
//! alone and report each port as it was last published
//! ([`PortEntry::object`]): what a writer read of netdevs under RTNL.
//! They re-read nothing, write no bit and announce nothing, so a loop of
//! reads from a container cannot hold RTNL, and a dump walks only its own
//! namespace's ports.
//!
//! A fourth source tells the GIDs of the ports: the RDMA core's event on a
//! change of a GID table ([`GidWork`]).
//!
//! One change reaches no source: PN exhaustion, which clears a TX SA's
//! `active` flag from the datapath (`macsec_pn_wrapped()`). Every SecY an
//! operation showed is read again every [`REVALIDATE_MS`] while a port
//! advertises offload ([`Revalidate`]), on the module's schedule alone.
//!
//! A feature change re-enters the notifier (`NETDEV_FEAT_CHANGE`), so no
//! writer touches a device with the mutex held: it updates the state,
//! collects [`Effects`], unlocks, then applies them, still under RTNL.
//!
//! Writing an ops-locked device's features (netdevsim, mlx5e) also needs
//! its instance lock. [`Locks`] says what the context of an update holds:
//! a request, the RDMA client and unload took RTNL themselves, and an
//! offload operation's observer runs under RTNL alone: they take the
//! instance lock. A notifier has it for the event's device and some
//! events, and may run inside another device's locked section. A write
//! that cannot be made where it arises (a notifier for one device that
//! changes an ops-locked port) is left to a work item, which takes both
//! locks and brings every port's bit to what the state says.
//!
//! The rooms are layers, each changing only what it says. A file names
//! (`use crate::`, `crate::x::`) only files of the layers below its own
//! and those before it on its own line; no event source names another:
//!
//! 1. Types and leaves: `lockstep.rs` (the state machine), `index.rs`
//!    (the state's hash tables), `trace.rs` (the trace events),
//!    `locks.rs` (the [`Locks`] an update holds), `model.rs`
//!    (ports, SecYs, relations, owners, GIDs and the object a port
//!    publishes: plain data), `wire.rs` (the family's messages).
//! 2. State: `platform.rs` (what the kernel gives the module), then
//!    `state.rs`: the [`State`] that keeps the model, its indexes, and
//!    what readers borrow from it.
//! 3. Kernel readers: `roce.rs` (what the module reads of the RDMA core),
//!    then `gids.rs` (where a port's RoCE leaves and which GIDs it lists),
//!    then `secy.rs` (what a SecY is as the kernel shows it: an
//!    operation's snapshot, a re-read; and which SecY a port follows:
//!    [`relate`]).
//! 4. Transaction: this file, then `update.rs` (the update,
//!    [`Bridge::finish`] and [`Bridge::apply`], with its [`Effects`]).
//! 5. Event sources: `events.rs` (what each notifier event, offload
//!    operation, RDMA device and request does to the state), `work.rs`
//!    (what the work items do when they run, taking RTNL later),
//!    `ports.rs` (the RDMA client), `netlink.rs` (the family's requests,
//!    which reach the bridge through [`with`]).
//! 6. Module: `macsec_bridge_main.rs`, which declares and registers them.
//!
//! What names do not show, the compiler still ties: the `Bridge`'s
//! methods are inherent, so the handlers `events.rs` defines on it
//! (`rdma_add`, `rdma_remove`, `rdma_rename`, `bind`, `unbind`,
//! `shutdown`) are what `ports.rs` and `netlink.rs` call to run their
//! updates; the work items this file holds and `update.rs` queues run
//! through the `WorkItem` implementations of `work.rs`; and
//! `warn_ratelimited!` is the crate root's.
//!
//! Layer 4 (transaction), below `update.rs`. Owns: the [`Bridge`], its
//! work items (their types, and waiting for them) and where it is
//! published ([`with`]). May use: layers 1-3 (`model`, `state`, `roce`).
//!
//! [`PortEntry::object`]: crate::model::PortEntry::object
//! [`REVALIDATE_MS`]: crate::update::REVALIDATE_MS
//! [`Effects`]: crate::update::Effects
//! [`Locks`]: crate::locks::Locks
//! [`relate`]: crate::secy::relate

use crate::model::RdmaDev;
use crate::net::netlink::Family;
use crate::rdma;
use crate::roce::DeviceExt;
use crate::state::State;
use crate::workqueue::{
    impl_has_delayed_work, impl_has_work, new_delayed_work, new_work, DelayedWork, Work,
};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};
use kernel::sync::{Arc, Mutex};
use kernel::time::{ClockSource, Monotonic};

/// The bridge.
#[pin_data]
pub(crate) struct Bridge {
    #[pin]
    pub(crate) state: Mutex<State>,
    /// The generic netlink family it announces through (its
    /// `dev-change-ntf`), which the family's requests reach the bridge
    /// through in turn ([`with`]).
    pub(crate) family: &'static Family,
    /// The writer of the feature bits no update could write itself.
    pub(crate) deferred: Arc<Deferred>,
    /// The periodic re-read of the SecYs.
    pub(crate) revalidate: Arc<Revalidate>,
    /// The re-read of GIDs after a GID table changed.
    pub(crate) gid_work: Arc<GidWork>,
    /// The handler of each tracked RDMA device's events, by its identity.
    /// Taken without RTNL: registering and unregistering a handler waits
    /// for running handlers, which the RDMA core may call with RTNL held.
    #[pin]
    handlers: Mutex<RBTree<usize, Pin<KBox<rdma::EventHandler<GidEvents>>>>>,
}

/// The bridge, published for the RDMA client and the family, whose
/// callbacks get no context of their own.
static BRIDGE: AtomicPtr<Bridge> = AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the published bridge, if any.
pub(crate) fn with<R>(f: impl FnOnce(&Bridge) -> R) -> Option<R> {
    let ptr = BRIDGE.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-null `BRIDGE` holds a reference from `Arc::into_raw`
    // (`publish`). `unpublish` releases it only after the RDMA client is
    // unregistered (with it every device's GID event handler) and the
    // deferred writer, the periodic re-read and the re-read of GIDs are
    // flushed (the bridge is closed, so no update queues them again, and no
    // handler is left to queue a re-read of GIDs), and the
    // module's own reference outlives every family request (the family is
    // unregistered before `state` is dropped).
    Some(f(unsafe { &*ptr }))
}

impl Bridge {
    /// A bridge that tracks nothing yet, which announces through `family`.
    pub(crate) fn new(family: &'static Family) -> Result<Arc<Bridge>> {
        let deferred = Deferred::new()?;
        let revalidate = Revalidate::new()?;
        let gid_work = GidWork::new()?;
        let now = Monotonic::ktime_get();
        Arc::pin_init(
            pin_init!(Bridge {
                state <- new_mutex!(State::new(now as u64), "macsec_bridge:state"),
                family,
                deferred,
                revalidate,
                gid_work,
                handlers <- new_mutex!(RBTree::new(), "macsec_bridge:handlers"),
            }),
            GFP_KERNEL,
        )
    }

    /// Makes `this` reachable from [`with`].
    pub(crate) fn publish(this: &Arc<Bridge>) {
        let raw = Arc::into_raw(this.clone());
        BRIDGE.store(raw.cast_mut(), Ordering::Release);
    }

    /// Undoes [`Bridge::publish`].
    pub(crate) fn unpublish() {
        let raw = BRIDGE.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: `raw` came from `Arc::into_raw` in `publish`.
            drop(unsafe { Arc::from_raw(raw) });
        }
    }

    /// Follows the GID tables of RDMA device `ib`, which is being added.
    /// Called without RTNL, before [`Bridge::rdma_add`]: a change made after
    /// the latter read the tables is then told.
    ///
    /// # Safety
    ///
    /// `ib` was given to the RDMA client's `add`, and [`Bridge::unfollow_gids`]
    /// is called for it before its `remove` returns, or before `add`
    /// returns failure.
    pub(crate) unsafe fn follow_gids(&self, ib: &rdma::Device) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?;
        // SAFETY: the handler goes in `unfollow_gids`, before `ib` does
        // (the caller's guarantee).
        let h = KBox::pin_init(unsafe { rdma::EventHandler::new(ib) }, GFP_KERNEL)?;
        let old = self.handlers.lock().insert(node.into_node(ib.id(), h));
        // Not there before: `add` comes once per device.
        drop(old);
        Ok(())
    }

    /// Stops following `ib`'s GID tables. Called without RTNL.
    pub(crate) fn unfollow_gids(&self, ib: &rdma::Device) {
        let h = self.handlers.lock().remove(&ib.id());
        // Unregistered here, outside the lock: this waits for a running
        // handler.
        drop(h);
    }

    /// How many ports and SecYs are tracked.
    pub(crate) fn counts(&self) -> (usize, usize) {
        self.state.lock().counts()
    }

    /// Waits for a re-read of GIDs, queued or running, to finish. Called
    /// without RTNL, which it takes, once no device's handler is left to
    /// queue it again.
    pub(crate) fn flush_gids(&self) {
        self.gid_work.work.flush();
    }

    /// Waits for a deferred feature write, queued or running, to finish.
    /// Called without RTNL, which the writer takes.
    pub(crate) fn flush_deferred(&self) {
        self.deferred.work.flush();
    }

    /// Runs a queued periodic re-read now and waits for it, or for one
    /// that is running. Called without RTNL, which the re-read takes, once
    /// the bridge is closed: the run finds no port and queues itself no
    /// more. (Flushed, not cancelled: a queued item holds a reference to
    /// its `Arc` that only its run gives back.)
    pub(crate) fn flush_revalidate(&self) {
        self.revalidate.work.flush();
    }
}

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

    /// Whether the GID tables of RDMA device `r` changed.
    pub(crate) fn has(&self, r: &RdmaDev) -> bool {
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

    /// Notes that the table of the device whose identity is `id` changed.
    pub(crate) fn note(&self, id: usize) {
        self.changed.lock().note(id);
    }

    /// Takes the changes noted so far; a change noted after this queues
    /// the work again.
    pub(crate) fn take(&self) -> GidChanges {
        core::mem::replace(&mut *self.changed.lock(), GidChanges::new())
    }
}

/// The RDMA core's events, for the bridge.
pub(crate) struct GidEvents;
