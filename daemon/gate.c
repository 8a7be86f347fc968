// SPDX-License-Identifier: MIT
/*
 * The safety gate for authored probe objects. See gate.h for the rules;
 * this file reads the object twice: libelf for every instruction and
 * symbol (subprograms are invisible through libbpf before load), libbpf's
 * open (no load) for programs and maps as libbpf will create them.
 */
#include "daemon/gate.h"
#include "daemon/probe.h"
#include "daemon/util.h"
#include "bpf/argus_authored.h"
#include "bpf/paths.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

/* Helpers an authored probe may call: maps, time, identity, reading kernel memory, VMAs, loops. */
static const int allowed_helpers[] = {
	BPF_FUNC_map_lookup_elem,      BPF_FUNC_map_update_elem,
	BPF_FUNC_map_delete_elem,      BPF_FUNC_ktime_get_ns,
	BPF_FUNC_ktime_get_boot_ns,    BPF_FUNC_get_current_pid_tgid,
	BPF_FUNC_get_current_task,     BPF_FUNC_get_current_task_btf,
	BPF_FUNC_get_smp_processor_id, BPF_FUNC_probe_read_kernel,
	BPF_FUNC_probe_read_kernel_str, BPF_FUNC_get_attach_cookie,
	BPF_FUNC_find_vma,	       BPF_FUNC_get_func_ip,
	BPF_FUNC_loop,		       BPF_FUNC_task_storage_get,
	BPF_FUNC_task_storage_delete,
};

#define HELPER_NAME(x) [BPF_FUNC_##x] = "bpf_" #x
static const char *const helper_names[] = { __BPF_FUNC_MAPPER(HELPER_NAME) };
#undef HELPER_NAME

const char *gate_helper_name(int id, char *buf, size_t len)
{
	if (id > 0 && (size_t)id < ARRAY_SIZE(helper_names) && helper_names[id])
		return helper_names[id];
	snprintf(buf, len, "helper#%d", id);
	return buf;
}

static int refuse(char **ret_err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char **ret_err, int r, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	*ret_err = msg ?: xstrdup("refused by the safety gate");
	return r;
}

/* ---- policy ---- */

static void policy_add(struct gate_policy *p, const char *prefix, const char *name, size_t len)
{
	_cleanup_free_ char *s = xasprintf("%s/%.*s", prefix, (int)len, name);
	size_t i;

	for (i = 0; i < p->n_sections; i++)
		if (strcmp(p->sections[i], s) == 0)
			return;
	p->sections = realloc(p->sections, (p->n_sections + 1) * sizeof(char *));
	if (!p->sections)
		abort();
	p->sections[p->n_sections++] = TAKE_PTR(s);
}

static void policy_add_tracepoint(struct gate_policy *p, const char *tp, size_t len)
{
	policy_add(p, "tp_btf", tp, len);
	policy_add(p, "raw_tp", tp, len);
	policy_add(p, "raw_tracepoint", tp, len);
}

int gate_policy_for_level(const struct tree *t, const int *active, size_t n_active,
			  unsigned ncpu, struct gate_policy *ret)
{
	struct gate_policy p = { .ncpu = ncpu };
	const char *comp[64];
	unsigned classes = 0;
	size_t i, n_comp;

	/* the builtin probe's companions: the same hooks measure the same thing */
	for (i = 0; i < n_active; i++) {
		const struct tree_node *n;
		const char *s;

		if (active[i] < 0 || (size_t)active[i] >= t->n_nodes) {
			gate_policy_free(&p);
			return -EINVAL;
		}
		n = &t->nodes[active[i]];
		if (n->backend == BACKEND_NONE || !n->hook)
			continue;
		if (n->backend == BACKEND_TRACEPOINT)
			classes |= n->classes;
		for (s = n->hook; *s;) {
			size_t len = strcspn(s, "+");

			if (len == 0) {
				s++;
				continue;
			}
			switch (n->backend) {
			case BACKEND_TRACEPOINT:
				policy_add_tracepoint(&p, s, len);
				break;
			case BACKEND_KPROBE:
				policy_add(&p, "kprobe", s, len);
				policy_add(&p, "kretprobe", s, len);
				break;
			case BACKEND_FENTRY:
				policy_add(&p, "fentry", s, len);
				policy_add(&p, "fexit", s, len);
				break;
			default:
				break;
			}
			s += len;
		}
	}
	n_comp = probe_companions(classes, comp, ARRAY_SIZE(comp));
	for (i = 0; i < n_comp; i++)
		policy_add_tracepoint(&p, comp[i], strlen(comp[i]));
	*ret = p;
	return 0;
}

void gate_policy_free(struct gate_policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_sections; i++)
		free(p->sections[i]);
	free(p->sections);
	memset(p, 0, sizeof(*p));
}

json_t *gate_policy_to_json(const struct gate_policy *p)
{
	json_t *a = json_array();
	size_t i;

	/* tp_btf only: raw_tp names the same tracepoints and would double the list */
	for (i = 0; i < p->n_sections; i++)
		if (strncmp(p->sections[i], "raw_tp", 6) != 0)
			json_array_append_new(a, json_string(p->sections[i]));
	return a;
}

static bool policy_allows(const struct gate_policy *p, const char *sec)
{
	size_t i;

	for (i = 0; i < p->n_sections; i++)
		if (strcmp(p->sections[i], sec) == 0)
			return true;
	return false;
}

/* ---- instructions and symbols (libelf) ---- */

static bool helper_allowed(int id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(allowed_helpers); i++)
		if (allowed_helpers[i] == id)
			return true;
	return false;
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static int check_elf(const void *obj, size_t len, json_t *helpers, char **ret_err)
{
	_cleanup_free_ char *copy = malloc(len);
	_cleanup_(elf_endp) Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;
	bool seen[__BPF_FUNC_MAX_ID] = {};

	if (!copy)
		return refuse(ret_err, -ENOMEM, "out of memory");
	memcpy(copy, obj, len);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return refuse(ret_err, -EINVAL, "libelf is unusable");
	e = elf_memory(copy, len);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    elf_getshdrstrndx(e, &shstrndx) != 0)
		return refuse(ret_err, -EINVAL, "the object is not a 64-bit ELF file");
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *sname;
		size_t off;

		if (!gelf_getshdr(scn, &sh))
			return refuse(ret_err, -EINVAL, "unreadable section header");
		sname = elf_strptr(e, shstrndx, sh.sh_name) ?: "?";
		if (sh.sh_type == SHT_SYMTAB) {
			size_t i, nsym;

			d = elf_getdata(scn, NULL);
			if (!d || !sh.sh_entsize)
				return refuse(ret_err, -EINVAL, "unreadable symbol table");
			nsym = d->d_size / sh.sh_entsize;
			for (i = 1; i < nsym; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, i, &sym))
					return refuse(ret_err, -EINVAL, "unreadable symbol");
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (sym.st_shndx == SHN_UNDEF && name && name[0])
					return refuse(ret_err, -EPERM,
						      "extern symbol %.128s: kfuncs, __ksym and __kconfig "
						      "externs are not allowed",
						      name);
			}
			continue;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || d->d_size % sizeof(struct bpf_insn))
			return refuse(ret_err, -EINVAL, "section %.128s is not BPF code", sname);
		total += d->d_size / sizeof(struct bpf_insn);
		if (total > GATE_MAX_INSNS)
			return refuse(ret_err, -EPERM, "more than %d instructions", GATE_MAX_INSNS);
		for (off = 0; off < d->d_size; off += sizeof(struct bpf_insn)) {
			struct bpf_insn in;
			char buf[32];

			memcpy(&in, (const char *)d->d_buf + off, sizeof(in));
			if (in.code != (BPF_JMP | BPF_CALL))
				continue;
			if (in.src_reg == BPF_PSEUDO_CALL)
				continue; /* a call into a subprogram of this object */
			if (in.src_reg != 0)
				return refuse(ret_err, -EPERM,
					      "section %.128s, instruction %zu: kfunc calls are not "
					      "allowed",
					      sname, off / sizeof(struct bpf_insn));
			if (!helper_allowed(in.imm))
				return refuse(ret_err, -EPERM,
					      "section %.128s, instruction %zu: the helper %s is not "
					      "allowed in authored probes",
					      sname, off / sizeof(struct bpf_insn),
					      gate_helper_name(in.imm, buf, sizeof(buf)));
			if (in.imm > 0 && in.imm < __BPF_FUNC_MAX_ID && !seen[in.imm]) {
				seen[in.imm] = true;
				json_array_append_new(helpers,
						      json_string(gate_helper_name(in.imm, buf,
										   sizeof(buf))));
			}
		}
	}
	return 0;
}

/* ---- programs and maps (libbpf open, no load) ---- */

struct section_kind {
	const char *prefix;
	enum bpf_prog_type type;
	enum bpf_attach_type attach; /* checked when check_attach */
	bool check_attach;
};

static const struct section_kind section_kinds[] = {
	{ "tp_btf/", BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, true },
	{ "raw_tp/", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, false },
	{ "raw_tracepoint/", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, false },
	{ "kprobe/", BPF_PROG_TYPE_KPROBE, 0, false },
	{ "kretprobe/", BPF_PROG_TYPE_KPROBE, 0, false },
	{ "fentry/", BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, true },
	{ "fexit/", BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, true },
};

static bool valid_attach_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			return false;
	return true;
}

static int check_program(struct bpf_program *prog, const struct gate_policy *p, json_t *progs,
			 size_t *n_progs, char **ret_err)
{
	const char *sec = bpf_program__section_name(prog), *name = bpf_program__name(prog);
	const struct section_kind *k = NULL;
	size_t i;

	if (++*n_progs > GATE_MAX_PROGRAMS)
		return refuse(ret_err, -EPERM, "more than %d programs", GATE_MAX_PROGRAMS);
	for (i = 0; i < ARRAY_SIZE(section_kinds); i++)
		if (strncmp(sec, section_kinds[i].prefix, strlen(section_kinds[i].prefix)) == 0) {
			k = &section_kinds[i];
			break;
		}
	if (!k || !valid_attach_name(sec + strlen(k->prefix)))
		return refuse(ret_err, -EPERM,
			      "program %.64s: section \"%.128s\" is not allowed: use "
			      "SEC(\"tp_btf/<tracepoint>\") on the hooks listed for this level",
			      name, sec);
	if (bpf_program__type(prog) != k->type ||
	    (k->check_attach && bpf_program__expected_attach_type(prog) != k->attach))
		return refuse(ret_err, -EPERM, "program %.64s: unexpected program type for %.128s",
			      name, sec);
	if (!policy_allows(p, sec))
		return refuse(ret_err, -EPERM,
			      "program %.64s attaches to %.128s, which is outside this level: the "
			      "allowed attach points are the hooks listed for this level",
			      name, sec);
	json_array_append_new(progs, json_pack("{s:s,s:s,s:I}", "name", name, "section", sec,
					       "insns", (json_int_t)bpf_program__insn_cnt(prog)));
	return 0;
}

static bool map_type_allowed(enum bpf_map_type t)
{
	switch (t) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_TASK_STORAGE:
		return true;
	default:
		return false;
	}
}

static bool map_is_percpu(enum bpf_map_type t)
{
	return t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

struct map_tally {
	size_t declared, internal;
	unsigned long long memory;
	bool counters, targets;
};

static int check_map(struct bpf_map *m, const struct gate_policy *p, struct map_tally *t,
		     json_t *maps, char **ret_err)
{
	const char *name = bpf_map__name(m);
	enum bpf_map_type type = bpf_map__type(m);
	__u32 key = bpf_map__key_size(m), value = bpf_map__value_size(m);
	__u32 entries = bpf_map__max_entries(m), flags = bpf_map__map_flags(m);
	unsigned long long mem;

	if (bpf_map__pin_path(m) || bpf_map__ifindex(m))
		return refuse(ret_err, -EPERM, "map %.64s: pinned or offloaded maps are not allowed",
			      name);
	if (bpf_map__is_internal(m)) {
		if (++t->internal > GATE_MAX_INTERNAL_MAPS || value > GATE_MAX_INTERNAL_VALUE)
			return refuse(ret_err, -EPERM,
				      "global data %.64s: at most %d sections of %d bytes", name,
				      GATE_MAX_INTERNAL_MAPS, GATE_MAX_INTERNAL_VALUE);
		return 0;
	}
	if (++t->declared > GATE_MAX_MAPS)
		return refuse(ret_err, -EPERM, "more than %d maps (counters and targets included)",
			      GATE_MAX_MAPS);
	if (strcmp(name, ARGUS_AUTHORED_COUNTERS) == 0) {
		if (type != BPF_MAP_TYPE_PERCPU_ARRAY || key != 4 ||
		    value != sizeof(struct argus_counter) || entries != ARGUS_MAX_SLOTS || flags)
			return refuse(ret_err, -EPERM,
				      "map counters is not the one argus_authored.h declares");
		t->counters = true;
	} else if (strcmp(name, ARGUS_AUTHORED_TARGETS) == 0) {
		if (type != BPF_MAP_TYPE_HASH || key != 4 || value != 1 ||
		    entries != ARGUS_MAX_TGIDS || flags)
			return refuse(ret_err, -EPERM,
				      "map targets is not the one argus_authored.h declares");
		t->targets = true;
	}
	if (!map_type_allowed(type))
		return refuse(ret_err, -EPERM,
			      "map %.64s: type %s is not allowed (array, percpu_array, hash, "
			      "percpu_hash, lru_hash, lru_percpu_hash, task_storage)",
			      name, libbpf_bpf_map_type_str(type) ?: "?");
	if (flags & ~(__u32)(BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU))
		return refuse(ret_err, -EPERM, "map %.64s: flags 0x%x are not allowed", name, flags);
	if (key > GATE_MAX_KEY || value > GATE_MAX_VALUE || entries > GATE_MAX_ENTRIES ||
	    (type != BPF_MAP_TYPE_TASK_STORAGE && entries == 0))
		return refuse(ret_err, -EPERM,
			      "map %.64s: %u entries of %u+%u bytes; the bounds are 1..%d entries, "
			      "keys of %d and values of %d bytes",
			      name, entries, key, value, GATE_MAX_ENTRIES, GATE_MAX_KEY,
			      GATE_MAX_VALUE);
	mem = (unsigned long long)entries * (key + value) *
	      (map_is_percpu(type) ? (p->ncpu ?: 1) : 1);
	t->memory += mem;
	if (t->memory > GATE_MAX_MAP_MEMORY)
		return refuse(ret_err, -EPERM, "the maps need more than %llu MiB",
			      GATE_MAX_MAP_MEMORY >> 20);
	json_array_append_new(maps, json_pack("{s:s,s:s,s:i,s:i,s:i}", "name", name, "type",
					      libbpf_bpf_map_type_str(type) ?: "?", "max_entries",
					      (int)entries, "key_size", (int)key, "value_size",
					      (int)value));
	return 0;
}

static void bpf_object_closep(struct bpf_object **o)
{
	bpf_object__close(*o);
}

int gate_check(const void *obj, size_t len, const struct gate_policy *p, json_t **ret_info,
	       char **ret_err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "authored");
	_cleanup_(bpf_object_closep) struct bpf_object *o = NULL;
	json_auto_t *helpers = json_array(), *progs = json_array(), *maps = json_array();
	struct map_tally tally = {};
	struct bpf_program *prog;
	struct bpf_map *m;
	size_t n_progs = 0;
	bool follower = false;
	int r;

	if (!obj || len == 0)
		return refuse(ret_err, -EINVAL, "empty object");
	if (len > GATE_OBJECT_MAX)
		return refuse(ret_err, -EPERM, "the object is %zu bytes; at most %d", len,
			      GATE_OBJECT_MAX);
	r = check_elf(obj, len, helpers, ret_err);
	if (r < 0)
		return r;

	o = bpf_object__open_mem(obj, len, &opts);
	if (!o) {
		r = -errno;
		return refuse(ret_err, -EINVAL, "libbpf cannot open the object: %s", strerror(-r));
	}
	bpf_object__for_each_program(prog, o)
	{
		r = check_program(prog, p, progs, &n_progs, ret_err);
		if (r < 0)
			return r;
		if (strcmp(bpf_program__name(prog), ARGUS_AUTHORED_FOLLOW) == 0 &&
		    strcmp(bpf_program__section_name(prog), "tp_btf/sched_process_fork") == 0)
			follower = true;
	}
	bpf_object__for_each_map(m, o)
	{
		r = check_map(m, p, &tally, maps, ret_err);
		if (r < 0)
			return r;
	}
	if (!tally.counters || !tally.targets || !follower)
		return refuse(ret_err, -EPERM,
			      "the counters and targets maps and the fork follower are missing: "
			      "#include \"argus_authored.h\" and use its maps");
	if (n_progs <= 1)
		return refuse(ret_err, -EPERM, "the object has no program of its own");
	if (ret_info)
		*ret_info = json_pack("{s:O,s:O,s:O,s:I}", "programs", progs, "maps", maps,
				      "helpers", helpers, "bytes", (json_int_t)len);
	return 0;
}
