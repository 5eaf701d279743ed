// SPDX-License-Identifier: GPL-2.0
/*
 * What crosses a wire, frame by frame: the tcx program behind
 * `dranet-sec audit`.
 *
 * Each frame seen on the device's ingress or egress is classified as
 *
 *   ROCE            RoCEv2 in the clear: UDP to port 4791, not in a SecTAG
 *   MACSEC_ENC      MACsec with the E bit: its payload cannot be read
 *   MACSEC_ROCE     MACsec without E (integrity only) carrying RoCEv2
 *   MACSEC_OTHER    MACsec without E carrying anything else
 *   OTHER           everything else
 *   MALFORMED       a header cut short or invalid: never trusted further
 *
 * and counted per direction in a per-CPU array; a copy of its first
 * SNAPLEN bytes goes to a ring buffer (counted as lost when it is full),
 * from which user space writes the capture. The program never changes a
 * frame nor its fate: it returns TCX_NEXT.
 *
 * Headers are read with bpf_skb_load_bytes() at each offset, so frames
 * whose headers are not in the linear part are read as well, and any
 * read past the end is a failed call: MALFORMED.
 *
 * Self-contained (no libc or kernel headers): the few uapi values it uses
 * are stable ABI, spelled out below. The layout of struct sample and the
 * class numbers are mirrored in src/audit.rs.
 */

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))

/* include/uapi/linux/bpf.h */
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27
#define TCX_NEXT (-1)

struct __sk_buff {
	__u32 len;
	/* the rest is not read */
};

/* The legacy map definition ("maps" section), as aya and libbpf read it. */
struct bpf_map_def {
	__u32 type;
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 map_flags;
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_skb_load_bytes)(const void *skb, __u32 offset, void *to,
				  __u32 len) = (void *)26;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size,
				    __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;

enum class {
	ROCE,
	MACSEC_ENC,
	MACSEC_ROCE,
	MACSEC_OTHER,
	OTHER,
	MALFORMED,
	/* Not a class: samples the ring buffer had no room for. */
	SAMPLE_LOST,
	NCOUNTERS,
};

enum dir { DIR_INGRESS, DIR_EGRESS };

#define SNAPLEN 192

struct sample {
	__u64 ts_ns;		/* CLOCK_MONOTONIC */
	__u32 len;		/* of the frame */
	__u32 caplen;		/* bytes of it in data[] */
	__u8 dir;
	__u8 class;
	__u8 pad[6];
	__u8 data[SNAPLEN];
};

struct bpf_map_def SEC("maps") counters = {
	.type = BPF_MAP_TYPE_PERCPU_ARRAY,
	.key_size = sizeof(__u32),
	.value_size = sizeof(__u64),
	.max_entries = 2 * NCOUNTERS,
};

struct bpf_map_def SEC("maps") samples = {
	.type = BPF_MAP_TYPE_RINGBUF,
	.max_entries = 1 << 20,
};

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define ETH_P_MACSEC 0x88E5
#define IPPROTO_UDP 17
#define ROCE_V2_UDP_DPORT 4791
#define BTH_LEN 12

/* include/net/macsec.h */
#define MACSEC_TCI_VERSION 0x80
#define MACSEC_TCI_ES 0x40
#define MACSEC_TCI_SC 0x20
#define MACSEC_TCI_SCB 0x10
#define MACSEC_TCI_E 0x08
/* The SecTAG after the EtherType: TCI/AN, SL, PN, then the SCI if SC. */
#define SECTAG_LEN 6
#define SCI_LEN 8
/* macsec_validate_skb(): the two bits above the short length are clear,
 * and a short length is less than 48. */
#define SL_UNUSED 0xc0
#define SL_MAX 48

static __always_inline __u16 be16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/*
 * The IP packet at @off, of EtherType @proto: ROCE if it is RoCEv2, OTHER
 * if not, MALFORMED if a header it needs to tell is cut short or invalid.
 */
static __always_inline int classify_ip(const struct __sk_buff *skb, __u32 off,
				       __u16 proto)
{
	__u8 ip[40], udp[8], bth[BTH_LEN];
	__u32 l4;

	if (proto == ETH_P_IP) {
		if (bpf_skb_load_bytes(skb, off, ip, 20))
			return MALFORMED;
		if ((ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
			return MALFORMED;
		/* A later fragment has no UDP header to read. */
		if (be16(&ip[6]) & 0x1fff)
			return OTHER;
		if (ip[9] != IPPROTO_UDP)
			return OTHER;
		l4 = off + (ip[0] & 0xf) * 4;
	} else if (proto == ETH_P_IPV6) {
		if (bpf_skb_load_bytes(skb, off, ip, 40))
			return MALFORMED;
		if ((ip[0] >> 4) != 6)
			return MALFORMED;
		/* RXE sends no extension headers. */
		if (ip[6] != IPPROTO_UDP)
			return OTHER;
		l4 = off + 40;
	} else {
		return OTHER;
	}
	if (bpf_skb_load_bytes(skb, l4, udp, sizeof(udp)))
		return MALFORMED;
	if (be16(&udp[2]) != ROCE_V2_UDP_DPORT)
		return OTHER;
	if (be16(&udp[4]) < sizeof(udp) + BTH_LEN ||
	    bpf_skb_load_bytes(skb, l4 + sizeof(udp), bth, sizeof(bth)))
		return MALFORMED;
	return ROCE;
}

static __always_inline int classify(const struct __sk_buff *skb)
{
	__u8 eth[ETH_HLEN], tag[4], sectag[SECTAG_LEN], inner[2];
	__u32 off = ETH_HLEN;
	__u16 proto;
	int i;

	if (bpf_skb_load_bytes(skb, 0, eth, sizeof(eth)))
		return MALFORMED;
	proto = be16(&eth[12]);
	/* Up to two VLAN tags in the frame (an offloaded tag is not). */
	for (i = 0; i < 2; i++) {
		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		if (bpf_skb_load_bytes(skb, off, tag, sizeof(tag)))
			return MALFORMED;
		proto = be16(&tag[2]);
		off += sizeof(tag);
	}
	if (proto != ETH_P_MACSEC)
		return classify_ip(skb, off, proto);

	if (bpf_skb_load_bytes(skb, off, sectag, sizeof(sectag)))
		return MALFORMED;
	if (sectag[0] & MACSEC_TCI_VERSION)
		return MALFORMED;
	if ((sectag[0] & (MACSEC_TCI_ES | MACSEC_TCI_SCB)) &&
	    (sectag[0] & MACSEC_TCI_SC))
		return MALFORMED;
	if ((sectag[1] & SL_UNUSED) || sectag[1] >= SL_MAX)
		return MALFORMED;
	off += SECTAG_LEN;
	if (sectag[0] & MACSEC_TCI_SC)
		off += SCI_LEN;
	if (sectag[0] & MACSEC_TCI_E) {
		/* The SCI, when present, must be there too. */
		if (bpf_skb_load_bytes(skb, off - 1, inner, 1))
			return MALFORMED;
		return MACSEC_ENC;
	}
	/* Integrity only: the user data follows in the clear. */
	if (bpf_skb_load_bytes(skb, off, inner, sizeof(inner)))
		return MALFORMED;
	switch (classify_ip(skb, off + 2, be16(inner))) {
	case ROCE:
		return MACSEC_ROCE;
	case MALFORMED:
		return MALFORMED;
	default:
		return MACSEC_OTHER;
	}
}

static __always_inline void count(__u32 idx)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &idx);

	if (n)
		*n += 1;
}

static __always_inline int audit(struct __sk_buff *skb, __u8 dir)
{
	__u32 base = dir * NCOUNTERS;
	struct sample *s;
	int class = classify(skb);
	__u32 caplen;

	count(base + class);

	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		count(base + SAMPLE_LOST);
		return TCX_NEXT;
	}
	caplen = skb->len;
	if (caplen > SNAPLEN)
		caplen = SNAPLEN;
	s->ts_ns = bpf_ktime_get_ns();
	s->len = skb->len;
	s->dir = dir;
	s->class = class;
	/* A frame shorter than the bytes asked for fails the whole read. */
	if (caplen < 1 || bpf_skb_load_bytes(skb, 0, s->data, caplen))
		caplen = 0;
	s->caplen = caplen;
	bpf_ringbuf_submit(s, 0);
	return TCX_NEXT;
}

SEC("classifier/ingress")
int audit_ingress(struct __sk_buff *skb)
{
	return audit(skb, DIR_INGRESS);
}

SEC("classifier/egress")
int audit_egress(struct __sk_buff *skb)
{
	return audit(skb, DIR_EGRESS);
}

char _license[] SEC("license") = "GPL";
