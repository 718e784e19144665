"""One MLflow write of params, metrics and tags, as the store accepts them.

Values are cut to MLflow's length limits and stripped of credentials (:func:`redact_uri`)
before they leave the process; a batch larger than one ``log_batch`` call takes is split.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from harness.tracking.uri import redact_uri

__all__ = ["clean_tags", "log_batch", "now_ms"]

_MAX_PARAM = 500
_MAX_TAG = 5000
_PARAMS_PER_CALL = 100  # log_batch takes at most 100 params / 1000 metrics per call


def log_batch(
    client: Any,
    run_id: str,
    params: Mapping[str, Any] | None = None,
    metrics: Mapping[str, float] | None = None,
    tags: Mapping[str, Any] | None = None,
    step: int = 0,
    stamp: int | None = None,
) -> None:
    """Write to ``run_id``; ``stamp`` (ms) is the metrics' timestamp, now by default."""
    from mlflow.entities import Metric, Param, RunTag

    stamp = now_ms() if stamp is None else stamp
    param_list = [Param(str(k), _short(v, _MAX_PARAM)) for k, v in (params or {}).items()]
    metric_list = [Metric(str(k), float(v), stamp, step) for k, v in (metrics or {}).items()]
    tag_list = [RunTag(str(k), v) for k, v in clean_tags(tags or {}).items()]
    if not (param_list or metric_list or tag_list):
        return
    for i in range(0, max(len(param_list), 1), _PARAMS_PER_CALL):
        first = i == 0
        client.log_batch(
            run_id,
            params=param_list[i : i + _PARAMS_PER_CALL],
            metrics=metric_list if first else [],
            tags=tag_list if first else [],
        )


def clean_tags(values: Mapping[str, Any]) -> dict[str, str]:
    """Tag values as MLflow stores them: strings, short enough, without credentials."""
    return {str(k): _short(v, _MAX_TAG) for k, v in values.items()}


def _short(value: Any, limit: int) -> str:
    text = redact_uri(str(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def now_ms() -> int:
    return int(time.time() * 1000)
