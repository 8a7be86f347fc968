// SPDX-License-Identifier: MIT
/*
 * The kernel code-path tree: parsing tree-data documents into struct tree,
 * its hooks into struct hook_list (the one place that reads a hook's text),
 * and the queries the level loop needs. Pure: no logging, no globals beyond
 * constant tables.
 */
#include "daemon/tree.h"
#include "daemon/util.h"
#include "bpf/paths.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

_Static_assert(TREE_MAX_CHILDREN == ARGUS_MAX_SLOTS,
	       "one level's nodes must fit the probe's slots");
_Static_assert(TREE_MAX_NODE_HOOKS == ARGUS_FENTRY_PAIRS,
	       "one node's functions must fit the probe's fentry pairs");
_Static_assert(ARGUS_CLS_MAX <= 32, "class masks are unsigned");

/* The names tree-data uses, from the class table of bpf/paths.h. */
static const char *const class_names[ARGUS_CLS_MAX] = {
#define CLASS_NAME(id, name, companions, with, ftype, calls) [ARGUS_CLS_##id] = #name,
    ARGUS_CLASSES(CLASS_NAME)
#undef CLASS_NAME
};

static const char *const backend_names[BACKEND_MAX] = {
    [BACKEND_FENTRY] = "fentry",
    [BACKEND_KPROBE] = "kprobe",
    [BACKEND_TRACEPOINT] = "tracepoint",
};

static const char *const metric_names[] = {"count", "time_ns"};

const char *backend_name(enum backend b)
{
	if (b >= 0 && b < BACKEND_MAX)
		return backend_names[b];
	return "none";
}

enum backend backend_from_name(const char *s)
{
	int b;

	if (!s)
		return BACKEND_NONE;
	for (b = 0; b < BACKEND_MAX; b++)
		if (strcmp(s, backend_names[b]) == 0)
			return b;
	return BACKEND_NONE;
}

const char *tree_class_name(int cls)
{
	if (cls < 0 || cls >= ARGUS_CLS_MAX)
		return NULL;
	return class_names[cls];
}

int tree_class_from_name(const char *name)
{
	int c;

	if (!name)
		return -1;
	for (c = 0; c < ARGUS_CLS_MAX; c++)
		if (strcmp(name, class_names[c]) == 0)
			return c;
	return -1;
}

bool tree_node_has_metric(const struct tree_node *n, const char *metric)
{
	size_t i;

	if (!n || !metric)
		return false;
	for (i = 0; i < n->n_metrics; i++)
		if (strcmp(n->metrics[i], metric) == 0)
			return true;
	return false;
}

static void strvn_free(char **v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void node_clear(struct tree_node *n)
{
	int b;

	free(n->id);
	free(n->name);
	free(n->description);
	free(n->children);
	strvn_free(n->metrics, n->n_metrics);
	for (b = 0; b < BACKEND_MAX; b++)
		free(n->hooks[b]);
	free(n->hook);
	free(n->reason);
}

void tree_free(struct tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_nodes; i++)
		node_clear(&t->nodes[i]);
	free(t->nodes);
	free(t->version);
	free(t);
}

static void tree_freep(struct tree **t)
{
	tree_free(*t);
}

/* Parse errors: "nodes[3] (kernel_paging.x): field "classes": unknown class "foo"". */
struct perr {
	char *msg;
};

static int fail(struct perr *e, size_t idx, const char *id, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(struct perr *e, size_t idx, const char *id, const char *field, const char *fmt, ...)
{
	_cleanup_free_ char *what = NULL;
	va_list ap;

	if (e->msg)
		return -EINVAL;
	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	if (!what)
		abort();
	if (id)
		e->msg = xasprintf("nodes[%zu] (%s): field \"%s\": %s", idx, id, field, what);
	else if (idx != (size_t)-1)
		e->msg = xasprintf("nodes[%zu]: field \"%s\": %s", idx, field, what);
	else
		e->msg = xasprintf("field \"%s\": %s", field, what);
	/* a quoted value is cut at a byte count (%.64s), perhaps inside a UTF-8 sequence */
	utf8_sanitize(e->msg);
	return -EINVAL;
}

static bool is_lower_ident_start(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_lower_ident(char c)
{
	return is_lower_ident_start(c) || (c >= '0' && c <= '9') || c == '_';
}

static bool is_symbol_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

/*
 * Check an id's syntax; *ret_depth is its number of components. Returns a
 * static description of the problem, or NULL when valid (depth unchecked).
 */
static const char *check_id(const char *id, int *ret_depth)
{
	bool start = true;
	int depth = 1;
	size_t i;

	if (!*id)
		return "empty";
	for (i = 0; id[i]; i++) {
		char c = id[i];

		if (i >= TREE_MAX_ID_LEN)
			return "too long";
		if (c == '.') {
			if (start)
				return "empty component";
			depth++;
			start = true;
			continue;
		}
		if (start ? !is_lower_ident_start(c) : !is_lower_ident(c))
			return "components must match [a-z][a-z0-9_]*";
		start = false;
	}
	if (start)
		return "empty component";
	*ret_depth = depth;
	return NULL;
}

/* A function symbol, variants included: "do_wp_page", "do_wp_page.isra.0". */
static bool valid_symbol(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || s[0] == '.' || (s[0] >= '0' && s[0] <= '9') || s[len - 1] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!is_symbol_char(s[i]) || (s[i] == '.' && s[i + 1] == '.'))
			return false;
	return true;
}

/* A tracepoint name: [A-Za-z0-9_]+. */
static bool valid_tracepoint(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
		if (s[i] == '.' || !is_symbol_char(s[i]))
			return false;
	return true;
}

enum hook_kind hook_kind_of(enum backend b)
{
	return b == BACKEND_TRACEPOINT ? HOOK_TRACEPOINT : HOOK_FUNCTION;
}

int hook_list_parse(const char *text, enum hook_kind kind, struct hook_list *ret)
{
	struct hook_list l = {.n = 0};
	const char *s = text;

	for (;;) {
		/* a function is one name: a '+' in it is not a symbol character */
		size_t len = kind == HOOK_TRACEPOINT ? strcspn(s, "+") : strlen(s);
		struct hook *h;

		if (kind == HOOK_TRACEPOINT ? !valid_tracepoint(s, len) : !valid_symbol(s, len))
			return -EINVAL;
		if (len > TREE_MAX_HOOK_NAME_LEN || l.n == TREE_MAX_NODE_HOOKS)
			return -E2BIG;
		h = &l.v[l.n++];
		h->kind = kind;
		memcpy(h->name, s, len);
		h->name[len] = 0;
		s += len;
		if (!*s)
			break;
		s++; /* the '+' */
	}
	*ret = l;
	return 0;
}

char *hook_list_join(const struct hook_list *l)
{
	size_t i, len = 1;
	char *s, *p;

	for (i = 0; i < l->n; i++)
		len += strlen(l->v[i].name) + 1;
	s = p = malloc(len);
	if (!s)
		abort();
	*p = 0;
	for (i = 0; i < l->n; i++) {
		if (i > 0)
			p = stpcpy(p, "+");
		p = stpcpy(p, l->v[i].name);
	}
	return s;
}

bool hook_list_has(const struct hook_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return true;
	return false;
}

int hook_list_add(struct hook_list *l, const struct hook *h)
{
	if (hook_list_has(l, h->name))
		return 0;
	if (l->n == TREE_MAX_NODE_HOOKS)
		return -E2BIG;
	l->v[l->n++] = *h;
	return 0;
}

static bool hook_list_equal(const struct hook_list *a, const struct hook_list *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->v[i].kind != b->v[i].kind || strcmp(a->v[i].name, b->v[i].name) != 0)
			return false;
	return true;
}

void tree_node_choose(struct tree_node *n, enum backend b, const struct hook_list *hooks)
{
	char *text = b == BACKEND_NONE ? NULL : hook_list_join(hooks);

	free(n->hook);
	n->hook = text;
	n->backend = b;
	n->sum_of_children = false;
	if (b == BACKEND_NONE)
		n->chosen.n = 0;
	else
		n->chosen = *hooks; /* hooks may be &n->chosen: an exact overlap */
}

static bool strv_contains(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static int parse_metrics(struct perr *e, size_t idx, struct tree_node *n, const json_t *arr)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return fail(e, idx, n->id, "metrics", "must be an array of strings");
	if (json_array_size(arr) == 0)
		return fail(e, idx, n->id, "metrics", "must not be empty");
	if (json_array_size(arr) > ARRAY_SIZE(metric_names))
		return fail(e, idx, n->id, "metrics", "at most %zu entries",
			    ARRAY_SIZE(metric_names));
	n->metrics = calloc(json_array_size(arr), sizeof(char *));
	if (!n->metrics)
		return -ENOMEM;
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);
		size_t m;

		if (!s)
			return fail(e, idx, n->id, "metrics", "entry %zu is not a string", i);
		for (m = 0; m < ARRAY_SIZE(metric_names); m++)
			if (strcmp(s, metric_names[m]) == 0)
				break;
		if (m == ARRAY_SIZE(metric_names))
			return fail(e, idx, n->id, "metrics",
				    "unknown metric \"%.64s\" (known: count, time_ns)", s);
		if (strv_contains(n->metrics, n->n_metrics, s))
			return fail(e, idx, n->id, "metrics", "duplicate metric \"%s\"", s);
		n->metrics[n->n_metrics++] = xstrdup(s);
	}
	return 0;
}

static int parse_classes(struct perr *e, size_t idx, struct tree_node *n, const json_t *arr)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return fail(e, idx, n->id, "classes", "must be an array of strings");
	if (json_array_size(arr) == 0)
		return fail(e, idx, n->id, "classes", "must not be empty (omit it on inner nodes)");
	if (json_array_size(arr) > ARGUS_CLS_MAX)
		return fail(e, idx, n->id, "classes", "at most %d entries", ARGUS_CLS_MAX);
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);
		int c;

		if (!s)
			return fail(e, idx, n->id, "classes", "entry %zu is not a string", i);
		c = tree_class_from_name(s);
		if (c < 0)
			return fail(e, idx, n->id, "classes", "unknown class \"%.64s\"", s);
		if (n->classes & (1u << c))
			return fail(e, idx, n->id, "classes", "duplicate class \"%s\"", s);
		n->classes |= 1u << c;
	}
	return 0;
}

static int parse_hooks(struct perr *e, size_t idx, struct tree_node *n, const json_t *obj)
{
	const char *key;
	json_t *arr;

	if (!json_is_object(obj))
		return fail(e, idx, n->id, "hooks",
			    "must be an object of backend name to array of hook names");
	json_object_foreach((json_t *)obj, key, arr)
	{
		enum backend b = backend_from_name(key);
		size_t i;
		json_t *v;

		if (b == BACKEND_NONE)
			return fail(e, idx, n->id, "hooks",
				    "unknown backend \"%.64s\" (known: fentry, kprobe, tracepoint)",
				    key);
		if (!json_is_array(arr))
			return fail(e, idx, n->id, "hooks", "\"%s\" must be an array of strings",
				    key);
		if (json_array_size(arr) > TREE_MAX_HOOKS)
			return fail(e, idx, n->id, "hooks", "\"%s\" has more than %d alternatives",
				    key, TREE_MAX_HOOKS);
		if (json_array_size(arr) == 0)
			continue;
		n->hooks[b] = calloc(json_array_size(arr), sizeof(struct hook_list));
		if (!n->hooks[b])
			return -ENOMEM;
		json_array_foreach(arr, i, v)
		{
			const char *s = json_string_value(v);
			struct hook_list *alt = &n->hooks[b][n->n_hooks[b]];
			size_t k;
			int r;

			if (!s)
				return fail(e, idx, n->id, "hooks",
					    "\"%s\" entry %zu is not a string", key, i);
			r = hook_list_parse(s, hook_kind_of(b), alt);
			if (r == -E2BIG)
				return fail(
				    e, idx, n->id, "hooks",
				    "\"%s\" entry %zu: a name longer than %d characters, or "
				    "more than %d names",
				    key, i, TREE_MAX_HOOK_NAME_LEN, TREE_MAX_NODE_HOOKS);
			if (r < 0)
				return fail(e, idx, n->id, "hooks",
					    "\"%s\": invalid hook \"%.64s\"%s", key, s,
					    b == BACKEND_TRACEPOINT
						? " (tracepoint names joined by '+')"
						: " (a function symbol)");
			for (k = 0; k < n->n_hooks[b]; k++)
				if (hook_list_equal(&n->hooks[b][k], alt))
					return fail(e, idx, n->id, "hooks",
						    "\"%s\": duplicate hook \"%s\"", key, s);
			n->n_hooks[b]++;
		}
	}
	return 0;
}

static int add_child(struct tree_node *p, int child)
{
	int *c = realloc(p->children, (p->n_children + 1) * sizeof(int));

	if (!c)
		return -ENOMEM;
	c[p->n_children++] = child;
	p->children = c;
	return 0;
}

/* Parse nodes[idx] into t->nodes[idx] (t->n_nodes == idx on entry). */
static int parse_node(struct perr *e, struct tree *t, size_t idx, const json_t *obj,
		      bool *ret_has_classes, size_t *ret_level1)
{
	struct tree_node *n = &t->nodes[idx];
	const char *key, *id, *desc, *dot, *problem;
	json_t *v, *jclasses = NULL;
	int depth = 0, r;

	n->parent = -1;
	n->backend = BACKEND_NONE;
	if (!json_is_object(obj))
		return fail(e, idx, NULL, "nodes", "entry is not an object");

	v = json_object_get(obj, "id");
	if (!v)
		return fail(e, idx, NULL, "id", "missing");
	id = json_string_value(v);
	if (!id)
		return fail(e, idx, NULL, "id", "must be a string");
	problem = check_id(id, &depth);
	if (problem)
		return fail(e, idx, NULL, "id", "invalid id \"%.*s\": %s", TREE_MAX_ID_LEN, id,
			    problem);
	n->id = xstrdup(id);
	/* Counted only once the id is owned, so that tree_free() releases it. */
	t->n_nodes = idx + 1;
	if (depth > TREE_MAX_DEPTH)
		return fail(e, idx, id, "id", "depth %d exceeds the maximum %d", depth,
			    TREE_MAX_DEPTH);
	if (tree_find(&(struct tree){.nodes = t->nodes, .n_nodes = idx}, id) >= 0)
		return fail(e, idx, id, "id", "duplicate id");

	dot = strrchr(id, '.');
	n->name = xstrdup(dot ? dot + 1 : id);
	n->level = depth;
	if (dot) {
		_cleanup_free_ char *pid = strndup(id, dot - id);
		int p;

		if (!pid)
			return -ENOMEM;
		p = tree_find(&(struct tree){.nodes = t->nodes, .n_nodes = idx}, pid);
		if (p < 0)
			return fail(e, idx, id, "id", "parent \"%s\" does not appear earlier", pid);
		if (t->nodes[p].n_children >= TREE_MAX_CHILDREN)
			return fail(e, idx, id, "id", "parent \"%s\" has more than %d children",
				    pid, TREE_MAX_CHILDREN);
		n->parent = p;
		r = add_child(&t->nodes[p], (int)idx);
		if (r < 0)
			return r;
	} else if (++*ret_level1 > TREE_MAX_CHILDREN) {
		return fail(e, idx, id, "id", "more than %d level-1 nodes", TREE_MAX_CHILDREN);
	}

	json_object_foreach((json_t *)obj, key, v)
	{
		if (strcmp(key, "id") == 0)
			continue;
		if (strcmp(key, "description") == 0) {
			desc = json_string_value(v);
			if (!desc || !*desc)
				return fail(e, idx, id, "description",
					    "must be a non-empty string");
			if (strlen(desc) > TREE_MAX_DESCRIPTION_LEN)
				return fail(e, idx, id, "description", "longer than %d characters",
					    TREE_MAX_DESCRIPTION_LEN);
			n->description = xstrdup(desc);
		} else if (strcmp(key, "metrics") == 0) {
			r = parse_metrics(e, idx, n, v);
			if (r < 0)
				return r;
		} else if (strcmp(key, "classes") == 0) {
			jclasses = v;
		} else if (strcmp(key, "hooks") == 0) {
			r = parse_hooks(e, idx, n, v);
			if (r < 0)
				return r;
		} else {
			return fail(
			    e, idx, id, key,
			    "unknown field (known: id, description, metrics, classes, hooks)");
		}
	}
	if (!n->description)
		return fail(e, idx, id, "description", "missing");
	if (!n->metrics)
		return fail(e, idx, id, "metrics", "missing");
	if (jclasses) {
		r = parse_classes(e, idx, n, jclasses);
		if (r < 0)
			return r;
	}
	*ret_has_classes = jclasses != NULL;
	return 0;
}

/* Leaves own classes, inner nodes inherit the union; each class has one owner. */
static int check_classes(struct perr *e, struct tree *t, const bool *has_classes)
{
	int owner[ARGUS_CLS_MAX];
	size_t i;
	int c;

	for (c = 0; c < ARGUS_CLS_MAX; c++)
		owner[c] = -1;
	for (i = 0; i < t->n_nodes; i++) {
		struct tree_node *n = &t->nodes[i];

		if (n->n_children > 0) {
			if (has_classes[i])
				return fail(e, i, n->id, "classes",
					    "an inner node may not list classes (it gets the union "
					    "of its descendants)");
			continue;
		}
		/*
		 * The classifier measures a leaf by its classes; a leaf that only
		 * functions measure (their calls and time) owns none.
		 */
		if (!has_classes[i] && (n->n_hooks[BACKEND_TRACEPOINT] > 0 ||
					n->n_hooks[BACKEND_FENTRY] + n->n_hooks[BACKEND_KPROBE] == 0))
			return fail(e, i, n->id, "classes",
				    "missing: a leaf must own a class, unless only functions "
				    "(fentry, kprobe) measure it");
		for (c = 0; c < ARGUS_CLS_MAX; c++) {
			if (!(n->classes & (1u << c)))
				continue;
			if (owner[c] >= 0)
				return fail(e, i, n->id, "classes",
					    "class \"%s\" already belongs to %s", class_names[c],
					    t->nodes[owner[c]].id);
			owner[c] = (int)i;
		}
	}
	/* Parents come before children: a backward pass sees every child first. */
	for (i = t->n_nodes; i-- > 0;)
		if (t->nodes[i].parent >= 0)
			t->nodes[t->nodes[i].parent].classes |= t->nodes[i].classes;
	return 0;
}

int tree_from_json(const json_t *doc, struct tree **ret, char **ret_err)
{
	_cleanup_(tree_freep) struct tree *t = NULL;
	_cleanup_free_ bool *has_classes = NULL;
	struct perr e = {};
	const json_t *nodes;
	const char *key, *version;
	size_t i, n, level1 = 0;
	json_t *v;
	int r = 0;

	if (!json_is_object(doc)) {
		r = fail(&e, (size_t)-1, NULL, "(document)", "must be a JSON object");
		goto out;
	}
	json_object_foreach((json_t *)doc, key,
			    v) if (strcmp(key, "version") != 0 && strcmp(key, "nodes") != 0)
	{
		r = fail(&e, (size_t)-1, NULL, key, "unknown field (known: version, nodes)");
		goto out;
	}
	version = json_string_value(json_object_get(doc, "version"));
	if (!version || !*version || strlen(version) > TREE_MAX_VERSION_LEN) {
		r = fail(&e, (size_t)-1, NULL, "version",
			 "must be a non-empty string of at most %d characters",
			 TREE_MAX_VERSION_LEN);
		goto out;
	}
	nodes = json_object_get(doc, "nodes");
	if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
		r = fail(&e, (size_t)-1, NULL, "nodes", "must be a non-empty array");
		goto out;
	}
	n = json_array_size(nodes);
	if (n > TREE_MAX_NODES) {
		r = fail(&e, (size_t)-1, NULL, "nodes", "%zu nodes, more than the maximum %d", n,
			 TREE_MAX_NODES);
		goto out;
	}

	t = calloc(1, sizeof(*t));
	has_classes = calloc(n, sizeof(bool));
	if (!t || !has_classes)
		return -ENOMEM;
	t->version = xstrdup(version);
	t->nodes = calloc(n, sizeof(struct tree_node));
	if (!t->nodes)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r = parse_node(&e, t, i, json_array_get(nodes, i), &has_classes[i], &level1);
		if (r < 0)
			goto out;
	}
	r = check_classes(&e, t, has_classes);
	if (r < 0)
		goto out;
	*ret = TAKE_PTR(t);
	return 0;
out:
	if (ret_err && e.msg)
		*ret_err = TAKE_PTR(e.msg);
	free(e.msg);
	return r;
}

int tree_load_file(const char *path, struct tree **ret, char **ret_err)
{
	_cleanup_free_ char *buf = NULL;
	json_auto_t *doc = NULL;
	json_error_t jerr;
	size_t len;
	int r;

	r = read_file_bounded(path, TREE_MAX_FILE_BYTES, &buf, &len);
	if (r < 0) {
		if (ret_err)
			*ret_err = r == -EFBIG ? xasprintf("%s: larger than %d bytes", path,
							   TREE_MAX_FILE_BYTES)
					       : xasprintf("%s: %s", path, strerror(-r));
		return r;
	}
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		if (ret_err)
			*ret_err =
			    xasprintf("%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	r = tree_from_json(doc, ret, ret_err);
	if (r < 0 && ret_err && *ret_err) {
		char *msg = xasprintf("%s: %s", path, *ret_err);

		free(*ret_err);
		*ret_err = msg;
	}
	return r;
}

int tree_find(const struct tree *t, const char *id)
{
	size_t i;

	if (!t || !id)
		return -1;
	for (i = 0; i < t->n_nodes; i++)
		if (strcmp(t->nodes[i].id, id) == 0)
			return (int)i;
	return -1;
}

size_t tree_active(const struct tree *t, int parent, int *ret_idx, size_t max)
{
	size_t i, n = 0;

	if (!t)
		return 0;
	if (parent < 0) {
		for (i = 0; i < t->n_nodes && n < max; i++)
			if (t->nodes[i].parent < 0)
				ret_idx[n++] = (int)i;
		return n;
	}
	if ((size_t)parent >= t->n_nodes)
		return 0;
	for (i = 0; i < t->nodes[parent].n_children && n < max; i++)
		ret_idx[n++] = t->nodes[parent].children[i];
	return n;
}

bool tree_in_subtree(const struct tree *t, int root, int idx)
{
	if (!t || root < 0 || idx < 0 || (size_t)root >= t->n_nodes || (size_t)idx >= t->n_nodes)
		return false;
	/* Parents precede children, so the walk up ends. */
	for (; idx >= 0; idx = t->nodes[idx].parent)
		if (idx == root)
			return true;
	return false;
}

static json_t *strv_to_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* A backend's alternatives as tree-data writes them: ["page_fault_user+rss_stat", ...]. */
static json_t *alternatives_to_json(const struct hook_list *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		_cleanup_free_ char *text = hook_list_join(&v[i]);

		json_array_append_new(a, json_string(text));
	}
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *tree_to_json(const struct tree *t)
{
	size_t by_backend[BACKEND_MAX] = {}, unavailable = 0, i, c;
	json_t *nodes, *jb, *summary, *doc;
	int b;

	if (!t)
		return NULL;
	nodes = json_array();
	for (i = 0; i < t->n_nodes; i++) {
		const struct tree_node *n = &t->nodes[i];
		json_t *o, *children, *classes, *hooks;
		bool available = n->backend >= 0 && n->backend < BACKEND_MAX;

		children = json_array();
		for (c = 0; c < n->n_children; c++)
			json_array_append_new(children, json_string(t->nodes[n->children[c]].id));
		classes = json_array();
		for (c = 0; c < ARGUS_CLS_MAX; c++)
			if (n->classes & (1u << c))
				json_array_append_new(classes, json_string(class_names[c]));
		hooks = json_object();
		for (b = 0; b < BACKEND_MAX; b++)
			json_object_set_new(hooks, backend_names[b],
					    alternatives_to_json(n->hooks[b], n->n_hooks[b]));
		if (available)
			by_backend[n->backend]++;
		else
			unavailable++;

		o = json_pack(
		    "{s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}", "id", n->id,
		    "description", n->description ? n->description : "", "level", n->level,
		    "parent", str_or_null(n->parent >= 0 ? t->nodes[n->parent].id : NULL),
		    "children", children, "metrics", strv_to_json(n->metrics, n->n_metrics),
		    "classes", classes, "hooks", hooks, "backend",
		    str_or_null(available ? backend_names[n->backend] : NULL), "hook",
		    str_or_null(n->hook), "available", available, "reason", str_or_null(n->reason));
		if (!o) {
			json_decref(nodes);
			return NULL;
		}
		json_object_set_new(o, "sum_of_children", json_boolean(n->sum_of_children));
		json_array_append_new(nodes, o);
	}
	jb = json_object();
	for (b = 0; b < BACKEND_MAX; b++)
		json_object_set_new(jb, backend_names[b], json_integer((json_int_t)by_backend[b]));
	summary = json_pack("{s:I, s:o, s:I}", "nodes", (json_int_t)t->n_nodes, "by_backend", jb,
			    "unavailable", (json_int_t)unavailable);
	doc = json_pack("{s:s, s:o, s:o}", "version", t->version ? t->version : "", "nodes", nodes,
			"summary", summary);
	return doc;
}
