# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-classytune_paper-s0, trial 50 of 100
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx202m -XX:+UseSerialGC -Xss1024k -XX:+TieredCompilation'
