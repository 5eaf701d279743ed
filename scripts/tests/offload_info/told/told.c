// SPDX-License-Identifier: GPL-2.0
/*
 * An offload notifier reading every member of what it is told: it must
 * build (the control of reach.c).
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <net/macsec.h>

static int told(struct notifier_block *nb, unsigned long event, void *data)
{
	struct macsec_offload_info *info = data;

	pr_debug("%d %d %d %d %d %d %d %d\n", info->op, info->offload,
		 info->secy->netdev->ifindex, info->real_dev->ifindex,
		 info->assoc_num, info->tx_sa_active, info->new_offload,
		 info->ret);
	return NOTIFY_DONE;
}

static struct notifier_block nb = { .notifier_call = told };

static int __init told_init(void)
{
	return register_macsec_offload_notifier(&nb);
}
module_init(told_init);

static void __exit told_exit(void)
{
	unregister_macsec_offload_notifier(&nb);
}
module_exit(told_exit);

MODULE_DESCRIPTION("An offload notifier reading what it is told");
MODULE_LICENSE("GPL");
