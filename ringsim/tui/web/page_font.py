"""What `ringsim serve` changes in textual-serve's page: its font comes from this server.

textual-serve's page links Google Fonts' stylesheet for Roboto Mono, the font its terminal
(xterm.js) asks for first. Offline, or behind a firewall, that request fails and the page
falls back to whatever monospace the browser has; online, every visit asks Google. The same
font ships inside textual-serve (static/fonts, Apache-2.0, unused by its page), so the page
names it with @font-face from this server instead, preloaded so that it is there when the
terminal measures its cells (xterm.js measures once, when the page's load event opens it),
and every stylesheet or font link to another site is dropped: nothing is fetched from outside.
"""

from __future__ import annotations

import re

# The files textual-serve ships: (path under its static folder, CSS font-style).
FONT_FILES = (("fonts/RobotoMono-VariableFont_wght.ttf", "normal"),
              ("fonts/RobotoMono-Italic-VariableFont_wght.ttf", "italic"))
FAMILY = "Roboto Mono"

# A <link> element and its address; one that names another host (http://…, https://…,
# //…) is dropped. textual-serve's only such link is the Google Fonts stylesheet.
_LINK = re.compile(r"""<link\b[^>]*?\bhref\s*=\s*(["']?)([^"'\s>]*)\1[^>]*>\s*""", re.IGNORECASE)
_ELSEWHERE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def font_css(urls: dict[str, str]) -> str:
    """@font-face rules for Roboto Mono from this server's own addresses, by font-style."""
    rules = []
    for style, url in urls.items():
        rules.append(f'@font-face {{ font-family: "{FAMILY}"; font-style: {style}; '
                     f'font-weight: 100 700; font-display: block; '
                     f'src: url("{url}") format("truetype"); }}')
    return "\n".join(rules)


def with_local_font(page: str, urls: dict[str, str], origins: set[str]) -> str:
    """The page with links to sites other than `origins` (this server's "http://host:port"
    names) removed and Roboto Mono named from `urls` (font-style → this server's address of
    the file; empty: the local monospace fonts only)."""
    def keep_own(link: re.Match) -> str:
        address = link.group(2)
        own = any(address.lower().startswith(origin.lower() + "/") for origin in origins)
        return link.group(0) if own or not _ELSEWHERE.match(address) else ""
    page = _LINK.sub(keep_own, page)
    preloads = "".join(f'<link rel="preload" href="{url}" as="font" type="font/ttf" crossorigin>\n'
                       for style, url in urls.items() if style == "normal")
    # Without a file the page's own font lists go on to local fonts: the terminal's (in
    # textual-serve's script) is Roboto Mono, Monaco, Courier New, monospace.
    style = f"<style>\n{font_css(urls)}\n</style>\n" if urls else ""
    head, found, tail = page.partition("</head>")
    return head + preloads + style + found + tail if found else page
