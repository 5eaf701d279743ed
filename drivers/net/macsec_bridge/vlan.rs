// SPDX-License-Identifier: GPL-2.0

//! VLANs, as far as the module needs them: a VLAN's real device.
//!
//! Owns nothing; reads a device's flags and, for a VLAN, its real device.

use crate::bindings;

/// Whether `dev` is a VLAN, and if so its real device.
///
/// # Safety
///
/// `dev` must be valid.
#[cfg(CONFIG_VLAN_8021Q)]
pub(crate) unsafe fn vlan_real_dev(
    dev: *mut bindings::net_device,
) -> Option<*mut bindings::net_device> {
    // SAFETY: `dev` is valid (the caller's guarantee); a VLAN's real device
    // is set before it registers and never changes.
    unsafe { bindings::is_vlan_dev(dev).then(|| bindings::vlan_dev_real_dev(dev)) }
}

/// Without VLAN support there are no VLANs.
///
/// # Safety
///
/// None needed; the signature matches the VLAN-enabled variant.
#[cfg(not(CONFIG_VLAN_8021Q))]
pub(crate) unsafe fn vlan_real_dev(
    _dev: *mut bindings::net_device,
) -> Option<*mut bindings::net_device> {
    None
}
