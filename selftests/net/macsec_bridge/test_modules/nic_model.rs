// SPDX-License-Identifier: GPL-2.0

//! A model NIC for the test modules: an Ethernet device that offers MACsec
//! offload (`NETIF_F_HW_MACSEC` in `features`, `hw_features` and
//! `vlan_features`, as mlx5e does) through the `macsec_ops` it is given,
//! and drops whatever it is asked to send.
//! A test module includes it with `#[path = "nic_model.rs"] mod nic_model;`.

use crate::bindings;
use kernel::prelude::*;

/// A static C table.
pub(crate) struct Table<T>(pub(crate) T);

// SAFETY: the tables are never written.
unsafe impl<T> Sync for Table<T> {}

/// Defines `static $table: Table<macsec_ops>` with every operation of MAC
/// offload, each an `unsafe extern "C"` function that returns
/// `$handler(slot name, ctx)`; `$handler` is an `unsafe fn(&str, *mut
/// macsec_context) -> c_int` that may assume a valid MAC-offload context.
macro_rules! macsec_ops_table {
    ($table:ident, $handler:path) => {
        nic_model::macsec_ops_table!(
            @slots $table, $handler, [
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
    };
    (@slots $table:ident, $handler:path, [$($slot:ident),* $(,)?]) => {
        $(
            /// # Safety
            ///
            /// Called by the MACsec core (or a VLAN forwarding for it) with
            /// a valid MAC-offload context.
            unsafe extern "C" fn $slot(ctx: *mut $crate::bindings::macsec_context) -> c_int {
                // SAFETY: as documented above, which is what the handler
                // may assume.
                unsafe { $handler(stringify!($slot), ctx) }
            }
        )*
        pub(crate) static $table: nic_model::Table<$crate::bindings::macsec_ops> =
            nic_model::Table($crate::bindings::macsec_ops {
                $($slot: Some($slot),)*
                // SAFETY: the rest of the table is data, for which zero is
                // valid.
                ..unsafe { core::mem::zeroed() }
            });
    };
}
pub(crate) use macsec_ops_table;

/// Consumes a packet handed to `ndo_start_xmit`: the model has no wire.
///
/// # Safety
///
/// `skb` is a valid buffer that the caller owns and gives up.
pub(crate) unsafe fn consume(skb: *mut bindings::sk_buff) -> bindings::netdev_tx_t {
    // SAFETY: the skb is ours to free (see above).
    unsafe { bindings::dev_kfree_skb_any_reason(skb, bindings::skb_drop_reason_SKB_CONSUMED) };
    bindings::netdev_tx_NETDEV_TX_OK
}

/// # Safety
///
/// Called by the core with a valid `skb` that this function then owns.
unsafe extern "C" fn drop_xmit(
    skb: *mut bindings::sk_buff,
    _dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // SAFETY: as documented above.
    unsafe { consume(skb) }
}

/// The operations of a NIC that drops what it sends.
#[allow(dead_code)]
pub(crate) static NETDEV_OPS: Table<bindings::net_device_ops> = netdev_ops(drop_xmit, None);

/// An `ndo_fix_features`.
pub(crate) type FixFeatures = unsafe extern "C" fn(
    *mut bindings::net_device,
    bindings::netdev_features_t,
) -> bindings::netdev_features_t;

/// Operations with `xmit` as `ndo_start_xmit` and `fix` as
/// `ndo_fix_features`, and nothing else.
pub(crate) const fn netdev_ops(
    xmit: unsafe extern "C" fn(
        *mut bindings::sk_buff,
        *mut bindings::net_device,
    ) -> bindings::netdev_tx_t,
    fix: Option<FixFeatures>,
) -> Table<bindings::net_device_ops> {
    Table(bindings::net_device_ops {
        ndo_start_xmit: Some(xmit),
        ndo_fix_features: fix,
        // SAFETY: the rest is optional operations and data, for which zero
        // is valid.
        ..unsafe { core::mem::zeroed() }
    })
}

/// A registered model NIC, unregistered when dropped.
///
/// # Invariants
///
/// `raw` is a registered device, owned by this value.
pub(crate) struct Nic {
    raw: *mut bindings::net_device,
}

// SAFETY: the device is only registered and unregistered, which the core
// allows from any thread.
unsafe impl Send for Nic {}
// SAFETY: `&Nic` gives access to nothing.
unsafe impl Sync for Nic {}

impl Nic {
    /// Registers a NIC named from the `name` pattern (`%d` for a number),
    /// with the locally administered address `02:00:00:00:00:<last>`.
    pub(crate) fn new(
        name: &'static CStr,
        last: u8,
        netdev_ops: &'static Table<bindings::net_device_ops>,
        macsec_ops: &'static Table<bindings::macsec_ops>,
    ) -> Result<Nic> {
        // SAFETY: no PHY.
        unsafe { Nic::with_phy(name, last, netdev_ops, macsec_ops, core::ptr::null_mut()) }
    }

    /// [`Nic::new`], with `phy` (if not NULL) attached as the device's PHY
    /// before it is registered.
    ///
    /// # Safety
    ///
    /// `phy` is NULL, or a PHY that nothing else uses as attached to a
    /// device and that stays valid until the returned `Nic` is dropped.
    pub(crate) unsafe fn with_phy(
        name: &'static CStr,
        last: u8,
        netdev_ops: &'static Table<bindings::net_device_ops>,
        macsec_ops: &'static Table<bindings::macsec_ops>,
        phy: *mut bindings::phy_device,
    ) -> Result<Nic> {
        // SAFETY: `ether_setup` is a valid setup function; the name is a C
        // string.
        let raw = unsafe {
            bindings::alloc_netdev_mqs(0, name.as_char_ptr(), 0, Some(bindings::ether_setup), 1, 1)
        };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        let hw_macsec = bindings::NETIF_F_HW_MACSEC;
        let addr = [0x02, 0, 0, 0, 0, last];
        // SAFETY: `raw` is a fresh, unregistered device; `addr` is as long
        // as an Ethernet address.
        let ret = unsafe {
            (*raw).netdev_ops = &netdev_ops.0;
            (*raw).macsec_ops = &macsec_ops.0;
            (*raw).features |= hw_macsec;
            (*raw).hw_features |= hw_macsec;
            (*raw).vlan_features |= hw_macsec;
            if !phy.is_null() {
                // What `phy_attach_direct()` links, before anyone can see
                // the device. (Built for a kernel without the series,
                // the kernel's `phy_device` names the kernel's
                // `net_device`, which the model's bindings bind again.)
                (*raw).phydev = phy;
                (*phy).attached_dev = raw.cast();
            }
            bindings::dev_addr_mod(raw, 0, addr.as_ptr().cast(), addr.len());
            bindings::register_netdev(raw)
        };
        if ret != 0 {
            // SAFETY: the device was never registered.
            unsafe { bindings::free_netdev(raw) };
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just now.
        Ok(Nic { raw })
    }
}

impl Drop for Nic {
    fn drop(&mut self) {
        // SAFETY: the device is registered and ours (type invariant); after
        // unregistering, nothing else uses it.
        unsafe {
            bindings::unregister_netdev(self.raw);
            bindings::free_netdev(self.raw);
        }
    }
}
