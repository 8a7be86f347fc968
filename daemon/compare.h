/* SPDX-License-Identifier: MIT */
/*
 * Two references of the same kind compared metric by metric, as one asks
 * after a kernel, firmware or configuration change: which metrics moved by
 * more than the runs' own spread allows. Pure: no store, no logging.
 */
#pragma once

#include <stddef.h>
#include <jansson.h>

#include "daemon/calibrate.h"
#include "daemon/mvec.h"

/*
 * Compare the runs of reference A (a, na) with those of B (b, nb). For each
 * metric every run of both has: the mean and spread of each (the spread
 * with the calibration's floors, p's rel_floor, count_floor and
 * time_floor_ns, so that a near-constant metric cannot look moved by a
 * hair), z = (mean B - mean A) / the larger spread, and whether |z| > p->tau.
 * Returns {"tau", "compared", "differ": [{"metric", "a": {"mean", "spread"},
 * "b": {...}, "ratio", "z", "direction"}, ...] most moved first, "only_a":
 * [metrics], "only_b": [...]}, or NULL without memory.
 */
json_t *compare_references(const struct calib_params *p, const struct mvec *a, size_t na,
			   const struct mvec *b, size_t nb);
