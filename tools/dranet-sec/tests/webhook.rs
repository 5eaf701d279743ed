// SPDX-License-Identifier: GPL-2.0
//! The webhook provider against DRANet's contract
//! (kubernetes-sigs/dranet `pkg/cloudprovider/webhook/webhook.go`), without
//! and with the transport. Request bodies are shaped as Go's encoding/json
//! marshals DRANet's types; responses are decoded as DRANet decodes them.
mod common;

use anyhow::Result;
use common::*;
use dranet_sec::attrs::NetDev;
use dranet_sec::state::PortState;
use dranet_sec::webhook::{self, Config, DeviceQuery, Node};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A node with three NICs: ens10 (port, state settable), ens11 (an RDMA
/// netdev the kernel does not track), ens12 (no RDMA device, no port).
#[derive(Clone, Default)]
struct FakeNode {
    /// ens10's protection and reason; `None`: the kernel cannot be asked.
    ens10: Arc<Mutex<Option<(String, String)>>>,
}

impl FakeNode {
    fn new(protection: &str, reason: &str) -> Self {
        let n = FakeNode::default();
        n.set(Some((protection, reason)));
        n
    }
    fn set(&self, s: Option<(&str, &str)>) {
        *self.ens10.lock().unwrap() = s.map(|(p, r)| (p.to_string(), r.to_string()));
    }
    fn devs() -> Vec<NetDev> {
        let mut plain = nic(2);
        plain.rdma_devices.clear();
        vec![nic(0), nic(1), plain]
    }
}

impl Node for FakeNode {
    fn device(&self, q: &DeviceQuery) -> Result<Option<NetDev>> {
        Ok(Self::devs().into_iter().find(|d| {
            q.name == d.ifname
                || q.name == dranet_sec::slice::device_name(d)
                || d.mac.as_deref() == Some(q.mac_address.as_str())
                || (!q.pci_address.is_empty()
                    && d.pci_address.as_deref() == Some(q.pci_address.as_str()))
        }))
    }
    fn port(&self, ifname: &str) -> Result<Option<PortState>> {
        let Some((prot, reason)) = self.ens10.lock().unwrap().clone() else {
            anyhow::bail!("macsec_bridge: family not found (is the module loaded?)");
        };
        Ok((ifname == "ens10").then(|| port(&nic(0), &prot, &reason)))
    }
}

/// A node whose sysfs cannot be read.
struct BrokenNode;

impl Node for BrokenNode {
    fn device(&self, _: &DeviceQuery) -> Result<Option<NetDev>> {
        anyhow::bail!("/sys/class/net: Permission denied")
    }
    fn port(&self, _: &str) -> Result<Option<PortState>> {
        unreachable!("asked only about a device found")
    }
}

fn cfg(enforce: bool) -> Config {
    Config {
        domain: DOMAIN.to_string(),
        enforce,
    }
}

/// `{"error": msg}` of a failed reply, asserting that shape.
fn error_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    let m = v.as_object().unwrap();
    assert_eq!(m.len(), 1, "{body}");
    m["error"].as_str().unwrap().to_string()
}

/// DRANet's `DeviceIdentifiers` for PCI NIC `i`, as Go marshals it.
fn ids(i: usize) -> Value {
    let d = nic(i);
    json!({
        "mac_address": d.mac.unwrap(),
        "pci_address": d.pci_address.unwrap(),
        "name": dranet_sec::slice::device_name(&nic(i)),
    })
}

/// The merged `NetworkConfig`: the profile beside the user's settings.
fn network_config(profile: Option<&str>) -> Value {
    let mut config = json!({"interface": {"name": "net1", "addresses": ["10.0.0.2/24"]}});
    if let Some(p) = profile {
        config["profile"] = json!(p);
    }
    config
}

/// The claim being prepared, as the kubelet hands it to DRANet (allocated).
fn claim() -> Value {
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "rdma", "namespace": "default", "uid": "0f3c-uid"},
        "spec": {"devices": {"requests": [{"name": "nic", "exactly": {
            "deviceClassName": "dranet.net", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "nic", "driver": "dra.net", "pool": "n1", "device": "macsec0"}]}}}
    })
}

/// A `ProfileRequest` as DRANet's `GetProfileConfig` marshals it
/// (`pkg/cloudprovider/webhook/webhook.go`): the device, the whole claim,
/// the merged config.
fn profile_req(device: Value, profile: Option<&str>) -> String {
    json!({"device": device, "claim": claim(), "config": network_config(profile)}).to_string()
}

/// A `ProfileRequest` as DRANet's `GetProfileConfig` sends it today: the
/// device, the claim's UID, the merged config.
fn profile_req_uid(device: Value, profile: Option<&str>) -> String {
    json!({"device": device, "claim_uid": "0f3c-uid", "config": network_config(profile)})
        .to_string()
}

/// A `ProfileReleaseRequest`, as `ReleaseProfileConfig` marshals it: the
/// claim's UID only.
fn release_req(device: Value, profile: Option<&str>) -> String {
    json!({"device": device, "claim_uid": "0f3c-uid", "config": network_config(profile)})
        .to_string()
}

fn call(c: &Config, n: &FakeNode, method: &str, path: &str, body: &str) -> (u16, String) {
    webhook::handle(c, n, method, path, body.as_bytes())
}

const PROTECTED: &str = "macsec.dranet-sec.io/protected";

#[test]
fn health_declares_both_capabilities() {
    let n = FakeNode::new("offload-mac", "none");
    let (code, body) = call(&cfg(false), &n, "GET", "/health", "");
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v, json!({"cloudProvider": true, "profileProvider": true}));
    assert_eq!(call(&cfg(false), &n, "POST", "/health", "").0, 405);
    // DRANet's client asks even while the kernel cannot be: still healthy.
    n.set(None);
    assert_eq!(call(&cfg(false), &n, "GET", "/health", "").0, 200);
}

#[test]
fn attributes_for_every_device() {
    let c = cfg(false);
    let n = FakeNode::new("offload-mac", "none");
    let attrs = |body: &str| -> BTreeMap<String, Value> {
        let (code, b) = call(&c, &n, "POST", "/GetDeviceAttributes", body);
        assert_eq!(code, 200, "{b}");
        serde_json::from_str(&b).unwrap()
    };
    let a = attrs(&ids(0).to_string());
    let want: BTreeMap<String, Value> = [
        ("macsecEgress", json!({"bool": true})),
        ("macsecIngressStrict", json!({"bool": true})),
        ("macsecValidate", json!({"string": "strict"})),
        ("macsecProtection", json!({"string": "offload-mac"})),
        ("macsecReason", json!({"string": "none"})),
        ("macsecRelation", json!({"string": "upper"})),
        ("macsecCipher", json!({"string": "gcm-aes-256"})),
        ("macsecProtectedGids", json!({"int": 0})),
    ]
    .into_iter()
    .map(|(k, v)| (format!("{DOMAIN}/{k}"), v))
    .collect();
    assert_eq!(a, want);
    // Go omits empty identifiers; the name alone finds the device.
    assert_eq!(attrs(r#"{"name":"pci-0000-10-00-0"}"#), want);
    let untracked: BTreeMap<String, Value> = [
        ("macsecEgress", json!({"bool": false})),
        ("macsecIngressStrict", json!({"bool": false})),
        ("macsecProtection", json!({"string": "none"})),
        ("macsecReason", json!({"string": "untracked"})),
        ("macsecProtectedGids", json!({"int": 0})),
    ]
    .into_iter()
    .map(|(k, v)| (format!("{DOMAIN}/{k}"), v))
    .collect();
    assert_eq!(attrs(&ids(1).to_string()), untracked);
    assert_eq!(attrs(r#"{"name":"eth9"}"#), untracked, "no such netdev");
    // The kernel cannot be asked, or sysfs read: definite attributes that
    // say so, never an error (DRANet would publish the device without
    // them, and a selector on them would meet a missing attribute).
    let unknown: BTreeMap<String, Value> = untracked
        .iter()
        .map(|(k, v)| {
            let reason = k.ends_with("/macsecReason");
            (
                k.clone(),
                if reason {
                    json!({"string": "unknown"})
                } else {
                    v.clone()
                },
            )
        })
        .collect();
    n.set(None);
    for i in 0..3 {
        assert_eq!(attrs(&ids(i).to_string()), unknown, "NIC {i}");
    }
    let (code, b) = webhook::handle(
        &c,
        &BrokenNode,
        "POST",
        "/GetDeviceAttributes",
        ids(0).to_string().as_bytes(),
    );
    assert_eq!(code, 200, "{b}");
    assert_eq!(
        serde_json::from_str::<BTreeMap<String, Value>>(&b).unwrap(),
        unknown
    );
    n.set(Some(("offload-mac", "none")));
    let (code, b) = call(
        &c,
        &n,
        "POST",
        "/GetDeviceAttributes?x=1",
        r#"{"name":"a","x":1}"#,
    );
    assert_eq!(
        code, 200,
        "unknown fields and a query string are ignored: {b}"
    );
}

/// DRANet merges a provider's attributes over its own unchecked, and the
/// API server rejects a whole slice for one value over 64 characters or a
/// device over 32 attributes: the webhook's answer fits beside DRANet's.
#[test]
fn attributes_fit_beside_dranets_own() {
    let c = cfg(false);
    let long = "x".repeat(65);
    let n = FakeNode::new("none", &long);
    let (code, b) = call(&c, &n, "POST", "/GetDeviceAttributes", &ids(0).to_string());
    assert_eq!(code, 200, "{b}");
    let a: BTreeMap<String, Value> = serde_json::from_str(&b).unwrap();
    assert_eq!(
        a[&format!("{DOMAIN}/macsecReason")],
        json!({"string": "unknown"}),
        "{b}"
    );
    // DRANet's own are counted at most: the modelled ones and the nine
    // unmodelled; a device that cannot be read counts as DRANet's most.
    let modelled = dranet_sec::attrs::dranet_attributes("dra.net", &nic(0)).len();
    assert_eq!(webhook::dranet_own(Some(&nic(0))), modelled + 9);
    assert_eq!(webhook::dranet_own(None), 25);
    // `type`, where the kind is known, is modelled: counted once either
    // way.
    let typed = NetDev {
        kind: Some(String::new()),
        ..nic(0)
    };
    assert_eq!(
        dranet_sec::attrs::dranet_attributes("dra.net", &typed).len(),
        modelled + 1
    );
    assert_eq!(webhook::dranet_own(Some(&typed)), modelled + 9);
    assert!(webhook::dranet_own(Some(&nic(0))) + a.len() <= 32);

    // Beside 28 of DRANet's own, four fit: the least needed go.
    let p = port(&nic(0), "offload-mac", "none");
    let mut m = dranet_sec::attrs::macsec_attributes(DOMAIN, Some(&p));
    assert_eq!(m.len(), 8);
    let warnings = dranet_sec::attrs::fit_beside(&mut m, 28);
    let kept: Vec<_> = m.keys().map(|k| k.rsplit('/').next().unwrap()).collect();
    assert_eq!(
        kept,
        [
            "macsecEgress",
            "macsecIngressStrict",
            "macsecProtection",
            "macsecReason"
        ]
    );
    let dropped = [
        "macsecCipher",
        "macsecValidate",
        "macsecRelation",
        "macsecProtectedGids",
    ];
    assert_eq!(warnings.len(), dropped.len(), "{warnings:?}");
    for (w, d) in warnings.iter().zip(dropped) {
        assert!(w.contains(d), "{warnings:?}");
    }
}

#[test]
fn device_config_is_empty_unless_enforcing() {
    let n = FakeNode::new("none", "no-active-tx-sa");
    for i in 0..3 {
        let (code, b) = call(
            &cfg(false),
            &n,
            "POST",
            "/GetDeviceConfig",
            &ids(i).to_string(),
        );
        assert_eq!((code, b.as_str()), (200, "{}"), "NIC {i}");
    }
    // Enforcing: only the port (whatever its state now) names the profile.
    let enforce = cfg(true);
    let conf = |i: usize| {
        let (code, b) = call(
            &enforce,
            &n,
            "POST",
            "/GetDeviceConfig",
            &ids(i).to_string(),
        );
        assert_eq!(code, 200, "{b}");
        serde_json::from_str::<Value>(&b).unwrap()
    };
    assert_eq!(conf(0), json!({"profile": PROTECTED}));
    assert_eq!(conf(1), json!({}), "an RDMA netdev that is no port");
    assert_eq!(conf(2), json!({}));
    // The kernel cannot be asked: RDMA netdevs get the profile (and are
    // refused at preparation), others do not.
    n.set(None);
    assert_eq!(conf(0), json!({"profile": PROTECTED}));
    assert_eq!(conf(1), json!({"profile": PROTECTED}));
    assert_eq!(conf(2), json!({}));
    // Nor can sysfs be read: every device gets it (an error here would
    // leave DRANet without a baseline, and the port unchecked).
    let (code, b) = webhook::handle(
        &enforce,
        &BrokenNode,
        "POST",
        "/GetDeviceConfig",
        ids(2).to_string().as_bytes(),
    );
    assert_eq!(
        (code, b.as_str()),
        (200, r#"{"profile":"macsec.dranet-sec.io/protected"}"#)
    );
    let (code, b) = webhook::handle(
        &cfg(false),
        &BrokenNode,
        "POST",
        "/GetProfileConfig",
        profile_req(ids(0), Some(PROTECTED)).as_bytes(),
    );
    assert_eq!(code, 500);
    assert_eq!(error_of(&b), "/sys/class/net: Permission denied");
}

#[test]
fn profile_refuses_an_unprotected_port_with_the_reason() {
    let c = cfg(false);
    let n = FakeNode::new("offload-mac", "none");
    let req = profile_req(ids(0), Some(PROTECTED));
    // Protected: 200 with an empty NetworkConfig, the same on a retry.
    for _ in 0..2 {
        let (code, b) = call(&c, &n, "POST", "/GetProfileConfig", &req);
        assert_eq!((code, b.as_str()), (200, "{}"));
    }
    n.set(Some(("software", "offload-off")));
    let (code, b) = call(&c, &n, "POST", "/GetProfileConfig", &req);
    assert_eq!(code, 409, "{b}");
    assert_eq!(
        error_of(&b),
        "ens10: RDMA egress is not hardware-MACsec protected (protection software, reason offload-off)"
    );
    // Protection back: the kubelet's retry succeeds.
    n.set(Some(("offload-phy", "none")));
    assert_eq!(call(&c, &n, "POST", "/GetProfileConfig", &req).0, 200);

    let (code, b) = call(
        &c,
        &n,
        "POST",
        "/GetProfileConfig",
        &profile_req(ids(1), Some(PROTECTED)),
    );
    assert_eq!(code, 409);
    assert_eq!(
        error_of(&b),
        "ens11: not an RDMA port known to macsec_bridge, so its egress is not protected"
    );
    let gone = json!({"name": "pci-0000-99-00-0"});
    let (code, b) = call(
        &c,
        &n,
        "POST",
        "/GetProfileConfig",
        &profile_req(gone, Some(PROTECTED)),
    );
    assert_eq!(code, 409);
    assert_eq!(
        error_of(&b),
        r#"device "pci-0000-99-00-0": no such netdev on this node"#
    );

    // Not our profile, or none: 404, as DRANet's page asks.
    let (code, b) = call(
        &c,
        &n,
        "POST",
        "/GetProfileConfig",
        &profile_req(ids(0), Some("acme.com/ipam")),
    );
    assert_eq!(code, 404);
    assert_eq!(
        error_of(&b),
        r#"profile "acme.com/ipam" not found; this provider serves "macsec.dranet-sec.io/protected""#
    );
    assert_eq!(
        call(
            &c,
            &n,
            "POST",
            "/GetProfileConfig",
            &profile_req(ids(0), None)
        )
        .0,
        404
    );
    let no_config = json!({"device": ids(0), "claim": claim()}).to_string();
    assert_eq!(call(&c, &n, "POST", "/GetProfileConfig", &no_config).0, 404);

    // The kernel cannot be asked: a temporary failure, the kubelet retries.
    n.set(None);
    let (code, b) = call(&c, &n, "POST", "/GetProfileConfig", &req);
    assert_eq!(code, 500);
    assert!(error_of(&b).contains("module loaded"), "{b}");
}

#[test]
fn release_always_succeeds() {
    let n = FakeNode::new("none", "no-secy");
    for p in [Some(PROTECTED), Some("acme.com/ipam"), None] {
        let (code, b) = call(
            &cfg(true),
            &n,
            "POST",
            "/ReleaseProfileConfig",
            &release_req(ids(0), p),
        );
        assert_eq!((code, b.as_str()), (200, "{}"));
    }
    n.set(None);
    assert_eq!(
        call(
            &cfg(true),
            &n,
            "POST",
            "/ReleaseProfileConfig",
            &release_req(ids(0), None)
        )
        .0,
        200
    );
}

#[test]
fn bad_requests_get_a_status_and_a_message() {
    let c = cfg(true);
    let n = FakeNode::new("offload-mac", "none");
    for path in [
        "/GetDeviceAttributes",
        "/GetDeviceConfig",
        "/GetProfileConfig",
        "/ReleaseProfileConfig",
    ] {
        let (code, b) = call(&c, &n, "POST", path, "{not json");
        assert_eq!(code, 400, "{path}");
        assert!(
            error_of(&b).starts_with("malformed request: "),
            "{path}: {b}"
        );
        assert_eq!(call(&c, &n, "GET", path, "").0, 405, "{path}");
        let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(200 * 1024));
        assert_eq!(call(&c, &n, "POST", path, &big).0, 413, "{path}");
    }
    for path in ["/GetDeviceAttributes", "/GetDeviceConfig"] {
        let (code, b) = call(&c, &n, "POST", path, "{}");
        assert_eq!(code, 400);
        assert_eq!(error_of(&b), "name, mac_address or pci_address needed");
        assert_eq!(call(&c, &n, "POST", path, r#"{"name": 5}"#).0, 400);
    }
    // A ProfileRequest without its device is malformed, and so is one
    // whose claim is not a ResourceClaim.
    assert_eq!(
        call(&c, &n, "POST", "/GetProfileConfig", r#"{"claim":{}}"#).0,
        400
    );
    let not_a_claim = json!({"device": ids(0), "claim": {"spec": 5},
                             "config": network_config(Some(PROTECTED))});
    assert_eq!(
        call(
            &c,
            &n,
            "POST",
            "/GetProfileConfig",
            &not_a_claim.to_string()
        )
        .0,
        400
    );
    let (code, b) = call(&c, &n, "POST", "/Other", "{}");
    assert_eq!(code, 404);
    assert_eq!(error_of(&b), r#"unknown path "/Other""#);
}

/// Sends `raw`, returns (status, body).
fn raw_call(sock: &Path, raw: &[u8]) -> (u16, String) {
    let mut s = UnixStream::connect(sock).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may answer, and close, before an oversized body is sent.
    let _ = s.write_all(raw);
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

/// What DRANet's `http.Client` sends (host `localhost` for a unix URL).
fn request(method: &str, path: &str, body: &str) -> Vec<u8> {
    let ct = if body.is_empty() {
        ""
    } else {
        "Content-Type: application/json\r\n"
    };
    format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{ct}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// DRANet's whole conversation over the unix socket: health at start,
/// attributes and baseline config per scan, a profile at preparation, a
/// release at teardown; then the server survives garbage.
#[test]
fn dranets_conversation_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("webhook.sock");
    let node = FakeNode::new("offload-mac", "none");
    let (tx, rx) = std::sync::mpsc::channel();
    let (path, served) = (sock.clone(), node.clone());
    std::thread::spawn(move || {
        let ready = move || tx.send(()).unwrap();
        webhook::serve(&cfg(true), &served, &path, &ready).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let go = |m: &str, p: &str, b: &str| raw_call(&sock, &request(m, p, b));

    let (code, body) = go("GET", "/health", "");
    assert_eq!(code, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"cloudProvider": true, "profileProvider": true})
    );
    let (code, body) = go("POST", "/GetDeviceAttributes", &ids(0).to_string());
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v[format!("{DOMAIN}/macsecEgress")], json!({"bool": true}));
    let (code, body) = go("POST", "/GetDeviceConfig", &ids(0).to_string());
    assert_eq!(
        (code, serde_json::from_str::<Value>(&body).unwrap()),
        (200, json!({"profile": PROTECTED}))
    );

    let req = profile_req(ids(0), Some(PROTECTED));
    assert_eq!(
        go("POST", "/GetProfileConfig", &req),
        (200, "{}".to_string())
    );
    node.set(Some(("none", "no-active-tx-sa")));
    let (code, body) = go("POST", "/GetProfileConfig", &req);
    assert_eq!(code, 409);
    assert!(error_of(&body).contains("reason no-active-tx-sa"), "{body}");
    assert_eq!(
        go(
            "POST",
            "/ReleaseProfileConfig",
            &release_req(ids(0), Some(PROTECTED))
        ),
        (200, "{}".to_string())
    );

    let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(200 * 1024));
    assert_eq!(go("POST", "/GetDeviceAttributes", &big).0, 413);
    let _ = raw_call(&sock, b"\x00\x01\x02 garbage\r\n\r\n");
    assert_eq!(
        go("GET", "/health", "").0,
        200,
        "still serving after all that"
    );
}

/// DRANet's `GetProfileConfig` as it is today (the claim's UID) and as an
/// open pull request makes it (the whole claim), for the device named as
/// DRANet names it (`pci-…`) and by PCI address alone: the same answers.
#[test]
fn profile_takes_either_request_shape() {
    let c = cfg(false);
    let n = FakeNode::new("offload-mac", "none");
    let by_name = json!({"name": dranet_sec::slice::device_name(&nic(0))});
    let by_pci = json!({"pci_address": nic(0).pci_address.unwrap()});
    for device in [ids(0), by_name, by_pci] {
        for req in [
            profile_req(device.clone(), Some(PROTECTED)),
            profile_req_uid(device.clone(), Some(PROTECTED)),
        ] {
            n.set(Some(("offload-mac", "none")));
            let (code, b) = call(&c, &n, "POST", "/GetProfileConfig", &req);
            assert_eq!((code, b.as_str()), (200, "{}"), "{req}");
            n.set(Some(("none", "no-active-tx-sa")));
            let (code, b) = call(&c, &n, "POST", "/GetProfileConfig", &req);
            assert_eq!(code, 409, "{req}: {b}");
            assert!(error_of(&b).contains("reason no-active-tx-sa"), "{b}");
        }
    }
    // A UID that is not a string is no request DRANet sends.
    let bad = json!({"device": ids(0), "claim_uid": 7, "config": network_config(Some(PROTECTED))});
    assert_eq!(
        call(&c, &n, "POST", "/GetProfileConfig", &bad.to_string()).0,
        400
    );
}
