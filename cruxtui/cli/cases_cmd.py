"""`cruxtui cases`: list, show, replay, collect (from runs), export and curate saved failure cases.

Exit status of `cruxtui cases replay` (for CI): 0 when every case reproduced as recorded (its
failure came back in at least `--min-rate` of the N replays; default: all of them); 1 when any case
no longer fails as recorded (fixed or only partly reproduced); 3 when any case could not be
replayed at all (endpoint unreachable, bad case file); 2 for usage errors, as every command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.cli.runs_cmd import add_store_option

if TYPE_CHECKING:
    from cruxtui.core.cases.case_file import CaseError, FailureCase

EXIT_REPRODUCED, EXIT_CHANGED, EXIT_UNREPLAYABLE = 0, 1, 3


def register(sub: Subparsers) -> None:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: `cruxtui --cases DIR cases list` (top-level option) must not be reset by a default.
    common.add_argument(
        "--cases",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the gallery folder (default: $CRUXTUI_CASES_DIR, else ./cases)",
    )
    p = sub.add_parser(
        "cases",
        help="saved failure cases: list, show, replay, export, curate",
        description="Saved failure cases (one JSON file each, in ./cases by default).",
        epilog="replay exit status: 0 every case reproduced as recorded, 1 some case no longer "
        "fails as recorded, 3 some case could not be replayed (unreachable endpoint, bad file).",
    )
    acts = p.add_subparsers(dest="cases_action", metavar="ACTION", required=True)

    ls = acts.add_parser("list", parents=[common], help="list the gallery's cases")
    _add_filters(ls)
    ls.add_argument("--json", action="store_true", help="one JSON object per case, per line")
    ls.set_defaults(func=run_list)

    show = acts.add_parser("show", parents=[common], help="show one case")
    show.add_argument("case", metavar="CASE", help="case file, file name or unique name prefix")
    show.add_argument("--json", action="store_true", help="print the case file's JSON")
    show.set_defaults(func=run_show)

    rp = acts.add_parser(
        "replay",
        parents=[common],
        help="re-run cases' prompts and report 'reproduced k/N'",
        epilog="exit status: 0 every case reproduced, 1 some case changed, 3 some case not replayable",
    )
    rp.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files or folders (default: the gallery folder)",
    )
    rp.add_argument("-n", type=int, default=5, help="replays per case (default 5)")
    rp.add_argument(
        "--endpoint",
        metavar="NAME",
        help="replay on a named endpoint from config.toml instead of the recorded model",
    )
    rp.add_argument("--model", help="replay on this model instead of the recorded one")
    rp.add_argument(
        "--base-url", metavar="URL", help="replay against this OpenAI-compatible server"
    )
    rp.add_argument("--api", choices=("chat", "completions"), help="endpoint kind for --base-url")
    rp.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    rp.add_argument(
        "--min-rate",
        type=float,
        default=1.0,
        metavar="R",
        help="a case counts as reproduced when at least this fraction of its replays "
        "fail (default 1.0: all)",
    )
    _add_filters(rp)
    rp.add_argument("--json", action="store_true", help="one JSON summary object")
    rp.set_defaults(func=run_replay)

    fr = acts.add_parser("from-run", parents=[common], help="save a stored run's failures as cases")
    fr.add_argument("run", metavar="RUN", help="run id (or unique prefix), see `cruxtui runs`")
    fr.add_argument(
        "--failed", action="store_true", help="only samples with at least one failing generation"
    )
    fr.add_argument("--samples", metavar="ID,ID,...", help="only these samples")
    fr.add_argument(
        "--transform",
        action="append",
        default=[],
        metavar="NAME[:PARAMS]",
        help="rebuild the run's variants made by this transform (as in a sweep's grid, e.g. "
        "rename:anonymize), so their cases record the variant (repeatable)",
    )
    fr.add_argument("--tag", action="append", default=[], help="tag every new case (repeatable)")
    fr.add_argument("--note", default="", help="note for every new case")
    add_store_option(fr)
    add_dataset_option(fr)
    fr.set_defaults(func=run_from_run)

    ex = acts.add_parser("export", parents=[common], help="write the gallery as HTML or Markdown")
    what = ex.add_mutually_exclusive_group(required=True)
    what.add_argument("--html", metavar="OUT.html", help="one self-contained HTML page")
    what.add_argument("--markdown", metavar="OUT.md", help="one Markdown file")
    _add_filters(ex)
    ex.add_argument("--title", default="cruxtui failure gallery")
    ex.set_defaults(func=run_export)

    tg = acts.add_parser("tag", parents=[common], help="add (or --remove) tags of a case")
    tg.add_argument("case", metavar="CASE")
    tg.add_argument("tags", nargs="*", metavar="TAG")
    tg.add_argument("--remove", action="append", default=[], metavar="TAG", help="tag to remove")
    tg.set_defaults(func=run_tag)

    nt = acts.add_parser("note", parents=[common], help="set the note of a case")
    nt.add_argument("case", metavar="CASE")
    nt.add_argument("text", help="the new note ('' clears it)")
    nt.set_defaults(func=run_note)


def _add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tag", help="only cases with this tag")
    p.add_argument(
        "--model-name",
        dest="model_filter",
        metavar="TEXT",
        help="only cases whose model name contains TEXT",
    )
    p.add_argument("--task", choices=("output", "input"), help="only cases of this task")


# Loading --------------------------------------------------------------------------------------
def _gallery(args: argparse.Namespace) -> tuple[list[FailureCase], list[CaseError]]:
    from cruxtui.core.cases.case_file import cases_dir, load_gallery, select_cases

    cases, errors = load_gallery(cases_dir(getattr(args, "cases", None)))
    return select_cases(cases, tag=args.tag, model=args.model_filter, task=args.task), errors


def _warn(errors: list[CaseError]) -> None:
    for err in errors:
        print(f"cruxtui: skipped {err}", file=sys.stderr)


def _one(args: argparse.Namespace) -> FailureCase:
    """The case named on the command line: a path, or a name in the gallery folder."""
    from cruxtui.core.cases.case_file import (
        CaseError,
        cases_dir,
        find_case,
        load_case,
        load_gallery,
    )

    ref = Path(args.case)
    try:
        if ref.suffix == ".json" and ref.exists():
            return load_case(ref)
        cases, errors = load_gallery(cases_dir(getattr(args, "cases", None)))
        try:
            return find_case(cases, args.case)
        except KeyError as exc:
            broken = [
                e for e in errors if Path(e.path).stem.startswith(ref.name.removesuffix(".json"))
            ]
            if broken:
                raise CliError(str(broken[0])) from None
            raise CliError(f"{exc.args[0]} in {cases_dir(getattr(args, 'cases', None))}") from None
    except CaseError as exc:
        raise CliError(str(exc)) from None


# list / show ----------------------------------------------------------------------------------
def run_list(args: argparse.Namespace) -> int:
    cases, errors = _gallery(args)
    _warn(errors)
    if args.json:
        for c in cases:
            print(json.dumps(_summary(c), sort_keys=True))
        return 0
    rows = [
        (
            c.name,
            c.task,
            c.mode,
            c.model.model,
            f"{c.failures}/{len(c.generations)}",
            ", ".join(c.tags),
            c.note.splitlines()[0] if c.note else "",
        )
        for c in cases
    ]
    print(f"{len(cases)} case(s)")
    for line in _columns(("case", "task", "mode", "model", "failed", "tags", "note"), rows):
        print(line)
    return 0


def _columns(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Aligned plain columns, one line per row at any terminal width.

    Every column but the last gets its full width (the case name is what `show` takes); the last
    (the note) is cut with an ellipsis at the terminal's edge, or goes on its own indented line
    when the terminal is too narrow, so a gallery never wraps a word per line as a boxed table
    does at 80 columns.
    """
    width = shutil.get_terminal_size((100, 24)).columns
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
        for i, h in enumerate(headers[:-1])
    ]
    head_width = sum(widths) + 2 * len(widths)
    # Too narrow for a useful last column beside the others: it goes on a line of its own.
    below = width - head_width < 24
    out = []
    for n, cells in enumerate((headers, *rows)):
        head = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False))
        if below:
            out.append(_cut(head.rstrip(), width))
            if n and cells[-1]:
                out.append(_cut("  " + cells[-1], width))
        else:
            out.append(_cut(head + "  " + cells[-1], width).rstrip())
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _summary(c: FailureCase) -> dict[str, Any]:
    return {
        "name": c.name,
        "path": str(c.path) if c.path else None,
        "sample_id": c.sample_id,
        "task": c.task,
        "mode": c.mode,
        "model": c.model.model,
        "backend": c.model.backend,
        "failed": c.failures,
        "generations": len(c.generations),
        "tags": c.tags,
        "note": c.note,
        "created": c.created,
    }


def run_show(args: argparse.Namespace) -> int:
    case = _one(args)
    if args.json:
        sys.stdout.write(case.dumps())
        return 0
    from rich.console import Console

    from cruxtui.core.cases.render import render_case

    Console().print(render_case(case))
    return 0


# export / tag / note --------------------------------------------------------------------------
def run_export(args: argparse.Namespace) -> int:
    from cruxtui.core.cases.gallery import export_html, export_markdown
    from cruxtui.core.util.atomic import write_shared_text

    cases, errors = _gallery(args)
    _warn(errors)
    if not cases:
        raise CliError("no cases to export" + (f" with tag {args.tag!r}" if args.tag else ""))
    out = Path(args.html or args.markdown)
    text = export_html(cases, args.title) if args.html else export_markdown(cases, args.title)
    try:
        write_shared_text(out, text)
    except OSError as exc:
        raise CliError(f"{out}: cannot write ({exc.strerror or exc})") from None
    print(f"wrote {len(cases)} case(s) to {out}")
    return 0


def run_tag(args: argparse.Namespace) -> int:
    if not args.tags and not args.remove:
        raise CliError("give tags to add, or --remove TAG")
    return _edit(args, add_tags=args.tags, remove_tags=args.remove)


def run_note(args: argparse.Namespace) -> int:
    return _edit(args, note=args.text)


def _edit(args: argparse.Namespace, **changes: Any) -> int:
    from cruxtui.core.cases.case_file import CaseError, edit_case

    case = _one(args)
    if case.path is None:  # `_one` loads from a file, so it has one
        raise CliError(f"{case.name}: not a saved case")
    try:
        updated = edit_case(case.path, **changes)
    except (CaseError, ValueError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"{case.path}: cannot write ({exc.strerror or exc})") from None
    note = repr(updated.note.splitlines()[0]) if updated.note else "(none)"
    print(f"{updated.name}: tags {', '.join(updated.tags) or '(none)'}; note {note}")
    return 0


# replay ---------------------------------------------------------------------------------------
def run_replay(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise CliError("-n must be at least 1")
    if not 0 < args.min_rate <= 1:
        raise CliError("--min-rate must be in (0, 1]")
    from cruxtui.core.cases.case_file import cases_dir, load_paths, select_cases

    paths = args.paths or [cases_dir(getattr(args, "cases", None))]
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise CliError(f"no such file or folder: {', '.join(missing)}")
    cases, errors = load_paths(paths)
    cases = select_cases(cases, tag=args.tag, model=args.model_filter, task=args.task)
    _warn(errors)
    if not cases and not errors:
        raise CliError(f"no cases in {', '.join(map(str, paths))}")
    backend = None
    if args.endpoint or args.base_url or args.model:
        from cruxtui.core.models import ModelError
        from cruxtui.core.models.endpoints import open_backend

        try:
            backend = open_backend(
                endpoint=args.endpoint,
                base_url=args.base_url,
                model=args.model,
                api=args.api,
                timeout=args.timeout,
            )
        except ModelError as exc:
            raise CliError(exc.message) from None
    reports = asyncio.run(_replay_all(cases, args, backend))
    unreplayable = bool(errors) or any(r.status in ("unreachable", "error") for r in reports)
    changed = any(r.status != "reproduced" for r in reports)
    status = EXIT_UNREPLAYABLE if unreplayable else EXIT_CHANGED if changed else EXIT_REPRODUCED
    if args.json:
        print(
            json.dumps(
                {
                    "exit_status": status,
                    "reproduced": sum(r.status == "reproduced" for r in reports),
                    "cases": len(reports),
                    "n": args.n,
                    "results": [r.to_json() for r in reports],
                    "errors": [{"path": e.path, "problem": e.problem} for e in errors],
                },
                indent=2,
                sort_keys=True,
            )
        )
    else:
        _print_replays(reports, errors)
    return status


async def _replay_all(
    cases: list[FailureCase], args: argparse.Namespace, backend: Any
) -> list[Any]:
    from cruxtui.core.cases.replay import replay_case

    gate = asyncio.Semaphore(4)

    async def one(case: FailureCase) -> Any:
        async with gate:
            report = await replay_case(
                case, args.n, backend=backend, timeout=args.timeout, min_rate=args.min_rate
            )
            print(f"  {case.name}: {report.summary}", file=sys.stderr)
            return report

    try:
        return list(await asyncio.gather(*(one(c) for c in cases)))
    finally:
        if backend is not None:
            await backend.aclose()


def _print_replays(reports: list[Any], errors: list[CaseError]) -> None:
    from rich.console import Console
    from rich.table import Table

    ok = sum(r.status == "reproduced" for r in reports)
    table = Table(
        title=f"{ok} of {len(reports)} case(s) reproduced as recorded", title_justify="left"
    )
    for col in ("case", "model", "status", "result", "what changed"):
        table.add_column(col, overflow="fold")
    styles = {
        "reproduced": "green",
        "partly": "yellow",
        "fixed": "red",
        "unreachable": "red",
        "error": "red",
    }
    for r in reports:
        table.add_row(
            r.case,
            r.model.model,
            f"[{styles[r.status]}]{r.status}[/]",
            r.summary,
            "; ".join(r.changes) or "; ".join(r.errors),
        )
    for e in errors:
        table.add_row(Path(e.path).name, "", "[red]bad file[/]", e.problem, "")
    Console().print(table)


# from-run -------------------------------------------------------------------------------------
def run_from_run(args: argparse.Namespace) -> int:
    from cruxtui.cli.options import open_dataset
    from cruxtui.cli.runs_cmd import open_store
    from cruxtui.core.cases.build import cases_from_run
    from cruxtui.core.cases.case_file import (
        CaseError,
        case_path,
        cases_dir,
        load_case,
        merge_tags,
        save_case,
    )
    from cruxtui.core.runs.store import RunStoreError

    try:
        tags = merge_tags([], args.tag)
    except ValueError as exc:
        raise CliError(f"--tag: {exc}") from None
    samples = [x.strip() for x in (args.samples or "").split(",") if x.strip()] or None
    dataset = open_dataset(args)
    with open_store(args) as store:
        try:
            variants = _run_variants(store, args.run, dataset, args.transform)
            result = cases_from_run(
                store,
                args.run,
                dataset,
                failed_only=args.failed,
                samples=samples,
                tags=tags,
                note=args.note,
                variants=variants,
            )
        except (RunStoreError, ValueError) as exc:
            raise CliError(str(exc)) from None
    folder = cases_dir(getattr(args, "cases", None))
    new = updated = 0
    for case in result.cases:
        existing = case_path(case, folder)
        if existing.exists():
            # Saved before: keep its curation (tags, note, created), add the new tags.
            try:
                old = load_case(existing)
            except CaseError:
                old = None
            if old is not None:
                case.tags = merge_tags(old.tags, case.tags)
                case.note = args.note or old.note
                case.created = old.created
                updated += 1
        else:
            new += 1
        try:
            save_case(case, folder)
        except OSError as exc:
            raise CliError(f"{folder}: cannot write ({exc.strerror or exc})") from None
    print(f"saved {len(result.cases)} case(s) in {folder} ({new} new, {updated} updated)")
    for why in result.skipped[:10]:
        print(f"  skipped {why}", file=sys.stderr)
    if len(result.skipped) > 10:
        print(f"  ... and {len(result.skipped) - 10} more skipped", file=sys.stderr)
    if not args.transform and any("~" in why.split(":", 1)[0] for why in result.skipped):
        print(
            "  (a variant is saved when --transform names what made it, e.g. "
            "--transform rename:anonymize)",
            file=sys.stderr,
        )
    return 0


def _run_variants(store: Any, run: str, dataset: Any, transforms: list[str]) -> dict[str, Any]:
    """The run's variants made by `transforms`, rebuilt from their base samples (deterministic:
    the ids come out as the sweep or the Perturb screen stored them)."""
    if not transforms:
        return {}
    from cruxtui.core.perturb.variant_set import TransformError, build_variants, check_transform

    stored = store.counts(store.run(run).id)
    bases = list(dict.fromkeys(sid.split("~", 1)[0] for sid in stored if "~" in sid))
    parents = [s for s in (dataset.get(b) for b in bases) if s is not None]
    variants: dict[str, Any] = {}
    for text in transforms:
        try:
            variants |= build_variants(check_transform(text), parents).variants
        except TransformError as exc:
            raise CliError(f"--transform: {exc}") from None
    return variants
