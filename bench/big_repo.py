"""The generated 100,000-file repository of issue 22's scale runs, built once and cached.

At scale 1.0 it holds 100,000 files, about 1.1 GB: 60,000 nested sources
(Python, TypeScript, Markdown; committed), a 500 MB service log (untracked,
not ignored: a search walks it), 30,000 files of node_modules and 9,999 of
build output (both ignored by .gitignore). A smaller ``scale`` shrinks every
part in proportion (the quick runs use 0.05). The tree is cached under
``/tmp/ccx-bench-bigrepo-<scale>/repo`` (or ``$CCX_BENCH_BIGREPO_DIR``); a
stamp file marks a finished build, so an interrupted one is rebuilt.

Every source file carries words a search can look for: ``class Handler<N>``,
``def process_<noun>``, ``TODO(owner)`` in one file in 50, and ``MAX_RETRIES``
constants; the log has ``ERROR``, ``WARN`` and ``INFO`` lines with request ids.

    .venv/bin/python bench/big_repo.py [--scale 1.0]   # builds (or finds) it, prints its path
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
from pathlib import Path

SOURCE_FILES = 60_000
MODULE_FILES = 30_000
BUILD_FILES = 9_999
LOG_BYTES = 500 * 1024 * 1024
STAMP = ".ccx-bench-built"
NOUNS = ("order", "invoice", "ledger", "cursor", "session", "token", "shard", "window", "queue")
GIT = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def cache_root(scale: float) -> Path:
    base = os.environ.get("CCX_BENCH_BIGREPO_DIR") or f"/tmp/ccx-bench-bigrepo-{scale:g}"
    return Path(base)


def ensure_big_repo(scale: float = 1.0) -> Path:
    """The repository's path, built first when no finished build is cached."""
    repo = cache_root(scale) / "repo"
    if (repo / STAMP).exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    build(repo, scale)
    (repo / STAMP).write_text(f"scale {scale}\n")
    return repo


def build(repo: Path, scale: float) -> None:
    rng = random.Random(22)
    (repo / ".gitignore").write_text("node_modules/\nbuild/\n.ccx-bench-built\n")
    (repo / "README.md").write_text("# A large generated service\n\nSources live under src/.\n")
    sources = max(10, int(SOURCE_FILES * scale))
    for index in range(sources):
        path = repo / source_path(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source_text(index, path.suffix, rng))
    modules = max(10, int(MODULE_FILES * scale))
    for index in range(modules):
        package = f"pkg-{index // 20:04d}"
        name = "package.json" if index % 20 == 0 else f"lib/part_{index % 20:02d}.js"
        path = repo / "node_modules" / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_text(package, index, rng))
    outputs = max(10, int(BUILD_FILES * scale))
    blob = "".join(f"var b{n}=function(a){{return a*{n}+{n % 97}}};\n" for n in range(400))
    for index in range(outputs):
        path = repo / "build" / f"chunk_{index // 100:03d}" / f"bundle_{index:05d}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"/* bundle {index} */\n" + blob)
    write_log(repo / "logs" / "service.log", int(LOG_BYTES * scale), rng)
    commit(repo)


def source_path(index: int) -> str:
    """Nested four deep: src/<service>/<area>/<module>/file_N.<ext>."""
    service, area, module = index // 6000, (index // 300) % 20, (index // 20) % 15
    ext = (".py", ".py", ".ts", ".md")[index % 4]
    return f"src/svc_{service:02d}/area_{area:02d}/mod_{module:02d}/file_{index:05d}{ext}"


def source_text(index: int, suffix: str, rng: random.Random) -> str:
    noun = NOUNS[index % len(NOUNS)]
    lines = []
    if suffix == ".md":
        lines += [f"# Notes on {noun} handling ({index})", ""]
        lines += [f"The {noun} path retries {rng.randint(2, 9)} times before it gives up."] * 40
    elif suffix == ".ts":
        lines += [
            f"export class Handler{index} {{",
            f"  readonly maxRetries = {rng.randint(1, 9)};",
        ]
        for n in range(60):
            lines.append(f"  process_{noun}_{n}(value: number): number {{ return value * {n}; }}")
        lines.append("}")
    else:
        lines += [f'"""Service module {index}: {noun} handling."""', "", "import os", ""]
        lines.append(f"MAX_RETRIES = {rng.randint(1, 9)}")
        lines += ["", "", f"class Handler{index}:"]
        for n in range(55):
            lines += [
                f"    def process_{noun}_{n}(self, value):",
                f"        return value * {n} + {rng.randint(0, 999)}",
            ]
    if index % 50 == 0:
        lines.append(f"# TODO(owner): revisit the {noun} limits")
    return "\n".join(lines) + "\n"


def module_text(package: str, index: int, rng: random.Random) -> str:
    if index % 20 == 0:
        return f'{{"name": "{package}", "version": "1.{index % 9}.0", "main": "lib/part_01.js"}}\n'
    body = "".join(
        f"exports.fn{n} = function (a) {{ return a + {rng.randint(0, 9999)}; }};\n"
        for n in range(90)
    )
    return f"'use strict';\n// {package} part {index % 20}\n{body}"


def write_log(path: Path, size: int, rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    levels = ("INFO",) * 8 + ("WARN", "ERROR")
    block_lines = [
        f"{{ts}} {levels[n % 10]} worker-{n % 16} request {{block}}-{n:05d} "
        f"{NOUNS[n % len(NOUNS)]} took {rng.randint(1, 900)} ms status={200 + (n % 5) * 100}\n"
        for n in range(8000)
    ]
    template = "".join(block_lines)
    written = 0
    with open(path, "w") as out:
        block = 0
        while written < size:
            chunk = template.replace("{ts}", f"2026-12-0{1 + block % 5}T10:{block % 60:02d}:00")
            chunk = chunk.replace("{block}", f"b{block:05d}")
            out.write(chunk)
            written += len(chunk)
            block += 1


def commit(repo: Path) -> None:
    env = dict(os.environ, **GIT_ENV)
    subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run([*GIT, "add", "src", "README.md", ".gitignore"], cwd=repo, check=True, env=env)
    subprocess.run([*GIT, "commit", "-qm", "Generated service"], cwd=repo, check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print(ensure_big_repo(args.scale))


if __name__ == "__main__":
    main()
