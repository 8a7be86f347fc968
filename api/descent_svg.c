// SPDX-License-Identifier: MIT
/*
 * The descent as a picture. Each "decision" step of the trace is one run of
 * a level and one row: at the left the level, the action and the target's
 * wall time against its reference; then a box per node the run measured
 * (the level's active nodes, read from the prefixes of the run's scores,
 * "kernel_paging.file_fault/time_ns"), each of its metrics a small bar:
 * the reference centre +- spread as a band, the centre as a tick, the value
 * measured now as a dot, red when flagged, and z beside it. The node the
 * run took (descend, commit) is outlined, with an arrow down to the next
 * run. A box at the bottom says where the descent stopped and why, from the
 * job's result (or its error). Sizes are fixed and the SVG scales with its
 * viewBox. Strings go through trace_html_escape and nothing else; text is
 * cut by characters, never within one, so the page's escaping property
 * holds for the picture too.
 */
#include "api/descent_svg.h"
#include "api/trace_html.h"
#include "daemon/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS_MAX 16    /* runs drawn; a descent has at most a few per level */
#define BOXES_MAX 32   /* nodes drawn per run */
#define METRICS_MAX 4  /* metrics drawn per node */
#define COLS 5	       /* boxes per line of a row */
#define NAME_CHARS 21  /* of a node's name in its box */
#define REASON_LINES 6 /* of the stop's reason */

#define PAD 8
#define LEGEND_H 30
#define LABEL_W 184 /* the column of level, action and target */
#define LABEL_H 68
#define CELL_W 168
#define CELL_GAP 10
#define CELL_HEAD 24
#define METRIC_H 20
#define METRIC_LABEL_W 36
#define BAR_W 72
#define ROW_GAP 30
#define LINE_H 16

#define C_TAKEN "#d9480f" /* the path taken, flagged values */
#define C_ABSTAIN "#1c5fb5"
#define C_FAILED "#c92a2a"
#define C_BAND "#cfe0f5"
#define C_CENTRE "#4a78b5"
#define C_TEXT_MUTED "#666"

#define ELLIPSIS "\xe2\x80\xa6"
#define ARROW "\xe2\x86\x92"
#define PLUSMINUS "\xc2\xb1"

struct box {
	char *id; /* the node, as its scores name it (owned) */
	const json_t *scores[METRICS_MAX];
	size_t n_scores;
	bool flagged;
};

struct run {
	long long level;
	int nth; /* 1 for the level's first run, 2 for the one measured again, ... */
	const char *action, *node, *reason;
	const json_t *wall; /* the target's wall time score, or NULL */
	struct box boxes[BOXES_MAX];
	size_t n_boxes;
	bool cut;  /* nodes beyond BOXES_MAX were left out */
	int taken; /* the box of the node taken, -1 for none */
};

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The bytes of s's first n characters (UTF-8), all of s when it is shorter. */
static size_t chars_len(const char *s, size_t n)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
			break;
	return i;
}

/* The first len bytes of s, escaped. */
static void esc_n(FILE *f, const char *s, size_t len)
{
	_cleanup_free_ char *piece = xstrndup(s, len);

	trace_html_escape(f, piece);
}

/* s escaped, cut after max characters with an ellipsis; NULL writes nothing. */
static void text_cut(FILE *f, const char *s, size_t max)
{
	size_t len;

	if (!s)
		return;
	len = chars_len(s, max);
	esc_n(f, s, len);
	if (s[len])
		fputs(ELLIPSIS, f);
}

/*
 * s as <text> lines at x, y, y + LINE_H, ...: at most width characters
 * each, broken at a space when the line has one, at most max_lines (the
 * last cut with an ellipsis). Returns the lines written.
 */
static int text_lines(FILE *f, double x, double y, const char *s, size_t width, int max_lines)
{
	int n = 0;

	while (s && *s && n < max_lines) {
		size_t len = chars_len(s, width), cut = len;

		if (s[len] && n < max_lines - 1) {
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = len;
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x, y + n * LINE_H);
		esc_n(f, s, cut);
		if (s[cut] && n == max_lines - 1)
			fputs(ELLIPSIS, f);
		fputs("</text>", f);
		s += cut;
		while (*s == ' ')
			s++;
		n++;
	}
	return n;
}

/* The last dotted component of a node id: "major" of "kernel_paging.file_fault.major". */
static const char *short_name(const char *id)
{
	const char *dot = strrchr(id, '.');

	return dot && dot[1] ? dot + 1 : id;
}

/* A metric's value in its unit, as text: times in ms or s, counts as integers. */
static const char *value_text(char *buf, size_t size, const char *metric, double v)
{
	bool time = metric && (strstr(metric, "time_ns") || strstr(metric, "wall_ns"));

	if (!isfinite(v))
		snprintf(buf, size, "\xe2\x80\x93");
	else if (time && fabs(v) >= 1e9)
		snprintf(buf, size, "%.2f s", v / 1e9);
	else if (time)
		snprintf(buf, size, "%.1f ms", v / 1e6);
	else
		snprintf(buf, size, "%.0f", v);
	return buf;
}

/* z as text: to a tenth when precise or small, else to fewer digits. */
static const char *z_text(char *buf, size_t size, double z, bool precise)
{
	if (!isfinite(z))
		snprintf(buf, size, "z \xe2\x80\x93");
	else if (fabs(z) < 100 || (precise && fabs(z) < 1e15))
		snprintf(buf, size, "z %.1f", z);
	else if (fabs(z) < 1e6)
		snprintf(buf, size, "z %.0f", z);
	else
		snprintf(buf, size, "z %.2g", z);
	return buf;
}

/* The largest of hi and t, t counting only when finite. */
static double upper(double hi, double t)
{
	return isfinite(t) && t > hi ? t : hi;
}

/* Where t lies on a bar from x0 that shows 0 to hi. */
static double bar_x(double x0, double hi, double t)
{
	double frac = t / hi;

	if (!(frac > 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	return x0 + frac * BAR_W;
}

/*
 * One score as a line at x, y: label (NULL: the metric's own name), the
 * bar (0 to a little above the largest of centre + spread, value and
 * expected), z; the numbers in full as its tooltip.
 */
static void metric_line(FILE *f, double x, double y, const char *label, const json_t *sc)
{
	const char *metric = str(sc, "metric"), *name = metric ? strrchr(metric, '/') : NULL;
	bool flagged = json_is_true(json_object_get(sc, "flagged"));
	double c = num(sc, "reference"), s = num(sc, "spread"), v = num(sc, "value");
	double e = num(sc, "expected"), x0 = x + METRIC_LABEL_W, yb = y + 10, hi = 0;
	char b1[48], b2[48], b3[48];

	name = name ? name + 1 : metric;
	hi = upper(upper(upper(hi, c + s), v), e);
	hi = hi > 0 && isfinite(hi * 1.1) ? hi * 1.1 : 1;

	fputs("<g><title>", f);
	trace_html_escape(f, metric);
	fprintf(f, ": now %s, reference %s " PLUSMINUS " %s", value_text(b1, sizeof(b1), metric, v),
		value_text(b2, sizeof(b2), metric, c), value_text(b3, sizeof(b3), metric, s));
	if (isfinite(e))
		fprintf(f, ", expected %s", value_text(b1, sizeof(b1), metric, e));
	fprintf(f, ", %s%s</title>", z_text(b1, sizeof(b1), num(sc, "z"), true),
		flagged ? ", flagged" : "");

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"" C_TEXT_MUTED "\">", x,
		y + 14);
	if (label)
		fputs(label, f);
	else if (name && !strcmp(name, "time_ns"))
		fputs("time", f);
	else
		text_cut(f, name, 6);
	fputs("</text>", f);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>", x0,
		yb, x0 + BAR_W, yb);
	if (isfinite(c) && isfinite(s)) {
		double lo = bar_x(x0, hi, c - s), up = bar_x(x0, hi, c + s);

		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" fill=\"" C_BAND
			"\"/>",
			lo, yb - 5, fmax(up - lo, 1));
	}
	if (isfinite(c))
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_CENTRE
			"\" stroke-width=\"1.5\"/>",
			bar_x(x0, hi, c), yb - 6, bar_x(x0, hi, c), yb + 6);
	if (isfinite(v))
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>",
			bar_x(x0, hi, v), yb, flagged ? C_TAKEN : "#333");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\"%s>%s</text></g>", x0 + BAR_W + 6,
		y + 14, flagged ? " font-weight=\"bold\" fill=\"" C_TAKEN "\"" : "",
		z_text(b1, sizeof(b1), num(sc, "z"), false));
}

static int find_box(const struct run *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->n_boxes; i++)
		if (strcmp(r->boxes[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* The run's scores into boxes by node, in the order the scores name them; the target apart. */
static void read_scores(struct run *r, const json_t *scores)
{
	const json_t *sc;
	size_t i;

	json_array_foreach (scores, i, sc) {
		const char *m = str(sc, "metric"), *slash;
		_cleanup_free_ char *id = NULL;
		struct box *b;
		int k;

		if (!m)
			continue;
		slash = strrchr(m, '/');
		id = slash ? xstrndup(m, slash - m) : xstrdup(m);
		if (strcmp(id, "target") == 0) {
			if (!r->wall || strcmp(m, "target/wall_ns") == 0)
				r->wall = sc;
			continue;
		}
		k = find_box(r, id);
		if (k < 0) {
			if (r->n_boxes == BOXES_MAX) {
				r->cut = true;
				continue;
			}
			k = (int)r->n_boxes++;
			r->boxes[k].id = TAKE_PTR(id);
		}
		b = &r->boxes[k];
		if (b->n_scores < METRICS_MAX)
			b->scores[b->n_scores++] = sc;
		if (json_is_true(json_object_get(sc, "flagged")))
			b->flagged = true;
	}
}

/* The trace's decision steps as runs, in order; returns how many (at most RUNS_MAX). */
static size_t read_runs(const json_t *trace, struct run *runs)
{
	const json_t *st;
	size_t i, j, n = 0;

	json_array_foreach (json_object_get(trace, "steps"), i, st) {
		const char *kind = str(st, "kind");
		struct run *r = &runs[n];

		if (!kind || strcmp(kind, "decision") != 0)
			continue;
		if (n == RUNS_MAX)
			break;
		r->level = json_integer_value(json_object_get(st, "level"));
		r->nth = 1;
		for (j = 0; j < n; j++)
			if (runs[j].level == r->level)
				r->nth++;
		r->action = str(st, "action");
		r->node = str(st, "node");
		r->reason = str(st, "reason");
		r->taken = -1;
		read_scores(r, json_object_get(st, "scores"));
		if (r->node && r->action &&
		    (strcmp(r->action, "descend") == 0 || strcmp(r->action, "commit") == 0))
			r->taken = find_box(r, r->node);
		n++;
	}
	return n;
}

static void runs_free(struct run *runs, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < runs[i].n_boxes; j++)
			free(runs[i].boxes[j].id);
	free(runs);
}

static const char *action_colour(const char *action)
{
	if (action && (!strcmp(action, "descend") || !strcmp(action, "commit")))
		return C_TAKEN;
	if (action && !strcmp(action, "abstain"))
		return C_ABSTAIN;
	return C_TEXT_MUTED;
}

/* The legend, on top: what band, tick, dot, red and outline mean. */
static void legend(FILE *f, double tau)
{
	double y = PAD + 12;

	fprintf(f,
		"<g font-size=\"11\" fill=\"#444\">"
		"<rect x=\"%d\" y=\"%.1f\" width=\"22\" height=\"10\" fill=\"" C_BAND "\"/>"
		"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"" C_CENTRE
		"\" stroke-width=\"1.5\"/>"
		"<text x=\"%d\" y=\"%.1f\">reference mean " PLUSMINUS " spread</text>"
		"<circle cx=\"%d\" cy=\"%.1f\" r=\"3.5\" fill=\"#333\"/>"
		"<text x=\"%d\" y=\"%.1f\">measured now</text>"
		"<circle cx=\"%d\" cy=\"%.1f\" r=\"3.5\" fill=\"" C_TAKEN "\"/>",
		PAD, y - 5, PAD + 11, y - 7, PAD + 11, y + 7, PAD + 28, y + 4, PAD + 200, y,
		PAD + 210, y + 4, PAD + 310, y);
	if (isfinite(tau))
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">flagged (z &gt; %g)</text>", PAD + 320, y + 4,
			tau);
	else
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">flagged (z &gt; tau)</text>", PAD + 320,
			y + 4);
	fprintf(f,
		"<rect x=\"%d\" y=\"%.1f\" width=\"22\" height=\"14\" rx=\"3\" fill=\"#fff4ec\" "
		"stroke=\"" C_TAKEN "\" stroke-width=\"2\"/>"
		"<text x=\"%d\" y=\"%.1f\">the path taken</text></g>",
		PAD + 450, y - 7, PAD + 478, y + 4);
}

/* One node's box at x, y, h high. */
static void draw_box(FILE *f, const struct box *b, double x, double y, double h, bool taken)
{
	size_t k;

	fputs("<g><title>", f);
	trace_html_escape(f, b->id);
	fprintf(f,
		"</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" rx=\"5\" "
		"fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>",
		x, y, CELL_W, h, taken ? "#fff4ec" : "#fff", taken ? C_TAKEN : "#bbb",
		taken ? "2.5" : "1");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-weight=\"bold\"%s>", x + 8,
		y + 16, taken ? " fill=\"" C_TAKEN "\"" : "");
	text_cut(f, short_name(b->id), NAME_CHARS);
	fputs("</text>", f);
	for (k = 0; k < b->n_scores; k++)
		metric_line(f, x + 6, y + CELL_HEAD + k * METRIC_H, NULL, b->scores[k]);
	fputs("</g>", f);
}

/* The level, its action (and the node when its box is not in the row) and the target's wall. */
static void draw_label(FILE *f, const struct run *r, double y)
{
	fputs("<g><title>", f);
	trace_html_escape(f, r->action);
	if (r->reason) {
		fputs(": ", f);
		trace_html_escape(f, r->reason);
	}
	fprintf(
	    f, "</title><text x=\"%d\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">Level %lld",
	    PAD, y + 16, r->level);
	if (r->nth > 1)
		fprintf(f, " \xc2\xb7 run %d", r->nth);
	fprintf(f, "</text><text x=\"%d\" y=\"%.1f\" fill=\"%s\" font-weight=\"bold\">", PAD,
		y + 34, action_colour(r->action));
	text_cut(f, r->action ?: "?", 12);
	if (r->node && r->taken < 0) {
		fputs(" " ARROW " ", f);
		text_cut(f, short_name(r->node), NAME_CHARS);
	}
	fputs("</text>", f);
	if (r->wall)
		metric_line(f, PAD, y + 40, "target", r->wall);
	if (r->cut)
		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"" C_TEXT_MUTED
			"\">more nodes than drawn</text>",
			PAD, y + 74);
	fputs("</g>", f);
}

/*
 * Where and why the descent stopped, as a box at y, w wide: from the
 * result (the committed node or abstain, verdict, reason_code, reason), or
 * the error of a job that did not finish. Returns its height, -1 when
 * memory ran out.
 */
static double draw_stop(FILE *f, const json_t *job, const struct run *last, double y, double w)
{
	const json_t *res = json_object_get(job, "result"), *err = json_object_get(job, "error");
	const json_t *path = json_object_get(res, "path");
	const char *fill = "#eef4ff", *stroke = C_ABSTAIN, *reason, *code = NULL, *code_is = "";
	size_t width = (size_t)((w - 24) / 7), len = 0;
	_cleanup_free_ char *text = NULL;
	FILE *g = open_memstream(&text, &len); /* the text, drawn after the box it sizes */
	double h;
	int lines;

	if (!g)
		return -1;
	fprintf(g, "<text x=\"%d\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">", PAD + 12,
		y + 20);
	if (json_is_object(res)) {
		const char *node =
		    json_string_value(json_array_get(path, json_array_size(path) - 1));

		fprintf(g, "Stopped at level %lld: ", last->level);
		if (node) {
			fputs("commit " ARROW " ", g);
			trace_html_escape(g, node);
			fill = "#fff1e6";
			stroke = C_TAKEN;
		} else {
			fputs("abstain", g);
		}
		if (str(res, "verdict")) {
			fputs(" \xe2\x80\x94 ", g);
			trace_html_escape(g, str(res, "verdict"));
		}
		code = str(res, "reason_code");
		code_is = "reason_code";
		reason = str(res, "reason") ?: last->reason;
	} else if (err) {
		fputs("Did not finish: ", g);
		trace_html_escape(g, str(job, "state") ?: "failed");
		code = str(err, "code");
		code_is = "error";
		reason = str(err, "message");
		fill = "#fde8e8";
		stroke = C_FAILED;
	} else {
		fputs("Not finished: ", g);
		trace_html_escape(g, str(job, "state") ?: "?");
		reason = str(job, "step");
	}
	if (code) {
		fprintf(g, " (%s ", code_is);
		trace_html_escape(g, code);
		fputs(")", g);
	}
	fputs("</text>", g);
	lines = text_lines(g, PAD + 12, y + 40, reason, width, REASON_LINES);
	if (reason) {
		fputs("<title>", g);
		trace_html_escape(g, reason);
		fputs("</title>", g);
	}
	if (fclose(g) != 0)
		return -1;
	h = 30 + lines * LINE_H;
	fprintf(f,
		"<g><rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" fill=\"%s\" "
		"stroke=\"%s\"/>%s</g>",
		PAD, y, w, h, fill, stroke, text);
	return h;
}

char *descent_svg_render(const json_t *job, const json_t *trace)
{
	const json_t *res = json_object_get(job, "result");
	struct run *runs = calloc(RUNS_MAX, sizeof(*runs));
	double y, w, tau = num(res, "tau"), prev_x = NAN, prev_bottom = 0, stop_h;
	char *body = NULL, *out = NULL;
	size_t n, i, k, len = 0, cols = 3;
	FILE *f;

	if (!runs)
		return NULL;
	n = read_runs(trace, runs);
	if (n == 0) {
		runs_free(runs, n);
		return strdup("");
	}
	for (i = 0; i < n; i++)
		if (runs[i].n_boxes > cols)
			cols = runs[i].n_boxes < COLS ? runs[i].n_boxes : COLS;
	w = PAD + LABEL_W + cols * (CELL_W + CELL_GAP) - CELL_GAP + PAD;
	if (!isfinite(tau))
		tau = num(json_object_get(job, "request"), "tau");

	f = open_memstream(&body, &len);
	if (!f) {
		runs_free(runs, n);
		return NULL;
	}
	legend(f, tau);
	y = PAD + LEGEND_H;
	for (i = 0; i < n; i++) {
		const struct run *r = &runs[i];
		size_t most = 1, lines = r->n_boxes ? (r->n_boxes + COLS - 1) / COLS : 1;
		double cell_h, h;

		for (k = 0; k < r->n_boxes; k++)
			if (r->boxes[k].n_scores > most)
				most = r->boxes[k].n_scores;
		cell_h = CELL_HEAD + most * METRIC_H + 4;
		h = fmax(LABEL_H, lines * cell_h + (lines - 1) * CELL_GAP);

		/* the path taken: from the node the run above took to this run */
		if (isfinite(prev_x))
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"" C_TAKEN "\" stroke-width=\"2\" "
				"marker-end=\"url(#argus-descent-arrow)\"/>",
				prev_x, prev_bottom, prev_x, y - 3);
		prev_x = NAN;
		if (i > 0)
			fprintf(f,
				"<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#e4e4e4\"/>",
				PAD, y - ROW_GAP / 2.0, w - PAD, y - ROW_GAP / 2.0);
		draw_label(f, r, y);
		if (!r->n_boxes)
			fprintf(f,
				"<text x=\"%d\" y=\"%.1f\" fill=\"" C_TEXT_MUTED
				"\">no node measured</text>",
				PAD + LABEL_W, y + 34);
		for (k = 0; k < r->n_boxes; k++) {
			double bx = PAD + LABEL_W + (k % COLS) * (CELL_W + CELL_GAP);
			double by = y + (k / COLS) * (cell_h + CELL_GAP);

			draw_box(f, &r->boxes[k], bx, by, cell_h, (int)k == r->taken);
			if ((int)k == r->taken && r->action && !strcmp(r->action, "descend")) {
				prev_x = bx + CELL_W / 2.0;
				prev_bottom = by + cell_h;
			}
		}
		y += h + ROW_GAP;
	}
	y -= ROW_GAP - 12;
	stop_h = draw_stop(f, job, &runs[n - 1], y, w - 2 * PAD);
	if (fclose(f) != 0)
		stop_h = -1;
	if (stop_h >= 0 &&
	    asprintf(
		&out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"system-ui,sans-serif\" "
		"font-size=\"12\" fill=\"#222\"><title>The descent of job %lld</title>"
		"<defs><marker id=\"argus-descent-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" "
		"refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
		"<path d=\"M0,0L10,5L0,10z\" fill=\"" C_TAKEN "\"/></marker></defs>%s</svg>",
		w, y + stop_h + PAD, w, y + stop_h + PAD,
		(long long)json_integer_value(json_object_get(job, "id")), body) < 0)
		out = NULL;
	free(body);
	runs_free(runs, n);
	return out;
}
