"""Runs the README's shell blocks, so that what the README tells a user to type keeps working.

Every ```sh block of README.md carries an HTML comment on the line before it:
  <!-- readme-test: each-command; skip: REGEX -->  run each command of the block alone, in the
      repository root, from a fresh temporary folder for /tmp/; those matching REGEX are skipped
      (they need hardware, downloads, minutes, or files the reader brings). `vllm-cpp serve`
      starts in the background on a free port (the block's commands reach it there, as they would
      port 8000) and must answer /health; it stops at the next serve or at the end of the block.
  <!-- readme-test: skip (why) -->  not run here (it builds or tests everything itself).
`build/` means the build folder under test (VLLM_CPP_BINARY's). Each command must exit 0 within
COMMAND_TIMEOUT_S."""

import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
README = REPO / "README.md"
COMMAND_TIMEOUT_S = 180
SERVER_START_TIMEOUT_S = 120
MARKER = re.compile(r"<!-- readme-test: (each-command(?:; skip: (?P<skip>.*?))?|skip \(.+\)) -->")


def sh_blocks() -> list[tuple[int, str, list[str]]]:
    """(line number, marker text, lines) of each ```sh block."""
    lines = README.read_text().splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i
            body = []
            i += 1
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            blocks.append((start + 1, lines[start - 1].strip() if start else "", body))
        i += 1
    return blocks


def commands_of(lines: list[str]) -> list[str]:
    """The block's commands: continuation lines joined, heredocs kept whole, comments dropped."""
    commands = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command = line
        while command.rstrip().endswith("\\") and i < len(lines):
            command = command.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<-?'?(\w+)'?", command)
        if heredoc:
            while i < len(lines):
                command += "\n" + lines[i]
                i += 1
                if lines[i - 1].strip() == heredoc.group(1):
                    break
        commands.append(command)
    return commands


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, command: str, port: int) -> None:
        self.process = subprocess.Popen(["bash", "-c", "exec " + command], cwd=REPO,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{command}\nexited {self.process.returncode}:\n"
                                     f"{self.process.stdout.read().decode()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise AssertionError(f"{command}\ndid not answer /health in {SERVER_START_TIMEOUT_S} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def test_every_sh_block_is_marked():
    unmarked = [line for line, marker, _ in sh_blocks() if not MARKER.fullmatch(marker)]
    assert not unmarked, f"README.md ```sh blocks without a readme-test marker at lines {unmarked}"


def each_command_blocks():
    return [pytest.param(body, re.compile(MARKER.fullmatch(marker).group("skip") or "(?!)"),
                         id=f"line{line}")
            for line, marker, body in sh_blocks()
            if MARKER.fullmatch(marker) and marker.startswith("<!-- readme-test: each-command")]


@pytest.mark.parametrize("lines,skip", each_command_blocks())
def test_readme_block_runs(lines, skip, tmp_path):
    binary = pathlib.Path(os.environ.get("VLLM_CPP_BINARY", REPO / "build" / "vllm-cpp"))
    if not binary.exists():
        pytest.skip(f"{binary} is not built")
    build_dir = str(binary.resolve().parent)
    port = free_port()
    server = None
    ran = 0
    try:
        for command in commands_of(lines):
            if skip.search(command):
                continue
            # /tmp/ first: the build directory itself may lie under /tmp.
            command = command.replace("/tmp/", f"{tmp_path}/")
            command = re.sub(r"(?<![\w/.-])build/", build_dir + "/", command)
            command = re.sub(r"localhost:8000|--port 8000", lambda m: m.group(0).replace(
                "8000", str(port)), command)
            if re.search(r"vllm-cpp serve\b", command):
                if server:
                    server.stop()
                if "--port" not in command:  # serve's default, 8000, may be taken here
                    command = command.replace("vllm-cpp serve", f"vllm-cpp serve --port {port}", 1)
                server = Server(command, port)
            else:
                if command.startswith("curl "):
                    command = "curl --fail -sS " + command[len("curl "):]
                run = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True,
                                     text=True, stdin=subprocess.DEVNULL,
                                     timeout=COMMAND_TIMEOUT_S)
                assert run.returncode == 0, (f"{command}\nexited {run.returncode}:\n"
                                             f"{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
            ran += 1
    finally:
        if server:
            server.stop()
    assert ran > 0
