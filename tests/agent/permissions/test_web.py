"""WebFetch's permission rules: ``WebFetch(domain:...)`` in allow / ask / deny, asking by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.permissions.gate import PermissionGate, Rule
from agent.permissions.web import domain_matches, fetch_host


def gate(tmp_path: Path, mode: str = "default", **rules: tuple[str, ...]) -> PermissionGate:
    def parsed(kind: str) -> list[Rule]:
        return [Rule.parse(text, source="test") for text in rules.get(kind, ())]

    return PermissionGate(mode, parsed("allow"), parsed("deny"), parsed("ask"), cwd=tmp_path)


def fetch(g: PermissionGate, url: str) -> str:
    return g.check("WebFetch", {"url": url, "prompt": "p"}, False).behavior


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_a_fetch_asks_by_default_in_every_mode_but_bypass(tmp_path: Path, mode: str) -> None:
    assert fetch(gate(tmp_path, mode), "https://docs.example/a") == "ask"
    assert fetch(gate(tmp_path, "bypassPermissions"), "https://docs.example/a") == "allow"


def test_an_allow_rule_covers_its_domain_only(tmp_path: Path) -> None:
    g = gate(tmp_path, allow=("WebFetch(domain:docs.example)",))
    assert fetch(g, "https://docs.example/guide?x=1") == "allow"
    assert fetch(g, "http://DOCS.example.:8080/") == "allow"
    assert fetch(g, "https://www.docs.example/") == "ask"
    assert fetch(g, "https://docs.example.evil/") == "ask"
    assert fetch(g, "https://evil.example/?u=https://docs.example") == "ask"
    decision = g.check("WebFetch", {"url": "https://docs.example/"}, False)
    assert decision.reason == "allowed by the rule WebFetch(domain:docs.example) (from test)"


def test_a_wildcard_rule_covers_subdomains_not_the_domain(tmp_path: Path) -> None:
    g = gate(tmp_path, allow=("WebFetch(domain:*.example.org)",))
    assert fetch(g, "https://a.example.org/") == "allow"
    assert fetch(g, "https://a.b.example.org/") == "allow"
    assert fetch(g, "https://example.org/") == "ask"
    assert fetch(g, "https://badexample.org/") == "ask"


def test_deny_wins_over_allow_and_bypass(tmp_path: Path) -> None:
    rules = {"allow": ("WebFetch",), "deny": ("WebFetch(domain:tracker.example)",)}
    for mode in ("default", "bypassPermissions"):
        g = gate(tmp_path, mode, **rules)
        assert fetch(g, "https://tracker.example/pixel") == "deny"
        assert fetch(g, "https://docs.example/") == "allow"
    whole = gate(tmp_path, "bypassPermissions", deny=("WebFetch",))
    assert fetch(whole, "https://docs.example/") == "deny"


def test_an_ask_rule_beats_an_allow_rule(tmp_path: Path) -> None:
    g = gate(tmp_path, allow=("WebFetch",), ask=("WebFetch(domain:pay.example)",))
    assert fetch(g, "https://pay.example/") == "ask"
    assert fetch(g, "https://docs.example/") == "allow"


def test_rules_for_other_tools_do_not_touch_fetches(tmp_path: Path) -> None:
    g = gate(tmp_path, allow=("Read", "Bash(curl *)", "WebSearch"))
    assert fetch(g, "https://docs.example/") == "ask"
    bad_spec = gate(tmp_path, allow=("WebFetch(docs.example)",))  # no "domain:": matches nothing
    assert fetch(bad_spec, "https://docs.example/") == "ask"


def test_always_allow_saves_the_domain(tmp_path: Path) -> None:
    g = gate(tmp_path)
    rule = g.suggest_rule("WebFetch", {"url": "https://Docs.Example/a/b", "prompt": "p"})
    assert str(rule) == "WebFetch(domain:docs.example)"
    g.allow_always(rule)
    assert fetch(g, "https://docs.example/other") == "allow"


def test_hosts_and_specifiers() -> None:
    assert fetch_host({"url": "https://[::1]:8080/x"}) == "::1"
    assert fetch_host({"url": "https://[bad"}) is None
    assert fetch_host({}) is None
    assert not domain_matches("domain:", "example.com")
    assert not domain_matches("domain:example.com", None)
    assert domain_matches("domain:Example.COM", "example.com")
