"""Write docs/cli.md, the command-line reference, from the commands' own help texts.

Every section is `dpcluster COMMAND --help` as click prints it (80 columns), so the page
says exactly what the installed commands say. A test (tests/test_commands.py) fails when
the committed page differs from what this script writes; rerun it after changing an
option or a help text.

    python scripts/make_cli_docs.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcluster.cli import main  # noqa: E402
from dpcluster.exits import markdown_table  # noqa: E402

PAGE = ROOT / "docs" / "cli.md"
WIDTH = 80

INTRO = """\
# Command-line reference

This page is generated from the commands' own `--help` by `scripts/make_cli_docs.py`; a
test fails when it falls behind them. The README has the overview, and
[Specs and outputs](specs.md) the spec grammar that `run`, `validate`, `plot` and
`analyze` read.
"""


def help_text(command: click.Command, name: str, parent: click.Context | None) -> str:
    """``dpcluster NAME --help`` as click formats it at :data:`WIDTH` columns."""
    ctx = click.Context(
        command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
    )
    return command.get_help(ctx).rstrip()


def render() -> str:
    """The whole page: exit codes, then ``dpcluster --help`` and each command's help."""
    parts = [INTRO, "## Exit codes\n", markdown_table()]
    top = click.Context(main, info_name="dpcluster", terminal_width=WIDTH)
    parts += ["", "## dpcluster\n", "```", help_text(main, "dpcluster", None), "```"]
    for name in sorted(main.commands):
        parts += [
            "",
            f"## dpcluster {name}\n",
            "```",
            help_text(main.commands[name], name, top),
            "```",
        ]
    return "\n".join(parts) + "\n"


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is stale")
    args = parser.parse_args()
    page = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != page:
            print(f"{PAGE} is stale: run python scripts/make_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
