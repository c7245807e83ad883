#!/usr/bin/env bash
# Prints the folder that holds the Playwright driver (playwright-core from
# npm, linked as "package") for the playwright-go version in go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m -f '{{.Dir}}' github.com/playwright-community/playwright-go)
if [ -z "$mod" ] || [ ! -d "$mod" ]; then
  go mod download github.com/playwright-community/playwright-go
  mod=$(go list -m -f '{{.Dir}}' github.com/playwright-community/playwright-go)
fi
version=$(sed -n 's/^const playwrightCliVersion = "\(.*\)"/\1/p' "$mod/run.go")
echo "${XDG_CACHE_HOME:-$HOME/.cache}/resolute/playwright-driver/$version"
