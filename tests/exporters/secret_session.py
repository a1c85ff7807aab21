"""A crafted Claude Code session with secrets planted where agents leak them: the user's prompt,
a tool's output (``cat .env``), a file's content (a Write), an environment dump (``env``), a
private key, and a header; and the ways an export could still carry one (base64, JSON escapes,
gzip, Parquet), so a test can look for every secret in every byte an export writes."""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import orjson

# Built from parts so that this file itself holds no string a scanner would flag as a secret.
_A = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
SECRETS = {
    "anthropic": "sk-" + "ant-api03-" + _A[:40],
    "openai": "sk-" + "proj-" + _A[5:45],
    "github": "gh" + "p_" + _A[:36],
    "github-pat": "github" + "_pat_" + "11ABCDEFG0" + _A[:30],
    "aws-id": "AK" + "IA" + "QWERTYUIOP123456",
    "aws-secret": "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq8Kd7Hw3m",
    "slack": "xo" + "xb-" + "123456789012-" + _A[:24],
    "google": "AI" + "za" + "SyD" + _A[:32],
    "bearer": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiI5ODc2In0." + "Qm9vX3p8r2t5Lk",
    "db-password": "Tr0ub4dor&3xplicit",
    "session-secret": "f3a9c2e17b5d4086a1e9c3b7",
    "pem-body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + _A[:20],
}
PEM = "-----BEGIN PRIVATE KEY-----\n" + SECRETS["pem-body"] + "\nq8Kd7Hw3mZv0=\n-----END PRIVATE KEY-----\n"
DOTENV = (
    f"ANTHROPIC_API_KEY={SECRETS['anthropic']}\nGITHUB_TOKEN={SECRETS['github']}\n"
    f"AWS_ACCESS_KEY_ID={SECRETS['aws-id']}\nAWS_SECRET_ACCESS_KEY={SECRETS['aws-secret']}\n"
    f"DB_PASSWORD={SECRETS['db-password']}\nMAX_TOKENS=4096\n"
)
ENV_DUMP = (
    f"HOME=/home/dev\nOPENAI_API_KEY={SECRETS['openai']}\nSLACK_BOT_TOKEN={SECRETS['slack']}\n"
    f"GH_PAT={SECRETS['github-pat']}\nPATH=/usr/bin:/bin\n"
)


def _line(kind: str, uuid: str, parent: str | None, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/tmp/demo",
        "sessionId": "5ec7e75e-0000-4000-8000-000000000001",
        "version": "2.1.14",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": f"2026-01-21T06:20:{30 + int(uuid[-2:]):02d}.000Z",
        **extra,
    }


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    msg = {
        "model": "claude-opus-4-5-20251101",
        "id": f"msg_{n:02d}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": f"toolu_{n:02d}", "name": name, "input": args}],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return _line("assistant", f"u-{n:02d}", f"u-{n - 1:02d}", msg)


def _result(n: int, content: str, **extra: Any) -> dict[str, Any]:
    msg = {
        "role": "user",
        "content": [{"tool_use_id": f"toolu_{n - 1:02d}", "type": "tool_result", "content": content}],
    }
    return _line("user", f"u-{n:02d}", f"u-{n - 1:02d}", msg, **extra)


def write_session(folder: Path, edits: int = 0) -> Path:
    """The crafted session's file (``edits`` more Edit calls make a long one)."""
    prompt = (
        f"Deploy with my key {SECRETS['anthropic']} and use header "
        f"'Authorization: Bearer {SECRETS['bearer']}'. The google key is {SECRETS['google']}."
    )
    hidden = SECRETS["session-secret"]
    config = f'SESSION_SECRET = "{hidden}"\nconfig = {{"api_key": "{hidden}9Z"}}\n'
    records = [
        _line("user", "u-00", None, {"role": "user", "content": prompt}),
        _call(1, "Bash", {"command": "cat .env", "description": "read the settings"}),
        _result(2, DOTENV),
        _call(3, "Write", {"file_path": "/tmp/demo/settings.py", "content": config + PEM}),
        _result(
            4,
            "File created successfully at: /tmp/demo/settings.py",
            toolUseResult={"type": "create", "filePath": "/tmp/demo/settings.py", "content": config + PEM},
        ),
        _call(
            5,
            "Bash",
            {
                "command": f"env; curl -H 'Authorization: Bearer {SECRETS['bearer']}' https://api.example.com/v1/me"
            },
        ),
        _result(6, ENV_DUMP),
    ]
    for k in range(edits):
        n = 7 + 2 * k
        records.append(
            _call(
                n,
                "Edit",
                {
                    "file_path": f"/tmp/demo/src/m{k}.py",
                    "old_string": f"x = {k}\n",
                    "new_string": f"x = {k + 1}\ny = {k}\n",
                },
            )
        )
        records.append(_result(n + 1, f"The file /tmp/demo/src/m{k}.py has been updated."))
    for r in records[7:]:
        r["timestamp"] = "2026-01-21T06:21:00.000Z"
    path = folder / "5ec7e75e-0000-4000-8000-000000000001.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _strings(data: bytes) -> list[bytes]:
    """``data`` and what it may hide a secret in: gzip streams, zip members, base64 runs."""
    out = [data]
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                out += [z.read(m) for m in z.namelist()]
        except (zipfile.BadZipFile, zlib.error):
            pass
    for magic in (b"\x1f\x8b",):
        at = data.find(magic)
        while at >= 0:
            try:
                out.append(gzip.GzipFile(fileobj=io.BytesIO(data[at:])).read())
            except (OSError, EOFError, zlib.error):
                pass
            at = data.find(magic, at + 1)
    for run in re.findall(rb"[A-Za-z0-9+/_\-]{40,}={0,2}", data):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                out.append(decode(run + b"=" * (-len(run) % 4)))
            except ValueError:
                pass
    return out


def leaks(data: bytes, depth: int = 4) -> list[str]:
    """The planted secrets found anywhere in ``data``, decoded or not (base64 within base64,
    gzip, zip members, JSON and HTML escapes)."""
    found: set[str] = set()
    todo, seen = [data], 0
    for _ in range(depth):
        nxt: list[bytes] = []
        for blob in todo:
            for s in _strings(blob):
                seen += 1
                text = s.decode("utf-8", "replace")
                variants = [text, text.replace("\\/", "/"), text.replace("&amp;", "&")]
                try:
                    variants.append(json.loads(f'"{text}"') if '"' not in text else text)
                except ValueError:
                    pass
                for name, secret in SECRETS.items():
                    if any(secret in v or json.dumps(secret)[1:-1] in v for v in variants):
                        found.add(name)
                if s is not blob:
                    nxt.append(s)
        todo = nxt
    return sorted(found)
