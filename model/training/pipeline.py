"""The training pipeline: one command runs a recipe of named stages and ends in a model folder.

``python -m model.training.pipeline RECIPE --data DIR --work DIR [--device cpu|cuda|auto] [--jobs N] [--stage NAME]
[--set STAGE.OPTION=VALUE ...] [--plan]``. ``RECIPE`` is a TOML file or a recipe of ``model/training/recipes/``
(``bundled``, ``teacher_gpu``, ``cpu_distill``): a ``[recipe]`` table (``result``: the stage whose folder is the model; ``jobs``: stages side
by side; ``extends``: a recipe this one overrides option by option; ``description``) and ``[stages.NAME]`` tables:
``kind`` (:data:`KINDS`), ``threads`` and that kind's options (its dataclass fields). An input option names a stage
above (it gets that stage's output) or a file; ``SET:K`` / ``SET%N`` repeat a transfer set K times or sample N
rows; ``{artifacts}`` is ``model/training/artifacts`` and ``{root}`` the repository root. Each stage writes
``WORK/NAME``, ``WORK/NAME.jsonl.gz`` or ``WORK/NAME.npz`` under a ``.part`` name, renamed when complete, and is skipped
when that output exists: a rerun resumes at the first unfinished stage. With ``jobs`` > 1 stages whose inputs are
ready run side by side as subprocesses (logs: ``WORK/NAME.log``); ``WORK/stages.jsonl`` logs each finished stage's
wall time and ``WORK/recipe.json`` the recipe as run (file, overrides, stages). Exit codes: 2 for bad input (data
folder, recipe, stage or option; one line on stderr), 1 when a stage failed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from model.datasets.splits import UsageError, check_data
from model.files.atomic import atomic_write_bytes

from . import counterfactual, distill, finetune_hf, interpolate, select, teacher_artifact, transfer
from .common import ROOT, make_options, pick_device

RECIPES = Path(__file__).resolve().parent / "recipes"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
_HEAD = {"description", "result", "jobs", "extends"}


@dataclass(frozen=True)
class Kind:
    """A stage kind: ``run(data, out, options, device) -> dict`` writes ``out``; ``options`` is its dataclass;
    ``suffix`` is ``""`` for a folder output, else the file suffix; ``inputs`` name the options that take inputs."""

    run: Callable
    options: type
    suffix: str = ""
    inputs: tuple[str, ...] = ()


KINDS = {
    "teacher": Kind(finetune_hf.finetune, finetune_hf.TeacherOptions),
    "augment": Kind(transfer.write_augmented, transfer.AugmentOptions, ".jsonl.gz", ("teacher",)),
    "sentences": Kind(transfer.write_sentences, transfer.SentenceOptions, ".jsonl.gz", ("teacher",)),
    "mlm": Kind(distill.pretrain, distill.MLMOptions),
    "distill": Kind(distill.distill, distill.DistillOptions, "", ("init", "teacher", "augmented")),
    "negations": Kind(counterfactual.write_negations, counterfactual.NegationOptions, ".jsonl.gz", ("sentences",)),
    "git": Kind(interpolate.from_git, interpolate.GitOptions),
    "interpolate": Kind(interpolate.write_interpolations, interpolate.InterpolateOptions, "", ("base", "finetuned")),
    "select": Kind(select.select_model, select.SelectOptions, "", ("candidates",)),
    "artifact": Kind(teacher_artifact.write_artifact_stage, teacher_artifact.ArtifactOptions, ".npz",
                     ("teacher", "sets", "score")),
}


def _refs(value) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


def _base(ref: str) -> str:
    """A reference without its ``:K`` / ``%N`` suffix (:func:`.transfer.parse_spec`)."""
    return transfer.parse_spec(ref)[0]


@dataclass
class Recipe:
    """A loaded recipe: its file, ``result`` stage, ``jobs`` and ``stages`` (name -> option table, in order)."""

    path: Path
    result: str
    jobs: int
    stages: dict[str, dict]

    def output(self, work: Path, name: str, part: bool = False) -> Path:
        """Where stage ``name`` writes: ``work/NAME``, ``work/NAME.jsonl.gz`` or ``work/NAME.npz`` (``NAME.part...`` while
    running)."""
        return work / f"{name}{'.part' if part else ''}{KINDS[self.stages[name]['kind']].suffix}"

    def needs(self, name: str) -> list[str]:
        """The stages that stage ``name``'s inputs name, in option order."""
        table = self.stages[name]
        refs = [_base(r) for key in KINDS[table["kind"]].inputs for r in _refs(table.get(key, []))]
        return [r for r in dict.fromkeys(refs) if r in self.stages]

    def options(self, name: str, work: Path | None = None):
        """Stage ``name``'s options dataclass; with ``work``, inputs naming stages become those stages' outputs.
        Raises UsageError for an unknown option or an input that is neither a stage nor an existing file."""
        table = self.stages[name]
        kind, values = KINDS[table["kind"]], {k: v for k, v in table.items() if k not in ("kind", "threads")}
        for key in (k for k in kind.inputs if k in values):
            refs = _refs(values[key])
            if bad := [r for r in refs if _base(r) not in self.stages and not Path(_base(r)).exists()]:
                raise UsageError(f"stage {name}: {key} = {bad[0]!r} is neither a stage of the recipe nor a file")
            if work is not None:
                refs = [str(self.output(work, _base(r))) + r[len(_base(r)):] if _base(r) in self.stages else r
                        for r in refs]
                values[key] = refs if isinstance(values[key], list) else refs[0]
        return make_options(kind.options, values, f"stage {name}")


def find_recipe(name: str, here: Path = Path()) -> Path:
    """A recipe file: ``name``, ``here/name`` or ``model/training/recipes/NAME(.toml)``; UsageError when none."""
    for path in (here / name, Path(name), RECIPES / name, RECIPES / f"{name}.toml"):
        if path.is_file():
            return path.resolve()
    raise UsageError(f"recipe not found: {name} (bundled: {', '.join(sorted(p.stem for p in RECIPES.glob('*.toml')))})")


def _places(text: str) -> str:
    """``text`` with ``{artifacts}`` and ``{root}`` replaced by their folders."""
    return text.replace("{artifacts}", ARTIFACTS.as_posix()).replace("{root}", ROOT.as_posix())


def _read(path: Path, seen: tuple = ()) -> dict:
    """A recipe file's tables with its ``extends`` chain merged in (this file wins, option by option)."""
    if path in seen:
        raise UsageError(f"recipe {path}: extends itself")
    try:
        raw = tomllib.loads(_places(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"recipe {path}: {exc}") from None
    if not (parent := raw.get("recipe", {}).get("extends")):
        return raw
    merged = _read(find_recipe(str(parent), path.parent), (*seen, path))
    merged.setdefault("recipe", {}).pop("extends", None)
    for table in ("recipe", "stages"):
        for key, value in raw.get(table, {}).items():
            old = merged.setdefault(table, {}).get(key)
            merged[table][key] = {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
    return merged


def load_recipe(name: str, sets: list[str] = ()) -> Recipe:
    """Read, merge (``extends``), override (``--set STAGE.OPTION=VALUE``, VALUE as TOML or else a string) and check
    a recipe. Raises UsageError when it is bad (syntax, keys, kinds, options, inputs, order)."""
    path = find_recipe(name)
    raw = _read(path)
    head, stages = raw.get("recipe", {}), raw.get("stages", {})
    tables = [head, stages, *(stages.values() if isinstance(stages, dict) else ())]
    if not all(type(t) is dict for t in tables) or not stages or set(head) - _HEAD or set(raw) - {"recipe", "stages"}:
        raise UsageError(f"recipe {path}: expected [recipe] ({', '.join(sorted(_HEAD))}) and [stages.NAME] tables")
    for item in sets:
        key, _, value = _places(item).partition("=")
        stage, _, option = key.partition(".")
        if not (value and option and stage in stages):
            raise UsageError(f"--set {item}: expected STAGE.OPTION=VALUE with a stage of the recipe")
        try:
            stages[stage][option] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            stages[stage][option] = value
    recipe = Recipe(path, str(head.get("result", "")), int(head.get("jobs", 1)), stages)
    if recipe.result not in stages:
        raise UsageError(f"recipe {path}: result = {recipe.result!r} is not one of its stages")
    for i, (stage, table) in enumerate(recipe.stages.items()):
        if table.get("kind") not in KINDS:
            raise UsageError(f"stage {stage}: kind must be one of {', '.join(KINDS)}, got {table.get('kind')!r}")
        recipe.options(stage)
        if later := [n for n in recipe.needs(stage) if list(recipe.stages).index(n) >= i]:
            raise UsageError(f"stage {stage}: uses {', '.join(later)}, which must come before it in the recipe")
    return recipe


def plan(recipe: Recipe, target: str, work: Path) -> list[str]:
    """The stages to run for ``target``, in the recipe's order: ``target`` and what it needs, directly or through
    other stages to run, whose outputs are missing (a done stage needs nothing more)."""
    todo: list[str] = []
    for name in reversed(recipe.stages):
        if not recipe.output(work, name).exists() and (name == target or any(name in recipe.needs(d) for d in todo)):
            todo.insert(0, name)
    return todo


def run_stage(recipe: Recipe, name: str, data: Path, work: Path, device: torch.device) -> dict:
    """Run one stage into its ``.part`` output, rename it when complete and log it; returns the stage's info."""
    kind, table = KINDS[recipe.stages[name]["kind"]], recipe.stages[name]
    part, final = recipe.output(work, name, part=True), recipe.output(work, name)
    part.unlink(missing_ok=True) if kind.suffix else part.mkdir(parents=True, exist_ok=True)  # a folder may resume
    threads = torch.get_num_threads()
    torch.set_num_threads(int(table.get("threads") or threads))
    print(f"[pipeline] {name} ({table['kind']}) -> {final}", file=sys.stderr, flush=True)
    t0 = time.time()
    try:
        info = kind.run(data, part, recipe.options(name, work), device)
    finally:
        torch.set_num_threads(threads)
    part.rename(final)
    entry = {"stage": name, "kind": table["kind"], "wall_s": round(time.time() - t0, 2), "device": str(device),
             "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(work / "stages.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    print(f"[pipeline] {name} done in {entry['wall_s']} s", file=sys.stderr, flush=True)
    return info or {}


def run_side_by_side(recipe: Recipe, todo: list[str], work: Path, child_args: list[str], jobs: int) -> list[str]:
    """Run the stages ``todo`` as subprocesses (``--stage NAME``), up to ``jobs`` at once, each once the stages it
    needs are done; returns the stages that failed (logs: ``WORK/NAME.log``). After a failure none is started."""
    running: dict[str, subprocess.Popen] = {}
    failed: list[str] = []
    while True:
        for name, proc in list(running.items()):
            if proc.poll() is not None:
                del running[name]
                failed += [name] if proc.returncode else []
                print(f"[pipeline] {name} {'failed' if proc.returncode else 'finished'}", file=sys.stderr, flush=True)
        ready = [n for n in todo if all(recipe.output(work, d).exists() for d in recipe.needs(n))]
        for name in ready[: max(0, jobs - len(running))] if not failed else []:
            todo.remove(name)
            with open(work / f"{name}.log", "w") as log:
                running[name] = subprocess.Popen([sys.executable, "-m", "model.training.pipeline", *child_args,
                                                  "--stage", name], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
            print(f"[pipeline] {name} started (log: {work / f'{name}.log'})", file=sys.stderr, flush=True)
        if not running:
            return failed + todo  # what is left waited on a failed stage
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    """Run the recipe (or ``--stage``); prints the result folder and the stages run as one JSON line. Returns 0,
    1 (a stage failed) or 2 (bad input)."""
    p = argparse.ArgumentParser(description="Run a training recipe (model/training/recipes/*.toml).")
    p.add_argument("recipe", help="a recipe file, or the name of a bundled one (bundled, teacher_gpu, cpu_distill)")
    p.add_argument("--data", required=True, help="folder with train/test/unsup .jsonl.gz (.jsonl.xz, .jsonl)")
    p.add_argument("--work", required=True, help="folder for every stage's output (created)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--jobs", type=int, default=0, help="stages side by side (0: the recipe's jobs)")
    p.add_argument("--stage", default="", help="run this stage (and what it needs) instead of the whole recipe")
    p.add_argument("--set", action="append", default=[], metavar="STAGE.OPTION=VALUE", help="override an option")
    p.add_argument("--plan", action="store_true", help="list the stages to run and exit")
    args = p.parse_args(argv)
    try:
        recipe = load_recipe(args.recipe, args.set)
        if args.stage and args.stage not in recipe.stages:
            raise UsageError(f"unknown stage {args.stage!r} (the recipe's stages: {', '.join(recipe.stages)})")
        data, device, work = check_data(args.data).resolve(), pick_device(args.device), Path(args.work).resolve()
        todo = plan(recipe, args.stage or recipe.result, work)
        if args.plan:
            for n in recipe.stages:
                state = "to run" if n in todo else "done" if recipe.output(work, n).exists() else "not needed"
                print(f"{n:14} {recipe.stages[n]['kind']:12} {state:10} {recipe.output(work, n)}")
            return 0
        work.mkdir(parents=True, exist_ok=True)
        as_run = json.dumps({"file": str(recipe.path.relative_to(ROOT) if recipe.path.is_relative_to(ROOT) else
                                         recipe.path), "set": args.set, "stages": recipe.stages}, indent=1).encode()
        if not (work / "recipe.json").is_file() or (work / "recipe.json").read_bytes() != as_run:
            atomic_write_bytes(work / "recipe.json", as_run)  # the recipe as run: provenance (teacher_artifact)
        if (jobs := args.jobs or recipe.jobs) > 1 and len(todo) > 1:
            child = [str(recipe.path), "--data", str(data), "--work", str(work), "--device", args.device, "--jobs", "1",
                     *(f"--set={s}" for s in args.set)]
            if failed := run_side_by_side(recipe, list(todo), work, child, jobs):
                print(f"error: stage(s) {', '.join(failed)} failed or not run; see {work}/NAME.log", file=sys.stderr)
                return 1
        for name in todo:
            if not recipe.output(work, name).exists():
                run_stage(recipe, name, data, work, device)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"result": str(recipe.output(work, args.stage or recipe.result)), "ran": todo}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
