// SPDX-License-Identifier: GPL-2.0

#include <net/genetlink.h>
#include <net/netlink.h>

struct sk_buff *rust_helper_genlmsg_new(size_t payload, gfp_t flags)
{
	return genlmsg_new(payload, flags);
}

void rust_helper_genlmsg_end(struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
}

void rust_helper_genlmsg_cancel(struct sk_buff *skb, void *hdr)
{
	genlmsg_cancel(skb, hdr);
}

int rust_helper_genlmsg_reply(struct sk_buff *skb, struct genl_info *info)
{
	return genlmsg_reply(skb, info);
}

int rust_helper_genlmsg_multicast_netns(const struct genl_family *family,
					struct net *net, struct sk_buff *skb,
					u32 portid, unsigned int group, gfp_t flags)
{
	return genlmsg_multicast_netns(family, net, skb, portid, group, flags);
}

bool rust_helper_genl_has_listeners(const struct genl_family *family,
				    struct net *net, unsigned int group)
{
	return genl_has_listeners(family, net, group);
}

struct net *rust_helper_genl_info_net(const struct genl_info *info)
{
	return genl_info_net(info);
}

const struct genl_info *rust_helper_genl_info_dump(struct netlink_callback *cb)
{
	return genl_info_dump(cb);
}

void rust_helper_nlmsg_free(struct sk_buff *skb)
{
	nlmsg_free(skb);
}

struct nlattr *rust_helper_nla_nest_start(struct sk_buff *skb, int attrtype)
{
	return nla_nest_start(skb, attrtype);
}

int rust_helper_nla_nest_end(struct sk_buff *skb, struct nlattr *start)
{
	return nla_nest_end(skb, start);
}

void rust_helper_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_cancel(skb, start);
}
