"""HiBench-like Spark jobs and their deterministic data generators (run inside the job process).

Each job has a generator (once per session, seeded Spark expressions, written as Parquet or
text) and a job that reads the data, computes, and returns a small summary that proves the work
was done (row counts, sums). Scale 1.0 is sized so that the default configuration takes roughly
10-20 s on a 2-core machine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["GENERATORS", "JOBS"]

Summary = dict[str, Any]


# -- generators -------------------------------------------------------------------------------
def gen_pagerank(spark: SparkSession, out: Path, scale: float, seed: int) -> None:
    vertices = max(100, int(30_000 * scale))
    edges = spark.range(8 * vertices, numPartitions=4).select(
        F.floor(F.rand(seed) * vertices).cast("long").alias("src"),
        # squared uniform: a skewed in-degree, as in web graphs
        F.floor(F.pow(F.rand(seed + 1), 2) * vertices).cast("long").alias("dst"),
    )
    edges.where("src != dst").dropDuplicates().write.parquet(str(out / "edges"))


def gen_terasort(spark: SparkSession, out: Path, scale: float, seed: int) -> None:
    rows = max(1000, int(500_000 * scale))
    records = spark.range(rows, numPartitions=4).select(
        F.substring(
            F.sha2(F.concat_ws(":", F.lit(seed), F.col("id").cast("string")), 256), 1, 10
        ).alias("key"),
        F.rpad(F.col("id").cast("string"), 90, "x").alias("value"),
    )
    records.write.parquet(str(out / "records"))


def gen_kmeans(spark: SparkSession, out: Path, scale: float, seed: int) -> None:
    rows, dims, centres = max(1000, int(100_000 * scale)), 10, 8
    columns = [
        ((F.col("id") % centres) * 5.0 + F.randn(seed + j)).alias(f"f{j}") for j in range(dims)
    ]
    spark.range(rows, numPartitions=4).select(*columns).write.parquet(str(out / "points"))


def gen_wordcount(spark: SparkSession, out: Path, scale: float, seed: int) -> None:
    lines, vocabulary = max(1000, int(200_000 * scale)), 5000
    words = [
        F.concat(F.lit("w"), F.floor(F.pow(F.rand(seed + j), 3) * vocabulary).cast("string"))
        for j in range(12)
    ]
    spark.range(lines, numPartitions=4).select(F.concat_ws(" ", *words).alias("value")).write.text(
        str(out / "text")
    )


def gen_join(spark: SparkSession, out: Path, scale: float, seed: int) -> None:
    pages, visits = max(100, int(20_000 * scale)), max(1000, int(400_000 * scale))
    spark.range(pages, numPartitions=2).select(
        F.concat(F.lit("url"), F.col("id").cast("string")).alias("pageURL"),
        F.floor(F.rand(seed) * 1000).cast("int").alias("pageRank"),
        F.floor(F.rand(seed + 1) * 100).cast("int").alias("avgDuration"),
    ).write.parquet(str(out / "rankings"))
    spark.range(visits, numPartitions=4).select(
        F.concat(F.lit("ip"), F.floor(F.rand(seed + 2) * visits / 20).cast("string")).alias(
            "sourceIP"
        ),
        F.concat(F.lit("url"), F.floor(F.pow(F.rand(seed + 3), 2) * pages).cast("string")).alias(
            "destURL"
        ),
        F.date_add(
            F.lit("1998-01-01").cast("date"), F.floor(F.rand(seed + 4) * 1000).cast("int")
        ).alias("visitDate"),
        (F.rand(seed + 5) * 100).alias("adRevenue"),
        F.rpad(F.lit("Mozilla/5.0"), 40, "-").alias("userAgent"),
    ).write.parquet(str(out / "uservisits"))


# -- jobs -------------------------------------------------------------------------------------
def run_pagerank(spark: SparkSession, data: Path, out: Path) -> Summary:
    edges = spark.read.parquet(str(data / "edges"))
    degree = edges.groupBy("src").agg(F.count("*").alias("deg"))
    links = edges.join(degree, "src").localCheckpoint()
    ranks: DataFrame = (
        edges.select(F.col("src").alias("id"))
        .union(edges.select(F.col("dst").alias("id")))
        .distinct()
        .withColumn("rank", F.lit(1.0))
    )
    for _ in range(4):
        contribs = links.join(ranks, links.src == ranks.id).select(
            F.col("dst").alias("id"), (F.col("rank") / F.col("deg")).alias("c")
        )
        ranks = (
            contribs.groupBy("id")
            .agg((F.lit(0.15) + F.lit(0.85) * F.sum("c")).alias("rank"))
            .localCheckpoint()
        )
    row = ranks.agg(F.count("*").alias("n"), F.sum("rank").alias("total")).first()
    assert row is not None
    return {"vertices": int(row["n"]), "rank_sum": float(row["total"])}


def run_terasort(spark: SparkSession, data: Path, out: Path) -> Summary:
    records = spark.read.parquet(str(data / "records"))
    records.orderBy("key").write.mode("overwrite").parquet(str(out / "sorted"))
    written = spark.read.parquet(str(out / "sorted"))
    return {"records": written.count()}


def run_kmeans(spark: SparkSession, data: Path, out: Path) -> Summary:
    from pyspark.ml.clustering import KMeans
    from pyspark.ml.feature import VectorAssembler

    points = spark.read.parquet(str(data / "points"))
    features = (
        VectorAssembler(inputCols=points.columns, outputCol="features")
        .transform(points)
        .select("features")
        .cache()
    )
    model = KMeans(k=8, maxIter=8, seed=1, initSteps=2).fit(features)
    return {
        "points": features.count(),
        "iterations": model.summary.numIter,
        "cost": float(model.summary.trainingCost),
    }


def run_wordcount(spark: SparkSession, data: Path, out: Path) -> Summary:
    text = spark.read.text(str(data / "text"))
    counts = text.select(F.explode(F.split("value", " ")).alias("word")).groupBy("word").count()
    counts.write.mode("overwrite").parquet(str(out / "counts"))
    row = spark.read.parquet(str(out / "counts")).agg(F.count("*"), F.sum("count")).first()
    assert row is not None
    return {"distinct_words": int(row[0]), "words": int(row[1])}


def run_join(spark: SparkSession, data: Path, out: Path) -> Summary:
    rankings = spark.read.parquet(str(data / "rankings"))
    visits = spark.read.parquet(str(data / "uservisits")).where(
        (F.col("visitDate") >= "1999-01-01") & (F.col("visitDate") < "2000-01-01")
    )
    result = (
        visits.join(rankings, visits.destURL == rankings.pageURL)
        .groupBy("sourceIP")
        .agg(F.sum("adRevenue").alias("totalRevenue"), F.avg("pageRank").alias("pageRank"))
    )
    result.write.mode("overwrite").parquet(str(out / "join"))
    row = spark.read.parquet(str(out / "join")).agg(F.count("*"), F.sum("totalRevenue")).first()
    assert row is not None
    return {"source_ips": int(row[0]), "revenue": float(row[1])}


GENERATORS: dict[str, Callable[[SparkSession, Path, float, int], None]] = {
    "pagerank": gen_pagerank,
    "terasort": gen_terasort,
    "kmeans": gen_kmeans,
    "wordcount": gen_wordcount,
    "join": gen_join,
}
JOBS: dict[str, Callable[[SparkSession, Path, Path], Summary]] = {
    "pagerank": run_pagerank,
    "terasort": run_terasort,
    "kmeans": run_kmeans,
    "wordcount": run_wordcount,
    "join": run_join,
}
