"""An HTML page that plays the frames: play/pause, back, forward and a slider, no network."""

from __future__ import annotations

from html import escape

from .theme import Theme

# Button glyphs are ones every common font has (⏸ is missing from DejaVu and Liberation).
_SCRIPT = r"""
(function () {
  var frames = document.querySelectorAll('.frame');
  var slider = document.getElementById('where');
  var play = document.getElementById('play');
  var at = 0, timer = null;
  function show(i) {
    at = (i + frames.length) %% frames.length;
    frames.forEach(function (f, k) { f.hidden = k !== at; });
    slider.value = at;
    document.getElementById('count').textContent = 'step ' + at + ' of ' + (frames.length - 1);
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } play.textContent = '▶ play'; }
  function start() {
    stop(); play.textContent = '‖ pause';
    timer = setInterval(function () { show(at + 1); }, %(ms)d);
  }
  play.onclick = function () { timer ? stop() : start(); };
  document.getElementById('back').onclick = function () { stop(); show(at - 1); };
  document.getElementById('next').onclick = function () { stop(); show(at + 1); };
  slider.oninput = function () { stop(); show(parseInt(slider.value, 10)); };
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight') { stop(); show(at + 1); }
    else if (e.key === 'ArrowLeft') { stop(); show(at - 1); }
    else if (e.key === ' ') { e.preventDefault(); timer ? stop() : start(); }
  });
  var asked = /step=(\d+)/.exec(location.hash);  // page.html#step=3 opens at step 3
  show(asked ? Math.min(parseInt(asked[1], 10), frames.length - 1) : 0);
  if (%(autoplay)s) { start(); }
})();
"""


def html(title: str, svgs: list[str], t: Theme, ms: int = 1400, autoplay: bool = False) -> str:
    """The page: every frame's SVG inline (hidden but the one shown) and the controls."""
    body = "\n".join(f'<div class="frame" data-step="{i}"{" hidden" if i else ""}>'
                     f'{_inline(svg)}</div>' for i, svg in enumerate(svgs))
    last = len(svgs) - 1
    script = _SCRIPT % {"ms": ms, "autoplay": "true" if autoplay else "false"}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>
body {{ background: {t.background}; color: {t.text}; font-family: "DejaVu Sans", Arial, sans-serif; margin: 16px; }}
.controls {{ display: flex; gap: 10px; align-items: center; margin: 8px 0 12px; }}
button {{ font-size: 15px; padding: 4px 12px; background: {t.panel}; color: {t.text};
          border: 1px solid {t.muted}; border-radius: 6px; cursor: pointer; }}
input[type=range] {{ width: 320px; }}
.frame svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<div class="controls">
<button id="back" title="previous step (←)">◀ back</button>
<button id="play" title="play or pause (space)">▶ play</button>
<button id="next" title="next step (→)">next ▶</button>
<input id="where" type="range" min="0" max="{last}" value="0" aria-label="step">
<span id="count">step 0 of {last}</span>
</div>
{body}
<script>{script}</script>
</body>
</html>
"""


def _inline(svg: str) -> str:
    """An SVG document as an element inside HTML (without its XML declaration)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
