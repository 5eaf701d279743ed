// SPDX-License-Identifier: GPL-2.0

//! The network abstractions the core is written against (the patch
//! series' `kernel::net`), for its host build: a netdev is a plain struct
//! the world of `tests/bridge.rs` sets up and changes, a notifier chain and
//! the interposed `macsec_ops` are calls into the bridge, and everything
//! that reaches user space (a feature write, a multicast notification) is
//! recorded in the [`crate::host`] log.

pub mod namespace {
    /// A network namespace.
    #[derive(Debug)]
    pub struct Net {
        pub cookie: u64,
    }

    /// The initial namespace: the world's first.
    static INIT: Net = Net { cookie: 1 };

    impl Net {
        pub fn init_net() -> &'static Net {
            &INIT
        }

        pub fn cookie(&self) -> u64 {
            self.cookie
        }

        pub fn peer_id(&self, other: &Net) -> i32 {
            if core::ptr::eq(self, other) {
                -1
            } else {
                other.cookie as i32
            }
        }
    }

    impl PartialEq for Net {
        fn eq(&self, o: &Net) -> bool {
            core::ptr::eq(self, o)
        }
    }
}

pub mod rtnl {
    use std::cell::Cell;

    thread_local! {
        static HELD: Cell<bool> = const { Cell::new(false) };
    }

    /// Proof that RTNL is held.
    pub struct Rtnl(());

    impl Rtnl {
        /// Takes RTNL; the world never takes it twice (it is not recursive).
        pub fn lock() -> RtnlGuard {
            HELD.with(|h| {
                assert!(!h.get(), "RTNL taken recursively");
                h.set(true);
            });
            RtnlGuard(Rtnl(()))
        }

        /// # Safety
        ///
        /// RTNL is held for the call.
        pub unsafe fn assume_held<R>(f: impl FnOnce(&Rtnl) -> R) -> R {
            f(&Rtnl(()))
        }

        /// Whether some context holds it.
        pub fn held() -> bool {
            HELD.with(Cell::get)
        }
    }

    pub struct RtnlGuard(Rtnl);

    impl core::ops::Deref for RtnlGuard {
        type Target = Rtnl;
        fn deref(&self) -> &Rtnl {
            &self.0
        }
    }

    impl Drop for RtnlGuard {
        fn drop(&mut self) {
            HELD.with(|h| h.set(false));
        }
    }
}

pub mod device {
    use super::macsec::{Observer, SecyData};
    use super::namespace::Net;
    use super::notifier::{self, NetdevEvent};
    use super::rtnl::{Rtnl, RtnlGuard};
    use crate::host::kernel::str::CStr;
    use crate::sync::aref::AlwaysRefCounted;
    use core::ptr::NonNull;
    use std::cell::{Cell, RefCell};

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct Features(pub u64);

    impl Features {
        pub const HW_MACSEC: Features = Features(1 << 40);

        pub fn contains(self, other: Features) -> bool {
            self.0 & other.0 == other.0
        }
    }

    /// A netdev of the host world.
    pub struct NetDevice {
        pub name: Cell<&'static CStr>,
        pub ifindex: Cell<i32>,
        pub up: Cell<bool>,
        pub carrier: Cell<bool>,
        pub registered: Cell<bool>,
        pub features: Cell<u64>,
        pub hw_features: u64,
        /// A MACsec-capable driver: `dev->macsec_ops` is set.
        pub macsec_ops: bool,
        /// Its `macsec_ops` has `mdo_dev_open` and `mdo_dev_stop` (netdevsim
        /// and mlx5e have neither).
        pub macsec_dev_ops: bool,
        /// Its PHY offers MACsec offload: `dev->phydev->macsec_ops` is set.
        pub phy_macsec_ops: Cell<bool>,
        /// Ops-locked (netdevsim, mlx5e): writing its features needs its
        /// instance lock.
        pub ops_locked: bool,
        /// The instance lock is held by the context that runs now.
        pub instance_locked: Cell<bool>,
        pub net: Cell<&'static Net>,
        pub refs: Cell<i64>,
        /// For a MACsec netdev: its real device and `macsec.c`'s SecY.
        pub macsec: Option<SecyData>,
        /// The interposer on `macsec_ops`, if one is installed.
        pub observer: RefCell<Option<std::sync::Arc<dyn Observer>>>,
        /// Feature writes by the bridge.
        pub writes: Cell<u32>,
    }

    // SAFETY: the host world is single-threaded (see `crate::SERIAL`).
    unsafe impl Sync for NetDevice {}
    // SAFETY: as above.
    unsafe impl Send for NetDevice {}

    // SAFETY: world devices are leaked, never freed; the count is what the
    // test checks.
    unsafe impl AlwaysRefCounted for NetDevice {
        fn inc_ref(&self) {
            self.refs.set(self.refs.get() + 1);
        }

        unsafe fn dec_ref(obj: NonNull<Self>) {
            // SAFETY: world devices are never freed.
            let d = unsafe { obj.as_ref() };
            d.refs.set(d.refs.get() - 1);
            assert!(d.refs.get() >= 0, "{:?}: reference dropped twice", d.name());
        }
    }

    pub type RawNetDevice = NetDevice;

    /// As the kernel's: a reference of its own, given back when dropped.
    pub struct NetDeviceRef(NonNull<NetDevice>);

    // SAFETY: as for `NetDevice`.
    unsafe impl Send for NetDeviceRef {}
    // SAFETY: as above.
    unsafe impl Sync for NetDeviceRef {}

    impl core::ops::Deref for NetDeviceRef {
        type Target = NetDevice;

        fn deref(&self) -> &NetDevice {
            // SAFETY: world devices are never freed.
            unsafe { self.0.as_ref() }
        }
    }

    impl Drop for NetDeviceRef {
        fn drop(&mut self) {
            // SAFETY: `self` owns an increment; world devices are never
            // freed.
            unsafe { <NetDevice as AlwaysRefCounted>::dec_ref(self.0) };
        }
    }

    impl NetDevice {
        /// # Safety
        ///
        /// `ptr` is a world device.
        pub unsafe fn from_raw<'a>(ptr: *mut NetDevice) -> &'a NetDevice {
            // SAFETY: the caller's guarantee.
            unsafe { &*ptr }
        }

        pub fn as_raw(&self) -> *mut NetDevice {
            (self as *const NetDevice).cast_mut()
        }

        /// As the kernel's `netdev_hold()`: counted like any reference.
        pub fn hold(&self, _flags: crate::alloc::Flags) -> NetDeviceRef {
            self.inc_ref();
            NetDeviceRef(NonNull::from(self))
        }

        pub fn name(&self) -> &CStr {
            self.name.get()
        }

        pub fn ifindex(&self) -> i32 {
            self.ifindex.get()
        }

        pub fn is_up(&self) -> bool {
            self.up.get()
        }

        pub fn carrier_ok(&self) -> bool {
            self.carrier.get()
        }

        pub fn is_registered(&self) -> bool {
            self.registered.get()
        }

        pub fn features(&self) -> Features {
            Features(self.features.get())
        }

        pub fn hw_features(&self) -> Features {
            Features(self.hw_features)
        }

        /// As the kernel's: only under RTNL.
        pub fn net(&self, _rtnl: &super::rtnl::Rtnl) -> &Net {
            assert!(super::rtnl::Rtnl::held(), "net() without RTNL");
            self.net.get()
        }

        pub fn is_macsec(&self) -> bool {
            self.macsec.is_some()
        }

        pub fn macsec_real_dev(&self) -> Option<&NetDevice> {
            self.macsec.as_ref().and_then(|m| m.real.get())
        }

        /// As the kernel's: only under RTNL.
        pub fn macsec_is_offloaded(&self, _rtnl: &super::rtnl::Rtnl) -> bool {
            assert!(super::rtnl::Rtnl::held());
            self.macsec
                .as_ref()
                .is_some_and(|m| m.sw.borrow().offload != super::macsec::Offload::Off)
        }

        /// No VLANs on the host.
        pub fn vlan_real_dev(&self) -> Option<&NetDevice> {
            None
        }

        /// Whether `upper` is stacked over this device, at any depth: the
        /// world stacks only MACsec netdevs, each on its real device. As
        /// the kernel's: only under RTNL.
        pub fn has_upper_dev(&self, _rtnl: &super::rtnl::Rtnl, upper: &NetDevice) -> bool {
            assert!(super::rtnl::Rtnl::held());
            let mut d = upper;
            while let Some(real) = d.macsec_real_dev() {
                if core::ptr::eq(real, self) {
                    return true;
                }
                d = real;
            }
            false
        }

        pub fn has_macsec_ops(&self) -> bool {
            self.macsec_ops
        }

        /// The model's drivers mark nothing they decrypted: the MACsec
        /// core may deliver plaintext to their SecYs.
        pub fn macsec_rx_uses_md_dst(&self, _rtnl: &crate::net::rtnl::Rtnl) -> bool {
            false
        }

        pub fn has_phy_macsec_ops(&self, _rtnl: &crate::net::rtnl::Rtnl) -> bool {
            self.registered.get() && self.phy_macsec_ops.get()
        }

        /// As for the MAC: nothing marked.
        pub fn phy_macsec_rx_uses_md_dst(&self, _rtnl: &crate::net::rtnl::Rtnl) -> bool {
            false
        }

        pub fn need_ops_lock(&self) -> bool {
            self.ops_locked
        }

        pub fn lock_features<'a>(&'a self, rtnl: &'a mut RtnlGuard) -> FeaturesLock<'a> {
            self.take_instance_lock(rtnl)
        }

        /// # Safety
        ///
        /// No instance lock is held.
        pub unsafe fn lock_features_unlocked<'a>(&'a self, rtnl: &'a Rtnl) -> FeaturesLock<'a> {
            self.take_instance_lock(rtnl)
        }

        /// Both of the above: the instance lock, which nobody may hold.
        fn take_instance_lock<'a>(&'a self, rtnl: &'a Rtnl) -> FeaturesLock<'a> {
            assert!(
                !self.instance_locked.get(),
                "{:?}: instance lock taken twice",
                self.name()
            );
            FeaturesLock {
                dev: self,
                _rtnl: rtnl,
            }
        }

        /// # Safety
        ///
        /// Not a notifier handling this device's `NETDEV_REGISTER`.
        pub unsafe fn features_lock_rtnl<'a>(&'a self, rtnl: &'a Rtnl) -> Option<FeaturesLock<'a>> {
            (!self.ops_locked).then_some(FeaturesLock {
                dev: self,
                _rtnl: rtnl,
            })
        }

        /// # Safety
        ///
        /// RTNL and the instance lock, if any, are held.
        pub unsafe fn assume_features_locked<'a>(&'a self, rtnl: &'a Rtnl) -> FeaturesLock<'a> {
            assert!(
                !self.ops_locked || self.instance_locked.get(),
                "{:?}: features written without the instance lock",
                self.name()
            );
            FeaturesLock {
                dev: self,
                _rtnl: rtnl,
            }
        }
    }

    impl PartialEq for NetDevice {
        fn eq(&self, o: &NetDevice) -> bool {
            core::ptr::eq(self, o)
        }
    }

    impl Eq for NetDevice {}

    impl core::fmt::Debug for NetDevice {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "{}", self.name())
        }
    }

    pub struct FeaturesLock<'a> {
        dev: &'a NetDevice,
        _rtnl: &'a Rtnl,
    }

    impl FeaturesLock<'_> {
        /// As the kernel's: refuses a bit that is the driver's or the
        /// user's, else writes `NETIF_F_HW_MACSEC` and, if it changed,
        /// sends `NETDEV_FEAT_CHANGE` (with the instance lock held, as
        /// `netdev_features_change` is called).
        pub fn set_hw_macsec(&self, on: bool) -> crate::error::Result<bool> {
            let d = self.dev;
            if d.has_macsec_ops() || d.hw_features().contains(Features::HW_MACSEC) {
                return Err(crate::error::code::EOPNOTSUPP);
            }
            let old = d.features.get();
            let bit = Features::HW_MACSEC.0;
            let new = if on { old | bit } else { old & !bit };
            d.features.set(new);
            if old == new {
                return Ok(false);
            }
            d.writes.set(d.writes.get() + 1);
            crate::host::record(crate::host::Rec::Feature {
                dev: d as *const NetDevice as usize,
                on: new & Features::HW_MACSEC.0 != 0,
            });
            let was = d.instance_locked.replace(d.ops_locked);
            notifier::call(NetdevEvent::FeatChange(d));
            d.instance_locked.set(was);
            Ok(true)
        }
    }
}

pub mod macsec {
    use super::device::NetDevice;
    use super::rtnl::{Rtnl, RtnlGuard};
    use crate::error::{code::*, Result};
    use crate::sync::aref::ARef;
    use crate::sync::Arc;
    use std::cell::{Cell, RefCell};

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Offload {
        Off,
        Phy,
        Mac,
    }

    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    pub enum Validate {
        Disabled,
        Check,
        Strict,
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Cipher {
        GcmAes128,
        GcmAes256,
        GcmAesXpn128,
        GcmAesXpn256,
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Mdo {
        DevOpen,
        DevStop,
        AddSecy,
        UpdSecy,
        DelSecy,
        AddRxsc,
        UpdRxsc,
        DelRxsc,
        AddRxsa,
        UpdRxsa,
        DelRxsa,
        AddTxsa,
        UpdTxsa,
        DelTxsa,
        UpdOffload,
    }

    /// `macsec.c`'s side of a SecY: its `struct macsec_secy` and the
    /// `offload` of its `struct macsec_dev`.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct Sw {
        pub offload: Offload,
        pub protect: bool,
        pub encrypt: bool,
        pub encoding_sa: u8,
        /// Published TX SAs: `None` absent, `Some(active)`.
        pub tx_sa: [Option<bool>; 4],
        pub sci: u64,
        pub cipher: Cipher,
        pub validate: Validate,
    }

    /// The private data of a MACsec netdev.
    pub struct SecyData {
        pub real: Cell<Option<&'static NetDevice>>,
        pub sw: RefCell<Sw>,
    }

    /// A SecY: its MACsec netdev, seen through its private data.
    #[repr(transparent)]
    pub struct SecY(NetDevice);

    impl SecY {
        pub fn of(dev: &NetDevice) -> &SecY {
            assert!(dev.is_macsec());
            // SAFETY: `SecY` is a transparent `NetDevice`.
            unsafe { &*(dev as *const NetDevice).cast::<SecY>() }
        }

        pub fn sw(&self) -> Sw {
            *self.0.macsec.as_ref().expect("a MACsec netdev").sw.borrow()
        }

        pub fn to_ref(&self, flags: crate::alloc::Flags) -> SecYRef {
            SecYRef {
                dev: self.0.hold(flags),
            }
        }

        pub fn netdev(&self) -> &NetDevice {
            &self.0
        }

        pub fn sci(&self) -> u64 {
            self.sw().sci
        }

        pub fn protect_frames(&self) -> bool {
            self.sw().protect
        }

        pub fn encrypt(&self) -> bool {
            self.sw().encrypt
        }

        pub fn encoding_sa(&self) -> u8 {
            self.sw().encoding_sa
        }

        pub fn tx_sa_active(&self, an: u8) -> bool {
            self.sw().tx_sa.get(an as usize).copied().flatten() == Some(true)
        }

        pub fn xpn(&self) -> bool {
            matches!(
                self.sw().cipher,
                Cipher::GcmAesXpn128 | Cipher::GcmAesXpn256
            )
        }

        pub fn cipher(&self) -> Cipher {
            self.sw().cipher
        }

        pub fn validate_frames(&self) -> Validate {
            self.sw().validate
        }
    }

    pub struct SecYRef {
        dev: super::device::NetDeviceRef,
    }

    impl SecYRef {
        pub fn netdev(&self) -> &NetDevice {
            &self.dev
        }

        pub fn get<'a>(&'a self, _rtnl: &'a Rtnl) -> &'a SecY {
            SecY::of(&self.dev)
        }
    }

    /// `struct macsec_context`, as the interposer reads it.
    pub struct Context<'a> {
        pub op: Mdo,
        pub secy: &'a SecY,
        pub lower: &'a NetDevice,
        pub offload: Offload,
        pub an: u8,
        pub tx_sa_active: bool,
    }

    impl<'a> Context<'a> {
        pub fn op(&self) -> Mdo {
            self.op
        }

        pub fn lower(&self) -> &'a NetDevice {
            self.lower
        }

        pub fn offload(&self) -> Offload {
            self.offload
        }

        pub fn secy(&self) -> &'a SecY {
            self.secy
        }

        pub fn assoc_num(&self) -> u8 {
            self.an
        }

        pub fn tx_sa_active(&self) -> bool {
            matches!(self.op, Mdo::AddTxsa | Mdo::UpdTxsa | Mdo::DelTxsa) && self.tx_sa_active
        }
    }

    pub trait Observer: Send + Sync {
        fn before(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>);
        fn after(&self, rtnl: &Rtnl, op: Mdo, ctx: &Context<'_>, ret: Result);
    }

    pub struct Installed {
        dev: Option<ARef<NetDevice>>,
    }

    pub struct Interposer;

    impl Interposer {
        pub fn install<T: Observer + 'static>(
            _rtnl: &Rtnl,
            dev: &NetDevice,
            observer: Arc<T>,
        ) -> Result<Installed> {
            if !dev.macsec_ops {
                return Err(EOPNOTSUPP);
            }
            if dev.observer.borrow().is_some() {
                return Err(EBUSY);
            }
            crate::alloc::charge()?;
            *dev.observer.borrow_mut() = Some(observer);
            Ok(Installed {
                dev: Some(dev.into()),
            })
        }
    }

    impl Installed {
        pub fn device(&self) -> usize {
            self.dev.as_deref().map_or(0, |d| d.as_raw() as usize)
        }

        /// Leaves the observer on, for [`restore_all`].
        pub fn leave(mut self) {
            if let Some(d) = self.dev.take() {
                LEFT.with(|l| l.borrow_mut().push(d));
            }
        }

        fn take_off(&mut self) {
            if let Some(d) = self.dev.take() {
                *d.observer.borrow_mut() = None;
            }
        }

        pub fn restore(mut self, _rtnl: &RtnlGuard) {
            self.take_off();
        }

        /// # Safety
        ///
        /// RTNL is held, and no operation runs through the table.
        pub unsafe fn restore_unlocked(mut self, _rtnl: &Rtnl) {
            self.take_off();
        }
    }

    thread_local! {
        /// The devices whose interposer was left on ([`Installed::leave`]).
        static LEFT: RefCell<Vec<ARef<NetDevice>>> = const { RefCell::new(Vec::new()) };
    }

    /// Takes every interposer left on off; returns how many.
    pub fn restore_all(_rtnl: &RtnlGuard) -> usize {
        LEFT.with(|l| {
            let left = std::mem::take(&mut *l.borrow_mut());
            for d in left.iter() {
                *d.observer.borrow_mut() = None;
            }
            left.len()
        })
    }

    impl Drop for Installed {
        fn drop(&mut self) {
            // The kernel's takes RTNL: never dropped with it held.
            assert!(
                self.dev.is_none() || !super::rtnl::Rtnl::held(),
                "interposer dropped with RTNL held"
            );
            self.take_off();
        }
    }
}

/// The MACsec core's offload notifier. The world calls the module's
/// observer itself, where `macsec.c` would (`World::mdo`): a registration
/// holds it and nothing more.
pub mod macsec_notifier {
    use super::macsec::Observer;
    use crate::error::Result;

    pub struct Registration<T: Observer>(T);

    impl<T: Observer> Registration<T> {
        pub fn new(observer: T) -> Result<Self> {
            Ok(Registration(observer))
        }
    }
}

pub mod notifier {
    use super::device::{FeaturesLock, NetDevice};
    use super::rtnl::Rtnl;
    use std::cell::RefCell;

    pub enum NetdevEvent<'a> {
        Register(&'a NetDevice),
        Unregister(&'a NetDevice),
        Up(&'a NetDevice),
        GoingDown(&'a NetDevice),
        Down(&'a NetDevice),
        Change(&'a NetDevice),
        FeatChange(&'a NetDevice),
        ChangeName(&'a NetDevice),
        ChangeUpper {
            dev: &'a NetDevice,
            upper: &'a NetDevice,
            linking: bool,
        },
        Other(u32, &'a NetDevice),
    }

    impl<'a> NetdevEvent<'a> {
        pub fn dev(&self) -> &'a NetDevice {
            match *self {
                NetdevEvent::Register(dev)
                | NetdevEvent::Unregister(dev)
                | NetdevEvent::Up(dev)
                | NetdevEvent::GoingDown(dev)
                | NetdevEvent::Down(dev)
                | NetdevEvent::Change(dev)
                | NetdevEvent::FeatChange(dev)
                | NetdevEvent::ChangeName(dev)
                | NetdevEvent::ChangeUpper { dev, .. }
                | NetdevEvent::Other(_, dev) => dev,
            }
        }

        pub fn cmd(&self) -> u32 {
            use crate::bindings::*;
            match *self {
                NetdevEvent::Register(_) => netdev_cmd_NETDEV_REGISTER,
                NetdevEvent::Unregister(_) => netdev_cmd_NETDEV_UNREGISTER,
                NetdevEvent::Up(_) => netdev_cmd_NETDEV_UP,
                NetdevEvent::GoingDown(_) => netdev_cmd_NETDEV_GOING_DOWN,
                NetdevEvent::Down(_) => netdev_cmd_NETDEV_DOWN,
                NetdevEvent::Change(_) => netdev_cmd_NETDEV_CHANGE,
                NetdevEvent::FeatChange(_) => netdev_cmd_NETDEV_FEAT_CHANGE,
                NetdevEvent::ChangeName(_) => netdev_cmd_NETDEV_CHANGENAME,
                NetdevEvent::ChangeUpper { .. } => netdev_cmd_NETDEV_CHANGEUPPER,
                NetdevEvent::Other(cmd, _) => cmd,
            }
        }

        /// As the kernel's: the events the core sends with the device's
        /// instance lock held give the right to write its features.
        ///
        /// # Safety
        ///
        /// `self` is the event the notifier was handed.
        pub unsafe fn features_lock<'b>(&'b self, rtnl: &'b Rtnl) -> Option<FeaturesLock<'b>> {
            let dev = self.dev();
            match self {
                // As the kernel's: a write there would announce
                // FEAT_CHANGE before later notifiers saw the REGISTER.
                NetdevEvent::Register(_) => None,
                NetdevEvent::Up(_)
                | NetdevEvent::GoingDown(_)
                | NetdevEvent::Down(_)
                | NetdevEvent::Change(_)
                | NetdevEvent::ChangeName(_) => {
                    // SAFETY: the world sends these with the lock held
                    // (`call` marks it).
                    Some(unsafe { dev.assume_features_locked(rtnl) })
                }
                // SAFETY: not `NETDEV_REGISTER`.
                NetdevEvent::Unregister(_)
                | NetdevEvent::FeatChange(_)
                | NetdevEvent::ChangeUpper { .. } => unsafe { dev.features_lock_rtnl(rtnl) },
                NetdevEvent::Other(..) => None,
            }
        }
    }

    pub trait NetdevNotifier: Send + Sync {
        fn event(&self, rtnl: &Rtnl, event: NetdevEvent<'_>);
    }

    type Chain = Vec<std::sync::Arc<dyn NetdevNotifier>>;

    thread_local! {
        static CHAIN: RefCell<Chain> = const { RefCell::new(Vec::new()) };
    }

    /// Registers `n` at the end of the chain (after `macsec.c`'s, which the
    /// world runs itself).
    pub fn register(n: std::sync::Arc<dyn NetdevNotifier>) {
        CHAIN.with(|c| c.borrow_mut().push(n));
    }

    pub fn unregister_all() {
        CHAIN.with(|c| c.borrow_mut().clear());
    }

    /// Sends `ev` down the chain, under RTNL, with the event device's
    /// instance lock held for the events the core sends so.
    pub fn call(ev: NetdevEvent<'_>) {
        assert!(Rtnl::held(), "event sent without RTNL");
        let chain: Chain = CHAIN.with(|c| c.borrow().clone());
        let dev = ev.dev();
        let locked = matches!(
            ev,
            NetdevEvent::Register(_)
                | NetdevEvent::Up(_)
                | NetdevEvent::GoingDown(_)
                | NetdevEvent::Down(_)
                | NetdevEvent::Change(_)
                | NetdevEvent::ChangeName(_)
        ) && dev.ops_locked;
        let was = dev.instance_locked.get();
        if locked {
            dev.instance_locked.set(true);
        }
        for n in chain {
            let ev = match &ev {
                NetdevEvent::Register(d) => NetdevEvent::Register(d),
                NetdevEvent::Unregister(d) => NetdevEvent::Unregister(d),
                NetdevEvent::Up(d) => NetdevEvent::Up(d),
                NetdevEvent::GoingDown(d) => NetdevEvent::GoingDown(d),
                NetdevEvent::Down(d) => NetdevEvent::Down(d),
                NetdevEvent::Change(d) => NetdevEvent::Change(d),
                NetdevEvent::FeatChange(d) => NetdevEvent::FeatChange(d),
                NetdevEvent::ChangeName(d) => NetdevEvent::ChangeName(d),
                NetdevEvent::ChangeUpper {
                    dev,
                    upper,
                    linking,
                } => NetdevEvent::ChangeUpper {
                    dev,
                    upper,
                    linking: *linking,
                },
                NetdevEvent::Other(c, d) => NetdevEvent::Other(*c, d),
            };
            // SAFETY: checked above.
            unsafe { Rtnl::assume_held(|rtnl| n.event(rtnl, ev)) };
        }
        dev.instance_locked.set(was);
    }
}

pub mod netlink {
    use super::namespace::Net;
    use crate::alloc::Flags;
    use crate::error::Result;

    pub const GENLMSG_DEFAULT_SIZE: usize = 8192;

    pub struct Family;

    impl Family {
        pub fn has_listeners_in(&self, _net: &Net, _group: u32) -> bool {
            true
        }

        /// `genl_set_err()`: the listeners in `net` miss a message.
        pub fn set_err_in(&self, net: &Net, group: u32, _err: crate::error::Error) {
            crate::host::record(crate::host::Rec::SetErr {
                netns: net.cookie(),
                host: group == crate::host::wire::MCGRP_MONITOR_ALL,
            });
        }
    }

    pub struct NetlinkSkBuff;

    impl NetlinkSkBuff {
        pub fn new(_size: usize, _f: Flags) -> Result<NetlinkSkBuff> {
            crate::alloc::charge()?;
            Ok(NetlinkSkBuff)
        }

        pub fn genlmsg_put(self, _portid: u32, _seq: u32, _f: &Family, cmd: u8) -> Result<GenlMsg> {
            Ok(GenlMsg { cmd, note: None })
        }
    }

    /// A message being built: the port object `fill` put in it.
    pub struct GenlMsg {
        pub cmd: u8,
        pub(crate) note: Option<crate::host::Note>,
    }

    // SAFETY: single-threaded host world.
    unsafe impl Send for GenlMsg {}

    impl GenlMsg {
        pub fn multicast_netns(
            self,
            _f: &Family,
            net: &Net,
            _portid: u32,
            group: u32,
            _fl: Flags,
        ) -> Result {
            let note = self.note.expect("a notification with an object");
            if group == crate::host::wire::MCGRP_MONITOR_ALL {
                // The host's view: into the initial namespace alone.
                assert!(note.host, "a port's view sent to monitor-all");
                assert_eq!(
                    net.cookie(),
                    Net::init_net().cookie(),
                    "monitor-all elsewhere"
                );
                crate::host::record(crate::host::Rec::HostNote(note));
                return Ok(());
            }
            assert!(!note.host, "the host's view sent to monitor");
            assert_eq!(
                note.netns,
                net.cookie(),
                "notification sent to another namespace"
            );
            crate::host::record(crate::host::Rec::Note(note));
            Ok(())
        }
    }
}
