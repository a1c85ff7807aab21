// walkback HTML replay: one file, no server, no network. Every string from the session is put in
// the page as text (textContent), never as markup: a journal's content is written by a model.
// The data: #wb-view (gzip + base64 JSON: each step's summary, kind and lane, the agents,
// approvals, crashes), #wb-steps (one such block a line: the cards and diffs of V.block steps,
// unpacked when one of them is shown), #wb-bundle (the signed bundle; the raw records).
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const ROW = 24;
  let V = null, N = 0, cur = 0, at = 0, order = [], playing = null, bundle = null, packed = [], first = true;
  const lines = new Map(), blocks = [], loading = new Map();

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function bytesOf(b64) {
    const s = atob(b64.trim());
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  async function unpack(b64) {
    const stream = new Blob([bytesOf(b64)]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  // -- the steps' cards and diffs, a block at a time ---------------------------------------------
  function blockOf(i) { return Math.floor(i / V.block); }
  function load(k) {
    if (!loading.has(k)) loading.set(k, unpack(packed[k]).then((b) => { blocks[k] = b; }));
    return loading.get(k);
  }
  function loadAll() { return Promise.all(packed.map((_, k) => load(k))); }
  function card(i) { return blocks[blockOf(i)].card[i % V.block]; }
  function changeOf(i) { const b = blocks[blockOf(i)]; return b ? b.changes[String(i)] : undefined; }
  function linked(i) {  // a result shows the diff of the call it answers
    const c = card(i);
    return c.pair.links.length && V.steps.kind[i] === "tool_result" ? c.pair.links[0][1] : null;
  }
  function when(ts) {
    if (ts === null || ts === undefined || !isFinite(ts)) return "";
    return new Date(ts * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }

  // -- the raw records, from the bundle's artifacts (decoded when first asked for) ---------------
  let unpacked = null;
  function pageRead() {
    if (document.readyState !== "loading") return Promise.resolve();
    return new Promise((done) => document.addEventListener("DOMContentLoaded", done, { once: true }));
  }
  function readBundle() {  // unpacked once, after the first step is drawn; the step is drawn again
    if (bundle === null) {
      bundle = pageRead().then(() => unpack($("wb-bundle").textContent)).then((b) => { unpacked = b; return N ? draw(cur) : undefined; });
    }
    return bundle;
  }
  function artifactLines(name) {
    if (lines.has(name)) return lines.get(name);
    if (unpacked === null) return [];  // the bundle is still being read
    const art = (unpacked.artifacts || []).find((a) => a.name === name);
    const text = art ? new TextDecoder().decode(bytesOf(art.data.replace(/-/g, "+").replace(/_/g, "/"))) : "";
    const split = text.split("\n");
    lines.set(name, split);
    return split;
  }
  function rawLine(i) {
    const s = V.steps, name = V.artifacts[s.src[i]], line = s.line[i];
    return name && line ? artifactLines(name)[line - 1] : undefined;
  }
  function rawRecord(i) {
    const text = rawLine(i);
    if (text === undefined) {
      return unpacked === null ? "(still reading the bundle; open this again)" : "(this record is not line-based; see the bundle)";
    }
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  // -- header, lanes, lists ----------------------------------------------------------------------
  function header() {
    const h = V.head, box = $("wb-head");
    box.append(el("h1", "wb-task", h.task || "(no task recorded)"));
    const facts = el("div", "wb-facts");
    for (const f of [h.format, h.status, h.integrity, `${N} events`, `${V.agents.length} agents`]) {
      if (f) facts.append(el("span", "wb-fact", f));
    }
    box.append(facts);
    box.append(el("div", h.verified ? "wb-verify ok" : "wb-verify bad", h.verification));
  }
  const COLORS = { tool_call: "#1565c0", tool_result: "#2e7d32", model_call: "#8e24aa", model_result: "#6a1b9a",
    approval_request: "#ef6c00", approval_decision: "#f9a825", recovery: "#c62828", integrity: "#b71c1c",
    agent_spawn: "#00838f", agent_end: "#00838f" };
  function lanes() {
    const c = $("wb-lanes"), n = Math.max(1, V.agents.length), w = c.clientWidth || 800, lh = 14;
    c.width = w; c.height = n * lh + 4;
    const g = c.getContext("2d"), s = V.steps;
    g.fillStyle = "#f4f4f4"; g.fillRect(0, 0, w, c.height);
    for (const x of V.crashes) { g.fillStyle = "#e53935"; g.fillRect(Math.floor((x.after + 0.5) / N * w), 0, 2, c.height); }
    // one mark per lane and pixel column (100k events draw like 1k): a problem wins, else the last
    const mark = new Int32Array(n * w).fill(-1);
    for (let i = 0; i < N; i++) {
      const p = s.agent[i] * w + Math.floor(i / N * w);
      if (mark[p] < 0 || !s.problem[mark[p]]) mark[p] = i;
    }
    const bw = Math.max(1, Math.ceil(w / N));
    for (const i of mark) {
      if (i < 0) continue;
      g.fillStyle = s.problem[i] ? "#d32f2f" : (COLORS[s.kind[i]] || "#757575");
      g.fillRect(Math.floor(i / N * w), 2 + s.agent[i] * lh, bw, lh - 4);
    }
    c.onclick = (e) => go(Math.floor(e.offsetX / w * N));
    const names = $("wb-lane-names"); names.textContent = "";
    V.agents.forEach((a) => names.append(el("div", "wb-lane-name", a.label)));
  }
  function tree() {
    const box = $("wb-agents"), kids = new Map();
    for (const a of V.agents) { const p = a.parent || ""; if (!kids.has(p)) kids.set(p, []); kids.get(p).push(a); }
    const ids = new Set(V.agents.map((a) => a.id));
    function branch(list) {
      const ul = el("ul", "wb-tree");
      for (const a of list) {
        const li = el("li", "", `${a.label} · ${a.events} events · ${a.story || a.outcome || ""}`);
        if (kids.has(a.id)) li.append(branch(kids.get(a.id)));
        ul.append(li);
      }
      return ul;
    }
    box.append(branch(V.agents.filter((a) => !a.parent || !ids.has(a.parent))));
  }
  function stepLink(label, i) {
    const a = el("a", "wb-link", label);
    a.href = `#step=${i + 1}`;
    return a;
  }
  function ledgers() {
    const ap = $("wb-approvals");
    if (!V.approvals.length) ap.append(el("p", "wb-none", "no approvals"));
    for (const x of V.approvals) {
      const row = el("div", "wb-row");
      row.append(stepLink(`step ${x.request + 1}`, x.request), el("span", "", ` ${x.what} — ${x.decision || "unanswered"}`));
      if (x.approver) row.append(el("span", "wb-dim", ` by ${x.approver}`));
      if (x.reason) row.append(el("span", "wb-dim", ` (${x.reason})`));
      if (x.gated !== null) row.append(el("span", "", " · gated "), stepLink(`step ${x.gated + 1}`, x.gated));
      ap.append(row);
    }
    const rec = $("wb-recovery");
    for (const c of V.crashes) {
      const row = el("div", "wb-row wb-crash");
      row.append(stepLink(`after step ${c.after + 1}`, c.after), el("span", "", " " + c.text));
      rec.append(row);
    }
    const s = V.steps;
    for (let i = 0; i < N; i++) {
      if (s.kind[i] !== "recovery") continue;
      const row = el("div", "wb-row");
      row.append(stepLink(`step ${i + 1}`, i), el("span", "", " " + s.sum[i]));
      rec.append(row);
    }
    if (V.brief) { rec.append(el("h3", "", "the resume brief the agent continued from")); rec.append(el("pre", "wb-pre", V.brief)); }
    if (!rec.childNodes.length) rec.append(el("p", "wb-none", "no crash, no recovery"));
    const integ = $("wb-integrity");
    for (const c of V.head.checks || []) {
      integ.append(el("div", c[1] ? "wb-row ok" : "wb-row bad", `${c[1] ? "ok  " : "FAIL"}  ${c[0]}: ${c[2]}`));
    }
    for (const r of V.head.redactions || []) integ.append(el("div", "wb-row wb-dim", `redacted ${r.source}:${r.line} (${r.rules.join(", ")})`));
  }

  // -- the step list: only the rows in view are in the page --------------------------------------
  function listRows() {
    const box = $("wb-list"), inner = $("wb-list-inner");
    inner.style.height = `${order.length * ROW}px`;
    const top = box.scrollTop, first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(order.length, first + Math.ceil((box.clientHeight || 600) / ROW) + 10);
    inner.textContent = "";
    for (let k = first; k < last; k++) {
      const i = order[k], s = V.steps;
      const row = el("div", "wb-item" + (i === cur ? " cur" : "") + (s.problem[i] ? " problem" : ""));
      row.style.top = `${k * ROW}px`;
      row.dataset.step = String(i);
      row.append(el("span", "wb-n", i + 1), el("span", "wb-k", s.kind[i].replace("_", " ")), el("span", "wb-s", s.sum[i]));
      inner.append(row);
    }
  }
  function pos() {  // where the current step is in the list (-1: not in it)
    if (order[at] !== cur) at = order.indexOf(cur);
    return at;
  }
  function keepInView() {
    const k = pos(), box = $("wb-list");
    if (k < 0) return;
    if (k * ROW < box.scrollTop) box.scrollTop = k * ROW;
    else if ((k + 1) * ROW > box.scrollTop + box.clientHeight) box.scrollTop = (k + 1) * ROW - box.clientHeight;
  }

  // -- one step: the card the viewer shows, its diff, its raw record -----------------------------
  function badge(text, cls) { return el("span", "wb-badge " + (cls || ""), text); }
  async function draw(i) {
    if (!blocks[blockOf(i)]) await load(blockOf(i));
    const l = linked(i);
    if (l !== null && !blocks[blockOf(l)]) await load(blockOf(l));
    if (i !== cur) return;  // moved on while the block was unpacked
    show(i);
    if (first) ready();
    for (const k of [blockOf(i) - 1, blockOf(i) + 1]) if (k >= 0 && k < packed.length) load(k);
  }
  function ready() {
    first = false;
    window.wbFirstStep = performance.now();  // ms since navigation: bench/handoff.py reads it
    document.body.classList.add("wb-ready");
  }
  function show(i) {
    const c = card(i), box = $("wb-step");
    box.textContent = "";
    const head = el("div", "wb-card-head");
    head.append(el("span", "wb-title", c.title), el("span", "wb-kind", c.kind), el("span", "wb-type", c.type),
      badge(c.status, "st-" + c.status));
    if (c.badge) head.append(badge(c.badge, "bad"));
    head.append(el("span", "wb-meta", [c.where, when(c.ts)].filter(Boolean).join(" · ")));
    box.append(head);
    if (c.what) box.append(el("div", "wb-what", c.what));
    if (c.damage) box.append(el("div", "wb-damage", c.damage));
    box.append(el("div", "wb-summary", V.steps.sum[i]));
    const l = linked(i), ch = changeOf(i) || (l !== null ? changeOf(l) : null);
    if (ch) box.append(change(ch));
    const p = c.pair;
    if (p.head) {
      const pair = el("div", "wb-pair");
      pair.append(el("div", "wb-pair-head", p.head));
      const line = el("div", "wb-pair-line", p.line);
      if (p.status !== null) line.append(badge(p.status || "—", "st-" + p.status));
      for (const l of p.links) line.append(stepLink(l[0], l[1]));
      pair.append(line);
      if (p.verify) pair.append(el("div", "wb-verification", p.verify));
      if (p.error) pair.append(el("pre", "wb-pre bad", p.error));
      box.append(pair);
    }
    const raw = el("details", "wb-raw");
    raw.append(el("summary", "", c.raw_label));
    const pre = el("pre", "wb-pre");
    raw.append(pre);
    raw.addEventListener("toggle", () => { if (raw.open && !pre.textContent) pre.textContent = rawRecord(i); });
    box.append(raw);
  }
  function change(ch) {
    const box = el("div", "wb-change");
    box.append(el("div", "wb-path", ch.path));
    const hashes = el("div", "wb-hashes");
    hashes.append(badge(`pre ${short(ch.pre)}`, "hash"), badge(`post ${short(ch.post)}`, "hash"));
    for (const b of ch.badges) { const x = badge(b[0], b[1] === true ? "ok" : b[1] === false ? "bad" : ""); x.title = b[2]; hashes.append(x); }
    box.append(hashes);
    if (ch.note) box.append(el("div", "wb-dim", ch.note));
    if (ch.diff) {
      const pre = el("pre", "wb-diff");
      for (const l of ch.diff.split("\n")) {
        pre.append(el("div", l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : l.startsWith("@@") ? "hunk" : "", l || " "));
      }
      box.append(pre);
    }
    return box;
  }
  function short(h) { return h ? (h.startsWith("sha256:") ? h.slice(7, 19) : h) : "—"; }

  // -- moving ------------------------------------------------------------------------------------
  function go(i, fromHash) {
    if (!N) return Promise.resolve();
    cur = Math.max(0, Math.min(N - 1, i | 0));
    $("wb-pos").textContent = `step ${cur + 1} of ${N}`;
    const drawn = draw(cur).catch(fail);
    keepInView();
    listRows();
    const hash = `#step=${cur + 1}`;
    if (!fromHash && location.hash !== hash) history.replaceState(null, "", hash);
    return drawn;
  }
  function step(d) {
    const k = pos();
    if (k < 0) go(order.length ? order[0] : cur + d);
    else go(order[(at = Math.max(0, Math.min(order.length - 1, k + d)))]);
  }
  function fromHash() {
    const m = /^#step=(\d+)$/.exec(location.hash);
    return m ? parseInt(m[1], 10) - 1 : null;
  }
  function play() {
    if (playing) { clearInterval(playing); playing = null; }
    else playing = setInterval(() => { if (pos() >= order.length - 1) play(); else step(1); }, 700);
    $("wb-play").textContent = playing ? "pause" : "play";
  }
  let asked = "";
  async function search(text) {
    const q = text.trim(), s = V.steps, found = [];
    asked = q;
    if (q) await Promise.all([loadAll(), readBundle()]);  // the cards and raw records are searched too
    if (asked !== q) return;  // a newer search was typed meanwhile
    if (!q) { for (let i = 0; i < N; i++) found.push(i); }
    else {
      const smart = q === q.toLowerCase(), want = smart ? q.toLowerCase() : q;
      for (let i = 0; i < N; i++) {
        const c = card(i);
        const hay = `${s.sum[i]}\n${c.what}\n${c.kind}\n${c.type}\n${c.where}\n${c.status}\n${rawLine(i) || ""}`;
        if ((smart ? hay.toLowerCase() : hay).includes(want)) found.push(i);
      }
    }
    order = found;
    $("wb-found").textContent = q ? `${order.length} of ${N} steps match` : "";
    $("wb-list").scrollTop = 0;
    listRows();
  }
  function typing(t) {
    const tag = (t && t.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea";
  }
  function keys(e) {
    if (typing(document.activeElement)) {
      if (e.key === "Escape") document.activeElement.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key;
    if (k === "j" || k === "ArrowDown" || k === "ArrowRight") step(1);
    else if (k === "k" || k === "ArrowUp" || k === "ArrowLeft") step(-1);
    else if (k === " ") play();
    else if (k === "Home") go(0);
    else if (k === "End" || k === "G") go(N - 1);
    else if (k === "g") $("wb-jump").focus();
    else if (k === "/") $("wb-search").focus();
    else return;
    e.preventDefault();
  }

  async function main() {
    V = await unpack($("wb-view").textContent);
    packed = $("wb-steps").textContent.split("\n");
    N = V.steps.kind.length;
    for (let i = 0; i < N; i++) order.push(i);
    header();
    const start = fromHash();
    await go(start === null ? 0 : start, true);
    if (!N) ready();
    readBundle().catch(fail);
    lanes();
    tree();
    ledgers();
    $("wb-list").addEventListener("scroll", () => requestAnimationFrame(listRows));
    $("wb-list").addEventListener("click", (e) => {
      const row = e.target.closest(".wb-item");
      if (row) go(parseInt(row.dataset.step, 10));
    });
    $("wb-prev").onclick = () => step(-1);
    $("wb-next").onclick = () => step(1);
    $("wb-play").onclick = play;
    $("wb-jump").addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      const n = parseInt(e.target.value.replace(/^#/, ""), 10);
      if (isFinite(n)) go(n - 1);
      e.target.value = "";
      e.target.blur();
    });
    let pending = null;
    $("wb-search").addEventListener("input", (e) => { clearTimeout(pending); pending = setTimeout(() => search(e.target.value).catch(fail), 150); });
    document.addEventListener("keydown", keys);
    window.addEventListener("hashchange", () => { const i = fromHash(); if (i !== null) go(i, true); });
    window.addEventListener("resize", lanes);
  }
  function fail(e) { $("wb-step").textContent = "this replay could not be read: " + e; }
  main().catch(fail);
})();
