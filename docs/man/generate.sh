#!/usr/bin/env bash
# Writes the manual page to stdout: swift-argument-parser's generate-manual, with one fix.
# Its SYNOPSIS puts `subcommand` as if one were required; without one synchat is the chat,
# so the word is optional there (`[subcommand]`), as `synchat --help`'s usage says.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .build/plugins/GenerateManual/outputs
swift package generate-manual --configuration debug --date 2026-01-01 >/dev/null
awk '/^\.Sh SYNOPSIS/ { s = 1 } /^\.Sh DESCRIPTION/ { s = 0 }
     s && $0 == ".Ar subcommand" { print ".Op Ar subcommand"; next } { print }' \
  .build/plugins/GenerateManual/outputs/synchat/synchat.1
