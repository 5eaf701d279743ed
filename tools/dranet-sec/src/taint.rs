// SPDX-License-Identifier: GPL-2.0
//! Device taints (`resource.k8s.io/v1`, KEP-5055): an RDMA port whose
//! egress is not hardware-MACsec protected carries `<domain>/unprotected`,
//! its value the kernel's reason. The scheduler does not allocate a tainted
//! device to a claim that does not tolerate the taint (`NoSchedule`), and
//! with `NoExecute` the kube-controller-manager also evicts the pods of
//! claims already allocated to it.

use crate::attrs::{self, NetDev};
use crate::state::PortState;
use k8s_openapi::api::resource::v1::{Device, DeviceTaint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;

/// `ResourceSliceMaxDeviceTaintsPerDevice`.
pub const MAX_TAINTS_PER_DEVICE: usize = 16;
/// `ResourceSliceMaxDevicesWithTaintsOrConsumesCounters`: a slice with any
/// tainted device holds at most this many devices.
pub const MAX_DEVICES_PER_TAINTED_SLICE: usize = 64;
/// A label value: at most 63 characters.
pub const MAX_LABEL_VALUE_LEN: usize = 63;

/// What a taint does to claims that do not tolerate it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Effect {
    /// New claims are not allocated the device; running pods stay.
    #[default]
    NoSchedule,
    /// Also evict the pods of claims allocated the device.
    NoExecute,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::NoSchedule => "NoSchedule",
            Effect::NoExecute => "NoExecute",
        }
    }
}

/// The taint key under `domain`.
pub fn key(domain: &str) -> String {
    format!("{domain}/unprotected")
}

/// A label value: empty, or alphanumerics at both ends with `-`, `_`, `.`
/// between, at most 63 characters.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    b.is_empty()
        || (b.len() <= MAX_LABEL_VALUE_LEN
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(inner))
}

/// A label name (a taint key): an optional DNS-subdomain prefix of at most
/// 253 characters and `/`, then a name of at most 63 characters as a label
/// value, not empty.
pub fn is_label_name(s: &str) -> bool {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let prefix_ok = prefix.is_none_or(|p| p.len() <= 253 && p.split('.').all(attrs::is_dns_label));
    prefix_ok && !name.is_empty() && is_label_value(name)
}

/// Why `dev` should be tainted, or `None`: an RDMA netdev (or any port the
/// kernel tracks) whose egress is not offload-protected. The reason is the
/// kernel's (`untracked` for an RDMA netdev it has no port for).
pub fn reason(dev: &NetDev, port: Option<&PortState>) -> Option<String> {
    match port {
        Some(p) => reason_of(p),
        None if dev.rdma_devices.is_empty() => None,
        None => Some("untracked".to_string()),
    }
}

/// Why port `p` should be tainted, or `None` when its egress is
/// offload-protected: the kernel's reason (`unknown` if it is no label
/// value).
pub fn reason_of(p: &PortState) -> Option<String> {
    if p.offloaded() {
        None
    } else if is_label_value(&p.reason) && !p.reason.is_empty() {
        Some(p.reason.clone())
    } else {
        Some("unknown".to_string())
    }
}

/// The taint for `reason`, not yet stamped.
pub fn taint(domain: &str, effect: Effect, reason: &str) -> DeviceTaint {
    DeviceTaint {
        key: key(domain),
        value: Some(reason.to_string()),
        effect: effect.as_str().to_string(),
        time_added: None,
    }
}

/// When each tainted thing (a device, a rule) was first seen tainted, so
/// that every emission while the drop lasts carries the same `timeAdded`.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    since: BTreeMap<String, Timestamp>,
}

impl Clock {
    /// Starts from times already published (a restart keeps them).
    pub fn seeded(since: BTreeMap<String, Timestamp>) -> Self {
        Clock { since }
    }

    /// The tainted ones are `names`: each keeps the time it was first
    /// seen, a new one gets `now`, and the others are forgotten (a later
    /// drop is a new taint). Returns the time of each of `names`.
    pub fn observe(&mut self, names: &[String], now: Timestamp) -> &BTreeMap<String, Timestamp> {
        let since = names
            .iter()
            .map(|n| (n.clone(), *self.since.get(n).unwrap_or(&now)))
            .collect();
        self.since = since;
        &self.since
    }

    /// Stamps the `key` taint of each of `devices` (by device name).
    pub fn stamp(&mut self, key: &str, devices: &mut [Device], now: Timestamp) {
        let has = |d: &Device| d.taints.iter().flatten().any(|t| t.key == key);
        let names: Vec<String> = devices
            .iter()
            .filter(|d| has(d))
            .map(|d| d.name.clone())
            .collect();
        let since = self.observe(&names, now);
        for d in devices.iter_mut() {
            let at = since.get(&d.name).copied();
            for t in d.taints.iter_mut().flatten().filter(|t| t.key == key) {
                t.time_added = at.map(Time);
            }
        }
    }
}
