// SPDX-License-Identifier: GPL-2.0
/*
 * nr-rtnl: send RTM_SETLINK with a raw IFLA_RX_RESERVE attribute of a chosen
 * payload length, and print the kernel's answer: the errno name and the
 * extack message.  For the tests of malformed input that `ip` cannot send.
 *
 *   nr-rtnl DEV LEN VALUE
 *
 * Exit status: 0 if the kernel accepted the message, 1 if it refused it.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IFLA_RX_RESERVE
#define IFLA_RX_RESERVE 62	/* until the system headers have it */
#endif

int main(int argc, char **argv)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = { 0 };
	char buf[8192];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct rtattr *rta;
	unsigned long long value;
	int fd, one = 1, len, payload;

	if (argc != 4) {
		fprintf(stderr, "usage: nr-rtnl DEV LEN VALUE\n");
		return 2;
	}
	payload = atoi(argv[2]);
	value = strtoull(argv[3], NULL, 0);
	if (payload < 0 || payload > 8) {
		fprintf(stderr, "nr-rtnl: LEN must be 0..8\n");
		return 2;
	}

	req.nh.nlmsg_type = RTM_SETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = if_nametoindex(argv[1]);
	if (!req.ifi.ifi_index) {
		fprintf(stderr, "nr-rtnl: no device %s\n", argv[1]);
		return 2;
	}
	rta = (struct rtattr *)req.attrs;
	rta->rta_type = IFLA_RX_RESERVE;
	rta->rta_len = RTA_LENGTH(payload);
	memcpy(RTA_DATA(rta), &value, payload);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_ALIGN(rta->rta_len);

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (fd < 0) {
		perror("nr-rtnl: socket");
		return 2;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		perror("nr-rtnl: send");
		return 2;
	}
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < (int)NLMSG_LENGTH(sizeof(struct nlmsgerr)) ||
	    nh->nlmsg_type != NLMSG_ERROR) {
		fprintf(stderr, "nr-rtnl: unexpected answer\n");
		return 2;
	}
	{
		struct nlmsgerr *err = NLMSG_DATA(nh);
		const char *msg = "";
		struct nlattr *a;
		int off;

		/* With NLM_F_ACK_TLVS the extack attributes follow the request. */
		off = NLMSG_LENGTH(sizeof(*err));
		if (!(nh->nlmsg_flags & NLM_F_CAPPED))
			off += NLMSG_ALIGN(err->msg.nlmsg_len - NLMSG_HDRLEN);
		for (a = (struct nlattr *)(buf + off);
		     (char *)a + NLA_HDRLEN <= buf + nh->nlmsg_len && a->nla_len >= NLA_HDRLEN;
		     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
			if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
				msg = (const char *)a + NLA_HDRLEN;
		if (!err->error) {
			printf("accepted\n");
			return 0;
		}
		printf("errno %d: %s\n", -err->error, msg);
	}
	return 1;
}
