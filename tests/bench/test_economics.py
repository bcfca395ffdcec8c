"""The economics workload: generated sessions are runnable, deterministic, and judge retention honestly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.economics import family, generate, probes, runner, table


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("gen") / "s1"
    return out, generate.generate(out, 1)


def repo_files(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_a_seed_always_gives_the_same_session_and_seeds_differ(
    tmp_path: Path, generated: tuple[Path, dict[str, Any]]
) -> None:
    out, scenario = generated
    again = generate.generate(tmp_path / "again", 1)
    other = generate.generate(tmp_path / "other", 2)
    assert {**again, "repo": ""} == {**scenario, "repo": ""}
    assert repo_files(tmp_path / "again" / "repo") == repo_files(out / "repo")
    assert other["steps"] != scenario["steps"]
    head = ["git", "rev-parse", "HEAD"]
    assert (
        subprocess.run(head, cwd=out / "repo", capture_output=True, text=True).stdout
        == subprocess.run(
            head, cwd=tmp_path / "again" / "repo", capture_output=True, text=True
        ).stdout
    )


def test_the_session_has_every_move_and_files_of_3_to_40_kib(
    generated: tuple[Path, dict[str, Any]],
) -> None:
    out, scenario = generated
    sizes = [p.stat().st_size for p in (out / "repo" / "src").rglob("*.py")]
    assert min(sizes) >= 3 * 1024 - 200 and max(sizes) <= 40 * 1024 + 400
    assert max(sizes) - min(sizes) > 10 * 1024  # sizes are drawn, not uniform
    steps = scenario["steps"]
    partial = [s for s in steps if s["tool"] == "Read" and "offset" in s["input"]]
    assert len(partial) >= 6
    assert any("git log -p" in s["input"].get("command", "") for s in steps)
    assert any("run_tests.py" in s["input"].get("command", "") for s in steps)
    assert any(s["tool"] == "Grep" or "grep" in s["input"].get("command", "") for s in steps)
    reads = [
        s["input"]["file_path"] for s in steps if s["tool"] == "Read" and "offset" not in s["input"]
    ]
    assert len(reads) > len(set(reads)) + 3  # re-reads


def test_every_edit_applies_once_right_after_a_read_and_is_read_again(
    generated: tuple[Path, dict[str, Any]],
) -> None:
    out, scenario = generated
    steps = scenario["steps"]
    edits = [i for i, s in enumerate(steps) if s["tool"] == "Edit"]
    assert len(edits) >= 3
    for i in edits:
        inp = steps[i]["input"]
        path = out / "repo" / inp["file_path"].replace("{repo}/", "")
        assert path.read_text().count(inp["old_string"]) == 1
        assert steps[i - 1] == {"tool": "Read", "input": {"file_path": inp["file_path"]}} or (
            steps[i - 1]["tool"] == "Read"
            and steps[i - 1]["input"]["file_path"] == inp["file_path"]
        )
        assert steps[i + 1]["input"] == {"file_path": inp["file_path"]}


def test_each_probe_is_in_what_its_read_shows_and_no_shell_output_prints_a_fact(
    generated: tuple[Path, dict[str, Any]],
) -> None:
    out, scenario = generated
    repo = out / "repo"
    for idx, (_unit, fact) in scenario["probes"].items():
        inp = scenario["steps"][int(idx)]["input"]
        lines = (repo / inp["file_path"].replace("{repo}/", "")).read_text().splitlines()
        start = inp.get("offset", 1) - 1
        shown = lines[start : start + inp.get("limit", 2000)]
        assert sum(fact in line for line in shown) == 1, idx
    facts = scenario["facts"]
    for step in scenario["steps"]:
        if step["tool"] == "Bash":
            shown = subprocess.run(
                step["input"]["command"], shell=True, cwd=repo, capture_output=True, text=True
            ).stdout
            if "git log -p" in step["input"]["command"] or step["input"]["command"].endswith(
                "run_tests.py"
            ):
                assert len(shown) > 10_000, step  # the large outputs are large
            assert not [f for f in facts if f in shown], step["input"]["command"]


def request(step: int, *texts: str) -> dict[str, Any]:
    content = [{"type": "text", "text": t} for t in texts]
    return {
        "kind": "main",
        "step": step,
        "body": {"messages": [{"role": "user", "content": content}]},
    }


def shown_text(body: dict[str, Any]) -> str:
    return "\n".join(b["text"] for m in body["messages"] for b in m["content"])


def test_retention_counts_a_request_only_when_the_5_latest_units_are_there() -> None:
    steps = [{"tool": "Read", "input": {"file_path": f"{{repo}}/f{i}.py"}} for i in range(7)]
    scenario = {
        "task": "the task",
        "steps": steps,
        "probes": {str(i): [f"f{i}", f"fact {i}"] for i in range(7)},
    }
    recent = [f"fact {i}" for i in range(2, 7)]
    recs = [
        request(8, "the task", *recent),  # all 7 results shown; the 5 latest are there
        request(8, "the task", *recent[1:]),  # fact 2 lost
        request(8, *recent),  # the task lost
        request(3, "the task", "fact 0"),  # shows steps 0 and 1: fact 1 lost
        {**request(8, "the task"), "refused": "prompt_too_long"},
    ]
    assert probes.retention(recs, scenario, shown_text) == {
        "checked": 4,
        "task_kept": 3,
        "recent_kept": 2,
    }


def test_replay_probes_follow_edits_writes_and_partial_reads(tmp_path: Path) -> None:
    (tmp_path / "a.ex").write_text("defmodule A do\n  def first_function_name(x), do: x\nend\n")
    steps = [
        {"tool": "Read", "input": {"file_path": "{repo}/a.ex"}},
        {
            "tool": "Edit",
            "input": {
                "file_path": "{repo}/a.ex",
                "old_string": "first_function_name",
                "new_string": "renamed_function_name_longer",
            },
        },
        {"tool": "Read", "input": {"file_path": "{repo}/a.ex"}},
        {
            "tool": "Write",
            "input": {
                "file_path": "{repo}/b.ex",
                "content": "line one is long enough here\nshort\n",
            },
        },
        {"tool": "Read", "input": {"file_path": "{repo}/b.ex", "offset": 2, "limit": 1}},
        {"tool": "Read", "input": {"file_path": "{repo}/b.ex"}},
        {"tool": "Read", "input": {"file_path": "/elsewhere/c.ex"}},
    ]
    got = probes.replay_probes({"steps": steps}, tmp_path)
    assert got == {
        "0": ["a.ex", "def first_function_name(x), do: x"],
        "2": ["a.ex", "def renamed_function_name_longer(x), do: x"],
        "5": ["b.ex", "line one is long enough here"],
    }


def test_only_selects_by_id_family_or_glob() -> None:
    runs = family.all_runs()
    ids = lambda only: [r.id for r in family.select(runs, only)]  # noqa: E731
    assert ids("gen*-w100") == ["gen1-w100", "gen2-w100", "gen3-w100"]
    assert ids("spotter") == [r.id for r in runs if r.family == "spotter"]
    assert ids("audit,w060") == ["audit-w120", "spot-fa812bfe-w060"]
    assert ids("nothing") == []
    assert len({r.id for r in runs}) == len(runs) == 17
    assert json.dumps([r.window for r in runs])  # plain data for the JSON document


def row(ie: int, **kw: Any) -> dict[str, Any]:
    base = {
        "input_equiv": ie,
        "refused": 0,
        "task_kept": 10,
        "recent_kept": 10,
        "checked": 10,
        "ok": True,
        "summaries": 0,
        "methods": {},
        "clears": 0,
    }
    return {**base, **kw}


def test_the_targets_pass_and_fail_on_the_issues_bounds() -> None:
    runs = {r.id: r for r in family.all_runs()}
    spot120 = [runs[f"spot-{n}-w120"] for n in family.SPOTTER]
    good = [(r, row(600), row(1000)) for r in spot120]
    got = {name: ok for name, ok, _ in table.targets(good)}
    assert got["spotter 120K: each <= 0.75, mean <= 0.65"] is True
    assert got["spotter 200K: mean <= 0.55"] is None  # not run
    one_high = [(spot120[0], row(760), row(1000)), *good[1:]]  # mean 0.65, one over 0.75
    assert table.targets(one_high)[0][1] is False
    lost = [(spot120[0], row(600, task_kept=9), row(1000)), *good[1:]]
    assert {n: ok for n, ok, _ in table.targets(lost)}[
        "ccx: first prompt verbatim in every request"
    ] is False
    worse = [(spot120[0], row(600, recent_kept=8), row(1000, recent_kept=9)), *good[1:]]
    assert {n: ok for n, ok, _ in table.targets(worse)}[
        "ccx retention >= CC's (share of requests)"
    ] is False
    sixty = [(runs["spot-fa812bfe-w060"], row(900, methods={"session_memory": 1}), None)]
    assert table.targets(sixty)[-1][1] is True
    assert (
        table.targets([(runs["spot-fa812bfe-w060"], row(900, methods={"summary": 2}), None)])[-1][1]
        is False
    )
    no_compaction = [(runs["spot-fa812bfe-w060"], row(900, methods={}), None)]
    assert table.targets(no_compaction)[-1][1] is True  # clearing alone kept it in the window


def test_repeated_runs_give_the_median_row_and_every_sample() -> None:
    got = runner.median_row([row(1643), row(1396), row(1409)])
    assert got["input_equiv"] == 1409 and got["samples"] == [1396, 1409, 1643]
    assert "samples" not in runner.median_row([row(5)])


def test_both_clients_think_as_long_as_asked_and_rows_of_other_thinking_are_not_reused(
    tmp_path: Path,
) -> None:
    import json

    from bench.economics import cli, runner

    for client in ("ccx", "cc"):
        cmd, _ = runner.client_command(client, tmp_path, tmp_path, tmp_path / "log", 120_000, 500)
        server = cmd[: cmd.index("--")]
        assert server[server.index("--thinking-tokens") + 1] == "500"
    ccx_cmd, _ = runner.client_command("ccx", tmp_path, tmp_path, tmp_path / "log", 120_000, 500)
    assert "--max-thinking-tokens" not in ccx_cmd  # ccx's shipped thinking defaults are measured
    off, _ = runner.client_command("cc", tmp_path, tmp_path, tmp_path / "log", 120_000, 0)
    assert "--thinking-tokens" not in off
    doc = {
        "sessions": {"a": "h", "b": "h"},
        "runs": [
            {"id": "a", "cc": {"input_equiv": 1, "thinking_tokens": 500}},
            {"id": "b", "cc": {"input_equiv": 2}},  # an older row: ran without thinking
        ],
    }
    path = tmp_path / "cc.json"
    path.write_text(json.dumps(doc))
    rows, note = cli.load_cc(str(path), {"a": "h", "b": "h"}, 500)
    assert list(rows) == ["a"] and "no CC figures for: b" in note
    rows, _ = cli.load_cc(str(path), {"a": "h", "b": "h"}, 0)
    assert list(rows) == ["b"]
