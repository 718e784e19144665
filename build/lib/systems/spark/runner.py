"""The job process of one Spark test: ``python -m systems.spark.runner <request.json>``.

It starts a SparkSession with the requested master and properties (a fresh JVM), prints
``SPARK_STARTED <seconds>``, then generates data or runs a job and prints
``SPARK_RESULT <json>`` with the job duration and the job's summary. The harness side
(:mod:`systems.spark.workload`) parses these lines; anything before ``SPARK_STARTED`` failing
means the configuration prevented Spark from starting.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(request_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    began = time.perf_counter()
    from pyspark.sql import SparkSession

    from systems.spark import jobs

    builder = SparkSession.builder.master(request["master"]).appName(f"harness-{request['job']}")
    for key, value in request["properties"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # A trivial action proves the executor threads can run tasks (e.g. task.cpus > threads).
    spark.range(4, numPartitions=2).count()
    print(f"SPARK_STARTED {time.perf_counter() - began:.3f}", flush=True)
    data, out = Path(request["data"]), Path(request["out"])
    started = time.perf_counter()
    if request["mode"] == "generate":
        jobs.GENERATORS[request["job"]](spark, data, float(request["scale"]), int(request["seed"]))
        summary: dict[str, object] = {}
    else:
        summary = jobs.JOBS[request["job"]](spark, data, out)
    duration = time.perf_counter() - started
    spark.stop()
    print("SPARK_RESULT " + json.dumps({"job_s": duration, "summary": summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
