#!/usr/bin/env bash
# The bundle's CI job, apart from .ci/run because it takes longer than CI allows on the project's
# 2-core build machine (see README.md for measured times): build the Linux bundle, then smoke the
# .tar.gz and the .deb. Prints each stage's wall time; exits non-zero on the first failure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' app/__init__.py)"
timed() {
  local name="$1"; shift
  local start=$SECONDS
  "$@"
  echo "=== $name: $((SECONDS - start)) s"
}
timed "build-linux.sh" bash packaging/build-linux.sh
timed "smoke .tar.gz" bash packaging/smoke.sh "dist/arxiu-$VERSION-linux-x86_64.tar.gz"
if [ "$(id -u)" = 0 ]; then
  timed "smoke .deb" bash packaging/smoke.sh "dist/arxiu_${VERSION}_amd64.deb"
else
  timed "smoke .deb" sudo bash packaging/smoke.sh "dist/arxiu_${VERSION}_amd64.deb"
fi
