"""The secrets every export hides by default, as redaction rules of the bundle's own kind.

Each detector is a ``re:``-style :class:`~.redact.Rule` named ``secret:<what>``, so a default
redaction is signed, listed and provable exactly like a ``--redact`` one. Where a secret sits in
a context (``AWS_SECRET_ACCESS_KEY=…``, ``Authorization: Bearer …``, ``.env`` lines) only the
value (the ``v`` group) is replaced, and the name stays readable. The ``hint`` of each rule is
words the raw line must hold (in lower case), so a line that cannot hold a secret is never parsed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .redact import Rule, parse_rule

SECRET_WORDS = r"(?:api_?key|key|token|secret|password|passwd|pass|pwd|credentials?|auth|dsn|private_key)"
"""A name segment that says its value is a secret (``GITHUB_TOKEN``, ``db_password``)."""
_SECRET_NAME = re.compile(rf"(?i)(?:^|[_.\-]){SECRET_WORDS}(?:$|[_.\-])")
SECRET = "secret:"
"""The prefix of the default rules' names (as recorded with each redaction)."""
ENTROPY_BITS = 3.5
"""Shannon bits per character above which a value in a ``KEY=`` context reads as random."""


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _named_secret(m: re.Match[str]) -> bool:
    """A ``NAME=value`` whose name has a secret word as a segment and whose value is not a number,
    a reference (``$X``, ``${X}``) or an obvious placeholder."""
    value = m.group("v").strip("\"'")
    return (
        bool(_SECRET_NAME.search(m.group("n")))
        and not value.isdigit()
        and not value.startswith(("$", "<", "%", "[redacted"))
        and not _PLACEHOLDER.fullmatch(value)
        and len(set(value)) > 2
    )


_PLACEHOLDER = re.compile(
    r"(?i)true|false|none|null|changeme|redacted|x+|\*+|[A-Z][A-Z0-9_]*|[a-z]+(?:[_\-][a-z]+)+"
)
"""Values that are not secrets: booleans, masks, a reference to another name (``API_KEY``), words
joined by ``_`` or ``-`` (``your_token_here``)."""


def _random(m: re.Match[str]) -> bool:
    """A value that looks random: long, high entropy, letters and digits mixed."""
    v = m.group("v")
    return entropy(v) >= ENTROPY_BITS and any(c.isdigit() for c in v) and any(c.isalpha() for c in v)


WORDS = (b"key", b"token", b"secret", b"pass", b"pwd", b"credential", b"auth", b"dsn")
"""What a line holds (in lower case) if a name in it may say a secret follows."""


_NAMES = rb"(?:key|token|secret|pass|pwd|credential|auth|dsn)"
NEAR_ASSIGNMENT = re.compile(_NAMES + rb"[a-z0-9_]*=")
"""A name with such a word assigned (``GITHUB_TOKEN=``)."""
NEAR_KEY = re.compile(_NAMES + rb"(?:\\?[\"'])?\s*[:=]")
"""Such a word followed by ``=`` or ``:`` (raw JSON escapes its quotes)."""


def _rule(
    name: str, pattern: str, hint: tuple[bytes, ...], check: Any = None, near: re.Pattern[bytes] | None = None
) -> Rule:
    return Rule(
        SECRET + name,
        "regex",
        pattern=re.compile(pattern),
        hint=hint,
        near=near,
        check=check,
    )


_VALUE = r"[^\s\"'\\`,;]"
"""One character of an unquoted value (never a quote or backslash: a match inside JSON-escaped
text never cuts an escape, so a pretty-printed JSON document stays JSON)."""

SECRET_RULES: tuple[Rule, ...] = (
    _rule(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[^\"-]|-(?!----END))*"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
        (b"private key",),
    ),
    _rule("anthropic", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", (b"sk-ant-",)),
    _rule("openai", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", (b"sk-",)),
    _rule(
        "github",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"),
    ),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", (b"akia", b"asia")),
    _rule(
        "aws-secret-key",
        r"(?i)aws_?secret_?(?:access_?)?key\W{0,4}(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        (b"secret",),
    ),
    _rule("slack", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", (b"xox",)),
    _rule("google", r"\bAIza[0-9A-Za-z_\-]{35,}", (b"aiza",)),
    _rule(
        "bearer",
        r"(?i)\b(?:bearer|token)\s+(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)",
        (b"bearer", b"token"),
        _random,
        re.compile(rb"(?:bearer|token)\s"),
    ),
    _rule(
        "env-assignment",
        rf"(?<![A-Za-z0-9_])(?P<n>[A-Z][A-Z0-9_]*)=(?P<v>\"[^\"\\\n]{{6,}}\"|'[^'\\\n]{{6,}}'|{_VALUE}{{6,}})",
        WORDS,
        _named_secret,
        NEAR_ASSIGNMENT,
    ),
    _rule(
        "key-context",
        rf"(?i)(?P<n>{SECRET_WORDS})[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9+/=_\-.~]{{16,}})",
        WORDS,
        _random,
        NEAR_KEY,
    ),
)
"""What ``walkback export`` hides unless ``--no-default-redaction`` is given."""


def redaction_rules(given: Iterable[str] = (), *, default: bool = True) -> list[Rule]:
    """The rules of an export: the user's ``--redact`` rules, then (unless ``default`` is off) the
    secret detectors.

    Raises:
        ExportError: a ``--redact`` rule that does not parse.
    """
    return [parse_rule(r) for r in given] + (list(SECRET_RULES) if default else [])


def rules_of(options: dict[str, Any]) -> list[Rule]:
    """The rules an exporter's options ask for (``redact``, ``no_default_redaction``)."""
    return redaction_rules(options.get("redact") or (), default=not options.get("no_default_redaction"))


def counts(redactions: Iterable[dict[str, Any]]) -> Counter[str]:
    """How many redacted lines each rule touched (a bundle's ``predicate.redactions``)."""
    return Counter(rule for r in redactions for rule in r.get("rules", ()))


def report(redactions: list[dict[str, Any]]) -> str:
    """The one-line redaction report ``walkback export`` prints on stderr."""
    by_rule = counts(redactions)
    if not by_rule:
        return "redacted: nothing matched"
    lines = len(redactions)
    parts = ", ".join(f"{rule} {n}" for rule, n in sorted(by_rule.items()))
    return f"redacted {lines} line{'s' if lines != 1 else ''}: {parts}"
