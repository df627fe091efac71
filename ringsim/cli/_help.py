"""--help at the output's width: argparse's own layout, with long lists of choices named instead."""

from __future__ import annotations

import argparse

from ..core.width import output_width


class FittingHelp(argparse.HelpFormatter):
    """argparse's help wrapped to core.width's width where there is one (argparse's own where
    not). There, a list of choices too long for its line ({ring,master,…} beside two flags)
    is shown as the option's NAME, and its help ends with the choices, where they can wrap."""

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
