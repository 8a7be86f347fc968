// SPDX-License-Identifier: MIT
/*
 * The safety gate for authored probe objects. See gate.h for the rules;
 * this file reads the object twice: libelf for every instruction and
 * symbol (subprograms are invisible through libbpf before load), libbpf's
 * open (no load) for programs and maps as libbpf will create them.
 */
#include "daemon/gate.h"
#include "daemon/btf_check.h"
#include "daemon/probe_plan.h"
#include "daemon/syscalls.h"
#include "daemon/util.h"
#include "bpf/argus_authored.h"
#include "bpf/paths.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/*
 * Helpers an authored probe may call: maps, time, its own identity in a
 * PID namespace, the CPU, the attach cookie, task storage. Not here, on
 * purpose: reading kernel or user memory (bpf_probe_read*), kernel
 * pointers and addresses (bpf_get_current_task*, bpf_get_func_ip,
 * bpf_task_pt_regs, bpf_get_stack*), callbacks (bpf_loop,
 * bpf_for_each_map_elem, bpf_find_vma, timers, bpf_user_ringbuf_drain) and
 * everything that writes, signals or overrides. Tasks are read with typed
 * loads from the task pointers tp_btf programs receive.
 */
static const int allowed_helpers[] = {
	BPF_FUNC_map_lookup_elem,      BPF_FUNC_map_update_elem,
	BPF_FUNC_map_delete_elem,      BPF_FUNC_ktime_get_ns,
	BPF_FUNC_ktime_get_boot_ns,    BPF_FUNC_get_current_pid_tgid,
	BPF_FUNC_get_ns_current_pid_tgid, BPF_FUNC_get_smp_processor_id,
	BPF_FUNC_get_attach_cookie,    BPF_FUNC_task_storage_get,
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

/* Why a helper outside the allowlist is refused, for the author. */
static const char *helper_refusal(int id)
{
	switch (id) {
	case BPF_FUNC_probe_read:
	case BPF_FUNC_probe_read_str:
	case BPF_FUNC_probe_read_kernel:
	case BPF_FUNC_probe_read_kernel_str:
	case BPF_FUNC_probe_read_user:
	case BPF_FUNC_probe_read_user_str:
	case BPF_FUNC_copy_from_user:
	case BPF_FUNC_copy_from_user_task:
	case BPF_FUNC_snprintf_btf:
	case BPF_FUNC_d_path:
		return "it reads memory: read task fields with typed loads (task->field) instead";
	case BPF_FUNC_get_current_task:
	case BPF_FUNC_get_current_task_btf:
	case BPF_FUNC_get_func_ip:
	case BPF_FUNC_task_pt_regs:
	case BPF_FUNC_get_stack:
	case BPF_FUNC_get_stackid:
	case BPF_FUNC_get_task_stack:
	case BPF_FUNC_get_func_arg:
	case BPF_FUNC_get_func_ret:
	case BPF_FUNC_get_func_arg_cnt:
	case BPF_FUNC_kallsyms_lookup_name:
		return "it hands out kernel pointers or addresses: use argus_current_is_target() "
		       "and the task arguments of the tracepoint";
	case BPF_FUNC_loop:
	case BPF_FUNC_for_each_map_elem:
	case BPF_FUNC_find_vma:
	case BPF_FUNC_timer_init:
	case BPF_FUNC_timer_set_callback:
	case BPF_FUNC_timer_start:
	case BPF_FUNC_timer_cancel:
	case BPF_FUNC_user_ringbuf_drain:
		return "it runs a callback";
	default:
		return "only map, time, pid, CPU, attach cookie and task storage helpers are";
	}
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
	/* it names sections and symbols, bytes of the object: it goes back to the model as JSON */
	*ret_err = utf8_sanitize(msg) ?: xstrdup("refused by the safety gate");
	return r;
}

/* ---- policy ---- */

bool gate_policy_allows(const struct gate_policy *p, const char *section)
{
	size_t i;

	for (i = 0; i < p->n_sections; i++)
		if (strcmp(p->sections[i], section) == 0)
			return true;
	return false;
}

static void policy_add(struct gate_policy *p, const char *prefix, const char *name, size_t len)
{
	_cleanup_free_ char *s = xasprintf("%s/%.*s", prefix, (int)len, name);

	if (gate_policy_allows(p, s))
		return;
	p->sections = realloc(p->sections, (p->n_sections + 1) * sizeof(char *));
	if (!p->sections)
		abort();
	p->sections[p->n_sections++] = TAKE_PTR(s);
}

static void policy_add_tracepoint(struct gate_policy *p, const char *tp, size_t len)
{
	_cleanup_free_ char *name = strndup(tp, len);

	if (!name)
		abort();
	/* every task on the host would run the probe on them (gate_policy_for_level) */
	if (p->no_call_events && syscall_event_raw(name))
		return;
	policy_add(p, "tp_btf", tp, len);
	policy_add(p, "raw_tp", tp, len);
	policy_add(p, "raw_tracepoint", tp, len);
}

int gate_policy_for_level(const struct tree *t, const int *active, size_t n_active,
			  unsigned ncpu, bool no_call_events, struct gate_policy *ret)
{
	struct gate_policy p = { .ncpu = ncpu, .no_call_events = no_call_events };
	const char *comp[64];
	unsigned classes = 0;
	size_t i, n_comp;

	/* the builtin probe's companions: the same hooks measure the same thing */
	for (i = 0; i < n_active; i++) {
		const struct tree_node *n;
		size_t h;

		if (active[i] < 0 || (size_t)active[i] >= t->n_nodes) {
			gate_policy_free(&p);
			return -EINVAL;
		}
		n = &t->nodes[active[i]];
		if (n->backend == BACKEND_NONE || !n->hook)
			continue;
		if (n->backend == BACKEND_TRACEPOINT)
			classes |= n->classes;
		for (h = 0; h < n->chosen.n; h++) {
			const char *s = n->chosen.v[h].name;
			size_t len = strlen(s);

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
		}
	}
	n_comp = probe_companions(classes, comp, ARRAY_SIZE(comp));
	for (i = 0; i < n_comp; i++)
		policy_add_tracepoint(&p, comp[i], strlen(comp[i]));
	*ret = p;
	return 0;
}

int gate_level_call_node(const struct tree *t, const int *active, size_t n_active)
{
	size_t i, h;

	for (i = 0; i < n_active; i++) {
		const struct tree_node *n;

		if (active[i] < 0 || (size_t)active[i] >= t->n_nodes)
			continue;
		n = &t->nodes[active[i]];
		if (n->backend != BACKEND_TRACEPOINT)
			continue;
		for (h = 0; h < n->chosen.n; h++)
			if (syscall_event_raw(n->chosen.v[h].name))
				return active[i];
	}
	return -1;
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

/* What a section of the object may be; everything else is refused. */
enum sec_class {
	SEC_NONE,    /* index 0, string tables */
	SEC_SYMTAB,  /* the symbol table */
	SEC_EXEC,    /* programs and .text (subprograms) */
	SEC_MAPS,    /* .maps */
	SEC_LICENSE, /* license */
	SEC_INFO,    /* .BTF, .BTF.ext, .debug_*, .llvm_addrsig: never loaded as data */
	SEC_REL,     /* relocations of the above */
};

#ifndef SHT_LLVM_ADDRSIG
#define SHT_LLVM_ADDRSIG 0x6fff4c03
#endif

static int classify_section(const GElf_Shdr *sh, const char *name, enum sec_class *ret)
{
	bool alloc = sh->sh_flags & SHF_ALLOC;

	switch (sh->sh_type) {
	case SHT_NULL:
		*ret = SEC_NONE;
		return 0;
	case SHT_STRTAB:
		if (!alloc && (!strcmp(name, ".strtab") || !strcmp(name, ".shstrtab"))) {
			*ret = SEC_NONE;
			return 0;
		}
		break;
	case SHT_SYMTAB:
		if (!strcmp(name, ".symtab")) {
			*ret = SEC_SYMTAB;
			return 0;
		}
		break;
	case SHT_REL:
		*ret = SEC_REL;
		return 0;
	case SHT_LLVM_ADDRSIG:
		if (!strcmp(name, ".llvm_addrsig")) {
			*ret = SEC_INFO;
			return 0;
		}
		break;
	case SHT_PROGBITS:
		if (sh->sh_flags & SHF_EXECINSTR) {
			*ret = SEC_EXEC;
			return 0;
		}
		if (!strcmp(name, ".maps") && !(sh->sh_flags & SHF_EXECINSTR)) {
			*ret = SEC_MAPS;
			return 0;
		}
		if (!strcmp(name, "license")) {
			*ret = SEC_LICENSE;
			return 0;
		}
		if (!alloc && (!strcmp(name, ".BTF") || !strcmp(name, ".BTF.ext") ||
			       !strncmp(name, ".debug_", 7))) {
			*ret = SEC_INFO;
			return 0;
		}
		break;
	default:
		break;
	}
	return -EPERM;
}

struct elf_view {
	Elf *e;
	size_t shstrndx, n_sections;
	enum sec_class *cls;
	Elf_Data *symtab;
	size_t symtab_link, n_syms;
};

static const char *section_name(const struct elf_view *v, size_t idx)
{
	Elf_Scn *scn = elf_getscn(v->e, idx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh))
		return "?";
	return elf_strptr(v->e, v->shstrndx, sh.sh_name) ?: "?";
}

/* Every symbol lives in a section the header or the program's functions account for. */
static int check_symbols(const struct elf_view *v, char **ret_err)
{
	size_t i;

	for (i = 1; i < v->n_syms; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(v->symtab, i, &sym))
			return refuse(ret_err, -EINVAL, "unreadable symbol");
		name = elf_strptr(v->e, v->symtab_link, sym.st_name) ?: "";
		type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF) {
			if (name[0])
				return refuse(ret_err, -EPERM,
					      "extern symbol %.128s: kfuncs, __ksym and __kconfig "
					      "externs are not allowed",
					      name);
			continue;
		}
		if (sym.st_shndx == SHN_ABS && type == STT_FILE)
			continue;
		if (sym.st_shndx >= SHN_LORESERVE || sym.st_shndx >= v->n_sections)
			return refuse(ret_err, -EPERM,
				      "symbol %.128s is absolute or common: not allowed", name);
		switch (v->cls[sym.st_shndx]) {
		case SEC_EXEC:
			if (type == STT_FUNC || type == STT_NOTYPE || type == STT_SECTION)
				continue;
			break;
		case SEC_MAPS:
		case SEC_LICENSE:
			if (type == STT_OBJECT || type == STT_SECTION)
				continue;
			break;
		case SEC_INFO:
			if (type == STT_SECTION)
				continue;
			break;
		default:
			break;
		}
		return refuse(ret_err, -EPERM, "symbol %.128s in section %.128s is not allowed", name,
			      section_name(v, sym.st_shndx));
	}
	return 0;
}

/*
 * Relocations inside code: 64-bit loads may name maps (libbpf turns them
 * into map references) and calls may name functions of the object. A load
 * of a function's address (the callback of bpf_loop and its kin) or of
 * anything else is refused.
 */
static int check_code_relocations(const struct elf_view *v, Elf_Data *rel, const GElf_Shdr *rsh,
				  Elf_Data *code, const char *sname, char **ret_err)
{
	size_t i, n = rsh->sh_entsize ? rel->d_size / rsh->sh_entsize : 0;

	for (i = 0; i < n; i++) {
		GElf_Rel r;
		GElf_Sym sym;
		struct bpf_insn in;
		size_t symi;
		const char *name;

		if (!gelf_getrel(rel, i, &r))
			return refuse(ret_err, -EINVAL, "unreadable relocation in %.128s", sname);
		symi = GELF_R_SYM(r.r_info);
		/* written so that an offset near 2^64 cannot wrap past the check */
		if (r.r_offset % sizeof(in) || r.r_offset > code->d_size ||
		    code->d_size - r.r_offset < sizeof(in) ||
		    symi >= v->n_syms || !gelf_getsym(v->symtab, symi, &sym))
			return refuse(ret_err, -EINVAL, "bad relocation in %.128s", sname);
		memcpy(&in, (const char *)code->d_buf + r.r_offset, sizeof(in));
		name = elf_strptr(v->e, v->symtab_link, sym.st_name) ?: "";
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= v->n_sections)
			return refuse(ret_err, -EPERM, "%.128s refers to the extern %.128s", sname,
				      name);
		if (in.code == (BPF_LD | BPF_IMM | BPF_DW) && v->cls[sym.st_shndx] == SEC_MAPS)
			continue;
		if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL &&
		    v->cls[sym.st_shndx] == SEC_EXEC)
			continue;
		if (in.code == (BPF_LD | BPF_IMM | BPF_DW) && v->cls[sym.st_shndx] == SEC_EXEC)
			return refuse(ret_err, -EPERM,
				      "section %.128s, instruction %zu takes the address of the "
				      "function %.128s: callbacks and function pointers are not "
				      "allowed",
				      sname, (size_t)(r.r_offset / sizeof(in)), name);
		return refuse(ret_err, -EPERM,
			      "section %.128s, instruction %zu refers to %.128s in %.128s: code may "
			      "refer only to maps and to its own functions",
			      sname, (size_t)(r.r_offset / sizeof(in)), name,
			      section_name(v, sym.st_shndx));
	}
	return 0;
}

static int check_code(const char *sname, Elf_Data *d, json_t *helpers, bool *seen, size_t *total,
		      char **ret_err)
{
	size_t off, n;

	if (!d || d->d_size % sizeof(struct bpf_insn))
		return refuse(ret_err, -EINVAL, "section %.128s is not BPF code", sname);
	n = d->d_size / sizeof(struct bpf_insn);
	*total += n;
	if (*total > GATE_MAX_INSNS)
		return refuse(ret_err, -EPERM, "more than %d instructions", GATE_MAX_INSNS);
	for (off = 0; off < d->d_size; off += sizeof(struct bpf_insn)) {
		size_t idx = off / sizeof(struct bpf_insn);
		struct bpf_insn in;
		char buf[32];

		memcpy(&in, (const char *)d->d_buf + off, sizeof(in));
		if (in.code == (BPF_LD | BPF_IMM | BPF_DW)) {
			/* libbpf sets the pseudo source of map loads itself, from relocations */
			if (in.src_reg != 0)
				return refuse(ret_err, -EPERM,
					      "section %.128s, instruction %zu: a 64-bit load with "
					      "source %d is not allowed",
					      sname, idx, in.src_reg);
			off += sizeof(struct bpf_insn); /* its second half */
			continue;
		}
		if (in.code != (BPF_JMP | BPF_CALL))
			continue;
		if (in.src_reg == BPF_PSEUDO_CALL)
			continue; /* a call into a subprogram of this object */
		if (in.src_reg != 0)
			return refuse(ret_err, -EPERM,
				      "section %.128s, instruction %zu: kfunc calls are not allowed",
				      sname, idx);
		if (!helper_allowed(in.imm))
			return refuse(ret_err, -EPERM,
				      "section %.128s, instruction %zu: the helper %s is not allowed "
				      "in authored probes: %s",
				      sname, idx, gate_helper_name(in.imm, buf, sizeof(buf)),
				      helper_refusal(in.imm));
		if (in.imm > 0 && in.imm < __BPF_FUNC_MAX_ID && !seen[in.imm]) {
			seen[in.imm] = true;
			json_array_append_new(helpers,
					      json_string(gate_helper_name(in.imm, buf, sizeof(buf))));
		}
	}
	return 0;
}

/*
 * libbpf takes the license from the section's first string: the header's
 * "GPL", defined before anything of the program's. A model's own LICENSE
 * (a habit) adds more strings after it, which nothing reads; they must
 * still be short printable strings.
 */
static int check_license(const Elf_Data *d, char **ret_err)
{
	static const char lic[] = ARGUS_AUTHORED_LICENSE;
	const char *p;
	size_t i;

	if (!d || !d->d_buf || d->d_size < sizeof(lic) || d->d_size > 256 ||
	    memcmp(d->d_buf, lic, sizeof(lic)) || ((const char *)d->d_buf)[d->d_size - 1])
		return refuse(ret_err, -EPERM,
			      "the license section must begin with the header's \"%s\"", lic);
	p = d->d_buf;
	for (i = 0; i < d->d_size; i++)
		if (p[i] && (p[i] < 0x20 || p[i] > 0x7e))
			return refuse(ret_err, -EPERM, "the license section holds binary data");
	return 0;
}

static int check_elf(const void *obj, size_t len, json_t *helpers, char **ret_err)
{
	_cleanup_free_ char *copy = malloc(len);
	_cleanup_free_ enum sec_class *cls = NULL;
	_cleanup_(elf_endp) Elf *e = NULL;
	struct elf_view v = {};
	Elf_Scn *scn = NULL;
	size_t total = 0, i;
	bool seen[__BPF_FUNC_MAX_ID] = {};
	int r;

	if (!copy)
		return refuse(ret_err, -ENOMEM, "out of memory");
	memcpy(copy, obj, len);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return refuse(ret_err, -EINVAL, "libelf is unusable");
	e = elf_memory(copy, len);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    elf_getshdrstrndx(e, &v.shstrndx) != 0 || elf_getshdrnum(e, &v.n_sections) != 0)
		return refuse(ret_err, -EINVAL, "the object is not a 64-bit ELF file");
	if (v.n_sections > 4096)
		return refuse(ret_err, -EPERM, "the object has %zu sections", v.n_sections);
	v.e = e;
	cls = calloc(v.n_sections ?: 1, sizeof(*cls));
	if (!cls)
		return refuse(ret_err, -ENOMEM, "out of memory");
	v.cls = cls;

	/* sections: only what the header and the program's functions account for */
	while ((scn = elf_nextscn(e, scn))) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || idx >= v.n_sections)
			return refuse(ret_err, -EINVAL, "unreadable section header");
		sname = elf_strptr(e, v.shstrndx, sh.sh_name) ?: "?";
		if (classify_section(&sh, sname, &cls[idx]) < 0)
			return refuse(ret_err, -EPERM,
				      "section %.128s is not allowed: an authored object holds only "
				      "programs, functions, .maps, the header's license, BTF and debug "
				      "information (no global or static data such as .rodata, .data, "
				      ".bss: use maps or local variables)",
				      sname);
		if (cls[idx] == SEC_SYMTAB) {
			if (v.symtab)
				return refuse(ret_err, -EINVAL, "two symbol tables");
			v.symtab = elf_getdata(scn, NULL);
			v.symtab_link = sh.sh_link;
			if (!v.symtab || !sh.sh_entsize)
				return refuse(ret_err, -EINVAL, "unreadable symbol table");
			v.n_syms = v.symtab->d_size / sh.sh_entsize;
		} else if (cls[idx] == SEC_LICENSE) {
			r = check_license(elf_getdata(scn, NULL), ret_err);
			if (r < 0)
				return r;
		}
	}
	if (!v.symtab)
		return refuse(ret_err, -EINVAL, "the object has no symbol table");
	r = check_symbols(&v, ret_err);
	if (r < 0)
		return r;

	/* code and its relocations */
	for (i = 1; i < v.n_sections; i++) {
		Elf_Scn *s = elf_getscn(e, i);
		GElf_Shdr sh, tsh;
		Elf_Data *d;

		if (!s || !gelf_getshdr(s, &sh))
			return refuse(ret_err, -EINVAL, "unreadable section header");
		if (cls[i] == SEC_EXEC) {
			r = check_code(section_name(&v, i), elf_getdata(s, NULL), helpers, seen,
				       &total, ret_err);
			if (r < 0)
				return r;
			continue;
		}
		if (cls[i] != SEC_REL)
			continue;
		if (sh.sh_info == 0 || sh.sh_info >= v.n_sections || sh.sh_link >= v.n_sections ||
		    cls[sh.sh_link] != SEC_SYMTAB || !sh.sh_entsize)
			return refuse(ret_err, -EINVAL, "bad relocation section %.128s",
				      section_name(&v, i));
		if (cls[sh.sh_info] == SEC_INFO)
			continue; /* BTF and debug information: read by libbpf, never loaded */
		if (cls[sh.sh_info] != SEC_EXEC)
			return refuse(ret_err, -EPERM, "relocations for %.128s are not allowed",
				      section_name(&v, sh.sh_info));
		d = elf_getdata(s, NULL);
		s = elf_getscn(e, sh.sh_info);
		if (!d || !s || !gelf_getshdr(s, &tsh))
			return refuse(ret_err, -EINVAL, "unreadable relocation section");
		r = check_code_relocations(&v, d, &sh, elf_getdata(s, NULL),
					   section_name(&v, sh.sh_info), ret_err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * BTF declares no externs (kfuncs, __ksym, __kconfig) and no data section
 * but the maps and the license: global data would show as .data, .bss,
 * .rodata here even where the ELF sections were named otherwise.
 */
static int check_btf(const struct bpf_object *o, char **ret_err)
{
	const struct btf *btf = bpf_object__btf(o);
	__u32 id, n;

	if (!btf)
		return refuse(ret_err, -EPERM, "the object has no BTF: compile with -g");
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!t)
			return refuse(ret_err, -EINVAL, "unreadable BTF");
		name = btf__name_by_offset(btf, t->name_off) ?: "";
		if (btf_is_func(t) && btf_vlen(t) == BTF_FUNC_EXTERN)
			return refuse(ret_err, -EPERM,
				      "BTF declares the extern function %.128s: kfuncs are not "
				      "allowed",
				      name);
		if (btf_is_var(t) && btf_var(t)->linkage == BTF_VAR_GLOBAL_EXTERN)
			return refuse(ret_err, -EPERM,
				      "BTF declares the extern variable %.128s: __ksym and "
				      "__kconfig are not allowed",
				      name);
		if (btf_is_datasec(t) && strcmp(name, ".maps") != 0 && strcmp(name, "license") != 0)
			return refuse(ret_err, -EPERM,
				      "BTF declares the data section %.128s: global data is not "
				      "allowed, use maps or local variables",
				      name);
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

/*
 * A C identifier, as the compiler makes program and map names: anything
 * else (bytes that are not UTF-8 among them) would be hidden from the
 * trace's list of what was loaded.
 */
static bool valid_identifier(const char *s)
{
	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
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
	if (!valid_identifier(name))
		return refuse(ret_err, -EPERM, "a program's name is not a C identifier");
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
	if (!gate_policy_allows(p, sec))
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
	size_t declared;
	unsigned long long memory;
	bool counters, targets, pidns;
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
	if (bpf_map__is_internal(m))
		return refuse(ret_err, -EPERM,
			      "global data %.64s is not allowed: use maps or local variables", name);
	if (!valid_identifier(name))
		return refuse(ret_err, -EPERM, "a map's name is not a C identifier");
	if (bpf_map__inner_map(m))
		return refuse(ret_err, -EPERM, "map %.64s: maps of maps are not allowed", name);
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
	} else if (strcmp(name, ARGUS_AUTHORED_PIDNS) == 0) {
		if (type != BPF_MAP_TYPE_ARRAY || key != 4 || value != sizeof(struct argus_pidns) ||
		    entries != 1 || flags)
			return refuse(ret_err, -EPERM,
				      "map argus_pidns is not the one argus_authored.h declares");
		t->pidns = true;
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
	/* the libbpf of Debian 12 follows BTF type ids unchecked: a bad one would crash argusd */
	r = btf_check_object(obj, len, ret_err);
	if (r < 0)
		return r;

	o = bpf_object__open_mem(obj, len, &opts);
	if (!o) {
		r = -errno;
		return refuse(ret_err, -EINVAL, "libbpf cannot open the object: %s", strerror(-r));
	}
	r = check_btf(o, ret_err);
	if (r < 0)
		return r;
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
	if (!tally.counters || !tally.targets || !tally.pidns || !follower)
		return refuse(ret_err, -EPERM,
			      "the header's maps (counters, targets, argus_pidns) and its fork "
			      "follower are missing: #include \"argus_authored.h\" and use its maps");
	if (n_progs <= 1)
		return refuse(ret_err, -EPERM, "the object has no program of its own");
	if (ret_info)
		*ret_info = json_pack("{s:O,s:O,s:O,s:I}", "programs", progs, "maps", maps,
				      "helpers", helpers, "bytes", (json_int_t)len);
	return 0;
}
