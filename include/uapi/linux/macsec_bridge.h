/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/macsec_bridge.yaml */
/* YNL-GEN uapi header */
/* To regenerate run: tools/net/ynl/ynl-regen.sh */

#ifndef _UAPI_LINUX_MACSEC_BRIDGE_H
#define _UAPI_LINUX_MACSEC_BRIDGE_H

#define MACSEC_BRIDGE_FAMILY_NAME	"macsec-bridge"
#define MACSEC_BRIDGE_FAMILY_VERSION	1

/**
 * enum macsec_bridge_protection - How strongly the port's egress is protected.
 * @MACSEC_BRIDGE_PROTECTION_NONE: Not protected, or not known to be.
 * @MACSEC_BRIDGE_PROTECTION_SOFTWARE: MACsec in software (macsec.c encrypts).
 *   Not reported: a software SecY's SAs and flags change without any event, so
 *   such a port reports none with reason offload-off.
 * @MACSEC_BRIDGE_PROTECTION_OFFLOAD_MAC: MACsec offloaded to the MAC.
 * @MACSEC_BRIDGE_PROTECTION_OFFLOAD_PHY: MACsec offloaded to the PHY.
 */
enum macsec_bridge_protection {
	MACSEC_BRIDGE_PROTECTION_NONE,
	MACSEC_BRIDGE_PROTECTION_SOFTWARE,
	MACSEC_BRIDGE_PROTECTION_OFFLOAD_MAC,
	MACSEC_BRIDGE_PROTECTION_OFFLOAD_PHY,
};

/**
 * enum macsec_bridge_reason - Why the port is not offload-protected; the first
 *   that applies.
 * @MACSEC_BRIDGE_REASON_NONE: The port is offload-protected.
 * @MACSEC_BRIDGE_REASON_UNKNOWN: The SecY has not been observed since the
 *   module loaded, or the module can no longer observe the device its offload
 *   operations reach.
 * @MACSEC_BRIDGE_REASON_BINDING_STALE: The bound SecY is gone (deleted, or its
 *   namespace was); the binding stays until unbound.
 * @MACSEC_BRIDGE_REASON_NO_SECY: No SecY protects the port.
 * @MACSEC_BRIDGE_REASON_SECY_DOWN: The MACsec netdev is down.
 * @MACSEC_BRIDGE_REASON_LOWER_DOWN: The lower device is down or has no
 *   carrier.
 * @MACSEC_BRIDGE_REASON_NO_ACTIVE_TX_SA: The encoding TX SA is missing or
 *   inactive.
 * @MACSEC_BRIDGE_REASON_PROTECT_OFF: protect_frames is off.
 * @MACSEC_BRIDGE_REASON_ENCRYPT_OFF: encrypt is off.
 * @MACSEC_BRIDGE_REASON_OFFLOAD_OFF: The SecY is not offloaded (it may protect
 *   in software).
 * @MACSEC_BRIDGE_REASON_PARTIAL: The SecY protects only part of the port's
 *   RoCE: the port is its real device (relation upper), and RoCE on the port's
 *   own GIDs, its default GID always among them, bypasses the SecY; or a GID
 *   of the port is on a device that can send around the SecY (a bond the port
 *   is a slave of, say), or the port's RDMA device has another netdev now.
 *   Checked last, where the SecY itself would be offload-protected.
 * @MACSEC_BRIDGE_REASON_UNSETTLED: The SecY as macsec.c holds it would be
 *   offload-protected, but what its driver holds is not known: an offload
 *   operation that may take the driver's protection down partway is in flight,
 *   or one failed, or the module has not seen the driver handed the whole SecY
 *   (mdo_add_secy, or mdo_upd_secy while the driver's record of the encoding
 *   SA is in no doubt: made afresh since the module loaded, or since an
 *   operation on it failed). Checked after the SecY's other reasons, before
 *   partial.
 * @MACSEC_BRIDGE_REASON_OFFLOAD_UNREACHABLE: The SecY is offloaded, but
 *   macsec.c can no longer reach its driver: the real device lost
 *   NETIF_F_HW_MACSEC (ethtool -K DEV macsec-hw-offload off, or a driver that
 *   drops it, as mlx5e does in switchdev mode). Every offload operation then
 *   fails before the driver, which may have dropped what it held, so once the
 *   bit is back the SecY is unsettled until an operation settles it. Checked
 *   right after offload-off.
 */
enum macsec_bridge_reason {
	MACSEC_BRIDGE_REASON_NONE,
	MACSEC_BRIDGE_REASON_UNKNOWN,
	MACSEC_BRIDGE_REASON_BINDING_STALE,
	MACSEC_BRIDGE_REASON_NO_SECY,
	MACSEC_BRIDGE_REASON_SECY_DOWN,
	MACSEC_BRIDGE_REASON_LOWER_DOWN,
	MACSEC_BRIDGE_REASON_NO_ACTIVE_TX_SA,
	MACSEC_BRIDGE_REASON_PROTECT_OFF,
	MACSEC_BRIDGE_REASON_ENCRYPT_OFF,
	MACSEC_BRIDGE_REASON_OFFLOAD_OFF,
	MACSEC_BRIDGE_REASON_PARTIAL,
	MACSEC_BRIDGE_REASON_UNSETTLED,
	MACSEC_BRIDGE_REASON_OFFLOAD_UNREACHABLE,
};

/**
 * enum macsec_bridge_relation - Where the port's SecY comes from.
 * @MACSEC_BRIDGE_RELATION_SELF: The port is the MACsec netdev (RXE on
 *   macsec0).
 * @MACSEC_BRIDGE_RELATION_UPPER: The port is the real device of an offloaded
 *   MACsec netdev; only traffic on that netdev's addresses (RoCE GIDs) is
 *   protected, so the port reports protection none with reason partial.
 * @MACSEC_BRIDGE_RELATION_BOUND: An administrator bound the port to a SecY,
 *   typically in another network namespace (the DPU split: the SecY lives on
 *   the DPU, the host sees only the RDMA function).
 */
enum macsec_bridge_relation {
	MACSEC_BRIDGE_RELATION_SELF,
	MACSEC_BRIDGE_RELATION_UPPER,
	MACSEC_BRIDGE_RELATION_BOUND,
};

/*
 * MACsec cipher suite.
 */
enum macsec_bridge_cipher {
	MACSEC_BRIDGE_CIPHER_GCM_AES_128,
	MACSEC_BRIDGE_CIPHER_GCM_AES_256,
	MACSEC_BRIDGE_CIPHER_GCM_AES_XPN_128,
	MACSEC_BRIDGE_CIPHER_GCM_AES_XPN_256,
};

/**
 * enum macsec_bridge_validate - How the SecY validates the frames it receives
 *   (ip link's validate).
 * @MACSEC_BRIDGE_VALIDATE_DISABLED: Frames are delivered whether they are
 *   protected or not.
 * @MACSEC_BRIDGE_VALIDATE_CHECK: Frames are checked, and delivered even when
 *   the check fails.
 * @MACSEC_BRIDGE_VALIDATE_STRICT: Only frames that pass the check are
 *   delivered.
 */
enum macsec_bridge_validate {
	MACSEC_BRIDGE_VALIDATE_DISABLED,
	MACSEC_BRIDGE_VALIDATE_CHECK,
	MACSEC_BRIDGE_VALIDATE_STRICT,
};

/**
 * enum macsec_bridge_feature_owner - Who owns NETIF_F_HW_MACSEC on the port.
 * @MACSEC_BRIDGE_FEATURE_OWNER_BRIDGE: This module sets and clears it in
 *   lockstep.
 * @MACSEC_BRIDGE_FEATURE_OWNER_DRIVER: The port's driver owns it (the device
 *   has macsec_ops, or the bit is in its hw_features); this module leaves it
 *   alone.
 */
enum macsec_bridge_feature_owner {
	MACSEC_BRIDGE_FEATURE_OWNER_BRIDGE,
	MACSEC_BRIDGE_FEATURE_OWNER_DRIVER,
};

enum {
	MACSEC_BRIDGE_A_DEV_IFINDEX = 1,
	MACSEC_BRIDGE_A_DEV_IFNAME,
	MACSEC_BRIDGE_A_DEV_RDMA_DEV,
	MACSEC_BRIDGE_A_DEV_PROTECTION,
	MACSEC_BRIDGE_A_DEV_REASON,
	MACSEC_BRIDGE_A_DEV_RELATION,
	MACSEC_BRIDGE_A_DEV_SECY_IFINDEX,
	MACSEC_BRIDGE_A_DEV_SCI,
	MACSEC_BRIDGE_A_DEV_CIPHER,
	MACSEC_BRIDGE_A_DEV_ENCRYPT,
	MACSEC_BRIDGE_A_DEV_FEATURE_OWNER,
	MACSEC_BRIDGE_A_DEV_GENERATION,
	MACSEC_BRIDGE_A_DEV_PAD,
	MACSEC_BRIDGE_A_DEV_SECY_NETNSID,
	MACSEC_BRIDGE_A_DEV_SECY_NETNS_FD,
	MACSEC_BRIDGE_A_DEV_PROTECTED_GID,
	MACSEC_BRIDGE_A_DEV_VALIDATE,
	MACSEC_BRIDGE_A_DEV_RX_PLAINTEXT,
	MACSEC_BRIDGE_A_DEV_PORT_ID,
	MACSEC_BRIDGE_A_DEV_NETNSID,
	MACSEC_BRIDGE_A_DEV_ALL_NETNS,

	__MACSEC_BRIDGE_A_DEV_MAX,
	MACSEC_BRIDGE_A_DEV_MAX = (__MACSEC_BRIDGE_A_DEV_MAX - 1)
};

enum {
	MACSEC_BRIDGE_A_GID_RDMA_DEV = 1,
	MACSEC_BRIDGE_A_GID_INDEX,
	MACSEC_BRIDGE_A_GID_GID,

	__MACSEC_BRIDGE_A_GID_MAX,
	MACSEC_BRIDGE_A_GID_MAX = (__MACSEC_BRIDGE_A_GID_MAX - 1)
};

enum {
	MACSEC_BRIDGE_CMD_DEV_GET = 1,
	MACSEC_BRIDGE_CMD_DEV_CHANGE_NTF,
	MACSEC_BRIDGE_CMD_BIND,
	MACSEC_BRIDGE_CMD_UNBIND,

	__MACSEC_BRIDGE_CMD_MAX,
	MACSEC_BRIDGE_CMD_MAX = (__MACSEC_BRIDGE_CMD_MAX - 1)
};

#define MACSEC_BRIDGE_MCGRP_MONITOR	"monitor"
#define MACSEC_BRIDGE_MCGRP_MONITOR_ALL	"monitor-all"

#endif /* _UAPI_LINUX_MACSEC_BRIDGE_H */
