#!/usr/bin/env bash
# Copies the front-end libraries from node_modules into static/vendor, where
# the server embeds them. Run by `make web` after `npm ci`.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf static/vendor
mkdir -p static/vendor
cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js
cp node_modules/sortablejs/Sortable.min.js static/vendor/Sortable.min.js
cp node_modules/@xterm/xterm/lib/xterm.js static/vendor/xterm.js
cp node_modules/@xterm/xterm/css/xterm.css static/vendor/xterm.css
cp node_modules/@xterm/addon-fit/lib/addon-fit.js static/vendor/addon-fit.js
cp node_modules/uplot/dist/uPlot.iife.min.js static/vendor/uPlot.iife.min.js
cp node_modules/uplot/dist/uPlot.min.css static/vendor/uPlot.min.css
