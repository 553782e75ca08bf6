// SPDX-License-Identifier: GPL-2.0
/*
 * nr-xdp: attach a one-instruction XDP program to a device in driver mode,
 * or detach it, so that the tests can drive a driver's XDP paths without
 * libbpf or a compiler for BPF.
 *
 *   nr-xdp DEV pass|drop|tx|redirect|off
 *
 * "redirect" sends every frame back out of DEV through bpf_redirect(), the
 * XDP_REDIRECT path.  The program stays attached after nr-xdp exits.
 * Exit status: 0 on success, 1 with a one-line message otherwise.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/bpf_prog.h"

#define MOV64_IMM(reg, v)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, reg, 0, 0, v)
#define CALL(fn)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define EXIT()			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int load_prog(const char *action, int ifindex)
{
	struct bpf_insn insns[4];
	unsigned int n = 0;

	if (!strcmp(action, "redirect")) {
		insns[n++] = MOV64_IMM(BPF_REG_1, ifindex);
		insns[n++] = MOV64_IMM(BPF_REG_2, 0);
		insns[n++] = CALL(BPF_FUNC_redirect);
	} else if (!strcmp(action, "pass")) {
		insns[n++] = MOV64_IMM(BPF_REG_0, XDP_PASS);
	} else if (!strcmp(action, "drop")) {
		insns[n++] = MOV64_IMM(BPF_REG_0, XDP_DROP);
	} else if (!strcmp(action, "tx")) {
		insns[n++] = MOV64_IMM(BPF_REG_0, XDP_TX);
	} else {
		fprintf(stderr, "nr-xdp: unknown action '%s'\n", action);
		return -1;
	}
	insns[n++] = EXIT();

	return load_bpf_prog("nr-xdp", BPF_PROG_TYPE_XDP, insns, n);
}

/* RTM_SETLINK with IFLA_XDP { IFLA_XDP_FD, IFLA_XDP_FLAGS = DRV_MODE }. */
static int attach(int ifindex, int prog_fd)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char answer[4096];
	struct rtattr *xdp, *rta;
	struct nlmsgerr *err;
	__u32 flags = XDP_FLAGS_DRV_MODE;
	int sock, len;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = RTM_SETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	xdp = (struct rtattr *)req.attrs;
	xdp->rta_type = IFLA_XDP | NLA_F_NESTED;
	rta = (struct rtattr *)((char *)xdp + RTA_LENGTH(0));
	rta->rta_type = IFLA_XDP_FD;
	rta->rta_len = RTA_LENGTH(sizeof(prog_fd));
	memcpy(RTA_DATA(rta), &prog_fd, sizeof(prog_fd));
	rta = (struct rtattr *)((char *)rta + RTA_ALIGN(rta->rta_len));
	rta->rta_type = IFLA_XDP_FLAGS;
	rta->rta_len = RTA_LENGTH(sizeof(flags));
	memcpy(RTA_DATA(rta), &flags, sizeof(flags));
	xdp->rta_len = RTA_LENGTH(2 * RTA_ALIGN(RTA_LENGTH(4)));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_ALIGN(xdp->rta_len);

	sock = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (sock < 0 || sendto(sock, &req, req.nh.nlmsg_len, 0,
			       (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		fprintf(stderr, "nr-xdp: netlink: %s\n", strerror(errno));
		return -1;
	}
	len = recv(sock, answer, sizeof(answer), 0);
	close(sock);
	err = NLMSG_DATA((struct nlmsghdr *)answer);
	if (len < (int)NLMSG_LENGTH(sizeof(*err)) ||
	    ((struct nlmsghdr *)answer)->nlmsg_type != NLMSG_ERROR) {
		fprintf(stderr, "nr-xdp: no answer from the kernel\n");
		return -1;
	}
	if (err->error) {
		fprintf(stderr, "nr-xdp: attach: %s\n", strerror(-err->error));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ifindex, prog_fd = -1;

	if (argc != 3) {
		fprintf(stderr, "usage: nr-xdp DEV pass|drop|tx|redirect|off\n");
		return 1;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "nr-xdp: no device '%s'\n", argv[1]);
		return 1;
	}
	if (strcmp(argv[2], "off")) {
		prog_fd = load_prog(argv[2], ifindex);
		if (prog_fd < 0)
			return 1;
	}
	return attach(ifindex, prog_fd) ? 1 : 0;
}
