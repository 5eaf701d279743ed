/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the model NIC needs of a kernel without the patch series: the
 * MACsec core's offload API, and the feature bit the series' bindings
 * name (Kbuild).
 */
#include <net/macsec.h>

const netdev_features_t RUST_CONST_HELPER_NETIF_F_HW_MACSEC = NETIF_F_HW_MACSEC;
