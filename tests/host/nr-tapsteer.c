// SPDX-License-Identifier: GPL-2.0
/*
 * nr-tapsteer: make a multi-queue tap pick the queue of each frame it
 * hands to QEMU from the frame's TCP or UDP destination port, so that a
 * test decides which of a guest's virtio-net RX queues a flow arrives on.
 *
 *   nr-tapsteer TAP SECONDS
 *
 * The tap must exist, be multi-queue and persistent (ip tuntap add ...
 * multi_queue); nr-tapsteer attaches to it as one more queue and detaches
 * that queue again at once (TUNSETQUEUE), so that it carries no traffic
 * but may still set the tap's steering program (TUNSETSTEERINGEBPF): one
 * that returns the destination port of an IPv4 frame without IP options.
 * The tun driver takes the result modulo the queues attached, so with
 * QEMU's 4 queues a frame to port P lands on RX queue P % 4.  A frame too
 * short to have a port goes to queue 0.
 *
 * Set once before QEMU started, the program had no effect: most likely
 * QEMU detaches the tap's steering program when the guest resets its
 * virtio-net device with RSS off, as the driver does when it starts (not
 * traced in QEMU's source).  So nr-tapsteer sets the program again every
 * 100 ms for SECONDS, or until SIGTERM.
 *
 * Without it, the tap picks queues by a flow hash with a random key: a
 * test could not say in advance which queue carries which flow.
 * Exit status: 0 on success, 1 with a one-line message otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/bpf_prog.h"

/* Ethernet (14) and an IPv4 header without options (20): the ports. */
#define DST_PORT_OFFSET	(14 + 20 + 2)

static int load_steering_prog(void)
{
	const struct bpf_insn insns[] = {
		/* LD_ABS reads the packet through R6, the context. */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		/* R0 = the destination port, in host order; 0 if out of range. */
		INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, DST_PORT_OFFSET),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return load_bpf_prog("nr-tapsteer", BPF_PROG_TYPE_SOCKET_FILTER, insns,
			     sizeof(insns) / sizeof(insns[0]));
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const struct timespec period = { .tv_nsec = 100 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct ifreq ifr;
	int tun, prog, ticks;

	if (argc != 3 || strlen(argv[1]) >= IFNAMSIZ || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: nr-tapsteer TAP SECONDS\n");
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tun < 0) {
		fprintf(stderr, "nr-tapsteer: /dev/net/tun: %s\n", strerror(errno));
		return 1;
	}
	/* The flags QEMU attaches with, so that attaching changes nothing. */
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, argv[1]);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
	if (ioctl(tun, TUNSETIFF, &ifr)) {
		fprintf(stderr, "nr-tapsteer: attach to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	ifr.ifr_flags = IFF_DETACH_QUEUE;
	if (ioctl(tun, TUNSETQUEUE, &ifr)) {
		fprintf(stderr, "nr-tapsteer: detach the queue: %s\n", strerror(errno));
		return 1;
	}
	prog = load_steering_prog();
	if (prog < 0)
		return 1;
	for (ticks = atoi(argv[2]) * 10; !stop && ticks > 0; ticks--) {
		if (ioctl(tun, TUNSETSTEERINGEBPF, &prog)) {
			fprintf(stderr, "nr-tapsteer: TUNSETSTEERINGEBPF: %s\n",
				strerror(errno));
			return 1;
		}
		nanosleep(&period, NULL);
	}
	close(prog);
	close(tun);
	return 0;
}
