// SPDX-License-Identifier: GPL-2.0
//! Where a ResourceClaim would be allocated, evaluated as the scheduler's
//! structured-parameters allocator does (k8s.io/dynamic-resource-allocation
//! `cel/compile.go` and `structured`): the CEL input is `device.driver`
//! and `device.attributes[domain][id]` (a name without a domain is in the
//! driver's), an unknown domain is an empty map, every class and request
//! selector must be true, and a runtime error (a missing attribute) is an
//! error for that device, never a silent non-match.
//!
//! Differences, stated: the claim is placed on the first node (by name)
//! that satisfies every request, first fit in device-name order, without
//! the scheduler's backtracking; only `exactly` requests (count or
//! allocationMode All) are supported; no constraints (matchAttribute); the
//! `cel` crate has no `cel.bind` and no cost limit.

use anyhow::{anyhow, bail, Context as _, Result};
use cel::{Context, Env, Program, Value};
use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceClass, ResourceClaim, ResourceSlice};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

/// One published device, where it is.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub node: String,
    pub pool: String,
    pub driver: String,
    pub name: String,
    pub attributes: BTreeMap<String, DeviceAttribute>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allocation {
    pub request: String,
    pub node: String,
    pub pool: String,
    pub device: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub node: String,
    pub device: String,
    pub reason: String,
}

/// The answer: `allocations` is empty unless every request is satisfied.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Placement {
    pub allocations: Vec<Allocation>,
    pub rejected: Vec<Rejection>,
    #[serde(skip)]
    pub satisfied: bool,
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// Every device of `slices`.
pub fn candidates(slices: &[ResourceSlice]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in slices {
        let node = s.spec.node_name.clone().unwrap_or_default();
        for d in s.spec.devices.iter().flatten() {
            out.push(Candidate {
                node: node.clone(),
                pool: s.spec.pool.name.clone(),
                driver: s.spec.driver.clone(),
                name: d.name.clone(),
                attributes: d.attributes.clone().unwrap_or_default(),
            });
        }
    }
    out.sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
    out
}

/// Domains an expression names as `device.attributes["domain"]`: the
/// scheduler gives an unknown one an empty map, so must we.
fn domains_named(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for q in ['"', '\''] {
        let pat = format!("attributes[{q}");
        let mut rest = expr;
        while let Some(i) = rest.find(&pat) {
            rest = &rest[i + pat.len()..];
            if let Some(j) = rest.find(q) {
                out.insert(rest[..j].to_string());
                rest = &rest[j..];
            }
        }
    }
    out
}

fn attr_value(a: &DeviceAttribute) -> serde_json::Value {
    if let Some(b) = a.bool {
        serde_json::Value::Bool(b)
    } else if let Some(i) = a.int {
        serde_json::Value::from(i)
    } else if let Some(s) = a.string.as_ref().or(a.version.as_ref()) {
        serde_json::Value::String(s.clone())
    } else {
        serde_json::Value::Null
    }
}

/// The scheduler's `device` variable for `c`, with empty maps for `extra`
/// domains.
fn device_value(c: &Candidate, extra: &BTreeSet<String>) -> Result<Value> {
    let mut by_domain: BTreeMap<String, serde_json::Map<String, serde_json::Value>> =
        BTreeMap::new();
    for d in extra {
        by_domain.entry(d.clone()).or_default();
    }
    for (name, v) in &c.attributes {
        let (domain, id) = name.split_once('/').unwrap_or((&c.driver, name));
        by_domain
            .entry(domain.to_string())
            .or_default()
            .insert(id.to_string(), attr_value(v));
    }
    let json = serde_json::json!({
        "driver": c.driver,
        "attributes": by_domain,
        "capacity": {},
        "allowMultipleAllocations": false,
    });
    cel::to_value(json).map_err(|e| anyhow!("device {}: {e}", c.name))
}

/// The CEL environment: the standard library, macros (`has`, `all`, ...)
/// and optional values (`.?x.orValue(d)`), as selectors use them.
fn env() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| Arc::new(Env::stdlib())).clone()
}

/// A compiled selector.
struct Selector {
    source: String,
    program: Program,
}

impl Selector {
    fn new(source: &str) -> Result<Selector> {
        let program = env()
            .compile(source)
            .map_err(|e| anyhow!("CEL `{source}`: {e}"))?;
        Ok(Selector {
            source: source.to_string(),
            program,
        })
    }

    /// true, false, or why it could not be evaluated.
    fn eval(&self, c: &Candidate) -> Result<bool, String> {
        let device = device_value(c, &domains_named(&self.source)).map_err(|e| e.to_string())?;
        let mut ctx = Context::with_env(env());
        ctx.add_variable_from_value("device", device);
        match self.program.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(v) => Err(format!("`{}` is not a bool ({v:?})", self.source)),
            Err(e) => Err(format!("CEL runtime error in `{}`: {e}", self.source)),
        }
    }
}

struct Request {
    name: String,
    selectors: Vec<Selector>,
    /// `None` for allocationMode All.
    count: Option<usize>,
}

fn requests(claim: &ResourceClaim, classes: &[DeviceClass]) -> Result<Vec<Request>> {
    let reqs = claim
        .spec
        .devices
        .as_ref()
        .and_then(|d| d.requests.as_ref())
        .ok_or_else(|| anyhow!("the claim has no device requests"))?;
    let mut out = Vec::new();
    for r in reqs {
        let Some(ex) = &r.exactly else {
            bail!(
                "request {}: only `exactly` requests are supported (not firstAvailable)",
                r.name
            );
        };
        let class = classes
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(ex.device_class_name.as_str()))
            .ok_or_else(|| {
                anyhow!(
                    "request {}: DeviceClass {} not given",
                    r.name,
                    ex.device_class_name
                )
            })?;
        let mut selectors = Vec::new();
        for s in class
            .spec
            .selectors
            .iter()
            .flatten()
            .chain(ex.selectors.iter().flatten())
        {
            let cel = s
                .cel
                .as_ref()
                .ok_or_else(|| anyhow!("request {}: a selector without cel", r.name))?;
            selectors.push(
                Selector::new(&cel.expression).with_context(|| format!("request {}", r.name))?,
            );
        }
        let count = match ex.allocation_mode.as_deref() {
            Some("All") => None,
            None | Some("ExactCount") => Some(ex.count.unwrap_or(1).max(1) as usize),
            Some(m) => bail!("request {}: unknown allocationMode {m}", r.name),
        };
        out.push(Request {
            name: r.name.clone(),
            selectors,
            count,
        });
    }
    Ok(out)
}

/// Places `claim` on the devices of `slices`.
pub fn place(
    claim: &ResourceClaim,
    classes: &[DeviceClass],
    slices: &[ResourceSlice],
) -> Result<Placement> {
    let reqs = requests(claim, classes)?;
    let cands = candidates(slices);
    // For each request, each device: matched, or why not.
    let verdicts: Vec<Vec<Result<(), String>>> = reqs
        .iter()
        .map(|r| {
            cands
                .iter()
                .map(|c| {
                    for s in &r.selectors {
                        match s.eval(c) {
                            Ok(true) => {}
                            Ok(false) => {
                                return Err(format!("request {}: `{}` is false", r.name, s.source))
                            }
                            Err(e) => return Err(format!("request {}: {e}", r.name)),
                        }
                    }
                    Ok(())
                })
                .collect()
        })
        .collect();

    let nodes: BTreeSet<&str> = cands.iter().map(|c| c.node.as_str()).collect();
    let mut chosen: Option<(String, Vec<(usize, usize)>)> = None;
    for node in nodes {
        let mut used = BTreeSet::new();
        let mut picks = Vec::new();
        let mut ok = true;
        for (ri, r) in reqs.iter().enumerate() {
            let free: Vec<usize> = (0..cands.len())
                .filter(|&i| cands[i].node == node && !used.contains(&i) && verdicts[ri][i].is_ok())
                .collect();
            let want = r.count.unwrap_or(free.len().max(1));
            if free.len() < want {
                ok = false;
                break;
            }
            for &i in &free[..want] {
                used.insert(i);
                picks.push((ri, i));
            }
        }
        if ok {
            chosen = Some((node.to_string(), picks));
            break;
        }
    }

    let mut p = Placement::default();
    let picked: BTreeMap<usize, usize> = chosen
        .iter()
        .flat_map(|(_, v)| v.iter().map(|&(r, i)| (i, r)))
        .collect();
    if let Some((_, picks)) = &chosen {
        p.satisfied = true;
        for &(ri, i) in picks {
            p.allocations.push(Allocation {
                request: reqs[ri].name.clone(),
                node: cands[i].node.clone(),
                pool: cands[i].pool.clone(),
                device: cands[i].name.clone(),
            });
        }
    } else {
        p.problems
            .push("no node satisfies every request".to_string());
    }
    for (i, c) in cands.iter().enumerate() {
        if picked.contains_key(&i) {
            continue;
        }
        let matched: Vec<&str> = reqs
            .iter()
            .enumerate()
            .filter(|(ri, _)| verdicts[*ri][i].is_ok())
            .map(|(_, r)| r.name.as_str())
            .collect();
        let reason = if matched.is_empty() {
            reqs.iter()
                .enumerate()
                .filter_map(|(ri, _)| verdicts[ri][i].clone().err())
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            match &chosen {
                Some((n, _)) if *n != c.node => {
                    format!("matches {}, but node {n} was chosen", matched.join(", "))
                }
                Some(_) => format!("matches {}, already satisfied", matched.join(", ")),
                None => format!(
                    "matches {}, but this node cannot satisfy every request",
                    matched.join(", ")
                ),
            }
        };
        p.rejected.push(Rejection {
            node: c.node.clone(),
            device: c.name.clone(),
            reason,
        });
    }
    Ok(p)
}
