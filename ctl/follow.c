// SPDX-License-Identifier: MIT
/*
 * Following a job (follow.h). Each poll after the first is a long poll,
 * GET /jobs/ID?wait=FOLLOW_WAIT_S, sending the last ETag as If-None-Match:
 * argusd answers when the job changes (304 while it has not) or after the
 * wait. An argusd that ignores the parameter answers at once; a poll that
 * came back sooner than FOLLOW_MIN_INTERVAL_MS is then followed by a sleep
 * for the rest of it, so that following never spins, whatever the daemon.
 * On a terminal the progress line is redrawn about once a second while a
 * poll waits (the transport's tick), so the seconds keep counting.
 */
#include "ctl/follow.h"
#include "ctl/render.h"
#include "ctl/text.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define LINE_INDENT "   "

struct follow {
	FILE *out; /* NULL: nothing shown */
	bool tty;
	size_t width;	   /* the terminal's columns; lines are cut to fit */
	const json_t *job; /* the latest answer */
	uint64_t start_ns; /* CLOCK_MONOTONIC when following began */
	char *shown;	   /* the last line shown, without its seconds */
	size_t drawn;	   /* bytes on the terminal's line */
	long drawn_s;	   /* the seconds it shows */
};

bool job_state_ended(const char *state)
{
	return !state || (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The seconds since the epoch of a job time ("2026-11-29T07:32:14Z"); false when it is not one. */
static bool parse_time(const char *s, time_t *ret)
{
	struct tm tm = {};
	const char *end;

	if (!s)
		return false;
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return false;
	*ret = timegm(&tm);
	return *ret != (time_t)-1;
}

/*
 * Seconds the job has run: from its start to its end (or now) as argusd
 * wrote them, else since following began (a queued job, a time that does
 * not parse, a clock that disagrees).
 */
static long elapsed_s(const struct follow *fw)
{
	const char *started = json_string_value(json_object_get(fw->job, "started"));
	const char *finished = json_string_value(json_object_get(fw->job, "finished"));
	time_t t0, t1;

	if (parse_time(started, &t0)) {
		if (!parse_time(finished, &t1))
			t1 = time(NULL);
		if (t1 >= t0)
			return (long)(t1 - t0);
	}
	return (long)((mono_ns() - fw->start_ns) / 1000000000ull);
}

/* "[running] 42% level 2 under kernel_paging", the line without its seconds (caller frees). */
static char *progress_key(const json_t *job)
{
	_cleanup_free_ char *words = progress_words(job);
	double p = json_number_value(json_object_get(job, "progress"));

	p = p < 0 ? 0 : p > 1 ? 1 : p;
	return strprintf("[%s] %.0f%%%s%s", json_string_value(json_object_get(job, "state")) ?: "?",
			 floor(p * 100), words[0] ? " " : "", words);
}

/* Redraw the terminal's line in place: the new text, blanks over what the old one had more. */
static void draw_tty(struct follow *fw, long secs)
{
	_cleanup_free_ char *line = strprintf(LINE_INDENT "%s (%ld s)", fw->shown, secs);
	size_t len = strlen(line), pad;

	if (fw->width > 1 && len > fw->width - 1)
		len = fw->width - 1;
	fputc('\r', fw->out);
	text_emit(fw->out, line, len);
	for (pad = len; pad < fw->drawn; pad++)
		fputc(' ', fw->out);
	fw->drawn = len;
	fw->drawn_s = secs;
	fflush(fw->out);
}

/* Show the latest answer: on a terminal always (the seconds move), else when it changed. */
static void show(struct follow *fw)
{
	_cleanup_free_ char *key = NULL;
	bool changed;

	if (!fw->out)
		return;
	key = progress_key(fw->job);
	changed = !fw->shown || strcmp(fw->shown, key) != 0;
	if (changed) {
		free(fw->shown);
		fw->shown = TAKE_PTR(key);
	}
	if (fw->tty) {
		draw_tty(fw, elapsed_s(fw));
	} else if (changed) {
		_cleanup_free_ char *line =
		    strprintf(LINE_INDENT "%s (%ld s)\n", fw->shown, elapsed_s(fw));

		text_emit(fw->out, line, strlen(line));
		fflush(fw->out);
	}
}

/* While a poll waits: the terminal's seconds keep counting. */
static void tick(void *userdata)
{
	struct follow *fw = userdata;
	long secs;

	if (!fw->out || !fw->tty || !fw->shown)
		return;
	secs = elapsed_s(fw);
	if (secs != fw->drawn_s)
		draw_tty(fw, secs);
}

/* The state of an answer to GET /jobs/ID; NULL (and *ret_err) when it has none. */
static const char *answer_state(const struct client_reply *r, const char *path, char **ret_err)
{
	const char *state = json_string_value(json_object_get(r->json, "state"));

	if (!state)
		*ret_err = strprintf("GET %s: the answer names no job state", path);
	return state;
}

int follow_job(struct client *c, long long id, FILE *out, struct client_reply *ret, char **ret_err)
{
	_cleanup_free_ char *path = strprintf("/jobs/%lld", id);
	_cleanup_free_ char *wait_path = strprintf("/jobs/%lld?wait=%d", id, FOLLOW_WAIT_S);
	struct follow fw = {.out = out, .start_ns = mono_ns(), .drawn_s = -1};
	struct client_reply cur = {}, next;
	const char *state;
	struct winsize ws;
	uint64_t t0, took_ms;
	int r;

	if (out && isatty(fileno(out))) {
		fw.tty = true;
		if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
			fw.width = ws.ws_col;
	}
	r = client_call(c, "GET", path, NULL, NULL, &cur, ret_err);
	if (r < 0)
		return r;
	state = answer_state(&cur, path, ret_err);
	if (!state) {
		r = -EBADMSG;
		goto out;
	}
	fw.job = cur.json;
	show(&fw);
	client_set_tick(c, tick, &fw);
	while (!job_state_ended(state)) {
		t0 = mono_ns();
		r = client_call(c, "GET", wait_path, NULL, cur.etag, &next, ret_err);
		if (r < 0)
			goto out;
		if (next.status == 304) {
			client_reply_clear(&next);
		} else {
			if (!answer_state(&next, wait_path, ret_err)) {
				client_reply_clear(&next);
				r = -EBADMSG;
				goto out;
			}
			client_reply_clear(&cur);
			cur = next;
			fw.job = cur.json;
			state = json_string_value(json_object_get(cur.json, "state"));
		}
		show(&fw);
		took_ms = (mono_ns() - t0) / 1000000;
		if (!job_state_ended(state) && took_ms < FOLLOW_MIN_INTERVAL_MS)
			sleep_ms(FOLLOW_MIN_INTERVAL_MS - took_ms);
	}
	*ret = cur;
	cur = (struct client_reply){};
	r = 0;
out:
	client_set_tick(c, NULL, NULL);
	if (fw.tty && fw.drawn) {
		fputc('\n', fw.out);
		fflush(fw.out);
	}
	free(fw.shown);
	client_reply_clear(&cur);
	return r;
}
