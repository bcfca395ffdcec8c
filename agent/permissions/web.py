"""WebFetch's permissions: ``WebFetch(domain:example.com)`` rules, and a fetch asks by default.

A specifier ``domain:example.com`` matches that host exactly (any case, a
trailing dot ignored); ``domain:*.example.com`` matches its subdomains, not
the bare domain. A whole-tool ``WebFetch`` rule matches every URL. Deny beats
bypassPermissions mode, which beats ask, which beats allow; with no rule a
fetch asks, in every mode. WebFetch follows redirects only within one host
(tools/web_page.py), so the host checked here is the host fetched.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from agent.permissions.rules import Decision, Rule, RulesInForce

TOOL = "WebFetch"
DOMAIN_PREFIX = "domain:"


def fetch_host(tool_input: dict[str, Any]) -> str | None:
    """The host a WebFetch call would fetch from, lowercased; None when the URL has none."""
    try:
        host = urlsplit(str(tool_input.get("url") or "").strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def domain_matches(specifier: str, host: str | None) -> bool:
    """Whether a ``domain:...`` specifier covers ``host``."""
    if host is None or not specifier.startswith(DOMAIN_PREFIX):
        return False
    domain = specifier[len(DOMAIN_PREFIX) :].strip().rstrip(".").lower()
    if domain.startswith("*."):
        return host.endswith(domain[1:]) and host != domain[2:]
    return bool(domain) and host == domain


def matching_web_rule(rules: list[Rule], host: str | None) -> Rule | None:
    for rule in rules:
        if rule.tool != TOOL:
            continue
        if rule.specifier is None or domain_matches(rule.specifier, host):
            return rule
    return None


def check_web_fetch(gate: RulesInForce, tool_input: dict[str, Any]) -> Decision:
    host = fetch_host(tool_input)
    if rule := matching_web_rule(gate.deny, host):
        return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
    if gate.mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode allows every tool")
    if rule := matching_web_rule(gate.ask, host):
        return Decision("ask", f"the ask rule {rule.describe()} requires approval", rule)
    if rule := matching_web_rule(gate.allow, host):
        return Decision("allow", f"allowed by the rule {rule.describe()}", rule)
    where = f" from {host}" if host else ""
    return Decision("ask", f"fetching{where} needs the user's approval")


def suggest_web_rule(tool_input: dict[str, Any]) -> Rule:
    """What "always allow" saves for a fetch: its domain (the whole tool when there is none)."""
    host = fetch_host(tool_input)
    return Rule(TOOL, f"{DOMAIN_PREFIX}{host}" if host else None, "session")
