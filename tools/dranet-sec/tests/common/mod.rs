// SPDX-License-Identifier: GPL-2.0
//! Shared test inventory: nodes of RDMA NICs with mixed protection.
#![allow(dead_code)]

use dranet_sec::attrs::NetDev;
use dranet_sec::slice::{self, Options};
use dranet_sec::state::PortState;
use k8s_openapi::api::resource::v1::ResourceSlice;

pub const DOMAIN: &str = "macsec.dranet-sec.io";

pub fn opts(node: &str) -> Options {
    Options {
        node: node.to_string(),
        driver: "dra.net".to_string(),
        domain: DOMAIN.to_string(),
        generation: 1,
        effect: Default::default(),
        wire: Default::default(),
        uplinks: Default::default(),
        include_veth: false,
    }
}

/// NIC `i` of a node: PCI function 0000:NN:00.0 on NUMA node i % 2.
pub fn nic(i: usize) -> NetDev {
    NetDev {
        ifname: format!("ens{}", 10 + i),
        mac: Some(format!("02:00:00:00:00:{i:02x}")),
        mtu: Some(9000),
        state: Some("up".into()),
        pci_address: Some(format!("0000:{:02x}:00.0", 0x10 + i)),
        pci_vendor: Some("0x15b3".into()),
        pci_device: Some("0x101d".into()),
        numa_node: Some((i % 2) as i64),
        pcie_root: Some(format!("pci0000:{:02x}", 0x10 + i)),
        sriov_total_vfs: Some(8),
        sriov_num_vfs: Some(0),
        rdma_devices: vec![format!("mlx5_{i}")],
        ..Default::default()
    }
}

pub fn port(dev: &NetDev, protection: &str, reason: &str) -> PortState {
    PortState {
        ifindex: 2,
        ifname: dev.ifname.clone(),
        rdma_dev: dev.rdma_devices.clone(),
        protection: protection.into(),
        reason: reason.into(),
        relation: Some("upper".into()),
        cipher: Some("gcm-aes-256".into()),
        // An observed, offloaded SecY (mlx5e's: metadata dst on receive).
        validate: protection.starts_with("offload-").then(|| "strict".into()),
        rx_plaintext: protection.starts_with("offload-").then_some(0),
        generation: 7,
        ..Default::default()
    }
}

/// A node of four netdevs: ens10 a port in `state` (protection, reason),
/// ens11 a port with encrypt off, ens12 an RDMA netdev the kernel does not
/// track, veth0 neither RDMA nor a port.
pub fn mixed_node(state: (&str, &str)) -> (Vec<NetDev>, Vec<PortState>) {
    let veth = NetDev {
        ifname: "veth0".into(),
        virtual_: true,
        ..Default::default()
    };
    let devs = vec![nic(0), nic(1), nic(2), veth];
    let ports = vec![
        port(&devs[0], state.0, state.1),
        port(&devs[1], "none", "encrypt-off"),
    ];
    (devs, ports)
}

/// `nodes` nodes of 8 NICs. Protected: NIC `p` of node `n` for each
/// `(n, p)` in `protected`; every other NIC has a SecY without an active
/// TX SA, except NIC 7, which the kernel does not track.
pub fn inventory(nodes: usize, protected: &[(usize, usize)]) -> Vec<ResourceSlice> {
    let mut out = Vec::new();
    for n in 0..nodes {
        let devs: Vec<NetDev> = (0..8).map(nic).collect();
        let ports: Vec<PortState> = devs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 7)
            .map(|(i, d)| {
                if protected.contains(&(n, i)) {
                    port(d, "offload-mac", "none")
                } else {
                    port(d, "none", "no-active-tx-sa")
                }
            })
            .collect();
        let o = opts(&format!("node-{n:03}"));
        let (devices, warnings) = slice::devices(&o, &devs, &ports).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        out.extend(slice::slices(&o, devices));
    }
    out
}
