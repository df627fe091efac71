"""What `ringsim serve` adds to textual-serve's page: the terminal takes the keys at once.

textual-serve's page (xterm.js) gets the keys only once it has been clicked: until then the
TUI's footer stays blank (Textual hides it while the app is not focused) and no key works,
with nothing on the page to say so. This script focuses xterm.js's input as soon as the
terminal exists and again whenever the window comes back to the front, and while the
terminal does not have the keys a hint says to click (xterm.js: `Terminal.focus()` focuses
its helper textarea, the element that receives key presses), and tells the app it has the
focus as a click would (textual-serve's ["focus"] message), so that the footer shows.
"""

from __future__ import annotations

HINT_ID = "ringsim-keys-hint"
HINT_TEXT = "Click the page to use the keys (n next, ? help)"

PAGE_ADDITION = """
<style>
#%(id)s { position: fixed; right: 16px; bottom: 32px; z-index: 30; padding: 6px 12px;
  font: 15px "Roboto Mono", Menlo, monospace; color: #0c181f; background: #ffcc00;
  border-radius: 4px; cursor: pointer; display: none; }
body.-ringsim-unfocused #%(id)s { display: block; }
</style>
<div id="%(id)s" role="status">%(text)s</div>
<script>
(function () {
  function input() { return document.querySelector(".xterm-helper-textarea"); }
  function hasKeys() {
    var box = input();
    return box !== null && document.activeElement === box && document.hasFocus();
  }
  function showHint() { document.body.classList.toggle("-ringsim-unfocused", !hasKeys()); }
  function giveKeys() {
    var box = input();
    if (box) {
      box.focus();
      // textual-serve tells the app it has the focus (so that its footer shows the keys) from
      // a focus listener on xterm's screen element, which focusing the input does not reach.
      var screen = document.querySelector(".xterm-screen");
      if (screen) { screen.dispatchEvent(new FocusEvent("focus")); }
    }
    showHint();
  }
  // The terminal is created on the page's load event, and the app can be told it has the
  // focus once it has drawn (textual-serve marks the page "-first-byte" then).
  var tries = 0;
  var timer = setInterval(function () {
    tries += 1;
    var started = document.body.classList.contains("-first-byte");
    if (started && input()) { giveKeys(); }
    if ((started && hasKeys()) || tries > 600) { clearInterval(timer); showHint(); }
  }, 100);
  document.addEventListener("focusin", showHint);
  document.addEventListener("focusout", function () { setTimeout(showHint, 0); });
  window.addEventListener("focus", giveKeys);
  window.addEventListener("blur", showHint);
  document.getElementById("%(id)s").addEventListener("click", giveKeys);
})();
</script>
""" % {"id": HINT_ID, "text": HINT_TEXT}


def with_focus(page: str) -> str:
    """The page with the focus script added just before `</body>` (unchanged if it has none)."""
    head, found, tail = page.rpartition("</body>")
    return head + PAGE_ADDITION + found + tail if found else page
