// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of netreserve's parsing and output formatting.  Built with ASan
 * and UBSan; ends with "N passed, N failed" and exits non-zero on a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nr_format.h"

static int passed, failed;

static void check(int ok, const char *test, const char *what)
{
	if (ok) {
		passed++;
		printf("ok: %s: %s\n", test, what);
	} else {
		failed++;
		printf("FAIL: %s: %s\n", test, what);
	}
}

/* Run a printer into a string; the caller frees it. */
static char *render(void (*print)(FILE *, const struct nr_dev *, int,
				  const struct nr_global *),
		    const struct nr_dev *devs, int n, const struct nr_global *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	print(f, devs, n, g);
	fclose(f);
	return buf;
}

static void test_parse_u32(void)
{
	uint32_t v = 7;

	check(nr_parse_u32("0", &v) == 0 && v == 0, __func__, "0");
	check(nr_parse_u32("50", &v) == 0 && v == 50, __func__, "50");
	check(nr_parse_u32("4294967295", &v) == 0 && v == 4294967295u, __func__,
	      "UINT32_MAX");
	v = 7;
	check(nr_parse_u32("4294967296", &v) == -ERANGE && v == 7, __func__,
	      "UINT32_MAX + 1 refused, output untouched");
	check(nr_parse_u32("-1", &v) == -EINVAL && v == 7, __func__, "negative refused");
	check(nr_parse_u32("+5", &v) == -EINVAL, __func__, "sign refused");
	check(nr_parse_u32(" 5", &v) == -EINVAL, __func__, "leading space refused");
	check(nr_parse_u32("5x", &v) == -ERANGE, __func__, "trailing text refused");
	check(nr_parse_u32("", &v) == -EINVAL, __func__, "empty refused");
	check(nr_parse_u32(NULL, &v) == -EINVAL, __func__, "NULL refused");
	check(nr_parse_u32("0x10", &v) != 0, __func__, "hex refused");
	check(nr_parse_u32("99999999999999999999999", &v) == -ERANGE, __func__,
	      "overflow of unsigned long refused");
}

static void test_parse_pid_fd(void)
{
	int v = -5;

	check(nr_parse_pid("1", &v) == 0 && v == 1, __func__, "pid 1");
	check(nr_parse_pid("0", &v) == -EINVAL, __func__, "pid 0 refused");
	check(nr_parse_pid("2147483648", &v) == -EINVAL, __func__, "pid above INT_MAX refused");
	check(nr_parse_pid("12a", &v) == -EINVAL, __func__, "pid with text refused");
	check(nr_parse_fd("0", &v) == 0 && v == 0, __func__, "fd 0 allowed");
	check(nr_parse_fd("2147483647", &v) == 0 && v == 2147483647, __func__, "fd INT_MAX");
	check(nr_parse_fd("-1", &v) == -EINVAL, __func__, "fd -1 refused");
	check(nr_parse_fd(".", &v) == -EINVAL, __func__, "directory entry '.' refused");
}

static void test_exit_codes(void)
{
	check(nr_exit_for_errno(0) == NR_EXIT_OK, __func__, "0");
	check(nr_exit_for_errno(-ENODEV) == NR_EXIT_NODEV, __func__, "ENODEV");
	check(nr_exit_for_errno(EOPNOTSUPP) == NR_EXIT_NOTSUPP, __func__, "EOPNOTSUPP");
	check(nr_exit_for_errno(-EPERM) == NR_EXIT_PERM, __func__, "EPERM");
	check(nr_exit_for_errno(-EACCES) == NR_EXIT_PERM, __func__, "EACCES");
	check(nr_exit_for_errno(-ESRCH) == NR_EXIT_NOPROC, __func__, "ESRCH");
	check(nr_exit_for_errno(-ENOTSOCK) == NR_EXIT_NOTSOCK, __func__, "ENOTSOCK");
	check(nr_exit_for_errno(-EBADF) == NR_EXIT_BADFD, __func__, "EBADF");
	check(nr_exit_for_errno(-ENOPROTOOPT) == NR_EXIT_NOFEATURE, __func__, "ENOPROTOOPT");
	check(nr_exit_for_errno(-ERANGE) == NR_EXIT_RANGE, __func__, "ERANGE");
	check(nr_exit_for_errno(-ENOSPC) == NR_EXIT_RANGE, __func__, "ENOSPC (global cap)");
	check(nr_exit_for_errno(-EIO) == NR_EXIT_ERROR, __func__, "anything else");
}

static const struct nr_dev sample[] = {
	/* eth0 at MTU 9000: a packet takes 3 buffers. */
	{ "eth0", 2, true, 50, 165, 3, 9, 120, 4, 100, 20, 50, 150 },
	{ "lo", 1, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "eth1", 3, true, 10, 12, 1, 2, 30, 0, 25, 5, 7, 7 },
};
static const struct nr_global sample_global = { 8000, 268, 1048576 };

static void test_text(void)
{
	char *out = render(nr_print_text, sample, 3, &sample_global);

	check(strstr(out, "device           rx_reserve    share  buffers    pages"
			 "     held     peak      alloc    refused    dropped"
			 "  delivered\n") == out,
	      __func__, "header: packets, then the buffers and pages they mean");
	check(strstr(out, "eth0                     50       50      150      165"
			 "        3        9        120          4        100"
			 "         20\n") != NULL,
	      __func__, "eth0's row: 50 packets of 3 buffers");
	check(strstr(out, "eth1                     10        7        7       12"
			 "        1        2         30          0         25"
			 "          5\n") != NULL,
	      __func__, "eth1's row: a share the cap cut to 7 of 10");
	check(strstr(out, "lo ") == NULL, __func__, "unsupported device left out");
	check(strstr(out, "total                    60       57      157      177"
			 "        4       11        150          4        125"
			 "         25\n") != NULL,
	      __func__, "total sums the supported devices");
	check(strstr(out, "min_free_kbytes: 8268 kB = user 8000 kB + network 268 kB;"
			 " cap on the network's part 1048576 kB\n") != NULL,
	      __func__, "global line: sum, user, network, cap");
	free(out);

	out = render(nr_print_text, sample, 0, &(struct nr_global){ -1, 268, -1 });
	check(strstr(out, "min_free_kbytes: ? = user ? + network 268 kB; cap on the"
			 " network's part ?\n") != NULL,
	      __func__, "unknown values print as ?, not 0");
	check(strstr(out, "total                     0        0") != NULL, __func__,
	      "no device: a zero total");
	free(out);
}

static void test_json(void)
{
	char *out = render(nr_print_json, sample, 3, &sample_global);
	const char *want =
		"{\"devices\":["
		"{\"ifindex\":2,\"ifname\":\"eth0\",\"rx_reserve\":50,\"rx_reserve_stats\":"
		"{\"pages\":165,\"held\":3,\"peak\":9,\"alloc\":120,\"refused\":4,"
		"\"dropped\":100,\"delivered\":20,\"share\":50,\"buffers\":150}},"
		"{\"ifindex\":3,\"ifname\":\"eth1\",\"rx_reserve\":10,\"rx_reserve_stats\":"
		"{\"pages\":12,\"held\":1,\"peak\":2,\"alloc\":30,\"refused\":0,"
		"\"dropped\":25,\"delivered\":5,\"share\":7,\"buffers\":7}}],"
		"\"total\":{\"rx_reserve\":60,\"rx_reserve_stats\":"
		"{\"pages\":177,\"held\":4,\"peak\":11,\"alloc\":150,\"refused\":4,"
		"\"dropped\":125,\"delivered\":25,\"share\":57,\"buffers\":157}},"
		"\"global\":{\"min_free_kbytes\":8268,\"user_min_free_kbytes\":8000,"
		"\"memalloc_reserve_kbytes\":268,\"rx_reserve_max_kbytes\":1048576}}\n";

	check(strcmp(out, want) == 0, __func__, "the whole document");
	free(out);

	out = render(nr_print_json, sample, 0, &(struct nr_global){ -1, -1, -1 });
	check(strstr(out, "{\"devices\":[],") == out, __func__, "no device: empty array");
	check(strstr(out, "\"min_free_kbytes\":null,\"user_min_free_kbytes\":null") != NULL,
	      __func__, "unknown values are null");
	free(out);
}

static void test_json_escaping(void)
{
	struct nr_dev d = { .ifindex = 9, .supported = true };
	char *out;

	/* Names are up to 15 bytes of anything but '/', ':', whitespace and NUL. */
	snprintf(d.name, sizeof(d.name), "a\"b\\c\x01\x7f");
	out = render(nr_print_json, &d, 1, &sample_global);
	check(strstr(out, "\"ifname\":\"a\\\"b\\\\c\\u0001\\u007f\",") != NULL,
	      __func__, "quote, backslash and control bytes escaped");
	free(out);
}

int main(void)
{
	test_parse_u32();
	test_parse_pid_fd();
	test_exit_codes();
	test_text();
	test_json();
	test_json_escaping();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
