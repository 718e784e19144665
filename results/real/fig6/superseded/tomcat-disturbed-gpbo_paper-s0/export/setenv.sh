# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-gpbo_paper-s0, trial 26 of 100
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx2086m -XX:+UseParallelGC -Xss1024k -XX:ParallelGCThreads=2 -XX:+TieredCompilation'
