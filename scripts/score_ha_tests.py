#!/usr/bin/env python3
"""Score ``hub ask --no-llm`` on Home Assistant's own English intent tests.

Usage: ``python scripts/score_ha_tests.py DIR [--failures N] [--json]``

``DIR`` is a folder of home-assistant/intents test YAML files (``tests/en`` of that repository,
kept outside this repo) with its ``_fixtures.yaml``. The fixtures become a ``[home]`` (areas
with their floors, entities with domain = the id's prefix, state, attributes; lights get the
brightness and color features), every sentence of every other file is sent through one
``hub ask --no-llm --json -`` process (this checkout's ``hub`` package), and each result is
compared with the test's intent and slots:

- intent right: the intent name equals the test's;
- intent + slots right: also every slot the test names has the test's value (text compared
  case-insensitively, numbers numerically; entity and area slots as names).

A test's ``context: area`` becomes ``[home] satellite_area`` (one hub process per area).

Prints one line per intent and the totals; ``--failures N`` lists N wrong sentences.
Exit 0 when scored, 2 when DIR has no fixtures or no tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _plain_name(name: str) -> str:
    """A hassil template name ("Trader Joe[']s") as plain text ("Trader Joe's")."""
    return re.sub(r"[\[\]()]", "", str(name).split("|")[0]).strip()


def _value(value):
    """A fixture attribute value: numeric strings become numbers."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number
    return value


def _valid_state(domain: str, state: str) -> bool:
    """Whether ``state`` is one of ``domain``'s states (``hub/data/domains.toml``); the few
    fixture states Home Assistant itself would not give (a weather "clear") are left out, so
    the entity keeps its idle state instead of failing the whole ``[home]``."""
    import tomllib

    states = (
        tomllib.loads((ROOT / "hub" / "data" / "domains.toml").read_text(encoding="utf-8"))
        .get(domain, {})
        .get("states", ["*"])
    )
    if "*" in states or state in states:
        return True
    print(
        f"score_ha_tests: {domain} state {state!r} left out (not a {domain} state)", file=sys.stderr
    )
    return False


def home_from_fixtures(fixtures: dict) -> dict:
    """The ``[home]`` table for HA's ``_fixtures.yaml`` (first entity wins a duplicate name)."""
    floors = {f["id"]: f["name"] for f in fixtures.get("floors", [])}
    areas = {a["id"]: a for a in fixtures.get("areas", [])}
    home = {"floors": [{"name": n} for n in floors.values()], "areas": [], "entities": []}
    for area in areas.values():
        table = {"name": area["name"]}
        if area.get("floor") in floors:
            table["floor"] = floors[area["floor"]]
        home["areas"].append(table)
    seen = set()
    for ent in fixtures.get("entities", []):
        name = _plain_name(ent["name"])
        if name.casefold() in seen:
            continue
        seen.add(name.casefold())
        table = {"name": name, "domain": ent["id"].split(".", 1)[0]}
        if ent.get("area") in areas:
            table["area"] = areas[ent["area"]]["name"]
        state = ent.get("state")
        # {in: "normal", out: "off"}: ``in`` is how it is said, ``out`` the entity's state
        state = state.get("out", state.get("in")) if isinstance(state, dict) else state
        if state not in (None, "") and _valid_state(table["domain"], str(state)):
            table["state"] = str(state)
        if ent.get("attributes"):
            table["attributes"] = {k: _value(v) for k, v in ent["attributes"].items()}
        if table["domain"] == "light":
            table["features"] = ["brightness", "color"]
        home["entities"].append(table)
    return home


def _toml_value(value) -> str:
    """A TOML value for a string, number, bool, list or flat table (JSON string escapes are
    valid TOML basic strings)."""
    if isinstance(value, dict):
        return (
            "{ "
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
            + " }"
        )
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def home_toml(home: dict) -> str:
    """The ``[home]`` table as a TOML document (arrays of tables per kind)."""
    lines = ["[home]", 'language = "en"']
    if home.get("satellite_area"):
        lines.append(f"satellite_area = {_toml_value(home['satellite_area'])}")
    for kind in ("floors", "areas", "entities"):
        for table in home[kind]:
            lines.append(f"[[home.{kind}]]")
            lines += [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    return "\n".join(lines) + "\n"


def load_cases(folder: Path) -> list[tuple[str, str, str, dict, str]]:
    """``(file, sentence, expected intent, expected slots, context area)`` of every test."""
    cases = []
    for path in sorted(folder.rglob("*.yaml")):
        if path.name.startswith("_"):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for test in data.get("tests", []) or []:
            intent = test.get("intent") or {}
            area = (
                (intent.get("context") or {}).get("area")
                or (test.get("context") or {}).get("area")
                or ""
            )
            for sentence in test.get("sentences", []):
                cases.append(
                    (
                        path.name,
                        sentence,
                        intent.get("name", ""),
                        intent.get("slots") or {},
                        area if isinstance(area, str) else "",
                    )
                )
    return cases


def _same(expected, actual) -> bool:
    """True when a slot value matches (lists: any of them; numbers numerically)."""
    if isinstance(expected, list):
        return any(_same(e, actual) for e in expected)
    if actual is None:
        return False
    try:
        return float(expected) == float(actual)
    except (TypeError, ValueError):
        return _plain_name(expected).casefold() == str(actual).strip().casefold()


def slots_right(expected: dict, actual: dict) -> bool:
    """True when every expected slot has the expected value in ``actual``."""
    return all(_same(v, actual.get(k)) for k, v in expected.items())


def run_hub(config: Path, sentences: list[str]) -> list[dict]:
    """One ``hub ask --no-llm --json -`` over ``sentences``; one result dict each."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "hub", "ask", "--no-llm", "--json", "--config", str(config), "-"],
        input="\n".join(sentences) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    results = []
    for line in proc.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "event" not in obj:
            results.append(obj)
    if len(results) != len(sentences):
        sys.exit(
            f"score_ha_tests: hub gave {len(results)} results for {len(sentences)} "
            f"sentences: {proc.stderr.strip()[-500:]}"
        )
    return results


def hassil_results(home: dict, cases: list) -> list[dict]:
    """Plain hassil (Home Assistant's matcher, no hub) on the installed home-assistant-intents
    templates with this home's names (context: domain and device class, as Home Assistant's
    default agent gives), areas and floors: ``{"intent", "slots"}`` per case.

    Home Assistant's CI passes every test of a release with these templates, so a test that
    plain hassil misses here comes from another release of the tests (its sentences or slot
    names changed since) and is reported apart (``--version-check``).
    """
    from hassil import Intents, recognize_best
    from hassil.expression import TextChunk
    from hassil.intents import TextSlotList, TextSlotValue
    from home_assistant_intents import get_intents

    intents = Intents.from_dict(get_intents("en"))
    names = []
    for ent in home["entities"]:
        context = {"domain": ent["domain"]}
        if (ent.get("attributes") or {}).get("device_class"):
            context["device_class"] = ent["attributes"]["device_class"]
        names.append(TextSlotValue(TextChunk(ent["name"]), ent["name"], context))
    lists = {
        "name": TextSlotList(name="name", values=names),
        "area": TextSlotList.from_strings([a["name"] for a in home["areas"]], name="area"),
        "floor": TextSlotList.from_strings([f["name"] for f in home["floors"]], name="floor"),
    }
    out = []
    for _file, sentence, _intent, _slots, area in cases:
        context = {"area": {"value": area, "text": area}} if area else {}
        try:
            result = recognize_best(sentence, intents, slot_lists=lists, intent_context=context)
        except Exception:
            result = None
        out.append(
            {
                "intent": result.intent.name if result else None,
                "slots": {e.name: e.value for e in result.entities_list} if result else {},
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Score the folder; print per-intent and total accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--failures", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--version-check",
        action="store_true",
        help="also score plain hassil and the hub on the tests plain hassil "
        "gets right (the tests of the installed templates' release)",
    )
    args = parser.parse_args(argv)
    fixtures_path = args.folder / "_fixtures.yaml"
    cases = load_cases(args.folder) if args.folder.is_dir() else []
    if not fixtures_path.is_file() or not cases:
        print(f"score_ha_tests: {args.folder}: no _fixtures.yaml or no tests", file=sys.stderr)
        return 2
    home = home_from_fixtures(yaml.safe_load(fixtures_path.read_text(encoding="utf-8")))
    results = run_by_area(home, cases)
    if args.version_check:
        plain = hassil_results(home, cases)
        keep = [
            i
            for i, (c, r) in enumerate(zip(cases, plain, strict=True))
            if r["intent"] == c[2] and slots_right(c[3], r["slots"])
        ]
        print(f"plain hassil on all {len(cases)} sentences:")
        report(cases, plain, argparse.Namespace(json=False, failures=0), total_only=True)
        print(f"the hub on all {len(cases)} sentences:")
        report(cases, results, argparse.Namespace(json=False, failures=0), total_only=True)
        print(
            f"the hub on the {len(keep)} sentences plain hassil gets right (this release's tests):"
        )
        cases, results = [cases[i] for i in keep], [results[i] for i in keep]
    return report(cases, results, args)


def run_by_area(home: dict, cases: list) -> list[dict]:
    """Results in case order: one hub process per satellite area (the tests' context area)."""
    results: list = [None] * len(cases)
    areas = {a["name"] for a in home["areas"]}
    for area in sorted({c[4] for c in cases}):
        index = [i for i, c in enumerate(cases) if c[4] == area]
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "hub.toml"
            config.write_text(
                home_toml({**home, "satellite_area": area if area in areas else ""}),
                encoding="utf-8",
            )
            for i, result in zip(index, run_hub(config, [cases[i][1] for i in index]), strict=True):
                results[i] = result
    return results


def report(cases, results, args, total_only: bool = False) -> int:
    """Print the score table (and failures); ``total_only``: the TOTAL line only."""
    per = defaultdict(lambda: [0, 0, 0])
    failures = []
    for (file, sentence, intent, slots, _area), result in zip(cases, results, strict=True):
        row = per[intent]
        row[0] += 1
        ok_intent = result.get("intent") == intent
        ok_slots = ok_intent and slots_right(slots, result.get("slots") or {})
        row[1] += ok_intent
        row[2] += ok_slots
        if not ok_slots:
            failures.append(
                (file, sentence, intent, slots, result.get("intent"), result.get("slots"))
            )
    total = [sum(r[i] for r in per.values()) for i in range(3)]
    if args.json:
        print(
            json.dumps(
                {
                    "sentences": total[0],
                    "intent": total[1],
                    "intent_slots": total[2],
                    "per_intent": per,
                }
            )
        )
    else:
        for intent, (n, a, b) in sorted(per.items()) if not total_only else ():
            print(f"{intent:32} {n:4}  intent {a / n:6.1%}  intent+slots {b / n:6.1%}")
        print(
            f"{'TOTAL':32} {total[0]:4}  intent {total[1] / total[0]:6.1%}  "
            f"intent+slots {total[2] / total[0]:6.1%}"
        )
        for failure in failures[: args.failures]:
            print("FAIL", *failure, sep=" | ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
