// SPDX-License-Identifier: GPL-2.0
//! A DRANet "bring your own provider" webhook: DRANet
//! (`--cloud-provider-hint=webhook --webhook-url=unix:///PATH`) POSTs
//! `/GetDeviceAttributes` with `{"mac_address","pci_address","name"}` for
//! every device on every scan, and merges the map of qualified name to
//! DeviceAttribute it gets back. So DRANet itself publishes the MACsec
//! attributes, unforked.

use anyhow::{Context as _, Result};
use k8s_openapi::api::resource::v1::DeviceAttribute;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Larger bodies are refused (413): a request is three short strings.
pub const MAX_BODY: u64 = 64 * 1024;

/// What DRANet asks about.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct DeviceQuery {
    #[serde(default)]
    pub mac_address: String,
    #[serde(default)]
    pub pci_address: String,
    #[serde(default)]
    pub name: String,
}

pub type Attributes = BTreeMap<String, DeviceAttribute>;

/// One request, without the transport: status and JSON body.
pub fn handle(
    method: &str,
    url: &str,
    body: &[u8],
    lookup: &dyn Fn(&DeviceQuery) -> Result<Attributes>,
) -> (u16, String) {
    let err = |code: u16, msg: &str| (code, serde_json::json!({ "error": msg }).to_string());
    let path = url.split('?').next().unwrap_or("");
    if path != "/GetDeviceAttributes" {
        return err(
            404,
            "unknown path; this provider answers POST /GetDeviceAttributes",
        );
    }
    if method != "POST" {
        return err(405, "use POST");
    }
    if body.len() as u64 > MAX_BODY {
        return err(413, "request body too large");
    }
    let q: DeviceQuery = match serde_json::from_slice(body) {
        Ok(q) => q,
        Err(e) => return err(400, &format!("malformed request: {e}")),
    };
    if q.name.is_empty() && q.mac_address.is_empty() && q.pci_address.is_empty() {
        return err(400, "name, mac_address or pci_address needed");
    }
    match lookup(&q).and_then(|a| Ok(serde_json::to_string(&a)?)) {
        Ok(body) => (200, body),
        Err(e) => err(500, &format!("{e:#}")),
    }
}

/// Serves `lookup` on a unix socket at `path`, forever; `ready` is called
/// once it listens.
pub fn serve(
    path: &Path,
    lookup: &dyn Fn(&DeviceQuery) -> Result<Attributes>,
    ready: &dyn Fn(),
) -> Result<()> {
    let _ = std::fs::remove_file(path);
    let server = tiny_http::Server::http_unix(path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    ready();
    loop {
        let mut req = server.recv().context("accept")?;
        let mut body = Vec::new();
        // One byte past the limit tells an oversized body from a full one.
        let read = req.as_reader().take(MAX_BODY + 1).read_to_end(&mut body);
        let (code, text) = match read {
            Ok(_) => handle(&req.method().to_string(), req.url(), &body, lookup),
            Err(e) => (
                400,
                serde_json::json!({ "error": format!("reading body: {e}") }).to_string(),
            ),
        };
        let json = tiny_http::Header::from_bytes("Content-Type", "application/json")
            .expect("static header");
        let resp = tiny_http::Response::from_string(text)
            .with_status_code(code)
            .with_header(json);
        // A client that went away is its own problem.
        let _ = req.respond(resp);
    }
}
