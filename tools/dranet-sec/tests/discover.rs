// SPDX-License-Identifier: GPL-2.0
//! Discovery on a fake sysfs laid out as the kernel lays it out.

use dranet_sec::discover;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

fn write(p: &Path, s: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("{s}\n")).unwrap();
}

#[test]
fn finds_pci_numa_sriov_and_rdma_facts() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    // A PF with a RoCE device, a VF of it, a veth with RXE on it, lo.
    let pf = r.join("devices/pci0000:10/0000:10:00.0/0000:11:00.0");
    write(&pf.join("numa_node"), "1");
    write(&pf.join("vendor"), "0x15b3");
    write(&pf.join("device"), "0x101d");
    write(&pf.join("sriov_totalvfs"), "8");
    write(&pf.join("sriov_numvfs"), "2");
    let pf_net = pf.join("net/ens1f0");
    write(&pf_net.join("address"), "02:00:00:00:00:01");
    write(&pf_net.join("mtu"), "9000");
    write(&pf_net.join("operstate"), "up");
    write(&pf_net.join("type"), "1");
    symlink(&pf, pf_net.join("device")).unwrap();
    let vf = r.join("devices/pci0000:10/0000:10:00.0/0000:11:00.2");
    write(&vf.join("numa_node"), "-1");
    symlink(&pf, vf.join("physfn")).unwrap();
    let vf_net = vf.join("net/ens1f0v0");
    write(&vf_net.join("address"), "02:00:00:00:00:02");
    symlink(&vf, vf_net.join("device")).unwrap();
    let veth = r.join("devices/virtual/net/h0");
    write(&veth.join("address"), "02:00:00:00:00:03");
    let lo = r.join("devices/virtual/net/lo");
    write(&lo.join("type"), "772");
    fs::create_dir_all(r.join("class/net")).unwrap();
    for (n, p) in [
        ("ens1f0", &pf_net),
        ("ens1f0v0", &vf_net),
        ("h0", &veth),
        ("lo", &lo),
    ] {
        symlink(p, r.join("class/net").join(n)).unwrap();
    }
    write(
        &r.join("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0"),
        "ens1f0",
    );
    write(
        &r.join("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1"),
        "ens1f0",
    );
    // RXE names its netdev in `parent`; its GID table is not read (this
    // entry would be wrong if it were).
    write(&r.join("class/infiniband/rxe0/parent"), "h0");
    write(
        &r.join("class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0"),
        "ens1f0v0",
    );
    // A PCI RDMA function lists its netdevs under `device/net`.
    write(&vf.join("infiniband/mlx5_1/ports/1/state"), "4: ACTIVE");
    fs::create_dir_all(r.join("class/infiniband")).unwrap();
    symlink(
        vf.join("infiniband/mlx5_1"),
        r.join("class/infiniband/mlx5_1"),
    )
    .unwrap();
    symlink(&vf, vf.join("infiniband/mlx5_1/device")).unwrap();

    let devs = discover::netdevs(r).unwrap();
    let names: Vec<&str> = devs.iter().map(|d| d.ifname.as_str()).collect();
    assert_eq!(names, ["ens1f0", "ens1f0v0", "h0"]);
    let (pf, vf, h0) = (&devs[0], &devs[1], &devs[2]);
    assert_eq!(pf.pci_address.as_deref(), Some("0000:11:00.0"));
    assert_eq!(pf.pcie_root.as_deref(), Some("pci0000:10"));
    assert_eq!(pf.numa_node, Some(1));
    assert_eq!((pf.sriov_total_vfs, pf.sriov_num_vfs), (Some(8), Some(2)));
    assert_eq!(pf.rdma_devices, ["mlx5_0"]);
    assert_eq!(pf.mtu, Some(9000));
    assert!(!pf.virtual_ && !pf.is_sriov_vf);
    assert!(vf.is_sriov_vf);
    assert_eq!(vf.numa_node, None, "-1 is no NUMA node");
    assert_eq!(vf.rdma_devices, ["mlx5_1"]);
    assert!(h0.virtual_);
    assert_eq!(h0.pci_address, None);
    assert_eq!(h0.rdma_devices, ["rxe0"]);
}

/// A virtual netdev `name` with `ifindex` under `r`, linked into class/net.
fn veth(r: &Path, name: &str, ifindex: u32, mtu: u32) {
    let d = r.join("devices/virtual/net").join(name);
    write(&d.join("ifindex"), &ifindex.to_string());
    write(&d.join("mtu"), &mtu.to_string());
    write(&d.join("operstate"), "up");
    fs::create_dir_all(r.join("class/net")).unwrap();
    symlink(&d, r.join("class/net").join(name)).unwrap();
}

fn unlink(r: &Path, name: &str) {
    fs::remove_file(r.join("class/net").join(name)).unwrap();
    fs::remove_dir_all(r.join("devices/virtual/net").join(name)).unwrap();
}

fn view(c: &discover::Cache) -> Vec<(String, Option<i64>, Vec<String>)> {
    c.netdevs()
        .into_iter()
        .map(|d| (d.ifname, d.mtu, d.rdma_devices))
        .collect()
}

fn own(v: &[(&str, i64, &[&str])]) -> Vec<(String, Option<i64>, Vec<String>)> {
    v.iter()
        .map(|(n, m, r)| {
            (
                n.to_string(),
                Some(*m),
                r.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect()
}

/// The watch's cache re-reads only what a change names, and after each
/// change equals a full read of the tree (the independent reference).
#[test]
fn cache_follows_changes_one_netdev_at_a_time() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    veth(r, "a", 2, 1500);
    veth(r, "b", 3, 1500);
    let mut c = discover::Cache::new(r).unwrap();
    let full = |c: &discover::Cache| {
        let want: Vec<_> = discover::netdevs(r).unwrap();
        assert_eq!(c.netdevs(), want, "the cache differs from a full read");
    };
    assert_eq!(view(&c), own(&[("a", 1500, &[]), ("b", 1500, &[])]));
    full(&c);

    // A change nobody announced is not seen: the cache reads nothing by
    // itself.
    write(&r.join("devices/virtual/net/a/mtu"), "9000");
    assert_eq!(view(&c), own(&[("a", 1500, &[]), ("b", 1500, &[])]));
    c.changed(2, "a");
    assert_eq!(view(&c), own(&[("a", 9000, &[]), ("b", 1500, &[])]));
    full(&c);

    // A new netdev, then a rename (ifindex 3 is now "c": "b" goes).
    veth(r, "d", 4, 1400);
    c.changed(4, "d");
    fs::rename(r.join("class/net/b"), r.join("class/net/c")).unwrap();
    c.changed(3, "c");
    assert_eq!(
        view(&c),
        own(&[("a", 9000, &[]), ("c", 1500, &[]), ("d", 1400, &[])])
    );
    full(&c);

    // Gone by ifindex; a gone index it never saw changes nothing.
    unlink(r, "d");
    c.gone(4);
    c.gone(99);
    assert_eq!(view(&c), own(&[("a", 9000, &[]), ("c", 1500, &[])]));
    full(&c);

    // A netdev a message names but sysfs no longer has is dropped; one
    // named by a notification is read again by name.
    unlink(r, "a");
    c.changed(2, "a");
    write(&r.join("devices/virtual/net/b/mtu"), "1280");
    c.reread("c");
    assert_eq!(view(&c), own(&[("c", 1280, &[])]));
    full(&c);

    // RDMA devices are read apart from the netdevs.
    write(&r.join("class/infiniband/rxe0/parent"), "c");
    assert_eq!(view(&c), own(&[("c", 1280, &[])]));
    c.refresh_rdma();
    assert_eq!(view(&c), own(&[("c", 1280, &["rxe0"])]));
    full(&c);

    // A rescan reads everything, whatever was announced.
    veth(r, "e", 5, 1500);
    c.rescan().unwrap();
    assert_eq!(view(&c), own(&[("c", 1280, &["rxe0"]), ("e", 1500, &[])]));
    full(&c);
}

/// The PCI names DRANet publishes (ghw's database): the vendor's and
/// device's names, `unknown` for an id the database does not list, none
/// without a database; the operational state in netlink's spelling.
#[test]
fn pci_names_and_state_as_dranet_spells_them() {
    use dranet_sec::attrs::{dranet_attributes_with, NetDev};
    use dranet_sec::pciids::PciIds;
    let db = PciIds::parse(
        "# comment\n\
         15b3  Mellanox Technologies\n\
         \t101d  MT2892 Family [ConnectX-6 Dx]\n\
         \t\t15b3 0016  ConnectX-6 Dx EN adapter card\n\
         8086  Intel Corporation\n\
         \t1572  Ethernet Controller X710 for 10GbE SFP+\n\
         C 02  Network controller\n\
         \t00  Ethernet controller\n",
    );
    let nic = |vendor: &str, device: &str, state: &str| NetDev {
        ifname: "ens1".into(),
        pci_address: Some("0000:11:00.0".into()),
        pci_vendor: Some(vendor.into()),
        pci_device: Some(device.into()),
        state: Some(state.into()),
        ..Default::default()
    };
    let get = |dev: &NetDev, db: Option<&PciIds>| {
        let a = dranet_attributes_with("dra.net", dev, db);
        let s = |k: &str| {
            a.get(&format!("dra.net/{k}"))
                .and_then(|v| v.string.clone())
        };
        (s("pciVendor"), s("pciDevice"), s("state"))
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        get(&nic("0x15b3", "0x101d", "up"), Some(&db)),
        (
            some("Mellanox Technologies"),
            some("MT2892 Family [ConnectX-6 Dx]"),
            some("up")
        )
    );
    // A device of another vendor is not found under this one; the class
    // list is not read as vendors.
    assert_eq!(
        get(&nic("0x15b3", "0x1572", "lowerlayerdown"), Some(&db)),
        (
            some("Mellanox Technologies"),
            some("unknown"),
            some("lower-layer-down")
        )
    );
    assert_eq!(
        get(&nic("0x0002", "0x0000", "notpresent"), Some(&db)),
        (some("unknown"), some("unknown"), some("not-present"))
    );
    assert_eq!(
        get(&nic("0x15b3", "0x101d", "dormant"), None),
        (None, None, some("dormant"))
    );
    // A netdev with no PCI function has no PCI names.
    let veth = NetDev {
        pci_address: None,
        ..nic("0x15b3", "0x101d", "up")
    };
    assert_eq!(get(&veth, Some(&db)), (None, None, some("up")));
}

/// A fake sysfs with a PF, a VF and a virtual netdev whose name is no DNS
/// label (DRANet names it `net-` and its base32), each in `class/net` and
/// the functions in `bus/pci/devices`.
fn lookup_tree(r: &Path) {
    fs::create_dir_all(r.join("class/net")).unwrap();
    fs::create_dir_all(r.join("bus/pci/devices")).unwrap();
    for (addr, ifname, mac) in [
        ("0000:11:00.0", "ens1f0", "02:00:00:00:00:01"),
        ("0000:11:00.2", "ens1f0v0", "02:00:00:00:00:02"),
    ] {
        let f = r.join("devices/pci0000:10/0000:10:00.0").join(addr);
        let n = f.join("net").join(ifname);
        write(&n.join("address"), mac);
        symlink(&f, n.join("device")).unwrap();
        symlink(&n, r.join("class/net").join(ifname)).unwrap();
        symlink(&f, r.join("bus/pci/devices").join(addr)).unwrap();
    }
    let v = r.join("devices/virtual/net/Eth_0");
    write(&v.join("address"), "02:00:00:00:00:03");
    symlink(&v, r.join("class/net/Eth_0")).unwrap();
}

/// The webhook's lookups: DRANet's device names (`pci-…`, `net-…`), an
/// interface name, a PCI address, a MAC; the name first.
#[test]
fn finds_the_device_dranet_names() {
    use dranet_sec::slice::{named, Named};
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    lookup_tree(r);
    let find = |name: &str, pci: &str, mac: &str| {
        discover::find(r, name, pci, mac).unwrap().map(|d| d.ifname)
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(find("pci-0000-11-00-0", "", ""), some("ens1f0"));
    assert_eq!(find("pci-0000-11-00-2", "", ""), some("ens1f0v0"));
    assert_eq!(find("ens1f0v0", "", ""), some("ens1f0v0"));
    let eth0 = discover::netdev(r, "Eth_0").unwrap();
    let name = dranet_sec::slice::device_name(&eth0);
    assert!(name.starts_with("net-"), "{name}");
    assert_eq!(named(&name), Named::Interface("Eth_0".into()));
    assert_eq!(find(&name, "", ""), some("Eth_0"));
    assert_eq!(find("", "0000:11:00.2", ""), some("ens1f0v0"));
    assert_eq!(find("", "", "02:00:00:00:00:03"), some("Eth_0"));
    // The name wins over a MAC that is another's.
    assert_eq!(find("ens1f0", "", "02:00:00:00:00:03"), some("ens1f0"));
    // Nothing of that name: the PCI address, then the MAC, decide.
    assert_eq!(
        find("pci-0000-11-00-7", "0000:11:00.0", "02:00:00:00:00:03"),
        some("ens1f0")
    );
    assert_eq!(find("pci-0000-11-00-7", "", ""), None);
    assert_eq!(find("eth9", "", ""), None);
    assert_eq!(
        named("pci-0000-11-00"),
        Named::Interface("pci-0000-11-00".into())
    );
}

/// A name or a PCI address reads one netdev, not every one: with a netdev
/// whose files block whoever reads them (a FIFO with no writer), those
/// lookups still answer. A MAC alone reads every address, and would wait.
#[test]
fn a_name_reads_one_netdev_not_every_one() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().to_path_buf();
    lookup_tree(&r);
    let stuck = r.join("devices/virtual/net/aaa0");
    fs::create_dir_all(&stuck).unwrap();
    let fifo = std::ffi::CString::new(stuck.join("address").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    symlink(&stuck, r.join("class/net/aaa0")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let got = [
            ("pci-0000-11-00-0", ""),
            ("ens1f0v0", ""),
            ("", "0000:11:00.2"),
        ]
        .map(|(name, pci)| discover::find(&r, name, pci, "").unwrap().map(|d| d.ifname));
        let _ = tx.send(got);
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("a lookup by name or PCI address read another netdev");
    assert_eq!(
        got,
        [
            Some("ens1f0".to_string()),
            Some("ens1f0v0".to_string()),
            Some("ens1f0v0".to_string())
        ]
    );
}
