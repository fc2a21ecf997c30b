#!/usr/bin/env bash
# Checks the Dockerfile's steps without a Docker engine: builds dist/, installs production dependencies
# only (as the image does, native modules built) into a temporary folder, starts the compiled service there against a local
# anvil with DEMO_SETUP, checks /ready and sends one transfer through it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

npm run build --silent
cp package.json package-lock.json "$work/"
cp -r dist "$work/dist"
(cd "$work" && npm ci --omit=dev --omit=optional --no-audit --no-fund --loglevel=error)
# The PKCS#11 signer's native binding is built and loads in the image.
(cd "$work" && node -e 'require("pkcs11js")')
if [ -d "$work/node_modules/vitest" ] || [ -d "$work/node_modules/ethers5" ] || [ -d "$work/node_modules/@foundry-rs" ]; then
  echo "production install contains dev or optional packages" >&2
  exit 1
fi

anvil_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$repo/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil" --host 127.0.0.1 --port "$anvil_port" --silent &
pids+=($!)
app_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
sleep 1
api_key="production-check-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
# exec: the background job is the server itself, so the cleanup's kill stops it (not just a subshell).
(cd "$work" && NODE_ENV=production RPC_URL="http://127.0.0.1:$anvil_port" DEMO_SETUP=true API_KEYS="$api_key" HOST=127.0.0.1 PORT="$app_port" \
  exec node dist/src/server.js > "$work/server.log" 2>&1) &
pids+=($!)

for _ in $(seq 1 60); do
  grep -q '"service ready"' "$work/server.log" 2>/dev/null && break
  sleep 0.5
done
ready=$(curl -s "http://127.0.0.1:$app_port/ready")
if ! echo "$ready" | grep -q '"status":"ready"'; then
  echo "production build is not ready: $ready" >&2
  cat "$work/server.log" >&2
  exit 1
fi
# The native bindings (prebuilt for linux x64) must come along: without them signing is seven times slower.
if ! grep -q '"signer":"private-key in the process (libsecp256k1)","keccak":"native"' "$work/server.log"; then
  echo "production build does not sign and hash natively:" >&2
  grep '"service ready"' "$work/server.log" >&2
  exit 1
fi
reply=$(curl -s -X POST "http://127.0.0.1:$app_port/transfer" -H 'content-type: application/json' -H "authorization: Bearer $api_key" \
  -d '{"toAddress":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","amount":"1.5"}')
if ! echo "$reply" | grep -q '"hash":"0x'; then
  echo "production build did not answer a transfer: $reply" >&2
  cat "$work/server.log" >&2
  exit 1
fi
# The console's modules are compiled into dist/ and served from there: the entry and a view it imports.
for module in app.js views/transfers.js; do
  console_status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$app_port/console/$module")
  if [ "$console_status" != "200" ]; then
    echo "production build does not serve the console's $module: HTTP $console_status" >&2
    exit 1
  fi
done
echo "production install OK: $(du -sh "$work/node_modules" | cut -f1) of dependencies; transfer answered ${reply:0:80}..."
