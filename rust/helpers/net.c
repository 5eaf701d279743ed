// SPDX-License-Identifier: GPL-2.0

#include <linux/netdevice.h>
#include <net/net_namespace.h>

void rust_helper_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rust_helper_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

struct net *rust_helper_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

bool rust_helper_netif_carrier_ok(const struct net_device *dev)
{
	return netif_carrier_ok(dev);
}

bool rust_helper_netif_is_macsec(const struct net_device *dev)
{
	return netif_is_macsec(dev);
}

struct net *rust_helper_get_net(struct net *net)
{
	return get_net(net);
}

void rust_helper_put_net(struct net *net)
{
	put_net(net);
}
