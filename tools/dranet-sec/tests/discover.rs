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
