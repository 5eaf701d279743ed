// SPDX-License-Identifier: GPL-2.0
//! `place` as the scheduler's allocator: backtracking, taints and
//! tolerations, `firstAvailable`, `matchAttribute`, `allocationMode: All`,
//! devices of allocated claims; `evictions` as the device taint eviction
//! controller; and a brute-force model that says whether an assignment
//! exists, against which random claims are checked.

use dranet_sec::place::{self, Placement};
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use serde_json::{json, Value};

const KEY: &str = "macsec.dranet-sec.io/unprotected";

/// A device: name, NUMA node, protected, taint effect (if any).
struct D(&'static str, i64, bool, Option<&'static str>);

fn device(d: &D) -> Value {
    let mut v = json!({
        "name": d.0,
        "attributes": {
            "rdma": {"bool": true},
            "resource.kubernetes.io/numaNode": {"int": d.1},
            "macsec.dranet-sec.io/macsecEgress": {"bool": d.2},
        },
    });
    if let Some(effect) = d.3 {
        v["taints"] = json!([{"key": KEY, "value": "encrypt-off", "effect": effect,
                              "timeAdded": "2026-11-25T04:00:00Z"}]);
    }
    v
}

fn slice(node: &str, devs: &[D]) -> ResourceSlice {
    slice_of(node, devs.iter().map(device).collect())
}

/// A slice of `devices` (in the API's JSON form), the node's whole pool.
fn slice_of(node: &str, devices: Vec<Value>) -> ResourceSlice {
    serde_json::from_value(json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": format!("{node}-dra-net-0")},
        "spec": {
            "driver": "dra.net",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }))
    .unwrap()
}

fn classes() -> Vec<DeviceClass> {
    vec![serde_json::from_value(json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "rdma"},
        "spec": {"selectors": [{"cel": {"expression": "device.attributes[\"dra.net\"].rdma"}}]},
    }))
    .unwrap()]
}

fn claim(devices: Value) -> ResourceClaim {
    serde_json::from_value(json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {"devices": devices},
    }))
    .unwrap()
}

/// An `exactly` request for `count` devices of class rdma with `cel`.
fn exactly(name: &str, count: i64, cel: &str) -> Value {
    json!({"name": name, "exactly": {"deviceClassName": "rdma", "count": count,
           "selectors": [{"cel": {"expression": cel}}]}})
}

const PROTECTED: &str = "device.attributes[\"macsec.dranet-sec.io\"].macsecEgress";
const ANY: &str = "true";

fn picks(p: &Placement) -> Vec<(String, String, String)> {
    p.allocations
        .iter()
        .map(|a| (a.request.clone(), a.node.clone(), a.device.clone()))
        .collect()
}

fn pick(r: &str, n: &str, d: &str) -> (String, String, String) {
    (r.into(), n.into(), d.into())
}

fn run(c: &ResourceClaim, slices: &[ResourceSlice]) -> Placement {
    place::place(c, &classes(), slices, &[]).unwrap()
}

/// First fit gives `a` the first device, which `b` alone can use: the
/// allocator must undo that choice. (The greedy placement before this
/// allocator reported this claim unsatisfiable.)
#[test]
fn backtracks_across_requests() {
    let s = [slice(
        "n1",
        &[D("d0", 0, true, None), D("d1", 1, true, None)],
    )];
    let c = claim(json!({"requests": [
        exactly("a", 1, ANY),
        exactly("b", 1, "device.attributes[\"resource.kubernetes.io\"].numaNode == 0"),
    ]}));
    let p = run(&c, &s);
    assert!(p.satisfied, "{p:?}");
    assert_eq!(
        picks(&p),
        vec![pick("a", "n1", "d1"), pick("b", "n1", "d0")]
    );
}

/// Two NICs on one NUMA node: first fit takes d0 (NUMA 0), and no second
/// NUMA-0 device exists; backtracking finds d1 and d3 (NUMA 1).
#[test]
fn backtracks_within_a_request_for_match_attribute() {
    let s = [slice(
        "n1",
        &[
            D("d0", 0, true, None),
            D("d1", 1, true, None),
            D("d2", 0, false, None),
            D("d3", 1, true, None),
        ],
    )];
    let c = claim(json!({
        "requests": [exactly("nics", 2, PROTECTED)],
        "constraints": [{"matchAttribute": "resource.kubernetes.io/numaNode"}],
    }));
    let p = run(&c, &s);
    assert_eq!(
        picks(&p),
        vec![pick("nics", "n1", "d1"), pick("nics", "n1", "d3")]
    );
    // A constraint naming other requests does not bind this one.
    let c = claim(json!({
        "requests": [exactly("nics", 2, PROTECTED), exactly("gpu", 1, &format!("!{PROTECTED}"))],
        "constraints": [{"matchAttribute": "resource.kubernetes.io/numaNode", "requests": ["gpu"]}],
    }));
    let p = run(&c, &s);
    assert_eq!(
        picks(&p),
        vec![
            pick("nics", "n1", "d0"),
            pick("nics", "n1", "d1"),
            pick("gpu", "n1", "d2")
        ]
    );
    // Across requests: the NIC must share the GPU's NUMA node.
    let c = claim(json!({
        "requests": [exactly("nic", 1, PROTECTED), exactly("gpu", 1, &format!("!{PROTECTED}"))],
        "constraints": [{"matchAttribute": "resource.kubernetes.io/numaNode", "requests": ["nic", "gpu"]}],
    }));
    assert_eq!(
        picks(&run(&c, &s)),
        vec![pick("nic", "n1", "d0"), pick("gpu", "n1", "d2")]
    );
    // Nobody has the attribute: unsatisfiable.
    let c = claim(json!({
        "requests": [exactly("nic", 1, ANY)],
        "constraints": [{"matchAttribute": "dra.net/nothing"}],
    }));
    assert!(!run(&c, &s).satisfied);
}

#[test]
fn taints_keep_claims_off_unless_tolerated() {
    let s = [slice(
        "n1",
        &[
            D("d0", 0, false, Some("NoSchedule")),
            D("d1", 0, false, Some("NoExecute")),
            D("d2", 0, false, Some("None")),
        ],
    )];
    // A selector that forgets macsecEgress still lands on neither tainted
    // device; a `None` taint does not keep it off.
    let c = claim(json!({"requests": [exactly("nic", 1, ANY)]}));
    let p = run(&c, &s);
    assert_eq!(picks(&p), vec![pick("nic", "n1", "d2")]);
    let why = |p: &Placement, d: &str| {
        p.rejected
            .iter()
            .find(|r| r.device == d)
            .unwrap()
            .reason
            .clone()
    };
    assert_eq!(
        why(&p, "d0"),
        format!("request nic: taint {KEY}=encrypt-off:NoSchedule not tolerated")
    );
    let c = claim(json!({"requests": [exactly("nic", 3, ANY)]}));
    assert!(!run(&c, &s).satisfied);

    let with = |tols: Value| {
        let mut r = exactly("nic", 3, ANY);
        r["exactly"]["tolerations"] = tols;
        run(&claim(json!({"requests": [r]})), &s).satisfied
    };
    assert!(with(json!([{"key": KEY, "operator": "Exists"}])));
    assert!(
        with(json!([{"operator": "Exists"}])),
        "empty key and Exists: every taint"
    );
    assert!(
        with(json!([{"key": KEY, "value": "encrypt-off"}])),
        "Equal is the default"
    );
    assert!(!with(json!([{"key": KEY, "value": "no-secy"}])));
    assert!(
        !with(json!([{"key": KEY, "operator": "Exists", "effect": "NoExecute"}])),
        "d0 is NoSchedule"
    );
    assert!(with(json!([
        {"key": KEY, "operator": "Exists", "effect": "NoExecute"},
        {"key": KEY, "operator": "Exists", "effect": "NoSchedule"},
    ])));
    assert!(!with(json!([{"key": "other.io/x", "operator": "Exists"}])));
}

#[test]
fn first_available_takes_the_first_subrequest_that_leads_to_a_solution() {
    let s = [
        slice("n1", &[D("d0", 0, true, None), D("d1", 0, true, None)]),
        slice(
            "n2",
            &[
                D("e0", 0, true, None),
                D("e1", 0, false, Some("NoSchedule")),
            ],
        ),
    ];
    let c = claim(json!({"requests": [{"name": "nic", "firstAvailable": [
        {"name": "two", "deviceClassName": "rdma", "count": 2, "selectors": [{"cel": {"expression": PROTECTED}}]},
        {"name": "one", "deviceClassName": "rdma", "count": 1, "selectors": [{"cel": {"expression": PROTECTED}}]},
    ]}]}));
    let p = run(&c, &s);
    assert_eq!(
        picks(&p),
        vec![pick("nic/two", "n1", "d0"), pick("nic/two", "n1", "d1")]
    );
    // Only n2: the second choice.
    let p = run(&c, &s[1..]);
    assert_eq!(picks(&p), vec![pick("nic/one", "n2", "e0")]);
    // The first subrequest fits alone but leaves a later request nothing:
    // the allocator goes back and takes the second.
    let c = claim(json!({"requests": [
        {"name": "nic", "firstAvailable": [
            {"name": "two", "deviceClassName": "rdma", "count": 2},
            {"name": "one", "deviceClassName": "rdma", "count": 1},
        ]},
        exactly("extra", 1, ANY),
    ]}));
    let p = run(&c, &s[..1]);
    assert_eq!(
        picks(&p),
        vec![pick("nic/one", "n1", "d0"), pick("extra", "n1", "d1")]
    );
    // Each subrequest has its own tolerations.
    let c = claim(json!({"requests": [{"name": "nic", "firstAvailable": [
        {"name": "strict", "deviceClassName": "rdma", "count": 2},
        {"name": "lenient", "deviceClassName": "rdma", "count": 2,
         "tolerations": [{"key": KEY, "operator": "Exists"}]},
    ]}]}));
    assert_eq!(
        picks(&run(&c, &s[1..])),
        vec![
            pick("nic/lenient", "n2", "e0"),
            pick("nic/lenient", "n2", "e1")
        ]
    );
}

#[test]
fn all_takes_every_matching_device_or_fails() {
    let s = [
        slice("n1", &[D("d0", 0, true, None), D("d1", 0, false, None)]),
        slice(
            "n2",
            &[D("e0", 0, true, None), D("e1", 0, true, Some("NoSchedule"))],
        ),
    ];
    let all = |cel: &str| {
        json!({"name": "all", "exactly": {"deviceClassName": "rdma",
        "allocationMode": "All", "selectors": [{"cel": {"expression": cel}}]}})
    };
    assert_eq!(
        picks(&run(&claim(json!({"requests": [all(ANY)]})), &s)),
        vec![pick("all", "n1", "d0"), pick("all", "n1", "d1")]
    );
    // On n2 one of "all" is tainted: the node does not fit.
    let p = run(&claim(json!({"requests": [all(PROTECTED)]})), &s[1..]);
    assert!(!p.satisfied);
    assert_eq!(
        p.nodes[0].reason.as_deref(),
        Some("cannot satisfy every request")
    );
    // None match: All fails too.
    let p = run(&claim(json!({"requests": [all("false")]})), &s);
    assert!(!p.satisfied);
    // A constraint that All cannot meet is an error for the node.
    let s2 = [slice(
        "n3",
        &[D("f0", 0, true, None), D("f1", 1, true, None)],
    )];
    let c = claim(json!({"requests": [all(ANY)],
        "constraints": [{"matchAttribute": "resource.kubernetes.io/numaNode"}]}));
    let p = run(&c, &s2);
    assert_eq!(
        p.nodes[0].reason.as_deref(),
        Some("request all: cannot add device f1 because constraint matchAttribute resource.kubernetes.io/numaNode would not be satisfied")
    );
}

fn allocated(name: &str, results: Value) -> ResourceClaim {
    serde_json::from_value(json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [exactly("nic", 1, ANY)]}},
        "status": {"allocation": {"devices": {"results": results}}},
    }))
    .unwrap()
}

#[test]
fn devices_of_allocated_claims_are_in_use() {
    let s = [slice(
        "n1",
        &[D("d0", 0, true, None), D("d1", 0, true, None)],
    )];
    let held = [allocated(
        "a",
        json!([{"request": "nic", "driver": "dra.net", "pool": "n1", "device": "d0"}]),
    )];
    let c = claim(json!({"requests": [exactly("nic", 1, PROTECTED)]}));
    let p = place::place(&c, &classes(), &s, &held).unwrap();
    assert_eq!(picks(&p), vec![pick("nic", "n1", "d1")]);
    let c = claim(json!({"requests": [exactly("nic", 2, PROTECTED)]}));
    let p = place::place(&c, &classes(), &s, &held).unwrap();
    assert!(!p.satisfied);
    let r = p.rejected.iter().find(|r| r.device == "d0").unwrap();
    assert_eq!(r.reason, "matches nic, but allocated to another claim");
}

#[test]
fn a_runtime_error_fails_the_attempt_only_if_the_search_gets_there() {
    // d1 lacks macsecEgress; the selector does not guard against it.
    let mut s = slice("n1", &[D("d0", 0, true, None), D("d1", 0, true, None)]);
    s.spec.devices.as_mut().unwrap()[1]
        .attributes
        .as_mut()
        .unwrap()
        .remove("macsec.dranet-sec.io/macsecEgress");
    let c = claim(json!({"requests": [exactly("nic", 1, PROTECTED)]}));
    assert_eq!(
        picks(&run(&c, std::slice::from_ref(&s))),
        vec![pick("nic", "n1", "d0")]
    );
    let c = claim(json!({"requests": [exactly("nic", 2, PROTECTED)]}));
    let p = run(&c, std::slice::from_ref(&s));
    assert!(!p.satisfied);
    let why = p.nodes[0].reason.clone().unwrap();
    assert!(
        why.starts_with("device d1: request nic: CEL runtime error"),
        "{why}"
    );
}

#[test]
fn evictions_follow_no_execute_taints_and_toleration_seconds() {
    let s = [slice(
        "n1",
        &[
            D("d0", 0, false, Some("NoExecute")),
            D("d1", 0, false, Some("NoSchedule")),
            D("d2", 0, true, None),
        ],
    )];
    let res = |dev: &str, tols: Value| json!([{"request": "nic", "driver": "dra.net", "pool": "n1", "device": dev, "tolerations": tols}]);
    let claims = [
        allocated("bare", res("d0", json!([]))),
        allocated(
            "grace",
            res(
                "d0",
                json!([
            {"key": KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]),
            ),
        ),
        allocated(
            "forever",
            res(
                "d0",
                json!([{"key": KEY, "operator": "Exists", "effect": "NoExecute"}]),
            ),
        ),
        // One toleration without seconds keeps the pod, whatever the others say.
        allocated(
            "forever-too",
            res(
                "d0",
                json!([
            {"key": KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
            {"key": KEY, "operator": "Exists", "effect": "NoExecute"}]),
            ),
        ),
        // The controller counts only tolerations that name NoExecute.
        allocated(
            "any-effect",
            res("d0", json!([{"key": KEY, "operator": "Exists"}])),
        ),
        allocated(
            "negative",
            res(
                "d0",
                json!([
            {"key": KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}]),
            ),
        ),
        allocated(
            "wrong-value",
            res(
                "d0",
                json!([
            {"key": KEY, "value": "no-secy", "effect": "NoExecute", "tolerationSeconds": 900}]),
            ),
        ),
        allocated("noschedule", res("d1", json!([]))),
        allocated("clean", res("d2", json!([]))),
        allocated(
            "elsewhere",
            json!([{"request": "nic", "driver": "dra.net", "pool": "n9", "device": "d0"}]),
        ),
    ];
    let e = place::evictions(&claims, &s);
    let got: Vec<(String, i64)> = e
        .iter()
        .map(|e| (e.claim.clone(), e.after_seconds))
        .collect();
    assert_eq!(
        got,
        vec![
            ("ml/bare".to_string(), 0),
            ("ml/grace".to_string(), 60),
            ("ml/any-effect".to_string(), 0),
            ("ml/negative".to_string(), 0),
            ("ml/wrong-value".to_string(), 0),
        ]
    );
    assert_eq!(
        serde_json::to_value(&e[0]).unwrap(),
        json!({"claim": "ml/bare", "request": "nic", "node": "n1", "pool": "n1", "device": "d0",
               "taint": format!("{KEY}=encrypt-off:NoExecute"), "after_seconds": 0})
    );
}

/// A tiny xorshift: deterministic random cases.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The model's device: NUMA node, protected, tainted (NoSchedule).
#[derive(Clone, Copy, Debug)]
struct M {
    numa: i64,
    protected: bool,
    tainted: bool,
}

/// The model's request: count, protected only, tolerates the taint.
#[derive(Clone, Copy, Debug)]
struct R {
    count: usize,
    protected: bool,
    tolerant: bool,
}

fn eligible(r: &R, d: &M) -> bool {
    (!r.protected || d.protected) && (!d.tainted || r.tolerant)
}

/// Brute force: is there an assignment of distinct devices to every
/// request, all on one NUMA node if `same_numa`?
fn exists(reqs: &[R], devs: &[M], same_numa: bool, used: u32, numa: Option<i64>) -> bool {
    let Some((r, rest)) = reqs.split_first() else {
        return true;
    };
    // Every subset of `r.count` unused eligible devices.
    let n = devs.len();
    (0u32..(1 << n)).any(|set| {
        set & used == 0
            && set.count_ones() as usize == r.count
            && (0..n)
                .filter(|i| set & (1 << i) != 0)
                .all(|i| eligible(r, &devs[i]))
            && {
                let numas: Vec<i64> = (0..n)
                    .filter(|i| set & (1 << i) != 0)
                    .map(|i| devs[i].numa)
                    .collect();
                let first = numa.or(numas.first().copied());
                (!same_numa || numas.iter().all(|x| Some(*x) == first))
                    && exists(
                        rest,
                        devs,
                        same_numa,
                        used | set,
                        if same_numa { first } else { None },
                    )
            }
    })
}

#[test]
fn random_claims_agree_with_brute_force() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let names = ["d0", "d1", "d2", "d3", "d4", "d5"];
    let mut satisfied = 0;
    for case in 0..400 {
        let n = 1 + rng.below(6) as usize;
        let devs: Vec<M> = (0..n)
            .map(|_| M {
                numa: rng.below(2) as i64,
                protected: rng.below(3) != 0,
                tainted: rng.below(4) == 0,
            })
            .collect();
        let reqs: Vec<R> = (0..1 + rng.below(3))
            .map(|_| R {
                count: 1 + rng.below(2) as usize,
                protected: rng.below(2) == 0,
                tolerant: rng.below(3) == 0,
            })
            .collect();
        let same_numa = rng.below(2) == 0;
        let ds: Vec<D> = devs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                D(
                    names[i],
                    m.numa,
                    m.protected,
                    m.tainted.then_some("NoSchedule"),
                )
            })
            .collect();
        let s = [slice("n1", &ds)];
        let requests: Vec<Value> = reqs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut v = exactly(
                    &format!("r{i}"),
                    r.count as i64,
                    if r.protected { PROTECTED } else { ANY },
                );
                if r.tolerant {
                    v["exactly"]["tolerations"] = json!([{"key": KEY, "operator": "Exists"}]);
                }
                v
            })
            .collect();
        let mut spec = json!({"requests": requests});
        if same_numa {
            spec["constraints"] = json!([{"matchAttribute": "resource.kubernetes.io/numaNode"}]);
        }
        let p = run(&claim(spec), &s);
        let want = exists(&reqs, &devs, same_numa, 0, None);
        assert_eq!(
            p.satisfied, want,
            "case {case}: {devs:?} {reqs:?} same_numa {same_numa}"
        );
        if !p.satisfied {
            continue;
        }
        satisfied += 1;
        // The allocation itself obeys the model's rules.
        let idx = |d: &str| names.iter().position(|x| *x == d).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for (i, r) in reqs.iter().enumerate() {
            let mine: Vec<usize> = p
                .allocations
                .iter()
                .filter(|a| a.request == format!("r{i}"))
                .map(|a| idx(&a.device))
                .collect();
            assert_eq!(mine.len(), r.count, "case {case}");
            for d in mine {
                assert!(eligible(r, &devs[d]), "case {case}");
                assert!(seen.insert(d), "case {case}: device used twice");
            }
        }
        if same_numa {
            let numas: std::collections::BTreeSet<i64> =
                seen.iter().map(|&d| devs[d].numa).collect();
            assert_eq!(numas.len(), 1, "case {case}");
        }
    }
    // Both outcomes are exercised.
    assert!(
        (100..300).contains(&satisfied),
        "{satisfied} of 400 satisfied"
    );
}

/// `n` protected devices `d0..` on node n1.
fn many(n: usize) -> Vec<D> {
    let names: Vec<&'static str> = (0..n)
        .map(|i| &*Box::leak(format!("d{i:02}").into_boxed_str()))
        .collect();
    names
        .into_iter()
        .map(|name| D(name, 0, true, None))
        .collect()
}

#[test]
fn a_claim_gets_at_most_32_devices() {
    let s = [slice("n1", &many(40))];
    let err = place::place(
        &claim(json!({"requests": [exactly("nic", 33, ANY)]})),
        &classes(),
        &s,
        &[],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the claim asks for 33 devices, more than the limit of 32"
    );
    // All matching 40: the attempt fails with an error.
    let all =
        json!({"name": "all", "exactly": {"deviceClassName": "rdma", "allocationMode": "All"}});
    let p = run(&claim(json!({"requests": [all]})), &s);
    assert!(!p.satisfied);
    assert_eq!(
        p.nodes[0].reason.as_deref(),
        Some("the claim would be allocated more than 32 devices")
    );
    assert!(p.nodes[0].error);
    // firstAvailable: the subrequest over the limit gives way to the next.
    let c = claim(json!({"requests": [{"name": "nic", "firstAvailable": [
        {"name": "every", "deviceClassName": "rdma", "allocationMode": "All"},
        {"name": "two", "deviceClassName": "rdma", "count": 2},
    ]}]}));
    assert_eq!(
        picks(&run(&c, &s)),
        vec![pick("nic/two", "n1", "d00"), pick("nic/two", "n1", "d01")]
    );
}

#[test]
fn pools_are_read_as_the_scheduler_gathers_them() {
    // An older generation of n1's pool still lists d9: only the newest counts.
    let mut old = slice("n1", &[D("d9", 0, true, None)]);
    old.spec.pool.generation = 1;
    let mut new = slice("n1", &[D("d0", 0, true, None)]);
    new.spec.pool.generation = 2;
    let c = claim(json!({"requests": [exactly("nic", 1, PROTECTED)]}));
    let p = run(&c, &[old.clone(), new.clone()]);
    assert_eq!(picks(&p), vec![pick("nic", "n1", "d0")]);
    assert!(
        p.rejected.is_empty(),
        "d9 is not offered at all: {:?}",
        p.rejected
    );
    // A pool missing one of its two slices is being updated: not used,
    // and `All` cannot know what all is.
    new.spec.pool.resource_slice_count = 2;
    assert!(!run(&c, &[new.clone()]).satisfied);
    let all =
        json!({"name": "all", "exactly": {"deviceClassName": "rdma", "allocationMode": "All"}});
    let p = run(&claim(json!({"requests": [all]})), &[new]);
    assert_eq!(
        p.nodes[0].reason.as_deref(),
        Some("request all: asks for all devices, but resource pool n1 is currently being updated")
    );
    // A slice for all nodes is offered on every node.
    let mut shared = slice("fabric", &[D("f0", 0, true, None)]);
    shared.spec.node_name = None;
    shared.spec.all_nodes = Some(true);
    let c = claim(json!({"requests": [exactly("a", 1, ANY), exactly("b", 1, ANY)]}));
    let p = run(&c, &[shared, slice("n2", &[D("e0", 0, true, None)])]);
    assert_eq!(picks(&p), vec![pick("a", "", "f0"), pick("b", "n2", "e0")]);
}

#[test]
fn admin_access_results_are_not_in_use() {
    let s = [slice("n1", &[D("d0", 0, true, None)])];
    let held = [allocated(
        "monitor",
        json!([{"request": "nic", "driver": "dra.net", "pool": "n1", "device": "d0", "adminAccess": true}]),
    )];
    let c = claim(json!({"requests": [exactly("nic", 1, ANY)]}));
    let p = place::place(&c, &classes(), &s, &held).unwrap();
    assert_eq!(picks(&p), vec![pick("nic", "n1", "d0")]);
}

/// A slice whose devices carry `attr` as given (each `(name, value)`,
/// the value in the API's JSON form: `{"ints": [0, 1]}`, `{"int": 0}`).
fn slice_with(node: &str, attr: &str, devs: &[(&str, Value)]) -> ResourceSlice {
    let devices: Vec<Value> = devs
        .iter()
        .map(|(name, v)| json!({"name": name, "attributes": {"rdma": {"bool": true}, attr: v}}))
        .collect();
    slice_of(node, devices)
}

/// With `DRAListTypeAttributes`, DRANet publishes
/// `resource.kubernetes.io/numaNode` as a list: CEL sees a list, with the
/// gate's `includes` for either form.
#[test]
fn list_attributes_are_cel_lists() {
    const NUMA: &str = "resource.kubernetes.io/numaNode";
    let s = [slice_with(
        "n1",
        NUMA,
        &[("l01", json!({"ints": [0, 1]})), ("s0", json!({"int": 0}))],
    )];
    let n = "device.attributes[\"resource.kubernetes.io\"].numaNode";
    for (cel, want) in [
        (format!("{n}.includes(1)"), vec!["l01"]),
        (format!("{n}.includes(0)"), vec!["l01", "s0"]),
        (format!("{n}.includes(2)"), vec![]),
        (format!("{n} == [0, 1]"), vec!["l01"]),
    ] {
        let c = claim(json!({"requests": [{"name": "r", "exactly": {
            "deviceClassName": "rdma", "allocationMode": "All",
            "selectors": [{"cel": {"expression": cel.as_str()}}]}}]}));
        let p = run(&c, &s[..]);
        let got: Vec<_> = p.allocations.iter().map(|a| a.device.as_str()).collect();
        assert!(p.nodes.iter().all(|n| !n.error), "{cel}: {:?}", p.nodes);
        assert_eq!(got, want, "{cel}");
    }
    // `in` and `size` need a list: on a scalar they are a runtime error,
    // as they are to the scheduler; and an int attribute is an int to CEL.
    let only = |dev: &str| {
        let v = if dev == "l01" {
            json!({"ints": [0, 1]})
        } else {
            json!({"int": 0})
        };
        [slice_with("n1", NUMA, &[(dev, v)])]
    };
    for cel in [format!("1 in {n}"), format!("size({n}) == 2")] {
        let c = claim(json!({"requests": [exactly("r", 1, &cel)]}));
        assert!(run(&c, &only("l01")).satisfied, "{cel}");
    }
    let c = claim(json!({"requests": [exactly("r", 1, &format!("1 in {n}"))]}));
    let p = run(&c, &only("s0"));
    assert!(!p.satisfied && p.nodes[0].error, "{p:?}");
    let c = claim(json!({"requests": [exactly("r", 1, &format!("{n} + 1 == 1"))]}));
    assert!(run(&c, &only("s0")).satisfied);
}

/// The allocator that `DRAListTypeAttributes` selects narrows a
/// `matchAttribute` set and never widens it when it gives a device back,
/// so it must try one request's devices as combinations in order: here it
/// finds r1 = [b, c] (sharing "2") and r2 = [a]. Tried as permutations
/// with that narrowing (the first `place` with lists), every order left a
/// set that refused the third device: unsatisfiable.
#[test]
fn match_attribute_on_lists_tries_combinations() {
    const A: &str = "dra.net/models";
    let s = [slice_with(
        "n1",
        A,
        &[
            ("a", json!({"strings": ["1", "3"]})),
            ("b", json!({"strings": ["1", "2"]})),
            ("c", json!({"strings": ["2", "3"]})),
        ],
    )];
    let c = claim(json!({
        "requests": [
            exactly("r1", 2, ANY),
            exactly("r2", 1, "device.attributes[\"dra.net\"].models == [\"1\", \"3\"]"),
        ],
        "constraints": [{"matchAttribute": A, "requests": ["r1"]}],
    }));
    let p = run(&c, &s[..]);
    assert!(p.satisfied, "{p:?}");
    assert_eq!(
        picks(&p),
        vec![
            pick("r1", "n1", "b"),
            pick("r1", "n1", "c"),
            pick("r2", "n1", "a")
        ]
    );
}

/// `matchAttribute` over list values, as the allocator that
/// `DRAListTypeAttributes` selects decides it: the devices' values must
/// share at least one, all of them together. The cases and their outcomes
/// are the allocator's own tests' (k8s.io/dynamic-resource-allocation
/// `structured/internal/allocatortesting`: `...partially-common-elements`,
/// `mixed-scalar-and-list...`), and type mismatches.
#[test]
fn match_attribute_intersects_list_values() {
    const A: &str = "dra.net/models";
    let cases: [(&[(&str, Value)], bool); 7] = [
        (
            &[
                ("a", json!({"strings": ["v1", "v2"]})),
                ("b", json!({"strings": ["v2", "v3"]})),
            ],
            true,
        ),
        (
            &[
                ("a", json!({"strings": ["v1"]})),
                ("b", json!({"strings": ["v2", "v3"]})),
            ],
            false,
        ),
        // Pairwise common, nothing common to all three.
        (
            &[
                ("a", json!({"strings": ["v1", "v2"]})),
                ("b", json!({"strings": ["v2", "v3"]})),
                ("c", json!({"strings": ["v3", "v1"]})),
            ],
            false,
        ),
        (
            &[
                ("a", json!({"string": "v1"})),
                ("b", json!({"strings": ["v1", "v2"]})),
            ],
            true,
        ),
        (
            &[
                ("a", json!({"strings": ["v1", "v2"]})),
                ("b", json!({"string": "v3"})),
            ],
            false,
        ),
        (
            &[("a", json!({"ints": [0, 1]})), ("b", json!({"int": 1}))],
            true,
        ),
        // Types differ: nothing in common.
        (
            &[
                ("a", json!({"ints": [1]})),
                ("b", json!({"strings": ["1"]})),
            ],
            false,
        ),
    ];
    for (i, (devs, want)) in cases.iter().enumerate() {
        let s = [slice_with("n1", A, devs)];
        let c = claim(json!({
            "requests": [{"name": "r", "exactly": {"deviceClassName": "rdma",
                          "count": devs.len() as i64}}],
            "constraints": [{"matchAttribute": A}],
        }));
        let p = run(&c, &s[..]);
        assert!(p.nodes.iter().all(|n| !n.error), "case {i}: {:?}", p.nodes);
        assert_eq!(p.satisfied, *want, "case {i}: {p:?}");
    }
}
