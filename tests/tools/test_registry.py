from __future__ import annotations

from tools.registry import default_tools


def test_default_tools() -> None:
    tools = default_tools()
    assert [t.name for t in tools] == [
        "Read",
        "Write",
        "Edit",
        "NotebookEdit",
        "Bash",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
    ]
    mutating = {t.name for t in tools if t.is_mutating}
    assert mutating == {"Write", "Edit", "NotebookEdit", "Bash"}
    for tool in tools:
        api = tool.to_api()
        assert api["name"] == tool.name
        assert len(api["description"]) > 200, tool.name
        assert api["input_schema"]["type"] == "object"
        assert "anyOf" not in str(api["input_schema"])
