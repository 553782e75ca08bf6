// SPDX-License-Identifier: GPL-2.0
/*
 * nr-nbd: a minimal NBD server, and a client that hands its socket to the
 * kernel's nbd driver, for swap over the network in the pressure test.
 *
 *   nr-nbd serve PORT SIZE_MIB   serve one connection with an export of
 *                                SIZE_MIB held in this process's memory;
 *                                exit when the client disconnects or has
 *                                been silent for IDLE_S (120) seconds
 *   nr-nbd attach DEV ADDR PORT [EXPORT]
 *                                connect, negotiate, and give the socket to
 *                                DEV (/dev/nbd0); the kernel marks it
 *                                SOCK_MEMALLOC.  Returns once DEV has its
 *                                size; a child stays in NBD_DO_IT
 *   nr-nbd relay DEV ADDR PORT EXPORT mark|nomark
 *                                a user-space block client, the shape of
 *                                rbd-nbd or qemu-storage-daemon: DEV talks
 *                                NBD over a Unix socketpair to a process of
 *                                ours, which forwards every byte both ways
 *                                to the server over its own TCP socket.
 *                                With "mark" that socket and our end of
 *                                the socketpair get SO_MEMALLOC (the kernel
 *                                marks only its own end).  Either
 *                                way the relay locks its memory, is an IO
 *                                flusher (PR_SET_IO_FLUSHER) and allocates
 *                                nothing after setup.  Returns once DEV has
 *                                its size; the relay runs until DEV is
 *                                disconnected
 *   nr-nbd detach DEV            disconnect DEV
 *
 * The server speaks NBD's oldstyle negotiation: it announces the export's
 * size and flags, the client asks for nothing.  The client speaks that and
 * the fixed newstyle negotiation of Debian's nbd-server (which the pressure
 * test uses): it asks for EXPORT (default "swap") with NBD_OPT_EXPORT_NAME.
 * Either gives the kernel's transmission phase all it needs.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nbd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NBD_OLDSTYLE_MAGIC	0x00420281861253ULL
#define NBD_OPTS_MAGIC		0x49484156454F5054ULL	/* "IHAVEOPT" */
#define NBD_OPT_EXPORT_NAME	1
#define NBD_FLAG_FIXED_NEWSTYLE	(1 << 0)
#define NBD_FLAG_NO_ZEROES	(1 << 1)
#define GREETING_LEN		152
#define IDLE_S			120
#define BLOCK_SIZE		4096
#define RELAY_BUF		(256 * 1024)
#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76	/* until the system headers have it */
#endif
#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

static int die(const char *what)
{
	fprintf(stderr, "nr-nbd: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Read or write exactly @len bytes; false on EOF, error or timeout. */
static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/* Read and discard @len bytes. */
static int skip(int fd, uint32_t len)
{
	static char sink[65536];

	while (len) {
		uint32_t n = len < sizeof(sink) ? len : sizeof(sink);

		if (!read_all(fd, sink, n))
			return 0;
		len -= n;
	}
	return 1;
}

static int serve_one(int conn, char *disk, uint64_t size)
{
	unsigned char greeting[GREETING_LEN] = "NBDMAGIC";
	uint64_t magic = htobe64(NBD_OLDSTYLE_MAGIC), be_size = htobe64(size);
	uint32_t flags = htobe32(NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH);
	uint64_t reads = 0, writes = 0;
	struct nbd_request req;
	struct nbd_reply reply;

	memcpy(greeting + 8, &magic, 8);
	memcpy(greeting + 16, &be_size, 8);
	memcpy(greeting + 24, &flags, 4);
	if (!write_all(conn, greeting, sizeof(greeting)))
		return die("greeting");

	while (read_all(conn, &req, sizeof(req))) {
		uint32_t type = be32toh(req.type) & 0xffff;
		uint64_t from = be64toh(req.from);
		uint32_t len = be32toh(req.len);
		int bad = from > size || len > size - from;

		if (be32toh(req.magic) != NBD_REQUEST_MAGIC) {
			fprintf(stderr, "nr-nbd: bad request magic\n");
			return 1;
		}
		if (type == NBD_CMD_DISC)
			break;
		reply.magic = htobe32(NBD_REPLY_MAGIC);
		reply.error = htobe32(bad ? EINVAL : 0);
		memcpy(reply.handle, req.handle, sizeof(reply.handle));
		switch (type) {
		case NBD_CMD_WRITE:
			/* The data follows the request even when it is out of range. */
			if (bad ? !skip(conn, len) : !read_all(conn, disk + from, len))
				return 1;
			writes += len;
			if (!write_all(conn, &reply, sizeof(reply)))
				return 1;
			break;
		case NBD_CMD_READ:
			if (!write_all(conn, &reply, sizeof(reply)) ||
			    (!bad && !write_all(conn, disk + from, len)))
				return 1;
			reads += len;
			break;
		default:	/* FLUSH: the export is memory; TRIM is not offered */
			if (!write_all(conn, &reply, sizeof(reply)))
				return 1;
		}
	}
	printf("nr-nbd: served %llu MiB written, %llu MiB read\n",
	       (unsigned long long)(writes >> 20), (unsigned long long)(reads >> 20));
	return 0;
}

static int do_serve(const char *port, unsigned long mib)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct timeval idle = { .tv_sec = IDLE_S };
	uint64_t size = (uint64_t)mib << 20;
	int fd, conn, one = 1;
	char *disk;

	/* Touched only where the client writes. */
	disk = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (disk == MAP_FAILED)
		return die("mmap");
	addr.sin_port = htons(atoi(port));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 1))
		return die("bind");
	printf("nr-nbd: serving %lu MiB on port %s\n", mib, port);
	fflush(stdout);
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		return die("accept");
	setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	printf("nr-nbd: client connected\n");
	fflush(stdout);
	return serve_one(conn, disk, size);
}

/* Fixed newstyle: ask for @export; its size and transmission flags. */
static int negotiate_newstyle(int fd, const char *export, uint64_t *size,
			      uint32_t *flags)
{
	uint16_t server_flags, tx_flags;
	uint32_t client_flags, opt[2];
	uint64_t opts_magic = htobe64(NBD_OPTS_MAGIC), be_size;
	unsigned char zeroes[124];

	if (!read_all(fd, &server_flags, sizeof(server_flags)))
		return die("handshake flags");
	server_flags = be16toh(server_flags);
	if (!(server_flags & NBD_FLAG_FIXED_NEWSTYLE)) {
		fprintf(stderr, "nr-nbd: the server does not speak fixed newstyle\n");
		return 1;
	}
	client_flags = htobe32(NBD_FLAG_FIXED_NEWSTYLE |
			       (server_flags & NBD_FLAG_NO_ZEROES));
	opt[0] = htobe32(NBD_OPT_EXPORT_NAME);
	opt[1] = htobe32(strlen(export));
	if (write(fd, &client_flags, 4) != 4 || write(fd, &opts_magic, 8) != 8 ||
	    write(fd, opt, 8) != 8 ||
	    write(fd, export, strlen(export)) != (ssize_t)strlen(export))
		return die("option");
	/* An unknown export makes the server hang up here. */
	if (!read_all(fd, &be_size, 8) || !read_all(fd, &tx_flags, 2))
		return die("export");
	if (!(server_flags & NBD_FLAG_NO_ZEROES) && !read_all(fd, zeroes, sizeof(zeroes)))
		return die("export");
	*size = be64toh(be_size);
	*flags = be16toh(tx_flags);
	return 0;
}

/* The server's address from the command line; false after saying why. */
static int server_addr(const char *host, const char *port, struct sockaddr_in *addr)
{
	*addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	if (inet_pton(AF_INET, host, &addr->sin_addr) != 1) {
		fprintf(stderr, "nr-nbd: '%s' is not an IPv4 address\n", host);
		return 0;
	}
	return 1;
}

/*
 * Connect to the server and negotiate EXPORT.  Returns the socket, ready for
 * the transmission phase, or -1 after saying why.
 */
static int connect_export(const struct sockaddr_in *addr, const char *export,
			  uint64_t *size, uint32_t *flags)
{
	unsigned char greeting[GREETING_LEN];
	uint64_t magic;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		die("socket");
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		die("connect");
		goto fail;
	}
	if (!read_all(fd, greeting, 16)) {
		die("greeting");
		goto fail;
	}
	memcpy(&magic, greeting + 8, 8);
	if (memcmp(greeting, "NBDMAGIC", 8)) {
		fprintf(stderr, "nr-nbd: not an NBD server\n");
		goto fail;
	}
	if (be64toh(magic) == NBD_OPTS_MAGIC) {
		if (negotiate_newstyle(fd, export, size, flags))
			goto fail;
	} else if (be64toh(magic) == NBD_OLDSTYLE_MAGIC) {
		if (!read_all(fd, greeting + 16, sizeof(greeting) - 16)) {
			die("greeting");
			goto fail;
		}
		memcpy(size, greeting + 16, 8);
		memcpy(flags, greeting + 24, 4);
		*size = be64toh(*size);
		*flags = be32toh(*flags);
	} else {
		fprintf(stderr, "nr-nbd: unknown NBD negotiation\n");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * Give @fd to @dev for an export of @size bytes, and keep a child in
 * NBD_DO_IT.  Returns once the device has its size.
 */
static int nbd_start(const char *dev, int fd, uint64_t size, uint32_t flags)
{
	char sysfs[64];
	int nbd, i;
	pid_t child;

	nbd = open(dev, O_RDWR);
	if (nbd < 0)
		return die(dev);
	if (ioctl(nbd, NBD_SET_BLKSIZE, BLOCK_SIZE) ||
	    ioctl(nbd, NBD_SET_SIZE_BLOCKS, size / BLOCK_SIZE) ||
	    ioctl(nbd, NBD_SET_FLAGS, flags & 0xffff) ||
	    ioctl(nbd, NBD_SET_SOCK, fd))
		return die("nbd setup");

	child = fork();
	if (child < 0)
		return die("fork");
	if (child == 0) {
		/* The kernel serves requests in this call until disconnect. */
		setsid();
		if (ioctl(nbd, NBD_DO_IT))
			perror("nr-nbd: NBD_DO_IT");
		ioctl(nbd, NBD_CLEAR_QUE);
		ioctl(nbd, NBD_CLEAR_SOCK);
		_exit(0);
	}
	snprintf(sysfs, sizeof(sysfs), "/sys/block/%s/size", strrchr(dev, '/') + 1);
	for (i = 0; i < 100; i++) {
		FILE *f = fopen(sysfs, "r");
		unsigned long long sectors = 0;

		if (f) {
			if (fscanf(f, "%llu", &sectors) != 1)
				sectors = 0;
			fclose(f);
		}
		if (sectors) {
			printf("nr-nbd: %s attached, %llu MiB\n", dev,
			       (unsigned long long)(size >> 20));
			return 0;
		}
		usleep(100000);
	}
	fprintf(stderr, "nr-nbd: %s did not come up\n", dev);
	return 1;
}

static int do_attach(const char *dev, const char *host, const char *port,
		     const char *export)
{
	struct sockaddr_in addr;
	uint64_t size = 0;
	uint32_t flags = 0;
	int fd;

	if (!server_addr(host, port, &addr))
		return 2;
	fd = connect_export(&addr, export, &size, &flags);
	if (fd < 0)
		return 1;
	return nbd_start(dev, fd, size, flags);
}

struct relay_dir {
	int from, to;
	char *buf;	/* RELAY_BUF bytes, allocated and locked before the relay starts */
};

/* Forward one direction until either side closes. */
static void *relay_one_way(void *arg)
{
	struct relay_dir *d = arg;
	ssize_t n;

	while ((n = read(d->from, d->buf, RELAY_BUF)) > 0)
		if (!write_all(d->to, d->buf, n))
			break;
	shutdown(d->from, SHUT_RD);
	shutdown(d->to, SHUT_WR);
	return NULL;
}

static int do_relay(const char *dev, const char *host, const char *port,
		    const char *export, const char *mark)
{
	static struct relay_dir to_server, to_kernel;
	int marked = !strcmp(mark, "mark");
	struct sockaddr_in addr;
	uint64_t size = 0;
	uint32_t flags = 0;
	int one = 1, sv[2], tcp;
	pthread_t thread;
	pid_t relay;

	if (!marked && strcmp(mark, "nomark")) {
		fprintf(stderr, "nr-nbd: relay wants mark or nomark, not '%s'\n", mark);
		return 2;
	}
	if (!server_addr(host, port, &addr))
		return 2;
	tcp = connect_export(&addr, export, &size, &flags);
	if (tcp < 0)
		return 1;
	if (marked &&
	    setsockopt(tcp, SOL_SOCKET, SO_MEMALLOC, &one, sizeof(one)))
		return die("SO_MEMALLOC");
	if (setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return die("TCP_NODELAY");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return die("socketpair");
	/*
	 * The replies reach the kernel through our end of the socketpair:
	 * unmarked, each one's skb waits in direct reclaim for the very
	 * write-out it completes.
	 */
	if (marked &&
	    setsockopt(sv[1], SOL_SOCKET, SO_MEMALLOC, &one, sizeof(one)))
		return die("SO_MEMALLOC (Unix)");

	relay = fork();
	if (relay < 0)
		return die("fork");
	if (relay == 0) {
		/*
		 * What a user-space block client must do so that its own
		 * memory never waits on the swap it serves: nothing of it
		 * paged out, its allocations never recurse into block I/O,
		 * and no allocation at all once the relay runs.
		 */
		setsid();
		close(sv[0]);
		to_server = (struct relay_dir){ sv[1], tcp, malloc(RELAY_BUF) };
		to_kernel = (struct relay_dir){ tcp, sv[1], malloc(RELAY_BUF) };
		if (!to_server.buf || !to_kernel.buf)
			_exit(die("malloc"));
		memset(to_server.buf, 0, RELAY_BUF);
		memset(to_kernel.buf, 0, RELAY_BUF);
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			_exit(die("mlockall"));
		if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0))
			_exit(die("PR_SET_IO_FLUSHER"));
		if (pthread_create(&thread, NULL, relay_one_way, &to_server))
			_exit(die("pthread_create"));
		relay_one_way(&to_kernel);
		pthread_join(thread, NULL);
		_exit(0);
	}
	close(sv[1]);
	close(tcp);
	printf("nr-nbd: relay %d, TCP and Unix sockets %s\n", (int)relay,
	       marked ? "marked SO_MEMALLOC" : "not marked");
	return nbd_start(dev, sv[0], size, flags);
}

static int do_detach(const char *dev)
{
	int nbd = open(dev, O_RDWR);

	if (nbd < 0)
		return die(dev);
	if (ioctl(nbd, NBD_DISCONNECT))
		return die("NBD_DISCONNECT");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return do_serve(argv[2], strtoul(argv[3], NULL, 0));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "attach") &&
	    strchr(argv[2], '/'))
		return do_attach(argv[2], argv[3], argv[4],
				 argc == 6 ? argv[5] : "swap");
	if (argc == 7 && !strcmp(argv[1], "relay") && strchr(argv[2], '/'))
		return do_relay(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (argc == 3 && !strcmp(argv[1], "detach"))
		return do_detach(argv[2]);
	fprintf(stderr, "usage: nr-nbd serve PORT SIZE_MIB\n"
			"       nr-nbd attach DEV ADDR PORT [EXPORT]\n"
			"       nr-nbd relay DEV ADDR PORT EXPORT mark|nomark\n"
			"       nr-nbd detach DEV\n");
	return 2;
}
