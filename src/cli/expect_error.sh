# Sourced by the CLI's shell tests.
expect_error() {  # expect_error TEXT COMMAND...: the command fails and its stderr holds TEXT
  local text="$1"
  shift
  local stderr
  if stderr=$("$@" 2>&1 >/dev/null); then
    printf 'expected a failure: %s\n' "$*"
    exit 1
  fi
  if [[ "$stderr" != *"$text"* ]]; then
    printf 'command: %s\nexpected in stderr: %s\nstderr: %s\n' "$*" "$text" "$stderr"
    exit 1
  fi
}
