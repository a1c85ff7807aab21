"""The hook command: walkback as the write-ahead journal of an agent someone else wrote.

Claude Code, Codex, Gemini CLI and Copilot CLI run a command before and after each tool call with
a JSON payload on stdin. :mod:`agent.hooks.main` reads it, an adapter (one small module per agent:
:mod:`agent.hooks.claude_code`, ...) maps it to an agent-neutral :class:`~agent.hooks.adapter.Hook`,
and :mod:`agent.hooks.record` journals it: an intent with the pre-image and the expected post hash,
fsynced before the tool runs; a commit with the observed hash after it (docs/hooks.md).

This package imports nothing at load time: each hook call is one short process whose whole run
must cost about one interpreter start.
"""
