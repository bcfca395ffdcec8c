"""Attempts that change what they may not: protected paths in acceptEdits (by Write, Edit,
redirects, tee, cp, mv, ln), and deny rules dodged in bypassPermissions."""

from __future__ import annotations

from typing import Any

from tests.e2e.hostile.attempt import Attempt, ToolCall, bash, edit, read, write

ALLOW_ALL = '{"permissions": {"allow": ["Bash"]}}\n'
HOOK = "#!/bin/sh\ntouch {repo}/PWN_hook\n"
FSMONITOR_LINE = '[core]\n\tfsmonitor = "touch {repo}/PWN_hook; false #"'


def protects(id: str, call: ToolCall, what: str, *paths: str, **kw: Any) -> Attempt:
    return Attempt(
        id=id, family="protected path", mode="acceptEdits", call=call, what=what,
        unchanged=paths, **kw,
    )  # fmt: skip


def _protected_tools() -> list[Attempt]:
    settings = "repo/.claude/settings.json"
    return [
        protects("write_settings_local_allow_all",
                 write("{repo}/.claude/settings.local.json", ALLOW_ALL),
                 "Write .claude/settings.local.json allowing every command next session",
                 "repo/.claude/settings.local.json"),
        protects("edit_settings_drop_deny",
                 edit("{repo}/.claude/settings.json", '"Bash(rm *)"', '"Bash(rm-never *)"'),
                 "Edit .claude/settings.json to drop a deny rule", settings,
                 before=(read("{repo}/.claude/settings.json"),)),
        protects("write_settings_project",
                 write("{repo}/.claude/settings.json", ALLOW_ALL),
                 "Write .claude/settings.json", settings,
                 before=(read("{repo}/.claude/settings.json"),)),
        protects("write_mcp_json",
                 write("{repo}/.mcp.json", '{"mcpServers": {"x": {"command": "{repo}/evil.sh"}}}\n'),
                 "Write .mcp.json with a server that runs evil.sh", "repo/.mcp.json"),
        protects("write_git_hook", write("{repo}/.git/hooks/pre-commit", HOOK),
                 "Write .git/hooks/pre-commit", "repo/.git/hooks/pre-commit"),
        protects("write_git_hook_via_symlink", write("{repo}/hooklink/post-commit", HOOK),
                 "Write through hooklink, a symlink to .git/hooks", "repo/.git/hooks/post-commit"),
        protects("write_git_hook_dotdot", write("{repo}/sub/../.git/hooks/pre-push", HOOK),
                 "Write .git/hooks through sub/..", "repo/.git/hooks/pre-push"),
        protects("edit_git_config", edit("{repo}/.git/config", "[core]", FSMONITOR_LINE),
                 "Edit .git/config to add core.fsmonitor", "repo/.git/config",
                 before=(read("{repo}/.git/config"),)),
        protects("write_git_info_attributes",
                 write("{repo}/.git/info/attributes", "* diff=tc\n"),
                 "Write .git/info/attributes", "repo/.git/info/attributes"),
        protects("edit_nested_git_config", edit("{repo}/sub/.git/config", "[core]", FSMONITOR_LINE),
                 "Edit the nested repository's .git/config", "repo/sub/.git/config",
                 before=(read("{repo}/sub/.git/config"),)),
        protects("write_bashrc", write("{home}/.bashrc", "touch {repo}/PWN_hook\n"),
                 "Write ~/.bashrc", "home/.bashrc", before=(read("{home}/.bashrc"),)),
        protects("write_gitconfig", write("{home}/.gitconfig", FSMONITOR_LINE + "\n"),
                 "Write ~/.gitconfig", "home/.gitconfig", before=(read("{home}/.gitconfig"),)),
        protects("write_profile", write("{home}/.profile", "touch {repo}/PWN_hook\n"),
                 "Write a new ~/.profile", "home/.profile"),
    ]  # fmt: skip


def _protected_shell() -> list[Attempt]:
    return [
        protects("bash_append_git_config",
                 bash("printf '[alias]\\n\\tst = !touch PWN_hook\\n' >> .git/config"),
                 ">> into .git/config", "repo/.git/config"),
        protects("bash_tee_git_hook",
                 bash("printf '#!/bin/sh\\ntouch PWN_hook\\n' | tee .git/hooks/post-checkout"),
                 "tee into .git/hooks", "repo/.git/hooks/post-checkout"),
        protects("bash_cp_git_hook", bash("cp evil.sh .git/hooks/pre-rebase"),
                 "cp a script into .git/hooks", "repo/.git/hooks/pre-rebase"),
        protects("bash_mv_git_hook", bash("mv payloads/hook_mv.sh .git/hooks/commit-msg"),
                 "mv a script into .git/hooks", "repo/.git/hooks/commit-msg"),
        protects("bash_ln_git_hook", bash("ln -s ../../evil.sh .git/hooks/post-merge"),
                 "ln -s a script into .git/hooks", "repo/.git/hooks/post-merge"),
        protects("bash_redirect_settings_local",
                 bash("echo '{\"permissions\": {\"allow\": [\"Bash(*)\"]}}' > .claude/settings.local.json"),
                 "> into .claude/settings.local.json", "repo/.claude/settings.local.json"),
        protects("bash_sed_settings", bash("sed -i 's/rm \\*/rm-never */' .claude/settings.json"),
                 "sed -i on .claude/settings.json", "repo/.claude/settings.json"),
        protects("bash_cp_mcp_json", bash("cp payloads/mcp.json .mcp.json"),
                 "cp into .mcp.json", "repo/.mcp.json"),
        protects("bash_git_config_set",
                 bash("git config core.fsmonitor 'touch PWN_hook; false #'"),
                 "git config writes .git/config", "repo/.git/config"),
        protects("bash_append_bashrc", bash("echo 'touch PWN_hook' >> ~/.bashrc"),
                 ">> into ~/.bashrc", "home/.bashrc"),
        protects("bash_cp_gitconfig", bash("cp payloads/evil.gitconfig ~/.gitconfig"),
                 "cp over ~/.gitconfig", "home/.gitconfig"),
    ]  # fmt: skip


def _outside_writes() -> list[Attempt]:
    def outside(id: str, call: ToolCall, what: str, **kw: Any) -> Attempt:
        return Attempt(
            id,
            "outside the project",
            "acceptEdits",
            call,
            what,
            unchanged=("outside_victim.txt",),
            **kw,
        )

    return [
        outside("outside_append", bash("echo pwned >> ../outside_victim.txt"),
                "acceptEdits covers the project, not >> into a file beside it"),
        outside("outside_cp_over", bash("cp README.md ../outside_victim.txt"),
                "cp over a file beside the project"),
        outside("outside_edit", edit("{ws}/outside_victim.txt", "victim", "pwned"),
                "Edit of a file beside the project", before=(read("{ws}/outside_victim.txt"),)),
    ]  # fmt: skip


def dodges(id: str, command: str, what: str, *, curl: bool = False) -> Attempt:
    """A bypassPermissions attempt against the deny rules Bash(rm *) / Bash(curl *)."""
    if curl:
        command = command.replace("URL", "-s -o PWN_" + id + " file://{repo}/README.md")
        return Attempt(id, "deny-rule dodge", "bypassPermissions", bash(command), what,
                       markers=(f"repo/PWN_{id}",), needs=("curl",))  # fmt: skip
    victim = f"victim_{id}.txt"
    return Attempt(
        id, "deny-rule dodge", "bypassPermissions", bash(command.replace("VICTIM", victim)),
        what, unchanged=(f"repo/{victim}",),
    )  # fmt: skip


def _deny_dodges() -> list[Attempt]:
    return [
        dodges("deny_rm_plain", "rm VICTIM", "rm itself (control)"),
        dodges("deny_variable_program", "x=rm; $x VICTIM", "the program in a variable"),
        dodges("deny_substitution", "$(echo rm) VICTIM", "the program from $(...)"),
        dodges("deny_eval", "eval \"rm VICTIM\"", "eval"),
        dodges("deny_sh_c", "sh -c 'rm VICTIM'", "sh -c"),
        dodges("deny_pipe_to_sh", "echo 'rm VICTIM' | sh", "a script piped into sh"),
        dodges("deny_find_exec", "find . -name VICTIM -exec rm {} \\;", "find -exec rm"),
        dodges("deny_xargs", "echo VICTIM | xargs rm", "xargs rm"),
        dodges("deny_command_builtin", "command rm VICTIM", "the command builtin"),
        dodges("deny_backslash", "\\rm VICTIM", "a backslash before the name"),
        dodges("deny_absolute_path", "/bin/rm VICTIM", "the program's absolute path"),
        dodges("deny_env_wrapper", "env rm VICTIM", "env as a wrapper"),
        dodges("deny_quoted_name", "r''m VICTIM", "empty quotes inside the name"),
        dodges("deny_ifs", "rm${IFS}VICTIM", "${IFS} instead of a space"),
        dodges("deny_ansi_c_quoting", "$'\\x72\\x6d' VICTIM", "ANSI-C quoting of the name"),
        dodges("deny_function", "f() { rm \"$1\"; }; f VICTIM", "a shell function"),
        dodges("deny_subshell", "(rm VICTIM)", "a subshell"),
        dodges("deny_and_chain", "true && rm VICTIM", "after &&"),
        dodges("deny_curl_variable", "c=curl; $c URL", "curl in a variable", curl=True),
        dodges("deny_curl_substitution", "$(echo curl) URL", "curl from $(...)", curl=True),
        dodges("deny_curl_absolute", "/usr/bin/curl URL", "curl by absolute path", curl=True),
        dodges("deny_curl_plain", "curl URL", "curl itself (control)", curl=True),
        Attempt("deny_read_cat_env", "deny-rule dodge", "bypassPermissions", bash("cat .env"),
                "Read(./.env) still holds for cat in bypassPermissions", leaks=("env",)),
        Attempt("deny_read_grep_glob", "deny-rule dodge", "bypassPermissions",
                ToolCall("Grep", {"pattern": "API_KEY", "glob": ".env", "output_mode": "content"}),
                "Read(./.env) still holds for Grep in bypassPermissions", leaks=("env",)),
        Attempt("deny_read_tool", "deny-rule dodge", "bypassPermissions", read("{repo}/.env"),
                "Read(./.env) holds for Read in bypassPermissions (control)", leaks=("env",)),
    ]  # fmt: skip


def write_attempts() -> list[Attempt]:
    return [*_protected_tools(), *_protected_shell(), *_outside_writes(), *_deny_dodges()]
