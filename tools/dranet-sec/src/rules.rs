// SPDX-License-Identifier: GPL-2.0
//! DeviceTaintRules for devices that DRANet publishes itself (webhook
//! mode): one rule per unprotected RDMA port, selecting DRANet's driver,
//! its pool (the node) and the device by DRANet's name, with the taint our
//! own slices would carry. Kept as a directory of YAML files, exactly the
//! rules that should exist, for `kubectl apply --prune` or a GitOps sync.

use crate::attrs::NetDev;
use crate::slice::device_name;
use crate::state::PortState;
use crate::taint::{self, Clock, Effect};
use anyhow::{Context as _, Result};
use k8s_openapi::api::resource::v1::{DeviceTaintRule, DeviceTaintRuleSpec, DeviceTaintSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// What the rules select and carry.
#[derive(Clone, Debug)]
pub struct Options {
    /// The node: DRANet's pool name.
    pub node: String,
    /// DRANet's driver name.
    pub driver: String,
    /// The domain of the taint key.
    pub domain: String,
    pub effect: Effect,
}

/// Every file name and rule name of ours starts so.
pub const PREFIX: &str = "dranet-sec.";

/// `MaxDNS1123SubdomainLength`: an object name.
const MAX_NAME: usize = 253;

/// FNV-1a, for names too long to be spelled out.
fn fnv(s: &str) -> u32 {
    s.bytes()
        .fold(0x811c_9dc5, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// The rule's name: `dranet-sec.<node>.<device>`, a DNS subdomain (node
/// names are subdomains, device names labels); cut and suffixed with a
/// hash of the whole when longer than 253 characters.
pub fn rule_name(node: &str, device: &str) -> String {
    let full = format!("{PREFIX}{node}.{device}");
    if full.len() <= MAX_NAME {
        return full;
    }
    let tail = format!("-{:08x}", fnv(&full));
    let mut cut = full[..MAX_NAME - tail.len()].to_string();
    while cut.ends_with(['-', '.']) {
        cut.pop();
    }
    cut + &tail
}

/// The rules that should exist for the node's netdevs `devs` and the
/// kernel's `ports`, by name, not yet stamped with `timeAdded`.
pub fn wanted(
    opts: &Options,
    devs: &[NetDev],
    ports: &[PortState],
) -> BTreeMap<String, DeviceTaintRule> {
    let mut out = BTreeMap::new();
    let ports = crate::state::by_ifname(ports);
    for dev in devs {
        let port = ports.get(dev.ifname.as_str()).copied();
        if let Some(reason) = taint::reason(dev, port) {
            insert(&mut out, opts, device_name(dev), &reason);
        }
    }
    out
}

/// Adds the rule for DRANet's device `device`, tainted for `reason`.
fn insert(
    out: &mut BTreeMap<String, DeviceTaintRule>,
    opts: &Options,
    device: String,
    reason: &str,
) {
    let name = rule_name(&opts.node, &device);
    let rule = DeviceTaintRule {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_string(),
                "dranet-sec".to_string(),
            )])),
            ..Default::default()
        },
        spec: DeviceTaintRuleSpec {
            device_selector: Some(DeviceTaintSelector {
                driver: Some(opts.driver.clone()),
                pool: Some(opts.node.clone()),
                device: Some(device),
            }),
            taint: taint::taint(&opts.domain, opts.effect, reason),
        },
        status: None,
    };
    out.insert(name, rule);
}

/// The ports the host saw, followed once they left its namespace.
///
/// DRANet moves the netdev it allocates (and, in exclusive mode, its RDMA
/// device) into the pod's namespace, and goes on publishing a PCI function
/// by its name. The host's netdevs then no longer show the port, but its
/// protection may still drop under the running pod: that is when a
/// `NoExecute` rule must be written. So each port is remembered, by the
/// kernel's `port-id`, as the DRANet device the host last saw it as (or,
/// for one first seen away, the PCI function of its RDMA device), and its
/// state in the host's view keeps or takes the rule of that device. What
/// is remembered is kept in a file, so that a restart, or a one-shot run,
/// follows the ports that moved before it.
#[derive(Debug, Default)]
pub struct Follow {
    /// DRANet's device name of each port seen, by `port-id`.
    devices: BTreeMap<u64, String>,
    /// Where they are kept (`None`: nowhere), and whether they changed
    /// since they were.
    file: Option<PathBuf>,
    changed: bool,
}

impl Follow {
    /// What `file` remembers (nothing if it does not exist): a line
    /// `PORT-ID DEVICE` a port.
    pub fn load(file: &Path) -> Result<Follow> {
        let mut devices = BTreeMap::new();
        match fs::read_to_string(file) {
            Ok(text) => {
                for (n, line) in text.lines().enumerate() {
                    let parsed = line
                        .split_once(' ')
                        .and_then(|(id, d)| Some((id.parse::<u64>().ok()?, d.to_string())));
                    let (id, device) = parsed.with_context(|| {
                        format!("{}:{}: not `PORT-ID DEVICE`", file.display(), n + 1)
                    })?;
                    devices.insert(id, device);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
        }
        Ok(Follow {
            devices,
            file: Some(file.to_path_buf()),
            changed: false,
        })
    }

    /// Writes what changed to the file (a temporary file, renamed).
    pub fn save(&mut self) -> Result<()> {
        let Some(file) = self.file.as_ref().filter(|_| self.changed) else {
            return Ok(());
        };
        let text: String = self
            .devices
            .iter()
            .map(|(id, d)| format!("{id} {d}\n"))
            .collect();
        let tmp = file.with_extension("tmp");
        fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, file).with_context(|| format!("renaming to {}", file.display()))?;
        self.changed = false;
        Ok(())
    }

    /// Port `id` is DRANet's `device`: no other port is (one the kernel
    /// tracked before under another id, before a module reload, say).
    fn assign(&mut self, id: u64, device: &str) {
        if self.devices.get(&id).map(String::as_str) == Some(device) {
            return;
        }
        self.devices.retain(|i, d| *i == id || d != device);
        self.devices.insert(id, device.to_string());
        self.changed = true;
    }

    /// The rules that should exist: [`wanted`]'s for the host's netdevs
    /// `devs` and ports `here`, and one for each port `away` (in other
    /// namespaces) that is not offload-protected, under the device it was.
    /// A device remembered whose port the kernel no longer reports
    /// anywhere, and that is not back among the host's netdevs, is
    /// tainted `untracked`: its protection cannot be told. `sysfs` is where
    /// RDMA devices are looked up.
    pub fn wanted(
        &mut self,
        opts: &Options,
        devs: &[NetDev],
        here: &[PortState],
        away: &[PortState],
        sysfs: &Path,
    ) -> BTreeMap<String, DeviceTaintRule> {
        let mut out = wanted(opts, devs, here);
        let home: BTreeMap<&str, String> = devs
            .iter()
            .map(|d| (d.ifname.as_str(), device_name(d)))
            .collect();
        let names: BTreeSet<&str> = home.values().map(String::as_str).collect();
        for p in here {
            if let (Some(id), Some(device)) = (p.port_id, home.get(p.ifname.as_str())) {
                self.assign(id, device);
            }
        }
        for p in away {
            let Some(id) = p.port_id else {
                continue;
            };
            if !self.devices.contains_key(&id) {
                // In shared RDMA namespace mode only: in exclusive mode the
                // pod's RDMA device is not in the host's sysfs either.
                let pci = p
                    .rdma_dev
                    .iter()
                    .find_map(|r| crate::discover::pci_of_rdma(sysfs, r));
                match pci {
                    Some(a) => self.assign(id, &format!("pci-{}", a.replace([':', '.'], "-"))),
                    None => continue,
                }
            }
            let device = &self.devices[&id];
            // Back under its name: the host's netdev says.
            if names.contains(device.as_str()) {
                continue;
            }
            if let Some(reason) = taint::reason_of(p) {
                insert(&mut out, opts, device.clone(), &reason);
            }
        }
        let seen: BTreeSet<u64> = here.iter().chain(away).filter_map(|p| p.port_id).collect();
        // A port the kernel no longer reports: forgotten once its device
        // is back home; tainted until then.
        let before = self.devices.len();
        self.devices
            .retain(|id, device| seen.contains(id) || !names.contains(device.as_str()));
        self.changed |= self.devices.len() != before;
        for (id, device) in &self.devices {
            if !seen.contains(id) {
                insert(&mut out, opts, device.clone(), "untracked");
            }
        }
        out
    }
}

/// Stamps each rule with when its device was first seen unprotected.
pub fn stamp(rules: &mut BTreeMap<String, DeviceTaintRule>, clock: &mut Clock, now: Timestamp) {
    let names: Vec<String> = rules.keys().cloned().collect();
    let since = clock.observe(&names, now);
    for (name, r) in rules.iter_mut() {
        r.spec.taint.time_added = since.get(name).copied().map(Time);
    }
}

/// A change to the directory.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// `create`, `update` or `delete`.
    pub event: &'static str,
    pub name: String,
    /// The rule as written; absent for `delete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<DeviceTaintRule>,
}

/// A directory holding exactly the rules that should exist, one
/// `NAME.yaml` each. Files not ours (not starting with [`PREFIX`]) are
/// left alone.
pub struct RuleDir {
    dir: PathBuf,
}

impl RuleDir {
    pub fn new(dir: &Path) -> Result<RuleDir> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(RuleDir {
            dir: dir.to_path_buf(),
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.yaml"))
    }

    /// Our rules now in the directory, by name. A file of ours that does
    /// not parse is an error: it is never silently replaced.
    pub fn load(&self) -> Result<BTreeMap<String, DeviceTaintRule>> {
        let mut out = BTreeMap::new();
        for e in
            fs::read_dir(&self.dir).with_context(|| format!("reading {}", self.dir.display()))?
        {
            let e = e?;
            let file = e.file_name().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".yaml") else {
                continue;
            };
            if !name.starts_with(PREFIX) {
                continue;
            }
            let text = fs::read_to_string(e.path()).with_context(|| format!("reading {file}"))?;
            let rule: DeviceTaintRule = serde_yaml::from_str(&text)
                .with_context(|| format!("{}: not a DeviceTaintRule", e.path().display()))?;
            out.insert(name.to_string(), rule);
        }
        Ok(out)
    }

    /// `timeAdded` of the rules already written: a restart keeps them.
    pub fn times(&self) -> Result<BTreeMap<String, Timestamp>> {
        Ok(self
            .load()?
            .into_iter()
            .filter_map(|(n, r)| r.spec.taint.time_added.map(|t| (n, t.0)))
            .collect())
    }

    /// Makes the directory hold exactly `want`. Each file is written to a
    /// temporary name and renamed, so a reader never sees half a rule.
    /// Returns what changed: deletions first, then creations and updates,
    /// each by name.
    pub fn sync(&self, want: &BTreeMap<String, DeviceTaintRule>) -> Result<Vec<Event>> {
        let have = self.load()?;
        let mut events = Vec::new();
        for name in have.keys().filter(|n| !want.contains_key(*n)) {
            fs::remove_file(self.path(name)).with_context(|| format!("removing {name}.yaml"))?;
            events.push(Event {
                event: "delete",
                name: name.clone(),
                rule: None,
            });
        }
        for (name, rule) in want {
            let event = match have.get(name) {
                Some(old) if old == rule => continue,
                Some(_) => "update",
                None => "create",
            };
            let tmp = self.dir.join(format!(".{name}.yaml.tmp"));
            fs::write(&tmp, serde_yaml::to_string(rule)?)
                .with_context(|| format!("writing {}", tmp.display()))?;
            fs::rename(&tmp, self.path(name))
                .with_context(|| format!("renaming to {name}.yaml"))?;
            events.push(Event {
                event,
                name: name.clone(),
                rule: Some(rule.clone()),
            });
        }
        Ok(events)
    }
}
