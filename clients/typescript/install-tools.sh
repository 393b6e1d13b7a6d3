#!/usr/bin/env bash
# Installs the TypeScript SDK's build and test tools, exactly as
# package-lock.json pins them (typescript, @types/node), into a tools
# directory, and builds the SDK (clients/typescript/dist/). Node 20 or newer.
#
#   bash clients/typescript/install-tools.sh "$TOOLS"
#   LUDO_BASE=http://127.0.0.1:8080 npm --prefix clients/typescript test
#
# The second command needs a ludotheque server at LUDO_BASE (on loopback,
# e.g. `ludo serve --listen 127.0.0.1:8080 --data-dir "$(mktemp -d)"`); it
# fails, rather than skips, when LUDO_BASE is unset or unreachable.
#
# The packages go to "$TOOLS/typescript-sdk/node_modules"; the SDK's
# node_modules is a symlink to it (ignored by git), so the repository only
# gains ignored files. Running it again reinstalls the same versions.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 TOOLS_DIR" >&2
  exit 2
fi
sdk=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1/typescript-sdk"
tools=$(cd "$1/typescript-sdk" && pwd)

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "Node 20 or newer is needed (found $(node --version))" >&2
  exit 1
fi

# npm ci installs exactly the lock file's versions (and fails if it
# disagrees with package.json); no install scripts run.
cp "$sdk/package.json" "$sdk/package-lock.json" "$tools/"
(cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund)

if [ -e "$sdk/node_modules" ] && [ ! -L "$sdk/node_modules" ]; then
  echo "replacing $sdk/node_modules with a link to $tools/node_modules" >&2
  rm -rf "$sdk/node_modules"
fi
ln -sfn "$tools/node_modules" "$sdk/node_modules"

npm --prefix "$sdk" run build
echo "built $sdk/dist with $("$sdk/node_modules/.bin/tsc" --version)"
