# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-classytune-s0, trial 54 of 100
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx763m -XX:+UseSerialGC -Xss1024k -XX:+TieredCompilation'
