"""An HTML page that plays the frames: play/pause, back, forward and a slider, no network.

The same text is a file a browser opens and a notebook output (IPython's HTML). In a notebook
it sits in someone else's page, beside other players and the cells being typed in, so it keeps
to itself: no element ids, every style under the player's class, its colours as CSS variables
on its own root, and keys only while the focus is inside the player (never in a text field).
"""

from __future__ import annotations

import re
from html import escape

from .theme import Theme

ROOT = "ringsim-player"  # the class of the player's root element; every style sits under it

# The script finds its own player: the root just before the script where the browser says which
# script runs (a file, JupyterLab), else the last one not yet started (a notebook that evaluates
# the script away from its place, as jQuery does): each player's script runs right after its
# HTML is inserted, so that one is its own.
# Next stops at the last step (a presenter's clicker must not jump back to the start); Play
# loops, as the GIF does. The slider's own keys move it (its input event shows the step), so
# the player's key handler leaves them alone, else one key press would step twice.
# Button glyphs are ones every common font has (⏸ is missing from DejaVu and Liberation).
_SCRIPT = r"""
(function () {
  var here = document.currentScript, root = here && here.previousElementSibling;
  if (!root || !root.classList || !root.classList.contains('%(root)s') || root.dataset.live) {
    var idle = document.querySelectorAll('.%(root)s:not([data-live])');
    root = idle[idle.length - 1];
  }
  if (!root) { return; }
  root.dataset.live = 'yes';
  function part(name) { return root.querySelector('[data-part="' + name + '"]'); }
  var frames = root.querySelectorAll('.frame');
  var slider = part('where'), play = part('play'), count = part('count');
  var last = frames.length - 1, at = 0, timer = null;
  function show(i) {
    at = Math.max(0, Math.min(last, i));
    frames.forEach(function (f, k) { f.hidden = k !== at; });
    slider.value = at;
    count.textContent = 'step ' + at + ' of ' + last;
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } play.textContent = '▶ play'; }
  function start() {
    stop(); play.textContent = '‖ pause';
    if (at === last) { show(0); }
    timer = setInterval(function () { show(at === last ? 0 : at + 1); }, %(ms)d);
  }
  function toggle() { if (timer) { stop(); } else { start(); } }
  function go(i) { stop(); show(i); }
  function keep() {  // a click on a control leaves the keys with this player (Safari does not focus buttons)
    if (!root.contains(document.activeElement)) { root.focus({preventScroll: true}); }
  }
  play.onclick = function () { toggle(); keep(); };
  part('back').onclick = function () { go(at - 1); keep(); };
  part('next').onclick = function () { go(at + 1); keep(); };
  slider.oninput = function () { go(parseInt(slider.value, 10)); };
  var moves = {ArrowRight: 1, ArrowDown: 1, PageDown: 1, ArrowLeft: -1, ArrowUp: -1, PageUp: -1};
  root.addEventListener('keydown', function (e) {
    var t = e.target, tag = t.tagName;
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    if (t !== slider && (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || t.isContentEditable)) { return; }
    var move = moves[e.key];
    if (move && t !== slider) { e.preventDefault(); go(at + move); }
    else if (e.key === 'Home' && t !== slider) { e.preventDefault(); go(0); }
    else if (e.key === 'End' && t !== slider) { e.preventDefault(); go(last); }
    else if (e.key === ' ' && tag !== 'BUTTON') { e.preventDefault(); toggle(); }
  });
  var alone = root.parentNode === document.body && document.querySelectorAll('.%(root)s').length === 1;
  var asked = alone && /step=(\d+)/.exec(location.hash);  // page.html#step=3 opens at step 3
  show(asked ? parseInt(asked[1], 10) : 0);
  if (alone) {  // a page of its own: keys work at once, and a ring round the whole page says nothing
    root.dataset.alone = 'yes';
    root.focus({preventScroll: true});
  }
  if (%(autoplay)s) { start(); }
})();
"""

# Selectors all start with the root's class, so nothing outside the player changes.
_STYLE = """
.{r} {{ background: var(--rsp-background); color: var(--rsp-text); padding: 8px 0;
  font-family: "DejaVu Sans", Arial, sans-serif; }}
.{r}:focus {{ outline: none; }}
.{r}:focus-visible {{ outline: 2px solid var(--rsp-muted); outline-offset: 2px; }}
.{r}[data-alone]:focus-visible {{ outline: none; }}
.{r} .controls {{ display: flex; gap: 10px; align-items: center; margin: 0 0 12px; }}
.{r} button {{ font: inherit; font-size: 15px; padding: 4px 12px; background: var(--rsp-panel);
  color: var(--rsp-text); border: 1px solid var(--rsp-muted); border-radius: 6px; cursor: pointer; }}
.{r} input[type=range] {{ width: 320px; }}
.{r} .frame svg {{ max-width: 100%; height: auto; }}
.{r}[data-fit][data-alone] .frame svg {{ display: block; margin: 0 auto;
  width: min(100%, calc((100vh - {room}px) * var(--rsp-aspect))); }}
"""

# A page of its own (a file on a projector) fits each picture to the window; in a notebook,
# among cells, it keeps its natural size. The height of the controls, the player's padding and
# the page's margins: a picture fitted to the window leaves them this much of its height.
CONTROLS_ROOM = 100
_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([0-9.]+)"[^>]*?\sheight="([0-9.]+)"')


def html(title: str, svgs: list[str], t: Theme, ms: int = 1400, autoplay: bool = False,
         fit: bool = True) -> str:
    """The page: every frame's SVG inline (hidden but the one shown) and the controls; with
    `fit` each picture on a page of its own grows or shrinks to the window, never stretched."""
    body = "\n".join(f'<div class="frame" data-step="{i}"{" hidden" if i else ""}{_aspect(svg)}>'
                     f'{_inline(svg)}</div>' for i, svg in enumerate(svgs))
    last = len(svgs) - 1
    script = _SCRIPT % {"ms": ms, "autoplay": "true" if autoplay else "false", "root": ROOT}
    colours = "; ".join(f"--rsp-{name}: {value}" for name, value in
                        (("background", t.background), ("panel", t.panel), ("text", t.text),
                         ("muted", t.muted)))
    # The body's own style is on its tag: a notebook drops <html>, <head> and <body> tags when
    # it inserts the page, so the notebook's page keeps its margins and colours.
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{_STYLE.format(r=ROOT, room=CONTROLS_ROOM)}</style>
</head>
<body style="margin: 16px; background: {t.background}">
<div class="{ROOT}" tabindex="0"{" data-fit" if fit else ""} role="group" aria-label="{escape(title)}: step by step (keys: ← → space)" style="{colours}">
<div class="controls">
<button type="button" data-part="back" title="previous step (←)">◀ back</button>
<button type="button" data-part="play" title="play or pause (space)">▶ play</button>
<button type="button" data-part="next" title="next step (→)">next ▶</button>
<input data-part="where" type="range" min="0" max="{last}" value="0" aria-label="step">
<span data-part="count">step 0 of {last}</span>
</div>
{body}
</div>
<script>{script}</script>
</body>
</html>
"""


def _aspect(svg: str) -> str:
    """The frame's style attribute that tells the player its picture's width over height."""
    found = _SIZE.search(svg)
    if not found or not float(found.group(2)):
        return ""
    return f' style="--rsp-aspect: {float(found.group(1)) / float(found.group(2)):.6f}"'


def _inline(svg: str) -> str:
    """An SVG document as an element inside HTML (without its XML declaration)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
