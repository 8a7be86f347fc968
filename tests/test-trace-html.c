// SPDX-License-Identifier: MIT
/* The trace page: what it shows, and that nothing from a job can become markup. */
#include <string.h>

#include "api/trace_html.h"
#include "tests/tap.h"

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
		       "\"flagged\": false}]}]}",
		       0, NULL);
	char *html;

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
	free(html);
	json_decref(job);
	json_decref(trace);
	return tap_done("test-trace-html");
}
