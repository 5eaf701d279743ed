// SPDX-License-Identifier: GPL-2.0
//! Two questions to rtnetlink, asked in the calling thread's network
//! namespace: a device's link (`IFLA_LINK`: a MACsec netdev's real device)
//! and the id this namespace has for another one (`RTM_GETNSID`, as the
//! module's `secy-netnsid` is given). sysfs cannot answer either for a
//! namespace other than the one it was mounted in.

use anyhow::{bail, Result};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWNSID: u16 = 88;
const RTM_GETNSID: u16 = 90;
const IFLA_LINK: u16 = 5;
const NETNSA_NSID: u16 = 1;
const NETNSA_FD: u16 = 3;
const HDR: usize = 16;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// A request: the header, `family` (the fixed part, padded), attributes.
fn message(ty: u16, family: &[u8], attrs: &[(u16, &[u8])]) -> Vec<u8> {
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
    m[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
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
    let mut out = Vec::new();
    let mut o = HDR + align4(fixed);
    while o + 4 <= len {
        let l = u16::from_ne_bytes(reply[o..o + 2].try_into()?) as usize;
        let t = u16::from_ne_bytes(reply[o + 2..o + 4].try_into()?) & 0x3fff;
        if l < 4 || o + l > len {
            bail!("rtnetlink: an attribute runs past its message");
        }
        out.push((t, &reply[o + 4..o + l]));
        o += align4(l);
    }
    Ok(out)
}

fn ask(req: &[u8]) -> Result<Vec<u8>> {
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
    let mut buf = vec![0u8; 32768];
    // SAFETY: `buf` is valid for writes of its length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        bail!("rtnetlink recv: {}", std::io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
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
}
