// SPDX-License-Identifier: GPL-2.0

//! A model MACsec-offloading NIC for the macsec_bridge selftests: `mtn0`,
//! whose `macsec_ops` succeed, unless its interface alias names one of
//! them: with `ip link set mtn0 alias fail:mdo_dev_stop`, say, that
//! operation fails with `EIO` until the alias changes. A driver's refusal
//! is how the tests reach macsec.c's failure paths, which netdevsim never
//! takes: some undo the change (`mdo_del_txsa`), others go on regardless
//! (`mdo_dev_stop`, `mdo_del_secy` on deletion).

use kernel::{bindings, prelude::*, sync::rcu};

#[path = "nic_model.rs"]
mod nic_model;

module! {
    type: TestNic,
    name: "macsec_test_nic",
    authors: ["macsec_bridge developers"],
    description: "Model MACsec-offloading NIC for the macsec_bridge selftests",
    license: "GPL",
}

/// Whether `dev`'s alias asks `op` to fail.
///
/// # Safety
///
/// `dev` is a valid device.
unsafe fn told_to_fail(dev: *mut bindings::net_device, op: &str) -> bool {
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
    alias.to_bytes().strip_prefix(b"fail:") == Some(op.as_bytes())
}

/// One operation: succeeds, or fails as the lower device's alias asks.
///
/// # Safety
///
/// `ctx` is a valid MAC-offload context.
unsafe fn mdo(op: &str, ctx: *mut bindings::macsec_context) -> c_int {
    // SAFETY: for MAC offload the context holds the SecY's lower device,
    // valid for the call.
    let lower = unsafe { (*ctx).__bindgen_anon_1.netdev };
    // SAFETY: as above.
    if unsafe { told_to_fail(lower, op) } {
        pr_info!("{}: failing as told\n", op);
        return EIO.to_errno();
    }
    0
}

nic_model::macsec_ops_table!(
    MACSEC_OPS,
    mdo,
    [
        mdo_dev_open,
        mdo_dev_stop,
        mdo_add_secy,
        mdo_upd_secy,
        mdo_del_secy,
        mdo_add_rxsc,
        mdo_upd_rxsc,
        mdo_del_rxsc,
        mdo_add_rxsa,
        mdo_upd_rxsa,
        mdo_del_rxsa,
        mdo_add_txsa,
        mdo_upd_txsa,
        mdo_del_txsa,
        mdo_get_dev_stats,
        mdo_get_tx_sc_stats,
        mdo_get_tx_sa_stats,
        mdo_get_rx_sc_stats,
        mdo_get_rx_sa_stats,
    ]
);

struct TestNic {
    _nic: nic_model::Nic,
}

impl kernel::Module for TestNic {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(TestNic {
            _nic: nic_model::Nic::new(c"mtn%d", 2, &MACSEC_OPS)?,
        })
    }
}
