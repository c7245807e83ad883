#!/usr/bin/env bash
# Runs each fuzz target briefly; CI calls it after the tests. The seed
# corpora also run in every `go test`. A failure leaves the input in the
# package's testdata/fuzz/, to commit with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -fuzz '^FuzzToHTML$' -fuzztime 15s ./markdown
go test -run '^$' -fuzz '^FuzzLocalPath$' -fuzztime 15s .
go test -run '^$' -fuzz '^FuzzSplitPath$' -fuzztime 15s ./proxy
