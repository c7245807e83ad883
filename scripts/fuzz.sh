#!/usr/bin/env bash
# fuzz.sh [seconds]: runs each fuzz target below for a short while (default
# 15 s each), as CI does. `go test` runs their seed corpora as ordinary tests
# anyway; this looks a little further. A failure leaves its input in the
# package's testdata/fuzz/<Target>/ for `go test` to replay: commit it with
# the fix. To add a target, add a line "package Target" to the list.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}

targets=(
  "./contextdir FuzzUnpackTar"  # the upload check and the launch's unpacking agree
  "./contextdir FuzzZipToTar"   # the web form's zip repacking makes what launches
  "./handlers FuzzDecodeJSONUpload" # a streamed JSON upload decodes as the API's rule and encoding/json would
  "./handlers FuzzDecodeBody"   # the rule for field names reads raw JSON as a plain reading of it does
  "./markdown FuzzToHTML"       # notes render to safe HTML only
  ". FuzzLocalPath"             # a redirect the check accepts stays on this site
  "./proxy FuzzSplitPath"       # the proxy's task ID and rest of a path
)

for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "fuzz $pkg $name for ${seconds}s"
  # Minimizing each new input would take most of a short run.
  go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "${seconds}s" -fuzzminimizetime 2s
done
