"""What a report may take into itself from a results folder: only the drawings a run made.

A results folder may come from someone else. ``report`` copies a run's ``figure.png`` into
the self-contained page and its ``table.md`` into REPORT.md, so each is taken only when it
is a regular file inside that folder (not a link, not a directory), of a bounded size, and
of its kind: a PNG by its signature, a table as UTF-8 text. Anything else is left out, and
the folder is flagged with a one-line reason (``report`` then exits 5, as for a folder
that does not verify).
"""

from __future__ import annotations

from pathlib import Path

#: the drawings a run writes, and what each must be
DRAWINGS = ("figure.png", "table.md")
#: the first eight bytes of every PNG file
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the largest drawing taken in (a figure of the papers' specs is below 0.5 MB)
MAX_BYTES = 8 * 2**20


def problem(folder: Path, name: str) -> str | None:
    """Why ``folder/name`` may not be taken into a report, or None when it may (also None
    when it does not exist: there is nothing to take)."""
    path = folder / name
    if not path.is_symlink() and not path.exists():
        return None
    if path.is_symlink():
        return f"{path} is a symbolic link, not a drawing this run made: left out"
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside or not path.is_file():
        return f"{path} is not a regular file inside its results folder: left out"
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return f"{path} is {size:,} bytes, above the {MAX_BYTES:,} a drawing may take: left out"
        with path.open("rb") as f:
            head = f.read(len(PNG_SIGNATURE)) if name.endswith(".png") else f.read()
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror or exc}): left out"
    if name.endswith(".png"):
        return None if head == PNG_SIGNATURE else f"{path} is not a PNG image: left out"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return f"{path} is not UTF-8 text: left out"
    return None


def usable(folder: Path, name: str) -> bool:
    """Whether ``folder/name`` exists and may be taken into a report."""
    path = folder / name
    return path.is_file() and problem(folder, name) is None


def problems(results_dir: Path | str) -> dict[str, str]:
    """Folder name -> the first drawing problem, for every run folder under ``results_dir``."""
    out: dict[str, str] = {}
    for summary in sorted(Path(results_dir).glob("*/summary.csv")):
        folder = summary.parent
        for name in DRAWINGS:
            if reason := problem(folder, name):
                out.setdefault(folder.name, reason)
    return out
