// SPDX-License-Identifier: MIT
/*
 * argusd: configuration -> state-directory lock -> tree resolved against
 * this kernel -> workloads -> store -> job worker -> HTTP API -> READY=1.
 * SIGTERM: stop intake, cancel the running job, close the store.
 * SIGHUP: read the workload definitions again; a running job keeps its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <curl/curl.h>
#include <systemd/sd-daemon.h>

#include "api/access.h"
#include "api/http.h"
#include "daemon/bpf_log.h"
#include "daemon/config.h"
#include "daemon/diagnose.h"
#include "daemon/jobs.h"
#include "daemon/llm_client.h"
#include "daemon/log.h"
#include "daemon/paths-config.h"
#include "daemon/probe_try.h"
#include "daemon/resolve.h"
#include "daemon/service.h"
#include "daemon/store.h"
#include "daemon/syscalls.h"
#include "daemon/target.h"
#include "daemon/tree.h"
#include "daemon/usual_pace.h"
#include "daemon/util.h"
#include "daemon/workload.h"

#define DEFAULT_CONFIG "/etc/argus/argusd.conf"

static void usage(FILE *f)
{
	fprintf(f, "Usage: argusd [OPTIONS]\n"
		   "Localize where in the kernel a workload loses time.\n\n"
		   "  -c, --config FILE         configuration file (default " DEFAULT_CONFIG ")\n"
		   "  -l, --listen ADDR:PORT    HTTP API address (loopback by default)\n"
		   "  -s, --state-dir DIR       database and lock\n"
		   "  -w, --workloads-dir DIR   workload definitions\n"
		   "      --victims-dir DIR     bundled victim programs\n"
		   "      --tree FILE           tree-data file\n"
		   "      --schema-dir DIR      schema files\n"
		   "      --check-config        check the configuration, the tree and the\n"
		   "                            workload definitions, then exit (0: usable)\n"
		   "  -v, --verbose             debug logging\n"
		   "      --version             the version, then exit\n"
		   "  -h, --help                this text\n");
}

/* Hold an exclusive lock on the state directory for the daemon's life. */
static int lock_state_dir(const char *dir, int *ret_fd)
{
	_cleanup_free_ char *path = xasprintf("%s/argusd.lock", dir);
	_cleanup_close_ int fd = -1;
	char pid[32];
	int n;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(errno, "creating state directory %s: %m", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return log_error_errno(errno, "opening %s: %m", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		char other[32] = "";

		n = pread(fd, other, sizeof(other) - 1, 0);
		if (n > 0)
			other[strcspn(other, "\n")] = 0;
		if (err == EWOULDBLOCK)
			return log_error_errno(EBUSY,
					       "another argusd (pid %s) is using state directory %s; "
					       "refusing to start",
					       other[0] ? other : "?", dir);
		return log_error_errno(err, "locking %s: %m", path);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, n, 0) != n)
		log_warning_errno(errno, "writing pid to %s: %m", path);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int load_tree(const struct config *cfg, struct tree **ret)
{
	struct probe_resolver cache = {};
	struct prober p = { .try_hook = probe_try_hook, .userdata = &cache };
	_cleanup_free_ char *err = NULL, *order = NULL;
	struct tree *t = NULL;
	int by[BACKEND_MAX] = {}, unavailable;
	size_t i;
	int r;

	r = tree_load_file(cfg->tree_file, &t, &err);
	if (r < 0)
		return log_error_errno(r, "tree %s: %s", cfg->tree_file, err ?: strerror(-r));
	unavailable = tree_resolve_backends(t, &p, &cfg->backends);
	probe_resolver_clear(&cache);
	if (unavailable < 0) {
		tree_free(t);
		return log_error_errno(unavailable, "resolving tree %s: %m", cfg->tree_file);
	}
	for (i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].backend != BACKEND_NONE)
			by[t->nodes[i].backend]++;
		else
			log_notice("tree: %s unavailable: %s", t->nodes[i].id,
				   t->nodes[i].reason ?: "?");
	order = backend_order_to_string(&cfg->backends);
	log_info("tree %s resolved (backends %s): %zu nodes, fentry %d, kprobe %d, tracepoint %d, "
		 "unavailable %d; system calls followed through %s",
		 t->version, order, t->n_nodes, by[BACKEND_FENTRY], by[BACKEND_KPROBE],
		 by[BACKEND_TRACEPOINT], unavailable,
		 syscall_events_none()	   ? "no event (a call is seen when it sleeps)"
		 : syscall_events_per_call() ? "their own events"
					     : "raw sys_enter and sys_exit");
	*ret = t;
	return 0;
}

static int parse_args(int argc, char **argv, struct config *cfg, bool *ret_check_only)
{
	enum { OPT_VICTIMS = 0x100, OPT_TREE, OPT_SCHEMA, OPT_CHECK, OPT_VERSION };
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "workloads-dir", required_argument, NULL, 'w' },
		{ "victims-dir", required_argument, NULL, OPT_VICTIMS },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "schema-dir", required_argument, NULL, OPT_SCHEMA },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *config_file = NULL;
	struct {
		const char *key;
		const char *value;
	} overrides[8];
	size_t n_over = 0, i;
	char *err = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:l:s:w:vh", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			config_file = optarg;
			break;
		case 'l':
			overrides[n_over++] = (typeof(overrides[0])){ "listen", optarg };
			break;
		case 's':
			overrides[n_over++] = (typeof(overrides[0])){ "state_dir", optarg };
			break;
		case 'w':
			overrides[n_over++] = (typeof(overrides[0])){ "workloads_dir", optarg };
			break;
		case OPT_VICTIMS:
			overrides[n_over++] = (typeof(overrides[0])){ "victims_dir", optarg };
			break;
		case OPT_TREE:
			overrides[n_over++] = (typeof(overrides[0])){ "tree_file", optarg };
			break;
		case OPT_SCHEMA:
			overrides[n_over++] = (typeof(overrides[0])){ "schema_dir", optarg };
			break;
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		case OPT_CHECK:
			*ret_check_only = true;
			break;
		case OPT_VERSION:
			printf("argusd %s\n", ARGUS_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (n_over == ARRAY_SIZE(overrides))
			return log_error_errno(EINVAL, "too many options");
	}
	if (optind < argc)
		return log_error_errno(EINVAL, "unexpected argument '%s'", argv[optind]);

	/* the default file may be missing (defaults apply); one named on the command line may not */
	r = config_load_with_dropins(cfg, config_file ?: DEFAULT_CONFIG, !config_file, &err);
	if (r < 0) {
		log_error("configuration: %s", err);
		free(err);
		return r;
	}
	for (i = 0; i < n_over; i++) {
		r = config_set(cfg, overrides[i].key, overrides[i].value, &err);
		if (r < 0) {
			log_error("option: %s", err);
			free(err);
			return r;
		}
	}
	/* for the whole process, before any probe loads */
	syscall_events_set(cfg->syscall_events);
	return 0;
}

/*
 * The bearer token of TCP writes, from api_token_file (a relative name is
 * looked up in $CREDENTIALS_DIRECTORY, as systemd's LoadCredential= puts
 * it). The token itself is never logged; the file is named.
 */
static int read_api_token(const struct config *cfg, char **ret)
{
	const char *creds = getenv("CREDENTIALS_DIRECTORY");
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len = 0;
	int r;

	if (!cfg->api_token_file) {
		*ret = NULL;
		return 0;
	}
	if (cfg->api_token_file[0] == '/')
		path = xstrdup(cfg->api_token_file);
	else if (!creds || !*creds)
		return log_error_errno(ENOENT,
				       "api_token_file %s is relative but $CREDENTIALS_DIRECTORY "
				       "is not set (LoadCredential= in the unit, or an absolute "
				       "path)",
				       cfg->api_token_file);
	else if (strchr(cfg->api_token_file, '/'))
		return log_error_errno(EINVAL,
				       "api_token_file %s: a credential name has no '/'",
				       cfg->api_token_file);
	else
		path = xasprintf("%s/%s", creds, cfg->api_token_file);

	r = read_file_bounded(path, 4097, &text, &len);
	if (r < 0)
		return log_error_errno(r, "api_token_file %s: %m", path);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = 0;
	if (!access_token_valid(text)) {
		explicit_bzero(text, len);
		return log_error_errno(EINVAL,
				       "api_token_file %s: the token must be 16 to 4096 visible "
				       "ASCII characters without spaces, on one line",
				       path);
	}
	*ret = TAKE_PTR(text);
	return 0;
}

/* Room for the API's connections (two listeners of HTTP_CONNECTIONS_MAX) besides the rest. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= 8192)
		return;
	rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warning_errno(errno, "raising the open-file limit to %llu: %m",
				  (unsigned long long)rl.rlim_cur);
}

/*
 * Whether each workload's user can run its program: one that cannot is kept,
 * marked unusable with the reason (GET /workloads shows it, a job on it fails
 * at once), and said once here.
 */
static void check_workloads(struct workload_registry *reg, const char *victims_dir)
{
	size_t i;

	for (i = 0; i < reg->n; i++) {
		struct workload *w = reg->items[i];

		w->checked = true;
		if (target_check_program(w, victims_dir, &w->unusable) < 0)
			log_warning("workload %s unusable: %s", w->name, w->unusable);
	}
}

/* The workload definitions, each checked; *ret_skipped counts definitions refused. */
static int load_workloads(const struct config *cfg, struct workload_registry **ret,
			  size_t *ret_skipped)
{
	size_t i;
	int r;

	r = workload_registry_load(cfg->workloads_dir, ret);
	if (r < 0)
		return log_error_errno(r, "workloads %s: %m", cfg->workloads_dir);
	for (i = 0; i < (*ret)->n_errors; i++)
		log_warning("workload skipped: %s", (*ret)->errors[i]);
	check_workloads(*ret, cfg->victims_dir);
	log_info("%zu workloads registered from %s", (*ret)->n, cfg->workloads_dir);
	*ret_skipped = (*ret)->n_errors;
	r = service_registry_load(cfg->services_dir, &(*ret)->services);
	if (r < 0) {
		workload_registry_free(*ret);
		*ret = NULL;
		return log_error_errno(r, "services %s: %m", cfg->services_dir);
	}
	for (i = 0; i < (*ret)->services->n_errors; i++)
		log_warning("service skipped: %s", (*ret)->services->errors[i]);
	log_info("%zu services defined in %s", (*ret)->services->n, cfg->services_dir);
	*ret_skipped += (*ret)->services->n_errors;
	return 0;
}

/* The LLM agent's endpoint (refused when unsafe), compiler and headers (warned about). */
static int check_llm(const struct config *cfg)
{
	_cleanup_free_ char *hdr = NULL, *why = NULL, *shown = NULL;
	int r;

	if (!cfg->llm_url)
		return 0;
	r = llm_url_check(cfg->llm_url, cfg->llm_allow_insecure, &why);
	if (r < 0) {
		log_error("configuration: %s", why);
		return r;
	}
	hdr = xasprintf("%s/argus_authored.h", cfg->bpf_include_dir);
	if (access(hdr, R_OK) < 0)
		log_warning_errno(errno,
				  "llm agent: %s: %m; authored probes will not compile "
				  "(bpf_include_dir)",
				  hdr);
	if (access(cfg->bpf_clang, X_OK) < 0)
		log_warning_errno(errno, "llm agent: compiler %s: %m (bpf_clang)", cfg->bpf_clang);
	/* redacted: the URL's userinfo or query may carry credentials */
	shown = llm_url_redact(cfg->llm_url);
	log_info("llm agent: endpoint %s, model %s", shown, cfg->llm_model ?: "(unset)");
	return 0;
}

/*
 * --check-config: what start-up checks before it serves (the configuration,
 * the LLM endpoint, the tree resolved on this kernel, the workload
 * definitions), without the state directory or a listener, so that it runs
 * beside a running argusd. 0 when argusd would start with everything.
 */
static int check_only(const struct config *cfg)
{
	struct tree *tree = NULL;
	struct workload_registry *reg = NULL;
	size_t skipped = 0, unusable = 0, leaves = 0, measurable = 0, i;
	int r;

	r = check_llm(cfg);
	if (r >= 0)
		r = load_tree(cfg, &tree);
	if (r >= 0)
		r = load_workloads(cfg, &reg, &skipped);
	if (r < 0) {
		tree_free(tree);
		return r;
	}
	for (i = 0; i < reg->n; i++)
		unusable += reg->items[i]->unusable != NULL;
	for (i = 0; i < tree->n_nodes; i++)
		if (tree_is_leaf(tree, i)) {
			leaves++;
			measurable += tree->nodes[i].backend != BACKEND_NONE;
		}
	/* a kernel where no path can be measured (no BTF, say) cannot diagnose anything */
	printf("argusd %s: tree %s, %zu of %zu leaves measurable here, %zu workloads and %zu "
	       "services (%zu skipped, %zu unusable): %s\n",
	       ARGUS_VERSION, tree->version, measurable, leaves, reg->n, reg->services->n, skipped,
	       unusable,
	       !measurable ? "no path can be measured on this kernel"
	       : skipped || unusable ? "not all usable"
				     : "ok");
	r = !measurable || skipped || unusable ? -EINVAL : 0;
	workload_registry_free(reg);
	tree_free(tree);
	return r;
}

/*
 * SIGHUP: the workload definitions read again and put in place whole; a
 * directory that cannot be read keeps the registry in use. Jobs running or
 * queued are not touched (a queued job's workload is looked up when it
 * starts).
 */
static void reload(const struct config *cfg, struct workloads_live *live)
{
	struct workload_registry *reg = NULL;
	size_t skipped = 0;

	sd_notify(0, "RELOADING=1\nSTATUS=Reloading workload and service definitions");
	if (load_workloads(cfg, &reg, &skipped) < 0) {
		log_error("reload: %s or %s could not be read; the definitions in use are kept",
			  cfg->workloads_dir, cfg->services_dir);
	} else {
		log_info("reload: %zu workloads from %s and %zu services from %s (%zu skipped)",
			 reg->n, cfg->workloads_dir, reg->services->n, cfg->services_dir, skipped);
		workloads_live_set(live, reg);
	}
	sd_notify(0, "READY=1\nSTATUS=Reloaded");
}

/* Wait for SIGTERM/SIGINT, pinging the watchdog at half its interval; SIGHUP reloads. */
static void main_loop(int sfd, const struct config *cfg, struct workloads_live *live)
{
	uint64_t wd_usec = 0;
	int timeout = -1;

	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0)
		timeout = wd_usec / 2000;
	for (;;) {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		struct signalfd_siginfo si;
		int r = poll(&pfd, 1, timeout);

		if (r < 0 && errno != EINTR) {
			log_error_errno(errno, "poll: %m");
			return;
		}
		if (timeout >= 0)
			sd_notify(0, "WATCHDOG=1");
		if (r <= 0)
			continue;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_info("received %s, stopping", strsignal(si.ssi_signo));
			return;
		}
		if (si.ssi_signo == SIGHUP)
			reload(cfg, live);
	}
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct tree *tree = NULL;
	struct workload_registry *reg = NULL;
	struct workloads_live *live = NULL;
	struct store *store = NULL;
	struct jobs *jobs = NULL;
	struct http_server *http = NULL;
	_cleanup_close_ int lock_fd = -1, sfd = -1;
	_cleanup_free_ char *dbpath = NULL, *unix_path = NULL, *token = NULL;
	struct http_options listeners;
	struct utsname uts;
	struct diag_env env;
	struct usual_pace_reader pace_reader;
	struct api_ctx api;
	bool curl_ready = false, check = false;
	sigset_t mask;
	size_t i;
	int r;

	config_defaults(&cfg);
	r = parse_args(argc, argv, &cfg, &check);
	if (r < 0)
		goto out;
	if (geteuid() != 0)
		log_warning("not running as root: probes will not load");
	/* before anything slow: an exposed API without a token is a configuration to fix */
	if (cfg.listen && http_listen_check(cfg.listen, cfg.api_token_file != NULL) == -EPERM) {
		r = log_error_errno(EPERM,
				    "listen = %s is not a loopback address and no api_token_file "
				    "is set: refusing to expose the API; set api_token_file (writes "
				    "then need the token) or listen on 127.0.0.1",
				    cfg.listen);
		goto out;
	}
	r = read_api_token(&cfg, &token);
	if (r < 0 || check) {
		if (r >= 0)
			r = check_only(&cfg);
		goto out;
	}

	/* signals first, so that a SIGTERM during start-up is not lost */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		r = log_error_errno(errno, "signalfd: %m");
		goto out;
	}

	r = lock_state_dir(cfg.state_dir, &lock_fd);
	if (r < 0)
		goto out;
	bpf_log_setup();
	uname(&uts);
	/* before any thread: the LLM agent's client runs on the job worker */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		r = log_error_errno(ENOMEM, "curl_global_init failed");
		goto out;
	}
	curl_ready = true;
	r = check_llm(&cfg);
	if (r < 0)
		goto out;

	sd_notify(0, "STATUS=Resolving the kernel code-path tree");
	r = load_tree(&cfg, &tree);
	if (r < 0)
		goto out;

	r = load_workloads(&cfg, &reg, &i);
	if (r < 0)
		goto out;
	/* held here for READY's count; the live registry is the one requests and jobs use */
	r = workloads_live_new(workload_registry_ref(reg), &live);
	if (r < 0)
		goto out;

	dbpath = xasprintf("%s/argusd.db", cfg.state_dir);
	r = store_open(dbpath, cfg.schema_dir, &store);
	if (r < 0) {
		log_error_errno(r, "store %s: %m", dbpath);
		goto out;
	}
	store_set_trace_max(store, cfg.trace_max_bytes);

	env = (struct diag_env){ .cfg = &cfg, .tree = tree, .live = live,
				 .kernel_release = uts.release, .hostname = uts.nodename };
	/* a queued job on a running target is checked again when it starts */
	access_set_admin_group(cfg.api_group);
	r = jobs_start_admitted(store, cfg.queue_max, diag_run_job, &env, access_job_admit, &jobs);
	if (r < 0) {
		log_error_errno(r, "starting the job worker: %m");
		goto out;
	}
	/* at once (before the first job), then hourly, between jobs */
	jobs_set_retention(jobs,
			   &(struct store_retention){ .retention_days = cfg.retention_days,
						      .max_jobs = cfg.max_jobs },
			   JOBS_RETENTION_INTERVAL_S);
	/* the host's pace on each CPU argusd may use, between jobs: the usual one, a day of it */
	if (cfg.host_pace_idle_s > 0) {
		pace_reader = (struct usual_pace_reader){ .store = store, .jobs = jobs,
							  .hostname = uts.nodename,
							  .interval_s = cfg.host_pace_idle_s };
		if (sched_getaffinity(0, sizeof(pace_reader.cpus), &pace_reader.cpus) < 0)
			log_warning_errno(errno, "host pace: its CPUs unknown, not read between "
					  "jobs: %m");
		else if (jobs_add_chore(jobs,
					cfg.host_pace_idle_s < USUAL_PACE_CALL_S ? cfg.host_pace_idle_s
										 : USUAL_PACE_CALL_S,
					usual_pace_chore, &pace_reader) < 0)
			log_error("host pace: no room for its chore: not read between jobs");
	}

	api = (struct api_ctx){ .cfg = &cfg, .store = store, .jobs = jobs, .live = live,
				.tree = tree, .llm_configured = cfg.llm_url != NULL,
				.started_mono_ns = now_mono_ns(), .kernel_release = uts.release,
				.hostname = uts.nodename };
	raise_fd_limit();
	unix_path = config_unix_path(&cfg);
	listeners = (struct http_options){ .listen = cfg.listen, .unix_path = unix_path,
					   .token = token };
	r = http_start(&listeners, &api, &http);
	if (token) {
		/* http.c keeps its own copy */
		explicit_bzero(token, strlen(token));
		free(TAKE_PTR(token));
	}
	if (r < 0)
		goto out;
	log_info("argusd ready: listening on %s (port %u) and on socket %s, state in %s",
		 cfg.listen ?: "(no TCP)", http_port(http), unix_path, cfg.state_dir);
	sd_notifyf(0, "READY=1\nSTATUS=Listening on port %u, %zu workloads, tree %s",
		   http_port(http), reg->n, tree->version);

	workload_registry_free(TAKE_PTR(reg));
	main_loop(sfd, &cfg, live);
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping: cancelling the running job");
	r = 0;
out:
	if (token)
		explicit_bzero(token, strlen(token));
	http_stop(http);
	jobs_stop(jobs);
	store_close(store);
	workloads_live_free(live);
	workload_registry_free(reg);
	tree_free(tree);
	config_free(&cfg);
	if (curl_ready)
		curl_global_cleanup();
	return r < 0 ? 1 : 0;
}
