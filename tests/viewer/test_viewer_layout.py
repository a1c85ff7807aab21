"""What a person sees, in a real headless Chromium at two window sizes (issue 14), and one session of
each foreign format opened in the viewer (issue 10).

Each test sets the window's inner size, opens a session, and asserts positions (bounding rects
against the window and the pane that scrolls) and the words on the screen; each state is saved as a
screenshot in test-artifacts/viewer/layout-*.png, demo-*.png, damage-*.png, format-*.png.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_steps import press, wait_step
from selenium.webdriver.common.by import By
from viewer_env import ARTIFACTS, ROOT, configure
from walkback.viewer.store import entry_id

from walkback import importers

pytestmark = pytest.mark.browser

SAMPLES = ROOT / "samples"
RECOVERED = SAMPLES / "rename-recovered"
CLEAN = SAMPLES / "rename-clean"
MULTI = SAMPLES / "multi-agent"
CLINE_TASK = ROOT / "tests" / "importers" / "test_cline" / "1733145600000"
"""A Cline task folder written as Cline writes one (there is none in the shared corpus)."""
CORPUS = ROOT.parent / "shared" / "corpus"
WALKBACK = Path(sys.executable).with_name("walkback")
SIZES = [(1440, 900), (800, 600)]
DEFAULT_SIZE = (1500, 1100)
"""The shared driver's size (conftest's --window-size), restored after each test."""

needs_samples = pytest.mark.skipif(
    not (RECOVERED / "journal.jsonl").is_file(), reason="no samples/ in this checkout"
)


# -- helpers ----------------------------------------------------------------------------------


def wait_until(screen, script: str, timeout: float = 5.0) -> Any:
    """Poll a JavaScript expression until it is truthy; return its value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = screen.selenium.execute_script(f"return {script}")
        if value:
            return value
        time.sleep(0.05)
    return value


def settle(screen) -> None:
    """Let the last moves' JavaScript (list scroll, detail scroll, chart relayout) run."""
    time.sleep(0.4)


def shot(screen, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screen.selenium.save_screenshot(str(path))
    return path


VIEWPORT_JS = "return [window.innerWidth, window.innerHeight, window.scrollX, window.scrollY]"

RECT_JS = """
const el = arguments[0];
const r = el.getBoundingClientRect();
return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
"""

CLIP_JS = """
// The part of the window where ``el`` can be seen: intersect the window with every ancestor that
// clips (overflow other than visible), and take away what is drawn over it: a scroller's sticky
// header (a table's thead, the detail's tabs) and the page's fixed top bar, unless el is inside them.
const el = arguments[0];
let top = 0, left = 0, bottom = window.innerHeight, right = window.innerWidth;
const sticky = (h) => [h, h.querySelector('th')].some(x => x && getComputedStyle(x).position === 'sticky');
for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
  const s = getComputedStyle(p);
  if (s.overflowY !== 'visible' || s.overflowX !== 'visible') {
    const r = p.getBoundingClientRect();
    top = Math.max(top, r.top + p.clientTop); left = Math.max(left, r.left);
    bottom = Math.min(bottom, r.top + p.clientTop + p.clientHeight); right = Math.min(right, r.right);
    for (const h of p.querySelectorAll(':scope > .q-tabs, :scope > table > thead')) {
      if (!h.contains(el) && sticky(h)) top = Math.max(top, h.getBoundingClientRect().bottom);
    }
  }
}
const bar = document.querySelector('.wb-topbar');
if (bar && !bar.contains(el)) top = Math.max(top, bar.getBoundingClientRect().bottom);
return {top, bottom, left, right};
"""


def rect(screen, el) -> dict[str, float]:
    return screen.selenium.execute_script(RECT_JS, el)


def assert_seen(screen, el, what: str) -> None:
    """``el`` lies wholly inside the window and inside every box that clips it (not scrolled away,
    not under the top bar or a sticky header)."""
    r = rect(screen, el)
    v = screen.selenium.execute_script(CLIP_JS, el)
    w, h, _, _ = screen.selenium.execute_script(VIEWPORT_JS)
    assert r["height"] > 0, f"{what} has no height: {r}"
    assert 0 <= r["top"] and r["bottom"] <= h and 0 <= r["left"] and r["right"] <= w + 0.5, (
        f"{what} {r} is outside the {w}x{h} window"
    )
    assert v["top"] - 0.5 <= r["top"] and r["bottom"] <= v["bottom"] + 0.5, (
        f"{what} {r} is outside the visible part of its scrolling box {v}"
    )


@pytest.fixture
def window(screen) -> Iterator[Callable[[int, int], None]]:
    """``window(w, h)`` gives the page an inner size of w x h; the shared driver is put back after."""
    driver = screen.selenium

    def size(w: int, h: int) -> None:
        driver.set_window_size(w, h)
        iw, ih = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        if (iw, ih) != (w, h):  # a window frame or bars: grow the outer size by what they take
            driver.set_window_size(2 * w - iw, 2 * h - ih)
            iw, ih = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        assert (iw, ih) == (w, h)

    try:
        yield size
    finally:
        driver.set_window_size(*DEFAULT_SIZE)


def open_session(
    screen,
    window,
    path: Path,
    size: tuple[int, int],
    step: int | None = None,
    settle_on: str | None = None,
    **opts: Any,
) -> str:
    """Serve ``path``, size the window, open the session (at ``step``) and wait for its step title
    (or, for a session that opens on its conversation, for ``settle_on``)."""
    configure([path], **opts)
    sid = entry_id(path)
    window(*size)
    screen.open(f"/s/{sid}" + (f"/step/{step}" if step else ""))
    if settle_on:
        wait_until(screen, f"document.querySelector('{settle_on}')", timeout=8)
    else:
        wait_step(screen, step or 1)
    settle(screen)
    return sid


def size_id(size: tuple[int, int]) -> str:
    return str(size[0])


# -- 1. stepping keeps the current row in view --------------------------------------------------
@needs_samples
@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_the_current_row_stays_in_view_while_stepping(screen, window, size: tuple[int, int]) -> None:
    session = importers.load(RECOVERED)
    assert len(session) > 60  # more steps than fit in either window
    open_session(screen, window, RECOVERED, size)
    for _ in range(30):
        press(screen, "j")
    wait_step(screen, 31)
    settle(screen)
    current = screen.find_by_css(".wb-steps tbody tr.wb-current")
    assert current.find_element(By.CSS_SELECTOR, "td").text == "31"
    assert_seen(screen, current, "the current row (step 31)")
    if size == (1440, 900):
        assert screen.selenium.execute_script(VIEWPORT_JS)[3] == 0  # the page itself never scrolled
    # the step detail's title is on screen too: a person sees which step they are on
    assert_seen(screen, screen.find_by_css(".wb-step-title"), "the step title")
    shot(screen, f"layout-{size[0]}-stepping")


# -- 2. a file change: the diff's first changed line without scrolling -------------------------
@needs_samples
@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_a_file_change_shows_its_diff_without_scrolling(screen, window, size: tuple[int, int]) -> None:
    from walkback.timeline.query import Query, select

    session = importers.load(RECOVERED)
    edit = int(select(session, Query(kinds=frozenset({"tool_call"}), tools=frozenset({"replace_symbol"})))[0])
    open_session(screen, window, RECOVERED, size, step=edit + 1)
    old = session.detail(edit).arguments["old"]  # the rename's old name: the first line removed
    first = screen.find_by_css(".wb-diff .wb-txt.wb-add, .wb-diff .wb-txt.wb-del")
    assert "wb-del" in first.get_attribute("class") and first.text.startswith("-") and old in first.text
    assert screen.selenium.execute_script(VIEWPORT_JS)[3] == 0
    assert_seen(screen, first, "the diff's first changed line")
    shot(screen, f"layout-{size[0]}-diff")


# -- 3. the demo: its crash in the list, each agent's history in the Agents tab ---------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``walkback demo --no-open --dir D`` once for the module: (run dir, workspace)."""
    base = tmp_path_factory.mktemp("demo") / "d"
    cmd = [str(WALKBACK)] if WALKBACK.exists() else [sys.executable, "-m", "walkback"]
    done = subprocess.run(
        [*cmd, "demo", "--no-open", "--dir", str(base)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run = base / "runs" / "demo"
    assert (run / "journal.jsonl").is_file() and f"journal in {run}" in done.stdout
    return run, base / "repo"


def click_tab(screen, label: str) -> None:
    tabs = [t for t in screen.selenium.find_elements(By.CSS_SELECTOR, ".q-tab") if t.text.strip() == label]
    assert tabs, f"no {label} tab"
    assert_seen(screen, tabs[0], f"the {label} tab")
    tabs[0].click()


@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_the_demo_shows_its_crash_and_each_agents_history(
    screen, window, demo: tuple[Path, Path], size: tuple[int, int]
) -> None:
    from walkback.timeline.story import agent_stories, crashes

    run, workspace = demo
    session = importers.load(run)
    found = crashes(session)
    assert len(found) == 1 and found[0].resumed is not None  # the demo kills the run once, then resumes
    crash = found[0]
    # on the first step after the resume, the crash row just above it is on screen
    open_session(screen, window, run, size, step=crash.resumed + 1, workspace=workspace)
    rows = screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-steps tbody tr.wb-crash")
    assert len(rows) == 1
    cell = rows[0].find_element(By.CSS_SELECTOR, "td.wb-what")
    assert cell.text == crash.text(session, short=True)
    # which calls were under way depends on when the kill lands: the words around them do not
    assert cell.text.startswith("crash: the run stopped while step ") and " was running (agents " in cell.text
    assert all(f"step {i + 1} (" in cell.text for i in crash.running)
    assert cell.text.endswith(f"; resumed at step {crash.resumed + 1}")
    kind = rows[0].find_element(By.CSS_SELECTOR, "td:nth-child(4)")  # step, lsn, time, kind, status, what
    status = rows[0].find_element(By.CSS_SELECTOR, "td.wb-col-status")
    assert kind.text == "crash" and status.get_attribute("textContent") == "recovered"
    if size[0] >= 1000:  # narrower, the list has no status column (the sentence says it)
        assert status.text == "recovered"
    assert_seen(screen, rows[0], "the crash row")
    assert screen.selenium.execute_script(
        "return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", cell
    ), "the crash row's text is cut off"
    assert "crash" in plot_traces(screen)
    assert "crash" in assert_chart_labels_apart(screen)
    shot(screen, f"demo-{size[0]}-crash")

    # the Agents tab: each agent's history in words, the crash and the recovery included
    click_tab(screen, "Agents")
    wait_until(screen, "document.querySelectorAll('.wb-agent').length")
    settle(screen)  # the tab panel slides in
    cards = {
        c.find_element(By.CSS_SELECTOR, ".font-bold").text: c
        for c in screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-agent")
    }
    stories = agent_stories(session, found)
    assert sorted(cards) == sorted(s.agent for s in stories) == ["auth", "billing", "main", "search"]
    crashed = [s for s in stories if any(m.what == "crashed" for m in s.moments)]
    # the kill lands while subagents work: main and those crashed (which ones varies from run to run)
    sub = session.event(crash.running[0]).agent
    assert {s.agent for s in crashed} == set(crash.agents) and {"main", sub} <= set(crash.agents)
    assert sub != "main"
    for s in stories:
        card = cards[s.agent].text
        words = [f"{m.what} at step {m.step + 1}" for m in s.moments]
        at = [card.find(w) for w in words]
        assert all(k >= 0 for k in at) and at == sorted(at), f"{s.agent}: {words} not in order in {card!r}"
        assert s.outcome == "completed" and "completed" in card
    card = cards[sub].text
    assert f"crashed at step {crash.running[0] + 1}" in card and "recovered at step " in card
    # main's history is on screen as the tab opens; the others are a scroll of the detail pane away
    for k, s in enumerate(crashed):
        history = cards[s.agent].find_element(By.XPATH, ".//*[contains(., 'crashed at step')][last()]")
        if k:
            screen.selenium.execute_script("arguments[0].scrollIntoView({block: 'nearest'})", history)
        assert_seen(screen, history, f"{s.agent}'s history")
    if size == (1440, 900):
        assert screen.selenium.execute_script(VIEWPORT_JS)[3] == 0
    shot(screen, f"demo-{size[0]}-agents")

    # the chart's x axis is time, or the step number at a click on "step" in its key
    axis = "return document.querySelector('.js-plotly-plot').layout.xaxis.type"
    assert screen.selenium.execute_script(axis) == "date"
    next(
        b for b in screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-x-mode button") if b.text == "step"
    ).click()
    deadline = time.monotonic() + 5
    while screen.selenium.execute_script(axis) != "linear" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert screen.selenium.execute_script(axis) == "linear"


def plot_traces(screen) -> dict[str, list[int]]:
    """The timeline's traces by name: the steps (customdata) each marks."""
    wait_until(
        screen, "document.querySelector('.js-plotly-plot') && document.querySelector('.js-plotly-plot').data"
    )
    return screen.selenium.execute_script(
        "const out = {}; for (const t of document.querySelector('.js-plotly-plot').data)"
        " out[t.name] = Array.from(t.customdata || []).map(Number); return out;"
    )


def assert_chart_labels_apart(screen) -> list[str]:
    """The timeline's labels (crash, torn tail) can each be read: no two overlap. Returns them."""
    labels = screen.selenium.execute_script(
        "return Array.from(document.querySelectorAll('.js-plotly-plot g.annotation')).map(g => {"
        " const r = g.getBoundingClientRect();"
        " return {text: g.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"
    )
    for k, a in enumerate(labels):
        for b in labels[k + 1 :]:
            apart = a["right"] <= b["left"] or b["right"] <= a["left"]
            apart = apart or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]
            assert apart, f"chart labels overlap: {a} and {b}"
    return [a["text"] for a in labels]


# -- 4. damage: an altered record and a torn tail are rows, counted, and marked ----------------
def altered_copy(root: Path) -> Path:
    """rename-clean with one digit of a middle record's timestamp changed: valid JSON, wrong hash."""
    import shutil

    run = root / "altered"
    shutil.copytree(CLEAN, run)
    journal = run / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    k = len(lines) // 2
    at = lines[k].index(b'"ts":"') + len(b'"ts":"2026-12-01T22:21:1')
    digit = lines[k][at : at + 1]
    assert digit.isdigit()
    lines[k] = lines[k][:at] + (b"7" if digit != b"7" else b"3") + lines[k][at + 1 :]
    journal.write_bytes(b"".join(lines))
    return run


def torn_copy(root: Path) -> Path:
    """rename-clean with its last record cut in half (no newline)."""
    import shutil

    run = root / "torn"
    shutil.copytree(CLEAN, run)
    journal = run / "journal.jsonl"
    data = journal.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    journal.write_bytes(data[: start + (len(data) - start) // 2])
    return run


DAMAGE = {"altered": (altered_copy, "hash mismatch"), "torn": (torn_copy, "partial last line")}


@needs_samples
@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_journal_shows_the_damage(
    screen, window, tmp_path: Path, damage: str, size: tuple[int, int]
) -> None:
    import numpy as np
    from walkback.timeline.kinds import PLACEHOLDER
    from walkback.timeline.query import columns, problems_mask

    make, words = DAMAGE[damage]
    run = make(tmp_path)
    session = importers.load(run)
    lines = len((run / "journal.jsonl").read_bytes().splitlines())
    assert len(session) == lines == 91  # the damaged record is a row of its own, not dropped
    placeholders = np.flatnonzero(columns(session).flags & PLACEHOLDER)
    assert len(placeholders) == 1
    bad = int(placeholders[0])
    reason = session.detail(bad).reason
    assert words in reason
    problems = int(problems_mask(session).sum())
    open_session(screen, window, run, size, step=bad + 1)

    # the header counts the events (every line) and the problems, and names the damage
    counts = screen.find_by_css(".wb-counts").text
    assert f"{lines} events" in counts
    assert f"{problems} problem{'s' if problems != 1 else ''}" in counts
    badge = session.integrity.badge
    assert badge == ("torn tail" if damage == "torn" else f"chain broken at lsn {lines // 2}")
    screen.should_contain(badge)
    for el in (screen.find_by_css(".wb-counts"), screen.find(badge)):
        assert_seen(screen, el, f"the header's {el.text!r}")
    screen.should_contain(f"step {bad + 1} of {lines}")

    # the list: the placeholder is the current row, a problem, with its reason readable in full
    row = screen.find_by_css(".wb-steps tbody tr.wb-current")
    assert row.find_element(By.CSS_SELECTOR, "td").text == str(bad + 1)
    assert "wb-problem" in row.get_attribute("class")
    assert reason in row.text and "unreadable record" in row.text
    assert_seen(screen, row, "the damaged record's row")
    what = row.find_element(By.CSS_SELECTOR, "td.wb-what")
    assert screen.selenium.execute_script(
        "return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", what
    ), "the reason is cut off"
    # the detail says so in words
    note = f"This record could not be read: {reason}."
    screen.should_contain(note)
    assert_seen(screen, screen.find(note), "the damage note")

    # the chart marks it as a problem
    traces = plot_traces(screen)
    assert bad + 1 in traces.get("problem", []) and bad + 1 in traces.get("damage / error", [])
    labels = assert_chart_labels_apart(screen)
    if damage == "torn":  # the run stopped mid-write: a crash and a torn tail, both named
        assert any("torn tail" in t for t in labels) and any("crash" in t for t in labels), labels
    shot(screen, f"damage-{size[0]}-{damage}")


# -- 5. text as text: no literal backslash-n in file content or command output ----------------
@pytest.mark.skipif(not (MULTI / "journal.jsonl").is_file(), reason="no samples/ in this checkout")
@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_file_content_and_command_output_have_no_literal_backslash_n(
    screen, window, size: tuple[int, int]
) -> None:
    from walkback.timeline.details import ToolResult
    from walkback.timeline.query import Query, select

    session = importers.load(MULTI)
    write = int(select(session, Query(kinds=frozenset({"tool_call"}), tools=frozenset({"write_file"})))[0])
    content = session.detail(write).arguments["content"]
    output = next(
        i
        for i in map(int, select(session, Query(kinds=frozenset({"tool_result"}))))
        if isinstance(d := session.detail(i), ToolResult) and d.output.count("\n") >= 3
    )
    out_text = session.detail(output).output
    sid = open_session(screen, window, MULTI, size, step=write + 1)
    for step, text, name in ((write, content, "write"), (output, out_text, "output")):
        if step != write:
            screen.selenium.get(f"{screen.url}/s/{sid}/step/{step + 1}")
            wait_step(screen, step + 1)
            settle(screen)
        assert "\n" in text
        pane = screen.selenium.execute_script("return document.querySelector('.wb-detail-pane').innerText")
        page = screen.selenium.execute_script("return document.getElementById('app').innerText")
        assert "\\n" not in pane and "\\n" not in page
        # each line of the text is a line on the screen
        shown = [ln.strip() for ln in pane.splitlines()]
        for line in (ln.strip() for ln in text.splitlines() if ln.strip()):
            assert any(s.endswith(line) for s in shown), f"{line!r} is not a line of the detail"
        # a numbered block has one number per line: a final newline adds no empty last line
        blocks = screen.selenium.execute_script(
            "return Array.from(document.querySelectorAll('.wb-detail-pane .wb-fv.wb-numbered'))"
            ".map(b => Array.from(b.querySelectorAll('.wb-txt')).map(t => t.textContent))"
        )
        for block in blocks:
            assert block and block[-1] != "", block
        if step == write:
            assert text.splitlines() in blocks
        shot(screen, f"layout-{size[0]}-{name}")


@pytest.mark.skipif(not CLINE_TASK.is_dir(), reason="no Cline task folder in this checkout")
@pytest.mark.parametrize("size", SIZES, ids=size_id)
def test_the_conversation_shows_tool_arguments_as_lines(screen, window, size: tuple[int, int]) -> None:
    """A foreign session opens on its conversation: a tool call's multi-line argument (Cline's
    SEARCH/REPLACE block) is shown as lines under its key, not as JSON with ``\\n`` in it."""
    from walkback.timeline.details import ToolCall

    session = importers.load(CLINE_TASK)
    step, key, value = next(
        (i, k, v)
        for i in range(len(session))
        if isinstance(d := session.detail(i), ToolCall) and not d.command
        for k, v in d.arguments.items()
        if isinstance(v, str) and v.count("\n") >= 3
    )
    open_session(screen, window, CLINE_TASK, size, step=step + 1, settle_on=".wb-conv, .wb-tool")
    tool = screen.find_by_css(f'.wb-tool[data-step="{step + 1}"]')
    text = screen.selenium.execute_script("return arguments[0].innerText", tool)
    assert "\\n" not in text
    lines = [ln.strip() for ln in text.splitlines()]
    assert f"{key}:" in lines
    for line in (ln.strip() for ln in value.splitlines() if ln.strip()):
        assert line in lines, f"{line!r} is not a line of the tool call"
    assert_seen(screen, tool.find_element(By.CSS_SELECTOR, ".wb-msg-head"), "the tool call's head")
    shot(screen, f"layout-{size[0]}-conversation")


# -- issue 10: one session of each foreign format -----------------------------------------------
FORMATS = [
    ("claude-code", "claude-code/vscode-copilot-chat/50a7220d-7250-46f3-b38e-b716ce25032e.jsonl", None),
    ("codex", "codex/localpush/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl", None),
    ("gemini-cli", "gemini-cli/vibecodingtracker/gemini.jsonl", None),
    ("copilot-cli", "copilot-cli/vscode-copilot-chat/c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl", None),
    ("openhands", "openhands/v0-trajectories/basic_interactions.json", None),
    ("swe-agent", "swe-agent/swe-agent__test-repo-i1.traj", None),
    ("inspect", "inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval", "3_epoch_1"),
    ("aider", "aider/aider-repo-fixture/chat-history.EXCERPT.md", "12"),  # 103 events: three pages
    ("otel", "otel/otlp-proto-examples/trace.json", None),
    ("cline", None, None),  # no Cline task in the shared corpus: the importer tests' own task folder
]
"""(format, file under the corpus, part): a file holding several sessions (an Inspect log's samples,
an Aider history's runs) is opened as the viewer lists it, ``FILE#PART``."""


@pytest.mark.parametrize(("fmt", "rel", "part"), FORMATS, ids=[f for f, _, _ in FORMATS])
def test_one_session_of_each_format_opens(
    screen, window, fmt: str, rel: str | None, part: str | None
) -> None:
    from walkback.importers.registry import PART
    from walkback.viewer.components.step_list import PAGE_SIZE

    file = CLINE_TASK if rel is None else CORPUS / rel
    if not file.exists():
        pytest.skip(f"no {file} (../shared/corpus is absent)")
    path = file.with_name(f"{file.name}{PART}{part}") if part else file
    session = importers.load(path)
    assert session.format == fmt and len(session) > 0
    configure([file])  # the viewer finds the file's sessions itself
    window(1440, 900)
    screen.open(f"/s/{entry_id(path)}")
    body = ".wb-steps tbody tr:not(.wb-crash)"
    want = min(len(session), PAGE_SIZE)
    rows = f"document.querySelectorAll('{body}').length"
    n = wait_until(screen, f"{rows} === {want} && {rows}", timeout=10)
    assert n == want, f"{n} rows on the first page, expected {want}"
    steps = [int(td.text) for td in screen.selenium.find_elements(By.CSS_SELECTOR, f"{body} td:first-child")]
    assert steps == list(range(1, want + 1))
    counts = screen.find_by_css(".wb-counts").text
    assert counts.endswith(f"· {fmt}"), counts
    assert counts.startswith(f"{len(session):,} event{'s' if len(session) != 1 else ''} · "), counts
    assert_seen(screen, screen.find_by_css(f"{body}"), "the first row")
    assert_seen(screen, screen.find_by_css(".wb-counts"), "the counts")
    if len(session) > PAGE_SIZE:
        screen.should_contain(f"step 1 of {len(session)}")
    settle(screen)
    shot(screen, f"format-{fmt}")


# -- 7. the session list fits the window ---------------------------------------------------------
@needs_samples
def test_the_session_list_keeps_a_long_path_within_the_window(screen, window, tmp_path: Path) -> None:
    """A run in a deep folder: the list does not scroll sideways at 1440, the path's end (its
    file) is what shows, and the whole path is the cell's hover text."""
    import shutil

    deep = tmp_path.joinpath(*[f"a-folder-with-a-rather-long-name-{k}" for k in range(6)], "the-run")
    shutil.copytree(CLEAN, deep)
    configure([deep, MULTI])
    window(1440, 900)
    screen.open("/")
    cell = ".wb-source"
    wait_until(screen, f"document.querySelectorAll('{cell}').length === 2", timeout=8)
    middle = screen.find_by_css(".q-table__middle")
    wide, shown = screen.selenium.execute_script(
        "return [arguments[0].scrollWidth, arguments[0].clientWidth]", middle
    )
    assert wide <= shown, f"the list scrolls sideways: {wide} px in {shown}"
    long_cell = next(
        td
        for td in screen.selenium.find_elements(By.CSS_SELECTOR, cell)
        if "the-run" in td.get_attribute("title")
    )
    assert long_cell.get_attribute("title") == str(deep)
    full, visible = screen.selenium.execute_script(
        "return [arguments[0].scrollWidth, arguments[0].clientWidth]", long_cell
    )
    assert full > visible  # cut, not wrapped or widened
    assert_seen(screen, long_cell, "the long path's cell")
    shot(screen, "layout-1440-session-list")
