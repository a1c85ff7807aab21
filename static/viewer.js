// walkback viewer: keyboard shortcuts and back/forward, forwarded to the server as events.
// Fixed code only: nothing from a journal is ever interpolated here.
(function () {
  const KEYS = new Set(["j", "k", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " ", "/", "g", "G", "Home", "End"]);
  function typing(el) {
    if (!el) return false;
    const tag = (el.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || el.isContentEditable;
  }
  function ready() {
    return typeof window.emitEvent === "function" || typeof emitEvent === "function";
  }
  document.addEventListener("keydown", (e) => {
    if (typing(document.activeElement)) {
      if (e.key === "Escape") document.activeElement.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || !KEYS.has(e.key)) return;
    if (!document.querySelector(".wb-controls") || !ready()) return;
    e.preventDefault();
    emitEvent("wb_key", { key: e.key, repeat: e.repeat, shift: e.shiftKey });
  });
  document.addEventListener("keyup", (e) => {
    // a focused button would otherwise also be "clicked" by the space bar
    if (e.key === " " && !typing(document.activeElement) && document.querySelector(".wb-controls")) e.preventDefault();
  });
  // a step link inside rendered content (the conversation's "#12"): a move, not a page load
  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("a[data-pick]");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0 || !ready()) return;
    const n = parseInt(a.getAttribute("data-pick"), 10);
    if (!Number.isFinite(n)) return;
    e.preventDefault();
    emitEvent("wb_pick", n);
  });
  window.addEventListener("popstate", () => {
    if (ready()) emitEvent("wb_popstate", location.pathname + location.search);
  });
})();
