// SPDX-License-Identifier: GPL-2.0

//! Generic netlink families.
//!
//! C header: [`include/net/genetlink.h`](srctree/include/net/genetlink.h)
//!
//! A family is described by a type implementing [`Family`]: its name and
//! version, an attribute [`Policy`] table, its operations ([`Op`]) and
//! multicast groups. [`Registration`] builds the C `genl_family`, its
//! `genl_ops`, `nla_policy` and `genl_multicast_group` tables in place and
//! registers the family; dropping it unregisters. Requests are validated
//! against the policy by the netlink core (strictly: every operation is at or
//! above `resv_start_op`) before [`Family::doit`] or [`Family::dumpit`] sees
//! them, so typed attribute getters cannot fail on a present attribute.
//!
//! # Examples
//!
//! ```
//! use kernel::net::genetlink::*;
//! use kernel::{c_str, prelude::*};
//!
//! struct Counter;
//!
//! #[vtable]
//! impl Family for Counter {
//!     const NAME: &'static CStr = c_str!("rust_genl_test");
//!     const VERSION: u32 = 1;
//!     const POLICY: &'static [Policy] = &[Policy::Unspec, Policy::U32Range { min: 1, max: 9 }];
//!     const OPS: &'static [Op] = &[Op { cmd: 1, perm: Perm::None, doit: false, dumpit: true }];
//!     const MCGRPS: &'static [&'static CStr] = &[c_str!("events")];
//!
//!     fn dumpit(&self, _reg: &Registration<Self>, cmd: u8, dump: &mut Dump<'_>) -> Result {
//!         while dump.state()[0] < 3 {
//!             let mut msg = dump.message(cmd)?;
//!             msg.put_u32(1, dump.state()[0] as u32 + 1)?;
//!             dump.commit(msg);
//!             dump.state()[0] += 1;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! // SAFETY: doctests are built into vmlinux, whose module pointer is NULL.
//! static THIS: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
//! let reg = KBox::pin_init(Registration::new(&THIS, Counter), GFP_KERNEL)?;
//! assert!(reg.family_id() > 0);
//! assert!(!reg.has_listeners(kernel::net::namespace::Net::init_net(), 0));
//! drop(reg);
//! # Ok::<(), Error>(())
//! ```

use crate::{
    bindings,
    error::{from_result, to_result, VTABLE_DEFAULT_ERROR},
    init,
    net::namespace::Net,
    prelude::*,
    str::CStr,
    types::Opaque,
};
use core::{marker::PhantomData, ptr::NonNull};
use ffi::{c_int, c_long, c_void};

/// Size of an attribute header, payload alignment included (`NLA_HDRLEN`).
const NLA_HDRLEN: usize = 4;

/// Who may invoke an operation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Perm {
    /// Anyone.
    None,
    /// `CAP_NET_ADMIN` in the initial user namespace (`GENL_ADMIN_PERM`).
    Admin,
    /// `CAP_NET_ADMIN` over the user namespace owning the caller's network
    /// namespace (`GENL_UNS_ADMIN_PERM`).
    UnsAdmin,
}

/// One operation of a family.
#[derive(Clone, Copy)]
pub struct Op {
    /// The command number (`genlmsghdr.cmd`), at least 1.
    pub cmd: u8,
    /// Required permission.
    pub perm: Perm,
    /// Whether the operation has a `do` handler ([`Family::doit`]).
    pub doit: bool,
    /// Whether the operation has a `dump` handler ([`Family::dumpit`]).
    pub dumpit: bool,
}

/// The validation policy of one attribute type.
#[derive(Clone, Copy)]
pub enum Policy {
    /// Not accepted in requests (type 0, or attributes only sent by the
    /// kernel).
    Unspec,
    /// `u8`.
    U8,
    /// `u32`.
    U32,
    /// `u32` within `min..=max`.
    U32Range {
        /// Smallest accepted value.
        min: u32,
        /// Largest accepted value.
        max: u32,
    },
    /// `s32`.
    S32,
    /// `u64`.
    U64,
    /// A NUL-terminated string of at most `max_len` bytes before the NUL.
    String {
        /// Maximum length, NUL excluded.
        max_len: u16,
    },
    /// A flag: present or absent, no payload.
    Flag,
    /// Nested attributes (validated by the handler).
    Nested,
}

/// A generic netlink family.
#[vtable]
pub trait Family: Send + Sync + Sized {
    /// The family name.
    const NAME: &'static CStr;
    /// The family version.
    const VERSION: u32;
    /// Attribute policies, indexed by attribute type (entry 0 is type 0).
    const POLICY: &'static [Policy];
    /// Operations.
    const OPS: &'static [Op];
    /// Multicast group names; a group's index here is its number in
    /// [`Registration::multicast`].
    const MCGRPS: &'static [&'static CStr];

    /// Handles a `do` request for `cmd`.
    fn doit(&self, _reg: &Registration<Self>, _cmd: u8, _info: &mut Info<'_>) -> Result {
        crate::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// Fills one round of a dump for `cmd`: adds messages with
    /// [`Dump::message`] and [`Dump::commit`] and returns `Ok(())` when the
    /// dump is complete. When the buffer is full, [`Dump::message`] (or a
    /// `put_*`) fails with `EMSGSIZE`: return that error as is, and the dump
    /// resumes in a new round from the state kept in [`Dump::state`].
    fn dumpit(&self, _reg: &Registration<Self>, _cmd: u8, _dump: &mut Dump<'_>) -> Result {
        crate::build_error(VTABLE_DEFAULT_ERROR)
    }
}

/// A registered generic netlink family.
///
/// # Invariants
///
/// `family` is registered with `genl_register_family` for as long as the
/// registration exists, and its `ops`, `policy` and `mcgrps` point into the
/// vectors of this registration, which are never modified after
/// registration.
#[pin_data(PinnedDrop)]
pub struct Registration<T: Family> {
    #[pin]
    family: Opaque<bindings::genl_family>,
    ops: KVec<bindings::genl_ops>,
    policy: KVec<bindings::nla_policy>,
    ranges: KVec<bindings::netlink_range_validation>,
    mcgrps: KVec<bindings::genl_multicast_group>,
    data: T,
}

// SAFETY: the C family is only used by the genetlink core, with its own
// locking; `T` is `Send`.
unsafe impl<T: Family> Send for Registration<T> {}
// SAFETY: `&Registration` only exposes `&T` (and `T` is `Sync`) and methods
// that the genetlink core allows concurrently.
unsafe impl<T: Family> Sync for Registration<T> {}

/// The C tables of a family, built before registration.
struct Tables {
    ops: KVec<bindings::genl_ops>,
    policy: KVec<bindings::nla_policy>,
    ranges: KVec<bindings::netlink_range_validation>,
    mcgrps: KVec<bindings::genl_multicast_group>,
}

impl<T: Family> Registration<T> {
    fn tables() -> Result<Tables> {
        let mut ranges = KVec::with_capacity(T::POLICY.len(), GFP_KERNEL)?;
        for p in T::POLICY {
            if let Policy::U32Range { min, max } = *p {
                ranges.push(
                    bindings::netlink_range_validation {
                        min: min.into(),
                        max: max.into(),
                    },
                    GFP_KERNEL,
                )?;
            }
        }
        let mut policy = KVec::with_capacity(T::POLICY.len(), GFP_KERNEL)?;
        let mut next_range = 0;
        for p in T::POLICY {
            // SAFETY: `nla_policy` is plain data; all-zero is `NLA_UNSPEC`
            // with no validation.
            let mut np: bindings::nla_policy = unsafe { core::mem::zeroed() };
            match *p {
                Policy::Unspec => np.type_ = bindings::NLA_REJECT as u8,
                Policy::U8 => np.type_ = bindings::NLA_U8 as u8,
                Policy::U32 => np.type_ = bindings::NLA_U32 as u8,
                Policy::U32Range { .. } => {
                    np.type_ = bindings::NLA_U32 as u8;
                    np.validation_type =
                        bindings::nla_policy_validation_NLA_VALIDATE_RANGE_PTR as u8;
                    np.__bindgen_anon_1.range = &ranges[next_range];
                    next_range += 1;
                }
                Policy::S32 => np.type_ = bindings::NLA_S32 as u8,
                Policy::U64 => np.type_ = bindings::NLA_U64 as u8,
                Policy::String { max_len } => {
                    np.type_ = bindings::NLA_NUL_STRING as u8;
                    np.len = max_len;
                }
                Policy::Flag => np.type_ = bindings::NLA_FLAG as u8,
                Policy::Nested => np.type_ = bindings::NLA_NESTED as u8,
            }
            policy.push(np, GFP_KERNEL)?;
        }
        // Type 0 is never valid in a request.
        if let Some(first) = policy.first_mut() {
            first.type_ = bindings::NLA_REJECT as u8;
        }

        let mut ops = KVec::with_capacity(T::OPS.len(), GFP_KERNEL)?;
        for op in T::OPS {
            // SAFETY: `genl_ops` is plain data; all-zero means no handlers,
            // no flags.
            let mut o: bindings::genl_ops = unsafe { core::mem::zeroed() };
            o.cmd = op.cmd;
            o.flags = match op.perm {
                Perm::None => 0,
                Perm::Admin => bindings::GENL_ADMIN_PERM as u8,
                Perm::UnsAdmin => bindings::GENL_UNS_ADMIN_PERM as u8,
            };
            if op.doit && T::HAS_DOIT {
                o.doit = Some(Self::doit_callback);
            }
            if op.dumpit && T::HAS_DUMPIT {
                o.dumpit = Some(Self::dumpit_callback);
            }
            ops.push(o, GFP_KERNEL)?;
        }

        let mut mcgrps = KVec::with_capacity(T::MCGRPS.len(), GFP_KERNEL)?;
        for name in T::MCGRPS {
            // SAFETY: plain data; all-zero is an empty name, no flags.
            let mut g: bindings::genl_multicast_group = unsafe { core::mem::zeroed() };
            copy_name(&mut g.name, name)?;
            mcgrps.push(g, GFP_KERNEL)?;
        }
        Ok(Tables {
            ops,
            policy,
            ranges,
            mcgrps,
        })
    }

    /// Builds the family's tables and registers it, in place.
    ///
    /// `module` must be the module that owns `T`'s code, so that the family
    /// pins it while requests run.
    pub fn new(module: &'static ThisModule, data: T) -> impl PinInit<Self, Error> {
        let tables = Self::tables();
        // SAFETY: the closure initialises every field before returning `Ok`;
        // on error it drops what it wrote and returns the error.
        unsafe {
            init::pin_init_from_closure(move |slot: *mut Self| {
                let Tables {
                    ops,
                    policy,
                    ranges,
                    mcgrps,
                } = tables?;
                let fam = Opaque::raw_get(core::ptr::addr_of!((*slot).family));
                // SAFETY: plain data; all-zero is a valid starting point.
                let mut f: bindings::genl_family = core::mem::zeroed();
                copy_name(&mut f.name, T::NAME)?;
                f.version = T::VERSION;
                f.maxattr = (T::POLICY.len().max(1) - 1) as u32;
                f.policy = policy.as_ptr();
                f.ops = ops.as_ptr();
                f.n_ops = ops.len() as u8;
                f.mcgrps = mcgrps.as_ptr();
                f.n_mcgrps = mcgrps.len() as u8;
                f.resv_start_op = 1;
                f.module = module.as_ptr();
                f.set_netnsok(1);
                f.set_parallel_ops(1);
                fam.write(f);
                core::ptr::addr_of_mut!((*slot).ops).write(ops);
                core::ptr::addr_of_mut!((*slot).policy).write(policy);
                core::ptr::addr_of_mut!((*slot).ranges).write(ranges);
                core::ptr::addr_of_mut!((*slot).mcgrps).write(mcgrps);
                core::ptr::addr_of_mut!((*slot).data).write(data);
                // SAFETY: the family and its tables are initialised and
                // pinned for as long as the registration lives.
                let ret = to_result(bindings::genl_register_family(fam));
                if ret.is_err() {
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).ops));
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).policy));
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).ranges));
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).mcgrps));
                    core::ptr::drop_in_place(core::ptr::addr_of_mut!((*slot).data));
                }
                // INVARIANT: registered on success, tables owned by `slot`.
                ret
            })
        }
    }
}

fn copy_name(dst: &mut [ffi::c_char], name: &CStr) -> Result {
    let bytes = name.as_bytes();
    if bytes.len() >= dst.len() {
        return Err(ENAMETOOLONG);
    }
    for (d, s) in dst.iter_mut().zip(bytes) {
        *d = *s;
    }
    dst[bytes.len()] = 0;
    Ok(())
}

impl<T: Family> Registration<T> {
    /// The family's data.
    pub fn data(&self) -> &T {
        &self.data
    }

    fn raw(&self) -> *mut bindings::genl_family {
        self.family.get()
    }

    /// The family id the core assigned.
    pub fn family_id(&self) -> i32 {
        // SAFETY: the family is registered (type invariant); `id` is set
        // once at registration.
        unsafe { (*self.raw()).id }
    }

    /// Whether anybody in `net` listens to multicast group `group`.
    pub fn has_listeners(&self, net: &Net, group: u32) -> bool {
        // SAFETY: the family is registered and `net` is valid.
        unsafe { bindings::genl_has_listeners(self.raw(), net.as_raw(), group) }
    }

    /// Starts a notification message (port id 0, sequence 0) for `cmd`.
    pub fn notification(&self, cmd: u8) -> Result<Msg<'static>> {
        Msg::new(self.raw(), 0, 0, cmd, 0)
    }

    /// Sends `msg` to the listeners of multicast group `group` in `net`.
    ///
    /// Having no listener is not an error.
    pub fn multicast(&self, net: &Net, group: u32, msg: Msg<'static>) -> Result {
        if group as usize >= T::MCGRPS.len() {
            return Err(EINVAL);
        }
        let skb = msg.finish();
        // SAFETY: `skb` is a finished message whose ownership passes to the
        // call; the family is registered and `net` is valid.
        let ret = unsafe {
            bindings::genlmsg_multicast_netns(
                self.raw(),
                net.as_raw(),
                skb,
                0,
                group,
                bindings::GFP_KERNEL,
            )
        };
        match to_result(ret) {
            Err(e) if e == ESRCH => Ok(()),
            r => r,
        }
    }

    /// Recovers the registration that owns a C family.
    ///
    /// # Safety
    ///
    /// `family` must be the `family` field of a live `Registration<T>`.
    unsafe fn from_family<'a>(family: *const bindings::genl_family) -> &'a Self {
        // SAFETY: `Opaque` is transparent, so the C family is the field;
        // the caller guarantees the registration is alive.
        unsafe {
            &*crate::container_of!(family.cast::<Opaque<bindings::genl_family>>(), Self, family)
        }
    }

    /// # Safety
    ///
    /// Called by the genetlink core for an operation of a family registered
    /// by a `Registration<T>`, with a valid request skb and `info`.
    unsafe extern "C" fn doit_callback(
        _skb: *mut bindings::sk_buff,
        info: *mut bindings::genl_info,
    ) -> c_int {
        from_result(|| {
            // SAFETY: the core passes a valid `info` for our family.
            let (reg, cmd) = unsafe { (Self::from_family((*info).family), (*(*info).genlhdr).cmd) };
            let mut info = Info {
                info,
                _p: PhantomData,
            };
            reg.data.doit(reg, cmd, &mut info)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the genetlink core for a dump of a family registered by a
    /// `Registration<T>`, with a valid skb to fill and callback state.
    unsafe extern "C" fn dumpit_callback(
        skb: *mut bindings::sk_buff,
        cb: *mut bindings::netlink_callback,
    ) -> c_int {
        // SAFETY: for genetlink dumps, `cb->data` holds the dump info set up
        // by `genl_start`.
        let info = unsafe { bindings::genl_info_dump(cb) };
        // SAFETY: `info` is valid for the dump and names our family.
        let (reg, cmd) = unsafe { (Self::from_family((*info).family), (*(*info).genlhdr).cmd) };
        let mut dump = Dump {
            skb,
            cb,
            info,
            _p: PhantomData,
        };
        match reg.data.dumpit(reg, cmd, &mut dump) {
            Ok(()) => 0,
            // SAFETY: `skb` is valid for the call.
            Err(e) if e == EMSGSIZE && unsafe { (*skb).len } > 0 => {
                // SAFETY: as above.
                unsafe { (*skb).len as c_int }
            }
            Err(e) => e.to_errno(),
        }
    }
}

#[pinned_drop]
impl<T: Family> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: the family was registered in `new` (type invariant); after
        // this call no handler runs any more.
        unsafe { bindings::genl_unregister_family(self.family.get()) };
    }
}

/// A nested or top-level attribute of a request.
#[derive(Clone, Copy)]
pub struct Attr<'a> {
    nla: NonNull<bindings::nlattr>,
    _p: PhantomData<&'a bindings::nlattr>,
}

impl<'a> Attr<'a> {
    fn payload(&self) -> *const u8 {
        // The payload follows the 4-byte, 4-aligned header (`NLA_HDRLEN`).
        // SAFETY: a validated attribute is at least a header long.
        unsafe { self.nla.as_ptr().cast::<u8>().add(NLA_HDRLEN) }
    }

    fn payload_len(&self) -> usize {
        // SAFETY: the attribute is valid.
        let len = unsafe { (*self.nla.as_ptr()).nla_len } as usize;
        len.saturating_sub(NLA_HDRLEN)
    }

    /// The attribute type.
    pub fn kind(&self) -> u16 {
        // SAFETY: the attribute is valid.
        let kind = unsafe { (*self.nla.as_ptr()).nla_type };
        kind & (bindings::NLA_TYPE_MASK as u16)
    }

    /// The raw C attribute.
    pub fn as_raw(&self) -> *const bindings::nlattr {
        self.nla.as_ptr()
    }

    fn read<U: Copy + Default>(&self) -> U {
        if self.payload_len() < core::mem::size_of::<U>() {
            return U::default();
        }
        // SAFETY: the payload holds at least `size_of::<U>()` bytes
        // (checked above; the policy guarantees it for typed attributes).
        unsafe { self.payload().cast::<U>().read_unaligned() }
    }

    /// The payload as a `u8`.
    pub fn as_u8(&self) -> u8 {
        self.read()
    }

    /// The payload as a `u32`.
    pub fn as_u32(&self) -> u32 {
        self.read()
    }

    /// The payload as an `i32`.
    pub fn as_s32(&self) -> i32 {
        self.read()
    }

    /// The payload as a `u64`.
    pub fn as_u64(&self) -> u64 {
        self.read()
    }

    /// The payload as a string, for attributes with a [`Policy::String`]
    /// policy (which guarantees the NUL).
    pub fn as_cstr(&self) -> Option<&'a CStr> {
        // SAFETY: the payload is `payload_len()` bytes of the request,
        // alive for `'a`.
        let bytes = unsafe { core::slice::from_raw_parts(self.payload(), self.payload_len()) };
        let nul = bytes.iter().position(|b| *b == 0)?;
        CStr::from_bytes_with_nul(&bytes[..=nul]).ok()
    }
}

/// A `do` request.
pub struct Info<'a> {
    info: *mut bindings::genl_info,
    _p: PhantomData<&'a mut bindings::genl_info>,
}

impl<'a> Info<'a> {
    /// The network namespace of the requesting socket.
    pub fn net(&self) -> &Net {
        // SAFETY: `info` is valid, and the socket pins its namespace for the
        // request.
        unsafe { Net::from_raw(bindings::genl_info_net(self.info)) }
    }

    /// The attribute of type `kind`, if present.
    pub fn attr(&self, kind: u16) -> Option<Attr<'a>> {
        attr_of(self.info, kind)
    }

    /// The attribute of type `kind`; when it is missing, fails with `EINVAL`
    /// and reports the missing type in the extended ack.
    pub fn require(&self, kind: u16) -> Result<Attr<'a>> {
        self.attr(kind).ok_or_else(|| {
            // SAFETY: `info` is valid; `extack` may be NULL.
            unsafe {
                let ext = (*self.info).extack;
                if !ext.is_null() {
                    (*ext).miss_type = kind;
                    (*ext).miss_nest = core::ptr::null();
                    (*ext)._msg = crate::c_str!("missing required attribute").as_char_ptr();
                }
            }
            EINVAL
        })
    }

    /// Sets the extended ack message (and, with `kind`, the offending
    /// attribute) returned to the caller with the error.
    pub fn set_err(&self, kind: Option<u16>, msg: &'static CStr) {
        // SAFETY: `info` is valid; `extack` may be NULL; the message is
        // static.
        unsafe {
            let ext = (*self.info).extack;
            if ext.is_null() {
                return;
            }
            (*ext)._msg = msg.as_char_ptr();
            if let Some(attr) = kind.and_then(|k| self.attr(k)) {
                (*ext).bad_attr = attr.as_raw();
            }
        }
    }

    /// Starts the reply to this request.
    pub fn reply(&self, cmd: u8) -> Result<Msg<'static>> {
        // SAFETY: `info` is valid.
        let (family, portid, seq) = unsafe {
            (
                (*self.info).family,
                (*self.info).snd_portid,
                (*self.info).snd_seq,
            )
        };
        Msg::new(family.cast_mut(), portid, seq, cmd, 0)
    }

    /// Sends `msg` as the reply to this request.
    pub fn send_reply(&self, msg: Msg<'static>) -> Result {
        let skb = msg.finish();
        // SAFETY: `skb` is a finished message whose ownership passes to the
        // call; `info` is valid.
        to_result(unsafe { bindings::genlmsg_reply(skb, self.info) })
    }
}

fn attr_of<'a>(info: *const bindings::genl_info, kind: u16) -> Option<Attr<'a>> {
    // SAFETY: `info` is valid; its `attrs` table has `maxattr + 1` entries
    // and `kind` is checked against `maxattr`.
    unsafe {
        let attrs = (*info).attrs;
        let max = (*(*info).family).maxattr;
        if attrs.is_null() || u32::from(kind) > max {
            return None;
        }
        NonNull::new(*attrs.add(kind as usize)).map(|nla| Attr {
            nla,
            _p: PhantomData,
        })
    }
}

/// One round of a dump.
pub struct Dump<'a> {
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
    info: *const bindings::genl_info,
    _p: PhantomData<&'a mut bindings::netlink_callback>,
}

impl<'a> Dump<'a> {
    /// Six words of state kept across rounds, zero at the start of a dump.
    pub fn state(&mut self) -> &mut [c_long; 6] {
        // SAFETY: `cb` is valid for the round; `args` is the dump's scratch
        // space (it aliases `ctx`, which genetlink leaves to the family).
        unsafe { &mut (*self.cb).__bindgen_anon_1.args }
    }

    /// The network namespace of the requesting socket.
    pub fn net(&self) -> &Net {
        // SAFETY: `info` is valid, and the socket pins its namespace.
        unsafe { Net::from_raw(bindings::genl_info_net(self.info)) }
    }

    /// The attribute of type `kind` in the dump request, if present.
    pub fn attr(&self, kind: u16) -> Option<Attr<'a>> {
        attr_of(self.info, kind)
    }

    /// Starts a message in the dump buffer; fails with `EMSGSIZE` when the
    /// buffer is full.
    pub fn message(&mut self, cmd: u8) -> Result<Msg<'a>> {
        // SAFETY: `info` is valid for the round.
        let (family, portid, seq) = unsafe {
            (
                (*self.info).family,
                (*self.info).snd_portid,
                (*self.info).snd_seq,
            )
        };
        // SAFETY: `skb` is the dump buffer, valid for the round.
        let hdr = unsafe {
            bindings::genlmsg_put(
                self.skb,
                portid,
                seq,
                family,
                bindings::NLM_F_MULTI as c_int,
                cmd,
            )
        };
        if hdr.is_null() {
            return Err(EMSGSIZE);
        }
        // INVARIANT: `hdr` heads a new message in the dump buffer, which
        // lives for the round `'a`.
        Ok(Msg {
            skb: self.skb,
            hdr,
            owned: false,
            _p: PhantomData,
        })
    }

    /// Completes a message started by [`Dump::message`]. A message dropped
    /// without commit is cancelled.
    pub fn commit(&mut self, msg: Msg<'a>) {
        // The buffer stays with the dump: only close the message.
        let _ = msg.finish();
    }
}

/// A generic netlink message being built.
///
/// # Invariants
///
/// `skb` is valid and `hdr` is the header of the message being built in it.
/// If `owned`, the message owns `skb` (freed on drop); otherwise the skb is a
/// dump buffer and the message is cancelled on drop.
pub struct Msg<'a> {
    skb: *mut bindings::sk_buff,
    hdr: *mut c_void,
    owned: bool,
    _p: PhantomData<&'a mut bindings::sk_buff>,
}

impl Msg<'static> {
    fn new(
        family: *mut bindings::genl_family,
        portid: u32,
        seq: u32,
        cmd: u8,
        flags: c_int,
    ) -> Result<Msg<'static>> {
        // SAFETY: allocation has no preconditions.
        let skb = unsafe { bindings::genlmsg_new(bindings::NLMSG_GOODSIZE, bindings::GFP_KERNEL) };
        if skb.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: `skb` is a fresh message buffer and `family` is registered.
        let hdr = unsafe { bindings::genlmsg_put(skb, portid, seq, family, flags, cmd) };
        if hdr.is_null() {
            // SAFETY: nobody else holds `skb`.
            unsafe { bindings::nlmsg_free(skb) };
            return Err(EMSGSIZE);
        }
        // INVARIANT: `skb` is ours and `hdr` its header.
        Ok(Msg {
            skb,
            hdr,
            owned: true,
            _p: PhantomData,
        })
    }
}

impl Msg<'_> {
    /// Ends the message and gives up the skb.
    fn finish(self) -> *mut bindings::sk_buff {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: by the type invariant `hdr` heads a message in `skb`.
        unsafe { bindings::genlmsg_end(this.skb, this.hdr) };
        this.skb
    }

    fn put(&mut self, kind: u16, data: *const c_void, len: usize) -> Result {
        // SAFETY: `skb` is valid; `data` points to `len` readable bytes.
        to_result(unsafe { bindings::nla_put(self.skb, kind.into(), len as c_int, data) })
    }

    /// Adds a `u8` attribute.
    pub fn put_u8(&mut self, kind: u16, v: u8) -> Result {
        self.put(kind, (&raw const v).cast(), 1)
    }

    /// Adds a `u32` attribute.
    pub fn put_u32(&mut self, kind: u16, v: u32) -> Result {
        self.put(kind, (&raw const v).cast(), 4)
    }

    /// Adds an `s32` attribute.
    pub fn put_s32(&mut self, kind: u16, v: i32) -> Result {
        self.put(kind, (&raw const v).cast(), 4)
    }

    /// Adds a `u64` attribute, 8-byte aligned with a `pad` attribute when
    /// needed.
    pub fn put_u64(&mut self, kind: u16, v: u64, pad: u16) -> Result {
        // SAFETY: `skb` is valid; `v` is 8 readable bytes.
        to_result(unsafe {
            bindings::nla_put_64bit(self.skb, kind.into(), 8, (&raw const v).cast(), pad.into())
        })
    }

    /// Adds a NUL-terminated string attribute.
    pub fn put_string(&mut self, kind: u16, v: &CStr) -> Result {
        self.put(kind, v.as_char_ptr().cast(), v.len() + 1)
    }

    /// Adds a flag attribute.
    pub fn put_flag(&mut self, kind: u16) -> Result {
        self.put(kind, core::ptr::null(), 0)
    }

    /// Adds a nested attribute whose content `f` writes.
    pub fn nest(&mut self, kind: u16, f: impl FnOnce(&mut Self) -> Result) -> Result {
        // SAFETY: `skb` is valid.
        let start = unsafe { bindings::nla_nest_start(self.skb, kind.into()) };
        if start.is_null() {
            return Err(EMSGSIZE);
        }
        match f(self) {
            Ok(()) => {
                // SAFETY: `start` was returned by `nla_nest_start` on `skb`.
                unsafe { bindings::nla_nest_end(self.skb, start) };
                Ok(())
            }
            Err(e) => {
                // SAFETY: as above.
                unsafe { bindings::nla_nest_cancel(self.skb, start) };
                Err(e)
            }
        }
    }
}

impl Drop for Msg<'_> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant, `skb` is ours to free, or `hdr`
        // heads an unfinished message in a dump buffer.
        unsafe {
            if self.owned {
                bindings::nlmsg_free(self.skb);
            } else {
                bindings::genlmsg_cancel(self.skb, self.hdr);
            }
        }
    }
}
