// SPDX-License-Identifier: GPL-2.0
//! Netdevs and their RDMA, PCI, NUMA and SR-IOV facts, from sysfs (the
//! files DRANet and rdmamap read). `root` is `/sys`, or a fake tree in
//! tests.

use crate::attrs::NetDev;
use anyhow::{Context as _, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn read(p: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_int(p: impl AsRef<Path>) -> Option<i64> {
    read(p)?.parse().ok()
}

/// `dddd:bb:dd.f`
fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && s.chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10].contains(&i) || c.is_ascii_hexdigit())
}

/// RDMA device names per netdev, cheapest source first: a soft device (RXE,
/// siw) names its netdev in `parent`; a PCI device lists its function's
/// netdevs in `device/net/` (what DRANet's rdmamap reads). Only a device
/// with neither has its RoCE GID table read (`ports/N/gid_attrs/ndevs/*`):
/// that is one open and read per entry, 1024 per port on RXE, and a watch
/// that rescans on every notification cannot pay it for every device.
pub fn rdma_by_netdev(root: &Path) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(ibs) = fs::read_dir(root.join("class/infiniband")) else {
        return m;
    };
    let mut names: Vec<String> = ibs
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let entries = |p: PathBuf| fs::read_dir(p).into_iter().flatten().flatten();
    for ib in names {
        let dir = root.join("class/infiniband").join(&ib);
        let mut nets: Vec<String> = read(dir.join("parent")).into_iter().collect();
        if nets.is_empty() {
            nets.extend(
                entries(dir.join("device/net"))
                    .map(|n| n.file_name().to_string_lossy().into_owned()),
            );
        }
        if nets.is_empty() {
            for port in entries(dir.join("ports")) {
                nets.extend(
                    entries(port.path().join("gid_attrs/ndevs")).filter_map(|g| read(g.path())),
                );
            }
        }
        nets.sort();
        nets.dedup();
        for n in nets {
            m.entry(n).or_default().push(ib.clone());
        }
    }
    m
}

/// Every netdev but loopback, in this namespace's `class/net`.
pub fn netdevs(root: &Path) -> Result<Vec<NetDev>> {
    let rdma = rdma_by_netdev(root);
    let class = root.join("class/net");
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(&class)
        .with_context(|| format!("{}", class.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let ifname = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if ifname == "lo" || read(p.join("type")).as_deref() == Some("772") {
            continue;
        }
        let real = fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
        let virtual_ = real.components().any(|c| c.as_os_str() == "virtual");
        let dev = p.join("device");
        let pci = fs::canonicalize(&dev)
            .ok()
            .and_then(|d| d.file_name().map(|f| f.to_string_lossy().into_owned()))
            .filter(|a| is_pci_address(a));
        let pcie_root = pci.as_ref().and_then(|_| {
            fs::canonicalize(&dev).ok()?.components().find_map(|c| {
                let s = c.as_os_str().to_string_lossy();
                s.starts_with("pci").then(|| s.into_owned())
            })
        });
        out.push(NetDev {
            mac: read(p.join("address")),
            mtu: read_int(p.join("mtu")),
            state: read(p.join("operstate")),
            virtual_,
            numa_node: pci
                .as_ref()
                .and_then(|_| read_int(dev.join("numa_node")))
                .filter(|n| *n >= 0),
            pci_vendor: pci.as_ref().and_then(|_| read(dev.join("vendor"))),
            pci_device: pci.as_ref().and_then(|_| read(dev.join("device"))),
            sriov_total_vfs: read_int(dev.join("sriov_totalvfs")),
            sriov_num_vfs: read_int(dev.join("sriov_numvfs")),
            is_sriov_vf: dev.join("physfn").exists(),
            rdma_devices: rdma.get(&ifname).cloned().unwrap_or_default(),
            pci_address: pci,
            pcie_root,
            ifname,
        });
    }
    Ok(out)
}
