// SPDX-License-Identifier: MIT
/*
 * argusctl: the command-line client of argusd's HTTP API. The options are
 * parsed once, against one table of command options; a table of commands
 * says which of them each command takes and runs it. A command sends its
 * requests through the client (client.c), follows jobs (follow.c) and
 * prints what came back (render.c), or with --json the answer itself. The
 * exit status says how it ended (render.h's ctl_exit, the man page's EXIT
 * STATUS): 0 clean, 1 a diagnosis named a path, 2 an error of any kind.
 */
#include "ctl/client.h"
#include "ctl/follow.h"
#include "ctl/render.h"
#include "ctl/text.h"
#include "daemon/paths-config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <curl/curl.h>

/* argusd's control socket with the packaged configuration (config_unix_path) */
#define DEFAULT_SOCKET "/run/argusd/argusd.sock"

/* ---- options ---- */

/* The options of commands; each command takes a set of them (struct command). */
enum cmd_opt {
	CO_FOLLOW,
	CO_PID,
	CO_UNIT,
	CO_SERVICE,
	CO_REFERENCE,
	CO_REPEATS,
	CO_AGENT,
	CO_TAU,
	CO_MAX_DEPTH,
	CO_WINDOW,
	CO_STATE,
	CO_KIND,
	CO_SUBJECT,
	CO_SINCE,
	CO_UNTIL,
	CO_LIMIT,
	CO_BEFORE,
	N_CMD_OPTS,
};

static const struct {
	const char *name;
	bool has_arg;
} cmd_opts[N_CMD_OPTS] = {
    [CO_FOLLOW] = {"follow", false},	  [CO_PID] = {"pid", true},
    [CO_UNIT] = {"unit", true},		  [CO_SERVICE] = {"service", true},
    [CO_REFERENCE] = {"reference", true}, [CO_REPEATS] = {"repeats", true},
    [CO_AGENT] = {"agent", true},	  [CO_TAU] = {"tau", true},
    [CO_MAX_DEPTH] = {"max-depth", true}, [CO_WINDOW] = {"window", true},
    [CO_STATE] = {"state", true},	  [CO_KIND] = {"kind", true},
    [CO_SUBJECT] = {"subject", true},	  [CO_SINCE] = {"since", true},
    [CO_UNTIL] = {"until", true},	  [CO_LIMIT] = {"limit", true},
    [CO_BEFORE] = {"before", true},
};

/* getopt_long's values: a command option is CMD_OPT_BASE + its enum cmd_opt. */
enum {
	OPT_SOCKET = 0x100,
	OPT_URL,
	OPT_TOKEN_FILE,
	OPT_JSON,
	OPT_VERSION,
	CMD_OPT_BASE = 0x200,
};

#define BIT(o) (1u << (o))
#define SUBJECT_OPTS (BIT(CO_PID) | BIT(CO_UNIT) | BIT(CO_SERVICE))

struct args {
	const char *socket, *url, *token_file;
	bool json, quiet;
	unsigned given;		       /* the command options given, BIT(enum cmd_opt) */
	const char *value[N_CMD_OPTS]; /* their arguments */
};

struct ctx {
	struct args a;
	struct client *c;
	FILE *progress; /* where following shows progress: stdout, stderr with --json, or NULL */
};

/* A usage error: said on stderr with where to read more; the exit status. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	print_error("%s; see argusctl --help", msg ?: "bad usage");
	return CTL_EXIT_ERROR;
}

/* s as an integer in [min, max]; false when it is not one. */
static bool parse_int(const char *s, long long min, long long max, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

/* ---- output ---- */

/* The answer as it came (--json), one document a line. */
static void print_raw(const struct client_reply *r)
{
	fwrite(r->body, 1, r->len, stdout);
	if (!r->len || r->body[r->len - 1] != '\n')
		fputc('\n', stdout);
}

/* A printout of render.c on stdout, cleaned for the terminal. */
static void print_rendered(void (*render)(FILE *, const json_t *), const json_t *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		abort();
	render(m, doc);
	if (fclose(m) != 0)
		abort();
	text_emit(stdout, text, len);
	free(text);
}

/* A line of progress (not a result): where following shows progress, if anywhere. */
static void print_progress(const struct ctx *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void print_progress(const struct ctx *x, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;

	if (!x->progress)
		return;
	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (line)
		text_emit(x->progress, line, strlen(line));
	fflush(x->progress);
}

/* ---- requests ---- */

/* One call whose failure ends the command: told on stderr, -errno returned. */
static int call(struct ctx *x, const char *method, const char *path, const json_t *body,
		struct client_reply *ret)
{
	_cleanup_free_ char *err = NULL;
	int r = client_call(x->c, method, path, body, NULL, ret, &err);

	if (r < 0)
		print_error("%s", err);
	return r;
}

/* GET path and print it with render, or as it came with --json. */
static int get_and_print(struct ctx *x, const char *path, void (*render)(FILE *, const json_t *))
{
	struct client_reply r;

	if (call(x, "GET", path, NULL, &r) < 0)
		return CTL_EXIT_ERROR;
	if (x->a.json)
		print_raw(&r);
	else
		print_rendered(render, r.json);
	client_reply_clear(&r);
	return CTL_EXIT_CLEAN;
}

/* ---- jobs ---- */

static const char *job_kind(const json_t *job)
{
	return json_string_value(json_object_get(job, "kind")) ?: "";
}

/*
 * The exit status a job's state and result give: 0 while it runs or when it
 * is not a diagnosis, the verdict's for a diagnosis that succeeded, 2 (told
 * on stderr) for one that did not succeed.
 */
static int job_exit(const json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "state"));
	long long id = json_integer_value(json_object_get(job, "id"));
	const json_t *error = json_object_get(job, "error");
	int ex;

	if (!job_state_ended(state))
		return CTL_EXIT_CLEAN;
	if (!state || strcmp(state, "succeeded") != 0) {
		print_error("job %lld %s: %s: %s", id, state ?: "ended without a state",
			    json_string_value(json_object_get(error, "code")) ?: "no error code",
			    json_string_value(json_object_get(error, "message")) ?: "no message");
		return CTL_EXIT_ERROR;
	}
	if (strcmp(job_kind(job), "diagnose") != 0)
		return CTL_EXIT_CLEAN;
	ex = verdict_exit(json_object_get(job, "result"));
	if (ex == CTL_EXIT_ERROR)
		print_error("job %lld succeeded but its result names no verdict", id);
	return ex;
}

/* The end of a followed job: the reference, or the descent and the verdict; the exit status. */
static int finish_job(struct ctx *x, const struct client_reply *job)
{
	const json_t *j = job->json, *result = json_object_get(j, "result");
	long long id = json_integer_value(json_object_get(j, "id"));
	_cleanup_free_ char *path = NULL;
	struct client_reply trace;
	int ex = job_exit(j);

	if (x->a.json) {
		print_raw(job);
		return ex;
	}
	if (ex == CTL_EXIT_ERROR)
		return ex;
	if (strcmp(job_kind(j), "reference") == 0) {
		print_rendered(render_reference, result);
		return ex;
	}
	if (strcmp(job_kind(j), "diagnose") != 0)
		return ex;
	path = strprintf("/jobs/%lld/trace", id);
	if (call(x, "GET", path, NULL, &trace) < 0) {
		ex = CTL_EXIT_ERROR;
	} else {
		printf("\nthe descent (job %lld)\n", id);
		print_rendered(render_descent, trace.json);
		client_reply_clear(&trace);
	}
	printf("\nthe verdict (job %lld)\n", id);
	print_rendered(render_verdict, result);
	return ex;
}

static int follow_and_finish(struct ctx *x, long long id)
{
	_cleanup_free_ char *err = NULL;
	struct client_reply job;
	int ex;

	if (follow_job(x->c, id, x->progress, &job, &err) < 0) {
		print_error("following job %lld: %s", id, err);
		return CTL_EXIT_ERROR;
	}
	ex = finish_job(x, &job);
	client_reply_clear(&job);
	return ex;
}

/* POST a job; with follow, follow it to its end. */
static int submit(struct ctx *x, const char *path, const json_t *body, bool follow)
{
	struct client_reply r;
	long long id;

	if (call(x, "POST", path, body, &r) < 0)
		return CTL_EXIT_ERROR;
	id = json_integer_value(json_object_get(r.json, "id"));
	if (id <= 0) {
		print_error("POST %s: the answer names no job id", path);
		client_reply_clear(&r);
		return CTL_EXIT_ERROR;
	}
	if (!follow) {
		if (x->a.json)
			print_raw(&r);
		else
			printf("job %lld queued; argusctl job %lld --follow follows it\n", id, id);
		client_reply_clear(&r);
		return CTL_EXIT_CLEAN;
	}
	client_reply_clear(&r);
	print_progress(x, "job %lld queued\n", id);
	return follow_and_finish(x, id);
}

/* The job id of an operand; false (told) when it is not one. */
static bool job_id(const char *s, long long *ret)
{
	if (parse_int(s, 1, LLONG_MAX, ret))
		return true;
	usage_error("job id \"%s\" is not a positive integer", s);
	return false;
}

/* ---- request bodies ---- */

/*
 * The subject of a diagnosis or a reference into body: a workload by name,
 * or one of --pid, --unit, --service. Returns 0, or the usage error's exit
 * status.
 */
static int put_subject(const struct args *a, const char *name, json_t *body)
{
	long long pid;
	int n = !!name + !!(a->given & BIT(CO_PID)) + !!(a->given & BIT(CO_UNIT)) +
		!!(a->given & BIT(CO_SERVICE));

	if (n != 1)
		return usage_error("name one subject: a workload NAME, --pid N, --unit U or "
				   "--service S");
	if (name)
		return json_object_set_new(body, "workload", json_string(name)) < 0
			   ? usage_error("workload name \"%s\" is not UTF-8", name)
			   : 0;
	if (a->given & BIT(CO_SERVICE))
		return json_object_set_new(body, "service", json_string(a->value[CO_SERVICE])) < 0
			   ? usage_error("--service: not UTF-8")
			   : 0;
	if (a->given & BIT(CO_UNIT))
		return json_object_set_new(body, "target",
					   json_pack("{s:s}", "unit", a->value[CO_UNIT])) < 0
			   ? usage_error("--unit: not UTF-8")
			   : 0;
	if (!parse_int(a->value[CO_PID], 1, INT_MAX, &pid))
		return usage_error("--pid \"%s\" is not a process id", a->value[CO_PID]);
	json_object_set_new(body, "target", json_pack("{s:I}", "pid", (json_int_t)pid));
	return 0;
}

/* An integer option into body as key, if given; 0 or the usage error's exit status. */
static int put_int(const struct args *a, enum cmd_opt o, const char *key, json_t *body)
{
	long long v;

	if (!(a->given & BIT(o)))
		return 0;
	if (!parse_int(a->value[o], 1, INT64_MAX, &v))
		return usage_error("--%s \"%s\" is not a positive integer", cmd_opts[o].name,
				   a->value[o]);
	json_object_set_new(body, key, json_integer(v));
	return 0;
}

/* ---- commands ---- */

static int cmd_workloads(struct ctx *x, const char *operand)
{
	return get_and_print(x, "/workloads", render_workloads);
}

static int cmd_services(struct ctx *x, const char *operand)
{
	return get_and_print(x, "/services", render_services);
}

static int cmd_tree(struct ctx *x, const char *operand)
{
	return get_and_print(x, "/tree", render_tree);
}

static int cmd_jobs(struct ctx *x, const char *operand)
{
	static const struct {
		enum cmd_opt opt;
		const char *key;
	} filters[] = {
	    {CO_STATE, "state"}, {CO_KIND, "kind"},   {CO_SUBJECT, "subject"}, {CO_SINCE, "since"},
	    {CO_UNTIL, "until"}, {CO_LIMIT, "limit"}, {CO_BEFORE, "before"},
	};
	_cleanup_free_ char *path = strprintf("/jobs");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(filters); i++) {
		_cleanup_free_ char *v = NULL;
		char *longer;

		if (!(x->a.given & BIT(filters[i].opt)))
			continue;
		v = client_escape(x->a.value[filters[i].opt]);
		longer =
		    strprintf("%s%c%s=%s", path, strchr(path, '?') ? '&' : '?', filters[i].key, v);
		free(path);
		path = longer;
	}
	return get_and_print(x, path, render_jobs);
}

static int cmd_job(struct ctx *x, const char *operand)
{
	_cleanup_free_ char *path = NULL;
	struct client_reply r;
	long long id;
	int ex;

	if (!job_id(operand, &id))
		return CTL_EXIT_ERROR;
	if (x->a.given & BIT(CO_FOLLOW))
		return follow_and_finish(x, id);
	path = strprintf("/jobs/%lld", id);
	if (call(x, "GET", path, NULL, &r) < 0)
		return CTL_EXIT_ERROR;
	if (x->a.json)
		print_raw(&r);
	else
		print_rendered(render_job, r.json);
	ex = job_exit(r.json);
	client_reply_clear(&r);
	return ex;
}

static int cmd_trace(struct ctx *x, const char *operand)
{
	_cleanup_free_ char *path = NULL;
	long long id;

	if (!job_id(operand, &id))
		return CTL_EXIT_ERROR;
	path = strprintf("/jobs/%lld/trace", id);
	return get_and_print(x, path, render_descent);
}

static int cmd_cancel(struct ctx *x, const char *operand)
{
	_cleanup_free_ char *path = NULL;
	struct client_reply r;
	long long id;

	if (!job_id(operand, &id))
		return CTL_EXIT_ERROR;
	path = strprintf("/jobs/%lld", id);
	if (call(x, "DELETE", path, NULL, &r) < 0)
		return CTL_EXIT_ERROR;
	if (x->a.json)
		print_raw(&r);
	else
		print_rendered(render_job, r.json);
	client_reply_clear(&r);
	return CTL_EXIT_CLEAN;
}

static int cmd_reference(struct ctx *x, const char *operand)
{
	json_auto_t *body = json_object();
	int ex;

	ex = put_subject(&x->a, operand, body);
	if (!ex)
		ex = put_int(&x->a, CO_REPEATS, "repeats", body);
	if (!ex)
		ex = put_int(&x->a, CO_WINDOW, "window_s", body);
	if (ex)
		return ex;
	return submit(x, "/references", body, true);
}

static int cmd_diagnose(struct ctx *x, const char *operand)
{
	const struct args *a = &x->a;
	json_auto_t *body = json_object();
	char *end;
	double tau;
	int ex;

	ex = put_subject(a, operand, body);
	if (!ex)
		ex = put_int(a, CO_REFERENCE, "reference", body);
	if (!ex)
		ex = put_int(a, CO_MAX_DEPTH, "max_depth", body);
	if (!ex)
		ex = put_int(a, CO_WINDOW, "window_s", body);
	if (ex)
		return ex;
	if (a->given & BIT(CO_AGENT))
		json_object_set_new(body, "agent", json_string(a->value[CO_AGENT]));
	if (a->given & BIT(CO_TAU)) {
		errno = 0;
		tau = strtod(a->value[CO_TAU], &end);
		if (errno || end == a->value[CO_TAU] || *end || !isfinite(tau))
			return usage_error("--tau \"%s\" is not a number", a->value[CO_TAU]);
		json_object_set_new(body, "tau", json_real(tau));
	}
	return submit(x, "/diagnose", body, a->given & BIT(CO_FOLLOW));
}

enum operand {
	OPERAND_NONE,
	OPERAND_ID,	 /* required */
	OPERAND_SUBJECT, /* a workload NAME, unless a subject option names the subject */
};

static const struct command {
	const char *name;
	enum operand operand;
	unsigned opts; /* the command options it takes, BIT(enum cmd_opt) */
	int (*run)(struct ctx *x, const char *operand);
} commands[] = {
    {"workloads", OPERAND_NONE, 0, cmd_workloads},
    {"services", OPERAND_NONE, 0, cmd_services},
    {"tree", OPERAND_NONE, 0, cmd_tree},
    {"jobs", OPERAND_NONE,
     BIT(CO_STATE) | BIT(CO_KIND) | BIT(CO_SUBJECT) | BIT(CO_SINCE) | BIT(CO_UNTIL) |
	 BIT(CO_LIMIT) | BIT(CO_BEFORE),
     cmd_jobs},
    {"job", OPERAND_ID, BIT(CO_FOLLOW), cmd_job},
    {"trace", OPERAND_ID, 0, cmd_trace},
    {"cancel", OPERAND_ID, 0, cmd_cancel},
    {"reference", OPERAND_SUBJECT, SUBJECT_OPTS | BIT(CO_REPEATS) | BIT(CO_WINDOW), cmd_reference},
    {"diagnose", OPERAND_SUBJECT,
     SUBJECT_OPTS | BIT(CO_FOLLOW) | BIT(CO_REFERENCE) | BIT(CO_AGENT) | BIT(CO_TAU) |
	 BIT(CO_MAX_DEPTH) | BIT(CO_WINDOW),
     cmd_diagnose},
};

/* ---- help ---- */

static void help(void)
{
	printf("argusctl: the command-line client of argusd\n"
	       "\n"
	       "Usage: argusctl [OPTIONS] COMMAND [ARGS]\n"
	       "\n"
	       "Commands:\n"
	       "  workloads                  the registered workloads\n"
	       "  services                   the defined services, and where each is now\n"
	       "  tree                       the code-path tree, resolved on this kernel\n"
	       "  jobs [FILTERS]             jobs, newest first: --state S, --kind K,\n"
	       "                             --subject S, --since T, --until T, --limit N,\n"
	       "                             --before ID (T: 2026-12-01 or 2026-12-01T15:04:05Z)\n"
	       "  job ID [--follow]          one job; --follow follows it to its end\n"
	       "  trace ID                   the descent of a job's trace\n"
	       "  cancel ID                  cancel a queued or running job\n"
	       "  reference NAME [--repeats K]\n"
	       "                             record a reference and follow it to its end\n"
	       "                             (or --pid N, --unit U, --service S; --window S)\n"
	       "  diagnose NAME [--follow]   diagnose a workload (or --pid N, --unit U,\n"
	       "                             --service S); --reference ID, --agent A, --tau X,\n"
	       "                             --max-depth N, --window S\n"
	       "\n"
	       "Options:\n"
	       "  --socket PATH      argusd's control socket (default %s)\n"
	       "  --url URL          argusd over TCP instead, http://HOST:PORT\n"
	       "  --token-file FILE  send the bearer token that FILE holds\n"
	       "  --json             print the API's JSON and nothing else on stdout\n"
	       "  -f, --follow       follow the job until it ends\n"
	       "  -q, --quiet        no progress while following\n"
	       "  -h, --help         this text\n"
	       "  --version          argusctl's version\n"
	       "\n"
	       "Environment: ARGUSCTL_SOCKET, ARGUSCTL_URL, ARGUSCTL_TOKEN_FILE stand for the\n"
	       "options of the same names when those are not given.\n"
	       "\n"
	       "Exit status:\n"
	       "  0  no bottleneck (verdict no_bottleneck), or a command that is not a\n"
	       "     diagnosis succeeded\n"
	       "  1  a diagnosis named a path (verdict bottleneck or deviation)\n"
	       "  2  an error: bad usage, no connection, an HTTP error, a job that failed,\n"
	       "     was cancelled or was interrupted\n",
	       DEFAULT_SOCKET);
}

/* ---- main ---- */

static const struct command *command_named(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Parse argv into *a; returns the index of the command, or -1 after a usage error. */
static int parse_args(int argc, char **argv, struct args *a, bool *ret_exit_now)
{
	static const struct option global[] = {
	    {"socket", required_argument, NULL, OPT_SOCKET},
	    {"url", required_argument, NULL, OPT_URL},
	    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	};
	struct option longopts[ARRAY_SIZE(global) + N_CMD_OPTS + 1] = {};
	size_t i;
	int c;

	memcpy(longopts, global, sizeof(global));
	for (i = 0; i < N_CMD_OPTS; i++)
		longopts[ARRAY_SIZE(global) + i] = (struct option){
		    cmd_opts[i].name, cmd_opts[i].has_arg ? required_argument : no_argument, NULL,
		    CMD_OPT_BASE + (int)i};

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fqh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			a->socket = optarg;
			break;
		case OPT_URL:
			a->url = optarg;
			break;
		case OPT_TOKEN_FILE:
			a->token_file = optarg;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			help();
			*ret_exit_now = true;
			return -1;
		case OPT_VERSION:
			printf("argusctl %s\n", ARGUS_VERSION);
			*ret_exit_now = true;
			return -1;
		case 'f':
			a->given |= BIT(CO_FOLLOW);
			break;
		case ':':
			usage_error("%s needs an argument", argv[optind - 1]);
			return -1;
		case '?':
			usage_error("unknown option %s", argv[optind - 1]);
			return -1;
		default:
			if (c < CMD_OPT_BASE || c >= CMD_OPT_BASE + N_CMD_OPTS) {
				usage_error("unknown option %s", argv[optind - 1]);
				return -1;
			}
			a->given |= BIT(c - CMD_OPT_BASE);
			a->value[c - CMD_OPT_BASE] = optarg;
		}
	}
	return optind;
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *err = NULL;
	const struct command *cmd;
	struct ctx x = {};
	const char *operand = NULL;
	bool exit_now = false;
	int first, n, ex;
	size_t i;

	first = parse_args(argc, argv, &x.a, &exit_now);
	if (first < 0)
		return exit_now ? CTL_EXIT_CLEAN : CTL_EXIT_ERROR;
	n = argc - first;
	if (n < 1)
		return usage_error("no command given");
	cmd = command_named(argv[first]);
	if (!cmd)
		return usage_error("unknown command \"%s\"", argv[first]);
	for (i = 0; i < N_CMD_OPTS; i++)
		if ((x.a.given & BIT(i)) && !(cmd->opts & BIT(i)))
			return usage_error("%s takes no --%s", cmd->name, cmd_opts[i].name);
	if (n > 2 || (n == 2 && cmd->operand == OPERAND_NONE))
		return usage_error("too many arguments for %s", cmd->name);
	if (n == 2)
		operand = argv[first + 1];
	if (!operand && cmd->operand == OPERAND_ID)
		return usage_error("%s needs a job ID", cmd->name);
	if (!operand && cmd->operand == OPERAND_SUBJECT && !(x.a.given & SUBJECT_OPTS))
		return usage_error("%s needs a workload NAME (or --pid, --unit, --service)",
				   cmd->name);
	if (x.a.socket && x.a.url)
		return usage_error("--socket and --url name two daemons; give one");

	/* the command line first, then the environment, then the packaged socket */
	if (!x.a.socket && !x.a.url) {
		x.a.url = getenv("ARGUSCTL_URL");
		if (x.a.url && !x.a.url[0])
			x.a.url = NULL;
		if (!x.a.url)
			x.a.socket = getenv("ARGUSCTL_SOCKET");
		if (!x.a.url && (!x.a.socket || !x.a.socket[0]))
			x.a.socket = DEFAULT_SOCKET;
	}
	if (!x.a.token_file) {
		x.a.token_file = getenv("ARGUSCTL_TOKEN_FILE");
		if (x.a.token_file && !x.a.token_file[0])
			x.a.token_file = NULL;
	}
	x.progress = x.a.quiet ? NULL : x.a.json ? stderr : stdout;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		print_error("cannot initialise libcurl");
		return CTL_EXIT_ERROR;
	}
	if (client_new(&(struct client_opts){.socket = x.a.socket,
					     .url = x.a.url,
					     .token_file = x.a.token_file},
		       &x.c, &err) < 0) {
		print_error("%s", err);
		curl_global_cleanup();
		return CTL_EXIT_ERROR;
	}
	ex = cmd->run(&x, operand);
	client_free(x.c);
	curl_global_cleanup();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		print_error("writing the output: %s", strerror(errno));
		return CTL_EXIT_ERROR;
	}
	return ex;
}
