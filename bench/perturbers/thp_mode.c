// SPDX-License-Identifier: MIT
/*
 * thp_mode: the transparent huge page mode (enabled = never, always or
 * madvise) set by --mode until stopped; the previous mode is restored on
 * exit. "never" takes huge pages from workloads that ask for them
 * (MADV_HUGEPAGE); "always" gives them to every anonymous mapping.
 */
#include "bench/common.h"

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static const char *prog = "thp_mode";

int main(int argc, char **argv)
{
	static const char *const modes[] = {"never", "always", "madvise"};
	const char *mode = NULL;
	const struct bench_flag flags[] = {
	    {"mode", "MODE", "never, always or madvise (required)", .str = &mode},
	    {},
	};
	struct perturb_opts o;
	bool known = false;
	size_t i;
	int r;

	perturb_parse(prog, "Set the THP mode until stopped.", -1, flags, argc, argv, &o);
	for (i = 0; mode && i < sizeof(modes) / sizeof(modes[0]); i++)
		known = known || strcmp(mode, modes[i]) == 0;
	if (!o.restore_only && !known) {
		fprintf(stderr, "%s: --mode: \"%s\" is not never, always or madvise\n", prog,
			mode ?: "");
		return 2;
	}
	perturb_begin(prog, o.restore_only, o.cpu);
	r = perturb_set(THP_ENABLED, mode);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, THP_ENABLED, strerror(-r));
		perturb_end();
		return 1;
	}
	perturb_ready();
	perturb_wait();
	perturb_end();
	return 0;
}
