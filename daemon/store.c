// SPDX-License-Identifier: MIT
/*
 * The store: one SQLite connection guarded by a mutex. Every public call
 * takes the mutex for its whole duration, so multi-statement operations
 * (trace sequence numbers, schema upgrades) are atomic with respect to the
 * other threads of argusd. SQLite failures are logged here, once, and
 * returned as -EIO.
 */
#include "daemon/store.h"
#include "daemon/log.h"
#include "daemon/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <string.h>

#define SCHEMA_FILE_MAX (1024 * 1024)
#define STORE_BUSY_TIMEOUT_MS 5000
#define STORE_LIST_MAX 500

struct store {
	sqlite3 *db;
	pthread_mutex_t lock;
	int version;
	size_t trace_max; /* bytes of one job's trace (store_set_trace_max) */
	/* bumped after every write of a job row, and after every removal of one */
	_Atomic uint64_t job_writes, job_removals;
};

static inline void sqlite3_finalizep(sqlite3_stmt **stmt)
{
	sqlite3_finalize(*stmt); /* NULL is a no-op */
}
#define _cleanup_stmt_ _cleanup_(sqlite3_finalizep)

/* The store mutex, held until the end of the enclosing block: STORE_LOCKED(s). */
static struct store *store_lock(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	return s;
}
static void store_unlockp(struct store **s)
{
	if (*s)
		pthread_mutex_unlock(&(*s)->lock);
}
static void store_closep(struct store **s)
{
	store_close(*s);
}

#define STORE_LOCKED(s)                                                                            \
	_cleanup_(store_unlockp) struct store *_locked_ __attribute__((unused)) = store_lock(s)

static int sql_fail(struct store *s, const char *what)
{
	log_error("store: %s: %s", what, sqlite3_errmsg(s->db));
	return -EIO;
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **ret)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return sql_fail(s, "prepare");
	*ret = stmt;
	return 0;
}

static int exec(struct store *s, const char *sql, const char *what)
{
	char *err = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		log_error("store: %s: %s", what, err ? err : sqlite3_errmsg(s->db));
		sqlite3_free(err);
		return -EIO;
	}
	return 0;
}

/* A PRAGMA (or any query) whose first row's first column is an integer. */
static int pragma_int(struct store *s, const char *sql, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	r = prepare(s, sql, &stmt);
	if (r < 0)
		return r;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return sql_fail(s, sql);
	*ret = sqlite3_column_int64(stmt, 0);
	return 0;
}

/* Run a statement that returns no rows. Foreign key failures are -ENOENT (the parent is missing).
 */
static int step_done(struct store *s, sqlite3_stmt *stmt, const char *what)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_DONE)
		return 0;
	if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
		return -ENOENT;
	if ((rc & 0xff) == SQLITE_CONSTRAINT) {
		log_error("store: %s: %s", what, sqlite3_errmsg(s->db));
		return -EINVAL;
	}
	return sql_fail(s, what);
}

static void now_iso(char buf[static 32])
{
	format_iso8601(now_real_ns(), buf, 32);
}

/* Compact JSON text of any value (caller frees); -EINVAL when it cannot be encoded. */
static int dump(const json_t *j, char **ret)
{
	char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!t)
		return -EINVAL;
	*ret = t;
	return 0;
}

static int bind_json(sqlite3_stmt *stmt, int idx, const json_t *j)
{
	char *t;
	int r;

	if (!j)
		return sqlite3_bind_null(stmt, idx) == SQLITE_OK ? 0 : -EIO;
	r = dump(j, &t);
	if (r < 0)
		return r;
	return sqlite3_bind_text(stmt, idx, t, -1, free) == SQLITE_OK ? 0 : -EIO;
}

static int bind_text(sqlite3_stmt *stmt, int idx, const char *t)
{
	if (!t)
		return sqlite3_bind_null(stmt, idx) == SQLITE_OK ? 0 : -EIO;
	return sqlite3_bind_text(stmt, idx, t, -1, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : -EIO;
}

/* A JSON TEXT column as a value; NULL columns and (impossible) bad JSON give JSON null. */
static json_t *column_json(sqlite3_stmt *stmt, int col)
{
	const char *t = (const char *)sqlite3_column_text(stmt, col);
	json_t *j;

	if (!t)
		return json_null();
	j = json_loads(t, JSON_DECODE_ANY, NULL);
	return j ? j : json_null();
}

static json_t *column_string(sqlite3_stmt *stmt, int col)
{
	const char *t = (const char *)sqlite3_column_text(stmt, col);

	return t ? json_string(t) : json_null();
}

/* ---- open and schema ---- */

/* Schema files are "NNN-name.sql"; the number is the version they bring the database to. */
static int schema_file_version(const char *name)
{
	size_t len = strlen(name);
	long v = 0;
	size_t i;

	for (i = 0; name[i] >= '0' && name[i] <= '9'; i++) {
		v = v * 10 + (name[i] - '0');
		if (v > INT_MAX / 10)
			return -1;
	}
	if (i == 0 || name[i] != '-' || len < 5 || strcmp(name + len - 4, ".sql") != 0)
		return -1;
	return (int)v;
}

static int schema_filter(const struct dirent *de)
{
	return schema_file_version(de->d_name) > 0;
}

static int user_version(struct store *s, int *ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	r = prepare(s, "PRAGMA user_version", &stmt);
	if (r < 0)
		return r;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return sql_fail(s, "read user_version");
	*ret = sqlite3_column_int(stmt, 0);
	return 0;
}

static int apply_one(struct store *s, const char *dir, const char *name, int version)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	_cleanup_free_ char *sql = NULL;
	_cleanup_free_ char *set = NULL;
	int r;

	r = read_file_bounded(path, SCHEMA_FILE_MAX, &sql, NULL);
	if (r < 0)
		return log_error_errno(r, "store: cannot read schema file %s: %m", path);

	r = exec(s, "BEGIN IMMEDIATE", "begin schema upgrade");
	if (r < 0)
		return r;
	set = xasprintf("PRAGMA user_version = %d", version);
	r = exec(s, sql, path);
	if (r >= 0)
		r = exec(s, set, "set user_version");
	if (r >= 0)
		r = exec(s, "COMMIT", "commit schema upgrade");
	if (r < 0) {
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	log_info("store: applied schema %s (version %d)", name, version);
	return 0;
}

static int apply_schema(struct store *s, const char *dir)
{
	struct dirent **list = NULL;
	int n, i, r = 0, current = 0, last = 0;

	r = user_version(s, &current);
	if (r < 0)
		return r;

	n = scandir(dir, &list, schema_filter, alphasort);
	if (n < 0)
		return log_error_errno(errno, "store: cannot list schema directory %s: %m", dir);

	for (i = 0; i < n && r >= 0; i++) {
		int v = schema_file_version(list[i]->d_name);

		/* alphasort orders zero-padded numbers; require strictly increasing versions */
		if (v <= last) {
			log_error("store: schema file %s/%s repeats or reorders version %d", dir,
				  list[i]->d_name, v);
			r = -EINVAL;
			break;
		}
		last = v;
		if (v > current) {
			r = apply_one(s, dir, list[i]->d_name, v);
			if (r >= 0)
				current = v;
		}
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	if (r < 0)
		return r;

	if (last == 0)
		return log_error_errno(ENOENT, "store: no schema files (NNN-name.sql) in %s", dir);
	if (current > last)
		return log_error_errno(EPROTO,
				       "store: database is at schema version %d, newer than the "
				       "schema files in %s (%d); refusing to use it",
				       current, dir, last);
	s->version = current;
	return 0;
}

int store_open(const char *path, const char *schema_dir, struct store **ret)
{
	_cleanup_(store_closep) struct store *s = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->trace_max = STORE_TRACE_MAX_DEFAULT;

	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		log_error("store: cannot open %s: %s", path,
			  s->db ? sqlite3_errmsg(s->db) : "out of memory");
		return -EIO;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);

	/*
	 * Before anything creates a table: a new database gives the pages of
	 * deleted jobs back to the file system (store_apply_retention). On an
	 * existing one created without it this changes nothing (only a VACUUM
	 * would): its free pages are reused by new rows, the file keeps its size.
	 */
	r = exec(s, "PRAGMA auto_vacuum = INCREMENTAL", "enable incremental auto-vacuum");
	if (r < 0)
		return r;
	r = exec(s, "PRAGMA journal_mode = WAL", "enable WAL");
	if (r < 0)
		return r;
	r = exec(s, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "set pragmas");
	if (r < 0)
		return r;
	r = apply_schema(s, schema_dir);
	if (r < 0)
		return r;
	{
		int64_t mode = 2;

		if (pragma_int(s, "PRAGMA auto_vacuum", &mode) >= 0 && mode != 2)
			log_notice("store: %s was created without incremental auto-vacuum: the space of "
				   "deleted jobs is reused but the file does not shrink; to convert "
				   "it, stop argusd and run sqlite3 %s 'PRAGMA auto_vacuum = "
				   "INCREMENTAL; VACUUM;'",
				   path, path);
	}

	*ret = TAKE_PTR(s);
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->db && sqlite3_close(s->db) != SQLITE_OK)
		log_error("store: close: %s", sqlite3_errmsg(s->db));
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int store_schema_version(struct store *s)
{
	return s->version;
}

/* ---- jobs ---- */

static bool valid_state(const char *state)
{
	static const char *const states[] = {
	    "queued", "running", "succeeded", "failed", "cancelled", "interrupted",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(states); i++)
		if (strcmp(state, states[i]) == 0)
			return true;
	return false;
}

bool store_state_final(const char *state)
{
	return strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0 ||
	       strcmp(state, "cancelled") == 0 || strcmp(state, "interrupted") == 0;
}

/* "uid:N" or "token": short, and nothing that needs quoting anywhere it is shown. */
static bool valid_submitter(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= STORE_SUBMITTER_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789:") == n;
}

int store_job_create(struct store *s, const char *kind, const json_t *request, int64_t *ret_id)
{
	return store_job_create_by(s, kind, request, NULL, ret_id);
}

int store_job_create_by(struct store *s, const char *kind, const json_t *request,
			const char *submitter, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char now[32];
	int r;

	if (!kind || (strcmp(kind, "diagnose") != 0 && strcmp(kind, "reference") != 0) ||
	    !json_is_object(request) || (submitter && !valid_submitter(submitter)))
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s,
		    "INSERT INTO jobs (kind, state, request, created, submitter)"
		    " VALUES (?, 'queued', ?, ?, ?)",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	if (bind_text(stmt, 1, kind) < 0 || bind_json(stmt, 2, request) < 0 ||
	    bind_text(stmt, 3, now) < 0 || bind_text(stmt, 4, submitter) < 0)
		return -EINVAL;
	r = step_done(s, stmt, "create job");
	if (r < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(s->db);
	atomic_fetch_add(&s->job_writes, 1);
	return 0;
}

int store_job_update(struct store *s, int64_t id, const char *state, double progress,
		     const char *step, const json_t *result, const json_t *error)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char now[32];
	int r;

	if (state && !valid_state(state))
		return -EINVAL;
	if (progress > 1)
		progress = 1;

	STORE_LOCKED(s);
	/*
	 * One statement; each "keep" is a NULL parameter. started is set on the
	 * transition into running, finished on the one into a final state.
	 */
	r = prepare(s,
		    "UPDATE jobs SET"
		    " state = COALESCE(?1, state),"
		    " progress = COALESCE(?2, progress),"
		    " step = COALESCE(?3, step),"
		    " result = COALESCE(?4, result),"
		    " error = COALESCE(?5, error),"
		    " started = CASE WHEN ?1 = 'running' THEN ?6 ELSE started END,"
		    " finished = CASE WHEN ?7 THEN ?6 ELSE finished END"
		    " WHERE id = ?8",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	if (bind_text(stmt, 1, state) < 0 ||
	    (progress >= 0 ? sqlite3_bind_double(stmt, 2, progress) : sqlite3_bind_null(stmt, 2)) !=
		SQLITE_OK ||
	    bind_text(stmt, 3, step) < 0 || bind_json(stmt, 4, result) < 0 ||
	    bind_json(stmt, 5, error) < 0 || bind_text(stmt, 6, now) < 0 ||
	    sqlite3_bind_int(stmt, 7, state && store_state_final(state)) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 8, id) != SQLITE_OK)
		return -EINVAL;
	r = step_done(s, stmt, "update job");
	if (r < 0)
		return r;
	atomic_fetch_add(&s->job_writes, 1);
	return sqlite3_changes(s->db) > 0 ? 0 : -ENOENT;
}

#define JOB_COLUMNS                                                                                \
	"id, kind, state, progress, step, created, started, finished, subject, submitter"
#define JOB_COLUMNS_N 10

/* The list representation, from a row of JOB_COLUMNS. */
static json_t *job_summary(sqlite3_stmt *stmt)
{
	json_t *j = json_object();

	json_object_set_new(j, "id", json_integer(sqlite3_column_int64(stmt, 0)));
	json_object_set_new(j, "kind", column_string(stmt, 1));
	json_object_set_new(j, "state", column_string(stmt, 2));
	json_object_set_new(j, "progress", json_real(sqlite3_column_double(stmt, 3)));
	json_object_set_new(j, "step", column_string(stmt, 4));
	json_object_set_new(j, "created", column_string(stmt, 5));
	json_object_set_new(j, "started", column_string(stmt, 6));
	json_object_set_new(j, "finished", column_string(stmt, 7));
	json_object_set_new(j, "subject", column_string(stmt, 8));
	json_object_set_new(j, "submitter", column_string(stmt, 9));
	return j;
}

int store_job_get(struct store *s, int64_t id, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_t *j;
	int r, rc;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT " JOB_COLUMNS ", request, result, error FROM jobs WHERE id = ?",
		    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return sql_fail(s, "get job");

	j = job_summary(stmt);
	json_object_set_new(j, "request", column_json(stmt, JOB_COLUMNS_N));
	if (sqlite3_column_type(stmt, JOB_COLUMNS_N + 1) != SQLITE_NULL)
		json_object_set_new(j, "result", column_json(stmt, JOB_COLUMNS_N + 1));
	if (sqlite3_column_type(stmt, JOB_COLUMNS_N + 2) != SQLITE_NULL)
		json_object_set_new(j, "error", column_json(stmt, JOB_COLUMNS_N + 2));
	*ret = j;
	return 0;
}

uint64_t store_job_writes(struct store *s)
{
	return atomic_load(&s->job_writes);
}

uint64_t store_job_removals(struct store *s)
{
	return atomic_load(&s->job_removals);
}

int store_job_state(struct store *s, int64_t id, char *state, size_t len)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	const char *t;
	int r, rc;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT state FROM jobs WHERE id = ?", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return sql_fail(s, "get job state");
	t = (const char *)sqlite3_column_text(stmt, 0);
	if (!t || strlen(t) >= len)
		return -ENOBUFS;
	strcpy(state, t);
	return 0;
}

int store_job_list(struct store *s, const struct job_filter *f, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *jobs = NULL;
	int64_t last = 0;
	int r, rc, n = 0;

	if (f->limit < 1 || f->limit > STORE_LIST_MAX || f->before_id < 0)
		return -EINVAL;

	STORE_LOCKED(s);
	/* Fetch one row more than asked to know whether a next page exists. */
	r = prepare(s,
		    "SELECT " JOB_COLUMNS ", json_extract(result, '$.verdict'),"
		    " json_extract(result, '$.path') FROM jobs"
		    " WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR kind = ?2)"
		    " AND (?3 IS NULL OR workload = ?3) AND (?4 <= 0 OR id < ?4)"
		    " AND (?6 IS NULL OR subject = ?6) AND (?7 IS NULL OR created >= ?7)"
		    " AND (?8 IS NULL OR created < ?8)"
		    " ORDER BY id DESC LIMIT ?5",
		    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, f->state) < 0 || bind_text(stmt, 2, f->kind) < 0 ||
	    bind_text(stmt, 3, f->workload) < 0 ||
	    sqlite3_bind_int64(stmt, 4, f->before_id) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 5, f->limit + 1) != SQLITE_OK ||
	    bind_text(stmt, 6, f->subject) < 0 || bind_text(stmt, 7, f->since) < 0 ||
	    bind_text(stmt, 8, f->until) < 0)
		return -EINVAL;

	jobs = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		json_t *j;

		if (n == f->limit)
			break;
		j = job_summary(stmt);
		if (sqlite3_column_type(stmt, JOB_COLUMNS_N) != SQLITE_NULL) {
			json_object_set_new(j, "verdict", column_string(stmt, JOB_COLUMNS_N));
			json_object_set_new(j, "path", column_json(stmt, JOB_COLUMNS_N + 1));
		}
		json_array_append_new(jobs, j);
		last = sqlite3_column_int64(stmt, 0);
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(s, "list jobs");

	*ret = json_pack("{s:O,s:o}", "jobs", jobs, "next_before",
			 rc == SQLITE_ROW ? json_integer(last) : json_null());
	return *ret ? 0 : -ENOMEM;
}

int store_jobs_queued(struct store *s, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	_cleanup_free_ int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT id FROM jobs WHERE state = 'queued' ORDER BY id", &stmt);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			int64_t *p = realloc(ids, ncap * sizeof(*ids));

			if (!p)
				return -ENOMEM;
			ids = p;
			cap = ncap;
		}
		ids[n++] = sqlite3_column_int64(stmt, 0);
	}
	if (rc != SQLITE_DONE)
		return sql_fail(s, "list queued jobs");
	*ret_ids = TAKE_PTR(ids);
	*ret_n = n;
	return 0;
}

int store_jobs_queued_by(struct store *s, const char *submitter, unsigned *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	if (!submitter)
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT COUNT(*) FROM jobs WHERE submitter = ? AND state = 'queued'", &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, submitter) < 0)
		return -EINVAL;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return sql_fail(s, "count a submitter's queued jobs");
	*ret_n = (unsigned)sqlite3_column_int64(stmt, 0);
	return 0;
}

int store_jobs_interrupt_running(struct store *s)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char now[32];
	int r;

	STORE_LOCKED(s);
	r = prepare(s,
		    "UPDATE jobs SET state = 'interrupted', finished = ?,"
		    " error = COALESCE(error, json_object('code', 'interrupted', 'message',"
		    " 'argusd stopped while the job was running; submit it again'))"
		    " WHERE state = 'running'",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	bind_text(stmt, 1, now);
	r = step_done(s, stmt, "interrupt running jobs");
	if (r < 0)
		return r;
	atomic_fetch_add(&s->job_writes, 1);
	return sqlite3_changes(s->db);
}

/* ---- traces and probes ---- */

/* Room kept below trace_max for the "trace_cut" step (about 400 bytes). */
#define STORE_TRACE_CUT_RESERVE 1024
#define STORE_TRACE_MIN (16 * 1024)
#define STORE_TRACE_KIND_MAX 64

void store_set_trace_max(struct store *s, size_t bytes)
{
	STORE_LOCKED(s);
	s->trace_max = bytes < STORE_TRACE_MIN ? STORE_TRACE_MIN : bytes;
}

struct trace_size {
	int64_t bytes, cut_seq, omitted_steps, omitted_bytes; /* cut_seq -1: not cut */
};

static int trace_size_get(struct store *s, int64_t job_id, struct trace_size *ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = prepare(s,
		    "SELECT bytes, COALESCE(cut_seq, -1), omitted_steps, omitted_bytes"
		    " FROM trace_sizes WHERE job_id = ?",
		    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, job_id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		*ret = (struct trace_size){ .cut_seq = -1 };
		return 0;
	}
	if (rc != SQLITE_ROW)
		return sql_fail(s, "read trace size");
	*ret = (struct trace_size){ sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1),
				    sqlite3_column_int64(stmt, 2), sqlite3_column_int64(stmt, 3) };
	return 0;
}

static int trace_size_put(struct store *s, int64_t job_id, const struct trace_size *z)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	r = prepare(
	    s,
	    "INSERT OR REPLACE INTO trace_sizes"
	    " (job_id, bytes, cut_seq, omitted_steps, omitted_bytes) VALUES (?, ?, ?, ?, ?)",
	    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, job_id);
	sqlite3_bind_int64(stmt, 2, z->bytes);
	if (z->cut_seq >= 0)
		sqlite3_bind_int64(stmt, 3, z->cut_seq);
	else
		sqlite3_bind_null(stmt, 3);
	sqlite3_bind_int64(stmt, 4, z->omitted_steps);
	sqlite3_bind_int64(stmt, 5, z->omitted_bytes);
	return step_done(s, stmt, "record trace size");
}

/* Insert a step's text at the job's next seq. -ENOENT when the job does not exist. */
static int trace_insert(struct store *s, int64_t job_id, const char *text)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	/* seq is computed in the same statement, under the store lock: gapless and in order. */
	r = prepare(s,
		    "INSERT INTO trace_steps (job_id, seq, step) VALUES (?1,"
		    " (SELECT COALESCE(MAX(seq) + 1, 0) FROM trace_steps WHERE job_id = ?1), ?2)",
		    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, job_id);
	if (bind_text(stmt, 2, text) < 0)
		return -EINVAL;
	return step_done(s, stmt, "append trace step");
}

/* The "trace_cut" step: where the trace stopped, and how much was left out after it. */
static json_t *trace_cut_step(const struct store *s, const struct trace_size *z,
			      const json_t *first)
{
	const char *kind = json_string_value(json_object_get(first, "kind"));
	json_t *t = json_object_get(first, "t");
	_cleanup_free_ char *msg = xasprintf(
	    "the trace reached trace_max_bytes (%zu bytes): the %lld step(s) after this point "
	    "(%lld bytes) were not stored",
	    s->trace_max, (long long)z->omitted_steps, (long long)z->omitted_bytes);

	return json_pack("{s:O,s:s,s:s,s:I,s:I,s:I,s:I,s:s%}", "t",
			 json_is_number(t) ? t : json_null(), "kind", "trace_cut", "message", msg,
			 "limit_bytes", (json_int_t)s->trace_max, "stored_bytes",
			 (json_int_t)z->bytes, "omitted_steps", (json_int_t)z->omitted_steps,
			 "omitted_bytes", (json_int_t)z->omitted_bytes, "first_omitted_kind",
			 kind ?: "", kind ? strnlen(kind, STORE_TRACE_KIND_MAX) : (size_t)0);
}

/* Under the store lock and a transaction: 0 stored, 1 left out (counted in the cut step). */
static int trace_append_locked(struct store *s, int64_t job_id, const json_t *step,
			       const char *text, size_t len)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	_cleanup_free_ char *cut_text = NULL;
	json_auto_t *cut = NULL;
	struct trace_size z;
	int r;

	r = trace_size_get(s, job_id, &z);
	if (r < 0)
		return r;
	if (z.cut_seq < 0 && (size_t)z.bytes + len + STORE_TRACE_CUT_RESERVE <= s->trace_max) {
		r = trace_insert(s, job_id, text);
		if (r < 0)
			return r;
		z.bytes += len;
		return trace_size_put(s, job_id, &z);
	}

	/* Beyond the cap: the step is left out, and the trace's last step says so. */
	z.omitted_steps++;
	z.omitted_bytes += len;
	if (z.cut_seq < 0) {
		cut = trace_cut_step(s, &z, step);
		r = dump(cut, &cut_text);
		if (r < 0)
			return r;
		r = trace_insert(s, job_id, cut_text);
		if (r < 0)
			return r;
		r = prepare(s, "SELECT MAX(seq) FROM trace_steps WHERE job_id = ?", &stmt);
		if (r < 0)
			return r;
		sqlite3_bind_int64(stmt, 1, job_id);
		if (sqlite3_step(stmt) != SQLITE_ROW)
			return sql_fail(s, "read the trace's last seq");
		z.cut_seq = sqlite3_column_int64(stmt, 0);
	} else {
		_cleanup_free_ char *msg = NULL;

		cut = trace_cut_step(s, &z, step);
		msg = xstrdup(json_string_value(json_object_get(cut, "message")));
		r = prepare(s,
			    "UPDATE trace_steps SET step = json_set(step, '$.omitted_steps', ?1,"
			    " '$.omitted_bytes', ?2, '$.message', ?3)"
			    " WHERE job_id = ?4 AND seq = ?5",
			    &stmt);
		if (r < 0)
			return r;
		sqlite3_bind_int64(stmt, 1, z.omitted_steps);
		sqlite3_bind_int64(stmt, 2, z.omitted_bytes);
		if (bind_text(stmt, 3, msg) < 0)
			return -EINVAL;
		sqlite3_bind_int64(stmt, 4, job_id);
		sqlite3_bind_int64(stmt, 5, z.cut_seq);
		r = step_done(s, stmt, "update the trace_cut step");
		if (r < 0)
			return r;
	}
	r = trace_size_put(s, job_id, &z);
	return r < 0 ? r : 1;
}

int store_trace_append(struct store *s, int64_t job_id, const json_t *step)
{
	_cleanup_free_ char *text = NULL;
	int r, c;

	if (!json_is_object(step))
		return -EINVAL;
	r = dump(step, &text);
	if (r < 0)
		return -EINVAL;

	STORE_LOCKED(s);
	/* the size check, the step and the size in one transaction */
	r = exec(s, "BEGIN IMMEDIATE", "begin trace append");
	if (r < 0)
		return r;
	r = trace_append_locked(s, job_id, step, text, strlen(text));
	if (r >= 0) {
		c = exec(s, "COMMIT", "commit trace append");
		if (c < 0)
			r = c;
	}
	if (r < 0)
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* 0 when the query (one id parameter) returns a row, -ENOENT when none. */
static int row_exists(struct store *s, const char *sql, int64_t id, const char *what)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = prepare(s, sql, &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return -ENOENT;
	return sql_fail(s, what);
}

static int job_exists(struct store *s, int64_t id)
{
	return row_exists(s, "SELECT 1 FROM jobs WHERE id = ?", id, "look up job");
}

int store_trace_get(struct store *s, int64_t job_id, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *steps = NULL;
	int r, rc;

	STORE_LOCKED(s);
	r = job_exists(s, job_id);
	if (r < 0)
		return r;
	r = prepare(s, "SELECT step FROM trace_steps WHERE job_id = ? ORDER BY seq", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, job_id);
	steps = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		json_array_append_new(steps, column_json(stmt, 0));
	if (rc != SQLITE_DONE)
		return sql_fail(s, "read trace");
	*ret = json_pack("{s:I,s:O}", "job", (json_int_t)job_id, "steps", steps);
	return *ret ? 0 : -ENOMEM;
}

int store_probe_add(struct store *s, int64_t job_id, int level, const json_t *probe)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char now[32];
	int r;

	if (level < 1 || level > 3 || !json_is_object(probe))
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s, "INSERT INTO probes (job_id, level, probe, created) VALUES (?, ?, ?, ?)",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	sqlite3_bind_int64(stmt, 1, job_id);
	sqlite3_bind_int(stmt, 2, level);
	if (bind_json(stmt, 3, probe) < 0 || bind_text(stmt, 4, now) < 0)
		return -EINVAL;
	return step_done(s, stmt, "add probe");
}

/* ---- references ---- */

int store_reference_create(struct store *s, int64_t job_id, const json_t *meta, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	const char *subject;
	char now[32];
	int r;

	subject = json_string_value(json_object_get(meta, "subject"));
	if (!json_is_object(meta) || !subject || !*subject || job_id < 0)
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s, "INSERT INTO refs (job_id, subject, meta, created) VALUES (?, ?, ?, ?)",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	if (job_id > 0)
		sqlite3_bind_int64(stmt, 1, job_id);
	else
		sqlite3_bind_null(stmt, 1);
	if (bind_text(stmt, 2, subject) < 0 || bind_json(stmt, 3, meta) < 0 ||
	    bind_text(stmt, 4, now) < 0)
		return -EINVAL;
	r = step_done(s, stmt, "create reference");
	if (r < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_reference_add_run(struct store *s, int64_t ref_id, int repeat, const struct mvec *v)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *vec = NULL;
	int r;

	if (repeat < 0 || !v)
		return -EINVAL;
	vec = mvec_to_json(v);

	STORE_LOCKED(s);
	r = prepare(
	    s, "INSERT OR REPLACE INTO reference_runs (ref_id, repeat, vector) VALUES (?, ?, ?)",
	    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, ref_id);
	sqlite3_bind_int(stmt, 2, repeat);
	if (bind_json(stmt, 3, vec) < 0)
		return -EINVAL;
	return step_done(s, stmt, "add reference run");
}

/* meta + "id", "job", "created", from a row of (id, job_id, meta, created). */
static json_t *reference_row(sqlite3_stmt *stmt)
{
	json_t *j = column_json(stmt, 2);

	if (!json_is_object(j)) {
		json_decref(j);
		j = json_object();
	}
	json_object_set_new(j, "id", json_integer(sqlite3_column_int64(stmt, 0)));
	json_object_set_new(j, "job",
			    sqlite3_column_type(stmt, 1) == SQLITE_NULL
				? json_null()
				: json_integer(sqlite3_column_int64(stmt, 1)));
	json_object_set_new(j, "created", column_string(stmt, 3));
	return j;
}

static int reference_exists(struct store *s, int64_t ref_id)
{
	return row_exists(s, "SELECT 1 FROM refs WHERE id = ?", ref_id, "look up reference");
}

int store_reference_exists(struct store *s, int64_t ref_id)
{
	STORE_LOCKED(s);
	return reference_exists(s, ref_id);
}

int store_reference_get(struct store *s, int64_t ref_id, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	_cleanup_stmt_ sqlite3_stmt *runs_stmt = NULL;
	json_auto_t *ref = NULL;
	json_t *runs;
	int r, rc;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT id, job_id, meta, created FROM refs WHERE id = ?", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, ref_id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return sql_fail(s, "get reference");
	ref = reference_row(stmt);

	r = prepare(s, "SELECT vector FROM reference_runs WHERE ref_id = ? ORDER BY repeat",
		    &runs_stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(runs_stmt, 1, ref_id);
	runs = json_array();
	json_object_set_new(ref, "runs", runs);
	while ((rc = sqlite3_step(runs_stmt)) == SQLITE_ROW)
		json_array_append_new(runs, column_json(runs_stmt, 0));
	if (rc != SQLITE_DONE)
		return sql_fail(s, "get reference runs");
	*ret = TAKE_PTR(ref);
	return 0;
}

int store_reference_runs(struct store *s, int64_t ref_id, struct mvec **ret_runs, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	struct mvec *runs = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	STORE_LOCKED(s);
	r = reference_exists(s, ref_id);
	if (r < 0)
		return r;
	r = prepare(s, "SELECT vector FROM reference_runs WHERE ref_id = ? ORDER BY repeat", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, ref_id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		json_auto_t *vec = column_json(stmt, 0);

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct mvec *p = realloc(runs, ncap * sizeof(*runs));

			if (!p) {
				mvec_array_free(runs, n);
				return -ENOMEM;
			}
			runs = p;
			cap = ncap;
		}
		r = mvec_from_json(vec, &runs[n]);
		if (r < 0) {
			mvec_array_free(runs, n);
			log_error("store: reference %lld has a malformed run vector",
				  (long long)ref_id);
			return -EIO;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		mvec_array_free(runs, n);
		return sql_fail(s, "read reference runs");
	}
	*ret_runs = runs;
	*ret_n = n;
	return 0;
}

int store_reference_latest(struct store *s, const char *subject, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r, rc;

	if (!subject)
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT id FROM refs WHERE subject = ? ORDER BY id DESC LIMIT 1", &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, subject) < 0)
		return -EINVAL;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return sql_fail(s, "find latest reference");
	*ret_id = sqlite3_column_int64(stmt, 0);
	return 0;
}

int store_reference_each(struct store *s, void (*fn)(const json_t *ref, void *ud), void *ud)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r, rc;

	STORE_LOCKED(s);
	r = prepare(s, "SELECT id, job_id, meta, created FROM refs ORDER BY id", &stmt);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		json_auto_t *ref = reference_row(stmt);

		fn(ref, ud);
	}
	return rc == SQLITE_DONE ? 0 : sql_fail(s, "read references");
}

int store_reference_list(struct store *s, const char *subject, int limit, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *refs = NULL;
	int r, rc;

	if (limit < 1 || limit > STORE_LIST_MAX)
		return -EINVAL;

	STORE_LOCKED(s);
	r = prepare(s,
		    "SELECT id, job_id, meta, created FROM refs WHERE (?1 IS NULL OR subject = ?1)"
		    " ORDER BY id DESC LIMIT ?2",
		    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, subject) < 0 || sqlite3_bind_int(stmt, 2, limit) != SQLITE_OK)
		return -EINVAL;
	refs = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		json_array_append_new(refs, reference_row(stmt));
	if (rc != SQLITE_DONE)
		return sql_fail(s, "list references");
	*ret = json_pack("{s:O}", "references", refs);
	return *ret ? 0 : -ENOMEM;
}

int store_reference_delete(struct store *s, int64_t ref_id)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	STORE_LOCKED(s);
	/* one lock for the checks and the delete: no job is created in between */
	r = reference_exists(s, ref_id);
	if (r < 0)
		return r;
	r = row_exists(s,
		       "SELECT 1 FROM jobs WHERE state IN ('queued', 'running')"
		       " AND json_extract(request, '$.reference') = ? LIMIT 1",
		       ref_id, "look up jobs naming a reference");
	if (r == 0)
		return -EBUSY;
	if (r != -ENOENT)
		return r;
	/* its runs go with it (ON DELETE CASCADE), the job that recorded it stays */
	r = prepare(s, "DELETE FROM refs WHERE id = ?", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, ref_id);
	return step_done(s, stmt, "delete reference");
}

/* ---- vectors of a job ---- */

int store_vector_add(struct store *s, int64_t job_id, const char *kind, int level,
		     const char *parent, const struct mvec *v)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *vec = NULL;
	char now[32];
	int r;

	if (!kind || (strcmp(kind, "pmv") != 0 && strcmp(kind, "rmv") != 0) || level < 1 ||
	    level > 3 || !v)
		return -EINVAL;
	vec = mvec_to_json(v);

	STORE_LOCKED(s);
	r = prepare(s,
		    "INSERT INTO vectors (job_id, kind, level, parent, vector, created)"
		    " VALUES (?, ?, ?, ?, ?, ?)",
		    &stmt);
	if (r < 0)
		return r;
	now_iso(now);
	sqlite3_bind_int64(stmt, 1, job_id);
	sqlite3_bind_int(stmt, 3, level);
	if (bind_text(stmt, 2, kind) < 0 || bind_text(stmt, 4, parent ? parent : "") < 0 ||
	    bind_json(stmt, 5, vec) < 0 || bind_text(stmt, 6, now) < 0)
		return -EINVAL;
	return step_done(s, stmt, "add vector");
}

int store_vectors_get(struct store *s, int64_t job_id, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	json_auto_t *vectors = NULL;
	int r, rc;

	STORE_LOCKED(s);
	r = job_exists(s, job_id);
	if (r < 0)
		return r;
	r = prepare(s,
		    "SELECT kind, level, parent, vector FROM vectors WHERE job_id = ? ORDER BY id",
		    &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, job_id);
	vectors = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		json_array_append_new(
		    vectors, json_pack("{s:o,s:i,s:o,s:o}", "kind", column_string(stmt, 0), "level",
				       sqlite3_column_int(stmt, 1), "parent",
				       column_string(stmt, 2), "vector", column_json(stmt, 3)));
	if (rc != SQLITE_DONE)
		return sql_fail(s, "read vectors");
	*ret = TAKE_PTR(vectors);
	return 0;
}

/* ---- the host's pace ---- */

int store_pace_add(struct store *s, uint64_t taken_real_ns, const char *host, int cpu,
		   double ns_per_load)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char taken[32];
	int r;

	if (!host || cpu < 0 || !(ns_per_load > 0) || !isfinite(ns_per_load))
		return -EINVAL;
	format_iso8601(taken_real_ns, taken, sizeof(taken));
	STORE_LOCKED(s);
	r = prepare(s, "INSERT INTO host_pace (taken, host, cpu, ns_per_load) VALUES (?, ?, ?, ?)",
		    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, taken) < 0 || bind_text(stmt, 2, host) < 0 ||
	    sqlite3_bind_int(stmt, 3, cpu) != SQLITE_OK ||
	    sqlite3_bind_double(stmt, 4, ns_per_load) != SQLITE_OK)
		return -EINVAL;
	return step_done(s, stmt, "add a host pace reading");
}

int store_pace_since(struct store *s, const char *host, int cpu, uint64_t since_real_ns,
		     double *ns, size_t max, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char since[32];
	size_t n = 0;
	int r, rc;

	if (!host || (max > 0 && !ns))
		return -EINVAL;
	format_iso8601(since_real_ns, since, sizeof(since));
	STORE_LOCKED(s);
	/* taken is ISO 8601 UTC text, whose order is the time's */
	r = prepare(s,
		    "SELECT ns_per_load FROM host_pace WHERE host = ?1 AND (?2 < 0 OR cpu = ?2)"
		    " AND taken >= ?3 ORDER BY taken DESC LIMIT ?4",
		    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, host) < 0 || sqlite3_bind_int(stmt, 2, cpu) != SQLITE_OK ||
	    bind_text(stmt, 3, since) < 0 ||
	    sqlite3_bind_int64(stmt, 4, (sqlite3_int64)max) != SQLITE_OK)
		return -EINVAL;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		ns[n++] = sqlite3_column_double(stmt, 0);
	if (rc != SQLITE_DONE)
		return sql_fail(s, "read host pace readings");
	*ret_n = n;
	return 0;
}

int store_pace_latest(struct store *s, const char *host, int *cpus, double *ns, size_t max,
		      size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	size_t n = 0;
	int r, rc;

	if (!host || (max > 0 && (!cpus || !ns)))
		return -EINVAL;
	STORE_LOCKED(s);
	/* with max(), SQLite takes the other columns from the row that holds it */
	r = prepare(s,
		    "SELECT cpu, ns_per_load, max(taken) FROM host_pace WHERE host = ?1"
		    " GROUP BY cpu ORDER BY cpu LIMIT ?2",
		    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, host) < 0 ||
	    sqlite3_bind_int64(stmt, 2, (sqlite3_int64)max) != SQLITE_OK)
		return -EINVAL;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cpus[n] = sqlite3_column_int(stmt, 0);
		ns[n++] = sqlite3_column_double(stmt, 1);
	}
	if (rc != SQLITE_DONE)
		return sql_fail(s, "read the newest host pace readings");
	*ret_n = n;
	return 0;
}

int store_pace_forget(struct store *s, uint64_t before_real_ns, unsigned *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	char before[32];
	int r;

	format_iso8601(before_real_ns, before, sizeof(before));
	STORE_LOCKED(s);
	r = prepare(s, "DELETE FROM host_pace WHERE taken < ?", &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, before) < 0)
		return -EINVAL;
	r = step_done(s, stmt, "forget old host pace readings");
	if (r < 0)
		return r;
	if (ret_n)
		*ret_n = (unsigned)sqlite3_changes(s->db);
	return 0;
}

/* ---- retention ---- */

#define STORE_RETENTION_BATCH 256 /* jobs deleted per transaction: the lock is let go between */
#define STORE_VACUUM_PAGES 4096	  /* pages given back per step of the incremental vacuum */

/* One batch of finished jobs beyond the limits, oldest first; *ret_n how many went. */
static int retention_batch(struct store *s, const char *cutoff, unsigned max_jobs, int *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *stmt = NULL;
	int r;

	STORE_LOCKED(s);
	/*
	 * Only jobs in a final state are candidates: a queued or running job is
	 * never deleted, and never counts towards max_jobs. Their trace steps,
	 * probes, vectors and trace size go with them (ON DELETE CASCADE); a
	 * reference they recorded stays, its "job" becomes null.
	 */
	r = prepare(
	    s,
	    "WITH done AS (SELECT id, COALESCE(finished, created) AS t FROM jobs"
	    "  WHERE state IN ('succeeded', 'failed', 'cancelled', 'interrupted')),"
	    " kept AS (SELECT id FROM done ORDER BY t DESC, id DESC LIMIT ?2)"
	    " DELETE FROM jobs WHERE id IN (SELECT id FROM done"
	    "  WHERE (?1 IS NOT NULL AND t < ?1) OR id NOT IN kept ORDER BY t, id LIMIT ?3)",
	    &stmt);
	if (r < 0)
		return r;
	if (bind_text(stmt, 1, cutoff) < 0 ||
	    sqlite3_bind_int64(stmt, 2, max_jobs ? (int64_t)max_jobs : -1) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 3, STORE_RETENTION_BATCH) != SQLITE_OK)
		return -EINVAL;
	r = step_done(s, stmt, "delete old jobs");
	if (r < 0)
		return r;
	*ret_n = sqlite3_changes(s->db);
	if (*ret_n > 0) {
		atomic_fetch_add(&s->job_removals, 1);
		atomic_fetch_add(&s->job_writes, 1);
	}
	return 0;
}

/* Give free pages back, in steps; false in *ret_incremental when the database cannot. */
static int vacuum_step(struct store *s, int64_t *ret_freed, bool *ret_incremental, bool *ret_more)
{
	int64_t mode, before, after;
	_cleanup_free_ char *sql = NULL;
	int r;

	STORE_LOCKED(s);
	r = pragma_int(s, "PRAGMA auto_vacuum", &mode);
	if (r < 0)
		return r;
	*ret_incremental = mode == 2;
	*ret_more = false;
	*ret_freed = 0;
	if (mode != 2)
		return 0;
	r = pragma_int(s, "PRAGMA freelist_count", &before);
	if (r < 0 || before == 0)
		return r;
	sql = xasprintf("PRAGMA incremental_vacuum(%d)", STORE_VACUUM_PAGES);
	r = exec(s, sql, "incremental vacuum");
	if (r < 0)
		return r;
	r = pragma_int(s, "PRAGMA freelist_count", &after);
	if (r < 0)
		return r;
	*ret_freed = before - after;
	*ret_more = after > 0 && after < before;
	return 0;
}

int store_apply_retention(struct store *s, const struct store_retention *p, uint64_t now_real_ns,
			  struct store_retention_stats *ret)
{
	struct store_retention_stats st = {};
	char cutoff[32];
	bool more = true;
	int r, n;

	if (p->retention_days > 0) {
		uint64_t age = (uint64_t)p->retention_days * 86400ull * 1000000000ull;

		/* finished is ISO 8601 UTC text, whose order is the time's */
		format_iso8601(now_real_ns > age ? now_real_ns - age : 0, cutoff, sizeof(cutoff));
	}
	if (p->retention_days > 0 || p->max_jobs > 0) {
		do {
			r = retention_batch(s, p->retention_days > 0 ? cutoff : NULL, p->max_jobs,
					    &n);
			if (r < 0)
				return r;
			st.jobs_deleted += n;
		} while (n == STORE_RETENTION_BATCH);
	}
	while (more) {
		int64_t freed;

		r = vacuum_step(s, &freed, &st.incremental, &more);
		if (r < 0)
			return r;
		st.pages_freed += freed;
	}
	if (st.pages_freed > 0) {
		STORE_LOCKED(s);
		/* in WAL mode the file shrinks when the log is checkpointed */
		(void)sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL,
						NULL);
	}
	*ret = st;
	return 0;
}
