// SPDX-License-Identifier: GPL-2.0
//! `dranet-sec`: see `dranet-sec --help`.

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use dranet_sec::discover::ifindex;
use dranet_sec::state::PortState;
use dranet_sec::{
    attrs, audit, discover, docs, genl, place, rtnl, rules, slice, taint, watch, webhook,
};
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The default domain of the MACsec attributes. Set your own with
/// `--domain`: attribute domains should be ones you control.
const DOMAIN: &str = "macsec.dranet-sec.io";

#[derive(Parser)]
#[command(
    version,
    about = "MACsec-protected RDMA egress as Kubernetes DRA device attributes"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// One row per RDMA port: RDMA device, netdev, protection, reason,
    /// relation, SecY, generation.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// One line per dev-change-ntf.
    Monitor {
        #[arg(long)]
        json: bool,
    },
    /// The node's ResourceSlice(s): the devices DRANet publishes (no
    /// loopback, uplink or veth), DRANet's attributes plus the MACsec
    /// ones, and a taint on each unprotected RDMA port.
    Slice {
        #[command(flatten)]
        node: NodeArgs,
        #[arg(long, value_enum, default_value_t = Output::Yaml)]
        output: Output,
        /// Emit a new set of slices whenever a device's attributes change:
        /// on the module's notifications and the kernel's link messages,
        /// a burst taken as one change (JSON: one document per line).
        #[arg(long)]
        watch: bool,
        /// An audit report (`audit --json`): each audited port gets
        /// `macsecWireVerified`, and a port that claims protection its
        /// wire denies gets the taint, the verdict its value.
        #[arg(long, value_name = "FILE")]
        audit: Option<PathBuf>,
        /// Publish veths too, for a DRANet whose `--filter` keeps them
        /// (its default leaves them out, and so does this).
        #[arg(long)]
        include_veth: bool,
    },
    /// Binds an RDMA port to a SecY, possibly in another network namespace
    /// (a DPU's): the port then advertises what that SecY protects.
    Bind {
        /// The port's interface name, in this namespace.
        #[arg(long)]
        port: String,
        /// The MACsec netdev: its name or ifindex in its namespace.
        #[arg(long)]
        secy: String,
        /// The SecY's network namespace: a name (`ip netns`), a path, or a
        /// pid. Default: this one.
        #[arg(long)]
        netns: Option<String>,
    },
    /// Undoes `bind`.
    Unbind {
        #[arg(long)]
        port: String,
    },
    /// DeviceTaintRules for the devices DRANet publishes itself: keeps
    /// `--dir` holding exactly one rule per unprotected RDMA port.
    TaintRules {
        #[command(flatten)]
        node: NodeArgs,
        /// The directory of rules (created if missing).
        #[arg(long)]
        dir: PathBuf,
        /// Keep it so as the module's notifications and the kernel's link
        /// messages come.
        #[arg(long)]
        watch: bool,
        /// How each change is reported on stdout.
        #[arg(long, value_enum, default_value_t = Events::Text)]
        output: Events,
    },
    /// A DRANet webhook provider on a unix socket: attributes for every
    /// device, and the profile `<domain>/protected`, which refuses to
    /// prepare a port whose RDMA egress is not hardware-protected.
    Webhook {
        #[arg(long)]
        socket: PathBuf,
        #[arg(long, default_value = DOMAIN)]
        domain: String,
        /// Every port's baseline config names the profile, so every pod
        /// that gets a port is checked, whether its claim asks or not.
        #[arg(long)]
        enforce: bool,
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
    },
    /// Where a ResourceClaim would go, as the scheduler's allocator
    /// places it (selectors, taints and tolerations, firstAvailable,
    /// matchAttribute, backtracking); with `--evict`, which allocated
    /// claims a NoExecute taint evicts.
    Place {
        /// Multi-document YAML with the ResourceClaim and its DeviceClasses.
        #[arg(long, required_unless_present = "evict")]
        claim: Option<String>,
        /// ResourceSlices (YAML, JSON, or JSON lines), from any nodes.
        #[arg(long, num_args = 1.., required = true)]
        slices: Vec<String>,
        /// ResourceClaims with `status.allocation`: their devices are in
        /// use, and `--evict` judges them.
        #[arg(long, num_args = 1..)]
        allocated: Vec<String>,
        /// Report the allocated claims that a NoExecute taint evicts.
        #[arg(long, requires = "allocated")]
        evict: bool,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Audits the wire: counts the RoCE and MACsec frames crossing each
    /// device (tcx, both directions) until the duration is over or the
    /// command is interrupted, then gives each tracked port whose wire was
    /// audited a verdict: verified, plaintext-on-wire, integrity-only or
    /// no-traffic. Exits 1 if a port claims protection the wire denies.
    Audit {
        /// The wires: for a `self` port its MACsec netdev's real device,
        /// for an `upper` port the port itself.
        #[arg(required = true)]
        devices: Vec<String>,
        /// Stop after this many seconds (default: at SIGINT or SIGTERM).
        #[arg(long)]
        duration: Option<u64>,
        /// Write the frames seen (their first 192 bytes) to FILE, as
        /// pcapng.
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// What is published about a node's devices, and where they are read.
#[derive(clap::Args)]
struct NodeArgs {
    /// The node: the pool's name.
    #[arg(long)]
    node: String,
    /// The DRA driver (and domain of its own attributes).
    #[arg(long, default_value = "dra.net")]
    driver: String,
    /// The domain of the MACsec attributes and of the taint key.
    #[arg(long, default_value = DOMAIN)]
    domain: String,
    /// The effect of the `<domain>/unprotected` taint on an RDMA port
    /// that is not hardware-protected.
    #[arg(long, value_enum, default_value_t = taint::Effect::NoSchedule)]
    taint_effect: taint::Effect,
    /// Where sysfs is.
    #[arg(long, default_value = "/sys")]
    sysfs: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Events {
    /// `create NAME`, `update NAME`, `delete NAME`.
    Text,
    /// One JSON object a line: `event`, `name`, `rule`.
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Yaml,
    Json,
}

fn secy(p: &PortState) -> String {
    match (p.secy_ifindex, p.secy_netnsid) {
        (Some(i), Some(n)) => format!("{i}@nsid{n}"),
        (Some(i), None) => i.to_string(),
        _ => "-".to_string(),
    }
}

fn row(p: &PortState) -> String {
    let rdma = if p.rdma_dev.is_empty() {
        "-".to_string()
    } else {
        p.rdma_dev.join(",")
    };
    format!(
        "{:<12} {:<12} {:<12} {:<16} {:<8} {:<10} {}",
        rdma,
        p.ifname,
        p.protection,
        p.reason,
        p.relation.as_deref().unwrap_or("-"),
        secy(p),
        p.generation
    )
}

const HEADER: &str =
    "RDMA         NETDEV       PROTECTION   REASON           RELATION SECY       GENERATION";

fn status(json: bool) -> Result<bool> {
    let ports = genl::Client::connect()?.dump()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&ports)?);
    } else {
        println!("{HEADER}");
        for p in &ports {
            println!("{}", row(p));
        }
    }
    Ok(true)
}

fn monitor(json: bool) -> Result<bool> {
    let mut c = genl::Client::connect()?;
    c.subscribe()?;
    let mut out = std::io::stdout();
    loop {
        let p = c.next_change()?;
        if json {
            writeln!(out, "{}", serde_json::to_string(&p)?)?;
        } else {
            writeln!(out, "{}", row(&p))?;
        }
        out.flush()?;
    }
}

fn emit(slices: &[ResourceSlice], output: Output, watch: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for s in slices {
        match (output, watch) {
            (Output::Json, true) => writeln!(out, "{}", serde_json::to_string(s)?)?,
            (Output::Json, false) => writeln!(out, "{}", serde_json::to_string_pretty(s)?)?,
            (Output::Yaml, _) => write!(out, "---\n{}", serde_yaml::to_string(s)?)?,
        }
    }
    out.flush()?;
    Ok(())
}

/// This moment, to the second, as `timeAdded` is shown.
fn now() -> Result<k8s_openapi::jiff::Timestamp> {
    let s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
    k8s_openapi::jiff::Timestamp::from_second(s.as_secs() as i64)
        .map_err(|e| anyhow::anyhow!("the clock: {e}"))
}

/// The devices, their taints stamped; what was left out is printed as
/// warnings, on every call.
fn devices(
    opts: &slice::Options,
    devs: &[attrs::NetDev],
    ports: &[PortState],
    clock: &mut taint::Clock,
) -> Result<Vec<k8s_openapi::api::resource::v1::Device>> {
    let (mut devices, warnings) = slice::devices(opts, devs, ports)?;
    for w in warnings {
        eprintln!("dranet-sec: {w}");
    }
    clock.stamp(&taint::key(&opts.domain), &mut devices, now()?);
    Ok(devices)
}

fn run_slice(opts: slice::Options, output: Output, watch: bool, sysfs: &Path) -> Result<bool> {
    let mut opts = opts;
    let mut clock = taint::Clock::default();
    // DRANet reads its uplinks once, when it starts: so does the watch.
    let links = rtnl::links().context("the links (rtnetlink)")?;
    opts.uplinks = rtnl::uplinks(&links, &rtnl::routes().context("the routes (rtnetlink)")?);
    if !watch {
        let ports = genl::Client::connect()?.dump()?;
        let mut netdevs = discover::netdevs(sysfs)?;
        rtnl::set_kinds(&mut netdevs, &links);
        let d = devices(&opts, &netdevs, &ports, &mut clock)?;
        emit(&slice::slices(&opts, d), output, false)?;
        return Ok(true);
    }
    let mut w = watch::Watch::start(sysfs)?;
    let mut last = slice::slices(&opts, devices(&opts, &w.netdevs(), w.ports(), &mut clock)?);
    emit(&last, output, true)?;
    loop {
        w.wait()?;
        let d = devices(&opts, &w.netdevs(), w.ports(), &mut clock)?;
        // A change that changes no device (a notification whose only news
        // is its generation, a link message about a counter) is no new
        // set of slices. The slices hold the devices in order.
        let before = last.iter().flat_map(|s| s.spec.devices.iter().flatten());
        if before.eq(d.iter()) {
            continue;
        }
        opts.generation += 1;
        last = slice::slices(&opts, d);
        emit(&last, output, true)?;
    }
}

/// The ifindex of `name` in this thread's network namespace.
/// The network namespace file `spec` names: a pid, a path, or a name
/// under `/run/netns`.
fn netns_file(spec: &str) -> Result<std::fs::File> {
    let path = if !spec.is_empty() && spec.bytes().all(|b| b.is_ascii_digit()) {
        format!("/proc/{spec}/ns/net")
    } else if spec.contains('/') {
        spec.to_string()
    } else {
        format!("/run/netns/{spec}")
    };
    std::fs::File::open(&path).with_context(|| format!("network namespace {spec:?} ({path})"))
}

/// The ifindex of `name` in the network namespace `ns`.
fn ifindex_in(ns: &std::fs::File, name: &str) -> Result<u32> {
    in_netns(Some(ns), || ifindex(name))
}

fn run_bind(port: &str, secy: &str, netns: Option<&str>) -> Result<bool> {
    use std::os::fd::AsRawFd as _;
    let port_ix = ifindex(port)?;
    let ns = netns.map(netns_file).transpose()?;
    let secy_ix = match (secy.parse::<u32>(), &ns) {
        (Ok(i), _) => i,
        (Err(_), Some(f)) => ifindex_in(f, secy)?,
        (Err(_), None) => ifindex(secy)?,
    };
    let mut c = genl::Client::connect()?;
    c.bind(port_ix, secy_ix, ns.as_ref().map(|f| f.as_raw_fd()))
        .context("bind")?;
    let where_ = netns.map_or(String::new(), |n| format!(" in network namespace {n}"));
    println!("{port} bound to {secy} (ifindex {secy_ix}){where_}");
    show_port(&mut c, port_ix)
}

fn run_unbind(port: &str) -> Result<bool> {
    let port_ix = ifindex(port)?;
    let mut c = genl::Client::connect()?;
    c.unbind(port_ix).context("unbind")?;
    println!("{port} unbound");
    show_port(&mut c, port_ix)
}

/// The port's row, if the kernel still tracks it.
fn show_port(c: &mut genl::Client, ifindex: u32) -> Result<bool> {
    if let Some(p) = c.dump()?.iter().find(|p| p.ifindex == ifindex) {
        println!("{HEADER}");
        println!("{}", row(p));
    }
    Ok(true)
}

fn run_taint_rules(
    opts: &rules::Options,
    dir: &Path,
    watch: bool,
    output: Events,
    sysfs: &Path,
) -> Result<bool> {
    if !attrs::is_domain(&opts.domain) || !attrs::is_domain(&opts.driver) {
        anyhow::bail!("--domain and --driver must be DNS subdomains");
    }
    let rd = rules::RuleDir::new(dir)?;
    let mut clock = taint::Clock::seeded(rd.times()?);
    // The host's view: a port DRANet moved into a pod keeps its rule.
    let mut w = if watch {
        Some(watch::Watch::start_host(sysfs)?)
    } else {
        None
    };
    let mut follow =
        rules::Follow::load(&dir.join(format!(".{}{}.ports", rules::PREFIX, opts.node)))?;
    let mut out = std::io::stdout();
    loop {
        let mut want = match &w {
            Some(w) => follow.wanted(opts, &w.netdevs(), w.ports(), w.away(), sysfs),
            None => {
                let (here, away): (Vec<_>, Vec<_>) = genl::Client::connect()?
                    .dump_all()?
                    .into_iter()
                    .partition(|p| p.netnsid.is_none());
                follow.wanted(opts, &discover::netdevs(sysfs)?, &here, &away, sysfs)
            }
        };
        follow.save()?;
        rules::stamp(&mut want, &mut clock, now()?);
        for e in rd.sync(&want)? {
            match output {
                Events::Json => writeln!(out, "{}", serde_json::to_string(&e)?)?,
                Events::Text => writeln!(out, "{} {}", e.event, e.name)?,
            }
        }
        out.flush()?;
        match &mut w {
            Some(w) => w.wait()?,
            None => return Ok(true),
        };
    }
}

/// The webhook's node: sysfs for netdevs, the kernel's family for ports.
/// DRANet asks about every device on every scan, so one question costs
/// one netdev's files and one `dev-get`, not the whole node.
struct SysNode<'a> {
    sysfs: &'a Path,
    /// One connection for every request; dropped after a failure, so the
    /// next request connects again (the module may have been reloaded).
    client: std::cell::RefCell<Option<genl::Client>>,
}

impl webhook::Node for SysNode<'_> {
    fn device(&self, q: &webhook::DeviceQuery) -> Result<Option<attrs::NetDev>> {
        // DRANet sends GetDeviceAttributes the interface name, and its
        // device name (`pci-…`) to the others: one netdev read either way.
        let found = discover::find(self.sysfs, &q.name, &q.pci_address, &q.mac_address)?;
        Ok(found.map(|mut d| {
            d.rdma_devices = discover::rdma_by_netdev(self.sysfs)
                .remove(&d.ifname)
                .unwrap_or_default();
            d
        }))
    }

    fn port(&self, ifname: &str) -> Result<Option<PortState>> {
        let Ok(index) = ifindex(ifname) else {
            return Ok(None);
        };
        let mut slot = self.client.borrow_mut();
        let c = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(genl::Client::connect()?),
        };
        let r = c.get(index);
        if r.is_err() {
            *slot = None;
        }
        // Renamed between the two questions: not the port that was meant.
        Ok(r?.filter(|p| p.ifname == ifname))
    }
}

fn run_webhook(socket: &Path, domain: &str, enforce: bool, sysfs: &Path) -> Result<bool> {
    if !attrs::is_domain(domain) {
        anyhow::bail!("--domain {domain:?} is not a DNS subdomain");
    }
    let cfg = webhook::Config {
        domain: domain.to_string(),
        enforce,
    };
    let node = SysNode {
        sysfs,
        client: std::cell::RefCell::new(None),
    };
    webhook::serve(&cfg, &node, socket, &|| {
        eprintln!("dranet-sec: webhook listening on {}", socket.display())
    })?;
    Ok(true)
}

fn read(path: &str) -> Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    docs::objects(&text).with_context(|| path.to_string())
}

fn claims_in(files: &[String]) -> Result<Vec<ResourceClaim>> {
    let mut out = Vec::new();
    for f in files {
        out.extend(docs::of_kind::<ResourceClaim>(&read(f)?, "ResourceClaim")?);
    }
    Ok(out)
}

fn run_place(
    claim: Option<&str>,
    slices: &[String],
    allocated: &[String],
    evict: bool,
    json: bool,
) -> Result<bool> {
    let mut all: Vec<ResourceSlice> = Vec::new();
    for f in slices {
        all.extend(docs::of_kind::<ResourceSlice>(&read(f)?, "ResourceSlice")?);
    }
    let held = claims_in(allocated)?;
    let placement = match claim {
        None => None,
        Some(path) => {
            let objs = read(path)?;
            let claims: Vec<ResourceClaim> = docs::of_kind(&objs, "ResourceClaim")?;
            let classes: Vec<DeviceClass> = docs::of_kind(&objs, "DeviceClass")?;
            let [claim] = claims.as_slice() else {
                anyhow::bail!(
                    "{path}: want exactly one ResourceClaim, found {}",
                    claims.len()
                );
            };
            Some(place::place(claim, &classes, &all, &held)?)
        }
    };
    let evictions = if evict {
        place::evictions(&held, &all)
    } else {
        Vec::new()
    };
    if json {
        let mut v = match &placement {
            Some(p) => serde_json::to_value(p)?,
            None => serde_json::json!({}),
        };
        if evict {
            v["evictions"] = serde_json::to_value(&evictions)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if let Some(p) = &placement {
            for a in &p.allocations {
                println!(
                    "request {}: node {} pool {} device {}",
                    a.request, a.node, a.pool, a.device
                );
            }
            for m in &p.problems {
                println!("unsatisfied: {m}");
            }
            for n in p.nodes.iter().filter(|n| !n.fits) {
                println!(
                    "node {}: {}",
                    n.node,
                    n.reason.as_deref().unwrap_or("does not fit")
                );
            }
            for r in &p.rejected {
                println!("rejected {}/{}: {}", r.node, r.device, r.reason);
            }
        }
        for e in &evictions {
            let when = match e.after_seconds {
                0 => "at once".to_string(),
                s => format!("{s} s after the taint was added"),
            };
            println!(
                "evict {} (request {}, node {} device {}): {} not tolerated, {when}",
                e.claim, e.request, e.node, e.device, e.taint
            );
        }
    }
    Ok(placement.is_none_or(|p| p.satisfied))
}

/// Set by SIGINT and SIGTERM: `audit` stops and reports.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; the clocks used are
    // always supported, and a failure leaves it zero.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `f` run on a thread in the network namespace of the file `ns`
/// (setns() moves only the calling thread), or here.
fn in_netns<T: Send>(
    ns: Option<&std::fs::File>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    use std::os::fd::AsRawFd as _;
    let Some(ns) = ns else { return f() };
    let fd = ns.as_raw_fd();
    std::thread::scope(|s| {
        s.spawn(move || {
            // SAFETY: `fd` is an open file descriptor for as long as `ns`
            // lives, which outlives this scoped thread.
            if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
                anyhow::bail!(
                    "entering the namespace: {}",
                    std::io::Error::last_os_error()
                );
            }
            f()
        })
        .join()
        .map_err(|_| anyhow::anyhow!("namespace thread panicked"))?
    })
}

fn run_audit(
    devices: &[String],
    duration: Option<u64>,
    pcap: Option<&Path>,
    json: bool,
) -> Result<bool> {
    use audit::Dir;
    use std::os::fd::AsRawFd as _;
    use std::time::{Duration, Instant};
    // NETNS:IFNAME or IFNAME (an interface name has no `:`).
    let mut taps = Vec::new();
    for spec in devices {
        let (ns, ifname) = match spec.rsplit_once(':') {
            Some((ns, ifname)) => (Some(netns_file(ns)?), ifname),
            None => (None, spec.as_str()),
        };
        let tap = in_netns(ns.as_ref(), || dranet_sec::tap::Tap::attach(ifname))
            .with_context(|| spec.clone())?;
        taps.push((spec.clone(), ns, tap));
    }
    let names: Vec<String> = taps.iter().map(|t| t.0.clone()).collect();
    let mut cap = pcap
        .map(|p| -> Result<_> {
            let f = std::fs::File::create(p).with_context(|| format!("{}", p.display()))?;
            Ok(audit::Pcapng::new(std::io::BufWriter::new(f), &names)?)
        })
        .transpose()?;
    // The program stamps frames with CLOCK_MONOTONIC; the capture wants
    // the time of day.
    let epoch = clock_ns(libc::CLOCK_REALTIME).wrapping_sub(clock_ns(libc::CLOCK_MONOTONIC));
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_stop` only stores to an atomic, which is
        // async-signal-safe.
        unsafe {
            libc::signal(
                sig,
                on_stop as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
    eprintln!(
        "dranet-sec audit: on {} (ingress and egress)",
        names.join(", ")
    );
    let end = duration.map(|s| Instant::now() + Duration::from_secs(s));
    loop {
        // Read once more after the stop, so the capture has every frame
        // counted until then.
        let last = STOP.load(std::sync::atomic::Ordering::Relaxed)
            || end.is_some_and(|e| Instant::now() >= e);
        for (i, (_, _, t)) in taps.iter_mut().enumerate() {
            t.drain(|b| {
                if let (Some(c), Some((ts, len, dir, _, data))) =
                    (cap.as_mut(), audit::parse_sample(b))
                {
                    c.packet(i as u32, ts.wrapping_add(epoch), dir, len, data)?;
                }
                Ok(())
            })?;
        }
        if last {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut counted = Vec::new();
    for (name, _, t) in &taps {
        counted.push(audit::Audited {
            name: name.clone(),
            nsid: None,
            ifindex: t.ifindex,
            ingress: t.counts(Dir::Ingress)?,
            egress: t.counts(Dir::Egress)?,
        });
    }
    let namespaces: Vec<Option<std::fs::File>> = taps.into_iter().map(|(_, ns, _)| ns).collect();
    if let Some(c) = cap {
        c.finish()?;
    }
    // The dump first: it gives the SecYs' namespaces their ids here.
    let ports = match genl::Client::connect().and_then(|mut c| c.dump()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("dranet-sec audit: no ports to judge: {e:#}");
            Vec::new()
        }
    };
    for (d, ns) in counted.iter_mut().zip(&namespaces) {
        if let Some(f) = ns {
            d.nsid = dranet_sec::rtnl::nsid(f.as_raw_fd())
                .with_context(|| format!("the id of {}'s namespace", d.name))?;
        }
    }
    let nsids: Vec<Option<i32>> = counted.iter().map(|d| d.nsid).collect();
    let iflink = |nsid: Option<i32>, ix: u32| -> Option<u32> {
        let ns = match nsid {
            None => None,
            Some(n) => Some(
                nsids
                    .iter()
                    .zip(&namespaces)
                    .find(|(id, _)| **id == Some(n))?
                    .1
                    .as_ref()?,
            ),
        };
        in_netns(ns, || dranet_sec::rtnl::iflink(ix)).ok().flatten()
    };
    let r = audit::report(&counted, &ports, iflink);
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{:<16} {:<8}", "DEVICE", "DIR");
        for c in [
            "roce",
            "enc",
            "int-roce",
            "int-other",
            "other",
            "malformed",
            "lost",
        ] {
            print!(" {c:>10}");
        }
        println!("  VERDICT");
        for d in &r.devices {
            for (dir, c) in [("ingress", &d.ingress), ("egress", &d.egress)] {
                print!("{:<16} {dir:<8}", d.device);
                for name in audit::COUNTERS {
                    print!(" {:>10}", c.get(name).copied().unwrap_or(0));
                }
                println!("  {}", d.verdict.map_or("", |v| v.as_str()));
            }
        }
        println!(
            "{:<16} {:<12} {:<8} {:<16} VERDICT",
            "PORT", "PROTECTION", "RELATION", "WIRE"
        );
        for p in &r.ports {
            println!(
                "{:<16} {:<12} {:<8} {:<16} {}{}",
                p.ifname,
                p.protection,
                p.relation.as_deref().unwrap_or("-"),
                p.wire,
                p.verdict.as_str(),
                if p.contradicts {
                    "  (contradicts the port)"
                } else {
                    ""
                }
            );
        }
        if r.ports.iter().any(|p| p.hook_before_offload) {
            println!(
                "note: an offloaded SecY encrypts in the NIC, after this host's hook: on real \
                 hardware, audit a mirror port or a tap on the wire"
            );
        }
        for u in &r.unaudited {
            println!("{:<16} not audited: {}", u.ifname, u.why);
        }
    }
    Ok(!r.ports.iter().any(|p| p.contradicts))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Status { json } => status(json),
        Cmd::Monitor { json } => monitor(json),
        Cmd::Slice {
            node,
            output,
            watch,
            audit,
            include_veth,
        } => audit
            .map(|f| -> Result<_> {
                let text = std::fs::read_to_string(&f).with_context(|| f.display().to_string())?;
                audit::port_verdicts(&text)
                    .with_context(|| format!("{}: not an audit report", f.display()))
            })
            .transpose()
            .and_then(|wire| {
                let opts = slice::Options {
                    node: node.node,
                    driver: node.driver,
                    domain: node.domain,
                    generation: 1,
                    effect: node.taint_effect,
                    wire: wire.unwrap_or_default(),
                    uplinks: Default::default(),
                    include_veth,
                };
                run_slice(opts, output, watch, &node.sysfs)
            }),
        Cmd::Bind { port, secy, netns } => run_bind(&port, &secy, netns.as_deref()),
        Cmd::Unbind { port } => run_unbind(&port),
        Cmd::TaintRules {
            node,
            dir,
            watch,
            output,
        } => {
            let opts = rules::Options {
                node: node.node,
                driver: node.driver,
                domain: node.domain,
                effect: node.taint_effect,
            };
            run_taint_rules(&opts, &dir, watch, output, &node.sysfs)
        }
        Cmd::Webhook {
            socket,
            domain,
            enforce,
            sysfs,
        } => run_webhook(&socket, &domain, enforce, &sysfs),
        Cmd::Audit {
            devices,
            duration,
            pcap,
            json,
        } => run_audit(&devices, duration, pcap.as_deref(), json),
        Cmd::Place {
            claim,
            slices,
            allocated,
            evict,
            json,
        } => run_place(claim.as_deref(), &slices, &allocated, evict, json),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("dranet-sec: {e:#}");
            ExitCode::from(2)
        }
    }
}
