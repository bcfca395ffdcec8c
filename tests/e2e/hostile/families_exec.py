"""Attempts that make a harmless-looking command run something: environment prefixes, git's
global options, write / execute flags of read-only programs, the repository's own git
drivers and npm flags. All in the default mode, under the issue's allow rules."""

from __future__ import annotations

from typing import Any

from tests.e2e.hostile.attempt import BACK_HOME, Attempt, bash

# Markers the hostile repository's own scripts and drivers append to (see repo.py).
EVIL_SH = "repo/PWN_evil_sh"
EXTDIFF = "repo/PWN_drv_extdiff"
TEXTCONV = "repo/PWN_drv_textconv"
FILTER = "repo/PWN_drv_filter_clean"
GPG = "repo/PWN_drv_gpg"
SSH = "repo/PWN_drv_ssh"
SUB_FSMONITOR = "repo/PWN_drv_sub_fsmonitor"
SUB_PAGER = "repo/PWN_drv_sub_pager"
EVIL_GITDIR = "repo/PWN_drv_evil_fsmonitor"
EXEC_PATH = "repo/PWN_exec_path"


def runs(id: str, family: str, command: str, what: str, *markers: str, **kw: Any) -> Attempt:
    """A default-mode Bash attempt; its payload creates repo/PWN_<id> unless markers say
    which of the repository's own traps it springs."""
    return Attempt(
        id=id,
        family=family,
        mode="default",
        call=bash(command),
        what=what,
        markers=markers or (f"repo/PWN_{id}",),
        **kw,
    )


def _env() -> list[Attempt]:
    f = "env prefix"
    return [
        runs("env_git_external_diff", f,
             "GIT_EXTERNAL_DIFF='touch PWN_env_git_external_diff; false #' git diff",
             "GIT_EXTERNAL_DIFF runs a program for read-only `git diff`"),
        runs("env_git_config_parameters", f,
             "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=touch PWN_env_git_config_parameters; false #'\" git status",
             "GIT_CONFIG_PARAMETERS injects core.fsmonitor into the allowed `git status`"),
        runs("env_git_config_count", f,
             "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
             "GIT_CONFIG_VALUE_0='touch PWN_env_git_config_count; false #' git diff",
             "GIT_CONFIG_COUNT/KEY/VALUE inject core.fsmonitor into `git diff`"),
        runs("env_git_config_global", f,
             "GIT_CONFIG_GLOBAL=payloads/evil.gitconfig git status",
             "GIT_CONFIG_GLOBAL points git at a config file with core.fsmonitor",
             "repo/PWN_env_git_config_global"),
        runs("env_git_dir", f, "GIT_DIR=evil GIT_WORK_TREE=. git status",
             "GIT_DIR points `git status` at a git dir whose config has core.fsmonitor",
             EVIL_GITDIR),
        runs("env_git_exec_path", f, "GIT_EXEC_PATH=evilbin git status",
             "GIT_EXEC_PATH makes git run ./evilbin/git for the submodule's status",
             EXEC_PATH),
        runs("env_git_trace_file", f, "GIT_TRACE={repo}/PWN_env_git_trace_file git status",
             "GIT_TRACE=<absolute path> makes `git status` write a file"),
        runs("env_git_ssh_command", f,
             "GIT_SSH_COMMAND='touch PWN_env_git_ssh_command; false #' git ls-remote origin",
             "GIT_SSH_COMMAND runs a program for `git ls-remote`"),
        runs("env_pager", f, "PAGER='touch PWN_env_pager; true #' git grep -O RETRY_LIMIT",
             "PAGER is what `git grep -O` runs to open the matching files"),
        runs("env_git_pager", f, "GIT_PAGER='touch PWN_env_git_pager; true #' git grep -O RETRY_LIMIT",
             "GIT_PAGER is what `git grep -O` runs to open the matching files"),
        runs("env_lessopen", f, "LESSOPEN='|touch PWN_env_lessopen; cat %s' less README.md",
             "LESSOPEN runs a preprocessor for `less`, even with no terminal", needs=("less",)),
        runs("env_bash_env", f, "BASH_ENV=./evil_env.sh ldd /bin/true",
             "BASH_ENV is sourced by ldd, a bash script", "repo/PWN_bash_env", needs=("ldd",)),
        runs("env_ld_preload", f, "LD_PRELOAD=./evil.so ls",
             "LD_PRELOAD loads the repository's shared object into `ls`",
             "repo/PWN_ld_preload", needs=("cc",)),
        runs("env_path_hijack", f, "PATH=./bin:/usr/bin:/bin ls",
             "PATH makes `ls` the repository's ./bin/ls", "repo/PWN_path_hijack"),
        runs("env_npm_config_script_shell", f, "npm_config_script_shell=./evil.sh npm test",
             "npm_config_script_shell swaps the shell of the allowed `npm test`", EVIL_SH,
             needs=("npm",)),
    ]  # fmt: skip


def _git_global() -> list[Attempt]:
    f = "git global option"
    return [
        runs("git_git_dir_work_tree", f, "git --git-dir=evil --work-tree=. status",
             "--git-dir reads a config with core.fsmonitor", EVIL_GITDIR),
        runs("git_git_dir_separate_args", f, "git --git-dir evil --work-tree . status",
             "--git-dir with its value as the next word", EVIL_GITDIR),
        runs("git_git_dir_nested", f, "git --git-dir=sub/.git --work-tree=sub status",
             "--git-dir reads the nested repository's hostile config", SUB_FSMONITOR),
        runs("git_dash_c_nested", f, "git -C sub status",
             "-C enters a nested repository with its own core.fsmonitor", SUB_FSMONITOR),
        runs("git_dash_c_nested_diff", f, "git -C sub diff",
             "-C enters a nested repository for `git diff`", SUB_FSMONITOR),
        runs("git_config_fsmonitor", f,
             "git -c core.fsmonitor='touch PWN_git_config_fsmonitor; false #' status",
             "-c core.fsmonitor runs a program for `git status`"),
        runs("git_config_diff_external", f,
             "git -c diff.external='touch PWN_git_config_diff_external; false #' diff",
             "-c diff.external runs a program for `git diff`"),
        runs("git_config_pager", f,
             "git -c core.pager='touch PWN_git_config_pager; true #' grep -O RETRY_LIMIT",
             "-c core.pager runs a program for `git grep -O`"),
        runs("git_exec_path", f, "git --exec-path=evilbin status",
             "--exec-path makes git run ./evilbin/git for the submodule", EXEC_PATH),
        runs("git_config_env", f, "git --config-env=core.fsmonitor=SHELL status",
             "--config-env sets core.fsmonitor to $SHELL, which runs the repository's file `2`",
             "repo/PWN_config_env_shell"),
    ]  # fmt: skip


def _flags() -> list[Attempt]:
    f = "write/exec flag"
    return [
        runs("sort_output_abbreviated", f, "sort --outp=PWN_sort_output_abbreviated README.md",
             "--outp is --output by unique prefix"),
        runs("sort_output_attached", f, "sort -oPWN_sort_output_attached README.md",
             "-o with its value attached"),
        runs("sort_compress_program_abbreviated", f,
             "sort -S 1 --compress-prog=./evil.sh numbers.txt",
             "--compress-prog is --compress-program by unique prefix", EVIL_SH),
        runs("find_exec", f, "find . -maxdepth 1 -name README.md -exec touch PWN_find_exec \\;",
             "find -exec"),
        runs("find_execdir", f,
             "find . -maxdepth 1 -name README.md -execdir touch PWN_find_execdir \\;",
             "find -execdir"),
        Attempt("find_delete", f, "default", bash("find . -name victim_find_delete.txt -delete"),
                "find -delete removes a file", unchanged=("repo/victim_find_delete.txt",)),
        runs("find_fprint", f, "find . -maxdepth 0 -fprint PWN_find_fprint", "find -fprint"),
        runs("find_fprintf", f, "find . -maxdepth 0 -fprintf PWN_find_fprintf '%p'",
             "find -fprintf"),
        Attempt("sed_in_place", f, "default",
                bash("sed -i 's/victim/changed/' victim_sed_in_place.txt"),
                "sed -i rewrites a file", unchanged=("repo/victim_sed_in_place.txt",)),
        Attempt("sed_in_place_long", f, "default",
                bash("sed --in-place=.bak 's/victim/changed/' victim_sed_in_place_long.txt"),
                "sed --in-place=SUFFIX", unchanged=("repo/victim_sed_in_place_long.txt",)),
        runs("sed_w_command", f, "sed -n 'w PWN_sed_w_command' README.md",
             "sed's own w command writes a file"),
        runs("sed_s_w_flag", f, "sed -n 's/Hostile/x/w PWN_sed_s_w_flag' README.md",
             "the w flag of sed's s command"),
        runs("sed_e_command", f, "sed -n '1e touch PWN_sed_e_command' README.md",
             "sed's e command runs a shell command"),
        runs("sed_s_e_flag", f, "sed -n '1s/.*/touch PWN_sed_s_e_flag/ep' README.md",
             "the e flag of sed's s command runs the pattern space"),
        runs("awk_system", f, "awk 'BEGIN { system(\"touch PWN_awk_system\") }'",
             "awk's system()"),
        runs("awk_redirect", f, "awk 'BEGIN { print \"x\" > \"PWN_awk_redirect\" }'",
             "awk's print > file"),
        runs("awk_pipe", f, "awk 'BEGIN { print \"x\" | \"touch PWN_awk_pipe\" }'",
             "awk's print | command"),
        runs("tar_checkpoint_action", f,
             "tar -tf archive.tar --checkpoint=1 --checkpoint-action=exec='touch PWN_tar_checkpoint_action'",
             "tar's checkpoint action, while only listing an archive"),
        runs("tar_compress_program", f, "tar -I ./evil.sh -tf archive.tar",
             "tar -I runs a decompressor, while only listing an archive", EVIL_SH),
        runs("rg_pre", f, "rg --pre=./evil.sh RETRY_LIMIT",
             "rg --pre runs a preprocessor on every file", EVIL_SH, needs=("rg",)),
        runs("git_log_output", f, "git log -1 --output=PWN_git_log_output",
             "--output of the allowed `git log *` writes a file"),
        runs("git_diff_output", f, "git diff --output=PWN_git_diff_output -- README.md",
             "--output of `git diff` writes a file"),
        runs("git_grep_open_files", f, "git grep -O'touch PWN_git_grep_open_files; true #' RETRY_LIMIT",
             "git grep -O<program> runs the program on the matches"),
        Attempt("git_branch_delete", f, "default", bash("git branch -D victim-branch"),
                "git branch -D deletes a branch", unchanged=("repo/.git/refs/heads/victim-branch",)),
        runs("uniq_output_file", f, "uniq README.md PWN_uniq_output_file",
             "uniq's second operand is an output file"),
        runs("xxd_output_file", f, "xxd README.md PWN_xxd_output_file",
             "xxd's second operand is an output file", needs=("xxd",)),
    ]  # fmt: skip


def _drivers() -> list[Attempt]:
    f = "repo git driver"
    return [
        runs("driver_status_nested_fsmonitor", f, "cd sub && git status",
             "the allowed `git status` in a nested repository runs its core.fsmonitor",
             SUB_FSMONITOR, after=(BACK_HOME,)),
        runs("driver_diff_external", f, "git diff",
             "`git diff` runs the repository's diff driver command", EXTDIFF),
        runs("driver_diff_filter_clean", f, "git diff --stat",
             "`git diff --stat` runs the repository's clean filter", FILTER),
        runs("driver_show_textconv", f, "git show",
             "`git show` runs the repository's textconv driver", TEXTCONV),
        runs("driver_log_p_textconv", f, "git log -p -3",
             "the allowed `git log -p` runs the repository's textconv driver", TEXTCONV),
        runs("driver_log_p_ext_diff", f, "git log -p --ext-diff -3",
             "the allowed `git log -p --ext-diff` runs the repository's diff driver command", EXTDIFF),
        runs("driver_show_ext_diff", f, "git show --ext-diff",
             "`git show --ext-diff` runs the repository's diff driver command", EXTDIFF),
        runs("driver_log_show_signature", f, "git log --show-signature -3",
             "the allowed `git log --show-signature` runs the repository's gpg.program", GPG),
        runs("driver_log_format_signature", f, "git log -3 --format='%h %G?'",
             "the allowed `git log --format=%G?` runs the repository's gpg.program", GPG),
        runs("driver_ls_remote_ssh", f, "git ls-remote origin",
             "`git ls-remote` runs the repository's core.sshCommand", SSH),
        runs("driver_grep_pager_nested", f, "cd sub && git grep -O fixture",
             "`git grep -O` in a nested repository runs its core.pager", SUB_PAGER,
             after=(BACK_HOME,)),
    ]  # fmt: skip


def _npm() -> list[Attempt]:
    f = "npm flag"
    return [
        runs("npm_script_shell", f, "npm test --script-shell=./evil.sh",
             "--script-shell under the allow rule `npm test *`", EVIL_SH, needs=("npm",)),
        runs("npm_script_shell_separate", f, "npm test --script-shell ./evil.sh",
             "--script-shell with its value as the next word", EVIL_SH, needs=("npm",)),
        runs("npm_userconfig", f, "npm test --userconfig=payloads/evil.npmrc",
             "--userconfig loads an npmrc that sets script-shell", EVIL_SH, needs=("npm",)),
        runs("npm_prefix_nested", f, "npm test --prefix sub",
             "--prefix runs another package's test script", "repo/PWN_npm_prefix",
             needs=("npm",)),
    ]  # fmt: skip


def _controls() -> list[Attempt]:
    return [
        runs(
            "control_touch",
            "control",
            "touch PWN_control_touch",
            "a plain write in the default mode asks",
        ),
    ]


def exec_attempts() -> list[Attempt]:
    return [*_env(), *_git_global(), *_flags(), *_drivers(), *_npm(), *_controls()]
