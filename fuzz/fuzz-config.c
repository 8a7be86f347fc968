// SPDX-License-Identifier: MIT
/*
 * The configuration parser: the bytes are an argusd.conf, read by
 * config_load_file from a memory file over the defaults.
 *
 * Properties: a refusal names the line; an accepted file leaves a
 * configuration whose values are usable where they go: the defaults that
 * requests inherit (tau, window_s, reference_repeats) pass the request
 * validator's ranges, and the compiler, its include directory and the
 * control socket are absolute paths (bpf_clang goes to execve, the include
 * directory to -I).
 */
#include "api/validate.h"
#include "daemon/config.h"
#include "daemon/util.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <math.h>
#include <sys/mman.h>

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memfd = memfd_create("argusd.conf", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void check_path(const char *key, const char *p)
{
	FUZZ_CHECK(p && p[0] == '/' && !strpbrk(p, " \t\n\\\"'"), "%s = \"%s\"", key,
		   p ? p : "(null)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char *err = NULL;
	int r;

	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	config_defaults(&c);
	r = config_load_file(&c, path, &err);
	if (r < 0) {
		FUZZ_CHECK(err && strstr(err, path), "the error does not name the file: %s",
			   err ? err : "(null)");
		FUZZ_CHECK(r == -EINVAL || r == -EFBIG, "r=%d", r);
		FUZZ_CHECK(r != -EINVAL || strstr(err, ": line "), "the error names no line: %s",
			   err);
		free(err);
		config_free(&c);
		return 0;
	}
	FUZZ_CHECK(err == NULL, "an error message on success");
	FUZZ_CHECK(isfinite(c.tau) && c.tau >= API_TAU_MIN && c.tau <= API_TAU_MAX, "tau = %g",
		   c.tau);
	FUZZ_CHECK(c.window_s >= 1 && c.window_s <= API_WINDOW_MAX_S, "window_s = %u", c.window_s);
	FUZZ_CHECK(c.reference_repeats >= API_REPEATS_MIN && c.reference_repeats <= API_REPEATS_MAX,
		   "reference_repeats = %u", c.reference_repeats);
	FUZZ_CHECK(c.queue_max >= 1 && c.max_body >= 1024, "queue_max %u max_body %u", c.queue_max,
		   c.max_body);
	check_path("bpf_clang", c.bpf_clang);
	check_path("bpf_include_dir", c.bpf_include_dir);
	FUZZ_CHECK(!c.listen_unix || c.listen_unix[0] == '/', "listen_unix = \"%s\"",
		   c.listen_unix);
	config_free(&c);
	return 0;
}
