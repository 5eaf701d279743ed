/* SPDX-License-Identifier: GPL-2.0 */
/*
 * macsec_bridge's tracepoints, events/macsec_bridge/: what the module
 * announced about a port, and when it wrote the port's feature bit. With a
 * driver's own events (or a recording test driver) in the same buffer,
 * they show whether a teardown was retracted before the driver saw it and
 * a setup advertised only after the driver accepted it.
 *
 * TRACE_EVENT is a C macro, so the events are defined here and reached
 * from Rust through the plain functions of trace.c.
 */

#ifndef _MACSEC_BRIDGE_TRACE_FNS_H
#define _MACSEC_BRIDGE_TRACE_FNS_H
#include <linux/types.h>

void macsec_bridge_trace_announce(int ifindex, u64 generation, u32 protection, u32 reason);
void macsec_bridge_trace_feature(int ifindex, bool on, bool written);
bool macsec_bridge_trace_update_enabled(void);
void macsec_bridge_trace_update(u32 cause, u32 code, int ifindex, u64 ns, u64 state_ns,
				u64 apply_ns, u32 visited, u64 probes, u32 ports, u32 secys);
#endif

#undef TRACE_SYSTEM
#define TRACE_SYSTEM macsec_bridge

#if !defined(_MACSEC_BRIDGE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MACSEC_BRIDGE_TRACE_H

#include <linux/tracepoint.h>
#include "../../../include/uapi/linux/macsec_bridge.h"

/* The uAPI enums, printed by their names in the YNL spec. */
#define MB_SYM(prefix, name, str) { MACSEC_BRIDGE_##prefix##_##name, str }

TRACE_EVENT(macsec_bridge_announce,
	    TP_PROTO(int ifindex, u64 generation, u32 protection, u32 reason),
	    TP_ARGS(ifindex, generation, protection, reason),
	    TP_STRUCT__entry(__field(int, ifindex)
			     __field(u64, generation)
			     __field(u32, protection)
			     __field(u32, reason)),
	    TP_fast_assign(__entry->ifindex = ifindex;
			   __entry->generation = generation;
			   __entry->protection = protection;
			   __entry->reason = reason;),
	    TP_printk("ifindex=%d generation=%llu protection=%s reason=%s",
		      __entry->ifindex, __entry->generation,
		      __print_symbolic(__entry->protection,
				       MB_SYM(PROTECTION, NONE, "none"),
				       MB_SYM(PROTECTION, SOFTWARE, "software"),
				       MB_SYM(PROTECTION, OFFLOAD_MAC, "offload-mac"),
				       MB_SYM(PROTECTION, OFFLOAD_PHY, "offload-phy")),
		      __print_symbolic(__entry->reason,
				       MB_SYM(REASON, NONE, "none"),
				       MB_SYM(REASON, UNKNOWN, "unknown"),
				       MB_SYM(REASON, BINDING_STALE, "binding-stale"),
				       MB_SYM(REASON, NO_SECY, "no-secy"),
				       MB_SYM(REASON, SECY_DOWN, "secy-down"),
				       MB_SYM(REASON, LOWER_DOWN, "lower-down"),
				       MB_SYM(REASON, NO_ACTIVE_TX_SA, "no-active-tx-sa"),
				       MB_SYM(REASON, PROTECT_OFF, "protect-off"),
				       MB_SYM(REASON, ENCRYPT_OFF, "encrypt-off"),
				       MB_SYM(REASON, OFFLOAD_OFF, "offload-off"),
				       MB_SYM(REASON, PARTIAL, "partial"),
				       MB_SYM(REASON, UNSETTLED, "unsettled"),
				       MB_SYM(REASON, OFFLOAD_UNREACHABLE,
					      "offload-unreachable")))
);

TRACE_EVENT(macsec_bridge_feature,
	    TP_PROTO(int ifindex, bool on, bool written),
	    TP_ARGS(ifindex, on, written),
	    TP_STRUCT__entry(__field(int, ifindex)
			     __field(bool, on)
			     __field(bool, written)),
	    TP_fast_assign(__entry->ifindex = ifindex;
			   __entry->on = on;
			   __entry->written = written;),
	    TP_printk("ifindex=%d hw-macsec=%s%s", __entry->ifindex,
		      __entry->on ? "on" : "off",
		      __entry->written ? "" : " deferred")
);

/*
 * One entry into the bridge that may change its state: what caused it
 * (a netdev event, an offload operation before or after the driver, a
 * request, the RDMA client, the periodic re-read, the deferred writer,
 * unload, a dump round), the event's NETDEV_* number, the operation's
 * index in struct macsec_ops or the dump round's message count, the
 * device, the kernel time it took (ns, from entry to return, including
 * the feature writes and notifications it made), how many port objects
 * it recomputed, how many slots of its hash tables it examined, and how
 * many ports and SecYs the bridge tracks.
 */
TRACE_EVENT(macsec_bridge_update,
	    TP_PROTO(u32 cause, u32 code, int ifindex, u64 ns, u64 state_ns, u64 apply_ns,
		     u32 visited, u64 probes, u32 ports, u32 secys),
	    TP_ARGS(cause, code, ifindex, ns, state_ns, apply_ns, visited, probes, ports, secys),
	    TP_STRUCT__entry(__field(u32, cause)
			     __field(u32, code)
			     __field(int, ifindex)
			     __field(u64, ns)
			     __field(u64, state_ns)
			     __field(u64, apply_ns)
			     __field(u32, visited)
			     __field(u64, probes)
			     __field(u32, ports)
			     __field(u32, secys)),
	    TP_fast_assign(__entry->cause = cause;
			   __entry->code = code;
			   __entry->ifindex = ifindex;
			   __entry->ns = ns;
			   __entry->state_ns = state_ns;
			   __entry->apply_ns = apply_ns;
			   __entry->visited = visited;
			   __entry->probes = probes;
			   __entry->ports = ports;
			   __entry->secys = secys;),
	    TP_printk("cause=%s code=%u ifindex=%d ns=%llu state_ns=%llu apply_ns=%llu visited=%u probes=%llu ports=%u secys=%u",
		      __print_symbolic(__entry->cause,
				       { 0, "event" }, { 1, "op-before" }, { 2, "op-after" },
				       { 3, "request" }, { 4, "rdma" }, { 5, "revalidate" },
				       { 6, "deferred" }, { 7, "unload" }, { 8, "dump" }),
		      __entry->code, __entry->ifindex, __entry->ns, __entry->state_ns,
		      __entry->apply_ns, __entry->visited, __entry->probes,
		      __entry->ports, __entry->secys)
);

#endif /* _MACSEC_BRIDGE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
