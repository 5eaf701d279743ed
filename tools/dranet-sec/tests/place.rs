// SPDX-License-Identifier: GPL-2.0
mod common;

use common::*;
use dranet_sec::{docs, place};
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim};

fn example() -> (ResourceClaim, Vec<DeviceClass>) {
    let text = include_str!("../examples/claim.yaml");
    let objs = docs::objects(text).unwrap();
    let claims: Vec<ResourceClaim> = docs::of_kind(&objs, "ResourceClaim").unwrap();
    (
        claims[0].clone(),
        docs::of_kind(&objs, "DeviceClass").unwrap(),
    )
}

fn claim_with(expr: &str, count: Option<i64>, mode: Option<&str>) -> ResourceClaim {
    let mut c = example().0;
    let ex = c
        .spec
        .as_mut()
        .unwrap()
        .devices
        .as_mut()
        .unwrap()
        .requests
        .as_mut()
        .unwrap()[0]
        .exactly
        .as_mut()
        .unwrap();
    ex.selectors.as_mut().unwrap()[0]
        .cel
        .as_mut()
        .unwrap()
        .expression = expr.to_string();
    ex.count = count;
    ex.allocation_mode = mode.map(str::to_string);
    c
}

#[test]
fn example_claim_lands_on_the_one_protected_numa0_nic() {
    // 100 nodes, 8 NICs each. Protected: node 41 NIC 3 (NUMA 1) and node 73
    // NIC 2 (NUMA 0): only the latter fits.
    let slices = inventory(100, &[(41, 3), (73, 2)]);
    let (claim, classes) = example();
    let p = place::place(&claim, &classes, &slices, &[]).unwrap();
    assert!(p.satisfied);
    assert_eq!(p.allocations.len(), 1);
    let a = &p.allocations[0];
    assert_eq!(
        (
            a.request.as_str(),
            a.node.as_str(),
            a.pool.as_str(),
            a.device.as_str()
        ),
        ("nic", "node-073", "node-073", "pci-0000-12-00-0")
    );
    // Every other device is rejected, each with its reason.
    assert_eq!(p.rejected.len(), 799);
    let why = |n: &str, d: &str| {
        p.rejected
            .iter()
            .find(|r| r.node == n && r.device == d)
            .unwrap()
            .reason
            .clone()
    };
    assert!(
        why("node-041", "pci-0000-13-00-0").contains("is false"),
        "NUMA 1"
    );
    assert!(
        why("node-000", "pci-0000-10-00-0").contains("is false"),
        "not protected"
    );
    // NIC 7 is untracked: published false, so no error either.
    assert!(why("node-000", "pci-0000-17-00-0").contains("is false"));
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["allocations"][0]["device"], "pci-0000-12-00-0");
    assert!(json["rejected"][0]["reason"].is_string());
}

/// With `DRAListTypeAttributes` DRANet publishes
/// `resource.kubernetes.io/numaNode` as a list: the example claim lands
/// where it did, and a selector that compares the standard attribute with
/// `==` no longer matches (a list is not an int), which `includes` does.
#[test]
fn example_claim_holds_with_list_numa_nodes() {
    let mut slices = inventory(100, &[(41, 3), (73, 2)]);
    for s in &mut slices {
        for d in s.spec.devices.iter_mut().flatten() {
            let a = d.attributes.as_mut().unwrap();
            let n = a.get_mut("resource.kubernetes.io/numaNode").unwrap();
            n.ints = Some(vec![n.int.take().unwrap()]);
        }
    }
    let (claim, classes) = example();
    let p = place::place(&claim, &classes, &slices, &[]).unwrap();
    let at = |p: &place::Placement| {
        p.allocations
            .iter()
            .map(|a| (a.node.clone(), a.device.clone()))
            .collect::<Vec<_>>()
    };
    let want = vec![("node-073".to_string(), "pci-0000-12-00-0".to_string())];
    assert_eq!(at(&p), want);
    let egress = r#"device.attributes["macsec.dranet-sec.io"].?macsecEgress.orValue(false)"#;
    let std = r#"device.attributes["resource.kubernetes.io"].numaNode"#;
    let eq = claim_with(&format!("{egress} && {std} == 0"), Some(1), None);
    let p = place::place(&eq, &classes, &slices, &[]).unwrap();
    assert!(
        !p.satisfied && p.nodes.iter().all(|n| !n.error),
        "{:?}",
        p.nodes[0]
    );
    let inc = claim_with(&format!("{egress} && {std}.includes(0)"), Some(1), None);
    assert_eq!(
        at(&place::place(&inc, &classes, &slices, &[]).unwrap()),
        want
    );
}

#[test]
fn nothing_protected_nothing_placed() {
    let slices = inventory(10, &[]);
    let (claim, classes) = example();
    let p = place::place(&claim, &classes, &slices, &[]).unwrap();
    assert!(!p.satisfied);
    assert!(p.allocations.is_empty());
    assert_eq!(p.rejected.len(), 80);
}

#[test]
fn a_missing_attribute_is_an_error_for_the_attempt() {
    // Without `.?...orValue()`, a device without the attribute is an error
    // (as in the scheduler), not a non-match; and an error on one node
    // fails the scheduler's whole attempt, though node-001 would fit.
    let slices = inventory(2, &[(1, 0)]);
    let mut stripped = slices.clone();
    for s in &mut stripped {
        if s.spec.node_name.as_deref() == Some("node-000") {
            for d in s.spec.devices.as_mut().unwrap() {
                d.attributes
                    .as_mut()
                    .unwrap()
                    .retain(|k, _| !k.starts_with(DOMAIN));
            }
        }
    }
    let claim = claim_with(
        &format!("device.attributes[\"{DOMAIN}\"].macsecEgress"),
        None,
        None,
    );
    let p = place::place(&claim, &example().1, &stripped, &[]).unwrap();
    assert!(!p.satisfied);
    assert!(p.allocations.is_empty());
    let fit = |n: &str| p.nodes.iter().find(|f| f.node == n).unwrap().clone();
    assert!(fit("node-001").fits);
    assert!(fit("node-000").error);
    assert!(
        p.problems[0].starts_with("the scheduler's attempt fails, and is retried: node node-000: device pci-0000-10-00-0: request nic: CEL runtime error"),
        "{:?}",
        p.problems
    );
    let r = p.rejected.iter().find(|r| r.node == "node-000").unwrap();
    assert!(r.reason.contains("runtime error"), "{}", r.reason);
    // An unknown domain is an empty map: the error names the attribute.
    let claim = claim_with(
        "device.attributes[\"other.example.com\"].foo == 1",
        None,
        None,
    );
    let p = place::place(&claim, &example().1, &slices, &[]).unwrap();
    assert!(!p.satisfied);
    assert!(
        p.rejected[0].reason.contains("foo"),
        "{}",
        p.rejected[0].reason
    );
}

#[test]
fn counts_and_all() {
    let slices = inventory(3, &[(2, 0), (2, 2), (2, 4), (1, 0)]);
    let protected = format!("device.attributes[\"{DOMAIN}\"].macsecEgress");
    let p = place::place(
        &claim_with(&protected, Some(3), None),
        &example().1,
        &slices,
        &[],
    )
    .unwrap();
    assert!(p.satisfied);
    assert_eq!(p.allocations.len(), 3);
    assert!(p.allocations.iter().all(|a| a.node == "node-002"));
    // Node 1's protected NIC matched, but node 2 was chosen.
    assert!(p
        .rejected
        .iter()
        .any(|r| r.node == "node-001" && r.reason.contains("node node-002 was chosen")));
    let p = place::place(
        &claim_with(&protected, Some(4), None),
        &example().1,
        &slices,
        &[],
    )
    .unwrap();
    assert!(!p.satisfied);
    let p = place::place(
        &claim_with(&protected, None, Some("All")),
        &example().1,
        &slices,
        &[],
    )
    .unwrap();
    assert!(p.satisfied);
    assert_eq!(
        p.allocations.len(),
        1,
        "All on the first node that has any: node-001"
    );
}

#[test]
fn documents_load_as_kubectl_takes_them() {
    let slices = inventory(2, &[]);
    // JSON lines (slice --watch), a JSON array, a YAML List.
    let lines: String = slices
        .iter()
        .map(|s| serde_json::to_string(s).unwrap() + "\n")
        .collect();
    assert_eq!(docs::objects(&lines).unwrap().len(), 2);
    assert_eq!(
        docs::objects(&serde_json::to_string(&slices).unwrap())
            .unwrap()
            .len(),
        2
    );
    let list = serde_yaml::to_string(
        &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": slices}),
    )
    .unwrap();
    assert_eq!(docs::objects(&list).unwrap().len(), 2);
    let wrong = r#"{"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {}}"#;
    assert!(docs::of_kind::<DeviceClass>(&docs::objects(wrong).unwrap(), "DeviceClass").is_err());
}
