#!/bin/sh
# SPDX-License-Identifier: MIT
# Stage the bundled programs (the victims that workloads/ registers) where
# their user can run them.
#
#   stage-programs.sh BUILD_DIR DEST [USER]
#
# The workloads run as USER (default nobody), who must be able to search every
# directory on the program's path: a checkout under root's 0700 home is not.
# This copies BUILD_DIR/bench/victims/* into DEST (made 0755; its parent
# directories must already be searchable by USER, e.g. a directory under
# /tmp), then checks as USER that each copy can be executed. A package
# installs them under /usr/libexec/argusd/victims instead. Exits 1 with the
# reason when USER still cannot run them.
set -eu
src=$1/bench/victims
dest=$2
user=${3:-nobody}
[ -d "$src" ] || { echo "stage-programs: $src: no such directory (build first)" >&2; exit 1; }
install -d -m 0755 "$dest"
n=0
for f in "$src"/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	install -m 0755 "$f" "$dest/"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "stage-programs: no programs in $src" >&2; exit 1; }
for f in "$dest"/*; do
	setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups test -x "$f" || {
		echo "stage-programs: user $user cannot execute $f: a directory above $dest" \
			"is not searchable by $user" >&2
		exit 1
	}
done
