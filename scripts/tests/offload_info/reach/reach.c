// SPDX-License-Identifier: GPL-2.0
/*
 * An offload notifier reaching for the driver's context, and through it
 * the key of an SA operation: it must not build.
 */
#include <linux/module.h>
#include <linux/notifier.h>
#include <net/macsec.h>

static int reach(struct notifier_block *nb, unsigned long event, void *data)
{
	struct macsec_offload_info *info = data;

	pr_debug("%*phN\n", MACSEC_MAX_KEY_LEN, info->ctx->sa.key);
	return NOTIFY_DONE;
}

static struct notifier_block nb = { .notifier_call = reach };

static int __init reach_init(void)
{
	return register_macsec_offload_notifier(&nb);
}
module_init(reach_init);

static void __exit reach_exit(void)
{
	unregister_macsec_offload_notifier(&nb);
}
module_exit(reach_exit);

MODULE_DESCRIPTION("An offload notifier reaching for the key");
MODULE_LICENSE("GPL");
