"""The OS sandbox for Bash commands: policy, backends (bubblewrap, Landlock), protected paths."""

from tools.sandbox.policy import SandboxPolicy
from tools.sandbox.sandbox import Launch, Sandbox, choose_backend, protected_note

__all__ = ["Launch", "Sandbox", "SandboxPolicy", "choose_backend", "protected_note"]
