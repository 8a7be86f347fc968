#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check schema/openapi.yaml against the daemon.

    openapi-check.py SPEC --run TEST_API   run test-api recording, then check
    openapi-check.py SPEC --record FILE    check a record made before

test-api, with ARGUS_API_RECORD set, writes one JSON line per route of the
daemon's table ({"route": {"method", "path"}}) and one per answer it got
(method, path, listener, request body and type, status, headers, body). The
routes must be the description's paths and methods, both ways. Each answer
must be one its operation declares: the status, the media type, the body
against the schema, the headers marked required. A request the daemon took
must fit the description's parameters and body, and one it refused as
malformed must not. Prints the coverage of the declared (operation, status)
pairs; fails on any mismatch, listing them.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"# SKIP all: {e.name} is missing (Debian: python3-yaml, python3-jsonschema)")
    sys.exit(77)

METHODS = ("get", "post", "delete", "put", "patch", "options", "trace")
# the Allow header lists a path's methods in this order (api/routes.c)
ALLOW_ORDER = (("get", "GET, HEAD"), ("post", "POST"), ("delete", "DELETE"))
# 400 codes of a body or query that validation refused: the description must refuse it too
MALFORMED = {"bad_json", "bad_body", "unknown_field", "bad_field", "missing_field",
             "conflicting_fields", "bad_query"}
# answers given only after the whole body was validated: the description must take it
BODY_TAKEN = {"no_reference", "unknown_reference", "bad_target", "target_not_owned",
              "target_needs_uid", "queue_full", "submitter_quota", "unavailable",
              "shutting_down"}
QUERY_MAX = 16


def load_spec(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().startswith(("{", "[")):
        sys.exit(f"{path}: JSON, not YAML")
    return yaml.safe_load(text)


def pointer(doc, ref):
    for part in ref[2:].split("/"):
        doc = doc[part.replace("~1", "/").replace("~0", "~")]
    return doc


def resolve(node, spec, seen=()):
    """node with every local $ref replaced by what it names (a schema's siblings kept by allOf)."""
    if isinstance(node, list):
        return [resolve(x, spec, seen) for x in node]
    if not isinstance(node, dict):
        return node
    rest = {k: resolve(v, spec, seen) for k, v in node.items() if k != "$ref"}
    if "$ref" not in node:
        return rest
    ref = node["$ref"]
    if not ref.startswith("#/") or ref in seen:
        raise ValueError(f"$ref {ref}: not local, or a cycle")
    target = resolve(pointer(spec, ref), spec, seen + (ref,))
    if not rest:
        return target
    if ref.startswith("#/components/schemas/"):
        return {**rest, "allOf": [target] + rest.get("allOf", [])}
    return {**target, **rest}


class Op:
    def __init__(self, method, path, op, path_params, spec):
        self.method, self.path = method, path
        self.key = f"{method.upper()} {path}"
        params = {(p["name"], p["in"]): p for p in resolve(path_params, spec)}
        params.update({(p["name"], p["in"]): p for p in resolve(op.get("parameters", []), spec)})
        self.query = {n: p for (n, where), p in params.items() if where == "query"}
        self.responses = resolve(op.get("responses", {}), spec)
        body = resolve(op.get("requestBody", {}), spec)
        self.body_schema = body.get("content", {}).get("application/json", {}).get("schema")
        self.path_params = {n: p for (n, where), p in params.items() if where == "path"}


def template_regex(path, params):
    """A path template as a regex over bytes; {name} takes one segment of 1..maxLength bytes."""
    out = b"^"
    for i, part in enumerate(re.split(r"(\{[^}]*\})", path)):
        if i % 2 == 0:
            out += re.escape(part.encode())
            continue
        n = params.get(part[1:-1], {}).get("schema", {}).get("maxLength")
        out += b"[^/]{1,%d}" % n if n else b"[^/]+"
    return re.compile(out + b"$")


def validator(schema, cache={}):
    key = json.dumps(schema, sort_keys=True)
    if key not in cache:
        jsonschema.Draft202012Validator.check_schema(schema)
        cache[key] = jsonschema.Draft202012Validator(schema)
    return cache[key]


def schema_errors(schema, instance):
    out = []
    for e in validator(schema).iter_errors(instance):
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        out.append(f"{where}: {e.message[:200]}")
    return out


def media(value):
    """'text/plain; version=0.0.4; charset=utf-8' -> ('text/plain', {'version': '0.0.4', ...})"""
    parts = [p.strip() for p in (value or "").split(";")]
    params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    return parts[0].lower(), {k.strip().lower(): v.strip().lower() for k, v in params.items()}


def header_value(schema, value):
    if schema.get("type") == "integer" and re.fullmatch(r"[0-9]+", value):
        return int(value)
    return value


def query_value(schema, value):
    """A query value as its schema's type, or None when it is no value of that type."""
    t = schema.get("type")
    if t == "integer":
        return int(value) if re.fullmatch(r"0|[1-9][0-9]*", value) else None
    if t == "number":
        ok = re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", value)
        return float(value) if ok else None
    return value


def query_ok(op, query):
    """Whether the description takes this query string; None when it cannot say."""
    args = urllib.parse.parse_qsl(query, keep_blank_values=True)
    names = [k for k, _ in args]
    if len(set(names)) != len(names) or len(args) > QUERY_MAX:
        return None
    for k, v in args:
        p = op.query.get(k)
        if not p:
            return False
        schema = p.get("schema", {})
        x = query_value(schema, v)
        if x is None or v == "" or schema_errors(schema, x):
            return False
    return True


def check_answer(rec, op, responses, allow, problems):
    status = str(rec["status"])
    headers = rec["headers"]
    say = lambda what: problems.append(f"{rec['method']} {rec['path']} -> {status}: {what}")
    if status not in responses:
        say("status not declared" + (f" for {op.key}" if op else " (no route)"))
        return
    resp = responses[status]
    for name, h in resp.get("headers", {}).items():
        value = headers.get(name.lower())
        if value is None:
            if h.get("required"):
                say(f"no {name} header")
            continue
        for e in schema_errors(h.get("schema", {}), header_value(h.get("schema", {}), value)):
            say(f"header {name}: {value!r}: {e}")
    if status == "405" and allow is not None and headers.get("allow") != allow:
        say(f"Allow {headers.get('allow')!r}, the description's methods give {allow!r}")

    content = resp.get("content", {})
    if not content:
        if rec["body_bytes"]:
            say("a body where none is declared")
        return
    got, got_params = media(headers.get("content-type"))
    schema = None
    for declared, m in content.items():
        want, want_params = media(declared)
        if want == got and all(got_params.get(k) == v for k, v in want_params.items()):
            schema = m.get("schema", {})
            break
    else:
        say(f"Content-Type {headers.get('content-type')!r}, declared {', '.join(content)}")
        return
    if rec["method"] == "HEAD":
        return
    body = rec["body"]
    if body is None:
        say("the body is not UTF-8")
        return
    if got == "application/json":
        try:
            body = json.loads(body)
        except ValueError as e:
            say(f"the body is not JSON: {e}")
            return
    for e in schema_errors(schema, body)[:5]:
        say(e)


def check_request(rec, op, problems):
    """The description must take what the daemon took, and refuse what it refused as malformed."""
    status = rec["status"]
    code = None
    try:
        code = json.loads(rec["body"] or "{}").get("error", {}).get("code")
    except (ValueError, AttributeError):
        pass
    say = lambda what: problems.append(f"{rec['method']} {rec['path']} -> {status}: {what}")
    query = urllib.parse.urlsplit(rec["path"]).query
    if op.query and query and (status in (200, 304) or (status == 400 and code in MALFORMED)):
        ok = query_ok(op, query)
        if ok is not None and ok != (status != 400):
            say("the description " + ("refuses" if not ok else "takes") + " this query")
    if op.body_schema is None or rec["request_body"] is None:
        return
    if status == 202 or code in BODY_TAKEN:
        want = True
    elif status == 400 and code in MALFORMED:
        want = False
    else:
        return
    try:
        ok = not schema_errors(op.body_schema, json.loads(rec["request_body"]))
    except ValueError:
        ok = False
    if ok != want:
        say(f"the description {'takes' if ok else 'refuses'} the body {rec['request_body'][:120]}")


def run_test_api(binary, record):
    env = dict(os.environ, ARGUS_API_RECORD=record)
    p = subprocess.run([binary], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=300)
    lines = p.stdout.splitlines()
    print(lines[-1] if lines else "test-api: no output")
    if p.returncode != 0:
        print("\n".join(lines[-40:]))
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--run", metavar="TEST_API")
    g.add_argument("--record", metavar="FILE")
    a = ap.parse_args()

    spec = load_spec(a.spec)
    ops, templates, problems = {}, [], []
    if not str(spec.get("openapi", "")).startswith("3.1"):
        problems.append(f"openapi: {spec.get('openapi')!r}, not 3.1")
    for path, item in spec.get("paths", {}).items():
        if "head" in item:
            problems.append(f"{path}: HEAD is declared; every GET answers it, it is not listed apart")
        methods = {}
        for m in METHODS:
            if m in item:
                methods[m] = ops[(m, path)] = Op(m, path, item[m], item.get("parameters", []),
                                                spec)
        params = next(iter(methods.values())).path_params if methods else {}
        templates.append((template_regex(path, params), path, methods))
    unrouted = resolve(spec.get("x-argusd-unrouted", {}).get("responses", {}), spec)
    ids = [item[m].get("operationId") for item in spec.get("paths", {}).values()
           for m in METHODS if m in item]
    if None in ids or len(set(ids)) != len(ids):
        problems.append("every operation needs an operationId of its own")
    for op in ops.values():
        for status, resp in op.responses.items():
            if not re.fullmatch(r"[1-5][0-9][0-9]", status) or "description" not in resp:
                problems.append(f"{op.key} {status}: needs a 3-digit status and a description")

    ok_run = True
    with tempfile.TemporaryDirectory() as tmp:
        record = a.record or os.path.join(tmp, "answers.jsonl")
        if a.run:
            ok_run = run_test_api(a.run, record)
        with open(record, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]

    # the route table and the description, both ways
    norm = lambda p: re.sub(r"\{[^}]*\}", "{}", p)
    daemon = {(r["route"]["method"], norm(r["route"]["path"])) for r in lines if "route" in r}
    described = {(m.upper(), norm(p)) for (m, p) in ops}
    if not daemon:
        problems.append("the record names no route: test-api did not list the route table")
    for m, p in sorted(daemon - described):
        problems.append(f"route {m} {p} is in api/routes.c, not in the description")
    for m, p in sorted(described - daemon):
        problems.append(f"route {m} {p} is in the description, not in api/routes.c")

    seen = set()
    answers = [r for r in lines if "status" in r]
    for rec in answers:
        split = urllib.parse.urlsplit(rec["path"])
        raw = urllib.parse.unquote_to_bytes(split.path)
        method = "get" if rec["method"] == "HEAD" else rec["method"].lower()
        match = next(((p, ms) for rx, p, ms in templates if rx.match(raw)), None)
        if match and method in match[1]:
            op = match[1][method]
            seen.add((op.key, str(rec["status"])))
            check_answer(rec, op, op.responses, None, problems)
            check_request(rec, op, problems)
        elif match:
            allow = ", ".join(text for m, text in ALLOW_ORDER if m in match[1])
            check_answer(rec, None, {k: v for k, v in unrouted.items() if k != "404"}, allow,
                         problems)
        else:
            check_answer(rec, None, {k: v for k, v in unrouted.items() if k != "405"}, None,
                         problems)

    pairs = {(op.key, s) for op in ops.values() for s in op.responses}
    print(f"openapi: {len(answers)} answers checked; {len(seen & pairs)} of {len(pairs)} "
          f"declared (operation, status) pairs seen ({100 * len(seen & pairs) // max(len(pairs), 1)}%)")
    for op in ops.values():
        missing = [s for s in op.responses if (op.key, s) not in seen]
        if missing:
            print(f"  not seen: {op.key}: {' '.join(missing)}")
    for p in problems[:200]:
        print(f"MISMATCH {p}")
    if len(problems) > 200:
        print(f"... and {len(problems) - 200} more")
    print(f"openapi: {len(problems)} mismatch(es)")
    return 0 if not problems and ok_run else 1


if __name__ == "__main__":
    sys.exit(main())
