// SPDX-License-Identifier: GPL-2.0
//! Where a ResourceClaim would be allocated, and which allocations a
//! `NoExecute` taint evicts, evaluated as Kubernetes does.
//!
//! Placement follows the scheduler's structured-parameters allocator
//! (k8s.io/dynamic-resource-allocation `structured/internal/stable`),
//! node by node: requests in order; a `firstAvailable` request takes the
//! first of its subrequests that leads to a full solution; each device of
//! a request is tried in turn, and a choice that leaves a later device or
//! request unsatisfiable is undone and the next one tried (backtracking),
//! so a claim is reported unsatisfiable only if no assignment exists. A
//! device is eligible when it is not in use (by this claim or by the
//! allocated claims given, admin access aside), every class and request
//! selector is true, no `NoSchedule`/`NoExecute` taint is left untolerated
//! by the request's tolerations, and every `matchAttribute` constraint
//! that names the request (or names none) still holds. `allocationMode:
//! All` takes every device of the node that the selectors match, and fails
//! if one of them is unusable or there is none. A claim gets at most 32
//! devices (a `firstAvailable` subrequest that would exceed it gives way to
//! the next). Pools are gathered as the scheduler does: the newest
//! generation of each, none of an incomplete one (and `All` is then an
//! error), slices for all nodes on every node.
//!
//! CEL as the scheduler evaluates it (`cel/compile.go`): the input is
//! `device.driver` and `device.attributes[domain][id]` (a name without a
//! domain is in the driver's), an unknown domain is an empty map, and a
//! runtime error (a missing attribute) on a device the search examines is
//! an error, never a silent non-match. An error on any node fails the
//! scheduler's whole attempt (its Filter returns an error status), so
//! nothing is placed even where a node fits.
//!
//! List-valued attributes (`DRAListTypeAttributes`, as DRANet publishes
//! `resource.kubernetes.io/numaNode` under it) are CEL lists, with the
//! gate's `includes` (true for a list holding the value or a scalar equal
//! to it). `matchAttribute` is the allocator's that the gate selects
//! (`structured/internal/experimental`), which agrees with the stable one
//! on scalars: each device's values (a scalar's one) must share at least
//! one with what every device taken before holds, and what they share is
//! what the next must meet; values of different types share nothing.
//! That allocator gives back a device without widening what the others
//! share, and so tries one request's devices as combinations in device
//! order, never as permutations; where a device has a list attribute
//! (which the API server keeps only with the gate on), so does `place`.
//!
//! Differences, stated: one claim at a time; the node chosen is the first
//! feasible one by name (the scheduler scores the feasible nodes); among
//! several solutions on a node the first in device-name order is reported
//! (the scheduler's order is its pools'); no admin access, consumable
//! capacity, counters, binding conditions, per-device node selection or
//! node selectors (a slice with one is offered on every node); versions
//! are strings to CEL, not semver, and `device.capacity` is empty; every
//! selector is compiled up front, so one that does not compile fails the
//! placement even if the search would not reach it; the `cel` crate has no
//! `cel.bind` and no cost limit; the search stops after [`MAX_STEPS`] steps
//! with an error.
//!
//! Eviction follows the device taint eviction controller: a pod using a
//! claim is evicted when a device allocated to the claim (newest pool
//! generation) has a `NoExecute` taint that the allocation's `NoExecute`
//! tolerations do not tolerate, or tolerate only for `tolerationSeconds`
//! (then the shortest of them after the taint's `timeAdded`; zero or less
//! is at once). Taints from DeviceTaintRules are not seen: give the
//! slices as they would carry them.

use anyhow::{anyhow, bail, Context as _, Result};
use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Program, Value};
use k8s_openapi::api::resource::v1::{
    DeviceAttribute, DeviceClass, DeviceTaint, DeviceToleration, ResourceClaim, ResourceSlice,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

/// Search steps (device choices) per node before giving up.
pub const MAX_STEPS: u64 = 1_000_000;
/// `AllocationResultsMaxSize`: devices one claim may be allocated.
pub const MAX_RESULTS: usize = 32;

/// One published device, where it is.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub node: String,
    pub pool: String,
    pub driver: String,
    pub name: String,
    pub attributes: BTreeMap<String, DeviceAttribute>,
    pub taints: Vec<DeviceTaint>,
    /// The pool's newest generation lacks some of its slices (it is being
    /// updated): its devices are not allocated.
    pub incomplete: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allocation {
    /// The request, or `request/subrequest` for a `firstAvailable` one.
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

/// Whether the claim fits on a node, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeFit {
    pub node: String,
    pub fits: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The reason is an error, not an unsatisfiable claim: the scheduler
    /// aborts the whole attempt and retries later.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
}

/// The answer: `allocations` is empty unless every request is satisfied.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Placement {
    pub allocations: Vec<Allocation>,
    pub nodes: Vec<NodeFit>,
    pub rejected: Vec<Rejection>,
    #[serde(skip)]
    pub satisfied: bool,
    #[serde(skip)]
    pub problems: Vec<String>,
}

fn candidate_of(
    node: &str,
    s: &ResourceSlice,
    d: &k8s_openapi::api::resource::v1::Device,
) -> Candidate {
    Candidate {
        node: node.to_string(),
        pool: s.spec.pool.name.clone(),
        driver: s.spec.driver.clone(),
        name: d.name.clone(),
        attributes: d.attributes.clone().unwrap_or_default(),
        taints: d.taints.clone().unwrap_or_default(),
        incomplete: false,
    }
}

/// Every device of `slices`, by node and name, as the scheduler gathers
/// pools: per driver and pool only the slices of the newest generation
/// count, and a pool with fewer of them than its `resourceSliceCount` is
/// incomplete. A slice for all nodes (or a node selector) has node `""`:
/// it is offered on every node.
pub fn candidates(slices: &[ResourceSlice]) -> Vec<Candidate> {
    let mut newest: BTreeMap<(&str, &str), (i64, i64, usize)> = BTreeMap::new();
    for s in slices {
        let key = (s.spec.driver.as_str(), s.spec.pool.name.as_str());
        let (gen, want) = (s.spec.pool.generation, s.spec.pool.resource_slice_count);
        let e = newest.entry(key).or_insert((gen, want, 0));
        if gen > e.0 {
            *e = (gen, want, 0);
        }
        if gen == e.0 {
            e.2 += 1;
        }
    }
    let mut out = Vec::new();
    for s in slices {
        let (gen, want, have) = newest[&(s.spec.driver.as_str(), s.spec.pool.name.as_str())];
        if s.spec.pool.generation != gen {
            continue;
        }
        let node = match (&s.spec.node_name, s.spec.all_nodes) {
            (Some(n), _) => n.clone(),
            _ => String::new(),
        };
        for d in s.spec.devices.iter().flatten() {
            let mut c = candidate_of(&node, s, d);
            c.incomplete = (have as i64) < want;
            out.push(c);
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

/// An attribute's value as the scheduler hands it to CEL, serialized into
/// `cel` values of the same types: an `int` is a CEL int (a JSON number
/// would become a uint when not negative, and `numaNode + 1` would then
/// have no overload), a list attribute (`DRAListTypeAttributes`: `bools`,
/// `ints`, `strings`, `versions`) a CEL list, looked at before the scalars
/// as `getAttributeValue` does.
#[derive(Serialize)]
#[serde(untagged)]
enum CelAttr {
    Bool(bool),
    Int(i64),
    Str(String),
    Bools(Vec<bool>),
    Ints(Vec<i64>),
    Strs(Vec<String>),
    None,
}

fn attr_value(a: &DeviceAttribute) -> CelAttr {
    if let Some(v) = &a.ints {
        CelAttr::Ints(v.clone())
    } else if let Some(v) = &a.bools {
        CelAttr::Bools(v.clone())
    } else if let Some(v) = a.strings.as_ref().or(a.versions.as_ref()) {
        CelAttr::Strs(v.clone())
    } else if let Some(i) = a.int {
        CelAttr::Int(i)
    } else if let Some(b) = a.bool {
        CelAttr::Bool(b)
    } else if let Some(s) = a.string.as_ref().or(a.version.as_ref()) {
        CelAttr::Str(s.clone())
    } else {
        CelAttr::None
    }
}

/// The scheduler's `device` variable.
#[derive(Serialize)]
struct CelDevice<'a> {
    driver: &'a str,
    attributes: BTreeMap<String, BTreeMap<String, CelAttr>>,
    capacity: BTreeMap<String, ()>,
    #[serde(rename = "allowMultipleAllocations")]
    allow_multiple_allocations: bool,
}

/// The scheduler's `device` variable for `c`, with empty maps for `extra`
/// domains.
fn device_value(c: &Candidate, extra: &BTreeSet<String>) -> Result<Value> {
    let mut attributes: BTreeMap<String, BTreeMap<String, CelAttr>> = BTreeMap::new();
    for d in extra {
        attributes.entry(d.clone()).or_default();
    }
    for (name, v) in &c.attributes {
        let (domain, id) = name.split_once('/').unwrap_or((&c.driver, name));
        attributes
            .entry(domain.to_string())
            .or_default()
            .insert(id.to_string(), attr_value(v));
    }
    let device = CelDevice {
        driver: &c.driver,
        attributes,
        capacity: BTreeMap::new(),
        allow_multiple_allocations: false,
    };
    cel::to_value(device).map_err(|e| anyhow!("device {}: {e}", c.name))
}

/// `includes`, which `DRAListTypeAttributes` adds to the scheduler's CEL:
/// whether a list attribute holds the value, or a scalar one equals it;
/// an error on a list longer than a device may hold (48 values).
fn includes(This(target): This<Value>, arg: Value) -> Result<bool, ExecutionError> {
    match target {
        Value::List(items) if items.len() > MAX_ATTRIBUTE_VALUES => Err(
            ExecutionError::function_error("includes", "list longer than 48 values"),
        ),
        Value::List(items) => Ok(items.contains(&arg)),
        v => Ok(v == arg),
    }
}

/// `ResourceSliceMaxAttributeValuesPerDevice`.
const MAX_ATTRIBUTE_VALUES: usize = 48;

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
        ctx.add_function("includes", includes)
            .map_err(|e| format!("CEL `includes`: {e:?}"))?;
        ctx.add_variable_from_value("device", device);
        match self.program.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(v) => Err(format!("`{}` is not a bool ({v:?})", self.source)),
            Err(e) => Err(format!("CEL runtime error in `{}`: {e}", self.source)),
        }
    }
}

/// `key=value:Effect`, as kubectl shows a taint.
pub fn taint_text(t: &DeviceTaint) -> String {
    format!(
        "{}={}:{}",
        t.key,
        t.value.as_deref().unwrap_or(""),
        t.effect
    )
}

/// Whether `tol` tolerates `taint` (`resourceclaim.ToleratesTaint`).
pub fn tolerates(tol: &DeviceToleration, taint: &DeviceTaint) -> bool {
    let effect = tol.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = tol.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match tol.operator.as_deref().unwrap_or("") {
        "" | "Equal" => tol.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// The first taint of `c` that keeps a request with `tols` off it: only
/// `NoSchedule` and `NoExecute` do; `None` and unknown effects do not.
fn blocking_taint<'a>(c: &'a Candidate, tols: &[DeviceToleration]) -> Option<&'a DeviceTaint> {
    c.taints.iter().find(|t| {
        matches!(t.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tols.iter().any(|tol| tolerates(tol, t))
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Count(usize),
    All,
}

/// An `exactly` request, or one subrequest of a `firstAvailable` one.
struct Alt {
    /// `request` or `request/subrequest`.
    name: String,
    /// The request's name.
    base: String,
    selectors: Vec<Selector>,
    mode: Mode,
    tolerations: Vec<DeviceToleration>,
}

/// A request: one alternative, or a `firstAvailable` list in order.
struct Request {
    alts: Vec<Alt>,
}

/// `matchAttribute`: every device of the named requests (all requests if
/// none are named) shares a value of `attribute` with all the others.
struct MatchAttribute {
    requests: BTreeSet<String>,
    attribute: String,
}

impl MatchAttribute {
    fn applies(&self, alt: &Alt) -> bool {
        self.requests.is_empty()
            || self.requests.contains(&alt.base)
            || self.requests.contains(&alt.name)
    }
}

/// The value of the fully qualified attribute `name` of `c`
/// (`lookupAttribute`: a name in the driver's domain may be stored bare).
fn attribute<'a>(c: &'a Candidate, name: &str) -> Option<&'a DeviceAttribute> {
    if let Some(a) = c.attributes.get(name) {
        return Some(a);
    }
    let (domain, id) = name.split_once('/')?;
    (domain == c.driver).then(|| c.attributes.get(id)).flatten()
}

/// An attribute's values as `matchAttribute` compares them
/// (`attributeAsSet` in the allocator that `DRAListTypeAttributes`
/// selects): a list's items, a scalar as one item.
#[derive(Clone, Debug)]
enum Values {
    Ints(BTreeSet<i64>),
    Bools(BTreeSet<bool>),
    Strings(BTreeSet<String>),
    /// Compared as strings (semver's minimal form makes that exact).
    Versions(BTreeSet<String>),
}

/// `a`'s values; `None` for an attribute of no known type or an empty
/// list, which no device with it can match.
fn values(a: &DeviceAttribute) -> Option<Values> {
    fn set<T: Ord + Clone>(v: &Option<Vec<T>>) -> Option<BTreeSet<T>> {
        v.as_ref()
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().cloned().collect())
    }
    let one = |x| BTreeSet::from([x]);
    set(&a.ints)
        .map(Values::Ints)
        .or_else(|| set(&a.bools).map(Values::Bools))
        .or_else(|| set(&a.strings).map(Values::Strings))
        .or_else(|| set(&a.versions).map(Values::Versions))
        .or_else(|| a.int.map(|i| Values::Ints(BTreeSet::from([i]))))
        .or_else(|| a.bool.map(|b| Values::Bools(BTreeSet::from([b]))))
        .or_else(|| a.string.clone().map(|s| Values::Strings(one(s))))
        .or_else(|| a.version.clone().map(|s| Values::Versions(one(s))))
}

impl Values {
    /// What `self` and `other` both hold, if anything: devices match while
    /// that is not empty. Values of different types share nothing.
    fn meet(&self, other: &Values) -> Option<Values> {
        fn common<T: Ord + Clone>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> Option<BTreeSet<T>> {
            let c: BTreeSet<T> = a.intersection(b).cloned().collect();
            (!c.is_empty()).then_some(c)
        }
        match (self, other) {
            (Values::Ints(a), Values::Ints(b)) => common(a, b).map(Values::Ints),
            (Values::Bools(a), Values::Bools(b)) => common(a, b).map(Values::Bools),
            (Values::Strings(a), Values::Strings(b)) => common(a, b).map(Values::Strings),
            (Values::Versions(a), Values::Versions(b)) => common(a, b).map(Values::Versions),
            _ => None,
        }
    }
}

fn selectors_of(
    what: &str,
    class_name: &str,
    classes: &[DeviceClass],
    own: Option<&Vec<k8s_openapi::api::resource::v1::DeviceSelector>>,
) -> Result<Vec<Selector>> {
    let class = classes
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(class_name))
        .ok_or_else(|| anyhow!("{what}: DeviceClass {class_name} not given"))?;
    let mut out = Vec::new();
    let from_class = class.spec.as_ref().and_then(|s| s.selectors.as_ref());
    for s in from_class
        .into_iter()
        .flatten()
        .chain(own.into_iter().flatten())
    {
        let cel = s
            .cel
            .as_ref()
            .ok_or_else(|| anyhow!("{what}: a selector without cel"))?;
        out.push(Selector::new(&cel.expression).with_context(|| what.to_string())?);
    }
    Ok(out)
}

fn mode(what: &str, mode: Option<&str>, count: Option<i64>) -> Result<Mode> {
    match mode {
        Some("All") => Ok(Mode::All),
        None | Some("ExactCount") => {
            let n = count.unwrap_or(1);
            if n < 1 {
                bail!("{what}: count {n} must be at least 1");
            }
            Ok(Mode::Count(n as usize))
        }
        Some(m) => bail!("{what}: unknown allocationMode {m}"),
    }
}

fn requests(
    claim: &ResourceClaim,
    classes: &[DeviceClass],
) -> Result<(Vec<Request>, Vec<MatchAttribute>)> {
    let devices = claim
        .spec
        .as_ref()
        .and_then(|s| s.devices.as_ref())
        .ok_or_else(|| anyhow!("the claim has no device requests"))?;
    let reqs = devices
        .requests
        .as_ref()
        .filter(|r| !r.is_empty())
        .ok_or_else(|| anyhow!("the claim has no device requests"))?;
    let mut out = Vec::new();
    for r in reqs {
        let what = format!("request {}", r.name);
        let mut alts = Vec::new();
        match (&r.exactly, &r.first_available) {
            (Some(ex), None) => {
                if ex.admin_access == Some(true) {
                    bail!("{what}: adminAccess is not supported");
                }
                alts.push(Alt {
                    name: r.name.clone(),
                    base: r.name.clone(),
                    selectors: selectors_of(
                        &what,
                        &ex.device_class_name,
                        classes,
                        ex.selectors.as_ref(),
                    )?,
                    mode: mode(&what, ex.allocation_mode.as_deref(), ex.count)?,
                    tolerations: ex.tolerations.clone().unwrap_or_default(),
                });
            }
            (None, Some(subs)) if !subs.is_empty() => {
                for sub in subs {
                    let name = format!("{}/{}", r.name, sub.name);
                    let what = format!("request {name}");
                    alts.push(Alt {
                        selectors: selectors_of(
                            &what,
                            &sub.device_class_name,
                            classes,
                            sub.selectors.as_ref(),
                        )?,
                        mode: mode(&what, sub.allocation_mode.as_deref(), sub.count)?,
                        tolerations: sub.tolerations.clone().unwrap_or_default(),
                        name,
                        base: r.name.clone(),
                    });
                }
            }
            _ => bail!("{what}: exactly one of exactly and firstAvailable (non-empty) must be set"),
        }
        out.push(Request { alts });
    }
    let mut constraints = Vec::new();
    for (i, c) in devices.constraints.iter().flatten().enumerate() {
        let Some(attr) = &c.match_attribute else {
            bail!("constraint #{i}: only matchAttribute is supported");
        };
        if c.distinct_attribute.is_some() {
            bail!("constraint #{i}: distinctAttribute is not supported");
        }
        constraints.push(MatchAttribute {
            requests: c.requests.iter().flatten().cloned().collect(),
            attribute: attr.clone(),
        });
    }
    Ok((out, constraints))
}

/// (request, alternative, device).
type Pick = (usize, usize, usize);

/// Why the search stopped without a solution.
#[derive(Debug)]
enum Stop {
    /// More than [`MAX_RESULTS`] devices (`errAllocationResultMaxSizeExceeded`):
    /// a `firstAvailable` request tries its next subrequest.
    Exceeded,
    /// An error: the scheduler's whole attempt fails.
    Error(String),
}

impl From<String> for Stop {
    fn from(e: String) -> Stop {
        Stop::Error(e)
    }
}

/// The allocator's state on one node.
struct Search<'a> {
    cands: &'a [Candidate],
    /// Indices into `cands` of the node's devices.
    devs: Vec<usize>,
    /// The devices of one request are tried as combinations, each after
    /// the one before in `devs`, as the allocator that
    /// `DRAListTypeAttributes` selects does (`startLocation`); the stable
    /// one tries every device for each. Set when a device has a list
    /// attribute, which the API server keeps only with the gate on.
    combinations: bool,
    reqs: &'a [Request],
    constraints: &'a [MatchAttribute],
    /// Per constraint: the values every device taken so far holds (the
    /// first device's, narrowed by each one after it), and how many
    /// devices were taken.
    fixed: Vec<(Option<Values>, usize)>,
    /// Devices of allocated claims.
    taken: &'a BTreeSet<(String, String, String)>,
    /// Devices this claim holds so far.
    using: BTreeSet<usize>,
    /// The choices so far.
    picks: Vec<Pick>,
    /// Selector results, computed on demand as the scheduler does.
    memo: HashMap<(usize, usize, usize), Result<bool, String>>,
    /// Per request and alternative in `All` mode: the devices it takes.
    all: HashMap<(usize, usize), Vec<usize>>,
    steps: u64,
}

/// The search's answer on one node.
type Outcome = Result<bool, Stop>;

impl<'a> Search<'a> {
    fn selectable(&mut self, ri: usize, ai: usize, d: usize) -> Result<bool, String> {
        let reqs = self.reqs;
        let c = &self.cands[d];
        self.memo
            .entry((ri, ai, d))
            .or_insert_with(|| {
                let alt = &reqs[ri].alts[ai];
                for s in &alt.selectors {
                    match s.eval(c) {
                        Ok(true) => {}
                        Ok(false) => return Ok(false),
                        Err(e) => {
                            return Err(format!("device {}: request {}: {e}", c.name, alt.name))
                        }
                    }
                }
                Ok(true)
            })
            .clone()
    }

    fn in_use(&self, d: usize) -> bool {
        let c = &self.cands[d];
        self.using.contains(&d)
            || self
                .taken
                .contains(&(c.driver.clone(), c.pool.clone(), c.name.clone()))
    }

    /// Takes `d` for alternative `ai` of request `ri` if it can be
    /// (`allocateDevice`); `Err` when a constraint fails a device that
    /// `All` must take.
    fn add(&mut self, ri: usize, ai: usize, d: usize, must: bool) -> Result<bool, String> {
        let alt = &self.reqs[ri].alts[ai];
        if self.in_use(d) || blocking_taint(&self.cands[d], &alt.tolerations).is_some() {
            return Ok(false);
        }
        let c = &self.cands[d];
        let mut narrowed = Vec::with_capacity(self.constraints.len());
        for (i, m) in self.constraints.iter().enumerate() {
            if !m.applies(alt) {
                narrowed.push(None);
                continue;
            }
            let now = match (attribute(c, &m.attribute).and_then(values), &self.fixed[i]) {
                (None, _) => None,
                (Some(v), (_, 0)) => Some(v),
                (Some(v), (Some(f), _)) => f.meet(&v),
                (Some(_), (None, _)) => None,
            };
            let ok = now.is_some();
            narrowed.push(now);
            if !ok {
                if must {
                    return Err(format!(
                        "request {}: cannot add device {} because constraint matchAttribute {} would not be satisfied",
                        alt.name, c.name, m.attribute
                    ));
                }
                return Ok(false);
            }
        }
        for (i, now) in narrowed.into_iter().enumerate() {
            if now.is_some() {
                self.fixed[i] = (now, self.fixed[i].1 + 1);
            }
        }
        self.using.insert(d);
        self.picks.push((ri, ai, d));
        Ok(true)
    }

    /// Gives `d` back. As the scheduler's `matchAttributeConstraint.remove`
    /// does, a constraint's values narrowed by `d` stay narrowed until no
    /// device holds them: the scheduler may so miss a combination of list
    /// values that it would have found in another order, and so may this.
    fn remove(&mut self, ri: usize, ai: usize, d: usize) {
        let alt = &self.reqs[ri].alts[ai];
        for (i, m) in self.constraints.iter().enumerate() {
            if m.applies(alt) {
                self.fixed[i].1 -= 1;
                if self.fixed[i].1 == 0 {
                    self.fixed[i].0 = None;
                }
            }
        }
        self.using.remove(&d);
        self.picks.pop();
    }

    /// Satisfies requests `ri..` (`allocateOne` at a request boundary).
    /// A `firstAvailable` request tries its subrequests in order; one that
    /// would exceed [`MAX_RESULTS`] gives way to the next, and only if all
    /// do is that the answer.
    fn request(&mut self, ri: usize) -> Outcome {
        if ri == self.reqs.len() {
            return Ok(true);
        }
        let alts = self.reqs[ri].alts.len();
        let mut all_exceeded = true;
        for ai in 0..alts {
            match self.device(ri, ai, 0) {
                Ok(true) => return Ok(true),
                Ok(false) => all_exceeded = false,
                Err(Stop::Exceeded) if alts > 1 => {}
                Err(e) => return Err(e),
            }
        }
        if alts > 1 && all_exceeded {
            return Err(Stop::Exceeded);
        }
        Ok(false)
    }

    /// Picks device `k` of alternative `ai` of request `ri`, then the rest.
    fn device(&mut self, ri: usize, ai: usize, k: usize) -> Outcome {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Stop::Error(format!(
                "search abandoned after {MAX_STEPS} steps"
            )));
        }
        let need = match self.reqs[ri].alts[ai].mode {
            Mode::Count(n) => n,
            Mode::All => {
                let n = self.all.get(&(ri, ai)).map_or(0, Vec::len);
                if n == 0 {
                    return Ok(false);
                }
                n
            }
        };
        if k == need {
            return self.request(ri + 1);
        }
        if self.picks.len() + need - k > MAX_RESULTS {
            return Err(Stop::Exceeded);
        }
        if self.reqs[ri].alts[ai].mode == Mode::All {
            let d = self.all[&(ri, ai)][k];
            if !self.add(ri, ai, d, true)? {
                return Ok(false);
            }
            let done = self.device(ri, ai, k + 1);
            if !matches!(done, Ok(true)) {
                self.remove(ri, ai, d);
            }
            return done;
        }
        let from = match self.picks.last() {
            Some(&(_, _, prev)) if self.combinations && k > 0 => self
                .devs
                .iter()
                .position(|&x| x == prev)
                .map_or(0, |p| p + 1),
            _ => 0,
        };
        for j in from..self.devs.len() {
            let d = self.devs[j];
            if self.in_use(d) || !self.selectable(ri, ai, d)? {
                continue;
            }
            if !self.add(ri, ai, d, false)? {
                continue;
            }
            let done = self.device(ri, ai, k + 1);
            if matches!(done, Ok(true)) {
                return done;
            }
            self.remove(ri, ai, d);
            done?;
        }
        Ok(false)
    }
}

/// The devices of allocated claims, by (driver, pool, device).
fn taken(allocated: &[ResourceClaim]) -> BTreeSet<(String, String, String)> {
    allocated
        .iter()
        .flat_map(results)
        // Admin access does not count as allocated.
        .filter(|r| r.admin_access != Some(true))
        .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
        .collect()
}

fn results(
    c: &ResourceClaim,
) -> impl Iterator<Item = &k8s_openapi::api::resource::v1::DeviceRequestAllocationResult> {
    c.status
        .iter()
        .filter_map(|s| s.allocation.as_ref())
        .filter_map(|a| a.devices.as_ref())
        .flat_map(|d| d.results.iter().flatten())
}

/// Places `claim` on the devices of `slices`, the devices of `allocated`
/// claims being in use.
pub fn place(
    claim: &ResourceClaim,
    classes: &[DeviceClass],
    slices: &[ResourceSlice],
    allocated: &[ResourceClaim],
) -> Result<Placement> {
    let (reqs, constraints) = requests(claim, classes)?;
    // The fewest devices the claim can take, `All` aside (known per node).
    let least: usize = reqs
        .iter()
        .map(|r| {
            r.alts
                .iter()
                .map(|a| match a.mode {
                    Mode::Count(n) => n,
                    Mode::All => 0,
                })
                .min()
                .unwrap_or(0)
        })
        .sum();
    if least > MAX_RESULTS {
        bail!("the claim asks for {least} devices, more than the limit of {MAX_RESULTS}");
    }
    let cands = candidates(slices);
    let taken = taken(allocated);
    let mut nodes: BTreeSet<&str> = cands
        .iter()
        .map(|c| c.node.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    if nodes.is_empty() && !cands.is_empty() {
        // Only devices for all nodes: any node will do.
        nodes.insert("");
    }
    let combinations = cands.iter().any(|c| {
        c.attributes.values().any(|a| {
            a.ints.is_some() || a.bools.is_some() || a.strings.is_some() || a.versions.is_some()
        })
    });
    let mut p = Placement::default();
    let mut chosen: Option<(String, Vec<Pick>)> = None;
    for node in nodes {
        let here = |c: &Candidate| c.node == node || c.node.is_empty();
        let mut s = Search {
            cands: &cands,
            devs: (0..cands.len())
                .filter(|&i| here(&cands[i]) && !cands[i].incomplete)
                .collect(),
            combinations,
            reqs: &reqs,
            constraints: &constraints,
            fixed: vec![(None, 0); constraints.len()],
            taken: &taken,
            using: BTreeSet::new(),
            picks: Vec::new(),
            memo: HashMap::new(),
            all: HashMap::new(),
            steps: 0,
        };
        let being_updated = cands
            .iter()
            .find(|c| here(c) && c.incomplete)
            .map(|c| c.pool.clone());
        let outcome = (|| -> Outcome {
            // `All` needs to know up front what "all" is, and cannot know
            // it while a pool is being updated.
            for (ri, r) in reqs.iter().enumerate() {
                for (ai, alt) in r.alts.iter().enumerate() {
                    if alt.mode != Mode::All {
                        continue;
                    }
                    if let Some(pool) = &being_updated {
                        return Err(Stop::Error(format!(
                            "request {}: asks for all devices, but resource pool {pool} is currently being updated",
                            alt.name
                        )));
                    }
                    let mut v = Vec::new();
                    for j in 0..s.devs.len() {
                        let d = s.devs[j];
                        if s.selectable(ri, ai, d)? {
                            v.push(d);
                        }
                    }
                    s.all.insert((ri, ai), v);
                }
            }
            s.request(0)
        })();
        let (fits, reason, error) = match outcome {
            Ok(true) => {
                if chosen.is_none() {
                    chosen = Some((node.to_string(), s.picks.clone()));
                }
                (true, None, false)
            }
            Ok(false) => (
                false,
                Some("cannot satisfy every request".to_string()),
                false,
            ),
            Err(Stop::Exceeded) => (
                false,
                Some(format!(
                    "the claim would be allocated more than {MAX_RESULTS} devices"
                )),
                true,
            ),
            Err(Stop::Error(e)) => (false, Some(e), true),
        };
        p.nodes.push(NodeFit {
            node: node.to_string(),
            fits,
            reason,
            error,
        });
    }
    // An error on any node fails the scheduler's whole attempt (Filter
    // returns an error status, not "unschedulable"): nothing is placed.
    if let Some(n) = p.nodes.iter().find(|n| n.error) {
        p.problems.push(format!(
            "the scheduler's attempt fails, and is retried: node {}: {}",
            n.node,
            n.reason.as_deref().unwrap_or("")
        ));
        chosen = None;
    }

    // Why each device not picked was not, for the report (every selector
    // of every request evaluated, whether or not the search got there).
    let picked: BTreeSet<usize> = chosen
        .iter()
        .flat_map(|(_, v)| v.iter().map(|&(_, _, d)| d))
        .collect();
    if let Some((_, picks)) = &chosen {
        p.satisfied = true;
        for &(ri, ai, d) in picks {
            p.allocations.push(Allocation {
                request: reqs[ri].alts[ai].name.clone(),
                node: cands[d].node.clone(),
                pool: cands[d].pool.clone(),
                device: cands[d].name.clone(),
            });
        }
    } else if p.problems.is_empty() {
        p.problems
            .push("no node satisfies every request".to_string());
    }
    for (i, c) in cands.iter().enumerate() {
        if picked.contains(&i) {
            continue;
        }
        let mut matched = Vec::new();
        let mut why = Vec::new();
        for r in &reqs {
            for alt in &r.alts {
                let verdict = alt.selectors.iter().try_fold((), |(), s| match s.eval(c) {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(format!("request {}: `{}` is false", alt.name, s.source)),
                    Err(e) => Err(format!("request {}: {e}", alt.name)),
                });
                match verdict {
                    Err(e) => why.push(e),
                    Ok(()) => match blocking_taint(c, &alt.tolerations) {
                        Some(t) => why.push(format!(
                            "request {}: taint {} not tolerated",
                            alt.name,
                            taint_text(t)
                        )),
                        None => matched.push(alt.name.clone()),
                    },
                }
            }
        }
        let reason = if matched.is_empty() {
            why.join("; ")
        } else if taken.contains(&(c.driver.clone(), c.pool.clone(), c.name.clone())) {
            format!(
                "matches {}, but allocated to another claim",
                matched.join(", ")
            )
        } else {
            match &chosen {
                Some((n, _)) if *n != c.node => {
                    format!("matches {}, but node {n} was chosen", matched.join(", "))
                }
                Some(_) => format!("matches {}, not needed", matched.join(", ")),
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

/// A pod-evicting verdict on one allocated device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// `namespace/name` of the claim.
    pub claim: String,
    pub request: String,
    pub node: String,
    pub pool: String,
    pub device: String,
    /// `key=value:NoExecute`.
    pub taint: String,
    /// Seconds after the taint's `timeAdded`: 0 is at once.
    pub after_seconds: i64,
}

/// How long `tols` let a pod stay under the `NoExecute` `taint`, as the
/// device taint eviction controller reads them: only tolerations whose
/// effect is `NoExecute` count; one without `tolerationSeconds` keeps the
/// pod for good (`None`); else the shortest, zero or less being at once;
/// none at all is at once.
fn tolerated_for(tols: &[DeviceToleration], taint: &DeviceTaint) -> Option<i64> {
    let mut soonest: Option<i64> = None;
    for t in tols {
        if t.effect.as_deref() != Some("NoExecute") || !tolerates(t, taint) {
            continue;
        }
        let secs = t.toleration_seconds?;
        soonest = Some(soonest.map_or(secs, |x| x.min(secs)));
    }
    Some(soonest.unwrap_or(0).max(0))
}

/// Which allocations in `claims` a `NoExecute` taint in `slices` evicts:
/// one entry per allocated device, for its earliest-evicting taint.
pub fn evictions(claims: &[ResourceClaim], slices: &[ResourceSlice]) -> Vec<Eviction> {
    // The newest generation of each pool, as the controller reads it.
    let cands = candidates(slices);
    let devices: BTreeMap<(&str, &str, &str), &Candidate> = cands
        .iter()
        .map(|c| ((c.driver.as_str(), c.pool.as_str(), c.name.as_str()), c))
        .collect();
    let mut out = Vec::new();
    for claim in claims {
        let name = format!(
            "{}/{}",
            claim.metadata.namespace.as_deref().unwrap_or("default"),
            claim.metadata.name.as_deref().unwrap_or("")
        );
        for r in results(claim) {
            let Some(c) = devices.get(&(r.driver.as_str(), r.pool.as_str(), r.device.as_str()))
            else {
                continue;
            };
            let tols = r.tolerations.as_deref().unwrap_or_default();
            let soonest = c
                .taints
                .iter()
                .filter(|t| t.effect == "NoExecute")
                .filter_map(|t| tolerated_for(tols, t).map(|s| (s, t)))
                .min_by_key(|(s, _)| *s);
            if let Some((after_seconds, t)) = soonest {
                out.push(Eviction {
                    claim: name.clone(),
                    request: r.request.clone(),
                    node: c.node.clone(),
                    pool: r.pool.clone(),
                    device: r.device.clone(),
                    taint: taint_text(t),
                    after_seconds,
                });
            }
        }
    }
    out
}
