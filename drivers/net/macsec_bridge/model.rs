// SPDX-License-Identifier: GPL-2.0

//! The model: ports, SecYs, relations, owners, GIDs, and the object a port
//! publishes. Plain data and what follows from it alone; the state
//! ([`crate::state`]) keeps these, the core's rooms change them.
//!
//! Layer 1 (types and leaves). Owns: those types, and how the state grows
//! ([`GROW`]). May use: layer 1 (`index`, `lockstep`).

use crate::index::Index;
use crate::lockstep::{Knowledge, Offload, Port, Verdict};
use crate::net::device::{Features, NetDevice, NetDeviceRef};
use crate::net::macsec::{self, SecYRef};
use crate::net::namespace::Net;
use crate::net::rtnl::Rtnl;
use kernel::prelude::*;

/// The most GIDs a `partial` port's object lists: with RDMA device names
/// of the longest, the object still fits a default-sized message.
pub(crate) const MAX_GIDS: usize = 16;

/// How the state, and what the platform keeps in it, grows: charged to
/// the memory cgroup of the task whose action made it grow. A SecY is
/// tracked, and a port bound, from the context of whoever created or
/// bound it, and the root of a user namespace may do both at will. The
/// arrays are shared: a growth charges the whole new array to that task's
/// cgroup, so the charge is coarse, but what a container makes the state
/// grow by is never free to it.
pub(crate) const GROW: kernel::alloc::Flags = GFP_KERNEL_ACCOUNT;

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
    pub(crate) secy: Option<NetDeviceRef>,
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
    /// The SecY runs over the port (the port is one of its lower devices,
    /// at any depth): the port's own traffic does not cross it.
    Loop,
    /// The module is unloading: it binds nothing any more.
    Unloading,
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
    pub(crate) fn of(dev: &NetDevice) -> Owner {
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
    pub(crate) dev: NetDeviceRef,
    /// Its real device.
    pub(crate) lower: Option<NetDeviceRef>,
    /// What is known of the SecY.
    pub(crate) known: Knowledge,
    /// SCI (as on the wire) and cipher, once an offload operation showed
    /// them.
    pub(crate) id: Option<(u64, macsec::Cipher)>,
    /// The SecY itself, once an offload operation showed it: read again
    /// for what changes unseen.
    pub(crate) view: Option<SecYRef>,
    /// What it does with what it receives, once an offload operation
    /// showed it; weakened before an operation that may weaken it.
    pub(crate) ingress: Option<Ingress>,
}

/// What a SecY does with what it receives: how it validates frames, and
/// whether its offloading driver leaves the MACsec core to deliver it
/// plaintext frames addressed to it (no metadata dst on what the device
/// decrypted: `handle_not_macsec()`), whatever it validates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Ingress {
    /// `validate_frames`.
    pub(crate) validate: macsec::Validate,
    /// The driver does not mark what it decrypted (`rx_uses_md_dst`).
    pub(crate) plaintext: bool,
}

impl Ingress {
    /// The SecY `secy` offloaded as `offload` over real device `real`, as
    /// an operation shows it: the MACsec core reads `rx_uses_md_dst` from
    /// the table of the offloader, `real`'s own or its PHY's.
    pub(crate) fn of(
        rtnl: &Rtnl,
        secy: &macsec::SecY,
        offload: macsec::Offload,
        real: &NetDevice,
    ) -> Ingress {
        let marks = match offload {
            macsec::Offload::Phy => real.phy_macsec_rx_uses_md_dst(rtnl),
            _ => real.macsec_rx_uses_md_dst(rtnl),
        };
        Ingress {
            validate: secy.validate_frames(),
            plaintext: !marks,
        }
    }

    /// The weaker of `self` and `other`, field by field: what holds
    /// through a change from one to the other.
    pub(crate) fn weaker(self, other: Ingress) -> Ingress {
        Ingress {
            validate: self.validate.min(other.validate),
            plaintext: self.plaintext || other.plaintext,
        }
    }
}

/// The SecYs by netdev, each in its own allocation: a lookup that finds
/// nothing (most events) probes slots of 16 bytes, and tracking a SecY
/// always allocates, so no SecY is tracked without its memory charged.
pub(crate) type Secys = Index<usize, KBox<Secy>>;

/// An RDMA device on a port.
pub(crate) struct RdmaDev {
    /// Its [`crate::roce::DeviceExt::id`]: the device is valid while this is
    /// tracked (it goes in the client's `remove`).
    pub(crate) id: usize,
    /// The device's port that the netdev backs.
    pub(crate) port: u32,
    /// Its name.
    pub(crate) name: KVec<u8>,
}

/// A GID of a port on which RoCE crosses the port's SecY.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gid {
    /// The RDMA device whose table holds it ([`RdmaDev::id`]).
    pub(crate) rdma: usize,
    /// Its index in the table.
    pub(crate) index: u32,
    /// The GID.
    pub(crate) gid: [u8; 16],
}

/// Where the RoCE of a port's RDMA devices leaves, as their GID tables say
/// ([`read_reach`]): what a `self` or `bound` port may claim. The RDMA core
/// gives a port the GIDs of the addresses of every upper device of its
/// netdev (`roce_gid_mgmt.c`: a bond or team it is a slave of, unless it is
/// an inactive one, a VLAN, a macvlan), and RoCE on such a GID leaves
/// through that device (`rxe_net.c`, mlx5's `ib_get_eth_speed` path alike),
/// which may send it around the port's own egress.
///
/// [`read_reach`]: crate::gids::read_reach
#[derive(Default)]
pub(crate) struct Reach {
    /// Read since the port's GID tables or RDMA devices last changed.
    pub(crate) read: bool,
    /// Some RoCE of the port may leave other than through the port's own
    /// netdev: a GID on a device that can send elsewhere, or tables that
    /// could not be read. (An RDMA device whose netdev is no longer the
    /// port's is looked for on every recompute: [`rdma_moved`].)
    ///
    /// [`rdma_moved`]: crate::gids::rdma_moved
    pub(crate) escapes: bool,
    /// The GIDs on which RoCE leaves only through the port's own netdev, at
    /// most [`MAX_GIDS`].
    pub(crate) through: KVec<Gid>,
}

/// A port: a netdev that backs an RDMA device.
pub(crate) struct PortEntry {
    /// The netdev.
    pub(crate) dev: NetDeviceRef,
    /// The RDMA devices on it.
    pub(crate) rdma: KVec<RdmaDev>,
    /// For a port whose SecY protects what it carries but not all of the
    /// port's RoCE: the GIDs on which RoCE crosses it, read by
    /// [`Bridge::finish`] ([`read_gids`]). Empty otherwise.
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    /// [`read_gids`]: crate::gids::read_gids
    pub(crate) gids: KVec<Gid>,
    /// The RoCE v2 GIDs on the SecY that were there while it was not known
    /// to be offloaded (or when they were first read): never listed.
    pub(crate) stale: KVec<Gid>,
    /// The SecY [`PortEntry::stale`] is about, if it is complete.
    pub(crate) stale_of: Option<usize>,
    /// How many times [`PortEntry::gids`] changed.
    pub(crate) gid_changes: u32,
    /// Where its RoCE leaves, for a `self` or `bound` port.
    pub(crate) reach: Reach,
    /// How many times one of them was renamed (a rename changes the object).
    pub(crate) renames: u32,
    /// The advertised state.
    pub(crate) port: Port,
    /// Where its SecY comes from, if it has one.
    pub(crate) relation: Option<Relation>,
    /// The MACsec netdev of its SecY.
    pub(crate) secy: Option<NetDeviceRef>,
    /// Who owns the feature bit.
    pub(crate) owner: Owner,
    /// The binding, for a `bound` port. A bound port stays tracked while
    /// it has no RDMA device (RXE cannot follow its netdev into another
    /// namespace).
    pub(crate) binding: Option<Binding>,
    /// The object's generation: the bridge's clock when it last changed.
    pub(crate) generation: u64,
    /// When the port was tracked: ports are kept by serial in
    /// [`Ports::all`], and a dump resumes after the last serial it sent.
    ///
    /// [`Ports::all`]: crate::state::Ports::all
    pub(crate) serial: u64,
    /// The cookie of the namespace it is kept under in [`Ports::order`]:
    /// its published one.
    ///
    /// [`Ports::order`]: crate::state::Ports::order
    pub(crate) ns: u64,
    /// The object as last announced (`None` before the first notification).
    pub(crate) last: Option<View>,
    /// Retracted: the next [`Bridge::finish`] announces that, if it changes
    /// the object, then drops the port.
    ///
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) gone: bool,
    /// In [`Ports::dirty`]: the next [`Bridge::finish`] recomputes it.
    ///
    /// [`Ports::dirty`]: crate::state::Ports::dirty
    /// [`Bridge::finish`]: crate::bridge::Bridge::finish
    pub(crate) dirty: bool,
    /// Whether it advertised offload when last recomputed.
    pub(crate) offload: bool,
    /// Whether an RDMA device of a `self` or `bound` port had another
    /// netdev when last recomputed (the port is partial for it).
    pub(crate) moved: bool,
    /// Whether, when last recomputed, it advertised offload, listed a
    /// protected GID (a partial or `upper` port's, which rest on the
    /// SecY's state as much as a claim does) or was partial because its
    /// RDMA device had moved and would claim once it came back: counted
    /// in [`Ports::watched`].
    ///
    /// [`Ports::watched`]: crate::state::Ports::watched
    pub(crate) watched: bool,
}

/// The parts of a port's object that a notification reports (and the
/// generation stands for). The last one computed is what readers get
/// ([`PortEntry::object`]): what it says of netdevs (names, ifindexes,
/// namespaces) was read under RTNL, which readers do not take.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) verdict: Verdict,
    pub(crate) relation: Option<Relation>,
    /// The SecY's ifindex, if the port has one.
    pub(crate) secy: Option<i32>,
    pub(crate) id: Option<(u64, macsec::Cipher)>,
    pub(crate) encrypt: Option<bool>,
    /// The SecY's [`Ingress`], where `encrypt` is reported.
    pub(crate) ingress: Option<Ingress>,
    pub(crate) owner: Owner,
    pub(crate) ifindex: i32,
    /// The port's name, NUL-padded.
    pub(crate) name: [u8; 16],
    /// The cookies of the port's and the SecY's namespaces: a move changes
    /// the object (its ifindex and `secy-netnsid` are per namespace).
    pub(crate) netns: u64,
    pub(crate) secy_netns: u64,
    /// The id the port's namespace has for the SecY's, if that is another
    /// (allocated when there is none, as rtnetlink does for
    /// `IFLA_LINK_NETNSID`); negative otherwise.
    pub(crate) secy_netnsid: i32,
    /// The ids the initial namespace has for the port's and the SecY's,
    /// each where it is another (allocated likewise): the host's view
    /// (`netnsid`, and `secy-netnsid` relative to it). Negative otherwise.
    pub(crate) host_netnsid: i32,
    pub(crate) host_secy_netnsid: i32,
    /// The RDMA devices on the port: how many, and the sum of their
    /// identities (a device replaced by another changes it).
    pub(crate) rdma: (usize, usize),
    /// Renames of the port's RDMA devices.
    pub(crate) renames: u32,
    /// Changes of the port's protected GIDs.
    pub(crate) gid_changes: u32,
}

/// Who reads a port's object: a reader in the port's namespace, or the
/// host, which sees every namespace's ports from the initial one
/// (`all-netns` dumps, `monitor-all`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    Port,
    Host,
}

impl View {
    /// Whether `reader` can name the port: the host only where the port is
    /// in the initial namespace or that has an id for the port's (none
    /// without memory for one, or while the port's namespace dies).
    pub(crate) fn named_by(&self, reader: Reader) -> bool {
        reader == Reader::Port || self.netns == Net::init_net().cookie() || self.host_netnsid >= 0
    }
}

impl PortEntry {
    /// The object as last computed (under RTNL): what readers, which take
    /// only the state's mutex, report. Every port has one once the update
    /// that tracked it finished.
    pub(crate) fn object(&self) -> Option<Object<'_>> {
        Some(Object {
            view: self.last.as_ref()?,
            rdma: &self.rdma,
            gids: &self.gids,
            generation: self.generation,
            serial: self.serial,
        })
    }

    /// The port's object as it is now, from the port and its SecY (in
    /// `secys`): what the next notification reports if it differs from
    /// the last. Reads the netdevs, under RTNL.
    pub(crate) fn current(&self, rtnl: &Rtnl, secys: &Secys) -> View {
        let secy = self.secy.as_ref().and_then(|d| secys.get(&key(d)));
        let mut name = [0u8; 16];
        let copy = self.dev.name();
        let n = copy.to_bytes();
        let len = n.len().min(name.len() - 1);
        name[..len].copy_from_slice(&n[..len]);
        let encrypt = secy.and_then(|s| advertised_encrypt(self, s));
        let net = self.dev.net(rtnl);
        let secy_net = self.secy.as_ref().map(|d| d.net(rtnl));
        let init = Net::init_net();
        // The host's ids, each only where the namespace is not its own.
        let host_id = |n: &Net| {
            if n.cookie() == init.cookie() {
                -1
            } else {
                init.peer_id(n)
            }
        };
        View {
            verdict: self.port.advertised(),
            relation: self.relation,
            secy: self.secy.as_ref().map(|d| d.ifindex()),
            id: secy.and_then(|s| s.id),
            encrypt,
            // Exactly where `encrypt` is: one operation, one notification.
            ingress: encrypt.and(secy.and_then(|s| s.ingress)),
            owner: self.owner,
            ifindex: self.dev.ifindex(),
            name,
            netns: net.cookie(),
            rdma: self
                .rdma
                .iter()
                .fold((0, 0), |(n, sum), r| (n + 1, sum.wrapping_add(r.id))),
            renames: self.renames,
            gid_changes: self.gid_changes,
            secy_netns: secy_net.map_or(0, Net::cookie),
            // The port's own readers are in its namespace (a dump lists the
            // caller's, `dev-get` looks its ifindex up there).
            secy_netnsid: secy_net.map_or(-1, |s| net.peer_id(s)),
            host_netnsid: host_id(net),
            host_secy_netnsid: secy_net.map_or(-1, host_id),
        }
    }

    /// A port for `dev`, not related to anything yet.
    pub(crate) fn new(dev: &NetDevice) -> PortEntry {
        PortEntry {
            dev: dev.hold(GFP_KERNEL),
            rdma: KVec::new(),
            gids: KVec::new(),
            stale: KVec::new(),
            stale_of: None,
            gid_changes: 0,
            reach: Reach::default(),
            renames: 0,
            port: Port::new(Knowledge::Unknown),
            relation: None,
            secy: None,
            owner: Owner::of(dev),
            binding: None,
            generation: 0,
            serial: 0,
            ns: 0,
            last: None,
            gone: false,
            dirty: false,
            offload: false,
            moved: false,
            watched: false,
        }
    }

    /// Whether the port is still tracked: it backs an RDMA device or is
    /// bound.
    pub(crate) fn wanted(&self) -> bool {
        !self.rdma.is_empty() || self.binding.is_some()
    }
}

/// A netdev's key in the state's indexes: its address. Each index entry's
/// netdev is held by what the entry leads to (a port, a SecY, a binding,
/// what the platform keeps of a device) and the entry goes when that lets go of it, so the
/// address names one device for as long as the entry exists.
pub(crate) fn key(dev: &NetDevice) -> usize {
    dev.as_raw() as usize
}

/// A port's object as last published: what `dev-get`, a dump and a
/// notification report, and all they report. Borrowed from the state,
/// under its mutex: a dump writes thousands of them and allocates nothing.
pub(crate) struct Object<'a> {
    /// What the object says of the port and its SecY.
    pub(crate) view: &'a View,
    /// The RDMA devices on the port.
    pub(crate) rdma: &'a [RdmaDev],
    /// The GIDs it lists ([`PortEntry::gids`]).
    pub(crate) gids: &'a [Gid],
    /// Its generation ([`PortEntry::generation`]).
    pub(crate) generation: u64,
    /// Its serial ([`PortEntry::serial`]): `port-id`.
    pub(crate) serial: u64,
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
