// SPDX-License-Identifier: GPL-2.0
mod common;

use common::*;
use dranet_sec::attrs::{self, NetDev, MAX_ATTRS};
use dranet_sec::slice::{self, device_name};

fn attr<'a>(
    d: &'a k8s_openapi::api::resource::v1::Device,
    name: &str,
) -> &'a k8s_openapi::api::resource::v1::DeviceAttribute {
    d.attributes
        .as_ref()
        .unwrap()
        .get(name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn device_names_follow_dranet() {
    assert_eq!(device_name(&nic(0)), "pci-0000-10-00-0");
    let v = NetDev {
        ifname: "Macsec0.7_x".into(),
        ..Default::default()
    };
    assert_eq!(device_name(&v), "net-jvqwg43fmmyc4n27pa");
    // Interface names are at most 15 bytes (IFNAMSIZ): always a label.
    assert!(attrs::is_dns_label(&device_name(&NetDev {
        ifname: "-".repeat(15),
        ..Default::default()
    })));
    let plain = NetDev {
        ifname: "eth0".into(),
        ..Default::default()
    };
    assert_eq!(device_name(&plain), "eth0");
}

#[test]
fn attributes_say_what_the_kernel_says() {
    let devs = vec![nic(0), nic(1), nic(2)];
    let ports = vec![
        port(&devs[0], "offload-mac", "none"),
        port(&devs[1], "none", "encrypt-off"),
    ];
    let (d, w) = slice::devices(&opts("n1"), &devs, &ports).unwrap();
    assert!(w.is_empty());
    let e = |i: usize| attr(&d[i], &format!("{DOMAIN}/macsecEgress")).bool;
    assert_eq!((e(0), e(1), e(2)), (Some(true), Some(false), Some(false)));
    assert_eq!(
        attr(&d[1], &format!("{DOMAIN}/macsecReason"))
            .string
            .as_deref(),
        Some("encrypt-off")
    );
    assert_eq!(
        attr(&d[2], &format!("{DOMAIN}/macsecReason"))
            .string
            .as_deref(),
        Some("untracked")
    );
    assert_eq!(
        attr(&d[0], &format!("{DOMAIN}/macsecCipher"))
            .string
            .as_deref(),
        Some("gcm-aes-256")
    );
    // DRANet's own names, and the standard ones.
    assert_eq!(attr(&d[0], "dra.net/rdma").bool, Some(true));
    assert_eq!(
        attr(&d[0], "dra.net/rdmaDevice").string.as_deref(),
        Some("mlx5_0")
    );
    assert_eq!(attr(&d[0], "dra.net/sriov").bool, Some(true));
    assert_eq!(attr(&d[0], "dra.net/sriovVfs").int, Some(0));
    assert_eq!(attr(&d[1], "resource.kubernetes.io/numaNode").int, Some(1));
    assert_eq!(
        attr(&d[0], "resource.kubernetes.io/pcieRoot")
            .string
            .as_deref(),
        Some("pci0000:10")
    );
    for dev in &d {
        for (name, v) in dev.attributes.as_ref().unwrap() {
            attrs::check(name, v).unwrap();
        }
    }
}

#[test]
fn limits_are_enforced() {
    assert!(attrs::is_qualified_name(
        "macsec.dranet-sec.io/macsecEgress"
    ));
    assert!(
        !attrs::is_qualified_name("dra.net/macsec-hw-offload"),
        "hyphen in the identifier"
    );
    assert!(!attrs::is_qualified_name(&format!(
        "dra.net/{}",
        "a".repeat(33)
    )));
    assert!(!attrs::is_qualified_name(&format!(
        "{}.io/a",
        "d".repeat(61)
    )));
    assert!(slice::devices(
        &slice::Options {
            domain: "Bad_Domain".into(),
            ..opts("n")
        },
        &[],
        &[]
    )
    .is_err());

    // A 65-character string is left out, not published.
    let long = NetDev {
        state: Some("x".repeat(65)),
        ..nic(0)
    };
    let (d, w) = slice::devices(&opts("n"), &[long], &[]).unwrap();
    assert!(d[0]
        .attributes
        .as_ref()
        .unwrap()
        .get("dra.net/state")
        .is_none());
    assert_eq!(w.len(), 1, "{w:?}");

    // List values (DRAListTypeAttributes): one field of the eight, not
    // empty, each item within the length.
    let list = |v: serde_json::Value| -> k8s_openapi::api::resource::v1::DeviceAttribute {
        serde_json::from_value(v).unwrap()
    };
    let check = |v| attrs::check("dra.net/x", &list(v));
    assert_eq!(check(serde_json::json!({"ints": [0, 1]})), Ok(()));
    assert!(check(serde_json::json!({"ints": []})).is_err());
    assert!(check(serde_json::json!({"ints": [0], "int": 0})).is_err());
    assert!(check(serde_json::json!({"strings": ["a", "x".repeat(65)]})).is_err());

    // Past 32 attributes the driver's go first; the MACsec ones stay.
    let mut a = attrs::dranet_attributes("dra.net", &nic(0));
    for i in 0..30 {
        a.insert(format!("dra.net/extra{i}"), attrs::int_attr(i));
    }
    a.extend(attrs::macsec_attributes(DOMAIN, None));
    let w = attrs::fit(&mut a, DOMAIN);
    assert_eq!(a.len(), MAX_ATTRS);
    assert!(!w.is_empty());
    assert!(a.contains_key(&format!("{DOMAIN}/macsecEgress")));
}

#[test]
fn pools_split_at_128_devices() {
    let devs: Vec<NetDev> = (0..300)
        .map(|i| NetDev {
            ifname: format!("veth{i}"),
            virtual_: true,
            ..Default::default()
        })
        .collect();
    let o = slice::Options {
        generation: 5,
        ..opts("big")
    };
    let (d, _) = slice::devices(&o, &devs, &[]).unwrap();
    let s = slice::slices(&o, d);
    let sizes: Vec<usize> = s
        .iter()
        .map(|s| s.spec.devices.as_ref().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![128, 128, 44]);
    let mut names = std::collections::BTreeSet::new();
    for x in &s {
        assert_eq!(x.spec.pool.resource_slice_count, 3);
        assert_eq!(x.spec.pool.generation, 5);
        assert_eq!(x.spec.pool.name, "big");
        assert_eq!(x.spec.node_name.as_deref(), Some("big"));
        assert!(names.insert(x.metadata.name.clone().unwrap()));
        for dev in x.spec.devices.as_ref().unwrap() {
            assert!(attrs::is_dns_label(&dev.name));
        }
    }
    // An empty node still publishes its (empty) pool.
    assert_eq!(slice::slices(&o, vec![]).len(), 1);
}

#[test]
fn slices_serialize_as_resource_k8s_io_v1() {
    let s = &inventory(1, &[(0, 3)])[0];
    let v = serde_json::to_value(s).unwrap();
    assert_eq!(v["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(v["kind"], "ResourceSlice");
    assert_eq!(v["spec"]["pool"]["resourceSliceCount"], 1);
    assert_eq!(
        v["spec"]["devices"][3]["attributes"][format!("{DOMAIN}/macsecEgress")]["bool"],
        true
    );
    // And back, through YAML.
    let y = serde_yaml::to_string(s).unwrap();
    let back: k8s_openapi::api::resource::v1::ResourceSlice = serde_yaml::from_str(&y).unwrap();
    assert_eq!(&back, s);
}

#[test]
fn protected_gids_are_counted_for_every_device() {
    let p = dranet_sec::state::PortState {
        ifname: "mtn0".into(),
        protection: "none".into(),
        reason: "partial".into(),
        relation: Some("upper".into()),
        protected_gids: vec!["0000:0000:0000:0000:0000:ffff:c000:0201".into()],
        ..Default::default()
    };
    let gids =
        |p| attrs::macsec_attributes(DOMAIN, p)[&format!("{DOMAIN}/macsecProtectedGids")].int;
    assert_eq!(gids(Some(&p)), Some(1));
    let whole = dranet_sec::state::PortState {
        protected_gids: Vec::new(),
        ..p.clone()
    };
    assert_eq!(gids(Some(&whole)), Some(0));
    assert_eq!(gids(None), Some(0), "untracked");
}

/// `macsecIngressStrict` only for what the SecY verifies: egress
/// offloaded by the same SecY, `validate strict`, and a driver that hands
/// the SecY only what it decrypted; `macsecValidate` as the kernel says.
#[test]
fn ingress_strict_needs_strict_validation_and_no_plaintext_path() {
    let p = |protection: &str, validate: Option<&str>, plaintext: Option<u8>| {
        dranet_sec::state::PortState {
            ifname: "ens1".into(),
            protection: protection.into(),
            reason: "none".into(),
            validate: validate.map(Into::into),
            rx_plaintext: plaintext,
            ..Default::default()
        }
    };
    let got = |p: &dranet_sec::state::PortState| {
        let a = attrs::macsec_attributes(DOMAIN, Some(p));
        (
            a[&format!("{DOMAIN}/macsecIngressStrict")].bool,
            a.get(&format!("{DOMAIN}/macsecValidate"))
                .and_then(|v| v.string.clone()),
        )
    };
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        got(&p("offload-mac", Some("strict"), Some(0))),
        (Some(true), s("strict"))
    );
    assert_eq!(
        got(&p("offload-mac", Some("strict"), Some(1))),
        (Some(false), s("strict"))
    );
    assert_eq!(
        got(&p("offload-mac", Some("check"), Some(0))),
        (Some(false), s("check"))
    );
    assert_eq!(
        got(&p("offload-mac", Some("disabled"), Some(0))),
        (Some(false), s("disabled"))
    );
    // Not known (no observed SecY), or not protecting egress.
    assert_eq!(got(&p("offload-mac", None, None)), (Some(false), None));
    assert_eq!(
        got(&p("none", Some("strict"), Some(0))),
        (Some(false), s("strict"))
    );
}

/// The devices DRANet publishes, no others: loopback (never discovered),
/// its ignored names, its uplinks and what is enslaved to them, and veths
/// (its default filter) are left out; `--include-veth` keeps veths.
/// `dra.net/type` is DRANet's where its value is known.
#[test]
fn only_the_devices_dranet_publishes() {
    let dev = |ifname: &str, kind: Option<&str>| NetDev {
        ifname: ifname.into(),
        virtual_: kind.is_some_and(|k| !k.is_empty()),
        kind: kind.map(Into::into),
        ..Default::default()
    };
    // RXE on a veth: an RDMA port DRANet does not publish by default.
    let rxe_veth = NetDev {
        rdma_devices: vec!["rxe0".into()],
        ..dev("v0", Some("veth"))
    };
    let devs = vec![
        NetDev {
            kind: Some(String::new()),
            ..nic(0)
        },
        rxe_veth,
        dev("macsec0", Some("macsec")),
        dev("tap0", Some("tun")),
        dev("gre1", Some("gre")),
        dev("unread", None),
        dev("docker0", Some("bridge")),
        dev("cilium_host", Some("veth")),
        dev("cilium_net", Some("veth")),
        // The uplink, a bond, and its slave.
        dev("bond0", Some("bond")),
        NetDev {
            kind: Some(String::new()),
            ..nic(1)
        },
    ];
    let ports = vec![port(&devs[1], "none", "offload-off")];
    let mut o = opts("n1");
    o.uplinks = ["bond0", "ens11"].iter().map(|s| s.to_string()).collect();
    let published = |o: &slice::Options| -> Vec<(String, Option<String>)> {
        let (d, w) = slice::devices(o, &devs, &ports).unwrap();
        assert!(w.is_empty(), "{w:?}");
        d.iter()
            .map(|d| {
                let t = d.attributes.as_ref().unwrap().get("dra.net/type");
                (d.name.clone(), t.and_then(|t| t.string.clone()))
            })
            .collect()
    };
    let s = |n: &str, t: Option<&str>| (n.to_string(), t.map(Into::into));
    assert_eq!(
        published(&o),
        [
            s("gre1", None),
            s("macsec0", Some("macsec")),
            s("pci-0000-10-00-0", Some("device")),
            s("tap0", Some("tuntap")),
            s("unread", None),
        ]
    );
    o.include_veth = true;
    let with_veth = published(&o);
    assert!(with_veth.contains(&s("v0", Some("veth"))), "{with_veth:?}");
    assert_eq!(with_veth.len(), 6, "{with_veth:?}");
    // The veth port, once published, is what the kernel says of it.
    let (d, _) = slice::devices(&o, &devs, &ports).unwrap();
    let v0 = d.iter().find(|d| d.name == "v0").unwrap();
    assert_eq!(
        attr(v0, &format!("{DOMAIN}/macsecReason"))
            .string
            .as_deref(),
        Some("offload-off")
    );
    assert!(v0.taints.is_some());
}
