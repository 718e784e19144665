"""The end-of-session summary a user reads in the terminal: in full after one session, one
line per session in a sweep (whose end prints the comparison table of all of them)."""

from __future__ import annotations

from harness.records import is_full
from harness.session.confirm import confirmation
from harness.session.options import resume_command
from harness.session.session import SessionResult
from harness.space import Config, Space

__all__ = ["brief", "format_value", "summary"]


def format_value(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    text = f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{text} {unit}".rstrip()


def _side_by_side(result: SessionResult) -> list[str]:
    """The metrics a utility or constraint reads, default vs best (for constrained sessions)."""
    names = getattr(result.objective, "reported_metrics", ())
    default, best = result.default, result.answer
    if not names or best is None:
        return []
    rows = ["  metrics (default → best):"]
    for name in names:
        before = default.metrics.get(name) if default else None
        rows.append(f"    {name}: {format_value(before)} → {format_value(best.metrics.get(name))}")
    return rows


def _knob(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _configuration(config: Config, space: Space | None) -> list[str]:
    """The best configuration with units, then the settings of it that give a guarantee up."""
    knobs = {name: space[name] for name in config if space is not None and name in space}
    lines = ["  best configuration:"]
    for name, value in config.items():
        unit = knobs[name].unit if name in knobs else ""
        lines.append(f"    {name} = {_knob(value)}" + (f" {unit}" if unit else ""))
    risky = [
        (name, value, knob.risk, value == knob.default)
        for name, value in config.items()
        if (knob := knobs.get(name)) is not None
        and knob.risk is not None
        and knob.risk.applies_to(value)
    ]
    if risky:
        lines.append("  settings that trade safety for speed (pin them to be safe):")
    for name, value, risk, as_default in risky:
        same = " (so does the default)" if as_default else ""
        lines.append(f"    {name} = {_knob(value)}: {risk.says}{same}")
    return lines


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


def _confirmed(result: SessionResult) -> list[str]:
    """The confirmation line (harness.session.confirm), when the session ran one."""
    found = confirmation(result.objective, result.references)
    if found is None:
        return []
    return ["  " + found.line(lambda v: format_value(v, result.objective.unit))]


def brief(result: SessionResult) -> str:
    """One line for a sweep's job: status, best, improvement, tests and the folder."""
    best = format_value(result.value(result.answer), result.objective.unit)
    message = f" ({result.message})" if result.message else ""
    return (
        f"session {result.session_id}: {result.status}{message}, best {best} "
        f"({_percent(result.improvement())} over the default), "
        f"{len(result.observations)} tests; {result.directory}"
    )


def summary(result: SessionResult) -> str:
    """Best configuration, its metric, improvement over default, and where the runs are."""
    objective = result.objective
    obs = result.observations
    counts: dict[str, int] = {}
    for o in obs:
        counts[o.status.value] = counts.get(o.status.value, 0) + 1
    if screened := sum(not is_full(o) for o in obs):  # a fraction of a full test each
        counts["screening runs"] = screened
    lines: list[str] = [
        f"Session {result.session_id}: {result.status}"
        + (f" ({result.message})" if result.message else ""),
        f"  tests: {len(obs)} (" + ", ".join(f"{k.lower()} {v}" for k, v in counts.items()) + ")",
        f"  objective: {objective.direction}imise {objective.metric}",
        f"  default:   {format_value(result.value(result.default), objective.unit)}"
        + (
            " (infeasible)"
            if result.default and result.default.status.value == "INFEASIBLE"
            else ""
        ),
    ]
    constraints = getattr(objective, "constraints", ())
    if constraints:
        lines.append(
            "  constraints: " + "; ".join(str(getattr(c, "text", c)) for c in constraints)
        )
    best = result.answer
    if best is None:
        lines.append("  no test succeeded; see the messages in samples.csv")
    else:
        lines += [
            f"  {'answer' if result.answer_trial is not None else 'best'}:"
            f"{' ' * (4 if result.answer_trial is not None else 6)}"
            f"{format_value(result.value(best), objective.unit)} "
            f"(trial {best.trial}{_measured_times(result)})",
            *_best_beside_answer(result),
            f"  improvement over default: {_percent(result.improvement())}"
            + (
                f"; vs the nearest default re-measurement: "
                f"{_percent(result.improvement_vs_nearest())}"
                if result.references
                else ""
            ),
            *_side_by_side(result),
            *_confirmed(result),
            *_configuration(best.config, result.space),
        ]
    lines += [f"  {line}" for line in result.notes]
    lines += [
        f"  tuner computation: {result.tuner_seconds:.2f} s",
        f"  samples:  {result.csv_path}",
        f"  tracking: {result.tracking}",
    ]
    if result.status == "INTERRUPTED":
        lines.append(f"  resume with: {resume_command(result.directory)}")
    return "\n".join(lines)


def _best_beside_answer(result: SessionResult) -> list[str]:
    """The best measured test, when the tuner answered with another one (its own rule)."""
    best = result.best
    if result.answer_trial is None or best is None:
        return []
    value = format_value(result.value(best), result.objective.unit)
    return [f"  (the tuner's own answer; the best measured test: {value}, trial {best.trial})"]


def _measured_times(result: SessionResult) -> str:
    """ ", the test nearest the mean of its 3 measurements" when the answer was re-measured."""
    times = result.measurements_of_answer()
    return f", the test nearest the mean of its {times} measurements" if times > 1 else ""
