#!/usr/bin/env bash
# Installs the MCP reference servers the end-to-end tests run (crates/kora-cli/tests/mcp_servers.rs)
# into target/mcp-servers. Run by the tests themselves when npm is present; CI may run it first.
# Versions are pinned so a test's expectations do not move under it.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="target/mcp-servers"
if [ -x "$dest/node_modules/.bin/mcp-server-everything" ] && [ -x "$dest/node_modules/.bin/mcp-server-filesystem" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm not found: the MCP reference servers are not installed" >&2
  exit 1
fi
mkdir -p "$dest"
npm install --no-audit --no-fund --silent --prefix "$dest" \
  @modelcontextprotocol/server-everything@2026.8.31 \
  @modelcontextprotocol/server-filesystem@2026.8.31
