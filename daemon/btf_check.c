// SPDX-License-Identifier: MIT
/*
 * Type ids and name offsets of an object's BTF, checked record by record
 * before libbpf follows them. See btf_check.h.
 */
#include "daemon/btf_check.h"
#include "daemon/util.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include <bpf/btf.h>

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

struct ids {
	const struct btf *btf;
	__u32 n; /* types, void (id 0) included */
};

static bool id_ok(const struct ids *c, __u32 id)
{
	return id < c->n;
}

static bool name_ok(const struct ids *c, __u32 off)
{
	return btf__str_by_offset(c->btf, off) != NULL;
}

/* Does every id and name of type id point inside the BTF? */
static bool type_ok(const struct ids *c, const struct btf_type *t)
{
	__u16 i, n = btf_vlen(t);

	if (!name_ok(c, t->name_off))
		return false;
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FWD:
	case BTF_KIND_FLOAT:
		return true;
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
	case BTF_KIND_TYPE_TAG:
		return id_ok(c, t->type);
	case BTF_KIND_FUNC:
		return id_ok(c, t->type) && t->type &&
		       btf_is_func_proto(btf__type_by_id(c->btf, t->type));
	case BTF_KIND_ARRAY:
		return id_ok(c, btf_array(t)->type) && id_ok(c, btf_array(t)->index_type);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < n; i++)
			if (!name_ok(c, btf_members(t)[i].name_off) ||
			    !id_ok(c, btf_members(t)[i].type))
				return false;
		return true;
	case BTF_KIND_ENUM:
		for (i = 0; i < n; i++)
			if (!name_ok(c, btf_enum(t)[i].name_off))
				return false;
		return true;
	case BTF_KIND_ENUM64:
		for (i = 0; i < n; i++)
			if (!name_ok(c, btf_enum64(t)[i].name_off))
				return false;
		return true;
	case BTF_KIND_FUNC_PROTO:
		if (!id_ok(c, t->type))
			return false;
		for (i = 0; i < n; i++)
			if (!name_ok(c, btf_params(t)[i].name_off) ||
			    !id_ok(c, btf_params(t)[i].type))
				return false;
		return true;
	case BTF_KIND_DATASEC:
		for (i = 0; i < n; i++)
			if (!id_ok(c, btf_var_secinfos(t)[i].type))
				return false;
		return true;
	default:
		return false;
	}
}

static int fail(char **ret_err, const char *why, __u32 id)
{
	*ret_err = xasprintf("the object's BTF is malformed: %s %u", why, id);
	return -EINVAL;
}

/* One .BTF section's records. */
static int check_section(const Elf_Data *d, char **ret_err)
{
	_cleanup_(btf_freep) struct btf *btf = NULL;
	struct ids c;
	__u32 id;

	if (!d || !d->d_buf || !d->d_size)
		return 0;
	btf = btf__new(d->d_buf, d->d_size);
	if (!btf)
		return 0; /* libbpf drops BTF it cannot parse; the gate refuses an object without */
	c = (struct ids){.btf = btf, .n = btf__type_cnt(btf)};
	for (id = 1; id < c.n; id++)
		if (!type_ok(&c, btf__type_by_id(btf, id)))
			return fail(ret_err, "type", id);
	return 0;
}

int btf_check_object(const void *obj, size_t len, char **ret_err)
{
	_cleanup_free_ char *copy = malloc(len ? len : 1);
	_cleanup_(elf_endp) Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int r;

	if (!copy)
		return fail(ret_err, "out of memory at", 0);
	memcpy(copy, obj, len);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(ret_err, "libelf is unusable, type", 0);
	e = elf_memory(copy, len);
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0; /* not ELF: libbpf refuses it without reading any BTF */
	/* every section of that name: libbpf takes the last one it meets */
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".BTF") != 0)
			continue;
		r = check_section(elf_getdata(scn, NULL), ret_err);
		if (r < 0)
			return r;
	}
	return 0;
}
