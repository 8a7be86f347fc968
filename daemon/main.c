// SPDX-License-Identifier: MIT
/*
 * argusd: configuration -> state-directory lock -> tree resolved against
 * this kernel -> workloads -> store -> job worker -> HTTP API -> READY=1.
 * SIGTERM: stop intake, cancel the running job, close the store.
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

#include "api/http.h"
#include "daemon/config.h"
#include "daemon/diagnose.h"
#include "daemon/jobs.h"
#include "daemon/llm_client.h"
#include "daemon/log.h"
#include "daemon/probe.h"
#include "daemon/resolve.h"
#include "daemon/store.h"
#include "daemon/target.h"
#include "daemon/tree.h"
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
		   "  -v, --verbose             debug logging\n"
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
	_cleanup_free_ char *err = NULL;
	struct tree *t = NULL;
	int by[BACKEND_MAX] = {}, unavailable;
	size_t i;
	int r;

	r = tree_load_file(cfg->tree_file, &t, &err);
	if (r < 0)
		return log_error_errno(r, "tree %s: %s", cfg->tree_file, err ?: strerror(-r));
	unavailable = tree_resolve(t, &p);
	probe_resolver_clear(&cache);
	for (i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].backend != BACKEND_NONE)
			by[t->nodes[i].backend]++;
		else
			log_notice("tree: %s unavailable: %s", t->nodes[i].id,
				   t->nodes[i].reason ?: "?");
	log_info("tree %s resolved: %zu nodes, fentry %d, kprobe %d, tracepoint %d, "
		 "unavailable %d",
		 t->version, t->n_nodes, by[BACKEND_FENTRY], by[BACKEND_KPROBE],
		 by[BACKEND_TRACEPOINT], unavailable);
	*ret = t;
	return 0;
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
	enum { OPT_VICTIMS = 0x100, OPT_TREE, OPT_SCHEMA };
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "workloads-dir", required_argument, NULL, 'w' },
		{ "victims-dir", required_argument, NULL, OPT_VICTIMS },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "schema-dir", required_argument, NULL, OPT_SCHEMA },
		{ "verbose", no_argument, NULL, 'v' },
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

	r = config_load_file(cfg, config_file ?: DEFAULT_CONFIG, &err);
	if (r == -ENOENT && !config_file) {
		free(err);
		err = NULL;
	} else if (r < 0) {
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
	return 0;
}

/* Wait for SIGTERM/SIGINT, pinging the watchdog at half its interval. */
static void main_loop(int sfd)
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
	}
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

int main(int argc, char **argv)
{
	struct config cfg;
	struct tree *tree = NULL;
	struct workload_registry *reg = NULL;
	struct store *store = NULL;
	struct jobs *jobs = NULL;
	struct http_server *http = NULL;
	_cleanup_close_ int lock_fd = -1, sfd = -1;
	_cleanup_free_ char *dbpath = NULL;
	struct utsname uts;
	struct diag_env env;
	struct api_ctx api;
	bool curl_ready = false;
	sigset_t mask;
	size_t i;
	int r;

	config_defaults(&cfg);
	r = parse_args(argc, argv, &cfg);
	if (r < 0)
		goto out;
	if (geteuid() != 0)
		log_warning("not running as root: probes will not load");

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
	probe_setup_libbpf_logging();
	uname(&uts);
	/* before any thread: the LLM agent's client runs on the job worker */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		r = log_error_errno(ENOMEM, "curl_global_init failed");
		goto out;
	}
	curl_ready = true;
	if (cfg.llm_url) {
		_cleanup_free_ char *hdr = xasprintf("%s/argus_authored.h", cfg.bpf_include_dir);
		_cleanup_free_ char *why = NULL;

		r = llm_url_check(cfg.llm_url, cfg.llm_key_file != NULL, &why);
		if (r < 0) {
			log_error("configuration: %s", why);
			goto out;
		}

		if (access(hdr, R_OK) < 0)
			log_warning_errno(errno,
					  "llm agent: %s: %m; authored probes will not compile "
					  "(bpf_include_dir)",
					  hdr);
		if (access(cfg.bpf_clang, X_OK) < 0)
			log_warning_errno(errno, "llm agent: compiler %s: %m (bpf_clang)",
					  cfg.bpf_clang);
		log_info("llm agent: endpoint %s, model %s", cfg.llm_url, cfg.llm_model ?: "(unset)");
	}

	sd_notify(0, "STATUS=Resolving the kernel code-path tree");
	r = load_tree(&cfg, &tree);
	if (r < 0)
		goto out;

	r = workload_registry_load(cfg.workloads_dir, &reg);
	if (r < 0) {
		log_error_errno(r, "workloads %s: %m", cfg.workloads_dir);
		goto out;
	}
	for (i = 0; i < reg->n_errors; i++)
		log_warning("workload skipped: %s", reg->errors[i]);
	check_workloads(reg, cfg.victims_dir);
	log_info("%zu workloads registered from %s", reg->n, cfg.workloads_dir);

	dbpath = xasprintf("%s/argusd.db", cfg.state_dir);
	r = store_open(dbpath, cfg.schema_dir, &store);
	if (r < 0) {
		log_error_errno(r, "store %s: %m", dbpath);
		goto out;
	}

	env = (struct diag_env){ .cfg = &cfg, .tree = tree, .workloads = reg,
				 .kernel_release = uts.release, .hostname = uts.nodename };
	r = jobs_start(store, cfg.queue_max, diag_run_job, &env, &jobs);
	if (r < 0) {
		log_error_errno(r, "starting the job worker: %m");
		goto out;
	}

	api = (struct api_ctx){ .cfg = &cfg, .store = store, .jobs = jobs, .workloads = reg,
				.tree = tree, .llm_configured = cfg.llm_url != NULL,
				.started_mono_ns = now_mono_ns(), .kernel_release = uts.release };
	r = http_start(cfg.listen, &api, &http);
	if (r < 0) {
		log_error_errno(r, "listening on %s: %m", cfg.listen);
		goto out;
	}
	log_info("argusd ready: listening on %s (port %u), state in %s", cfg.listen,
		 http_port(http), cfg.state_dir);
	sd_notifyf(0, "READY=1\nSTATUS=Listening on port %u, %zu workloads, tree %s",
		   http_port(http), reg->n, tree->version);

	main_loop(sfd);
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping: cancelling the running job");
	r = 0;
out:
	http_stop(http);
	jobs_stop(jobs);
	store_close(store);
	workload_registry_free(reg);
	tree_free(tree);
	config_free(&cfg);
	if (curl_ready)
		curl_global_cleanup();
	return r < 0 ? 1 : 0;
}
