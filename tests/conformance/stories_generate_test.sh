#!/usr/bin/env bash
# Acceptance: greedy generation on the demo model prints the reference continuation exactly.
set -euo pipefail
binary="$1"
shared="$2"
expected=", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
actual=$("$binary" generate --model "$shared/models/stories260K.gguf" --prompt "Once upon a time" \
  --temperature 0 --max-tokens 40 2>/dev/null)
if [ "$actual" != "$expected" ]; then
  printf 'expected: %s\nactual:   %s\n' "$expected" "$actual"
  exit 1
fi
echo "stories260K greedy continuation matches the reference"
