// SPDX-License-Identifier: GPL-2.0
//! Device attributes, named as DRANet names them, plus the MACsec ones, and
//! the `resource.k8s.io/v1` limits they must fit.
//!
//! The API server rejects a whole ResourceSlice for one bad attribute
//! (kubernetes-sigs/dranet PR #198: one long string); an attribute that does
//! not fit is therefore left out, with a warning, never published.

use crate::pciids::PciIds;
use crate::state::PortState;
use k8s_openapi::api::resource::v1::DeviceAttribute;
use std::collections::BTreeMap;

/// `DeviceMaxIDLength`: the identifier part of an attribute name.
pub const MAX_ID_LEN: usize = 32;
/// `DeviceMaxDomainLength`.
pub const MAX_DOMAIN_LEN: usize = 63;
/// `DeviceAttributeMaxValueLength`: strings and versions.
pub const MAX_VALUE_LEN: usize = 64;
/// `ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
pub const MAX_ATTRS: usize = 32;
/// `ResourceSliceMaxDevices`.
pub const MAX_DEVICES_PER_SLICE: usize = 128;
/// The standard domain of `numaNode` and `pcieRoot`.
pub const K8S_DOMAIN: &str = "resource.kubernetes.io";

/// A netdev as discovery sees it (sysfs, rdma netlink).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetDev {
    pub ifname: String,
    pub mac: Option<String>,
    pub mtu: Option<i64>,
    pub state: Option<String>,
    pub virtual_: bool,
    pub pci_address: Option<String>,
    /// The PCI vendor and device ids, as sysfs shows them (`0x15b3`):
    /// published as their names ([`crate::pciids`]).
    pub pci_vendor: Option<String>,
    pub pci_device: Option<String>,
    pub numa_node: Option<i64>,
    pub pcie_root: Option<String>,
    pub sriov_total_vfs: Option<i64>,
    pub sriov_num_vfs: Option<i64>,
    pub is_sriov_vf: bool,
    pub rdma_devices: Vec<String>,
    /// What rtnetlink says the link is (`IFLA_INFO_KIND`: `veth`,
    /// `macsec`, ...; empty for a link without one, a NIC's netdev);
    /// `None` where it was not asked (the webhook reads sysfs alone).
    pub kind: Option<String>,
}

/// `dra.net/type` as DRANet publishes it for a link of `kind` (see
/// [`NetDev::kind`]): what its netlink library (vishvananda/netlink
/// v1.3.1, `LinkDeserialize` and each link's `Type()`) calls it. That is
/// the kind itself, `device` for none, `tuntap` for `tun`; `None` for the
/// GRE and VTI kinds, which it names after the tunnel's local address
/// (`gre` or `ip6gre` by whether it reads as IPv4), never read here.
pub fn dranet_type(kind: &str) -> Option<&str> {
    match kind {
        "" => Some("device"),
        "tun" => Some("tuntap"),
        "gre" | "ip6gre" | "gretap" | "ip6gretap" | "vti" | "vti6" => None,
        k => Some(k),
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`, at most 32 characters.
pub fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        && s.len() <= MAX_ID_LEN
}

/// An RFC 1123 DNS label: lowercase alphanumerics and `-`, starting and
/// ending with an alphanumeric, at most 63 characters.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1123 subdomain short enough to be an attribute's domain.
pub fn is_domain(s: &str) -> bool {
    s.len() <= MAX_DOMAIN_LEN && s.split('.').all(is_dns_label)
}

/// Whether `name` is a valid qualified attribute name (`domain/id` or `id`).
pub fn is_qualified_name(name: &str) -> bool {
    match name.split_once('/') {
        Some((d, id)) => is_domain(d) && is_identifier(id),
        None => is_identifier(name),
    }
}

/// Why an attribute cannot be published, if it cannot.
pub fn check(name: &str, v: &DeviceAttribute) -> Result<(), String> {
    if !is_qualified_name(name) {
        return Err(format!(
            "{name}: not a qualified name (domain/identifier, identifier at most {MAX_ID_LEN} characters, no hyphens)"
        ));
    }
    let set = [
        v.bool.is_some(),
        v.int.is_some(),
        v.string.is_some(),
        v.version.is_some(),
        v.bools.is_some(),
        v.ints.is_some(),
        v.strings.is_some(),
        v.versions.is_some(),
    ];
    if set.iter().filter(|x| **x).count() != 1 {
        return Err(format!(
            "{name}: exactly one of bool, int, string, version, bools, ints, strings, versions"
        ));
    }
    let empty = [
        v.bools.as_ref().map(Vec::len),
        v.ints.as_ref().map(Vec::len),
        v.strings.as_ref().map(Vec::len),
        v.versions.as_ref().map(Vec::len),
    ];
    if empty.contains(&Some(0)) {
        return Err(format!("{name}: an empty list"));
    }
    let strings = [&v.string, &v.version].into_iter().flatten();
    let items = [&v.strings, &v.versions].into_iter().flatten().flatten();
    if strings.chain(items).any(|s| s.len() > MAX_VALUE_LEN) {
        return Err(format!(
            "{name}: value longer than {MAX_VALUE_LEN} characters"
        ));
    }
    Ok(())
}

pub fn bool_attr(b: bool) -> DeviceAttribute {
    DeviceAttribute {
        bool: Some(b),
        ..Default::default()
    }
}

pub fn int_attr(i: i64) -> DeviceAttribute {
    DeviceAttribute {
        int: Some(i),
        ..Default::default()
    }
}

pub fn string_attr(s: impl Into<String>) -> DeviceAttribute {
    DeviceAttribute {
        string: Some(s.into()),
        ..Default::default()
    }
}

/// The MACsec attributes of a port under `domain`. Always present, so that
/// a selector on them never hits a missing attribute (a runtime error in
/// the scheduler): a netdev the kernel does not track is `macsecEgress`
/// false, protection `none`, reason `untracked`. `macsecProtectedGids`
/// counts the GIDs of a `partial` port on which RoCE is protected (an
/// `upper` port's own egress never is, nor a bond's over the port): a
/// workload that sources its RoCE from those addresses may select on it.
pub fn macsec_attributes(
    domain: &str,
    port: Option<&PortState>,
) -> BTreeMap<String, DeviceAttribute> {
    let mut m = BTreeMap::new();
    let q = |id: &str| format!("{domain}/{id}");
    match port {
        Some(p) => {
            m.insert(q("macsecEgress"), bool_attr(p.offloaded()));
            m.insert(q("macsecIngressStrict"), bool_attr(p.ingress_strict()));
            if let Some(v) = &p.validate {
                m.insert(q("macsecValidate"), string_attr(v));
            }
            m.insert(q("macsecProtection"), string_attr(&p.protection));
            m.insert(q("macsecReason"), string_attr(&p.reason));
            if let Some(r) = &p.relation {
                m.insert(q("macsecRelation"), string_attr(r));
            }
            if let Some(c) = &p.cipher {
                m.insert(q("macsecCipher"), string_attr(c));
            }
            let gids = i64::try_from(p.protected_gids.len()).unwrap_or(i64::MAX);
            m.insert(q("macsecProtectedGids"), int_attr(gids));
        }
        None => return unprotected(domain, "untracked"),
    }
    m
}

/// The MACsec attributes of a device whose port the kernel could not be
/// asked about (the module not loaded, sysfs unreadable): as definite as
/// an untracked netdev's, `macsecEgress` false, protection `none`, reason
/// `unknown`. A provider that answered with an error instead would leave
/// the device published without any of them (DRANet logs the error and
/// publishes its own attributes alone), and a selector on them would meet
/// a missing attribute.
pub fn unknown_attributes(domain: &str) -> BTreeMap<String, DeviceAttribute> {
    unprotected(domain, "unknown")
}

fn unprotected(domain: &str, reason: &str) -> BTreeMap<String, DeviceAttribute> {
    let q = |id: &str| format!("{domain}/{id}");
    BTreeMap::from([
        (q("macsecEgress"), bool_attr(false)),
        (q("macsecIngressStrict"), bool_attr(false)),
        (q("macsecProtection"), string_attr("none")),
        (q("macsecReason"), string_attr(reason)),
        (q("macsecProtectedGids"), int_attr(0)),
    ])
}

/// DRANet's attributes of a netdev, under the driver's domain `d`
/// (`dra.net`), and the standard `resource.kubernetes.io` ones, with the
/// PCI names of the system's database ([`PciIds::system`]).
pub fn dranet_attributes(d: &str, dev: &NetDev) -> BTreeMap<String, DeviceAttribute> {
    dranet_attributes_with(d, dev, PciIds::system())
}

/// An operational state as sysfs spells it (`lowerlayerdown`), as DRANet
/// publishes it: the spelling of the netlink library it reads links with
/// (`lower-layer-down`, `not-present`).
pub fn operstate(sysfs: &str) -> &str {
    match sysfs {
        "lowerlayerdown" => "lower-layer-down",
        "notpresent" => "not-present",
        s => s,
    }
}

/// [`dranet_attributes`] with the PCI ID database `pci` (none: no PCI
/// names, as DRANet publishes none when ghw finds no database).
pub fn dranet_attributes_with(
    d: &str,
    dev: &NetDev,
    pci: Option<&PciIds>,
) -> BTreeMap<String, DeviceAttribute> {
    let mut m = BTreeMap::new();
    let q = |id: &str| format!("{d}/{id}");
    m.insert(q("ifName"), string_attr(&dev.ifname));
    if let Some(mac) = &dev.mac {
        m.insert(q("mac"), string_attr(mac));
    }
    if let Some(mtu) = dev.mtu {
        m.insert(q("mtu"), int_attr(mtu));
    }
    if let Some(s) = &dev.state {
        m.insert(q("state"), string_attr(operstate(s)));
    }
    if let Some(t) = dev.kind.as_deref().and_then(dranet_type) {
        m.insert(q("type"), string_attr(t));
    }
    m.insert(q("virtual"), bool_attr(dev.virtual_));
    m.insert(q("rdma"), bool_attr(!dev.rdma_devices.is_empty()));
    if let Some(r) = dev.rdma_devices.first() {
        m.insert(q("rdmaDevice"), string_attr(r));
    }
    let sriov = dev.sriov_total_vfs.unwrap_or(0) > 0;
    m.insert(q("sriov"), bool_attr(sriov));
    if sriov {
        m.insert(q("sriovVfs"), int_attr(dev.sriov_num_vfs.unwrap_or(0)));
    }
    if dev.is_sriov_vf {
        m.insert(q("isSriovVf"), bool_attr(true));
    }
    if let Some(a) = &dev.pci_address {
        m.insert(q("pciAddress"), string_attr(a));
    }
    if let Some(db) = pci.filter(|_| dev.pci_address.is_some()) {
        let (vendor, device) = db.names(dev.pci_vendor.as_deref(), dev.pci_device.as_deref());
        if let Some(v) = vendor {
            m.insert(q("pciVendor"), string_attr(&v));
        }
        if let Some(v) = device {
            m.insert(q("pciDevice"), string_attr(&v));
        }
    }
    if let Some(n) = dev.numa_node {
        m.insert(q("numaNode"), int_attr(n));
        m.insert(format!("{K8S_DOMAIN}/numaNode"), int_attr(n));
    }
    if let Some(r) = &dev.pcie_root {
        m.insert(format!("{K8S_DOMAIN}/pcieRoot"), string_attr(r));
    }
    m
}

/// Drops what cannot be published: invalid attributes, then, past
/// [`MAX_ATTRS`], the driver's own ones before the MACsec ones (`keep`
/// names the domain whose attributes go last). Returns the warnings.
pub fn fit(attrs: &mut BTreeMap<String, DeviceAttribute>, keep: &str) -> Vec<String> {
    let mut warnings = drop_invalid(attrs);
    while attrs.len() > MAX_ATTRS {
        let victim = attrs
            .keys()
            .rev()
            .find(|k| !k.starts_with(&format!("{keep}/")))
            .or_else(|| attrs.keys().next_back())
            .cloned();
        let Some(victim) = victim else { break };
        attrs.remove(&victim);
        warnings.push(format!(
            "dropped {victim}: more than {MAX_ATTRS} attributes"
        ));
    }
    warnings
}

/// Drops the attributes that cannot be published; returns a warning each.
fn drop_invalid(attrs: &mut BTreeMap<String, DeviceAttribute>) -> Vec<String> {
    let mut warnings = Vec::new();
    attrs.retain(|name, v| match check(name, v) {
        Ok(()) => true,
        Err(e) => {
            warnings.push(format!("dropped {e}"));
            false
        }
    });
    warnings
}

/// The MACsec attributes by how much a claim needs them, most first: what
/// [`fit_beside`] keeps longest.
const MACSEC_PRIORITY: [&str; 9] = [
    "macsecEgress",
    "macsecIngressStrict",
    "macsecProtection",
    "macsecReason",
    "macsecProtectedGids",
    "macsecRelation",
    "macsecValidate",
    "macsecCipher",
    "macsecWireVerified",
];

/// Fits a provider's attributes beside the `own` ones DRANet publishes
/// for the same device: DRANet merges them over its own without a check,
/// and one invalid attribute, or more than [`MAX_ATTRS`] on a device, gets
/// its whole slice rejected by the API server. A string too long (a
/// kernel's word this crate does not know) becomes `unknown`, so that the
/// attribute is still there for a selector; other invalid attributes are
/// dropped; then, past the room left, the least needed go first (any not
/// in [`MACSEC_PRIORITY`], then that list from its end). Returns the
/// warnings.
pub fn fit_beside(attrs: &mut BTreeMap<String, DeviceAttribute>, own: usize) -> Vec<String> {
    let mut warnings = Vec::new();
    for (name, v) in attrs.iter_mut() {
        if v.string.as_ref().is_some_and(|s| s.len() > MAX_VALUE_LEN) {
            warnings.push(format!(
                "{name}: value longer than {MAX_VALUE_LEN} characters, published as unknown"
            ));
            v.string = Some("unknown".into());
        }
    }
    warnings.extend(drop_invalid(attrs));
    let room = MAX_ATTRS.saturating_sub(own);
    let rank = |k: &str| {
        let id = k.rsplit('/').next().unwrap_or(k);
        MACSEC_PRIORITY
            .iter()
            .position(|p| *p == id)
            .unwrap_or(MACSEC_PRIORITY.len())
    };
    while attrs.len() > room {
        let Some(victim) = attrs.keys().max_by_key(|k| rank(k)).cloned() else {
            break;
        };
        attrs.remove(&victim);
        warnings.push(format!(
            "dropped {victim}: DRANet publishes {own} attributes of its own, \
             {MAX_ATTRS} at most a device"
        ));
    }
    warnings
}
