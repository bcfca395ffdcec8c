"""One session that meets every kind of bad input: each gets a clear error and the session goes on."""

from __future__ import annotations

from tests.e2e.conftest import Ccx
from tui.fake_api import Drop, text_reply, tool_reply


def test_bad_inputs_give_error_results_and_the_session_goes_on(ccx: Ccx) -> None:
    repo = ccx.repo
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02binary" * 100)
    with open(repo / "huge.log", "wb") as handle:  # 100 MB, sparse: cheap to make
        handle.truncate(100 * 1024 * 1024)
    (repo / "dup.py").write_text("x = 1\nx = 1\n")
    steps = [
        ("Read", {"file_path": "nope.py"}, "does not exist"),
        ("Read", {"file_path": "blob.bin"}, "binary"),
        ("Read", {"file_path": "src"}, "directory"),
        ("Read", {"file_path": "huge.log"}, "offset"),
        ("Read", {"file_path": "dup.py"}, None),
        ("Edit", {"file_path": "dup.py", "old_string": "x = 1", "new_string": "x = 2"}, "2 "),
        ("Bash", {"command": "echo '# touched' >> dup.py"}, None),
        (
            "Edit",
            {"file_path": "dup.py", "old_string": "# touched", "new_string": "y"},
            "Read it again",
        ),
        ("Bash", {"command": "yes | head -c 50000000"}, "cut"),
        ("Bash", {"command": "sleep 100", "timeout": 1000}, "timed out"),
        ("Write", {"file_path": "README.md", "content": "overwritten"}, "Read"),
    ]
    for name, tool_input, _ in steps:
        ccx.api.add(tool_reply((name, tool_input)))
    ccx.api.add(Drop(after_events=2), text_reply("Survived."))

    run = ccx.run(
        "-p", "torture test", "--output-format", "json", "--permission-mode", "bypassPermissions"
    )

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Survived."
    assert ccx.api.errors == []
    for index, (name, _, expected) in enumerate(steps):
        (result,) = ccx.api.requests[index + 1].messages[-1]["content"][:1]
        text = result["content"] if isinstance(result["content"], str) else str(result["content"])
        if expected is None:
            assert not result.get("is_error"), (name, text[:300])
            continue
        assert expected.lower() in text.lower(), (name, text[:300])
        if name != "Bash" or "timed out" in expected:
            assert result.get("is_error"), (name, text[:300])
        assert len(text) < 40_000, "outputs stay capped"
    assert (repo / "README.md").read_text().startswith("# Sample")
    assert "Traceback" not in run.stderr
