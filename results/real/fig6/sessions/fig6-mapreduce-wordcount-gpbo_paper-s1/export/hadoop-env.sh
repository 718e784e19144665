# best configuration exported by the ClassyTune harness: session fig6-mapreduce-wordcount-gpbo_paper-s1, trial 23 of 100
# units: mapreduce.task.io.sort.mb [MiB], mapreduce.input.fileinputformat.split.maxsize [MiB], jvm.heap_mb [MiB]
export HADOOP_CLIENT_OPTS='-Xmx3577m -XX:+UseG1GC -XX:ParallelGCThreads=2 -XX:+TieredCompilation'
