"""``walkback export csv|parquet``: one row per event, stable documented columns, and a folder of
sessions as one Parquet dataset that DuckDB queries as a whole."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from walkback.exporters import exporter
from walkback.exporters.tables.columns import COLUMNS, rows
from walkback.importers import extend, load
from walkback.journal.testing import synth_journal
from walkback.journal.writer import JournalWriter
from walkback.timeline.details import ModelResult
from walkback.timeline.facts import measures
from walkback.timeline.session import Session
from walkback.timeline.views import file_change

from walkback.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
DOC = (ROOT / "docs" / "exports.md").read_text()


@pytest.fixture(scope="module")
def multi() -> Session:
    return load(SAMPLES / "multi-agent", measure=True)


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Session:
    path = tmp_path_factory.mktemp("synth") / "journal.jsonl"
    synth_journal(path, 301)
    return load(path, measure=True)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sessions of three shapes: a multi-agent run, a crashed run (pending intents), a synthetic one."""
    root = tmp_path_factory.mktemp("sessions")
    for name in ("multi-agent", "rename-crashed", "rename-clean"):
        shutil.copytree(SAMPLES / name, root / name)
    (root / "synth").mkdir()
    synth_journal(root / "synth" / "journal.jsonl", 301)
    return root


def export(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["export", *args])
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def test_the_columns_are_the_documented_ones_in_order(multi: Session) -> None:
    documented = re.findall(r"^\| `([a-z_]+)` \|", DOC.split("## CSV and Parquet")[1].split("\n## ")[0], re.M)
    assert tuple(documented) == COLUMNS
    assert tuple(rows(multi).columns) == COLUMNS


def test_one_row_per_event_with_agents_order_and_provenance(multi: Session) -> None:
    df = rows(multi)
    assert len(df) == len(multi)
    assert df["kind"].value_counts()[lambda c: c > 0].to_dict() == multi.kinds()
    assert (df["order"].to_numpy() == np.arange(len(df))).all()
    assert set(df["session"]) == {multi.runs[0]} and set(df["source_format"]) == {"walkback"}
    parents = df.drop_duplicates("agent").set_index("agent")["parent_agent"]
    assert parents.isna()["main"] and set(parents.drop("main")) == {"main"}
    for i in (0, 7, len(df) - 1):  # each row leads back to its exact record
        ev = multi.event(i)
        line = Path(df["source_file"][i]).read_bytes().splitlines()[df["source_line"][i] - 1]
        assert line.startswith(b'{"v":1,"lsn":%d,' % ev.lsn) and df["lsn"][i] == ev.lsn


def test_file_hashes_only_on_file_changing_calls(multi: Session) -> None:
    df = rows(multi)
    changes = {i: file_change(multi, i) for i in range(len(multi))}
    changes = {i: fc for i, fc in changes.items() if fc is not None}
    assert changes and set(df.index[df["file_pre"].notna()]) == set(changes)
    for i, fc in changes.items():
        assert df["file_pre"][i] == fc.edit.pre and df["target"][i] == fc.path
    assert df.loc[df["kind"] != "tool_call", ["file_pre", "file_post"]].isna().all().all()


def test_model_and_tokens_come_from_model_results(synth: Session) -> None:
    df = rows(synth)
    results = [i for i in range(len(synth)) if synth.event(i).kind == "model_result"]
    usage = [d.usage for i in results if isinstance(d := synth.detail(i), ModelResult)]
    assert len(usage) == len(results) == 100
    assert df["input_tokens"].sum() == sum(u.input_tokens or 0 for u in usage)
    assert df["output_tokens"].sum() == sum(u.output_tokens or 0 for u in usage)
    assert set(df.loc[results, "model"]) == {"scripted"} and df["model"].notna().sum() == 100
    assert df["input_tokens"].isna().sum() == len(df) - 100


def _measured(session: Session) -> list[tuple[int, str, int, int, str | None, str | None]]:
    m = measures(session)
    names, hashes = session.table.pool.values, m.hashes.values
    return list(
        zip(
            m.index,
            [names[k] for k in m.model],
            m.input,
            m.output,
            [hashes[k] for k in m.pre],
            [hashes[k] for k in m.post],
            strict=True,
        )
    )


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir()) + ["synth"])
def test_the_measures_a_journal_records_are_what_its_details_say(
    name: str, synth: Session, tmp_path: Path
) -> None:
    """The journal importer records models, tokens and hashes as it reads; measuring the same
    session's details (what an export does for other importers) gives the same, row for row."""
    read = synth if name == "synth" else load(SAMPLES / name, measure=True)
    assert read.measures is not None
    unmeasured = read.copy()
    unmeasured.measures = None
    assert _measured(read) == _measured(unmeasured)
    if name in ("multi-agent", "synth"):
        assert any(pre for *_, pre, _ in _measured(read))
    if name == "synth":
        assert sum(1 for _, model, *_ in _measured(read) if model == "scripted") == 100


def test_token_counts_no_count_can_be_are_null(tmp_path: Path) -> None:
    """A model writes the log: a negative token count, or one past 63 bits, is null in the table."""
    with JournalWriter.create(tmp_path / "run", task="t") as w:
        w.append("model.result", model="m", usage={"input_tokens": -5, "output_tokens": 2**63 + 5})
        w.append("model.result", model="m", usage={"input_tokens": 7, "output_tokens": True})
    s = load(tmp_path / "run", measure=True)
    df = rows(s)
    at = np.flatnonzero(df["kind"] == "model_result")
    assert len(at) == 2 and list(df["model"][at]) == ["m", "m"]
    assert df["input_tokens"][at].isna().tolist() == [True, False] and df["input_tokens"][at[1]] == 7
    assert df["output_tokens"][at].isna().all()
    unmeasured = s.copy()
    unmeasured.measures = None
    assert _measured(s) == _measured(unmeasured)


def test_a_measured_session_that_grows_is_measured_to_its_end(tmp_path: Path) -> None:
    """A live follow of a measured session measures what was appended, as a read from scratch does."""
    w = JournalWriter.create(tmp_path / "run", task="t", group_interval=0)
    w.append("model.result", model="a", usage={"input_tokens": 3, "output_tokens": 4})
    w.sync()
    first = load(tmp_path / "run", measure=True)
    w.append(
        "intent", tool="write_file", target="f.txt", effect="fs", pre="absent", post="sha256:" + "1" * 64
    )
    w.append("model.call", model="b")
    w.close()
    grown = extend(first)
    assert grown is not None and grown.measures is not None and len(first.measures or ()) == 1
    again = load(tmp_path / "run", measure=True)
    assert _measured(grown) == _measured(again) and len(_measured(grown)) == 3
    assert _measured(grown)[1][4:] == ("absent", "sha256:" + "1" * 64)


def test_parquet_file_keeps_every_column_and_type(multi: Session, tmp_path: Path) -> None:
    out = exporter("parquet").export(multi, tmp_path / "s.parquet")
    table = pq.read_table(out)
    assert table.column_names == list(COLUMNS) and table.num_rows == len(multi)
    types = {f.name: str(f.type) for f in table.schema}
    assert types["time"] == "timestamp[us, tz=UTC]" and types["day"] == "date32[day]"
    assert types["lsn"] == "int64" and types["model"].startswith("dictionary<values=string")
    back = table.to_pandas()
    assert (back["kind"].astype(str) == rows(multi)["kind"].astype(str)).all()


def test_csv_reads_back_with_the_same_rows(multi: Session, tmp_path: Path) -> None:
    out = exporter("csv").export(multi, tmp_path / "s.csv")
    back = pd.read_csv(out)
    assert tuple(back.columns) == COLUMNS and len(back) == len(multi)
    assert back["time"][0].endswith("Z") and back["day"][0] == back["time"][0][:10]
    assert list(back["kind"]) == list(rows(multi)["kind"].astype(str))


def test_a_folder_of_sessions_is_one_dataset_duckdb_queries(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    code, said = export("parquet", str(folder), "-o", str(out))
    assert code == 0, said
    sessions = [
        load(p)
        for p in (
            folder / "multi-agent",
            folder / "rename-crashed",
            folder / "rename-clean",
            folder / "synth",
        )
    ]
    parts = sorted(p.relative_to(out).parts[:2] for p in out.rglob("*.parquet"))
    assert all(f.startswith("source_format=") and d.startswith("day=") for f, d in parts)
    db = duckdb.connect()
    db.execute(
        f"create view events as select * from read_parquet('{out}/**/*.parquet', hive_partitioning=true)"
    )
    kinds: dict[str, int] = {}
    for s in sessions:
        for k, n in s.kinds().items():
            kinds[k] = kinds.get(k, 0) + n
    assert dict(db.execute("select kind, count(*) from events group by kind").fetchall()) == kinds
    calls = dict(
        db.execute(
            "select session || '/' || agent, count(*) from events where kind = 'tool_call' group by all"
        ).fetchall()
    )
    expected = {}
    for s in sessions:
        for i in s.indices_where(kind="tool_call"):
            key = f"{rows(s)['session'][0]}/{s.event(i).agent}"
            expected[key] = expected.get(key, 0) + 1
    assert calls == expected
    unfinished = db.execute(
        "select distinct session from events where kind = 'tool_call' and status = 'pending'"
    ).fetchall()
    assert {u for (u,) in unfinished} == {rows(s)["session"][0] for s in sessions if s.pending()}
    assert unfinished and len(unfinished) < len(sessions)
    days = db.execute("select distinct day, source_format from events").fetchall()
    assert all(day is None or str(day)[:4].isdigit() for day, _ in days)


def test_exporting_a_folder_again_replaces_its_files(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    assert export("parquet", str(folder), "-o", str(out))[0] == 0
    files = sorted(out.rglob("*.parquet"))
    assert export("parquet", str(folder), "-o", str(out))[0] == 0
    assert sorted(out.rglob("*.parquet")) == files
    n = duckdb.connect().execute(f"select count(*) from read_parquet('{out}/**/*.parquet')").fetchall()
    assert n[0][0] == sum(len(load(p)) for p in folder.iterdir())


def test_csv_of_a_folder_has_every_session_under_one_header(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    assert export("csv", str(folder), "-o", str(out))[0] == 0
    back = pd.read_csv(out)
    assert back["session"].nunique() == 4 and len(back) == sum(len(load(p)) for p in folder.iterdir())


def test_bad_input_and_output_are_one_line(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, said = export("parquet", str(folder), "-o", str(tmp_path / "file"))
    assert code == 1 and said.strip().endswith("a Parquet dataset is a folder, and this is a file")
    code, said = export("csv", str(tmp_path / "missing"), "-o", str(tmp_path / "o.csv"))
    assert code == 2 and "no such file or directory" in said and len(said.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    code, said = export("parquet", str(tmp_path / "empty"), "-o", str(tmp_path / "o"))
    assert code == 2 and len(said.strip().splitlines()) == 1
    code, said = export("csv", str(SAMPLES / "multi-agent"), "-o", str(tmp_path / "no" / "o.csv"))
    assert code == 1 and "the output's folder does not exist" in said
