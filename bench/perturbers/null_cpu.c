// SPDX-License-Identifier: MIT
/*
 * null_cpu: a control perturber: a busy loop on a CPU the victim does not
 * use (default the last CPU), touching no memory beyond its registers.
 */
#include "bench/common.h"

int main(int argc, char **argv)
{
	struct perturb_opts o;
	volatile uint64_t spin = 0;

	perturb_parse("null_cpu", "A busy loop on a CPU the victim does not use (control).",
		      bench_ncpus() - 1, NULL, argc, argv, &o);
	perturb_begin("null_cpu", o.restore_only, o.cpu);
	perturb_ready();
	while (!perturb_stop)
		spin++;
	perturb_end();
	return 0;
}
