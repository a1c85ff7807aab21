"""Every export hides secrets by default: planted in a session's prompt, tool outputs, a file's
content and an environment dump, none is in any byte an export writes (decoded or not), the
redaction report is on stderr, a signed bundle still verifies, and ``--no-default-redaction``
keeps them (so the search below can find what it looks for)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from secret_session import DOTENV, ENV_DUMP, SECRETS, leaks, write_session
from walkback.exporters.bundle.redact import redact_line
from walkback.exporters.bundle.secrets import SECRET_RULES, entropy

from walkback.cli import cli

FORMATS = {
    "bundle": "b.json",
    "pdf": "r.pdf",
    "otlp": "t.json",
    "csv": "e.csv",
    "parquet": "e.parquet",
    "html": "r.html",
    "markdown": "s.md",
}


def export(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["export", *map(str, args)], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_session(tmp_path_factory.mktemp("secrets"))


def test_the_crafted_session_carries_every_secret(session: Path) -> None:
    assert leaks(session.read_bytes()) == sorted(SECRETS)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_export_carries_no_secret_and_reports_what_it_hid(fmt: str, session: Path, tmp_path: Path) -> None:
    out = tmp_path / FORMATS[fmt]
    code, _, err = export(fmt, session, "-o", out)
    assert code == 0, err
    assert leaks(out.read_bytes()) == []
    assert (
        "redacted 6 lines:" in err
        and "secret:anthropic 2, secret:aws-access-key 1" in err
        and "secret:github 2" in err
    )


INSPECT = (
    Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inspect" / "log_message_deduplication.eval"
)


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Inspect ``.eval`` (a zip) whose sample's prompt carries a ``.env`` and an env dump."""
    if not INSPECT.exists():
        pytest.skip("the corpus is not beside the project")
    out = tmp_path_factory.mktemp("inspect") / "leaky.eval"
    with zipfile.ZipFile(INSPECT) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("samples/"):
                doc = json.loads(data)
                doc["messages"][0]["content"] += "\n" + DOTENV + ENV_DUMP
                data = json.dumps(doc, indent=2).encode()
            dst.writestr(info, data, compress_type=info.compress_type)
    assert set(leaks(out.read_bytes())) >= {"anthropic", "github", "aws-id", "openai", "slack"}
    return out


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_archive_source_is_redacted_inside(fmt: str, inspect_log: Path, tmp_path: Path) -> None:
    out = tmp_path / FORMATS[fmt]
    code, _, err = export(fmt, inspect_log, "-o", out)
    assert code == 0, err
    assert leaks(out.read_bytes()) == []
    assert "redacted " in err and "secret:anthropic" in err


def test_a_redacted_archive_still_verifies_and_reads_the_same(inspect_log: Path, tmp_path: Path) -> None:
    r = CliRunner()
    r.invoke(cli, ["keygen", "-o", str(tmp_path / "k")], catch_exceptions=False)
    code, _, err = export("bundle", inspect_log, "-o", tmp_path / "b.json", "--key", tmp_path / "k")
    assert code == 0, err
    ok = r.invoke(cli, ["verify", str(tmp_path / "b.json"), "--key", str(tmp_path / "k.pub"), "--json"])
    assert ok.exit_code == 0, ok.stdout
    found = orjson.loads(ok.stdout)["redactions"]
    assert found and all(x["source"].startswith("leaky.eval!samples/") for x in found)
    said = r.invoke(cli, ["verify", str(tmp_path / "b.json"), "--key", str(tmp_path / "k.pub")]).stdout
    assert "inside rewritten archives: original leaves listed, not in the tree" in said
    assert "in the signed tree" not in said  # no line of this bundle has its original leaf in the tree
    shown = [r.invoke(cli, ["show", str(p), "--json"]) for p in (inspect_log, tmp_path / "b.json")]
    assert [orjson.loads(s.stdout)["events"] for s in shown] == [orjson.loads(shown[0].stdout)["events"]] * 2


def test_opting_out_keeps_the_secrets(session: Path, tmp_path: Path) -> None:
    code, _, err = export("bundle", session, "-o", tmp_path / "b.json", "--no-default-redaction")
    assert code == 0 and "redacted" not in err
    assert leaks((tmp_path / "b.json").read_bytes()) == sorted(SECRETS)
    code, _, _ = export("csv", session, "-o", tmp_path / "e.csv", "--no-default-redaction")
    assert code == 0 and leaks((tmp_path / "e.csv").read_bytes()) == ["bearer"]  # the command


def test_a_redacted_bundle_verifies_and_lists_each_redaction(session: Path, tmp_path: Path) -> None:
    r = CliRunner()
    r.invoke(cli, ["keygen", "-o", str(tmp_path / "k")], catch_exceptions=False)
    code, _, err = export(
        "bundle", session, "-o", tmp_path / "b.json", "--key", tmp_path / "k", "--redact", "re:Deploy"
    )
    assert code == 0, err
    ok = r.invoke(cli, ["verify", str(tmp_path / "b.json"), "--key", str(tmp_path / "k.pub"), "--json"])
    assert ok.exit_code == 0, ok.stdout
    found = orjson.loads(ok.stdout)["redactions"]
    assert [x["line"] for x in found] == [1, 3, 4, 5, 6, 7]
    assert "re:Deploy" in found[0]["rules"] and "secret:bearer" in found[0]["rules"]
    assert {"secret:aws-secret-key", "secret:env-assignment"} <= set(found[1]["rules"])


def test_the_report_lists_what_was_redacted(session: Path, tmp_path: Path) -> None:
    from pypdf import PdfReader

    code, _, err = export("pdf", session, "-o", tmp_path / "r.pdf")
    assert code == 0, err
    text = "".join(p.extract_text() for p in PdfReader(tmp_path / "r.pdf").pages)
    section = "".join(text[text.index("are carried redacted.") :].split())  # table cells wrap
    assert "secret:private-key" in section and "secret:env-assignment" in section
    assert "inside an archive" not in text  # no archive among these sources


def test_the_report_says_what_an_archive_redaction_proves(inspect_log: Path, tmp_path: Path) -> None:
    from pypdf import PdfReader

    code, _, err = export("pdf", inspect_log, "-o", tmp_path / "r.pdf")
    assert code == 0, err
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(tmp_path / "r.pdf").pages).split())
    assert "inside an archive's members" in text and "check it, not prove it" in text


@pytest.mark.parametrize(
    "text",
    [
        "MAX_TOKENS=4096",
        "TOKENIZERS_PARALLELISM=false",
        "AUTHOR_NAME=someone",
        "api_key=API_KEY",
        "DISCORD_BOT_TOKEN=your_bot_token_here",
        "the token generation is slow",
        "pre sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_what_is_not_a_secret_stays(text: str) -> None:
    line = orjson.dumps({"type": "x", "out": text})
    assert redact_line(line, list(SECRET_RULES), "[R]", None) == (line, [])


def test_only_the_value_of_a_named_secret_is_hidden() -> None:
    line = orjson.dumps({"out": f"export DB_PASSWORD='{SECRETS['db-password']}' # prod"})
    new, hits = redact_line(line, list(SECRET_RULES), "[R]", None)
    assert orjson.loads(new)["out"] == "export DB_PASSWORD=[R] # prod" and hits == ["secret:env-assignment"]
    assert entropy("aaaa") == 0 and entropy("abcd") == 2
