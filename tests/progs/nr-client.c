// SPDX-License-Identifier: GPL-2.0
/*
 * nr-client: stands in for a user-space block client (rbd-nbd, an NBD or
 * iSCSI initiator) whose socket someone else marks SO_MEMALLOC.
 *
 *   nr-client connect tcp|udp ADDR PORT
 *       connect to ADDR:PORT, open /dev/null too (a descriptor that is not
 *       a socket), print "ready pid P sock S file F", then on each SIGUSR1
 *       print "memalloc V": the socket's SO_MEMALLOC as getsockopt reads it.
 *       Runs until SIGTERM or SIGINT.
 *   nr-client listen tcp|udp ADDR PORT
 *       the other end: bind (and accept, for TCP), print "ready", hold.
 *   nr-client socketpair stream|dgram
 *       a Unix socketpair, as a user-space NBD client shares with the
 *       kernel; "sock" is its first end.  Otherwise as connect.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76	/* until the system headers have it */
#endif

static volatile sig_atomic_t report, stop;

static void on_usr1(int sig)
{
	(void)sig;
	report = 1;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "nr-client: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ADDR as IPv4 or IPv6; returns the family. */
static int make_addr(const char *addr, int port, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return AF_INET6;
	}
	fprintf(stderr, "nr-client: bad address %s\n", addr);
	exit(2);
}

/*
 * Answer SIGUSR1 until SIGTERM.  The signals stay blocked except inside
 * sigsuspend(), so none slips in between the check and the wait.
 */
static void hold(int sock)
{
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	while (!stop) {
		if (report) {
			int val = -1;
			socklen_t len = sizeof(val);

			report = 0;
			if (getsockopt(sock, SOL_SOCKET, SO_MEMALLOC, &val, &len))
				printf("memalloc error %d\n", errno);
			else
				printf("memalloc %d\n", val);
			fflush(stdout);
			continue;
		}
		sigsuspend(&old);
	}
}

/* After the socket exists: a file that is not a socket, then the report. */
static int ready_and_hold(int sock)
{
	int file = open("/dev/null", O_RDONLY);

	if (file < 0)
		die("/dev/null");
	printf("ready pid %d sock %d file %d\n", (int)getpid(), sock, file);
	fflush(stdout);
	hold(sock);
	return 0;
}

int main(int argc, char **argv)
{
	bool pair_mode = argc == 3 && !strcmp(argv[1], "socketpair") &&
			 (!strcmp(argv[2], "stream") || !strcmp(argv[2], "dgram"));
	struct sockaddr_storage ss;
	int family, type, sock;
	struct sigaction sa = { 0 };
	socklen_t len;

	if (!pair_mode &&
	    (argc != 5 || (strcmp(argv[1], "connect") && strcmp(argv[1], "listen")) ||
	     (strcmp(argv[2], "tcp") && strcmp(argv[2], "udp")))) {
		fprintf(stderr, "usage: nr-client connect|listen tcp|udp ADDR PORT\n"
			"       nr-client socketpair stream|dgram\n");
		return 2;
	}
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (pair_mode) {
		int pair[2];

		type = strcmp(argv[2], "stream") ? SOCK_DGRAM : SOCK_STREAM;
		if (socketpair(AF_UNIX, type, 0, pair))
			die("socketpair");
		return ready_and_hold(pair[0]);
	}

	family = make_addr(argv[3], atoi(argv[4]), &ss, &len);
	type = strcmp(argv[2], "tcp") ? SOCK_DGRAM : SOCK_STREAM;
	sock = socket(family, type, 0);
	if (sock < 0)
		die("socket");

	if (!strcmp(argv[1], "listen")) {
		int one = 1;

		setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(sock, (struct sockaddr *)&ss, len))
			die("bind");
		if (type == SOCK_STREAM && listen(sock, 8))
			die("listen");
		printf("ready\n");
		fflush(stdout);
		/* Accept whoever comes, and keep them, until told to stop. */
		while (!stop && type == SOCK_STREAM) {
			if (accept(sock, NULL, NULL) < 0 && errno != EINTR)
				die("accept");
		}
		hold(sock);
		return 0;
	}

	if (connect(sock, (struct sockaddr *)&ss, len))
		die("connect");
	if (type == SOCK_DGRAM && send(sock, "hello", 5, 0) != 5)
		die("send");
	return ready_and_hold(sock);
}
