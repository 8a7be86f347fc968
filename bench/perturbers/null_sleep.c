// SPDX-License-Identifier: MIT
/* null_sleep: a control perturber that only sleeps until stopped. */
#include "bench/common.h"

int main(int argc, char **argv)
{
	struct perturb_opts o;

	perturb_parse("null_sleep", "Sleep until stopped (control).", -1, NULL, argc, argv, &o);
	perturb_begin("null_sleep", o.restore_only, o.cpu);
	perturb_ready();
	perturb_wait();
	perturb_end();
	return 0;
}
