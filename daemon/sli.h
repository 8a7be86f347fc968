/* SPDX-License-Identifier: MIT */
/*
 * A service's SLI: its own health number, measured once per measurement
 * window, as the "sli" object of a service definition gives it. Two kinds:
 *
 *   {"command": ["/usr/bin/redis-benchmark", "-q", ...],
 *    "better": "lower" | "higher", "unit": "ms"}
 *
 * a program (argv[0] absolute, no shell) run as a user once per window,
 * through the target runner (its own process group, a clean environment,
 * a time limit); the whole trimmed last non-empty line of its output
 * (stdout and stderr together) must be one number, as strtod reads it
 * ("42", " 3e2 ", "-0.5"; not "42 ms", not "nan"). "better" is required.
 *
 *   {"prometheus": {"url": "http://127.0.0.1:9121/metrics",
 *                   "metric": "NAME{label=\"value\",...}",
 *                   "kind": "gauge" | "rate" | "quantile:0.99"},
 *    "better": "lower" | "higher", "unit": "req/s"}
 *
 * a metric scraped (text exposition format) at the window's start and end.
 * gauge: its value at the end. rate: (end - start) / window seconds of a
 * counter. quantile:Q (0 < Q < 1): the Q-quantile of the observations of
 * the histogram NAME_bucket made between the two scrapes, interpolated
 * inside the bucket as Prometheus' histogram_quantile() does; when NAME
 * has no buckets, the summary sample NAME{quantile="Q"} at the end.
 * The selector's labels must each be present with that exact value (the
 * sample may carry more); exactly one series must match. "better"
 * defaults to "lower" for gauge and quantile, "higher" for rate.
 *
 * "unit" is optional free text for reports. Errors name the field
 * ("sli.prometheus.kind: ...") or, while measuring, the command or URL and
 * what went wrong, for the job's error an on-call engineer reads.
 *
 * Errors while measuring: -ETIMEDOUT (the command hung, or the scrape
 * timed out), -EIO (the command failed, could not run, or the scrape got
 * no HTTP 200), -EBADMSG (no number, garbage, a NaN or infinite value),
 * -ENOENT / -ENOTUNIQ (no series or several match the selector), -ERANGE
 * (a counter or histogram went down between the scrapes: a reset),
 * -ENODATA (no observations in the window), -EFBIG (a body over
 * SLI_SCRAPE_MAX), -ECANCELED (asked to stop).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#define SLI_ARGV_MAX 64		   /* arguments of a command */
#define SLI_ARG_LEN_MAX 4096	   /* bytes of one argument */
#define SLI_URL_MAX 1024	   /* bytes of a scrape URL */
#define SLI_UNIT_MAX 16		   /* bytes of "unit" */
#define SLI_SCRAPE_MAX (4 << 20)   /* bytes of a scraped body */
#define SLI_SCRAPE_TIMEOUT_MS 5000 /* one scrape, all of it */
#define SLI_CONNECT_TIMEOUT_MS 2000
#define SLI_EXCERPT_MAX 200 /* bytes of output or body quoted in an error */

struct sli;

/*
 * Parse the "sli" object of a service definition (pure). Unknown fields,
 * bad types, an empty or too long argv, a relative argv[0], a URL that is
 * not http:// or https:// (or carries a user name or password), a bad
 * metric selector, a bad kind, a quantile outside (0, 1), a bad "better"
 * or "unit": -EINVAL and *ret_err (malloc'ed, when ret_err is not NULL)
 * naming the field, "sli.prometheus.kind: ...".
 */
int sli_from_json(const json_t *o, struct sli **ret, char **ret_err);
/* The definition as JSON; it parses back with sli_from_json. "better" is always present. */
json_t *sli_to_json(const struct sli *s);
void sli_free(struct sli *s);

/* Whether a smaller value is the healthier one. */
bool sli_lower_is_better(const struct sli *s);
/* Whether the value is a throughput (kind "rate"): per-request normalisation divides by it. */
bool sli_is_rate(const struct sli *s);
/* Whether the SLI is a command (run as a user, with a time limit), not a scrape. */
bool sli_is_command(const struct sli *s);
/* The "unit" text, NULL when not given. */
const char *sli_unit(const struct sli *s);

struct sli_window;

/*
 * Start one window's measurement. A command is spawned and released now,
 * as user (NULL: "nobody"), killed with its process group after timeout_s
 * seconds (1..24 h); the calling thread must outlive the window (the
 * child's parent death signal follows it). A prometheus SLI is scraped
 * now (user and timeout_s unused) and the metric looked for in it, so that
 * a wrong URL or selector fails before the window's work. s must outlive
 * the window. curl_global_init() must have been called.
 * -ENOENT/-EACCES/-ESRCH when the program or the user is missing, the
 * errors above for a scrape; *ret_err says why.
 */
int sli_window_begin(const struct sli *s, const char *user, unsigned timeout_s,
		     struct sli_window **ret, char **ret_err);
/*
 * A command: wait for it to end, calling tick(userdata) (may be NULL)
 * about every 20 ms; when tick returns true the command is killed and
 * -ECANCELED returned. -ETIMEDOUT when it ran past its limit (killed),
 * -EIO when it could not run, exited non-zero (the message quotes the end
 * of its output) or was killed by a signal. A second call returns the
 * first one's result again. A prometheus SLI: 0 at once.
 */
int sli_window_wait(struct sli_window *w, bool (*tick)(void *), void *userdata, char **ret_err);
/*
 * The window's value. A command: the number on the last line of its
 * output (waits first, without a tick, when sli_window_wait was not
 * called; its failure is returned again). Prometheus: the second scrape
 * and the kind's computation; elapsed_ns, the window's length, divides a
 * rate (0: the time between the two scrapes). -EBADMSG for a value that
 * is no finite number, the errors above otherwise.
 */
int sli_window_end(struct sli_window *w, uint64_t elapsed_ns, double *ret_value, char **ret_err);
/* A command's run time, exec to exit, once it ended (sli_window_wait or _end); else 0. */
uint64_t sli_window_ran_ns(const struct sli_window *w);
/* Kill and reap a command still running, free everything. NULL is fine. */
void sli_window_free(struct sli_window *w);

/*
 * Pure helpers (exposed for tests).
 *
 * The number on the last non-empty line of out: the whole line, spaces
 * and tabs around it trimmed, read by strtod, finite. -EBADMSG otherwise
 * ("", "abc", "1 2", "nan", "12 ms"), *ret_err quoting the line.
 */
int sli_last_number(const char *out, double *ret, char **ret_err);
/* The exposition format's own functions (a selector's sample, a histogram's quantile): prom.h. */
