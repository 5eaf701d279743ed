// SPDX-License-Identifier: GPL-2.0
//! DeviceTaintRules for DRANet's own devices: which rules, their fields,
//! and the directory's lifecycle (create, keep, update, delete, restart).
mod common;

use common::*;
use dranet_sec::rules::{self, Options, RuleDir};
use dranet_sec::taint::{Clock, Effect};
use k8s_openapi::api::resource::v1::DeviceTaintRule;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;
use std::collections::BTreeMap;
use std::fs;

const KEY: &str = "macsec.dranet-sec.io/unprotected";

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_795_000_000 + s).unwrap()
}

fn options(effect: Effect) -> Options {
    Options {
        node: "node-a.example.com".into(),
        driver: "dra.net".into(),
        domain: DOMAIN.into(),
        effect,
    }
}

fn want(
    o: &Options,
    state: (&str, &str),
    clock: &mut Clock,
    now: Timestamp,
) -> BTreeMap<String, DeviceTaintRule> {
    let (devs, ports) = mixed_node(state);
    let mut w = rules::wanted(o, &devs, &ports);
    rules::stamp(&mut w, clock, now);
    w
}

const R10: &str = "dranet-sec.node-a.example.com.pci-0000-10-00-0";
const R11: &str = "dranet-sec.node-a.example.com.pci-0000-11-00-0";
const R12: &str = "dranet-sec.node-a.example.com.pci-0000-12-00-0";

#[test]
fn one_rule_per_unprotected_rdma_port_selecting_dranets_device() {
    let mut clock = Clock::default();
    let w = want(
        &options(Effect::NoExecute),
        ("offload-mac", "none"),
        &mut clock,
        t(0),
    );
    assert_eq!(w.keys().cloned().collect::<Vec<_>>(), vec![R11, R12]);
    assert_eq!(
        serde_json::to_value(&w[R11]).unwrap(),
        json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {
                "name": R11,
                "labels": {"app.kubernetes.io/managed-by": "dranet-sec"},
            },
            "spec": {
                "deviceSelector": {"driver": "dra.net", "pool": "node-a.example.com", "device": "pci-0000-11-00-0"},
                "taint": {"key": KEY, "value": "encrypt-off", "effect": "NoExecute",
                          "timeAdded": "2026-11-18T11:06:40Z"},
            },
        })
    );
    assert_eq!(w[R12].spec.taint.value.as_deref(), Some("untracked"));
    let w = want(
        &options(Effect::NoSchedule),
        ("none", "no-secy"),
        &mut clock,
        t(5),
    );
    assert_eq!(w.len(), 3);
    assert_eq!(w[R10].spec.taint.effect, "NoSchedule");
    assert_eq!(w[R10].spec.taint.time_added.as_ref().unwrap().0, t(5));
    assert_eq!(
        w[R11].spec.taint.time_added.as_ref().unwrap().0,
        t(0),
        "still the first drop"
    );
}

#[test]
fn rule_names_are_object_names() {
    assert_eq!(
        rules::rule_name("n1", "pci-0000-10-00-0"),
        "dranet-sec.n1.pci-0000-10-00-0"
    );
    let node = format!("{}.example.com", "a".repeat(240));
    let long = rules::rule_name(&node, "pci-0000-10-00-0");
    assert_eq!(long.len(), 253);
    assert!(long.starts_with("dranet-sec.aaaa"));
    assert_ne!(
        long,
        rules::rule_name(&node, "pci-0000-11-00-0"),
        "the hash tells them apart"
    );
    let subdomain = |s: &str| {
        s.len() <= 253
            && s.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    };
    assert!(subdomain(&long), "{long}");
}

#[test]
fn the_directory_holds_exactly_the_rules_that_should_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rules");
    let rd = RuleDir::new(&dir).unwrap();
    // Someone else's files stay.
    fs::write(dir.join("other.yaml"), "not ours").unwrap();
    fs::write(dir.join("dranet-sec.notes.txt"), "not a rule").unwrap();
    let o = options(Effect::NoSchedule);
    let mut clock = Clock::default();
    let events =
        |e: Vec<rules::Event>| e.into_iter().map(|e| (e.event, e.name)).collect::<Vec<_>>();

    let w = want(&o, ("offload-mac", "none"), &mut clock, t(0));
    assert_eq!(
        events(rd.sync(&w).unwrap()),
        vec![("create", R11.into()), ("create", R12.into())]
    );
    let back: DeviceTaintRule =
        serde_yaml::from_str(&fs::read_to_string(dir.join(format!("{R11}.yaml"))).unwrap())
            .unwrap();
    assert_eq!(back, w[R11]);
    // Nothing changed: nothing written.
    let w = want(&o, ("offload-mac", "none"), &mut clock, t(1));
    assert!(rd.sync(&w).unwrap().is_empty());
    // The port drops: a rule appears.
    let w = want(&o, ("software", "offload-off"), &mut clock, t(2));
    let e = rd.sync(&w).unwrap();
    assert_eq!(events(e.clone()), vec![("create", R10.into())]);
    assert_eq!(
        serde_json::to_value(&e[0]).unwrap()["rule"]["spec"]["taint"],
        json!({"key": KEY, "value": "offload-off", "effect": "NoSchedule", "timeAdded": "2026-11-18T11:06:42Z"})
    );
    // The reason changes while it stays down: updated, the time kept.
    let w = want(&o, ("none", "no-active-tx-sa"), &mut clock, t(3));
    assert_eq!(events(rd.sync(&w).unwrap()), vec![("update", R10.into())]);
    assert_eq!(
        rd.load().unwrap()[R10]
            .spec
            .taint
            .time_added
            .as_ref()
            .unwrap()
            .0,
        t(2)
    );
    // A restart: a new clock seeded from the directory writes nothing.
    let mut fresh = Clock::seeded(rd.times().unwrap());
    let w = want(&o, ("none", "no-active-tx-sa"), &mut fresh, t(50));
    assert!(rd.sync(&w).unwrap().is_empty());
    // Protection returns: the rule goes.
    let w = want(&o, ("offload-phy", "none"), &mut fresh, t(60));
    let e = rd.sync(&w).unwrap();
    assert_eq!(
        serde_json::to_value(&e[0]).unwrap(),
        json!({"event": "delete", "name": R10})
    );
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            format!("{R11}.yaml"),
            format!("{R12}.yaml"),
            "dranet-sec.notes.txt".to_string(),
            "other.yaml".into()
        ]
    );
    // A broken file of ours is an error, never silently replaced.
    fs::write(dir.join(format!("{R11}.yaml")), "kind: [").unwrap();
    let err = rd.sync(&w).unwrap_err();
    assert!(
        format!("{err:#}").contains("not a DeviceTaintRule"),
        "{err:#}"
    );
}

/// The host's view: ens10 (NIC 0, PCI 0000:10:00.0) moves into a pod, as
/// DRANet allocates it. Its rule follows it by `port-id`, under the PCI
/// name DRANet goes on publishing: kept and updated while the pod holds
/// it, deleted when protection returns, also after a restart (what it
/// follows is kept in a file), `untracked` when the kernel stops reporting
/// it, gone once it is back home. A port first seen away is named by its
/// RDMA device's PCI function; one with neither is not guessed at. A port
/// the kernel tracks anew (a module reload) replaces the old one.
#[test]
fn a_port_moved_into_a_pod_keeps_its_rule_under_dranets_name() {
    let o = options(Effect::NoExecute);
    let sysfs = tempfile::tempdir().unwrap();
    let r = sysfs.path();
    // mlx5_3 on PCI function 0000:13:00.0, as sysfs links it.
    let pci = r.join("devices/pci0000:13/0000:13:00.0");
    fs::create_dir_all(&pci).unwrap();
    fs::create_dir_all(r.join("class/infiniband/mlx5_3")).unwrap();
    std::os::unix::fs::symlink(&pci, r.join("class/infiniband/mlx5_3/device")).unwrap();
    let (devs, ports) = mixed_node(("offload-mac", "none"));
    let ids = |mut ps: Vec<dranet_sec::state::PortState>| {
        for (i, p) in ps.iter_mut().enumerate() {
            p.port_id = Some(100 + i as u64);
        }
        ps
    };
    let here = ids(ports);
    let kept = sysfs.path().join(".dranet-sec.node-a.ports");
    let mut f = rules::Follow::load(&kept).unwrap();
    let names = |w: &BTreeMap<String, DeviceTaintRule>| -> Vec<(String, String)> {
        w.iter()
            .map(|(n, r)| (n.clone(), r.spec.taint.value.clone().unwrap_or_default()))
            .collect()
    };
    let home = f.wanted(&o, &devs, &here, &[], r);
    f.save().unwrap();
    assert_eq!(
        names(&home),
        [
            (R11.to_string(), "encrypt-off".to_string()),
            (R12.into(), "untracked".into())
        ]
    );
    // Moved into the pod (netnsid 11), renamed eth1 there, protected.
    let mut moved = here[0].clone();
    (moved.ifname, moved.ifindex, moved.netnsid) = ("eth1".into(), 5, Some(11));
    let devs_left: Vec<_> = devs[1..].to_vec();
    let here_left = here[1..].to_vec();
    assert_eq!(
        names(&f.wanted(&o, &devs_left, &here_left, &[moved.clone()], r)),
        names(&home)
    );
    // Protection drops under the pod: its device, by DRANet's name, also
    // after a restart.
    let mut dropped = moved.clone();
    (dropped.protection, dropped.reason) = ("none".into(), "no-active-tx-sa".into());
    let mut f = rules::Follow::load(&kept).unwrap();
    let w = f.wanted(&o, &devs_left, &here_left, &[dropped.clone()], r);
    assert_eq!(
        w[R10]
            .spec
            .device_selector
            .as_ref()
            .unwrap()
            .device
            .as_deref(),
        Some("pci-0000-10-00-0")
    );
    assert_eq!(w[R10].spec.taint.value.as_deref(), Some("no-active-tx-sa"));
    assert_eq!(w[R10].spec.taint.effect, "NoExecute");
    assert_eq!(w.len(), 3);
    // Restored: the rule goes.
    assert_eq!(
        names(&f.wanted(&o, &devs_left, &here_left, &[moved.clone()], r)),
        names(&home)
    );
    // The kernel reports it nowhere (its RDMA device gone, unbound):
    // untracked, while the device is not back.
    let w = f.wanted(&o, &devs_left, &here_left, &[], r);
    assert_eq!(w[R10].spec.taint.value.as_deref(), Some("untracked"));
    // Back home, not a port any more: the host's netdev says (no rule:
    // ens10 carries its RDMA device, so it is untracked as a netdev, not
    // from memory), and the port is forgotten.
    let w = f.wanted(&o, &devs, &here_left, &[], r);
    assert_eq!(w[R10].spec.taint.value.as_deref(), Some("untracked"));
    let mut devs_plain = devs.clone();
    devs_plain[0].rdma_devices.clear();
    assert!(!f
        .wanted(&o, &devs_plain, &here_left, &[], r)
        .contains_key(R10));
    assert!(
        !f.wanted(&o, &devs_left, &here_left, &[], r)
            .contains_key(R10),
        "forgotten"
    );
    // First seen away: named by its RDMA device's PCI function; a port
    // with no RDMA device, or one not on PCI, is not guessed at.
    let mut stranger = dropped.clone();
    (stranger.port_id, stranger.rdma_dev) = (Some(200), vec!["mlx5_3".into()]);
    let mut rxe = dropped.clone();
    (rxe.port_id, rxe.rdma_dev) = (Some(201), vec!["rxe0".into()]);
    let mut bare = dropped;
    (bare.port_id, bare.rdma_dev) = (Some(202), vec![]);
    let w = f.wanted(&o, &devs_left, &here_left, &[stranger, rxe, bare], r);
    let r13 = "dranet-sec.node-a.example.com.pci-0000-13-00-0";
    assert_eq!(w[r13].spec.taint.value.as_deref(), Some("no-active-tx-sa"));
    assert_eq!(w.len(), 3, "{:?}", w.keys());
    // A module reload: ens11 is tracked anew, under another port-id. It
    // is the same device: the old id is forgotten, not taken as a port
    // the kernel lost (as the pod's port on 0000:13:00.0 is, which the
    // kernel reports no more).
    let mut again = here_left.clone();
    again[0].port_id = Some(300);
    let w = f.wanted(&o, &devs_left, &again, &[], r);
    assert_eq!(
        names(&w),
        [
            (R11.to_string(), "encrypt-off".to_string()),
            (R12.into(), "untracked".into()),
            (r13.into(), "untracked".into())
        ]
    );
    f.save().unwrap();
    let text = fs::read_to_string(&kept).unwrap();
    assert!(
        text.contains("300 pci-0000-11-00-0\n") && !text.contains("101 "),
        "{text}"
    );
}
