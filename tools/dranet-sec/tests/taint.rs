// SPDX-License-Identifier: GPL-2.0
//! Device taints in our own slices: which devices carry one, its fields,
//! `timeAdded` across emissions, and the `resource.k8s.io/v1` limits of
//! Kubernetes 1.37 (16 taints a device, 64 devices in a slice with a
//! tainted device).
mod common;

use common::*;
use dranet_sec::slice::{self, Options};
use dranet_sec::taint::{self, Clock, Effect};
use k8s_openapi::api::resource::v1::{Device, DeviceTaint, ResourceSlice};
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

const KEY: &str = "macsec.dranet-sec.io/unprotected";

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_795_000_000 + s).unwrap()
}

/// The mixed node, ens10 offload-protected or not, as devices.
fn node(o: &Options, protected: bool) -> Vec<Device> {
    let state = if protected {
        ("offload-mac", "none")
    } else {
        ("none", "no-active-tx-sa")
    };
    let (devs, ports) = mixed_node(state);
    let (d, w) = slice::devices(o, &devs, &ports).unwrap();
    assert!(w.is_empty(), "{w:?}");
    d
}

fn taints_of(d: &[Device]) -> Vec<(String, Option<Vec<DeviceTaint>>)> {
    d.iter()
        .map(|d| (d.name.clone(), d.taints.clone()))
        .collect()
}

fn unstamped(value: &str, effect: &str) -> Option<Vec<DeviceTaint>> {
    Some(vec![DeviceTaint {
        key: KEY.into(),
        value: Some(value.into()),
        effect: effect.into(),
        time_added: None,
    }])
}

#[test]
fn only_unprotected_rdma_ports_are_tainted() {
    let d = node(&opts("n1"), true);
    assert_eq!(
        taints_of(&d),
        vec![
            ("pci-0000-10-00-0".to_string(), None),
            (
                "pci-0000-11-00-0".to_string(),
                unstamped("encrypt-off", "NoSchedule")
            ),
            (
                "pci-0000-12-00-0".to_string(),
                unstamped("untracked", "NoSchedule")
            ),
            ("veth0".to_string(), None),
        ]
    );
    let o = Options {
        effect: Effect::NoExecute,
        ..opts("n1")
    };
    let d = node(&o, false);
    assert_eq!(d[0].taints, unstamped("no-active-tx-sa", "NoExecute"));
    assert_eq!(d[1].taints, unstamped("encrypt-off", "NoExecute"));
    assert_eq!(d[3].taints, None);
}

#[test]
fn time_added_is_when_the_drop_was_first_seen() {
    let o = opts("n1");
    let mut clock = Clock::default();
    let stamped = |clock: &mut Clock, protected: bool, now: Timestamp| {
        let mut d = node(&o, protected);
        clock.stamp(KEY, &mut d, now);
        d.iter()
            .map(|d| {
                d.taints
                    .as_ref()
                    .map(|t| t[0].time_added.clone().unwrap().0)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        stamped(&mut clock, true, t(0)),
        vec![None, Some(t(0)), Some(t(0)), None]
    );
    // Still tainted later: the same time, on every emission.
    assert_eq!(
        stamped(&mut clock, false, t(5)),
        vec![Some(t(5)), Some(t(0)), Some(t(0)), None]
    );
    assert_eq!(
        stamped(&mut clock, false, t(9)),
        vec![Some(t(5)), Some(t(0)), Some(t(0)), None]
    );
    // Protection back: the taint goes; a later drop is a new taint.
    assert_eq!(
        stamped(&mut clock, true, t(20)),
        vec![None, Some(t(0)), Some(t(0)), None]
    );
    assert_eq!(
        stamped(&mut clock, false, t(30)),
        vec![Some(t(30)), Some(t(0)), Some(t(0)), None]
    );
}

#[test]
fn a_taint_serializes_as_resource_k8s_io_v1() {
    let o = opts("n1");
    let mut d = node(&o, true);
    Clock::default().stamp(KEY, &mut d, t(0));
    let s = slice::slices(&o, d);
    assert!(slice::problems(&s).is_empty(), "{:?}", slice::problems(&s));
    let v = serde_json::to_value(&s[0]).unwrap();
    assert_eq!(
        v["spec"]["devices"][1]["taints"],
        json!([{
            "key": KEY,
            "value": "encrypt-off",
            "effect": "NoSchedule",
            "timeAdded": "2026-11-18T11:06:40Z",
        }])
    );
    assert!(
        v["spec"]["devices"][0].get("taints").is_none(),
        "no empty list"
    );
    let y = serde_yaml::to_string(&s[0]).unwrap();
    let back: ResourceSlice = serde_yaml::from_str(&y).unwrap();
    assert_eq!(back, s[0]);
}

fn dev(i: usize, tainted: bool) -> Device {
    Device {
        name: format!("d{i}"),
        taints: tainted.then(|| vec![taint::taint(DOMAIN, Effect::NoSchedule, "untracked")]),
        ..Default::default()
    }
}

fn sizes(s: &[ResourceSlice]) -> Vec<usize> {
    s.iter()
        .map(|s| s.spec.devices.as_ref().unwrap().len())
        .collect()
}

#[test]
fn a_slice_with_a_tainted_device_holds_at_most_64() {
    let o = opts("n1");
    let all = |n: usize, tainted: bool| (0..n).map(|i| dev(i, tainted)).collect::<Vec<_>>();
    assert_eq!(
        sizes(&slice::slices(&o, all(300, true))),
        vec![64, 64, 64, 64, 44]
    );
    assert_eq!(
        sizes(&slice::slices(&o, all(300, false))),
        vec![128, 128, 44]
    );
    // 128 clean ones fill a slice; a tainted one after them starts the next.
    let mut v = all(128, false);
    v.push(dev(128, true));
    assert_eq!(sizes(&slice::slices(&o, v)), vec![128, 1]);
    // A tainted one first caps its slice at 64.
    let mut v = vec![dev(0, true)];
    v.extend((1..128).map(|i| dev(i, false)));
    assert_eq!(sizes(&slice::slices(&o, v)), vec![64, 64]);
    // Clean ones then a tainted one past 64: cut before it.
    let mut v = all(100, false);
    v.push(dev(100, true));
    assert_eq!(sizes(&slice::slices(&o, v)), vec![100, 1]);
}

/// Random mixes: every device published once, in order, every slice within
/// the limits, the count right.
#[test]
fn random_mixes_stay_within_the_limits() {
    let o = opts("n1");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (x % 400) as usize;
        let p = (x >> 20) % 100;
        let v: Vec<Device> = (0..n)
            .map(|i| dev(i, (x.rotate_left(i as u32) >> 40) % 100 < p))
            .collect();
        let s = slice::slices(&o, v.clone());
        assert!(
            slice::problems(&s).is_empty(),
            "round {round}: {:?}",
            slice::problems(&s)
        );
        let out: Vec<Device> = s
            .iter()
            .flat_map(|s| s.spec.devices.clone().unwrap())
            .collect();
        assert_eq!(out, v, "round {round}");
        let count = s.len() as i64;
        assert!(s.iter().all(|x| x.spec.pool.resource_slice_count == count));
    }
}

#[test]
fn problems_finds_what_the_api_server_refuses() {
    let o = opts("n1");
    let mut s = slice::slices(&o, (0..65).map(|i| dev(i, i == 3)).collect());
    assert!(slice::problems(&s).is_empty());
    // Put them back in one slice: 65 > 64.
    let all: Vec<Device> = s
        .iter()
        .flat_map(|s| s.spec.devices.clone().unwrap())
        .collect();
    s.truncate(1);
    s[0].spec.devices = Some(all);
    s[0].spec.pool.resource_slice_count = 1;
    assert_eq!(
        slice::problems(&s),
        vec!["n1-dra-net-0: 65 devices, at most 64"]
    );

    let mut d = dev(0, true);
    let taints = d.taints.as_mut().unwrap();
    let one = taints[0].clone();
    taints.resize(17, one);
    taints[1].key = "Bad Key/x".into();
    taints[2].value = Some("-no".into());
    taints[3].effect = "PreferNoSchedule".into();
    let mut s = slice::slices(&o, vec![d]);
    s[0].spec.pool.resource_slice_count = 2;
    assert_eq!(
        slice::problems(&s),
        vec![
            "n1-dra-net-0: resourceSliceCount 2 but the pool has 1 slices",
            "n1-dra-net-0/d0: 17 taints",
            "n1-dra-net-0/d0: taint key \"Bad Key/x\"",
            "n1-dra-net-0/d0: taint value Some(\"-no\")",
            "n1-dra-net-0/d0: taint effect \"PreferNoSchedule\"",
        ]
    );
}

#[test]
fn label_names_and_values() {
    for ok in ["", "a", "no-active-tx-sa", "a.b_c-9", &"x".repeat(63)] {
        assert!(taint::is_label_value(ok), "{ok:?}");
    }
    for bad in ["-a", "a-", "a b", "a/b", &"x".repeat(64)] {
        assert!(!taint::is_label_value(bad), "{bad:?}");
    }
    for ok in [KEY, "unprotected", "a.b/c_d"] {
        assert!(taint::is_label_name(ok), "{ok:?}");
    }
    for bad in [
        "",
        "x/",
        "/x",
        "Dom.io/x",
        "a..b/x",
        &format!("{}/x", "d".repeat(254)),
    ] {
        assert!(!taint::is_label_name(bad), "{bad:?}");
    }
}

#[test]
fn the_inventory_is_within_the_limits() {
    for s in inventory(3, &[(0, 1), (2, 5)]).chunks(1) {
        assert!(slice::problems(s).is_empty(), "{:?}", slice::problems(s));
    }
}

/// `slice --audit`: an audited port gets `macsecWireVerified`; one that
/// claims protection its wire denies is tainted with the verdict; a port
/// the kernel already taints keeps the kernel's reason; devices that are no
/// port, or were not audited, get nothing from the audit.
#[test]
fn the_wire_verdict_is_published_and_a_contradiction_tainted() {
    use dranet_sec::audit::Verdict;
    let wired = |verdicts: &[(&str, Verdict)]| Options {
        wire: verdicts.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..opts("n1")
    };
    let verified = |d: &Device| {
        d.attributes
            .as_ref()
            .unwrap()
            .get(&format!("{DOMAIN}/macsecWireVerified"))
            .map(|a| a.bool.unwrap())
    };
    // ens10 offload-mac, ens11 encrypt-off, ens12 untracked, veth0 nothing.
    let all = |v| {
        [("ens10", v), ("ens11", v), ("ens12", v), ("veth0", v)]
            .into_iter()
            .collect::<Vec<_>>()
    };

    let d = node(&wired(&all(Verdict::PlaintextOnWire)), true);
    let got: Vec<_> = d.iter().map(|d| (verified(d), d.taints.clone())).collect();
    assert_eq!(
        got,
        vec![
            (Some(false), unstamped("plaintext-on-wire", "NoSchedule")),
            (Some(false), unstamped("encrypt-off", "NoSchedule")),
            (None, unstamped("untracked", "NoSchedule")),
            (None, None),
        ]
    );

    let d = node(&wired(&all(Verdict::IntegrityOnly)), true);
    assert_eq!(d[0].taints, unstamped("integrity-only", "NoSchedule"));

    for v in [Verdict::Verified, Verdict::NoTraffic] {
        let d = node(&wired(&all(v)), true);
        assert_eq!(verified(&d[0]), Some(v == Verdict::Verified), "{v:?}");
        assert_eq!(d[0].taints, None, "{v:?}");
    }

    // Not audited: as before the audit.
    let d = node(&wired(&[("ens11", Verdict::PlaintextOnWire)]), true);
    assert_eq!((verified(&d[0]), d[0].taints.clone()), (None, None));

    // Every slice of it is still valid.
    let o = wired(&all(Verdict::PlaintextOnWire));
    let s = slice::slices(&o, node(&o, true));
    assert_eq!(slice::problems(&s), Vec::<String>::new());
}
