// SPDX-License-Identifier: MIT
/*
 * The BTF check before libbpf opens an authored object (btf_check.c):
 * objects compiled from authored sources pass; the same objects with one
 * type id or name offset pointing past the end are refused, by the check
 * and so by the gate, which before it crashed inside libbpf (the fuzzer's
 * find, kept in fuzz/corpus/gate/regress-btf-type-id.o).
 */
#include "daemon/btf_check.h"
#include "daemon/gate.h"
#include "daemon/util.h"
#include "tests/tap.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <string.h>

#include <bpf/btf.h>

static char *load(const char *name, size_t *ret_len)
{
	char path[1024];
	char *buf = NULL;

	snprintf(path, sizeof(path), "%s/fuzz/corpus/gate/%s", getenv("ARGUS_SOURCE_DIR") ?: ".",
		 name);
	REQUIRE(read_file_bounded(path, 1 << 20, &buf, ret_len) == 0);
	return buf;
}

/*
 * Offset in obj of the .BTF section's first type record, and that section's
 * type count; the record must be one that refers to another type.
 */
static size_t first_type(char *obj, size_t len, unsigned *ret_n)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx, off = 0;

	REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
	e = elf_memory(obj, len);
	REQUIRE(e && elf_getshdrstrndx(e, &shstrndx) == 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		REQUIRE(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name) ?: "", ".BTF")) {
			const struct btf_header *h = (const void *)(obj + sh.sh_offset);
			struct btf *b = btf__new(obj + sh.sh_offset, sh.sh_size);

			REQUIRE(b);
			REQUIRE(btf_is_ptr(btf__type_by_id(b, 1)));
			*ret_n = btf__type_cnt(b);
			btf__free(b);
			off = sh.sh_offset + h->hdr_len + h->type_off;
		}
	}
	elf_end(e);
	REQUIRE(off);
	return off;
}

static void test_good(void)
{
	static const char *const good[] = {"good-level1.o", "maps-subprog-rawtp.o"};
	size_t i, len;

	tap_subtest("compiled objects pass");
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		_cleanup_free_ char *obj = load(good[i], &len), *err = NULL;

		CHECKF(btf_check_object(obj, len, &err) == 0, "%s: %s", good[i], err ?: "");
	}
}

static void test_found(void)
{
	struct gate_policy none = {};
	size_t len;
	_cleanup_free_ char *obj = load("regress-btf-type-id.o", &len), *err = NULL, *gerr = NULL;

	tap_subtest("the fuzzer's object");
	CHECK(btf_check_object(obj, len, &err) == -EINVAL);
	CHECKF(err && !strcmp(strrchr(err, ' ') ?: "", " 29"), "%s", err ?: "");
	CHECK(gate_check(obj, len, &none, NULL, &gerr) < 0 && gerr);
}

/* Patch one 32-bit field of the first type record and expect a refusal. */
static void test_patched(size_t field, const char *what)
{
	size_t len, off;
	unsigned n = 0;
	_cleanup_free_ char *obj = load("good-level1.o", &len), *err = NULL;
	__u32 bad;

	tap_subtest(what);
	off = first_type(obj, len, &n);
	bad = n + 1000000;
	memcpy(obj + off + field, &bad, sizeof(bad));
	CHECK(btf_check_object(obj, len, &err) == -EINVAL);
	CHECKF(err && !strcmp(strrchr(err, ' ') ?: "", " 1"), "%s", err ?: "");
}

int main(void)
{
	test_good();
	test_found();
	test_patched(offsetof(struct btf_type, name_off), "a name past the strings");
	test_patched(offsetof(struct btf_type, type), "a type id past the last type");
	return tap_done("test-btf-check");
}
