// SPDX-License-Identifier: MIT
/*
 * The Prometheus text exposition format, as a service's metrics endpoint
 * sends it (sli.h): the bytes are one scrape, or two separated by a NUL
 * byte (the window's start and end), given to prom_sample_text with a few
 * selectors and to prom_quantile_text; and a command's output to
 * sli_last_number.
 *
 * Properties: every refusal says why (valid UTF-8: it reaches the job's
 * error); a value found is finite where the function promises it
 * (quantiles, last numbers).
 */
#include "daemon/prom.h"
#include "daemon/sli.h"
#include "fuzz/fuzz.h"

#include <errno.h>
#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_json_init();
	return 0;
}

static const char *const selectors[] = {
    "m",
    "m{a=\"b\"}",
    "http_requests_total{code=\"200\",method=\"get\"}",
    "h",
    "h{job=\"x\"}",
};

static void refusal(int r, char *err)
{
	FUZZ_CHECK(r < 0 && err, "r=%d without a reason", r);
	FUZZ_CHECK(fuzz_utf8(err), "the refusal is not valid UTF-8: %s", err);
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *after;
	size_t i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	/* "before\0after": two scrapes; one when there is no NUL */
	after = memchr(text, 0, size) ? text + strlen(text) + 1 : text;

	for (i = 0; i < sizeof(selectors) / sizeof(selectors[0]); i++) {
		char *err = NULL;
		double v;
		int r = prom_sample_text(after, selectors[i], &v, &err);

		if (r < 0)
			refusal(r, err);
		else
			FUZZ_CHECK(!err, "a value and a reason");
	}
	for (i = 3; i < sizeof(selectors) / sizeof(selectors[0]); i++) {
		char *err = NULL;
		double q = (i == 3) ? 0.99 : 0.5, v;
		int r = prom_quantile_text(text, after, selectors[i], q, &v, &err);

		if (r < 0)
			refusal(r, err);
		else
			FUZZ_CHECK(isfinite(v) && !err, "quantile %g", v);
	}
	{
		char *err = NULL;
		double v;
		int r = sli_last_number(after, &v, &err);

		if (r < 0)
			refusal(r, err);
		else
			FUZZ_CHECK(isfinite(v), "last number %g", v);
	}
	free(text);
	return 0;
}
