"""Page logic with NiceGUI's simulated user: deep links, keys, filters, panels, live follow."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from nicegui.testing import User, UserInteraction
from sample_runs import build_run, grow
from walkback.viewer.store import entry_id

from walkback import importers

STEP = re.compile(r'history\.(pushState|replaceState)\(\{\}, "", "([^"]*)"\);')


def record_urls(user: User) -> list[tuple[str, str]]:
    """The history entries the page pushes/replaces from now on (call after ``user.open``).

    Taps the client's outbox like NiceGUI's own ``User`` does; the browser tests check the real URL bar.
    """
    seen: list[tuple[str, str]] = []
    original = user.client.outbox._emit  # type: ignore[union-attr]

    async def emit(message) -> None:  # type: ignore[no-untyped-def]
        await original(message)
        _, kind, data = message
        m = STEP.match(data.get("code", "")) if kind == "run_javascript" else None
        if m:
            seen.append((m.group(1), m.group(2)))

    user.client.outbox._emit = emit  # type: ignore[union-attr]
    return seen


def key(user: User, name: str, repeat: bool = False) -> None:
    UserInteraction(user, {user.client.layout}, None).trigger("wb_key", {"key": name, "repeat": repeat})


def rows(user: User) -> list[dict]:
    """The step rows of the list (a crash is a row of its own, not a step)."""
    return [r for r in all_rows(user) if not r.get("crash")]


def all_rows(user: User) -> list[dict]:
    return user.find(marker="step-list").elements.pop().rows


def card(user: User) -> dict:
    """What the step card shows (its texts; the browser tests check how it renders)."""
    return user.find(marker="step-detail").elements.pop().props["card"]


def current(user: User) -> int:
    return int(card(user)["title"].split()[1])


async def test_session_list_shows_every_run_and_opens_one(viewer, tmp_path: Path) -> None:
    a = build_run(tmp_path, name="run-a", recovered=True, torn=True)
    build_run(tmp_path, name="run-b", crashed=False)
    async with viewer([tmp_path]) as user:
        await user.open("/")
        await user.should_see("2 sessions")
        table = user.find(marker="session-list").elements.pop()
        by_source = {Path(r["source"]).name: r for r in table.rows}
        assert by_source["run-a"]["status"] == "crashed (recovered)"
        # 26 records and the torn line, shown as a placeholder row with its reason
        assert by_source["run-a"]["integrity"] == "torn tail" and by_source["run-a"]["events"] == 27
        assert by_source["run-b"]["status"] == "completed" and by_source["run-b"]["integrity"] == "chain ok"
        user.find(marker="session-list").trigger("rowClick", [{}, {"id": entry_id(a.dir)}, 0])
        await user.should_see("Step 1")
        await user.should_see(marker="timeline")


async def test_deep_link_shows_the_intent_commit_pair_and_verification(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/{sample.lsn['create'] + 1}")
        urls = record_urls(user)
        assert current(user) == sample.lsn["create"] + 1
        await user.should_see("intent → commit")
        await user.should_see(content="post hash verified · check `python -m py_compile app.py` exit 0 ✓")
        assert card(user)["pair"]["links"] == [[f"step {sample.lsn['create_commit'] + 1}", 0]]
        await user.should_see(content=f"Raw record — {sample.journal}:{sample.lsn['create'] + 1}")
        user.find(marker="step-detail").trigger("go", 0)  # the card's link (clicked in test_viewer_browser)
        assert current(user) == sample.lsn["create_commit"] + 1
        await user.should_see("answers intent")
        await asyncio.sleep(0.25)  # the outbox flushes every 0.1 s
        assert urls[-1] == ("pushState", f"/s/{sid}/step/{sample.lsn['create_commit'] + 1}")


async def test_bad_and_out_of_range_step_links(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/99999")
        assert current(user) == 27  # the last step: the torn line's placeholder
        await user.open(f"/s/{sid}/step/abc")
        assert current(user) == 1
        await user.open("/s/000000000000")
        await user.should_see("no such session in this viewer")


async def test_keyboard_steps_plays_and_records_history(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/3")
        urls = record_urls(user)
        key(user, "j")
        await asyncio.sleep(0.25)
        assert current(user) == 4 and urls[-1] == ("pushState", f"/s/{sid}/step/4")
        key(user, "ArrowRight")
        key(user, "k")
        key(user, "ArrowLeft")
        assert current(user) == 3
        key(user, "j", repeat=True)
        await asyncio.sleep(0.25)
        assert current(user) == 4 and urls[-1][0] == "replaceState"  # held keys do not flood history
        key(user, "End")
        assert current(user) == 27
        key(user, "Home")
        assert current(user) == 1
        key(user, " ")  # space plays, 1 step per second
        await asyncio.sleep(2.3)
        key(user, " ")
        await asyncio.sleep(0.25)
        assert 2 <= current(user) <= 4
        assert urls[-1][0] == "replaceState"


async def test_popstate_restores_the_step_and_filters_without_pushing(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/2")
        urls = record_urls(user)
        n = len(urls)
        UserInteraction(user, {user.client.layout}, None).trigger(
            "wb_popstate", f"/s/{sid}/step/14?problems=1"
        )
        await asyncio.sleep(0.25)
        assert current(user) == 14
        assert user.find(marker="filters").elements.pop().props["problems"] is True  # the toggle shows it
        assert all(r["problem"] for r in rows(user))
        assert all(kind != "pushState" for kind, _ in urls[n:])


async def test_problems_only_and_text_search_filter_the_list(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/1")
        urls = record_urls(user)
        assert len(rows(user)) == 27
        filters = user.find(marker="filters")  # the browser's toggle and search box send these
        filters.trigger("problems", True)
        await asyncio.sleep(0.25)
        shown = rows(user)
        assert shown and all(r["problem"] for r in shown) and len(shown) < 27
        assert {r["status"] for r in shown} >= {"failed", "denied", "recovered"}
        assert current(user) == shown[0]["step"]  # moved to the first problem
        assert urls[-1][1].endswith("?problems=1")
        key(user, "j")
        assert current(user) == shown[1]["step"]  # stepping stays inside the filter
        filters.trigger("problems", False)
        filters.trigger("text", "rename the function")
        await asyncio.sleep(0.3)
        assert [r["kind"] for r in rows(user)] == ["model result"]
        await user.should_see(content="1 match")


async def test_file_change_panel_diff_and_badges(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir], workspace=sample.workspace) as user:
        await user.open(f"/s/{sid}/step/{sample.lsn['rename'] + 1}")
        with user.scope(marker="file-change"):
            await user.should_see(content="-def get_user_by_id(uid):")
            await user.should_see(content="+def fetch_user(uid):")
            await user.should_see(f"pre = post of step {sample.lsn['create'] + 1}")
            await user.should_see("post blob matches hash")
            await user.should_see("workspace now = post")
            user.find(marker="diff-mode").elements.pop().set_value("split")
            await user.should_see(content="def fetch_user(uid):")
            await user.should_not_see(content="+def fetch_user(uid):")
        key(user, "j")  # the commit shows its intent's change
        await user.should_see(marker="file-change")
        await user.should_see("answers intent")


async def test_tabs_agents_files_approvals_recovery(viewer, sample) -> None:
    sid = entry_id(sample.dir)
    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/1")
        user.find(marker="detail-tabs").trigger("change", "agents")
        names = {e.text for e in user.find(marker="agent-name").elements}
        assert names == {"main", "helper"}
        await user.should_see(content="spawned at step")
        session = importers.load(sample.dir)
        pending = session.index_of_lsn(sample.lsn["pending"])
        await user.should_see(content=f"crashed at step {pending + 1}")
        await user.should_see(content=f"recovered at step {pending + 2}")
        user.find(marker="detail-tabs").trigger("change", "approvals")
        table = user.find(marker="approvals-table").elements.pop()
        decided = [(r["decision"], r["approver"]) for r in table.rows]
        assert decided == [("approved", "alice"), ("denied", "bob")]
        assert table.rows[0]["gated"] == sample.lsn["rename"] + 1
        user.find(marker="approvals-table").trigger("rowClick", [{}, {"step": table.rows[1]["step"]}, 1])
        assert current(user) == table.rows[1]["step"]
        user.find(marker="detail-tabs").trigger("change", "files")
        files = user.find(marker="files-table").elements.pop()
        assert {r["path"]: r["changes"] for r in files.rows}["src/app.py"] == 2
        user.find(marker="files-table").trigger("rowClick", [{}, {"path": "src/app.py"}, 0])
        await user.should_see(marker="filter-to-file")
        user.find(marker="filter-to-file").click()
        await asyncio.sleep(0.3)
        assert {r["what"].split()[-1] for r in rows(user) if r["kind"] == "tool call"} == {"src/app.py"}
        user.find(marker="detail-tabs").trigger("change", "recovery")
        recs = user.find(marker="recovery-records").elements.pop()
        assert [(r["finding"], r["decision"]) for r in recs.rows] == [("was not applied", "ran it again")]
        assert recs.rows[0]["intent"] == pending + 1
        await user.should_see(marker="crash-story")
        await user.should_see(marker="brief")


async def test_recovery_panel_shows_the_analysis_of_a_crashed_run(viewer, tmp_path: Path) -> None:
    run = build_run(tmp_path, crashed=True)
    async with viewer([run.dir]) as user:
        await user.open(f"/s/{entry_id(run.dir)}/step/1")
        user.find(marker="detail-tabs").trigger("change", "recovery")
        await user.should_see(marker="findings")
        findings = user.find(marker="findings").elements.pop().rows
        assert ("write_file docs/notes.md", "main:" + str(run.lsn["pending"]), "ran it again") in {
            (f["what"], f["agent:lsn"], f["decision"]) for f in findings
        }
        await user.should_see(marker="brief")


async def test_jump_to_lsn(viewer, sample) -> None:
    sid = entry_id(sample.dir)

    def shown() -> str:
        return [r for r in rows(user) if r["step"] == current(user)][0]["where"]

    async with viewer([sample.dir]) as user:
        await user.open(f"/s/{sid}/step/1")
        jump = user.find(marker="replay")  # Enter in its jump box sends the text (see test_viewer_browser)
        jump.trigger("jump", "helper:2")
        assert shown() == "helper:2"
        jump.trigger("jump", str(sample.lsn["test"]))
        assert shown() == f"main:{sample.lsn['test']}"
        jump.trigger("jump", "2")  # lsn 2 is in both journals: offer both
        await user.should_see("lsn 2 is in 2 agents:")
        choices = {b.text.split()[0] for b in user.find(marker="lsn-choice").elements}
        assert choices == {"main:2", "helper:2"}
        user.find(marker="lsn-choice", content="helper:2").click()
        assert shown() == "helper:2"
        jump.trigger("jump", "#3")
        assert current(user) == 3
        jump.trigger("jump", "9999")
        await user.should_see("no event with lsn 9999")


async def test_live_follow_shows_new_events_within_a_second(viewer, tmp_path: Path) -> None:
    run = build_run(tmp_path, crashed=True)
    sid = entry_id(run.dir)
    n = len(importers.load(run.dir))
    async with viewer([run.dir]) as user:
        await user.open(f"/s/{sid}/step/1")
        counts = user.find(marker="session-header").elements.pop().props["head"]["counts"]
        assert counts.startswith(f"{n} events")
        grow(run, 4)
        started = time.monotonic()
        while time.monotonic() - started < 3:
            await asyncio.sleep(0.05)
            counts = user.find(marker="session-header").elements.pop().props["head"]["counts"]
            if counts.startswith(f"{n + 4} events"):
                break
        assert counts.startswith(f"{n + 4} events")
        assert time.monotonic() - started < 1.0 + 0.2  # within a second (plus scheduling slack)
        assert current(user) == 1  # the step shown stays put


async def test_blobs_are_served_by_hash_only(viewer, sample) -> None:
    from sample_runs import APP_V2
    from walkback.journal.record import sha256_bytes

    sid = entry_id(sample.dir)
    hexd = sha256_bytes(APP_V2).split(":")[1]
    async with viewer([sample.dir]) as user:
        http = user.http_client
        ok = await http.get(f"/blob/{sid}/{hexd}")
        assert ok.status_code == 200 and ok.content == APP_V2
        assert ok.headers["content-type"] == "application/octet-stream"
        assert "attachment" in ok.headers["content-disposition"]
        for bad in ("..%2F..%2Fjournal.jsonl", "sha256:" + hexd[:-1] + "g", "../../etc/passwd", "0" * 64):
            assert (await http.get(f"/blob/{sid}/{bad}")).status_code == 404
        assert (await http.get(f"/blob/000000000000/{hexd}")).status_code == 404


async def test_every_response_forbids_outbound_requests(viewer, sample) -> None:
    """Pages, static files, framework assets and errors all carry the CSP and its companions."""
    from walkback.viewer.security import SECURE_HEADERS

    async with viewer([sample.dir]) as user:
        http = user.http_client
        page = await http.get(f"/s/{entry_id(sample.dir)}")
        asset = re.search(r'src="(/_nicegui/[^"]+)"', page.text)
        assert asset, "no framework script in the page"
        responses = [
            page,
            await http.get(asset.group(1)),
            await http.get("/static/favicon.svg"),
            await http.get(f"/blob/{entry_id(sample.dir)}/{'0' * 64}"),
            await http.get("/no/such/page"),
        ]
        assert [r.status_code for r in responses] == [200, 200, 200, 404, 404]
        for r in responses:
            for name, value in SECURE_HEADERS:
                assert r.headers.get(name) == value, (r.url, name)


async def test_token_guards_every_page_when_set(viewer, sample) -> None:
    async with viewer([sample.dir], token="s3cret-token") as user:
        http = user.http_client
        assert (await http.get("/")).status_code == 401
        assert (await http.get(f"/blob/{entry_id(sample.dir)}/{'0' * 64}")).status_code == 401
        assert (await http.get("/?token=wrong")).status_code == 401
        r = await http.get("/?token=s3cret-token")
        assert r.status_code == 303 and r.headers["location"] == "/"
        page = await http.get(f"/s/{entry_id(sample.dir)}")  # the cookie now carries it
        assert page.status_code == 200
        assert (
            "Content-Security-Policy" in page.headers
            and "default-src 'self'" in page.headers["Content-Security-Policy"]
        )


SAMPLES = Path(__file__).resolve().parents[2] / "samples"


async def test_every_step_of_every_sample_renders(viewer) -> None:
    """The agent loop's real runs: the list shows them all and each step's detail builds."""
    runs = sorted(p for p in SAMPLES.iterdir() if (p / "journal.jsonl").is_file()) if SAMPLES.is_dir() else []
    if not runs:
        import pytest

        pytest.skip("no samples/ in this checkout")
    async with viewer([SAMPLES]) as user:
        await user.open("/")
        listed = user.find(marker="session-list").elements.pop().rows
        assert {Path(r["source"]).name for r in listed} == {p.name for p in runs}
        for run in runs:
            n = len(importers.load(run))
            await user.open(f"/s/{entry_id(run)}/step/1")
            for step in range(2, n + 1):
                key(user, "j")
                assert current(user) == step
            for tab in ("agents", "files", "approvals", "recovery"):
                user.find(marker="detail-tabs").trigger("change", tab)
                await user.should_see(marker=f"panel-{tab}")


async def test_seed_dialect_without_times_and_a_single_session_redirect(viewer, tmp_path: Path) -> None:
    """The seq dialect has no timestamps and no hashes: the timeline falls back to step numbers."""
    log = tmp_path / "seed.jsonl"
    log.write_text(
        '{"seq":1,"task_id":"t-1","tool":"write_file","args":{"path":"a.txt"},"idempotency_key":"t-1:1"}\n'
        '{"seq":1,"result":"written","status":"ok"}\n'
        '{"seq":2,"task_id":"t-1","tool":"http_post","args":{"url":"https://example.invalid"},"idempotency_key":"t-1:2"}\n'
    )
    async with viewer([log]) as user:
        await user.open("/")  # one session: straight to it
        assert current(user) == 1
        await user.should_see("no hashes")
        fig = user.find(marker="timeline").elements.pop().figure
        assert fig["layout"]["xaxis"]["type"] == "linear"
        key(user, "End")
        assert current(user) == 3
        await user.should_see(content="no commit or failure recorded")


async def test_following_a_running_agent_stays_on_the_newest_step(viewer, tmp_path: Path) -> None:
    from walkback.journal.runlock import RunLock

    run = build_run(tmp_path, crashed=True)
    n = len(importers.load(run.dir))
    with RunLock(run.dir):  # a live agent holds its run's lock: the session is "running"
        async with viewer([run.dir]) as user:
            await user.open(f"/s/{entry_id(run.dir)}/step/{n}")
            await user.should_see("running")
            assert user.find(marker="follow").elements.pop().value is True
            grow(run, 2)
            started = time.monotonic()
            while current(user) != n + 2 and time.monotonic() - started < 3:
                await asyncio.sleep(0.05)
            assert current(user) == n + 2
    # the lock is gone without a run.end: the next poll shows a crash
    async with viewer([run.dir]) as user:
        await user.open(f"/s/{entry_id(run.dir)}/step/1")
        await user.should_see("crashed")


async def test_a_signed_bundle_shows_its_signer_and_where_a_tampered_one_breaks(
    viewer, tmp_path: Path, monkeypatch
) -> None:
    """The header names the signer and the verdict (each check as its hover); a tampered bundle's
    first damaged event carries the badge and the failed check."""
    import base64

    import orjson
    from walkback.exporters.bundle import EXPORTER
    from walkback.exporters.bundle.keys import generate

    key, pub = generate(tmp_path / "key", comment="alice@example.com")
    signers = tmp_path / "allowed_signers"  # the trust store the viewer uses
    signers.write_text(f"alice@example.com {' '.join(pub.read_text().split()[:2])}\n")
    monkeypatch.setenv("WALKBACK_ALLOWED_SIGNERS", str(signers))
    good = EXPORTER.export_source(SAMPLES / "multi-agent", tmp_path / "good.json", key=str(key), redact=[])
    doc = orjson.loads(good.read_bytes())  # tampered the way an attacker would: the file itself
    art = next(a for a in doc["artifacts"] if a["name"] == "journal.jsonl")
    lines = base64.b64decode(art["data"]).split(b"\n")
    lines[6] = lines[6].replace(b'"lsn":6', b'"lsn":7', 1)
    art["data"] = base64.b64encode(b"\n".join(lines)).decode()
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(doc))

    async with viewer([good, bad]) as user:
        await user.open(f"/s/{entry_id(good)}/step/1")
        head = user.find(marker="session-header").elements.pop().props["head"]
        assert head["signed"]["label"] == "signed by alice@example.com · verified"
        assert head["signed"]["color"] == "positive" and "✓ signature" in head["signed"]["checks"]
        assert "✗" not in head["signed"]["checks"]
        assert not card(user)["badge"]

        session = importers.load(bad)
        damage = session.verification.damage  # type: ignore[union-attr]
        assert damage is not None and damage.event is not None
        await user.open(f"/s/{entry_id(bad)}/step/{damage.event + 1}")
        head = user.find(marker="session-header").elements.pop().props["head"]
        assert head["signed"]["label"] == "signed by alice@example.com · verification failed"
        assert head["signed"]["color"] == "negative" and f"✗ {damage.name}" in head["signed"]["checks"]
        assert card(user)["badge"] == "bundle check failed here"
        assert f"{damage.name}: {damage.reason}" in card(user)["damage"]
        await user.open(f"/s/{entry_id(bad)}/step/1")
        assert not card(user)["badge"]
