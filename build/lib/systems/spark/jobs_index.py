"""Names of the Spark jobs (importable without pyspark, unlike :mod:`systems.spark.jobs`)."""

JOB_NAMES = ("pagerank", "terasort", "kmeans", "wordcount", "join")
