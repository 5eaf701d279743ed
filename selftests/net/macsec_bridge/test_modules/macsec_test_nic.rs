// SPDX-License-Identifier: GPL-2.0

//! A model MACsec-offloading NIC for the macsec_bridge selftests: `mtn0`,
//! whose `macsec_ops` succeed, unless its interface alias names one of
//! them: with `ip link set mtn0 alias fail:mdo_dev_stop`, say, that
//! operation fails with `EIO` until the alias changes. A driver's refusal
//! is how the tests reach macsec.c's failure paths, which netdevsim never
//! takes: some undo the change (`mdo_upd_txsa`), others go on regardless
//! (`mdo_dev_stop`, `mdo_del_secy` on deletion).
//!
//! Every operation is recorded in the trace buffer as it starts and as it
//! returns (`macsec_test_nic: mdo_upd_txsa enter`, `... exit 0`). With the
//! alias `hold:mdo_upd_secy`, say, that operation sleeps six seconds first
//! (`... holding`), holding RTNL as every operation does.
//!
//! Its TX side is mlx5e's (`en_accel/macsec.c`): a TX SA is encrypted
//! with once the driver installs its steering rule, which it does for the
//! encoding SA only, when it is active (and, when added, the SecY
//! operational). `mdo_upd_secy` deletes the rule of every TX SA, then
//! installs the encoding SA's again; told to fail, it fails between, as
//! mlx5e does when re-creating the rule fails, and mtn0 encrypts nothing
//! from then on. Told to fail, `mdo_upd_txsa` writes its record of the
//! SA's `active` first, as mlx5e does, and fails without touching its
//! rule: an update of the SecY then rebuilds the rule from that record.
//! Every change of the installed rule is recorded too (`macsec_test_nic:
//! tx-rule sa0`, `... tx-rule none`). Every other operation told to fail
//! fails before changing anything.
//!
//! With the alias `switchdev`, mtn0 drops `NETIF_F_HW_MACSEC` whenever its
//! features are computed again (`ethtool -K mtn0 gro off`, say), as
//! mlx5e's `fix_features` does in switchdev mode, the eswitch mode of a
//! DPU; `ethtool -K mtn0 macsec-hw-offload off` clears it too (mlx5e lists
//! it in `hw_features`). From then on macsec.c fails every operation of a
//! SecY offloaded to mtn0 before reaching it.
//!
//! With the alias `rx-loop`, mtn0 receives every frame it sends, as if its
//! wire looped back: what a SecY on mtn0 (or on a VLAN over it) sends, or a
//! packet socket on mtn0, reaches the MACsec core's receive path. Without
//! it mtn0 receives nothing.
//!
//! With the alias `oom-after:mdo_add_secy`, say, the next allocation of
//! the task that called that operation fails once the operation returned
//! successfully (through the task's fail-nth knob): what macsec.c does
//! after the driver took a SecY meets an out-of-memory. The test sets
//! failslab's `ignore-gfp-wait` off first.
//!
//! With the alias `pn-wrap`, each frame mtn0 sends exhausts the packet
//! numbers of the encoding SA of the SecY offloaded to it: the module calls
//! `macsec_pn_wrapped()`, as aquantia and cn10k do from their interrupt
//! paths, which clears the SA's `active` flag with no operation and no
//! event.
//!
//! `mtp0` is a second model NIC, mtn0's twin with a PHY that offloads
//! MACsec too, as mscc's VSC8584 does (here beside a MAC that can):
//! `ip link add link mtp0 macsec0 type macsec offload phy`. The PHY's
//! operations succeed and are recorded (`macsec_test_nic: phy mdo_add_secy
//! enter`, `... exit 0`), unless mtp0's alias names one
//! (`fail:phy:mdo_add_secy`): it then fails with `EIO` and changes
//! nothing. The PHY models no TX side. It is a bare `phy_device`: no
//! driver, no MDIO bus, not known to phylib; the MACsec core reads its
//! `macsec_ops` and takes its `lock` around each operation, and what else
//! looks at a device's PHY checks its driver first, but for one thing:
//! the PHY is not in mtp0's PHY topology (`link_topo`), which `ethtool
//! --show-phys mtp0` dereferences, so that command oopses the guest. The
//! tests never ask it. The two NICs
//! share the driver's record of TX SAs and rules: a test offloads one
//! SecY to their MACs at a time.

use core::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use kernel::bindings;
use kernel::{prelude::*, str::CString, sync::rcu};

#[path = "nic_model.rs"]
mod nic_model;

module! {
    type: TestNic,
    name: "macsec_test_nic",
    authors: ["macsec_bridge developers"],
    description: "Model MACsec-offloading NIC for the macsec_bridge selftests",
    license: "GPL",
}

/// The SecY offloaded to a model NIC's MAC, from a TX SA operation that succeeded until
/// `mdo_del_secy`, whatever that returns (macsec.c deletes the SecY
/// anyway). Only TX SA operations set it: they reach only a SecY that is
/// fully created, and none comes after `mdo_del_secy` (`mdo_dev_stop`
/// does, when an up SecY is deleted). The SecY lives in its MACsec netdev's
/// private data, freed only after the netdev is unregistered and an RCU
/// grace period has passed, after `mdo_del_secy`.
static SECY: AtomicPtr<bindings::macsec_secy> = AtomicPtr::new(core::ptr::null_mut());

/// The driver's record of the TX SAs of the SecY offloaded to a model NIC's MAC, as
/// mlx5e's `mlx5e_macsec_device` keeps it: bit `an` if SA `an` exists, bit
/// `4 + an` if it is active. Only the operations touch it, and macsec.c
/// calls every one under RTNL: relaxed atomics suffice.
static TX_SAS: AtomicU8 = AtomicU8::new(0);

/// The association number of the TX SA whose steering rule is installed,
/// or [`NO_RULE`]. Written by the operations only (under RTNL).
static TX_RULE: AtomicU8 = AtomicU8::new(NO_RULE);

const NO_RULE: u8 = u8::MAX;

/// Installs the rule of SA `an` (or none, with [`NO_RULE`]), recording a
/// change in the trace buffer.
fn set_rule(an: u8) {
    if TX_RULE.swap(an, Ordering::Relaxed) == an {
        return;
    }
    if an == NO_RULE {
        record(fmt!("tx-rule none"));
    } else {
        record(fmt!("tx-rule sa{}", an));
    }
}

/// Records SA `an` in the driver's record as present (with `active`) or
/// absent; returns whether it was active before.
fn set_sa(an: u8, present: Option<bool>) -> bool {
    // macsec.c accepts association numbers 0 to 3 only.
    if an >= 4 {
        return false;
    }
    let (exists, active) = (1u8 << an, 1u8 << (4 + an));
    let was = TX_SAS.load(Ordering::Relaxed);
    let now = match present {
        None => was & !(exists | active),
        Some(true) => was | exists | active,
        Some(false) => (was | exists) & !active,
    };
    TX_SAS.store(now, Ordering::Relaxed);
    was & active != 0
}

/// The TX side of an operation that succeeds, as mlx5e does it.
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context for operation `op`.
unsafe fn tx_side(op: &str, ctx: *mut bindings::macsec_context) {
    // SAFETY: every operation gets the SecY, valid for the call; macsec.c
    // writes `encoding_sa` only under RTNL, which the call holds.
    let (secy, enc) = unsafe { ((*ctx).secy, (*(*ctx).secy).tx_sc.encoding_sa) };
    // The SA an SA operation names, and whether it is active.
    // SAFETY: called for the TX SA operations only (the caller's
    // guarantee covers the context).
    let sa = || unsafe { tx_sa_of(ctx) };
    match op {
        "mdo_add_secy" | "mdo_del_secy" => {
            TX_SAS.store(0, Ordering::Relaxed);
            set_rule(NO_RULE);
        }
        // mlx5e_macsec_add_txsa(): the rule only for the active encoding
        // SA of an operational SecY.
        "mdo_add_txsa" => {
            let (an, active) = sa();
            set_sa(an, Some(active));
            // SAFETY: the SecY is valid for the call; `operational` is
            // also cleared by the datapath on PN exhaustion: read once.
            let operational = unsafe { core::ptr::read_volatile(&raw const (*secy).operational) };
            if operational && an == enc && active {
                set_rule(an);
            }
        }
        // mlx5e_macsec_upd_txsa(): only a change of `active` of the
        // encoding SA touches a rule.
        "mdo_upd_txsa" => {
            let (an, active) = sa();
            if set_sa(an, Some(active)) != active && an == enc {
                set_rule(if active { an } else { NO_RULE });
            }
        }
        "mdo_del_txsa" => {
            let (an, _) = sa();
            set_sa(an, None);
            if TX_RULE.load(Ordering::Relaxed) == an {
                set_rule(NO_RULE);
            }
        }
        // mlx5e_macsec_upd_secy(), its second half: the encoding SA's rule
        // again, if the driver holds that SA active.
        "mdo_upd_secy" => {
            if enc < 4 && TX_SAS.load(Ordering::Relaxed) & (1 << (4 + enc)) != 0 {
                set_rule(enc);
            }
        }
        _ => {}
    }
}

/// The association number a TX SA operation names, and whether its SA is
/// active.
///
/// # Safety
///
/// `ctx` is a valid context of a TX SA operation (`mdo_*_txsa`), whose
/// `sa.tx_sa` the MACsec core sets to the SA, valid for the call.
unsafe fn tx_sa_of(ctx: *mut bindings::macsec_context) -> (u8, bool) {
    // SAFETY: as documented above; `active` is also cleared by the
    // datapath on PN exhaustion (`macsec_pn_wrapped()`): read once.
    unsafe {
        let sa = (*ctx).sa.__bindgen_anon_1.tx_sa;
        let active = !sa.is_null() && core::ptr::read_volatile(&raw const (*sa).active);
        ((*ctx).sa.assoc_num, active)
    }
}

/// Whether `dev` has an alias that `test` accepts.
///
/// # Safety
///
/// `dev` is a valid device.
unsafe fn alias_matches(dev: *mut bindings::net_device, test: impl FnOnce(&[u8]) -> bool) -> bool {
    // The alias is replaced under its own mutex, not RTNL, and freed after
    // a grace period.
    let _rcu = rcu::read_lock();
    // SAFETY: `dev` is valid; the pointer is read once, as
    // `rcu_dereference()` does.
    let alias = unsafe { core::ptr::read_volatile(&raw const (*dev).ifalias) };
    if alias.is_null() {
        return false;
    }
    // SAFETY: a published alias is a NUL-terminated string, valid while
    // the RCU read lock is held.
    let alias = unsafe { CStr::from_char_ptr((*alias).ifalias.as_ptr()) };
    test(alias.to_bytes())
}

/// How long an operation the alias names (`hold:mdo_upd_secy`) sleeps
/// before it goes on, holding RTNL.
const HOLD_MS: i64 = 6000;

/// Whether `dev`'s alias is the directive `what` for operation `op`
/// (`fail:` and `mdo_add_txsa`: `fail:mdo_add_txsa`).
///
/// # Safety
///
/// `dev` is a valid device.
unsafe fn alias_asks(dev: *mut bindings::net_device, what: &[u8], op: &str) -> bool {
    // SAFETY: the caller's guarantee.
    unsafe { alias_matches(dev, |a| a.strip_prefix(what) == Some(op.as_bytes())) }
}

/// Writes `macsec_test_nic: <args>` into the trace buffer, where the
/// macsec_bridge module's events land too: the selftests read from there
/// in which order the driver and the module acted. Lost if the line cannot
/// be formatted (no memory).
fn record(args: core::fmt::Arguments<'_>) {
    if let Ok(line) = CString::try_from_fmt(fmt!("macsec_test_nic: {}", args)) {
        // SAFETY: `line` is a NUL-terminated string that outlives the call,
        // which copies it; any address will do as the caller's.
        unsafe { bindings::__trace_puts(record as usize, line.as_char_ptr()) };
    }
}

/// One operation, recorded as it starts and as it returns (see `record`).
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context.
unsafe fn mdo(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    record(fmt!("{} enter", op));
    // SAFETY: the caller's guarantee.
    let ret = unsafe { offload(op, ctx) };
    record(fmt!("{} exit {}", op, ret));
    // SAFETY: for MAC offload the context holds the SecY's lower device,
    // valid for the call.
    let lower = unsafe { (*ctx).__bindgen_anon_1.netdev };
    // SAFETY: `lower` is valid for the call (above).
    if ret == 0 && unsafe { alias_asks(lower, b"oom-after:", op) } {
        // Last: the record above allocates.
        fail_next_allocation();
    }
    ret
}

/// Arms the calling task's fail-nth knob (`/proc/self/fail-nth`, with
/// CONFIG_FAULT_INJECTION): the next allocation the task makes fails, as
/// far as failslab fails it (`ignore-gfp-wait` must be off for sleeping
/// ones). Whatever the MACsec core does after the operation meets an
/// out-of-memory there: for `oom-after:mdo_add_secy` on a new SecY, the
/// allocation of the receive handler's data in `macsec_newlink()`. A
/// kernel without fault injection (Debian's) has no such knob: nothing
/// fails.
fn fail_next_allocation() {
    #[cfg(CONFIG_FAULT_INJECTION)]
    {
        let task = kernel::task::Task::current_raw();
        // SAFETY: `task` is the current task, alive for the call. Its
        // `fail_nth` is written with WRITE_ONCE() (the fault injection
        // code, and procfs for the task or a tracer), and read by the task
        // itself: a volatile store is the same.
        unsafe { core::ptr::write_volatile(&raw mut (*task).fail_nth, 1) };
    }
}

/// One operation: succeeds, or fails as the lower device's alias asks.
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context.
unsafe fn offload(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    if op == "mdo_del_secy" {
        SECY.store(core::ptr::null_mut(), Ordering::Release);
    }
    // SAFETY: for MAC offload the context holds the SecY's lower device,
    // valid for the call.
    let lower = unsafe { (*ctx).__bindgen_anon_1.netdev };
    // SAFETY: as above.
    if unsafe { alias_asks(lower, b"hold:", op) } {
        // Every operation runs under RTNL: the readers' test holds it so.
        record(fmt!("{} holding", op));
        kernel::time::delay::fsleep(kernel::time::Delta::from_millis(HOLD_MS));
    }
    // SAFETY: as above.
    let fail = unsafe { alias_asks(lower, b"fail:", op) };
    if op == "mdo_upd_secy" {
        // mlx5e_macsec_upd_secy(), its first half: every TX rule goes.
        set_rule(NO_RULE);
    }
    if fail {
        if op == "mdo_upd_txsa" {
            // mlx5e_macsec_upd_txsa(): the record is written before the
            // rule is made or removed, which is where it fails.
            // SAFETY: the context names the SA for a TX SA operation.
            let (an, active) = unsafe { tx_sa_of(ctx) };
            set_sa(an, Some(active));
        }
        pr_info!("{}: failing as told\n", op);
        return EIO.to_errno();
    }
    // SAFETY: the caller's guarantee.
    unsafe { tx_side(op, ctx) };
    if op == "mdo_add_txsa" || op == "mdo_upd_txsa" {
        // SAFETY: every operation gets the SecY, valid for the call.
        SECY.store(unsafe { (*ctx).secy }, Ordering::Release);
    }
    0
}

/// Sends nothing; with the alias `pn-wrap`, first exhausts the encoding SA.
/// With the alias `rx-loop`, receives what it sends instead, as a NIC
/// whose wire loops back: the receive path of whatever sits on mtn0.
///
/// # Safety
///
/// Called by the core with a valid `skb` that this function then owns, for
/// mtn0 or mtp0, inside an RCU-bh read-side section (`dev_queue_xmit()`).
unsafe extern "C" fn xmit(
    skb: *mut bindings::sk_buff,
    dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // SAFETY: `dev` is valid for the call.
    if unsafe { alias_matches(dev, |a| a == b"rx-loop") } {
        // SAFETY: the skb is ours to give up, and `dev` is valid and
        // running (it transmits); `dev_forward_skb()` consumes the skb
        // whatever it returns, and queues it for receive on `dev` from
        // here, with bottom halves disabled (`dev_queue_xmit()`).
        unsafe { bindings::dev_forward_skb(dev, skb) };
        return bindings::netdev_tx_NETDEV_TX_OK;
    }
    // SAFETY: `dev` is valid for the call.
    let wrap = unsafe { alias_matches(dev, |a| a == b"pn-wrap") };
    let secy = SECY.load(Ordering::Acquire);
    if wrap && !secy.is_null() {
        // SAFETY: a published SecY stays allocated until a grace period
        // after its `mdo_del_secy` (see `SECY`), and this runs in an RCU
        // read-side section; its TX SAs are freed after a grace period too
        // (`queue_rcu_work`), so the pointer read once here stays valid.
        unsafe {
            let an = usize::from(core::ptr::read_volatile(
                &raw const (*secy).tx_sc.encoding_sa,
            ));
            let slots = &raw const (*secy).tx_sc.sa;
            if an < array_len(slots) {
                let sa =
                    core::ptr::read_volatile(slots.cast::<*mut bindings::macsec_tx_sa>().add(an));
                if !sa.is_null() {
                    bindings::macsec_pn_wrapped(secy, sa);
                }
            }
        }
    }
    // SAFETY: the skb is ours.
    unsafe { nic_model::consume(skb) }
}

/// The length of the array `_a` points to, read from its type.
fn array_len<T, const N: usize>(_a: *const [T; N]) -> usize {
    N
}

/// mlx5e's `fix_features` in switchdev mode, when the alias says
/// `switchdev`: no MACsec offload.
///
/// # Safety
///
/// Called by the core with `dev`, mtn0 or mtp0, valid (`netdev_update_features()`,
/// under RTNL).
unsafe extern "C" fn fix_features(
    dev: *mut bindings::net_device,
    features: bindings::netdev_features_t,
) -> bindings::netdev_features_t {
    // SAFETY: `dev` is valid for the call.
    if unsafe { alias_matches(dev, |a| a == b"switchdev") } {
        features & !bindings::NETIF_F_HW_MACSEC
    } else {
        features
    }
}

static NETDEV_OPS: nic_model::Table<bindings::net_device_ops> =
    nic_model::netdev_ops(xmit, Some(fix_features));

nic_model::macsec_ops_table!(MACSEC_OPS, mdo);

/// The operations of mtp0's PHY.
mod phy_ops {
    use super::{nic_model, phy_mdo};
    use kernel::prelude::*;
    nic_model::macsec_ops_table!(PHY_MACSEC_OPS, phy_mdo);
}

/// One operation of mtp0's PHY, recorded as it starts and as it returns:
/// succeeds, or fails as mtp0's alias asks (`fail:phy:<op>`).
///
/// # Safety
///
/// `ctx` is a valid context whose offload is PHY offload (the macro's
/// "MAC-offload" is this table's PHY offload), for mtp0's PHY.
unsafe fn phy_mdo(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    record(fmt!("phy {} enter", op));
    // SAFETY: for PHY offload the context holds the PHY, mtp0's, whose
    // `attached_dev` is mtp0 from before mtp0 was registered until the
    // module is gone (`ModelPhy`).
    let dev = unsafe { (*(*ctx).__bindgen_anon_1.phydev).attached_dev }.cast();
    // SAFETY: `dev` is mtp0, valid while a SecY is offloaded to its PHY.
    let fail = unsafe { alias_asks(dev, b"fail:phy:", op) };
    let ret = if fail {
        pr_info!("phy {}: failing as told\n", op);
        EIO.to_errno()
    } else {
        0
    };
    record(fmt!("phy {} exit {}", op, ret));
    ret
}

/// mtp0's PHY: a zeroed `phy_device` with the model's `macsec_ops` and an
/// initialised `lock`, which is all the MACsec core touches.
///
/// # Invariants
///
/// `0` is a valid allocation of a `phy_device`, owned by this value.
struct ModelPhy(*mut bindings::phy_device);

// SAFETY: the PHY is only read by the MACsec core, under RTNL and its own
// lock, from any thread.
unsafe impl Send for ModelPhy {}
// SAFETY: `&ModelPhy` gives access to nothing.
unsafe impl Sync for ModelPhy {}

impl ModelPhy {
    fn new() -> Result<ModelPhy> {
        let b = KBox::<bindings::phy_device>::new_uninit(
            GFP_KERNEL | kernel::alloc::flags::__GFP_ZERO,
        )?;
        let phy = KBox::into_raw(b).cast::<bindings::phy_device>();
        // SAFETY: `phy` is a fresh, zeroed allocation of a `phy_device`,
        // for which zero is valid, and nothing else has it yet. The lock
        // class is static.
        unsafe {
            bindings::__mutex_init(
                &raw mut (*phy).lock,
                c"macsec_test_nic phy".as_char_ptr(),
                kernel::static_lock_class!().as_ptr(),
            );
            // The kernel's `macsec_ops` where it binds net/macsec.h, or
            // (see `nic_model::Nic::with_phy`) an opaque one.
            (*phy).macsec_ops = (&raw const phy_ops::PHY_MACSEC_OPS.0).cast();
        }
        // INVARIANT: allocated above, ours.
        Ok(ModelPhy(phy))
    }
}

impl Drop for ModelPhy {
    fn drop(&mut self) {
        // SAFETY: the allocation is ours (type invariant); the device it
        // was attached to is gone (`TestNic` drops its NIC first).
        drop(unsafe {
            KBox::from_raw(
                self.0
                    .cast::<core::mem::MaybeUninit<bindings::phy_device>>(),
            )
        });
    }
}

struct TestNic {
    // Dropped in this order: mtn0, mtp0 (its SecYs deleted as it goes,
    // through its PHY for PHY offload), then mtp0's PHY.
    _nic: nic_model::Nic,
    _phy_nic: nic_model::Nic,
    _phy: ModelPhy,
}

impl kernel::Module for TestNic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let nic = nic_model::Nic::new(c"mtn%d", 2, &NETDEV_OPS, &MACSEC_OPS)?;
        let phy = ModelPhy::new()?;
        // SAFETY: `phy` is attached to no device, and lives as long as the
        // NIC (see `TestNic`).
        let phy_nic =
            unsafe { nic_model::Nic::with_phy(c"mtp%d", 3, &NETDEV_OPS, &MACSEC_OPS, phy.0)? };
        Ok(TestNic {
            _nic: nic,
            _phy_nic: phy_nic,
            _phy: phy,
        })
    }
}
