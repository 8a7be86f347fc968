// SPDX-License-Identifier: MIT
/*
 * The trace page and the job list page: what they show, the picture of the
 * descent in the trace page, its links, and that nothing from a job can
 * become markup.
 */
#include <string.h>

#include "api/descent_svg.h"
#include "api/job_list_html.h"
#include "api/trace_html.h"
#include "tests/tap.h"

/* How often needle occurs in hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

/* The page's <svg> element, copied (caller frees); NULL when it has none. */
static char *svg_of(const char *page)
{
	const char *a = strstr(page, "<svg"), *b = a ? strstr(a, "</svg>") : NULL;

	return b ? strndup(a, b + strlen("</svg>") - a) : NULL;
}

/* tests/fixtures/NAME, from ARGUS_SOURCE_DIR or beside this file. */
static json_t *fixture(const char *name)
{
	const char *src = getenv("ARGUS_SOURCE_DIR"), *slash = strrchr(__FILE__, '/');
	char path[1024];

	if (src)
		snprintf(path, sizeof(path), "%s/tests/fixtures/%s", src, name);
	else if (slash)
		snprintf(path, sizeof(path), "%.*s/fixtures/%s", (int)(slash - __FILE__), __FILE__,
			 name);
	else
		snprintf(path, sizeof(path), "fixtures/%s", name);
	return json_load_file(path, 0, NULL);
}

/* A real descent: three levels, the leaf measured twice, committed. */
static void test_descent_picture(void)
{
	json_t *d = fixture("trace-descent.json");
	const json_t *job = json_object_get(d, "job"), *trace = json_object_get(d, "trace");
	char *html, *svg;
	const char *at_path, *at_svg, *at_steps;

	tap_subtest("descent-picture");
	REQUIRE(d);
	html = trace_render_html(job, trace);
	REQUIRE(html);
	svg = svg_of(html);
	REQUIRE(svg);
	CHECK_EQ(count(html, "<svg"), 1, "one picture");
	/* verdict and path first, then the picture, then the details */
	at_path = strstr(html, "kernel_paging &rarr; kernel_paging.file_fault &rarr; "
			       "kernel_paging.file_fault.major");
	at_svg = strstr(html, "<svg");
	at_steps = strstr(html, "The descent, step by step");
	CHECK(at_path && at_svg && at_steps && at_path < at_svg && at_svg < at_steps);
	CHECK(strstr(html, "class=\"verdict bottleneck\""));

	/* every run a row, every node measured a box named in full */
	CHECK(strstr(svg, ">Level 1</text>"));
	CHECK(strstr(svg, ">Level 2</text>"));
	CHECK(strstr(svg, ">Level 3</text>"));
	CHECK(strstr(svg, ">Level 3 \xc2\xb7 run 2</text>"));
	CHECK(strstr(svg, "<title>kernel_paging</title>"));
	CHECK(strstr(svg, "<title>kernel_paging.file_fault</title>"));
	CHECK(strstr(svg, "<title>kernel_paging.file_fault.major</title>"));
	CHECK(strstr(svg, "<title>kernel_sync</title>"));
	CHECK(strstr(svg, "<title>kernel_paging.tlb_shootdown</title>"));
	CHECK_EQ(count(svg, "<title>kernel_paging.file_fault.page_cache</title>"), 2,
		 "page_cache, in both runs of level 3");
	/* the path taken: one box outlined per run, an arrow below each descend */
	CHECK_EQ(count(svg, "stroke=\"#d9480f\" stroke-width=\"2.5\""), 4, "boxes taken");
	CHECK_EQ(count(svg, "marker-end="), 2, "arrows");
	/* the bars: a band and a dot per metric, z beside it, the flagged in red */
	CHECK(strstr(svg, "kernel_paging/time_ns: now 427.9 ms, reference 18.7 ms \xc2\xb1 2.0 ms, "
			  "expected 19.4 ms, z 204.6, flagged</title>"));
	CHECK(strstr(svg, "fill=\"#d9480f\">z 205</text>"));
	CHECK(strstr(svg, ">z 0.4</text>"));
	CHECK(strstr(svg, "target/wall_ns: now 1.17 s, reference 731.0 ms"));
	/* where and why it stopped */
	CHECK(strstr(svg, "Stopped at level 3: commit \xe2\x86\x92 kernel_paging.file_fault.major "
			  "\xe2\x80\x94 bottleneck</text>"));
	CHECK(strstr(svg, "a leaf: committing; named again by a second run of level 3"));

	/* links: the job list, the job, its trace, its reference */
	CHECK(strstr(html, "<a href=\"/\">"));
	CHECK(strstr(html, "<a href=\"/jobs/12\">"));
	CHECK(strstr(html, "<a href=\"/jobs/12/trace\">"));
	CHECK(strstr(html, "<a href=\"/references/3\">"));
	CHECK(!strstr(html, "<script"));

	/* the picture alone is the same element */
	{
		char *alone = descent_svg_render(job, trace);

		CHECK(alone && strcmp(alone, svg) == 0);
		free(alone);
	}
	free(svg);
	free(html);
	json_decref(d);
}

/* A descent that abstained at level 1: no path, the reason_code and the reason. */
static void test_abstain(void)
{
	json_t *job = json_loads(
	    "{\"id\": 9, \"kind\": \"diagnose\", \"state\": \"succeeded\", \"request\": "
	    "{\"subject\": \"pf_zero_page\", \"reference\": 4},"
	    " \"result\": {\"verdict\": \"no_bottleneck\", \"path\": [], \"reason_code\": "
	    "\"not_slower\", \"reason\": \"target not slower than its reference: wall 731.2 ms vs "
	    "730.9 +- 7.3 ms (z 0.0)\"}}",
	    0, NULL);
	json_t *trace = json_loads(
	    "{\"steps\": [{\"kind\": \"decision\", \"level\": 1, \"action\": \"abstain\", "
	    "\"reason\": \"target not slower\", \"scores\": [{\"metric\": \"kernel_paging/count\", "
	    "\"reference\": 100, \"spread\": 20, \"value\": 101, \"z\": 0.05, \"flagged\": false},"
	    " {\"metric\": \"target/wall_ns\", \"reference\": 730900000, \"spread\": 7309000, "
	    "\"value\": 731200000, \"z\": 0.04, \"flagged\": false}]}]}",
	    0, NULL);
	char *html, *svg;

	tap_subtest("abstain");
	REQUIRE(job && trace);
	html = trace_render_html(job, trace);
	REQUIRE(html);
	svg = svg_of(html);
	REQUIRE(svg);
	CHECK(strstr(svg, "Stopped at level 1: abstain \xe2\x80\x94 no_bottleneck (reason_code "
			  "not_slower)</text>"));
	CHECK(strstr(svg, "target not slower than its reference: wall 731.2 ms"));
	CHECK(strstr(svg, ">abstain</text>"));
	CHECK_EQ(count(svg, "stroke-width=\"2.5\""), 0, "no box taken");
	CHECK_EQ(count(svg, "marker-end="), 0, "no arrow");
	CHECK(strstr(html, "(<code>not_slower</code>)"));
	/* the reference from the request when the result has none */
	CHECK(strstr(html, "<a href=\"/references/4\">"));
	free(svg);
	free(html);
	json_decref(job);
	json_decref(trace);
}

/* The job list: newest first as given, each id a link to its trace page, escaped. */
static void test_job_list(void)
{
	json_t *list = json_loads(
	    "{\"jobs\": [{\"id\": 12, \"kind\": \"diagnose\", \"state\": \"succeeded\","
	    " \"subject\": \"pf_page_cache\", \"created\": \"2026-12-01T03:12:09Z\", \"finished\": "
	    "\"2026-12-01T03:12:24Z\", \"verdict\": \"bottleneck\", \"path\": [\"kernel_paging\", "
	    "\"kernel_paging.file_fault\", \"kernel_paging.file_fault.major\"]},"
	    " {\"id\": 11, \"kind\": \"reference\", \"state\": \"failed\", \"subject\": "
	    "\"a<b>&\\\"c\", \"created\": \"t1\", \"finished\": null}], \"next_before\": 11}",
	    0, NULL);
	json_t *empty = json_pack("{s:[],s:n}", "jobs", "next_before");
	char *html;

	tap_subtest("job-list");
	REQUIRE(list && empty);
	html = job_list_render_html(list);
	REQUIRE(html);
	CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	CHECK(strstr(html, "<a href=\"/jobs/12/trace?format=html\">12</a>"));
	CHECK(strstr(html, "<a href=\"/jobs/11/trace?format=html\">11</a>"));
	CHECK(strstr(html, "/jobs/12/trace") < strstr(html, "/jobs/11/trace"));
	CHECK(strstr(html, "<tr class=\"bottleneck\">"));
	CHECK(strstr(html, "<td><code>kernel_paging.file_fault.major</code></td>"));
	CHECK(strstr(html, "<td>2026-12-01T03:12:24Z</td>"));
	CHECK(strstr(html, "a&lt;b&gt;&amp;&quot;c"));
	CHECK(!strstr(html, "a<b>"));
	CHECK(strstr(html, "<a href=\"/?before=11\">"));
	CHECK(!strstr(html, "<script"));
	free(html);
	html = job_list_render_html(empty);
	REQUIRE(html);
	CHECK(strstr(html, "No jobs yet."));
	CHECK(!strstr(html, "before="));
	free(html);
	json_decref(list);
	json_decref(empty);
}

int main(void)
{
	json_t *job = json_loads(
	    "{\"id\": 7, \"kind\": \"diagnose\", \"state\": \"succeeded\", \"created\": \"t0\","
	    " \"request\": {\"subject\": \"pf<script>alert(1)</script>\"},"
	    " \"result\": {\"verdict\": \"bottleneck\", \"path\": [\"kernel_paging\","
	    " \"kernel_paging.file_fault\", \"kernel_paging.file_fault.major\"],"
	    " \"summary\": \"major & <b>bold</b>\", \"reference\": 3, \"timings\": {\"total_s\": "
	    "3.5},"
	    " \"warnings\": [\"noisy \\\"x\\\"\"], \"unavailable\": [{\"node\": \"n\", \"reason\": "
	    "\"r<\"}]}}",
	    0, NULL);
	json_t *trace =
	    json_loads("{\"steps\": [{\"kind\": \"probe\", \"level\": 1, \"probe\": {\"programs\": "
		       "[\"tp_btf/page_fault_user\"]}},"
		       " {\"kind\": \"measure\", \"level\": 1, \"wall_ns\": 678000000, \"probe\": "
		       "{\"ns_per_run\": 98, \"overhead_fraction\": 0.02}},"
		       " {\"kind\": \"decision\", \"level\": 1, \"action\": \"descend\", \"node\": "
		       "\"kernel_paging\", \"reason\": \"z 204\","
		       "  \"scores\": [{\"metric\": \"kernel_paging/time_ns\", \"reference\": "
		       "18700000, \"spread\": 2000000,"
		       "  \"value\": 427900000, \"z\": 204.5, \"flagged\": true}, {\"metric\": "
		       "\"kernel_sync/count\","
		       "  \"reference\": 5, \"spread\": 20, \"value\": 6, \"z\": 0.05, "
		       "\"flagged\": false}]},"
		       " {\"kind\": \"decision\", \"level\": 2, \"action\": \"a<i>ct\", \"node\": "
		       "\"kernel_paging.<svg onload=x>\", \"reason\": \"r&\\\"<script>\","
		       "  \"scores\": [{\"metric\": \"kernel_paging.<svg onload=x>/c<b>\", \"reference\": 1,"
		       " \"spread\": 1, \"value\": 9, \"z\": 8, \"flagged\": true}]}]}",
		       0, NULL);
	char *html, *svg;

	REQUIRE(job && trace);
	html = trace_render_html(job, trace);
	REQUIRE(html);
	CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	CHECK(strstr(
	    html,
	    "kernel_paging &rarr; kernel_paging.file_fault &rarr; kernel_paging.file_fault.major"));
	CHECK(strstr(html, "<tr class=\"flag\"><td>kernel_paging/time_ns</td><td>18.7 ms</td>"));
	CHECK(strstr(html, "427.9 ms"));
	CHECK(strstr(html, "tp_btf/page_fault_user"));
	CHECK(strstr(html, "3.5 s to diagnose"));
	/* escaped, never markup */
	CHECK(!strstr(html, "<script>"));
	CHECK(strstr(html, "pf&lt;script&gt;alert(1)&lt;/script&gt;"));
	CHECK(strstr(html, "major &amp; &lt;b&gt;bold&lt;/b&gt;"));
	CHECK(strstr(html, "noisy &quot;x&quot;"));
	CHECK(strstr(html, "r&lt;"));
	/* and in the picture: names, metrics, actions, reasons */
	svg = svg_of(html);
	REQUIRE(svg);
	CHECK(!strstr(svg, "<svg onload"));
	CHECK(!strstr(svg, "<script"));
	CHECK(!strstr(svg, "<i>"));
	CHECK(!strstr(svg, "<b>"));
	CHECK(strstr(svg, "<title>kernel_paging.&lt;svg onload=x&gt;</title>"));
	CHECK(strstr(svg, "kernel_paging.&lt;svg onload=x&gt;/c&lt;b&gt;: now 9"));
	CHECK(strstr(svg, ">a&lt;i&gt;ct"));
	CHECK(strstr(svg, "a&lt;i&gt;ct: r&amp;&quot;&lt;script&gt;</title>"));
	CHECK_EQ(count(svg, "<svg"), 1, "one svg element");
	free(svg);
	free(html);

	/* a failed job without result or steps still renders */
	json_decref(job);
	job = json_loads(
	    "{\"id\": 8, \"kind\": \"reference\", \"state\": \"failed\","
	    " \"error\": {\"code\": \"workload_failed\", \"message\": \"exited with status 1\"}}",
	    0, NULL);
	json_decref(trace);
	trace = json_object();
	html = trace_render_html(job, trace);
	REQUIRE(html);
	CHECK(strstr(html, "workload_failed"));
	CHECK(strstr(html, "class=\"verdict failed\""));
	CHECK(!strstr(html, "<svg"));
	CHECK(strstr(html, "<a href=\"/jobs/8/trace\">"));
	CHECK(!strstr(html, "/references/"));
	free(html);
	json_decref(job);
	json_decref(trace);

	test_descent_picture();
	test_abstain();
	test_job_list();
	return tap_done("test-trace-html");
}
