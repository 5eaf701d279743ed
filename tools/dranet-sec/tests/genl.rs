// SPDX-License-Identifier: GPL-2.0
//! The client's tables are the spec's.

use dranet_sec::genl::{self, attr};

fn spec() -> serde_yaml::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../Documentation/netlink/specs/macsec_bridge.yaml"
    );
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The names in list `key` of the item `name` of the spec's `section`
/// (a list entry is a name, or a map with one).
fn names(spec: &serde_yaml::Value, section: &str, name: &str, key: &str) -> Vec<String> {
    let item = spec[section]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap();
    item[key]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| {
            e.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| e["name"].as_str().unwrap().to_string())
        })
        .collect()
}

fn entries(spec: &serde_yaml::Value, name: &str) -> Vec<String> {
    names(spec, "definitions", name, "entries")
}

#[test]
fn enums_match_the_spec() {
    let s = spec();
    assert_eq!(s["name"], genl::FAMILY);
    // What the parser reads as uint, the spec sends as uint.
    let dev = s["attribute-sets"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "dev")
        .unwrap();
    for n in ["encrypt", "rx-plaintext", "generation", "port-id"] {
        let a = dev["attributes"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|a| a["name"] == n)
            .unwrap();
        assert_eq!(a["type"], "uint", "{n}");
    }
    assert_eq!(entries(&s, "protection"), genl::PROTECTION);
    assert_eq!(entries(&s, "reason"), genl::REASON);
    assert_eq!(entries(&s, "relation"), genl::RELATION);
    assert_eq!(entries(&s, "cipher"), genl::CIPHER);
    assert_eq!(entries(&s, "feature-owner"), genl::FEATURE_OWNER);
}

#[test]
fn attributes_and_ops_match_the_spec() {
    let s = spec();
    let attributes = |set: &str| names(&s, "attribute-sets", set, "attributes");
    let (dev, gid) = (attributes("dev"), attributes("gid"));
    let num = |n: &str| dev.iter().position(|x| x == n).unwrap() as u16 + 1;
    assert_eq!(
        gid.iter().position(|x| x == "gid").unwrap() as u16 + 1,
        attr::GID_GID
    );
    for (n, v) in [
        ("ifindex", attr::IFINDEX),
        ("ifname", attr::IFNAME),
        ("rdma-dev", attr::RDMA_DEV),
        ("protection", attr::PROTECTION),
        ("reason", attr::REASON),
        ("relation", attr::RELATION),
        ("secy-ifindex", attr::SECY_IFINDEX),
        ("sci", attr::SCI),
        ("cipher", attr::CIPHER),
        ("encrypt", attr::ENCRYPT),
        ("feature-owner", attr::FEATURE_OWNER),
        ("generation", attr::GENERATION),
        ("secy-netnsid", attr::SECY_NETNSID),
        ("secy-netns-fd", attr::SECY_NETNS_FD),
        ("protected-gid", attr::PROTECTED_GID),
        ("validate", attr::VALIDATE),
        ("rx-plaintext", attr::RX_PLAINTEXT),
        ("port-id", attr::PORT_ID),
        ("netnsid", attr::NETNSID),
        ("all-netns", attr::ALL_NETNS),
    ] {
        assert_eq!(num(n), v, "{n}");
    }
    let ops: Vec<&str> = s["operations"]["list"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops.iter().position(|o| *o == "dev-get").unwrap() as u8 + 1,
        genl::CMD_DEV_GET
    );
    for (n, v) in [
        ("dev-change-ntf", genl::CMD_DEV_CHANGE_NTF),
        ("bind", genl::CMD_BIND),
        ("unbind", genl::CMD_UNBIND),
    ] {
        assert_eq!(
            ops.iter().position(|o| *o == n).unwrap() as u8 + 1,
            v,
            "{n}"
        );
    }
    assert_eq!(s["mcast-groups"]["list"][0]["name"], genl::MCGRP_MONITOR);
    assert_eq!(
        s["mcast-groups"]["list"][1]["name"],
        genl::MCGRP_MONITOR_ALL
    );
}
