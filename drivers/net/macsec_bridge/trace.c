// SPDX-License-Identifier: GPL-2.0
/*
 * The C half of macsec_bridge: its tracepoints (trace.h), each behind a
 * plain function that the Rust code calls. The tracepoint's static key is
 * tested inside, so a disabled event costs one call.
 */

#define CREATE_TRACE_POINTS
#include "trace.h"

void macsec_bridge_trace_announce(int ifindex, u64 generation, u32 protection, u32 reason)
{
	trace_macsec_bridge_announce(ifindex, generation, protection, reason);
}

void macsec_bridge_trace_feature(int ifindex, bool on, bool written)
{
	trace_macsec_bridge_feature(ifindex, on, written);
}

bool macsec_bridge_trace_update_enabled(void)
{
	return trace_macsec_bridge_update_enabled();
}

void macsec_bridge_trace_update(u32 cause, u32 code, int ifindex, u64 ns, u64 state_ns,
				u64 apply_ns, u32 visited, u64 probes, u32 ports, u32 secys)
{
	trace_macsec_bridge_update(cause, code, ifindex, ns, state_ns, apply_ns, visited, probes,
				   ports, secys);
}
