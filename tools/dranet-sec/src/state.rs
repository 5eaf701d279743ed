// SPDX-License-Identifier: GPL-2.0
//! What the kernel says about one RDMA port: a `macsec_bridge` port object.
//!
//! Field names are those of the YNL spec
//! (`Documentation/netlink/specs/macsec_bridge.yaml`), so a
//! `cli.py --dump dev-get --output-json` can be read as a list of these.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One port object of the `macsec-bridge` family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PortState {
    pub ifindex: u32,
    pub ifname: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rdma_dev: Vec<String>,
    /// `none`, `software`, `offload-mac` or `offload-phy`.
    pub protection: String,
    /// `none` when offload-protected, else why not.
    pub reason: String,
    /// `self`, `upper` or `bound`; absent without a SecY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secy_ifindex: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secy_netnsid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sci: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypt: Option<u8>,
    /// `disabled`, `check` or `strict`, for an observed, offloaded SecY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate: Option<String>,
    /// With `validate`: 1 if the driver lets plaintext reach the SecY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_plaintext: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_owner: Option<String>,
    pub generation: u64,
    /// Reason `partial`: the port's GIDs on which RoCE crosses the SecY
    /// (as sysfs shows them), while it protects them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_gids: Vec<String>,
    /// The port across namespace moves and renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_id: Option<u64>,
    /// In the host's view: the port's namespace, as the initial namespace's
    /// id for it; absent for a port in the initial namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netnsid: Option<i32>,
}

impl PortState {
    /// Whether the port's egress is protected by a hardware-offloaded SecY:
    /// what `macsecEgress` publishes.
    pub fn offloaded(&self) -> bool {
        self.protection.starts_with("offload-")
    }

    /// Whether what the port receives through its SecY is only what the
    /// SecY verified: egress offload-protected (the same SecY), `validate
    /// strict`, and a driver that hands the SecY only what it decrypted.
    /// What `macsecIngressStrict` publishes.
    pub fn ingress_strict(&self) -> bool {
        self.offloaded()
            && self.validate.as_deref() == Some("strict")
            && self.rx_plaintext == Some(0)
    }
}

/// `ports` by interface name, the first of a name winning: what the node's
/// netdevs are matched with, in O(log P) each rather than a scan of every
/// port per netdev.
pub fn by_ifname(ports: &[PortState]) -> BTreeMap<&str, &PortState> {
    let mut m = BTreeMap::new();
    for p in ports {
        m.entry(p.ifname.as_str()).or_insert(p);
    }
    m
}
