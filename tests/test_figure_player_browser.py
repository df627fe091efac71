"""The .html player in a real browser: keys and clicks step it, once per press; it stops at the
last step; and, put twice into a page beside a text field the way a notebook shows an output,
each player answers only its own controls and keys, and leaves the page's typing and styles alone.

Headless Chromium is driven over its DevTools protocol (aiohttp's websocket); skips where no
Chromium is installed, as tests/tui/test_serve_browser.py does.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")
aiohttp = pytest.importorskip("aiohttp", reason="aiohttp (textual-serve's) is not installed")

from devtools import CHROMIUM, DevTools, free_port, start_chromium, stop, tab  # noqa: E402
from ringsim.algorithms.collectives import ALL_REDUCE  # noqa: E402
from ringsim.figures.output import render  # noqa: E402
from ringsim.sim.simulation import Simulation  # noqa: E402


pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)"),
    pytest.mark.slow,
    pytest.mark.xdist_group("chromium"),  # one Chromium at a time under pytest-xdist
]

KEYS = {"ArrowRight": 39, "ArrowLeft": 37, " ": 32, "End": 35, "Home": 36}

# How a notebook shows an output: the HTML put into a <div> of its page (which drops the
# <html>, <head> and <body> tags), then each script made again so that it runs. JupyterLab
# puts the new script where the old one was; the classic notebook (jQuery) runs it elsewhere.
NOTEBOOK = """<!DOCTYPE html><html><head><style>body {{ margin: 3px; }}</style></head><body>
<button id="host">host</button><textarea id="cell">x</textarea><div id="out1"></div><div id="out2"></div>
<script>
function put(id, html, inPlace) {{
  var out = document.getElementById(id); out.innerHTML = html;
  out.querySelectorAll('script').forEach(function (s) {{
    var n = document.createElement('script'); n.textContent = s.textContent;
    if (inPlace) {{ s.replaceWith(n); }} else {{ s.remove(); document.head.appendChild(n); n.remove(); }}
  }});
}}
put('out1', {first}, {in_place}); put('out2', {second}, {in_place});
</script></body></html>"""


def _page(steps_of: int = 4, theme: str = "light") -> str:
    return render(Simulation(ALL_REDUCE.plan(steps_of, "ring"), 8), ".html", theme=theme).decode()


class Browser(DevTools):
    """The player's tab: values, keys by name, clicks on an element, the step counters."""

    async def value(self, expression: str):
        return await self.evaluate(expression)

    async def press(self, key: str) -> None:
        text = {"text": key} if key == " " else {}
        await self.call("Input.dispatchKeyEvent", type="keyDown", key=key, windowsVirtualKeyCode=KEYS[key], **text)
        await self.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=KEYS[key])

    async def click(self, selector: str) -> None:
        x, y = await self.value(f"(function () {{ var r = document.querySelector({json.dumps(selector)})"
                                ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        await self.click_at(x, y)

    async def counts(self) -> list[str]:
        return await self.value("[...document.querySelectorAll('[data-part=count]')].map(c => c.textContent)")


@pytest.fixture
def browse(tmp_path):
    """browse(html, visit): the page opened in headless Chromium; what `await visit(browser)` returned."""
    def run(html: str, visit):
        page = tmp_path / "page.html"
        page.write_text(html, encoding="utf-8")
        port = free_port()
        chromium = start_chromium(port, tmp_path / "profile")

        async def session():
            async with tab(page.as_uri(), port, Browser) as browser:
                return await visit(browser)
        try:
            return asyncio.run(session())
        finally:
            stop(chromium)
    return run


def test_the_page_of_its_own_takes_keys_at_once_and_steps_once_per_press(browse):
    async def visit(b: Browser):
        seen = {"loaded": await b.counts()}
        await b.press("ArrowRight")
        await b.press("ArrowRight")
        seen["two rights"] = await b.counts()
        await b.click("[data-part=where]")  # the slider's middle: step 3 of 6
        seen["slider"] = await b.counts()
        await b.press("ArrowRight")
        seen["slider, right"] = await b.counts()
        await b.press("End")  # the slider's own key: to its end
        seen["slider, end"] = await b.counts()
        await b.click("[data-part=next]")
        seen["next at the end"] = await b.counts()
        await b.press("ArrowRight")
        seen["right at the end"] = await b.counts()
        await b.press("ArrowLeft")
        seen["left"] = await b.counts()
        return seen
    seen = browse(_page(), visit)
    assert seen["loaded"] == ["step 0 of 6"]
    assert seen["two rights"] == ["step 2 of 6"]
    assert seen["slider"] == ["step 3 of 6"]
    assert seen["slider, right"] == ["step 4 of 6"]  # once, not twice
    assert seen["slider, end"] == ["step 6 of 6"]
    assert seen["next at the end"] == ["step 6 of 6"]  # it stops there, never back to 0
    assert seen["right at the end"] == ["step 6 of 6"]
    assert seen["left"] == ["step 5 of 6"]


@pytest.mark.parametrize("in_place", [True, False], ids=["jupyterlab", "classic"])
def test_two_players_in_a_notebook_keep_to_themselves(browse, in_place):
    def quoted(page: str) -> str:  # a JavaScript string inside a <script>: "</" would end it
        return json.dumps(page).replace("</", "<\\/")
    html = NOTEBOOK.format(first=quoted(_page()), second=quoted(_page(8, "dark")), in_place=json.dumps(in_place))

    async def visit(b: Browser):
        seen = {"loaded": await b.counts(),
                "focus": await b.value("document.activeElement.tagName")}
        await b.click("#cell")
        await b.call("Input.dispatchKeyEvent", type="keyDown", key="End", windowsVirtualKeyCode=35)
        await b.call("Input.dispatchKeyEvent", type="keyUp", key="End", windowsVirtualKeyCode=35)
        for key in (" ", "ArrowLeft", "ArrowRight"):
            await b.press(key)
        seen["typed"] = await b.value("document.getElementById('cell').value")
        seen["after typing"] = await b.counts()
        await b.click("#out1 [data-part=next]")
        seen["first's next"] = await b.counts()
        await b.press("ArrowRight")  # the focus is in the first player now
        seen["first's key"] = await b.counts()
        await b.click("#out2 [data-part=next]")
        await b.press("ArrowRight")
        seen["second's"] = await b.counts()
        seen["host"] = await b.value(
            "(function () { var s = getComputedStyle(document.getElementById('host'));"
            " return [getComputedStyle(document.body).margin, s.fontSize, s.borderRadius]; })()")
        return seen
    seen = browse(html, visit)
    assert seen["loaded"] == ["step 0 of 6", "step 0 of 14"]
    assert seen["focus"] == "BODY"  # an output never takes the focus from the notebook
    assert seen["typed"] == "x "  # the space went into the text field
    assert seen["after typing"] == ["step 0 of 6", "step 0 of 14"]
    assert seen["first's next"] == ["step 1 of 6", "step 0 of 14"]
    assert seen["first's key"] == ["step 2 of 6", "step 0 of 14"]
    assert seen["second's"] == ["step 2 of 6", "step 2 of 14"]
    assert seen["host"] == ["3px", "13.3333px", "0px"]  # the page's own styles, untouched


SHOWN = ("(function () { var r = document.querySelector('.frame:not([hidden]) svg').getBoundingClientRect();"
         " return [r.width, r.height, innerWidth, innerHeight]; })()")


def test_the_player_grows_to_a_wide_window_keeping_its_aspect_ratio(browse):
    natural = 680 / 502  # the 4-GPU ring's picture, 680 x 502 px

    async def visit(b: Browser):
        seen = {}
        for w, h in ((2560, 1440), (2560, 700), (500, 900)):  # a projector, a short strip, a phone
            await b.call("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=False)
            seen[w, h] = await b.value(SHOWN)
        return seen
    seen = browse(_page(), visit)
    for (w, h), (sw, sh, iw, ih) in seen.items():
        assert abs(sw / sh - natural) < 0.01, (w, h, sw, sh)  # never stretched
        assert sw <= iw and sh <= ih - 40, (w, h, sw, sh)  # within the window, below the controls
    assert seen[2560, 1440][1] > 1100  # fills a projector's height, far past its natural 502 px
    assert seen[2560, 700][1] > 560  # a short window: as tall as it leaves room for
    assert seen[500, 900][0] < 480  # a narrow one: as wide as the window
    # --dimensions sets the player's size: it keeps that, shrinking only to fit a window.
    sized = render(Simulation(ALL_REDUCE.plan(4, "ring"), 8), ".html", size=(900, 0)).decode()

    async def asked(b: Browser):
        await b.call("Emulation.setDeviceMetricsOverride", width=2560, height=1440, deviceScaleFactor=1, mobile=False)
        return await b.value(SHOWN)
    assert round(browse(sized, asked)[0]) == 900
