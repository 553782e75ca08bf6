// SPDX-License-Identifier: GPL-2.0
/*
 * nr-memalloc: exercise SO_MEMALLOC.
 *
 *   nr-memalloc check       the option's semantics, as root
 *   nr-memalloc check-eperm  marking is refused without CAP_NET_ADMIN in
 *                           the initial user namespace (run under unshare -Ur)
 *   nr-memalloc recv PORT COUNT TIMEOUT_S [mark|mark-filtered [DELAY_S]]
 *                           receive up to COUNT UDP datagrams on PORT (IPv6
 *                           socket, IPv4 too), optionally marked SO_MEMALLOC,
 *                           letting them queue unread first until SIGUSR1
 *                           comes or DELAY_S seconds pass (a test signals
 *                           once it has looked at the queue: a fixed delay
 *                           ran out before the traffic on a slow debug
 *                           kernel);
 *                           prints "received N"; "mark-filtered" also
 *                           attaches a socket filter that drops every
 *                           datagram (SO_ATTACH_FILTER, classic BPF)
 *
 * The checks print "    ok: ..." or "    FAIL: ..." lines for the guest
 * runner, and exit 1 if any failed.
 */
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76	/* until the system headers have it */
#endif

#define MEMALLOC_SOCKS "/sys/kernel/debug/rx_reserve/memalloc_socks"

static int failed;

static void result(int ok, const char *what)
{
	printf("    %s: %s\n", ok ? "ok" : "FAIL", what);
	failed |= !ok;
}

static int memalloc_socks(void)
{
	FILE *f = fopen(MEMALLOC_SOCKS, "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int set_memalloc(int fd, int val)
{
	return setsockopt(fd, SOL_SOCKET, SO_MEMALLOC, &val, sizeof(val)) ? -errno : 0;
}

static int get_memalloc(int fd)
{
	socklen_t len = sizeof(int);
	int val = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_MEMALLOC, &val, &len))
		return -errno;
	return val;
}

static void check_one(int family, int type, const char *name)
{
	int base = memalloc_socks();
	char what[160];
	int fd, ok;

	fd = socket(family, type, 0);
	if (fd < 0) {
		snprintf(what, sizeof(what), "%s: socket: %s", name, strerror(errno));
		result(0, what);
		return;
	}
	ok = get_memalloc(fd) == 0 && set_memalloc(fd, 1) == 0 &&
	     get_memalloc(fd) == 1 && memalloc_socks() == base + 1;
	/* Marking twice counts once. */
	ok = ok && set_memalloc(fd, 1) == 0 && memalloc_socks() == base + 1;
	ok = ok && set_memalloc(fd, 0) == 0 && get_memalloc(fd) == 0 &&
	     memalloc_socks() == base;
	/* Clearing twice too. */
	ok = ok && set_memalloc(fd, 0) == 0 && memalloc_socks() == base;
	/* Closing a marked socket gives the mark back. */
	ok = ok && set_memalloc(fd, 1) == 0 && memalloc_socks() == base + 1;
	close(fd);
	ok = ok && memalloc_socks() == base;
	snprintf(what, sizeof(what),
		 "%s: mark, read back, mark twice, clear twice, close: memalloc_socks exact",
		 name);
	result(ok, what);
}

/* A socket no block client does its I/O on: marking it fails, unmarked. */
static void check_refused(int family, int type, int protocol, const char *name)
{
	int fd = socket(family, type, protocol);
	int err = set_memalloc(fd, 1);
	char what[160];

	snprintf(what, sizeof(what), "%s cannot be marked (EOPNOTSUPP)", name);
	result(err == -EOPNOTSUPP && get_memalloc(fd) == 0, what);
	close(fd);
}

static int do_check(void)
{
	if (memalloc_socks() < 0) {
		result(0, "read " MEMALLOC_SOCKS);
		return 1;
	}
	check_one(AF_INET, SOCK_STREAM, "TCP/IPv4");
	check_one(AF_INET, SOCK_DGRAM, "UDP/IPv4");
	check_one(AF_INET6, SOCK_STREAM, "TCP/IPv6");
	check_one(AF_INET6, SOCK_DGRAM, "UDP/IPv6");

	/*
	 * A user-space NBD client (rbd-nbd's shape) hands the kernel its
	 * replies over a Unix stream socket: that one must be markable too.
	 */
	check_one(AF_UNIX, SOCK_STREAM, "Unix stream");
	check_one(AF_UNIX, SOCK_SEQPACKET, "Unix seqpacket");

	check_refused(AF_UNIX, SOCK_DGRAM, 0, "a Unix datagram socket");
	check_refused(AF_INET, SOCK_RAW, IPPROTO_ICMP, "a raw IPv4 socket");
	return failed;
}

static int do_check_eperm(void)
{
	int base = memalloc_socks();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	result(set_memalloc(fd, 1) == -EPERM && get_memalloc(fd) == 0 &&
	       memalloc_socks() == base,
	       "without CAP_NET_ADMIN in the initial user namespace: EPERM, unmarked");
	close(fd);
	return failed;
}

/* SIGUSR1, blocked from the start (main()), so one sent early is not lost. */
static sigset_t usr1;

static void wait_for_sigusr1(int seconds)
{
	struct timespec timeout = { .tv_sec = seconds };

	sigtimedwait(&usr1, NULL, &timeout);
}

static int do_recv(int port, int count, int timeout, int mark, int filtered,
		   int delay)
{
	struct sock_filter drop_all = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop_all };
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	struct timeval tv = { .tv_sec = timeout };
	char buf[65536];
	int fd, n = 0;

	addr.sin6_port = htons(port);
	addr.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("nr-memalloc: socket/bind");
		return 2;
	}
	if (mark && set_memalloc(fd, 1)) {
		perror("nr-memalloc: SO_MEMALLOC");
		return 2;
	}
	if (filtered && setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
		perror("nr-memalloc: SO_ATTACH_FILTER");
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	printf("listening\n");
	fflush(stdout);
	if (delay)
		wait_for_sigusr1(delay);
	while (n < count && recv(fd, buf, sizeof(buf), 0) > 0)
		n++;
	printf("received %d\n", n);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (argc == 2 && !strcmp(argv[1], "check"))
		return do_check();
	if (argc == 2 && !strcmp(argv[1], "check-eperm"))
		return do_check_eperm();
	if (argc >= 5 && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
			       argc > 5 && (!strcmp(argv[5], "mark") ||
					    !strcmp(argv[5], "mark-filtered")),
			       argc > 5 && !strcmp(argv[5], "mark-filtered"),
			       argc > 6 ? atoi(argv[6]) : 0);
	fprintf(stderr, "usage: nr-memalloc check | check-eperm |"
			" recv PORT COUNT TIMEOUT_S [mark|mark-filtered [DELAY_S]]\n");
	return 2;
}
