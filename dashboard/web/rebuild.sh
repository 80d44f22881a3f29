#!/usr/bin/env bash
# Rebuilds the charting library the dashboard embeds from package-lock.json: installs the pinned
# package, copies its built file and licence into ../assets/static/vendor, and records the
# file's version and SHA-256 in vendor/MANIFEST (TestVendoredLibrary compares them with the
# lockfile and the file). Run from anywhere: bash dashboard/web/rebuild.sh
set -euo pipefail
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund
out=../assets/static/vendor
mkdir -p "$out"
pkg=node_modules/echarts
cp "$pkg/dist/echarts.min.js" "$out/echarts.min.js"
cp "$pkg/LICENSE" "$out/LICENSE-echarts"
cp "$pkg/NOTICE" "$out/NOTICE-echarts"
version=$(node -p "require('./$pkg/package.json').version")
sum=$(sha256sum "$out/echarts.min.js" | cut -d' ' -f1)
printf 'echarts %s %s echarts.min.js\n' "$version" "$sum" > "$out/MANIFEST"
rm -rf node_modules
cat "$out/MANIFEST"
