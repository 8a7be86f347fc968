/* SPDX-License-Identifier: MIT */
/*
 * A systemd unit's cgroup: what a service definition that names a unit
 * ("redis-server.service", "session-3.scope") diagnoses. systemd answers over
 * D-Bus, on the system bus or, without a dbus-daemon, on its private socket;
 * where systemd is not reachable at all (not PID 1, a container) the cgroup
 * hierarchy is searched for a cgroup named as the unit.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define UNIT_NAME_MAX 256 /* characters of a unit name (api/validate.c's API_UNIT_MAX) */
#define UNIT_BUS_TIMEOUT_USEC 5000000ull /* each D-Bus exchange with systemd */
#define UNIT_SEARCH_DEPTH_MAX 6		 /* levels of the hierarchy the fallback searches */
#define UNIT_SEARCH_DIRS_MAX 16384	 /* cgroups the fallback reads at most */

/* The unit_info.via values. */
#define UNIT_VIA_DBUS "dbus"
#define UNIT_VIA_CGROUPFS "cgroupfs"

struct unit_info {
	char *cgroup;	    /* cgroup path, e.g. "/system.slice/redis-server.service" */
	pid_t main_pid;	    /* the service's MainPID; 0 when none or unknown (scopes, cgroupfs) */
	const char *via;    /* UNIT_VIA_DBUS or UNIT_VIA_CGROUPFS (static) */
	char *active_state; /* systemd's ActiveState ("active", ...); NULL when unknown */
};

/*
 * Whether name is a unit name argusd diagnoses: 1 to UNIT_NAME_MAX
 * characters of [A-Za-z0-9:_.\@-], ending in ".service" or ".scope". The
 * rule of api/validate.c's unit check, kept identical. Pure.
 */
bool unit_name_valid(const char *name);

/*
 * The cgroup of unit name, from systemd: Manager.GetUnit (which, unlike
 * LoadUnit, leaves a unit that is not loaded unloaded), then the unit's
 * ControlGroup, MainPID (services) and ActiveState; each exchange bounded by
 * UNIT_BUS_TIMEOUT_USEC. Tried on the system bus, then on systemd's private
 * socket (/run/systemd/private, root only); when systemd answers on neither,
 * the hierarchy of cgroup_dir("/") is searched breadth first, in name order,
 * UNIT_SEARCH_DEPTH_MAX levels deep, for a cgroup named exactly name (the
 * shallowest wins), and via is "cgroupfs". On success fills *ret (release
 * with unit_info_clear) and returns 0. Errors, with *ret_err (malloc'ed, one
 * sentence) set: -EINVAL for a name that is not unit_name_valid, -ENOENT
 * when systemd has not loaded the unit or, searching, no cgroup has its
 * name, -ESRCH when the unit is not running (its ControlGroup is empty, or
 * the cgroup found holds no process), another negative errno when systemd's
 * answer or the hierarchy cannot be read. ret and ret_err must not be NULL
 * (-EINVAL, no message). *ret is written only on success, *ret_err only on
 * failure.
 */
int unit_resolve(const char *name, struct unit_info *ret, char **ret_err);

/* Free what u holds and zero it; NULL is fine. */
void unit_info_clear(struct unit_info *u);
