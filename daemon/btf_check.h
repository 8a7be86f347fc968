/* SPDX-License-Identifier: MIT */
/*
 * The BTF of an authored object, checked before libbpf opens the object.
 *
 * libbpf parses the BTF section's header, strings and type records with
 * bounds checks, but before 1.3 it follows the type ids and name offsets
 * inside the records unchecked: an object whose BTF names a type id past
 * the last type (or a name past the string section) makes
 * bpf_object__open_mem read through a NULL type and crash argusd. This
 * check does what later libbpf releases do when they parse BTF: every type
 * id a record refers to exists, every name offset is inside the strings,
 * a function's type is a function prototype.
 */
#pragma once

#include <stddef.h>

/*
 * Check the .BTF section of the ELF object obj (len bytes; an object
 * without one passes: libbpf refuses what needs BTF itself). Pure. Returns
 * 0, or -EINVAL with *ret_err (malloc'ed) saying which type is wrong.
 */
int btf_check_object(const void *obj, size_t len, char **ret_err);
