// SPDX-License-Identifier: GPL-2.0
//! Questions to rtnetlink, asked in the calling thread's network
//! namespace: a device's link (`IFLA_LINK`: a MACsec netdev's real device),
//! the id this namespace has for another one (`RTM_GETNSID`, as the
//! module's `secy-netnsid` is given), and every link's kind and master and
//! the routes, from which DRANet's uplinks follow ([`uplinks`]). sysfs
//! cannot answer the first two for a namespace other than the one it was
//! mounted in, nor tell a veth from a NIC.

use crate::attrs::NetDev;
use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP_INTR: u16 = 0x10;
const NLM_F_DUMP: u16 = 0x300;
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWROUTE: u16 = 24;
const RTM_GETROUTE: u16 = 26;
const RTM_NEWNSID: u16 = 88;
const RTM_GETNSID: u16 = 90;
const IFLA_IFNAME: u16 = 3;
const IFLA_LINK: u16 = 5;
const IFLA_MASTER: u16 = 10;
const IFLA_LINKINFO: u16 = 18;
const IFLA_INFO_KIND: u16 = 1;
const RTA_DST: u16 = 1;
const RTA_OIF: u16 = 4;
const RTA_PRIORITY: u16 = 6;
const RTA_MULTIPATH: u16 = 9;
const RTA_TABLE: u16 = 15;
const RTM_F_CLONED: u32 = 0x200;
const RT_TABLE_MAIN: u32 = 254;
const AF_INET: u8 = libc::AF_INET as u8;
const AF_INET6: u8 = libc::AF_INET6 as u8;
const NETNSA_NSID: u16 = 1;
const NETNSA_FD: u16 = 3;
const HDR: usize = 16;
/// `struct ifinfomsg` and `struct rtmsg`: the fixed parts.
const IFINFOMSG: usize = 16;
const RTMSG: usize = 12;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// A request: the header, `family` (the fixed part, padded), attributes.
fn message(ty: u16, family: &[u8], attrs: &[(u16, &[u8])]) -> Vec<u8> {
    message_with(ty, NLM_F_REQUEST, family, attrs)
}

/// [`message`] with the header's `flags`.
pub(crate) fn message_with(ty: u16, flags: u16, family: &[u8], attrs: &[(u16, &[u8])]) -> Vec<u8> {
    let mut m = vec![0u8; HDR];
    m.extend_from_slice(family);
    m.resize(align4(m.len()), 0);
    for (t, v) in attrs {
        m.extend_from_slice(&((4 + v.len()) as u16).to_ne_bytes());
        m.extend_from_slice(&t.to_ne_bytes());
        m.extend_from_slice(v);
        m.resize(align4(m.len()), 0);
    }
    let len = m.len() as u32;
    m[0..4].copy_from_slice(&len.to_ne_bytes());
    m[4..6].copy_from_slice(&ty.to_ne_bytes());
    m[6..8].copy_from_slice(&flags.to_ne_bytes());
    m[8..12].copy_from_slice(&1u32.to_ne_bytes());
    m
}

/// The attributes of a reply of type `want` whose fixed part is `fixed`
/// bytes, as (type, payload); an error reply is its errno.
fn attributes(reply: &[u8], want: u16, fixed: usize) -> Result<Vec<(u16, &[u8])>> {
    if reply.len() < HDR {
        bail!("rtnetlink: a reply of {} bytes", reply.len());
    }
    let len = (u32::from_ne_bytes(reply[0..4].try_into()?) as usize).min(reply.len());
    let ty = u16::from_ne_bytes(reply[4..6].try_into()?);
    if ty == NLMSG_ERROR {
        let e = reply
            .get(HDR..HDR + 4)
            .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
        bail!("rtnetlink: {}", std::io::Error::from_raw_os_error(-e));
    }
    if ty != want {
        bail!("rtnetlink: reply type {ty}, not {want}");
    }
    nested(reply.get(HDR + align4(fixed)..len).unwrap_or_default())
}

/// The attributes laid end to end in `buf` (a message's, or a nested
/// attribute's payload), as (type, payload).
fn nested(buf: &[u8]) -> Result<Vec<(u16, &[u8])>> {
    let mut out = Vec::new();
    let mut o = 0;
    while o + 4 <= buf.len() {
        let l = u16::from_ne_bytes([buf[o], buf[o + 1]]) as usize;
        let t = u16::from_ne_bytes([buf[o + 2], buf[o + 3]]) & 0x3fff;
        if l < 4 || o + l > buf.len() {
            bail!("rtnetlink: an attribute runs past its message");
        }
        out.push((t, &buf[o + 4..o + l]));
        o += align4(l);
    }
    Ok(out)
}

/// A socket on rtnetlink that has sent `req` to the kernel.
fn send(req: &[u8]) -> Result<OwnedFd> {
    // SAFETY: plain socket(2); the result is checked before use.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        bail!("rtnetlink socket: {}", std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `req` is valid for its length; a zeroed sockaddr_nl with
    // the family set addresses the kernel.
    let sent = unsafe {
        let mut sa: libc::sockaddr_nl = std::mem::zeroed();
        sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&sa as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        bail!("rtnetlink send: {}", std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// The next datagram on `fd`; one longer than the buffer is an error, not
/// a message cut short.
fn recv(fd: &OwnedFd) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; 65536];
    // SAFETY: `buf` is valid for writes of its length.
    let n = unsafe {
        libc::recv(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_TRUNC,
        )
    };
    if n < 0 {
        bail!("rtnetlink recv: {}", std::io::Error::last_os_error());
    }
    if n as usize > buf.len() {
        bail!("rtnetlink: a datagram of {n} bytes");
    }
    buf.truncate(n as usize);
    Ok(buf)
}

fn ask(req: &[u8]) -> Result<Vec<u8>> {
    recv(&send(req)?)
}

/// What a dump gave: its messages of the type asked for, whole, and
/// whether the kernel flagged it inconsistent (`NLM_F_DUMP_INTR`: the
/// table changed while it was dumped).
#[derive(Debug, Default, PartialEq, Eq)]
struct Dump {
    messages: Vec<Vec<u8>>,
    interrupted: bool,
}

/// The messages of type `want` in the datagrams `next` gives, up to the
/// dump's `NLMSG_DONE`; an error message is its errno.
fn collect(want: u16, mut next: impl FnMut() -> Result<Vec<u8>>) -> Result<Dump> {
    let mut d = Dump::default();
    loop {
        let buf = next()?;
        let mut o = 0;
        while o + HDR <= buf.len() {
            let len = u32::from_ne_bytes(buf[o..o + 4].try_into()?) as usize;
            let ty = u16::from_ne_bytes(buf[o + 4..o + 6].try_into()?);
            let flags = u16::from_ne_bytes(buf[o + 6..o + 8].try_into()?);
            if len < HDR || o + len > buf.len() {
                bail!("rtnetlink: a message runs past its datagram");
            }
            let msg = &buf[o..o + len];
            d.interrupted |= flags & NLM_F_DUMP_INTR != 0;
            match ty {
                NLMSG_DONE => return Ok(d),
                // Fails with the errno it carries.
                NLMSG_ERROR => drop(attributes(msg, want, 0)?),
                t if t == want => d.messages.push(msg.to_vec()),
                _ => {}
            }
            o += align4(len);
        }
        if buf.is_empty() {
            bail!("rtnetlink: the dump ended without NLMSG_DONE");
        }
    }
}

/// The messages of a dump, asked again while the kernel says the table
/// changed under it, five times at most, then taken as they are: what
/// DRANet's netlink wrapper does (`internal/nlwrap`).
fn dump(ty: u16, family: &[u8], want: u16) -> Result<Vec<Vec<u8>>> {
    let req = message_with(ty, NLM_F_REQUEST | NLM_F_DUMP, family, &[]);
    let mut attempt = 1;
    loop {
        let fd = send(&req)?;
        let d = collect(want, || recv(&fd))?;
        if !d.interrupted || attempt == 5 {
            return Ok(d.messages);
        }
        attempt += 1;
    }
}

/// A string attribute's payload, without its NUL.
fn string(v: &[u8]) -> String {
    let end = v.iter().position(|b| *b == 0).unwrap_or(v.len());
    String::from_utf8_lossy(&v[..end]).into_owned()
}

fn u32_of(v: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?))
}

/// The link of device `ifindex` (`IFLA_LINK`), or `None` if it has none.
pub fn iflink(ifindex: u32) -> Result<Option<u32>> {
    // struct ifinfomsg: family, pad, type, index, flags, change.
    let mut ifi = [0u8; 16];
    ifi[4..8].copy_from_slice(&(ifindex as i32).to_ne_bytes());
    let reply = ask(&message(RTM_GETLINK, &ifi, &[]))?;
    link_of(&reply)
}

fn link_of(reply: &[u8]) -> Result<Option<u32>> {
    for (t, v) in attributes(reply, RTM_NEWLINK, 16)? {
        if t == IFLA_LINK && v.len() == 4 {
            return Ok(Some(u32::from_ne_bytes(v.try_into()?)));
        }
    }
    Ok(None)
}

/// A link as a link dump or message describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkInfo {
    pub index: u32,
    pub name: String,
    /// `IFLA_INFO_KIND` (`veth`, `macsec`, `bond`, ...); empty for a link
    /// without one (a NIC's own netdev, netdevsim's).
    pub kind: String,
    /// The device it is enslaved to (`IFLA_MASTER`: a bond, a bridge, a
    /// VRF).
    pub master: Option<u32>,
}

/// The kind in an `IFLA_LINKINFO` payload (`IFLA_INFO_KIND`), or empty: a
/// bond's or bridge's port that is a NIC carries only its
/// `IFLA_INFO_SLAVE_KIND`, which says what its master is, not what it is.
pub fn info_kind(linkinfo: &[u8]) -> Result<String> {
    Ok(nested(linkinfo)?
        .into_iter()
        .find(|(t, _)| *t == IFLA_INFO_KIND)
        .map_or_else(String::new, |(_, v)| string(v)))
}

fn link_info(msg: &[u8]) -> Result<LinkInfo> {
    let index = msg
        .get(HDR + 4..HDR + 8)
        .and_then(u32_of)
        .ok_or_else(|| anyhow::anyhow!("rtnetlink: RTM_NEWLINK without its ifinfomsg"))?;
    let mut l = LinkInfo {
        index,
        ..Default::default()
    };
    for (t, v) in attributes(msg, RTM_NEWLINK, IFINFOMSG)? {
        match t {
            IFLA_IFNAME => l.name = string(v),
            IFLA_LINKINFO => l.kind = info_kind(v)?,
            IFLA_MASTER => l.master = u32_of(v).filter(|m| *m != 0),
            _ => {}
        }
    }
    Ok(l)
}

/// Every link of this namespace (one `RTM_GETLINK` dump).
pub fn links() -> Result<Vec<LinkInfo>> {
    dump(RTM_GETLINK, &[0u8; IFINFOMSG], RTM_NEWLINK)?
        .iter()
        .map(|m| link_info(m))
        .collect()
}

/// `devs` with their kinds, by interface name; one `links` does not list
/// keeps its kind unknown.
pub fn set_kinds<'a>(devs: &mut [NetDev], links: impl IntoIterator<Item = &'a LinkInfo>) {
    let kinds: BTreeMap<&str, &str> = links
        .into_iter()
        .map(|l| (l.name.as_str(), l.kind.as_str()))
        .collect();
    for d in devs {
        d.kind = kinds.get(d.ifname.as_str()).map(|k| k.to_string());
    }
}

/// A route, as much of it as says whether it is a default route and
/// through which devices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    pub family: u8,
    /// `RTA_TABLE`, else `rtm_table`.
    pub table: u32,
    /// `RTA_DST`, absent for a default route, and `rtm_dst_len`.
    pub dst: Option<Vec<u8>>,
    pub dst_len: u8,
    /// `RTA_PRIORITY`, the metric; 0 when absent.
    pub priority: u32,
    /// The devices it leaves through: each next hop's of a multipath
    /// route, else its `RTA_OIF` (none for a route through a nexthop
    /// object, or a blackhole).
    pub oifs: Vec<u32>,
}

/// The route in a `RTM_NEWROUTE` message; `None` for a cloned one (a
/// cache entry, not a route in a table).
fn route_of(msg: &[u8]) -> Result<Option<Route>> {
    let Some(rtm) = msg.get(HDR..HDR + RTMSG) else {
        bail!("rtnetlink: RTM_NEWROUTE without its rtmsg");
    };
    let flags = u32::from_ne_bytes(rtm[8..12].try_into()?);
    if flags & RTM_F_CLONED != 0 {
        return Ok(None);
    }
    let mut r = Route {
        family: rtm[0],
        dst_len: rtm[1],
        table: rtm[4] as u32,
        ..Default::default()
    };
    let (mut oif, mut hops) = (None, Vec::new());
    for (t, v) in attributes(msg, RTM_NEWROUTE, RTMSG)? {
        match t {
            RTA_DST => r.dst = Some(v.to_vec()),
            RTA_OIF => oif = u32_of(v),
            RTA_PRIORITY => r.priority = u32_of(v).unwrap_or(0),
            RTA_TABLE => r.table = u32_of(v).unwrap_or(r.table),
            RTA_MULTIPATH => hops = next_hops(v)?,
            _ => {}
        }
    }
    r.oifs = if hops.is_empty() {
        oif.into_iter().collect()
    } else {
        hops
    };
    r.oifs.retain(|i| *i != 0);
    Ok(Some(r))
}

/// The devices of the `struct rtnexthop`s in an `RTA_MULTIPATH` payload.
fn next_hops(buf: &[u8]) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    let mut o = 0;
    while o + 8 <= buf.len() {
        let l = u16::from_ne_bytes([buf[o], buf[o + 1]]) as usize;
        if l < 8 || o + l > buf.len() {
            bail!("rtnetlink: a next hop runs past its route");
        }
        out.extend(u32_of(&buf[o + 4..o + 8]));
        o += align4(l);
    }
    Ok(out)
}

/// Every route of this namespace's tables, of every family (one
/// `RTM_GETROUTE` dump), cloned ones left out.
pub fn routes() -> Result<Vec<Route>> {
    let mut out = Vec::new();
    for m in dump(RTM_GETROUTE, &[0u8; RTMSG], RTM_NEWROUTE)? {
        out.extend(route_of(&m)?);
    }
    Ok(out)
}

/// `0.0.0.0`, `::`, or `::ffff:0.0.0.0` (Go's `IsUnspecified`).
fn unspecified(a: &[u8]) -> bool {
    match a.len() {
        4 => a.iter().all(|b| *b == 0),
        16 => {
            a.iter().all(|b| *b == 0)
                || (a[..10].iter().all(|b| *b == 0)
                    && a[10..12] == [0xff, 0xff]
                    && a[12..] == [0; 4])
        }
        _ => false,
    }
}

/// A default route as DRANet takes one: no destination, or `0.0.0.0/0`
/// or `::/0`.
fn is_default(r: &Route) -> bool {
    r.dst
        .as_deref()
        .is_none_or(|d| r.dst_len == 0 && unspecified(d))
}

/// The interfaces DRANet leaves out of its inventory as uplinks
/// (`getExcludedUplinkInterfaces`, kubernetes-sigs/dranet
/// `pkg/inventory/net.go`): the devices of the main table's default
/// routes, IPv4 and IPv6, each family's of the lowest metric (all of them
/// on a tie, and every next hop's of a multipath route), and every link
/// enslaved to one of those, recursively (a bond's slaves, a bridge's
/// ports, a VRF's). A link that only sits on one (`IFLA_LINK`: a VLAN, a
/// macvlan, an ipvlan, a MACsec netdev) is not enslaved to it and stays.
pub fn uplinks(links: &[LinkInfo], routes: &[Route]) -> BTreeSet<String> {
    let by_index: BTreeMap<u32, &LinkInfo> = links.iter().map(|l| (l.index, l)).collect();
    // Per family: the lowest metric yet and its devices. DRANet starts
    // from MaxInt32, so a metric above it never counts.
    let mut best: [(i64, BTreeSet<&str>); 2] = [
        (i32::MAX as i64, BTreeSet::new()),
        (i32::MAX as i64, BTreeSet::new()),
    ];
    for r in routes {
        let f = match r.family {
            AF_INET => 0,
            AF_INET6 => 1,
            _ => continue,
        };
        if r.table != RT_TABLE_MAIN || !is_default(r) {
            continue;
        }
        let metric = r.priority as i64;
        for l in r.oifs.iter().filter_map(|i| by_index.get(i)) {
            if metric < best[f].0 {
                best[f] = (metric, BTreeSet::from([l.name.as_str()]));
            } else if metric == best[f].0 {
                best[f].1.insert(l.name.as_str());
            }
        }
    }
    let mut out: BTreeSet<String> = best
        .iter()
        .flat_map(|(_, names)| names.iter().map(|n| n.to_string()))
        .collect();
    let mut children: BTreeMap<u32, Vec<&LinkInfo>> = BTreeMap::new();
    for l in links {
        if let Some(m) = l.master {
            children.entry(m).or_default().push(l);
        }
    }
    let mut queue: Vec<u32> = links
        .iter()
        .filter(|l| out.contains(&l.name))
        .map(|l| l.index)
        .collect();
    let mut i = 0;
    while i < queue.len() {
        // Taken out once visited: a loop of masters ends.
        for c in children.remove(&queue[i]).unwrap_or_default() {
            out.insert(c.name.clone());
            queue.push(c.index);
        }
        i += 1;
    }
    out
}

/// The id this namespace has for the namespace of the file `fd`, or
/// `None` if it has none (`NETNSA_NSID_NOT_ASSIGNED`).
pub fn nsid(fd: RawFd) -> Result<Option<i32>> {
    let reply = ask(&message(
        RTM_GETNSID,
        &[libc::AF_UNSPEC as u8],
        &[(NETNSA_FD, &(fd as u32).to_ne_bytes())],
    ))?;
    nsid_of(&reply)
}

fn nsid_of(reply: &[u8]) -> Result<Option<i32>> {
    for (t, v) in attributes(reply, RTM_NEWNSID, 1)? {
        if t == NETNSA_NSID && v.len() == 4 {
            let id = i32::from_ne_bytes(v.try_into()?);
            return Ok((id >= 0).then_some(id));
        }
    }
    bail!("rtnetlink: RTM_NEWNSID without NETNSA_NSID")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(ty: u16, fixed: usize, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        message(ty, &vec![0u8; fixed], attrs)
    }

    #[test]
    fn requests_are_laid_out_as_the_kernel_reads_them() {
        let m = message(RTM_GETNSID, &[0], &[(NETNSA_FD, &7u32.to_ne_bytes())]);
        // header, rtgenmsg padded to 4, one 8-byte attribute
        assert_eq!(m.len(), 16 + 4 + 8);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 28);
        assert_eq!(u16::from_ne_bytes(m[4..6].try_into().unwrap()), RTM_GETNSID);
        assert_eq!(&m[20..22], &8u16.to_ne_bytes());
        assert_eq!(&m[22..24], &NETNSA_FD.to_ne_bytes());
        assert_eq!(&m[24..28], &7u32.to_ne_bytes());
        let mut ifi = [0u8; 16];
        ifi[4..8].copy_from_slice(&5i32.to_ne_bytes());
        assert_eq!(message(RTM_GETLINK, &ifi, &[]).len(), 32);
    }

    #[test]
    fn replies_are_read() {
        let name: &[u8] = b"macsec0\0";
        let r = reply(
            RTM_NEWLINK,
            16,
            &[(3, name), (IFLA_LINK, &4u32.to_ne_bytes())],
        );
        assert_eq!(link_of(&r).unwrap(), Some(4));
        let r = reply(RTM_NEWLINK, 16, &[(3, name)]);
        assert_eq!(link_of(&r).unwrap(), None);
        let r = reply(RTM_NEWNSID, 1, &[(NETNSA_NSID, &3i32.to_ne_bytes())]);
        assert_eq!(nsid_of(&r).unwrap(), Some(3));
        let r = reply(RTM_NEWNSID, 1, &[(NETNSA_NSID, &(-1i32).to_ne_bytes())]);
        assert_eq!(nsid_of(&r).unwrap(), None);
        assert!(nsid_of(&reply(RTM_NEWNSID, 1, &[])).is_err());
        // An error reply is its errno.
        let e = reply(NLMSG_ERROR, 16, &[]);
        let mut e = e;
        e[16..20].copy_from_slice(&(-19i32).to_ne_bytes());
        let msg = format!("{}", link_of(&e).unwrap_err());
        assert!(msg.contains("No such device"), "{msg}");
        // An attribute that runs past the message is refused.
        let mut r = reply(RTM_NEWLINK, 16, &[(IFLA_LINK, &4u32.to_ne_bytes())]);
        r[32..34].copy_from_slice(&40u16.to_ne_bytes());
        assert!(link_of(&r).is_err());
        assert!(link_of(&r[..8]).is_err());
        assert!(link_of(&reply(RTM_NEWNSID, 16, &[])).is_err());
    }

    /// Attributes laid end to end, as a nested attribute's payload.
    fn nest(attrs: &[(u16, &[u8])]) -> Vec<u8> {
        message(0, &[], attrs)[HDR..].to_vec()
    }

    /// A link as a dump's `RTM_NEWLINK` gives it.
    fn newlink(index: u32, name: &str, linkinfo: Option<&[u8]>, master: u32) -> Vec<u8> {
        let mut ifi = [0u8; IFINFOMSG];
        ifi[4..8].copy_from_slice(&index.to_ne_bytes());
        let name = format!("{name}\0");
        let master = master.to_ne_bytes();
        let mut attrs: Vec<(u16, &[u8])> = vec![(IFLA_IFNAME, name.as_bytes())];
        if let Some(li) = linkinfo {
            attrs.push((IFLA_LINKINFO, li));
        }
        if master != [0; 4] {
            attrs.push((IFLA_MASTER, &master));
        }
        message_with(RTM_NEWLINK, NLM_F_DUMP, &ifi, &attrs)
    }

    fn done() -> Vec<u8> {
        message_with(NLMSG_DONE, NLM_F_DUMP, &0i32.to_ne_bytes(), &[])
    }

    /// A dump of `datagrams`, each the concatenation of its messages.
    fn dump_of(want: u16, datagrams: Vec<Vec<Vec<u8>>>) -> Result<Dump> {
        let mut it = datagrams.into_iter().map(|d| d.concat());
        collect(want, || Ok(it.next().unwrap_or_default()))
    }

    #[test]
    fn a_link_dump_gives_names_kinds_and_masters() {
        let veth = nest(&[(IFLA_INFO_KIND, b"veth\0")]);
        // A bond's port that is a NIC: only what its master is.
        let port = nest(&[(4, b"bond\0")]);
        let d = dump_of(
            RTM_NEWLINK,
            vec![
                vec![
                    newlink(2, "eth0", None, 0),
                    newlink(3, "v0", Some(&veth), 0),
                ],
                vec![newlink(4, "eth1", Some(&port), 5), done()],
                vec![newlink(9, "never", None, 0)],
            ],
        )
        .unwrap();
        assert!(!d.interrupted);
        let links: Vec<LinkInfo> = d.messages.iter().map(|m| link_info(m).unwrap()).collect();
        let l = |index, name: &str, kind: &str, master| LinkInfo {
            index,
            name: name.into(),
            kind: kind.into(),
            master,
        };
        assert_eq!(
            links,
            [
                l(2, "eth0", "", None),
                l(3, "v0", "veth", None),
                l(4, "eth1", "", Some(5)),
            ],
            "up to NLMSG_DONE, and not beyond"
        );
        // Kinds go to the netdevs of the same name; an unlisted one's
        // stays unknown.
        let mut devs: Vec<NetDev> = ["v0", "eth0", "gone"]
            .iter()
            .map(|n| NetDev {
                ifname: n.to_string(),
                ..Default::default()
            })
            .collect();
        set_kinds(&mut devs, &links);
        let kinds: Vec<Option<&str>> = devs.iter().map(|d| d.kind.as_deref()).collect();
        assert_eq!(kinds, [Some("veth"), Some(""), None]);
    }

    #[test]
    fn a_dump_says_when_it_was_interrupted_and_fails_with_its_errno() {
        let mut m = newlink(2, "eth0", None, 0);
        m[6..8].copy_from_slice(&(NLM_F_DUMP | NLM_F_DUMP_INTR).to_ne_bytes());
        let d = dump_of(RTM_NEWLINK, vec![vec![m, done()]]).unwrap();
        assert!(d.interrupted);
        assert_eq!(d.messages.len(), 1);
        let mut e = message_with(NLMSG_ERROR, 0, &[0u8; 20], &[]);
        e[16..20].copy_from_slice(&(-(libc::EPERM)).to_ne_bytes());
        let msg = format!("{}", dump_of(RTM_NEWLINK, vec![vec![e]]).unwrap_err());
        assert!(msg.contains("not permitted"), "{msg}");
        // A socket that says no more before NLMSG_DONE.
        assert!(dump_of(RTM_NEWLINK, vec![vec![newlink(2, "eth0", None, 0)]]).is_err());
        // A message longer than its datagram.
        let mut m = newlink(2, "eth0", None, 0);
        m[0..4].copy_from_slice(&4096u32.to_ne_bytes());
        assert!(dump_of(RTM_NEWLINK, vec![vec![m]]).is_err());
    }

    /// An `RTM_NEWROUTE`: family, prefix length, table (rtm_table, and
    /// RTA_TABLE if `rta_table`), flags, then attributes.
    fn newroute(family: u8, dst_len: u8, table: u8, flags: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut rtm = [0u8; RTMSG];
        rtm[0] = family;
        rtm[1] = dst_len;
        rtm[4] = table;
        rtm[8..12].copy_from_slice(&flags.to_ne_bytes());
        message_with(RTM_NEWROUTE, NLM_F_DUMP, &rtm, attrs)
    }

    fn rtnh(ifindex: u32) -> Vec<u8> {
        let mut h = vec![0u8; 8];
        h[0..2].copy_from_slice(&8u16.to_ne_bytes());
        h[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        h
    }

    #[test]
    fn routes_are_read_as_dranets_netlink_library_reads_them() {
        let main = RT_TABLE_MAIN.to_ne_bytes();
        let oif = 2u32.to_ne_bytes();
        let metric = 100u32.to_ne_bytes();
        // IPv4 0.0.0.0/0 via eth0, metric 100, RTA_TABLE over rtm_table.
        let r = newroute(
            AF_INET,
            0,
            0,
            0,
            &[(RTA_TABLE, &main), (RTA_OIF, &oif), (RTA_PRIORITY, &metric)],
        );
        let got = route_of(&r).unwrap().unwrap();
        assert_eq!(
            got,
            Route {
                family: AF_INET,
                table: RT_TABLE_MAIN,
                dst: None,
                dst_len: 0,
                priority: 100,
                oifs: vec![2],
            }
        );
        assert!(is_default(&got));
        // Multipath: every next hop's device, not RTA_OIF.
        let hops = [rtnh(3), rtnh(4)].concat();
        let r = newroute(
            AF_INET6,
            0,
            254,
            0,
            &[(RTA_OIF, &oif), (RTA_MULTIPATH, &hops)],
        );
        let got = route_of(&r).unwrap().unwrap();
        assert_eq!(
            (got.table, got.oifs.as_slice()),
            (RT_TABLE_MAIN, &[3, 4][..])
        );
        // A cloned route is no route of a table.
        let r = newroute(AF_INET, 0, 254, RTM_F_CLONED, &[(RTA_OIF, &oif)]);
        assert_eq!(route_of(&r).unwrap(), None);
        // 10.0.0.0/8 and ::/0 with its RTA_DST: one default, one not.
        let r = newroute(AF_INET, 8, 254, 0, &[(RTA_DST, &[10, 0, 0, 0])]);
        assert!(!is_default(&route_of(&r).unwrap().unwrap()));
        let r = newroute(AF_INET6, 0, 254, 0, &[(RTA_DST, &[0; 16])]);
        assert!(is_default(&route_of(&r).unwrap().unwrap()));
        let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0];
        let r = newroute(AF_INET6, 0, 254, 0, &[(RTA_DST, &mapped)]);
        assert!(is_default(&route_of(&r).unwrap().unwrap()));
        // A next hop that runs past its route.
        let mut bad = rtnh(3);
        bad[0..2].copy_from_slice(&16u16.to_ne_bytes());
        let r = newroute(AF_INET, 0, 254, 0, &[(RTA_MULTIPATH, &bad)]);
        assert!(route_of(&r).is_err());
    }

    fn link(index: u32, name: &str, master: Option<u32>) -> LinkInfo {
        LinkInfo {
            index,
            name: name.into(),
            kind: String::new(),
            master,
        }
    }

    fn default_via(family: u8, priority: u32, oifs: &[u32]) -> Route {
        Route {
            family,
            table: RT_TABLE_MAIN,
            priority,
            oifs: oifs.to_vec(),
            ..Default::default()
        }
    }

    fn names(s: BTreeSet<String>) -> Vec<String> {
        s.into_iter().collect()
    }

    /// DRANet's own cases (`TestGetExcludedUplinkInterfaces`): the uplink,
    /// what is enslaved to it, recursively; not what only sits on it.
    #[test]
    fn uplinks_and_what_is_enslaved_to_them() {
        let v4 = |oif| vec![default_via(AF_INET, 0, &[oif])];
        // The uplink alone.
        let links = [link(1, "lo", None), link(2, "br0", None)];
        assert_eq!(names(uplinks(&links, &v4(2))), ["br0"]);
        // A port of it, and a bond in it with a dummy enslaved to that.
        let links = [
            link(2, "br0", None),
            link(3, "vf0", Some(2)),
            link(4, "vf0child", Some(3)),
            link(5, "eth1", None),
        ];
        assert_eq!(names(uplinks(&links, &v4(2))), ["br0", "vf0", "vf0child"]);
        // A macvlan, VLAN or MACsec netdev on the uplink (IFLA_LINK, no
        // master) stays, as does an unrelated NIC.
        let links = [
            link(2, "eth0", None),
            link(3, "mv0", None),
            link(4, "eth0.7", None),
            link(5, "eth1", None),
        ];
        assert_eq!(names(uplinks(&links, &v4(2))), ["eth0"]);
        // No default route, no uplink; a master loop ends.
        let links = [link(2, "a", Some(3)), link(3, "b", Some(2))];
        assert!(uplinks(&links, &[]).is_empty());
        assert_eq!(names(uplinks(&links, &v4(2))), ["a", "b"]);
    }

    #[test]
    fn the_lowest_metric_of_each_family_and_every_tie() {
        let links: Vec<LinkInfo> = (2..8).map(|i| link(i, &format!("e{i}"), None)).collect();
        let routes = [
            default_via(AF_INET, 200, &[2]),
            default_via(AF_INET, 100, &[3]),
            default_via(AF_INET, 100, &[4]),
            // IPv6 on its own: its lowest, however high.
            default_via(AF_INET6, 1024, &[5, 6]),
            default_via(AF_INET6, 2048, &[7]),
            // Not the main table; not a default route; a device that is
            // not there.
            Route {
                table: 100,
                ..default_via(AF_INET, 0, &[7])
            },
            Route {
                dst: Some(vec![10, 0, 0, 0]),
                dst_len: 8,
                ..default_via(AF_INET, 0, &[7])
            },
            default_via(AF_INET, 0, &[99]),
            default_via(libc::AF_MPLS as u8, 0, &[7]),
        ];
        assert_eq!(names(uplinks(&links, &routes)), ["e3", "e4", "e5", "e6"]);
        // DRANet starts from MaxInt32: a metric above it never counts.
        let routes = [default_via(AF_INET, u32::MAX, &[2])];
        assert!(uplinks(&links, &routes).is_empty());
        let routes = [default_via(AF_INET, i32::MAX as u32, &[2])];
        assert_eq!(names(uplinks(&links, &routes)), ["e2"]);
    }
}
