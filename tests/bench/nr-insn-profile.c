// SPDX-License-Identifier: GPL-2.0
/*
 * nr-insn-profile: a QEMU TCG plugin that counts the guest instructions
 * executed at each translation block's start address, for make bench's
 * question "which instructions does the patched RX path add?".
 *
 *   qemu-system-x86_64 -plugin build/host/nr-insn-profile.so,out=FILE,marker=ADDR ...
 *
 * Each time the block at guest address ADDR (hex) runs, FILE.N (N = 0, 1,
 * ...) gets a snapshot: one line per block start address that has run,
 * "ADDRESS EXECUTIONS INSTRUCTIONS" (hex, decimal, decimal), counted since
 * the guest started.  nr-icount calls sync(2) just before and just after
 * its measurement, so with ADDR the address of __x64_sys_sync the
 * difference of FILE.1 and FILE.0 is what the flood's packets cost.
 * scripts/insn-profile.sh folds them into the kernel functions they belong
 * to (System.map).  Counting is an inline add per block, no callback, so a
 * profiled guest runs at about the speed of an unprofiled one.
 *
 * Debian ships QEMU with plugin support but neither the plugins nor
 * qemu-plugin.h, so the few declarations needed are here; they are the
 * API of version 1 (QEMU 4.2 to 8.x).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
} qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One per translation; a block translated again gets another. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t executions;	/* the inline add's target */
	struct block *next;
};

static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path = "insn-profile.txt";
static uint64_t marker;
static unsigned int snapshots;

static void snapshot(unsigned int vcpu_index, void *userdata)
{
	struct block *b;
	char path[4096];
	FILE *f;

	(void)vcpu_index;
	(void)userdata;
	snprintf(path, sizeof(path), "%s.%u", out_path, snapshots++);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	pthread_mutex_lock(&lock);
	for (b = blocks; b; b = b->next)
		if (b->executions)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				b->vaddr, b->executions, b->executions * b->insns);
	pthread_mutex_unlock(&lock);
	fclose(f);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	(void)id;
	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->executions, 1);
	if (marker && b->vaddr == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, snapshot, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "out=", 4) == 0)
			out_path = argv[i] + 4;
		else if (strncmp(argv[i], "marker=", 7) == 0)
			marker = strtoull(argv[i] + 7, NULL, 16);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
