// SPDX-License-Identifier: GPL-2.0

//! Where RoCE on an RDMA device's GIDs leaves: what the module reads of
//! the RDMA core (`kernel::rdma`) to decide which GIDs a SecY protects.
//!
//! Owns nothing; reads devices, their GID tables and the entries'
//! netdevs (under RCU), and a VLAN's real device.
//!
//! Layer 3 (kernel readers), the first of them. May use: layer 2
//! (`platform`).

use crate::net::device::NetDevice;
use crate::platform;
use crate::rdma::{Device, DriverId, GidAttr, GidType};
use kernel::sync::rcu;

/// What the module asks of an RDMA device.
pub(crate) trait DeviceExt {
    /// An identity usable as a map key while the device is alive.
    fn id(&self) -> usize;

    /// Whether RoCE over IPv6 on this device's GIDs may leave through
    /// another netdev than the GID's. RXE routes every packet itself
    /// (`rxe_find_route6()`), and a kernel without the series' RXE patch
    /// takes the GID's netdev as a mere preference unless the destination
    /// is link-local, loopback or multicast: a more specific route through
    /// another device (one router advertisement installs it) wins. IPv4
    /// routes leave through the GID's netdev alone. Hardware RoCE does not
    /// route per packet: its frames leave through the device's own port,
    /// and a route only picked the next hop's MAC address when an address
    /// handle was made.
    fn ipv6_may_stray(&self) -> bool;
}

impl DeviceExt for Device {
    fn id(&self) -> usize {
        self.as_raw() as usize
    }

    fn ipv6_may_stray(&self) -> bool {
        !platform::RXE_ROUTES_IPV6_STRICTLY && self.driver_id() == DriverId::RXE
    }
}

/// The device whose [`DeviceExt::id`] is `id`.
///
/// # Safety
///
/// `id` is the identity of a device that was added to the module's RDMA
/// client and whose `remove` has not returned, and stays so for `'a`.
pub(crate) unsafe fn device<'a>(id: usize) -> &'a Device {
    // SAFETY: the device is valid for `'a` (the caller's guarantee), as
    // `Device::from_raw` requires.
    unsafe { Device::from_raw(id as *mut _) }
}

/// What the module asks of a GID table entry.
pub(crate) trait GidExt {
    /// Whether the entry is a RoCE v2 GID.
    fn is_roce_v2(&self) -> bool;

    /// Whether RoCE on the entry is routed IPv6: a RoCE v2 GID whose
    /// address is neither IPv4-mapped (`rdma_gid_attr_network_type()`) nor
    /// link-local (`fe80::/10`, the default GID's). RoCE from a link-local
    /// GID to a routed destination is routed as loosely, and RDMA CM sends
    /// it when a program binds a link-local address; counting those GIDs
    /// is a limit of the claim on kernels without the RXE patch, which the
    /// documentation states.
    fn is_routed_ipv6(&self) -> bool;

    /// Whether the entry's netdev is `dev`: RoCE on this GID leaves
    /// through `dev`.
    fn is_on(&self, dev: &NetDevice) -> bool;

    /// Whether the entry's netdev sends only through `root`: it is `root`,
    /// or a VLAN whose real device (below every VLAN:
    /// `vlan_dev_real_dev()`) is `root` (a VLAN sends through its real
    /// device alone, which it keeps for life). Any other netdev (a bond, a
    /// team, a macvlan, a VLAN over a VLAN root) may send elsewhere. `None`
    /// for an entry being deleted, or one without a netdev, on which no
    /// RoCE leaves.
    fn leaves_through(&self, root: &NetDevice) -> Option<bool>;
}

impl GidExt for GidAttr {
    fn is_roce_v2(&self) -> bool {
        self.gid_type() == GidType::ROCE_UDP_ENCAP
    }

    fn is_routed_ipv6(&self) -> bool {
        let g = self.gid();
        let v4_mapped = g[..10] == [0; 10] && g[10..12] == [0xff; 2];
        let link_local = g[0] == 0xfe && g[1] & 0xc0 == 0x80;
        self.is_roce_v2() && !v4_mapped && !link_local
    }

    fn is_on(&self, dev: &NetDevice) -> bool {
        let rcu = rcu::read_lock();
        self.netdev(&rcu).is_some_and(|d| core::ptr::eq(d, dev))
    }

    fn leaves_through(&self, root: &NetDevice) -> Option<bool> {
        let rcu = rcu::read_lock();
        let dev = self.netdev(&rcu)?;
        if core::ptr::eq(dev, root) {
            return Some(true);
        }
        Some(dev.vlan_real_dev().is_some_and(|r| core::ptr::eq(r, root)))
    }
}
