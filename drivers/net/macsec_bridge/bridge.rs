// SPDX-License-Identifier: GPL-2.0

//! What the module knows, what each port advertises, and every path that
//! changes either.
//!
//! Three sources feed the [`State`], all under RTNL: the interposed
//! `macsec_ops` of every device that has them (the only synchronous view of
//! an offloaded SecY), the netdevice notifier (devices appearing, going
//! away, up and down, feature changes), and the RDMA client (which takes
//! RTNL itself). RTNL serialises every writer, and readers take it too:
//! they read netdev names, ifindexes and namespaces, which only RTNL keeps
//! still, and first read the observed SecYs again. The state's mutex is
//! taken inside RTNL.
//!
//! One change reaches no source: PN exhaustion, which clears a TX SA's
//! `active` flag from the datapath (`macsec_pn_wrapped()`). Every SecY an
//! operation showed is read again before each netlink answer, and every
//! [`REVALIDATE_MS`] while a port advertises offload ([`Revalidate`]).
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

use crate::lockstep::{self, Knowledge, Offload, Op, Port, SecyState, Verdict, NUM_AN};
use crate::trace::{self, Cause};
use crate::{netlink, rdma};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::kvec::PushError;
use kernel::net::device::{Features, NetDevice};
use kernel::net::macsec::{self, Context, Installed, Interposer, Mdo, Observer, SecY, SecYRef};
use kernel::net::netlink::{GenlMsg, NetlinkSkBuff, GENLMSG_DEFAULT_SIZE};
use kernel::net::notifier::{NetdevEvent, NetdevNotifier};
use kernel::net::rtnl::{Rtnl, RtnlGuard};
use kernel::sync::{aref::ARef, Arc, Mutex};
use kernel::time::msecs_to_jiffies;
use kernel::workqueue::{self, DelayedWork, Work, WorkItem};
use kernel::{
    bindings, impl_has_delayed_work, impl_has_work, new_delayed_work, new_mutex, new_work,
    prelude::*,
};

/// How often, at most, a TX SA deactivated by PN exhaustion goes unseen
/// while no one asks: the interval at which observed SecYs are read again
/// while a port advertises offload.
pub(crate) const REVALIDATE_MS: u32 = 1000;

/// Where a port's SecY comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Relation {
    /// The port is the MACsec netdev.
    SelfDev,
    /// The port is the real device of the MACsec netdev.
    Upper,
    /// An administrator bound the port to the MACsec netdev, which may be
    /// in another namespace (the DPU split).
    Bound,
}

/// A `bound` port's binding. It holds the MACsec netdev itself, not its
/// ifindex: it follows the device through namespace moves, and a later
/// device with the same ifindex has nothing to do with it.
pub(crate) struct Binding {
    /// The MACsec netdev; `None` once it was unregistered (the binding is
    /// stale until unbound).
    secy: Option<ARef<NetDevice>>,
}

/// Why a `bind` or `unbind` was refused. Nothing changed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BindError {
    /// The port and the SecY are one device.
    ToItself,
    /// The port is a MACsec netdev: it has its own SecY.
    PortIsSecy,
    /// The target is not a MACsec netdev.
    NotSecy,
    /// The port is already bound.
    AlreadyBound,
    /// The port is not bound.
    NotBound,
    /// No memory to track the port.
    NoMemory,
}

/// Who owns `NETIF_F_HW_MACSEC` on a port.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Owner {
    /// This module: set iff the port advertises offload.
    Bridge,
    /// The port's driver: never touched.
    Driver,
}

impl Owner {
    /// Who owns `dev`'s bit. On a device with `macsec_ops` (a MACsec-capable
    /// NIC, and every VLAN) the bit says whether the MACsec core may offload
    /// a SecY to it, and the receive path of an offloaded SecY reads it: set
    /// by the module, it would allow offload the driver never allowed;
    /// cleared, it would leave offloaded SecYs without their operations.
    /// Nor is a bit the driver lets users toggle the module's. Anywhere else
    /// the bit is the module's, whoever set it before (a previous load).
    ///
    /// Asked again at every update: nothing is assumed from the moment the
    /// port appeared.
    fn of(dev: &NetDevice) -> Owner {
        if dev.has_macsec_ops() || dev.hw_features().contains(Features::HW_MACSEC) {
            Owner::Driver
        } else {
            Owner::Bridge
        }
    }
}

/// A MACsec netdev.
pub(crate) struct Secy {
    /// The MACsec netdev.
    pub(crate) dev: ARef<NetDevice>,
    /// Its real device.
    lower: Option<ARef<NetDevice>>,
    /// What is known of the SecY.
    pub(crate) known: Knowledge,
    /// SCI (as on the wire) and cipher, once an offload operation showed
    /// them.
    pub(crate) id: Option<(u64, macsec::Cipher)>,
    /// The SecY itself, once an offload operation showed it: read again
    /// for what changes unseen.
    view: Option<SecYRef>,
}

/// A port: a netdev that backs an RDMA device.
pub(crate) struct PortEntry {
    /// The netdev.
    pub(crate) dev: ARef<NetDevice>,
    /// The RDMA devices on it: (identity, name).
    pub(crate) rdma: KVec<(usize, KVec<u8>)>,
    /// How many times one of them was renamed (a rename changes the object).
    renames: u32,
    /// The advertised state.
    pub(crate) port: Port,
    /// Where its SecY comes from, if it has one.
    pub(crate) relation: Option<Relation>,
    /// The MACsec netdev of its SecY.
    pub(crate) secy: Option<ARef<NetDevice>>,
    /// Who owns the feature bit.
    pub(crate) owner: Owner,
    /// The binding, for a `bound` port. A bound port stays tracked while
    /// it has no RDMA device (RXE cannot follow its netdev into another
    /// namespace).
    pub(crate) binding: Option<Binding>,
    /// The object's generation: the bridge's clock when it last changed.
    pub(crate) generation: u64,
    /// When the port was tracked, in order: ports stay in this order in
    /// [`State::ports`], and a dump resumes after the last serial it sent.
    pub(crate) serial: u64,
    /// The object as last announced (`None` before the first notification).
    last: Option<View>,
    /// Retracted and announced once more by the next [`Bridge::finish`],
    /// then dropped.
    gone: bool,
}

/// The parts of a port's object that a notification reports (and the
/// generation stands for).
#[derive(Clone, Copy, PartialEq, Eq)]
struct View {
    verdict: Verdict,
    relation: Option<Relation>,
    secy: i32,
    id: Option<(u64, macsec::Cipher)>,
    encrypt: Option<bool>,
    owner: Owner,
    ifindex: i32,
    name: [u8; 16],
    /// The cookies of the port's and the SecY's namespaces: a move changes
    /// the object (its ifindex and `secy-netnsid` are per namespace).
    netns: u64,
    secy_netns: u64,
    /// The RDMA devices on the port: how many, and the sum of their
    /// identities (a device replaced by another changes it).
    rdma: (usize, usize),
    /// Renames of the port's RDMA devices.
    renames: u32,
}

impl PortEntry {
    /// A port for `dev`, not related to anything yet.
    fn new(dev: &NetDevice) -> PortEntry {
        PortEntry {
            dev: dev.into(),
            rdma: KVec::new(),
            renames: 0,
            port: Port::new(Knowledge::Unknown),
            relation: None,
            secy: None,
            owner: Owner::of(dev),
            binding: None,
            generation: 0,
            serial: 0,
            last: None,
            gone: false,
        }
    }

    /// Whether the port is still tracked: it backs an RDMA device or is
    /// bound.
    fn wanted(&self) -> bool {
        !self.rdma.is_empty() || self.binding.is_some()
    }

    /// Retracts the port; the next [`Bridge::finish`] announces that once
    /// more and forgets it.
    fn drop_port(&mut self) {
        self.port.observe(Knowledge::Unknown);
        self.gone = true;
    }
}

/// Everything the bridge knows.
pub(crate) struct State {
    /// Set at unload: events are ignored from then on.
    closing: bool,
    /// The last generation handed out. Generations are shared by all ports
    /// and start from the monotonic clock (in ns) at load, so they only
    /// grow, across ports, re-created ports and module reloads alike.
    pub(crate) clock: u64,
    /// The last serial handed to a port.
    serial: u64,
    /// The ports, in the order they were tracked (by serial): new ones are
    /// appended and slots are never reused.
    pub(crate) ports: KVec<Option<PortEntry>>,
    /// Every MACsec netdev, in every namespace.
    pub(crate) secys: KVec<Option<Secy>>,
    /// The interposed devices.
    lowers: KVec<Option<Installed<Bridge>>>,
    /// Room for one feature write per port, reserved when a port is added:
    /// a retraction's bit is written even when nothing can be allocated
    /// (at unload, nothing would write it later). Lent to [`Effects`] by
    /// [`Bridge::finish`] and given back, empty, by [`Bridge::apply`].
    writes: KVec<(ARef<NetDevice>, bool)>,
    /// Port objects the current update recomputed (for the trace).
    visited: u32,
}

impl State {
    /// What the current update did, for the trace.
    fn work(&self) -> trace::Work {
        trace::Work {
            visited: self.visited,
            ports: self.ports.len() as u32,
            secys: self.secys.iter().flatten().count() as u32,
        }
    }

    /// The SecY of MACsec netdev `dev`.
    pub(crate) fn secy(&self, dev: &NetDevice) -> Option<&Secy> {
        self.secys.iter().flatten().find(|s| *s.dev == *dev)
    }

    /// Tracks port `e` after every other (see [`State::ports`]) and returns
    /// its index; gives `e` back if there is no memory (of the caller's
    /// memory cgroup: see [`GROW`]).
    fn add_port(&mut self, mut e: PortEntry) -> Result<usize, PortEntry> {
        if self.ports.reserve(1, GROW).is_err()
            || self.writes.reserve(self.ports.len() + 1, GROW).is_err()
        {
            return Err(e);
        }
        self.serial += 1;
        e.serial = self.serial;
        let i = self.ports.len();
        // Cannot fail: capacity is reserved.
        let _ = self.ports.push(Some(e), GROW);
        Ok(i)
    }
}

/// Puts `v` in the first free slot of `slots` and returns the slot's index;
/// gives `v` back if there is no memory (see [`GROW`]).
fn put<T>(slots: &mut KVec<Option<T>>, v: T) -> Result<usize, T> {
    if let Some(i) = slots.iter().position(|s| s.is_none()) {
        slots[i] = Some(v);
        return Ok(i);
    }
    // Reserve first: a failed `push` would drop `v`.
    if slots.reserve(1, GROW).is_err() {
        return Err(v);
    }
    let i = slots.len();
    // Cannot fail: capacity is reserved.
    let _ = slots.push(Some(v), GROW);
    Ok(i)
}

/// How the state grows: charged to the memory cgroup of the task whose
/// action made it grow. A SecY is tracked, and a port bound, from the
/// context of whoever created or bound it, and the root of a user
/// namespace may do both at will. The arrays are shared: a growth charges
/// the whole new array to that task's cgroup, so the charge is coarse,
/// but what a container makes the state grow by is never free to it.
const GROW: kernel::alloc::Flags = GFP_KERNEL_ACCOUNT;

/// What a writer does once the state is unlocked.
struct Effects {
    /// Set (`true`) or clear `NETIF_F_HW_MACSEC` on a port: the state's
    /// reserved room ([`State::writes`]).
    features: KVec<(ARef<NetDevice>, bool)>,
    /// A write found no room: the deferred writer is to bring every bit to
    /// what the state says once memory allows.
    retry: bool,
    /// `dev-change-ntf` messages, with the port whose namespace gets them.
    notes: KVec<(ARef<NetDevice>, GenlMsg)>,
    /// Interposers to take off.
    restore: KVec<Installed<Bridge>>,
    /// Whether a port advertises offload: the SecYs are to be read again
    /// in [`REVALIDATE_MS`].
    revalidate: bool,
}

impl Effects {
    fn new() -> Effects {
        Effects {
            features: KVec::new(),
            notes: KVec::new(),
            restore: KVec::new(),
            revalidate: false,
            retry: false,
        }
    }

    /// Takes `i` off once the state is unlocked, or at once if there is no
    /// memory to remember it (an `Installed` must not be dropped under
    /// RTNL: its `Drop` takes RTNL).
    ///
    /// # Safety
    ///
    /// As [`Installed::restore_unlocked`]: RTNL is held, and the caller is
    /// not between two MACsec operations through `i`'s table (it runs in a
    /// notifier for `i`'s own device, or at unload).
    unsafe fn restore(&mut self, rtnl: &Rtnl, i: Installed<Bridge>) {
        if self.restore.reserve(1, GFP_KERNEL).is_ok() {
            // Cannot fail: capacity is reserved.
            let _ = self.restore.push(i, GFP_KERNEL);
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { i.restore_unlocked(rtnl) };
        }
    }
}

/// What the context of an update holds, hence how it may write a port's
/// features and take an interposer off.
pub(crate) enum Locks<'a, 'e> {
    /// RTNL that the caller took itself (a request, the RDMA client, unload,
    /// the deferred writer): it may take one device's instance lock at a
    /// time, and restore interposers.
    Own(&'a mut RtnlGuard),
    /// A netdevice notifier: the core holds RTNL and, for some events, the
    /// event device's instance lock.
    Event(&'a Rtnl, &'a NetdevEvent<'e>),
    /// An offload operation's observer, for operation `Mdo`: the MACsec
    /// core holds RTNL. For every operation but `mdo_upd_secy` it holds no
    /// instance lock: `macsec.c` calls them from generic netlink requests,
    /// rtnetlink operations on the MACsec netdev (which is not ops-locked),
    /// its open and close, and its real device's `NETDEV_UNREGISTER`, which
    /// the core sends with RTNL only. `mdo_upd_secy` also comes from the
    /// MACsec netdev's `ndo_set_mac_address`, which a bond failing over to
    /// it calls, possibly inside the rename of another slave that holds
    /// that slave's instance lock: it is treated as a notifier is.
    Observer(&'a Rtnl, Mdo),
}

impl Locks<'_, '_> {
    /// Sets or clears `NETIF_F_HW_MACSEC` on `dev` if the locks that takes
    /// are held or may be taken here; `false` if the write must be made
    /// elsewhere.
    fn write(&mut self, dev: &NetDevice, set: bool) -> bool {
        let none = Features(0);
        let (s, c) = if set {
            (Features::HW_MACSEC, none)
        } else {
            (none, Features::HW_MACSEC)
        };
        let lock = match self {
            Locks::Own(rtnl) => Some(dev.lock_features(rtnl)),
            Locks::Observer(rtnl, op) if *op != Mdo::UpdSecy => {
                // SAFETY: no instance lock is held for this operation (see
                // `Observer`).
                Some(unsafe { dev.lock_features_unlocked(rtnl) })
            }
            Locks::Observer(rtnl, _) => dev.features_lock_rtnl(rtnl),
            // The event's proof covers the event's device only. A notifier
            // may run inside another device's locked section, so any other
            // device is written here only if RTNL is all it needs.
            Locks::Event(rtnl, ev) if *ev.dev() == *dev => ev.features_lock(rtnl),
            Locks::Event(rtnl, _) => dev.features_lock_rtnl(rtnl),
        };
        lock.map(|l| l.change(s, c)).is_some()
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

impl WorkItem for Deferred {
    type Pointer = Arc<Deferred>;

    fn run(_this: Arc<Deferred>) {
        let mut rtnl = Rtnl::lock();
        // Nothing to announce: the state did not change. `finish` finds
        // the bits that differ from it, and `apply` writes them.
        with(|b| {
            b.update(
                &mut Locks::Own(&mut rtnl),
                (Cause::Deferred, 0, 0),
                |_, _| {},
            )
        });
    }
}

/// Reads the observed SecYs again every [`REVALIDATE_MS`] while a port
/// advertises offload: a work item that takes RTNL.
#[pin_data]
pub(crate) struct Revalidate {
    #[pin]
    work: DelayedWork<Revalidate>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Revalidate { self.work }
}

impl WorkItem for Revalidate {
    type Pointer = Arc<Revalidate>;

    fn run(_this: Arc<Revalidate>) {
        let mut rtnl = Rtnl::lock();
        // Queues itself again while a port advertises offload.
        with(|b| b.revalidate(&mut rtnl, Cause::Revalidate));
    }
}

/// Forgets RDMA device `id` on every port, and the ports it alone kept.
fn forget_rdma(st: &mut State, id: usize) {
    for e in st.ports.iter_mut().flatten() {
        // In place: nothing to allocate, so nothing else is lost.
        e.rdma.retain(|(i, _)| *i != id);
        if !e.wanted() {
            e.drop_port();
        }
    }
}

/// The real device of MACsec netdev `dev`.
fn real_dev(dev: &NetDevice) -> Option<ARef<NetDevice>> {
    if !dev.is_macsec() {
        return None;
    }
    // SAFETY: `dev` is a valid MACsec netdev, whose private data
    // `macsec_get_real_dev` reads; the result is valid for as long as `dev`
    // holds it, and is turned into a reference of our own at once.
    let raw = unsafe { bindings::macsec_get_real_dev(dev.as_raw()) };
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-null and valid, as above.
    Some(unsafe { NetDevice::from_raw(raw) }.into())
}

/// What is known of MACsec netdev `dev` without having observed it.
///
/// A software SecY is fully described by its netdev states (nothing else of
/// it is observable, see [`lockstep::evaluate`]). An offloaded one existed
/// before the module loaded, or was created under another interposer: its
/// SAs and flags are unknown until an offload operation shows them.
fn unobserved(dev: &NetDevice, lower: Option<&NetDevice>) -> Knowledge {
    // SAFETY: `dev` is a valid MACsec netdev (the caller checked
    // `is_macsec`).
    if unsafe { bindings::macsec_netdev_is_offloaded(dev.as_raw()) } {
        return Knowledge::Unknown;
    }
    Knowledge::Known(SecyState {
        offload: Offload::Off,
        secy_up: dev.is_up(),
        lower_up: lower.is_some_and(lower_up),
        protect: false,
        encrypt: false,
        encoding_sa: 0,
        tx_sa: [None; NUM_AN],
    })
}

fn lower_up(dev: &NetDevice) -> bool {
    dev.is_up() && dev.carrier_ok()
}

/// The SecY as an offload operation sees it at this instant.
fn snapshot(ctx: &Context<'_>) -> SecyState {
    let secy = ctx.secy();
    let links = SecyState {
        offload: match ctx.offload() {
            macsec::Offload::Off => Offload::Off,
            macsec::Offload::Phy => Offload::Phy,
            macsec::Offload::Mac => Offload::Mac,
        },
        secy_up: secy.netdev().is_up(),
        lower_up: lower_up(ctx.lower()),
        protect: false,
        encrypt: false,
        encoding_sa: 0,
        tx_sa: [None; NUM_AN],
    };
    with_flags(links, secy)
}

/// `s` with the flags and TX SAs `secy` has now; its offload mode and
/// links are not the SecY's to say.
fn with_flags(s: SecyState, secy: &SecY) -> SecyState {
    let mut tx_sa = [None; NUM_AN];
    for (an, sa) in tx_sa.iter_mut().enumerate() {
        // An inactive SA counts as absent: only the encoding SA being
        // active matters.
        if secy.tx_sa_active(an as u8) {
            *sa = Some(true);
        }
    }
    SecyState {
        protect: secy.protect_frames(),
        encrypt: secy.encrypt(),
        encoding_sa: secy.encoding_sa(),
        tx_sa,
        ..s
    }
}

/// Reads every observed, offloaded SecY again and lets its ports converge
/// on what changed unseen (a TX SA deactivated by PN exhaustion).
fn reread(rtnl: &Rtnl, st: &mut State) {
    let State { ports, secys, .. } = st;
    for s in secys.iter_mut().flatten() {
        let (Some(view), Knowledge::Known(k)) = (&s.view, s.known) else {
            continue;
        };
        if k.offload == Offload::Off {
            continue;
        }
        let now = with_flags(k, view.get(rtnl));
        if now == k {
            continue;
        }
        s.known = Knowledge::Known(now);
        for e in ports.iter_mut().flatten() {
            if e.secy.as_deref() == Some(&*s.dev) {
                e.port.observe(s.known);
            }
        }
    }
}

/// The lockstep view of an offload operation.
fn op_of(op: Mdo, ctx: &Context<'_>) -> Op {
    match op {
        Mdo::DevOpen => Op::DevOpen,
        Mdo::DevStop => Op::DevStop,
        Mdo::AddSecy => Op::AddSecy,
        Mdo::UpdSecy => Op::UpdSecy,
        Mdo::DelSecy => Op::DelSecy,
        Mdo::AddTxsa => Op::AddTxsa {
            an: ctx.assoc_num(),
            active: ctx.tx_sa_active(),
        },
        Mdo::UpdTxsa => Op::UpdTxsa {
            an: ctx.assoc_num(),
            active: ctx.tx_sa_active(),
        },
        Mdo::DelTxsa => Op::DelTxsa {
            an: ctx.assoc_num(),
        },
        _ => Op::Other,
    }
}

/// Points every live port at its SecY and lets it converge on what is
/// known of that SecY.
fn relate(st: &mut State) {
    let State { ports, secys, .. } = st;
    for e in ports.iter_mut().flatten().filter(|e| !e.gone) {
        let (relation, secy) = if let Some(b) = &e.binding {
            // An administrator's word beats what the topology suggests.
            (Some(Relation::Bound), b.secy.clone())
        } else if e.dev.is_macsec() {
            (Some(Relation::SelfDev), Some(e.dev.clone()))
        } else {
            // The real device of one or more MACsec netdevs: the one with
            // the lowest ifindex protects it (netdevsim allows three).
            match secys
                .iter()
                .flatten()
                .filter(|s| s.lower.as_deref() == Some(&*e.dev))
                .min_by_key(|s| s.dev.ifindex())
            {
                Some(s) => (Some(Relation::Upper), Some(s.dev.clone())),
                None => (None, None),
            }
        };
        e.relation = relation;
        e.secy = secy;
        let known = match &e.secy {
            None if e.binding.is_some() => Knowledge::Stale,
            None => Knowledge::NoSecy,
            Some(d) => secys
                .iter()
                .flatten()
                .find(|s| *s.dev == **d)
                .map_or(Knowledge::Unknown, |s| s.known),
        };
        e.port.observe(known);
    }
}

/// The bridge.
#[pin_data]
pub(crate) struct Bridge {
    #[pin]
    pub(crate) state: Mutex<State>,
    /// The writer of the feature bits no update could write itself.
    deferred: Arc<Deferred>,
    /// The periodic re-read of the SecYs.
    revalidate: Arc<Revalidate>,
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
    // unregistered and the deferred writer and periodic re-read are
    // flushed (no port is left to queue them again), and the module's own
    // reference outlives every family request (the family is unregistered
    // before `state` is dropped).
    Some(f(unsafe { &*ptr }))
}

impl Bridge {
    /// A bridge that tracks nothing yet.
    pub(crate) fn new() -> Result<Arc<Bridge>> {
        let deferred = Arc::pin_init(
            pin_init!(Deferred {
                work <- new_work!("macsec_bridge:deferred"),
            }),
            GFP_KERNEL,
        )?;
        let revalidate = Arc::pin_init(
            pin_init!(Revalidate {
                work <- new_delayed_work!("macsec_bridge:revalidate"),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `ktime_get` has no preconditions.
        let now = unsafe { bindings::ktime_get() };
        Arc::pin_init(
            pin_init!(Bridge {
                state <- new_mutex!(
                    State {
                        closing: false,
                        clock: now as u64,
                        serial: 0,
                        ports: KVec::new(),
                        secys: KVec::new(),
                        lowers: KVec::new(),
                        writes: KVec::new(),
                        visited: 0,
                    },
                    "macsec_bridge:state"
                ),
                deferred,
                revalidate,
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

    /// Reads the observed SecYs again (see [`reread`]), then announces and
    /// applies what changed. Every netlink answer, and the periodic
    /// re-read, start with it.
    pub(crate) fn revalidate(&self, rtnl: &mut RtnlGuard, cause: Cause) {
        let span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            st.visited = 0;
            if !st.closing {
                reread(rtnl, &mut st);
            }
            self.finish(&mut st, &mut fx);
            work = st.work();
        }
        self.apply(&mut Locks::Own(rtnl), fx);
        span.end(cause, 0, 0, work);
    }

    /// Runs `f` on the state, then announces and applies what changed.
    /// `at` is what the trace reports: the cause, its code and device.
    fn update(
        &self,
        locks: &mut Locks<'_, '_>,
        at: (Cause, u32, i32),
        f: impl FnOnce(&mut State, &mut Effects),
    ) {
        let span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            st.visited = 0;
            if !st.closing {
                f(&mut st, &mut fx);
            }
            self.finish(&mut st, &mut fx);
            work = st.work();
        }
        self.apply(locks, fx);
        span.end(at.0, at.1, at.2, work);
    }

    /// Collects the feature changes and notifications the state calls for,
    /// and drops the ports that are gone.
    fn finish(&self, st: &mut State, fx: &mut Effects) {
        let State {
            ports,
            secys,
            clock,
            writes,
            visited,
            ..
        } = st;
        fx.features = core::mem::take(writes);
        for slot in ports.iter_mut() {
            let Some(e) = slot else { continue };
            *visited += 1;
            if e.gone && e.last.is_none() {
                // Never announced (an RDMA device that could not be
                // tracked): nothing to retract.
                *slot = None;
                continue;
            }
            let offload = !e.gone && e.port.advertised().protection.is_offload();
            fx.revalidate |= offload;
            e.owner = Owner::of(&e.dev);
            if e.owner == Owner::Bridge && e.dev.is_registered() {
                let want = offload;
                if want != e.dev.features().contains(Features::HW_MACSEC) {
                    // Within the reserved room; past it only if a port
                    // could not reserve its share, which then costs a
                    // retry, never a bit left set.
                    if let Err(PushError((dev, set))) =
                        fx.features.push_within_capacity((e.dev.clone(), want))
                    {
                        if fx.features.push((dev, set), GFP_KERNEL).is_err() {
                            warn_ratelimited!(
                                "{}: out of memory, feature bit deferred\n",
                                e.dev.name()
                            );
                            fx.retry = true;
                        }
                    }
                }
            }
            let view = view(e, secys);
            if e.last != Some(view) {
                *clock += 1;
                e.generation = *clock;
                e.last = Some(view);
                trace::announce(
                    view.ifindex,
                    e.generation,
                    netlink::protection(view.verdict.protection),
                    netlink::reason(view.verdict.reason),
                );
                if netlink::FAMILY.has_listeners_in(e.dev.net(), netlink::MCGRP_MONITOR) {
                    let note = NetlinkSkBuff::new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL)
                        .and_then(|skb| {
                            skb.genlmsg_put(0, 0, &netlink::FAMILY, netlink::CMD_DEV_CHANGE_NTF)
                        })
                        .map_err(Error::from);
                    let fill = |m: GenlMsg| netlink::fill(&m, e, secys, e.dev.net()).map(|()| m);
                    match note.and_then(fill) {
                        Ok(m) => {
                            if fx.notes.push((e.dev.clone(), m), GFP_KERNEL).is_err() {
                                warn_ratelimited!("{}: notification dropped\n", e.dev.name());
                            }
                        }
                        Err(_) => warn_ratelimited!("{}: notification dropped\n", e.dev.name()),
                    }
                }
            }
            if e.gone {
                *slot = None;
            }
        }
        // Keeps the order; frees nothing, so cannot fail.
        ports.retain(|slot| slot.is_some());
    }

    /// Applies what [`Bridge::finish`] collected. Called with RTNL held and
    /// the state unlocked.
    fn apply(&self, locks: &mut Locks<'_, '_>, mut fx: Effects) {
        // Notifications first: a feature change re-enters the notifier, and
        // anything announced from there must come after what led to it.
        for (dev, msg) in fx.notes.into_iter() {
            // A full socket buffer: netlink semantics.
            let _ = msg.multicast_netns(
                &netlink::FAMILY,
                dev.net(),
                0,
                netlink::MCGRP_MONITOR,
                GFP_KERNEL,
            );
        }
        let mut deferred = fx.retry;
        for (dev, set) in fx.features.drain_all() {
            // Already written by an update nested in an earlier write (the
            // feature change re-enters the notifier, which brings every
            // port to the state).
            if dev.features().contains(Features::HW_MACSEC) == set {
                continue;
            }
            let written = locks.write(&dev, set);
            trace::feature(dev.ifindex(), set, written);
            deferred |= !written;
        }
        // The room goes back, empty, for the next update.
        let mut st = self.state.lock();
        if fx.features.capacity() > st.writes.capacity() {
            st.writes = core::mem::take(&mut fx.features);
        }
        drop(st);
        if deferred {
            // Already queued: that run writes this bit too.
            let _ = workqueue::system().enqueue(self.deferred.clone());
        }
        if fx.revalidate {
            // Already queued: that run comes soon enough.
            let _ = workqueue::system()
                .enqueue_delayed(self.revalidate.clone(), msecs_to_jiffies(REVALIDATE_MS));
        }
        for installed in fx.restore.into_iter() {
            match locks {
                Locks::Own(rtnl) => installed.restore(rtnl),
                // SAFETY: only the notifier for the interposed device itself
                // (its registration failing to be recorded, or its
                // unregistration) queues a restore (`Effects::restore`).
                Locks::Event(rtnl, _) => unsafe { installed.restore_unlocked(rtnl) },
                // Observers never queue one; were one queued, it stays
                // installed, and recorded, until the device goes away.
                Locks::Observer(..) => {
                    if let Err(i) = put(&mut self.state.lock().lowers, installed) {
                        pr_err!("interposer dropped under RTNL: leaked\n");
                        core::mem::forget(i);
                    }
                }
            }
        }
    }

    /// A device appeared: observe its `macsec_ops`, and track it if it is
    /// a MACsec netdev.
    fn registered(this: &Arc<Bridge>, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        this.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx| {
            match Interposer::install(rtnl, dev, this.clone()) {
                Ok(i) => {
                    if let Err(i) = put(&mut st.lowers, i) {
                        warn_ratelimited!("{}: out of memory, offload not observed\n", dev.name());
                        // SAFETY: this is the device's own REGISTER, and
                        // its table was installed just now.
                        unsafe { fx.restore(rtnl, i) };
                    }
                }
                Err(e) if e == EOPNOTSUPP => {}
                Err(e) => warn_ratelimited!(
                    "{}: cannot observe its MACsec offload ({:?}): its SecYs stay unknown\n",
                    dev.name(),
                    e
                ),
            }
            if dev.is_macsec() && st.secy(dev).is_none() {
                let lower = real_dev(dev);
                let known = unobserved(dev, lower.as_deref());
                let secy = Secy {
                    dev: dev.into(),
                    lower,
                    known,
                    id: None,
                    view: None,
                };
                if put(&mut st.secys, secy).is_err() {
                    warn_ratelimited!("{}: out of memory, SecY not tracked\n", dev.name());
                }
            }
            relate(st);
        });
    }

    /// A device is being unregistered, or leaves its namespace.
    fn unregistered(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, fx| {
            for slot in st.lowers.iter_mut() {
                if slot.as_ref().and_then(|i| i.device()) == Some(dev) {
                    if let Some(i) = slot.take() {
                        // SAFETY: this is the device's own UNREGISTER.
                        unsafe { fx.restore(rtnl, i) };
                    }
                }
            }
            // A device leaving for another namespace keeps its identity:
            // a port stays tracked, a SecY stays known and bound. One going
            // away is forgotten, and no reference to it is kept.
            if !dev.is_registered() {
                for slot in st.secys.iter_mut() {
                    if slot.as_ref().is_some_and(|s| *s.dev == *dev) {
                        *slot = None;
                    }
                }
                for e in st.ports.iter_mut().flatten() {
                    if *e.dev == *dev {
                        e.drop_port();
                    }
                    if let Some(b) = &mut e.binding {
                        if b.secy.as_deref() == Some(dev) {
                            b.secy = None;
                        }
                    }
                }
            }
            relate(st);
        });
    }

    /// `dev` changed state: is it a SecY or the real device of one?
    /// `going` is for `NETDEV_GOING_DOWN`: retract now, the state follows
    /// with `NETDEV_DOWN`.
    fn link(&self, rtnl: &Rtnl, ev: &NetdevEvent<'_>, dev: &NetDevice, going: bool) {
        self.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _| {
            let State { ports, secys, .. } = st;
            for s in secys.iter_mut().flatten() {
                let Knowledge::Known(mut k) = s.known else {
                    continue;
                };
                if *s.dev == *dev {
                    k.secy_up = !going && dev.is_up();
                } else if s.lower.as_deref() == Some(dev) {
                    k.lower_up = !going && lower_up(dev);
                } else {
                    continue;
                }
                let k = Knowledge::Known(k);
                if !going {
                    s.known = k;
                }
                // GOING_DOWN opens a teardown, DOWN (or anything else)
                // closes it.
                for e in ports.iter_mut().flatten() {
                    if e.secy.as_deref() == Some(&*s.dev) {
                        if going {
                            e.port.before(&k);
                        } else {
                            e.port.after(k, true);
                        }
                    }
                }
            }
            relate(st);
        });
    }

    /// An RDMA device appeared: track the netdevs of its ports.
    pub(crate) fn rdma_add(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) -> Result {
        let mut ret = Ok(());
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 0, 0), |st, _| {
            // On failure the RDMA core will not call `rdma_remove`: nothing
            // of the device may stay.
            ret = (|| -> Result {
                for p in ib.ports() {
                    let Some(dev) = ib.netdev(p) else { continue };
                    let same = |s: &Option<PortEntry>| {
                        s.as_ref().is_some_and(|e| !e.gone && *e.dev == *dev)
                    };
                    let i = match st.ports.iter().position(same) {
                        Some(i) => i,
                        None => st.add_port(PortEntry::new(&dev)).map_err(|_| ENOMEM)?,
                    };
                    let Some(Some(e)) = st.ports.get_mut(i) else {
                        return Err(EINVAL);
                    };
                    if !e.rdma.iter().any(|(id, _)| *id == ib.id()) {
                        let mut name = KVec::new();
                        name.extend_from_slice(ib.name().to_bytes(), GFP_KERNEL)?;
                        e.rdma.push((ib.id(), name), GFP_KERNEL)?;
                    }
                }
                Ok(())
            })();
            if ret.is_err() {
                forget_rdma(st, ib.id());
            }
            relate(st);
        });
        ret
    }

    /// An RDMA device goes away.
    pub(crate) fn rdma_remove(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) {
        let at = (Cause::Rdma, 1, 0);
        self.update(&mut Locks::Own(rtnl), at, |st, _| forget_rdma(st, ib.id()));
    }

    /// An RDMA device was renamed: its ports report the new name.
    pub(crate) fn rdma_rename(&self, rtnl: &mut RtnlGuard, ib: &rdma::Device) {
        self.update(&mut Locks::Own(rtnl), (Cause::Rdma, 2, 0), |st, _| {
            for e in st.ports.iter_mut().flatten() {
                for (_, name) in e.rdma.iter_mut().filter(|(id, _)| *id == ib.id()) {
                    let mut new = KVec::new();
                    if new
                        .extend_from_slice(ib.name().to_bytes(), GFP_KERNEL)
                        .is_err()
                    {
                        // The old name stays: stale, but not wrong about
                        // protection.
                        warn_ratelimited!("out of memory: RDMA device {:?} renamed\n", ib.name());
                        continue;
                    }
                    *name = new;
                    e.renames = e.renames.wrapping_add(1);
                }
            }
        });
    }

    /// Binds port `dev` to MACsec netdev `secy` (relation `bound`). The
    /// caller checked that it may administer both namespaces.
    pub(crate) fn bind(
        &self,
        rtnl: &mut RtnlGuard,
        dev: &NetDevice,
        secy: &NetDevice,
    ) -> Result<(), BindError> {
        if dev == secy {
            return Err(BindError::ToItself);
        }
        if dev.is_macsec() {
            return Err(BindError::PortIsSecy);
        }
        if !secy.is_macsec() {
            return Err(BindError::NotSecy);
        }
        let mut ret = Ok(());
        let at = (Cause::Request, netlink::CMD_BIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _| {
            let binding = Binding {
                secy: Some(secy.into()),
            };
            ret = match st.ports.iter_mut().flatten().find(|e| *e.dev == *dev) {
                Some(e) if e.binding.is_some() => Err(BindError::AlreadyBound),
                Some(e) => {
                    e.binding = Some(binding);
                    Ok(())
                }
                None => {
                    let mut e = PortEntry::new(dev);
                    e.binding = Some(binding);
                    st.add_port(e).map(|_| ()).map_err(|_| BindError::NoMemory)
                }
            };
            relate(st);
        });
        ret
    }

    /// The SecY port `dev` is bound to: `None` if it is not bound,
    /// `Some(None)` if the binding is stale.
    pub(crate) fn bound_secy(
        &self,
        _rtnl: &RtnlGuard,
        dev: &NetDevice,
    ) -> Option<Option<ARef<NetDevice>>> {
        let st = self.state.lock();
        let e = st
            .ports
            .iter()
            .flatten()
            .find(|e| !e.gone && *e.dev == *dev)?;
        e.binding.as_ref().map(|b| b.secy.clone())
    }

    /// Undoes [`Bridge::bind`]: the port falls back to what the topology
    /// says, or is forgotten if it backs no RDMA device.
    pub(crate) fn unbind(&self, rtnl: &mut RtnlGuard, dev: &NetDevice) -> Result<(), BindError> {
        let mut ret = Err(BindError::NotBound);
        let at = (Cause::Request, netlink::CMD_UNBIND.into(), dev.ifindex());
        self.update(&mut Locks::Own(rtnl), at, |st, _| {
            for e in st.ports.iter_mut().flatten() {
                if *e.dev == *dev && e.binding.take().is_some() {
                    ret = Ok(());
                    if !e.wanted() {
                        e.drop_port();
                    }
                }
            }
            relate(st);
        });
        ret
    }

    /// Retracts everything, takes every interposer off and ignores events
    /// from now on.
    pub(crate) fn shutdown(&self, rtnl: &mut RtnlGuard) {
        let span = trace::Span::start();
        let mut fx = Effects::new();
        let work;
        {
            let mut st = self.state.lock();
            st.visited = 0;
            st.closing = true;
            for e in st.ports.iter_mut().flatten() {
                e.drop_port();
            }
            self.finish(&mut st, &mut fx);
            for slot in st.lowers.iter_mut() {
                if let Some(i) = slot.take() {
                    // SAFETY: RTNL is held, and no MACsec operation is in
                    // progress: this is unload, not an observer.
                    unsafe { fx.restore(rtnl, i) };
                }
            }
            work = st.work();
            st.secys = KVec::new();
        }
        self.apply(&mut Locks::Own(rtnl), fx);
        span.end(Cause::Unload, 0, 0, work);
    }

    /// How many ports and SecYs are tracked.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.ports.len(), st.secys.iter().flatten().count())
    }
}

/// The port's object as a notification would report it.
fn view(e: &PortEntry, secys: &[Option<Secy>]) -> View {
    let secy = e
        .secy
        .as_ref()
        .and_then(|d| secys.iter().flatten().find(|s| *s.dev == **d));
    let mut name = [0u8; 16];
    let n = e.dev.name().to_bytes();
    let len = n.len().min(name.len());
    name[..len].copy_from_slice(&n[..len]);
    View {
        verdict: e.port.advertised(),
        relation: e.relation,
        secy: e.secy.as_ref().map_or(0, |d| d.ifindex()),
        id: secy.and_then(|s| s.id),
        encrypt: secy.and_then(|s| advertised_encrypt(e, s)),
        owner: e.owner,
        ifindex: e.dev.ifindex(),
        name,
        netns: e.dev.net().cookie(),
        rdma: e
            .rdma
            .iter()
            .fold((0, 0), |(n, sum), (id, _)| (n + 1, sum.wrapping_add(*id))),
        renames: e.renames,
        secy_netns: e.secy.as_ref().map_or(0, |d| d.net().cookie()),
    }
}

/// `encrypt` of an observed, offloaded SecY.
pub(crate) fn encrypt(k: &Knowledge) -> Option<bool> {
    match k {
        Knowledge::Known(s) if s.offload != Offload::Off => Some(s.encrypt),
        _ => None,
    }
}

/// `encrypt` as port `e`'s object reports it, `s` being its SecY: no more
/// than the operation in flight leads to, as for the verdict. `encrypt
/// off` reads off, and an offload being taken away reads as none, from the
/// retraction on: the object never says encrypt-off (or offload-off) and
/// encrypt true at once, and the operation's success changes nothing more.
pub(crate) fn advertised_encrypt(e: &PortEntry, s: &Secy) -> Option<bool> {
    let known = encrypt(&s.known);
    match e.port.pending() {
        Some(p) => known.zip(encrypt(&p)).map(|(k, p)| k && p),
        None => known,
    }
}

#[vtable]
impl Observer for Bridge {
    fn before(&self, rtnl: &Rtnl, mdo: Mdo, ctx: &Context<'_>) {
        let op = op_of(mdo, ctx);
        if op == Op::Other {
            return;
        }
        let next = Knowledge::Known(lockstep::predict(snapshot(ctx), op));
        let secy = ctx.secy().netdev();
        let at = (Cause::OpBefore, mdo as u32, secy.ifindex());
        self.update(&mut Locks::Observer(rtnl, mdo), at, |st, _| {
            for e in st.ports.iter_mut().flatten() {
                if e.secy.as_deref() == Some(secy) {
                    e.port.before(&next);
                }
            }
        });
    }

    fn after(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result) {
        // Also for statistics requests (`ip macsec show`): every operation
        // shows the whole SecY, which is how a SecY configured before the
        // module loaded gets known. On failure macsec.c puts the SecY back
        // as it was (nothing learnt), except where it goes on regardless.
        let lop = op_of(op, ctx);
        let done = ret.is_ok() || lop.done_even_if_failed();
        let next = lockstep::predict(snapshot(ctx), lop);
        let secy = ctx.secy();
        let dev = secy.netdev();
        let at = (Cause::OpAfter, op as u32, dev.ifindex());
        self.update(&mut Locks::Observer(rtnl, op), at, |st, _| {
            let State { ports, secys, .. } = st;
            let Some(s) = secys.iter_mut().flatten().find(|s| *s.dev == *dev) else {
                // Not tracked (no memory when it appeared): nothing is
                // learnt, but its ports are no longer held down by the
                // operation.
                for e in ports.iter_mut().flatten() {
                    if e.secy.as_deref() == Some(dev) {
                        let known = e.port.known();
                        e.port.after(known, true);
                    }
                }
                return;
            };
            if done {
                s.known = Knowledge::Known(next);
                s.id = Some((secy.sci(), secy.cipher()));
                if s.view.is_none() {
                    s.view = Some(secy.to_ref());
                }
            }
            for e in ports.iter_mut().flatten() {
                if e.secy.as_deref() == Some(dev) {
                    e.port.after(s.known, done);
                }
            }
            relate(st);
        });
    }
}

/// What the trace reports of an event: its `NETDEV_*` number and device.
fn at(ev: &NetdevEvent<'_>) -> (Cause, u32, i32) {
    let code = match ev {
        NetdevEvent::Register(_) => bindings::netdev_cmd_NETDEV_REGISTER,
        NetdevEvent::Unregister(_) => bindings::netdev_cmd_NETDEV_UNREGISTER,
        NetdevEvent::Up(_) => bindings::netdev_cmd_NETDEV_UP,
        NetdevEvent::GoingDown(_) => bindings::netdev_cmd_NETDEV_GOING_DOWN,
        NetdevEvent::Down(_) => bindings::netdev_cmd_NETDEV_DOWN,
        NetdevEvent::Change(_) => bindings::netdev_cmd_NETDEV_CHANGE,
        NetdevEvent::FeatChange(_) => bindings::netdev_cmd_NETDEV_FEAT_CHANGE,
        NetdevEvent::ChangeName(_) => bindings::netdev_cmd_NETDEV_CHANGENAME,
        NetdevEvent::ChangeUpper { .. } => bindings::netdev_cmd_NETDEV_CHANGEUPPER,
        NetdevEvent::Other(code, _) => *code,
    };
    (Cause::Event, code, ev.dev().ifindex())
}

/// The netdevice notifier's side of the bridge.
pub(crate) struct Events(pub(crate) Arc<Bridge>);

impl NetdevNotifier for Events {
    fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>) {
        let b = &self.0;
        let ev = &event;
        match event {
            NetdevEvent::Register(dev) => Bridge::registered(b, rtnl, ev, dev),
            NetdevEvent::Unregister(dev) => b.unregistered(rtnl, ev, dev),
            NetdevEvent::GoingDown(dev) => b.link(rtnl, ev, dev, true),
            NetdevEvent::Up(dev) | NetdevEvent::Down(dev) | NetdevEvent::Change(dev) => {
                b.link(rtnl, ev, dev, false)
            }
            // The port's name or its SecY may have changed; a stripped
            // feature bit is put back by `finish`.
            NetdevEvent::ChangeUpper { .. }
            | NetdevEvent::ChangeName(_)
            | NetdevEvent::FeatChange(_) => {
                b.update(&mut Locks::Event(rtnl, ev), at(ev), |st, _| relate(st))
            }
            NetdevEvent::Other(..) => {}
        }
    }
}
