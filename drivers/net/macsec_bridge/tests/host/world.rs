// SPDX-License-Identifier: GPL-2.0

//! The kernel around the bridge, as a model: devices, `macsec.c`'s
//! operations and the order of what it does around each `mdo_*`
//! (`drivers/net/macsec.c` of Linux 7.3), a MACsec-capable driver that
//! accepts or fails each operation, the RDMA core, and module load and
//! unload as `macsec_bridge_main.rs` does them. See `tests/bridge.rs`.

use crate::bridge::{Bridge, GidEvents};
use crate::events::Events;
use crate::host::{self, Note, Rec};
use crate::lockstep::{Protection, Reason};
use crate::model::{BindError, Owner, Relation};
use crate::net::device::{Features, NetDevice};
use crate::net::macsec::{Cipher, Context, Mdo, Observer, Offload, SecY, SecyData, Sw, Validate};
use crate::net::namespace::Net;
use crate::net::netlink::Family;
use crate::net::notifier::{self, NetdevEvent};
use crate::net::rtnl::{Rtnl, RtnlGuard};
use crate::prelude::*;
use crate::rdma;
use crate::roce::DeviceExt;
use crate::str::CStr;
use crate::sync::Arc;
use crate::workqueue;
use std::cell::{Cell, RefCell};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ffi::CString;

/// Where an RDMA device goes.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Lower(usize),
    Plain(usize),
    Secy(usize),
}

/// An action of the administrator (with whether the driver fails the
/// operation it leads to), the RDMA core or the module's loader. SecYs and
/// RDMA devices are named by their position among those alive.
#[derive(Clone, Debug)]
pub enum Step {
    /// `ip link add link L macsec0 type macsec [offload mac] encrypt E
    /// protect P encodingsa A`.
    NewSecy {
        lower: usize,
        offload: bool,
        encrypt: bool,
        protect: bool,
        encoding_sa: u8,
        fail: bool,
    },
    /// `ip link del`.
    DelSecy {
        s: usize,
        fail: bool,
    },
    Open {
        s: usize,
        fail: bool,
    },
    Close {
        s: usize,
        fail: bool,
    },
    /// The lower device up or down.
    LowerLink {
        l: usize,
        up: bool,
    },
    /// The lower device's carrier.
    Carrier {
        l: usize,
        on: bool,
    },
    /// `ip macsec add … tx sa AN [on|off]`.
    AddTxsa {
        s: usize,
        an: u8,
        active: bool,
        fail: bool,
    },
    /// `ip macsec set … tx sa AN on|off`.
    UpdTxsa {
        s: usize,
        an: u8,
        active: bool,
        fail: bool,
    },
    /// `ip macsec del … tx sa AN`.
    DelTxsa {
        s: usize,
        an: u8,
        fail: bool,
    },
    /// `ip link set … type macsec [encrypt] [protect] [encodingsa]`.
    Flags {
        s: usize,
        encrypt: Option<bool>,
        protect: Option<bool>,
        encoding_sa: Option<u8>,
        fail: bool,
    },
    /// `ip link set … type macsec validate V`.
    Validate {
        s: usize,
        validate: Validate,
        fail: bool,
    },
    /// `ip macsec offload … mac|off`.
    Offload {
        s: usize,
        on: bool,
        fail: bool,
    },
    /// `ip macsec show`: statistics operations, which nobody is told of.
    Stats {
        s: usize,
    },
    /// The SecY into the other namespace.
    Move {
        s: usize,
    },
    /// `ethtool -K macsec0 …`: `netdev_update_features()` of the SecY.
    Ethtool {
        s: usize,
    },
    /// `ethtool -K NIC macsec-hw-offload on|off`, or mlx5e's
    /// `fix_features` as it enters switchdev mode: the NIC's
    /// `NETIF_F_HW_MACSEC` set or cleared.
    NicFeature {
        l: usize,
        on: bool,
    },
    /// The NIC goes away with its SecYs (its driver unbound), and a new
    /// one takes its place.
    NicGone {
        l: usize,
    },
    /// The NIC into the other namespace (closed on the way), its SecYs
    /// staying where they are.
    NicMove {
        l: usize,
    },
    /// A plain device deleted (`ip link del veth0`) and a new one made.
    PlainGone {
        p: usize,
    },
    RdmaAdd {
        on: Target,
    },
    RdmaDel {
        r: usize,
    },
    /// Bind port `p` (the plain devices, then the lower ones) to a SecY.
    Bind {
        p: usize,
        s: usize,
    },
    Unbind {
        p: usize,
    },
    /// `rmmod macsec_bridge; modprobe macsec_bridge`.
    Reload,
    /// The allocation after the next `n` fails (once).
    Oom {
        n: u32,
    },
    /// What an administrator does to protect a SecY's traffic, each a step
    /// of its own: lower up with carrier, `encrypt on protect on`, the
    /// SecY up, its encoding SA added or turned on.
    Raise {
        s: usize,
    },
}

/// What the model expects of a tracked port: relation, SecY, protection,
/// reason.
type Expected = (
    Option<Relation>,
    Option<&'static NetDevice>,
    Protection,
    Option<Reason>,
);

/// What the driver holds of a SecY: the truth about its traffic. The
/// driver is mlx5e's: `mdo_upd_secy` deletes the steering rule of every TX
/// SA, then re-creates the encoding SA's, and a failure comes between.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Hw {
    /// `mdo_add_secy` accepted and no `mdo_del_secy` since.
    offloaded: bool,
    /// Opened (`mdo_dev_open`) and not stopped.
    open: bool,
    protect: bool,
    encrypt: bool,
    encoding_sa: u8,
    tx_sa: [Option<bool>; 4],
    /// The TX rules are gone (a failed `mdo_upd_secy`) until the driver is
    /// handed the whole SecY again (`mdo_add_secy`, `mdo_upd_secy`,
    /// `mdo_dev_open`) or drops it (`mdo_del_secy`).
    torn: bool,
}

pub struct World {
    nets: [&'static Net; 2],
    /// MACsec-capable NICs: the second is ops-locked (netdevsim, mlx5e).
    pub lowers: Vec<&'static NetDevice>,
    /// Devices with no MACsec ops (veth): the second is ops-locked.
    pub plains: Vec<&'static NetDevice>,
    /// The MACsec netdevs alive, oldest first.
    secys: Vec<&'static NetDevice>,
    /// Devices unregistered: held by no one once that is over.
    dead: Vec<&'static NetDevice>,
    rdmas: Vec<&'static rdma::Device>,
    /// The driver's state of each SecY it was asked to offload.
    hw: RefCell<HashMap<usize, Hw>>,
    /// SecYs whose `mdo_del_secy` failed: shown as not offloaded until the
    /// next operation succeeds.
    under_claim: HashSet<usize>,
    /// Offloaded SecYs some operation showed to the module loaded now.
    observed: HashSet<usize>,
    /// SecYs whose driver the module loaded now has not seen settled: an
    /// operation on egress failed, or it was first seen through one that
    /// does not hand the driver the whole SecY.
    unsettled: RefCell<HashSet<usize>>,
    /// The TX SAs (bit `an`) of each SecY whose record in the driver the
    /// module loaded now holds in doubt.
    doubt: RefCell<HashMap<usize, u8>>,
    /// Bindings of the module loaded now: port → SecY (`None`: gone).
    bindings: HashMap<usize, Option<usize>>,
    bridge: Option<Arc<Bridge>>,
    /// The MACsec core's offload notifier, with the module's observer on
    /// it while loaded (a kernel with the notifier; without it, each
    /// device's interposer holds the observer).
    offload: Option<std::sync::Arc<dyn Observer>>,
    next_ifindex: i32,
    /// Every ifindex handed out, with its device: the model never hands
    /// one out twice, so a notification's ifindex names its port.
    by_ifindex: HashMap<i32, usize>,
    next_rdma: u32,
    /// Whether the driver fails the operation it is asked next.
    fail_next: Cell<bool>,
    /// The last notification of each port, by netdev.
    last: RefCell<HashMap<usize, Note>>,
    /// The highest generation announced.
    generation: Cell<u64>,
    /// What reached user space or the driver during the last step.
    pub last_log: Vec<Rec>,
    log: RefCell<Vec<Rec>>,
    /// Checks made.
    pub checks: u64,
    checks_at_driver: Cell<u64>,
    /// Allocations that had failed when the world was made.
    failed_base: u32,
    /// RDMA devices whose `add` failed: the RDMA core does not call
    /// `remove` for them.
    unadded: HashSet<usize>,
}

fn leak_name(s: String) -> &'static CStr {
    CStr::new(Box::leak(
        CString::new(s).expect("no NUL").into_boxed_c_str(),
    ))
}

fn key(d: &NetDevice) -> usize {
    d as *const NetDevice as usize
}

/// The family the bridge announces through (the module's is `netlink.rs`').
static FAMILY: Family = Family;

/// A record, as the sequence tests compare them.
pub fn describe(r: &Rec) -> String {
    match r {
        Rec::Note(n) => {
            let p = match n.protection {
                Protection::None => "none",
                Protection::Software => "software",
                Protection::OffloadMac => "offload-mac",
                Protection::OffloadPhy => "offload-phy",
            };
            let why = match n.reason {
                None => "-",
                Some(Reason::EncryptOff) => "encrypt-off",
                Some(Reason::ProtectOff) => "protect-off",
                Some(Reason::NoActiveTxSa) => "no-active-tx-sa",
                Some(Reason::SecyDown) => "secy-down",
                Some(Reason::OffloadOff) => "offload-off",
                Some(Reason::Unsettled) => "unsettled",
                Some(Reason::OffloadUnreachable) => "offload-unreachable",
                Some(r) => return format!("note {:x} {p} {r:?}", n.dev),
            };
            format!("note {:x} {p} {why}", n.dev)
        }
        Rec::Feature { dev, on } => format!("feature {dev:x} {}", if *on { "on" } else { "off" }),
        Rec::HostNote(n) => format!("host {}", describe(&Rec::Note(n.clone()))),
        Rec::SetErr { netns, host } => {
            format!("enobufs {netns}{}", if *host { " monitor-all" } else { "" })
        }
        Rec::Mdo { secy, op, ok } => {
            format!("mdo {secy:x} {op:?} {}", if *ok { "ok" } else { "failed" })
        }
    }
}

fn device(name: String, net: &'static Net, ifindex: i32) -> NetDevice {
    NetDevice {
        name: Cell::new(leak_name(name)),
        ifindex: Cell::new(ifindex),
        up: Cell::new(false),
        carrier: Cell::new(false),
        registered: Cell::new(false),
        features: Cell::new(0),
        hw_features: 0,
        macsec_ops: false,
        macsec_dev_ops: false,
        phy_macsec_ops: Cell::new(false),
        ops_locked: false,
        instance_locked: Cell::new(false),
        net: Cell::new(net),
        refs: Cell::new(0),
        macsec: None,
        observer: RefCell::new(None),
        writes: Cell::new(0),
    }
}

impl World {
    /// Two namespaces; in the first, two MACsec-capable NICs and two plain
    /// devices, all up with carrier; the module loaded.
    pub fn new() -> World {
        // What a failed case (proptest goes on, to shrink it) left behind.
        notifier::unregister_all();
        workqueue::discard();
        Bridge::unpublish();
        crate::alloc::fail_after(None);
        let _ = host::take_log();
        let _ = host::take_warnings();
        let nets: [&'static Net; 2] = [Net::init_net(), Box::leak(Box::new(Net { cookie: 2 }))];
        let mut w = World {
            nets,
            lowers: Vec::new(),
            plains: Vec::new(),
            secys: Vec::new(),
            dead: Vec::new(),
            rdmas: Vec::new(),
            hw: RefCell::new(HashMap::new()),
            under_claim: HashSet::new(),
            observed: HashSet::new(),
            unsettled: RefCell::new(HashSet::new()),
            doubt: RefCell::new(HashMap::new()),
            bindings: HashMap::new(),
            bridge: None,
            offload: None,
            next_ifindex: 2,
            by_ifindex: HashMap::new(),
            next_rdma: 0,
            fail_next: Cell::new(false),
            last: RefCell::new(HashMap::new()),
            generation: Cell::new(0),
            last_log: Vec::new(),
            log: RefCell::new(Vec::new()),
            checks: 0,
            checks_at_driver: Cell::new(0),
            failed_base: crate::alloc::failed(),
            unadded: HashSet::new(),
        };
        for i in 0..2 {
            let d = w.nic(i);
            w.lowers.push(d);
        }
        for i in 0..2 {
            let d = w.plain(i);
            w.plains.push(d);
        }
        for d in w.lowers.iter().chain(&w.plains) {
            d.registered.set(true);
            d.up.set(true);
            d.carrier.set(true);
        }
        w.load();
        w
    }

    /// MACsec-capable NIC `i`, new, not registered yet. The first has
    /// every operation; the second, as netdevsim and mlx5e, no open, stop
    /// or statistics, and is ops-locked.
    fn nic(&mut self, i: usize) -> &'static NetDevice {
        let ifindex = self.ifindex();
        let mut d = device(format!("eth{i}_{ifindex}"), self.nets[0], ifindex);
        d.macsec_ops = true;
        d.macsec_dev_ops = i == 0;
        d.hw_features = Features::HW_MACSEC.0;
        d.features.set(Features::HW_MACSEC.0);
        d.ops_locked = i == 1;
        self.leak(d)
    }

    /// Plain device `i` (a veth end), new, not registered yet; the second
    /// is ops-locked.
    fn plain(&mut self, i: usize) -> &'static NetDevice {
        let ifindex = self.ifindex();
        let mut d = device(format!("veth{i}_{ifindex}"), self.nets[0], ifindex);
        d.ops_locked = i == 1;
        self.leak(d)
    }

    /// Device `d`, kept for the rest of the run, and known by its ifindex.
    fn leak(&mut self, d: NetDevice) -> &'static NetDevice {
        let d: &'static NetDevice = Box::leak(Box::new(d));
        self.by_ifindex.insert(d.ifindex(), key(d));
        d
    }

    fn ifindex(&mut self) -> i32 {
        self.next_ifindex += 1;
        self.next_ifindex
    }

    pub fn b(&self) -> &Arc<Bridge> {
        self.bridge.as_ref().expect("the module is loaded")
    }

    pub fn secy(&self, s: usize) -> &'static NetDevice {
        self.secys[s]
    }

    fn sw(d: &NetDevice) -> Sw {
        SecY::of(d).sw()
    }

    fn set_sw(d: &NetDevice, f: impl FnOnce(&mut Sw)) {
        f(&mut d.macsec.as_ref().expect("a SecY").sw.borrow_mut());
    }

    /// Whether `macsec.c` finds the operations of a SecY MAC-offloaded to
    /// `real` (`macsec_check_offload()`, which `macsec_get_ops()` asks
    /// first): its `macsec_ops`, and `NETIF_F_HW_MACSEC`.
    fn reachable(real: &NetDevice) -> bool {
        real.macsec_ops && real.features.get() & Features::HW_MACSEC.0 != 0
    }

    /// [`World::reachable`] for SecY `d`'s real device.
    fn ops(d: &NetDevice) -> bool {
        Self::reachable(Self::real(d))
    }

    fn real(d: &NetDevice) -> &'static NetDevice {
        d.macsec
            .as_ref()
            .and_then(|m| m.real.get())
            .expect("a real device")
    }

    // ---- Module load and unload, as macsec_bridge_main.rs.

    /// `init`: the bridge, published; the notifier registered (REGISTER and
    /// UP replayed for every device); the RDMA client (every device added).
    fn load(&mut self) {
        crate::alloc::fail_after(None);
        self.unadded.clear();
        let b = Bridge::new(&FAMILY).expect("no allocation fails");
        Bridge::publish(&b);
        self.bridge = Some(b.clone());
        self.observed.clear();
        self.unsettled.borrow_mut().clear();
        self.doubt.borrow_mut().clear();
        self.under_claim.clear();
        self.bindings.clear();
        #[cfg(not(MACSEC_BRIDGE_COMPAT))]
        {
            self.offload = Some(std::sync::Arc::new(Events(b.clone())));
        }
        let g = Rtnl::lock();
        notifier::register(std::sync::Arc::new(Events(b)));
        for net in self.nets {
            let devs: Vec<&'static NetDevice> = self
                .all_devices()
                .into_iter()
                .filter(|d| *d.net.get() == *net)
                .collect();
            for d in devs {
                notifier::call(NetdevEvent::Register(d));
                if d.is_up() {
                    notifier::call(NetdevEvent::Up(d));
                }
            }
        }
        drop(g);
        for r in self.rdmas.clone() {
            self.client_add(r);
        }
        self.settle();
    }

    /// `drop`: the RDMA client's devices removed, shutdown, the notifier
    /// unregistered (DOWN and UNREGISTER replayed, ignored), the bridge
    /// unpublished and let go.
    pub fn unload(&mut self) {
        self.unload_with(|_, _| {});
    }

    /// [`World::unload`], running `f` right after the bridge shut down,
    /// as a request of the family (unregistered last) can.
    pub fn unload_with(&mut self, f: impl FnOnce(&Self, &mut RtnlGuard)) {
        for r in self.rdmas.clone() {
            self.client_remove(r);
        }
        {
            let mut g = Rtnl::lock();
            self.b().shutdown(&mut g);
            f(self, &mut g);
            // As the module's exit: every interposer the shutdown left,
            // before the notifier goes.
            #[cfg(MACSEC_BRIDGE_COMPAT)]
            crate::interposer::restore_all(&g);
            for d in self.all_devices() {
                if d.is_up() {
                    notifier::call(NetdevEvent::GoingDown(d));
                    notifier::call(NetdevEvent::Down(d));
                }
                notifier::call(NetdevEvent::Unregister(d));
            }
            notifier::unregister_all();
        }
        self.offload = None;
        self.absorb();
        // The work items run; they find nothing to do, and queue nothing.
        workqueue::run_pending();
        assert_eq!(workqueue::queued(), 0, "work queued again during unload");
        self.absorb();
        Bridge::unpublish();
        let b = self.bridge.take().expect("loaded");
        assert_eq!(
            std::sync::Arc::strong_count(&b),
            1,
            "the bridge is still referenced"
        );
        drop(b);
        self.absorb();
    }

    /// After unload: no device is held, no bit the module owns is set, and
    /// the last notification of every port retracted it.
    pub fn check_unloaded(&mut self) {
        for d in self.all_devices().iter().chain(&self.dead) {
            assert_eq!(d.refs.get(), 0, "{}: still held after unload", d.name());
            // A deleted netdev's bit is nobody's concern.
            if Owner::of_world(d) == Owner::Bridge && d.is_registered() {
                assert!(
                    !d.features().contains(Features::HW_MACSEC),
                    "{}: bit left set",
                    d.name()
                );
            }
            assert!(
                d.observer.borrow().is_none(),
                "{}: interposer left",
                d.name()
            );
        }
        for n in self.last.borrow().values() {
            assert_eq!(
                n.protection,
                Protection::None,
                "{n:?}: not retracted at unload"
            );
        }
        let w = host::take_warnings();
        assert!(w.is_empty() || self.degraded(), "warnings: {w:?}");
        self.checks += 1;
    }

    fn all_devices(&self) -> Vec<&'static NetDevice> {
        self.lowers
            .iter()
            .chain(&self.plains)
            .chain(&self.secys)
            .copied()
            .collect()
    }

    // ---- The RDMA core.

    /// Whether an allocation failed in this world: from then on only what
    /// must hold whatever memory does is checked (safety, references,
    /// bits), not what the model expects.
    fn degraded(&self) -> bool {
        crate::alloc::failed() > self.failed_base
    }

    /// The RDMA client's `add`, as ports.rs: on failure the device is not
    /// the client's, and `remove` will not come for it.
    fn client_add(&mut self, r: &'static rdma::Device) {
        let b = self.b().clone();
        // SAFETY: `client_remove` unfollows it, and so does a failure here.
        if unsafe { b.follow_gids(r) }.is_err() {
            assert!(self.degraded(), "add failed with memory");
            self.unadded.insert(r.id());
            return;
        }
        let mut g = Rtnl::lock();
        let ret = b.rdma_add(&mut g, r, &rdma::DevicesLocked);
        drop(g);
        if ret.is_err() {
            b.unfollow_gids(r);
            assert!(self.degraded(), "add failed with memory");
            self.unadded.insert(r.id());
        }
    }

    fn client_remove(&mut self, r: &'static rdma::Device) {
        if self.unadded.remove(&r.id()) {
            return;
        }
        let b = self.b().clone();
        b.unfollow_gids(r);
        let mut g = Rtnl::lock();
        b.rdma_remove(&mut g, r);
    }

    // ---- macsec.c.

    /// `macsec_offload(ops->mdo_*, &ctx)` through the interposed table of
    /// the SecY's real device, if one is installed; `None` if the driver
    /// has no such operation (`macsec_offload` then calls nothing, and the
    /// interposed table has no slot for it either).
    fn offload(
        &self,
        op: Mdo,
        secy: &'static NetDevice,
        offload: Offload,
        an: u8,
        active: bool,
        fail: bool,
    ) -> Option<Result> {
        let dev_op = matches!(op, Mdo::DevOpen | Mdo::DevStop);
        if dev_op && !Self::real(secy).macsec_dev_ops {
            return None;
        }
        let ctx = Context {
            op,
            secy: SecY::of(secy),
            lower: Self::real(secy),
            offload,
            an,
            tx_sa_active: active,
        };
        assert!(Rtnl::held());
        let observer = if cfg!(MACSEC_BRIDGE_COMPAT) {
            Self::real(secy).observer.borrow().clone()
        } else {
            self.offload.clone()
        };
        // SAFETY: held, as checked.
        let ret = unsafe {
            Rtnl::assume_held(|rtnl| {
                if let Some(o) = &observer {
                    o.before(rtnl, op, &ctx);
                }
                self.fail_next.set(fail);
                let ret = self.driver(&ctx);
                if let Some(o) = &observer {
                    o.after(rtnl, op, &ctx, ret);
                }
                ret
            })
        };
        if observer.is_some() {
            self.learnt(&ctx, ret.is_ok());
        }
        Some(ret)
    }

    /// What the module learns of the driver from the operation `ctx`, as
    /// the contract says: a failure on egress unsettles it and leaves its
    /// record of the TX SA concerned in doubt (a SecY the module does not
    /// know yet stays unknown, unless macsec.c goes on regardless; a failed
    /// deletion may have dropped anything); a record leaves doubt when the
    /// SA is added or deleted, or the SecY; `add_secy` and `del_secy`
    /// settle the driver, `upd_secy` while the encoding SA's record is not
    /// in doubt; a SecY first seen through any other operation is
    /// unsettled with every record in doubt.
    fn learnt(&self, ctx: &Context<'_>, ok: bool) {
        let k = key(ctx.secy().netdev());
        let op = ctx.op();
        let bit = 1u8 << (ctx.assoc_num() % 4);
        let regardless = matches!(op, Mdo::DevStop | Mdo::DelSecy);
        let mut u = self.unsettled.borrow_mut();
        let mut doubt = self.doubt.borrow_mut();
        let first = !self.observed.contains(&k) && op != Mdo::AddSecy;
        if first {
            if !ok && !regardless {
                return;
            }
            u.insert(k);
            doubt.insert(k, 0xf);
        }
        let d = doubt.entry(k).or_insert(0);
        match (op, ok) {
            (Mdo::AddTxsa | Mdo::UpdTxsa | Mdo::DelTxsa, false) => {
                u.insert(k);
                *d |= bit;
            }
            (Mdo::DelSecy, false) => {
                u.insert(k);
                *d = 0xf;
            }
            (_, false) => {
                u.insert(k);
            }
            (Mdo::AddTxsa | Mdo::DelTxsa, true) => *d &= !bit,
            (Mdo::AddSecy | Mdo::DelSecy, true) => {
                *d = 0;
                u.remove(&k);
            }
            (Mdo::UpdSecy, true) if *d & (1 << (ctx.secy().sw().encoding_sa % 4)) == 0 => {
                u.remove(&k);
            }
            _ => {}
        }
    }

    /// The driver: checks what the ports claim at this instant, then takes
    /// the operation, or fails it.
    fn driver(&self, ctx: &Context<'_>) -> Result {
        let secy = ctx.secy().netdev();
        let k = key(secy);
        let before = self.hw.borrow().get(&k).copied().unwrap_or_default();
        let sw = ctx.secy().sw();
        let mut after = before;
        match ctx.op() {
            Mdo::DevStop => after.open = false,
            Mdo::DevOpen => {
                after.open = true;
                after.torn = false;
            }
            Mdo::AddSecy => {
                after = Hw {
                    offloaded: true,
                    open: false,
                    protect: sw.protect,
                    encrypt: sw.encrypt,
                    encoding_sa: sw.encoding_sa,
                    tx_sa: [None; 4],
                    torn: false,
                }
            }
            Mdo::UpdSecy => {
                after.protect = sw.protect;
                after.encrypt = sw.encrypt;
                after.encoding_sa = sw.encoding_sa;
                after.torn = false;
            }
            Mdo::DelSecy => after = Hw::default(),
            Mdo::AddTxsa | Mdo::UpdTxsa => {
                after.tx_sa[ctx.assoc_num() as usize] = Some(ctx.tx_sa_active());
                // The encoding SA's rule, made.
                if ctx.assoc_num() == after.encoding_sa && ctx.tx_sa_active() {
                    after.torn = false;
                }
            }
            Mdo::DelTxsa => after.tx_sa[ctx.assoc_num() as usize] = None,
            _ => {}
        }
        // mlx5e's `mdo_upd_secy` runs with no TX rule between deleting
        // them all and re-creating the encoding SA's, and fails there.
        let torn = Hw {
            torn: true,
            ..before
        };
        let mid = if ctx.op() == Mdo::UpdSecy {
            torn
        } else {
            before
        };
        self.check_at_driver(secy, before, mid, after, ctx.op());
        let ok = !self.fail_next.get();
        host::record(Rec::Mdo {
            secy: k,
            op: ctx.op(),
            ok,
        });
        // A SecY stopped is stopped, whatever the driver says.
        if ok || ctx.op() == Mdo::DevStop {
            self.hw.borrow_mut().insert(k, after);
        } else if ctx.op() == Mdo::UpdSecy {
            self.hw.borrow_mut().insert(k, torn);
        } else if ctx.op() == Mdo::UpdTxsa {
            // mlx5e_macsec_upd_txsa() writes its record of `active`, then
            // fails: making the encoding SA's rule, or removing it.
            let an = ctx.assoc_num() as usize % 4;
            let mut failed = before;
            failed.tx_sa[an] = Some(ctx.tx_sa_active());
            failed.torn |= an == before.encoding_sa as usize % 4 && ctx.tx_sa_active();
            self.hw.borrow_mut().insert(k, failed);
        }
        if ok {
            Ok(())
        } else {
            Err(EIO)
        }
    }

    /// What the driver's state `hw` of SecY `secy` gives the traffic it
    /// carries: offload, or nothing.
    fn truth(secy: &NetDevice, hw: Hw) -> Protection {
        let real = Self::real(secy);
        // A driver with no open or stop follows the SecY's netdev.
        let open = if real.macsec_dev_ops {
            hw.open
        } else {
            secy.is_up()
        };
        let sa = hw.tx_sa[hw.encoding_sa as usize % 4] == Some(true);
        if hw.offloaded
            && !hw.torn
            && open
            && real.is_up()
            && real.carrier_ok()
            && sa
            && hw.protect
            && hw.encrypt
        {
            Protection::OffloadMac
        } else {
            Protection::None
        }
    }

    /// Safety, while the driver runs `op`: no port of the SecY claims more
    /// than the state before, the state the driver passes through (`mid`)
    /// and the state after all give.
    fn check_at_driver(&self, secy: &NetDevice, before: Hw, mid: Hw, after: Hw, op: Mdo) {
        self.absorb();
        let bound = [before, mid, after]
            .into_iter()
            .map(|hw| Self::truth(secy, hw).rank())
            .min()
            .unwrap_or(0);
        let Some(b) = &self.bridge else { return };
        let st = b.state.lock();
        let mut devs = self.port_devices();
        if !devs.iter().any(|d| **d == *secy) {
            // Being deleted: no longer among the SecYs.
            devs.push(
                self.dead
                    .iter()
                    .chain(&self.secys)
                    .copied()
                    .find(|d| **d == *secy)
                    .unwrap_or(Self::real(secy)),
            );
        }
        for d in devs {
            let Some(e) = st.ports.of(d) else { continue };
            if e.secy.as_deref().map(key) != Some(key(secy)) {
                continue;
            }
            let claimed = e.port.advertised().protection.rank();
            assert!(
                claimed <= bound,
                "{}: advertises {claimed} while the driver runs {op:?} (bound {bound})",
                d.name()
            );
            if let Some(n) = self.last.borrow().get(&key(d)) {
                assert!(
                    n.protection.rank() <= bound,
                    "{}: last announced {n:?} during {op:?}",
                    d.name()
                );
            }
            let bit = d.features().contains(Features::HW_MACSEC);
            // The one lag the design allows: `mdo_upd_secy` may come from a
            // context that holds another device's instance lock, so an
            // ops-locked port's bit is left to the deferred writer (queued).
            let lag = op == Mdo::UpdSecy && d.ops_locked && workqueue::queued() > 0;
            if e.owner == Owner::Bridge && bit && !lag {
                assert!(
                    bound == 2,
                    "{}: bit set while the driver runs {op:?}",
                    d.name()
                );
            }
            self.checks_at_driver.set(self.checks_at_driver.get() + 1);
        }
    }

    /// Safety at `NETDEV_GOING_DOWN` of `dev`: every port whose SecY is
    /// `dev` or runs over it claims nothing any more, before `dev` closes.
    /// An ops-locked port's bit may wait for the deferred writer (queued):
    /// the event's proof covers only `dev`.
    fn check_going_down(&self, dev: &NetDevice) {
        self.absorb();
        let Some(b) = &self.bridge else { return };
        let st = b.state.lock();
        for d in self.port_devices() {
            let Some(e) = st.ports.of(d) else { continue };
            let Some(s) = e.secy.as_deref() else { continue };
            if *s != *dev && *Self::real(s) != *dev {
                continue;
            }
            assert_eq!(
                e.port.advertised().protection,
                Protection::None,
                "{}: claims at GOING_DOWN of {}",
                d.name(),
                dev.name()
            );
            if let Some(n) = self.last.borrow().get(&key(d)) {
                assert_eq!(
                    n.protection,
                    Protection::None,
                    "{}: last announced {n:?} at GOING_DOWN",
                    d.name()
                );
            }
            let bit = d.features().contains(Features::HW_MACSEC);
            let lag = d.ops_locked && *d != *dev && workqueue::queued() > 0;
            assert!(
                e.owner == Owner::Driver || !bit || lag,
                "{}: bit set at GOING_DOWN of {}",
                d.name(),
                dev.name()
            );
            self.checks_at_driver.set(self.checks_at_driver.get() + 1);
        }
    }

    /// Sends `ev` down the notifier chain (RTNL is held).
    fn event(&self, ev: NetdevEvent<'_>) {
        notifier::call(ev);
    }

    #[allow(clippy::too_many_arguments)]
    fn new_secy(
        &mut self,
        l: usize,
        offload: bool,
        encrypt: bool,
        protect: bool,
        sa: u8,
        fail: bool,
    ) {
        if self.secys.len() >= 4 {
            return;
        }
        let lower = self.lowers[l];
        // `macsec_newlink()` refuses an offload the device cannot take,
        // before it registers anything.
        if offload && !Self::reachable(lower) {
            return;
        }
        let ifindex = self.ifindex();
        let mut d = device(format!("macsec{ifindex}"), lower.net.get(), ifindex);
        d.macsec = Some(SecyData {
            real: Cell::new(Some(lower)),
            sw: RefCell::new(Sw {
                offload: if offload { Offload::Mac } else { Offload::Off },
                protect,
                encrypt,
                encoding_sa: sa,
                tx_sa: [None; 4],
                sci: (ifindex as u64) << 48 | 1,
                cipher: if ifindex % 2 == 0 {
                    Cipher::GcmAes128
                } else {
                    Cipher::GcmAesXpn256
                },
                validate: Validate::Strict,
            }),
        });
        let d = self.leak(d);
        // register_netdevice, then the upper link, then mdo_add_secy.
        d.registered.set(true);
        self.event(NetdevEvent::Register(d));
        self.event(NetdevEvent::ChangeUpper {
            dev: lower,
            upper: d,
            linking: true,
        });
        if offload
            && self
                .offload(Mdo::AddSecy, d, Offload::Mac, 0, false, fail)
                .is_some_and(|r| r.is_err())
        {
            // del_dev, unlink, unregister.
            self.event(NetdevEvent::ChangeUpper {
                dev: lower,
                upper: d,
                linking: false,
            });
            d.registered.set(false);
            self.event(NetdevEvent::Unregister(d));
            self.hw.borrow_mut().remove(&key(d));
            self.dead.push(d);
            return;
        }
        if offload {
            self.observed.insert(key(d));
        }
        self.secys.push(d);
        self.update_features(d);
    }

    /// `dev_close` of SecY `d`.
    fn close(&mut self, d: &'static NetDevice, fail: bool) {
        if !d.is_up() {
            return;
        }
        self.event(NetdevEvent::GoingDown(d));
        self.check_going_down(d);
        d.carrier.set(false);
        if Self::sw(d).offload != Offload::Off && Self::ops(d) {
            // Done whatever the driver says: macsec.c stops the SecY (and
            // without it, when it finds no operations).
            if self
                .offload(Mdo::DevStop, d, Self::sw(d).offload, 0, false, fail)
                .is_some()
            {
                self.seen(d, true);
            }
        }
        d.up.set(false);
        self.event(NetdevEvent::Down(d));
    }

    /// An operation on `d` succeeded (or completed regardless): the module
    /// has seen the whole SecY.
    fn seen(&mut self, d: &NetDevice, ok: bool) {
        if ok && self.bridge.is_some() {
            self.observed.insert(key(d));
            self.under_claim.remove(&key(d));
        }
    }

    fn del_secy(&mut self, s: usize, fail: bool) {
        let d = self.secys[s];
        let sw = Self::sw(d);
        if sw.offload != Offload::Off && Self::ops(d) {
            // Its result is ignored: the SecY goes (without the driver,
            // when macsec.c finds no operations).
            let _ = self.offload(Mdo::DelSecy, d, sw.offload, 0, false, fail);
        }
        Self::set_sw(d, |sw| sw.tx_sa = [None; 4]);
        self.event(NetdevEvent::ChangeUpper {
            dev: Self::real(d),
            upper: d,
            linking: false,
        });
        self.close(d, fail);
        d.registered.set(false);
        self.event(NetdevEvent::Unregister(d));
        self.forget_secy(d);
    }

    fn open(&mut self, d: &'static NetDevice, fail: bool) {
        if d.is_up() {
            return;
        }
        if Self::sw(d).offload != Offload::Off {
            // No operations found: `EOPNOTSUPP`, the SecY stays down.
            if !Self::ops(d) {
                return;
            }
            match self.offload(Mdo::DevOpen, d, Offload::Mac, 0, false, fail) {
                Some(Ok(())) => self.seen(d, true),
                Some(Err(_)) => return,
                None => {}
            }
        }
        d.up.set(true);
        d.carrier.set(Self::real(d).carrier_ok());
        self.event(NetdevEvent::Up(d));
    }

    /// An operation on SecY `d`'s SAs or flags: `change` is what macsec.c
    /// changes before the call (undone on failure), `publish` what it
    /// changes after a success.
    #[allow(clippy::too_many_arguments)]
    fn sa_op(
        &mut self,
        d: &'static NetDevice,
        op: Mdo,
        an: u8,
        active: bool,
        fail: bool,
        change: impl Fn(&mut Sw),
        publish: impl Fn(&mut Sw),
    ) {
        let saved = Self::sw(d);
        Self::set_sw(d, change);
        let offloaded = saved.offload != Offload::Off;
        if offloaded {
            // No operations found: `EOPNOTSUPP` before the driver, the
            // change undone.
            let ok = Self::ops(d)
                && self
                    .offload(op, d, saved.offload, an, active, fail)
                    .is_some_and(|r| r.is_ok());
            self.seen(d, ok);
            if !ok {
                Self::set_sw(d, |sw| *sw = saved);
                return;
            }
        }
        Self::set_sw(d, publish);
    }

    fn set_offload(&mut self, d: &'static NetDevice, on: bool, fail: bool) {
        let sw = Self::sw(d);
        let to = if on { Offload::Mac } else { Offload::Off };
        // Unchanged, busy (up), or configured (an SA): refused before any
        // operation.
        if sw.offload == to || d.is_up() || sw.tx_sa.iter().any(Option::is_some) {
            return;
        }
        // Turning it on asks `macsec_check_offload()` first; turning it off
        // takes the operations as they are (`__macsec_get_ops()`).
        if on && !Self::ops(d) {
            return;
        }
        let ok = if on {
            self.offload(Mdo::AddSecy, d, Offload::Mac, 0, false, fail)
                .is_some_and(|r| r.is_ok())
        } else {
            self.offload(Mdo::DelSecy, d, sw.offload, 0, false, fail)
                .is_some_and(|r| r.is_ok())
        };
        if ok {
            Self::set_sw(d, |sw| sw.offload = to);
            self.update_features(d);
            self.seen(d, true);
        } else if !on && self.bridge.is_some() {
            // macsec.c returns the error and the SecY stays offloaded, but
            // the module cannot tell this failure from that of a deletion
            // (which goes on): it now knows the SecY as not offloaded, less
            // than it is, until the next operation shows it whole.
            self.seen(d, true);
            self.under_claim.insert(key(d));
        }
    }

    /// `unregister_netdevice()` of NIC `l`: closed, then its UNREGISTER,
    /// where `macsec_notify()` (whose notifier comes before the module's)
    /// deletes every SecY on it, each as `macsec_common_dellink()` (its
    /// `mdo_del_secy` through the interposer still installed, the upper
    /// link undone), then unregisters them together; the module hears the
    /// NIC's UNREGISTER last. Returns the netdevs that went.
    fn nic_gone(&mut self, l: usize) -> Vec<&'static NetDevice> {
        let d = self.lowers[l];
        self.link_down(d);
        d.registered.set(false);
        let on: Vec<&'static NetDevice> = self
            .secys
            .iter()
            .copied()
            .filter(|s| *Self::real(s) == *d)
            .collect();
        for &s in &on {
            let sw = Self::sw(s);
            if sw.offload != Offload::Off && Self::ops(s) {
                let _ = self.offload(Mdo::DelSecy, s, sw.offload, 0, false, false);
            }
            Self::set_sw(s, |sw| sw.tx_sa = [None; 4]);
            self.event(NetdevEvent::ChangeUpper {
                dev: d,
                upper: s,
                linking: false,
            });
        }
        for &s in &on {
            self.close(s, false);
        }
        for &s in &on {
            s.registered.set(false);
            self.event(NetdevEvent::Unregister(s));
            self.forget_secy(s);
        }
        self.event(NetdevEvent::Unregister(d));
        // A binding of the NIC itself went with it.
        self.bindings.remove(&key(d));
        self.dead.push(d);
        let mut gone = on;
        gone.push(d);
        gone
    }

    /// SecY `d` is unregistered: the model forgets it.
    fn forget_secy(&mut self, d: &'static NetDevice) {
        self.secys.retain(|s| *s != d);
        self.hw.borrow_mut().remove(&key(d));
        self.observed.remove(&key(d));
        self.unsettled.borrow_mut().remove(&key(d));
        self.doubt.borrow_mut().remove(&key(d));
        self.under_claim.remove(&key(d));
        for b in self.bindings.values_mut() {
            if *b == Some(key(d)) {
                *b = None;
            }
        }
        self.dead.push(d);
    }

    /// `netdev_update_features()` of SecY `d`: `macsec_fix_features()`
    /// never lets a MACsec netdev keep `NETIF_F_HW_MACSEC`; a bit the
    /// module set on it (a port on the SecY itself) is stripped, which
    /// sends `NETDEV_FEAT_CHANGE`.
    fn update_features(&self, d: &'static NetDevice) {
        let f = d.features.get();
        if f & Features::HW_MACSEC.0 != 0 {
            d.features.set(f & !Features::HW_MACSEC.0);
            self.event(NetdevEvent::FeatChange(d));
        }
    }

    /// NIC `l`'s `NETIF_F_HW_MACSEC` set (`on`) or cleared, then
    /// `NETDEV_FEAT_CHANGE`. The driver, at its worst, drops what it held
    /// of every SecY offloaded to it when the bit goes (mlx5e leaves MACsec
    /// for switchdev mode); the module, which cannot know, holds every such
    /// SecY it knows unsettled from then on.
    fn nic_feature(&mut self, l: usize, on: bool) {
        let d = self.lowers[l];
        let f = d.features.get();
        if (f & Features::HW_MACSEC.0 != 0) == on {
            return;
        }
        d.features.set(f ^ Features::HW_MACSEC.0);
        if !on {
            for s in self.secys.iter().filter(|s| *Self::real(s) == *d) {
                if Self::sw(s).offload == Offload::Off {
                    continue;
                }
                if let Some(hw) = self.hw.borrow_mut().get_mut(&key(s)) {
                    hw.torn = true;
                }
                if self.bridge.is_some() {
                    self.unsettled.borrow_mut().insert(key(s));
                }
            }
        }
        self.event(NetdevEvent::FeatChange(d));
    }

    fn move_secy(&mut self, d: &'static NetDevice) {
        self.close(d, false);
        // The kernel keeps the ifindex if it is free in the new namespace,
        // and picks another otherwise: the model always picks another.
        let ifindex = self.ifindex();
        d.ifindex.set(ifindex);
        self.by_ifindex.insert(ifindex, key(d));
        self.move_net(d);
    }

    /// `dev_change_net_namespace()` of `d`, closed: UNREGISTER in its
    /// namespace (still registered), REGISTER in the other.
    fn move_net(&self, d: &'static NetDevice) {
        self.event(NetdevEvent::Unregister(d));
        let to = if *d.net.get() == *self.nets[0] {
            self.nets[1]
        } else {
            self.nets[0]
        };
        d.net.set(to);
        self.event(NetdevEvent::Register(d));
    }

    /// `dev_close()` of a NIC or plain device `d`, if it is up, checking
    /// at its GOING_DOWN that nothing running over it still claims.
    fn link_down(&self, d: &'static NetDevice) {
        if !d.is_up() {
            return;
        }
        self.event(NetdevEvent::GoingDown(d));
        self.check_going_down(d);
        d.up.set(false);
        self.event(NetdevEvent::Down(d));
    }

    /// A new device `d` registered and brought up with carrier (RTNL is
    /// not held: this takes it).
    fn register_up(&self, d: &'static NetDevice) {
        let _g = Rtnl::lock();
        d.registered.set(true);
        self.event(NetdevEvent::Register(d));
        d.up.set(true);
        d.carrier.set(true);
        self.event(NetdevEvent::Up(d));
    }

    /// The RDMA core removes the devices on `gone`, after their netdevs'
    /// unregistration (RTNL is not held).
    fn rdma_gone(&mut self, gone: &[&'static NetDevice]) {
        let rdmas: Vec<_> = self
            .rdmas
            .iter()
            .copied()
            .filter(|r| gone.iter().any(|d| *r.netdev == **d))
            .collect();
        for r in rdmas {
            self.rdmas.retain(|x| !std::ptr::eq(*x, r));
            self.client_remove(r);
        }
    }

    /// One step, then the work items it queued, then every check.
    pub fn step(&mut self, step: &Step) {
        if let Step::Raise { s } = *step {
            if self.secys.is_empty() {
                return;
            }
            let s = s % self.secys.len();
            let d = self.secys[s];
            let l = self
                .lowers
                .iter()
                .position(|l| *l == Self::real(d))
                .expect("a NIC");
            self.step(&Step::LowerLink { l, up: true });
            self.step(&Step::Carrier { l, on: true });
            self.step(&Step::Flags {
                s,
                encrypt: Some(true),
                protect: Some(true),
                encoding_sa: None,
                fail: false,
            });
            self.step(&Step::Open { s, fail: false });
            let an = Self::sw(d).encoding_sa;
            self.step(&Step::AddTxsa {
                s,
                an,
                active: true,
                fail: false,
            });
            self.step(&Step::UpdTxsa {
                s,
                an,
                active: true,
                fail: false,
            });
            return;
        }
        let g = Rtnl::lock();
        let n = self.secys.len();
        let pick = |s: usize| (n > 0).then(|| s % n);
        match *step {
            Step::NewSecy {
                lower,
                offload,
                encrypt,
                protect,
                encoding_sa,
                fail,
            } => self.new_secy(lower, offload, encrypt, protect, encoding_sa, fail),
            Step::DelSecy { s, fail } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    self.del_secy(s, fail);
                    drop(g);
                    self.rdma_gone(&[d]);
                    return self.settle();
                }
            }
            Step::Open { s, fail } => {
                if let Some(s) = pick(s) {
                    self.open(self.secys[s], fail)
                }
            }
            Step::Close { s, fail } => {
                if let Some(s) = pick(s) {
                    self.close(self.secys[s], fail)
                }
            }
            Step::LowerLink { l, up } => {
                let d = self.lowers[l];
                if d.is_up() != up {
                    if up {
                        d.up.set(true);
                        self.event(NetdevEvent::Up(d));
                    } else {
                        self.link_down(d);
                    }
                }
            }
            Step::Carrier { l, on } => {
                let d = self.lowers[l];
                if d.carrier_ok() != on {
                    d.carrier.set(on);
                    // Linkwatch tells only of a device that is up: one that
                    // is down is read again when it comes up.
                    if d.is_up() {
                        self.event(NetdevEvent::Change(d));
                    }
                }
            }
            Step::AddTxsa {
                s,
                an,
                active,
                fail,
            } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    if Self::sw(d).tx_sa[an as usize].is_none() {
                        let a = an as usize;
                        self.sa_op(
                            d,
                            Mdo::AddTxsa,
                            an,
                            active,
                            fail,
                            |_| {},
                            |sw| sw.tx_sa[a] = Some(active),
                        );
                    }
                }
            }
            Step::UpdTxsa {
                s,
                an,
                active,
                fail,
            } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    if Self::sw(d).tx_sa[an as usize].is_some() {
                        let a = an as usize;
                        self.sa_op(
                            d,
                            Mdo::UpdTxsa,
                            an,
                            active,
                            fail,
                            |sw| sw.tx_sa[a] = Some(active),
                            |_| {},
                        );
                    }
                }
            }
            Step::DelTxsa { s, an, fail } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    // An active SA cannot be deleted (EBUSY).
                    if Self::sw(d).tx_sa[an as usize] == Some(false) {
                        let a = an as usize;
                        self.sa_op(
                            d,
                            Mdo::DelTxsa,
                            an,
                            false,
                            fail,
                            |_| {},
                            |sw| sw.tx_sa[a] = None,
                        );
                    }
                }
            }
            Step::Flags {
                s,
                encrypt,
                protect,
                encoding_sa,
                fail,
            } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    let change = move |sw: &mut Sw| {
                        sw.encrypt = encrypt.unwrap_or(sw.encrypt);
                        sw.protect = protect.unwrap_or(sw.protect);
                        sw.encoding_sa = encoding_sa.unwrap_or(sw.encoding_sa);
                    };
                    self.sa_op(d, Mdo::UpdSecy, 0, false, fail, change, |_| {});
                }
            }
            Step::Validate { s, validate, fail } => {
                if let Some(s) = pick(s) {
                    let d = self.secys[s];
                    let change = move |sw: &mut Sw| sw.validate = validate;
                    self.sa_op(d, Mdo::UpdSecy, 0, false, fail, change, |_| {});
                }
            }
            Step::Offload { s, on, fail } => {
                if let Some(s) = pick(s) {
                    self.set_offload(self.secys[s], on, fail)
                }
            }
            // The driver is asked for statistics, and nobody is told:
            // macsec.c does not announce the requests, and the interposer
            // mirrors their slots as they are.
            Step::Stats { .. } => {}
            Step::NicMove { l } => {
                let d = self.lowers[l];
                self.link_down(d);
                self.move_net(d);
            }
            Step::PlainGone { p } => {
                let d = self.plains[p];
                self.link_down(d);
                d.registered.set(false);
                self.event(NetdevEvent::Unregister(d));
                self.bindings.remove(&key(d));
                self.dead.push(d);
                drop(g);
                self.rdma_gone(&[d]);
                let n = self.plain(p);
                self.plains[p] = n;
                self.register_up(n);
                return self.settle();
            }
            Step::NicGone { l } => {
                let gone = self.nic_gone(l);
                drop(g);
                self.rdma_gone(&gone);
                let d = self.nic(l);
                self.lowers[l] = d;
                self.register_up(d);
                return self.settle();
            }
            Step::Ethtool { s } => {
                if let Some(s) = pick(s) {
                    self.update_features(self.secys[s])
                }
            }
            Step::NicFeature { l, on } => self.nic_feature(l, on),
            Step::Move { s } => {
                if let Some(s) = pick(s) {
                    self.move_secy(self.secys[s])
                }
            }
            Step::RdmaAdd { on } => {
                let d = match on {
                    Target::Lower(l) => Some(self.lowers[l]),
                    Target::Plain(p) => Some(self.plains[p]),
                    Target::Secy(s) => pick(s).map(|s| self.secys[s]),
                };
                if let Some(d) = d.filter(|_| self.rdmas.len() < 6) {
                    drop(g);
                    self.next_rdma += 1;
                    let name = leak_name(format!("rxe{}", self.next_rdma));
                    let r: &'static rdma::Device = Box::leak(Box::new(rdma::Device {
                        name: Cell::new(name),
                        netdev: d,
                        table: RefCell::new(Vec::new()),
                        moved: Cell::new(None),
                        rxe: Cell::new(false),
                    }));
                    self.rdmas.push(r);
                    self.client_add(r);
                    return self.settle();
                }
            }
            Step::RdmaDel { r } => {
                if !self.rdmas.is_empty() {
                    let r = self.rdmas.remove(r % self.rdmas.len());
                    drop(g);
                    self.client_remove(r);
                    return self.settle();
                }
            }
            Step::Bind { p, s } => {
                if let Some(s) = pick(s) {
                    drop(g);
                    let port = self
                        .plains
                        .iter()
                        .chain(&self.lowers)
                        .copied()
                        .nth(p)
                        .expect("four ports");
                    let secy = self.secys[s];
                    let mut g = Rtnl::lock();
                    let ret = self.b().bind(&mut g, port, secy);
                    drop(g);
                    // A NIC under the SecY: its own traffic does not cross it.
                    let under = secy.macsec.as_ref().and_then(|m| m.real.get());
                    match self.bindings.entry(key(port)) {
                        _ if under.is_some_and(|l| *l == *port) => {
                            assert_eq!(ret, Err(BindError::Loop))
                        }
                        Entry::Occupied(_) => assert_eq!(ret, Err(BindError::AlreadyBound)),
                        Entry::Vacant(_) if ret == Err(BindError::NoMemory) => {
                            assert!(crate::alloc::failed() > self.failed_base);
                        }
                        Entry::Vacant(v) => {
                            assert_eq!(ret, Ok(()));
                            v.insert(Some(key(secy)));
                        }
                    }
                    return self.settle();
                }
            }
            Step::Unbind { p } => {
                drop(g);
                let port = self
                    .plains
                    .iter()
                    .chain(&self.lowers)
                    .copied()
                    .nth(p)
                    .expect("four ports");
                let mut g = Rtnl::lock();
                let ret = self.b().unbind(&mut g, port);
                drop(g);
                if self.bindings.remove(&key(port)).is_some() {
                    assert_eq!(ret, Ok(()));
                } else {
                    assert_eq!(ret, Err(BindError::NotBound));
                }
                return self.settle();
            }
            Step::Raise { .. } => unreachable!(),
            Step::Oom { n } => crate::alloc::fail_after(Some(n)),
            Step::Reload => {
                drop(g);
                self.unload();
                for d in self.all_devices().iter().chain(&self.dead) {
                    assert_eq!(d.refs.get(), 0, "{}: held after unload", d.name());
                }
                for n in self.last.borrow().values() {
                    assert_eq!(
                        n.protection,
                        Protection::None,
                        "{n:?}: not retracted at unload"
                    );
                }
                self.last.borrow_mut().clear();
                self.load();
                return self.settle();
            }
        }
        drop(g);
        self.settle();
    }

    /// Runs what the step queued, then checks everything.
    fn settle(&mut self) {
        self.absorb();
        for _ in 0..3 {
            workqueue::run_pending();
            self.absorb();
        }
        self.last_log = std::mem::take(&mut *self.log.borrow_mut());
        self.check();
    }

    /// Takes what reached user space or the driver: generations strictly
    /// increase, and no port is announced twice in a row the same.
    fn absorb(&self) {
        for mut r in host::take_log() {
            if let Rec::Note(n) | Rec::HostNote(n) = &mut r {
                // An object names its port by ifindex, as on the wire.
                n.dev = self.by_ifindex[&n.ifindex];
            }
            if let Rec::HostNote(n) = &r {
                // The host hears what the port's namespace heard, right
                // after it, with the ids the initial namespace has.
                let log = self.log.borrow();
                let before = log.last().and_then(|p| match p {
                    Rec::Note(p) if p.generation == n.generation => Some(p),
                    _ => None,
                });
                if before.is_none() {
                    assert!(self.degraded(), "monitor-all heard {n:?} alone");
                }
                if let Some(p) = before {
                    let init = Net::init_net().cookie();
                    let id = |ns: u64| (ns != init).then_some(ns as i32);
                    let want = Note {
                        host: true,
                        netnsid: id(p.netns),
                        secy_id: (p.secy != 0).then(|| id(p.secy_netns)).flatten(),
                        ..p.clone()
                    };
                    assert_eq!(*n, want, "the host's view of {p:?}");
                }
            }
            if let Rec::Note(n) = &r {
                assert!(
                    n.generation > self.generation.get(),
                    "generation {} after {}",
                    n.generation,
                    self.generation.get()
                );
                self.generation.set(n.generation);
                let mut last = self.last.borrow_mut();
                if let Some(prev) = last.get(&n.dev) {
                    // A notification lost to memory leaves the last one
                    // behind: the next may say the same again.
                    if !self.degraded() {
                        assert_ne!(prev.object(), n.object(), "announced twice the same");
                    }
                }
                last.insert(n.dev, n.clone());
            }
            if let Rec::SetErr { netns, host } = &r {
                // The listeners there read ENOBUFS and dump again: what
                // they last heard no longer stands for anything.
                assert!(self.degraded(), "ENOBUFS with memory to spare");
                if !host {
                    self.last.borrow_mut().retain(|_, n| n.netns != *netns);
                }
            }
            self.log.borrow_mut().push(r);
        }
    }

    /// The netdevs that may be ports.
    fn port_devices(&self) -> Vec<&'static NetDevice> {
        self.all_devices()
    }

    /// What the model says of port `d`: whether it is tracked, and if so
    /// its relation, SecY and verdict.
    fn expected(&self, d: &'static NetDevice) -> Option<Expected> {
        let has_rdma = self.rdmas.iter().any(|r| *r.netdev == *d);
        let binding = self.bindings.get(&key(d)).copied();
        if !has_rdma && binding.is_none() {
            return None;
        }
        let (relation, secy) = if let Some(b) = binding {
            (
                Some(Relation::Bound),
                b.and_then(|k| self.secys.iter().copied().find(|s| key(s) == k)),
            )
        } else if d.is_macsec() {
            (Some(Relation::SelfDev), Some(d))
        } else {
            match self
                .secys
                .iter()
                .copied()
                .filter(|s| *Self::real(s) == *d)
                .min_by_key(|s| (s.net.get().cookie(), s.ifindex()))
            {
                Some(s) => (Some(Relation::Upper), Some(s)),
                None => (None, None),
            }
        };
        let none = |r| (Protection::None, Some(r));
        let (p, r) = match secy {
            None if binding.is_some() => none(Reason::BindingStale),
            None => none(Reason::NoSecy),
            Some(s) => {
                let sw = Self::sw(s);
                let real = Self::real(s);
                let offloaded = sw.offload != Offload::Off;
                if offloaded && !self.observed.contains(&key(s)) {
                    none(Reason::Unknown)
                } else if !s.is_up() {
                    none(Reason::SecyDown)
                } else if !(real.is_up() && real.carrier_ok()) {
                    none(Reason::LowerDown)
                } else if !offloaded || self.under_claim.contains(&key(s)) {
                    none(Reason::OffloadOff)
                } else if !Self::reachable(real)
                    || (cfg!(MACSEC_BRIDGE_COMPAT) && real.phy_macsec_ops.get())
                {
                    // Built with the interposer, the module sees no PHY's
                    // operations: a switch to the PHY would go unseen.
                    none(Reason::OffloadUnreachable)
                // What macsec.c holds, as the operations show it: the
                // driver's records may differ (see `learnt`).
                } else if sw.tx_sa[sw.encoding_sa as usize % 4] != Some(true) {
                    none(Reason::NoActiveTxSa)
                } else if !sw.protect {
                    none(Reason::ProtectOff)
                } else if !sw.encrypt {
                    none(Reason::EncryptOff)
                } else if self.unsettled.borrow().contains(&key(s)) {
                    none(Reason::Unsettled)
                } else if relation == Some(Relation::Upper) || self.escapes(d) {
                    none(Reason::Partial)
                } else {
                    (Protection::OffloadMac, None)
                }
            }
        };
        Some((relation, secy, p, r))
    }

    /// Whether some RoCE of port `d` may leave other than through `d`: a
    /// GID of one of its RDMA devices is on another netdev, or is routed
    /// IPv6 (every GID of the table is) of RXE on a kernel without the
    /// series' RXE patch, or the device has moved to another.
    fn escapes(&self, d: &NetDevice) -> bool {
        self.rdmas
            .iter()
            .filter(|r| core::ptr::eq(r.netdev, d))
            .any(|r| {
                r.moved.get().is_some_and(|m| !core::ptr::eq(m, r.netdev))
                    || r.table.borrow().iter().any(|n| !core::ptr::eq(*n, d))
                    || (r.rxe.get() && cfg!(MACSEC_BRIDGE_COMPAT) && !r.table.borrow().is_empty())
            })
    }

    /// The dump's index, whatever memory did: each port under the
    /// namespace it was published in and its serial, and nothing else, so
    /// that a dump from that namespace, and from no other, finds it.
    fn check_order(&self) {
        let st = self.b().state.lock();
        let p = &st.ports;
        assert_eq!(p.order.iter().count(), p.all.iter().count(), "index size");
        for (&serial, e) in p.all.iter() {
            assert!(
                p.order.get(&(e.ns, serial)).is_some(),
                "{}: not indexed",
                e.dev.name()
            );
            if let Some(v) = e.object().map(|o| o.view) {
                assert_eq!(
                    v.netns,
                    e.ns,
                    "{}: indexed in another namespace",
                    e.dev.name()
                );
                assert_eq!(
                    v.netns,
                    e.dev.net.get().cookie(),
                    "{}: published elsewhere",
                    e.dev.name()
                );
            }
        }
    }

    /// Liveness and consistency, once a step is over.
    fn check(&mut self) {
        self.check_order();
        {
            let st = self.b().state.lock();
            let n = st.ports.all.iter().filter(|(_, e)| e.watched).count();
            assert_eq!(st.ports.watched, n, "Ports::watched against the ports");
        }
        if self.degraded() {
            return self.check_degraded();
        }
        let b = self.b().clone();
        let st = b.state.lock();
        for d in self.port_devices() {
            let e = st.ports.of(d);
            let want = self.expected(d);
            let owner = Owner::of_world(d);
            let bit = d.features().contains(Features::HW_MACSEC);
            match (e, want) {
                (None, None) => {
                    // Its last word retracted it; a port tracked again later
                    // starts anew (its departure is not announced when it
                    // changes nothing: the uAPI has no "gone").
                    if let Some(n) = self.last.borrow_mut().remove(&key(d)) {
                        assert_eq!(
                            n.protection,
                            Protection::None,
                            "{}: untracked, last said {n:?}",
                            d.name()
                        );
                    }
                    if owner == Owner::Bridge {
                        assert!(!bit, "{}: untracked with its bit set", d.name());
                    }
                }
                (Some(e), Some((relation, secy, p, r))) => {
                    let v = e.port.advertised();
                    let got = (
                        e.relation,
                        e.secy.as_deref().map(key),
                        v.protection,
                        v.reason,
                    );
                    let want = (relation, secy.map(key), p, r);
                    assert_eq!(
                        got,
                        want,
                        "{}: (relation, secy, protection, reason)",
                        d.name()
                    );
                    // Safety against the driver's truth, not only the
                    // contract's rules: no claim above what it holds.
                    if let Some(s) = secy {
                        let hw = self.hw.borrow().get(&key(s)).copied().unwrap_or_default();
                        assert!(
                            v.protection.rank() <= Self::truth(s, hw).rank(),
                            "{}: claims {:?} above its driver's {hw:?}",
                            d.name(),
                            v.protection
                        );
                    }
                    assert_eq!(e.owner, owner, "{}: owner", d.name());
                    let last = self.last.borrow();
                    let n = last
                        .get(&key(d))
                        .unwrap_or_else(|| panic!("{}: never announced", d.name()));
                    assert_eq!(
                        (
                            n.relation,
                            n.secy,
                            n.protection,
                            n.reason,
                            n.owner,
                            n.ifindex,
                            n.generation
                        ),
                        (
                            relation,
                            secy.map_or(0, |s| s.ifindex()),
                            p,
                            r,
                            owner,
                            d.ifindex(),
                            e.generation
                        ),
                        "{}: last notification",
                        d.name()
                    );
                    assert_eq!(n.netns, d.net.get().cookie());
                    assert_eq!(n.name, d.name().to_string_lossy(), "{}: ifname", d.name());
                    assert_eq!(n.secy_netns, secy.map_or(0, |s| s.net.get().cookie()));
                    let names: Vec<String> = self
                        .rdmas
                        .iter()
                        .filter(|r| *r.netdev == *d)
                        .map(|r| r.name.get().to_string_lossy().into_owned())
                        .collect();
                    let mut got = n.rdma.clone();
                    got.sort();
                    let mut want = names;
                    want.sort();
                    assert_eq!(got, want, "{}: RDMA devices", d.name());
                    if let Some(s) = secy.filter(|_| p == Protection::OffloadMac) {
                        let sw = Self::sw(s);
                        assert_eq!(
                            n.id,
                            Some((sw.sci, sw.cipher)),
                            "{}: sci and cipher",
                            d.name()
                        );
                        assert_eq!(n.encrypt, Some(true));
                    }
                    if owner == Owner::Bridge {
                        assert_eq!(bit, p == Protection::OffloadMac, "{}: bit", d.name());
                    }
                }
                (e, want) => panic!(
                    "{}: tracked {} but the model says {want:?}",
                    d.name(),
                    e.is_some()
                ),
            }
            if owner == Owner::Driver {
                assert_eq!(
                    d.writes.get(),
                    0,
                    "{}: a driver-owned bit was written",
                    d.name()
                );
            }
            // Never more than the driver's state gives.
            if let Some(e) = st.ports.of(d) {
                if let Some(s) = e.secy.as_deref() {
                    let hw = self.hw.borrow().get(&key(s)).copied().unwrap_or_default();
                    assert!(e.port.advertised().protection.rank() <= Self::truth(s, hw).rank());
                }
            }
            self.checks += 1;
        }
        drop(st);
        for d in &self.dead {
            assert_eq!(
                d.refs.get(),
                0,
                "{}: still held after its unregistration",
                d.name()
            );
        }
        let w = host::take_warnings();
        assert!(w.is_empty(), "warnings: {w:?}");
        self.checks += self.checks_at_driver.replace(0);
    }

    /// What holds whatever memory did: no port claims, in its state or
    /// its last notification, more than its SecY's driver gives; the last
    /// notification never claims more than the port's state (a retraction
    /// is never lost); a bridge-owned bit is its state's; untracked ports
    /// were retracted; no deleted netdev is held.
    fn check_degraded(&mut self) {
        let _ = host::take_warnings();
        let b = self.b().clone();
        let st = b.state.lock();
        for d in self.port_devices() {
            let owner = Owner::of_world(d);
            let bit = d.features().contains(Features::HW_MACSEC);
            let last = self.last.borrow().get(&key(d)).cloned();
            match st.ports.of(d) {
                Some(e) => {
                    let v = e.port.advertised().protection;
                    if let Some(s) = e.secy.as_deref() {
                        let hw = self.hw.borrow().get(&key(s)).copied().unwrap_or_default();
                        assert!(
                            v.rank() <= Self::truth(s, hw).rank(),
                            "{}: claims {v:?}",
                            d.name()
                        );
                    } else {
                        assert_eq!(v, Protection::None);
                    }
                    if let Some(n) = last {
                        assert!(
                            n.protection.rank() <= v.rank(),
                            "{}: last announced {:?} while it is {v:?}",
                            d.name(),
                            n.protection
                        );
                    }
                    if owner == Owner::Bridge {
                        assert_eq!(bit, v.is_offload(), "{}: bit", d.name());
                    }
                }
                None => {
                    if let Some(n) = last {
                        assert_eq!(
                            n.protection,
                            Protection::None,
                            "{}: untracked, last said {n:?}",
                            d.name()
                        );
                    }
                    if owner == Owner::Bridge {
                        assert!(!bit, "{}: untracked with its bit set", d.name());
                    }
                }
            }
            if owner == Owner::Driver {
                assert_eq!(
                    d.writes.get(),
                    0,
                    "{}: a driver-owned bit was written",
                    d.name()
                );
            }
            self.checks += 1;
        }
        drop(st);
        for d in &self.dead {
            assert_eq!(
                d.refs.get(),
                0,
                "{}: still held after its unregistration",
                d.name()
            );
        }
        self.checks += self.checks_at_driver.replace(0);
    }

    // ---- Helpers of the sequence tests.

    /// An offloaded SecY on the first NIC, up, with an active encoding SA,
    /// `encrypt on`, and the first plain device bound to it with an RDMA
    /// device: the port advertises offload. Returns the SecY's position.
    pub fn protected_bound_port(&mut self) -> usize {
        let s = self.protected_secy();
        self.step(&Step::RdmaAdd {
            on: Target::Plain(0),
        });
        self.step(&Step::Bind { p: 0, s });
        assert_eq!(self.verdict_of_plain(0), (Protection::OffloadMac, None));
        s
    }

    /// As [`World::protected_bound_port`], the RDMA device on the SecY.
    pub fn protected_secy_port(&mut self) -> usize {
        let s = self.protected_secy();
        self.step(&Step::RdmaAdd {
            on: Target::Secy(s),
        });
        s
    }

    /// As [`World::protected_bound_port`], the RDMA device on the SecY's
    /// real device (mlx5's shape) with a GID on the SecY: the port is
    /// `upper`, partial, and lists that GID.
    pub fn protected_upper_port(&mut self) -> usize {
        let s = self.protected_secy();
        self.step(&Step::RdmaAdd {
            on: Target::Lower(0),
        });
        self.gid_on(Some(self.secys[s]));
        s
    }

    /// Moves the last RDMA device added to netdev `to` (`Some`), or back
    /// (`None`), as `ib_device_set_netdev()` does: no client is told. Then
    /// the module's periodic work runs, if it queued any.
    pub fn rdma_move(&mut self, to: Option<&'static NetDevice>) {
        self.rdmas.last().expect("an RDMA device").moved.set(to);
        self.settle();
    }

    /// Whether the last RDMA device added is RXE, which routes IPv6 RoCE
    /// around its GIDs' netdevs on a kernel without the series' RXE patch
    /// (the interposer's). Read when its GID tables are read next.
    pub fn rdma_rxe(&mut self, rxe: bool) {
        self.rdmas.last().expect("an RDMA device").rxe.set(rxe);
    }

    /// PN exhaustion on TX SA `an` of SecY `s`, as `__macsec_pn_wrapped()`
    /// makes it: the SA's `active` cleared, nobody told, the driver's SA
    /// stopped. Then the module's periodic work runs, if it queued any.
    /// NIC `l`'s PHY starts offering MACsec offload (its driver probed
    /// late, say): no event, no operation.
    pub fn phy_appears(&mut self, l: usize) {
        self.lowers[l].phy_macsec_ops.set(true);
        self.settle();
    }

    pub fn pn_wrap(&mut self, s: usize, an: u8) {
        let d = self.secys[s];
        Self::set_sw(d, |sw| sw.tx_sa[an as usize] = Some(false));
        if let Some(hw) = self.hw.borrow_mut().get_mut(&key(d)) {
            hw.tx_sa[an as usize] = Some(false);
        }
        self.settle();
    }

    pub fn protected_secy(&mut self) -> usize {
        self.step(&Step::NewSecy {
            lower: 0,
            offload: true,
            encrypt: true,
            protect: true,
            encoding_sa: 0,
            fail: false,
        });
        let s = self.secys.len() - 1;
        self.step(&Step::Open { s, fail: false });
        self.step(&Step::AddTxsa {
            s,
            an: 0,
            active: true,
            fail: false,
        });
        s
    }

    /// Gives the last RDMA device added a GID on `ndev` (`Some`), or takes
    /// its GIDs beyond the default one away (`None`), as `roce_gid_mgmt.c`
    /// does for the addresses of a device over the port, and tells the
    /// bridge as the RDMA core does.
    pub fn gid_on(&mut self, ndev: Option<&'static NetDevice>) {
        let r = self.gid_unseen(ndev);
        <GidEvents as rdma::Events>::gid_change(r, 1);
        self.settle();
    }

    /// As [`World::gid_on`], before the RDMA core tells of it.
    pub fn gid_unseen(&mut self, ndev: Option<&'static NetDevice>) -> &'static rdma::Device {
        let r = *self.rdmas.last().expect("an RDMA device");
        match ndev {
            Some(d) => r.table.borrow_mut().push(d),
            None => r.table.borrow_mut().clear(),
        }
        r
    }

    /// The GIDs port `d` lists, by index.
    pub fn gids_of(&self, d: &NetDevice) -> Vec<u32> {
        let st = self.b().state.lock();
        let e = st.ports.of(d).expect("a port");
        e.gids.iter().map(|g| g.index).collect()
    }

    pub fn verdict_of_plain(&self, p: usize) -> (Protection, Option<Reason>) {
        self.verdict_of(self.plains[p])
    }

    pub fn verdict_of_lower(&self, l: usize) -> (Protection, Option<Reason>) {
        self.verdict_of(self.lowers[l])
    }

    pub fn verdict_of_secy(&self, s: usize) -> (Protection, Option<Reason>) {
        self.verdict_of(self.secys[s])
    }

    pub fn verdict_of(&self, d: &NetDevice) -> (Protection, Option<Reason>) {
        let st = self.b().state.lock();
        let v = st.ports.of(d).expect("a port").port.advertised();
        (v.protection, v.reason)
    }
}

impl Owner {
    /// The model's owner: the driver's wherever the device has MACsec ops or
    /// lets users toggle the bit.
    fn of_world(d: &NetDevice) -> Owner {
        if d.macsec_ops || d.hw_features & Features::HW_MACSEC.0 != 0 {
            Owner::Driver
        } else {
            Owner::Bridge
        }
    }
}
