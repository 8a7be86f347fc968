// SPDX-License-Identifier: MIT
/*
 * Resolution of the tree against the running kernel, through a prober:
 * the choice rules only, and the order of backends they follow. The prober
 * does the loading and attaching.
 */
#include "daemon/resolve.h"
#include "daemon/util.h"

#include <errno.h>
#include <string.h>

void backend_order_default(struct backend_order *ret)
{
	int b;

	ret->n = 0;
	for (b = 0; b < BACKEND_MAX; b++)
		ret->v[ret->n++] = b;
}

/* A usable order: known backends, each once; n == 0 is the default. */
static bool backend_order_valid(const struct backend_order *o)
{
	bool seen[BACKEND_MAX] = {};
	size_t i;

	if (o->n > BACKEND_MAX)
		return false;
	for (i = 0; i < o->n; i++) {
		if (o->v[i] < 0 || o->v[i] >= BACKEND_MAX || seen[o->v[i]])
			return false;
		seen[o->v[i]] = true;
	}
	return true;
}

int backend_order_parse(const char *text, struct backend_order *ret)
{
	static const char sep[] = " \t,";
	struct backend_order o = {};
	bool seen[BACKEND_MAX] = {};
	const char *s = text;

	if (!text)
		return -EINVAL;
	for (;;) {
		size_t len;
		char name[16];
		enum backend b;

		s += strspn(s, sep);
		if (!*s)
			break;
		len = strcspn(s, sep);
		/* longer than any backend name: not one */
		if (len >= sizeof(name) || o.n == BACKEND_MAX)
			return -EINVAL;
		memcpy(name, s, len);
		name[len] = 0;
		b = backend_from_name(name);
		if (b == BACKEND_NONE || seen[b])
			return -EINVAL;
		seen[b] = true;
		o.v[o.n++] = b;
		s += len;
	}
	if (o.n == 0)
		return -EINVAL;
	*ret = o;
	return 0;
}

bool backend_order_has(const struct backend_order *o, enum backend b)
{
	size_t i;

	if (!o || o->n == 0)
		return b >= 0 && b < BACKEND_MAX;
	for (i = 0; i < o->n; i++)
		if (o->v[i] == b)
			return true;
	return false;
}

json_t *backend_order_to_json(const struct backend_order *o)
{
	struct backend_order def;
	json_t *a = json_array();
	size_t i;

	if (!o || o->n == 0) {
		backend_order_default(&def);
		o = &def;
	}
	if (!a)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (json_array_append_new(a, json_string(backend_name(o->v[i]))) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

char *backend_order_to_string(const struct backend_order *o)
{
	struct backend_order def;
	char *s, *p;
	size_t i;

	if (!o || o->n == 0) {
		backend_order_default(&def);
		o = &def;
	}
	/* every name is shorter than "tracepoint " */
	s = p = malloc(BACKEND_MAX * sizeof("tracepoint ") + 1);
	if (!s)
		abort();
	*p = 0;
	for (i = 0; i < o->n && i < BACKEND_MAX; i++) {
		if (i > 0)
			p = stpcpy(p, " ");
		p = stpcpy(p, backend_name(o->v[i]));
	}
	return s;
}

/* What the prober said about one (backend, hook): asked once per resolution. */
struct probe_result {
	enum backend backend;
	struct hook hook;
	int r;
	char *reason; /* on failure: why, without a leading "<backend>: " */
};

struct probe_cache {
	struct probe_result *v;
	size_t n, cap;
	const struct backend_order *order; /* the resolution's, passed to every try */
};

static void probe_cache_clear(struct probe_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].reason);
	free(c->v);
}

/* Growable list of refusal strings, joined with "; " at the end. */
struct strlist {
	char **v;
	size_t n;
};

static void strlist_clear(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Takes s; identical entries are kept once. */
static void strlist_add(struct strlist *l, char *s)
{
	char **v;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0) {
			free(s);
			return;
		}
	v = realloc(l->v, (l->n + 1) * sizeof(char *));
	if (!v)
		abort();
	v[l->n++] = s;
	l->v = v;
}

/* "a; b; c", or NULL when empty. */
static char *strlist_join(const struct strlist *l, const char *sep)
{
	size_t i, len = 0, seplen = strlen(sep);
	char *s, *p;

	if (l->n == 0)
		return NULL;
	for (i = 0; i < l->n; i++)
		len += strlen(l->v[i]) + seplen;
	s = malloc(len + 1);
	if (!s)
		abort();
	p = s;
	for (i = 0; i < l->n; i++) {
		if (i > 0)
			p = stpcpy(p, sep);
		p = stpcpy(p, l->v[i]);
	}
	*p = 0;
	return s;
}

/*
 * Ask the prober about one hook, or answer from the cache. Returns 0 or a
 * negative errno; on failure *ret_reason points into the cache.
 */
static int probe_one(struct probe_cache *c, const struct prober *p, enum backend b,
		     const struct hook *hook, const char **ret_reason)
{
	_cleanup_free_ char *why = NULL;
	struct probe_result *res;
	const char *text = NULL;
	size_t i, plen;
	char buf[128];
	int r;

	for (i = 0; i < c->n; i++)
		if (c->v[i].backend == b && strcmp(c->v[i].hook.name, hook->name) == 0) {
			if (c->v[i].r < 0)
				*ret_reason = c->v[i].reason;
			return c->v[i].r;
		}

	r = p->try_hook(p->userdata, c->order, b, hook->name, &why);
	if (r > 0)
		r = 0;
	if (r < 0) {
		text = why && *why ? why : strerror_r(-r, buf, sizeof(buf));
		/* The prober may prefix its reason with the backend: it is said once. */
		plen = strlen(backend_name(b));
		if (strncmp(text, backend_name(b), plen) == 0 && text[plen] == ':')
			for (text += plen + 1; *text == ' '; text++)
				;
	}

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct probe_result *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			abort();
		c->v = v;
		c->cap = cap;
	}
	res = &c->v[c->n++];
	res->backend = b;
	res->hook = *hook;
	res->r = r;
	res->reason = r < 0 ? xstrdup(text) : NULL;
	if (r < 0)
		*ret_reason = res->reason;
	return r;
}

/*
 * Try one alternative: its hooks are probed one at a time (each is cached
 * on its own, since nodes share them) and it succeeds when all attach. On
 * failure a refusal "<backend>: <hook>: <why>" naming the hook that failed
 * is added to refusals.
 */
static int try_alternative(struct probe_cache *c, const struct prober *p, enum backend b,
			   const struct hook_list *alt, struct strlist *refusals)
{
	const char *why = NULL;
	size_t i;
	int r;

	for (i = 0; i < alt->n; i++) {
		r = probe_one(c, p, b, &alt->v[i], &why);
		if (r < 0) {
			strlist_add(refusals,
				    xasprintf("%s: %s: %s", backend_name(b), alt->v[i].name, why));
			return r;
		}
	}
	return 0;
}

static void node_reset(struct tree_node *n)
{
	tree_node_choose(n, BACKEND_NONE, NULL);
	free(n->reason);
	n->reason = NULL;
}

static bool node_has_hooks(const struct tree_node *n)
{
	int b;

	for (b = 0; b < BACKEND_MAX; b++)
		if (n->n_hooks[b] > 0)
			return true;
	return false;
}

/*
 * One meaning per node. A leaf that owns classes measures what the
 * tracepoint classifier counts for them: exclusive thread time, nested
 * paths and runqueue waits left out, the target's own waits apart. The
 * function backends give one function's calls and their inclusive time
 * (sleeps, runqueue waits and nested paths in it), which is not that, so
 * they measure only leaves that own no class: a function's calls are then
 * what the node means.
 */
static bool gives_meaning(const struct tree_node *n, enum backend b)
{
	return b == BACKEND_TRACEPOINT || n->classes == 0;
}

/*
 * Try a node's own hooks in the order's backends, then in file order; the
 * first that works is chosen. The backends it declares hooks for that the
 * order leaves out, or that cannot give its meaning, are named first: they
 * are why it is not on them.
 */
static void resolve_own_hooks(struct tree_node *n, struct probe_cache *c, const struct prober *p,
			      const struct backend_order *order, struct strlist *refusals)
{
	size_t k;
	int b;

	for (b = 0; b < BACKEND_MAX; b++) {
		if (n->n_hooks[b] == 0)
			continue;
		if (!backend_order_has(order, b))
			strlist_add(refusals,
				    xasprintf("%s: not in the backends setting", backend_name(b)));
		else if (!gives_meaning(n, b))
			strlist_add(refusals,
				    xasprintf("%s: %s gives its calls and their inclusive time, not "
					      "this node's measure (the classifier's exclusive thread "
					      "time, runqueue waits and nested paths left out)",
					      backend_name(b), n->hooks[b][0].v[0].name));
	}
	for (k = 0; k < order->n; k++) {
		b = order->v[k];
		if (!gives_meaning(n, b))
			continue;
		for (size_t h = 0; h < n->n_hooks[b]; h++)
			if (try_alternative(c, p, b, &n->hooks[b][h], refusals) == 0) {
				tree_node_choose(n, b, &n->hooks[b][h]);
				return;
			}
	}
}

/*
 * The hooks an inner node is measured through: those its children chose on
 * backend b, each once, in child order. -E2BIG when they are more than one
 * node may attach.
 */
static int children_hooks(const struct tree *t, const struct tree_node *n, enum backend b,
			  struct hook_list *ret)
{
	size_t i, j;
	int r;

	ret->n = 0;
	for (i = 0; i < n->n_children; i++) {
		const struct tree_node *ch = &t->nodes[n->children[i]];

		if (ch->backend != b)
			continue;
		for (j = 0; j < ch->chosen.n; j++) {
			r = hook_list_add(ret, &ch->chosen.v[j]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* "fentry 1, tracepoint 2": how many children use each backend, in the order's order. */
static char *backends_used_text(const size_t used[BACKEND_MAX], const struct backend_order *order)
{
	struct strlist parts = {};
	char *text;
	size_t k;

	for (k = 0; k < order->n; k++)
		if (used[order->v[k]] > 0)
			strlist_add(&parts, xasprintf("%s %zu", backend_name(order->v[k]),
						      used[order->v[k]]));
	text = strlist_join(&parts, ", ");
	strlist_clear(&parts);
	return text;
}

/*
 * An inner node whose own hooks (if any) all failed is measured through its
 * children: available when one child is, with the backend most of its
 * available children use (ties: the earlier backend of the order) and the
 * hooks those children chose on it. Children on more than one backend (or
 * a child that is itself such a sum) make it the sum of its children, each
 * measured on its own backend: one backend's hooks alone would leave the
 * others' children out of it.
 */
static void resolve_from_children(struct tree *t, struct tree_node *n,
				  const struct backend_order *order, struct strlist *refusals)
{
	size_t used[BACKEND_MAX] = {}, i, k, available = 0, backends = 0;
	bool nested_sum = false;
	struct strlist missing = {};
	_cleanup_free_ char *list = NULL;
	struct hook_list hooks;
	int b, best = BACKEND_NONE;

	for (i = 0; i < n->n_children; i++) {
		const struct tree_node *ch = &t->nodes[n->children[i]];

		if (ch->backend >= 0 && ch->backend < BACKEND_MAX) {
			backends += used[ch->backend]++ == 0;
			available++;
			nested_sum |= ch->sum_of_children;
		}
	}
	for (k = 0; k < order->n; k++) {
		b = order->v[k];
		if (used[b] > 0 && (best == BACKEND_NONE || used[b] > used[best]))
			best = b;
	}

	/*
	 * Available: name the unmeasured children, their own reasons say why.
	 * Unavailable: every refusal below, so GET /tree explains on the spot.
	 */
	for (i = 0; i < n->n_children; i++) {
		const struct tree_node *ch = &t->nodes[n->children[i]];

		if (ch->backend != BACKEND_NONE)
			continue;
		if (best == BACKEND_NONE && ch->reason)
			strlist_add(&missing, xasprintf("%s [%s]", ch->id, ch->reason));
		else
			strlist_add(&missing, xstrdup(ch->id));
	}
	list = strlist_join(&missing, ", ");
	strlist_clear(&missing);

	if (best == BACKEND_NONE) {
		strlist_add(refusals, xasprintf("no child is available: %s", list ? list : "none"));
		return;
	}
	if (children_hooks(t, n, best, &hooks) < 0) {
		strlist_add(
		    refusals,
		    xasprintf("%s: its children's hooks are more than %d, what one node may "
			      "attach",
			      backend_name(best), TREE_MAX_NODE_HOOKS));
		return;
	}
	tree_node_choose(n, best, &hooks);
	if (backends > 1 || nested_sum) {
		_cleanup_free_ char *on = backends_used_text(used, order);

		n->sum_of_children = true;
		strlist_add(refusals, xasprintf("the sum of its children, each on its own backend (%s)",
						on));
	}
	if (list)
		strlist_add(refusals,
			    xasprintf("measured through %zu of %zu children; unavailable: %s",
				      available, n->n_children, list));
}

int tree_resolve_backends(struct tree *t, const struct prober *p, const struct backend_order *order)
{
	_cleanup_free_ struct strlist *refusals = NULL;
	struct probe_cache cache = {};
	struct backend_order def;
	int unavailable = 0;
	size_t i;

	if (!t || !p || !p->try_hook)
		return -EINVAL;
	if (!order || order->n == 0) {
		backend_order_default(&def);
		order = &def;
	}
	if (!backend_order_valid(order))
		return -EINVAL;
	refusals = calloc(t->n_nodes ? t->n_nodes : 1, sizeof(*refusals));
	if (!refusals)
		return -ENOMEM;
	t->backends = *order;
	cache.order = &t->backends;

	/* Own hooks first, in file order, so that probing follows the document. */
	for (i = 0; i < t->n_nodes; i++) {
		node_reset(&t->nodes[i]);
		if (node_has_hooks(&t->nodes[i]))
			resolve_own_hooks(&t->nodes[i], &cache, p, order, &refusals[i]);
	}
	/* Then backwards, so that children are settled before their parent. */
	for (i = t->n_nodes; i-- > 0;) {
		struct tree_node *n = &t->nodes[i];

		if (n->backend == BACKEND_NONE) {
			if (n->n_children > 0)
				resolve_from_children(t, n, order, &refusals[i]);
			else if (!node_has_hooks(n))
				strlist_add(&refusals[i], xstrdup("no hooks declared"));
		}
		n->reason = strlist_join(&refusals[i], "; ");
		strlist_clear(&refusals[i]);
		if (n->backend == BACKEND_NONE)
			unavailable++;
	}
	probe_cache_clear(&cache);
	return unavailable;
}

int tree_resolve(struct tree *t, const struct prober *p)
{
	return tree_resolve_backends(t, p, NULL);
}
