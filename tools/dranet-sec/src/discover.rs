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
pub fn is_pci_address(s: &str) -> bool {
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

/// Netdev `ifname` of this namespace's `class/net`, without its RDMA
/// devices (see [`rdma_by_netdev`]); `None` for loopback (by its name or
/// its type, `ARPHRD_LOOPBACK`), or a name that is not (or no longer)
/// there.
pub fn netdev(root: &Path, ifname: &str) -> Option<NetDev> {
    if ifname == "lo" || ifname.is_empty() || ifname.contains('/') {
        return None;
    }
    let p = root.join("class/net").join(ifname);
    if !p.exists() || read(p.join("type")).as_deref() == Some("772") {
        return None;
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
    Some(NetDev {
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
        rdma_devices: Vec::new(),
        pci_address: pci,
        pcie_root,
        ifname: ifname.to_string(),
        // sysfs does not say it: rtnetlink does (`rtnl::set_kinds`).
        kind: None,
    })
}

/// The PCI function of RDMA device `rdma` (`class/infiniband/RDMA/device`),
/// as DRANet finds an RDMA device's. In shared RDMA namespace mode the
/// host sees every RDMA device there, wherever its netdev went; in
/// exclusive mode not one moved into a pod (`ib_class` is per namespace
/// then).
pub fn pci_of_rdma(root: &Path, rdma: &str) -> Option<String> {
    if rdma.is_empty() || rdma.contains('/') || rdma.starts_with('.') {
        return None;
    }
    fs::canonicalize(root.join("class/infiniband").join(rdma).join("device"))
        .ok()?
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .filter(|a| is_pci_address(a))
}

/// The netdev of PCI function `addr` under `root`, by the function's own
/// `net/` directory (`bus/pci/devices/ADDR/net/IFNAME`): the first by
/// name, as DRANet merges one netdev into the function.
pub fn netdev_of_pci(root: &Path, addr: &str) -> Option<NetDev> {
    if !is_pci_address(addr) {
        return None;
    }
    let mut names: Vec<String> = fs::read_dir(root.join("bus/pci/devices").join(addr).join("net"))
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.iter().find_map(|n| netdev(root, n))
}

/// The netdev DRANet means by `name` (an interface name, or its device
/// name: `pci-…`, `net-…`), else by `pci_address`, else by `mac` (empty:
/// not given). A name or PCI address reads that one netdev; only a MAC
/// alone reads every netdev's address (not the rest of its files). The
/// name comes first: a bond, its slaves and VLANs share one MAC.
pub fn find(root: &Path, name: &str, pci_address: &str, mac: &str) -> Result<Option<NetDev>> {
    if !name.is_empty() {
        let found = match crate::slice::named(name) {
            crate::slice::Named::Pci(a) => netdev_of_pci(root, &a),
            crate::slice::Named::Interface(i) => netdev(root, &i),
        };
        if found.is_some() {
            return Ok(found);
        }
        // A name that is an interface's own even though it reads as a
        // device name (`net-abc`, say).
        if let Some(d) = netdev(root, name) {
            return Ok(Some(d));
        }
    }
    if !pci_address.is_empty() {
        if let Some(d) = netdev_of_pci(root, pci_address) {
            return Ok(Some(d));
        }
    }
    if mac.is_empty() {
        return Ok(None);
    }
    let class = root.join("class/net");
    Ok(names(root)?
        .iter()
        .filter(|n| {
            read(class.join(n).join("address")).is_some_and(|a| a.eq_ignore_ascii_case(mac))
        })
        .find_map(|n| netdev(root, n)))
}

/// The interface names in this namespace's `class/net`, sorted.
fn names(root: &Path) -> Result<Vec<String>> {
    let class = root.join("class/net");
    let mut out: Vec<String> = fs::read_dir(&class)
        .with_context(|| format!("{}", class.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    Ok(out)
}

/// Every netdev but loopback, in this namespace's `class/net`.
pub fn netdevs(root: &Path) -> Result<Vec<NetDev>> {
    let rdma = rdma_by_netdev(root);
    Ok(names(root)?
        .iter()
        .filter_map(|n| netdev(root, n))
        .map(|mut d| {
            d.rdma_devices = rdma.get(&d.ifname).cloned().unwrap_or_default();
            d
        })
        .collect())
}

/// The netdevs of `class/net`, kept up to date one device at a time: a
/// watch re-reads the devices a link message or a port notification
/// names, and all of them only when it may have missed a message. A full
/// read is about fifteen files per netdev: with thousands of container
/// netdevs, reading them all on every change is what a watch would spend
/// its time on.
pub struct Cache {
    root: PathBuf,
    /// By interface name, without RDMA devices.
    devs: BTreeMap<String, NetDev>,
    /// The name each ifindex had when last read.
    names: BTreeMap<u32, String>,
    rdma: BTreeMap<String, Vec<String>>,
}

impl Cache {
    /// Reads every netdev under `root`.
    pub fn new(root: &Path) -> Result<Cache> {
        let mut c = Cache {
            root: root.to_path_buf(),
            devs: BTreeMap::new(),
            names: BTreeMap::new(),
            rdma: BTreeMap::new(),
        };
        c.rescan()?;
        Ok(c)
    }

    /// Reads everything again.
    pub fn rescan(&mut self) -> Result<()> {
        self.devs.clear();
        self.names.clear();
        for n in names(&self.root)? {
            self.read_one(None, &n);
        }
        self.refresh_rdma();
        Ok(())
    }

    fn read_one(&mut self, index: Option<u32>, name: &str) {
        let index = index.or_else(|| {
            read_int(self.root.join("class/net").join(name).join("ifindex"))
                .and_then(|i| u32::try_from(i).ok())
        });
        match netdev(&self.root, name) {
            Some(d) => {
                self.devs.insert(name.to_string(), d);
                if let Some(i) = index {
                    self.names.insert(i, name.to_string());
                }
            }
            None => {
                self.devs.remove(name);
            }
        }
    }

    /// Netdev `index` is now called `name` (a new device, a rename, or any
    /// change to it): forgets its old name and reads it again.
    pub fn changed(&mut self, index: u32, name: &str) {
        if let Some(old) = self.names.remove(&index) {
            if old != name {
                self.devs.remove(&old);
            }
        }
        self.read_one(Some(index), name);
    }

    /// Netdev `index` is gone from this namespace.
    pub fn gone(&mut self, index: u32) {
        if let Some(old) = self.names.remove(&index) {
            self.devs.remove(&old);
        }
    }

    /// Reads netdev `name` again (a port notification names it).
    pub fn reread(&mut self, name: &str) {
        self.read_one(None, name);
    }

    /// Reads the RDMA devices of every netdev again: a few files per RDMA
    /// device.
    pub fn refresh_rdma(&mut self) {
        self.rdma = rdma_by_netdev(&self.root);
    }

    /// The netdevs, by interface name, with their RDMA devices.
    pub fn netdevs(&self) -> Vec<NetDev> {
        self.devs
            .values()
            .map(|d| NetDev {
                rdma_devices: self.rdma.get(&d.ifname).cloned().unwrap_or_default(),
                ..d.clone()
            })
            .collect()
    }
}

/// The ifindex of the device `name` in the calling thread's namespace.
pub fn ifindex(name: &str) -> Result<u32> {
    let c = std::ffi::CString::new(name).map_err(|_| anyhow::anyhow!("{name:?}: not a name"))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(anyhow::anyhow!(
            "{name}: {}",
            std::io::Error::last_os_error()
        )),
        i => Ok(i),
    }
}
