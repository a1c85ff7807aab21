"""End to end in a real headless Chromium: keyboard, deep links, back/forward, diff, filters, XSS."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browser_steps import press, wait_step
from sample_runs import XSS, build_run
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from viewer_env import ARTIFACTS, configure
from walkback.viewer.store import entry_id

pytestmark = pytest.mark.browser


def path_of(screen) -> str:
    parts = urlsplit(screen.selenium.current_url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def wait_path(screen, expected: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while path_of(screen) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path_of(screen) == expected


def test_keyboard_deep_links_back_forward_diff_and_problems(screen, tmp_path: Path) -> None:
    run = build_run(tmp_path, recovered=True, torn=True)
    configure([run.dir], workspace=run.workspace)
    sid = entry_id(run.dir)
    screen.open(f"/s/{sid}")
    wait_step(screen, 1)
    wait_path(screen, f"/s/{sid}/step/1")
    screen.should_contain("Rename get_user_by_id to fetch_user")
    screen.should_contain("torn tail")
    for _ in range(3):
        press(screen, "j")
    wait_step(screen, 4)
    wait_path(screen, f"/s/{sid}/step/4")
    press(screen, Keys.ARROW_RIGHT)
    wait_step(screen, 5)
    press(screen, "k")
    wait_step(screen, 4)
    # the URL is a deep link: reloading restores exactly that step
    screen.selenium.refresh()
    wait_step(screen, 4)
    # back and forward walk the steps
    screen.selenium.back()
    wait_step(screen, 5)
    wait_path(screen, f"/s/{sid}/step/5")
    screen.selenium.forward()
    wait_step(screen, 4)
    # open a diff: the rename step shows its change, unified then side by side
    rename = run.lsn["rename"] + 1
    screen.selenium.get(f"{screen.url}/s/{sid}/step/{rename}")
    wait_step(screen, rename)
    screen.should_contain("+def fetch_user(uid):")
    screen.should_contain("-def get_user_by_id(uid):")
    screen.should_contain("workspace now = post")
    screen.click("side by side")
    time.sleep(0.5)
    screen.should_not_contain("+def fetch_user(uid):")
    screen.should_contain("def fetch_user(uid):")
    # the intent's card links to its commit, and the commit's back to the intent
    links = screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-pair .wb-pair-link")
    assert [a.text for a in links] == [f"step {run.lsn['rename_commit'] + 1}"]
    links[0].click()
    wait_step(screen, run.lsn["rename_commit"] + 1)
    screen.find_by_css(".wb-pair .wb-pair-link").click()
    wait_step(screen, rename)
    # problems only: the list keeps failed/denied/recovered steps, and j walks them
    screen.click("problems only")
    time.sleep(0.6)
    assert "problems=1" in path_of(screen)
    rows = screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-steps tbody tr:not(.wb-crash)")
    assert rows and all("wb-problem" in r.get_attribute("class") for r in rows)
    first = int(rows[0].find_element(By.CSS_SELECTOR, "td").text)
    second = int(rows[1].find_element(By.CSS_SELECTOR, "td").text)
    wait_step(screen, first)
    press(screen, "j")
    wait_step(screen, second)
    # '/' goes to the search box without typing the slash
    press(screen, "/")
    time.sleep(0.4)
    active = screen.selenium.switch_to.active_element
    assert (
        active.get_attribute("placeholder") == "search raw records (/)"
        and active.get_attribute("value") == ""
    )
    # typing there filters the list (after the box's debounce) and the URL says so
    active.send_keys("fetch_user")
    deadline = time.monotonic() + 5
    while "q=fetch_user" not in path_of(screen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "q=fetch_user" in path_of(screen) and "problems=1" in path_of(screen)
    screen.should_contain("match")
    screen.selenium.save_screenshot(str(ARTIFACTS / "session-problems.png"))
    # 'g' goes to the jump box; Enter there jumps to an lsn or a #step
    screen.selenium.execute_script("document.activeElement.blur()")
    press(screen, "g")
    time.sleep(0.4)
    jump = screen.selenium.switch_to.active_element
    assert jump.get_attribute("placeholder") == "go to lsn, agent:lsn, #step (g)"
    jump.send_keys("#1", Keys.ENTER)
    wait_step(screen, 1)
    # no request ever left this origin
    origins = screen.selenium.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)"
    )
    assert set(origins) <= {screen.url}


SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "rename-recovered"


@pytest.mark.skipif(not (SAMPLE / "journal.jsonl").is_file(), reason="no samples/ in this checkout")
def test_a_real_sample_keyboard_diff_and_problems(screen) -> None:
    """The agent loop's recovered rename: step with keys, open a diff, keep only the problems."""
    from walkback.timeline.query import Query, select

    from walkback import importers

    session = importers.load(SAMPLE)
    edit = int(select(session, Query(kinds=frozenset({"tool_call"}), tools=frozenset({"replace_symbol"})))[0])
    configure([SAMPLE])
    sid = entry_id(SAMPLE)
    screen.open(f"/s/{sid}/step/{edit + 1}")
    wait_step(screen, edit + 1)
    diff = screen.find_by_css(".wb-diff")
    assert diff.find_elements(By.CSS_SELECTOR, ".wb-add") and diff.find_elements(By.CSS_SELECTOR, ".wb-del")
    screen.should_contain("post content in the record matches hash")
    press(screen, "j")
    wait_step(screen, edit + 2)
    screen.should_contain("answers intent")
    press(screen, Keys.ARROW_LEFT)
    wait_step(screen, edit + 1)
    # the current row is highlighted and the page itself did not scroll away from the header
    assert screen.selenium.execute_script("return window.scrollY") == 0
    current = screen.find_by_css(".wb-steps tr.wb-current td")
    assert int(current.text) == edit + 1
    screen.click("problems only")
    time.sleep(0.6)
    problems = select(session, Query(problems=True))
    rows = screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-steps tbody tr:not(.wb-crash)")
    assert [int(r.find_element(By.CSS_SELECTOR, "td").text) for r in rows] == [int(i) + 1 for i in problems]
    # the crash, which left no record, is a row of its own among them, not a step
    crash = screen.find_by_css(".wb-steps tbody tr.wb-crash")
    assert "crash: the run stopped while" in crash.text and "resumed at step" in crash.text
    screen.click("Recovery")
    screen.should_contain("what recovery found and decided")
    screen.selenium.save_screenshot(str(ARTIFACTS / "sample-recovery.png"))


def test_session_list_and_timeline_click(screen, tmp_path: Path) -> None:
    a = build_run(tmp_path, name="run-a", recovered=True)
    build_run(tmp_path, name="run-b", crashed=False)
    configure([tmp_path])
    screen.open("/")
    screen.should_contain("2 sessions")
    screen.should_contain("crashed (recovered)")
    screen.selenium.save_screenshot(str(ARTIFACTS / "session-list.png"))
    screen.find_by_css(".q-table tbody tr").click()
    time.sleep(1.0)
    assert path_of(screen).startswith("/s/")
    if not path_of(screen).startswith(f"/s/{entry_id(a.dir)}"):
        screen.selenium.get(f"{screen.url}/s/{entry_id(a.dir)}")
    wait_step(screen, 1)
    # a click on a timeline marker goes to that step (plotly's own event, through our compact handler)
    screen.wait_for_js(
        "document.querySelector('.js-plotly-plot') && document.querySelector('.js-plotly-plot').data ? 1 : 0",
        1,
    ) if hasattr(screen, "wait_for_js") else time.sleep(1.5)
    target = run_index = a.lsn["fail"]
    screen.selenium.execute_script(
        "const el = document.querySelector('.js-plotly-plot');"
        "const t = el.data.findIndex(d => d.name === 'tool call');"
        "const k = Array.from(el.data[t].customdata).indexOf(arguments[0]);"
        "el.emit('plotly_click', {points: [{curveNumber: t, pointIndex: k, customdata: arguments[0]}]});",
        run_index + 1,
    )
    wait_step(screen, target + 1)
    screen.selenium.save_screenshot(str(ARTIFACTS / "session-page.png"))


def test_model_written_content_never_executes(screen, tmp_path: Path) -> None:
    run = build_run(tmp_path, name=XSS["dir"], xss=True, recovered=True)  # even the run dir's name
    build_run(tmp_path, name="plain")
    configure([tmp_path])
    sid = entry_id(run.dir)
    screen.open("/")
    pages = [f"/s/{sid}/step/{i + 1}" for i in range(0, 28)]
    for p in (
        ["/"]
        + pages[:1]
        + [
            pages[run.lsn["model"]],
            pages[run.lsn["create"]],
            pages[run.lsn["rename"]],
            pages[run.lsn["approval"]],
        ]
    ):
        screen.selenium.get(screen.url + p)
        time.sleep(0.8)
        _assert_inert(screen)
    # every tab with model-written names: agents, files, approvals, recovery
    for tab in ("Agents", "Files", "Approvals", "Recovery"):
        screen.click(tab)
        time.sleep(0.5)
        _assert_inert(screen)
    # the payloads are shown as text
    screen.click("Step")
    screen.selenium.get(f"{screen.url}{pages[run.lsn['model']]}")
    time.sleep(0.8)
    text = app_text(screen)
    assert (
        "</script><script>window.__xss=6</script>" in text
        and "<b onmouseover=window.__xss=7>bold</b>" in text
    )
    screen.selenium.get(f"{screen.url}{pages[0]}")
    time.sleep(0.8)
    assert XSS["task"] in app_text(screen) and XSS["agent"] in app_text(screen)
    assert XSS["dir"] in screen.selenium.title
    _assert_inert(screen)
    screen.selenium.save_screenshot(str(ARTIFACTS / "xss-session.png"))


INJECTED = (
    "const bad = Array.from(document.querySelectorAll('*')).filter(el => "
    "Array.from(el.attributes).some(a => /^on/i.test(a.name)) || "
    "(el.tagName === 'A' && /^\\s*javascript:/i.test(el.getAttribute('href') || '')));"
    "const inApp = Array.from(document.querySelectorAll('#app script, #app iframe, #app object, #app embed, "
    "#app img[src=x]'));"
    "return bad.concat(inApp).map(el => el.outerHTML.slice(0, 120));"
)
"""Elements a payload would create if it were parsed as HTML: inline handlers, javascript: links, and
script/iframe/img elements inside the rendered app (NiceGUI's own bootstrap scripts, which carry
the page state as JSON, live outside ``#app``)."""


def app_text(screen) -> str:
    return screen.selenium.execute_script("return document.getElementById('app').innerText")


def _assert_inert(screen) -> None:
    assert screen.selenium.execute_script("return window.__xss") is None
    with pytest.raises(NoAlertPresentException):
        screen.selenium.switch_to.alert.text  # noqa: B018
    assert screen.selenium.execute_script(INJECTED) == []


def test_the_filter_menu_is_built_when_opened_and_narrows_the_list(screen) -> None:
    """The kind/agent/tool/file/status selects are built on the menu's first opening (a page that
    never opens it does not pay for them); choosing a kind there filters the list and the URL."""
    from walkback.timeline.query import Query, select

    from walkback import importers

    session = importers.load(SAMPLE)
    calls = [int(i) + 1 for i in select(session, Query(kinds=frozenset({"tool_call"})))]
    configure([SAMPLE])
    sid = entry_id(SAMPLE)
    screen.open(f"/s/{sid}")
    wait_step(screen, 1)
    assert not screen.selenium.find_elements(By.CSS_SELECTOR, ".q-select[title], .q-menu .q-select")
    more = screen.find_by_css("button[title='filter by kind, agent, tool, file, status']")
    more.click()
    screen.find_by_css(".q-menu .q-select")  # waits for the menu and its first select

    def kind_select() -> WebElement | None:
        """The menu's kind select once a person can see it (found afresh: the menu's content
        arrives from the server after it opens, and may move while it settles)."""
        sels = screen.selenium.find_elements(By.CSS_SELECTOR, ".q-menu .q-select")
        return next((s for s in sels if "kind" in s.text), None)

    deadline = time.monotonic() + 10
    while (kind := kind_select()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kind is not None, "the filter menu shows no kind select"
    kind.click()

    def option(text: str) -> WebElement | None:
        """The option of the select's own menu starting with ``text``, once it is shown."""
        options = screen.selenium.find_elements(By.CSS_SELECTOR, ".q-item[role='option']")
        return next((o for o in options if o.text.startswith(text)), None)

    deadline = time.monotonic() + 5
    while (call := option("tool_call (")) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call is not None, "the kind select offers no tool_call option"
    call.click()
    wait_path(screen, f"/s/{sid}/step/{calls[0]}?kind=tool_call")  # the cursor moved onto the first one
    press(screen, Keys.ESCAPE)

    def shown() -> list[int]:
        rows = screen.selenium.find_elements(By.CSS_SELECTOR, ".wb-steps tbody tr:not(.wb-crash)")
        return [int(r.find_element(By.CSS_SELECTOR, "td").text) for r in rows]

    deadline = time.monotonic() + 5
    while shown() != calls[:50] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shown() == calls[:50]
    # the buttons' hints are plain title attributes now, not tooltip elements
    assert screen.find_by_css("button[title='next (j, →)']")
