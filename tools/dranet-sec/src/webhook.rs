// SPDX-License-Identifier: GPL-2.0
//! A DRANet "bring your own provider" webhook, both a cloud provider and a
//! profile provider, on a unix socket.
//!
//! The contract is DRANet's client, `pkg/cloudprovider/webhook/webhook.go`
//! (kubernetes-sigs/dranet), and its page
//! `site/content/docs/contributing/webhook-providers.md`:
//!
//! - `GET /health`: `200` and the capabilities object
//!   `{"cloudProvider": bool, "profileProvider": bool, "runtimeHook": bool}`
//!   (`runtimeHook` omitted when false, as DRANet marshals it). DRANet reads
//!   it once at start; without `cloudProvider` it never asks for
//!   attributes, without `profileProvider` it refuses
//!   `--profile-provider=webhook`. This provider has no runtime hook.
//! - `POST /GetDeviceAttributes`, body `DeviceIdentifiers`
//!   (`{"mac_address","pci_address","name"}`, the first two omitted when
//!   empty): a map of qualified name to `DeviceAttribute`, merged into the
//!   device. Asked for every device on every scan. Always `200` for a
//!   well-formed request: when the kernel (or sysfs) cannot be asked, the
//!   attributes say so (`macsecEgress` false, reason `unknown`), since
//!   DRANet publishes a device whose provider failed without them.
//! - `POST /GetDeviceConfig`, same body: the device's baseline
//!   `NetworkConfig`, asked right after. This provider has none (`{}`),
//!   unless enforcing: then a port's baseline names [`profile`], so that
//!   DRANet asks the profile provider before preparing it. Only the cloud
//!   provider is asked for a baseline: enforcing needs DRANet started with
//!   `--cloud-provider-hint=webhook`.
//! - `POST /GetProfileConfig`, body `ProfileRequest` (`{"device":
//!   DeviceIdentifiers, "claim_uid", "config": NetworkConfig}` as DRANet
//!   sends it today, or with the whole claim, `"claim": ResourceClaim`,
//!   instead of its UID, as an open pull request does; `config` omitted
//!   when nil),
//!   sent from `NodePrepareResources` when the merged config names a
//!   profile: `200` and a `NetworkConfig` to merge, or an error status that
//!   fails the preparation, the body shown in the pod's events. Here: `404`
//!   for a profile this provider does not serve, `409` when the port is
//!   not hardware-protected now (the kubelet retries, so the pod starts
//!   once protection returns), `500` when the kernel cannot be asked.
//!   Stateless, hence idempotent.
//! - `POST /ReleaseProfileConfig`, body `ProfileReleaseRequest`
//!   (`{"device": DeviceIdentifiers, "claim_uid", "config"}`: the kubelet's
//!   unprepare has no claim, only its UID): `200`, nothing to free.
//!
//! DRANet treats any status but `200` as failure and shows the body; a
//! malformed body is `400`, an unknown path `404`, a wrong method `405`.

use crate::attrs::{self, NetDev};
use crate::state::PortState;
use anyhow::{Context as _, Result};
use k8s_openapi::api::resource::v1::{DeviceAttribute, ResourceClaim};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Larger bodies are refused (413): DRANet sends identifiers and one
/// interface's `NetworkConfig`.
pub const MAX_BODY: u64 = 64 * 1024;

/// DRANet's `cloudprovider.DeviceIdentifiers`: which device it means.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct DeviceQuery {
    #[serde(default)]
    pub mac_address: String,
    #[serde(default)]
    pub pci_address: String,
    #[serde(default)]
    pub name: String,
}

/// DRANet's `webhook.ProfileRequest`: the device, the claim being prepared
/// (a `resource.k8s.io/v1` `ResourceClaim`, read with the official types so
/// that a body DRANet could not have sent is refused) and the merged
/// `apis.NetworkConfig`, of which only `profile` matters here; the rest is
/// passed through untouched and unread.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct ProfileRequest {
    pub device: DeviceQuery,
    /// The claim's UID: what DRANet's `GetProfileConfig` sends today.
    #[serde(default)]
    pub claim_uid: String,
    /// The whole claim, as an open DRANet pull request sends it instead.
    #[serde(default)]
    pub claim: Option<ResourceClaim>,
    #[serde(default)]
    pub config: Option<serde_json::Value>,
}

/// DRANet's `webhook.ProfileReleaseRequest`: what `NodeUnprepareResources`
/// knows, the claim's UID instead of the claim.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct ReleaseRequest {
    pub device: DeviceQuery,
    #[serde(default)]
    pub claim_uid: String,
    #[serde(default)]
    pub config: Option<serde_json::Value>,
}

pub type Attributes = BTreeMap<String, DeviceAttribute>;

/// The node, as the webhook sees it; a fake one in tests.
pub trait Node {
    /// The netdev DRANet means, if this node has it.
    fn device(&self, q: &DeviceQuery) -> Result<Option<NetDev>>;
    /// The kernel's port object for `ifname`, if `macsec_bridge` tracks
    /// one. An error means the kernel could not be asked.
    fn port(&self, ifname: &str) -> Result<Option<PortState>>;
}

/// How the webhook answers.
#[derive(Clone, Debug)]
pub struct Config {
    /// Domain of the MACsec attributes, and of [`profile`].
    pub domain: String,
    /// Give every port a baseline config naming [`profile`], so that no
    /// port is prepared for a pod without the check, whether or not the
    /// claim asks for it.
    pub enforce: bool,
}

/// The profile this provider serves: "prepare only while the port's RDMA
/// egress is hardware-MACsec protected".
pub fn profile(domain: &str) -> String {
    format!("{domain}/protected")
}

/// What `GET /health` answers.
pub const CAPABILITIES: &str = r#"{"cloudProvider":true,"profileProvider":true}"#;

type Reply = (u16, String);

fn err(code: u16, msg: &str) -> Reply {
    (code, serde_json::json!({ "error": msg }).to_string())
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Reply> {
    if body.len() as u64 > MAX_BODY {
        return Err(err(413, "request body too large"));
    }
    serde_json::from_slice(body).map_err(|e| err(400, &format!("malformed request: {e}")))
}

fn device_query(body: &[u8]) -> Result<DeviceQuery, Reply> {
    let q: DeviceQuery = parse(body)?;
    if q.name.is_empty() && q.mac_address.is_empty() && q.pci_address.is_empty() {
        return Err(err(400, "name, mac_address or pci_address needed"));
    }
    Ok(q)
}

fn internal(e: anyhow::Error) -> Reply {
    err(500, &format!("{e:#}"))
}

/// The netdev and its port object, if any.
fn lookup(node: &dyn Node, q: &DeviceQuery) -> Result<Option<(NetDev, Option<PortState>)>> {
    let Some(dev) = node.device(q)? else {
        return Ok(None);
    };
    let port = node.port(&dev.ifname)?;
    Ok(Some((dev, port)))
}

/// DRANet's own attributes that this crate's model of them
/// ([`attrs::dranet_attributes`]) leaves out, `type` where the netdev's
/// kind was not read (the webhook reads sysfs alone). Counted as present,
/// so that the room left for this provider's is never overestimated.
pub const DRANET_UNMODELLED: [&str; 9] = [
    "encapsulation",
    "alias",
    "type",
    "ipv4",
    "ipv6",
    "tcFilterNames",
    "tcxProgramNames",
    "ebpf",
    "pciSubsystem",
];

/// The most attributes DRANet publishes of a netdev of its own (about 25:
/// every one it knows of, a cloud provider's aside, since this provider is
/// the one DRANet asks).
pub const DRANET_MOST: usize = 25;

/// How many attributes DRANet publishes of its own for `dev` at most;
/// [`DRANET_MOST`] for a device that could not be read.
pub fn dranet_own(dev: Option<&NetDev>) -> usize {
    dev.map_or(DRANET_MOST, |d| {
        let modelled = attrs::dranet_attributes("dra.net", d);
        let unmodelled = DRANET_UNMODELLED
            .iter()
            .filter(|id| !modelled.contains_key(&format!("dra.net/{id}")))
            .count();
        modelled.len() + unmodelled
    })
}

fn attributes(cfg: &Config, node: &dyn Node, body: &[u8]) -> Result<Reply, Reply> {
    let q = device_query(body)?;
    let unknown = |e: anyhow::Error| {
        eprintln!("dranet-sec: attributes of {q:?}: {e:#}; published as unknown");
        attrs::unknown_attributes(&cfg.domain)
    };
    let (mut a, own) = match node.device(&q) {
        Err(e) => (unknown(e), dranet_own(None)),
        Ok(None) => (
            attrs::macsec_attributes(&cfg.domain, None),
            dranet_own(None),
        ),
        Ok(Some(dev)) => match node.port(&dev.ifname) {
            Ok(p) => (
                attrs::macsec_attributes(&cfg.domain, p.as_ref()),
                dranet_own(Some(&dev)),
            ),
            Err(e) => (unknown(e), dranet_own(Some(&dev))),
        },
    };
    for w in attrs::fit_beside(&mut a, own) {
        eprintln!("dranet-sec: attributes of {q:?}: {w}");
    }
    Ok((
        200,
        serde_json::to_string(&a).map_err(|e| internal(e.into()))?,
    ))
}

fn device_config(cfg: &Config, node: &dyn Node, body: &[u8]) -> Result<Reply, Reply> {
    let q = device_query(body)?;
    if !cfg.enforce {
        return Ok((200, "{}".into()));
    }
    // DRANet asks once a scan, keeps no baseline after an error, and then
    // never asks the profile: a failure must not lift the guard. So a
    // port, an RDMA netdev the kernel could not be asked about, and any
    // device when sysfs cannot be read get the profile, and the check
    // happens (and fails closed) at preparation. A netdev that does not
    // exist is no port of ours.
    let guarded = match node.device(&q) {
        Err(_) => true,
        Ok(None) => false,
        Ok(Some(dev)) => match node.port(&dev.ifname) {
            Ok(p) => p.is_some(),
            Err(_) => !dev.rdma_devices.is_empty(),
        },
    };
    if !guarded {
        return Ok((200, "{}".into()));
    }
    let conf = serde_json::json!({ "profile": profile(&cfg.domain) });
    Ok((200, conf.to_string()))
}

/// Why a device may not be prepared now, or `None` if it may.
fn refusal(q: &DeviceQuery, found: Option<(NetDev, Option<PortState>)>) -> Option<String> {
    let Some((dev, port)) = found else {
        return Some(format!("device {:?}: no such netdev on this node", q.name));
    };
    let Some(p) = port else {
        return Some(format!(
            "{}: not an RDMA port known to macsec_bridge, so its egress is not protected",
            dev.ifname
        ));
    };
    if p.offloaded() {
        return None;
    }
    Some(format!(
        "{}: RDMA egress is not hardware-MACsec protected (protection {}, reason {})",
        p.ifname, p.protection, p.reason
    ))
}

fn profile_config(cfg: &Config, node: &dyn Node, body: &[u8]) -> Result<Reply, Reply> {
    let req: ProfileRequest = parse(body)?;
    let name = req
        .config
        .as_ref()
        .and_then(|c| c.get("profile"))
        .and_then(|p| p.as_str())
        .unwrap_or("");
    let ours = profile(&cfg.domain);
    if name != ours {
        return Err(err(
            404,
            &format!("profile {name:?} not found; this provider serves {ours:?}"),
        ));
    }
    let found = lookup(node, &req.device).map_err(internal)?;
    match refusal(&req.device, found) {
        Some(why) => Err(err(409, &why)),
        None => Ok((200, "{}".into())),
    }
}

fn release(body: &[u8]) -> Result<Reply, Reply> {
    let _: ReleaseRequest = parse(body)?;
    Ok((200, "{}".into()))
}

/// One request, without the transport: status and JSON body.
pub fn handle(cfg: &Config, node: &dyn Node, method: &str, url: &str, body: &[u8]) -> Reply {
    let path = url.split('?').next().unwrap_or("");
    let want = match path {
        "/health" => "GET",
        "/GetDeviceAttributes"
        | "/GetDeviceConfig"
        | "/GetProfileConfig"
        | "/ReleaseProfileConfig" => "POST",
        _ => return err(404, &format!("unknown path {path:?}")),
    };
    if method != want {
        return err(405, &format!("use {want} {path}"));
    }
    let r = match path {
        "/health" => Ok((200, CAPABILITIES.to_string())),
        "/GetDeviceAttributes" => attributes(cfg, node, body),
        "/GetDeviceConfig" => device_config(cfg, node, body),
        "/GetProfileConfig" => profile_config(cfg, node, body),
        _ => release(body),
    };
    r.unwrap_or_else(|e| e)
}

/// Serves on a unix socket at `path`, forever; `ready` is called once it
/// listens.
pub fn serve(cfg: &Config, node: &dyn Node, path: &Path, ready: &dyn Fn()) -> Result<()> {
    let _ = std::fs::remove_file(path);
    let server = tiny_http::Server::http_unix(path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    ready();
    let json = tiny_http::Header::from_bytes("Content-Type", "application/json")
        .map_err(|()| anyhow::anyhow!("content-type header"))?;
    loop {
        let mut req = server.recv().context("accept")?;
        let mut body = Vec::new();
        // One byte past the limit tells an oversized body from a full one.
        let read = req.as_reader().take(MAX_BODY + 1).read_to_end(&mut body);
        let (code, text) = match read {
            Ok(_) => handle(cfg, node, &req.method().to_string(), req.url(), &body),
            Err(e) => err(400, &format!("reading body: {e}")),
        };
        let resp = tiny_http::Response::from_string(text)
            .with_status_code(code)
            .with_header(json.clone());
        // A client that went away is its own problem.
        let _ = req.respond(resp);
    }
}
