"""Data integrity with the real `ccx`: text that is not UTF-8, two writers, a full disk."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from agent.sessions.session import load_session
from tests.e2e.conftest import CCX, Ccx, Run
from tools.surrogates import is_encodable
from tui.fake_api import FakeApi, RecordedRequest, ResponseItem, text_reply, tool_reply

BAD_NAME = b"bad\xff\xfe.txt"
SHOWN = "bad\\xff\\xfe.txt"


def result_text(request: RecordedRequest, index: int = 0) -> str:
    block = request.messages[-1]["content"][index]
    assert block["type"] == "tool_result", block
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def records(path: Path) -> list[dict[str, Any]]:
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the file ends with a whole line"
    return [json.loads(line) for line in lines[:-1] if line.strip()]


def test_text_that_is_not_utf8_never_breaks_the_session(ccx: Ccx) -> None:
    # Even the project's own directory name is not UTF-8: it is in the system prompt.
    project = Path(os.fsdecode(os.path.join(os.fsencode(ccx.repo), b"proj\xe9")))
    project.mkdir()
    ccx.repo = project
    Path(os.fsdecode(os.path.join(os.fsencode(project), BAD_NAME))).write_text("a needle\n")
    ccx.api.add(
        tool_reply(("Glob", {"pattern": "*.txt"}), text="Looking \ud800 around."),
        tool_reply(("Grep", {"pattern": "needle", "output_mode": "content"})),
        tool_reply(("Read", {"file_path": SHOWN})),
        # Raw JSON as the model streams it: "\ud800" there is a lone surrogate once parsed.
        tool_reply(("Write", r'{"file_path": "made.txt", "content": "odd \ud800 text"}')),
        tool_reply(("Bash", r"""{"command": "echo '\udcff-\ud800' > echoed.txt; ls"}""")),
        text_reply("Done \udcff."),
    )
    first = ccx.run(
        "-p",
        "look at \udcff this",  # an argument that is not UTF-8 arrives like this
        "--output-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions",
    )
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr
    assert first.events()[-1]["result"] == "Done \\xff."
    requests = ccx.api.requests
    assert "proj\\xe9" in requests[0].system_text()
    assert "look at \\xff this" in requests[0].last_user_text()
    assert SHOWN in result_text(requests[1])
    assert SHOWN in result_text(requests[2]) and "a needle" in result_text(requests[2])
    assert result_text(requests[3]) == "1\ta needle"
    assert (project / "made.txt").read_text() == "odd \ufffd text"
    assert (project / "echoed.txt").read_text() == "\\xff-\ufffd\n"
    assert "Looking \ufffd around." in json.dumps(requests[1].messages, ensure_ascii=False)
    (transcript,) = ccx.transcripts()
    messages = [r for r in records(transcript) if r["type"] == "message"]
    assert len(messages) == 12  # the prompt, five tool rounds, the answer
    assert all(is_encodable(json.dumps(r, ensure_ascii=False)) for r in messages)

    ccx.api.add(text_reply("Resumed."))
    again = ccx.run("-c", "-p", "and now?", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Resumed."
    assert SHOWN in ccx.api.requests[-1].all_text()
    assert ccx.api.errors == []


# -- two writers ---------------------------------------------------------------------------

CALLS_PER_JOB = 3


def job_responder(request: RecordedRequest) -> ResponseItem:
    """Each job's prompt gets CALLS_PER_JOB slow Bash calls, then a final answer."""
    messages = request.messages
    start = max(
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and "job " in json.dumps(m["content"])
    )
    job = "A" if "job A" in json.dumps(messages[start]["content"]) else "B"
    done = sum(1 for m in messages[start + 1 :] if m["role"] == "assistant")
    if done < CALLS_PER_JOB:
        return tool_reply(("Bash", {"command": f"sleep 0.7; echo out-{job}{done + 1}"}))
    return text_reply(f"job {job} finished")


def job_results(messages: list[Any], job: str) -> list[str]:
    """The text of every tool result answering one of that job's Bash calls."""
    ids = {
        block["id"]
        for m in messages
        for block in m.content
        if block.get("type") == "tool_use" and f"out-{job}" in block["input"].get("command", "")
    }
    return [
        str(block["content"])
        for m in messages
        for block in m.content
        if block.get("type") == "tool_result" and block["tool_use_id"] in ids
    ]


def test_two_concurrent_continues_fork_instead_of_interleaving(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Ready."))
    assert ccx.run("-p", "start").returncode == 0
    (original,) = ccx.transcripts()
    ccx.api.on(lambda _request: True, job_responder)
    args = ("--output-format", "stream-json", "--allowedTools", "Bash(sleep *)")
    procs = {job: ccx.popen("-c", "-p", f"job {job}", *args) for job in "AB"}
    outputs = {job: proc.communicate(timeout=60) for job, proc in procs.items()}
    runs = {job: Run(procs[job].returncode, *outputs[job]) for job in "AB"}
    for run in runs.values():
        assert run.returncode == 0, run.stderr

    results = {job: run.events()[-1] for job, run in runs.items()}
    kept = [job for job in "AB" if results[job]["session_id"] == original.stem]
    assert len(kept) == 1, "exactly one of them continues the session itself"
    (forker,) = set("AB") - set(kept)
    holder_pid = procs[kept[0]].pid
    notices = [
        e["text"]
        for e in runs[forker].ccx_events()
        if e["type"] == "notice" and "in use" in e["text"]
    ]
    fork_id = results[forker]["session_id"]
    assert notices == [
        f"Session {original.stem} is in use by another ccx (pid {holder_pid}); continuing in a "
        f"new session {fork_id} forked from it"
    ]

    fork = original.with_name(f"{fork_id}.jsonl")
    assert sorted(ccx.transcripts()) == sorted([original, fork])
    assert records(fork)[0]["forked_from"] == original.stem
    assert "job " + forker not in original.read_text(), "nothing of the fork in the original"
    for job, path in ((kept[0], original), (forker, fork)):
        records(path)  # every line is whole JSON
        loaded = load_session(path)
        assert loaded.invalid_lines == 0
        roles = [m.role for m in loaded.messages]
        assert ("assistant", "assistant") not in pairwise(roles), roles
        outputs_seen = job_results(loaded.messages, job)
        assert len(outputs_seen) == CALLS_PER_JOB
        for n, text in enumerate(outputs_seen, start=1):
            assert text.startswith(f"out-{job}{n}"), text  # intact, not "interrupted"
        assert loaded.messages[-1].text() == f"job {job} finished"

    ccx.api.add(text_reply("Fork resumed."))
    again = ccx.run("-r", fork_id, "-p", "go on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["session_id"] == fork_id
    sent = json.dumps(ccx.api.requests[-1].messages)
    assert all(f"out-{forker}{n}" in sent for n in range(1, CALLS_PER_JOB + 1))
    assert ccx.api.errors == []


# -- a full disk ---------------------------------------------------------------------------


def run_with_file_size_limit(ccx: Ccx, limit: int, *args: str) -> Run:
    """`ccx` with RLIMIT_FSIZE set: a write past ``limit`` bytes fails with EFBIG, as on a
    full disk (Python ignores SIGXFSZ, so the process is not killed for it)."""

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(
        [CCX, *args],
        cwd=ccx.repo,
        env=ccx.env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_files,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def test_a_failed_transcript_write_stops_the_run_once_and_stays_resumable(ccx: Ccx) -> None:
    (ccx.repo / "big.txt").write_text("a line of the big file\n" * 3000)  # ~70 KB as a result
    ccx.api.add(
        tool_reply(("Read", {"file_path": "README.md"})),
        tool_reply(("Read", {"file_path": "big.txt"})),
    )
    started = time.time()
    run = run_with_file_size_limit(ccx, 40_000, "-p", "read", "--output-format", "stream-json")
    assert run.returncode == 1, run.stderr
    events = run.ccx_events()
    result = events[-1]
    assert result["is_error"] and result["subtype"] == "error_during_execution"
    (transcript,) = ccx.transcripts()
    assert result["result"] == (
        f"The turn was stopped because the session transcript {transcript} could not be "
        "written (File too large). The session up to that point is saved: fix the cause (e.g. "
        f"free disk space) and resume it with `ccx -r {result['session_id']}`."
    )
    errors = [e["text"] for e in events if e["type"] == "notice" and e["level"] == "error"]
    assert errors == [f"Could not write the session transcript {transcript} (File too large)."]
    assert run.stderr == "", "no repeated warnings"
    assert len(ccx.api.requests) == 2, "the turn stopped at the failure"

    written = [r for r in records(transcript) if r["type"] == "message"]  # whole lines only
    assert written[-1]["message"]["content"][0]["input"] == {"file_path": "big.txt"}
    for path in ccx.config.rglob("*"):
        if path.is_file() and path.stat().st_mtime >= started - 1:
            assert path.stat().st_size > 0, f"empty file left: {path}"

    ccx.api.add(text_reply("Back again."))
    again = ccx.run("-c", "-p", "go on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Back again."
    sent = ccx.api.requests[-1].messages
    assert "README" in json.dumps(sent)  # what was written came back
    assert ccx.api.errors == []


def test_an_unwritable_config_folder_is_an_error_not_a_success(ccx: Ccx, api: FakeApi) -> None:
    ccx.env["CCX_CONFIG_DIR"] = "/dev/full/ccx"  # a folder that can never be made
    api.add(text_reply("Unseen."))
    run = ccx.run("-p", "hi", "--output-format", "json")
    assert run.returncode == 1, run.stderr
    result = run.json()
    assert result["is_error"] and "transcript" in result["result"]
    assert "(Not a directory)" in result["result"]
    assert "Traceback" not in run.stderr
    assert api.requests == [], "no model call for a turn that cannot be saved"
