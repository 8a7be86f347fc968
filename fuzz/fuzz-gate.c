// SPDX-License-Identifier: MIT
/*
 * The safety gate on arbitrary ELF bytes: the bytes are an object as the
 * compiler would hand it over, checked by gate_check against the policy of
 * level 1 of the real tree (tree-data/) resolved as on a kernel where only
 * tracepoints attach.
 *
 * Properties: a refusal says why in text that can go back to the model
 * (valid UTF-8: it is sent as JSON); an object that passes, read again
 * with libbpf and libelf independently of the gate, has only programs on
 * the policy's attach points, the counters and targets maps, no extern
 * symbols, no kfunc calls, and none of the helpers that read kernel
 * memory, leak kernel pointers, take callbacks or act on other processes
 * (issue 13's list).
 */
#include "bpf/argus_authored.h"
#include "daemon/gate.h"
#include "daemon/resolve.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>

#include <bpf/libbpf.h>

static struct gate_policy policy;

/* Helpers no authored probe may call, whatever the gate's allowlist says. */
static const int forbidden[] = {BPF_FUNC_probe_read,
				BPF_FUNC_probe_read_str,
				BPF_FUNC_probe_read_kernel,
				BPF_FUNC_probe_read_kernel_str,
				BPF_FUNC_get_current_task,
				BPF_FUNC_get_func_ip,
				BPF_FUNC_loop,
				BPF_FUNC_for_each_map_elem,
				BPF_FUNC_find_vma,
				BPF_FUNC_timer_init,
				BPF_FUNC_timer_set_callback,
				BPF_FUNC_timer_start,
				BPF_FUNC_probe_write_user,
				BPF_FUNC_send_signal,
				BPF_FUNC_send_signal_thread,
				BPF_FUNC_override_return};

static int tracepoints_only(void *userdata, const struct backend_order *order, enum backend b,
			    const char *hook, char **ret_reason)
{
	if (b == BACKEND_TRACEPOINT)
		return 0;
	*ret_reason = xstrdup("refused here");
	return -EPERM;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct tree *t = fuzz_tree();
	struct prober p = {.try_hook = tracepoints_only};
	int active[TREE_MAX_CHILDREN];
	size_t n;

	fuzz_json_init();
	libbpf_set_print(quiet);
	if (elf_version(EV_CURRENT) == EV_NONE || tree_resolve(t, &p) < 0)
		abort();
	n = tree_active(t, -1, active, ARRAY_SIZE(active));
	if (gate_policy_for_level(t, active, n, 2, false, &policy) < 0 || policy.n_sections == 0)
		abort();
	return 0;
}

static bool in_policy(const char *sec)
{
	size_t i;

	for (i = 0; i < policy.n_sections; i++)
		if (!strcmp(policy.sections[i], sec))
			return true;
	return false;
}

/* The ELF read again: symbols and every call instruction of every executable section. */
static void check_elf_again(const void *obj, size_t len)
{
	_cleanup_free_ char *copy = malloc(len);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *e;

	memcpy(copy, obj, len);
	e = elf_memory(copy, len);
	FUZZ_CHECK(e && elf_getshdrstrndx(e, &shstrndx) == 0, "a passed object libelf cannot read");
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off, i;

		FUZZ_CHECK(gelf_getshdr(scn, &sh), "section header");
		d = elf_getdata(scn, NULL);
		if (sh.sh_type == SHT_SYMTAB && d && sh.sh_entsize) {
			for (i = 1; i < d->d_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, i, &sym))
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				FUZZ_CHECK(sym.st_shndx != SHN_UNDEF || !name || !name[0],
					   "extern symbol %s passed", name);
			}
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) || !d)
			continue;
		for (off = 0; off + sizeof(struct bpf_insn) <= d->d_size;
		     off += sizeof(struct bpf_insn)) {
			struct bpf_insn in;

			memcpy(&in, (const char *)d->d_buf + off, sizeof(in));
			if (in.code != (BPF_JMP | BPF_CALL) || in.src_reg == BPF_PSEUDO_CALL)
				continue;
			FUZZ_CHECK(in.src_reg == 0, "a kfunc call passed");
			for (i = 0; i < ARRAY_SIZE(forbidden); i++)
				FUZZ_CHECK(in.imm != forbidden[i], "helper %d passed the gate",
					   in.imm);
		}
	}
	elf_end(e);
}

static void check_passed(const void *obj, size_t len, const json_t *info)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "again");
	struct bpf_object *o;
	struct bpf_program *prog;
	bool counters = false, targets = false;
	struct bpf_map *m;

	FUZZ_CHECK(json_integer_value(json_object_get(info, "bytes")) == (json_int_t)len, "bytes");
	FUZZ_CHECK(json_array_size(json_object_get(info, "programs")) >= 2, "programs");
	o = bpf_object__open_mem(obj, len, &opts);
	FUZZ_CHECK(o, "a passed object libbpf cannot open");
	bpf_object__for_each_program (prog, o)
		FUZZ_CHECK(in_policy(bpf_program__section_name(prog)), "program in %s passed",
			   bpf_program__section_name(prog));
	bpf_object__for_each_map (m, o) {
		counters |= !strcmp(bpf_map__name(m), ARGUS_AUTHORED_COUNTERS);
		targets |= !strcmp(bpf_map__name(m), ARGUS_AUTHORED_TARGETS);
		FUZZ_CHECK(bpf_map__max_entries(m) <= GATE_MAX_ENTRIES || bpf_map__is_internal(m),
			   "map %s with %u entries", bpf_map__name(m), bpf_map__max_entries(m));
	}
	FUZZ_CHECK(counters && targets, "passed without the counters and targets maps");
	bpf_object__close(o);
	check_elf_again(obj, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *info = NULL;
	char *err = NULL;
	int r;

	r = gate_check(data, size, &policy, &info, &err);
	if (r < 0) {
		FUZZ_CHECK((r == -EPERM || r == -EINVAL || r == -ENOMEM) && err && *err, "r=%d", r);
		FUZZ_CHECK(!info, "info written on refusal");
		FUZZ_CHECK(fuzz_utf8(err), "the refusal cannot go back to the model: %s", err);
		free(err);
		return 0;
	}
	FUZZ_CHECK(info && !err, "output on success");
	check_passed(data, size, info);
	json_decref(info);
	return 0;
}
