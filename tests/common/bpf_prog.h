/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading a BPF program of a few hand-written instructions with the raw
 * bpf() syscall, for the test programs that need one without libbpf or a
 * BPF compiler: nr-xdp in the guest, nr-tapsteer on the host.
 */
#ifndef NR_BPF_PROG_H
#define NR_BPF_PROG_H

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/*
 * Returns the program's fd, or -1 after a one-line message that starts
 * with WHO and carries the verifier's log.
 */
static inline int load_bpf_prog(const char *who, enum bpf_prog_type type,
				const struct bpf_insn *insns, unsigned int insn_cnt)
{
	char log[4096] = "";
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = insn_cnt;
	attr.license = (unsigned long)"GPL";
	attr.log_buf = (unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		fprintf(stderr, "%s: BPF_PROG_LOAD: %s %s\n", who, strerror(errno), log);
	return fd;
}

#endif
