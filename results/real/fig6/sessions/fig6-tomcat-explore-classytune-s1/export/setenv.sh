# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-classytune-s1, trial 50 of 100
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx629m -XX:+UseParallelGC -Xss1024k -XX:ParallelGCThreads=2 -XX:+TieredCompilation'
