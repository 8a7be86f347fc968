// SPDX-License-Identifier: MIT
/*
 * A systemd unit's cgroup, asked of systemd over D-Bus and, where systemd
 * does not answer, searched for in the cgroup hierarchy. The bus is tried in
 * two ways, as systemctl does: the system bus (dbus-daemon routes to the
 * name org.freedesktop.systemd1), then systemd's private peer-to-peer socket,
 * which has no bus names (destination NULL) and is accepted only from a
 * root-owned peer. Every connection is fresh and short-lived, and each
 * exchange on it (authentication, each call) is bounded by
 * UNIT_BUS_TIMEOUT_USEC, so a hung systemd costs a job seconds, not forever.
 * Only an answer from systemd is final: "no such unit" ends the question,
 * any other failure to talk to it moves on to the next way, the last being a
 * bounded breadth-first search of the hierarchy for a cgroup named as the
 * unit (systemd names a unit's cgroup after the unit, in any slice).
 */
#include "daemon/unit.h"
#include "daemon/cgroup.h"
#include "daemon/util.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#define SYSTEMD_DESTINATION "org.freedesktop.systemd1"
#define SYSTEMD_OBJECT "/org/freedesktop/systemd1"
#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
#define UNIT_INTERFACE "org.freedesktop.systemd1.Unit"
#define SERVICE_INTERFACE "org.freedesktop.systemd1.Service"
#define SCOPE_INTERFACE "org.freedesktop.systemd1.Scope"
#define NO_SUCH_UNIT_ERROR "org.freedesktop.systemd1.NoSuchUnit"

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	/* a name before the suffix: ".service" alone names no unit */
	return n > m && memcmp(s + n - m, suffix, m) == 0;
}

bool unit_name_valid(const char *name)
{
	size_t i;

	if (!name || !*name || strnlen(name, UNIT_NAME_MAX + 1) > UNIT_NAME_MAX)
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == ':' || c == '_' || c == '.' || c == '\\' || c == '@' || c == '-'))
			return false;
	}
	return ends_with(name, ".service") || ends_with(name, ".scope");
}

void unit_info_clear(struct unit_info *u)
{
	if (!u)
		return;
	free(u->cgroup);
	free(u->active_state);
	*u = (struct unit_info){0};
}

/*
 * Drive bus until it is ready for calls (authenticated, and on the system
 * bus Hello answered), for at most timeout_usec: sd_bus_call would wait for
 * authentication with libsystemd's own, much longer, timeout.
 */
static int bus_wait_ready(sd_bus *bus, uint64_t timeout_usec)
{
	uint64_t deadline = now_mono_ns() / 1000 + timeout_usec;
	int r;

	for (;;) {
		uint64_t now;

		r = sd_bus_is_ready(bus);
		if (r != 0)
			return r < 0 ? r : 0;
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		now = now_mono_ns() / 1000;
		if (now >= deadline)
			return -ETIMEDOUT;
		r = sd_bus_wait(bus, deadline - now);
		if (r < 0 && r != -EINTR)
			return r;
	}
}

/* The private socket is systemd's only when root holds its other end. */
static int bus_check_peer_root(sd_bus *bus)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = sd_bus_get_fd(bus);

	if (fd < 0)
		return fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (len != sizeof(cred) || cred.uid != 0)
		return -EPERM;
	return 0;
}

/* A ready connection to systemd: the system bus, or (private) its private socket. */
static int bus_connect(bool private, sd_bus **ret)
{
	/* not flushed: a connection that never got ready would be waited on */
	_cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
	int r;

	if (private) {
		r = sd_bus_new(&bus);
		if (r < 0)
			return r;
		r = sd_bus_set_address(bus, SYSTEMD_PRIVATE_ADDRESS);
		if (r < 0)
			return r;
		r = sd_bus_start(bus);
	} else {
		r = sd_bus_open_system(&bus);
	}
	if (r < 0)
		return r;
	r = sd_bus_set_method_call_timeout(bus, UNIT_BUS_TIMEOUT_USEC);
	if (r < 0)
		return r;
	r = bus_wait_ready(bus, UNIT_BUS_TIMEOUT_USEC);
	if (r < 0)
		return r;
	if (private) {
		r = bus_check_peer_root(bus);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(bus);
	return 0;
}

/*
 * Manager.GetUnit(name) on bus: 1 and *ret_object when systemd has the unit
 * loaded, 0 when it says it has no such unit, a negative errno and *ret_why
 * when systemd did not answer.
 */
static int bus_get_unit(sd_bus *bus, const char *destination, const char *name, char **ret_object,
			char **ret_why)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *object;
	int r;

	r = sd_bus_call_method(bus, destination, SYSTEMD_OBJECT, MANAGER_INTERFACE, "GetUnit",
			       &error, &reply, "s", name);
	if (r < 0) {
		if (sd_bus_error_has_name(&error, NO_SUCH_UNIT_ERROR))
			return 0;
		*ret_why = xstrdup(error.message ? error.message : strerror(-r));
		return r;
	}
	r = sd_bus_message_read(reply, "o", &object);
	if (r < 0) {
		*ret_why = xasprintf("GetUnit's reply: %s", strerror(-r));
		return r;
	}
	*ret_object = xstrdup(object);
	return 1;
}

/* A failed property read of unit name, as unit_resolve's error. */
static int property_error(const char *name, const char *property, const sd_bus_error *error, int r,
			  char **ret_err)
{
	/* unloaded since GetUnit */
	if (sd_bus_error_has_name(error, SD_BUS_ERROR_UNKNOWN_OBJECT))
		return set_error(ret_err, -ENOENT, "unit %s is not loaded", name);
	return set_error(ret_err, r, "reading %s of unit %s from systemd: %s", property, name,
			 error->message ? error->message : strerror(-r));
}

/* The cgroup, main pid and state of the unit at object on bus, into *ret. */
static int bus_unit_info(sd_bus *bus, const char *destination, const char *name, const char *object,
			 struct unit_info *ret, char **ret_err)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *state = NULL, *cgroup = NULL;
	bool service = ends_with(name, ".service");
	uint32_t main_pid = 0;
	int r;

	/* the state only explains a refusal; without it the answer stands */
	r = sd_bus_get_property_string(bus, destination, object, UNIT_INTERFACE, "ActiveState",
				       &error, &state);
	if (r < 0) {
		if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT))
			return property_error(name, "ActiveState", &error, r, ret_err);
		state = NULL;
		sd_bus_error_free(&error);
	}
	r = sd_bus_get_property_string(bus, destination, object,
				       service ? SERVICE_INTERFACE : SCOPE_INTERFACE,
				       "ControlGroup", &error, &cgroup);
	if (r < 0)
		return property_error(name, "ControlGroup", &error, r, ret_err);
	if (!*cgroup)
		return set_error(ret_err, -ESRCH, "unit %s is not running (ActiveState %s)", name,
				 state ? state : "unknown");
	if (service) {
		r = sd_bus_get_property_trivial(bus, destination, object, SERVICE_INTERFACE,
						"MainPID", &error, 'u', &main_pid);
		if (r < 0)
			return property_error(name, "MainPID", &error, r, ret_err);
	}
	*ret = (struct unit_info){
	    .cgroup = TAKE_PTR(cgroup),
	    .main_pid = (pid_t)main_pid,
	    .via = UNIT_VIA_DBUS,
	    .active_state = TAKE_PTR(state),
	};
	return 0;
}

/* A growing list of owned strings. */
struct path_list {
	char **v;
	size_t n, cap;
};

static void path_list_push(struct path_list *l, char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			abort();
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
}

static void path_list_clear(struct path_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct path_list){0};
}

static int subdir_filter(const struct dirent *de)
{
	/* kernfs always fills in d_type */
	return de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, "..");
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * The cgroup path of the shallowest cgroup called name below the hierarchy's
 * root directory root: breadth first, each cgroup's children in name order,
 * at most UNIT_SEARCH_DEPTH_MAX levels and UNIT_SEARCH_DIRS_MAX cgroups
 * read. 0 and *ret_path when found; -ENOENT when not, *ret_incomplete true
 * when a bound ended the search; another negative errno when root itself
 * cannot be read.
 */
static int search_cgroup(const char *root, const char *name, char **ret_path, bool *ret_incomplete)
{
	_cleanup_(path_list_clear) struct path_list level = {0}, next = {0};
	bool incomplete = false;
	size_t n_read = 0, i;
	unsigned depth;

	path_list_push(&level, xstrdup(""));
	for (depth = 1; depth <= UNIT_SEARCH_DEPTH_MAX && level.n > 0; depth++) {
		for (i = 0; i < level.n; i++) {
			_cleanup_free_ char *dir = xasprintf("%s%s", root, level.v[i]);
			_cleanup_free_ char *found = NULL;
			struct dirent **entries = NULL;
			int n, j;

			if (n_read++ >= UNIT_SEARCH_DIRS_MAX) {
				*ret_incomplete = true;
				return -ENOENT;
			}
			n = scandir(dir, &entries, subdir_filter, name_cmp);
			if (n < 0) {
				if (depth == 1)
					return -errno;
				continue; /* removed since its parent was read */
			}
			for (j = 0; j < n; j++) {
				char *path = xasprintf("%s/%s", level.v[i], entries[j]->d_name);

				/* a path argusd could not name again is no answer */
				if (!cgroup_path_valid(path) || found) {
					free(path);
				} else if (streq(entries[j]->d_name, name)) {
					found = path;
				} else if (depth < UNIT_SEARCH_DEPTH_MAX) {
					if (next.n < UNIT_SEARCH_DIRS_MAX)
						path_list_push(&next, path);
					else {
						incomplete = true;
						free(path);
					}
				} else {
					free(path);
				}
				free(entries[j]);
			}
			free(entries);
			if (found) {
				*ret_path = TAKE_PTR(found);
				return 0;
			}
		}
		path_list_clear(&level);
		level = next;
		next = (struct path_list){0};
	}
	*ret_incomplete = incomplete;
	return -ENOENT;
}

/* unit_resolve without systemd: the hierarchy searched for a cgroup named name. */
static int resolve_cgroupfs(const char *name, const char *why_no_bus, struct unit_info *ret,
			    char **ret_err)
{
	_cleanup_free_ char *root = NULL, *path = NULL, *dir = NULL;
	bool incomplete = false, populated;
	size_t n;
	int r;

	r = cgroup_dir("/", &root, NULL);
	if (r < 0)
		return set_error(ret_err, r,
				 "unit %s: systemd is not reachable over D-Bus (%s) and no cgroup "
				 "hierarchy that tracks services is mounted (%s)",
				 name, why_no_bus, strerror(-r));
	r = search_cgroup(root, name, &path, &incomplete);
	if (r == -ENOENT)
		return set_error(ret_err, r,
				 "no cgroup named %s in %s (searched %d levels deep%s; systemd is "
				 "not reachable over D-Bus: %s)",
				 name, root, UNIT_SEARCH_DEPTH_MAX,
				 incomplete ? ", stopped at the bound on cgroups read" : "",
				 why_no_bus);
	if (r < 0)
		return set_error(ret_err, r, "searching %s for the cgroup of unit %s: %s", root,
				 name, strerror(-r));
	dir = xasprintf("%s%s", root, path);
	/* max 0: truncated says whether there is any process at all */
	r = cgroup_procs(dir, NULL, 0, &n, &populated);
	if (r == -ENOENT)
		return set_error(ret_err, r, "no cgroup named %s in %s (%s was removed meanwhile)",
				 name, root, path);
	if (r < 0)
		return set_error(ret_err, r, "reading the processes of cgroup %s: %s", path,
				 strerror(-r));
	if (!populated)
		return set_error(ret_err, -ESRCH,
				 "unit %s is not running (its cgroup %s holds no process)", name,
				 path);
	*ret = (struct unit_info){
	    .cgroup = TAKE_PTR(path),
	    .main_pid = 0,
	    .via = UNIT_VIA_CGROUPFS,
	    .active_state = NULL,
	};
	return 0;
}

int unit_resolve(const char *name, struct unit_info *ret, char **ret_err)
{
	static const struct {
		bool private;
		const char *destination;
		const char *label;
	} ways[] = {
	    {false, SYSTEMD_DESTINATION, "system bus"},
	    {true, NULL, "/run/systemd/private"},
	};
	_cleanup_free_ char *why_no_bus = NULL;
	size_t i;
	int r;

	if (!ret || !ret_err)
		return -EINVAL;
	if (!unit_name_valid(name))
		return set_error(ret_err, -EINVAL,
				 "not a unit name: a unit is named by 1 to %d characters of "
				 "[A-Za-z0-9:_.\\@-] ending in .service or .scope",
				 UNIT_NAME_MAX);
	for (i = 0; i < ARRAY_SIZE(ways); i++) {
		_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
		_cleanup_free_ char *object = NULL, *why = NULL, *all = NULL;

		r = bus_connect(ways[i].private, &bus);
		if (r < 0) {
			why = xstrdup(strerror(-r));
		} else {
			r = bus_get_unit(bus, ways[i].destination, name, &object, &why);
			if (r == 0)
				return set_error(ret_err, -ENOENT, "unit %s is not loaded", name);
			if (r > 0)
				return bus_unit_info(bus, ways[i].destination, name, object, ret,
						     ret_err);
		}
		all = why_no_bus ? xasprintf("%s; %s: %s", why_no_bus, ways[i].label, why)
				 : xasprintf("%s: %s", ways[i].label, why);
		free(why_no_bus);
		why_no_bus = TAKE_PTR(all);
	}
	return resolve_cgroupfs(name, why_no_bus, ret, ret_err);
}
