"""--help at the output's width: argparse's own layout, with long lists of choices named instead,
usage lines that fit and section headings wrapped."""

from __future__ import annotations

import argparse

from ..core.width import output_width, wrap


class FittingHelp(argparse.HelpFormatter):
    """argparse's help wrapped to core.width's width where there is one (argparse's own where
    not). There, a list of choices too long for its line ({ring,master,…} beside two flags)
    is shown as the option's NAME, and its help ends with the choices, where they can wrap;
    usage lines and section headings are kept within the width too."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        limit = output_width()
        self._limited = limit is not None
        if width is None and limit is not None:
            width = limit - 2  # argparse keeps two columns spare
        super().__init__(prog, indent_increment, max_help_position, width)

    def _named(self, action: argparse.Action) -> bool:
        """Whether the action's {a,b,c} would overflow its usage part or its option line."""
        if not self._limited or action.metavar is not None or action.choices is None:
            return False
        listed = 2 + sum(len(str(c)) + 1 for c in action.choices) - 1
        flags = action.option_strings or [action.dest]
        usage = len("usage: ") + len(self._prog) + 1 + len(flags[0]) + 3 + listed
        line = 2 + sum(len(f) + 1 + listed for f in flags) + 2 * (len(flags) - 1)
        return max(usage, line) > self._width

    def _metavar_formatter(self, action, default_metavar):
        if self._named(action):
            return lambda size: (default_metavar,) * size
        return super()._metavar_formatter(action, default_metavar)

    def _get_help_string(self, action):
        text = super()._get_help_string(action) or ""
        if self._named(action):
            # the help is a %-format (%(default)s): a choice's own % must stay a character
            text += "; one of: " + ", ".join(str(c) for c in action.choices).replace("%", "%%")
        return text

    def _format_usage(self, usage, actions, groups, prefix):
        text = super()._format_usage(usage, actions, groups, prefix)
        if not self._limited or all(len(line) <= self._width for line in text.splitlines()):
            return text
        # argparse lines the options up under the end of 'usage: ringsim walk ', which leaves
        # a narrow window too little room for '[--bandwidth [LEVEL=]B]': there, they go under
        # 'usage: ' instead (less far in where the widest needs it), each option still whole.
        prefix = prefix or "usage: "
        lead, body = prefix + self._prog, " ".join(text.strip().split("\n"))
        if not body.startswith(lead):
            return text
        # Alternatives wider than any line ('[--model MODEL | --layers SPEC]') part after a '|'.
        parts = [piece for part in _parts(body[len(lead):])
                 for piece in (part.replace(" | ", " |\n").split("\n")
                               if len(part) > self._width - 2 else [part])]
        lines = [lead]
        hang = " " * max(min(len(prefix), self._width - max(map(len, parts), default=0)), 2)
        for part in parts:
            if len(lines[-1]) + 1 + len(part) <= self._width:
                lines[-1] += " " + part
            else:
                lines.append(hang + part)
        return "\n".join(lines) + "\n\n"

    def _format_action_invocation(self, action):
        text = super()._format_action_invocation(action)
        if self._limited and action.option_strings and action.nargs != 0 and \
                self._current_indent + len(text) > self._width:
            # '-a ALGORITHM, --algorithm ALGORITHM' names the value twice: where that does not
            # fit, once after the last flag, as Python 3.13's argparse always does.
            value = self._format_args(action, self._get_default_metavar_for_optional(action))
            return ", ".join(action.option_strings) + " " + value
        return text

    def start_section(self, heading):
        """Start a section, its heading wrapped where argparse would print it whole."""
        if self._limited and heading:  # argparse prints a heading whole, however long
            heading = wrap(heading, max(self._width - self._current_indent - 1, 1))
        super().start_section(heading)


def _parts(usage: str) -> list[str]:
    """The options of a usage line, each bracketed group whole: '[--model MODEL | --layers SPEC]'."""
    parts, depth, current = [], 0, ""
    for c in usage:
        if c == " " and depth == 0:
            parts += [current] if current else []
            current = ""
            continue
        depth += (c in "[({") - (c in "])}")
        current += c
    return parts + ([current] if current else [])
