// SPDX-License-Identifier: GPL-2.0
/*
 * netreserve: show and set network devices' emergency RX reserves, and mark
 * a running block client's sockets SO_MEMALLOC.  See netreserve(8).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nr_format.h"

/* Until the system headers carry them: the values of the kernel series. */
#ifndef IFLA_RX_RESERVE
#define IFLA_RX_RESERVE 62
#define IFLA_RX_RESERVE_STATS 63
#define IFLA_RX_RESERVE_STATS_PAGES 2
#define IFLA_RX_RESERVE_STATS_HELD 3
#define IFLA_RX_RESERVE_STATS_PEAK 4
#define IFLA_RX_RESERVE_STATS_ALLOC 5
#define IFLA_RX_RESERVE_STATS_REFUSED 6
#define IFLA_RX_RESERVE_STATS_DROPPED 7
#define IFLA_RX_RESERVE_STATS_DELIVERED 8
#endif
#ifndef IFLA_RX_RESERVE_STATS_SHARE
#define IFLA_RX_RESERVE_STATS_SHARE 9
#endif
#ifndef IFLA_RX_RESERVE_STATS_BUFFERS
#define IFLA_RX_RESERVE_STATS_BUFFERS 10
#endif
#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76
#endif

#define MAX_DEVS 256

static const char *prog = "netreserve";

static int fail(enum nr_exit code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(enum nr_exit code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

struct dump {
	struct nr_dev devs[MAX_DEVS];
	int n;
	const char *only;	/* a device name, or NULL for all */
};

static void parse_stats(const struct nlattr *nest, struct nr_dev *d)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		uint64_t v;

		if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
			continue;
		v = mnl_attr_get_u64(a);
		switch (mnl_attr_get_type(a)) {
		case IFLA_RX_RESERVE_STATS_PAGES: d->pages = v; break;
		case IFLA_RX_RESERVE_STATS_HELD: d->held = v; break;
		case IFLA_RX_RESERVE_STATS_PEAK: d->peak = v; break;
		case IFLA_RX_RESERVE_STATS_ALLOC: d->alloc = v; break;
		case IFLA_RX_RESERVE_STATS_REFUSED: d->refused = v; break;
		case IFLA_RX_RESERVE_STATS_DROPPED: d->dropped = v; break;
		case IFLA_RX_RESERVE_STATS_DELIVERED: d->delivered = v; break;
		case IFLA_RX_RESERVE_STATS_SHARE: d->share = v; break;
		case IFLA_RX_RESERVE_STATS_BUFFERS: d->buffers = v; break;
		}
	}
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct dump *dump = data;
	struct nr_dev d = { .ifindex = ifm->ifi_index };
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				snprintf(d.name, sizeof(d.name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_RX_RESERVE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
				d.rx_reserve = mnl_attr_get_u32(a);
				d.supported = true;
			}
			break;
		case IFLA_RX_RESERVE_STATS:
			parse_stats(a, &d);
			break;
		}
	}
	if (dump->only && strcmp(dump->only, d.name) != 0)
		return MNL_CB_OK;
	if (dump->n < MAX_DEVS)
		dump->devs[dump->n++] = d;
	return MNL_CB_OK;
}

/* One request's context: the caller's callback and the kernel's extack. */
struct talk {
	mnl_cb_t cb;
	void *data;
	char extack[256];
};

static int data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct talk *t = arg;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

/* The kernel's answer to a request: its errno, and its extack message. */
static int ack_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct talk *t = arg;
	const struct nlattr *a;
	unsigned int off;

	errno = -err->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return err->error ? MNL_CB_ERROR : MNL_CB_STOP;
	off = sizeof(*err);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += mnl_nlmsg_get_payload_len(&err->msg);
	mnl_attr_for_each(a, nlh, off) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(t->extack, sizeof(t->extack), "%s", mnl_attr_get_str(a));
	}
	errno = -err->error;
	return err->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

/* The end of a dump. */
static int done_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(void)arg;
	return MNL_CB_STOP;
}

/*
 * Send one request and run the answers through cb.  Returns 0 or -errno;
 * the kernel's extack message, if any, lands in extack (256 bytes).
 */
static int rtnl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data, char *extack)
{
	/* A control array replaces libmnl's defaults: name NLMSG_DONE too. */
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = ack_cb,
		[NLMSG_DONE] = done_cb,
	};
	struct talk t = { .cb = cb, .data = data };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	unsigned int portid;
	int one = 1, ret;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	do {
		ssize_t len = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (len <= 0) {
			ret = (int)len;
			break;
		}
		errno = 0;
		ret = mnl_cb_run2(buf, (size_t)len, nlh->nlmsg_seq, portid, data_cb, &t,
				  ctl, NLMSG_MIN_TYPE);
	} while (ret > 0);
	ret = ret < 0 ? -(errno ? errno : EIO) : 0;
	if (extack)
		memcpy(extack, t.extack, sizeof(t.extack));
out:
	mnl_socket_close(nl);
	return ret;
}

/* A sysctl's value, or -1 when it is missing or unreadable. */
static long read_long(const char *path)
{
	char text[32], *end;
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(text, sizeof(text), f)) {
		errno = 0;
		v = strtol(text, &end, 10);
		if (errno || end == text || (*end && *end != '\n') || v < 0)
			v = -1;
	}
	fclose(f);
	return v;
}

/*
 * The series adds vm.memalloc_reserve_kbytes with the reserve itself.  Check
 * it before talking netlink: on a kernel without the series, attribute 62 may
 * mean something else, and a set must not quietly "succeed".
 */
static bool have_rx_reserve(void)
{
	return access("/proc/sys/vm/memalloc_reserve_kbytes", F_OK) == 0;
}

static void read_global(struct nr_global *g)
{
	g->min_free_kbytes = read_long("/proc/sys/vm/min_free_kbytes");
	g->memalloc_reserve_kbytes = read_long("/proc/sys/vm/memalloc_reserve_kbytes");
	g->rx_reserve_max_kbytes = read_long("/proc/sys/net/core/rx_reserve_max_kbytes");
}

static int dump_links(struct dump *dump)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	dump->n = 0;
	return rtnl_talk(nlh, link_cb, dump, NULL);
}

static int cmd_show(const char *dev, bool json)
{
	static struct dump dump;
	struct nr_global g;
	int err, i, supported = 0;

	if (!have_rx_reserve())
		return fail(NR_EXIT_NOFEATURE, "this kernel has no RX reserve (no vm.memalloc_reserve_kbytes)");
	if (dev && !if_nametoindex(dev))
		return fail(NR_EXIT_NODEV, "no such device: %s", dev);
	dump.only = dev;
	err = dump_links(&dump);
	if (err)
		return fail(nr_exit_for_errno(err), "cannot list devices: %s", strerror(-err));
	for (i = 0; i < dump.n; i++)
		supported += dump.devs[i].supported;
	read_global(&g);
	if (dev && !supported)
		return fail(NR_EXIT_NOTSUPP, "%s does not support an RX reserve", dev);
	if (json)
		nr_print_json(stdout, dump.devs, dump.n, &g);
	else
		nr_print_text(stdout, dump.devs, dump.n, &g);
	return fflush(stdout) ? NR_EXIT_ERROR : NR_EXIT_OK;
}

static int cmd_set(const char *dev, const char *value)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], extack[256] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	uint32_t n;
	int ifindex, err;

	if (nr_parse_u32(value, &n))
		return fail(NR_EXIT_USAGE, "invalid rx_reserve '%s': want a number of buffers", value);
	if (!have_rx_reserve())
		return fail(NR_EXIT_NOFEATURE, "this kernel has no RX reserve (no vm.memalloc_reserve_kbytes)");
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex)
		return fail(NR_EXIT_NODEV, "no such device: %s", dev);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_RX_RESERVE, n);
	err = rtnl_talk(nlh, NULL, NULL, extack);
	if (err)
		return fail(nr_exit_for_errno(err), "cannot set rx_reserve of %s: %s",
			    dev, *extack ? extack : strerror(-err));
	return NR_EXIT_OK;
}

static int pidfd_open(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

/* An exited process keeps its pid until reaped, but no longer any fd. */
static bool has_exited(int pid)
{
	char path[64], line[512], state = '?', *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	if (fgets(line, sizeof(line), f)) {
		p = strrchr(line, ')');
		if (p && p[1] == ' ' && p[2])
			state = p[2];
	}
	fclose(f);
	return state == 'Z' || state == 'X';
}

/*
 * The sockets SO_MEMALLOC takes: TCP and UDP, and Unix stream and seqpacket
 * (a user-space NBD client's end of its socketpair with the kernel).
 * Returns the socket's family if it is one of those, else -1.
 */
static int markable_family(int local)
{
	int domain = -1, type = -1, proto = -1;
	socklen_t len = sizeof(int);

	getsockopt(local, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	len = sizeof(int);
	getsockopt(local, SOL_SOCKET, SO_TYPE, &type, &len);
	len = sizeof(int);
	getsockopt(local, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
	if ((domain == AF_INET || domain == AF_INET6) &&
	    (proto == IPPROTO_TCP || proto == IPPROTO_UDP))
		return domain;
	if (domain == AF_UNIX && (type == SOCK_STREAM || type == SOCK_SEQPACKET))
		return domain;
	return -1;
}

/*
 * Mark (or clear) one socket of the process behind pidfd.  With quiet set
 * (--all), descriptors that cannot be marked return -1 without a message:
 * other files and sockets, and Unix sockets on a kernel whose SO_MEMALLOC
 * takes TCP and UDP only.
 */
static int mark_one(int pidfd, int pid, int fd, int on, bool quiet)
{
	int local, family, err = 0;
	struct stat st;

	local = pidfd_getfd(pidfd, fd);
	if (local < 0) {
		err = errno;
		if ((err == EBADF || err == ESRCH) && has_exited(pid))
			return fail(NR_EXIT_EXITED, "process %d has exited", pid);
		if (err == EBADF)
			return fail(NR_EXIT_BADFD, "process %d has no fd %d", pid, fd);
		if (err == ESRCH)
			return fail(NR_EXIT_NOPROC, "process %d is gone", pid);
		return fail(nr_exit_for_errno(err), "cannot get fd %d of process %d: %s",
			    fd, pid, strerror(err));
	}
	if (fstat(local, &st) || !S_ISSOCK(st.st_mode)) {
		close(local);
		if (quiet)
			return -1;
		return fail(NR_EXIT_NOTSOCK, "fd %d of process %d is not a socket", fd, pid);
	}
	family = markable_family(local);
	if (family < 0) {
		close(local);
		if (quiet)
			return -1;
		return fail(NR_EXIT_NOTSOCK,
			    "fd %d of process %d is not a TCP, UDP or Unix stream socket", fd, pid);
	}
	if (setsockopt(local, SOL_SOCKET, SO_MEMALLOC, &on, sizeof(on)))
		err = errno;
	close(local);
	if (err == EOPNOTSUPP && family == AF_UNIX && quiet)
		return -1;
	if (err == ENOPROTOOPT)
		return fail(NR_EXIT_NOFEATURE, "this kernel has no SO_MEMALLOC");
	if (err)
		return fail(nr_exit_for_errno(err), "cannot %s fd %d of process %d: %s",
			    on ? "mark" : "unmark", fd, pid, strerror(err));
	printf("%s fd %d of process %d\n", on ? "marked" : "unmarked", fd, pid);
	return NR_EXIT_OK;
}

static int cmd_mark(int argc, char **argv, int on)
{
	bool all = argc > 0 && !strcmp(argv[0], "--all");
	int pid, fd, pidfd, ret = NR_EXIT_OK;

	if (all) {
		argc--;
		argv++;
	}
	if (argc != (all ? 1 : 2))
		return fail(NR_EXIT_USAGE, "usage: %s %s PID FD | %s %s --all PID", prog,
			    on ? "mark" : "unmark", prog, on ? "mark" : "unmark");
	if (nr_parse_pid(argv[0], &pid))
		return fail(NR_EXIT_USAGE, "invalid pid '%s'", argv[0]);
	if (!all && nr_parse_fd(argv[1], &fd))
		return fail(NR_EXIT_USAGE, "invalid fd '%s'", argv[1]);

	pidfd = pidfd_open(pid);
	if (pidfd < 0) {
		if (errno == ESRCH)
			return fail(NR_EXIT_NOPROC, "no such process: %d", pid);
		return fail(nr_exit_for_errno(errno), "cannot open process %d: %s", pid,
			    strerror(errno));
	}
	if (has_exited(pid)) {
		close(pidfd);
		return fail(NR_EXIT_EXITED, "process %d has exited", pid);
	}
	if (!all) {
		ret = mark_one(pidfd, pid, fd, on, false);
	} else {
		char path[64];
		struct dirent *e;
		int marked = 0;
		DIR *dir;

		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		dir = opendir(path);
		if (!dir) {
			close(pidfd);
			return fail(NR_EXIT_NOPROC, "cannot list the fds of process %d: %s",
				    pid, strerror(errno));
		}
		while ((e = readdir(dir))) {
			int r;

			if (nr_parse_fd(e->d_name, &fd))
				continue;
			r = mark_one(pidfd, pid, fd, on, true);
			if (r == NR_EXIT_OK)
				marked++;
			else if (r > 0)
				ret = r;
		}
		closedir(dir);
		if (!marked && ret == NR_EXIT_OK)
			ret = fail(NR_EXIT_NOTSOCK, "process %d has no TCP, UDP or Unix stream socket",
				   pid);
	}
	close(pidfd);
	return ret;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int cmd_watch(const char *dev)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int ret = NR_EXIT_OK;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop && ret == NR_EXIT_OK) {
		time_t now = time(NULL);

		/* Clear the screen, home the cursor. */
		printf("\033[H\033[2Jnetreserve watch, every 1s (Ctrl-C stops)  %s", ctime(&now));
		ret = cmd_show(dev, false);
		sleep(1);
	}
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-j] show [DEV]      devices' RX reserves, counters and the global reserve\n"
		"       %s set DEV N           set DEV's share to N packets of its MTU (0: none)\n"
		"       %s mark PID FD         mark a running process's socket SO_MEMALLOC\n"
		"       %s mark --all PID      mark every TCP, UDP and Unix stream socket of it\n"
		"       %s unmark PID FD | --all PID\n"
		"       %s watch [DEV]         refresh the view once a second\n"
		"       %s -h | --help\n",
		prog, prog, prog, prog, prog, prog, prog);
}

int main(int argc, char **argv)
{
	bool json = false;

	argc--;
	argv++;
	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "-j") || !strcmp(argv[0], "--json")) {
			json = true;
		} else if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
			usage(stdout);
			return NR_EXIT_OK;
		} else {
			return fail(NR_EXIT_USAGE, "unknown option %s (see --help)", argv[0]);
		}
		argc--;
		argv++;
	}
	if (argc == 0 || (!strcmp(argv[0], "show") && argc <= 2))
		return cmd_show(argc == 2 ? argv[1] : NULL, json);
	if (!strcmp(argv[0], "set") && argc == 3)
		return cmd_set(argv[1], argv[2]);
	if (!strcmp(argv[0], "mark"))
		return cmd_mark(argc - 1, argv + 1, 1);
	if (!strcmp(argv[0], "unmark"))
		return cmd_mark(argc - 1, argv + 1, 0);
	if (!strcmp(argv[0], "watch") && argc <= 2)
		return cmd_watch(argc == 2 ? argv[1] : NULL);
	return fail(NR_EXIT_USAGE, "bad command line: '%s ...' (see --help)", argv[0]);
}
